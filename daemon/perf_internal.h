/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_PERF_INTERNAL_H
#define RSPD_PERF_INTERNAL_H

/*
 * What rsp needs of libperf that libperf 6.1 does not export: reached from
 * one file (perf_internal.c), the only one compiled against libperf's
 * internal headers. This header includes nothing, so that file can include
 * it without the system uapi headers clashing with the tools/include copies.
 */
struct perf_evlist;
struct perf_evsel;

/**
 * rsp_perf_internal__collect_rings() - the evlist's rings: for each, the
 * map (a struct perf_mmap *), its fd and its CPU, at most @max.
 * Return: the count, or -1 if there are more than @max.
 */
int rsp_perf_internal__collect_rings(struct perf_evlist *evlist, void **maps, int *fds,
				     unsigned *cpus, int max);
/** rsp_perf_internal__apply_filter() - libperf's own, declared only internally. */
int rsp_perf_internal__apply_filter(struct perf_evsel *evsel, const char *filter);
/**
 * rsp_perf_internal__release_evsel() - free what perf_evsel__delete()
 * forgets (sample ids, map references); the evsel itself stays.
 */
void rsp_perf_internal__release_evsel(struct perf_evsel *evsel);
/** rsp_perf_internal__delete_evlist() - unmap, close and delete @evlist without leaks. */
void rsp_perf_internal__delete_evlist(struct perf_evlist *evlist);

#endif
