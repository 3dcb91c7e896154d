// SPDX-License-Identifier: GPL-2.0
/*
 * The one file that includes libperf's internal headers.
 *
 * libperf 6.1 exports no accessor for a ring's file descriptor or CPU, and
 * rspd needs both: the fd to wait on each ring with epoll (alongside its
 * signal and timer fds, which perf_evlist__poll() cannot take), the CPU to
 * file records under. Its perf_evsel__apply_filter() is in libperf.a but
 * declared only internally. And its perf_evsel__delete() frees only the
 * struct, leaking the sample ids and the evsel's map references, which
 * rsp_perf_internal__delete_evlist() releases first. This file is compiled
 * against the same kernel sources libperf.a was built from (build/deps), so
 * the layouts match.
 */
#include <internal/evsel.h>
#include <internal/mmap.h>
#include <perf/evlist.h>
#include <perf/threadmap.h>
#include <perf/cpumap.h>

#include "perf_internal.h"

int rsp_perf_internal__collect_rings(struct perf_evlist *evlist, void **maps, int *fds,
				     unsigned *cpus, int max)
{
	struct perf_mmap *map;
	int n = 0;

	perf_evlist__for_each_mmap (evlist, map, false) {
		if (n == max)
			return -1;
		maps[n] = map;
		fds[n] = map->fd;
		cpus[n] = (unsigned)map->cpu.cpu;
		n++;
	}
	return n;
}

int rsp_perf_internal__apply_filter(struct perf_evsel *evsel, const char *filter)
{
	return perf_evsel__apply_filter(evsel, filter);
}

/* What perf_evsel__delete() leaves behind: ids and map references. */
void rsp_perf_internal__release_evsel(struct perf_evsel *evsel)
{
	perf_evsel__free_id(evsel);
	perf_cpu_map__put(evsel->cpus);
	perf_cpu_map__put(evsel->own_cpus);
	perf_thread_map__put(evsel->threads);
	evsel->cpus = NULL;
	evsel->own_cpus = NULL;
	evsel->threads = NULL;
}

void rsp_perf_internal__delete_evlist(struct perf_evlist *evlist)
{
	struct perf_evsel *evsel;

	if (!evlist)
		return;
	perf_evlist__munmap(evlist);
	perf_evlist__close(evlist);
	perf_evlist__for_each_evsel (evlist, evsel)
		rsp_perf_internal__release_evsel(evsel);
	perf_evlist__delete(evlist);
}
