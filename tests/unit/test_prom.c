// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the Prometheus exposition (lib/format/prom.c): the bucket
 * bounds at the edges (a latency of exactly 2^k ns, 2^k - 1, 2^k + 1, at
 * r=1 and r=2: every cumulative count equals the number of latencies <= le),
 * exact sums, label-value escaping (comm names may hold quotes, backslashes,
 * newlines and bytes that are not UTF-8), the cardinality cut, and the
 * OpenMetrics framing.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/hist.h>
#include <rsp/prom.h>

#define S	 RSP_HIST_DEFAULT_SLICE_NS
#define OP_SLEEP RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_SLEEP)
#define OP_RUNQ	 RSP_HIST_OP(RSP_HOP_RUNQ, 0)

static struct rsp_hist_store *new_store(unsigned r)
{
	struct rsp_hist_config c;
	struct rsp_hist_store *st;

	rsp_hist_config__init(&c);
	c.resolution = r;
	st = rsp_hist_store__new(&c);
	assert_non_null(st);
	return st;
}

static struct rsp_hist_set *collect(struct rsp_hist_store *st, unsigned subjects)
{
	struct rsp_hist_query q = {.subjects = subjects, .pid = -1, .tid = -1};
	struct rsp_hist_set *s = NULL;
	struct rsp_buf err = RSP_BUF_INIT;

	assert_int_equal(rsp_hist_store__collect(st, &q, &s, &err), 0);
	rsp_buf__exit(&err);
	return s;
}

#define ALL_PROC                                                                                   \
	(1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS | 1u << RSP_HSUBJ_OTHER_PROCESS |        \
	 1u << RSP_HSUBJ_THREAD)

static void render(struct rsp_hist_store *st, unsigned top, enum rsp_prom_format fmt,
		   struct rsp_buf *out)
{
	struct rsp_hist_set *all = collect(st, ALL_PROC), *cut = NULL;

	assert_int_equal(rsp_prom__cut(all, top, &cut), 0);
	assert_int_equal(rsp_prom__render_hist(cut, fmt, out), 0);
	rsp_hist_set__delete(all);
	rsp_hist_set__delete(cut);
}

/* An exact decimal of seconds back to whole ns (the test's own parser). */
static uint64_t parse_ns(const char *s)
{
	uint64_t sec = strtoull(s, (char **)&s, 10), frac = 0;
	int digits = 0;

	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			frac = frac * 10 + (uint64_t)(*s - '0');
	for (; digits < 9; digits++)
		frac *= 10;
	return sec * 1000000000ull + frac;
}

static void test_seconds(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(rsp_prom__seconds(0, b, sizeof(b)), "0");
	assert_string_equal(rsp_prom__seconds(1, b, sizeof(b)), "0.000000001");
	assert_string_equal(rsp_prom__seconds(1023, b, sizeof(b)), "0.000001023");
	assert_string_equal(rsp_prom__seconds(1000000000, b, sizeof(b)), "1");
	assert_string_equal(rsp_prom__seconds(1500000000, b, sizeof(b)), "1.5");
	assert_string_equal(rsp_prom__seconds(UINT64_MAX, b, sizeof(b)), "18446744073.709551615");
	assert_int_equal(parse_ns("18446744073.709551615"), UINT64_MAX);
}

/*
 * Every _bucket line of op @op_label for the system series: the count must be
 * exactly the number of @v <= le; +Inf, _count and _sum exact.
 */
static void check_cumulative(const char *text, const char *series, const uint64_t *v, size_t n)
{
	char prefix[128];
	const char *p = text;
	size_t lines = 0;
	uint64_t sum = 0;
	bool inf = false, got_sum = false;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	snprintf(prefix, sizeof(prefix), "%s_bucket{op=\"offcpu:sleep\",le=\"", series);
	for (; (p = strstr(p, prefix)); p++) {
		const char *le = p + strlen(prefix);
		uint64_t want = 0, got;

		if (!strncmp(le, "+Inf", 4)) {
			inf = true;
			want = n;
		} else {
			uint64_t L = parse_ns(le);

			for (size_t i = 0; i < n; i++)
				want += v[i] <= L;
		}
		got = strtoull(strstr(le, "} ") + 2, NULL, 10);
		if (got != want)
			fail_msg("%.60s: %" PRIu64 ", want %" PRIu64, p, got, want);
		lines++;
	}
	assert_true(inf);
	assert_true(lines > 30);
	snprintf(prefix, sizeof(prefix), "%s_sum{op=\"offcpu:sleep\"} ", series);
	p = strstr(text, prefix);
	if (p) {
		assert_int_equal(parse_ns(p + strlen(prefix)), sum);
		got_sum = true;
	}
	assert_true(got_sum);
	snprintf(prefix, sizeof(prefix), "%s_count{op=\"offcpu:sleep\"} ", series);
	p = strstr(text, prefix);
	assert_non_null(p);
	assert_int_equal(strtoull(p + strlen(prefix), NULL, 10), n);
}

static void check_edges(unsigned r)
{
	struct rsp_hist_store *st = new_store(r);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_buf out = RSP_BUF_INIT;
	uint64_t v[200];
	size_t n = 0;

	v[n++] = 0;
	v[n++] = 1;
	for (unsigned k = 1; k <= 40; k++) {
		v[n++] = (1ull << k) - 1;
		v[n++] = 1ull << k;
		v[n++] = (1ull << k) + 1;
		/* the half-octave cut of r=2, and its neighbours */
		v[n++] = (uint64_t)((double)(1ull << k) * 1.41421356237309505);
	}
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rsp_hist_shard__add(sh, OP_SLEEP, S, v[i], NULL), 0);
	render(st, 20, RSP_PROM_TEXT, &out);
	check_cumulative(out.data, "rsp_latency_seconds", v, n);
	/* le = 2^k - 1 ns exactly, never 2^k: the exact bound of [2^(k-1), 2^k) */
	assert_non_null(strstr(out.data, "le=\"0.000001023\"} "));
	assert_null(strstr(out.data, "le=\"0.000001024\"} "));
	rsp_buf__exit(&out);
	rsp_hist_store__delete(st);
}

static void test_edges_r1(void **state)
{
	(void)state;
	check_edges(1);
}

static void test_edges_r2(void **state)
{
	(void)state;
	check_edges(2);
}

/* A latency of exactly 1024 ns: above le=1023 ns, within le=2047 ns. */
static void test_exact_power(void **state)
{
	struct rsp_hist_store *st = new_store(1);
	struct rsp_buf out = RSP_BUF_INIT;

	(void)state;
	rsp_hist_shard__add(rsp_hist_store__shard(st, 0), OP_SLEEP, S, 1024, NULL);
	render(st, 20, RSP_PROM_TEXT, &out);
	assert_non_null(strstr(out.data, "rsp_latency_seconds_bucket{op=\"offcpu:sleep\",le="
					 "\"0.000001023\"} 0\n"));
	assert_non_null(strstr(out.data, "rsp_latency_seconds_bucket{op=\"offcpu:sleep\",le="
					 "\"0.000002047\"} 1\n"));
	/* the highest bucket written is the one that holds the latency */
	assert_null(strstr(out.data, "le=\"0.000004095\""));
	assert_non_null(strstr(out.data, "rsp_latency_seconds_sum{op=\"offcpu:sleep\"} "
					 "0.000001024\n"));
	rsp_buf__exit(&out);
	rsp_hist_store__delete(st);
}

static void expect_escape(const char *in, size_t len, const char *want)
{
	struct rsp_buf out = RSP_BUF_INIT;

	assert_int_equal(rsp_prom__escape(&out, in, len), 0);
	assert_string_equal(out.data ? out.data : "", want);
	rsp_buf__exit(&out);
}

static void test_escape(void **state)
{
	(void)state;
	expect_escape("postgres", 8, "postgres");
	expect_escape("a\"b", 3, "a\\\"b");
	expect_escape("a\\b", 3, "a\\\\b");
	expect_escape("a\nb", 3, "a\\nb");
	expect_escape("\\\"\n", 3, "\\\\\\\"\\n");
	expect_escape("caf\xc3\xa9", 5, "caf\xc3\xa9"); /* UTF-8 kept */
	expect_escape("a\xff"
		      "b",
		      3,
		      "a\xef\xbf\xbd"
		      "b");					  /* not UTF-8 */
	expect_escape("a\xc3", 2, "a\xef\xbf\xbd");		  /* cut in the middle */
	expect_escape("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"); /* overlong '/' */
	expect_escape("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
	expect_escape("ab\0cd", 5, "ab"); /* a comm ends at NUL */
	expect_escape("", 0, "");
}

/* A comm with every awkward byte, in a whole rendered series. */
static void test_escape_in_series(void **state)
{
	struct rsp_hist_store *st = new_store(1);
	struct rsp_hist_who w = {.tgid = 42, .tid = 42, .comm = "x\"y\\z\nw\xff", .comm_len = 8};
	struct rsp_buf out = RSP_BUF_INIT;

	(void)state;
	rsp_hist_shard__add(rsp_hist_store__shard(st, 0), OP_SLEEP, S, 5000, &w);
	render(st, 20, RSP_PROM_TEXT, &out);
	assert_non_null(strstr(out.data, "rsp_process_latency_seconds_count{op=\"offcpu:sleep\","
					 "comm=\"x\\\"y\\\\z\\nw\xef\xbf\xbd\",pid=\"42\"} 1\n"));
	rsp_buf__exit(&out);
	rsp_hist_store__delete(st);
}

static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, prefix)); p++)
		n++;
	return n;
}

/*
 * Ten processes, process p with p sleeps of p us (total p^2 us): the top 3
 * are 10, 9, 8; the other seven, 1..7, merge into comm="other" with their
 * counts and sums exact; threads never appear; the system series has all.
 */
static void test_cut(void **state)
{
	struct rsp_hist_store *st = new_store(1);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_set *all, *cut;
	uint64_t other_count = 0, other_sum = 0;
	struct rsp_buf out = RSP_BUF_INIT;
	char want[160], secs[32];

	(void)state;
	for (uint32_t p = 1; p <= 10; p++) {
		char comm[16];
		struct rsp_hist_who w = {.tgid = 1000 + p, .tid = 2000 + p, .comm = comm};

		w.comm_len = (uint32_t)snprintf(comm, sizeof(comm), "proc%u", p);
		for (uint32_t i = 0; i < p; i++)
			assert_int_equal(rsp_hist_shard__add(sh, OP_SLEEP, S, p * 1000ull, &w), 0);
		if (p <= 7) {
			other_count += p;
			other_sum += p * p * 1000ull;
		}
	}
	/* a process with only run-queue time: small, in "other" for runq */
	rsp_hist_shard__add(
		sh, OP_RUNQ, S, 10,
		&(struct rsp_hist_who){.tgid = 5, .tid = 5, .comm = "tiny", .comm_len = 4});
	all = collect(st, ALL_PROC);
	assert_int_equal(rsp_prom__cut(all, 3, &cut), 0);
	for (size_t i = 0; i < cut->n; i++) {
		const struct rsp_hist_profile *p = &cut->v[i];

		assert_true(p->subject.kind != RSP_HSUBJ_THREAD);
		if (p->subject.kind == RSP_HSUBJ_PROCESS)
			assert_true(p->subject.pid >= 1008 && p->subject.pid <= 1010);
	}
	assert_int_equal(rsp_prom__render_hist(cut, RSP_PROM_TEXT, &out), 0);
	assert_int_equal(count_lines(out.data, "rsp_process_latency_seconds_count{"), 3 + 2);
	assert_int_equal(count_lines(out.data, "comm=\"proc10\",pid=\"1010\"} "),
			 2); /* _sum, _count */
	assert_int_equal(count_lines(out.data, "pid=\"1007\""), 0);
	snprintf(want, sizeof(want),
		 "rsp_process_latency_seconds_count{op=\"offcpu:sleep\",comm=\"other\",pid=\"\"} "
		 "%" PRIu64 "\n",
		 other_count);
	assert_non_null(strstr(out.data, want));
	snprintf(want, sizeof(want),
		 "rsp_process_latency_seconds_sum{op=\"offcpu:sleep\",comm=\"other\",pid=\"\"} "
		 "%s\n",
		 rsp_prom__seconds(other_sum, secs, sizeof(secs)));
	assert_string_equal(secs, "0.00014");
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data,
			       "rsp_process_latency_seconds_count{op=\"runq\",comm=\"other\","
			       "pid=\"\"} 1\n"));
	assert_non_null(strstr(out.data, "rsp_latency_seconds_count{op=\"offcpu:sleep\"} 55\n"));
	rsp_hist_set__delete(cut);
	rsp_buf__reset(&out);
	/* top 0: every process is "other" */
	assert_int_equal(rsp_prom__cut(all, 0, &cut), 0);
	assert_int_equal(rsp_prom__render_hist(cut, RSP_PROM_TEXT, &out), 0);
	assert_int_equal(count_lines(out.data, "rsp_process_latency_seconds_count{"), 2);
	assert_non_null(strstr(out.data, "rsp_process_latency_seconds_count{op=\"offcpu:sleep\","
					 "comm=\"other\",pid=\"\"} 55\n"));
	rsp_hist_set__delete(cut);
	rsp_hist_set__delete(all);
	rsp_buf__exit(&out);
	rsp_hist_store__delete(st);
}

static void test_openmetrics(void **state)
{
	struct rsp_hist_store *st = new_store(1);
	struct rsp_capture_info ci = {
		.version = "9.9", .backend = "perf", .nr_cpus = 1, .skipped_nested = 4};
	struct rsp_cpu_status cpu = {.cpu = 0, .records = 7, .lost = 2};
	struct rsp_prom_health h = {.ci = &ci, .queries = 3, .query_ns = 1500000000};
	struct rsp_buf out = RSP_BUF_INIT;

	(void)state;
	ci.cpus = &cpu;
	ci.delivery = (struct rsp_delivery_status){.valid = true,
						   .switches = 100,
						   .switch_outs_not_seen = 1,
						   .switch_ins_not_seen = 2,
						   .wakings_not_seen = 3};
	rsp_hist_shard__add(rsp_hist_store__shard(st, 0), OP_SLEEP, S, 5000, NULL);
	render(st, 20, RSP_PROM_OPENMETRICS, &out);
	assert_int_equal(rsp_prom__render_health(&h, RSP_PROM_OPENMETRICS, &out), 0);
	assert_int_equal(rsp_prom__finish(RSP_PROM_OPENMETRICS, &out), 0);
	assert_non_null(strstr(out.data, "# TYPE rsp_latency_seconds histogram\n"
					 "# UNIT rsp_latency_seconds seconds\n"));
	/* a counter's family has no _total; its samples have */
	assert_non_null(strstr(out.data, "# TYPE rsp_queries counter\n"));
	assert_non_null(strstr(out.data, "\nrsp_queries_total 3\n"));
	assert_non_null(strstr(out.data, "\nrsp_query_seconds_total 1.5\n"));
	assert_non_null(strstr(out.data, "rsp_capture_lost_records_total{cpu=\"0\"} 2\n"));
	assert_non_null(strstr(out.data, "\nrsp_capture_skipped_nested_total 4\n"));
	assert_non_null(strstr(out.data, "# TYPE rsp_timeline_not_delivered counter\n"));
	assert_non_null(strstr(out.data,
			       "\nrsp_timeline_not_delivered_total{event=\"switch_out\"} 1\n"
			       "rsp_timeline_not_delivered_total{event=\"switch_in\"} 2\n"
			       "rsp_timeline_not_delivered_total{event=\"waking\"} 3\n"));
	assert_non_null(strstr(out.data, "\nrsp_timeline_switches_total 100\n"));
	assert_non_null(strstr(out.data, "rsp_info{version=\"9.9\",backend=\"perf\"} 1\n"));
	assert_int_equal(strcmp(out.data + out.len - 6, "# EOF\n"), 0);
	rsp_buf__reset(&out);
	assert_int_equal(rsp_prom__render_health(&h, RSP_PROM_TEXT, &out), 0);
	assert_int_equal(rsp_prom__finish(RSP_PROM_TEXT, &out), 0);
	assert_non_null(strstr(out.data, "# TYPE rsp_queries_total counter\n"));
	assert_null(strstr(out.data, "# EOF"));
	assert_string_equal(rsp_prom__content_type(RSP_PROM_TEXT),
			    "text/plain; version=0.0.4; charset=utf-8");
	rsp_buf__exit(&out);
	rsp_hist_store__delete(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seconds),	 cmocka_unit_test(test_edges_r1),
		cmocka_unit_test(test_edges_r2), cmocka_unit_test(test_exact_power),
		cmocka_unit_test(test_escape),	 cmocka_unit_test(test_escape_in_series),
		cmocka_unit_test(test_cut),	 cmocka_unit_test(test_openmetrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
