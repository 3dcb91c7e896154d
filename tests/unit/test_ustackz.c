// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks compressed in the window (rsp/ustackz.h) on samples this test
 * builds: rsp's layout, then REGS_USER, STACK_USER and (in one schema) a
 * WEIGHT after the stack, as the kernel writes them.
 *
 * Known answers: a packed sample is smaller, decodes as the same sample with
 * its stack's bytes inflated back exactly, and expands to the sample the
 * kernel would have written with dyn_size bytes asked for (the fields after
 * the stack kept); a sample with nothing to gain is left alone; a damaged
 * ZSAMPLE is refused without reading past it (ASan).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/unwind.h>
#include <rsp/ustackz.h>

#define ID	77
#define NR_REGS 17
#define CAP	(UINT16_MAX + 1)

static struct rsp_schema *schema(bool weight)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
			(weight ? PERF_SAMPLE_WEIGHT : 0);
	a.sample_regs_user = RSP_UNWIND_REGS_MASK;
	a.sample_stack_user = 8192;
	a.sample_id_all = 1;
	assert_int_equal(rsp_schema__add_evsel(s, &a, RSP_EV_cpu_clock, RSP_ROLE_PRIMARY, "c"), 0);
	assert_int_equal(rsp_schema__add_id(s, 0, ID), 0);
	return s;
}

/*
 * A sample of @size stack bytes of which @dyn were copied: a stack of small
 * words and pointers (as real ones), junk after @dyn.
 */
static size_t build(uint64_t *rec, uint64_t size, uint64_t dyn, bool weight)
{
	struct perf_event_header *h = (struct perf_event_header *)rec;
	uint64_t *w = rec + 1;

	*w++ = ID;
	*w++ = 0x401000;	    /* ip */
	*w++ = 42ull | 43ull << 32; /* pid, tid */
	*w++ = 1000000;		    /* time */
	*w++ = 1;		    /* cpu */
	*w++ = PERF_SAMPLE_REGS_ABI_64;
	for (int i = 0; i < NR_REGS; i++)
		*w++ = 0x7ffd0000 + (uint64_t)i * 8;
	*w++ = size;
	for (uint64_t i = 0; i < size / 8; i++)
		w[i] = i * 8 < dyn ? (i % 3 ? i : 0x7ffd00001000 + i * 16)
				   : 0xdeadbeefcafef00dull * i;
	if (dyn % 8) /* the copied bytes end inside the word: the rest is junk */
		memset((char *)&w[dyn / 8] + dyn % 8, 0xa5, 8 - dyn % 8);
	w += size / 8;
	if (size)
		*w++ = dyn;
	if (weight)
		*w++ = 12345;
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)((char *)w - (char *)rec);
	return h->size;
}

static void roundtrip(bool weight, uint64_t dyn)
{
	struct rsp_schema *s = schema(weight);
	struct rsp_ustackz *z = rsp_ustackz__new();
	uint64_t *rec = calloc(1, CAP), *packed = calloc(1, CAP), *back = calloc(1, CAP);
	uint8_t *stack = malloc(CAP);
	struct rsp_sample a, b, c;
	const struct perf_event_header *hp = (const void *)packed, *hb = (const void *)back;
	int n, m;

	assert_non_null(z);
	build(rec, 8192, dyn, weight);
	assert_int_equal(rsp_record__parse_sample(s, (const void *)rec, &a), 0);
	n = rsp_ustackz__pack(z, s, (const void *)rec, packed, CAP);
	assert_true(n > 0 && n < ((struct perf_event_header *)rec)->size);
	assert_int_equal(hp->type, RSP_RECORD_ZSAMPLE);
	assert_int_equal(hp->size, n);
	assert_true(rsp_record__is_sample(hp));
	assert_int_equal(rsp_layout__time(hp), 1000000);
	assert_int_equal(rsp_layout__cpu(hp), 1);
	/* the same sample, its stack compressed */
	assert_int_equal(rsp_record__parse_sample(s, hp, &b), 0);
	assert_true(b.user_stack_z > 0);
	assert_int_equal(b.user_stack_size, dyn);
	assert_int_equal(b.tid, 43);
	assert_int_equal(b.time, 1000000);
	assert_int_equal(b.nr_user_regs, NR_REGS);
	assert_memory_equal(b.user_regs, a.user_regs, NR_REGS * 8);
	assert_int_equal(rsp_ustackz__inflate(z, &b, stack, CAP), 0);
	if (dyn)
		assert_memory_equal(stack, a.user_stack, dyn);
	assert_int_equal(rsp_ustackz__inflate(z, &b, stack, dyn ? dyn - 1 : 0), dyn ? -ENOSPC : 0);
	/* back: the kernel's sample had it asked for dyn_size bytes */
	m = rsp_ustackz__expand(z, s, hp, back, CAP);
	assert_int_equal(m, 8 + (5 + 1 + NR_REGS + 1) * 8 + (dyn + 7) / 8 * 8 + (dyn ? 8 : 0) +
				    (weight ? 8 : 0));
	assert_int_equal(hb->type, PERF_RECORD_SAMPLE);
	assert_int_equal(hb->misc, PERF_RECORD_MISC_USER);
	assert_int_equal(rsp_record__parse_sample(s, hb, &c), 0);
	assert_int_equal(c.user_stack_z, 0);
	assert_int_equal(c.user_stack_size, dyn);
	if (dyn)
		assert_memory_equal(c.user_stack, a.user_stack, dyn);
	assert_memory_equal(back + 1, rec + 1, (5 + 1 + NR_REGS) * 8); /* up to the stack */
	if (weight)
		assert_int_equal(back[m / 8 - 1], 12345);
	/* dyn_size; or, nothing copied, the kernel's empty stack: size 0, no dyn_size */
	assert_int_equal(back[m / 8 - 1 - weight], dyn);
	/* only a ZSAMPLE expands, only a sample packs */
	assert_int_equal(rsp_ustackz__expand(z, s, (const void *)rec, back, CAP), -EINVAL);
	assert_int_equal(rsp_ustackz__pack(z, s, hp, back, CAP), -EINVAL);
	assert_int_equal(rsp_ustackz__expand(z, s, hp, back, (size_t)m - 1), -ENOSPC);
	free(rec);
	free(packed);
	free(back);
	free(stack);
	rsp_ustackz__delete(z);
	rsp_schema__delete(s);
}

static void test_roundtrip(void **state)
{
	(void)state;
	roundtrip(false, 6160);
	roundtrip(false, 8192);
	roundtrip(false, 1021); /* not a multiple of 8 */
	roundtrip(true, 4096);	/* a field after the stack */
	roundtrip(false, 0);	/* nothing copied: the frame of nothing */
}

/* Nothing to gain, or nothing to pack: 0, and the caller keeps the record. */
static void test_left_alone(void **state)
{
	struct rsp_schema *s = schema(false);
	struct rsp_ustackz *z = rsp_ustackz__new();
	uint64_t *rec = calloc(1, CAP), *out = calloc(1, CAP);

	(void)state;
	build(rec, 0, 0, false); /* no stack (a kernel thread's sample) */
	assert_int_equal(rsp_ustackz__pack(z, s, (const void *)rec, out, CAP), 0);
	build(rec, 16, 16, false); /* too small to gain */
	assert_int_equal(rsp_ustackz__pack(z, s, (const void *)rec, out, CAP), 0);
	/* random bytes do not compress: stored as they are */
	build(rec, 256, 256, false);
	srand(7);
	for (int i = 0; i < 32; i++)
		rec[1 + 6 + NR_REGS + 1 + i] =
			(uint64_t)rand() << 33 ^ (uint64_t)rand() << 2 ^ (uint64_t)rand() >> 7;
	assert_int_equal(rsp_ustackz__pack(z, s, (const void *)rec, out, CAP), 0);
	/* room too small for the result */
	build(rec, 8192, 4096, false);
	assert_int_equal(rsp_ustackz__pack(z, s, (const void *)rec, out, 64), -ENOSPC);
	/* not a sample of the schema: the interpreter's error */
	rec[1] = ID + 1;
	assert_int_equal(rsp_ustackz__pack(z, s, (const void *)rec, out, CAP), -EINVAL);
	free(rec);
	free(out);
	rsp_ustackz__delete(z);
	rsp_schema__delete(s);
}

/* A damaged ZSAMPLE: refused, never read past (ASan). */
static void test_damaged(void **state)
{
	struct rsp_schema *s = schema(false);
	struct rsp_ustackz *z = rsp_ustackz__new();
	uint64_t *rec = calloc(1, CAP), *packed = calloc(1, CAP), *back = calloc(1, CAP);
	struct perf_event_header *hp = (void *)packed;
	const size_t blob = 1 + 6 + NR_REGS + 1; /* words: header .. the stack's size */
	uint8_t *stack = malloc(CAP);
	struct rsp_sample smp;
	uint64_t saved;
	int n;

	(void)state;
	build(rec, 8192, 6000, false);
	n = rsp_ustackz__pack(z, s, (const void *)rec, packed, CAP);
	assert_true(n > 0);
	/* a frame longer than its blob */
	saved = packed[blob];
	packed[blob] = saved + 4096;
	assert_int_equal(rsp_record__parse_sample(s, hp, &smp), -EINVAL);
	assert_int_equal(rsp_ustackz__expand(z, s, hp, back, CAP), -EINVAL);
	packed[blob] = saved;
	/* a frame that does not inflate to dyn_size */
	packed[n / 8 - 1] = 6001;
	assert_int_equal(rsp_record__parse_sample(s, hp, &smp), 0);
	assert_int_equal(rsp_ustackz__inflate(z, &smp, stack, CAP), -EINVAL);
	assert_int_equal(rsp_ustackz__expand(z, s, hp, back, CAP), -EINVAL);
	packed[n / 8 - 1] = 6000;
	/* a corrupt frame */
	((uint8_t *)&packed[blob + 1])[5] ^= 0xff;
	((uint8_t *)&packed[blob + 1])[9] ^= 0xff;
	assert_int_equal(rsp_record__parse_sample(s, hp, &smp), 0);
	assert_int_equal(rsp_ustackz__inflate(z, &smp, stack, CAP), -EINVAL);
	/* a record cut short */
	hp->size = (uint16_t)(blob * 8 + 16);
	assert_int_equal(rsp_record__parse_sample(s, hp, &smp), -EINVAL);
	assert_int_equal(rsp_ustackz__expand(z, s, hp, back, CAP), -EINVAL);
	/* an inflated size past what a sample holds */
	n = rsp_ustackz__pack(z, s, (const void *)rec, packed, CAP);
	packed[n / 8 - 1] = UINT16_MAX + 1;
	assert_int_equal(rsp_record__parse_sample(s, hp, &smp), -EINVAL);
	free(rec);
	free(packed);
	free(back);
	free(stack);
	rsp_ustackz__delete(z);
	rsp_schema__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_left_alone),
		cmocka_unit_test(test_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
