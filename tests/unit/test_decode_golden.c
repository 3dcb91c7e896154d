// SPDX-License-Identifier: GPL-2.0
/*
 * Golden decode tests: real formats and raw records of this kernel's
 * tracepoints (tests/golden/golden_records.c, made by gen_golden.py), with
 * the values perf script printed for them. rsp's decoder must read every
 * field perf read, and libtraceevent must print the same text from the same
 * format and bytes, so that the format and the bytes are known to agree.
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
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/tp.h>
#include "golden/golden.h"

struct fixture {
	struct tep_handle *tep;
	struct rsp_schema *schema;
};

static struct tep_handle *load_formats(const struct golden_format *f)
{
	struct tep_handle *tep = tep_alloc();

	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_loglevel(TEP_LOG_NONE);
	for (; f->system; f++)
		assert_int_equal(tep_parse_event(tep, f->format, strlen(f->format), f->system),
				 TEP_ERRNO__SUCCESS);
	return tep;
}

/* One evsel per catalogued tracepoint, sample id = event + 1. */
static void add_evsels(struct rsp_schema *s)
{
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		struct perf_event_attr a = {.size = sizeof(a), .type = PERF_TYPE_TRACEPOINT};
		int idx;

		a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_RAW;
		a.sample_id_all = 1;
		idx = rsp_schema__add_evsel(s, &a, ev, RSP_ROLE_PRIMARY,
					    rsp_catalogue__event(ev)->name);
		assert_true(idx >= 0);
		assert_int_equal(rsp_schema__add_id(s, idx, (uint64_t)ev + 1), 0);
	}
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	fx->tep = load_formats(golden_formats);
	fx->schema = rsp_schema__new();
	add_evsels(fx->schema);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	rsp_schema__delete(fx->schema);
	tep_free(fx->tep);
	free(fx);
	return 0;
}

/* Wrap raw tracepoint bytes into a PERF_RECORD_SAMPLE in rsp's layout. */
static struct perf_event_header *wrap(uint64_t id, const void *raw, uint32_t size)
{
	size_t body = 5 * 8 + ((4 + (size_t)size + 7) & ~(size_t)7);
	uint64_t *w = calloc(1, sizeof(struct perf_event_header) + body);
	struct perf_event_header *h = (void *)w;

	h->type = PERF_RECORD_SAMPLE;
	h->size = (uint16_t)(sizeof(*h) + body);
	w[1] = id;		   /* identifier */
	w[2] = 0xffffffff81000000; /* ip */
	w[3] = 42 | (43ull << 32); /* pid, tid */
	w[4] = 1000;		   /* time */
	w[5] = 1;		   /* cpu */
	memcpy(&w[6], &size, 4);
	memcpy((char *)&w[6] + 4, raw, size);
	return h;
}

static int field_of(int ev, const char *name)
{
	int first, n = rsp_catalogue__event_fields(ev, &first);

	for (int f = first; f < first + n; f++)
		if (!strcmp(rsp_catalogue__field(f)->name, name))
			return f;
	return -1;
}

/* Typed decode through the generated accessor of the record's event. */
static int typed_decode(const struct rsp_schema *s, const struct rsp_sample *smp)
{
	union {
#define U(E) struct rsp_tp_##E E;
		RSP_TP_EVENTS(U)
#undef U
	} u;

	switch (smp->event) {
#define C(E)                                                                                       \
	case RSP_EV_##E:                                                                           \
		return rsp_tp__##E(s, smp, &u.E);
		RSP_TP_EVENTS(C)
#undef C
	default:
		return -ENOENT;
	}
}

static void check_fields(const struct rsp_schema *s, const struct golden_record *g,
			 const struct rsp_sample *smp)
{
	for (const struct golden_field *gf = g->fields; gf->name; gf++) {
		int f = field_of(smp->event, gf->name);

		if (f < 0)
			fail_msg("%s: perf printed field %s that the catalogue lacks", g->event,
				 gf->name);
		if (gf->str) {
			struct rsp_str v = rsp_field__str(s, f, smp->raw, smp->raw_size);

			if (v.len != strlen(gf->str) || memcmp(v.ptr, gf->str, v.len))
				fail_msg("%s.%s: decoded '%.*s', perf says '%s'", g->event,
					 gf->name, (int)v.len, v.ptr ? v.ptr : "", gf->str);
		} else {
			uint64_t v = rsp_field__u64(s, f, smp->raw, smp->raw_size);

			if (v != gf->num)
				fail_msg("%s.%s: decoded %llu, perf says %llu", g->event, gf->name,
					 (unsigned long long)v, gf->num);
		}
	}
}

/* libtraceevent's text from the same format and bytes must equal perf's. */
static void check_text(struct tep_handle *tep, const struct golden_record *g)
{
	struct tep_record r = {.data = (void *)g->raw, .size = (int)g->size};
	struct trace_seq seq;

	/* %ps of a function pointer needs kallsyms, which the test does not have. */
	if (strstr(g->perf_text, "function=") || strstr(g->perf_text, "func="))
		return;
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &r, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	if (strcmp(seq.buffer, g->perf_text))
		fail_msg("%s: libtraceevent prints '%s', perf printed '%s'", g->event, seq.buffer,
			 g->perf_text);
	trace_seq_destroy(&seq);
}

static void test_every_event_resolves(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(rsp_schema__resolve_fields(fx->schema, fx->tep), 21);
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		if (rsp_catalogue__event(ev)->kind != RSP_EVK_TRACEPOINT)
			continue;
		if (!rsp_schema__event_ok(fx->schema, ev))
			fail_msg("%s: %s", rsp_catalogue__event(ev)->name,
				 rsp_schema__event_problem(fx->schema, ev));
		assert_true(rsp_schema__tp_id(fx->schema, ev) > 0);
		assert_int_equal(rsp_schema__event_by_tp_id(
					 fx->schema, (uint64_t)rsp_schema__tp_id(fx->schema, ev)),
				 ev);
	}
}

static void test_golden_records(void **state)
{
	struct fixture *fx = *state;
	int n = 0, seen[RSP_EV__NR] = {0};

	rsp_schema__resolve_fields(fx->schema, fx->tep);
	for (const struct golden_record *g = golden_records; g->event; g++) {
		int ev = rsp_catalogue__find_event(g->event);
		struct perf_event_header *h;
		struct rsp_sample smp;

		assert_true(ev >= 0);
		h = wrap((uint64_t)ev + 1, g->raw, g->size);
		assert_int_equal(rsp_record__parse_sample(fx->schema, h, &smp), 0);
		assert_int_equal(smp.event, ev);
		assert_int_equal(smp.raw_size, g->size);
		assert_int_equal(smp.tid, 43);
		assert_int_equal(smp.time, 1000);
		assert_int_equal(typed_decode(fx->schema, &smp), 0);
		check_fields(fx->schema, g, &smp);
		check_text(fx->tep, g);
		seen[ev]++;
		n++;
		free(h);
	}
	for (int ev = 0; ev < RSP_EV__NR; ev++)
		if (rsp_catalogue__event(ev)->kind == RSP_EVK_TRACEPOINT && !seen[ev])
			fail_msg("no golden record of %s", rsp_catalogue__event(ev)->name);
	assert_true(n >= 30);
}

static void test_typed_sched_switch(void **state)
{
	struct fixture *fx = *state;

	rsp_schema__resolve_fields(fx->schema, fx->tep);
	for (const struct golden_record *g = golden_records; g->event; g++) {
		struct rsp_tp_sched_switch sw;
		struct perf_event_header *h;
		struct rsp_sample smp;

		if (strcmp(g->event, "sched_switch"))
			continue;
		h = wrap(RSP_EV_sched_switch + 1, g->raw, g->size);
		assert_int_equal(rsp_record__parse_sample(fx->schema, h, &smp), 0);
		assert_int_equal(rsp_tp__sched_switch(fx->schema, &smp, &sw), 0);
		assert_int_equal(sw.prev_pid, (int64_t)g->fields[1].num);
		assert_int_equal(sw.prev_state, (int64_t)g->fields[3].num);
		assert_int_equal(sw.next_pid, (int64_t)g->fields[5].num);
		assert_int_equal(sw.prev_comm.len, strlen(g->fields[0].str));
		/* A truncated record cannot be read past its end. */
		smp.raw_size = 40;
		assert_int_equal(rsp_tp__sched_switch(fx->schema, &smp, &sw), -EINVAL);
		/* Another event's accessor refuses it. */
		{
			struct rsp_tp_sched_waking wk;

			assert_int_equal(rsp_tp__sched_waking(fx->schema, &smp, &wk), -ENOENT);
		}
		free(h);
	}
}

/* An older kernel's layout: 4-byte prev_state, fields at other offsets. */
static const char old_switch[] =
	"name: sched_switch\n"
	"ID: 300\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_state;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:36;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:52;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_pid=%d\", REC->prev_pid\n";

static void test_other_layout(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct rsp_schema *s = rsp_schema__new();
	unsigned char raw[60] = {0};
	int32_t prev_pid = 77, prev_state = -1, next_pid = 88;
	struct rsp_tp_sched_switch sw;
	struct perf_event_header *h;
	struct rsp_sample smp;

	assert_int_equal(tep_parse_event(tep, old_switch, strlen(old_switch), "sched"), 0);
	add_evsels(s);
	rsp_schema__resolve_fields(s, tep);
	assert_true(rsp_schema__event_ok(s, RSP_EV_sched_switch));
	assert_false(rsp_schema__event_ok(s, RSP_EV_sched_waking));
	assert_non_null(strstr(rsp_schema__event_problem(s, RSP_EV_sched_waking), "not available"));
	memcpy(raw + 8, "old", 3);
	memcpy(raw + 24, &prev_pid, 4);
	memcpy(raw + 32, &prev_state, 4);
	memcpy(raw + 36, "new", 3);
	memcpy(raw + 52, &next_pid, 4);
	h = wrap(RSP_EV_sched_switch + 1, raw, sizeof(raw));
	assert_int_equal(rsp_record__parse_sample(s, h, &smp), 0);
	assert_int_equal(rsp_tp__sched_switch(s, &smp, &sw), 0);
	assert_int_equal(sw.prev_pid, 77);
	assert_int_equal(sw.prev_state, -1); /* sign-extended from 4 bytes */
	assert_int_equal(sw.next_pid, 88);
	assert_int_equal(sw.next_comm.len, 3);
	assert_memory_equal(sw.next_comm.ptr, "new", 3);
	free(h);
	rsp_schema__delete(s);
	tep_free(tep);
}

/* A format without a required field disables the event and says why. */
static void test_missing_required_field(void **state)
{
	char fmt[sizeof(old_switch)];
	struct tep_handle *tep = tep_alloc();
	struct rsp_schema *s = rsp_schema__new();
	char *p;

	memcpy(fmt, old_switch, sizeof(fmt));
	p = strstr(fmt, "next_pid;");
	memcpy(p, "next_xyz", 8);
	assert_int_equal(tep_parse_event(tep, fmt, strlen(fmt), "sched"), 0);
	rsp_schema__resolve_fields(s, tep);
	assert_false(rsp_schema__event_ok(s, RSP_EV_sched_switch));
	assert_non_null(strstr(rsp_schema__event_problem(s, RSP_EV_sched_switch), "next_pid"));
	rsp_schema__delete(s);
	tep_free(tep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_event_resolves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_golden_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_typed_sched_switch, setup, teardown),
		cmocka_unit_test(test_other_layout),
		cmocka_unit_test(test_missing_required_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
