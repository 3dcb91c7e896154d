/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_BPFCAP_H
#define RSPD_BPFCAP_H

/*
 * The BPF capture programs (bpf/rsp.bpf.c, a libbpf skeleton): opened and
 * verified with the stack policy in their .rodata, then attached to the
 * scheduler's tp_btf tracepoints, writing compact records
 * (tracepoints/bpf_records.h) into a BPF ring buffer per CPU, which the
 * caller consumes (rsp_bpfcap__consume(), woken by rsp_bpfcap__poll_fd()).
 * Every failure is one sentence naming the problem and the fix.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracepoints/bpf_records.h"

struct rsp_bpfcap;

struct rsp_bpfcap_opts {
	enum rsp_bstack_policy stacks;
	unsigned max_stack;   /* frames, 1..RSP_BPF_MAX_STACK */
	unsigned stack_every; /* RSP_BSTACKS_SAMPLED: one switch in this many (per CPU) */
	bool kernel_stacks, user_stacks;
	bool waker_stacks;	/* sleeps, all, cached: stacks on wakings too */
	bool stack_check;	/* RSP_BSTACKS_CACHED: walk every stack, compare with the cache */
	unsigned stack_refresh; /* RSP_BSTACKS_CACHED: walk a cache hit anyway once in this many */
	/* which programs besides the scheduler's: block requests, irq and softirq, hrtimers */
	bool block, irq, timer;
	unsigned nr_cpus;    /* rings: one per CPU 0 .. nr_cpus-1 (0: every possible CPU) */
	uint32_t ring_bytes; /* per ring: a power of 2, a multiple of the page size */
	uint64_t wake_bytes; /* wake the consumer when a ring holds this much (0: never) */
	/* --capture-cgroup: the subtree's cgroup id and level; id 0: every thread */
	uint64_t cgroup_id;
	int cgroup_level;
	/* hrtimer_wakeup's address: only those timers' starts are sent (0: every one) */
	uint64_t hrtimer_wakeup;
	/* tests */
	bool force_verifier_failure; /* the switch program is made invalid */
};

struct rsp_bpfcap_stats {
	uint64_t records, stacks, comms; /* written */
	uint64_t output_errors;		 /* bpf_ringbuf_output() failed: a full ring */
	uint64_t stack_errors;		 /* bpf_get_stack() failed */
	/* the stack cache (tracepoints/bpf_records.h, enum rsp_bcounter) */
	uint64_t stack_sites, walks, cache_hits, cached, no_key;
	uint64_t kchecks, kdiffer, uchecks, udiffer;
	uint64_t carried; /* folded events that went alone (a CARRY record) */
};

/** rsp_bpfcap__opts_init() - the defaults: stacks on sleeps from the cache, 64 frames, kernel+user.
 */
void rsp_bpfcap__opts_init(struct rsp_bpfcap_opts *o);

/**
 * rsp_bpfcap__open() - open and load (verify) the programs
 * Return: the capture, or NULL with one sentence in @err (no BTF, no
 * privilege, lockdown, memlock, the verifier's refusal: which program; its
 * log then in rsp_bpfcap__verifier_log()).
 */
struct rsp_bpfcap *rsp_bpfcap__open(const struct rsp_bpfcap_opts *o, char *err, size_t errlen);

/*
 * Called for each record consumed, in each CPU's order: @data is valid
 * during the call only. Return 0 (a negative value stops the round).
 */
typedef int (*rsp_bpfcap_record_fn)(void *ctx, unsigned cpu, const void *data, size_t size);

/**
 * rsp_bpfcap__attach() - attach every program: records start to arrive.
 * Return: 0 or -errno with one sentence in @err.
 */
int rsp_bpfcap__attach(struct rsp_bpfcap *bc, char *err, size_t errlen);

/** rsp_bpfcap__poll_fd() - readable when a ring crossed its wake mark (epoll). */
int rsp_bpfcap__poll_fd(const struct rsp_bpfcap *bc);

/**
 * rsp_bpfcap__consume() - every record the rings hold, to @fn (single
 * consumer). Return: the number of records, or -errno.
 */
int rsp_bpfcap__consume(struct rsp_bpfcap *bc, rsp_bpfcap_record_fn fn, void *ctx);

/**
 * rsp_bpfcap__pending() - what still waits in the programs' maps for the
 * record that will carry it (tracepoints/bpf_records.h): the requests in
 * flight (their insert and issue) and the wakings of threads runnable now
 * that have not run since (found through /proc: a thread in state R), each
 * as a CARRY record stamped @now, to @fn. The maps are only read: the
 * records that carry them later do so as ever. Return: how many, or -errno.
 */
int rsp_bpfcap__pending(const struct rsp_bpfcap *bc, uint64_t now, rsp_bpfcap_record_fn fn,
			void *ctx);

/** rsp_bpfcap__lost() - records each CPU's programs could not write (a full ring), ever. */
int rsp_bpfcap__lost(const struct rsp_bpfcap *bc, uint64_t *per_cpu, unsigned nr);

/** rsp_bpfcap__detach() - stop writing records (the programs stay loaded). */
void rsp_bpfcap__detach(struct rsp_bpfcap *bc);

/** rsp_bpfcap__close() - detach, unload, free. NULL is fine. */
void rsp_bpfcap__close(struct rsp_bpfcap *bc);

/**
 * rsp_bpfcap__resend_all() - forget which stacks and names each CPU's ring
 * carried: they are sent again before their next use. For a consumer that
 * lost records (PERF_RECORD_LOST). Return: 0 or -errno.
 */
int rsp_bpfcap__resend_all(struct rsp_bpfcap *bc);

/** rsp_bpfcap__set_degrade() - the programs' degradation level from now (enum rsp_degrade). */
int rsp_bpfcap__set_degrade(struct rsp_bpfcap *bc, unsigned level);

/**
 * rsp_bpfcap__run_time() - the programs' run time and runs, summed, as the
 * kernel counts them while BPF_STATS_RUN_TIME is enabled (bpf_enable_stats()).
 */
int rsp_bpfcap__run_time(const struct rsp_bpfcap *bc, uint64_t *ns, uint64_t *runs);

/**
 * rsp_bpfcap__skipped() - events whose program the kernel did not run, ever:
 * a tracepoint's program that is already running on the CPU is not run
 * again (an interrupt's waking or timer start inside the same program in
 * a task), and its record never is (bpf_prog_info.recursion_misses, summed).
 */
int rsp_bpfcap__skipped(const struct rsp_bpfcap *bc, uint64_t *n);

/** rsp_bpfcap__stats() - what the programs wrote, summed over CPUs. */
int rsp_bpfcap__stats(const struct rsp_bpfcap *bc, struct rsp_bpfcap_stats *st);

/** rsp_bpfcap__verifier_log() - the tail of libbpf's log of the last failed load, or "". */
const char *rsp_bpfcap__verifier_log(void);

#endif /* RSPD_BPFCAP_H */
