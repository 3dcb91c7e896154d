// SPDX-License-Identifier: GPL-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <traceevent/event-parse.h>
#include <rsp/record.h>
#include <rsp/tp.h>
#include "golden/golden.h"
#include "support/synth.h"

struct synth *synth__new(unsigned nr_cpus, size_t budget)
{
	struct synth *s = calloc(1, sizeof(*s));
	struct rsp_window_config wc = {.budget = budget, .nr_cpus = nr_cpus};

	s->nr_cpus = nr_cpus;
	s->tep = tep_alloc();
	tep_set_long_size(s->tep, 8);
	tep_set_loglevel(TEP_LOG_NONE);
	for (const struct golden_format *f = golden_formats; f->system; f++)
		assert_int_equal(tep_parse_event(s->tep, f->format, strlen(f->format), f->system),
				 0);
	s->schema = rsp_schema__new();
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		struct perf_event_attr a = {.size = sizeof(a), .sample_id_all = 1};
		int idx;

		a.type = rsp_catalogue__event(ev)->kind == RSP_EVK_TRACEPOINT ? PERF_TYPE_TRACEPOINT
									      : PERF_TYPE_SOFTWARE;
		a.sample_type = RSP_LAYOUT_SAMPLE_TYPE |
				(a.type == PERF_TYPE_TRACEPOINT ? PERF_SAMPLE_RAW : 0) |
				(ev == RSP_EV_cpu_clock ? PERF_SAMPLE_PERIOD : 0); /* as rspd */
		idx = rsp_schema__add_evsel(s->schema, &a, ev, RSP_ROLE_PRIMARY,
					    rsp_catalogue__event(ev)->name);
		assert_int_equal(rsp_schema__add_id(s->schema, idx, (uint64_t)ev + 1), 0);
	}
	rsp_schema__resolve_fields(s->schema, s->tep);
	s->window = rsp_window__new(&wc);
	assert_non_null(s->window);
	return s;
}

void synth__delete(struct synth *s)
{
	if (!s)
		return;
	rsp_window__delete(s->window);
	rsp_schema__delete(s->schema);
	tep_free(s->tep);
	free(s);
}

static void append(struct synth *s, unsigned cpu, uint64_t time, uint64_t *w, unsigned words)
{
	struct perf_event_header *h = (void *)w;

	h->type = PERF_RECORD_SAMPLE;
	h->misc = 0;
	h->size = (uint16_t)(words * 8);
	assert_int_equal(rsp_window__append(s->window, cpu, time, h), 0);
}

void synth__tp(struct synth *s, int event, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid,
	       const void *fields, uint32_t fields_size)
{
	uint64_t w[64] = {0};
	uint32_t raw_size = 8 + fields_size;
	uint16_t type = (uint16_t)rsp_schema__tp_id(s->schema, event);
	unsigned char *raw = (unsigned char *)&w[6] + 4;

	assert_true(raw_size + 4 + 48 <= sizeof(w));
	w[1] = (uint64_t)event + 1;
	w[2] = 0xffffffff81000000;
	w[3] = pid | ((uint64_t)tid << 32);
	w[4] = time;
	w[5] = cpu;
	memcpy(&w[6], &raw_size, 4);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &tid, 4);
	memcpy(raw + 8, fields, fields_size);
	append(s, cpu, time, w, 6 + (4 + raw_size + 7) / 8);
}

void synth__switch(struct synth *s, unsigned cpu, uint64_t time, uint32_t prev_tgid,
		   uint32_t prev_tid, const char *prev_comm, int64_t prev_state, uint32_t next_tid,
		   const char *next_comm)
{
	/* This kernel's layout, after the common fields (see golden formats). */
	unsigned char f[56] = {0};
	int32_t prio = 120;

	strncpy((char *)f, prev_comm, 15);
	memcpy(f + 16, &prev_tid, 4);
	memcpy(f + 20, &prio, 4);
	memcpy(f + 24, &prev_state, 8);
	strncpy((char *)f + 32, next_comm, 15);
	memcpy(f + 48, &next_tid, 4);
	memcpy(f + 52, &prio, 4);
	synth__tp(s, RSP_EV_sched_switch, cpu, time, prev_tgid, prev_tid, f, sizeof(f));
}

void synth__waking(struct synth *s, unsigned cpu, uint64_t time, uint32_t waker_tgid,
		   uint32_t waker_tid, uint32_t wakee_tid, int target_cpu)
{
	unsigned char f[28] = {0};
	int32_t prio = 120;

	memcpy(f, "wakee", 5);
	memcpy(f + 16, &wakee_tid, 4);
	memcpy(f + 20, &prio, 4);
	memcpy(f + 24, &target_cpu, 4);
	synth__tp(s, RSP_EV_sched_waking, cpu, time, waker_tgid, waker_tid, f, sizeof(f));
}

void synth__cpu_sample(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid,
		       uint64_t ip)
{
	synth__cpu_sample_mode(s, cpu, time, pid, tid, ip, PERF_RECORD_MISC_USER, 10101010);
}

void synth__cpu_sample_mode(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid,
			    uint32_t tid, uint64_t ip, uint16_t cpumode, uint64_t period)
{
	uint64_t w[7] = {0};
	struct perf_event_header *h = (void *)w;

	w[1] = RSP_EV_cpu_clock + 1;
	w[2] = ip;
	w[3] = pid | ((uint64_t)tid << 32);
	w[4] = time;
	w[5] = cpu;
	w[6] = period;
	h->type = PERF_RECORD_SAMPLE;
	h->misc = cpumode;
	h->size = sizeof(w);
	assert_int_equal(rsp_window__append(s->window, cpu, time, h), 0);
}

/* Close a side-band record at @words: the sample_id_all trailer, then the size. */
static const struct perf_event_header *trailer(uint64_t *buf, unsigned words, int type,
					       uint16_t misc, uint64_t time, uint32_t pid,
					       uint32_t tid)
{
	struct perf_event_header *h = (void *)buf;

	buf[words++] = pid | ((uint64_t)tid << 32);
	buf[words++] = time;
	buf[words++] = 0; /* cpu */
	buf[words++] = RSP_EV_sideband + 1;
	h->type = (uint32_t)type;
	h->misc = misc;
	h->size = (uint16_t)(words * 8);
	return h;
}

const struct perf_event_header *synth__mmap2_rec(uint64_t *buf, uint64_t time, uint32_t pid,
						 uint64_t addr, uint64_t len, uint64_t pgoff,
						 uint64_t ino, uint32_t prot, const char *path)
{
	size_t n = strlen(path) + 1, words = (n + 7) / 8;
	unsigned char *b = (unsigned char *)buf;
	uint32_t maj = 8, min = 1, flags = 2;

	assert_true(n < 256);
	memset(buf, 0, 512);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &pid, 4);
	memcpy(b + 16, &addr, 8);
	memcpy(b + 24, &len, 8);
	memcpy(b + 32, &pgoff, 8);
	memcpy(b + 40, &maj, 4);
	memcpy(b + 44, &min, 4);
	memcpy(b + 48, &ino, 8);
	/* ino_generation 0 at 56 */
	memcpy(b + 64, &prot, 4);
	memcpy(b + 68, &flags, 4);
	memcpy(b + 72, path, n);
	return trailer(buf, (unsigned)(9 + words), PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, time,
		       pid, pid);
}

const struct perf_event_header *synth__comm_rec(uint64_t *buf, uint64_t time, uint32_t pid,
						uint32_t tid, const char *comm, int exec)
{
	size_t n = strlen(comm) + 1, words = (n + 7) / 8;
	unsigned char *b = (unsigned char *)buf;

	assert_true(n <= 16);
	memset(buf, 0, 512);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &tid, 4);
	memcpy(b + 16, comm, n);
	return trailer(buf, (unsigned)(2 + words), PERF_RECORD_COMM,
		       exec ? PERF_RECORD_MISC_COMM_EXEC : 0, time, pid, tid);
}

const struct perf_event_header *synth__task_rec(uint64_t *buf, int type, uint64_t time,
						uint32_t pid, uint32_t ppid, uint32_t tid,
						uint32_t ptid)
{
	unsigned char *b = (unsigned char *)buf;

	memset(buf, 0, 512);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &ppid, 4);
	memcpy(b + 16, &tid, 4);
	memcpy(b + 20, &ptid, 4);
	memcpy(b + 24, &time, 8);
	return trailer(buf, 4, type, 0, time, pid, tid);
}

static void append_rec(struct synth *s, unsigned cpu, const struct perf_event_header *h)
{
	assert_int_equal(rsp_window__append(s->window, cpu, rsp_layout__time(h), h), 0);
}

void synth__mmap2(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint64_t addr,
		  uint64_t len, uint64_t pgoff, uint64_t ino, uint32_t prot, const char *path)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__mmap2_rec(buf, time, pid, addr, len, pgoff, ino, prot, path));
}

void synth__comm(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid,
		 const char *comm, int exec)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__comm_rec(buf, time, pid, tid, comm, exec));
}

void synth__fork(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t ppid)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__task_rec(buf, PERF_RECORD_FORK, time, pid, ppid, pid, ppid));
}

void synth__exit(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__task_rec(buf, PERF_RECORD_EXIT, time, pid, pid, tid, tid));
}

void synth__irq_entry(struct synth *s, unsigned cpu, uint64_t time, int irq, const char *name)
{
	/* irq (int) at 8, __data_loc name at 12, the string after: offset 16. */
	unsigned char f[48] = {0};
	uint32_t len = (uint32_t)strlen(name) + 1, loc = len << 16 | 16;

	assert_true(8 + len <= sizeof(f));
	memcpy(f, &irq, 4);
	memcpy(f + 4, &loc, 4);
	memcpy(f + 8, name, len);
	synth__tp(s, RSP_EV_irq_handler_entry, cpu, time, 0, 0, f, 8 + len);
}

void synth__irq_exit(struct synth *s, unsigned cpu, uint64_t time, int irq)
{
	unsigned char f[8] = {0};
	int32_t ret = 1;

	memcpy(f, &irq, 4);
	memcpy(f + 4, &ret, 4);
	synth__tp(s, RSP_EV_irq_handler_exit, cpu, time, 0, 0, f, sizeof(f));
}

void synth__softirq(struct synth *s, unsigned cpu, uint64_t time, unsigned vec, int entry)
{
	uint32_t v = vec;

	synth__tp(s, entry ? RSP_EV_softirq_entry : RSP_EV_softirq_exit, cpu, time, 0, 0, &v,
		  sizeof(v));
}

void synth__block(struct synth *s, int event, unsigned cpu, uint64_t time, uint32_t pid,
		  uint32_t tid, const char *comm, uint32_t dev, uint64_t sector, uint32_t nr_sector)
{
	/*
	 * insert/issue: dev@8 sector@16 nr_sector@24 bytes@28 ioprio@32
	 * rwbs[10]@34 comm[16]@44 cmd(__data_loc)@60, cmd string at 64.
	 * complete: dev@8 sector@16 nr_sector@24 error@28 ioprio@32 rwbs@34
	 * cmd(__data_loc)@44, string at 48. Offsets here are minus the 8
	 * common bytes.
	 */
	unsigned char f[64] = {0};
	uint32_t bytes = nr_sector * 512, loc;
	size_t n;

	memcpy(f, &dev, 4);
	memcpy(f + 8, &sector, 8);
	memcpy(f + 16, &nr_sector, 4);
	memcpy(f + 26, "WS", 2);
	if (event == RSP_EV_block_rq_complete) {
		loc = 1u << 16 | 48;
		memcpy(f + 36, &loc, 4);
		n = 41;
	} else {
		memcpy(f + 20, &bytes, 4);
		strncpy((char *)f + 36, comm, 15);
		loc = 1u << 16 | 64;
		memcpy(f + 52, &loc, 4);
		n = 57;
	}
	synth__tp(s, event, cpu, time, pid, tid, f, (uint32_t)n);
}
