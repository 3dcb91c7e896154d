/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_FWAKE_H
#define RSP_INTERNAL_FWAKE_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/timeline.h>

/*
 * False wakeups found without annotations (wPerf OSDI '18, 4.1, which
 * needed them): a filter on one thread's segments, in time order, between
 * the timeline and whatever keeps them (the timeline store, so the
 * wait-for graph and the snapshot see the same rewrite).
 *
 * A sleep S1 that a thread ended, followed by no more than
 * RSP_FWAKE_TAIL segments that are runs, runnable time and sleeps of
 * S1's reason (the mutex a woken condition waiter takes back), holding
 * at most max_run ns of run in all, and then a sleep S2 at the same
 * place (same reason, same user stack) is a suspected false wakeup: the
 * thread woke, found nothing to do and slept again. S1, what followed it
 * and S2 become one sleep from S1's start to S2's end whose waker is S2's
 * (wPerf: the later real wakeup's waker gets the whole wait);
 * waker.nr_false counts the wakeups merged away. Repeated, it merges a
 * chain of false wakeups into one sleep.
 *
 * Only waits on a condition are candidates (futexes and kernel locks: not
 * poll, pipes or sockets, whose real wakeups look alike, fwake.c) woken by
 * a thread or by a waking not seen; a sleep without a user stack is not
 * (its place is not known).
 */
#define RSP_FWAKE_TAIL 16

struct rsp_fwake {
	struct rsp_segment held; /* the sleep held back; valid when holding */
	struct rsp_segment tail[RSP_FWAKE_TAIL];
	uint64_t place;	   /* held's place: its reason and user stack, hashed */
	uint64_t tail_run; /* run time in tail */
	uint8_t nr_tail;
	bool holding;
};

/* Where the filter's output goes: in time order, one thread's segments. */
typedef void (*rsp_fwake_emit)(void *ctx, const struct rsp_segment *seg);

/* What was merged: wakeups removed, and the run time folded into sleeps. */
struct rsp_fwake_stats {
	uint64_t merged;
	uint64_t run_ns;
};

/**
 * rsp_fwake__feed() - one segment of the thread @f filters
 * @max_run: the longest run (ns, summed over the tail) a false wakeup has
 *
 * Emits through @emit what is no longer held back, possibly nothing.
 * @seg's stack must stay valid while held (RSP_TL_RECORDS_STABLE).
 */
void rsp_fwake__feed(struct rsp_fwake *f, uint64_t max_run, const struct rsp_segment *seg,
		     rsp_fwake_emit emit, void *ctx, struct rsp_fwake_stats *st);

/** rsp_fwake__flush() - emit whatever is held (the end of the stream). */
void rsp_fwake__flush(struct rsp_fwake *f, rsp_fwake_emit emit, void *ctx);

#endif /* RSP_INTERNAL_FWAKE_H */
