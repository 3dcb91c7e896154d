// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/model/ksyms.c: parsing kallsyms text, lookups, bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <rsp/ksyms.h>
#include "kallsyms_fake.h"

static struct rsp_ksyms *load(void)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_ksyms *ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);

	assert_non_null(ks);
	rsp_buf__exit(&err);
	return ks;
}

static void test_find(void **state)
{
	struct rsp_ksyms *ks = load();
	const struct rsp_ksym *s;
	uint64_t off;

	/* 19 lines, one data symbol: 18 code symbols */
	assert_int_equal(rsp_ksyms__count(ks), 19);
	s = rsp_ksyms__find(ks, K_IO_SCHEDULE + 0x42, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "io_schedule");
	assert_int_equal(off, 0x42);
	s = rsp_ksyms__find(ks, K_IO_SCHEDULE, &off);
	assert_string_equal(s->name, "io_schedule");
	assert_int_equal(off, 0);
	/* the data symbol is not kept: its address belongs to mutex_lock */
	s = rsp_ksyms__find(ks, K_DATA + 8, NULL);
	assert_string_equal(s->name, "mutex_lock");
	s = rsp_ksyms__find(ks, K_MODFN + 0x10, NULL);
	assert_string_equal(s->name, "modfn");
	assert_string_equal(s->module, "[mymod]");
	assert_string_equal(rsp_ksyms__find(ks, K_SCHEDULE + 1, NULL)->module, "");
	assert_null(rsp_ksyms__find(ks, 0xffffffff80000000ull, NULL));
	assert_null(rsp_ksyms__find(ks, K_MODFN + (2u << 20), NULL));
	assert_int_equal(rsp_ksyms__index(ks, rsp_ksyms__find(ks, 0xffffffff81000001ull, NULL)), 0);
	/* by name: the core kernel's, not a module's; none, 0 */
	assert_int_equal(rsp_ksyms__addr(ks, "io_schedule"), K_IO_SCHEDULE);
	assert_int_equal(rsp_ksyms__addr(ks, "modfn"), 0);
	assert_int_equal(rsp_ksyms__addr(ks, "no_such_symbol"), 0);
	assert_int_equal(rsp_ksyms__addr(NULL, "io_schedule"), 0);
	rsp_ksyms__delete(ks);
	rsp_ksyms__delete(NULL);
}

static void test_unsorted_input(void **state)
{
	static const char text[] = "ffffffff81002000 T b\nffffffff81001000 T a\n"
				   "ffffffff81003000 t c\n";
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_ksyms *ks = rsp_ksyms__new_from_text(text, sizeof(text) - 1, &err);

	assert_non_null(ks);
	assert_string_equal(rsp_ksyms__find(ks, 0xffffffff81001fffull, NULL)->name, "a");
	assert_string_equal(rsp_ksyms__find(ks, 0xffffffff81002001ull, NULL)->name, "b");
	rsp_ksyms__delete(ks);
	rsp_buf__exit(&err);
}

static void test_bad_input(void **state)
{
	static const char zeros[] = "0000000000000000 T a\n0000000000000000 T b\n";
	static const char junk[] = "hello world\n\n1234\nzz T x\n";
	struct rsp_buf err = RSP_BUF_INIT;

	assert_null(rsp_ksyms__new_from_text(zeros, sizeof(zeros) - 1, &err));
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(err.data, "kptr_restrict"));
	rsp_buf__reset(&err);
	assert_null(rsp_ksyms__new_from_text(junk, sizeof(junk) - 1, &err));
	assert_int_equal(errno, EINVAL);
	rsp_buf__reset(&err);
	assert_null(rsp_ksyms__new_from_file("/nonexistent/kallsyms", &err));
	assert_non_null(strstr(err.data, "/nonexistent/kallsyms"));
	rsp_buf__exit(&err);
}

static void test_file(void **state)
{
	char path[] = "/tmp/rsp-ksyms-XXXXXX";
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_ksyms *ks;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, fake_kallsyms, strlen(fake_kallsyms)),
			 (ssize_t)strlen(fake_kallsyms));
	close(fd);
	ks = rsp_ksyms__new_from_file(path, &err);
	unlink(path);
	assert_non_null(ks);
	assert_string_equal(rsp_ksyms__find(ks, K_POLL + 3, NULL)->name, "do_sys_poll");
	rsp_ksyms__delete(ks);
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_unsorted_input),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
