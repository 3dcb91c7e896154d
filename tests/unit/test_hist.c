// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the latency profiles: bucket math at the boundaries (r=1,
 * r=2), the store (shards merged under concurrent writers, eviction into
 * "other" with bounded memory, slices and ranges), the analyses (EMD and
 * chi-square on hand-computed cases, peaks, percentiles, OSprof's
 * three-phase filter), baselines (round trip, damaged files) and text
 * rendering under 80 columns.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include "internal/hist.h"

#define S		       1000000000ull
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define OP_LOCK		       RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_LOCK)
#define OP_RUNQ		       RSP_HIST_OP(RSP_HOP_RUNQ, 0)
#define OP_BLK		       RSP_HIST_OP(RSP_HOP_BLK_SERVICE, 254u << 20)

/* ---- bucket math ---------------------------------------------------------------- */

static void check_bucket_bounds(unsigned r)
{
	unsigned nb = rsp_hist__nr_buckets(r);

	assert_int_equal(rsp_hist__bucket_low(0, r), 0);
	assert_int_equal(rsp_hist__bucket_high(0, r), 0);
	assert_int_equal(rsp_hist__bucket_high(nb - 1, r), UINT64_MAX);
	for (unsigned b = 0; b < nb; b++) {
		uint64_t lo = rsp_hist__bucket_low(b, r), hi = rsp_hist__bucket_high(b, r);

		if (b + 1 < nb)
			assert_int_equal(hi + 1, rsp_hist__bucket_low(b + 1, r));
		if (hi < lo) {
			/* The one empty bucket: [sqrt2, 2) at r=2. */
			assert_int_equal(r, 2);
			assert_int_equal(b, 2);
			continue;
		}
		assert_int_equal(rsp_hist__bucket(lo, r), b);
		assert_int_equal(rsp_hist__bucket(hi, r), b);
	}
}

static void test_bucket_r1(void **state)
{
	assert_int_equal(rsp_hist__nr_buckets(1), 65);
	assert_int_equal(rsp_hist__bucket(0, 1), 0);
	assert_int_equal(rsp_hist__bucket(1, 1), 1);
	assert_int_equal(rsp_hist__bucket(2, 1), 2);
	assert_int_equal(rsp_hist__bucket(3, 1), 2);
	for (unsigned k = 1; k < 64; k++) {
		uint64_t p = 1ull << k;

		assert_int_equal(rsp_hist__bucket(p - 1, 1), k);
		assert_int_equal(rsp_hist__bucket(p, 1), k + 1);
		assert_int_equal(rsp_hist__bucket(p + 1, 1), k + 1);
		assert_int_equal(rsp_hist__bucket_low(k + 1, 1), p);
	}
	assert_int_equal(rsp_hist__bucket(UINT64_MAX, 1), 64);
	assert_int_equal(rsp_hist__bucket(UINT64_MAX - 1, 1), 64);
	assert_int_equal(rsp_hist__bucket_low(64, 1), 1ull << 63);
	check_bucket_bounds(1);
}

static void test_bucket_r2(void **state)
{
	static const struct {
		uint64_t v;
		unsigned b;
	} known[] = {{0, 0}, {1, 1},  {2, 3},  {3, 4},	{4, 5},	 {5, 5},  {6, 6},  {7, 6},
		     {8, 7}, {11, 7}, {12, 8}, {15, 8}, {16, 9}, {22, 9}, {23, 10}};

	assert_int_equal(rsp_hist__nr_buckets(2), 129);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		assert_int_equal(rsp_hist__bucket(known[i].v, 2), known[i].b);
	for (unsigned k = 2; k < 64; k++) {
		uint64_t p = 1ull << k, cut = rsp_hist__bucket_low(2 + 2 * k, 2);
		long double exact = sqrtl(2.0L) * (long double)p;

		assert_int_equal(rsp_hist__bucket(p, 2), 1 + 2 * k);
		/* 2^k - 1 is in the upper half of the octave below. */
		assert_int_equal(rsp_hist__bucket(p - 1, 2), 2 * k);
		/* The cut is the first integer at or above 2^k sqrt2. */
		if (k < 60) {
			assert_true((long double)cut >= exact);
			assert_true((long double)(cut - 1) < exact);
		}
		assert_int_equal(rsp_hist__bucket(cut, 2), 2 + 2 * k);
		assert_int_equal(rsp_hist__bucket(cut - 1, 2), 1 + 2 * k);
		/* r=2 nests in r=1: buckets 1+2k and 2+2k make r=1 bucket k+1. */
		assert_int_equal(rsp_hist__bucket_low(1 + 2 * k, 2),
				 rsp_hist__bucket_low(k + 1, 1));
		assert_int_equal(rsp_hist__bucket_high(2 + 2 * k, 2),
				 rsp_hist__bucket_high(k + 1, 1));
	}
	assert_int_equal(rsp_hist__bucket(UINT64_MAX, 2), 128);
	assert_int_equal(rsp_hist__bucket(1ull << 63, 2), 127);
	check_bucket_bounds(2);
}

/* ---- the store ------------------------------------------------------------------------ */

static struct rsp_hist_store *store(unsigned r, unsigned profiles, unsigned slices, unsigned cap,
				    unsigned shards)
{
	struct rsp_hist_config c;
	struct rsp_hist_store *st;

	rsp_hist_config__init(&c);
	c.resolution = r;
	c.max_profiles = profiles;
	c.nr_slices = slices;
	c.slice_cap = cap;
	c.nr_shards = shards;
	st = rsp_hist_store__new(&c);
	assert_non_null(st);
	return st;
}

static struct rsp_hist_set *collect(struct rsp_hist_store *st, unsigned subjects, bool ranged,
				    uint64_t from, uint64_t to)
{
	struct rsp_hist_query q = {.subjects = subjects, .pid = -1, .tid = -1};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_set *set = NULL;

	q.ranged = ranged;
	q.from = from;
	q.to = to;
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
	rsp_buf__exit(&err);
	return set;
}

static const struct rsp_hist_profile *find(const struct rsp_hist_set *s, unsigned kind, uint32_t id,
					   const char *op)
{
	struct rsp_hist_subject subj = {.kind = kind};

	if (kind == RSP_HSUBJ_PROCESS)
		subj.pid = id;
	if (kind == RSP_HSUBJ_THREAD)
		subj.tid = id;
	return rsp_hist_set__find(s, &subj, op);
}

static void test_store_config(void **state)
{
	struct rsp_hist_config c;

	rsp_hist_config__init(&c);
	c.resolution = 3;
	assert_null(rsp_hist_store__new(&c));
	assert_int_equal(errno, EINVAL);
	rsp_hist_config__init(&c);
	c.nr_shards = 0;
	assert_null(rsp_hist_store__new(&c));
	rsp_hist_config__init(&c);
	c.slice_ns = 0;
	assert_null(rsp_hist_store__new(&c));
	rsp_hist_store__delete(NULL);
	rsp_hist_set__delete(NULL);
	rsp_hist_diff__delete(NULL);
}

static void test_store_subjects(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 10, 16, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_who w = {.tgid = 100, .tid = 101, .comm = "worker", .comm_len = 6};
	struct rsp_hist_set *set;
	const struct rsp_hist_profile *p;
	char name[64];

	assert_null(rsp_hist_store__shard(st, 1));
	assert_int_equal(rsp_hist_shard__add(sh, OP_LOCK, 10 * S, 1000, &w), 0);
	assert_int_equal(rsp_hist_shard__add(sh, OP_LOCK, 10 * S, 3000, &w), 0);
	assert_int_equal(rsp_hist_shard__add(sh, OP_LOCK, 11 * S, 0, NULL), 0);
	w.tid = 102;
	assert_int_equal(rsp_hist_shard__add(sh, OP_LOCK, 11 * S, 70000, &w), 0);
	set = collect(st, ~0u, false, 0, 0);
	assert_string_equal(rsp_hist_store__op_name(st, OP_LOCK, name, sizeof(name)),
			    "offcpu:lock");
	p = find(set, RSP_HSUBJ_SYSTEM, 0, "offcpu:lock");
	assert_non_null(p);
	assert_int_equal(p->count, 4);
	assert_int_equal(p->sum, 74000);
	assert_int_equal(p->min, 0);
	assert_int_equal(p->max, 70000);
	assert_int_equal(p->buckets[0], 1);
	assert_int_equal(p->buckets[rsp_hist__bucket(1000, 1)], 1);
	p = find(set, RSP_HSUBJ_PROCESS, 100, "offcpu:lock");
	assert_non_null(p);
	assert_int_equal(p->count, 3);
	assert_string_equal(p->subject.comm, "worker");
	p = find(set, RSP_HSUBJ_THREAD, 101, "offcpu:lock");
	assert_int_equal(p->count, 2);
	assert_int_equal(p->subject.pid, 100);
	p = find(set, RSP_HSUBJ_THREAD, 102, "offcpu:lock");
	assert_int_equal(p->count, 1);
	rsp_hist_set__delete(set);

	/* Selection: one process's threads; one op; comm merge. */
	{
		struct rsp_hist_query q = {
			.subjects = 1u << RSP_HSUBJ_THREAD, .pid = 100, .tid = -1};
		struct rsp_hist_opsel sel = {.kind = RSP_HOP_RUNQ, .any = true};
		struct rsp_buf err = RSP_BUF_INIT;

		assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
		assert_int_equal(set->n, 2);
		rsp_hist_set__delete(set);
		q.ops = &sel;
		q.nr_ops = 1;
		assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
		assert_int_equal(set->n, 0);
		rsp_hist_set__delete(set);
		q = (struct rsp_hist_query){
			.subjects = 1u << RSP_HSUBJ_COMM, .pid = -1, .tid = -1, .comm = "worker"};
		assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
		assert_int_equal(set->n, 1);
		assert_int_equal(set->v[0].subject.kind, RSP_HSUBJ_COMM);
		assert_int_equal(set->v[0].count, 3);
		rsp_hist_set__delete(set);
		rsp_buf__exit(&err);
	}
	rsp_hist_store__delete(st);
}

/* ---- shards under concurrent writers ------------------------------------------------------- */

#define WRITERS	   4
#define PER_WRITER 200000

struct writer {
	struct rsp_hist_store *st;
	unsigned idx;
};

static uint64_t value_of(unsigned i)
{
	return (uint64_t)(i % 1000) * 1000 + 1;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct rsp_hist_shard *sh = rsp_hist_store__shard(w->st, w->idx);
	struct rsp_hist_who who = {.tgid = 7, .tid = 7, .comm = "hammer", .comm_len = 6};

	for (unsigned i = 0; i < PER_WRITER; i++)
		assert_int_equal(rsp_hist_shard__add(sh, OP_RUNQ, (uint64_t)(i / 1000) * S,
						     value_of(i), &who),
				 0);
	return NULL;
}

static _Atomic bool readers_stop;

/* A reader never sees a torn update: count always equals the sum of buckets. */
static void *reader_main(void *arg)
{
	struct rsp_hist_store *st = arg;
	uint64_t last = 0;

	while (!atomic_load(&readers_stop)) {
		struct rsp_hist_set *set = collect(st, 1u << RSP_HSUBJ_SYSTEM, false, 0, 0);

		for (size_t i = 0; i < set->n; i++) {
			uint64_t b = 0;

			for (unsigned j = 0; j < rsp_hist__nr_buckets(1); j++)
				b += set->v[i].buckets[j];
			assert_int_equal(b, set->v[i].count);
			assert_true(set->v[i].count >= last);
			last = set->v[i].count;
		}
		rsp_hist_set__delete(set);
	}
	return NULL;
}

static void test_shards_concurrent(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 300, 16, WRITERS);
	struct writer w[WRITERS];
	pthread_t t[WRITERS], rd;
	struct rsp_hist_set *set;
	const struct rsp_hist_profile *p;
	uint64_t sum = 0, want[RSP_HIST_MAX_BUCKETS] = {0};

	atomic_store(&readers_stop, false);
	assert_int_equal(pthread_create(&rd, NULL, reader_main, st), 0);
	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){st, i};
		assert_int_equal(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&readers_stop, true);
	pthread_join(rd, NULL);
	for (unsigned i = 0; i < PER_WRITER; i++) {
		sum += value_of(i);
		want[rsp_hist__bucket(value_of(i), 1)] += WRITERS;
	}
	set = collect(st, ~0u, false, 0, 0);
	for (unsigned k = RSP_HSUBJ_SYSTEM; k <= RSP_HSUBJ_THREAD; k++) {
		p = find(set, k, 7, "runq");
		assert_non_null(p);
		/* Every update of every writer, merged over the shards. */
		assert_int_equal(p->count, (uint64_t)WRITERS * PER_WRITER);
		assert_int_equal(p->sum, sum * WRITERS);
		assert_memory_equal(p->buckets, want, sizeof(want));
	}
	rsp_hist_set__delete(set);
	/* The slices hold them all too. */
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 0, 1000 * S);
	assert_int_equal(set->n, 1);
	assert_int_equal(set->v[0].count, (uint64_t)WRITERS * PER_WRITER);
	rsp_hist_set__delete(set);
	rsp_hist_store__delete(st);
}

/* ---- eviction: a fork bomb of subjects ---------------------------------------------------- */

static void forkbomb(struct rsp_hist_shard *sh, uint32_t from, uint32_t to, uint64_t t0)
{
	for (uint32_t i = from; i < to; i++) {
		struct rsp_hist_who w = {
			.tgid = 1000 + i, .tid = 1000 + i, .comm = "bomb", .comm_len = 4};

		assert_int_equal(rsp_hist_shard__add(sh, OP_LOCK, t0 + i * 1000, 5000 + i, &w), 0);
		assert_int_equal(rsp_hist_shard__add(sh, OP_RUNQ, t0 + i * 1000, 700, &w), 0);
	}
}

static uint64_t total_of(const struct rsp_hist_set *set, unsigned kind_mask, const char *op)
{
	uint64_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		if ((kind_mask & (1u << set->v[i].subject.kind)) && !strcmp(set->v[i].op_name, op))
			n += set->v[i].count;
	return n;
}

/*
 * Eviction takes the least recently updated subject: an old one updated
 * again stays, the next oldest goes (a slot updated within the last
 * sixteenth of the table's pushes is not moved: here 64 / 16 = 4).
 */
static void test_eviction_recent(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 10, 64, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_who keeper = {.tgid = 1000, .tid = 1000, .comm = "k", .comm_len = 1};
	struct rsp_hist_set *set;

	(void)state;
	forkbomb(sh, 0, 16, 100 * S); /* 16 processes and threads, 2 operations: 64 profiles */
	assert_int_equal(rsp_hist_shard__add(sh, OP_LOCK, 101 * S, 1, &keeper), 0);
	forkbomb(sh, 16, 18, 101 * S); /* two more: 1000 stays, 1001 and 1002 go */
	set = collect(st, ~0u, false, 0, 0);
	assert_non_null(find(set, RSP_HSUBJ_PROCESS, 1000, "offcpu:lock"));
	assert_non_null(find(set, RSP_HSUBJ_THREAD, 1000, "offcpu:lock"));
	assert_null(find(set, RSP_HSUBJ_PROCESS, 1001, "offcpu:lock"));
	assert_null(find(set, RSP_HSUBJ_PROCESS, 1002, "offcpu:lock"));
	assert_non_null(find(set, RSP_HSUBJ_PROCESS, 1003, "offcpu:lock"));
	assert_non_null(find(set, RSP_HSUBJ_PROCESS, 1017, "offcpu:lock"));
	rsp_hist_set__delete(set);
	rsp_hist_store__delete(st);
}

static void test_eviction(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 10, 8, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_stats a, b;
	struct rsp_hist_set *set;
	const unsigned procs = 1u << RSP_HSUBJ_PROCESS | 1u << RSP_HSUBJ_OTHER_PROCESS;
	const unsigned threads = 1u << RSP_HSUBJ_THREAD | 1u << RSP_HSUBJ_OTHER_THREAD;

	forkbomb(sh, 0, 2000, 100 * S);
	rsp_hist_store__stats(st, &a);
	forkbomb(sh, 2000, 20000, 100 * S);
	rsp_hist_store__stats(st, &b);
	/* 64 profiles at most, whatever the number of subjects. */
	assert_int_equal(b.profiles, 64);
	assert_true(b.evictions >= 2 * 20000 * 2 - 64 - 10);
	/* Memory stops growing: only the slice pages may still be filling. */
	assert_true(b.bytes <= a.bytes + 10 * 64 * 1024);
	/* Totals stay exact: what a subject loses, "other" gains. */
	set = collect(st, ~0u, false, 0, 0);
	assert_int_equal(total_of(set, 1u << RSP_HSUBJ_SYSTEM, "offcpu:lock"), 20000);
	assert_int_equal(total_of(set, procs, "offcpu:lock"), 20000);
	assert_int_equal(total_of(set, threads, "runq"), 20000);
	assert_non_null(find(set, RSP_HSUBJ_OTHER_PROCESS, 0, "runq"));
	/* The most recent subjects are still separate. */
	assert_non_null(find(set, RSP_HSUBJ_PROCESS, 1000 + 19999, "offcpu:lock"));
	assert_null(find(set, RSP_HSUBJ_PROCESS, 1000, "offcpu:lock"));
	rsp_hist_set__delete(set);
	/* Slices: 8 subject entries each, the rest in "other"; totals exact. */
	set = collect(st, ~0u, true, 100 * S, 200 * S);
	assert_int_equal(total_of(set, 1u << RSP_HSUBJ_SYSTEM, "offcpu:lock"), 20000);
	assert_int_equal(total_of(set, procs, "offcpu:lock"), 20000);
	assert_true(set->overflow > 0);
	rsp_hist_set__delete(set);
	rsp_hist_store__delete(st);
}

/* ---- slices and ranges ------------------------------------------------------------------ */

static void test_slices(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 5, 16, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_query q = {.subjects = 1u << RSP_HSUBJ_SYSTEM, .pid = -1, .tid = -1};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_set *set;
	struct rsp_hist_stats hs;

	/* One op, values 100 * (second): slice 10 has 1 update, 11 has 2, ... */
	for (unsigned sec = 10; sec < 14; sec++)
		for (unsigned i = 0; i <= sec - 10; i++)
			rsp_hist_shard__add(sh, OP_RUNQ, sec * S + i * 1000, sec * 100, NULL);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 11 * S, 12 * S + 5);
	assert_int_equal(set->n, 1);
	assert_int_equal(set->v[0].count, 2 + 3);
	assert_int_equal(set->v[0].sum, 2 * 1100 + 3 * 1200);
	assert_int_equal(set->from, 11 * S);
	assert_int_equal(set->to, 13 * S);
	assert_false(set->clipped);
	rsp_hist_set__delete(set);
	/* Rows: one per slice, empty ones too. */
	q.ranged = true;
	q.from = 10 * S;
	q.to = 13 * S;
	q.rows = true;
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
	assert_int_equal(set->v[0].nr_rows, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(set->v[0].rows[i].start, (10 + i) * S);
		assert_int_equal(set->v[0].rows[i].count, i + 1);
	}
	rsp_hist_set__delete(set);
	/* A late update lands in its own slice. */
	rsp_hist_shard__add(sh, OP_RUNQ, 11 * S + 7, 1, NULL);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 11 * S, 11 * S);
	assert_int_equal(set->v[0].count, 3);
	rsp_hist_set__delete(set);
	/* Five slices kept: moving to second 16 recycles 10 and 11. */
	rsp_hist_shard__add(sh, OP_RUNQ, 16 * S, 1, NULL);
	rsp_hist_shard__add(sh, OP_RUNQ, 5 * S, 1, NULL); /* older than any slice */
	rsp_hist_store__stats(st, &hs);
	assert_int_equal(hs.late, 1);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 10 * S, 13 * S);
	assert_true(set->clipped);
	assert_int_equal(set->from, 12 * S);
	assert_int_equal(set->v[0].count, 3 + 4);
	rsp_hist_set__delete(set);
	q.rows = false;
	q.from = 1 * S;
	q.to = 9 * S;
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), -ERANGE);
	assert_non_null(strstr(err.data, "no time slices"));
	assert_null(set);
	rsp_buf__reset(&err);
	q.from = 9 * S;
	q.to = 8 * S;
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), -ERANGE);
	/* Cumulative still has everything. */
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, false, 0, 0);
	assert_int_equal(set->v[0].count, 1 + 2 + 3 + 4 + 1 + 1 + 1);
	rsp_hist_set__delete(set);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/* ---- incomplete, open, irq names, gaps ------------------------------------------------------ */

static void test_notes(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 5, 16, 1);
	struct rsp_hist_set *set;
	const struct rsp_hist_profile *p;
	struct rsp_hist_stats hs;
	uint32_t ids[4], id;
	char name[64];

	rsp_hist_store__note_incomplete(st, OP_BLK, 3);
	rsp_hist_store__set_open(st, OP_BLK, 2);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, false, 0, 0);
	p = find(set, RSP_HSUBJ_SYSTEM, 0, "blk_service:254:0");
	assert_non_null(p); /* shown although nothing completed visibly */
	assert_int_equal(p->count, 0);
	assert_int_equal(p->incomplete, 3);
	assert_int_equal(p->open, 2);
	rsp_hist_set__delete(set);
	id = rsp_hist_store__irq_name_id(st, "virtio1-req.0", 13);
	assert_int_not_equal(id, 0);
	assert_int_equal(rsp_hist_store__irq_name_id(st, "virtio1-req.0xyz", 13), id);
	rsp_hist_store__note_irq(st, 36, id);
	assert_int_equal(rsp_hist_store__irq_find(st, "36", ids, 4), 1);
	assert_int_equal(ids[0], id);
	assert_int_equal(rsp_hist_store__irq_find(st, "virtio1-req.0", ids, 4), 1);
	assert_int_equal(rsp_hist_store__irq_find(st, "nope", ids, 4), 0);
	assert_int_equal(rsp_hist_store__irq_find(st, "37", ids, 4), 0);
	assert_string_equal(
		rsp_hist_store__op_name(st, RSP_HIST_OP(RSP_HOP_IRQ, id), name, sizeof(name)),
		"irq:virtio1-req.0");
	assert_int_equal(rsp_hist_store__irq_name(st, id, name, sizeof(name)), 0);
	assert_int_equal(rsp_hist_store__irq_name(st, id + 1, name, sizeof(name)), -ENOENT);
	for (unsigned i = 0; i < RSP_HIST_MAX_IRQ_NAMES + 5; i++) {
		snprintf(name, sizeof(name), "irq%u", i);
		id = rsp_hist_store__irq_name_id(st, name, strlen(name));
	}
	assert_int_equal(id, 0); /* full: "(other)" */
	rsp_hist_store__note_gap(st, 5 * S, 7 * S, 10);
	rsp_hist_store__set_progress(st, 9 * S);
	rsp_hist_store__stats(st, &hs);
	assert_int_equal(hs.gaps, 1);
	assert_int_equal(hs.gap_ns, 2 * S);
	assert_int_equal(hs.progress, 9 * S);
	rsp_hist_store__delete(st);
}

static void test_op_table_full(void **state)
{
	struct rsp_hist_store *st = store(1, 16, 2, 4, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_stats hs;

	for (unsigned d = 0; d < RSP_HIST_MAX_OPS; d++)
		assert_int_equal(
			rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_BLK_QUEUE, d), S, 1, NULL), 0);
	assert_int_equal(rsp_hist_shard__add(sh, OP_RUNQ, S, 1, NULL), -ENOSPC);
	rsp_hist_store__stats(st, &hs);
	assert_int_equal(hs.dropped, 1);
	assert_int_equal(hs.ops, RSP_HIST_MAX_OPS);
	rsp_hist_store__delete(st);
}

/* ---- analyses ---------------------------------------------------------------------------- */

static void test_emd_chi2(void **state)
{
	const uint64_t same[3] = {0, 10, 0}, left[3] = {10, 0, 0}, right[3] = {0, 0, 10};
	const uint64_t a[3] = {5, 5, 0}, b[3] = {0, 5, 5}, empty[3] = {0, 0, 0};
	const uint64_t small[2] = {1, 0}, big[2] = {0, 100};
	const uint64_t c1[2] = {10, 0}, c2[2] = {0, 10}, c3[2] = {10, 10}, c4[2] = {20, 20};
	const uint64_t c5[2] = {30, 10}, c6[2] = {10, 30}, c7[2] = {4, 0}, c8[2] = {1, 1};
	int df;

	assert_near(rsp_hist__emd(same, same, 3), 0.0, 1e-12);
	assert_near(rsp_hist__emd(left, right, 3), 2.0, 1e-12);
	assert_near(rsp_hist__emd(right, left, 3), 2.0, 1e-12);
	assert_near(rsp_hist__emd(a, b, 3), 1.0, 1e-12);
	/* Normalised: masses may differ. */
	assert_near(rsp_hist__emd(small, big, 2), 1.0, 1e-12);
	assert_near(rsp_hist__emd(c3, c4, 2), 0.0, 1e-12);
	assert_true(rsp_hist__emd(empty, same, 3) < 0);
	assert_near(rsp_hist__chi2(c1, c2, 2, &df), 20.0, 1e-9);
	assert_int_equal(df, 1);
	assert_near(rsp_hist__chi2(c3, c4, 2, &df), 0.0, 1e-9);
	assert_near(rsp_hist__chi2(c5, c6, 2, &df), 20.0, 1e-9);
	/* R=4, S=2: (sqrt(1/2) 4 - sqrt(2) 1)^2 / 5 + (sqrt(2) 1)^2 / 1 = 0.4 + 2 */
	assert_near(rsp_hist__chi2(c7, c8, 2, &df), 2.4, 1e-9);
	assert_true(rsp_hist__chi2(empty, same, 3, &df) < 0);
}

static void test_percentiles(void **state)
{
	uint64_t b[RSP_HIST_MAX_BUCKETS] = {0};

	b[3] = 50; /* 4 .. 7 */
	b[5] = 50; /* 16 .. 31 */
	assert_int_equal(rsp_hist__percentile(b, 1, 100, 4, 31, 0.5), 7);
	assert_int_equal(rsp_hist__percentile(b, 1, 100, 4, 31, 0.51), 31);
	assert_int_equal(rsp_hist__percentile(b, 1, 100, 4, 20, 0.99), 20); /* capped at max */
	assert_int_equal(rsp_hist__percentile(b, 1, 100, 6, 20, 0.0), 7);
	assert_int_equal(rsp_hist__percentile(b, 1, 0, 0, 0, 0.5), 0);
	memset(b, 0, sizeof(b));
	b[0] = 1;
	assert_int_equal(rsp_hist__percentile(b, 2, 1, 0, 0, 0.99), 0);
}

static void test_peaks(void **state)
{
	uint64_t b[RSP_HIST_MAX_BUCKETS] = {0};
	struct rsp_hist_peak pk[8];
	struct rsp_hist_peak_config c;

	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 0);
	/* Sleeps of 1 ms and 8 ms: buckets 21 and 23, an empty one between. */
	b[21] = 100;
	b[23] = 95;
	b[24] = 5;
	b[27] = 1; /* one stray, under 1%: noise */
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 2);
	assert_int_equal(pk[0].lo, 21);
	assert_int_equal(pk[0].hi, 21);
	assert_int_equal(pk[0].count, 100);
	assert_int_equal(pk[1].lo, 23);
	assert_int_equal(pk[1].hi, 24);
	assert_int_equal(pk[1].mode, 23);
	assert_int_equal(pk[1].count, 100);
	assert_near(pk[0].share, 100.0 / 201, 1e-9);
	assert_near(pk[0].mean_ns, rsp_hist__bucket_mid(21, 1), 1e-6);
	assert_true(pk[0].mean_ns > 1048576 && pk[0].mean_ns < 2097152);
	/* A shallow valley does not split. */
	memset(b, 0, sizeof(b));
	b[10] = 100;
	b[11] = 80;
	b[12] = 90;
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 1);
	assert_int_equal(pk[0].lo, 10);
	assert_int_equal(pk[0].hi, 12);
	assert_int_equal(pk[0].mode, 10);
	/* A deep one does; the valley belongs to neither. */
	b[11] = 20;
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 2);
	assert_int_equal(pk[0].hi, 10);
	assert_int_equal(pk[1].lo, 12);
	assert_int_equal(pk[0].count + pk[1].count, 190);
	/* Three maxima, the middle one shallowly separated from the right. */
	memset(b, 0, sizeof(b));
	b[5] = 100;
	b[6] = 10;
	b[7] = 60;
	b[8] = 50;
	b[9] = 70;
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 2);
	assert_int_equal(pk[1].lo, 7);
	assert_int_equal(pk[1].hi, 9);
	assert_int_equal(pk[1].mode, 9);
	/* More peaks than room: the count is still right. */
	memset(b, 0, sizeof(b));
	for (unsigned i = 0; i < 10; i++)
		b[2 + 3 * i] = 10;
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 4), 10);
	rsp_hist_peak_config__init(&c);
	c.min_share = 0.2; /* every bucket is 10% now: all noise */
	assert_int_equal(rsp_hist__peaks(b, 1, &c, pk, 4), 0);
	/* Tails: 1 ms sleeps, two of which ended just under 2^20 ns; a straggler between. */
	memset(b, 0, sizeof(b));
	b[20] = 2;
	b[21] = 198;
	b[22] = 1;
	b[23] = 200;
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 2);
	assert_int_equal(pk[0].lo, 20);
	assert_int_equal(pk[0].hi, 21);
	assert_int_equal(pk[0].count, 200);
	assert_int_equal(pk[1].lo, 23); /* the valley (22) is neither's */
	assert_int_equal(pk[1].count, 200);
	/* A run of noise joining two peaks: each takes its side, not the lowest bucket. */
	memset(b, 0, sizeof(b));
	b[10] = 500;
	b[11] = 4;
	b[12] = 1;
	b[13] = 1;
	b[14] = 3;
	b[15] = 500;
	b[16] = 2; /* a tail */
	b[18] = 3; /* after an empty bucket: not a tail, noise */
	assert_int_equal(rsp_hist__peaks(b, 1, NULL, pk, 8), 2);
	assert_int_equal(pk[0].hi, 11);
	assert_int_equal(pk[0].count, 504);
	assert_int_equal(pk[1].lo, 13);
	assert_int_equal(pk[1].hi, 16);
	assert_int_equal(pk[1].count, 506);
}

/* ---- comparing sets -------------------------------------------------------------------- */

static struct rsp_hist_profile *add_profile(struct rsp_hist_set *s, const char *op, unsigned bucket,
					    uint64_t count, uint64_t per)
{
	struct rsp_hist_subject sys = {.kind = RSP_HSUBJ_SYSTEM};
	struct rsp_hist_profile *p = rsp_hist_set__get(s, &sys, op);

	assert_non_null(p);
	p->buckets[bucket] += count;
	p->count += count;
	p->sum += count * per;
	p->min = p->max = per;
	return p;
}

static void test_three_phase(void **state)
{
	struct rsp_hist_set *base = rsp_hist_set__new(1), *cur = rsp_hist_set__new(1);
	struct rsp_hist_diff *d;

	/* similar: same shape, total within 10% */
	add_profile(base, "softirq:TIMER", 12, 1000, 300000);
	add_profile(cur, "softirq:TIMER", 12, 1050, 300000);
	/* tiny: too few operations */
	add_profile(base, "irq:i8042", 10, 1, 1000000);
	add_profile(cur, "irq:i8042", 20, 5, 100000000);
	/* tiny: under 1% of the latency */
	add_profile(base, "softirq:RCU", 8, 100, 200);
	add_profile(cur, "softirq:RCU", 12, 100, 4000);
	/* moved one bucket up, total doubled */
	add_profile(base, "runq", 14, 1000, 100000);
	add_profile(cur, "runq", 15, 1000, 200000);
	/* moved four buckets up */
	add_profile(base, "blk_service:254:0", 16, 500, 40000);
	add_profile(cur, "blk_service:254:0", 20, 500, 640000);
	/* appeared */
	add_profile(cur, "offcpu:lock", 20, 300, 1000000);
	/* vanished */
	add_profile(base, "offcpu:poll", 25, 100, 20000000);
	/* grew from 2 operations (under min_count, 10): too thin to compare shapes */
	add_profile(base, "offcpu:pipe", 18, 2, 200000);
	add_profile(cur, "offcpu:pipe", 18, 2000, 200000);
	assert_int_equal(rsp_hist__compare(base, cur, NULL, &d), 0);
	assert_int_equal(d->n, 8);
	assert_int_equal(d->selected, 5);
	assert_int_equal(d->similar, 1);
	assert_int_equal(d->tiny, 2);
	/* Appeared/vanished/too thin first, by change in total; then by EMD. */
	assert_string_equal(d->v[0].base->op_name, "offcpu:poll");
	assert_null(d->v[0].cur);
	assert_true(d->v[0].lopsided);
	assert_string_equal(d->v[1].cur->op_name, "offcpu:pipe");
	assert_near(d->v[1].emd, 0.0, 1e-9); /* the same shape, yet it ranks high */
	assert_true(d->v[1].lopsided);
	assert_string_equal(d->v[2].cur->op_name, "offcpu:lock");
	assert_null(d->v[2].base);
	assert_true(d->v[2].emd < 0);
	assert_string_equal(d->v[3].cur->op_name, "blk_service:254:0");
	assert_near(d->v[3].emd, 4.0, 1e-9);
	assert_true(d->v[3].peaks_moved);
	assert_false(d->v[3].lopsided);
	assert_string_equal(d->v[4].cur->op_name, "runq");
	assert_near(d->v[4].emd, 1.0, 1e-9);
	assert_int_equal(d->v[4].peaks_base, 1);
	assert_int_equal(d->v[4].count_cur, 1000);
	assert_int_equal(d->v[4].total_cur, 200000000);
	assert_int_equal(d->v[5].verdict, RSP_HV_SIMILAR);
	assert_int_equal(d->v[6].verdict, RSP_HV_TINY);
	rsp_hist_diff__delete(d);
	/* Resolutions must agree. */
	rsp_hist_set__delete(base);
	base = rsp_hist_set__new(2);
	assert_int_equal(rsp_hist__compare(base, cur, NULL, &d), -EINVAL);
	rsp_hist_set__delete(base);
	rsp_hist_set__delete(cur);
}

static struct rsp_hist_profile *add_proc(struct rsp_hist_set *s, uint32_t pid, const char *op,
					 unsigned bucket, uint64_t count, uint64_t per)
{
	struct rsp_hist_subject p = {.kind = RSP_HSUBJ_PROCESS, .pid = pid};
	struct rsp_hist_profile *v = rsp_hist_set__get(s, &p, op);

	assert_non_null(v);
	v->buckets[bucket] += count;
	v->count += count;
	v->sum += count * per;
	v->min = v->max = per;
	return v;
}

/*
 * Phase 1's "tiny" is a share of the pair's own subject: with per-process
 * profiles, a process whose lock waits appeared (4747 waits, 0.76 s) is
 * selected though the machine's idle sleeps (an idle pool, 1000 s) dwarf
 * it; a process's own small op beside its big one stays tiny; the share is
 * settable.
 */
static void test_three_phase_by_subject(void **state)
{
	struct rsp_hist_set *base = rsp_hist_set__new(1), *cur = rsp_hist_set__new(1);
	struct rsp_hist_cmp_config c;
	struct rsp_hist_diff *d;

	add_proc(base, 10, "offcpu:poll", 30, 1000, 1000000000);
	add_proc(cur, 10, "offcpu:poll", 30, 1000, 1000000000);
	add_proc(cur, 20, "offcpu:lock", 17, 4747, 160000);
	add_proc(base, 20, "runq", 20, 1000, 1000000);
	add_proc(cur, 20, "runq", 20, 1000, 1000000);
	add_proc(base, 20, "blk_service:254:0", 10, 100, 1000);
	add_proc(cur, 20, "blk_service:254:0", 12, 100, 4000);
	assert_int_equal(rsp_hist__compare(base, cur, NULL, &d), 0);
	assert_int_equal(d->n, 4);
	assert_int_equal(d->selected, 1);
	assert_string_equal(d->v[0].cur->op_name, "offcpu:lock");
	assert_int_equal(d->v[0].verdict, RSP_HV_SELECTED);
	assert_int_equal(d->similar, 2);
	assert_int_equal(d->tiny, 1); /* 20's disk: 0.4 ms of its 1.76 s */
	rsp_hist_diff__delete(d);
	rsp_hist_cmp_config__init(&c);
	c.min_latency_share = 0;
	assert_int_equal(rsp_hist__compare(base, cur, &c, &d), 0);
	assert_int_equal(d->selected, 2);
	assert_int_equal(d->tiny, 0);
	rsp_hist_diff__delete(d);
	rsp_hist_set__delete(base);
	rsp_hist_set__delete(cur);
}

/*
 * A profile in the baseline that the store has since evicted into "other"
 * is not known to be gone: the pair says so (unsure), the set carries its
 * evictions (and keeps them through a saved file), and a store that
 * evicted nothing still says "gone".
 */
static void test_evicted_unsure(void **state)
{
	struct rsp_hist_store *st = store(1, 64, 10, 256, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_who w = {.tgid = 7, .tid = 7, .comm = "early", .comm_len = 5};
	const unsigned procs = 1u << RSP_HSUBJ_PROCESS;
	struct rsp_buf json = RSP_BUF_INIT, err = RSP_BUF_INIT, text = RSP_BUF_INIT;
	struct rsp_hist_set *base, *cur, *back;
	struct rsp_hist_diff *d;

	for (int i = 0; i < 100; i++)
		rsp_hist_shard__add(sh, OP_LOCK, 1 * S, 1000000, &w);
	base = collect(st, procs, false, 0, 0);
	assert_int_equal(base->evictions, 0);
	assert_non_null(find(base, RSP_HSUBJ_PROCESS, 7, "offcpu:lock"));
	/* 200 other processes: pid 7 is evicted into "other" */
	forkbomb(sh, 0, 200, 2 * S);
	cur = collect(st, procs, false, 0, 0);
	assert_null(find(cur, RSP_HSUBJ_PROCESS, 7, "offcpu:lock"));
	assert_true(cur->evictions > 0);
	assert_int_equal(rsp_hist_set__folded(cur), cur->evictions);
	assert_int_equal(rsp_hist__compare(base, cur, NULL, &d), 0);
	assert_int_equal(d->folded_cur, cur->evictions);
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].base && d->v[i].base->subject.pid == 7) {
			assert_null(d->v[i].cur);
			assert_true(d->v[i].unsure);
		} else {
			assert_false(d->v[i].unsure); /* present on both sides, or new */
		}
	assert_int_equal(rsp_hist_diff__render_text(d, "b", "c", 0, &text), 0);
	assert_non_null(strstr(text.data, "EMD gone (or in 'other'),"));
	assert_non_null(strstr(text.data, "a subject absent\n  there may be in it"));
	assert_null(strstr(text.data, "EMD gone,"));
	rsp_hist_diff__delete(d);
	/* The other way round: new in @cur, where the baseline evicted. */
	assert_int_equal(rsp_hist__compare(cur, base, NULL, &d), 0);
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].cur && d->v[i].cur->subject.pid == 7)
			assert_true(d->v[i].unsure);
	rsp_hist_diff__delete(d);
	/* Kept through a saved file. */
	assert_int_equal(rsp_hist_set__render_json(cur, 0, &json), 0);
	assert_int_equal(rsp_hist_set__load_json(json.data, json.len, "x", &back, &err), 0);
	assert_int_equal(back->evictions, cur->evictions);
	rsp_hist_set__delete(back);
	/* Nothing evicted: "gone" is known. */
	cur->evictions = 0;
	assert_int_equal(rsp_hist__compare(base, cur, NULL, &d), 0);
	for (size_t i = 0; i < d->n; i++)
		assert_false(d->v[i].unsure);
	rsp_buf__reset(&text);
	assert_int_equal(rsp_hist_diff__render_text(d, "b", "c", 0, &text), 0);
	assert_null(strstr(text.data, "'other'"));
	assert_non_null(strstr(text.data, "EMD gone,"));
	rsp_hist_diff__delete(d);
	rsp_hist_set__delete(base);
	rsp_hist_set__delete(cur);
	rsp_hist_store__delete(st);
	rsp_buf__exit(&json);
	rsp_buf__exit(&err);
	rsp_buf__exit(&text);
}

static void test_fold_and_sort(void **state)
{
	struct rsp_hist_set *s = rsp_hist_set__new(2);
	struct rsp_hist_profile *p = add_profile(s, "runq", 7, 3, 9); /* [8, 11] */

	add_profile(s, "offcpu:lock", 1, 1, 1);
	p = add_profile(s, "runq", 8, 2, 13); /* [12, 15] */
	assert_int_equal(p->count, 5);
	rsp_hist_set__fold(s);
	assert_int_equal(s->resolution, 1);
	p = rsp_hist_set__find(s, &(struct rsp_hist_subject){.kind = RSP_HSUBJ_SYSTEM}, "runq");
	assert_int_equal(p->buckets[4], 5); /* r=1 [8, 15] */
	assert_int_equal(p->buckets[7], 0);
	rsp_hist_set__sort(s, 1);
	assert_int_equal(s->n, 1);
	assert_string_equal(s->v[0].op_name, "runq");
	assert_non_null(rsp_hist_set__find(s, &s->v[0].subject, "runq"));
	rsp_hist_set__delete(s);
}

/* ---- baselines -------------------------------------------------------------------------- */

static void assert_same_profile(const struct rsp_hist_profile *a, const struct rsp_hist_profile *b)
{
	assert_true(rsp_hist__subject_equal(&a->subject, &b->subject));
	assert_string_equal(a->subject.comm, b->subject.comm);
	assert_int_equal(a->subject.pid, b->subject.pid);
	assert_string_equal(a->op_name, b->op_name);
	assert_int_equal(RSP_HIST_OP_KIND(a->op), RSP_HIST_OP_KIND(b->op));
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->sum, b->sum);
	assert_int_equal(a->min, b->min);
	assert_int_equal(a->max, b->max);
	assert_int_equal(a->incomplete, b->incomplete);
	assert_memory_equal(a->buckets, b->buckets, sizeof(a->buckets));
}

static void roundtrip(unsigned r)
{
	struct rsp_hist_store *st = store(r, 64, 10, 16, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_who w = {.tgid = 42, .tid = 43, .comm = "saver", .comm_len = 5};
	struct rsp_buf json = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_hist_set *a, *b;

	rsp_hist_shard__add(sh, OP_LOCK, 3 * S, 0, &w);
	rsp_hist_shard__add(sh, OP_LOCK, 3 * S, 1, &w);
	rsp_hist_shard__add(sh, OP_LOCK, 3 * S, 123456789, &w);
	rsp_hist_shard__add(sh, OP_BLK, 3 * S, UINT64_MAX / 4, &w); /* past INT64_MAX / 2 */
	rsp_hist_shard__add(sh, OP_RUNQ, 4 * S, 1ull << 63, NULL);
	rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_SOFTIRQ, 3), 4 * S, 77, NULL);
	rsp_hist_store__note_incomplete(st, OP_BLK, 4);
	a = collect(st, ~0u, false, 0, 0);
	assert_int_equal(rsp_hist_set__render_json(a, 0, &json), 0);
	assert_int_equal(rsp_hist_set__load_json(json.data, json.len, "baseline t.json", &b, &err),
			 0);
	assert_int_equal(b->resolution, r);
	assert_int_equal(b->n, a->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct rsp_hist_profile *q =
			rsp_hist_set__find(b, &a->v[i].subject, a->v[i].op_name);

		assert_non_null(q);
		assert_same_profile(&a->v[i], q);
	}
	rsp_hist_set__delete(a);
	rsp_hist_set__delete(b);
	/* Rows too. */
	rsp_buf__reset(&json);
	a = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 0, 5 * S);
	rsp_hist_set__delete(a);
	{
		struct rsp_hist_query q = {.subjects = 1u << RSP_HSUBJ_SYSTEM,
					   .pid = -1,
					   .tid = -1,
					   .ranged = true,
					   .to = 5 * S,
					   .rows = true};

		assert_int_equal(rsp_hist_store__collect(st, &q, &a, &err), 0);
	}
	assert_int_equal(rsp_hist_set__render_json(a, RSP_HIST_R_ROWS, &json), 0);
	assert_int_equal(rsp_hist_set__load_json(json.data, json.len, "x", &b, &err), 0);
	assert_true(b->ranged);
	for (size_t i = 0; i < a->n; i++) {
		const struct rsp_hist_profile *q =
			rsp_hist_set__find(b, &a->v[i].subject, a->v[i].op_name);

		assert_int_equal(q->nr_rows, a->v[i].nr_rows);
		for (size_t j = 0; j < q->nr_rows; j++) {
			assert_int_equal(q->rows[j].start, a->v[i].rows[j].start);
			assert_int_equal(q->rows[j].count, a->v[i].rows[j].count);
			assert_memory_equal(q->rows[j].buckets, a->v[i].rows[j].buckets,
					    rsp_hist__nr_buckets(r) * sizeof(uint64_t));
		}
	}
	rsp_hist_set__delete(a);
	rsp_hist_set__delete(b);
	rsp_buf__exit(&json);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/*
 * min and stddev: exact from the sums, whatever slices and shards the
 * values went to; a saved baseline keeps the stddev.
 */
static void test_stddev(void **state)
{
	struct rsp_hist_store *st = store(1, 16, 10, 16, 2);
	struct rsp_buf json = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_hist_who w = {.tgid = 7, .tid = 7, .comm = "x", .comm_len = 1};
	const struct rsp_hist_profile *p, *q;
	struct rsp_hist_set *set, *back;

	/* 1000, 2000, 3000, 4000 ns over two shards and two slices: sd = sqrt(1.25e6) */
	for (unsigned i = 0; i < 4; i++)
		rsp_hist_shard__add(rsp_hist_store__shard(st, i % 2), OP_LOCK, (i / 2) * S,
				    1000 * (i + 1), &w);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 0, 5 * S);
	p = find(set, RSP_HSUBJ_SYSTEM, 0, "offcpu:lock");
	assert_non_null(p);
	assert_int_equal(p->min, 1000);
	assert_true(fabs(rsp_hist_profile__stddev(p) - sqrt(1.25e6)) < 1e-6);
	assert_int_equal(rsp_hist_set__render_text(set, 0, &json), 0);
	assert_non_null(strstr(json.data, "min 1 us, mean 2.5 us, stddev 1.12 us"));
	rsp_buf__reset(&json);
	assert_int_equal(rsp_hist_set__render_json(set, 0, &json), 0);
	assert_int_equal(rsp_hist_set__load_json(json.data, json.len, "x", &back, &err), 0);
	q = find(back, RSP_HSUBJ_SYSTEM, 0, "offcpu:lock");
	assert_true(fabs(rsp_hist_profile__stddev(q) - sqrt(1.25e6)) < 1e-6);
	/* one value: no spread */
	rsp_hist_set__delete(set);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 0, 1 * S - 1);
	p = find(set, RSP_HSUBJ_SYSTEM, 0, "offcpu:lock");
	assert_non_null(p);
	assert_int_equal(p->count, 2);
	assert_true(fabs(rsp_hist_profile__stddev(p) - 500.0) < 1e-6);
	rsp_hist_set__delete(set);
	rsp_hist_set__delete(back);
	rsp_buf__exit(&json);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/*
 * Two latencies of about a second, 3 ns apart: the sum of squares (2e18)
 * leaves the variance (2.25) to rounding, which gave a stddev of 11 ns,
 * more than the spread; a baseline saved from it did not load back (seen
 * with clock_nanosleep's syscall profile). A stddev is at most half the
 * spread, and the JSON round trip loads.
 */
static void test_stddev_rounding(void **state)
{
	struct rsp_hist_store *st = store(1, 16, 10, 16, 1);
	struct rsp_buf json = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_hist_who w = {.tgid = 7, .tid = 7, .comm = "x", .comm_len = 1};
	const struct rsp_hist_profile *p;
	struct rsp_hist_set *set, *back;

	(void)state;
	rsp_hist_shard__add(rsp_hist_store__shard(st, 0), OP_LOCK, 0, 1000000011ull, &w);
	rsp_hist_shard__add(rsp_hist_store__shard(st, 0), OP_LOCK, 0, 1000000014ull, &w);
	set = collect(st, 1u << RSP_HSUBJ_SYSTEM, true, 0, 5 * S);
	p = find(set, RSP_HSUBJ_SYSTEM, 0, "offcpu:lock");
	assert_non_null(p);
	assert_true(rsp_hist_profile__stddev(p) <= 1.5);
	assert_int_equal(rsp_hist_set__render_json(set, 0, &json), 0);
	assert_int_equal(rsp_hist_set__load_json(json.data, json.len, "x", &back, &err), 0);
	p = find(back, RSP_HSUBJ_SYSTEM, 0, "offcpu:lock");
	assert_true(rsp_hist_profile__stddev(p) <= 1.5);
	rsp_hist_set__delete(set);
	rsp_hist_set__delete(back);
	rsp_buf__exit(&json);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

static void test_baseline_roundtrip(void **state)
{
	roundtrip(1);
	roundtrip(2);
}

#define GOOD_PROFILE                                                                               \
	"{\"subject\": {\"kind\": \"system\"}, \"op\": \"runq\", \"count\": 3, \"sum_ns\": 30, "   \
	"\"min_ns\": 8, \"max_ns\": 12, \"buckets\": [{\"bucket\": 4, \"low_ns\": 8, "             \
	"\"high_ns\": 15, \"count\": 3}]}"

static void expect_bad(const char *text, const char *why)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_set *s = (void *)1;

	assert_int_equal(rsp_hist_set__load_json(text, strlen(text), "baseline b.json", &s, &err),
			 -EINVAL);
	assert_null(s);
	assert_non_null(err.data);
	if (!strstr(err.data, why) || strncmp(err.data, "baseline b.json: ", 17))
		fail_msg("'%s' does not say '%s'", err.data, why);
	assert_null(strchr(err.data, '\n'));
	rsp_buf__exit(&err);
}

static void test_baseline_corrupt(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_set *s;
	const char *good = "{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, "
			   "\"profiles\": [" GOOD_PROFILE "]}";

	assert_int_equal(rsp_hist_set__load_json(good, strlen(good), "b", &s, &err), 0);
	assert_int_equal(s->v[0].count, 3);
	rsp_hist_set__delete(s);
	rsp_buf__exit(&err);
	expect_bad("", "not valid JSON");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resol", "not valid JSON");
	expect_bad("[1, 2]", "not a latency profile file");
	expect_bad("{\"format\": \"perf\", \"version\": 1}", "not a latency profile file");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 9, \"resolution\": 1}", "newer rspctl");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 3, "
		   "\"profiles\": []}",
		   "'resolution' is not 1 or 2");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1}",
		   "'profiles' is missing");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"alien\"}, \"op\": \"runq\"}]}",
		   "profile 1: unknown subject kind 'alien'");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"system\"}, \"op\": \"frob:1\"}]}",
		   "'frob:1' is not an operation");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"system\"}, \"op\": \"runq\", \"count\": 3, "
		   "\"sum_ns\": 30, \"min_ns\": 8, \"max_ns\": 12, \"buckets\": [{\"bucket\": 4, "
		   "\"low_ns\": 9, \"high_ns\": 15, \"count\": 3}]}]}",
		   "bounds are not those of resolution 1");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"system\"}, \"op\": \"runq\", \"count\": 4, "
		   "\"sum_ns\": 30, \"min_ns\": 8, \"max_ns\": 12, \"buckets\": [{\"bucket\": 4, "
		   "\"low_ns\": 8, \"high_ns\": 15, \"count\": 3}]}]}",
		   "'count' is 4 but its buckets hold 3");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"system\"}, \"op\": \"runq\", \"count\": -3}]}",
		   "not a non-negative integer");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[" GOOD_PROFILE ", " GOOD_PROFILE "]}",
		   "profile 2: a second profile of runq");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"system\"}, \"op\": \"runq\", \"count\": 3, "
		   "\"sum_ns\": 30, \"min_ns\": 1, \"max_ns\": 12, \"buckets\": [{\"bucket\": 4, "
		   "\"low_ns\": 8, \"high_ns\": 15, \"count\": 3}]}]}",
		   "min_ns and max_ns");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"process\"}, \"op\": \"runq\"}]}",
		   "'pid' is missing");
	expect_bad("{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, \"profiles\": "
		   "[{\"subject\": {\"kind\": \"system\"}, \"op\": \"blk_service:vda\"}]}",
		   "MAJOR:MINOR");
}

/* ---- text under 80 columns ----------------------------------------------------------------- */

static void assert_narrow(const char *text)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len >= 80)
			fail_msg("line of %zu columns: %.*s", len, (int)len, line);
		line = nl ? nl + 1 : NULL;
	}
}

static void test_render(void **state)
{
	struct rsp_hist_store *st = store(2, 64, 10, 16, 1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_who w = {
		.tgid = 4194304, .tid = 4194303, .comm = "a-long-comm-nam", .comm_len = 15};
	struct rsp_hist_query q = {
		.subjects = ~0u, .pid = -1, .tid = -1, .ranged = true, .to = 10 * S, .rows = true};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_hist_set *set;
	struct rsp_hist_diff *d;

	for (unsigned i = 0; i < 64; i++) {
		rsp_hist_shard__add(sh, OP_LOCK, (i % 8) * S, 1ull << i, &w);
		rsp_hist_shard__add(sh, OP_LOCK, (i % 8) * S, (1ull << i) + 3, &w);
	}
	rsp_hist_shard__add(sh, OP_LOCK, 1 * S, UINT64_MAX, &w);
	rsp_hist_shard__add(sh, RSP_HIST_OP(RSP_HOP_BLK_QUEUE, 259u << 20 | 65535), 2 * S, 40, &w);
	rsp_hist_store__note_incomplete(st, OP_BLK, 12345);
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
	rsp_hist_set__sort(set, 0);
	assert_int_equal(rsp_hist_set__render_text(set, RSP_HIST_R_ROWS, &out), 0);
	assert_narrow(out.data);
	assert_non_null(strstr(out.data, "nsecs"));
	assert_non_null(strstr(out.data, "18446744073709551615"));
	assert_non_null(strstr(out.data, "heat map"));
	assert_non_null(strstr(out.data, "|*"));
	assert_int_equal(rsp_hist__compare(set, set, NULL, &d), 0);
	rsp_buf__reset(&out);
	assert_int_equal(rsp_hist_diff__render_text(d, "baseline /tmp/b.json (1.000 .. 2.000)",
						    "now (3.000 .. 4.000)", 3, &out),
			 0);
	assert_narrow(out.data);
	rsp_hist_diff__delete(d);
	rsp_hist_set__delete(set);
	/* Cumulative, with an unobserved-completion note. */
	set = collect(st, ~0u, false, 0, 0);
	rsp_buf__reset(&out);
	rsp_hist_set__render_text(set, 0, &out);
	assert_narrow(out.data);
	assert_non_null(strstr(out.data, "12345 requests without an observed completion"));
	rsp_hist_set__delete(set);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

/* Each subject's label, whole (headings, JSON) and short (a table's column),
 * from rsp_hist_subject__format() alone: printed once here, each checked. */
static void test_subject_labels(void **state)
{
	static const struct {
		struct rsp_hist_subject s;
		const char *whole, *column;
	} cases[] = {
		{{.kind = RSP_HSUBJ_SYSTEM}, "system", "system"},
		{{.kind = RSP_HSUBJ_PROCESS, .pid = 12, .comm = "make"},
		 "process 12 (make)",
		 "pid 12 make"},
		{{.kind = RSP_HSUBJ_THREAD, .pid = 12, .tid = 13, .comm = "cc1"},
		 "thread 13 (cc1) of 12",
		 "tid 13 cc1"},
		{{.kind = RSP_HSUBJ_PROCESS, .pid = 12, .comm = "su", .other_user = true},
		 "pid 12 (other user)",
		 "pid 12 (other user)"},
		{{.kind = RSP_HSUBJ_THREAD, .pid = 12, .tid = 13, .comm = "su", .other_user = true},
		 "thread 13 of pid 12 (other user)",
		 "tid 13 (other user)"},
		/* names are escaped: a terminal escape or a newline reaches no terminal */
		{{.kind = RSP_HSUBJ_COMM, .comm = "esc\x1b]0"},
		 "comm esc\\x1b]0",
		 "comm esc\\x1b]0"},
		{{.kind = RSP_HSUBJ_PROCESS, .pid = 5, .comm = "a\nb"},
		 "process 5 (a\\nb)",
		 "pid 5 a\\nb"},
		{{.kind = RSP_HSUBJ_OTHER_PROCESS}, "other processes", "other procs"},
		{{.kind = RSP_HSUBJ_OTHER_THREAD}, "other threads", "other threads"},
		{{.kind = RSP_HSUBJ_CGROUP,
		  .cgroup = "/system.slice/docker-"
			    "0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef.scope"},
		 "cgroup /system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef"
		 "0123456789abcdef.scope",
		 "docker:0123456789ab"},
		{{.kind = RSP_HSUBJ_CGROUP, .cgroup = "(other user)"},
		 "(other user)",
		 "(other user)"},
		{{.kind = RSP_HSUBJ_CGROUP}, "(unknown)", "(unknown)"},
	};
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *whole = rsp_hist_subject__format(&cases[i].s, 0, buf, sizeof(buf));

		printf("%-34s | ", whole);
		assert_string_equal(whole, cases[i].whole);
		printf("%s\n", rsp_hist_subject__format(&cases[i].s, 24, buf, sizeof(buf)));
		assert_string_equal(buf, cases[i].column);
	}
}

static void test_names(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_subject s = {.kind = RSP_HSUBJ_THREAD, .pid = 1, .tid = 2};
	const char *arg;
	unsigned kind;
	uint32_t num, dev;
	bool has;
	char buf[64];

	strcpy(s.comm, "x");
	assert_string_equal(rsp_hist_subject__format(&s, 0, buf, sizeof(buf)), "thread 2 (x) of 1");
	assert_int_equal(rsp_hist__parse_op("offcpu:lock", &kind, &arg, &num, &has, &err), 0);
	assert_int_equal(kind, RSP_HOP_OFFCPU);
	assert_int_equal(num, RSP_SR_LOCK);
	assert_int_equal(rsp_hist__parse_op("softirq:net_rx", &kind, &arg, &num, &has, &err), 0);
	assert_int_equal(num, 3);
	assert_int_equal(rsp_hist__parse_op("softirq:9", &kind, &arg, &num, &has, &err), 0);
	assert_int_equal(num, 9);
	assert_int_equal(rsp_hist__parse_op("irq:virtio1-req.0", &kind, &arg, &num, &has, &err), 0);
	assert_string_equal(arg, "virtio1-req.0");
	assert_false(has);
	assert_int_equal(rsp_hist__parse_op("runq", &kind, &arg, &num, &has, &err), 0);
	assert_null(arg);
	assert_int_equal(rsp_hist__parse_op("runq:1", &kind, &arg, &num, &has, &err), -EINVAL);
	assert_int_equal(rsp_hist__parse_op("offcpu:nap", &kind, &arg, &num, &has, &err), -EINVAL);
	assert_int_equal(rsp_hist__parse_op("softirq:10", &kind, &arg, &num, &has, &err), -EINVAL);
	assert_int_equal(rsp_hist__parse_op("blk_service:", &kind, &arg, &num, &has, &err),
			 -EINVAL);
	assert_int_equal(rsp_hist__parse_op("latency", &kind, &arg, &num, &has, &err), -EINVAL);
	assert_non_null(strstr(err.data, "unknown operation 'latency'"));
	assert_int_equal(rsp_hist__dev_parse("254:3", &dev), 0);
	assert_int_equal(dev, 254u << 20 | 3);
	assert_int_equal(rsp_hist__dev_parse("4096:0", &dev), -EINVAL);
	assert_int_equal(rsp_hist__dev_parse("../x", &dev), -EINVAL);
	assert_int_equal(rsp_hist__dev_parse("no-such-disk", &dev), -ENOENT);
	rsp_hist__op_name(RSP_HOP_BLK_QUEUE, 8u << 20 | 16, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "blk_queue:8:16");
	assert_string_equal(rsp_hist__fmt_ns(812, buf, sizeof(buf)), "812 ns");
	assert_string_equal(rsp_hist__fmt_ns(1.05e6, buf, sizeof(buf)), "1.05 ms");
	assert_string_equal(rsp_hist__fmt_ns(2.31e9, buf, sizeof(buf)), "2.31 s");
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_r1),
		cmocka_unit_test(test_bucket_r2),
		cmocka_unit_test(test_store_config),
		cmocka_unit_test(test_store_subjects),
		cmocka_unit_test(test_shards_concurrent),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_eviction_recent),
		cmocka_unit_test(test_slices),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_op_table_full),
		cmocka_unit_test(test_emd_chi2),
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_peaks),
		cmocka_unit_test(test_three_phase),
		cmocka_unit_test(test_three_phase_by_subject),
		cmocka_unit_test(test_evicted_unsure),
		cmocka_unit_test(test_fold_and_sort),
		cmocka_unit_test(test_stddev),
		cmocka_unit_test(test_stddev_rounding),
		cmocka_unit_test(test_baseline_roundtrip),
		cmocka_unit_test(test_baseline_corrupt),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_subject_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
