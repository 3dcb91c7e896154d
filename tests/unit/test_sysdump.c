// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the syscall profiles' dump section (rsp/sysdump.h): a
 * store's slices written and loaded into another store give the same
 * profiles per slice (threads, processes, the system with calls of no
 * thread), r=2 folds into r=1, and a corrupt section is refused with one
 * sentence and adds nothing.
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
#include <rsp/buf.h>
#include <rsp/hist.h>
#include <rsp/sysdump.h>

#define S	     1000000000ull
#define OP(nr)	     RSP_HIST_OP(RSP_HOP_SYSCALL, nr)
#define SUBJ_ALL     (1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS | 1u << RSP_HSUBJ_THREAD)
#define OP_OTHERKIND RSP_HIST_OP(RSP_HOP_SOFTIRQ, 3)

static struct rsp_hist_store *store(unsigned r)
{
	struct rsp_hist_config c;

	rsp_hist_config__init(&c);
	c.resolution = r;
	return rsp_hist_store__new(&c);
}

static void batch(struct rsp_hist_store *st, uint64_t op, uint64_t time, uint32_t tid, uint64_t ns,
		  uint64_t n)
{
	const struct rsp_hist_config *c = rsp_hist_store__config(st);
	struct rsp_hist_who who = {.tgid = 100, .tid = tid, .comm = "worker", .comm_len = 6};
	uint64_t b[RSP_HIST_MAX_BUCKETS] = {0};
	struct rsp_hist_batch bt = {.count = n,
				    .sum = n * ns,
				    .min = ns,
				    .max = ns,
				    .offcpu = n * ns / 2,
				    .sumsq = (double)n * ns * ns,
				    .buckets = b};

	b[rsp_hist__bucket(ns, c->resolution)] = n;
	assert_int_equal(rsp_hist_shard__add_batch(rsp_hist_store__shard(st, 0), op, time, &bt,
						   tid ? &who : NULL),
			 0);
}

/* The slice of @time as text rows "kind pid tid op count sum min max offcpu b..." */
static void describe(struct rsp_hist_store *st, uint64_t time, struct rsp_buf *out)
{
	struct rsp_hist_query q = {.subjects = SUBJ_ALL,
				   .pid = -1,
				   .tid = -1,
				   .ranged = true,
				   .from = time,
				   .to = time};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_set *s = NULL;
	int ret = rsp_hist_store__collect(st, &q, &s, &err);

	rsp_buf__exit(&err);
	if (ret == -ERANGE) /* outside the slices kept: nothing */
		return;
	assert_int_equal(ret, 0);
	rsp_hist_set__fold(s);
	rsp_hist_set__sort(s, 0);
	for (size_t i = 0; i < s->n; i++) {
		const struct rsp_hist_profile *p = &s->v[i];

		rsp_buf__printf(out,
				"%d %u %u %s %s %llu %llu %llu %llu %llu %.0f:", p->subject.kind,
				p->subject.pid, p->subject.tid, p->subject.comm, p->op_name,
				(unsigned long long)p->count, (unsigned long long)p->sum,
				(unsigned long long)p->min, (unsigned long long)p->max,
				(unsigned long long)p->offcpu, p->sumsq);
		for (unsigned k = 0; k < RSP_HIST_NR_BUCKETS(1); k++)
			if (p->buckets[k])
				rsp_buf__printf(out, " %u=%llu", k,
						(unsigned long long)p->buckets[k]);
		rsp_buf__puts(out, "\n");
	}
	rsp_hist_set__delete(s);
}

static void fill(struct rsp_hist_store *st)
{
	batch(st, OP(35), 10 * S + 1, 101, 1100000, 30); /* nanosleep, thread 101 */
	batch(st, OP(35), 10 * S + 7, 102, 1100000, 10); /* and 102 */
	batch(st, OP(74), 10 * S + 9, 101, 40000, 5);	 /* fsync */
	batch(st, OP(35), 10 * S + 9, 0, 3000, 4);	 /* the system only */
	batch(st, OP(35), 12 * S + 5, 101, 2000000, 3);	 /* two slices later */
	batch(st, OP(35), 20 * S, 101, 5, 1);		 /* outside the range written */
}

static void round_trip(unsigned r)
{
	struct rsp_hist_store *a = store(r), *b = store(1);
	struct rsp_buf sec = RSP_BUF_INIT, err = RSP_BUF_INIT, x = RSP_BUF_INIT, y = RSP_BUF_INIT;
	uint64_t n = 0, m = 0;

	fill(a);
	assert_int_equal(rsp_sysdump__write(a, 9 * S, 13 * S, &sec, &n), 0);
	assert_int_equal(n, 5); /* 3 threads' + 1 system entry in slice 10, 1 in slice 12 */
	assert_memory_equal(sec.data, RSP_SYSDUMP_MAGIC, 8);
	assert_int_equal(rsp_sysdump__load(sec.data, sec.len, 0, b, &m, &err), 0);
	assert_int_equal(m, n);
	for (uint64_t t = 9; t <= 13; t++) {
		rsp_buf__reset(&x);
		rsp_buf__reset(&y);
		describe(a, t * S, &x);
		describe(b, t * S, &y);
		assert_string_equal(x.data ? x.data : "", y.data ? y.data : "");
	}
	rsp_buf__reset(&x);
	describe(b, 10 * S, &x);
	assert_non_null(strstr(x.data, "0 0 0  syscall:nanosleep 44 ")); /* system: 30+10+4 */
	assert_non_null(strstr(x.data, "1 100 0 worker syscall:nanosleep 40 "));
	/* outside the range: not written */
	rsp_buf__reset(&y);
	describe(b, 20 * S, &y);
	assert_true(!y.data || !y.len || !y.data[0]);
	rsp_buf__exit(&sec);
	rsp_buf__exit(&err);
	rsp_buf__exit(&x);
	rsp_buf__exit(&y);
	rsp_hist_store__delete(a);
	rsp_hist_store__delete(b);
}

static void test_round_trip_r1(void **state)
{
	(void)state;
	round_trip(1);
}

static void test_round_trip_r2(void **state)
{
	(void)state;
	round_trip(2); /* folded into the file's r=1 store */
}

static void test_empty(void **state)
{
	struct rsp_hist_store *a = store(1);
	struct rsp_buf sec = RSP_BUF_INIT;
	uint64_t n = 7;

	(void)state;
	batch(a, OP_OTHERKIND, 10 * S, 101, 1000, 3); /* not a syscall op */
	assert_int_equal(rsp_sysdump__write(a, 0, 100 * S, &sec, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sec.len, 0); /* no section at all */
	rsp_buf__exit(&sec);
	rsp_hist_store__delete(a);
}

/* Offsets in the section: header 32 bytes, entry 88, bucket 16. */
static void refused(const struct rsp_buf *good, size_t at, const void *v, size_t n,
		    const char *says)
{
	struct rsp_hist_store *b = store(1);
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_hist_stats st;
	char *copy = malloc(good->len);

	memcpy(copy, good->data, good->len);
	memcpy(copy + at, v, n);
	assert_int_equal(rsp_sysdump__load(copy, good->len, 0x1000, b, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.data, says));
	assert_null(strchr(err.data, '\n'));
	rsp_hist_store__stats(b, &st);
	assert_int_equal(st.updates, 0); /* nothing added */
	free(copy);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(b);
}

static void test_corrupt(void **state)
{
	struct rsp_hist_store *a = store(2), *b = store(1);
	struct rsp_buf sec = RSP_BUF_INIT, err = RSP_BUF_INIT;
	uint32_t u32;
	uint64_t u64;

	(void)state;
	fill(a);
	assert_int_equal(rsp_sysdump__write(a, 9 * S, 13 * S, &sec, NULL), 0);
	refused(&sec, 0, "XSPSYSC1", 8, "does not start with RSPSYSC1");
	u32 = 9;
	refused(&sec, 8, &u32, 4, "unknown version");
	refused(&sec, 12, &u32, 4, "neither 1 nor 2");
	u64 = 0;
	refused(&sec, 16, &u64, 8, "slice length is zero");
	u64 = 1ull << 40;
	refused(&sec, 24, &u64, 8, "more entries than");
	u64 = 4;
	refused(&sec, 24, &u64, 8, "bytes after the last entry");
	u32 = 5000;
	refused(&sec, 32 + 16, &u32, 4, "syscall number is out of range");
	u32 = 1000;
	refused(&sec, 32 + 20, &u32, 4, "more buckets than");
	u64 = 31;
	refused(&sec, 32 + 40, &u64, 8, "do not add up");
	u32 = 200;
	refused(&sec, 32 + 88, &u32, 4, "bucket is out of range");
	/* a truncated section */
	assert_int_equal(rsp_sysdump__load(sec.data, sec.len - 8, 0, b, NULL, &err), -EINVAL);
	rsp_buf__reset(&err);
	assert_int_equal(rsp_sysdump__load(sec.data, 16, 0, b, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.data, "shorter than its header"));
	rsp_buf__exit(&sec);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(a);
	rsp_hist_store__delete(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_r1),
		cmocka_unit_test(test_round_trip_r2),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
