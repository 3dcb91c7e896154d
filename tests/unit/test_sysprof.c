// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the syscall profiles' library side (rsp/sysprof.h) and of
 * the store's batches: syscall names both ways (libseccomp), the BPF
 * side's bucket function against the library's, the merge of per-CPU
 * values (as bpf_map_lookup_elem() lays them out), deltas (wrapping 32-bit
 * buckets, exact and bounded extremes), the reader's bound, the fold to
 * r=1, and batches in the store with their off-CPU sums (cumulative, in
 * slices, in JSON).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/buf.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include <rsp/sysprof.h>
#include "tracepoints/bpf_syscalls.h"

#define S	 1000000000ull
#define OP_FSYNC RSP_HIST_OP(RSP_HOP_SYSCALL, 74)

static void test_names(void **state)
{
	char buf[64];
	uint32_t nr;

	(void)state;
	/* x86-64's table (asm/unistd_64.h): read 0, write 1, fsync 74, nanosleep 35 */
	assert_string_equal(rsp_syscall__name(0), "read");
	assert_string_equal(rsp_syscall__name(74), "fsync");
	assert_null(rsp_syscall__name(4000));
	rsp_syscall__op_name(35, buf, sizeof(buf));
	assert_string_equal(buf, "syscall:nanosleep");
	rsp_syscall__op_name(999, buf, sizeof(buf));
	assert_string_equal(buf, "syscall:999");
	assert_int_equal(rsp_syscall__parse("fsync", &nr), 0);
	assert_int_equal(nr, 74);
	assert_int_equal(rsp_syscall__parse("467", &nr), 0);
	assert_int_equal(nr, 467);
	assert_int_equal(rsp_syscall__parse("nosuchcall", &nr), -ENOENT);
	assert_int_equal(rsp_syscall__parse("4096", &nr), -ENOENT);
	assert_int_equal(rsp_syscall__parse("", &nr), -ENOENT);
	/* both directions from the one source (libseccomp), x86-64's numbers */
	static const struct {
		const char *name;
		uint32_t nr;
	} known[] = {{"read", 0}, {"fsync", 74}, {"nanosleep", 35}, {"clock_nanosleep", 230}};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		assert_int_equal(rsp_syscall__parse(known[i].name, &nr), 0);
		assert_int_equal(nr, known[i].nr);
		assert_string_equal(rsp_syscall__name(known[i].nr), known[i].name);
	}
	/* a name of another ABI only (i386's socketcall): not one of this machine */
	assert_int_equal(rsp_syscall__parse("socketcall", &nr), -ENOENT);
	assert_int_equal(rsp_syscall__parse("clock_nanosleep2", &nr), -ENOENT);
}

static void test_op_parse(void **state)
{
	struct rsp_hist_store *st;
	struct rsp_hist_config c;
	char buf[64];

	(void)state;
	rsp_hist_config__init(&c);
	st = rsp_hist_store__new(&c);
	assert_non_null(st);
	rsp_hist_store__op_name(st, OP_FSYNC, buf, sizeof(buf));
	assert_string_equal(buf, "syscall:fsync");
	assert_string_equal(rsp_hist__op_kind_name(RSP_HOP_SYSCALL), "syscall");
	rsp_hist_store__delete(st);
}

static void test_bpf_bucket(void **state)
{
	(void)state;
	for (unsigned k = 0; k < 64; k++) {
		uint64_t v = 1ull << k;
		uint64_t probe[] = {v,
				    v + 1,
				    v - 1,
				    v + v / 3,
				    v + (v >> 1),
				    v * 2 - 1,
				    (uint64_t)((double)v * 1.41421356)};

		for (unsigned i = 0; i < sizeof(probe) / sizeof(probe[0]); i++)
			assert_int_equal(rsp_sc__bucket(probe[i]), rsp_hist__bucket(probe[i], 2));
	}
	assert_int_equal(rsp_sc__bucket(0), 0);
	assert_int_equal(rsp_sc__bucket(UINT64_MAX), rsp_hist__bucket(UINT64_MAX, 2));
	/* 1 ms is in the upper half of the octave [2^19, 2^20) */
	assert_int_equal(rsp_sc__bucket(1000000), 1 + 2 * 19 + 1);
}

/* Two CPUs' values, laid out as a per-CPU lookup returns them (stride 8-aligned). */
struct two_cpus {
	struct rsp_sc_val v[2];
};

static void fill(struct rsp_sc_val *v, uint64_t count, uint64_t lat, uint64_t off, const char *comm)
{
	memset(v, 0, sizeof(*v));
	v->count = count;
	v->sum = count * lat;
	v->offcpu = count * off;
	v->sq = count * ((lat + 8) >> RSP_SC_SQ_SHIFT) * ((lat + 8) >> RSP_SC_SQ_SHIFT);
	v->min = v->max = count ? lat : 0;
	if (comm)
		strncpy(v->comm, comm, sizeof(v->comm) - 1);
	v->b[rsp_sc__bucket(lat)] = (uint32_t)count;
}

static void test_merge_cpus(void **state)
{
	struct two_cpus c;
	struct rsp_sysprof_sum s;

	(void)state;
	assert_int_equal(sizeof(struct rsp_sc_val) % 8, 0);
	fill(&c.v[0], 0, 0, 0, NULL); /* a CPU that never ran the key */
	fill(&c.v[1], 3, 1000, 600, "worker");
	rsp_sysprof__merge_cpus(&c, 2, sizeof(c.v[0]), &s);
	assert_int_equal(s.count, 3);
	assert_int_equal(s.min, 1000);
	assert_string_equal(s.comm, "worker");
	fill(&c.v[0], 2, 5000, 5000, "worker");
	rsp_sysprof__merge_cpus(&c, 2, sizeof(c.v[0]), &s);
	assert_int_equal(s.count, 5);
	assert_int_equal(s.sum, 3000 + 10000);
	assert_int_equal(s.offcpu, 1800 + 10000);
	assert_int_equal(s.min, 1000);
	assert_int_equal(s.max, 5000);
	assert_int_equal(s.b[rsp_sc__bucket(1000)], 3);
	assert_int_equal(s.b[rsp_sc__bucket(5000)], 2);
	/* 32-bit buckets add modulo 2^32, as the kernel's wrap */
	c.v[0].b[7] = UINT32_MAX;
	c.v[1].b[7] = 2;
	rsp_sysprof__merge_cpus(&c, 2, sizeof(c.v[0]), &s);
	assert_int_equal(s.b[7], 1);
	/* nothing on any CPU: min reads 0 */
	fill(&c.v[0], 0, 0, 0, NULL);
	fill(&c.v[1], 0, 0, 0, NULL);
	rsp_sysprof__merge_cpus(&c, 2, sizeof(c.v[0]), &s);
	assert_int_equal(s.count, 0);
	assert_int_equal(s.min, 0);
}

static void sum_of(struct rsp_sysprof_sum *s, uint32_t tid, uint32_t nr, uint64_t count,
		   uint64_t lat)
{
	struct rsp_sc_val v;

	fill(&v, count, lat, lat / 2, "w");
	rsp_sysprof__merge_cpus(&v, 1, sizeof(v), s);
	s->tgid = tid;
	s->tid = tid;
	s->nr = nr;
}

/*
 * A call of 70 s (its square capped near 2^64) and one of 5 ms between two
 * reads: the kernel's u64 sum of squares wraps; the delta is corrected to
 * the true sum (stddev ~35 s, not 0).
 */
static void test_delta_sq_wrap(void **state)
{
	struct rsp_sysprof *sp = rsp_sysprof__new(4);
	uint64_t q1 = 0xffffffffull, q2 = (5000000ull + 8) >> RSP_SC_SQ_SHIFT;
	struct rsp_sysprof_sum cur;
	struct rsp_sysprof_delta d;
	double want = ((double)q1 * (double)q1 + (double)q2 * (double)q2) *
		      (double)(1u << (2 * RSP_SC_SQ_SHIFT));
	double mean, var;

	(void)state;
	assert_non_null(sp);
	sum_of(&cur, 3, 7, 1, 1000); /* a first call of 1 us: the key is known */
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	cur.count += 2;
	cur.sum += 70000000000ull + 5000000ull;
	cur.sq += q1 * q1 + q2 * q2; /* wraps modulo 2^64, as the kernel's */
	assert_true(cur.sq < q1 * q1);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.count, 2);
	assert_true(d.sumsq > want * 0.999 && d.sumsq < want * 1.001);
	mean = (double)d.sum / 2;
	var = d.sumsq / 2 - mean * mean;
	assert_true(var > 0 && sqrt(var) > 30e9 && sqrt(var) < 40e9);
	rsp_sysprof__delete(sp);
}

static void test_delta(void **state)
{
	struct rsp_sysprof *sp = rsp_sysprof__new(4);
	struct rsp_sysprof_sum cur;
	struct rsp_sysprof_delta d;
	unsigned b1 = rsp_sc__bucket(1000), b4 = rsp_sc__bucket(4000);

	(void)state;
	assert_non_null(sp);
	sum_of(&cur, 10, 74, 0, 0);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 0); /* nothing yet */
	assert_int_equal(rsp_sysprof__nr_keys(sp), 0);
	sum_of(&cur, 10, 74, 5, 1000);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1); /* a new key: all of it */
	assert_int_equal(d.count, 5);
	assert_int_equal(d.sum, 5000);
	assert_int_equal(d.offcpu, 2500);
	assert_int_equal(d.min, 1000);
	assert_int_equal(d.max, 1000);
	assert_int_equal(d.b[b1], 5);
	assert_true(d.sumsq > 5 * 900.0 * 900.0 && d.sumsq < 5 * 1100.0 * 1100.0);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 0); /* read again: nothing new */
	/* three more calls of 4000 ns: a new max, exact */
	cur.count += 3;
	cur.sum += 12000;
	cur.offcpu += 0;
	cur.max = 4000;
	cur.b[b4] += 3;
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.count, 3);
	assert_int_equal(d.sum, 12000);
	assert_int_equal(d.offcpu, 0);
	assert_int_equal(d.max, 4000);
	assert_int_equal(d.b[b1], 0);
	assert_int_equal(d.b[b4], 3);
	/* no new extreme: the delta's min is its lowest bucket's bound (>= the key's min) */
	assert_true(d.min >= rsp_hist__bucket_low(b4, 2) && d.min <= 4000);
	/* two more of 1000 ns: min bounded below by the key's min, max by the bucket */
	cur.count += 2;
	cur.sum += 2000;
	cur.b[b1] += 2;
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.min, 1000);
	assert_int_equal(d.max, rsp_hist__bucket_high(b1, 2));
	/* a bucket that wrapped around 2^32 between two reads */
	cur.b[b1] = 1;
	cur.count += (uint64_t)UINT32_MAX - 7 + 1 + 1; /* b1 was 7: +2^32 - 6 calls */
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.b[b1], (uint64_t)UINT32_MAX - 5);
	/* a count that went down: the key was made again without forget */
	cur.count = 1;
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), -EINVAL);
	rsp_sysprof__delete(sp);
}

static void test_bound(void **state)
{
	struct rsp_sysprof *sp = rsp_sysprof__new(2);
	struct rsp_sysprof_sum cur;
	struct rsp_sysprof_delta d;

	(void)state;
	assert_null(rsp_sysprof__new(0));
	assert_non_null(sp);
	sum_of(&cur, 1, 0, 1, 100);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	sum_of(&cur, 1, 1, 1, 100);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	sum_of(&cur, 2, 0, 1, 100);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), -ENOSPC); /* full: refused */
	assert_int_equal(rsp_sysprof__nr_keys(sp), 2);
	/* an exited thread's key forgotten: room for a new one, which starts from 0 */
	assert_int_equal(rsp_sysprof__forget(sp, 1, 1, 0), 0);
	assert_int_equal(rsp_sysprof__forget(sp, 1, 1, 0), -ENOENT);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.count, 1);
	sum_of(&cur, 1, 0, 4, 100); /* tid 1 nr 0 again (tid reused): all of it is new */
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), -ENOSPC);
	rsp_sysprof__delete(sp);

	/*
	 * Tid 7 of process 5 exited but its key lingers while tid 7 is reused in
	 * process 9: two kernel keys with one tid, each read against its own
	 * previous read (100 and 150 calls: 250 added, not 100 + 50 + 150).
	 */
	sp = rsp_sysprof__new(4);
	assert_non_null(sp);
	sum_of(&cur, 7, 3, 100, 100);
	cur.tgid = 5;
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.count, 100);
	sum_of(&cur, 7, 3, 150, 100);
	cur.tgid = 9;
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 1);
	assert_int_equal(d.count, 150);
	assert_int_equal(rsp_sysprof__nr_keys(sp), 2);
	/* the sweep forgets process 5's key only: process 9's next read adds nothing */
	assert_int_equal(rsp_sysprof__forget(sp, 5, 7, 3), 0);
	assert_int_equal(rsp_sysprof__delta(sp, &cur, &d), 0);
	rsp_sysprof__delete(sp);
	rsp_sysprof__delete(NULL);
}

static void test_fold(void **state)
{
	struct rsp_sysprof_delta d = {.count = 3, .sum = 10, .min = 1, .max = 6, .offcpu = 4};
	uint64_t b[RSP_HIST_MAX_BUCKETS];
	struct rsp_hist_batch bt;

	(void)state;
	d.b[rsp_hist__bucket(5, 2)] = 1;
	d.b[rsp_hist__bucket(6, 2)] = 1;
	d.b[rsp_hist__bucket(1, 2)] = 1;
	rsp_sysprof_delta__batch(&d, 1, b, &bt);
	assert_int_equal(b[rsp_hist__bucket(5, 1)], 2); /* 5 and 6 share [4, 7] at r=1 */
	assert_int_equal(b[rsp_hist__bucket(1, 1)], 1);
	assert_int_equal(bt.count, 3);
	assert_int_equal(bt.offcpu, 4);
	rsp_sysprof_delta__batch(&d, 2, b, &bt);
	assert_int_equal(b[rsp_hist__bucket(5, 2)], 1);
	assert_int_equal(b[rsp_hist__bucket(6, 2)], 1);
}

static struct rsp_hist_profile *find(struct rsp_hist_set *s, enum rsp_hist_subject_kind k)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].subject.kind == k)
			return &s->v[i];
	return NULL;
}

static void test_store_batch(void **state)
{
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;
	struct rsp_hist_set *set = NULL;
	struct rsp_hist_query q = {.subjects = 1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS |
					       1u << RSP_HSUBJ_THREAD,
				   .pid = -1,
				   .tid = -1};
	struct rsp_hist_who who = {.tgid = 7, .tid = 8, .comm = "fsyncer", .comm_len = 7};
	uint64_t b[RSP_HIST_MAX_BUCKETS] = {0};
	struct rsp_hist_batch bt = {
		.count = 4, .sum = 4000000, .min = 900000, .max = 1100000, .offcpu = 3000000};
	struct rsp_hist_profile *p;
	struct rsp_hist_stats stats;
	struct rsp_buf err = RSP_BUF_INIT, out = RSP_BUF_INIT;

	(void)state;
	rsp_hist_config__init(&c);
	st = rsp_hist_store__new(&c);
	sh = rsp_hist_store__shard(st, 0);
	b[rsp_hist__bucket(900000, 1)] = 2;
	b[rsp_hist__bucket(1100000, 1)] = 2;
	bt.buckets = b;
	bt.sumsq = 4e12;
	assert_int_equal(rsp_hist_shard__add_batch(sh, OP_FSYNC, 5 * S, &bt, &who), 0);
	assert_int_equal(rsp_hist_shard__add_batch(sh, OP_FSYNC, 6 * S, &bt, &who), 0);
	bt.count = 0; /* an empty batch changes nothing */
	assert_int_equal(rsp_hist_shard__add_batch(sh, OP_FSYNC, 6 * S, &bt, &who), 0);
	rsp_hist_store__stats(st, &stats);
	assert_int_equal(stats.updates, 8);
	/* cumulative */
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
	assert_int_equal(set->n, 3);
	p = find(set, RSP_HSUBJ_THREAD);
	assert_non_null(p);
	assert_string_equal(p->op_name, "syscall:fsync");
	assert_string_equal(p->subject.comm, "fsyncer");
	assert_int_equal(p->count, 8);
	assert_int_equal(p->offcpu, 6000000);
	assert_int_equal(p->min, 900000);
	assert_int_equal(p->max, 1100000);
	assert_int_equal(find(set, RSP_HSUBJ_SYSTEM)->offcpu, 6000000);
	/* JSON: the off-CPU sum and share, and back */
	assert_int_equal(rsp_hist_set__render_json(set, 0, &out), 0);
	assert_non_null(strstr(out.data, "\"offcpu_ns\": 6000000"));
	assert_non_null(strstr(out.data, "\"offcpu_share\": 0.75"));
	rsp_hist_set__delete(set);
	set = NULL;
	assert_int_equal(rsp_hist_set__load_json(out.data, out.len, "saved", &set, &err), 0);
	assert_int_equal(find(set, RSP_HSUBJ_PROCESS)->offcpu, 6000000);
	rsp_hist_set__delete(set);
	set = NULL;
	/* a saved file whose off-CPU time exceeds its total is refused, named */
	{
		char *at = strstr(out.data, "\"offcpu_ns\": 6000000");

		at[strlen("\"offcpu_ns\": ")] = '9';
		assert_int_equal(rsp_hist_set__load_json(out.data, out.len, "saved", &set, &err),
				 -EINVAL);
		assert_non_null(strstr(err.data, "offcpu_ns"));
	}
	rsp_buf__reset(&out);
	/* text: the share beside the totals */
	q.subjects = 1u << RSP_HSUBJ_THREAD;
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
	assert_int_equal(rsp_hist_profile__render(&set->v[0], &out), 0);
	assert_non_null(strstr(out.data, "off-CPU 75%"));
	rsp_hist_set__delete(set);
	set = NULL;
	/* one slice: [6 s, 7 s) holds the second batch only */
	q.ranged = true;
	q.from = 6 * S;
	q.to = 7 * S - 1;
	assert_int_equal(rsp_hist_store__collect(st, &q, &set, &err), 0);
	assert_int_equal(set->n, 1);
	assert_int_equal(set->v[0].count, 4);
	assert_int_equal(set->v[0].offcpu, 3000000);
	rsp_hist_set__delete(set);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_store__delete(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),	      cmocka_unit_test(test_op_parse),
		cmocka_unit_test(test_bpf_bucket),    cmocka_unit_test(test_merge_cpus),
		cmocka_unit_test(test_delta),	      cmocka_unit_test(test_bound),
		cmocka_unit_test(test_delta_sq_wrap), cmocka_unit_test(test_fold),
		cmocka_unit_test(test_store_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
