// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/stream/wkind.c: the names of the window's kinds of records. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/wkind.h>
#include "tracepoints/bpf_records.h"

static const char *name(const struct rsp_schema *s, unsigned kind)
{
	static char buf[80];

	return rsp_wkind__name(s, kind, buf, sizeof(buf));
}

static void test_perf_and_bpf_kinds(void **state)
{
	assert_string_equal(name(NULL, RSP_WKIND_PERF(PERF_RECORD_COMM)), "perf:COMM");
	assert_string_equal(name(NULL, RSP_WKIND_PERF(PERF_RECORD_LOST)), "perf:LOST");
	assert_string_equal(name(NULL, RSP_WKIND_PERF(PERF_RECORD_MMAP2)), "perf:MMAP2");
	assert_string_equal(name(NULL, RSP_WKIND_PERF(PERF_RECORD_SAMPLE)), "perf:SAMPLE");
	assert_string_equal(name(NULL, RSP_WKIND_PERF(30)), "perf:type 30");
	assert_string_equal(name(NULL, RSP_WKIND_PERF(200)), "other");
	assert_string_equal(name(NULL, RSP_WKIND_OTHER), "other");
	assert_string_equal(name(NULL, RSP_WKIND_BPF(RSP_BREC_SWITCH)), "bpf:switch");
	assert_string_equal(name(NULL, RSP_WKIND_BPF(RSP_BREC_STACK)), "bpf:stack");
	assert_string_equal(name(NULL, RSP_WKIND_BPF(RSP_BREC_SWITCH_CHECK)), "bpf:switch_check");
	assert_string_equal(name(NULL, RSP_WKIND_BPF(RSP_BREC__NR)), "bpf:kind 27");
	/* every kind the programs write has its name */
	for (unsigned k = 1; k < RSP_BREC__NR; k++)
		if (k != 3)
			assert_null(strstr(name(NULL, RSP_WKIND_BPF(k)), "bpf:kind"));
}

static void test_sample_kinds(void **state)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_CPU_CLOCK,
				    .sample_type = RSP_LAYOUT_SAMPLE_TYPE};
	char small[8];

	assert_non_null(s);
	assert_int_equal(rsp_schema__add_evsel(s, &a, -1, RSP_ROLE_PRIMARY, "cpu-clock"), 0);
	assert_int_equal(rsp_schema__add_evsel(s, &a, -1, RSP_ROLE_PRIMARY, ""), 1);
	assert_string_equal(name(s, RSP_WKIND_EVSEL(0)), "cpu-clock");
	assert_string_equal(name(s, RSP_WKIND_EVSEL(1)), "sample of evsel 1");
	assert_string_equal(name(s, RSP_WKIND_EVSEL(2)), "sample of evsel 2");
	assert_string_equal(name(NULL, RSP_WKIND_EVSEL(0)), "sample of evsel 0");
	/* past the table: a sample of an event not named */
	assert_string_equal(name(s, RSP_WKIND_EVSEL(RSP_WKIND_EVSELS)), "perf:SAMPLE");
	assert_string_equal(name(s, RSP_WINDOW_KINDS), "other");
	assert_string_equal(rsp_wkind__name(s, RSP_WKIND_EVSEL(0), small, sizeof(small)),
			    "cpu-clo");
	rsp_schema__delete(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_and_bpf_kinds),
		cmocka_unit_test(test_sample_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
