/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_EVSET_H
#define RSPD_EVSET_H

/*
 * The event set: the catalogue's events and the capture options made into
 * perf_event_attrs, opened system-wide through libperf with one ring per
 * CPU (every event redirected into it). Shared by rspd, the benchmarks'
 * null consumer and the end-to-end tests, so that all of them measure the
 * same attrs.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/catalogue.h>
#include <rsp/schema.h>
#include <rsp/status.h>
#include "capture_opts.h"

struct perf_evlist;
struct perf_evsel;
struct perf_mmap;
struct perf_cpu_map;
struct perf_thread_map;
struct tep_handle;
struct rsp_bpfcap;

#define RSP_EVSET_MAX 96

struct rsp_evset_entry {
	struct perf_evsel *evsel;
	int event; /* enum rsp_event */
	enum rsp_role role;
	const char *filter; /* tracepoint filter or NULL */
	char name[64];
	uint64_t offset; /* uprobe: the function's offset in the file */
};

struct rsp_ring {
	struct perf_mmap *map;
	int fd;
	unsigned cpu;
};

struct rsp_evset {
	struct perf_evlist *evlist;
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct rsp_evset_entry e[RSP_EVSET_MAX];
	int nr;
	struct rsp_schema *schema;
	struct rsp_event_status status[RSP_EV__NR];
	struct rsp_capture_opts opts;
	unsigned max_cpu; /* highest CPU number + 1 */
	struct rsp_ring rings[1024];
	int nr_rings;
	bool mapped;
	unsigned kprobe_type, uprobe_type; /* PMU types, 0: the kernel has none */
	enum rsp_net_source net_source;	   /* what was chosen */
	char uprobe_lib[2][PATH_MAX];	   /* libc, libpthread: config1 points here */
	char family_source[RSP_FAM__NR][16];
	char family_note[RSP_FAM__NR][512];
	/* the capture backend chosen: "perf" or "bpf", and why BPF was refused ("" if not) */
	char backend[8];
	char backend_note[512];
	char stacks_note[128];	/* the stack policy changed by the backend, and why */
	struct rsp_bpfcap *bpf; /* the BPF programs (backend "bpf"), NULL otherwise */
	bool bpf_attached;
};

/**
 * rsp_evset__open() - build the attrs, open them with libperf, mmap the rings
 * @tep: this kernel's tracepoint formats (rsp_tracefs__load())
 * @err: one sentence naming the problem and the fix, on failure
 *
 * A tracepoint the kernel lacks is left out with a problem noted in
 * es->status (a warning, not an error). Failing to open the event set at
 * all (no permission, no memory for the rings) is an error.
 * Return: 0 or -errno. Undo with rsp_evset__close() in every case.
 */
int rsp_evset__open(struct rsp_evset *es, const struct rsp_capture_opts *opts,
		    struct tep_handle *tep, char *err, size_t errlen);
/**
 * rsp_evset__enable() - start recording (and attach the BPF programs, for
 * the bpf backend, to the now enabled output events). Return: 0, or -errno
 * with one sentence in @err (the programs could not be attached).
 */
int rsp_evset__enable(struct rsp_evset *es, char *err, size_t errlen);
void rsp_evset__disable(struct rsp_evset *es);
/**
 * rsp_evset__resend() - the BPF programs send names and stacks again (the
 * rings lost records that may have carried them). 0 or -errno.
 */
int rsp_evset__resend(struct rsp_evset *es);
void rsp_evset__close(struct rsp_evset *es);
/**
 * rsp_evset__fired() - what the kernel counted for entry @i, summed over
 * CPUs and divided by its sample period: the samples it should have sent.
 * Return: 0 and *fired, or -errno (not a counting event: cpu-clock, dummy).
 */
int rsp_evset__fired(struct rsp_evset *es, int i, uint64_t *fired);

#endif
