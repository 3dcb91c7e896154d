/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The synthetic scheduler stream of the graph and snapshot benchmarks
 * (one copy: their figures compare only while their streams are the same):
 * 2 CPUs, 200 threads in 20 processes, sleeps with stacks, wakings by
 * threads (with a waker stack) and in block-completion interrupts,
 * preemptions, block requests. Header-only, for one benchmark program each.
 *
 * The including file defines the sleep stacks first:
 *	static const uint64_t stacks[3][12] (or non-const, filled at start)
 * index 0 futex, 1 pipe, 2 block I/O (a request is issued before it).
 */
#ifndef RSP_BENCH_STREAM_H
#define RSP_BENCH_STREAM_H

#include <stdint.h>
#include <linux/perf_event.h>
#include "kallsyms_fake.h"
#include "support/synth.h"

#define NCPU	 2
#define NTHR	 200
#define PER_PROC 10
#define DEV	 ((254u << 20) | 0)

enum { SLEEPING, RUNNABLE, RUNNING };

struct bthr {
	uint32_t tid, tgid;
	char comm[16];
	int state;
};

static struct bthr thr[NTHR];
static uint32_t runq[NTHR];
static int nrunq;
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const uint64_t waker_stack[6] = {PERF_CONTEXT_KERNEL, K_TRY_WAKE + 8,	K_MUTEX_LOCK + 4,
					PERF_CONTEXT_USER,   0x7f0000006000ull, 0x400800ull};

static int pick_runnable(void)
{
	int i, t;

	if (!nrunq)
		return -1;
	i = (int)(rnd() % (uint64_t)nrunq);
	t = (int)runq[i];
	runq[i] = runq[--nrunq];
	return t;
}

static int pick_sleeping(void)
{
	for (int tries = 0; tries < 8; tries++) {
		int t = (int)(rnd() % NTHR);

		if (thr[t].state == SLEEPING)
			return t;
	}
	return -1;
}

/* One context switch on @cpu: the current thread sleeps or is preempted. */
static void do_switch(struct synth *s, int *curr, uint32_t cpu, uint64_t t, uint64_t *sector)
{
	int prev = curr[cpu], next = pick_runnable();
	int kind = (int)(rnd() % 10);

	if (prev < 0 && next < 0)
		return;
	if (prev >= 0 && kind < 6) {
		int which = (int)(rnd() % 3);

		if (which == 2) {
			synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = cpu, .t = t - 2,
				     .tgid = thr[prev].tgid, .tid = thr[prev].tid, .dev = DEV,
				     .sector = *sector, .bytes = 4096, .rwbs = "WS");
			synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = cpu, .t = t - 1,
				     .tgid = thr[prev].tgid, .tid = thr[prev].tid, .dev = DEV,
				     .sector = *sector, .bytes = 4096, .rwbs = "WS");
			*sector += 8;
		}
		synth__switch(s, .cpu = cpu, .t = t, .prev_tgid = thr[prev].tgid,
			      .prev = thr[prev].tid, .prev_comm = thr[prev].comm,
			      .state = which == 2 ? 2 : 1, .next = next >= 0 ? thr[next].tid : 0,
			      .next_comm = next >= 0 ? thr[next].comm : "swapper",
			      .chain = stacks[which], .nr = 12);
		thr[prev].state = SLEEPING;
	} else if (prev >= 0) {
		synth__switch(s, .cpu = cpu, .t = t, .prev_tgid = thr[prev].tgid,
			      .prev = thr[prev].tid, .prev_comm = thr[prev].comm, .state = 0x100,
			      .next = next >= 0 ? thr[next].tid : 0,
			      .next_comm = next >= 0 ? thr[next].comm : "swapper");
		thr[prev].state = RUNNABLE;
		runq[nrunq++] = (uint32_t)prev;
	} else {
		synth__switch(s, .cpu = cpu, .t = t, .prev = 0, .prev_comm = "swapper",
			      .next = thr[next].tid, .next_comm = thr[next].comm);
	}
	if (next >= 0)
		thr[next].state = RUNNING;
	curr[cpu] = next;
}

static void wake(struct synth *s, int *curr, uint32_t cpu, uint64_t t, uint64_t *done)
{
	int w = pick_sleeping();

	if (w < 0)
		return;
	if (curr[cpu] >= 0 && rnd() % 4) {
		synth__waking(s, .cpu = cpu, .t = t, .tgid = thr[curr[cpu]].tgid,
			      .tid = thr[curr[cpu]].tid, .target = thr[w].tid,
			      .target_comm = thr[w].comm, .chain = waker_stack, .nr = 6);
	} else {
		/* a completion interrupt: complete the oldest open request, wake */
		synth__irq(s, true, cpu, t, 36, "virtio1-req.0");
		if (done[0] < done[1]) {
			synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = cpu, .t = t + 1,
				     .tid = 0, .dev = DEV, .sector = done[0], .bytes = 4096,
				     .rwbs = "WS");
			done[0] += 8;
		}
		synth__waking(s, .cpu = cpu, .t = t + 2, .tid = 0, .target = thr[w].tid,
			      .target_comm = thr[w].comm);
		synth__irq(s, false, cpu, t + 3, 36, NULL);
	}
	thr[w].state = RUNNABLE;
	runq[nrunq++] = (uint32_t)w;
}

#endif
