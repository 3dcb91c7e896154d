// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the protobuf exposition (lib/format/prom_pb.c) and of the
 * scrape's content negotiation (lib/format/prom_accept.c):
 *   - the native bucket of a latency of 2^k - 1, 2^k and 2^k + 1 ns at
 *     schema 0 (r=1) and 1 (r=2), against Prometheus' own rule (bucket i
 *     is (2^((i-1)/2^s), 2^(i/2^s)], computed here in exact integers):
 *     equal except one bucket up for exactly 2^k;
 *   - the encoder: its output decoded with protobuf-c's unpack, the spans
 *     and deltas expanded, every bucket's count equal to the latencies
 *     recorded there, zero bucket, count and sum exact;
 *   - the text translation: every family, sample and bucket of a real
 *     render back out of the decoded messages; bad text refused with one
 *     sentence naming its line;
 *   - Accept headers: Prometheus 2.42's with and without native histograms,
 *     q ordering, malformed ones (text).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
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
#include <rsp/prom_pb.h>
#include "io/prometheus/client/metrics.pb-c.h"

#define S	 RSP_HIST_DEFAULT_SLICE_NS
#define OP_SLEEP RSP_HIST_OP(RSP_HOP_OFFCPU, RSP_SR_SLEEP)

typedef Io__Prometheus__Client__MetricFamily pb_family;

/* Prometheus' bucket of @v > 0 at schema @s (0, 1): the least i with v <= 2^(i/2^s). */
static int32_t prom_index(uint64_t v, int s)
{
	unsigned __int128 x = v;

	if (s == 1)
		x *= v; /* v <= 2^(i/2)  <=>  v^2 <= 2^i */
	if (x == 1)
		return 0;
	x -= 1; /* least i with x + 1 <= 2^i: the bit length of x */
	return (int32_t)(128 - (x >> 64 ? __builtin_clzll((uint64_t)(x >> 64))
					: 64 + __builtin_clzll((uint64_t)x)));
}

static void test_index_edges(void **state)
{
	(void)state;
	assert_int_equal(rsp_prom_pb__index(0, 1), RSP_PROM_PB_ZERO_BUCKET);
	assert_int_equal(rsp_prom_pb__index(0, 2), RSP_PROM_PB_ZERO_BUCKET);
	/* 1 ns = 2^0: Prometheus' (0.5, 1] is index 0; the profile's [1, 2) is (1, 2] */
	assert_int_equal(prom_index(1, 0), 0);
	assert_int_equal(rsp_prom_pb__index(1, 1), 1);
	assert_int_equal(rsp_prom_pb__index(1, 2), 1);
	for (unsigned k = 2; k < 63; k++) {
		uint64_t p = 1ull << k;

		/* schema 0: (2^(k-1), 2^k] is index k */
		assert_int_equal(rsp_prom_pb__index(p - 1, 1), (int32_t)k);
		assert_int_equal(rsp_prom_pb__index(p, 1), (int32_t)k + 1);
		assert_int_equal(rsp_prom_pb__index(p + 1, 1), (int32_t)k + 1);
		assert_int_equal(prom_index(p - 1, 0), (int32_t)k);
		assert_int_equal(prom_index(p, 0), (int32_t)k); /* the one value one up */
		assert_int_equal(prom_index(p + 1, 0), (int32_t)k + 1);
		/* schema 1: (2^(k-1/2), 2^k] is index 2k, (2^k, 2^(k+1/2)] is 2k + 1 */
		assert_int_equal(rsp_prom_pb__index(p - 1, 2), (int32_t)(2 * k));
		assert_int_equal(rsp_prom_pb__index(p, 2), (int32_t)(2 * k + 1));
		assert_int_equal(rsp_prom_pb__index(p + 1, 2), (int32_t)(2 * k + 1));
		assert_int_equal(prom_index(p - 1, 1), (int32_t)(2 * k));
		assert_int_equal(prom_index(p, 1), (int32_t)(2 * k));
		assert_int_equal(prom_index(p + 1, 1), (int32_t)(2 * k + 1));
		/* the half-octave cut 2^k sqrt2 is no whole number: both sides agree */
		for (uint64_t c = rsp_hist__bucket_low(2 + 2 * k, 2) - 1;
		     c <= rsp_hist__bucket_low(2 + 2 * k, 2) + 1; c++)
			assert_int_equal(rsp_prom_pb__index(c, 2), prom_index(c, 1));
	}
	assert_int_equal(rsp_prom_pb__index(UINT64_MAX, 1), 64);
	assert_int_equal(prom_index(UINT64_MAX, 0), 64);
	assert_int_equal(rsp_prom_pb__index(UINT64_MAX, 2), 128);
	assert_int_equal(prom_index(UINT64_MAX, 1), 128);
}

/* The next length-delimited family at *@p (advanced), or NULL at the end. */
static pb_family *next_family(const uint8_t **p, const uint8_t *end)
{
	uint64_t n = 0;
	unsigned shift = 0;
	pb_family *f;

	if (*p == end)
		return NULL;
	do {
		assert_true(*p < end && shift < 64);
		n |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
	} while (*(*p)++ & 0x80);
	assert_true(n <= (uint64_t)(end - *p));
	f = io__prometheus__client__metric_family__unpack(NULL, n, *p);
	assert_non_null(f);
	*p += n;
	return f;
}

static const char *label(const Io__Prometheus__Client__Metric *m, const char *name)
{
	for (size_t i = 0; i < m->n_label; i++)
		if (!strcmp(m->label[i]->name, name))
			return m->label[i]->value;
	return NULL;
}

/* The native buckets of @h, expanded: counts[i + 200] for index i. */
static void expand(const Io__Prometheus__Client__Histogram *h, uint64_t *counts)
{
	int32_t idx = 0;
	int64_t c = 0;
	size_t d = 0;

	assert_int_equal(h->n_negative_span, 0);
	for (size_t s = 0; s < h->n_positive_span; s++) {
		idx += h->positive_span[s]->offset;
		for (uint32_t j = 0; j < h->positive_span[s]->length; j++, idx++) {
			assert_true(d < h->n_positive_delta);
			c += h->positive_delta[d++];
			assert_true(c >= 0 && idx > -200 && idx < 200);
			counts[idx + 200] = (uint64_t)c;
		}
	}
	assert_int_equal(d, h->n_positive_delta);
}

static void check_native(unsigned r)
{
	struct rsp_hist_config cfg;
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;
	struct rsp_hist_set *all = NULL, *cut = NULL;
	struct rsp_hist_query q = {.subjects = 1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS |
					       1u << RSP_HSUBJ_OTHER_PROCESS,
				   .pid = -1,
				   .tid = -1};
	struct rsp_hist_who w = {.tgid = 42, .tid = 43, .comm = "bad\"\xff", .comm_len = 5};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	uint64_t v[400], want[400] = {0}, got[400] = {0}, sum = 0;
	const uint8_t *p, *end;
	size_t n = 0, families = 0;
	pb_family *f;

	rsp_hist_config__init(&cfg);
	cfg.resolution = r;
	st = rsp_hist_store__new(&cfg);
	assert_non_null(st);
	sh = rsp_hist_store__shard(st, 0);
	v[n++] = 0;
	v[n++] = 0;
	v[n++] = 1;
	for (unsigned k = 2; k <= 40; k++)
		for (int d = -1; d <= 1; d++)
			v[n++] = (1ull << k) + (uint64_t)(int64_t)d;
	v[n++] = 1000000; /* 1 ms */
	v[n++] = 1000000;
	v[n++] = 8000000; /* 8 ms */
	for (size_t i = 0; i < n; i++) {
		int32_t idx = rsp_prom_pb__index(v[i], r);

		assert_int_equal(rsp_hist_shard__add(sh, OP_SLEEP, S, v[i], &w), 0);
		sum += v[i];
		if (idx != RSP_PROM_PB_ZERO_BUCKET)
			want[idx + 200]++;
	}
	assert_int_equal(rsp_hist_store__collect(st, &q, &all, &err), 0);
	assert_int_equal(rsp_prom__cut(all, 20, &cut), 0);
	assert_int_equal(rsp_prom_pb__native(cut, &out), 0);
	p = (const uint8_t *)out.data;
	end = p + out.len;
	while ((f = next_family(&p, end))) {
		const Io__Prometheus__Client__Metric *m;
		const Io__Prometheus__Client__Histogram *h;

		families++;
		assert_int_equal(f->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
		assert_non_null(strstr(f->help, "NANOSECONDS"));
		assert_int_equal(f->n_metric, 1);
		m = f->metric[0];
		assert_string_equal(label(m, "op"), "offcpu:sleep");
		if (!strcmp(f->name, "rsp_process_latency_nanoseconds")) {
			/* raw, unescaped; the byte that is not UTF-8 is U+FFFD */
			assert_string_equal(label(m, "comm"), "bad\"\xef\xbf\xbd");
			assert_string_equal(label(m, "pid"), "42");
		} else {
			assert_string_equal(f->name, "rsp_latency_nanoseconds");
			assert_int_equal(m->n_label, 1);
		}
		h = m->histogram;
		assert_non_null(h);
		assert_true(h->has_schema);
		assert_int_equal(h->schema, (int)r - 1);
		assert_true(h->zero_threshold > 0 && h->zero_threshold < 1e-30);
		assert_int_equal(h->zero_count, 2);
		assert_int_equal(h->sample_count, n);
		assert_true(h->sample_sum == (double)sum);
		assert_int_equal(h->n_bucket, 0); /* native only */
		memset(got, 0, sizeof(got));
		expand(h, got);
		assert_memory_equal(got, want, sizeof(want));
		io__prometheus__client__metric_family__free_unpacked(f, NULL);
	}
	assert_int_equal(families, 2);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_set__delete(all);
	rsp_hist_set__delete(cut);
	rsp_hist_store__delete(st);
}

static void test_native_r1(void **state)
{
	(void)state;
	check_native(1);
}

static void test_native_r2(void **state)
{
	(void)state;
	check_native(2);
}

/* An empty set: no family at all (Prometheus wants none without series). */
static void test_native_empty(void **state)
{
	struct rsp_hist_set *s = rsp_hist_set__new(1);
	struct rsp_buf out = RSP_BUF_INIT;

	(void)state;
	assert_int_equal(rsp_prom_pb__native(s, &out), 0);
	assert_int_equal(out.len, 0);
	rsp_hist_set__delete(s);
	rsp_buf__exit(&out);
}

/* Every sample of a real render comes back out of the translated messages. */
static void test_from_text(void **state)
{
	struct rsp_hist_config cfg;
	struct rsp_hist_store *st;
	struct rsp_hist_set *all = NULL, *cut = NULL;
	struct rsp_hist_query q = {
		.subjects = 1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS, .pid = -1, .tid = -1};
	struct rsp_hist_stats hs = {.updates = 12345, .gap_ns = 1500000000};
	struct rsp_prom_health h = {.hs = &hs, .queries = 7, .query_ns = 1023, .scrapes = 3};
	struct rsp_buf text = RSP_BUF_INIT, out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_hist_who w = {.tgid = 7, .tid = 7, .comm = "a\\b\nc", .comm_len = 5};
	size_t lines = 0, samples = 0, families = 0;
	const uint8_t *p, *end;
	pb_family *f;

	(void)state;
	rsp_hist_config__init(&cfg);
	st = rsp_hist_store__new(&cfg);
	for (uint64_t i = 1; i < 100; i++)
		rsp_hist_shard__add(rsp_hist_store__shard(st, 0), OP_SLEEP, S, i * 977, &w);
	assert_int_equal(rsp_hist_store__collect(st, &q, &all, &err), 0);
	assert_int_equal(rsp_prom__cut(all, 20, &cut), 0);
	assert_int_equal(rsp_prom__render_hist(cut, RSP_PROM_TEXT, &text), 0);
	assert_int_equal(rsp_prom__render_health(&h, RSP_PROM_TEXT, &text), 0);
	assert_int_equal(rsp_prom_pb__from_text(text.data, text.len, &out, &err), 0);
	for (const char *l = text.data; l < text.data + text.len; l = strchr(l, '\n') + 1) {
		const char *eol = strchr(l, '\n'), *inf = strstr(l, "le=\"+Inf\"");

		lines += *l != '#' && !(inf && inf < eol);
	}
	p = (const uint8_t *)out.data;
	end = p + out.len;
	while ((f = next_family(&p, end))) {
		char line[256];

		families++;
		for (size_t i = 0; i < f->n_metric; i++) {
			const Io__Prometheus__Client__Metric *m = f->metric[i];

			if (f->type != IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM) {
				samples++;
				continue;
			}
			samples += m->histogram->n_bucket + 2;
			/* the process series: its count line, labels escaped again */
			if (label(m, "comm")) {
				assert_string_equal(label(m, "comm"), "a\\b\nc");
				snprintf(line, sizeof(line),
					 "%s_count{op=\"offcpu:sleep\",comm=\"a\\\\b\\nc\",pid="
					 "\"7\"} "
					 "%" PRIu64 "\n",
					 f->name, m->histogram->sample_count);
				assert_non_null(strstr(text.data, line));
			}
			for (size_t b = 0; b < m->histogram->n_bucket; b++) {
				char le[32];

				/* the bound is 2^k - 1 ns: back to the text's exact decimal */
				rsp_prom__seconds(
					(uint64_t)llround(m->histogram->bucket[b]->upper_bound *
							  1e9),
					le, sizeof(le));
				snprintf(line, sizeof(line), ",le=\"%s\"} %" PRIu64 "\n", le,
					 m->histogram->bucket[b]->cumulative_count);
				assert_non_null(strstr(text.data, line));
			}
		}
		if (!strcmp(f->name, "rsp_latency_gap_seconds")) {
			assert_int_equal(f->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
			assert_true(f->metric[0]->gauge->value == 1.5);
		}
		if (!strcmp(f->name, "rsp_latency_updates_total")) {
			assert_int_equal(f->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
			assert_true(f->metric[0]->counter->value == 12345);
			assert_non_null(strstr(f->help, "Latencies recorded"));
		}
		io__prometheus__client__metric_family__free_unpacked(f, NULL);
	}
	/* every sample line but the +Inf buckets is in a message */
	assert_int_equal(samples, lines);
	assert_true(families >= 8);
	rsp_buf__exit(&text);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	rsp_hist_set__delete(all);
	rsp_hist_set__delete(cut);
	rsp_hist_store__delete(st);
}

static void refused(const char *text, const char *want)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;

	assert_int_equal(rsp_prom_pb__from_text(text, strlen(text), &out, &err), -EINVAL);
	if (!strstr(err.data, want))
		fail_msg("%s: %s", text, err.data);
	assert_null(strchr(err.data, '\n'));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

static void test_from_text_bad(void **state)
{
	(void)state;
	refused("x 1\n", "line 1 of the metrics' text is a sample before its family's");
	refused("# HELP a h\n# TYPE a counter\nb 1\n", "line 3 of the metrics' text is a sample of "
						       "another family");
	refused("# HELP a h\n# TYPE a gauge\na{x=\"1} 2\n", "without its closing quote");
	refused("# HELP a h\n# TYPE a gauge\na{x=\"\\t\"} 2\n", "an escape other than");
	refused("# HELP a h\n# TYPE a gauge\na 2 1700000000\n", "no timestamps");
	refused("# HELP a h\n# TYPE a gauge\na two\n", "not a number");
	refused("# HELP a h\n# TYPE a summary\n", "not counter, gauge, histogram or untyped");
	refused("# HELP a h\n# TYPE a histogram\na_bucket{x=\"1\"} 2\n", "without an le label");
	refused("# HELP a h\n# TYPE a histogram\na_bucket{le=\"1\"} -2\n", "not a whole number");
	refused("# HELP a h\n# TYPE a histogram\na_total 2\n", "not _bucket, _sum or _count");
	refused("# HELP a h\n# TYPE b gauge\n", "does not follow the # HELP");
}

static void test_negotiate(void **state)
{
	(void)state;
	/* Prometheus 2.42 with --enable-feature=native-histograms, and without */
	assert_int_equal(rsp_prom__negotiate(
				 "application/vnd.google.protobuf;proto=io.prometheus.client."
				 "MetricFamily;encoding=delimited,application/openmetrics-text;"
				 "version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;"
				 "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 RSP_PROM_PROTOBUF);
	assert_int_equal(rsp_prom__negotiate("application/openmetrics-text;version=1.0.0,"
					     "application/openmetrics-text;version=0.0.1;q=0.75,"
					     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 RSP_PROM_OPENMETRICS);
	assert_int_equal(rsp_prom__negotiate(NULL), RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate(""), RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate("*/*"), RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate("text/plain;version=0.0.4"), RSP_PROM_TEXT);
	/* spaces, quotes, case of type and parameter names */
	assert_int_equal(rsp_prom__negotiate(" Application/Vnd.Google.Protobuf ; PROTO = "
					     "\"io.prometheus.client.MetricFamily\" ; "
					     "encoding=delimited "),
			 RSP_PROM_PROTOBUF);
	/* q decides, then the order */
	assert_int_equal(rsp_prom__negotiate("text/plain;q=0.9,application/vnd.google.protobuf;"
					     "proto=io.prometheus.client.MetricFamily;"
					     "encoding=delimited;q=0.5"),
			 RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate("application/openmetrics-text;q=0.5,text/plain;q=0.5"),
			 RSP_PROM_OPENMETRICS);
	/* protobuf rsp does not write, not acceptable, malformed: the next or text */
	assert_int_equal(rsp_prom__negotiate("application/vnd.google.protobuf;proto=io.prometheus."
					     "client.MetricFamily;encoding=text"),
			 RSP_PROM_TEXT);
	assert_int_equal(
		rsp_prom__negotiate("application/vnd.google.protobuf;proto=other;"
				    "encoding=delimited,application/openmetrics-text;q=0.1"),
		RSP_PROM_OPENMETRICS);
	assert_int_equal(rsp_prom__negotiate("application/vnd.google.protobuf;proto=io.prometheus."
					     "client.MetricFamily;encoding=delimited;q=0"),
			 RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate("application/vnd.google.protobuf;proto=io.prometheus."
					     "client.MetricFamily;encoding=delimited;q=abc"),
			 RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate("application/openmetrics-text;version=9.9.9"),
			 RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate(",,;;==/;q=;,\"\",;"), RSP_PROM_TEXT);
	assert_int_equal(rsp_prom__negotiate("application/openmetrics-text;q=1.0001"),
			 RSP_PROM_TEXT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_edges), cmocka_unit_test(test_native_r1),
		cmocka_unit_test(test_native_r2),   cmocka_unit_test(test_native_empty),
		cmocka_unit_test(test_from_text),   cmocka_unit_test(test_from_text_bad),
		cmocka_unit_test(test_negotiate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
