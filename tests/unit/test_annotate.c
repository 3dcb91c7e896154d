// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the source-line cache (lib/model/srcline.c, libdw) and of
 * the annotated disassembly (lib/model/annotate.c, capstone) on the
 * fixtures built with the tests: libsymfix.so (with DWARF: the build adds
 * -g) and its stripped copy. The known lines are found in the fixture's
 * source (tests/fixtures/symfix.c) by text, not by the code under test.
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
#include "internal/annotate.h"
#include "internal/elfsyms.h"
#include "internal/srcline.h"

#define LIB	     RSP_FIXTURE_DIR "/libsymfix.so"
#define LIB_STRIPPED RSP_FIXTURE_DIR "/libsymfix.stripped.so"

/* The line of the first line of symfix.c that starts with @prefix (1-based). */
static int source_line(const char *prefix)
{
	char path[4096], buf[512];
	const char *root = getenv("RSP_SOURCE");
	FILE *f;
	int n = 0;

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/tests/fixtures/symfix.c", root);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (!strncmp(buf, prefix, strlen(prefix))) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no line starts with %s", prefix);
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* fix_a's annotation with no samples: its instructions and lines. */
static struct rsp_annotate *fix_a(struct rsp_srclines *sl, const struct rsp_sampled_addr *a,
				  size_t n)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_annotate *an = rsp_annotate__new(LIB, "fix_a", "", a, n, sl, 0, &err);

	if (!an)
		fail_msg("annotate: %s", err.data);
	rsp_buf__exit(&err);
	return an;
}

static void test_srclines(void **state)
{
	struct rsp_srclines *sl = rsp_srclines__new("", 1);
	struct rsp_annotate *an;
	char file[512];
	int line = 0, def = source_line("FIX_API uint64_t fix_a(uint64_t n)\n"),
	    loop = source_line("\tfor (uint64_t i = 0; i < n; i++)\n");

	(void)state;
	assert_non_null(sl);
	an = fix_a(NULL, NULL, 0);
	/*
	 * The entry of fix_a is one of its own lines (several rows of the line
	 * table share that address: libdw gives the last), and its multiply is
	 * on the loop body's line, the one after the for.
	 */
	assert_int_equal(rsp_srclines__find(sl, LIB, an->start, file, sizeof(file), &line), 0);
	assert_true(ends_with(file, "symfix.c"));
	assert_true(line >= def && line <= loop + 3);
	{
		int muls = 0;

		for (size_t i = 0; i < an->n; i++) {
			if (strncmp(an->insns[i].text, "imul", 4))
				continue;
			assert_int_equal(rsp_srclines__find(sl, LIB, an->insns[i].addr, file,
							    sizeof(file), &line),
					 0);
			assert_int_equal(line, loop + 1);
			muls++;
		}
		assert_int_equal(muls, 1);
	}
	/* the stripped copy has no DWARF and, with no debug directory, no debug file */
	assert_int_equal(rsp_srclines__find(sl, LIB_STRIPPED, an->start, file, sizeof(file), &line),
			 -ENOENT);
	/* one file kept at most: the first is opened again, the answer is the same */
	assert_int_equal(rsp_srclines__find(sl, LIB, an->start, file, sizeof(file), &line), 0);
	assert_true(line >= def && line <= loop + 3);
	/* no such file; not an ELF file */
	assert_int_equal(
		rsp_srclines__find(sl, "/nonexistent/lib.so", 0x1000, file, sizeof(file), &line),
		-ENOENT);
	assert_int_equal(rsp_srclines__find(sl, "/etc/hostname", 0x1000, file, sizeof(file), &line),
			 -ENOENT);
	assert_int_equal(rsp_srclines__find(sl, "/dev/null", 0x1000, file, sizeof(file), &line),
			 -ENOENT);
	rsp_annotate__delete(an);
	rsp_srclines__delete(sl);
}

/* Samples land on their instruction; an address inside one is counted apart. */
static void test_annotate_mapping(void **state)
{
	struct rsp_srclines *sl = rsp_srclines__new("", 4);
	struct rsp_annotate *an = fix_a(NULL, NULL, 0), *b;
	struct rsp_sampled_addr addrs[4];
	size_t n = 0, wide = 0;
	uint64_t start, size;

	(void)state;
	assert_true(an->n >= 4);
	/* the instructions tile the function from its start */
	assert_int_equal(an->insns[0].addr, an->start);
	for (size_t i = 1; i < an->n; i++)
		assert_int_equal(an->insns[i].addr, an->insns[i - 1].addr + an->insns[i - 1].size);
	assert_true(an->insns[an->n - 1].addr + an->insns[an->n - 1].size <= an->start + an->size);
	for (size_t i = 1; i < an->n; i++)
		if (an->insns[i].size > 1) {
			wide = i;
			break;
		}
	assert_true(wide > 0);
	addrs[n++] = (struct rsp_sampled_addr){an->insns[0].addr, 3};
	addrs[n++] = (struct rsp_sampled_addr){an->insns[wide].addr, 2};
	addrs[n++] = (struct rsp_sampled_addr){an->insns[wide].addr + 1, 4};
	addrs[n++] = (struct rsp_sampled_addr){an->start + an->size + 64, 1};
	b = fix_a(sl, addrs, n);
	assert_int_equal(b->samples, 5);
	assert_int_equal(b->off_insn, 5);
	assert_int_equal(b->insns[0].samples, 3);
	assert_int_equal(b->insns[wide].samples, 2);
	assert_non_null(b->insns[0].file);
	assert_true(ends_with(b->insns[0].file, "symfix.c") && b->insns[0].line > 0);
	/* the symbol's range as the ELF file has it */
	{
		struct rsp_buf err = RSP_BUF_INIT;
		FILE *f = fopen(LIB, "rb");
		struct rsp_elfsyms *e;

		assert_non_null(f);
		e = rsp_elfsyms__load_fd(fileno(f), LIB, "", &err);
		assert_non_null(e);
		assert_int_equal(rsp_elfsyms__find(e, "fix_a", &start, &size), 0);
		assert_int_equal(start, b->start);
		assert_int_equal(size, b->size);
		rsp_elfsyms__delete(e);
		fclose(f);
		rsp_buf__exit(&err);
	}
	/* a byte limit smaller than the function: its first part, said so */
	{
		struct rsp_buf err = RSP_BUF_INIT;
		struct rsp_annotate *t =
			rsp_annotate__new(LIB, "fix_a", "", NULL, 0, NULL, 4, &err);

		assert_non_null(t);
		assert_true(t->truncated);
		assert_true(t->n >= 1 && t->insns[t->n - 1].addr < t->start + 4);
		rsp_annotate__delete(t);
		rsp_buf__exit(&err);
	}
	rsp_annotate__delete(b);
	rsp_annotate__delete(an);
	rsp_srclines__delete(sl);
}

/* Bad input: one sentence naming the problem, no crash. */
static void test_annotate_errors(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;

	(void)state;
	assert_null(rsp_annotate__new(LIB, "no_such_function", "", NULL, 0, NULL, 0, &err));
	assert_non_null(strstr(err.data, "no function symbol no_such_function"));
	rsp_buf__reset(&err);
	/* the stripped library keeps fix_a in .dynsym, with its size */
	{
		struct rsp_annotate *a =
			rsp_annotate__new(LIB_STRIPPED, "fix_a", "", NULL, 0, NULL, 0, &err);

		assert_non_null(a);
		assert_null(a->insns[0].file);
		rsp_annotate__delete(a);
	}
	assert_null(rsp_annotate__new("/nonexistent/x.so", "f", "", NULL, 0, NULL, 0, &err));
	assert_non_null(strstr(err.data, "cannot open /nonexistent/x.so"));
	rsp_buf__reset(&err);
	assert_null(rsp_annotate__new("/etc/hostname", "f", "", NULL, 0, NULL, 0, &err));
	assert_non_null(strstr(err.data, "/etc/hostname"));
	rsp_buf__reset(&err);
	/* a device is not opened (opening one can block, or do something) */
	assert_null(rsp_annotate__new("/dev/null", "f", "", NULL, 0, NULL, 0, &err));
	assert_non_null(strstr(err.data, "not a regular file"));
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srclines),
		cmocka_unit_test(test_annotate_mapping),
		cmocka_unit_test(test_annotate_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
