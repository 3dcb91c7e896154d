// SPDX-License-Identifier: GPL-2.0
/*
 * Compact BPF records (tracepoints/bpf_records.h) through the one
 * interpreter: the same scheduling story told twice, once as the kernel's
 * tracepoint samples (with comms in every record and callchains inline)
 * and once as rsp's compact records (names once as COMM records, stacks
 * once as STACK records, referenced by hash), must give the timeline the
 * same segments, stacks, links and names. The compact records are told
 * both as rspd's window holds them (the BPF rings' records, as written) and
 * as a dump holds them (raw data of bpf-output samples). Also: each compact
 * record decodes as its event with the tracepoint's fields (golden values),
 * malformed ones are refused, and a stack never sent is counted, not
 * invented; a stack check (SWITCH_CHECK) whose cached kernel stack gives
 * another sleep reason than the walked one marks the sleep REASON_DIFFERS,
 * one that differs only in frames STACK_DIFFERS alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/pass.h>
#include <rsp/record.h>
#include <rsp/timeline.h>
#include <rsp/tp.h>
#include <rsp/window.h>
#include "internal/schema.h"
#include "kallsyms_fake.h"
#include "support/synth.h"
#include "tracepoints/bpf_records.h"

#define A 100 /* sleeps in a read, woken by B */
#define B 200
#define C 300 /* A's child: forked, woken new, exec, exits */
#define D 400 /* busy elsewhere, before the range (test_learn_before_pass) */

static const uint64_t kstack[] = {0xffffffff81001000ull, 0xffffffff81002000ull,
				  0xffffffff81003000ull};
static const uint64_t ustack[] = {0x401000, 0x402000};
static const uint64_t wkstack[] = {0xffffffff81004000ull, 0xffffffff81005000ull};
static uint64_t chain_a[8], chain_b[8];
static uint32_t nr_a, nr_b;

/* ---- the compact stream ----------------------------------------------- */

static int bpf_evsel(struct synth *s)
{
	struct perf_event_attr a = {.size = sizeof(a), .sample_id_all = 1};
	int idx;

	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_RAW;
	idx = rsp_schema__add_evsel(s->schema, &a, -1, RSP_ROLE_BPF, "bpf-output");
	assert_true(idx >= 0);
	assert_int_equal(rsp_schema__add_id(s->schema, idx, SYNTH_ID_BASE + (uint64_t)idx), 0);
	return idx;
}

/* Records as the window holds them (true), or as bpf-output samples (a dump). */
static bool as_window;

/*
 * @rec on @cpu at @t in @tid's context (its header's time, CPU and task
 * set here): as it is, or as a bpf-output sample carrying it.
 */
static void put(struct synth *s, int evsel, uint32_t cpu, uint64_t t, uint32_t tid, void *rec,
		uint32_t len)
{
	struct rsp_brec_hdr *b = rec;
	uint32_t padded = len;
	size_t size;
	uint64_t *w;
	struct perf_event_header *h;

	b->cpu = (uint16_t)cpu;
	b->time = t;
	b->pid = b->tid = tid;
	if (as_window) {
		h = synth__reserve(s, len, cpu);
		memcpy(h, rec, len);
		synth__commit(s);
		return;
	}
	while ((4 + padded) % 8)
		padded++;
	size = sizeof(*h) + 5 * 8 + 4 + padded;
	h = synth__reserve(s, size, cpu);
	h->type = PERF_RECORD_SAMPLE;
	h->size = (uint16_t)size;
	w = (uint64_t *)h;
	w[1] = SYNTH_ID_BASE + (uint64_t)evsel;
	w[2] = 0;
	w[3] = (uint64_t)tid | (uint64_t)tid << 32;
	w[4] = t;
	w[5] = cpu;
	memcpy(w + 6, &padded, 4);
	memcpy((char *)(w + 6) + 4, rec, len);
	synth__commit(s);
}

static void hdr(struct rsp_brec_hdr *h, uint8_t kind, size_t size)
{
	memset(h, 0, sizeof(*h));
	h->type = RSP_BREC_TYPE(kind);
	h->size = (uint16_t)size;
}

static void comm(struct synth *s, int ev, uint32_t cpu, uint64_t t, uint32_t tid, const char *name)
{
	struct rsp_brec_comm r = {.tid = tid, .pid = tid};

	hdr(&r.h, RSP_BREC_COMM, sizeof(r));
	snprintf(r.comm, sizeof(r.comm), "%s", name);
	put(s, ev, cpu, t, tid, &r, sizeof(r));
}

static void stack(struct synth *s, int ev, uint32_t cpu, uint64_t t, uint32_t tid, uint64_t hash,
		  uint8_t which, const uint64_t *ips, uint16_t nr)
{
	struct {
		struct rsp_brec_stack r;
		uint64_t ips[8];
	} b = {.r = {.hash = hash, .nr = nr, .which = which}};

	hdr(&b.r.h, RSP_BREC_STACK, sizeof(b.r) + nr * 8u);
	memcpy(b.ips, ips, nr * 8u);
	put(s, ev, cpu, t, tid, &b, (uint32_t)(sizeof(b.r) + nr * 8u));
}

static void bswitch(struct synth *s, int ev, uint32_t cpu, uint64_t t, uint32_t prev,
		    uint32_t state, uint32_t next, uint64_t kh, uint64_t uh)
{
	struct rsp_brec_switch_stack r = {.sw = {.next_tid = next,
						 .next_pid = next,
						 .prev_state = state,
						 .prev_prio = 120,
						 .next_prio = 120},
					  .kstack = kh,
					  .ustack = uh};
	bool stacks = kh || uh;

	hdr(&r.sw.h, stacks ? RSP_BREC_SWITCH_STACK : RSP_BREC_SWITCH,
	    stacks ? sizeof(r) : sizeof(r.sw));
	put(s, ev, cpu, t, prev, &r, stacks ? sizeof(r) : sizeof(r.sw));
}

static void bwaking(struct synth *s, int ev, uint8_t kind, uint32_t cpu, uint64_t t, uint32_t waker,
		    uint32_t target, uint64_t kh)
{
	struct rsp_brec_waking_stack r = {
		.wk = {.tid = target, .pid = target, .target_cpu = cpu, .prio = 120}, .kstack = kh};

	hdr(&r.wk.h, kh ? RSP_BREC_WAKING_STACK : kind, kh ? sizeof(r) : sizeof(r.wk));
	put(s, ev, cpu, t, waker, &r, kh ? sizeof(r) : sizeof(r.wk));
}

/* ---- the story, both ways ---------------------------------------------- */

static void story_tp(struct synth *s)
{
	synth__switch(s, .cpu = 0, .t = 1000, .prev = 0, .next = A, .next_comm = "app");
	synth__switch(s, .cpu = 1, .t = 1100, .prev = 0, .next = B, .next_comm = "helper");
	synth__switch(s, .cpu = 0, .t = 2000, .prev = A, .prev_comm = "app", .state = 1, .next = 0,
		      .chain = chain_a, .nr = nr_a);
	synth__waking(s, .cpu = 1, .t = 5000, .tid = B, .target = A, .target_comm = "app",
		      .chain = chain_b, .nr = nr_b);
	synth__switch(s, .cpu = 0, .t = 5200, .prev = 0, .next = A, .next_comm = "app");
	synth__process_fork(s, .cpu = 0, .t = 6000, .parent = A, .child = C, .comm = "app");
	/* the child's pid: perf's side-band COMM, as the compact COMM record says it */
	synth__comm(s, .cpu = 0, .t = 6099, .pid = C, .comm = "app");
	synth__wakeup_new(s, .cpu = 0, .t = 6100, .tid = A, .child = C, .comm = "app");
	synth__switch(s, .cpu = 0, .t = 7000, .prev = A, .prev_comm = "app", .state = 0, .next = C,
		      .next_comm = "app");
	synth__switch(s, .cpu = 1, .t = 8000, .prev = B, .prev_comm = "helper", .state = 1,
		      .next = 0);
}

static void story_bpf(struct synth *s, int ev, bool send_user_stack)
{
	comm(s, ev, 0, 999, A, "app");
	bswitch(s, ev, 0, 1000, 0, 0, A, 0, 0);
	comm(s, ev, 1, 1099, B, "helper");
	bswitch(s, ev, 1, 1100, 0, 0, B, 0, 0);
	stack(s, ev, 0, 1999, A, 0x1111, RSP_BSTACK_KERNEL, kstack, 3);
	if (send_user_stack)
		stack(s, ev, 0, 1999, A, 0x2222, RSP_BSTACK_USER, ustack, 2);
	bswitch(s, ev, 0, 2000, A, 1, 0, 0x1111, 0x2222);
	stack(s, ev, 1, 4999, B, 0x3333, RSP_BSTACK_KERNEL, wkstack, 2);
	bwaking(s, ev, RSP_BREC_WAKING, 1, 5000, B, A, 0x3333);
	bswitch(s, ev, 0, 5200, 0, 0, A, 0, 0);
	{
		struct rsp_brec_fork f = {.child_tid = C, .child_pid = C};

		hdr(&f.h, RSP_BREC_FORK, sizeof(f));
		put(s, ev, 0, 6000, A, &f, sizeof(f));
	}
	comm(s, ev, 0, 6099, C, "app");
	bwaking(s, ev, RSP_BREC_WAKEUP_NEW, 0, 6100, A, C, 0);
	bswitch(s, ev, 0, 7000, A, 0, C, 0, 0);
	bswitch(s, ev, 1, 8000, B, 1, 0, 0, 0);
}

/* ---- what the timeline made of it ------------------------------------------ */

struct seen {
	struct rsp_segment segs[64];
	uint64_t stacks[64][8], wstacks[64][8]; /* the sleep's, its waker's */
	char comms[64][16];
	size_t nsegs;
	struct rsp_link links[32];
	size_t nlinks;
};

static void on_seg(void *ctx, const struct rsp_segment *seg, const char *c)
{
	struct seen *r = ctx;

	assert_true(r->nsegs < 64);
	r->segs[r->nsegs] = *seg;
	memset(r->stacks[r->nsegs], 0, sizeof(r->stacks[0]));
	if (seg->stack) {
		assert_true(seg->nr_stack <= 8);
		memcpy(r->stacks[r->nsegs], seg->stack, seg->nr_stack * 8);
	}
	memset(r->wstacks[r->nsegs], 0, sizeof(r->wstacks[0]));
	if (seg->waker.stack) {
		assert_true(seg->waker.nr_stack <= 8);
		memcpy(r->wstacks[r->nsegs], seg->waker.stack, seg->waker.nr_stack * 8);
	}
	snprintf(r->comms[r->nsegs], 16, "%s", c ? c : "");
	r->segs[r->nsegs].stack = NULL;
	r->segs[r->nsegs].waker.stack = NULL;
	r->segs[r->nsegs].urec = NULL;
	r->nsegs++;
}

static void on_link(void *ctx, const struct rsp_link *l)
{
	struct seen *r = ctx;

	assert_true(r->nlinks < 32);
	r->links[r->nlinks] = *l;
	r->links[r->nlinks++].from.stack = NULL; /* its contents are the segments' */
}

static void run(struct synth *s, struct seen *r, struct rsp_timeline_stats *st)
{
	struct rsp_timeline_ops ops = {.segment = on_seg, .link = on_link};
	struct rsp_timeline *tl = rsp_timeline__new(s->schema, &ops, r);

	assert_non_null(tl);
	memset(r, 0, sizeof(*r));
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, 10000);
	rsp_timeline__stats(tl, st);
	rsp_timeline__delete(tl);
}

static void same_story(void)
{
	struct synth tp, bp;
	struct seen *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct rsp_timeline_stats sa, sb;
	int ev;

	assert_non_null(a);
	nr_a = 0;
	chain_a[nr_a++] = PERF_CONTEXT_KERNEL;
	memcpy(chain_a + nr_a, kstack, sizeof(kstack));
	nr_a += 3;
	chain_a[nr_a++] = PERF_CONTEXT_USER;
	memcpy(chain_a + nr_a, ustack, sizeof(ustack));
	nr_a += 2;
	nr_b = 0;
	chain_b[nr_b++] = PERF_CONTEXT_KERNEL;
	memcpy(chain_b + nr_b, wkstack, sizeof(wkstack));
	nr_b += 2;
	synth__init(&tp);
	synth__init(&bp);
	ev = bpf_evsel(&bp);
	story_tp(&tp);
	story_bpf(&bp, ev, true);
	run(&tp, a, &sa);
	run(&bp, b, &sb);
	assert_true(a->nsegs >= 6);
	assert_int_equal(a->nsegs, b->nsegs);
	for (size_t i = 0; i < a->nsegs; i++) {
		if (memcmp(&a->segs[i], &b->segs[i], sizeof(a->segs[i])))
			fail_msg("segment %zu: tgid %u/%u flags 0x%x/0x%x reason %u/%u cpu %u/%u "
				 "waker %u:%u/%u:%u (tracepoints/compact)",
				 i, a->segs[i].tgid, b->segs[i].tgid, a->segs[i].flags,
				 b->segs[i].flags, a->segs[i].reason, b->segs[i].reason,
				 a->segs[i].cpu, b->segs[i].cpu, a->segs[i].waker.kind,
				 a->segs[i].waker.tgid, b->segs[i].waker.kind,
				 b->segs[i].waker.tgid);
		assert_memory_equal(a->stacks[i], b->stacks[i], sizeof(a->stacks[i]));
		assert_memory_equal(a->wstacks[i], b->wstacks[i], sizeof(a->wstacks[i]));
		assert_string_equal(a->comms[i], b->comms[i]);
	}
	assert_int_equal(a->nlinks, b->nlinks);
	assert_memory_equal(a->links, b->links, a->nlinks * sizeof(a->links[0]));
	/* A's sleep carries the whole callchain, kernel then user */
	for (size_t i = 0; i < b->nsegs; i++)
		if (b->segs[i].tid == A && b->segs[i].kind == RSP_SEG_SLEEP) {
			assert_memory_equal(b->stacks[i], chain_a, nr_a * 8);
			assert_memory_equal(b->wstacks[i], chain_b, nr_b * 8); /* B's waking */
		}
	assert_int_equal(sb.events[RSP_EV_sched_switch], sa.events[RSP_EV_sched_switch]);
	assert_int_equal(sb.events[RSP_EV_sched_waking], 1);
	assert_int_equal(sb.bpf_comms, 3); /* A, B, C */
	assert_int_equal(sb.bpf_stacks, 3);
	assert_int_equal(sb.bpf_stacks_missing, 0);
	synth__exit(&tp);
	synth__exit(&bp);
	free(a);
}

/* ---- folded records (layout 3) ------------------------------------------------ */

#define DEV (8u << 20 | 16u)

/*
 * A request and the interrupts around it, as the kernel's tracepoints tell
 * it: A writes (insert, issue) and sleeps in D; on CPU 1 a softirq, and in
 * it an irq, completes the request and wakes A; A runs, an hrtimer expires
 * on CPU 1, A sleeps again and B, on CPU 1, wakes it and issues a request
 * of its own; A has not run again and B's request is in flight when the
 * window ends.
 */
static void device_story_tp(struct synth *s)
{
	synth__switch(s, .cpu = 0, .t = 1000, .prev = 0, .next = A, .next_comm = "app");
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 0, .t = 1500, .tgid = A, .tid = A,
		     .dev = DEV, .sector = 64, .bytes = 4096, .rwbs = "WS");
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 0, .t = 1600, .tgid = A, .tid = A,
		     .dev = DEV, .sector = 64, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 0, .t = 2000, .prev = A, .prev_comm = "app", .state = 2, .next = 0);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 2900, .vec = 4);
	synth__irq(s, true, 1, 3000, 11, "virtio0");
	synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = 1, .t = 3100, .dev = DEV,
		     .sector = 64, .bytes = 4096, .rwbs = "WS");
	synth__waking(s, .cpu = 1, .t = 3200, .tid = 0, .target = A, .target_comm = "app");
	synth__irq(s, false, 1, 3300, 11, NULL);
	synth__softirq(s, .entry = false, .cpu = 1, .t = 3400, .vec = 4);
	synth__switch(s, .cpu = 0, .t = 3500, .prev = 0, .next = A, .next_comm = "app");
	synth__hrtimer(s, true, 1, 4000);
	synth__hrtimer(s, false, 1, 4050);
	synth__switch(s, .cpu = 0, .t = 5000, .prev = A, .prev_comm = "app", .state = 1, .next = 0);
	synth__switch(s, .cpu = 1, .t = 5900, .prev = 0, .next = B, .next_comm = "helper");
	synth__waking(s, .cpu = 1, .t = 6000, .tid = B, .target = A, .target_comm = "app");
	synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = 1, .t = 6100, .tgid = B, .tid = B,
		     .dev = DEV, .sector = 64, .bytes = 4096, .rwbs = "WS");
	synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = 1, .t = 6200, .tgid = B, .tid = B,
		     .dev = DEV, .sector = 64, .bytes = 4096, .rwbs = "WS");
	synth__switch(s, .cpu = 1, .t = 6500, .prev = B, .prev_comm = "helper", .state = 1,
		      .next = 0);
}

static void block_part(struct rsp_brec_block_part *p, uint8_t kind, uint64_t t, uint32_t tid,
		       uint16_t cpu)
{
	memset(p, 0, sizeof(*p));
	p->time = t;
	p->pid = p->tid = tid;
	p->cpu = cpu;
	p->kind = kind;
	p->sector = 64;
	p->nr_sector = 8;
	p->bytes = 4096;
	memcpy(p->rwbs, "WS", 2);
}

static void wake_part(struct rsp_brec_wake_part *w, uint64_t t, uint16_t cpu, uint32_t waker)
{
	memset(w, 0, sizeof(*w));
	w->time = t;
	w->pid = w->tid = waker;
	w->cpu = cpu;
	w->target_cpu = 1; /* the tracepoint stories' */
	w->prio = 120;
	w->kind = RSP_BREC_WAKING;
}

/* The same story in layout 3: what waits for a later record rides on it. */
static void device_story_folded(struct synth *s, int ev)
{
	struct {
		struct rsp_brec_switch sw;
		struct rsp_brec_wake_part w;
	} sw = {.sw = {.next_tid = A,
		       .next_pid = A,
		       .prev_prio = 120,
		       .next_prio = 120,
		       .fold = RSP_BFOLD_WAKING}};
	struct {
		struct rsp_brec_block r;
		struct rsp_brec_block_part p[2];
	} c = {.r = {.sector = 64,
		     .dev = DEV,
		     .nr_sector = 8,
		     .bytes = 4096,
		     .fold = RSP_BFOLD_BLOCK_INSERT | RSP_BFOLD_BLOCK_ISSUE}};
	struct rsp_brec_irq irq = {.irq = 11, .ret = 1, .start = 3000, .name = "virtio0"};
	struct rsp_brec_softirq_span si = {.vec = 4, .start = 2900};
	struct rsp_brec_hrtimer_span ht = {
		.hrtimer = 0xffff888000001000ull, .function = 0xffffffff81100000ull, .start = 4000};
	struct {
		struct rsp_brec_carry c;
		struct rsp_brec_wake_part w;
	} carry = {.c = {.woken = {A, A}, .what = RSP_BREC_WAKING}};
	struct {
		struct rsp_brec_carry c;
		struct rsp_brec_block_part p;
	} rq[2] = {{.c = {.woken = {DEV}, .what = RSP_BREC_BLOCK_INSERT}},
		   {.c = {.woken = {DEV}, .what = RSP_BREC_BLOCK_ISSUE}}};

	comm(s, ev, 0, 999, A, "app");
	bswitch(s, ev, 0, 1000, 0, 0, A, 0, 0);
	bswitch(s, ev, 0, 2000, A, 2, 0, 0, 0);
	hdr(&c.r.h, RSP_BREC_BLOCK_COMPLETE, sizeof(c));
	block_part(&c.p[0], RSP_BREC_BLOCK_INSERT, 1500, A, 0);
	block_part(&c.p[1], RSP_BREC_BLOCK_ISSUE, 1600, A, 0);
	put(s, ev, 1, 3100, 0, &c, sizeof(c));
	hdr(&irq.h, RSP_BREC_IRQ, sizeof(irq));
	put(s, ev, 1, 3300, 0, &irq, sizeof(irq));
	hdr(&si.h, RSP_BREC_SOFTIRQ, sizeof(si));
	put(s, ev, 1, 3400, 0, &si, sizeof(si));
	/* the waking in the irq on CPU 1 rides on A's switch-in on CPU 0 */
	hdr(&sw.sw.h, RSP_BREC_SWITCH, sizeof(sw));
	wake_part(&sw.w, 3200, 1, 0);
	put(s, ev, 0, 3500, 0, &sw, sizeof(sw));
	hdr(&ht.h, RSP_BREC_HRTIMER, sizeof(ht));
	put(s, ev, 1, 4050, 0, &ht, sizeof(ht));
	bswitch(s, ev, 0, 5000, A, 1, 0, 0, 0);
	comm(s, ev, 1, 5899, B, "helper");
	bswitch(s, ev, 1, 5900, 0, 0, B, 0, 0);
	bswitch(s, ev, 1, 6500, B, 1, 0, 0, 0);
	/* pending at the window's end: read from the wakee's slot and the request map */
	hdr(&carry.c.h, RSP_BREC_CARRY, sizeof(carry));
	wake_part(&carry.w, 6000, 1, B);
	put(s, ev, 1, 9000, B, &carry, sizeof(carry));
	for (int i = 0; i < 2; i++) {
		hdr(&rq[i].c.h, RSP_BREC_CARRY, sizeof(rq[i]));
		block_part(&rq[i].p, i ? RSP_BREC_BLOCK_ISSUE : RSP_BREC_BLOCK_INSERT,
			   6100 + 100 * i, B, 1);
		put(s, ev, 1, 9000, 0, &rq[i], sizeof(rq[i]));
	}
}

struct spans {
	struct rsp_handler_span h[8];
	size_t n;
	struct rsp_block_req b[4];
	size_t nb;
	struct seen seen;
};

static void on_span(void *ctx, const struct rsp_handler_span *sp)
{
	struct spans *r = ctx;

	assert_true(r->n < 8);
	r->h[r->n] = *sp;
	r->h[r->n++].name = NULL; /* compared by name below */
	assert_true(!sp->name ||
		    !strcmp(sp->name, sp->kind == RSP_HANDLER_IRQ ? "virtio0" : sp->name));
}

static void on_block(void *ctx, const struct rsp_block_req *b)
{
	struct spans *r = ctx;

	assert_true(r->nb < 4);
	r->b[r->nb++] = *b;
}

static void on_seg2(void *ctx, const struct rsp_segment *seg, const char *c)
{
	on_seg(&((struct spans *)ctx)->seen, seg, c);
}

static void on_link2(void *ctx, const struct rsp_link *l)
{
	on_link(&((struct spans *)ctx)->seen, l);
}

static void run_spans(struct synth *s, struct spans *r, struct rsp_timeline_stats *st,
		      bool no_delay)
{
	struct rsp_timeline_ops ops = {
		.segment = on_seg2, .link = on_link2, .handler = on_span, .block = on_block};
	struct rsp_timeline *tl = rsp_timeline__new(s->schema, &ops, r);

	assert_non_null(tl);
	memset(r, 0, sizeof(*r));
	rsp_timeline__set_flags(tl, no_delay ? 0 : RSP_TL_RECORDS_STABLE);
	if (no_delay)
		rsp_timeline__set_unfold_delay(tl, 0);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_wentry e = synth__entry(s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, 10000);
	rsp_timeline__stats(tl, st);
	rsp_timeline__delete(tl);
}

static int by_tid_start(const void *x, const void *y)
{
	const struct rsp_segment *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/*
 * The folded records give the timeline what the tracepoints give it: a
 * waking on another CPU before the switch-in that carries it (its waker
 * the disk: the irq it ran in, read in order), a request's insert and
 * issue before its completion, each handler's span from its entry, and a
 * waking still pending at the window's end (a CARRY record after it).
 */
static void test_folded_story(void **state)
{
	struct synth tp, bp;
	struct spans *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct rsp_timeline_stats sa, sb;
	int ev;

	(void)state;
	assert_non_null(a);
	as_window = true;
	synth__init(&tp);
	synth__init(&bp);
	ev = bpf_evsel(&bp);
	device_story_tp(&tp);
	device_story_folded(&bp, ev);
	run_spans(&tp, a, &sa, false);
	run_spans(&bp, b, &sb, false);
	assert_true(a->seen.nsegs >= 7);
	assert_int_equal(a->seen.nsegs, b->seen.nsegs);
	for (size_t i = 0; i < a->seen.nsegs; i++) {
		if (memcmp(&a->seen.segs[i], &b->seen.segs[i], sizeof(a->seen.segs[i])))
			fail_msg("segment %zu: tid %u/%u kind %u/%u %llu..%llu / %llu..%llu waker "
				 "%u:%u/%u:%u (tracepoints/folded)",
				 i, a->seen.segs[i].tid, b->seen.segs[i].tid, a->seen.segs[i].kind,
				 b->seen.segs[i].kind, (unsigned long long)a->seen.segs[i].start,
				 (unsigned long long)a->seen.segs[i].end,
				 (unsigned long long)b->seen.segs[i].start,
				 (unsigned long long)b->seen.segs[i].end,
				 a->seen.segs[i].waker.kind, a->seen.segs[i].waker.id,
				 b->seen.segs[i].waker.kind, b->seen.segs[i].waker.id);
	}
	assert_int_equal(a->seen.nlinks, b->seen.nlinks);
	assert_memory_equal(a->seen.links, b->seen.links,
			    a->seen.nlinks * sizeof(a->seen.links[0]));
	/* A's first sleep was ended by the disk, its second by B (pending at the end) */
	for (size_t i = 0, n = 0; i < b->seen.nsegs; i++) {
		const struct rsp_segment *g = &b->seen.segs[i];

		if (g->tid != A || g->kind != RSP_SEG_SLEEP)
			continue;
		assert_int_equal(g->waker.kind, n++ ? RSP_WAKER_THREAD : RSP_WAKER_DEVICE);
	}
	assert_int_equal(a->n, 3);
	assert_int_equal(b->n, a->n);
	assert_memory_equal(a->h, b->h, a->n * sizeof(a->h[0]));
	/* the request completed, and B's in flight at the end (never completed) */
	assert_int_equal(a->nb, 2);
	assert_int_equal(b->nb, 2);
	assert_int_equal(b->b[0].issue, 1600);
	assert_int_equal(b->b[0].complete, 3100);
	assert_int_equal(b->b[1].tid, B);
	assert_int_equal(b->b[1].issue, 6200);
	assert_true(b->b[1].flags & RSP_BLKF_COMPLETE_NOT_SEEN);
	assert_memory_equal(a->b, b->b, sizeof(a->b));
	for (int e = 0; e < RSP_EV__NR; e++)
		if (e != RSP_EV_sideband)
			assert_int_equal(sa.events[e], sb.events[e]);
	assert_int_equal(sa.records + 2 /* two COMMs; each CARRY is its part */, sb.records);
	/*
	 * With no delay (the histograms' timeline) each carried event comes
	 * just before its record: every length the histograms take is the same
	 * (who woke whom may not be: the waking in the irq is read after it).
	 */
	run_spans(&bp, b, &sb, true);
	assert_int_equal(a->seen.nsegs, b->seen.nsegs);
	/* the same segments, some emitted later: compared in one order */
	qsort(a->seen.segs, a->seen.nsegs, sizeof(a->seen.segs[0]), by_tid_start);
	qsort(b->seen.segs, b->seen.nsegs, sizeof(b->seen.segs[0]), by_tid_start);
	for (size_t i = 0; i < a->seen.nsegs; i++) {
		const struct rsp_segment *x = &a->seen.segs[i], *y = &b->seen.segs[i];

		if (x->tid != y->tid || x->kind != y->kind || x->start != y->start ||
		    x->end != y->end || x->reason != y->reason)
			fail_msg("no delay, segment %zu: tid %u/%u kind %u/%u %llu..%llu / "
				 "%llu..%llu",
				 i, x->tid, y->tid, x->kind, y->kind, (unsigned long long)x->start,
				 (unsigned long long)x->end, (unsigned long long)y->start,
				 (unsigned long long)y->end);
	}
	assert_int_equal(b->n, a->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->h[i].start, b->h[i].start);
		assert_int_equal(a->h[i].end, b->h[i].end);
	}
	assert_int_equal(b->nb, a->nb);
	for (size_t i = 0; i < a->nb; i++) {
		assert_int_equal(b->b[i].insert, a->b[i].insert);
		assert_int_equal(b->b[i].issue, a->b[i].issue);
		assert_int_equal(b->b[i].complete, a->b[i].complete);
	}
	synth__exit(&tp);
	synth__exit(&bp);
	free(a);
}

static void test_same_story_window(void **state)
{
	(void)state;
	as_window = true;
	same_story();
}

static void test_same_story_dump(void **state)
{
	(void)state;
	as_window = false;
	same_story();
}

/* A stack referenced but never sent: the sleep keeps what was sent, the rest is counted. */
static void test_missing_stack(void **state)
{
	struct synth bp;
	struct seen *r = calloc(1, sizeof(*r));
	struct rsp_timeline_stats st;
	int ev;

	(void)state;
	assert_non_null(r);
	as_window = true;
	synth__init(&bp);
	ev = bpf_evsel(&bp);
	story_bpf(&bp, ev, false);
	run(&bp, r, &st);
	assert_int_equal(st.bpf_stacks_missing, 1);
	for (size_t i = 0; i < r->nsegs; i++)
		if (r->segs[i].tid == A && r->segs[i].kind == RSP_SEG_SLEEP) {
			assert_int_equal(r->stacks[i][0], PERF_CONTEXT_KERNEL);
			assert_int_equal(r->stacks[i][4], 0); /* no user part invented */
		}
	synth__exit(&bp);
	free(r);
}

/*
 * A check: the cache had a kernel stack in anon_pipe_read (reason: pipe),
 * the walk found tcp_recvmsg (network): the sleep keeps the walked stack
 * and reason, and is flagged CHECKED | DIFFERS | REASON_DIFFERS. A second
 * check whose cached stack differs in a frame but not in reason (another
 * pipe stack) is CHECKED | DIFFERS without REASON_DIFFERS; a third that
 * agrees is CHECKED only.
 */
static void check_sw(struct synth *s, int ev, uint64_t t, uint64_t kh, uint64_t kc)
{
	struct rsp_brec_switch_check r = {
		.ss = {.sw = {.next_tid = 0, .prev_state = 1, .prev_prio = 120, .next_prio = 120},
		       .kstack = kh},
		.kcached = kc};

	hdr(&r.ss.sw.h, RSP_BREC_SWITCH_CHECK, sizeof(r));
	put(s, ev, 0, t, A, &r, sizeof(r));
}

static void test_reason_differs(void **state)
{
	static const uint64_t tcp[] = {K_SCHEDULE + 8, K_TCP_RECV + 8, K_KSYS_READ + 8},
			      pipe1[] = {K_SCHEDULE + 8, K_PIPE_READ + 8, K_KSYS_READ + 8},
			      pipe2[] = {K_SCHEDULE + 16, K_PIPE_READ + 16, K_KSYS_READ + 8};
	struct rsp_ksyms *ks;
	struct rsp_timeline_ops ops = {.segment = on_seg, .link = on_link};
	struct rsp_timeline *tl;
	struct seen *r = calloc(1, sizeof(*r));
	struct synth s;
	struct rsp_buf err = RSP_BUF_INIT;
	unsigned flags[3], n = 0;
	uint8_t reasons[3];
	int ev;

	(void)state;
	assert_non_null(r);
	ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	rsp_buf__exit(&err);
	assert_non_null(ks);
	as_window = true;
	synth__init(&s);
	ev = bpf_evsel(&s);
	comm(&s, ev, 0, 999, A, "app");
	bswitch(&s, ev, 0, 1000, 0, 0, A, 0, 0);
	stack(&s, ev, 0, 1100, A, 0x10, RSP_BSTACK_KERNEL, tcp, 3);
	stack(&s, ev, 0, 1100, A, 0x20, RSP_BSTACK_KERNEL, pipe1, 3);
	stack(&s, ev, 0, 1100, A, 0x30, RSP_BSTACK_KERNEL, pipe2, 3);
	check_sw(&s, ev, 2000, 0x10, 0x20); /* walked: network; cached: pipe */
	bswitch(&s, ev, 0, 3000, 0, 0, A, 0, 0);
	check_sw(&s, ev, 4000, 0x30, 0x20); /* another pipe stack: same reason */
	bswitch(&s, ev, 0, 5000, 0, 0, A, 0, 0);
	check_sw(&s, ev, 6000, 0x20, 0x20); /* agrees */
	bswitch(&s, ev, 0, 7000, 0, 0, A, 0, 0);

	tl = rsp_timeline__new(s.schema, &ops, r);
	assert_non_null(tl);
	assert_int_equal(rsp_timeline__set_ksyms(tl, ks), 0);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < s.n; i++) {
		struct rsp_wentry e = synth__entry(&s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, 10000);
	rsp_timeline__delete(tl);
	for (size_t i = 0; i < r->nsegs; i++)
		if (r->segs[i].tid == A && r->segs[i].kind == RSP_SEG_SLEEP) {
			assert_true(n < 3);
			flags[n] = r->segs[i].flags;
			reasons[n++] = r->segs[i].reason;
		}
	assert_int_equal(n, 3);
	assert_int_equal(reasons[0], RSP_SR_NETWORK); /* the walked stack's, not the cache's */
	assert_int_equal(reasons[1], RSP_SR_PIPE);
	assert_int_equal(reasons[2], RSP_SR_PIPE);
	assert_int_equal(flags[0] & (RSP_SEGF_STACK_CHECKED | RSP_SEGF_STACK_DIFFERS |
				     RSP_SEGF_REASON_DIFFERS),
			 RSP_SEGF_STACK_CHECKED | RSP_SEGF_STACK_DIFFERS | RSP_SEGF_REASON_DIFFERS);
	assert_int_equal(flags[1] & (RSP_SEGF_STACK_CHECKED | RSP_SEGF_STACK_DIFFERS |
				     RSP_SEGF_REASON_DIFFERS),
			 RSP_SEGF_STACK_CHECKED | RSP_SEGF_STACK_DIFFERS);
	assert_int_equal(flags[2] & (RSP_SEGF_STACK_CHECKED | RSP_SEGF_STACK_DIFFERS |
				     RSP_SEGF_REASON_DIFFERS),
			 RSP_SEGF_STACK_CHECKED);
	synth__exit(&s);
	rsp_ksyms__delete(ks);
	free(r);
}

/* Golden decode: a compact switch is sched_switch with the tracepoint's fields. */
static void test_decode(void **state)
{
	struct synth bp;
	struct rsp_sample smp;
	struct rsp_tp_sched_switch sw;
	struct rsp_tp_sched_waking wk;
	struct rsp_wentry e;
	int ev;

	(void)state;
	as_window = true;
	synth__init(&bp);
	ev = bpf_evsel(&bp);
	bswitch(&bp, ev, 1, 500, 42, 2, 43, 0, 0);
	bwaking(&bp, ev, RSP_BREC_WAKING, 1, 600, 42, 44, 0);
	e = synth__entry(&bp, 0);
	assert_int_equal(rsp_record__parse_sample(bp.schema, e.rec, &smp), 0);
	assert_int_equal(smp.event, RSP_EV_sched_switch);
	assert_int_equal(smp.compact, RSP_BREC_SWITCH);
	assert_int_equal(smp.role, RSP_ROLE_PRIMARY);
	assert_int_equal(smp.time, 500);
	assert_int_equal(smp.cpu, 1);
	assert_int_equal(smp.tid, 42);
	assert_int_equal(rsp_layout__time(e.rec), 500);
	assert_int_equal(rsp_layout__cpu(e.rec), 1);
	assert_true(rsp_record__is_sample(e.rec));
	assert_int_equal(rsp_tp__sched_switch(bp.schema, &smp, &sw), 0);
	assert_int_equal(sw.prev_pid, 42);
	assert_int_equal(sw.next_pid, 43);
	assert_int_equal(sw.prev_state, 2);
	assert_int_equal(sw.prev_prio, 120);
	assert_null(sw.prev_comm.ptr); /* names come as COMM records */
	e = synth__entry(&bp, 1);
	assert_int_equal(rsp_record__parse_sample(bp.schema, e.rec, &smp), 0);
	assert_int_equal(rsp_tp__sched_waking(bp.schema, &smp, &wk), 0);
	assert_int_equal(wk.pid, 44);
	assert_int_equal(wk.target_cpu, 1);
	/* malformed: a wrong version, a size past the sample, an unknown kind */
	{
		struct rsp_brec_switch r = {.next_tid = 1};

		hdr(&r.h, RSP_BREC_SWITCH, sizeof(r));
		r.h.type = RSP_BREC_TYPE_TAG | 9u << 8 | RSP_BREC_SWITCH;
		put(&bp, ev, 0, 700, 1, &r, sizeof(r));
		hdr(&r.h, RSP_BREC_SWITCH, sizeof(r) + 64);
		as_window = false; /* a window record's size is its own */
		put(&bp, ev, 0, 701, 1, &r, sizeof(r));
		hdr(&r.h, 99, sizeof(r));
		put(&bp, ev, 0, 702, 1, &r, sizeof(r));
		for (size_t i = 2; i < 5; i++) {
			e = synth__entry(&bp, i);
			assert_int_equal(rsp_record__parse_sample(bp.schema, e.rec, &smp), -EINVAL);
		}
	}
	synth__exit(&bp);
}

/* A's segments have its name, and its one sleep the stack sent before the range. */
static void assert_learnt(const struct seen *r, const struct rsp_timeline_stats *st)
{
	int named = 0, stacked = 0;

	assert_int_equal(st->bpf_stacks_missing, 0);
	for (size_t i = 0; i < r->nsegs; i++) {
		if (r->segs[i].tid == A)
			named += !strcmp(r->comms[i], "app");
		if (r->segs[i].tid == A && r->segs[i].kind == RSP_SEG_SLEEP)
			stacked += r->stacks[i][0] == PERF_CONTEXT_KERNEL &&
				   r->stacks[i][1] == kstack[0];
	}
	assert_true(named > 0);
	assert_int_equal(stacked, 1);
}

/*
 * A range that starts after the COMM and STACK records: what they sent is
 * learnt from the records before it (rsp_timeline__learn()), so the range's
 * threads have their names and its sleeps their stacks, and learning creates
 * no thread of its own.
 */
static void test_learn_before(void **state)
{
	struct synth bp;
	struct seen *r = calloc(1, sizeof(*r));
	struct rsp_timeline_ops ops = {.segment = on_seg, .link = on_link};
	struct rsp_timeline *tl;
	struct rsp_timeline_stats st;
	int ev;

	(void)state;
	assert_non_null(r);
	as_window = true;
	synth__init(&bp);
	ev = bpf_evsel(&bp);
	story_bpf(&bp, ev, true);
	tl = rsp_timeline__new(bp.schema, &ops, r);
	assert_non_null(tl);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < bp.n; i++) {
		struct rsp_wentry e = synth__entry(&bp, i);

		if (e.time < 2000) /* names and stacks before the range; A's sleep after */
			assert_int_equal(rsp_timeline__learn(tl, &e), 0);
		else
			assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, 10000);
	rsp_timeline__stats(tl, &st);
	rsp_timeline__delete(tl);
	assert_learnt(r, &st);
	synth__exit(&bp);
	free(r);
}

/*
 * The same through rsp_pass__run() on a window as rspd keeps it (BPF records
 * in each CPU's second stream, chunks of 4 KiB): between the names and
 * stacks and the range, chunks of another thread's switches; raw, then with
 * every chunk before the range compressed (the pass learns from them one
 * decompressed chunk at a time, or from the names and stacks a window with
 * side kinds keeps beside each frame). The range's threads have their
 * names and stacks, and the other thread no segment.
 */
static int by_time(const void *a, const void *b)
{
	const struct rsp_wentry *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static void learn_through_pass(bool compress, uint32_t side)
{
	struct rsp_window_config wc = {.budget = 1 << 20,
				       .nr_cpus = 2,
				       .chunk_size = 4096,
				       .streams_per_cpu = 2,
				       .time_offset = {0, offsetof(struct rsp_brec_hdr, time)},
				       .side_bpf_kinds = side};
	struct rsp_timeline_ops ops = {.segment = on_seg, .link = on_link};
	struct seen *r = calloc(1, sizeof(*r));
	struct rsp_window *w = rsp_window__new(&wc);
	struct rsp_window_stats ws;
	struct rsp_timeline_stats st;
	struct rsp_wentry *all;
	struct rsp_wsnap *snap;
	struct synth bp;
	int ev;

	assert_non_null(r);
	assert_non_null(w);
	as_window = true;
	synth__init(&bp);
	ev = bpf_evsel(&bp);
	story_bpf(&bp, ev, true);
	/* D switches to itself on both CPUs, 1200 .. 1900: chunks with no name or stack */
	for (uint64_t t = 1200; t < 1900; t++)
		bswitch(&bp, ev, (uint32_t)(t % 2), t, D, 0, D, 0, 0);
	all = calloc(bp.n, sizeof(*all));
	assert_non_null(all);
	for (size_t i = 0; i < bp.n; i++)
		all[i] = synth__entry(&bp, i);
	qsort(all, bp.n, sizeof(*all), by_time);
	for (size_t i = 0; i < bp.n; i++)
		assert_int_equal(rsp_window__append(w, 2 + all[i].cpu, all[i].time, all[i].rec), 0);
	if (compress)
		assert_true(rsp_window__compress(w, 2000, 0) > 0);
	rsp_window__stats(w, &ws);
	assert_true(ws.chunks >= 8);
	snap = rsp_window__pin(w, 2000, 10000);
	assert_non_null(snap);
	assert_int_equal(rsp_pass__run(bp.schema, snap,
				       &(struct rsp_pass_opts){
					       .from = 2000, .to = 10000, .ops = &ops, .ctx = r},
				       &st),
			 0);
	rsp_wsnap__unpin(snap);
	assert_learnt(r, &st);
	for (size_t i = 0; i < r->nsegs; i++)
		assert_true(r->segs[i].tid != D);
	free(all);
	rsp_window__delete(w);
	synth__exit(&bp);
	free(r);
}

static void test_learn_before_pass(void **state)
{
	(void)state;
	uint32_t side = 1u << RSP_BREC_COMM | 1u << RSP_BREC_STACK;

	learn_through_pass(false, 0);
	learn_through_pass(true, 0);	/* decompressed one chunk at a time */
	learn_through_pass(true, side); /* from the names and stacks kept beside the frames */
	learn_through_pass(false, side);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learn_before),	  cmocka_unit_test(test_learn_before_pass),
		cmocka_unit_test(test_same_story_window), cmocka_unit_test(test_same_story_dump),
		cmocka_unit_test(test_missing_stack),	  cmocka_unit_test(test_decode),
		cmocka_unit_test(test_reason_differs),	  cmocka_unit_test(test_folded_story),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
