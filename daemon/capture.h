/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_CAPTURE_H
#define RSPD_CAPTURE_H

/*
 * The capture engine: the event set opened through libperf (one ring per
 * CPU, every event redirected into it), and the drain loop that copies raw
 * records into the window. Shared by rspd, the benchmarks' null consumer
 * and the end-to-end tests, so that all of them measure the same attrs.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/catalogue.h>
#include <rsp/schema.h>
#include <rsp/status.h>
#include <rsp/window.h>
#include "capture_opts.h"

struct perf_evlist;
struct perf_evsel;
struct perf_mmap;
struct perf_cpu_map;
struct perf_thread_map;
struct tep_handle;
struct rsp_sbq;

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

struct rsp_cpu_counters {
	_Atomic uint64_t records;
	_Atomic uint64_t bytes;
	_Atomic uint64_t lost;
	_Atomic uint64_t lost_events;
	_Atomic uint64_t dropped; /* records the window could not take */
	_Atomic double records_per_s;
	uint64_t last_records; /* capture thread only */
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
void rsp_evset__enable(struct rsp_evset *es);
void rsp_evset__disable(struct rsp_evset *es);
void rsp_evset__close(struct rsp_evset *es);
/**
 * rsp_evset__fired() - what the kernel counted for entry @i, summed over
 * CPUs and divided by its sample period: the samples it should have sent.
 * Return: 0 and *fired, or -errno (not a counting event: cpu-clock, dummy).
 */
int rsp_evset__fired(struct rsp_evset *es, int i, uint64_t *fired);

/* tracefs.c */
/**
 * rsp_tracefs__load() - make sure tracefs is mounted and load the formats of
 * the systems rsp uses. Return: a tep handle (free with tep_free()) or NULL
 * with one sentence in @err.
 */
struct tep_handle *rsp_tracefs__load(char *err, size_t errlen);

/**
 * rsp_tracefs__remove_stale_probes() - remove every tracefs uprobe and
 * kprobe event of the group "rsp" (left by a process that died); after
 * rsp_tracefs__load(). Failures are logged.
 */
void rsp_tracefs__remove_stale_probes(void);

/* drain.c */
struct rsp_drain {
	struct rsp_evset *es;
	struct rsp_window *window;    /* NULL: null consumer, records are only counted */
	struct rsp_cpu_counters *cpu; /* es->max_cpu entries */
	_Atomic uint64_t delivered[RSP_EVSET_MAX]; /* samples per evset entry */
	/* Consistent pairs, taken by rsp_drain__check() right after a drain. */
	_Atomic uint64_t checked_fired[RSP_EVSET_MAX];
	_Atomic uint64_t checked_delivered[RSP_EVSET_MAX];
	_Atomic bool checked_counted[RSP_EVSET_MAX];
	/*
	 * Every ring's records older than this are in the window: set by the
	 * capture loop after each timed drain of all rings. Readers that need a
	 * complete, time-ordered prefix of the stream (the process model) stop
	 * there.
	 */
	_Atomic uint64_t drained_to;
	/* Where the non-sample records also go (the process model), or NULL. */
	struct rsp_sbq *sbq;
};

int rsp_drain__init(struct rsp_drain *d, struct rsp_evset *es, struct rsp_window *w);
void rsp_drain__exit(struct rsp_drain *d);
/** rsp_drain__ring() - copy every record of ring @idx into the window; returns records. */
uint64_t rsp_drain__ring(struct rsp_drain *d, int idx);
uint64_t rsp_drain__all(struct rsp_drain *d);
/**
 * rsp_drain__check() - drain every ring, then read what the kernel counted
 * per event: the pair (fired, delivered) is consistent to within the
 * records that arrive during the few reads.
 */
void rsp_drain__check(struct rsp_drain *d);
/** rsp_drain__rates() - update records_per_s from the counters over @dt seconds. */
void rsp_drain__rates(struct rsp_drain *d, double dt);

#endif
