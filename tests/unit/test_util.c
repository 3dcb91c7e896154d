// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the small lib objects: parse, buf, u64map, fmt, catalogue. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/buf.h>
#include <rsp/catalogue.h>
#include <rsp/parse.h>
#include "internal/fmt.h"
#include "internal/u64map.h"

static void test_parse_u64(void **state)
{
	uint64_t v;

	assert_int_equal(rsp_parse__u64("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	/* Decimal only: a leading zero is not octal, 0x is not hex. */
	assert_int_equal(rsp_parse__u64("010", 0, 100, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(rsp_parse__u64("08", 0, 100, &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(rsp_parse__u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(rsp_parse__u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(rsp_parse__u64("101", 0, 100, &v), -ERANGE);
	assert_int_equal(rsp_parse__u64("0", 1, 100, &v), -ERANGE);
	for (const char *const *bad = (const char *const[]){"", "-1", "+1", " 1", "\t1", "1 ", "1x",
							    "x", "0x10", "1e2", "1.0", NULL};
	     *bad; bad++)
		assert_int_equal(rsp_parse__u64(*bad, 0, 100, &v), -EINVAL);
	assert_int_equal(rsp_parse__u64(NULL, 0, 100, &v), -EINVAL);
}

static void test_parse_duration(void **state)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {{"10s", 10000000000ull},  {"250ms", 250000000ull},   {"1.5", 1500000000ull},
		  {"2m", 120000000000ull},  {"1h", 3600000000000ull},  {"500us", 500000ull},
		  {"100ns", 100},	    {"3min", 180000000000ull}, {"0", 0},
		  {"010s", 10000000000ull}, {"08ms", 8000000ull}};
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(rsp_parse__duration(ok[i].s, &v), 0);
		assert_int_equal(v, ok[i].ns);
	}
	for (const char *const *bad =
		     (const char *const[]){"", "-1s", "s", "10 s", "10q", "inf", "nan", "1e30h",
					   "0x10s", "1e3ms", " 5s", "\t5s", ".5s", "5.s", NULL};
	     *bad; bad++)
		assert_int_not_equal(rsp_parse__duration(*bad, &v), 0);
}

static void test_parse_decimal(void **state)
{
	double v;

	assert_int_equal(rsp_parse__decimal("25", 0, 100, &v), 0);
	assert_true(v == 25);
	assert_int_equal(rsp_parse__decimal("2.5", 0, 100, &v), 0);
	assert_true(v == 2.5);
	assert_int_equal(rsp_parse__decimal("010", 0, 100, &v), 0);
	assert_true(v == 10);
	assert_int_equal(rsp_parse__decimal("101", 0, 100, &v), -ERANGE);
	for (const char *const *bad = (const char *const[]){"", "0x10", "1e1", " 5", "5 ", "-1",
							    "+1", "nan", "inf", ".5", "5.", NULL};
	     *bad; bad++)
		assert_int_equal(rsp_parse__decimal(*bad, 0, 100, &v), -EINVAL);
}

static void test_parse_seconds(void **state)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {{"13730.223133204", 13730223133204ull},
		  {"13730.9305", 13730930500000ull},
		  {"1", 1000000000ull},
		  {"0.000000001", 1},
		  {"18446744063.709551615", 18446744063709551615ull}};
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(rsp_parse__seconds(ok[i].s, &v), 0);
		assert_int_equal(v, ok[i].ns);
	}
	/* A double would round this one: 16 digits. */
	assert_int_equal(rsp_parse__seconds("1234567.123456789", &v), 0);
	assert_int_equal(v, 1234567123456789ull);
	for (const char *const *bad =
		     (const char *const[]){"", ".5", "1.", "-1", "+1", "1e3", "1.0000000001",
					   "99999999999999999999", " 1", "1s", NULL};
	     *bad; bad++)
		assert_int_not_equal(rsp_parse__seconds(*bad, &v), 0);
}

static void test_parse_size(void **state)
{
	uint64_t v;

	assert_int_equal(rsp_parse__size("64M", &v), 0);
	assert_int_equal(v, 64ull << 20);
	assert_int_equal(rsp_parse__size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(rsp_parse__size("2G", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(rsp_parse__size("123", &v), 0);
	assert_int_equal(v, 123);
	assert_int_not_equal(rsp_parse__size("M", &v), 0);
	assert_int_not_equal(rsp_parse__size("1T", &v), 0);
	assert_int_not_equal(rsp_parse__size("99999999999999999999G", &v), 0);
}

static void test_buf(void **state)
{
	struct rsp_buf b = RSP_BUF_INIT;

	assert_int_equal(rsp_buf__puts(&b, "abc"), 0);
	assert_int_equal(rsp_buf__printf(&b, "%d-%s", 42, "x"), 0);
	assert_string_equal(b.data, "abc42-x");
	assert_int_equal(b.len, 7);
	for (int i = 0; i < 1000; i++)
		rsp_buf__puts(&b, "0123456789");
	assert_int_equal(b.len, 10007);
	assert_int_equal(b.data[b.len], '\0');
	rsp_buf__reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	b.limit = 8;
	assert_int_equal(rsp_buf__puts(&b, "12345678"), 0);
	assert_int_equal(rsp_buf__puts(&b, "9"), -E2BIG);
	assert_int_equal(rsp_buf__printf(&b, "%s", "x"), -E2BIG);
	assert_string_equal(b.data, "12345678");
	rsp_buf__exit(&b);
	rsp_buf__exit(&b);
}

static void test_u64map(void **state)
{
	struct rsp_u64map m;
	uint32_t v;

	rsp_u64map__init(&m);
	assert_int_equal(rsp_u64map__get(&m, 1, &v), -ENOENT);
	rsp_u64map__del(&m, 1);
	for (uint64_t k = 0; k < 10000; k++)
		assert_int_equal(rsp_u64map__put(&m, k * 64, (uint32_t)k), 0);
	assert_int_equal(m.count, 10000);
	assert_int_equal(rsp_u64map__put(&m, UINT64_MAX, 1), -EINVAL);
	/* Delete every other key; the rest must stay reachable through probe runs. */
	for (uint64_t k = 0; k < 10000; k += 2)
		rsp_u64map__del(&m, k * 64);
	assert_int_equal(m.count, 5000);
	for (uint64_t k = 0; k < 10000; k++) {
		int ret = rsp_u64map__get(&m, k * 64, &v);

		if (k % 2) {
			assert_int_equal(ret, 0);
			assert_int_equal(v, k);
		} else {
			assert_int_equal(ret, -ENOENT);
		}
	}
	assert_int_equal(rsp_u64map__put(&m, 64, 7), 0); /* replace */
	assert_int_equal(rsp_u64map__get(&m, 64, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(m.count, 5000);
	rsp_u64map__exit(&m);
}

static void test_fmt_bytes(void **state)
{
	char b[32];

	assert_string_equal(rsp_fmt__bytes(b, sizeof(b), 512), "512 B");
	assert_string_equal(rsp_fmt__bytes(b, sizeof(b), 1536), "1.5 KiB");
	assert_string_equal(rsp_fmt__bytes(b, sizeof(b), 64ull << 20), "64.0 MiB");
	assert_string_equal(rsp_fmt__bytes(b, sizeof(b), 3ull << 40), "3.0 TiB");
}

/* Names others chose, escaped as ps and systemctl do (issue 40, finding 5). */
static void test_fmt_name(void **state)
{
	char b[RSP_FMT_NAME_MAX], small[8];

	(void)state;
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "esc\x1b]0;PWNED\a\x1b["),
			    "esc\\x1b]0;PWNED\\a\\x1b[");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "ev\nil\"x\\"), "ev\\nil\"x\\\\");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "bad\xff\xfe"), "bad\\xff\\xfe");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "del\x7f"), "del\\x7f");
	/* UTF-8 stays, but a C1 control (U+009B, CSI), an overlong '/' and a surrogate do not */
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "caf\xc3\xa9 \xe2\x82\xac"),
			    "caf\xc3\xa9 \xe2\x82\xac");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "\xc2\x9b"), "\\xc2\\x9b");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "\xc0\xaf"), "\\xc0\\xaf");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), "\xed\xa0\x80"), "\\xed\\xa0\\x80");
	assert_string_equal(rsp_fmt__name(b, sizeof(b), NULL), "");
	/* cut at a whole escape, never inside one */
	assert_string_equal(rsp_fmt__name(small, sizeof(small), "ab\ncd\x1b"), "ab\\ncd");
	assert_string_equal(rsp_fmt__name(small, sizeof(small), "abcdef\n"), "abcdef");
	/* the longest thread name fits */
	assert_int_equal(strlen(rsp_fmt__name(b, sizeof(b),
					      "\x01\x01\x01\x01\x01\x01\x01\x01"
					      "\x01\x01\x01\x01\x01\x01\x01")),
			 60);
}

static void test_catalogue(void **state)
{
	int tracepoints = 0;

	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_info *e = rsp_catalogue__event(ev);
		int first, n = rsp_catalogue__event_fields(ev, &first);

		assert_non_null(e->name);
		assert_non_null(rsp_catalogue__family(e->family));
		assert_int_equal(rsp_catalogue__find_event(e->name), ev);
		assert_int_equal(n, e->nr_fields);
		if (e->kind != RSP_EVK_TRACEPOINT) {
			assert_int_equal(n, 0);
			continue;
		}
		tracepoints++;
		assert_true(n > 0);
		assert_int_equal(rsp_catalogue__find_tracepoint(e->system, e->tp), ev);
		/* Fields are consecutive, belong to the event, unique by name. */
		for (int f = first; f < first + n; f++) {
			assert_int_equal(rsp_catalogue__field(f)->event, ev);
			assert_int_not_equal(rsp_catalogue__field(f)->uses, 0);
			for (int g = first; g < f; g++)
				assert_string_not_equal(rsp_catalogue__field(f)->name,
							rsp_catalogue__field(g)->name);
		}
	}
	assert_int_equal(tracepoints, 21);
	assert_true(rsp_catalogue__event(RSP_EV_sched_switch)->flags & RSP_EVF_STACK);
	assert_true(rsp_catalogue__event(RSP_EV_sideband)->flags & RSP_EVF_SIDEBAND);
	assert_int_equal(rsp_catalogue__find_family("block"), RSP_FAM_BLOCK);
	assert_int_equal(rsp_catalogue__find_family("nope"), -1);
	assert_int_equal(rsp_catalogue__find_event("nope"), -1);
	assert_int_equal(rsp_catalogue__find_tracepoint("sched", "nope"), -1);
	assert_null(rsp_catalogue__event(RSP_EV__NR));
	assert_null(rsp_catalogue__field(RSP_F__NR));
	assert_null(rsp_catalogue__family(RSP_FAM__NR));
	/* The decoder's required fields: what the timeline cannot do without. */
	assert_true(rsp_catalogue__field(RSP_F_sched_switch__prev_state)->required);
	assert_false(rsp_catalogue__field(RSP_F_sched_switch__prev_comm)->required);
	assert_int_equal(rsp_catalogue__field(RSP_F_sched_switch__prev_state)->uses,
			 RSP_USE_TL | RSP_USE_ST);
	assert_int_equal(rsp_catalogue__field(RSP_F_block_rq_issue__dev)->uses, RSP_USE_IO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),     cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_decimal), cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_parse_size),    cmocka_unit_test(test_buf),
		cmocka_unit_test(test_u64map),	      cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_catalogue),     cmocka_unit_test(test_fmt_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
