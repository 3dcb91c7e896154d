/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_DRAIN_H
#define RSPD_DRAIN_H

/*
 * The drain: copies the raw records of every ring of the event set into the
 * window (and the side-band ones into the process model's queue), counting
 * per CPU what arrived, what the kernel lost and what the window refused.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/window.h>
#include "evset.h"

struct rsp_sbq;

struct rsp_cpu_counters {
	_Atomic uint64_t records;
	_Atomic uint64_t bytes;
	_Atomic uint64_t lost;
	_Atomic uint64_t lost_events;
	_Atomic uint64_t dropped; /* records the window could not take */
	_Atomic double records_per_s;
	uint64_t last_records; /* capture thread only */
};

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
	/* BPF backend: events the records drained carry folded in (rsp_brec__folded()) */
	_Atomic uint64_t folded;
	/* Where the non-sample records also go (the process model), or NULL. */
	struct rsp_sbq *sbq;
	/* a ring lost records: the BPF programs must send names and stacks again */
	bool resend;
	/* the BPF rings: the evset entry their records count as, per CPU what
	 * the programs could not write (as last read) and the last record's time */
	int bpf_entry;
	uint64_t *bpf_lost;
	uint64_t *bpf_last;
	uint64_t bpf_n;	       /* records of the current rsp_drain__bpf() */
	uint64_t last_refresh; /* rsp_drain__refresh(): when names and stacks were last resent */
	/*
	 * Samples of the entries with ustack[] set (PERF_SAMPLE_STACK_USER, from
	 * --dwarf) go into the window with their user stack compressed
	 * (rsp/ustackz.h), or, when that gains nothing, cut to what the kernel
	 * copied (rsp/ustack.h): the compressor, and the record stored
	 * (RSP_DRAIN_TRIM_MAX bytes; NULL when no entry copies stacks).
	 */
	bool ustack[RSP_EVSET_MAX];
	struct rsp_ustackz *z;
	uint64_t *trim;
};

#define RSP_DRAIN_TRIM_MAX 65536 /* the largest record: header.size is 16 bits */

int rsp_drain__init(struct rsp_drain *d, struct rsp_evset *es, struct rsp_window *w);
void rsp_drain__exit(struct rsp_drain *d);
/** rsp_drain__ring() - copy every record of ring @idx into the window; returns records. */
uint64_t rsp_drain__ring(struct rsp_drain *d, int idx);
/**
 * rsp_drain__bpf() - copy every record of the BPF rings (the bpf backend)
 * into the window, each CPU's into its second stream; returns records.
 */
uint64_t rsp_drain__bpf(struct rsp_drain *d);
/** rsp_drain__all() - every ring, then the BPF programs' losses as gaps. */
uint64_t rsp_drain__all(struct rsp_drain *d);
/**
 * rsp_drain__check() - drain every ring, then read what the kernel counted
 * per event: the pair (fired, delivered) is consistent to within the
 * records that arrive during the few reads.
 */
void rsp_drain__check(struct rsp_drain *d);
/**
 * rsp_drain__refresh() - the BPF programs send names and stacks again every
 * quarter of the window's span (2 s at least): call about once a second.
 */
void rsp_drain__refresh(struct rsp_drain *d, uint64_t now);
/** rsp_drain__rates() - update records_per_s from the counters over @dt seconds. */
void rsp_drain__rates(struct rsp_drain *d, double dt);

#endif
