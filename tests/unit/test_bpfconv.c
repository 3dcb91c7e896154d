// SPDX-License-Identifier: GPL-2.0
/*
 * Compact BPF records written back as the kernel's tracepoint samples
 * (lib/format/bpfconv.c), decoded again with the tracepoints' own formats
 * (the golden formats of tests/support/synth.c): every field rsp reads has
 * the compact record's value, comm fields the names the COMM records gave,
 * the callchain the STACK records' frames, kernel then user; a stack never
 * sent is counted and left out, not invented.
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
#include <rsp/record.h>
#include <rsp/tp.h>
#include "internal/bpfconv.h"
#include "internal/schema.h"
#include "support/synth.h"
#include "tracepoints/bpf_records.h"

static const uint64_t kips[] = {0xffffffff81001000ull, 0xffffffff81002000ull,
				0xffffffff81003000ull};
static const uint64_t uips[] = {0x401000, 0x402000};

static void hdr(void *rec, uint8_t kind, size_t size, uint32_t tid, uint64_t time)
{
	struct rsp_brec_hdr *h = rec;

	memset(h, 0, sizeof(*h));
	h->type = RSP_BREC_TYPE(kind);
	h->size = (uint16_t)size;
	h->cpu = 1;
	h->time = time;
	h->pid = h->tid = tid;
}

/* The schema's evsels: bpf-output, then the converted tracepoint of @ev, with its id. */
static void add_evsels(struct synth *s, struct rsp_bpfconv *c, int ev, uint64_t id)
{
	struct perf_event_attr a = {.size = sizeof(a), .sample_id_all = 1}, t;
	int idx;

	if (s->schema->bpf_evsel < 0) {
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_BPF_OUTPUT;
		a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_RAW;
		assert_true(rsp_schema__add_evsel(s->schema, &a, -1, RSP_ROLE_BPF, "bpf-output") >=
			    0);
	}
	rsp_bpfconv__attr(c, ev, &s->schema->evsels[s->schema->bpf_evsel].attr, &t);
	assert_int_equal(t.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(t.config, (uint64_t)rsp_schema__tp_id(s->schema, ev));
	idx = rsp_schema__add_evsel(s->schema, &t, ev, RSP_ROLE_PRIMARY, "tp");
	assert_true(idx >= 0);
	assert_int_equal(rsp_schema__add_id(s->schema, idx, id), 0);
}

static void learn_names_and_stacks(struct rsp_bpfconv *c)
{
	struct rsp_brec_comm cm;
	struct {
		struct rsp_brec_stack r;
		uint64_t ips[4];
	} st;

	hdr(&cm, RSP_BREC_COMM, sizeof(cm), 42, 10);
	cm.tid = cm.pid = 42;
	snprintf(cm.comm, sizeof(cm.comm), "app");
	assert_int_equal(rsp_bpfconv__learn(c, (void *)&cm), 1);
	hdr(&cm, RSP_BREC_COMM, sizeof(cm), 42, 11);
	cm.tid = cm.pid = 43;
	snprintf(cm.comm, sizeof(cm.comm), "peer");
	assert_int_equal(rsp_bpfconv__learn(c, (void *)&cm), 1);
	memset(&st, 0, sizeof(st));
	hdr(&st, RSP_BREC_STACK, sizeof(st.r) + 3 * 8, 42, 12);
	st.r.hash = 0x1111;
	st.r.nr = 3;
	st.r.which = RSP_BSTACK_KERNEL;
	memcpy(st.ips, kips, sizeof(kips));
	assert_int_equal(rsp_bpfconv__learn(c, (void *)&st), 1);
	hdr(&st, RSP_BREC_STACK, sizeof(st.r) + 2 * 8, 42, 12);
	st.r.hash = 0x2222;
	st.r.nr = 2;
	st.r.which = RSP_BSTACK_USER;
	memcpy(st.ips, uips, sizeof(uips));
	assert_int_equal(rsp_bpfconv__learn(c, (void *)&st), 1);
}

static void test_switch(void **state)
{
	struct synth s;
	struct rsp_bpfconv *c;
	struct rsp_brec_switch_stack r;
	struct rsp_sample smp;
	struct rsp_tp_sched_switch sw;
	struct rsp_bpfconv_stats st;
	uint64_t buf[512];
	int ev, n;

	(void)state;
	synth__init(&s);
	c = rsp_bpfconv__new(s.schema);
	assert_non_null(c);
	assert_true(rsp_bpfconv__event(c, RSP_EV_sched_switch));
	add_evsels(&s, c, RSP_EV_sched_switch, 7777);
	learn_names_and_stacks(c);
	memset(&r, 0, sizeof(r));
	hdr(&r, RSP_BREC_SWITCH_STACK, sizeof(r), 42, 5000);
	r.sw.next_tid = r.sw.next_pid = 43;
	r.sw.prev_state = 2;
	r.sw.prev_prio = 120;
	r.sw.next_prio = 100;
	r.kstack = 0x1111;
	r.ustack = 0x2222;
	n = rsp_bpfconv__sample(c, (void *)&r, 7777, buf, sizeof(buf), &ev);
	assert_true(n > 0 && n % 8 == 0);
	assert_int_equal(ev, RSP_EV_sched_switch);
	assert_int_equal(rsp_record__parse_sample(s.schema, (void *)buf, &smp), 0);
	assert_int_equal(smp.event, RSP_EV_sched_switch);
	assert_int_equal(smp.compact, 0);
	assert_int_equal(smp.time, 5000);
	assert_int_equal(smp.tid, 42);
	assert_int_equal(smp.cpu, 1);
	assert_int_equal(rsp_tp__sched_switch(s.schema, &smp, &sw), 0);
	assert_int_equal(sw.prev_pid, 42);
	assert_int_equal(sw.next_pid, 43);
	assert_int_equal(sw.prev_state, 2);
	assert_int_equal(sw.prev_prio, 120);
	assert_int_equal(sw.next_prio, 100);
	assert_true(sw.prev_comm.len == 3 && !memcmp(sw.prev_comm.ptr, "app", 3));
	assert_true(sw.next_comm.len == 4 && !memcmp(sw.next_comm.ptr, "peer", 4));
	/* the raw data starts with the tracepoint's id, then the current pid */
	{
		uint16_t type;
		int32_t pid;

		memcpy(&type, smp.raw, 2);
		memcpy(&pid, (const char *)smp.raw + 4, 4);
		assert_int_equal(type, rsp_schema__tp_id(s.schema, RSP_EV_sched_switch));
		assert_int_equal(pid, 42);
	}
	assert_int_equal(smp.nr_callchain, 7);
	assert_int_equal(smp.callchain[0], PERF_CONTEXT_KERNEL);
	assert_memory_equal(smp.callchain + 1, kips, sizeof(kips));
	assert_int_equal(smp.callchain[4], PERF_CONTEXT_USER);
	assert_memory_equal(smp.callchain + 5, uips, sizeof(uips));

	/* a stack never sent, a thread never named: counted, left out */
	r.ustack = 0x3333;
	r.sw.next_tid = 44;
	n = rsp_bpfconv__sample(c, (void *)&r, 7777, buf, sizeof(buf), &ev);
	assert_true(n > 0);
	assert_int_equal(rsp_record__parse_sample(s.schema, (void *)buf, &smp), 0);
	assert_int_equal(rsp_tp__sched_switch(s.schema, &smp, &sw), 0);
	assert_int_equal(smp.nr_callchain, 4); /* the kernel part only */
	assert_int_equal(sw.next_comm.len, 0);
	rsp_bpfconv__stats(c, &st);
	assert_int_equal(st.converted, 2);
	assert_int_equal(st.stacks_missing, 1);
	assert_int_equal(st.unnamed, 1);
	/* a side record is no sample; a malformed record is refused */
	{
		struct rsp_brec_comm cm;

		hdr(&cm, RSP_BREC_COMM, sizeof(cm), 42, 10);
		assert_int_equal(rsp_bpfconv__sample(c, (void *)&cm, 1, buf, sizeof(buf), &ev),
				 -ENOENT);
		hdr(&r, 99, sizeof(r), 42, 5000); /* an unknown kind */
		assert_int_equal(rsp_bpfconv__sample(c, (void *)&r, 1, buf, sizeof(buf), &ev),
				 -EINVAL);
		hdr(&r, RSP_BREC_SWITCH_STACK, sizeof(r), 42, 5000);
		assert_int_equal(rsp_bpfconv__sample(c, (void *)&r, 1, buf, 32, &ev), -E2BIG);
	}
	rsp_bpfconv__delete(c);
	synth__exit(&s);
}

/* A block request: dev, sector, sectors, bytes, rwbs and the issuer's name. */
static void test_block(void **state)
{
	struct synth s;
	struct rsp_bpfconv *c;
	struct rsp_brec_block r;
	struct rsp_sample smp;
	struct rsp_tp_block_rq_issue b;
	uint64_t buf[512];
	int ev;

	(void)state;
	synth__init(&s);
	c = rsp_bpfconv__new(s.schema);
	assert_non_null(c);
	if (!rsp_bpfconv__event(c, RSP_EV_block_rq_issue)) {
		print_message("SKIP: the golden formats have no block_rq_issue\n");
		rsp_bpfconv__delete(c);
		synth__exit(&s);
		skip();
	}
	add_evsels(&s, c, RSP_EV_block_rq_issue, 8888);
	learn_names_and_stacks(c);
	memset(&r, 0, sizeof(r));
	hdr(&r, RSP_BREC_BLOCK_ISSUE, sizeof(r), 42, 6000);
	r.dev = 254u << 20 | 1;
	r.sector = 123456;
	r.nr_sector = 8;
	r.bytes = 4096;
	memcpy(r.rwbs, "WS", 3);
	assert_true(rsp_bpfconv__sample(c, (void *)&r, 8888, buf, sizeof(buf), &ev) > 0);
	assert_int_equal(rsp_record__parse_sample(s.schema, (void *)buf, &smp), 0);
	assert_int_equal(rsp_tp__block_rq_issue(s.schema, &smp, &b), 0);
	assert_int_equal(b.dev, 254u << 20 | 1);
	assert_int_equal(b.sector, 123456);
	assert_int_equal(b.nr_sector, 8);
	assert_int_equal(b.bytes, 4096);
	assert_true(b.rwbs.len == 2 && !memcmp(b.rwbs.ptr, "WS", 2));
	assert_true(b.comm.len == 3 && !memcmp(b.comm.ptr, "app", 3));
	rsp_bpfconv__delete(c);
	synth__exit(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
