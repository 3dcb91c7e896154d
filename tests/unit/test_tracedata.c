// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/format/tracedata.c: the HEADER_TRACING_DATA blob, built and parsed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "pd_fixture.h"

static void test_build_parse(void **state)
{
	struct rsp_buf b = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct tep_handle *tep;
	struct tep_event *ev;
	struct tep_format_field *f;

	fx_tracing(&b);
	/* perf's prologue: \027\010D "tracing" "0.6\0" endian, long size, page size */
	assert_memory_equal(b.data, "\027\010Dtracing0.6", 14);
	tep = rsp_tracedata__parse(b.data, b.len, 0, NULL, NULL, &err);
	assert_non_null(tep);
	ev = tep_find_event(tep, FX_SWITCH_ID);
	assert_non_null(ev);
	assert_string_equal(ev->system, "sched");
	assert_string_equal(ev->name, "sched_switch");
	f = tep_find_field(ev, "next_pid");
	assert_non_null(f);
	assert_int_equal(f->offset, 56);
	assert_non_null(tep_find_event_by_name(tep, "sched", "sched_waking"));
	assert_int_equal(tep_get_long_size(tep), 8);
	tep_free(tep);
	rsp_buf__exit(&b);
	rsp_buf__exit(&err);
}

static void expect_bad(const void *p, size_t len, uint64_t base, const char *want)
{
	struct rsp_buf err = RSP_BUF_INIT;
	void *copy = malloc(len ? len : 1);
	struct tep_handle *tep;

	memcpy(copy, p, len);
	tep = rsp_tracedata__parse(copy, len, base, NULL, NULL, &err);
	if (tep)
		fail_msg("%zu bytes parsed", len);
	assert_non_null(err.data);
	assert_non_null(strstr(err.data, "tracing data at offset 0x"));
	if (want && !strstr(err.data, want))
		fail_msg("'%s' does not say '%s'", err.data, want);
	free(copy);
	rsp_buf__exit(&err);
}

static void test_truncated_everywhere(void **state)
{
	struct rsp_buf b = RSP_BUF_INIT;

	fx_tracing(&b);
	for (size_t len = 0; len < b.len; len++)
		expect_bad(b.data, len, 0x1000, NULL);
	rsp_buf__exit(&b);
}

static void test_corrupt(void **state)
{
	struct rsp_buf b = RSP_BUF_INIT;
	char *c;
	size_t hp = 10 + 4 + 2 + 4 + 12; /* the header_page size field */
	uint64_t huge = UINT64_MAX - 4;

	fx_tracing(&b);
	c = malloc(b.len);
	memcpy(c, b.data, b.len);
	c[0] = 'X';
	expect_bad(c, b.len, 0x2000, "offset 0x2000: no tracing-data magic");
	memcpy(c, b.data, b.len);
	c[14] = 1;
	expect_bad(c, b.len, 0, "big-endian");
	memcpy(c, b.data, b.len);
	memcpy(c + hp, &huge, 8);
	expect_bad(c, b.len, 0, "header_page claims");
	memcpy(c, b.data, b.len);
	memcpy(c + 10, "9.9", 3);
	expect_bad(c, b.len, 0, "version");
	free(c);
	rsp_buf__exit(&b);
}

/* One format in a blob; whether libtraceevent ended up knowing event 900. */
static bool format_accepted(const char *fields, const char *print)
{
	struct rsp_buf b = RSP_BUF_INIT, f = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_tracedata_event ev;
	struct tep_handle *tep;
	bool ok;

	rsp_buf__printf(&f,
			"name: hostile\nID: 900\nformat:\n"
			"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
			"%s\nprint fmt: %s\n",
			fields, print);
	ev = (struct rsp_tracedata_event){"sched", f.data, f.len};
	assert_int_equal(rsp_tracedata__build(&b, fx_header_page, sizeof(fx_header_page) - 1,
					      fx_header_event, sizeof(fx_header_event) - 1, &ev, 1,
					      NULL, 0, NULL),
			 0);
	tep = rsp_tracedata__parse(b.data, b.len, 0, NULL, NULL, &err);
	assert_non_null(tep);
	ok = tep_find_event(tep, 900) != NULL;
	tep_free(tep);
	rsp_buf__exit(&b);
	rsp_buf__exit(&f);
	rsp_buf__exit(&err);
	return ok;
}

/*
 * libtraceevent is not written for hostile input (a malformed print format
 * crashes it, some declarations leak): only canonical formats reach it.
 */
static void test_hostile_formats(void **state)
{
	const char *good = "\tfield:int pid;\toffset:8;\tsize:4;\tsigned:1;\n";

	assert_true(format_accepted(good, "\"%d\", REC->pid"));
	assert_true(format_accepted(good, "\"%s\", ((((((REC->(( 0x )) \"\"\"")); /* dropped */
	assert_true(format_accepted("\tfield:__data_loc char[] name;\toffset:8;\tsize:4;"
				    "\tsigned:0;\n",
				    "\"\""));
	assert_false(format_accepted("\tfield:int VIF_PR_FMT;\toffset:8;\tsize:4;\tsigned:1;\n",
				     "\"\""));
	assert_false(format_accepted("\tfield:__x[] y;\toffset:8;\tsize:4;\tsigned:1;\n", "\"\""));
	assert_false(
		format_accepted("\tfield:int a b c d e f g h i;\toffset:8;\tsize:4;\n", "\"\""));
	assert_false(format_accepted("\tfield:int pid;\toffset:99999999999;\tsize:4;\n", "\"\""));
	assert_false(format_accepted("\tfield:int pid;\toffset:8;\tsize:4;\tsigned:7;\n", "\"\""));
	assert_false(format_accepted("\tfield:int pid ;\toffset:8;\tsize:4;\n", "\"\""));
	assert_false(format_accepted("garbage line\n", "\"\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_parse),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_hostile_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
