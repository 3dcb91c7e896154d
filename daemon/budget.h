/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_BUDGET_H
#define RSPD_BUDGET_H

/*
 * The overhead budget (--overhead-budget PCT, README "The overhead
 * budget"). Once a second rspd adds what capture cost over it: its own CPU
 * time (all its threads: drain, histograms, queries) and the BPF programs'
 * run time, which the kernel counts while rspd holds BPF_STATS_RUN_TIME
 * enabled; as a share of one CPU. The run time is sampled: the statistics
 * are on for SAMPLE_NS of each second only, because they are not free
 * (two clock reads around every program run: ~130 ns per run on the
 * project's VM, 40% of what the syscall family costs a system call), and
 * the share of the sample stands for the second. Over the budget for OVER_S seconds in a
 * row, the BPF programs degrade one level (enum rsp_degrade: fewer stack
 * checks, no waker stacks, stacks on some sleeps, no stacks); under half
 * of it for UNDER_S seconds, they recover one. Every change is logged and
 * kept for status and the analyses (rsp_budget_status). The perf backend
 * cannot be degraded at run time: there the budget is measured, not
 * enforced, and status says so.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/status.h>

struct rsp_bpfcap;

struct rspd_budget {
	bool inited;
	pthread_mutex_t lock; /* st: the server thread reads it */
	struct rsp_budget_status st;
	struct rsp_bpfcap *bpf; /* NULL: measured only */
	int stats_fd;		/* BPF_STATS_RUN_TIME enabled while sampling, else -1 */
	bool stats_refused;	/* the kernel said no: rspd's CPU time only */
	uint64_t sample_from_ns, sample_bpf_ns; /* the sample under way: its start */
	uint64_t sample_sc_ns, sample_sw_ns;	/* ... the syscall and stopwatch programs' */
	uint64_t next_sample_ns;		/* when the next one starts */
	bool bpf_fresh; /* bpf_pct was sampled after the last change of level */
	uint64_t last_ns, last_cpu_ns;
	uint64_t last_asked_ns; /* asked_cpu_ns() at last_ns */
	/* the syscall family's and the stopwatches' programs (rspd_budget__watch()) */
	struct rspd *d;
	unsigned over, under; /* seconds in a row over, under half */
	unsigned hold;	      /* seconds to wait after a change before the next */
};

/**
 * rspd_budget__init() - @pct of one CPU (0: off); @bpf the programs to
 * degrade, NULL under the perf backend (measured, not enforced).
 */
void rspd_budget__init(struct rspd_budget *b, double pct, struct rsp_bpfcap *bpf, uint64_t now_ns);
/**
 * rspd_budget__tick() - at every flush of the rings: start or end a sample
 * of the BPF run time; once a second, measure, and degrade or recover.
 */
void rspd_budget__tick(struct rspd_budget *b, uint64_t now_ns);
/**
 * rspd_budget__asked() - the calling thread answers what is asked of rspd
 * (@on: from now on; !@on: no longer, before it ends): its CPU time is
 * not capture's. Returns the slot to give back (-1: none free, then it
 * counts as capture).
 */
int rspd_budget__asked(struct rspd *d, int slot, bool on);
/** rspd_budget__status() - a copy for status (another thread). */
void rspd_budget__status(struct rspd_budget *b, struct rsp_budget_status *out);
void rspd_budget__exit(struct rspd_budget *b);
struct rspd;
/**
 * rspd_budget__watch() - count the run time of the syscall family's and the
 * stopwatches' BPF programs too (after rspd_budget__init(); @d outlives the
 * ticks), on either backend. They are shown, and not enforced: no level
 * sheds them (the family is turned off with --families, a stopwatch removed).
 */
void rspd_budget__watch(struct rspd_budget *b, struct rspd *d);

#endif /* RSPD_BUDGET_H */
