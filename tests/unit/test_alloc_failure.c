// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation-failure injection (support/failalloc.h), as SQLite's tests do
 * it: the window, the timeline, the timeline store, every query command
 * (status, top, graph, net, snapshot, hist, in each format and with the
 * files they write) and the dump writer (a window written as perf.data the
 * way rspd writes `dump -o FILE`), each run with its 1st, 2nd, ...
 * allocation failing until it runs to the end. Every run must fail cleanly
 * -- an error in one sentence, or the loss its API documents, counted --
 * and the run that fails nothing must give the reference answer. The ASan
 * build's leak check (detect_leaks=1) finds what a failure leaks.
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
#include <rsp/query.h>
#include <rsp/symbols.h>
#include <rsp/timeline.h>
#include <rsp/tlstore.h>
#include <rsp/window.h>
#include <unistd.h>
#include <rsp/file.h>
#include <rsp/hist.h>
#include <rsp/perfdata.h>
#include "internal/hash.h"
#include "kallsyms_fake.h"
#include "pd_fixture.h"
#include "support/failalloc.h"
#include "support/synth.h"

#define MAX_RUNS 100000
#define OLD_DUMP "the old dump\n"
#define DEV	 ((8u << 20) | 0)
#define NTHREADS 80 /* more than a vector's first 64 items: growth is exercised */
#define NQUERY	 8  /* the query path's stream: each answer's allocations fail in turn */
#define SK(i)	 (0xffff888000100000ull + (uint64_t)(i)*0x1000)

static const uint64_t futex_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_FUTEX_WAIT + 0x10,
				       PERF_CONTEXT_USER, 0x7f0000001000ull};
static const uint64_t io_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_IO_SCHEDULE + 0x10,
				    K_FOLIO_WAIT + 0x30, K_EXT4_SYNC + 8};
static const uint64_t tcp_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_TCP_RECV + 4};
static const uint64_t sleep_stack[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_NANOSLEEP + 4};
static const uint64_t waker_stack[] = {PERF_CONTEXT_KERNEL, K_TRY_WAKE + 8};
static const uint64_t sample_stack[] = {PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000};

static uint32_t tid_of(int i)
{
	return 1000 + (uint32_t)i;
}

static uint32_t tgid_of(int i)
{
	return 1000 + (uint32_t)(i / 4 * 4); /* processes of four threads */
}

/*
 * One round of thread @i (of @n) on CPU @cpu from @t: it runs (samples, a block
 * request, a send, a timer), then sleeps on a futex, on I/O, on a socket
 * or in nanosleep, and is woken by the thread before it, by the disk's
 * interrupt, by a softirq after a packet, or by a timer.
 */
static uint64_t round_of(struct synth *s, int n, int i, uint32_t cpu, uint64_t t)
{
	uint32_t tid = tid_of(i), tgid = tgid_of(i), waker = tid_of(i ? i - 1 : n - 1);
	char comm[16];

	snprintf(comm, sizeof(comm), "w%d", i);
	synth__switch(s, .cpu = cpu, .t = t++, .prev = 0, .next = tid, .next_comm = comm);
	synth__cpu_sample(s, .cpu = cpu, .t = t++, .tgid = tgid, .tid = tid,
			  .ip = 0x400000 + 16u * i);
	synth__cpu_clock(s, .cpu = cpu, .t = t++, .tgid = tgid, .tid = tid, .chain = sample_stack,
			 .nr = 4);
	switch (i % 4) {
	case 0:
		synth__switch(s, .cpu = cpu, .t = t++, .prev_tgid = tgid, .prev = tid,
			      .prev_comm = comm, .state = 1, .next = 0, .chain = futex_stack,
			      .nr = 5);
		synth__waking(s, .cpu = cpu, .t = t++, .tgid = tgid_of(i ? i - 1 : 0), .tid = waker,
			      .target = tid, .target_comm = comm, .chain = waker_stack, .nr = 2);
		break;
	case 1:
		synth__block(s, .ev = RSP_EV_block_rq_insert, .cpu = cpu, .t = t++, .tgid = tgid,
			     .tid = tid, .dev = DEV, .sector = 8u * i, .bytes = 4096, .rwbs = "W");
		synth__block(s, .ev = RSP_EV_block_rq_issue, .cpu = cpu, .t = t++, .tgid = tgid,
			     .tid = tid, .dev = DEV, .sector = 8u * i, .bytes = 4096, .rwbs = "W");
		synth__switch(s, .cpu = cpu, .t = t++, .prev_tgid = tgid, .prev = tid,
			      .prev_comm = comm, .state = 2, .next = 0, .chain = io_stack, .nr = 5);
		synth__irq(s, true, cpu, t++, 36, "nvme0q1");
		synth__block(s, .ev = RSP_EV_block_rq_complete, .cpu = cpu, .t = t++, .dev = DEV,
			     .sector = 8u * i, .bytes = 4096, .rwbs = "W");
		synth__waking(s, .cpu = cpu, .t = t++, .target = tid, .target_comm = comm);
		synth__irq(s, false, cpu, t++, 36, NULL);
		break;
	case 2:
		synth__tcp_state(s, .cpu = cpu, .t = t++, .tgid = tgid, .tid = tid, .sk = SK(i),
				 .oldstate = 2, .newstate = 1, .saddr = 0x7f000001,
				 .sport = (uint16_t)(40000 + i), .daddr = 0x7f000001,
				 .dport = 8080);
		synth__sock_len(s, .cpu = cpu, .t = t++, .tgid = tgid, .tid = tid, .sk = SK(i),
				.bytes = 100);
		synth__switch(s, .cpu = cpu, .t = t++, .prev_tgid = tgid, .prev = tid,
			      .prev_comm = comm, .state = 1, .next = 0, .chain = tcp_stack,
			      .nr = 3);
		synth__softirq(s, .entry = true, .cpu = cpu, .t = t++, .vec = RSP_SOFTIRQ_NET_RX);
		synth__data_ready(s, .cpu = cpu, .t = t++, .sk = SK(i));
		synth__waking(s, .cpu = cpu, .t = t++, .target = tid, .target_comm = comm);
		synth__softirq(s, .entry = false, .cpu = cpu, .t = t++, .vec = RSP_SOFTIRQ_NET_RX);
		synth__sock_len(s, .recv = true, .cpu = cpu, .t = t++, .tgid = tgid, .tid = tid,
				.sk = SK(i), .bytes = 100);
		break;
	default:
		synth__hrtimer_start(s, .cpu = cpu, .t = t++, .tgid = tgid, .tid = tid,
				     .fn = K_HRTIMER_WAKEUP, .expires = t + 5);
		synth__switch(s, .cpu = cpu, .t = t++, .prev_tgid = tgid, .prev = tid,
			      .prev_comm = comm, .state = 1, .next = 0, .chain = sleep_stack,
			      .nr = 3);
		synth__hrtimer(s, true, cpu, t++);
		synth__waking(s, .cpu = cpu, .t = t++, .target = tid, .target_comm = comm);
		synth__hrtimer(s, false, cpu, t++);
		break;
	}
	synth__switch(s, .cpu = cpu, .t = t++, .prev = 0, .next = tid, .next_comm = comm);
	synth__switch(s, .cpu = cpu, .t = t++, .prev_tgid = tgid, .prev = tid, .prev_comm = comm,
		      .state = 0, .next = 0);
	return t;
}

/*
 * Every kind of record the timeline interprets, for @n threads over
 * two CPUs in time order: forks, rounds of run and sleep, a gap, exits.
 */
static void mixed_stream(struct synth *s, int n)
{
	uint64_t t = 1000;

	synth__process_fork(s, .cpu = 0, .t = t++, .parent = tid_of(0), .child = tid_of(1),
			    .comm = "w0");
	synth__wakeup_new(s, .cpu = 0, .t = t++, .tid = tid_of(0), .child = tid_of(1),
			  .comm = "w1");
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < n; i++)
			t = round_of(s, n, i, (uint32_t)(i % 2), t);
	synth__lost(s, 1, t++, 5);
	for (int i = 0; i < n; i += 8)
		t = round_of(s, n, i, 1, t);
}

struct fix {
	struct synth s;		/* the stream, no window */
	struct synth *sw;	/* the same records in a window */
	struct synth *sq;	/* NQUERY threads' in a window, for the queries */
	struct rsp_wsnap *snap; /* all of it, pinned */
	struct rsp_ksyms *ks;
	struct rsp_symbolizer *sym;  /* no processes known: addresses stay unnamed */
	struct rsp_hist_store *hist; /* latency profiles of w0 and of a disk, for hist */
	uint64_t end;
};

/* Profiles as rspd's feed makes them: w0's sleeps (two peaks) and a disk's service times. */
static struct rsp_hist_store *make_hist(uint64_t end)
{
	struct rsp_hist_who w = {.tgid = 1000, .tid = 1000, .comm = "w0", .comm_len = 2};
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;

	rsp_hist_config__init(&c);
	st = rsp_hist_store__new(&c);
	if (!st)
		return NULL;
	sh = rsp_hist_store__shard(st, 0);
	for (uint64_t i = 0; i < 100; i++) {
		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_SLEEP), end - 100 + i,
				    i % 2 ? 8000000 : 1000000, &w);
		rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, DEV), end - 100 + i,
				    120000, &w);
	}
	rsp_hist_store__set_progress(st, end);
	return st;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_symbolizer_config sc = {.kallsyms = "", .jit_dir = "", .debug_dir = ""};

	assert_non_null(f);
	synth__init(&f->s);
	mixed_stream(&f->s, NTHREADS);
	f->sw = synth__new(2, 1u << 22);
	mixed_stream(f->sw, NTHREADS);
	f->sq = synth__new(2, 1u << 20);
	mixed_stream(f->sq, NQUERY);
	f->snap = rsp_window__pin(f->sw->window, 0, UINT64_MAX);
	f->ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	rsp_buf__exit(&err);
	f->sym = rsp_symbolizer__new(&sc);
	f->end = synth__entry(&f->s, f->s.n - 1).time + 1;
	f->hist = make_hist(f->end);
	*state = f;
	return f->snap && f->ks && f->sym && f->hist ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	rsp_wsnap__unpin(f->snap);
	synth__delete(f->sw);
	synth__delete(f->sq);
	synth__exit(&f->s);
	rsp_ksyms__delete(f->ks);
	rsp_symbolizer__delete(f->sym);
	rsp_hist_store__delete(f->hist);
	free(f);
	return 0;
}

/* --- the window ----------------------------------------------------------- */

struct window_run {
	struct fix *f;
	uint64_t records; /* what the window held in the run that failed nothing */
};

/*
 * Append the stream to a window small enough to evict, pin it, iterate it.
 * A failed append is a dropped record, counted; a failed pin or iterator
 * is NULL; nothing else may fail.
 */
static void window_once(void *ctx, unsigned long nth)
{
	struct window_run *wr = ctx;
	struct fix *f = wr->f;
	struct rsp_window_config cfg = {.budget = 64 << 10, .nr_cpus = 2, .chunk_size = 8192};
	struct rsp_window_stats st;
	struct rsp_window *w;
	struct rsp_wsnap *snap = NULL;
	struct rsp_witer *it = NULL;
	struct rsp_wentry e;
	uint64_t enomem = 0, seen = 0, last = 0;
	bool failed;

	failalloc__arm(nth);
	w = rsp_window__new(&cfg);
	if (w) {
		for (size_t i = 0; i < f->s.n; i++) {
			struct rsp_wentry r = synth__entry(&f->s, i);
			int ret = rsp_window__append(w, r.cpu, r.time, r.rec);

			if (ret == -ENOMEM)
				enomem++;
			else if (ret)
				fail_msg("append: %d", ret);
		}
		snap = rsp_window__pin(w, 0, UINT64_MAX);
		it = snap ? rsp_witer__new(snap, 0, UINT64_MAX) : NULL;
		while (it && rsp_witer__next(it, &e)) {
			assert_true(e.time >= last);
			last = e.time;
			seen++;
		}
	}
	failalloc__disarm();
	failed = failalloc__failed();
	if (!w) {
		assert_true(failed);
		return;
	}
	rsp_window__stats(w, &st);
	assert_int_equal(st.dropped, enomem);
	assert_int_equal(st.appended + st.dropped, f->s.n);
	if (it)
		assert_int_equal(seen, st.records);
	if (!failed) {
		assert_non_null(it);
		wr->records = st.records;
	} else {
		assert_true(enomem || !snap || !it);
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	rsp_window__delete(w);
}

static void test_window(void **state)
{
	struct window_run wr = {.f = *state};
	unsigned long runs = failalloc__each(window_once, &wr, MAX_RUNS);

	print_message("window: %lu runs\n", runs);
	assert_int_not_equal(runs, 0);
	assert_true(wr.records > 0);
}

/*
 * A run that fails an allocation and reports nothing absorbed the failure
 * (a cache that only loses an entry): its result must be the reference,
 * the result of the run that failed nothing -- which comes last, so the
 * digests of such runs are kept and checked at the end.
 */
struct absorbed {
	uint64_t digest[4096];
	unsigned long nth[4096];
	size_t n;
};

static void absorbed__add(struct absorbed *a, unsigned long nth, uint64_t digest)
{
	assert_true(a->n < sizeof(a->digest) / sizeof(a->digest[0]));
	a->nth[a->n] = nth;
	a->digest[a->n++] = digest;
}

static void absorbed__check(const struct absorbed *a, const char *what, uint64_t ref)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->digest[i] != ref)
			fail_msg("%s: allocation %lu failed, nothing said so, and the result "
				 "differs",
				 what, a->nth[i]);
}

#define mix	  rsp_hash__bytes
#define MIX(h, v) ((h) = mix((h), &(v), sizeof(v)))
#define FNV0	  RSP_HASH_INIT

static uint64_t mix_waker(uint64_t h, const struct rsp_waker *w)
{
	MIX(h, w->kind);
	MIX(h, w->flags);
	MIX(h, w->id);
	MIX(h, w->tgid);
	MIX(h, w->cpu);
	MIX(h, w->time);
	MIX(h, w->req);
	MIX(h, w->nr_stack);
	return w->name ? mix(h, w->name, strlen(w->name)) : h;
}

static uint64_t mix_segment(uint64_t h, const struct rsp_segment *s)
{
	MIX(h, s->start);
	MIX(h, s->end);
	MIX(h, s->tid);
	MIX(h, s->tgid);
	MIX(h, s->kind);
	MIX(h, s->reason);
	MIX(h, s->flags);
	MIX(h, s->cpu);
	MIX(h, s->prev_state);
	MIX(h, s->nr_stack);
	return mix_waker(h, &s->waker);
}

/* --- the timeline --------------------------------------------------------- */

/* What the timeline emitted, digested in order. */
struct tl_out {
	uint64_t digest;
	uint64_t segments, links, block, handler, net, wakings, samples;
};

static void out_segment(void *ctx, const struct rsp_segment *s, const char *comm)
{
	struct tl_out *o = ctx;

	o->digest = mix(mix_segment(o->digest, s), comm, strlen(comm));
	o->segments++;
}

static void out_link(void *ctx, const struct rsp_link *l)
{
	struct tl_out *o = ctx;

	MIX(o->digest, l->kind);
	MIX(o->digest, l->tid);
	MIX(o->digest, l->tgid);
	MIX(o->digest, l->time);
	o->digest = mix_waker(o->digest, &l->from);
	o->links++;
}

static void out_block(void *ctx, const struct rsp_block_req *q)
{
	struct tl_out *o = ctx;

	o->digest = mix(o->digest, q, sizeof(*q));
	o->block++;
}

static void out_handler(void *ctx, const struct rsp_handler_span *hs)
{
	struct tl_out *o = ctx;

	MIX(o->digest, hs->kind);
	MIX(o->digest, hs->start);
	MIX(o->digest, hs->end);
	o->handler++;
}

static uint64_t mix_net_op(uint64_t h, const struct rsp_net_op *op)
{
	MIX(h, op->id);
	MIX(h, op->sk);
	MIX(h, op->tid);
	MIX(h, op->tgid);
	MIX(h, op->proto);
	MIX(h, op->family);
	MIX(h, op->flags);
	MIX(h, op->start);
	MIX(h, op->first);
	MIX(h, op->end);
	MIX(h, op->arrivals);
	MIX(h, op->wakeups);
	MIX(h, op->peer_tid);
	MIX(h, op->peer_sk);
	MIX(h, op->bytes_sent);
	return h;
}

static void out_net(void *ctx, const struct rsp_net_op *op)
{
	struct tl_out *o = ctx;

	o->digest = mix_net_op(o->digest, op);
	o->net++;
}

static void out_waking(void *ctx, const struct rsp_waking *wk)
{
	struct tl_out *o = ctx;

	MIX(o->digest, wk->time);
	MIX(o->digest, wk->tid);
	MIX(o->digest, wk->waker_tid);
	MIX(o->digest, wk->in_handler);
	o->wakings++;
}

static void out_sample(void *ctx, const struct rsp_sample *smp, const struct perf_event_header *rec)
{
	struct tl_out *o = ctx;

	MIX(o->digest, smp->time);
	MIX(o->digest, smp->tid);
	o->samples++;
}

static const struct rsp_timeline_ops out_ops = {
	.segment = out_segment,
	.link = out_link,
	.block = out_block,
	.handler = out_handler,
	.net = out_net,
	.waking = out_waking,
	.sample = out_sample,
};

struct tl_run {
	struct fix *f;
	struct tl_out ref; /* the run that failed nothing */
	struct absorbed absorbed;
};

/*
 * Feed the stream to a timeline. A record the timeline cannot track for
 * want of memory is refused (-ENOMEM) and counted as malformed; the rest
 * of the stream goes on.
 */
static void timeline_once(void *ctx, unsigned long nth)
{
	struct tl_run *tr = ctx;
	struct fix *f = tr->f;
	struct tl_out o = {.digest = FNV0};
	struct rsp_timeline_stats st;
	struct rsp_timeline *tl;
	uint64_t enomem = 0;
	int ret = 0;
	bool failed;

	failalloc__arm(nth);
	tl = rsp_timeline__new(f->s.schema, &out_ops, &o);
	if (tl)
		ret = rsp_timeline__set_ksyms(tl, f->ks);
	if (tl && !ret) {
		rsp_timeline__set_start(tl, 500);
		for (size_t i = 0; i < f->s.n; i++) {
			struct rsp_wentry e = synth__entry(&f->s, i);

			ret = rsp_timeline__feed(tl, &e);
			if (ret == -ENOMEM)
				enomem++;
			else if (ret)
				fail_msg("feed: %d", ret);
		}
		ret = 0;
		rsp_timeline__finish(tl, f->end);
		rsp_timeline__stats(tl, &st);
	}
	failalloc__disarm();
	failed = failalloc__failed();
	if (!tl || ret) {
		assert_true(failed && (!tl || ret == -ENOMEM));
		rsp_timeline__delete(tl);
		return;
	}
	assert_true(st.malformed >= enomem);
	if (!failed) {
		assert_int_equal(enomem, 0);
		tr->ref = o;
	} else if (!enomem) {
		absorbed__add(&tr->absorbed, nth, mix(o.digest, &st, sizeof(st)));
	}
	rsp_timeline__delete(tl);
}

static void test_timeline(void **state)
{
	struct tl_run *tr = calloc(1, sizeof(*tr));
	struct rsp_timeline_stats st;
	struct rsp_timeline *tl;
	unsigned long runs;

	assert_non_null(tr);
	tr->f = *state;
	runs = failalloc__each(timeline_once, tr, MAX_RUNS);
	print_message("timeline: %lu runs\n", runs);
	assert_int_not_equal(runs, 0);
	/* the reference run saw every kind of record */
	assert_true(tr->ref.segments > 2 * NTHREADS && tr->ref.links && tr->ref.block &&
		    tr->ref.handler && tr->ref.net && tr->ref.wakings && tr->ref.samples);
	/* its stats, for the absorbed runs' digests: the last run's, recomputed */
	tl = rsp_timeline__new(tr->f->s.schema, NULL, NULL);
	assert_non_null(tl);
	assert_int_equal(rsp_timeline__set_ksyms(tl, tr->f->ks), 0);
	rsp_timeline__set_start(tl, 500);
	for (size_t i = 0; i < tr->f->s.n; i++) {
		struct rsp_wentry e = synth__entry(&tr->f->s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, tr->f->end);
	rsp_timeline__stats(tl, &st);
	rsp_timeline__delete(tl);
	assert_int_equal(st.malformed, 0);
	absorbed__check(&tr->absorbed, "timeline", mix(tr->ref.digest, &st, sizeof(st)));
	free(tr);
}

/* --- the store ------------------------------------------------------------ */

/* Everything the store holds, digested. */
static uint64_t store_digest(const struct rsp_tlstore *s)
{
	uint64_t h = FNV0;
	const struct rsp_link *links;
	const struct rsp_block_req *reqs;
	const struct rsp_net_op *ops;
	size_t n;

	for (size_t i = 0; i < rsp_tlstore__nr_threads(s); i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(s, i);

		MIX(h, t->tid);
		MIX(h, t->tgid);
		h = mix(h, t->comm, sizeof(t->comm));
		MIX(h, t->parent);
		MIX(h, t->forked);
		MIX(h, t->exited);
		MIX(h, t->first);
		MIX(h, t->last);
		MIX(h, t->run_ns);
		MIX(h, t->runnable_ns);
		MIX(h, t->sleep_ns);
		MIX(h, t->unknown_ns);
		for (size_t j = 0; j < t->nr_segs; j++)
			h = mix_segment(h, &t->segs[j]);
	}
	links = rsp_tlstore__links(s, &n);
	for (size_t i = 0; i < n; i++) {
		MIX(h, links[i].kind);
		MIX(h, links[i].tid);
		MIX(h, links[i].time);
		h = mix_waker(h, &links[i].from);
	}
	reqs = rsp_tlstore__block_reqs(s, &n);
	h = mix(h, reqs, n * sizeof(*reqs));
	ops = rsp_tlstore__net_ops(s, &n);
	for (size_t i = 0; i < n; i++)
		h = mix_net_op(h, &ops[i]);
	return h;
}

struct store_run {
	struct fix *f;
	unsigned flags;
	uint64_t ref; /* the run that failed nothing */
	size_t threads, links;
	struct absorbed absorbed;
};

/* rsp_tlstore__from_window(): the store, or NULL with one sentence. */
static void store_once(void *ctx, unsigned long nth)
{
	struct store_run *sr = ctx;
	struct fix *f = sr->f;
	struct rsp_tlstore_opts o = {.ksyms = f->ks};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_timeline_stats st;
	struct rsp_tlstore *s;
	bool failed;

	failalloc__arm(nth);
	s = rsp_tlstore__from_window(sr->flags, f->sw->schema, f->snap, &o, &st, &err);
	failalloc__disarm();
	failed = failalloc__failed();
	if (!s) {
		assert_true(failed);
		assert_true(err.len > 0);
	} else if (failed) {
		absorbed__add(&sr->absorbed, nth, store_digest(s));
	} else {
		sr->ref = store_digest(s);
		sr->threads = rsp_tlstore__nr_threads(s);
		rsp_tlstore__links(s, &sr->links);
		if (sr->flags & RSP_TLSTORE_SAMPLES)
			assert_non_null(rsp_tlstore__samples(s));
	}
	rsp_tlstore__delete(s);
	rsp_buf__exit(&err);
}

static void test_store(void **state)
{
	static const unsigned flags[] = {RSP_TLSTORE_SAMPLES, RSP_TLSTORE_WAITS_ONLY,
					 RSP_TLSTORE_NO_LINKS};
	unsigned long runs;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct store_run *sr = calloc(1, sizeof(*sr));

		assert_non_null(sr);
		sr->f = *state;
		sr->flags = flags[i];
		runs = failalloc__each(store_once, sr, MAX_RUNS);
		print_message("store (flags %#x): %lu runs\n", flags[i], runs);
		assert_int_not_equal(runs, 0);
		assert_true(sr->threads >= NTHREADS);
		assert_true((flags[i] & RSP_TLSTORE_NO_LINKS) ? !sr->links : sr->links > 0);
		absorbed__check(&sr->absorbed, "store", sr->ref);
		free(sr);
	}
}

/* --- the query path: parse a request, answer it ----------------------------- */

struct query_run {
	struct fix *f;
	const char *const *argv;
	char line[128];	    /* argv, for messages */
	struct rsp_buf ref; /* the answer of the run that failed nothing */
	struct absorbed absorbed;
};

/* One line, no line break inside: what rspctl prints after "rspctl: ". */
static bool one_sentence(const char *s)
{
	const char *nl = strchr(s, '\n');

	return *s && (!nl || !nl[1]);
}

static void query_once(void *ctx, unsigned long nth)
{
	struct query_run *qr = ctx;
	struct rsp_source src = {.window = qr->f->sq->window,
				 .schema = qr->f->sq->schema,
				 .ksyms = qr->f->ks,
				 .symbols = qr->f->sym,
				 .hist = qr->f->hist,
				 .now = qr->f->end};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_request req;
	int argc = 0, ret;
	bool failed;

	while (qr->argv[argc])
		argc++;
	rsp_symbolizer__begin(qr->f->sym);
	failalloc__arm(nth);
	ret = rsp_request__parse(argc, qr->argv, &req, &err);
	if (!ret) {
		ret = rsp_query__run(&req, &src, &out, &err);
		rsp_request__exit(&req);
	}
	failalloc__disarm();
	failed = failalloc__failed();
	if (ret) {
		if (!failed || ret > 0)
			fail_msg("%s: allocation %lu: %d (%s)", qr->line, nth, ret,
				 err.data ? err.data : "");
		if (!err.len)
			fail_msg("%s: allocation %lu: -ENOMEM and no sentence", qr->line, nth);
		if (!one_sentence(err.data))
			fail_msg("%s: allocation %lu: not one sentence: %s", qr->line, nth,
				 err.data);
	} else if (failed) {
		absorbed__add(&qr->absorbed, nth, mix(FNV0, out.data, out.len));
	} else {
		rsp_buf__reset(&qr->ref);
		assert_int_equal(rsp_buf__add(&qr->ref, out.data, out.len), 0);
	}
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_query(void **state)
{
	/* clang-format off */
	const char *const *const queries[] = {
		ARGS("status"),
		ARGS("status", "--json"),
		ARGS("top"),
		ARGS("graph"),
		ARGS("graph", "--json"),
		ARGS("snapshot", "1000"),
		ARGS("snapshot", "1000", "--json"),
		ARGS("net"),
		ARGS("net", "--json"),
		ARGS("net", "--cgroup", "/a", "--json"),
		ARGS("snapshot", "1000", "--speedscope", "s.json", "--chrome-trace", "t.json"),
		ARGS("snapshot", "1000", "--folded", "f.folded", "--chrono", "c.json"),
		ARGS("status", "--pid", "1000"),
		ARGS("top", "--json"),
		ARGS("top", "--speedscope", "s.json"),
		ARGS("top", "--pid", "1000", "--by", "cgroup"),
		ARGS("graph", "--format", "dot"),
		ARGS("net", "--pid", "1000", "--json"),
		ARGS("graph", "--pid", "1000", "--json"),
		ARGS("hist"),
		ARGS("hist", "--json"),
		ARGS("hist", "--op", "offcpu:sleep", "--pid", "1000"),
		ARGS("snapshot", "1000", "--pprof", "o.pb.gz"),
		ARGS("top", "--pprof", "c.pb.gz"),
	};
	/* clang-format on */
	unsigned long runs;

	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		struct query_run *qr = calloc(1, sizeof(*qr));

		assert_non_null(qr);
		qr->f = *state;
		qr->argv = queries[i];
		for (size_t j = 0, n = 0; queries[i][j]; j++)
			n += (size_t)snprintf(qr->line + n, sizeof(qr->line) - n, "%s%s",
					      j ? " " : "", queries[i][j]);
		runs = failalloc__each(query_once, qr, MAX_RUNS);
		print_message("%s: %lu runs\n", qr->line, runs);
		assert_int_not_equal(runs, 0);
		assert_true(qr->ref.len > 0);
		absorbed__check(&qr->absorbed, qr->line, mix(FNV0, qr->ref.data, qr->ref.len));
		rsp_buf__exit(&qr->ref);
		free(qr);
	}
}

/* --- the dump writer -------------------------------------------------------- */

struct dump_run {
	struct fix *f;
	struct rsp_perfdata_meta m;
	char dir[64], path[128];
	struct rsp_buf ref; /* the file the run that failed nothing wrote */
};

/* The dump directory holds the target and nothing else (no temp file). */
static int dir_entries(const char *dir)
{
	char cmd[128];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

static int read_whole(const char *path, struct rsp_buf *out)
{
	char buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		assert_int_equal(rsp_buf__add(out, buf, n), 0);
	fclose(f);
	return 0;
}

/* As rspd writes `dump -o FILE`: temp file, COMM, the window, commit; abort on error. */
static int write_dump(struct dump_run *d, struct rsp_buf *err)
{
	struct rsp_outfile of;
	struct rsp_pdwriter *w;
	int ret = rsp_outfile__open(&of, d->path, 0, err);

	if (ret)
		return ret;
	w = rsp_pdwriter__new(of.fd, d->f->sq->schema, &d->m, err);
	ret = w ? rsp_pdwriter__comm(w, 1000, 1000, "w0") : -ENOMEM;
	if (!ret)
		ret = rsp_pdwriter__window(w, d->f->sq->window, 0, UINT64_MAX);
	if (!ret)
		ret = rsp_pdwriter__finish(w);
	rsp_pdwriter__delete(w);
	if (ret) {
		rsp_outfile__abort(&of);
		if (!err->len)
			rsp_buf__printf(err, "writing %s: %s", d->path, strerror(-ret));
		return ret;
	}
	return rsp_outfile__commit(&of, err);
}

static void dump_once(void *ctx, unsigned long nth)
{
	struct dump_run *d = ctx;
	struct rsp_buf err = RSP_BUF_INIT, got = RSP_BUF_INIT;
	int ret;

	assert_int_equal(rsp_file__write(d->path, OLD_DUMP, strlen(OLD_DUMP), 0, &err), 0);
	failalloc__arm(nth);
	ret = write_dump(d, &err);
	failalloc__disarm();
	assert_int_equal(read_whole(d->path, &got), 0);
	if (ret) {
		if (!failalloc__failed())
			fail_msg("dump: allocation %lu: %d (%s) with nothing failed", nth, ret,
				 err.data ? err.data : "");
		if (!err.len || !one_sentence(err.data))
			fail_msg("dump: allocation %lu: %d, not one sentence: %s", nth, ret,
				 err.data ? err.data : "(none)");
		if (got.len != strlen(OLD_DUMP) || memcmp(got.data, OLD_DUMP, got.len))
			fail_msg("dump: allocation %lu failed the dump, and the old file changed",
				 nth);
	} else if (failalloc__failed()) {
		if (got.len != d->ref.len && d->ref.len) /* checked whole against ref at the end */
			fail_msg(
				"dump: allocation %lu failed, the dump succeeded, its size differs",
				nth);
	} else {
		rsp_buf__reset(&d->ref);
		assert_int_equal(rsp_buf__add(&d->ref, got.data, got.len), 0);
	}
	if (dir_entries(d->dir) != 1)
		fail_msg("dump: allocation %lu: a temp file is left (%d entries)", nth,
			 dir_entries(d->dir));
	rsp_buf__exit(&got);
	rsp_buf__exit(&err);
}

static void test_dump(void **state)
{
	struct rsp_buf td = RSP_BUF_INIT;
	struct dump_run *d = calloc(1, sizeof(*d));
	unsigned long runs;

	assert_non_null(d);
	d->f = *state;
	assert_int_equal(fx_golden_meta(&d->m, &td), 0);
	snprintf(d->dir, sizeof(d->dir), "/tmp/rsp-alloc-dump.XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	snprintf(d->path, sizeof(d->path), "%s/x.perf.data", d->dir);
	runs = failalloc__each(dump_once, d, MAX_RUNS);
	print_message("dump -o: %lu runs\n", runs);
	assert_true(runs > 1 && d->ref.len > 8 && !memcmp(d->ref.data, "PERFILE2", 8));
	unlink(d->path);
	rmdir(d->dir);
	rsp_buf__exit(&d->ref);
	rsp_buf__exit(&td);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window), cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_store),  cmocka_unit_test(test_query),
		cmocka_unit_test(test_dump),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
