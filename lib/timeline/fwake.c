// SPDX-License-Identifier: LGPL-2.1
/*
 * False wakeups without annotations: one thread's segments filtered in
 * time order, a sleep held back until what follows it shows whether it
 * was a false wakeup (internal/fwake.h).
 */
#include <string.h>
#include "internal/fwake.h"
#include "internal/hash.h"

/*
 * Waits on a condition another thread makes true: futexes and kernel
 * locks (condition variables, the broadcast case). Not poll, pipes or
 * sockets: their wakeups bring data that a read right after consumes
 * before the thread waits again where it waited, a real wakeup that
 * only the system call between (not recorded) tells apart.
 */
static bool condition_wait(uint8_t reason)
{
	return reason == RSP_SR_LOCK;
}

/*
 * Where @seg slept: its reason and the user part of its stack (the kernel
 * part is the same for every futex wait), hashed; 0 when it has no user
 * stack.
 */
static uint64_t place_of(const struct rsp_segment *seg)
{
	for (uint32_t i = 0; seg->stack && i < seg->nr_stack; i++)
		if (seg->stack[i] == PERF_CONTEXT_USER && i + 1 < seg->nr_stack)
			return rsp_hash__mix(
				       rsp_hash__stack(seg->stack + i + 1, seg->nr_stack - i - 1) ^
				       seg->reason) |
			       1;
	return 0;
}

/*
 * A sleep that may turn out a false wakeup: a condition wait woken by a
 * thread, or by a waking the perf backend did not see (the kernel drops
 * those from irqs on idle CPUs). Were an unseen waking ending a chain of
 * false wakeups not held, the whole chain would lose its real waker.
 */
static bool candidate(const struct rsp_segment *seg)
{
	bool by_thread =
		seg->waker.kind == RSP_WAKER_THREAD ||
		(seg->waker.kind == RSP_WAKER_NONE && (seg->flags & RSP_SEGF_WAKING_NOT_SEEN));

	return seg->kind == RSP_SEG_SLEEP && by_thread && condition_wait(seg->reason) &&
	       !(seg->flags & (RSP_SEGF_OPEN | RSP_SEGF_GAP | RSP_SEGF_WAKER_INFERRED));
}

void rsp_fwake__flush(struct rsp_fwake *f, rsp_fwake_emit emit, void *ctx)
{
	if (!f->holding)
		return;
	emit(ctx, &f->held);
	for (uint8_t i = 0; i < f->nr_tail; i++)
		emit(ctx, &f->tail[i]);
	f->holding = false;
	f->nr_tail = 0;
	f->tail_run = 0;
}

/* Hold @seg (a candidate), or emit it. */
static void hold_or_emit(struct rsp_fwake *f, const struct rsp_segment *seg, uint64_t place,
			 rsp_fwake_emit emit, void *ctx)
{
	if (!place || !candidate(seg)) {
		emit(ctx, seg);
		return;
	}
	f->held = *seg;
	f->place = place;
	f->holding = true;
}

/* @s2 ends the false wakeup held: one sleep from the held one's start, with @s2's waker. */
static void merge(struct rsp_fwake *f, const struct rsp_segment *s2, struct rsp_fwake_stats *st)
{
	struct rsp_segment m = *s2;
	uint32_t nr = (uint32_t)f->held.waker.nr_false + s2->waker.nr_false + 1;

	for (uint8_t i = 0; i < f->nr_tail; i++)
		if (f->tail[i].kind == RSP_SEG_RUN)
			st->run_ns += f->tail[i].end - f->tail[i].start;
	m.start = f->held.start;
	m.flags |= f->held.flags & RSP_SEGF_TRUNCATED;
	m.waker.nr_false = (uint16_t)(nr > UINT16_MAX ? UINT16_MAX : nr);
	st->merged++;
	f->held = m;
	f->nr_tail = 0;
	f->tail_run = 0;
}

void rsp_fwake__feed(struct rsp_fwake *f, uint64_t max_run, const struct rsp_segment *seg,
		     rsp_fwake_emit emit, void *ctx, struct rsp_fwake_stats *st)
{
	/* hashed only where it may matter: most sleeps are neither (a cost per sleep) */
	uint64_t place =
		seg->kind == RSP_SEG_SLEEP &&
				(candidate(seg) || (f->holding && seg->reason == f->held.reason))
			? place_of(seg)
			: 0;

	if (!f->holding) {
		hold_or_emit(f, seg, place, emit, ctx);
		return;
	}
	if (seg->kind == RSP_SEG_SLEEP && place == f->place && f->tail_run <= max_run &&
	    f->nr_tail) {
		merge(f, seg, st);
		/* the merged sleep may be a false wakeup again; or it ends here */
		if (!candidate(&f->held))
			rsp_fwake__flush(f, emit, ctx);
		return;
	}
	/* runs, runnable time, and the lock a woken waiter takes back, while short */
	if (f->nr_tail < RSP_FWAKE_TAIL &&
	    (seg->kind == RSP_SEG_RUN || seg->kind == RSP_SEG_RUNNABLE ||
	     (seg->kind == RSP_SEG_SLEEP && seg->reason == f->held.reason &&
	      !(seg->flags & (RSP_SEGF_OPEN | RSP_SEGF_GAP)))) &&
	    !(seg->flags & RSP_SEGF_EXITED)) {
		f->tail[f->nr_tail++] = *seg;
		if (seg->kind == RSP_SEG_RUN)
			f->tail_run += seg->end - seg->start;
		if (f->tail_run <= max_run)
			return;
	} else {
		rsp_fwake__flush(f, emit, ctx);
		hold_or_emit(f, seg, place, emit, ctx);
		return;
	}
	/* the run was too long: not a false wakeup; @seg is already in the tail */
	rsp_fwake__flush(f, emit, ctx);
}
