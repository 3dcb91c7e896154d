// SPDX-License-Identifier: GPL-2.0
/*
 * The DWARF unwinder on a sample this test builds from its own registers
 * and stack, exactly as PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER
 * would carry them, with the process model read from /proc/self.
 *
 * Known answer: from inside level3(), the unwinder finds level3, level2,
 * level1 and the test function, in that order, by the objects' .eh_frame
 * (not by frame pointers: the frame-pointer callchain of the sample is
 * empty, and the method says so).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <rsp/maps.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/symbols.h>
#include <rsp/unwind.h>
#include <rsp/ustackz.h>

#define ID	  77
#define STACK	  8192
#define NR_REGS	  17
#define MAX_WORDS (6 + 1 + NR_REGS + 1 + STACK / 8 + 1)

static uint64_t record[MAX_WORDS];

/* The top of this thread's stack mapping, to copy no further. */
static uint64_t stack_top(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi, top = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			top = hi;
	if (f)
		fclose(f);
	return top;
}

/* The raw stack, as the kernel copies it: under ASan, across its redzones too. */
__attribute__((no_sanitize("address"))) static void copy_stack(uint64_t *to, uint64_t sp,
							       uint64_t size)
{
	const volatile uint64_t *from = (const volatile uint64_t *)(uintptr_t)sp;

	for (uint64_t i = 0; i < size / 8; i++)
		to[i] = from[i];
}

/*
 * The sample: registers in the bit order of RSP_UNWIND_REGS_MASK (AX BX CX
 * DX SI DI BP SP IP R8-R15), then up to 8 KiB of stack from SP.
 */
__attribute__((noinline)) static void capture(uint64_t ip, uint64_t sp, uint64_t bp, uint64_t bx,
					      const uint64_t *r12_15)
{
	struct perf_event_header *h = (struct perf_event_header *)record;
	uint64_t *w = record + 1, size = stack_top() - sp;

	if (size > STACK)
		size = STACK;
	size &= ~7ull;
	memset(record, 0, sizeof(record));
	*w++ = ID;
	*w++ = ip;
	*w++ = (uint64_t)getpid() | (uint64_t)getpid() << 32;
	*w++ = 10;
	*w++ = 0;
	*w++ = PERF_SAMPLE_REGS_ABI_64;
	for (int i = 0; i < NR_REGS; i++)
		w[i] = 0;
	w[1] = bx;
	w[6] = bp;
	w[7] = sp;
	w[8] = ip;
	memcpy(&w[13], r12_15, 4 * 8); /* R12..R15 are the 13th..16th of R8..R15 + 9 */
	w += NR_REGS;
	*w++ = STACK;
	copy_stack(w, sp, size);
	w += STACK / 8;
	*w++ = size;
	h->type = PERF_RECORD_SAMPLE;
	h->size = (uint16_t)((char *)w - (char *)record);
}

/* Registers as they are here, in level3: IP, SP, BP and the callee-saved ones. */
__attribute__((noinline)) static int level3(int x)
{
	uint64_t ip, sp, bp, bx, r[4];

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2\n\tmov %%rbx, %3"
			 : "=r"(ip), "=r"(sp), "=r"(bp), "=r"(bx));
	__asm__ volatile("mov %%r12, %0\n\tmov %%r13, %1\n\tmov %%r14, %2\n\tmov %%r15, %3"
			 : "=m"(r[0]), "=m"(r[1]), "=m"(r[2]), "=m"(r[3]));
	capture(ip, sp, bp, bx, r);
	return x + 1;
}

__attribute__((noinline)) static int level2(int x)
{
	int r = level3(x + 1);

	return r * 2;
}

__attribute__((noinline)) static int level1(int x)
{
	int r = level2(x + 1);

	return r - 1;
}

static struct rsp_schema *schema(void)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = RSP_UNWIND_REGS_MASK;
	a.sample_stack_user = STACK;
	a.sample_id_all = 1;
	assert_int_equal(rsp_schema__add_evsel(s, &a, RSP_EV_cpu_clock, RSP_ROLE_PRIMARY, "c"), 0);
	assert_int_equal(rsp_schema__add_id(s, 0, ID), 0);
	return s;
}

static const char *name_at(struct rsp_symbolizer *sym, uint64_t a, bool ret)
{
	struct rsp_sym s;

	rsp_symbolizer__resolve(sym, (uint32_t)getpid(), 10, a, ret ? RSP_SYM_RETADDR : 0, &s);
	return s.name ? s.name : "?";
}

/* "level3" or its clone "level3.constprop.0". */
static void check_fn(struct rsp_symbolizer *sym, uint64_t a, bool ret, const char *want)
{
	const char *n = name_at(sym, a, ret);

	if (strncmp(n, want, strlen(want)) || (n[strlen(want)] && n[strlen(want)] != '.'))
		fail_msg("frame %#llx is %s, not %s", (unsigned long long)a, n, want);
}

static void test_self_unwind(void **state)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .live = true};
	struct rsp_symbolizer *sym = rsp_symbolizer__new(&cfg);
	struct rsp_schema *s = schema();
	struct rsp_unwinder *u;
	struct rsp_unwinder_stats st;
	enum rsp_unwind_method m;
	struct rsp_sample smp;
	uint64_t ips[32];
	int n;

	assert_non_null(sym);
	assert_int_equal(
		rsp_procfs__load_pid(rsp_symbolizer__maps(sym), "/proc", (uint32_t)getpid(), 1), 0);
	assert_int_equal(level1(1), 7);
	assert_int_equal(
		rsp_record__parse_sample(s, (const struct perf_event_header *)record, &smp), 0);
	assert_int_equal(smp.nr_user_regs, NR_REGS);
	assert_true(smp.user_stack_size > 256);
	u = rsp_symbolizer__unwinder(sym);
	assert_non_null(u);
	n = rsp_unwinder__unwind(u, s, &smp, ips, 32);
	for (int i = 0; i < n && getenv("UNWIND_DUMP"); i++)
		fprintf(stderr, "%d %#lx %s\n", i, (unsigned long)ips[i], name_at(sym, ips[i], i));
	assert_true(n >= 4);
	check_fn(sym, ips[0], false, "level3");
	check_fn(sym, ips[1], true, "level2");
	check_fn(sym, ips[2], true, "level1");
	check_fn(sym, ips[3], true, "test_self_unwind");
	/* Compressed as rspd keeps it in its window (rsp/ustackz.h): the same frames. */
	{
		struct rsp_ustackz *z = rsp_ustackz__new();
		uint64_t *packed = calloc(1, UINT16_MAX + 1), zips[32];
		struct rsp_sample zs;
		int zn;

		assert_true(rsp_ustackz__pack(z, s, (const struct perf_event_header *)record,
					      packed, UINT16_MAX + 1) > 0);
		assert_int_equal(
			rsp_record__parse_sample(s, (const struct perf_event_header *)packed, &zs),
			0);
		assert_true(zs.user_stack_z > 0);
		zn = rsp_unwinder__unwind(u, s, &zs, zips, 32);
		assert_int_equal(zn, n);
		assert_memory_equal(zips, ips, (size_t)n * 8);
		free(packed);
		rsp_ustackz__delete(z);
	}
	/* The sample has no callchain: only DWARF finds the callers, and says so. */
	n = rsp_unwind__user_chain(u, s, &smp, ips, 32, &m);
	assert_int_equal(m, RSP_UNWIND_DWARF);
	assert_true(n >= 4);
	n = rsp_unwind__user_chain(NULL, s, &smp, ips, 32, &m);
	assert_int_equal(n, 0);
	assert_int_equal(m, RSP_UNWIND_NONE);
	/* Again: the objects' tables come from the cache. */
	rsp_unwinder__stats(u, &st);
	n = rsp_unwinder__unwind(u, s, &smp, ips, 32);
	assert_true(n >= 4);
	{
		struct rsp_unwinder_stats st2;

		rsp_unwinder__stats(u, &st2);
		assert_int_equal(st2.object_misses, st.object_misses);
		assert_true(st2.object_hits > st.object_hits);
		assert_int_equal(st2.unwinds, st.unwinds + 1);
	}
	/* A stack that says nothing: the IP alone. */
	memset((void *)smp.user_stack, 0, smp.user_stack_size);
	n = rsp_unwinder__unwind(u, s, &smp, ips, 32);
	assert_true(n >= 1 && n < 4);
	rsp_schema__delete(s);
	rsp_symbolizer__delete(sym);
}

/*
 * A frame pointer at the top of the address space: the CFA (BP + 16 in a
 * function with frame pointers) and the words libunwind reads around it
 * wrap past 2^64. Reading them must stay inside the sample's stack copy
 * (addr + 8 wrapped to a small number once passed the bounds check).
 */
static void test_wrapping_addresses(void **state)
{
	static const uint64_t bps[] = {UINT64_MAX - 3, UINT64_MAX - 15, UINT64_MAX - 19,
				       UINT64_MAX};
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .live = true};
	struct rsp_symbolizer *sym = rsp_symbolizer__new(&cfg);
	struct rsp_schema *s = schema();
	struct rsp_sample smp;
	uint64_t ips[32], *bp_slot;

	assert_non_null(sym);
	assert_int_equal(
		rsp_procfs__load_pid(rsp_symbolizer__maps(sym), "/proc", (uint32_t)getpid(), 1), 0);
	assert_int_equal(level1(1), 7);
	/* BP is the 7th register of the sample (header, id, ip, pid/tid, time, period, abi). */
	bp_slot = record + 1 + 6 + 6;
	for (size_t i = 0; i < sizeof(bps) / sizeof(bps[0]); i++) {
		*bp_slot = bps[i];
		assert_int_equal(
			rsp_record__parse_sample(s, (const struct perf_event_header *)record, &smp),
			0);
		assert_true(rsp_unwinder__unwind(rsp_symbolizer__unwinder(sym), s, &smp, ips, 32) >=
			    1);
	}
	rsp_schema__delete(s);
	rsp_symbolizer__delete(sym);
}

static void test_no_user_data(void **state)
{
	struct rsp_symbolizer *sym = rsp_symbolizer__new(NULL);
	struct rsp_schema *s = schema();
	struct rsp_sample smp;
	uint64_t ips[4];

	memset(&smp, 0, sizeof(smp));
	assert_int_equal(rsp_unwinder__unwind(rsp_symbolizer__unwinder(sym), s, &smp, ips, 4),
			 -ENOENT);
	assert_string_equal(rsp_unwind_method__name(RSP_UNWIND_DWARF), "dwarf");
	assert_string_equal(rsp_unwind_method__name(RSP_UNWIND_FP), "fp");
	rsp_unwinder__delete(NULL);
	rsp_schema__delete(s);
	rsp_symbolizer__delete(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_unwind),
		cmocka_unit_test(test_no_user_data),
		cmocka_unit_test(test_wrapping_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
