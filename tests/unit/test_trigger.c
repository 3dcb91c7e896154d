// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/format/trigcond.c (a trigger's condition and spec),
 * lib/query/cmd_trigger.c (rspctl trigger's request and list) and
 * lib/format/amhook.c (Alertmanager's webhook payload).
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
#include <rsp/hist.h>
#include <rsp/query.h>
#include <rsp/sleepclass.h>
#include <rsp/trig_request.h>
#include <rsp/trigger.h>

static void parse_ok(const char *text, struct rsp_trig_cond *c)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int ret = rsp_trig_cond__parse(text, c, &err);

	if (ret)
		fail_msg("'%s': %s", text, err.data);
	rsp_buf__exit(&err);
}

/* The condition is refused with one sentence that contains @word. */
static void parse_bad(const char *text, const char *word)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_trig_cond c;

	assert_int_equal(rsp_trig_cond__parse(text, &c, &err), -EINVAL);
	assert_non_null(err.data);
	if (!strstr(err.data, word))
		fail_msg("'%s': '%s' does not name '%s'", text, err.data, word);
	assert_null(strchr(err.data, '\n'));
	rsp_buf__exit(&err);
}

/* The examples, each field as written. */
static void test_examples(void **state)
{
	struct rsp_trig_cond c;

	parse_ok("stopwatch heldwork > 20ms", &c);
	assert_int_equal(c.kind, RSP_TRIG_STOPWATCH);
	assert_string_equal(c.name, "heldwork");
	assert_int_equal(c.above_ns, 20000000);

	parse_ok("hist syscall:fsync p99 > 20ms over 10s", &c);
	assert_int_equal(c.kind, RSP_TRIG_HIST);
	assert_string_equal(c.op, "syscall:fsync");
	assert_int_equal(c.op_kind, RSP_HOP_SYSCALL);
	assert_false(c.op_any);
	assert_int_equal(c.op_arg, 74); /* x86-64's fsync */
	assert_int_equal(c.subject, RSP_TRIG_SYSTEM);
	assert_int_equal(c.stat, RSP_TRIG_P99);
	assert_int_equal(c.above_ns, 20000000);
	assert_int_equal(c.over_ns, 10000000000ull);

	parse_ok("runnable > 100ms", &c);
	assert_int_equal(c.kind, RSP_TRIG_RUNNABLE);
	assert_int_equal(c.above_ns, 100000000);

	parse_ok("offcpu 1234 block_io > 50% over 5s", &c);
	assert_int_equal(c.kind, RSP_TRIG_OFFCPU);
	assert_int_equal(c.id, 1234);
	assert_int_equal(c.reason, RSP_SR_BLOCK_IO);
	assert_true(c.above == 50.0);
	assert_int_equal(c.over_ns, 5000000000ull);

	parse_ok("lost > 0", &c);
	assert_int_equal(c.kind, RSP_TRIG_LOST);
	assert_true(c.above == 0.0);
}

static void test_other_forms(void **state)
{
	struct rsp_trig_cond c;

	parse_ok("  hist offcpu:lock comm postgres max > 1s ", &c);
	assert_int_equal(c.subject, RSP_TRIG_COMM);
	assert_string_equal(c.comm, "postgres");
	assert_int_equal(c.stat, RSP_TRIG_MAX);
	assert_int_equal(c.over_ns, RSP_TRIG_OVER_DEFAULT_NS);
	parse_ok("hist runq pid 42 p999 > 5ms over 1s", &c);
	assert_int_equal(c.subject, RSP_TRIG_PID);
	assert_int_equal(c.id, 42);
	assert_int_equal(c.stat, RSP_TRIG_P999);
	parse_ok("hist syscall:read tid 7 count > 2.5/s", &c);
	assert_int_equal(c.subject, RSP_TRIG_TID);
	assert_int_equal(c.stat, RSP_TRIG_COUNT);
	assert_true(c.above == 2.5);
	parse_ok("hist offcpu p99 > 1ms", &c);
	assert_true(c.op_any);
	parse_ok("hist blk_service:vda p99 > 1ms", &c);
	assert_true(c.op_dev_name);
	parse_ok("hist blk_service:254:0 p99 > 1ms", &c);
	assert_true(c.op_dev_name); /* MAJOR:MINOR too: rspd checks the device */
	parse_ok("runnable comm victim > 150ms", &c);
	assert_int_equal(c.kind, RSP_TRIG_RUNNABLE);
	assert_int_equal(c.subject, RSP_TRIG_COMM);
	assert_int_equal(c.above_ns, 150000000);
	parse_ok("shed > 1", &c);
	assert_int_equal(c.kind, RSP_TRIG_SHED);
	parse_ok("alert", &c);
	assert_int_equal(c.kind, RSP_TRIG_ALERT);
	assert_string_equal(c.name, "");
	parse_ok("alert SlowFsync", &c);
	assert_string_equal(c.name, "SlowFsync");
}

static void test_refused(void **state)
{
	parse_bad("", "empty");
	parse_bad("hsit runq p99 > 1ms", "hsit");
	parse_bad("hist", "operation");
	parse_bad("hist nosuch p99 > 1ms", "nosuch");
	parse_bad("hist syscall:nosuch p99 > 1ms", "nosuch");
	parse_bad("hist irq:virtio0 p99 > 1ms", "irq");
	parse_bad("hist runq p98 > 1ms", "p98");
	parse_bad("hist runq p99 >= 1ms", ">=");
	parse_bad("hist runq p99 > fast", "fast");
	parse_bad("hist runq p99 > 0ms", "0ms");
	parse_bad("hist runq p99 > 1ms over 500ms", "500ms");
	parse_bad("hist runq p99 > 1ms over 10m", "10m");
	parse_bad("hist runq p99 > 1ms over", "over");
	parse_bad("hist runq p99 > 1ms and more", "and");
	parse_bad("hist runq pid x p99 > 1ms", "x");
	parse_bad("hist runq comm 0123456789abcdefg p99 > 1ms", "15");
	parse_bad("hist runq count > 100", "100/s");
	parse_bad("stopwatch > 20ms", ">");
	parse_bad("stopwatch w 20ms", "20ms");
	parse_bad("offcpu 12 dozing > 50%", "dozing");
	parse_bad("offcpu 12 block_io > 150%", "150%");
	parse_bad("offcpu 12 block_io > 50", "50");
	parse_bad("lost > -1", "-1");
	parse_bad("shed > 9", "9");
	parse_bad("alert a b", "b");
	parse_bad("a b c d e f g h i j k l m", "too many");
	parse_bad("stopwatch aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "
		  "> 1s",
		  "too long");
}

/* The canonical form parses back to the same condition. */
static void test_round_trip(void **state)
{
	static const char *const texts[] = {
		"stopwatch heldwork > 20ms",
		"hist syscall:fsync p99 > 20ms over 10s",
		"hist offcpu:lock comm pg max > 1500us",
		"hist runq tid 9 count > 12.5/s over 3s",
		"runnable > 100ms",
		"runnable pid 3 > 1s",
		"offcpu 1234 block_io > 50% over 5s",
		"lost > 0",
		"shed > 2",
		"alert SlowFsync",
	};
	char buf[RSP_TRIG_COND_LEN];
	struct rsp_trig_cond a, b;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		parse_ok(texts[i], &a);
		rsp_trig_cond__format(&a, buf, sizeof(buf));
		parse_ok(buf, &b);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	parse_ok("hist syscall:fsync p99 > 20ms", &a);
	assert_string_equal(rsp_trig_cond__format(&a, buf, sizeof(buf)),
			    "hist syscall:fsync p99 > 20ms over 10s");
}

/* The configuration file's line: NAME 'CONDITION' [options]. */
static void test_spec_line(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_trig_spec s;

	assert_int_equal(rsp_trig_spec__parse_line("slow 'stopwatch heldwork > 20ms' --post 5s "
						   "--holdoff=2m",
						   &s, &err),
			 0);
	assert_string_equal(s.name, "slow");
	assert_string_equal(s.cond_text, "stopwatch heldwork > 20ms");
	assert_int_equal(s.action, RSP_TRIG_DUMP);
	assert_int_equal(s.post_ns, 5000000000ull);
	assert_int_equal(s.holdoff_ns, 120000000000ull);
	assert_int_equal(rsp_trig_spec__parse_line("io offcpu 12 block_io > 50% --action "
						   "snapshot:12",
						   &s, &err),
			 0);
	assert_int_equal(s.action, RSP_TRIG_SNAPSHOT);
	assert_int_equal(s.snapshot_pid, 12);
	assert_int_equal(s.holdoff_ns, RSP_TRIG_HOLDOFF_DEFAULT_NS);
	assert_int_equal(rsp_trig_spec__parse_line("l \"lost > 0\" --action log", &s, &err), 0);
	assert_int_equal(s.action, RSP_TRIG_LOG);

	static const char *const bad[][2] = {
		{"", "name"},
		{"x 'lost > 0", "quote"},
		{"x 'lost > 0' --post", "value"},
		{"x 'lost > 0' --action log --post 1s", "--post"},
		{"x 'lost > 0' --post 10m", "300s"},
		{"x 'lost > 0' --action snap", "snap"},
		{"x 'lost > 0' --action snapshot:0", "snapshot"},
		{"x 'lost > 0' --holdoff soon", "soon"},
		{"x 'lost > 0' --colour red", "--colour"},
		{"b@d 'lost > 0'", "b@d"},
		{"x 'lots > 0'", "lots"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rsp_buf__reset(&err);
		assert_int_equal(rsp_trig_spec__parse_line(bad[i][0], &s, &err), -EINVAL);
		if (!err.data || !strstr(err.data, bad[i][1]))
			fail_msg("'%s': '%s' does not name '%s'", bad[i][0], err.data, bad[i][1]);
	}
	rsp_buf__exit(&err);
}

/* rspctl trigger add|list|rm, parsed as rspd and rspctl parse it. */
static void test_request(void **state)
{
	const char *add[] = {"trigger",	  "add", "slow",     "stopwatch heldwork > 20ms",
			     "--post",	  "3s",	 "--action", "dump",
			     "--holdoff", "10s"};
	const char *rm[] = {"trigger", "rm", "slow"};
	const char *bad[] = {"trigger", "add", "slow", "stopwatch", "heldwork", "> 20ms"};
	const char *badopt[] = {"trigger", "list", "--post", "1s"};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_trig_request tr;
	struct rsp_request req;

	assert_int_equal(rsp_request__parse(10, add, &req, &err), 0);
	assert_int_equal(rsp_request__trigger(&req, &tr), 0);
	assert_int_equal(tr.op, RSP_TRIG_ADD);
	assert_string_equal(tr.spec.name, "slow");
	assert_string_equal(tr.spec.cond_text, "stopwatch heldwork > 20ms");
	assert_int_equal(tr.spec.post_ns, 3000000000ull);
	assert_int_equal(tr.spec.holdoff_ns, 10000000000ull);
	rsp_request__exit(&req);
	assert_int_equal(rsp_request__parse(3, rm, &req, &err), 0);
	assert_int_equal(rsp_request__trigger(&req, &tr), 0);
	assert_int_equal(tr.op, RSP_TRIG_RM);
	assert_string_equal(tr.name, "slow");
	rsp_request__exit(&req);
	assert_int_not_equal(rsp_request__parse(6, bad, &req, &err), 0);
	assert_non_null(strstr(err.data, "quotes"));
	rsp_buf__reset(&err);
	assert_int_not_equal(rsp_request__parse(4, badopt, &req, &err), 0);
	assert_non_null(strstr(err.data, "add only"));
	rsp_buf__exit(&err);
}

static void test_list(void **state)
{
	struct rsp_trig_view v = {0};
	struct rsp_trig_totals t = {.nr = 1, .max = 128, .rate_per_min = 10};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;

	assert_int_equal(
		rsp_trig_spec__parse_line("slow 'stopwatch w > 20ms' --post 2s", &v.spec, &err), 0);
	v.fires = 3;
	v.held_off = 7;
	v.last_fire_ns = 5000000000ull;
	snprintf(v.last_value, sizeof(v.last_value), "a call took 50 ms");
	v.nr_files = 1;
	snprintf(v.files[0], sizeof(v.files[0]), "/d/rsp-h-1.perf.data");
	assert_int_equal(rsp_trig__render_list(&v, 1, &t, 7000000000ull, false, &out), 0);
	assert_non_null(strstr(out.data, "slow: stopwatch w > 20ms -> dump, post 2 s"));
	assert_non_null(strstr(out.data, "fires 3, held off 7"));
	assert_non_null(strstr(out.data, "last 2.0 s ago (a call took 50 ms)"));
	assert_non_null(strstr(out.data, "wrote /d/rsp-h-1.perf.data"));
	rsp_buf__reset(&out);
	assert_int_equal(rsp_trig__render_list(&v, 1, &t, 7000000000ull, true, &out), 0);
	assert_non_null(strstr(out.data, "\"fires\": 3"));
	assert_non_null(strstr(out.data, "\"last_fire_ago_s\": 2.0"));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

/* --- Alertmanager --------------------------------------------------------------- */

/* What Alertmanager 0.25 (Debian 12) posts to a webhook receiver. */
static const char am_payload[] =
	"{\"receiver\":\"rsp\",\"status\":\"firing\",\"alerts\":[{\"status\":\"firing\","
	"\"labels\":{\"alertname\":\"SlowFsync\",\"instance\":\"db1:9464\",\"severity\":\"page\"},"
	"\"annotations\":{},\"startsAt\":\"2026-11-29T04:00:00Z\",\"endsAt\":"
	"\"0001-01-01T00:00:00Z\",\"generatorURL\":\"\",\"fingerprint\":\"a1\"},{\"status\":"
	"\"resolved\",\"labels\":{\"alertname\":\"Old\",\"rsp_trigger\":\"fsync\"},"
	"\"annotations\":{}}],\"groupLabels\":{\"alertname\":\"SlowFsync\"},\"commonLabels\":{},"
	"\"commonAnnotations\":{},\"externalURL\":\"http://am:9093\",\"version\":\"4\","
	"\"groupKey\":\"{}:{alertname=\\\"SlowFsync\\\"}\",\"truncatedAlerts\":0}";

static void am_bad(const char *body, const char *word)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_am_payload p;

	assert_int_equal(rsp_am_payload__parse(body, strlen(body), &p, &err), -EINVAL);
	if (!err.data || !strstr(err.data, word) || strchr(err.data, '\n'))
		fail_msg("'%.60s': '%s' does not name '%s'", body, err.data, word);
	rsp_buf__exit(&err);
}

static void test_alertmanager(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_am_payload p;
	char many[8192];
	size_t len;

	assert_int_equal(rsp_am_payload__parse(am_payload, strlen(am_payload), &p, &err), 0);
	assert_string_equal(p.version, "4");
	assert_string_equal(p.receiver, "rsp");
	assert_int_equal(p.nr, 2);
	assert_true(p.alerts[0].firing);
	assert_string_equal(p.alerts[0].alertname, "SlowFsync");
	assert_string_equal(p.alerts[0].instance, "db1:9464");
	assert_string_equal(p.alerts[0].rsp_trigger, "");
	assert_false(p.alerts[1].firing);
	assert_string_equal(p.alerts[1].rsp_trigger, "fsync");

	am_bad("", "not JSON");
	am_bad("{\"version\":\"4\",", "not JSON");
	am_bad("[1,2]", "not a JSON object");
	am_bad("{\"version\":\"3\",\"alerts\":[]}", "version");
	am_bad("{\"version\":4,\"alerts\":[]}", "version");
	am_bad("{\"version\":\"4\"}", "alerts array");
	am_bad("{\"version\":\"4\",\"alerts\":[{\"status\":\"firing\"}]}", "labels");
	am_bad("{\"version\":\"4\",\"alerts\":[{\"status\":\"x\",\"labels\":{}}]}", "status");
	am_bad("{\"version\":\"4\",\"alerts\":[{\"status\":\"firing\",\"labels\":{}}]}",
	       "alertname");
	am_bad("{\"version\":\"4\",\"alerts\":[{\"status\":\"firing\",\"labels\":{\"alertname\":"
	       "\"a\",\"rsp_trigger\":7}}]}",
	       "rsp_trigger");
	am_bad("{\"version\":\"4\",\"version\":\"4\",\"alerts\":[]}", "not JSON");
	len = (size_t)snprintf(many, sizeof(many), "{\"version\":\"4\",\"alerts\":[");
	for (int i = 0; i <= RSP_AM_MAX_ALERTS; i++)
		len += (size_t)snprintf(
			many + len, sizeof(many) - len,
			"%s{\"status\":\"firing\",\"labels\":{\"alertname\":\"a\"}}", i ? "," : "");
	snprintf(many + len, sizeof(many) - len, "]}");
	am_bad(many, "more than 64 alerts");
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),  cmocka_unit_test(test_other_forms),
		cmocka_unit_test(test_refused),	  cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_spec_line), cmocka_unit_test(test_request),
		cmocka_unit_test(test_list),	  cmocka_unit_test(test_alertmanager),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
