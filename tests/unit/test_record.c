// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/stream/record.c and lib/stream/schema.c: sample layouts, trailers,
 * ids, and malformed records (the decoder reads untrusted dumps too). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include "internal/schema.h"

static struct rsp_schema *schema_with(uint64_t sample_type, int n, uint64_t regs_mask)
{
	struct rsp_schema *s = rsp_schema__new();

	for (int i = 0; i < n; i++) {
		struct perf_event_attr a = {.size = sizeof(a)};
		int idx;

		a.sample_type = sample_type;
		a.sample_id_all = 1;
		a.sample_regs_user = regs_mask;
		idx = rsp_schema__add_evsel(s, &a, i, RSP_ROLE_PRIMARY, "ev");
		assert_int_equal(idx, i);
		assert_int_equal(rsp_schema__add_id(s, idx, 100 + (uint64_t)i), 0);
	}
	return s;
}

/* A growable record being built word by word. */
struct rec {
	uint64_t w[256];
	unsigned n;
};

static void put(struct rec *r, uint64_t v)
{
	r->w[r->n++] = v;
}

static struct perf_event_header *finish(struct rec *r, uint32_t type)
{
	struct perf_event_header *h = (void *)r->w;

	h->type = type;
	h->misc = 0;
	h->size = (uint16_t)(r->n * 8);
	return h;
}

static void test_full_sample(void **state)
{
	uint64_t st = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		      PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct rsp_schema *s = schema_with(st, 2, 0x7);
	struct rec r = {.n = 1};
	struct rsp_sample smp;
	uint32_t rawsz = 12;

	put(&r, 101);		     /* identifier: evsel 1 */
	put(&r, 0xffffffff81000010); /* ip */
	put(&r, 7 | (8ull << 32));   /* pid 7, tid 8 */
	put(&r, 123456789);	     /* time */
	put(&r, 1);		     /* cpu */
	put(&r, 1000);		     /* period */
	put(&r, 3);		     /* callchain nr */
	put(&r, PERF_CONTEXT_KERNEL);
	put(&r, 0xffffffff81000020);
	put(&r, 0x400000);
	memcpy(&r.w[r.n], &rawsz, 4); /* raw: size 12, then 12 bytes -> 16, pad to 16 */
	memcpy((char *)&r.w[r.n] + 4, "abcdefghijkl", 12);
	r.n += 2;
	put(&r, PERF_SAMPLE_REGS_ABI_64);
	put(&r, 1);
	put(&r, 2);
	put(&r, 3);
	put(&r, 16); /* stack size */
	put(&r, 0xaaaa);
	put(&r, 0xbbbb);
	put(&r, 8); /* dyn size */
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp), 0);
	assert_int_equal(smp.evsel, 1);
	assert_int_equal(smp.event, 1);
	assert_int_equal(smp.id, 101);
	assert_int_equal(smp.pid, 7);
	assert_int_equal(smp.tid, 8);
	assert_int_equal(smp.time, 123456789);
	assert_int_equal(smp.cpu, 1);
	assert_int_equal(smp.period, 1000);
	assert_int_equal(smp.nr_callchain, 3);
	assert_int_equal(smp.callchain[2], 0x400000);
	assert_int_equal(smp.raw_size, 12);
	assert_memory_equal(smp.raw, "abcdefghijkl", 12);
	assert_int_equal(smp.nr_user_regs, 3);
	assert_int_equal(smp.user_regs[2], 3);
	assert_int_equal(smp.user_stack_size, 8);
	assert_int_equal(*(const uint64_t *)smp.user_stack, 0xaaaa);
	assert_int_equal(rsp_layout__time(finish(&r, PERF_RECORD_SAMPLE)), 123456789);
	assert_int_equal(rsp_layout__cpu(finish(&r, PERF_RECORD_SAMPLE)), 1);
	assert_int_equal(rsp_record__time(s, finish(&r, PERF_RECORD_SAMPLE)), 123456789);
	/* Every truncation is refused, never read past the end. */
	for (unsigned n = r.n - 1; n >= 1; n--) {
		struct rec t = r;

		t.n = n;
		assert_int_equal(rsp_record__parse_sample(s, finish(&t, PERF_RECORD_SAMPLE), &smp),
				 -EINVAL);
	}
	rsp_schema__delete(s);
}

static void test_malformed_lengths(void **state)
{
	uint64_t st = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	struct rsp_schema *s = schema_with(st, 1, 0);
	struct rec r = {.n = 1};
	struct rsp_sample smp;
	uint32_t huge = 0xfffffff0;

	put(&r, 100);
	put(&r, 0);
	put(&r, 0);
	put(&r, 1);
	put(&r, 0);
	put(&r, 1ull << 40); /* callchain nr far beyond the record */
	put(&r, 0);
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp),
			 -EINVAL);
	r.w[6] = 0; /* empty callchain, then a raw size beyond the record */
	memcpy(&r.w[7], &huge, 4);
	r.n = 8;
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp),
			 -EINVAL);
	/* Unknown id, wrong type, odd size. */
	r.w[1] = 999;
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp),
			 -ENOENT);
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_COMM), &smp), -EINVAL);
	finish(&r, PERF_RECORD_SAMPLE)->size = 20;
	assert_int_equal(rsp_record__parse_sample(s, (void *)r.w, &smp), -EINVAL);
	finish(&r, PERF_RECORD_SAMPLE)->size = 4;
	assert_int_equal(rsp_record__parse_sample(s, (void *)r.w, &smp), -EINVAL);
	rsp_schema__delete(s);
}

static void test_trailer(void **state)
{
	struct rsp_schema *s = schema_with(RSP_LAYOUT_SAMPLE_TYPE, 3, 0);
	struct rec r = {.n = 1};
	struct rsp_sample smp;

	/* PERF_RECORD_LOST {id, lost} + {tid, time, cpu, identifier} */
	put(&r, 0);
	put(&r, 17);
	put(&r, 5 | (6ull << 32));
	put(&r, 777);
	put(&r, 1);
	put(&r, 102);
	assert_int_equal(rsp_record__parse_id(s, finish(&r, PERF_RECORD_LOST), &smp),
			 RSP_SAMPLE_HAS_TID | RSP_SAMPLE_HAS_TIME | RSP_SAMPLE_HAS_CPU);
	assert_int_equal(smp.evsel, 2);
	assert_int_equal(smp.time, 777);
	assert_int_equal(smp.tid, 6);
	assert_int_equal(smp.cpu, 1);
	assert_int_equal(rsp_layout__time(finish(&r, PERF_RECORD_LOST)), 777);
	assert_int_equal(rsp_layout__cpu(finish(&r, PERF_RECORD_LOST)), 1);
	assert_int_equal(rsp_record__time(s, finish(&r, PERF_RECORD_LOST)), 777);
	r.w[r.n - 1] = 5555;
	assert_int_equal(rsp_record__parse_id(s, finish(&r, PERF_RECORD_LOST), &smp), -ENOENT);
	r.n = 2;
	assert_int_equal(rsp_record__parse_id(s, finish(&r, PERF_RECORD_LOST), &smp), -ENOENT);
	rsp_schema__delete(s);
}

/* perf record with a single event writes no identifier: the only evsel. */
static void test_single_evsel_without_identifier(void **state)
{
	struct rsp_schema *s =
		schema_with(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 1, 0);
	struct rec r = {.n = 1};
	struct rsp_sample smp;

	put(&r, 0x1234);
	put(&r, 1 | (2ull << 32));
	put(&r, 99);
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp), 0);
	assert_int_equal(smp.evsel, 0);
	assert_int_equal(smp.ip, 0x1234);
	assert_int_equal(smp.time, 99);
	rsp_schema__delete(s);
}

/* Several evsels without IDENTIFIER: the id sits after ip/tid/time. */
static void test_id_without_identifier(void **state)
{
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
		      PERF_SAMPLE_CPU;
	struct rsp_schema *s = schema_with(st, 2, 0);
	struct rec r = {.n = 1};
	struct rsp_sample smp;

	put(&r, 0x1234);
	put(&r, 1 | (2ull << 32));
	put(&r, 99);
	put(&r, 101);
	put(&r, 1);
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp), 0);
	assert_int_equal(smp.evsel, 1);
	assert_int_equal(smp.cpu, 1);
	/* trailer {tid, time, id, cpu} */
	r.n = 1;
	put(&r, 0);
	put(&r, 1 | (2ull << 32));
	put(&r, 55);
	put(&r, 100);
	put(&r, 0);
	assert_true(rsp_record__parse_id(s, finish(&r, PERF_RECORD_EXIT), &smp) > 0);
	assert_int_equal(smp.evsel, 0);
	assert_int_equal(smp.time, 55);
	rsp_schema__delete(s);
}

static void test_read_format_skipped(void **state)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {.size = sizeof(a)};
	struct rec r = {.n = 1};
	struct rsp_sample smp;

	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
			PERF_SAMPLE_CALLCHAIN;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
	assert_int_equal(rsp_schema__add_evsel(s, &a, -1, RSP_ROLE_PRIMARY, NULL), 0);
	rsp_schema__add_id(s, 0, 5);
	put(&r, 5);
	put(&r, 42);   /* time */
	put(&r, 2);    /* nr */
	put(&r, 1000); /* time_enabled */
	put(&r, 1);    /* value, id */
	put(&r, 5);
	put(&r, 2);
	put(&r, 6);
	put(&r, 1); /* callchain of 1 */
	put(&r, 0xabc);
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp), 0);
	assert_int_equal(smp.event, -1);
	assert_int_equal(smp.nr_callchain, 1);
	assert_int_equal(smp.callchain[0], 0xabc);
	rsp_schema__delete(s);
}

static void test_schema_api(void **state)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {
		.size = sizeof(a), .sample_type = RSP_LAYOUT_SAMPLE_TYPE, .sample_id_all = 1};

	assert_int_equal(rsp_schema__evsel_by_id(s, 1), -1);
	assert_int_equal(rsp_schema__add_evsel(s, &a, RSP_EV__NR, RSP_ROLE_PRIMARY, "x"), -EINVAL);
	for (int i = 0; i < RSP_SCHEMA_MAX_EVSELS; i++)
		assert_int_equal(rsp_schema__add_evsel(s, &a, 0, RSP_ROLE_STACK_COPY, "sw"), i);
	assert_int_equal(rsp_schema__add_evsel(s, &a, 0, RSP_ROLE_PRIMARY, "x"), -ENOSPC);
	/* Many ids: the map grows and keeps every one. */
	for (uint64_t id = 1; id <= 5000; id++)
		assert_int_equal(rsp_schema__add_id(s, (int)(id % RSP_SCHEMA_MAX_EVSELS), id), 0);
	for (uint64_t id = 1; id <= 5000; id++)
		assert_int_equal(rsp_schema__evsel_by_id(s, id), (int)(id % RSP_SCHEMA_MAX_EVSELS));
	assert_int_equal(rsp_schema__add_id(s, 0, 0), -EINVAL);
	/* the map's empty key, as a dump's sample may carry it: no evsel */
	assert_int_equal(rsp_schema__add_id(s, 0, UINT64_MAX), -EINVAL);
	assert_int_equal(rsp_schema__evsel_by_id(s, UINT64_MAX), -1);
	assert_int_equal(rsp_schema__evsel_by_id(s, 0), -1);
	assert_int_equal(rsp_schema__add_id(s, 999, 7), -EINVAL);
	assert_int_equal(rsp_schema__nr_evsels(s), RSP_SCHEMA_MAX_EVSELS);
	assert_string_equal(rsp_schema__evsel_name(s, 3), "sw");
	assert_int_equal(rsp_schema__evsel_role(s, 3), RSP_ROLE_STACK_COPY);
	assert_null(rsp_schema__evsel_attr(s, RSP_SCHEMA_MAX_EVSELS));
	assert_int_equal(rsp_layout__check(&a), 0);
	a.sample_type |= PERF_SAMPLE_ADDR;
	assert_int_equal(rsp_layout__check(&a), -EINVAL);
	rsp_schema__delete(s);
	rsp_schema__delete(NULL);
}

/* A sample of rsp's layout carrying @id, parsed: its evsel, or the error. */
static int evsel_of(const struct rsp_schema *s, uint64_t id)
{
	struct rec r = {.n = 1};
	struct rsp_sample smp;
	int err;

	put(&r, id);
	put(&r, 0x1000); /* ip */
	put(&r, 1 | (2ull << 32));
	put(&r, 42); /* time */
	put(&r, 0);  /* cpu */
	err = rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp);
	return err ? err : smp.evsel;
}

/*
 * Ids as streams have them, in runs (the kernel's, a dump's synthesized
 * ones near 0x5253 << 48), and scattered: the sample's evsel is the same
 * whether the id falls in one of the schema's direct tables (a few runs
 * of at most 65536 ids) or only in its map.
 */
static void test_ids_in_runs_and_scattered(void **state)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {
		.size = sizeof(a), .sample_type = RSP_LAYOUT_SAMPLE_TYPE, .sample_id_all = 1};
	const uint64_t runs[] = {258180,     0x5253000000000000ull, 7, 1ull << 40,
				 1ull << 50, UINT64_MAX - 3};
	uint64_t n = 0;

	for (int i = 0; i < 5; i++)
		assert_int_equal(rsp_schema__add_evsel(s, &a, 0, RSP_ROLE_PRIMARY, "e"), i);
	/* runs of 3 ids each, more runs than direct tables; one run grows downwards */
	for (unsigned r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
		for (uint64_t k = 0; k < 3; k++)
			assert_int_equal(rsp_schema__add_id(s, (int)((r + k) % 5), runs[r] + k), 0);
	assert_int_equal(rsp_schema__add_id(s, 4, 258179), 0);
	/* a run longer than a direct table */
	for (uint64_t id = 1000000; id < 1000000 + 70000; id++)
		assert_int_equal(rsp_schema__add_id(s, (int)(id % 5), id), 0);
	/* an id seen again for another evsel: the last one is kept */
	assert_int_equal(rsp_schema__add_id(s, 3, 258180), 0);
	for (unsigned r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
		for (uint64_t k = 0; k < 3; k++) {
			int want = r == 0 && k == 0 ? 3 : (int)((r + k) % 5);

			assert_int_equal(evsel_of(s, runs[r] + k), want);
			assert_int_equal(rsp_schema__evsel_by_id(s, runs[r] + k), want);
			n++;
		}
	assert_int_equal(evsel_of(s, 258179), 4);
	for (uint64_t id = 1000000; id < 1000000 + 70000; id++, n++)
		assert_int_equal(evsel_of(s, id), (int)(id % 5));
	assert_int_equal(n, 18 + 70000);
	/* ids no attr declares, inside and outside the runs */
	assert_int_equal(evsel_of(s, 258178), -ENOENT);
	assert_int_equal(evsel_of(s, 258183), -ENOENT);
	assert_int_equal(evsel_of(s, 10), -ENOENT);
	assert_int_equal(evsel_of(s, 0), -ENOENT);
	assert_int_equal(evsel_of(s, UINT64_MAX), -ENOENT);
	assert_int_equal(evsel_of(s, 1000000 + 70000), -ENOENT);
	/* the direct tables by decreasing base (the converted records' ids first) */
	assert_int_equal(s->nr_dense, RSP_SCHEMA_DENSE_RANGES);
	assert_true(s->dense[0].base <= 0x5253000000000000ull &&
		    s->dense[0].base > 0x5253000000000000ull - RSP_SCHEMA_DENSE_MAX);
	for (int r = 1; r < s->nr_dense; r++)
		assert_true(s->dense[r].base < s->dense[r - 1].base);
	rsp_schema__delete(s);
}

/*
 * The head's fields at the places sample_type gives them (ADDR, ID and
 * STREAM_ID between TIME and CPU), on a single evsel without IDENTIFIER,
 * and a callchain and raw data after them; every truncation refused.
 */
static void test_head_layout(void **state)
{
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
		      PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
		      PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {.size = sizeof(a), .sample_type = st, .sample_id_all = 1};
	struct rec r = {.n = 1};
	struct rsp_sample smp;
	uint32_t rawsz = 4;

	assert_int_equal(rsp_schema__add_evsel(s, &a, 2, RSP_ROLE_PRIMARY, "one"), 0);
	put(&r, 0x11);		   /* ip */
	put(&r, 5 | (6ull << 32)); /* pid 5, tid 6 */
	put(&r, 777);		   /* time */
	put(&r, 0xadd);		   /* addr */
	put(&r, 9);		   /* id */
	put(&r, 10);		   /* stream id */
	put(&r, 3);		   /* cpu */
	put(&r, 4000);		   /* period */
	put(&r, 2);		   /* callchain nr */
	put(&r, 0xc1);
	put(&r, 0xc2);
	memcpy(&r.w[r.n], &rawsz, 4);
	memcpy((char *)&r.w[r.n] + 4, "wxyz", 4);
	r.n++;
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp), 0);
	assert_int_equal(smp.evsel, 0);
	assert_int_equal(smp.event, 2);
	assert_int_equal(smp.ip, 0x11);
	assert_int_equal(smp.pid, 5);
	assert_int_equal(smp.tid, 6);
	assert_int_equal(smp.time, 777);
	assert_int_equal(smp.addr, 0xadd);
	assert_int_equal(smp.cpu, 3);
	assert_int_equal(smp.period, 4000);
	assert_int_equal(smp.nr_callchain, 2);
	assert_int_equal(smp.callchain[1], 0xc2);
	assert_int_equal(smp.raw_size, 4);
	assert_memory_equal(smp.raw, "wxyz", 4);
	assert_null(smp.user_regs);
	assert_null(smp.user_stack);
	for (unsigned n = r.n - 1; n >= 1; n--) {
		struct rec t = r;

		t.n = n;
		assert_int_equal(rsp_record__parse_sample(s, finish(&t, PERF_RECORD_SAMPLE), &smp),
				 -EINVAL);
	}
	r.w[9] = 3; /* a callchain over the raw data's word: no raw data left */
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp),
			 -EINVAL);
	r.w[9] = 2;
	rawsz = 5; /* raw data past the record */
	memcpy(&r.w[12], &rawsz, 4);
	assert_int_equal(rsp_record__parse_sample(s, finish(&r, PERF_RECORD_SAMPLE), &smp),
			 -EINVAL);
	rsp_schema__delete(s);
}

/*
 * rsp_record__place_sample() accepts what rsp_record__parse_sample()
 * accepts, with its time and CPU: @r, every truncation of it, and each
 * word in turn set to a length far past the record, or to 3.
 */
static void place_as_parse(const struct rsp_schema *s, const struct rec *r)
{
	for (unsigned n = r->n; n >= 1; n--)
		for (unsigned bad = 0; bad <= 2 * n; bad++) {
			struct rec t = *r;
			struct rsp_sample smp;
			uint64_t time = 0;
			uint32_t cpu = 0;
			int want;

			t.n = n;
			if (bad >= 2 && bad / 2 < n)
				t.w[bad / 2] = bad % 2 ? 3 : 1ull << 40;
			want = rsp_record__parse_sample(s, finish(&t, PERF_RECORD_SAMPLE), &smp);
			assert_int_equal(rsp_record__place_sample(s, finish(&t, PERF_RECORD_SAMPLE),
								  &time, &cpu),
					 want ? -1 : 0);
			if (!want) {
				assert_int_equal(time, smp.time);
				assert_int_equal(cpu, smp.cpu);
			}
		}
}

static void test_place_as_parse(void **state)
{
	uint64_t simple = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	struct rsp_schema *s = schema_with(simple, 2, 0);
	struct rsp_schema *regs = schema_with(simple | PERF_SAMPLE_REGS_USER, 1, 0x3);
	struct rec r = {.n = 1};
	uint32_t rawsz = 4;

	put(&r, 101);		   /* identifier: evsel 1 */
	put(&r, 0x11);		   /* ip */
	put(&r, 5 | (6ull << 32)); /* pid 5, tid 6 */
	put(&r, 777);		   /* time */
	put(&r, 1);		   /* cpu */
	put(&r, 2);		   /* callchain nr */
	put(&r, 0xc1);
	put(&r, 0xc2);
	memcpy(&r.w[r.n], &rawsz, 4);
	r.n++;
	place_as_parse(s, &r); /* the short way */
	r.w[1] = 100;
	put(&r, PERF_SAMPLE_REGS_ABI_64);
	put(&r, 1);
	put(&r, 2);
	place_as_parse(regs, &r); /* the full parse */
	r.w[1] = 999;		  /* no attr declares it */
	place_as_parse(s, &r);
	rsp_schema__delete(regs);
	rsp_schema__delete(s);
}

/* FORK, EXIT and COMM bodies: decoded in one place, short records refused. */
static void test_task_and_comm(void **state)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time, trailer[2];
	} fork = {{PERF_RECORD_FORK, 0, sizeof(fork)}, 10, 1, 11, 1, 777, {0, 0}};
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[24];
		uint64_t trailer;
	} comm = {{PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(comm)}, 10, 11, "", 0};
	struct rsp_task_rec k;
	struct rsp_comm_rec c;

	(void)state;
	assert_int_equal(rsp_record__task(&fork.h, &k), 0);
	assert_true(k.pid == 10 && k.ppid == 1 && k.tid == 11 && k.ptid == 1 && k.time == 777);
	fork.h.type = PERF_RECORD_EXIT;
	assert_int_equal(rsp_record__task(&fork.h, &k), 0);
	fork.h.size = sizeof(fork.h) + 16; /* no time */
	assert_int_equal(rsp_record__task(&fork.h, &k), -EINVAL);
	assert_int_equal(rsp_record__task(&comm.h, &k), -EINVAL); /* another type */

	memcpy(comm.comm, "postgres", 9);
	assert_int_equal(rsp_record__comm(&comm.h, &c), 0);
	assert_true(c.pid == 10 && c.tid == 11 && c.exec);
	assert_int_equal(c.len, 8);
	assert_memory_equal(c.comm, "postgres", 8);
	/* no NUL in the record's bytes: at most 16, never past the record */
	memset(comm.comm, 'x', sizeof(comm.comm));
	assert_int_equal(rsp_record__comm(&comm.h, &c), 0);
	assert_int_equal(c.len, 16);
	comm.h.size = sizeof(comm.h) + 8 + 5;
	assert_int_equal(rsp_record__comm(&comm.h, &c), 0);
	assert_int_equal(c.len, 5);
	comm.h.size = sizeof(comm.h) + 4;
	assert_int_equal(rsp_record__comm(&comm.h, &c), -EINVAL);
	assert_int_equal(rsp_record__comm(&fork.h, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_sample),
		cmocka_unit_test(test_malformed_lengths),
		cmocka_unit_test(test_trailer),
		cmocka_unit_test(test_single_evsel_without_identifier),
		cmocka_unit_test(test_id_without_identifier),
		cmocka_unit_test(test_read_format_skipped),
		cmocka_unit_test(test_schema_api),
		cmocka_unit_test(test_ids_in_runs_and_scattered),
		cmocka_unit_test(test_head_layout),
		cmocka_unit_test(test_place_as_parse),
		cmocka_unit_test(test_task_and_comm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
