/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SLEEPCLASS_H
#define RSP_SLEEPCLASS_H

#include <stdint.h>
#include <rsp/api.h>
#include <rsp/ksyms.h>

/*
 * Sleep reasons: why a thread left the CPU, from sched_switch's prev_state
 * and the kernel functions on its switch-out callchain, by the table in
 * tracepoints/sleep_reasons.def. The enum values are stable (histograms and
 * JSON use them); names are snake_case for JSON.
 */
enum rsp_sleep_reason {
	RSP_SR_UNKNOWN,
	RSP_SR_BLOCK_IO,   /* waiting for a block device */
	RSP_SR_NETWORK,	   /* socket waits, UNIX sockets included */
	RSP_SR_LOCK,	   /* futex (pthread mutex, condvar, barrier), kernel locks */
	RSP_SR_POLL,	   /* poll, select, epoll */
	RSP_SR_PIPE,	   /* pipes and FIFOs */
	RSP_SR_TIMER,	   /* a generic timeout that a timer ended */
	RSP_SR_SLEEP,	   /* deliberate: nanosleep, clock_nanosleep */
	RSP_SR_PREEMPT,	   /* left the CPU still runnable (preempted, yield) */
	RSP_SR_PAGE_FAULT, /* waiting inside a page fault */
	RSP_SR__NR
};

/** rsp_sleep_reason__name() - "block_io", "network", ..., "unknown". Static. */
RSP_API const char *rsp_sleep_reason__name(enum rsp_sleep_reason r);

struct rsp_sleepclass;

/**
 * rsp_sleepclass__new() - a classifier over @ks
 * @ks: kernel symbols; must outlive the classifier. NULL: classify by
 *      prev_state only (every real sleep is then "unknown").
 *
 * The classifier caches the rule of each return address it has seen, so
 * a stack costs a few hash lookups once the cache is warm. It is not
 * thread-safe: use one per thread (one per timeline). Return: NULL on
 * ENOMEM. Free with rsp_sleepclass__delete().
 */
RSP_API struct rsp_sleepclass *rsp_sleepclass__new(const struct rsp_ksyms *ks);
RSP_API void rsp_sleepclass__delete(struct rsp_sleepclass *sc);

/**
 * rsp_sleepclass__classify() - the reason of one switch-out
 * @prev_state: sched_switch's prev_state
 * @chain, @nr: its callchain with PERF_CONTEXT_* markers (may be NULL/0);
 *              only kernel frames are looked at
 *
 * Return: RSP_SR_PREEMPT when prev_state says runnable, else the reason of
 * the highest-priority rule matching a kernel frame, else RSP_SR_UNKNOWN.
 * RSP_SR_TIMER here means "a generic timeout primitive"; the timeline keeps
 * it only if a timer ends the sleep.
 */
RSP_API enum rsp_sleep_reason rsp_sleepclass__classify(struct rsp_sleepclass *sc,
						       int64_t prev_state, const uint64_t *chain,
						       uint64_t nr);

/* What the task under a waking softirq was doing (tracepoints/wake_contexts.def). */
enum rsp_wake_context {
	RSP_WCTX_UNKNOWN,   /* no stack, no symbols, or nothing that tells */
	RSP_WCTX_SEND,	    /* sending: on loopback, the sender is the waker */
	RSP_WCTX_INTERRUPT, /* an interrupt's exit or ksoftirqd: a bystander */
};

/**
 * rsp_sleepclass__wake_context() - what the task a waking softirq
 * interrupted was doing, from the waking's callchain (kernel frames)
 * Return: enum rsp_wake_context.
 */
RSP_API enum rsp_wake_context rsp_sleepclass__wake_context(struct rsp_sleepclass *sc,
							   const uint64_t *chain, uint64_t nr);

/**
 * rsp_sleepclass__match_name() - the rule a function name hits
 * @prio: if not NULL, the rule's priority (0 is highest; -1 if none)
 *
 * Return: the rule's reason, RSP_SR_UNKNOWN if no rule matches.
 */
RSP_API enum rsp_sleep_reason rsp_sleepclass__match_name(const char *name, int *prio);

#endif /* RSP_SLEEPCLASS_H */
