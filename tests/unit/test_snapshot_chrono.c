// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the chronological flame view (lib/format/snapshot_chrono.c,
 * and the timed pieces lib/analysis/snapshot.c records for it) on a
 * hand-built timeline store with a known answer: the pid's stretches at
 * depth 0, a waker's work nested in the sleep it ended, recursively, every
 * child inside its parent, the order (start, depth), the kinds, and both
 * cuts (max_slices: shallowest and longest kept; max_pieces). And the same
 * snapshot as pprof (lib/format/snapshot_pprof.c), read back with the
 * protobuf-c decoder of profile.proto: the wait and the CPU by reason,
 * waker and depth.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>
#include <rsp/query.h>
#include <rsp/samples.h>
#include <rsp/snapshot.h>
#include <rsp/tlstore.h>
#include "internal/pprof.h"
#include "internal/snapexport.h"
#include "pprof/profile.pb-c.h"

#define US  1000ull
#define DEV ((8u << 20) | 16)

static const uint64_t stack_a[] = {PERF_CONTEXT_KERNEL, 0xffffffff81001800ull, PERF_CONTEXT_USER,
				   0x401000ull};

struct b {
	struct rsp_tlstore *st;
	struct rsp_samples *sm;
	struct rsp_timeline_ops ops;
	struct rsp_snapshot *snap;
	struct rsp_source src;
	struct snapnames names;
};

static void seg(struct b *b, uint32_t tid, uint8_t kind, uint8_t reason, uint64_t a, uint64_t z,
		uint8_t wk, uint32_t wid)
{
	struct rsp_segment s;

	memset(&s, 0, sizeof(s));
	s.tid = s.tgid = tid;
	s.kind = kind;
	s.reason = reason;
	s.start = a * US;
	s.end = z * US;
	s.waker.kind = wk;
	s.waker.id = wid;
	s.waker.time = wk ? z * US : 0;
	if (kind == RSP_SEG_SLEEP) {
		s.stack = stack_a;
		s.nr_stack = 4;
	}
	b->ops.segment(b->st, &s, "t");
}

#define RUN(t, a, z)		   seg(b, t, RSP_SEG_RUN, 0, a, z, 0, 0)
#define RUNQ(t, a, z, w)	   seg(b, t, RSP_SEG_RUNNABLE, 0, a, z, RSP_WAKER_THREAD, w)
#define SLEEP(t, a, z, r, wk, wid) seg(b, t, RSP_SEG_SLEEP, r, a, z, wk, wid)

/*
 * Process 1 runs, sleeps on a pipe that thread 2 ends; 2 works for it and
 * sleeps on a socket that 3 ends (3 works for 2); then 1 waits for a disk
 * and sleeps in nanosleep. Every time in us.
 */
static void build(struct b *b, size_t max_pieces)
{
	struct rsp_snapshot_opts o;
	struct rsp_buf err = RSP_BUF_INIT;

	memset(b, 0, sizeof(*b));
	b->st = rsp_tlstore__new(0);
	b->sm = rsp_samples__new();
	assert_non_null(b->st);
	assert_non_null(b->sm);
	rsp_tlstore__ops(&b->ops);
	RUN(1, 0, 100);
	SLEEP(1, 100, 300, RSP_SR_PIPE, RSP_WAKER_THREAD, 2);
	RUNQ(1, 300, 310, 2);
	RUN(1, 310, 400);
	SLEEP(1, 400, 500, RSP_SR_BLOCK_IO, RSP_WAKER_DEVICE, DEV);
	RUN(1, 500, 600);
	SLEEP(1, 600, 700, RSP_SR_SLEEP, RSP_WAKER_TIMER, 0);
	RUN(1, 700, 800);

	SLEEP(2, 0, 100, RSP_SR_PIPE, RSP_WAKER_THREAD, 1);
	RUNQ(2, 100, 110, 1);
	RUN(2, 110, 200);
	SLEEP(2, 200, 250, RSP_SR_NETWORK, RSP_WAKER_THREAD, 3);
	RUN(2, 250, 300);
	SLEEP(2, 300, 800, RSP_SR_PIPE, RSP_WAKER_NONE, 0);

	SLEEP(3, 0, 200, RSP_SR_PIPE, RSP_WAKER_THREAD, 2);
	RUNQ(3, 200, 205, 2);
	RUN(3, 205, 250);
	SLEEP(3, 250, 800, RSP_SR_PIPE, RSP_WAKER_NONE, 0);

	assert_int_equal(rsp_tlstore__seal(b->st, 0, 800 * US), 0);
	assert_int_equal(rsp_samples__seal(b->sm), 0);
	rsp_snapshot_opts__init(&o);
	o.pid = 1;
	if (max_pieces)
		o.max_pieces = max_pieces;
	b->snap = rsp_snapshot__new(b->st, b->sm, &o, &err);
	if (!b->snap)
		fail_msg("snapshot: %s", err.data);
	rsp_buf__exit(&err);
	assert_int_equal(rsp_snapnames__init(&b->names, &b->src.access, b->src.symbols,
					     b->src.ksyms, b->snap),
			 0);
}

static void b_exit(struct b *b)
{
	rsp_snapnames__exit(&b->names);
	rsp_snapshot__delete(b->snap);
	rsp_tlstore__delete(b->st);
	rsp_samples__delete(b->sm);
}

static json_t *chrono(struct b *b, size_t max)
{
	struct rsp_buf out = RSP_BUF_INIT;
	json_error_t e;
	json_t *j;

	assert_int_equal(rsp_snapexport__chrono(&b->names, max, &out), 0);
	j = json_loads(out.data, 0, &e);
	if (!j)
		fail_msg("not JSON (%s): %s", e.text, out.data);
	rsp_buf__exit(&out);
	return j;
}

struct want {
	int depth;
	uint64_t start, end; /* us */
	const char *kind;
	int tid;
	const char *name; /* a part of it */
};

static void check(json_t *j, const struct want *w, size_t n, bool truncated, size_t max)
{
	json_t *v = json_object_get(j, "slices");

	assert_string_equal(json_string_value(json_object_get(j, "unit")), "ns");
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "start_ns")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "end_ns")), 800 * US);
	assert_int_equal(json_integer_value(json_object_get(j, "max_slices")), max);
	assert_int_equal(json_is_true(json_object_get(j, "truncated")), truncated);
	assert_int_equal(json_array_size(v), n);
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(v, i);
		const char *name = json_string_value(json_object_get(s, "name"));

		if (json_integer_value(json_object_get(s, "depth")) != w[i].depth ||
		    json_integer_value(json_object_get(s, "start")) !=
			    (json_int_t)(w[i].start * US) ||
		    json_integer_value(json_object_get(s, "end")) != (json_int_t)(w[i].end * US) ||
		    strcmp(json_string_value(json_object_get(s, "kind")), w[i].kind) ||
		    json_integer_value(json_object_get(s, "tid")) != w[i].tid ||
		    !strstr(name, w[i].name))
			fail_msg("slice %zu: %s", i, json_dumps(s, JSON_COMPACT));
	}
}

/* The slices, in order, each child inside the one it nests in. */
static void test_nesting(void **state)
{
	static const struct want w[] = {
		{0, 0, 100, "running", 1, "running"},
		{0, 100, 300, "other", 1, "sleep pipe"},
		{1, 100, 110, "runnable", 2, "t (pid 2): runnable"},
		{1, 110, 200, "running", 2, "t (pid 2): running"},
		{1, 200, 250, "network", 2, "t (pid 2): sleep network"},
		{2, 200, 205, "runnable", 3, "t (pid 3): runnable"},
		{2, 205, 250, "running", 3, "t (pid 3): running"},
		{1, 250, 300, "running", 2, "running"},
		{0, 300, 310, "runnable", 1, "runnable"},
		{0, 310, 400, "running", 1, "running"},
		{0, 400, 500, "block_io", 1, "sleep block_io"},
		{0, 500, 600, "running", 1, "running"},
		{0, 600, 700, "timer", 1, "sleep sleep"},
		{0, 700, 800, "running", 1, "running"},
	};
	struct b bb, *b = &bb;
	size_t np;
	bool cut = true;
	const struct rsp_spiece *p;
	json_t *j;

	build(b, 0);
	p = rsp_snapshot__pieces(b->snap, &np, &cut);
	assert_false(cut);
	assert_int_equal(np, 14);
	for (size_t i = 0; i < np; i++) {
		const struct rsp_spiece *q = &p[i];

		if (q->parent == RSP_SNODE_NONE) {
			assert_int_equal(q->depth, 0);
			continue;
		}
		assert_true(q->parent < i); /* walk order: parents first */
		assert_int_equal(q->depth, p[q->parent].depth + 1);
		assert_true(q->start >= p[q->parent].start && q->end <= p[q->parent].end);
		assert_int_equal(p[q->parent].kind, RSP_SN_SLEEP);
	}
	j = chrono(b, 1000);
	check(j, w, 14, false, 1000);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "slices"), 0), "name")),
			    "running"); /* depth 0 names no thread */
	json_decref(j);
	b_exit(b);
}

/* Over max_slices: the shallowest, then the longest; their parents always kept. */
static void test_truncated(void **state)
{
	static const struct want w9[] = {
		{0, 0, 100, "running", 1, "running"},	{0, 100, 300, "other", 1, "sleep"},
		{1, 110, 200, "running", 2, "running"}, {0, 300, 310, "runnable", 1, "runnable"},
		{0, 310, 400, "running", 1, "running"}, {0, 400, 500, "block_io", 1, "sleep"},
		{0, 500, 600, "running", 1, "running"}, {0, 600, 700, "timer", 1, "sleep"},
		{0, 700, 800, "running", 1, "running"},
	};
	static const struct want w3[] = {
		{0, 0, 100, "running", 1, "running"},
		{0, 100, 300, "other", 1, "sleep"},
		{0, 400, 500, "block_io", 1, "sleep"},
	};
	struct b bb, *b = &bb;
	json_t *j;

	build(b, 0);
	j = chrono(b, 9);
	check(j, w9, 9, true, 9);
	json_decref(j);
	j = chrono(b, 3);
	check(j, w3, 3, true, 3);
	json_decref(j);
	j = chrono(b, 0);
	check(j, NULL, 0, true, 0);
	json_decref(j);
	b_exit(b);

	/* the snapshot's own cut: the first 5 pieces of the walk, and it says so */
	build(b, 5);
	j = chrono(b, 1000);
	assert_int_equal(json_array_size(json_object_get(j, "slices")), 5);
	assert_true(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);
	b_exit(b);
}

static json_t *export(struct b *b, int (*fn)(struct snapnames *, struct rsp_buf *))
{
	struct rsp_buf out = RSP_BUF_INIT;
	json_error_t e;
	json_t *j;

	assert_int_equal(fn(&b->names, &out), 0);
	j = json_loads(out.data, 0, &e);
	if (!j)
		fail_msg("not JSON (%s): %s", e.text, out.data);
	rsp_buf__exit(&out);
	return j;
}

static int speedscope_9(struct snapnames *n, struct rsp_buf *out)
{
	return rsp_snapexport__speedscope(n, 9, out);
}

static int speedscope_all(struct snapnames *n, struct rsp_buf *out)
{
	return rsp_snapexport__speedscope(n, 1000, out);
}

/*
 * speedscope: thread 1's nest as open/close events, LIFO, at the slices'
 * times; the consolidated view as samples weighing the whole 800 us.
 */
static void test_speedscope(void **state)
{
	struct b bb, *b = &bb;
	json_t *j, *frames, *ev, *sm, *e;
	size_t i, opens = 0, depth = 0, maxd = 0;
	json_int_t stk[16], last = 0, total = 0;

	build(b, 0);
	j = export(b, speedscope_all);
	frames = json_object_get(json_object_get(j, "shared"), "frames");
	assert_int_equal(json_array_size(json_object_get(j, "profiles")), 2);
	ev = json_array_get(json_object_get(j, "profiles"), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "type")), "evented");
	assert_string_equal(json_string_value(json_object_get(ev, "name")), "t (pid 1)");
	assert_int_equal(json_integer_value(json_object_get(ev, "endValue")), 800 * US);
	json_array_foreach (json_object_get(ev, "events"), i, e) {
		const char *type = json_string_value(json_object_get(e, "type"));
		json_int_t f = json_integer_value(json_object_get(e, "frame"));
		json_int_t at = json_integer_value(json_object_get(e, "at"));

		assert_true(f >= 0 && (size_t)f < json_array_size(frames));
		assert_true(at >= last);
		last = at;
		if (!strcmp(type, "O")) {
			assert_true(depth < 16);
			stk[depth++] = f;
			opens++;
			maxd = depth > maxd ? depth : maxd;
		} else {
			assert_string_equal(type, "C");
			assert_true(depth > 0);
			assert_int_equal(stk[--depth], f);
		}
	}
	assert_int_equal(depth, 0);
	assert_int_equal(opens, 14);
	assert_int_equal(maxd, 3);
	assert_int_equal(last, 800 * US);
	sm = json_array_get(json_object_get(j, "profiles"), 1);
	assert_string_equal(json_string_value(json_object_get(sm, "type")), "sampled");
	assert_int_equal(json_array_size(json_object_get(sm, "samples")),
			 json_array_size(json_object_get(sm, "weights")));
	json_array_foreach (json_object_get(sm, "weights"), i, e)
		total += json_integer_value(e);
	assert_int_equal(total, 800);
	assert_int_equal(json_integer_value(json_object_get(sm, "endValue")), 800);
	json_decref(j);
	j = export(b, speedscope_9);
	ev = json_array_get(json_object_get(j, "profiles"), 0);
	assert_int_equal(json_array_size(json_object_get(ev, "events")), 18);
	json_decref(j);
	b_exit(b);
}

/* The Chrome trace: today's tracks, and the nest as "X" slices on a track of its own. */
static void test_chrome(void **state)
{
	struct b bb, *b = &bb;
	json_t *j, *e;
	size_t i, chrono = 0, named = 0;

	build(b, 0);
	j = export(b, rsp_snapexport__chrome);
	json_array_foreach (json_object_get(j, "traceEvents"), i, e) {
		const char *cat = json_string_value(json_object_get(e, "cat"));
		json_int_t tid = json_integer_value(json_object_get(e, "tid"));

		if (cat && !strcmp(cat, "chrono")) {
			assert_int_equal(tid, RSP_CHRONO_TRACK + 1);
			assert_string_equal(json_string_value(json_object_get(e, "ph")), "X");
			if (!chrono++)
				assert_int_equal(json_real_value(json_object_get(e, "dur")), 100.0);
		}
		if (tid == RSP_CHRONO_TRACK + 1 &&
		    !strcmp(json_string_value(json_object_get(e, "ph")), "M")) {
			named++;
			assert_non_null(strstr(json_string_value(json_object_get(
						       json_object_get(e, "args"), "name")),
					       "pseudostacks of t (pid 1)"));
		}
	}
	assert_int_equal(chrono, 14);
	assert_int_equal(named, 1);
	json_decref(j);
	b_exit(b);
}

/* The pprof file, gunzipped and decoded (free with ..._free_unpacked()). */
static Perftools__Profiles__Profile *pprof(struct b *b)
{
	struct rsp_buf out = RSP_BUF_INIT;
	struct rsp_pprof_meta meta = {0};
	static uint8_t raw[1 << 20];
	uLongf n = sizeof(raw);
	z_stream z = {0};
	Perftools__Profiles__Profile *p;

	assert_int_equal(rsp_snapexport__pprof(&b->names, &meta, &out), 0);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)out.data;
	z.avail_in = (uInt)out.len;
	z.next_out = raw;
	z.avail_out = (uInt)n;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	rsp_buf__exit(&out);
	assert_non_null(p);
	return p;
}

/* Sample @s's string label @key ("" if none) and its depth. */
static const char *plabel(const Perftools__Profiles__Profile *p,
			  const Perftools__Profiles__Sample *s, const char *key, int64_t *depth)
{
	const char *v = "";

	for (size_t i = 0; i < s->n_label; i++) {
		const char *k = p->string_table[s->label[i]->key];

		if (!strcmp(k, "depth"))
			*depth = s->label[i]->num;
		else if (!strcmp(k, key))
			v = p->string_table[s->label[i]->str];
	}
	return v;
}

/*
 * Process 1's 800 us: it did not run for 410 (the pipe 200, the CPU queue
 * 10, the disk 100, nanosleep 100), and ran 390; below the pipe's sleep,
 * thread 2 ran 140 and thread 3 (depth 2) 45 for it, all of it labelled
 * with process 1's wait, reason pipe, waker thread 2.
 */
static void test_pprof(void **state)
{
	struct b bb, *b = &bb;
	Perftools__Profiles__Profile *p;
	int64_t wait = 0, cpu0 = 0, cpu = 0, by[6] = {0}, deepest = 0;
	static const char *const reasons[6] = {"pipe",	"runnable", "block_io",
					       "sleep", "running",  "?"};

	build(b, 0);
	p = pprof(b);
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(p->string_table[p->sample_type[0]->type], "wait");
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int64_t depth = -1;
		const char *r = plabel(p, s, "reason", &depth);
		size_t k = 0;

		while (k < 5 && strcmp(reasons[k], r))
			k++;
		by[k] += s->value[0];
		wait += s->value[0];
		cpu += s->value[1];
		cpu0 += depth ? 0 : s->value[1];
		deepest = depth > deepest ? depth : deepest;
		if (!strcmp(r, "pipe"))
			assert_string_equal(plabel(p, s, "waker", &depth), "t (pid 2)");
		if (!strcmp(r, "block_io"))
			assert_string_equal(plabel(p, s, "waker", &depth), "disk 8:16");
		assert_int_equal(s->n_location_id > 0, 1);
	}
	assert_int_equal(wait, 410 * US);
	assert_int_equal(cpu0, 390 * US);
	assert_int_equal(cpu, (390 + 140 + 45) * US);
	assert_int_equal(by[0], 200 * US);
	assert_int_equal(by[1], 10 * US);
	assert_int_equal(by[2], 100 * US);
	assert_int_equal(by[3], 100 * US);
	assert_int_equal(by[4], 0);
	assert_int_equal(by[5], 0);
	assert_int_equal(deepest, 2);
	perftools__profiles__profile__free_unpacked(p, NULL);
	b_exit(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),	   cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_speedscope), cmocka_unit_test(test_chrome),
		cmocka_unit_test(test_pprof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
