// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/timeline/timeline.c on synthetic record streams (support/synth.h):
 * segments, reasons, wakers (threads, irqs, softirqs, timers, devices),
 * block requests, the kernel quirk's inferences, gaps, inversions,
 * fork/exec/exit, and the store's lookups over what the timeline emitted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <rsp/timeline.h>
#include <errno.h>
#include <rsp/mapped.h>
#include <rsp/tlstore.h>
#include "kallsyms_fake.h"
#include "support/synth.h"

#define DEV ((254u << 20) | 0)
#define A   100u
#define B   101u
#define C   200u

struct rec {
	struct rsp_segment segs[64];
	char names[64][32];	/* waker names: interned by the timeline, gone after it */
	uint64_t stacks[64][8]; /* stack words as seen during the callback */
	size_t nsegs;
	struct rsp_link links[16];
	size_t nlinks;
	struct rsp_block_req reqs[8];
	size_t nreqs;
	struct rsp_handler_span spans[16];
	size_t nspans;
};

static void on_seg(void *ctx, const struct rsp_segment *s, const char *comm)
{
	struct rec *r = ctx;

	assert_true(r->nsegs < 64);
	snprintf(r->names[r->nsegs], 32, "%s", s->waker.name ? s->waker.name : "");
	for (uint32_t i = 0; i < s->nr_stack && i < 8; i++)
		r->stacks[r->nsegs][i] = s->stack[i];
	r->segs[r->nsegs++] = *s;
}

static void on_link(void *ctx, const struct rsp_link *l)
{
	struct rec *r = ctx;

	assert_true(r->nlinks < 16);
	r->links[r->nlinks++] = *l;
}

static void on_block(void *ctx, const struct rsp_block_req *q)
{
	struct rec *r = ctx;

	assert_true(r->nreqs < 8);
	r->reqs[r->nreqs++] = *q;
}

static void on_span(void *ctx, const struct rsp_handler_span *h)
{
	struct rec *r = ctx;

	assert_true(r->nspans < 16);
	r->spans[r->nspans++] = *h;
}

static const struct rsp_timeline_ops rec_ops = {
	.segment = on_seg, .link = on_link, .block = on_block, .handler = on_span};

struct fix {
	struct synth s;
	struct rsp_ksyms *ks;
	struct rec r;
	struct rsp_timeline_stats st;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct rsp_buf err = RSP_BUF_INIT;

	synth__init(&f->s);
	f->ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	rsp_buf__exit(&err);
	*state = f;
	return f->ks ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	synth__exit(&f->s);
	rsp_ksyms__delete(f->ks);
	free(f);
	return 0;
}

/* Feed everything synthesized so far into a fresh timeline, finish at @end. */
static void run(struct fix *f, uint64_t start, uint64_t end, unsigned flags)
{
	struct rsp_timeline *tl = rsp_timeline__new(f->s.schema, &rec_ops, &f->r);

	assert_non_null(tl);
	memset(&f->r, 0, sizeof(f->r));
	rsp_timeline__set_flags(tl, flags);
	assert_int_equal(rsp_timeline__set_ksyms(tl, f->ks), 0);
	rsp_timeline__set_start(tl, start);
	for (size_t i = 0; i < f->s.n; i++) {
		struct rsp_wentry e = synth__entry(&f->s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, end);
	rsp_timeline__stats(tl, &f->st);
	rsp_timeline__delete(tl);
	synth__reset(&f->s);
}

/* The segments of @tid, in emission order; and they must tile without holes. */
static size_t segs_of(const struct fix *f, uint32_t tid, const struct rsp_segment **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < f->r.nsegs; i++) {
		if (f->r.segs[i].tid != tid)
			continue;
		assert_true(n < max);
		if (getenv("TL_DUMP"))
			fprintf(stderr, "tid %u kind %u [%llu, %llu] flags %x waker %u/%u\n", tid,
				f->r.segs[i].kind, (unsigned long long)f->r.segs[i].start,
				(unsigned long long)f->r.segs[i].end, f->r.segs[i].flags,
				f->r.segs[i].waker.kind, f->r.segs[i].waker.id);
		if (n && out[n - 1]->end != f->r.segs[i].start &&
		    !(out[n - 1]->flags & RSP_SEGF_EXITED))
			fail_msg("tid %u: segment %zu ends at %llu, next starts at %llu", tid,
				 n - 1, (unsigned long long)out[n - 1]->end,
				 (unsigned long long)f->r.segs[i].start);
		assert_true(f->r.segs[i].end >= f->r.segs[i].start);
		out[n++] = &f->r.segs[i];
	}
	return n;
}

static void check_seg(const struct rsp_segment *s, uint8_t kind, uint64_t start, uint64_t end)
{
	if (s->kind != kind || s->start != start || s->end != end)
		fail_msg("segment kind %u [%llu, %llu], expected kind %u [%llu, %llu]", s->kind,
			 (unsigned long long)s->start, (unsigned long long)s->end, kind,
			 (unsigned long long)start, (unsigned long long)end);
}

static const uint64_t futex_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_FUTEX_WAIT + 0x10,
				       PERF_CONTEXT_USER, 0x7f0000001000ull};
static const uint64_t io_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_IO_SCHEDULE + 0x10,
				    K_FOLIO_WAIT + 0x30, K_EXT4_SYNC + 8};
static const uint64_t sleep_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_NANOSLEEP + 4};
static const uint64_t tcp_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_TCP_RECV + 4};
static const uint64_t timeout_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20,
					 K_SCHED_TIMEOUT + 4};
static const uint64_t waker_stack[] = {PERF_CONTEXT_KERNEL, K_TRY_WAKE + 8};

/* A sleeps on a futex, B wakes it, A runs, is preempted; stream edges. */
static void test_wakeup_by_thread(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16], *b[16], *c[16];

	synth__switch(s, .cpu = 1, .t = 1000, .prev = 0, .next = B, .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 2000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 5000, .tgid = A, .tid = B, .target = A,
		      .target_comm = "app", .chain = waker_stack, .nr = 2);
	synth__switch(s, .cpu = 0, .t = 5500, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 0, .t = 9000, .prev = A, .prev_comm = "app", .state = 0x100,
		      .next = C, .next_comm = "other");
	run(f, 500, 10000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 5);
	check_seg(a[0], RSP_SEG_RUN, 500, 2000);
	assert_true(a[0]->flags & RSP_SEGF_TRUNCATED);
	assert_int_equal(a[0]->tgid, A);
	check_seg(a[1], RSP_SEG_SLEEP, 2000, 5000);
	assert_int_equal(a[1]->reason, RSP_SR_LOCK);
	assert_int_equal(a[1]->prev_state, 1);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_THREAD);
	assert_int_equal(a[1]->waker.id, B);
	assert_int_equal(a[1]->waker.tgid, A);
	assert_int_equal(a[1]->waker.time, 5000);
	assert_int_equal(a[1]->nr_stack, 5);
	assert_int_equal(f->r.stacks[a[1] - f->r.segs][2], K_FUTEX_WAIT + 0x10);
	assert_int_equal(a[1]->waker.nr_stack, 2);
	assert_int_equal(a[1]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_IN_HANDLER), 0);
	check_seg(a[2], RSP_SEG_RUNNABLE, 5000, 5500);
	assert_int_equal(a[2]->reason, RSP_SR_LOCK);
	assert_int_equal(a[2]->waker.id, B);
	assert_int_equal(a[2]->cpu, 0);
	check_seg(a[3], RSP_SEG_RUN, 5500, 9000);
	check_seg(a[4], RSP_SEG_RUNNABLE, 9000, 10000);
	assert_int_equal(a[4]->reason, RSP_SR_PREEMPT);
	assert_true(a[4]->flags & RSP_SEGF_OPEN);
	/* B's CPU shows it running until its waking; after it, to the end, it is only inferred */
	assert_int_equal(segs_of(f, B, b, 16), 2);
	check_seg(b[0], RSP_SEG_RUN, 1000, 5000);
	assert_int_equal(b[0]->flags & RSP_SEGF_RUN_INFERRED, 0);
	check_seg(b[1], RSP_SEG_RUN, 5000, 10000);
	assert_true(b[1]->flags & RSP_SEGF_RUN_INFERRED && b[1]->flags & RSP_SEGF_OPEN);
	assert_int_equal(segs_of(f, C, c, 16), 1);
	check_seg(c[0], RSP_SEG_RUN, 9000, 10000);
	assert_true(c[0]->flags & RSP_SEGF_RUN_INFERRED);
	assert_int_equal(f->r.nlinks, 1);
	assert_int_equal(f->r.links[0].kind, RSP_LINK_WAKEUP);
	assert_int_equal(f->r.links[0].tid, A);
	assert_int_equal(f->r.links[0].from.id, B);
	assert_int_equal(f->st.wakings_not_seen, 0);
	assert_int_equal(f->st.inversions, 0);
}

/* Wakeups inside handlers belong to the handler, not the interrupted task. */
static void test_handler_wakers(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 1, .t = 100, .prev = 0, .next = B, .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = tcp_stack, .nr = 3);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 1900, .tid = B, .vec = RSP_SOFTIRQ_NET_RX);
	synth__waking(s, .cpu = 1, .t = 2000, .tid = B, .target = A, .target_comm = "app");
	synth__softirq(s, .entry = false, .cpu = 1, .t = 2100, .tid = B, .vec = RSP_SOFTIRQ_NET_RX);
	synth__switch(s, .cpu = 0, .t = 2200, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 0, .t = 3000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = sleep_stack, .nr = 3);
	synth__hrtimer(s, true, 1, 3900);
	synth__waking(s, .cpu = 1, .t = 4000, .tid = B, .target = A, .target_comm = "app");
	synth__hrtimer(s, false, 1, 4010);
	synth__switch(s, .cpu = 0, .t = 4100, .prev = 0, .next = A, .next_comm = "app");
	/* a generic timeout ended by a thread: not a timeout, unknown */
	synth__switch(s, .cpu = 0, .t = 5000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = timeout_stack, .nr = 3);
	synth__waking(s, .cpu = 1, .t = 5500, .tid = B, .target = A, .target_comm = "app");
	synth__switch(s, .cpu = 0, .t = 5600, .prev = 0, .next = A, .next_comm = "app");
	/* ... and ended by a timer softirq: a timeout */
	synth__switch(s, .cpu = 0, .t = 6000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = timeout_stack, .nr = 3);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 6400, .tid = B, .vec = RSP_SOFTIRQ_TIMER);
	synth__waking(s, .cpu = 1, .t = 6500, .tid = B, .target = A, .target_comm = "app");
	synth__softirq(s, .entry = false, .cpu = 1, .t = 6600, .tid = B, .vec = RSP_SOFTIRQ_TIMER);
	synth__switch(s, .cpu = 0, .t = 6700, .prev = 0, .next = A, .next_comm = "app");
	/* a hard irq */
	synth__switch(s, .cpu = 0, .t = 7000, .prev = A, .prev_comm = "app", .state = 1, .next = 0);
	synth__irq(s, true, 1, 7400, 36, "virtio1-req.0");
	synth__waking(s, .cpu = 1, .t = 7500, .tid = B, .target = A, .target_comm = "app");
	synth__irq(s, false, 1, 7600, 36, NULL);
	synth__switch(s, .cpu = 0, .t = 7700, .prev = 0, .next = A, .next_comm = "app");
	run(f, 0, 8000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 16);
	check_seg(a[1], RSP_SEG_SLEEP, 1000, 2000);
	assert_int_equal(a[1]->reason, RSP_SR_NETWORK);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_SOFTIRQ);
	assert_int_equal(a[1]->waker.id, RSP_SOFTIRQ_NET_RX);
	assert_true(a[1]->flags & RSP_SEGF_IN_HANDLER);
	check_seg(a[4], RSP_SEG_SLEEP, 3000, 4000);
	assert_int_equal(a[4]->reason, RSP_SR_SLEEP);
	assert_int_equal(a[4]->waker.kind, RSP_WAKER_TIMER);
	check_seg(a[7], RSP_SEG_SLEEP, 5000, 5500);
	assert_int_equal(a[7]->reason, RSP_SR_UNKNOWN);
	assert_int_equal(a[7]->waker.kind, RSP_WAKER_THREAD);
	check_seg(a[10], RSP_SEG_SLEEP, 6000, 6500);
	assert_int_equal(a[10]->reason, RSP_SR_TIMER);
	assert_int_equal(a[10]->waker.kind, RSP_WAKER_TIMER);
	check_seg(a[13], RSP_SEG_SLEEP, 7000, 7500);
	assert_int_equal(a[13]->waker.kind, RSP_WAKER_IRQ);
	assert_int_equal(a[13]->waker.id, 36);
	assert_string_equal(f->r.names[a[13] - f->r.segs], "virtio1-req.0");
	/* handler spans, each with the wakeup it did */
	assert_int_equal(f->r.nspans, 4);
	assert_int_equal(f->r.spans[0].kind, RSP_HANDLER_SOFTIRQ);
	assert_int_equal(f->r.spans[0].start, 1900);
	assert_int_equal(f->r.spans[0].end, 2100);
	assert_int_equal(f->r.spans[0].wakeups, 1);
	assert_string_equal(f->r.spans[0].name, "NET_RX");
	assert_int_equal(f->r.spans[1].kind, RSP_HANDLER_HRTIMER);
	assert_int_equal(f->r.spans[3].kind, RSP_HANDLER_IRQ);
	assert_int_equal(f->r.spans[3].id, 36);
	assert_int_equal(f->r.spans[3].end - f->r.spans[3].start, 200);
}

/* Insert -> issue -> complete, and the completion wakeup joined to the request. */
static void test_block_requests(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "app");
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 1000, .tid = A, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 1100, .tid = A, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 0, .t = 1200, .prev = A, .prev_comm = "app", .state = 2, .next = 0,
		      .chain = io_stack, .nr = 5);
	synth__irq(s, true, 1, 3000, 36, "virtio1-req.0");
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 3010, .tid = 0, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__waking(s, .cpu = 1, .t = 3020, .tid = 0, .target = A, .target_comm = "app");
	synth__irq(s, false, 1, 3030, 36, NULL);
	synth__switch(s, .cpu = 0, .t = 3100, .prev = 0, .next = A, .next_comm = "app");
	/* an issue that never fired: assumed at insert */
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 4000, .tid = A, .dev = DEV,
		     .sector = 200, .bytes = 8192, .rwbs = "R");
	synth__irq(s, true, 1, 6000, 36, "virtio1-req.0");
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 6010, .tid = 0, .dev = DEV,
		     .sector = 200, .bytes = 8192, .rwbs = "R");
	synth__irq(s, false, 1, 6020, 36, NULL);
	run(f, 0, 7000, 0);

	assert_int_equal(f->r.nreqs, 2);
	assert_int_equal(f->r.reqs[0].insert, 1000);
	assert_int_equal(f->r.reqs[0].issue, 1100);
	assert_int_equal(f->r.reqs[0].complete, 3010);
	assert_int_equal(f->r.reqs[0].tid, A);
	assert_int_equal(f->r.reqs[0].dev, DEV);
	assert_int_equal(f->r.reqs[0].bytes, 4096);
	assert_int_equal(f->r.reqs[0].flags, RSP_BLKF_WRITE | RSP_BLKF_SYNC);
	assert_int_equal(f->r.reqs[1].issue, 4000);
	assert_int_equal(f->r.reqs[1].flags, RSP_BLKF_ISSUE_ASSUMED);
	/* RUN up to its last record (the insert at 4000), then only inferred */
	assert_int_equal(segs_of(f, A, a, 16), 5);
	assert_true(a[4]->flags & RSP_SEGF_RUN_INFERRED);
	check_seg(a[1], RSP_SEG_SLEEP, 1200, 3020);
	assert_int_equal(a[1]->reason, RSP_SR_BLOCK_IO);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[1]->waker.id, DEV);
	assert_int_equal(a[1]->waker.req, f->r.reqs[0].id);
}

/*
 * A request goes by its issuer's comm when it ends, as the thread's other
 * records do, not by the comm its insert record named: the record's field
 * and a dump's converter need not agree across an exec (a process whose
 * exec reads its binary from the disk).
 */
static void test_block_request_comm(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;

	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "python3");
	/* ends before the rename: python3 */
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 600, .tid = A, .dev = DEV,
		     .comm = "python3", .sector = 50, .bytes = 4096);
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 610, .tid = A, .dev = DEV,
		     .comm = "python3", .sector = 50, .bytes = 4096);
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 700, .tid = 0, .dev = DEV,
		     .sector = 50, .bytes = 4096);
	/* inserted as python3, renamed by its exec, ended after it: the new name */
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 1000, .tid = A, .dev = DEV,
		     .comm = "python3", .sector = 100, .bytes = 4096);
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 1100, .tid = A, .dev = DEV,
		     .comm = "python3", .sector = 100, .bytes = 4096);
	synth__comm(s, .cpu = 0, .t = 1500, .pid = A, .tid = A, .comm = "sleeper", .exec = 1);
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 3010, .tid = 0, .dev = DEV,
		     .sector = 100, .bytes = 4096);
	run(f, 0, 4000, 0);

	assert_int_equal(f->r.nreqs, 2);
	assert_int_equal(f->r.reqs[0].insert, 600);
	assert_string_equal(f->r.reqs[0].comm, "python3");
	assert_int_equal(f->r.reqs[1].insert, 1000);
	assert_string_equal(f->r.reqs[1].comm, "sleeper");
}

/* The quirk: no waking and no completion delivered. Infer only on evidence. */
static void test_quirk_inference(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "app");
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 1000, .tid = A, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 1010, .tid = A, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 0, .t = 1100, .prev = A, .prev_comm = "app", .state = 2, .next = 0,
		      .chain = io_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 5000, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 0, .t = 6000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = sleep_stack, .nr = 3);
	synth__switch(s, .cpu = 0, .t = 8000, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 0, .t = 9000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 9500, .prev = 0, .next = A, .next_comm = "app");
	run(f, 0, 10000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 7);
	/* held until the run ended, then emitted before it */
	check_seg(a[1], RSP_SEG_SLEEP, 1100, 5000);
	check_seg(a[2], RSP_SEG_RUN, 5000, 6000);
	assert_int_equal(a[1]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED),
			 RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[1]->waker.id, DEV);
	assert_int_equal(f->r.nreqs, 1);
	assert_int_equal(a[1]->waker.req, f->r.reqs[0].id);
	assert_int_equal(f->r.reqs[0].complete, 5000);
	assert_true(f->r.reqs[0].flags & RSP_BLKF_COMPLETE_INFERRED);
	check_seg(a[3], RSP_SEG_SLEEP, 6000, 8000);
	assert_int_equal(a[3]->waker.kind, RSP_WAKER_TIMER);
	assert_true(a[3]->flags & RSP_SEGF_WAKER_INFERRED);
	/* a futex wait with no waking seen: the waker is unknown, not invented */
	check_seg(a[5], RSP_SEG_SLEEP, 9000, 9500);
	assert_int_equal(a[5]->waker.kind, RSP_WAKER_NONE);
	assert_int_equal(a[5]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED),
			 RSP_SEGF_WAKING_NOT_SEEN);
	assert_int_equal(f->st.wakings_not_seen, 3);
	assert_int_equal(f->st.wakers_inferred, 2);
}

/*
 * A thread that slept in the block layer before its request could go (an
 * io.max throttle) on an idle CPU: neither the waking nor its switch-in
 * was delivered, and its first record is the insert of the request it was
 * held back from. The device is inferred as the waker, no request joined;
 * an insert more than JOIN_NS into the run names nothing.
 */
static void test_submit_after_wait(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 0, .t = 1100, .prev = A, .prev_comm = "app", .state = 2, .next = 0,
		      .chain = io_stack, .nr = 5);
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 5000, .tid = A, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 5010, .tid = A, .dev = DEV,
		     .sector = 100, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 0, .t = 5100, .prev = A, .prev_comm = "app", .state = 2, .next = 0,
		      .chain = io_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 8000, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 0, .t = 8100, .prev = A, .prev_comm = "app", .state = 2, .next = 0,
		      .chain = io_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 20000, .prev = 0, .next = A, .next_comm = "app");
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 20000 + 2500000, .tid = A,
		     .dev = DEV, .sector = 200, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 0, .t = 20000 + 2600000, .prev = A, .prev_comm = "app", .state = 1,
		      .next = 0, .chain = sleep_stack, .nr = 3);
	run(f, 0, 3000000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 8);
	check_seg(a[1], RSP_SEG_SLEEP, 1100, 5000);
	assert_int_equal(a[1]->reason, RSP_SR_BLOCK_IO);
	assert_int_equal(a[1]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED),
			 RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[1]->waker.id, DEV);
	assert_int_equal(a[1]->waker.req, 0);
	/* the wait for the request it then submitted: joined to it, as before */
	check_seg(a[3], RSP_SEG_SLEEP, 5100, 8000);
	assert_int_equal(a[3]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[3]->waker.req, f->r.reqs[0].id);
	/* an insert 2.5 ms into the run: not evidence of what ended the sleep */
	check_seg(a[5], RSP_SEG_SLEEP, 8100, 20000);
	assert_int_equal(a[5]->waker.kind, RSP_WAKER_NONE);
	assert_int_equal(a[5]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED),
			 RSP_SEGF_WAKING_NOT_SEEN);
	assert_int_equal(f->st.wakers_inferred, 2);
}

/* A 4 KiB request of @tid at @sector of DEV: inserted at @t, issued 10 ns later. */
static void request(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tid, uint64_t sector,
		    const char *rwbs)
{
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = cpu, .t = t, .tid = tid, .dev = DEV,
		     .sector = sector, .bytes = 4096, .rwbs = rwbs);
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = cpu, .t = t + 10, .tid = tid,
		     .dev = DEV, .sector = sector, .bytes = 4096, .rwbs = rwbs);
}

/*
 * A sleep in io_schedule whose request completed and whose waking were not
 * delivered (an interrupt on an idle CPU): the disk ended it, whoever ran
 * next on its CPU. Here a kworker the same interrupt woke runs first, then
 * switches to the sleeper: the sleeper's waker is the disk, not the kworker,
 * and the kworker's own sleep has no evidence of its waker.
 */
static void test_io_sleep_whoever_next(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16], *c[16];

	synth__switch(s, .cpu = 0, .t = 100, .prev = 0, .next = C, .next_comm = "kworker/0:1H");
	synth__switch(s, .cpu = 0, .t = 200, .prev = C, .state = 0x80, .next = A,
		      .next_comm = "syncer");
	request(s, 0, 1000, A, 100, "WS");
	synth__switch(s, .cpu = 0, .t = 1100, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	/* not delivered: the irq at 3000, its completion, its wakings of A and C */
	synth__waking(s, .cpu = 0, .t = 3200, .tid = C, .target = B, .target_comm = "other");
	synth__switch(s, .cpu = 0, .t = 3300, .prev = C, .prev_comm = "kworker/0:1H", .state = 0x80,
		      .next = A, .next_comm = "syncer");
	synth__switch(s, .cpu = 0, .t = 4000, .prev = A, .prev_comm = "syncer", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	run(f, 0, 5000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 4);
	check_seg(a[1], RSP_SEG_SLEEP, 1100, 3300);
	assert_int_equal(a[1]->reason, RSP_SR_BLOCK_IO);
	assert_int_equal(a[1]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED),
			 RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[1]->waker.id, DEV);
	assert_int_equal(f->r.nreqs, 1);
	assert_int_equal(a[1]->waker.req, f->r.reqs[0].id);
	assert_int_equal(f->r.reqs[0].complete, 3300);
	assert_true(f->r.reqs[0].flags & RSP_BLKF_COMPLETE_INFERRED);
	/* the kworker: woken unseen, and what it did says nothing of who woke it */
	assert_int_equal(segs_of(f, C, c, 16), 4);
	check_seg(c[1], RSP_SEG_SLEEP, 200, 3200);
	assert_int_equal(c[1]->waker.kind, RSP_WAKER_NONE);
	assert_int_equal(f->st.wakings_not_seen, 2);
	assert_int_equal(f->st.wakers_inferred, 1);
}

/*
 * ext4's end-of-I/O work: the disk's completion wakes a kworker in an
 * interrupt on an idle CPU (neither delivered), and the kworker, in task
 * context, wakes the thread waiting for the writeback (delivered). The BPF
 * backend sees the device wake the kworker; so does the inference: the
 * kworker relays the request's completion, which is done by its run.
 * Not a relay: a waking of a thread asleep on a lock (its request in
 * flight notwithstanding), or one more than JOIN_NS into the kworker's run.
 */
static void test_relayed_completion(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16], *c[16];

	synth__switch(s, .cpu = 1, .t = 100, .prev = 0, .next = C, .next_comm = "kworker/u8:5");
	synth__switch(s, .cpu = 1, .t = 200, .prev = C, .state = 0x80, .next = 0);
	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "syncer");
	request(s, 0, 1000, A, 100, "WS");
	synth__switch(s, .cpu = 0, .t = 1100, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	/* not delivered: the irq on idle CPU 1 at 3000, the completion, the waking of C */
	synth__waking(s, .cpu = 1, .t = 3050, .tid = C, .target = A, .target_comm = "syncer",
		      .chain = waker_stack, .nr = 2);
	synth__switch(s, .cpu = 1, .t = 3100, .prev = C, .prev_comm = "kworker/u8:5", .state = 0x80,
		      .next = 0);
	synth__switch(s, .cpu = 0, .t = 3200, .prev = 0, .next = A, .next_comm = "syncer");
	/* 2: a request in flight, but A waits on a lock the kworker releases */
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 3300, .tid = A, .dev = DEV,
		     .sector = 200, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 0, .t = 3400, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 5000, .tid = C, .target = A, .target_comm = "syncer");
	synth__switch(s, .cpu = 1, .t = 5100, .prev = C, .prev_comm = "kworker/u8:5", .state = 0x80,
		      .next = 0);
	synth__switch(s, .cpu = 0, .t = 5200, .prev = 0, .next = A, .next_comm = "syncer");
	/* 3: block I/O with the request in flight, but the waking 3 ms into C's run */
	synth__switch(s, .cpu = 0, .t = 5300, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 1, .t = 6000, .tid = C, .dev = DEV,
		     .sector = 300, .bytes = 4096, .rwbs = "W");
	synth__waking(s, .cpu = 1, .t = 6000 + 3000000, .tid = C, .target = A,
		      .target_comm = "syncer");
	synth__switch(s, .cpu = 1, .t = 6000 + 3000100, .prev = C, .prev_comm = "kworker/u8:5",
		      .state = 0x80, .next = 0);
	synth__switch(s, .cpu = 0, .t = 6000 + 3000200, .prev = 0, .next = A,
		      .next_comm = "syncer");
	run(f, 0, 10000000, 0);

	assert_int_equal(segs_of(f, C, c, 16), 8);
	check_seg(c[1], RSP_SEG_SLEEP, 200, 3050);
	assert_int_equal(c[1]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED),
			 RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED);
	assert_int_equal(c[1]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(c[1]->waker.id, DEV);
	assert_int_equal(f->r.reqs[0].sector, 100);
	assert_int_equal(c[1]->waker.req, f->r.reqs[0].id);
	assert_int_equal(f->r.reqs[0].complete, 3050);
	assert_true(f->r.reqs[0].flags & RSP_BLKF_COMPLETE_INFERRED);
	/* A's waits: the kworker's waking was seen, not inferred (the graph relays it) */
	assert_int_equal(segs_of(f, A, a, 16), 10);
	check_seg(a[1], RSP_SEG_SLEEP, 1100, 3050);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_THREAD);
	assert_int_equal(a[1]->waker.id, C);
	assert_int_equal(a[1]->flags & (RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED), 0);
	/* 2: a lock: the kworker's waker stays unknown; the request stays open */
	check_seg(c[3], RSP_SEG_SLEEP, 3100, 5000);
	assert_int_equal(c[3]->waker.kind, RSP_WAKER_NONE);
	check_seg(a[4], RSP_SEG_SLEEP, 3400, 5000);
	assert_int_equal(a[4]->reason, RSP_SR_LOCK);
	/* 3: too late in the kworker's run to be what woke it */
	check_seg(c[5], RSP_SEG_SLEEP, 5100, 6000);
	assert_int_equal(c[5]->waker.kind, RSP_WAKER_NONE);
	assert_int_equal(f->st.wakings_not_seen, 3);
	assert_int_equal(f->st.wakers_inferred, 1);
}

/*
 * 1: a kworker already running (its waking was seen, or it never slept)
 * wakes A from its block I/O sleep: it relays a completion not delivered,
 * so A's request is done by then; the kworker's own waker is not
 * inferred. 2: a request left open by a run whose sleep a thread ended (a
 * lock) is not completed by a later inference: its completion is
 * unknown (the BPF backend has it so too); completed at that later time
 * it held the disk busy since its issue.
 */
static void test_relay_running_and_stale(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 1, .t = 100, .prev = 0, .next = C, .next_comm = "kworker/u8:5");
	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "syncer");
	request(s, 0, 1000, A, 100, "WS");
	synth__switch(s, .cpu = 0, .t = 1100, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 3000, .tid = C, .target = A, .target_comm = "syncer");
	synth__switch(s, .cpu = 0, .t = 3100, .prev = 0, .next = A, .next_comm = "syncer");
	request(s, 0, 3200, A, 200, "WS");
	synth__switch(s, .cpu = 0, .t = 3300, .prev = A, .prev_comm = "syncer", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 4000, .tid = C, .target = A, .target_comm = "syncer");
	synth__switch(s, .cpu = 0, .t = 4100, .prev = 0, .next = A, .next_comm = "syncer");
	request(s, 0, 4200, A, 300, "WS");
	synth__switch(s, .cpu = 0, .t = 4300, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 6000, .prev = 0, .next = A, .next_comm = "syncer");
	run(f, 0, 7000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 9);
	check_seg(a[1], RSP_SEG_SLEEP, 1100, 3000);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_THREAD);
	assert_int_equal(a[1]->waker.id, C);
	check_seg(a[7], RSP_SEG_SLEEP, 4300, 6000);
	assert_int_equal(a[7]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(f->r.nreqs, 3);
	assert_int_equal(f->r.reqs[0].sector, 100);
	assert_int_equal(f->r.reqs[0].complete, 3000);
	assert_true(f->r.reqs[0].flags & RSP_BLKF_COMPLETE_INFERRED);
	assert_int_equal(f->r.reqs[1].sector, 300);
	assert_int_equal(f->r.reqs[1].complete, 6000);
	assert_int_equal(a[7]->waker.req, f->r.reqs[1].id);
	assert_int_equal(f->r.reqs[2].sector, 200);
	assert_true(f->r.reqs[2].flags & RSP_BLKF_COMPLETE_NOT_SEEN);
	assert_int_equal(f->st.wakers_inferred, 1);
}

/*
 * A wakeup in the handler that completed a request is the device's: 4 ms
 * after the completion (the softirq interrupted on a busy machine), for a
 * request another thread issued (A waits on a metadata block B's request
 * was writing), or after a completion rsp does not follow (a flush's, at
 * sector -1). Else those waits went to "disk ?" or the irq, and the knot
 * {thread, disk} had an edge out.
 */
static void test_completion_handler_wakes(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 1, .t = 100, .prev = 0, .next = B, .next_comm = "writer");
	request(s, 1, 200, B, 200, "WSM");
	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "syncer");
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 3000, .tid = B, .vec = RSP_SOFTIRQ_BLOCK);
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 3010, .tid = B, .dev = DEV,
		     .sector = 200, .bytes = 4096, .rwbs = "WSM");
	synth__waking(s, .cpu = 1, .t = 3010 + 4000000, .tid = B, .target = A,
		      .target_comm = "syncer");
	synth__softirq(s, .entry = false, .cpu = 1, .t = 3020 + 4000000, .tid = B,
		       .vec = RSP_SOFTIRQ_BLOCK);
	synth__switch(s, .cpu = 0, .t = 4100000, .prev = 0, .next = A, .next_comm = "syncer");
	synth__switch(s, .cpu = 0, .t = 4200000, .prev = A, .prev_comm = "syncer", .state = 2,
		      .next = 0, .chain = io_stack, .nr = 5);
	synth__irq_in(s, true, 1, 4300000, 36, "virtio1-req.0", B);
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 4300010, .tid = B,
		     .dev = DEV, .sector = UINT64_MAX, .rwbs = "FF");
	synth__waking(s, .cpu = 1, .t = 4300020, .tid = B, .target = A, .target_comm = "syncer");
	synth__irq_in(s, false, 1, 4300030, 36, NULL, B);
	synth__switch(s, .cpu = 0, .t = 4300100, .prev = 0, .next = A, .next_comm = "syncer");
	run(f, 0, 5000000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 7);
	check_seg(a[1], RSP_SEG_SLEEP, 1000, 4003010);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[1]->waker.id, DEV);
	assert_int_equal(f->r.nreqs, 1);
	assert_int_equal(a[1]->waker.req, f->r.reqs[0].id);
	check_seg(a[4], RSP_SEG_SLEEP, 4200000, 4300020);
	assert_int_equal(a[4]->waker.kind, RSP_WAKER_DEVICE);
	assert_int_equal(a[4]->waker.id, DEV);
	assert_int_equal(a[4]->waker.req, 0);
	assert_int_equal(f->st.completions_alone, 1);
}

static const uint64_t poll_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_POLL + 4,
				      PERF_CONTEXT_USER, 0x7f0000002000ull};

/*
 * poll() with a timeout on an idle CPU: the timer's wakeup is not delivered,
 * but the timeout the thread armed just before it slept is evidence. A
 * timer armed earlier (another run), one not yet expired at the switch-in,
 * and one with another callback are not.
 */
static void test_timeout_inference(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "app");
	/* 1: armed for 5000, slept at 1100, seen again at 5030: the timeout */
	synth__hrtimer_start(s, .cpu = 0, .t = 1000, .tid = A, .fn = K_HRTIMER_WAKEUP,
			     .expires = 5000);
	synth__switch(s, .cpu = 0, .t = 1100, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = poll_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 5030, .prev = 0, .next = A, .next_comm = "app");
	/* 2: armed for 9000 but back at 7000: something else woke it */
	synth__hrtimer_start(s, .cpu = 0, .t = 5100, .tid = A, .fn = K_HRTIMER_WAKEUP,
			     .expires = 9000);
	synth__switch(s, .cpu = 0, .t = 5200, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = poll_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 7000, .prev = 0, .next = A, .next_comm = "app");
	/* 3: no timer armed in this run (the one of run 2 was consumed) */
	synth__switch(s, .cpu = 0, .t = 7100, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = poll_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 9500, .prev = 0, .next = A, .next_comm = "app");
	/* 4: a timer with another callback (a posix timer, timerfd) */
	synth__hrtimer_start(s, .cpu = 0, .t = 9600, .tid = A, .fn = K_TRY_WAKE, .expires = 9800);
	synth__switch(s, .cpu = 0, .t = 9700, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = poll_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 9900, .prev = 0, .next = A, .next_comm = "app");
	run(f, 0, 10000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 9);
	check_seg(a[1], RSP_SEG_SLEEP, 1100, 5030);
	assert_int_equal(a[1]->reason, RSP_SR_POLL);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_TIMER);
	assert_true(a[1]->flags & RSP_SEGF_WAKER_INFERRED);
	check_seg(a[3], RSP_SEG_SLEEP, 5200, 7000);
	assert_int_equal(a[3]->waker.kind, RSP_WAKER_NONE);
	check_seg(a[5], RSP_SEG_SLEEP, 7100, 9500);
	assert_int_equal(a[5]->waker.kind, RSP_WAKER_NONE);
	check_seg(a[7], RSP_SEG_SLEEP, 9700, 9900);
	assert_int_equal(a[7]->waker.kind, RSP_WAKER_NONE);
	assert_int_equal(f->st.wakers_inferred, 1);
}

/* A waking written a little late on another CPU still names the waker. */
static void test_late_waking(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 1, .t = 100, .prev = 0, .next = B, .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 5000, .prev = 0, .next = A, .next_comm = "app");
	synth__waking(s, .cpu = 1, .t = 4990, .tid = B, .target = A, .target_comm = "app");
	/* a waking stamped before the sleep it ends: clamped, counted */
	synth__switch(s, .cpu = 0, .t = 6000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 5990, .tid = B, .target = A, .target_comm = "app");
	synth__switch(s, .cpu = 0, .t = 6100, .prev = 0, .next = A, .next_comm = "app");
	run(f, 0, 7000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 7);
	check_seg(a[1], RSP_SEG_SLEEP, 1000, 4990);
	assert_int_equal(a[1]->waker.kind, RSP_WAKER_THREAD);
	assert_int_equal(a[1]->flags & RSP_SEGF_WAKING_NOT_SEEN, 0);
	check_seg(a[2], RSP_SEG_RUNNABLE, 4990, 5000);
	check_seg(a[3], RSP_SEG_RUN, 5000, 6000);
	check_seg(a[4], RSP_SEG_SLEEP, 6000, 6000);
	check_seg(a[5], RSP_SEG_RUNNABLE, 6000, 6100);
	assert_int_equal(f->st.wakings_not_seen, 0);
	assert_int_equal(f->st.inversions, 1);
}

/* Lost records: open segments close at the gap, nothing is invented across it. */
static void test_gap(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16], *b[16], *c[16];

	synth__switch(s, .cpu = 0, .t = 1000, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 1, .t = 1500, .prev = B, .prev_comm = "helper", .state = 1,
		      .next = C, .next_comm = "other", .chain = futex_stack, .nr = 5);
	synth__irq_in(s, true, 0, 2000, 5, "timer", A); /* it interrupts A */
	synth__irq_in(s, false, 0, 2010, 5, NULL, A);
	synth__lost(s, 0, 3000, 42);
	synth__switch(s, .cpu = 0, .t = 4000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 5000, .tid = C, .target = B, .target_comm = "helper");
	synth__switch(s, .cpu = 1, .t = 5100, .prev = C, .prev_comm = "other", .state = 0x100,
		      .next = B, .next_comm = "helper");
	run(f, 0, 6000, 0);

	assert_int_equal(f->st.gaps, 1);
	assert_int_equal(segs_of(f, A, a, 16), 4);
	check_seg(a[0], RSP_SEG_RUN, 1000, 2010);
	assert_true(a[0]->flags & RSP_SEGF_GAP);
	/* its switch-out is the first evidence that it runs again */
	check_seg(a[1], RSP_SEG_UNKNOWN, 2010, 4000);
	assert_true(a[1]->flags & RSP_SEGF_SWITCH_NOT_SEEN);
	check_seg(a[2], RSP_SEG_RUN, 4000, 4000);
	check_seg(a[3], RSP_SEG_SLEEP, 4000, 6000);
	assert_int_equal(segs_of(f, B, b, 16), 5);
	check_seg(b[0], RSP_SEG_RUN, 0, 1500);
	check_seg(b[1], RSP_SEG_SLEEP, 1500, 2010);
	assert_int_equal(b[1]->waker.kind, RSP_WAKER_NONE);
	assert_true(b[1]->flags & RSP_SEGF_GAP);
	check_seg(b[2], RSP_SEG_UNKNOWN, 2010, 5000);
	check_seg(b[3], RSP_SEG_RUNNABLE, 5000, 5100);
	/* C ran on the other CPU: untouched */
	assert_int_equal(segs_of(f, C, c, 16), 2);
	check_seg(c[0], RSP_SEG_RUN, 1500, 5100);
	assert_int_equal(c[0]->flags & RSP_SEGF_GAP, 0);
}

/* fork, wakeup_new, exec, exit; and a tid reused afterwards starts afresh. */
static void test_fork_exec_exit(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *k[16];

	synth__switch(s, .cpu = 0, .t = 500, .prev = 0, .next = A, .next_comm = "app");
	synth__process_fork(s, .cpu = 0, .t = 1000, .parent = A, .child = 102, .comm = "app");
	synth__wakeup_new(s, .cpu = 0, .t = 1010, .tid = A, .child = 102, .comm = "app");
	synth__switch(s, .cpu = 1, .t = 1100, .prev = 0, .next = 102, .next_comm = "app");
	{
		struct synth_raw r;

		synth__raw_init(s, &r, RSP_EV_sched_process_exec);
		synth__raw_str(s, &r, RSP_F_sched_process_exec__filename, "/bin/true");
		synth__raw_u(s, &r, RSP_F_sched_process_exec__pid, 102);
		synth__raw_u(s, &r, RSP_F_sched_process_exec__old_pid, 102);
		synth__sample(s, .ev = RSP_EV_sched_process_exec, .cpu = 1, .t = 1500, .tid = 102,
			      .raw = &r);
	}
	synth__switch(s, .cpu = 1, .t = 2000, .prev = 102, .prev_comm = "true", .state = 0x10,
		      .next = 0);
	synth__waking(s, .cpu = 0, .t = 3000, .tid = A, .target = 102, .target_comm = "new");
	run(f, 0, 4000, 0);

	assert_int_equal(f->r.nlinks, 3);
	assert_int_equal(f->r.links[0].kind, RSP_LINK_FORK);
	assert_int_equal(f->r.links[0].tid, 102);
	assert_int_equal(f->r.links[0].from.id, A);
	assert_int_equal(f->r.links[1].kind, RSP_LINK_EXEC);
	assert_int_equal(f->r.links[1].time, 1500);
	assert_int_equal(segs_of(f, 102, k, 16), 5);
	check_seg(k[0], RSP_SEG_RUNNABLE, 1010, 1100);
	assert_int_equal(k[0]->waker.id, A);
	check_seg(k[1], RSP_SEG_RUN, 1100, 1500);
	check_seg(k[2], RSP_SEG_RUN, 1500, 2000);
	assert_true(k[2]->flags & RSP_SEGF_EXITED);
	/* the reused tid: first seen being woken, it slept since the stream began */
	check_seg(k[3], RSP_SEG_SLEEP, 0, 3000);
	assert_true(k[3]->flags & RSP_SEGF_TRUNCATED);
}

/*
 * The quirk again: a switch away from idle is never delivered. A thread's
 * first record on a CPU is the evidence that it was switched in.
 */
static void test_switch_from_idle_not_seen(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 1, .t = 100, .prev = 0, .next = B, .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	/* woken by B; then, with no switch-in, A wakes B on CPU 0 at 2500 */
	synth__waking(s, .cpu = 1, .t = 2000, .tid = B, .target = A, .target_comm = "app");
	synth__switch(s, .cpu = 1, .t = 2100, .prev = B, .prev_comm = "helper", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 0, .t = 2500, .tid = A, .target = B, .target_comm = "helper");
	/* A sleeps again; its next sign of life is its switch-out at 4000 */
	synth__switch(s, .cpu = 0, .t = 3000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 4000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	run(f, 0, 5000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 7);
	check_seg(a[1], RSP_SEG_SLEEP, 1000, 2000);
	check_seg(a[2], RSP_SEG_RUNNABLE, 2000, 2500);
	assert_true(a[2]->flags & RSP_SEGF_SWITCH_NOT_SEEN);
	check_seg(a[3], RSP_SEG_RUN, 2500, 3000);
	check_seg(a[4], RSP_SEG_SLEEP, 3000, 4000);
	assert_int_equal(a[4]->flags & (RSP_SEGF_SWITCH_NOT_SEEN | RSP_SEGF_WAKING_NOT_SEEN),
			 RSP_SEGF_SWITCH_NOT_SEEN | RSP_SEGF_WAKING_NOT_SEEN);
	check_seg(a[5], RSP_SEG_RUN, 4000, 4000);
	check_seg(a[6], RSP_SEG_SLEEP, 4000, 5000);
	assert_int_equal(f->st.switches_not_seen, 2);
}

/*
 * A switch into A is delivered, then nothing from A's context (its
 * switch-out lost, its CPU idle and the ring silent): A is not running for
 * the 99% of the range that follows. Its run ends at its last record (the
 * switch-in); up to the next record of another task on that CPU (C's
 * sample at 8000) it is only inferred to have run, UNKNOWN after it. B,
 * switched in the same way, shows up next on the other CPU: its run on
 * CPU 1 ends at its last record there, inferred up to its record on CPU 0.
 */
static void test_switch_out_not_seen(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16], *b[16], *c[16];

	synth__switch(s, .cpu = 0, .t = 10000, .prev = C, .prev_comm = "other", .state = 1,
		      .next = A, .next_comm = "app");
	synth__cpu_sample(s, .cpu = 0, .t = 15000, .tid = A, .ip = 0x401000);
	synth__switch(s, .cpu = 1, .t = 20000, .prev = 0, .next = B, .next_comm = "helper");
	synth__cpu_sample(s, .cpu = 1, .t = 25000, .tid = B, .ip = 0x401000);
	synth__cpu_sample(s, .cpu = 0, .t = 40000, .tid = B, .ip = 0x401000);
	synth__cpu_sample(s, .cpu = 0, .t = 80000, .tid = C, .ip = 0x401000);
	synth__switch(s, .cpu = 0, .t = 90000, .prev = C, .prev_comm = "other", .state = 1,
		      .next = 0);
	run(f, 0, 1000000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 3);
	check_seg(a[0], RSP_SEG_RUN, 10000, 15000);
	assert_int_equal(a[0]->flags & RSP_SEGF_RUN_INFERRED, 0);
	check_seg(a[1], RSP_SEG_RUN, 15000, 40000); /* B's record on CPU 0 ends it */
	assert_true(a[1]->flags & RSP_SEGF_RUN_INFERRED);
	check_seg(a[2], RSP_SEG_UNKNOWN, 40000, 1000000);
	assert_int_equal(segs_of(f, B, b, 16), 4);
	check_seg(b[0], RSP_SEG_RUN, 20000, 25000);
	check_seg(b[1], RSP_SEG_RUN, 25000, 40000);
	assert_true(b[1]->flags & RSP_SEGF_RUN_INFERRED);
	/* on CPU 0, seen once at 40000: inferred until C's sample at 80000 there */
	check_seg(b[2], RSP_SEG_RUN, 40000, 80000);
	assert_true(b[2]->flags & RSP_SEGF_RUN_INFERRED);
	assert_int_equal(b[2]->cpu, 0);
	check_seg(b[3], RSP_SEG_UNKNOWN, 80000, 1000000);
	assert_int_equal(f->st.runs_inferred, 3);
	/* C ran from its record at 80000 to its switch-out: seen, nothing inferred */
	assert_int_equal(segs_of(f, C, c, 16), 4);
	check_seg(c[2], RSP_SEG_RUN, 80000, 90000);
	assert_int_equal(c[2]->flags & RSP_SEGF_RUN_INFERRED, 0);
}

/*
 * Records of one CPU a few hundred ns out of order: the next task's first
 * record before the switch that brings it ends nothing early.
 */
static void test_inversion_not_inferred(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 0, .t = 10000, .prev = 0, .next = A, .next_comm = "app");
	synth__cpu_sample(s, .cpu = 0, .t = 15000, .tid = A, .ip = 0x401000);
	synth__waking(s, .cpu = 0, .t = 29700, .tid = B, .target = C, .target_comm = "other");
	synth__switch(s, .cpu = 0, .t = 30000, .prev = A, .prev_comm = "app", .state = 1, .next = B,
		      .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 50000, .prev = B, .prev_comm = "helper", .state = 1,
		      .next = 0);
	run(f, 0, 60000, 0);

	assert_int_equal(segs_of(f, A, a, 16), 2);
	check_seg(a[0], RSP_SEG_RUN, 10000, 30000);
	assert_int_equal(a[0]->flags & RSP_SEGF_RUN_INFERRED, 0);
	assert_int_equal(f->st.runs_inferred, 0);
}

/* Without RSP_TL_RECORDS_STABLE, stacks are copies that outlive the record. */
static void test_stack_copy_mode(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *a[16];

	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 2000, .tid = B, .target = A, .target_comm = "app");
	run(f, 0, 3000, 0);
	assert_int_equal(segs_of(f, A, a, 16), 3);
	/* the sleep was emitted during the feed: its stack was a copy then */
	assert_int_equal(a[1]->nr_stack, 5);
	assert_true(a[1]->stack != futex_stack);
	assert_int_equal(f->r.stacks[a[1] - f->r.segs][2], K_FUTEX_WAIT + 0x10);
	assert_int_equal(f->r.stacks[a[1] - f->r.segs][4], 0x7f0000001000ull);
}

/* A timeline fed forever: no stacks, a bound on threads, expiry, a skipped stretch. */
static void test_forever(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	struct rsp_timeline *tl = rsp_timeline__new(s->schema, &rec_ops, &f->r);
	const struct rsp_segment *a[16];

	assert_non_null(tl);
	memset(&f->r, 0, sizeof(f->r));
	rsp_timeline__set_flags(tl, RSP_TL_NO_STACKS);
	rsp_timeline__set_max_threads(tl, 2);
	assert_int_equal(rsp_timeline__set_ksyms(tl, f->ks), 0);
	rsp_timeline__set_start(tl, 0);
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	/* a write whose completion is never delivered (idle CPU) */
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 1, .t = 1500, .tid = B, .dev = DEV,
		     .sector = 8, .bytes = 4096, .rwbs = "W");
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 1, .t = 1600, .tid = B, .dev = DEV,
		     .sector = 8, .bytes = 4096, .rwbs = "W");
	/* C is a third thread: past the bound */
	synth__switch(s, .cpu = 1, .t = 1700, .prev = C, .prev_comm = "other", .state = 1,
		      .next = B, .next_comm = "helper", .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 2000, .tid = B, .target = A, .target_comm = "app");
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__stats(tl, &f->st);
	assert_true(f->st.untracked >= 1);
	assert_int_equal(f->st.malformed, 0);
	assert_int_equal(segs_of(f, A, a, 16), 2);
	check_seg(a[1], RSP_SEG_SLEEP, 1000, 2000);
	assert_int_equal(a[1]->reason, RSP_SR_LOCK); /* classified, */
	assert_null(a[1]->stack);		     /* but no stack kept */
	assert_int_equal(segs_of(f, C, a, 16), 0);

	/* the request is still open; expiring before its issue keeps it */
	rsp_timeline__expire(tl, 1600);
	assert_int_equal(f->r.nreqs, 0);
	rsp_timeline__expire(tl, 1601);
	assert_int_equal(f->r.nreqs, 1);
	assert_true(f->r.reqs[0].flags & RSP_BLKF_COMPLETE_NOT_SEEN);

	/* a skipped stretch from 3000: A (runnable) and B (running) become unknown */
	rsp_timeline__gap(tl, 3000);
	assert_int_equal(segs_of(f, A, a, 16), 3);
	check_seg(a[2], RSP_SEG_RUNNABLE, 2000, 3000);
	assert_true(a[2]->flags & RSP_SEGF_GAP);
	/* forgotten once the gap is older than the horizon; their slots are free again */
	rsp_timeline__expire(tl, 3000);
	rsp_timeline__stats(tl, &f->st);
	assert_int_equal(f->st.threads_expired, 0);
	rsp_timeline__expire(tl, 3001);
	rsp_timeline__stats(tl, &f->st);
	assert_int_equal(f->st.threads_expired, 2);
	assert_int_equal(f->st.reqs_expired, 1);
	synth__reset(s);
	synth__switch(s, .cpu = 1, .t = 4000, .prev = C, .prev_comm = "other", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 0, .t = 5000, .tid = A, .target = C, .target_comm = "other");
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	/* C is followed now, from its first record */
	assert_int_equal(segs_of(f, C, a, 16), 2);
	check_seg(a[0], RSP_SEG_RUN, 4000, 4000);
	check_seg(a[1], RSP_SEG_SLEEP, 4000, 5000);
	rsp_timeline__delete(tl);
	synth__reset(s);
}

/* sampled:N without stable records: a stack copy outlives its record until its switch. */
static void test_copy_outlives_record(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	struct perf_event_attr a;
	struct rsp_timeline *tl = rsp_timeline__new(s->schema, &rec_ops, &f->r);
	int copy, primary_cc = s->evsel_cc[RSP_EV_sched_switch];
	struct rsp_wentry e;
	const struct rsp_segment *x[8];

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	copy = rsp_schema__add_evsel(s->schema, &a, RSP_EV_sched_switch, RSP_ROLE_STACK_COPY,
				     "synth copy");
	assert_true(copy >= 0);
	assert_int_equal(rsp_schema__add_id(s->schema, copy, SYNTH_ID_BASE + (uint64_t)copy), 0);
	memset(&f->r, 0, sizeof(f->r));
	assert_int_equal(rsp_timeline__set_ksyms(tl, f->ks), 0);
	rsp_timeline__set_start(tl, 0);
	/* the copy (with the futex stack), then its primary without a stack */
	s->evsel_cc[RSP_EV_sched_switch] = copy;
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	s->evsel_cc[RSP_EV_sched_switch] = primary_cc;
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0);
	synth__waking(s, .cpu = 1, .t = 2000, .tid = B, .target = A, .target_comm = "app");
	e = synth__entry(s, 0);
	assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	/* the caller releases the copy's record before the switch arrives */
	memset(s->buf + s->offs[0], 0xee, s->offs[1] - s->offs[0]);
	for (size_t i = 1; i < s->n; i++) {
		e = synth__entry(s, i);
		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	assert_int_equal(segs_of(f, A, x, 8), 2);
	check_seg(x[1], RSP_SEG_SLEEP, 1000, 2000);
	assert_int_equal(x[1]->reason, RSP_SR_LOCK);
	rsp_timeline__delete(tl);
	synth__reset(s);
}

/*
 * sampled:N on this kernel: the copy comes 10-100 us before its switch
 * (each evsel reads the clock after its own callchain walk), adjacent in
 * the CPU's stream. It pairs with the next switch of the same thread on
 * that CPU if nothing came between, in either order; not with another
 * thread's switch, nor across another record of the CPU.
 */
static void test_copy_pairing(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	struct perf_event_attr a;
	int copy, primary_cc = s->evsel_cc[RSP_EV_sched_switch];
	const struct rsp_segment *x[8];
	const uint32_t D = 300;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	copy = rsp_schema__add_evsel(s->schema, &a, RSP_EV_sched_switch, RSP_ROLE_STACK_COPY,
				     "synth copy");
	assert_true(copy >= 0);
	assert_int_equal(rsp_schema__add_id(s->schema, copy, SYNTH_ID_BASE + (uint64_t)copy), 0);
	/* A: the copy 100 us before its switch */
	s->evsel_cc[RSP_EV_sched_switch] = copy;
	synth__switch(s, .cpu = 0, .t = 1000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	s->evsel_cc[RSP_EV_sched_switch] = primary_cc;
	synth__switch(s, .cpu = 0, .t = 101000, .prev = A, .prev_comm = "app", .state = 1,
		      .next = 0);
	/* B on CPU 1: its switch first, the copy right after */
	synth__switch(s, .cpu = 1, .t = 102000, .prev = B, .prev_comm = "app", .state = 1,
		      .next = 0);
	s->evsel_cc[RSP_EV_sched_switch] = copy;
	synth__switch(s, .cpu = 1, .t = 102100, .prev = B, .prev_comm = "app", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	/* C: a copy, then another record of CPU 0, then C's switch: not paired */
	synth__switch(s, .cpu = 0, .t = 103000, .prev = C, .prev_comm = "app", .state = 1,
		      .next = 0, .chain = futex_stack, .nr = 5);
	s->evsel_cc[RSP_EV_sched_switch] = primary_cc;
	synth__cpu_sample(s, .cpu = 0, .t = 103050, .tid = 0, .ip = 0x1000);
	synth__switch(s, .cpu = 0, .t = 103100, .prev = C, .prev_comm = "app", .state = 1,
		      .next = 0);
	synth__waking(s, .cpu = 1, .t = 200000, .tid = D, .target = A, .target_comm = "app");
	synth__waking(s, .cpu = 1, .t = 200100, .tid = D, .target = B, .target_comm = "app");
	synth__waking(s, .cpu = 1, .t = 200200, .tid = D, .target = C, .target_comm = "app");
	run(f, 0, 300000, RSP_TL_RECORDS_STABLE);
	assert_int_equal(segs_of(f, A, x, 8), 3);
	check_seg(x[1], RSP_SEG_SLEEP, 101000, 200000);
	assert_non_null(x[1]->stack);
	assert_int_equal(x[1]->reason, RSP_SR_LOCK);
	assert_int_equal(segs_of(f, B, x, 8), 3);
	check_seg(x[1], RSP_SEG_SLEEP, 102000, 200100);
	assert_non_null(x[1]->stack);
	assert_int_equal(segs_of(f, C, x, 8), 3);
	check_seg(x[1], RSP_SEG_SLEEP, 103100, 200200);
	assert_null(x[1]->stack);
	assert_int_equal(f->st.stack_copies, 3);
	assert_int_equal(f->st.events[RSP_EV_sched_switch], 3);
	assert_int_equal(f->st.events[RSP_EV_cpu_clock], 1);
	s->evsel_cc[RSP_EV_sched_switch] = primary_cc;
}

/* The store: per-thread segments, lookups by time, the waker's run. */
static void test_store(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	struct rsp_tlstore *st = rsp_tlstore__new(0);
	struct rsp_timeline_ops ops;
	struct rsp_timeline *tl;
	const struct rsp_tlthread *t;
	const struct rsp_segment *sg, *run;
	const struct rsp_block_req *reqs;
	size_t n;

	synth__switch(s, .cpu = 1, .t = 1000, .prev = 0, .next = B, .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 2000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = futex_stack, .nr = 5);
	synth__waking(s, .cpu = 1, .t = 5000, .tgid = A, .tid = B, .target = A,
		      .target_comm = "app");
	synth__switch(s, .cpu = 1, .t = 5200, .prev_tgid = A, .prev = B, .prev_comm = "helper",
		      .state = 1, .next = 0, .chain = futex_stack, .nr = 5);
	synth__switch(s, .cpu = 0, .t = 5500, .prev = 0, .next = A, .next_comm = "app");
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 6000, .tid = A, .dev = DEV,
		     .sector = 8, .bytes = 4096, .rwbs = "W");
	rsp_tlstore__ops(&ops);
	tl = rsp_timeline__new(s->schema, &ops, st);
	rsp_timeline__set_flags(tl, RSP_TL_RECORDS_STABLE);
	rsp_timeline__set_ksyms(tl, f->ks);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);

		rsp_timeline__feed(tl, &e);
	}
	rsp_timeline__finish(tl, 10000);
	assert_int_equal(rsp_tlstore__seal(st, 0, 10000), 0);

	t = rsp_tlstore__find_thread(st, A);
	assert_non_null(t);
	assert_string_equal(t->comm, "app");
	assert_int_equal(t->tgid, A);
	/* its CPU shows it from 5500 to its insert at 6000; to the end only inferred */
	assert_int_equal(t->run_ns, 2000 + 500);
	assert_int_equal(t->run_inferred_ns, 4000);
	assert_int_equal(t->sleep_ns, 3000);
	assert_int_equal(t->runnable_ns, 500);
	assert_int_equal(t->first, 0);
	assert_int_equal(t->last, 10000);
	sg = rsp_tlstore__segment_at(st, A, 3000);
	assert_non_null(sg);
	assert_int_equal(sg->kind, RSP_SEG_SLEEP);
	/* at a boundary, the later segment */
	assert_int_equal(rsp_tlstore__segment_at(st, A, 5000)->kind, RSP_SEG_RUNNABLE);
	assert_null(rsp_tlstore__segment_at(st, 999, 3000));
	run = rsp_tlstore__waker_run(st, sg);
	assert_non_null(run);
	assert_int_equal(run->tid, B);
	check_seg(run, RSP_SEG_RUN, 1000, 5200);
	assert_int_equal(rsp_tlstore__next_run(st, A, 3000)->start, 5500);
	assert_int_equal(rsp_tlstore__find_thread(st, B)->tgid, A);
	reqs = rsp_tlstore__block_reqs(st, &n);
	assert_int_equal(n, 1);
	assert_true(reqs[0].flags & RSP_BLKF_COMPLETE_NOT_SEEN);
	assert_ptr_equal(rsp_tlstore__block_req(st, reqs[0].id), &reqs[0]);
	rsp_tlstore__links(st, &n);
	assert_int_equal(n, 1);
	rsp_timeline__delete(tl);
	rsp_tlstore__delete(st);
	synth__reset(s);
}

/* rsp/mapped.h's hook: what it was told, and whether it refuses growth. */
static int64_t mapped_now, mapped_peak;
static bool mapped_refuse;

static bool mapped_hook(int64_t delta)
{
	if (delta > 0 && mapped_refuse)
		return false;
	mapped_now += delta;
	if (mapped_now > mapped_peak)
		mapped_peak = mapped_now;
	return true;
}

/* A store of one busy thread: @n sleeps (3000: more segments than the heap keeps, 64 KiB). */
static int busy_store(struct fix *f, struct rsp_tlstore **out, uint64_t n)
{
	struct synth *s = &f->s;
	struct rsp_tlstore *st = rsp_tlstore__new(0);
	struct rsp_timeline_ops ops;
	struct rsp_timeline *tl;
	int ret;

	for (uint64_t i = 0; i < n; i++) {
		synth__switch(s, .cpu = 0, .t = 1000 + i * 100, .prev = A, .prev_comm = "app",
			      .state = 1, .next = 0);
		synth__switch(s, .cpu = 0, .t = 1050 + i * 100, .prev = 0, .next = A,
			      .next_comm = "app");
	}
	rsp_tlstore__ops(&ops);
	tl = rsp_timeline__new(s->schema, &ops, st);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);

		rsp_timeline__feed(tl, &e);
	}
	rsp_timeline__finish(tl, 1000 + n * 100);
	ret = rsp_tlstore__seal(st, 0, 1000 + n * 100);
	rsp_timeline__delete(tl);
	synth__reset(s);
	*out = st;
	return ret;
}

/*
 * The store maps a busy thread's segments (past 64 KiB) instead of keeping
 * them on the heap: rsp/mapped.h's hook is told of every growth and of the
 * release, so that rspd counts them in a query's memory; a hook that
 * refuses fails the load as an allocation failure would.
 */
static void test_store_mapped(void **state)
{
	struct fix *f = *state;
	struct rsp_tlstore *st;

	rsp_mapped__set_hook(mapped_hook);
	mapped_now = mapped_peak = 0;
	mapped_refuse = false;
	assert_int_equal(busy_store(f, &st, 3000), 0);
	assert_int_equal(rsp_tlstore__find_thread(st, A)->nr_segs >= 6000, true);
	assert_true(mapped_now >= 6000 * (int64_t)sizeof(struct rsp_segment));
	assert_int_equal(mapped_now, mapped_peak); /* grown, never shrunk while loading */
	rsp_tlstore__delete(st);
	assert_int_equal(mapped_now, 0);
	mapped_refuse = true;
	assert_int_equal(busy_store(f, &st, 3000), -ENOMEM);
	rsp_tlstore__delete(st);
	assert_int_equal(mapped_now, 0);
	rsp_mapped__set_hook(NULL);
}

/* The VmFlags of the mapping holding @p (/proc/self/smaps), "" if not found. */
static void vm_flags(const void *p, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, size, "%s", line + 8);
			break;
		}
	}
	fclose(f);
}

/*
 * Past 2 MiB a busy thread's segments ask for transparent huge pages
 * ("hg" in the mapping's VmFlags) and are charged 2 MiB at a time, what a
 * fault may then bring in; released in full.
 */
static void test_store_huge(void **state)
{
	struct fix *f = *state;
	const struct rsp_segment *seg;
	struct rsp_tlstore *st;
	char flags[512];

	rsp_mapped__set_hook(mapped_hook);
	mapped_now = mapped_peak = 0;
	mapped_refuse = false;
	assert_int_equal(busy_store(f, &st, 20000), 0);
	assert_true(rsp_tlstore__find_thread(st, A)->nr_segs >= 40000);
	assert_true(mapped_now >= 40000 * (int64_t)sizeof(struct rsp_segment));
	assert_int_equal(mapped_now % (2 << 20), 0);
	seg = rsp_tlstore__segment_at(st, A, 1000 + 19000 * 100);
	assert_non_null(seg);
	vm_flags(seg, flags, sizeof(flags));
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0) /* else no such advice */
		assert_non_null(strstr(flags, " hg"));
	rsp_tlstore__delete(st);
	assert_int_equal(mapped_now, 0);
	rsp_mapped__set_hook(NULL);
}

/*
 * A thread's block requests come sorted by insert, whatever order they
 * were issued in (the store keeps them by issue): a request queued long
 * and issued after later inserts must not stay where its issue put it.
 */
static void test_store_reqs_of(void **state)
{
	struct rsp_tlstore *st = rsp_tlstore__new(0);
	static const uint64_t ins[] = {500, 100, 300, 200, 400}, iss[] = {510, 900, 310, 700, 410};
	const struct rsp_block_req *const *rq;
	struct rsp_timeline_ops ops;
	struct rsp_block_req r;
	size_t n;

	(void)state;
	assert_non_null(st);
	rsp_tlstore__ops(&ops);
	for (unsigned i = 0; i < 5; i++) {
		memset(&r, 0, sizeof(r));
		r.id = i + 1, r.dev = DEV, r.tid = r.tgid = A, r.sector = 8 * i;
		r.insert = ins[i], r.issue = iss[i], r.complete = iss[i] + 50;
		ops.block(st, &r);
	}
	r.tid = r.tgid = B, r.id = 6, r.insert = 50, r.issue = 60, r.complete = 70;
	ops.block(st, &r);
	assert_int_equal(rsp_tlstore__seal(st, 0, 10000), 0);
	rq = rsp_tlstore__reqs_of(st, A, &n);
	assert_int_equal(n, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(rq[i]->insert, 100 * (i + 1));
	rq = rsp_tlstore__reqs_of(st, B, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rq[0]->id, 6);
	rsp_tlstore__delete(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wakeup_by_thread),
		cmocka_unit_test(test_store_mapped),
		cmocka_unit_test(test_store_huge),
		cmocka_unit_test(test_handler_wakers),
		cmocka_unit_test(test_block_requests),
		cmocka_unit_test(test_block_request_comm),
		cmocka_unit_test(test_quirk_inference),
		cmocka_unit_test(test_submit_after_wait),
		cmocka_unit_test(test_io_sleep_whoever_next),
		cmocka_unit_test(test_relayed_completion),
		cmocka_unit_test(test_relay_running_and_stale),
		cmocka_unit_test(test_completion_handler_wakes),
		cmocka_unit_test(test_timeout_inference),
		cmocka_unit_test(test_late_waking),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_fork_exec_exit),
		cmocka_unit_test(test_stack_copy_mode),
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_store_reqs_of),
		cmocka_unit_test(test_switch_from_idle_not_seen),
		cmocka_unit_test(test_switch_out_not_seen),
		cmocka_unit_test(test_inversion_not_inferred),
		cmocka_unit_test(test_forever),
		cmocka_unit_test(test_copy_outlives_record),
		cmocka_unit_test(test_copy_pairing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
