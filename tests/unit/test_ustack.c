// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/stream/ustack_trim.c: samples built by hand with a user
 * stack copy (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER) of known
 * size and dyn_size, with and without fields after it, cut to dyn_size;
 * malformed ones refused. Records under test live in heap blocks of their
 * exact size, so that a read past one is an AddressSanitizer error.
 */
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
#include <rsp/ustack.h>

#define ID	   100
#define STACK	   64 /* bytes the kernel reserved (sample_stack_user) */
#define WEIGHT_V   0x1111
#define DATASRC_V  0x2222
#define BASIC_TYPE (RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

static struct rsp_schema *schema_for(uint64_t st)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {.size = sizeof(a)};

	a.sample_type = st;
	a.sample_id_all = 1;
	a.sample_regs_user = 0x7; /* three registers */
	a.sample_regs_intr = 0x3;
	a.sample_stack_user = STACK;
	assert_non_null(s);
	assert_int_equal(rsp_schema__add_evsel(s, &a, 0, RSP_ROLE_PRIMARY, "cpu-clock"), 0);
	assert_int_equal(rsp_schema__add_id(s, 0, ID), 0);
	return s;
}

struct rec {
	uint64_t w[64];
	unsigned n;
};

static void put(struct rec *r, uint64_t v)
{
	r->w[r->n++] = v;
}

/*
 * A sample of @st: head, a 2-entry callchain, then (with STACK_USER) three
 * registers and a @stack-byte copy of which @dyn bytes are valid (word i
 * of the stack is 0x5000 + i), then the fields after it that @st has.
 */
static void build(struct rec *r, uint64_t st, uint64_t stack, uint64_t dyn)
{
	struct perf_event_header hdr = {.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER};

	r->n = 1;
	put(r, ID);
	put(r, 0x401000);	  /* ip */
	put(r, 7 | (8ull << 32)); /* pid 7, tid 8 */
	put(r, 123456789);	  /* time */
	put(r, 1);		  /* cpu */
	put(r, 1000);		  /* period */
	put(r, 2);		  /* callchain */
	put(r, PERF_CONTEXT_USER);
	put(r, 0x401000);
	if (st & PERF_SAMPLE_REGS_USER) {
		put(r, PERF_SAMPLE_REGS_ABI_64);
		put(r, 0xa1);
		put(r, 0xa2);
		put(r, 0xa3);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		put(r, stack);
		for (uint64_t i = 0; i < stack / 8; i++)
			put(r, 0x5000 + i);
		if (stack)
			put(r, dyn);
	}
	if (st & PERF_SAMPLE_WEIGHT)
		put(r, WEIGHT_V);
	if (st & PERF_SAMPLE_DATA_SRC)
		put(r, DATASRC_V);
	if (st & PERF_SAMPLE_REGS_INTR) {
		put(r, PERF_SAMPLE_REGS_ABI_64);
		put(r, 0xb1);
		put(r, 0xb2);
	}
	hdr.size = (uint16_t)(r->n * 8);
	memcpy(r->w, &hdr, sizeof(hdr));
}

/* A heap copy of the first @bytes of @r, its header's size set to @bytes. */
static struct perf_event_header *exact(const struct rec *r, size_t bytes)
{
	struct perf_event_header *h = malloc(bytes);

	assert_non_null(h);
	memcpy(h, r->w, bytes);
	h->size = (uint16_t)bytes;
	return h;
}

/*
 * Trim a record of @st with @dyn valid bytes; check the result against what
 * the kernel would have written for a stack of dyn rounded up to 8, and
 * that it decodes to the same sample.
 */
static void check_trim(uint64_t st, uint64_t dyn)
{
	struct rsp_schema *s = schema_for(st);
	uint64_t keep = (dyn + 7) & ~7ull, out[64];
	struct rsp_sample a, b;
	struct rec r, want;
	struct perf_event_header *h;
	int n;

	build(&r, st, STACK, dyn);
	build(&want, st, keep, dyn);
	h = exact(&r, r.n * 8);
	n = rsp_ustack__trim(s, h, out, sizeof(out));
	assert_int_equal(n, want.n * 8);
	assert_int_equal(n, r.n * 8 - (STACK - keep) - (keep ? 0 : 8));
	assert_memory_equal(out, want.w, (size_t)n);
	assert_int_equal(rsp_record__parse_sample(s, h, &a), 0);
	assert_int_equal(rsp_record__parse_sample(s, (void *)out, &b), 0);
	assert_int_equal(b.time, a.time);
	assert_int_equal(b.tid, a.tid);
	assert_int_equal(b.nr_callchain, a.nr_callchain);
	assert_int_equal(b.nr_user_regs, 3);
	assert_memory_equal(b.user_regs, a.user_regs, 3 * 8);
	assert_int_equal(b.user_stack_size, dyn);
	assert_int_equal(a.user_stack_size, dyn);
	if (dyn)
		assert_memory_equal(b.user_stack, a.user_stack, dyn);
	else
		assert_null(b.user_stack);
	if (st & PERF_SAMPLE_REGS_INTR) {
		assert_int_equal(b.nr_intr_regs, 2);
		assert_int_equal(b.intr_regs[1], 0xb2);
	}
	free(h);
	rsp_schema__delete(s);
}

static void test_cut_to_dyn_size(void **state)
{
	(void)state;
	check_trim(BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 16);
	check_trim(BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 8);
}

/* WEIGHT, DATA_SRC and REGS_INTR come after the stack: they move with it. */
static void test_fields_after_the_stack(void **state)
{
	uint64_t st = BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
		      PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;

	(void)state;
	check_trim(st, 24);
	check_trim(st | PERF_SAMPLE_REGS_INTR, 24);
	check_trim(st | PERF_SAMPLE_REGS_INTR, 0);
}

/* dyn_size 0: the kernel's empty stack, size 0 and no dyn_size word. */
static void test_nothing_copied(void **state)
{
	(void)state;
	check_trim(BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 0);
	check_trim(BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
			   PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC,
		   0);
}

/* dyn_size 13: 16 bytes kept, dyn_size still 13 (what perf and rsp read). */
static void test_not_a_multiple_of_8(void **state)
{
	(void)state;
	check_trim(BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 13);
	check_trim(BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT,
		   1);
}

/* Nothing to cut: the caller stores the record itself, @out untouched. */
static void test_no_trim_needed(void **state)
{
	uint64_t st = BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct rsp_schema *s = schema_for(st), *plain = schema_for(BASIC_TYPE);
	uint64_t out[64], before[64];
	struct perf_event_header comm = {.type = PERF_RECORD_COMM, .size = 8};
	struct perf_event_header *h;
	struct rec r;

	(void)state;
	memset(out, 0x5a, sizeof(out));
	memcpy(before, out, sizeof(out));
	build(&r, st, STACK, STACK); /* dyn_size == size */
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), 0);
	free(h);
	build(&r, st, STACK, STACK - 3); /* rounds up to size */
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), 0);
	free(h);
	build(&r, st, 0, 0); /* a kernel thread: size 0 */
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), 0);
	free(h);
	build(&r, BASIC_TYPE, 0, 0); /* no STACK_USER */
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(plain, h, out, sizeof(out)), 0);
	free(h);
	assert_int_equal(rsp_ustack__trim(s, &comm, out, sizeof(out)), 0);
	assert_memory_equal(out, before, sizeof(out));
	rsp_schema__delete(s);
	rsp_schema__delete(plain);
}

static void test_malformed(void **state)
{
	uint64_t st =
		BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT;
	struct rsp_schema *s = schema_for(st);
	uint64_t out[64], before[64];
	struct perf_event_header *h;
	struct rec r;
	unsigned at;

	(void)state;
	memset(out, 0x5a, sizeof(out));
	memcpy(before, out, sizeof(out));
	/* dyn_size > size */
	build(&r, st, STACK, STACK + 8);
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), -EINVAL);
	free(h);
	/* size larger than the record, and not a multiple of 8 */
	build(&r, st, STACK, 8);
	at = 1 + 9 + 4; /* the size word: after the header, head and callchain, regs */
	assert_int_equal(r.w[at], STACK);
	r.w[at] = STACK + 8 * 20;
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), -EINVAL);
	free(h);
	r.w[at] = 12;
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), -EINVAL);
	free(h);
	r.w[at] = UINT64_MAX - 7;
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), -EINVAL);
	free(h);
	/* every truncation, in a block of its size: refused, nothing read past it */
	build(&r, st, STACK, 8);
	for (size_t bytes = 8; bytes < r.n * 8; bytes += 8) {
		h = exact(&r, bytes);
		assert_true(rsp_ustack__trim(s, h, out, sizeof(out)) < 0);
		free(h);
	}
	/* an unknown id */
	build(&r, st, STACK, 8);
	r.w[1] = ID + 1;
	h = exact(&r, r.n * 8);
	assert_int_equal(rsp_ustack__trim(s, h, out, sizeof(out)), -ENOENT);
	free(h);
	assert_memory_equal(out, before, sizeof(out));
	rsp_schema__delete(s);
}

/* A buffer too small for the trimmed record: refused, nothing written. */
static void test_small_buffer(void **state)
{
	uint64_t st = BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct rsp_schema *s = schema_for(st);
	uint64_t out[64];
	struct perf_event_header *h;
	struct rec r;
	int n;

	(void)state;
	build(&r, st, STACK, 16);
	h = exact(&r, r.n * 8);
	n = rsp_ustack__trim(s, h, out, sizeof(out));
	assert_true(n > 0);
	memset(out, 0x5a, sizeof(out));
	assert_int_equal(rsp_ustack__trim(s, h, out, (size_t)n - 8), -ENOSPC);
	assert_int_equal(out[0], 0x5a5a5a5a5a5a5a5aull);
	assert_int_equal(rsp_ustack__trim(s, h, out, (size_t)n), n);
	free(h);
	rsp_schema__delete(s);
}

/*
 * Records with one word, then two, overwritten by values that matter to
 * lengths (0, small, the stack's size, huge): never a read past the block
 * (ASan), and whatever is accepted decodes.
 */
static void test_corrupt_words(void **state)
{
	uint64_t st = BASIC_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
		      PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_REGS_INTR;
	static const uint64_t vals[] = {0, 1, 8, 16, 24, 63, 64, 72, 4096, UINT32_MAX, UINT64_MAX};
	struct rsp_schema *s = schema_for(st);
	uint64_t out[64];
	struct rsp_sample smp;
	struct rec r;

	(void)state;
	build(&r, st, STACK, 24);
	for (unsigned i = 1; i < r.n; i++) {
		for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++) {
			struct rec c = r;
			struct perf_event_header *h;
			int n;

			c.w[i] = vals[v];
			h = exact(&c, c.n * 8);
			n = rsp_ustack__trim(s, h, out, sizeof(out));
			if (n > 0) {
				assert_true(n < (int)h->size);
				assert_int_equal(rsp_record__parse_sample(s, (void *)out, &smp), 0);
			}
			free(h);
		}
	}
	rsp_schema__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_to_dyn_size),
		cmocka_unit_test(test_fields_after_the_stack),
		cmocka_unit_test(test_nothing_copied),
		cmocka_unit_test(test_not_a_multiple_of_8),
		cmocka_unit_test(test_no_trim_needed),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_small_buffer),
		cmocka_unit_test(test_corrupt_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
