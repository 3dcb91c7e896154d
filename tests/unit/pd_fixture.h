/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TEST_PD_FIXTURE_H
#define RSP_TEST_PD_FIXTURE_H

/*
 * Fixtures for the perf.data tests: golden tracepoint formats (copied from
 * a 6.18 kernel's tracefs), a schema shaped like rspd's event set, and
 * records in rsp's layout built from known values.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <traceevent/event-parse.h>
#include <rsp/buf.h>
#include <rsp/perfdata.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/window.h>
#include "golden/golden.h"

#define FX_UNUSED __attribute__((unused))

static const char fx_header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				     "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				     "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
				     "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char fx_header_event[] = "# compressed entry header\n"
				      "\ttype_len    :    5 bits\n"
				      "\ttime_delta  :   27 bits\n"
				      "\tarray       :   32 bits\n";

#define FX_SWITCH_ID 372
#define FX_WAKING_ID 375

static const char fx_switch_format[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"REC->prev_state, REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char fx_waking_format[] =
	"name: sched_waking\n"
	"ID: 375\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, "
	"REC->prio, REC->target_cpu\n";

/* The tracing-data blob of the two formats. */
static FX_UNUSED void fx_tracing(struct rsp_buf *b)
{
	struct rsp_tracedata_event ev[] = {
		{"sched", fx_switch_format, sizeof(fx_switch_format) - 1},
		{"sched", fx_waking_format, sizeof(fx_waking_format) - 1},
	};

	if (rsp_tracedata__build(b, fx_header_page, sizeof(fx_header_page) - 1, fx_header_event,
				 sizeof(fx_header_event) - 1, ev, 2, NULL, 0, NULL))
		abort();
}

enum fx_policy {
	FX_SLEEPS,  /* two PRIMARY sched_switch evsels, the second with callchains */
	FX_SAMPLED, /* PRIMARY sched_switch + STACK_COPY duplicate with callchains */
};

/* ids: evsel i has ids 100*(i+1) + cpu */
static FX_UNUSED uint64_t fx_id(int evsel, unsigned cpu)
{
	return 100u * (unsigned)(evsel + 1) + cpu;
}

static FX_UNUSED void fx_attr(struct perf_event_attr *a, uint32_t type, uint64_t config, bool raw,
			      bool callchain)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->sample_period = 1;
	a->sample_type = RSP_LAYOUT_SAMPLE_TYPE | (raw ? PERF_SAMPLE_RAW : 0) |
			 (callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = 1;
	a->read_format = PERF_FORMAT_ID;
	if (type == PERF_TYPE_SOFTWARE && config == PERF_COUNT_SW_DUMMY)
		a->comm = a->task = a->mmap = a->mmap2 = a->comm_exec = 1;
}

/*
 * rspd's event set in small: evsel 0 sched_switch, 1 sched_switch with
 * callchains (PRIMARY for sleeps, STACK_COPY for sampled), 2 sched_waking,
 * 3 the side-band dummy. Fields resolved from the golden formats.
 */
static FX_UNUSED struct rsp_schema *fx_schema(enum fx_policy p, unsigned nr_cpus)
{
	struct rsp_schema *s = rsp_schema__new();
	struct rsp_buf td = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct tep_handle *tep;
	struct perf_event_attr a;

	fx_tracing(&td);
	tep = rsp_tracedata__parse(td.data, td.len, 0, NULL, NULL, &err);
	if (!s || !tep)
		abort();
	rsp_schema__resolve_fields(s, tep);
	fx_attr(&a, PERF_TYPE_TRACEPOINT, FX_SWITCH_ID, true, false);
	rsp_schema__add_evsel(s, &a, RSP_EV_sched_switch, RSP_ROLE_PRIMARY, "sched:sched_switch");
	fx_attr(&a, PERF_TYPE_TRACEPOINT, FX_SWITCH_ID, true, true);
	if (p == FX_SAMPLED)
		a.sample_period = 10;
	rsp_schema__add_evsel(s, &a, RSP_EV_sched_switch,
			      p == FX_SAMPLED ? RSP_ROLE_STACK_COPY : RSP_ROLE_PRIMARY,
			      "sched:sched_switch");
	fx_attr(&a, PERF_TYPE_TRACEPOINT, FX_WAKING_ID, true, false);
	rsp_schema__add_evsel(s, &a, RSP_EV_sched_waking, RSP_ROLE_PRIMARY, "sched:sched_waking");
	fx_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, false, false);
	rsp_schema__add_evsel(s, &a, RSP_EV_sideband, RSP_ROLE_PRIMARY, "dummy");
	for (int e = 0; e < 4; e++)
		for (unsigned c = 0; c < nr_cpus; c++)
			rsp_schema__add_id(s, e, fx_id(e, c));
	tep_free(tep);
	rsp_buf__exit(&td);
	rsp_buf__exit(&err);
	return s;
}

/* A record under construction: u64 words. */
struct fx_rec {
	uint64_t w[64];
	unsigned n;
};

static FX_UNUSED void fx_put(struct fx_rec *r, uint64_t v)
{
	r->w[r->n++] = v;
}

static FX_UNUSED const struct perf_event_header *fx_done(struct fx_rec *r, uint32_t type)
{
	struct perf_event_header *h = (void *)r->w;

	h->type = type;
	h->misc = 0;
	h->size = (uint16_t)(r->n * 8);
	return h;
}

static FX_UNUSED void fx_head(struct fx_rec *r, uint64_t id, uint32_t pid, uint32_t tid,
			      uint64_t time, uint32_t cpu)
{
	r->n = 1;
	fx_put(r, id);
	fx_put(r, 0xffffffff81000000ull + time % 4096); /* ip */
	fx_put(r, (uint64_t)tid << 32 | pid);
	fx_put(r, time);
	fx_put(r, cpu);
}

/* raw: u32 size 68, then 64 bytes of data and 4 of padding: 9 words. */
static FX_UNUSED void fx_raw(struct fx_rec *r, const void *data, size_t len)
{
	unsigned char buf[72] = {0};
	uint32_t size = 68;

	memcpy(buf, &size, 4);
	memcpy(buf + 4, data, len);
	memcpy(&r->w[r->n], buf, 72);
	r->n += 9;
}

static FX_UNUSED const struct perf_event_header *fx_switch(struct fx_rec *r, int evsel,
							   unsigned cpu, uint64_t time,
							   int32_t prev, int64_t prev_state,
							   int32_t next, bool callchain)
{
	unsigned char d[64] = {0};
	uint16_t type = FX_SWITCH_ID;

	memcpy(d, &type, 2);
	memcpy(d + 4, &prev, 4);
	snprintf((char *)d + 8, 16, "t%d", prev);
	memcpy(d + 24, &prev, 4);
	memcpy(d + 32, &prev_state, 8);
	snprintf((char *)d + 40, 16, "t%d", next);
	memcpy(d + 56, &next, 4);
	fx_head(r, fx_id(evsel, cpu), (uint32_t)prev, (uint32_t)prev, time, cpu);
	if (callchain) {
		fx_put(r, 3);
		fx_put(r, (uint64_t)PERF_CONTEXT_KERNEL);
		fx_put(r, 0xffffffff81001234ull);
		fx_put(r, 0xffffffff81005678ull);
	}
	fx_raw(r, d, sizeof(d));
	return fx_done(r, PERF_RECORD_SAMPLE);
}

static FX_UNUSED const struct perf_event_header *
fx_waking(struct fx_rec *r, unsigned cpu, uint64_t time, int32_t waker, int32_t wakee)
{
	unsigned char d[64] = {0};
	uint16_t type = FX_WAKING_ID;
	int32_t target = (int32_t)cpu;

	memcpy(d, &type, 2);
	memcpy(d + 4, &waker, 4);
	snprintf((char *)d + 8, 16, "t%d", wakee);
	memcpy(d + 24, &wakee, 4);
	memcpy(d + 32, &target, 4);
	fx_head(r, fx_id(2, cpu), (uint32_t)waker, (uint32_t)waker, time, cpu);
	fx_raw(r, d, sizeof(d));
	return fx_done(r, PERF_RECORD_SAMPLE);
}

/* A COMM record of the side-band evsel, with its trailer. */
static FX_UNUSED const struct perf_event_header *
fx_comm(struct fx_rec *r, unsigned cpu, uint64_t time, uint32_t pid, const char *comm)
{
	char c[16] = {0};

	snprintf(c, sizeof(c), "%s", comm);
	r->n = 1;
	fx_put(r, (uint64_t)pid << 32 | pid);
	memcpy(&r->w[r->n], c, 16);
	r->n += 2;
	fx_put(r, (uint64_t)pid << 32 | pid); /* trailer: tid, time, cpu, identifier */
	fx_put(r, time);
	fx_put(r, cpu);
	fx_put(r, fx_id(3, cpu));
	return fx_done(r, PERF_RECORD_COMM);
}

static FX_UNUSED const struct perf_event_header *fx_copy(const struct perf_event_header *h,
							 uint64_t *buf)
{
	memcpy(buf, h, h->size);
	return (const void *)buf;
}

/* RSP_PD_FEAT_RSP_HOST: two sockets of a known host (rspctl merge) */
#define FX_BOOT_ID "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
static const struct rsp_sock_info fx_socks[2] = {
	{.sk = 0xffff888100000100ull,
	 .proto = 6,
	 .state = 1,
	 .source = RSP_SOCK_FROM_PROC,
	 .inode = 77,
	 .local = {.family = 2, .port = 40000, .addr = {10, 77, 0, 1}},
	 .remote = {.family = 2, .port = 8080, .addr = {10, 77, 0, 2}}},
	{.sk = 0xffff888100000200ull,
	 .proto = 6,
	 .state = 10,
	 .source = RSP_SOCK_FROM_PROC,
	 .local = {.family = 10, .port = 22, .addr = {0xfd, 0x77, [15] = 1}}},
};

static FX_UNUSED void fx_meta(struct rsp_perfdata_meta *m, const struct rsp_buf *tracing)
{
	static const char *const argv[] = {"/usr/sbin/rspd", "--foreground", "--stacks", "sleeps"};

	memset(m, 0, sizeof(*m));
	m->hostname = "testhost";
	m->os_release = "6.18.0-test";
	m->arch = "x86_64";
	m->version = "rsp 0.1.0";
	m->cpu_desc = "Test CPU";
	m->cpuid = "AuthenticAMD,25,1,1";
	m->nr_cpus_avail = 2;
	m->nr_cpus_online = 2;
	m->total_mem_kb = 1024 * 1024;
	m->argc = 4;
	m->argv = argv;
	m->tracing_data = tracing->data;
	m->tracing_size = tracing->len;
	m->clockid = 1;
	m->clockid_res_ns = 1;
	m->wall_clock_ns = 1700000000000000000ull;
	m->clockid_time_ns = 1000000000ull;
	m->boot_id = FX_BOOT_ID;
	m->sockets = fx_socks;
	m->nr_sockets = 2;
}

/*
 * fx_meta() with the tracing data of this kernel's golden formats
 * (golden/golden.h) built into @td, which the meta points into.
 * Return: 0, or rsp_tracedata__build()'s error.
 */
static FX_UNUSED int fx_golden_meta(struct rsp_perfdata_meta *m, struct rsp_buf *td)
{
	struct rsp_tracedata_event ev[64];
	size_t kallsyms_at = 0;
	int nr = 0, ret;

	for (const struct golden_format *g = golden_formats; g->system && nr < 64; g++, nr++)
		ev[nr] = (struct rsp_tracedata_event){g->system, g->format, strlen(g->format)};
	ret = rsp_tracedata__build(td, fx_header_page, sizeof(fx_header_page) - 1, fx_header_event,
				   sizeof(fx_header_event) - 1, ev, nr, NULL, 0, &kallsyms_at);
	fx_meta(m, td);
	m->tracing_kallsyms_at = kallsyms_at;
	return ret;
}

/*
 * When set, fx_write() adds an RSP_PD_FEAT_RSP_CGROUPS section: pid 42 in
 * FX_CGROUP with namespaced pid 7 (at time 100), pid 100 with only a
 * namespaced pid (3, at time 1000).
 */
#define FX_CGROUP                                                                                  \
	"/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"    \
	".scope"
static bool fx_cgroups;

/* Write @w's records (and a small process model) through a memfd. */
static FX_UNUSED unsigned char *fx_write(const struct rsp_schema *s, struct rsp_window *w,
					 size_t *len)
{
	struct rsp_buf td = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_perfdata_meta m;
	struct rsp_pd_mmap2 mm = {.pid = 42,
				  .tid = 42,
				  .start = 0x400000,
				  .len = 0x1000,
				  .prot = 5,
				  .flags = 2,
				  .filename = "/usr/bin/true"};
	struct rsp_pd_build_id bid = {.path = "/usr/bin/true", .size = 20};
	struct rsp_pdwriter *pw;
	FILE *f = tmpfile();
	unsigned char *buf;
	long size;

	fx_tracing(&td);
	fx_meta(&m, &td);
	pw = rsp_pdwriter__new(fileno(f), s, &m, &err);
	if (!pw)
		abort();
	memset(bid.id, 0xab, sizeof(bid.id));
	if (rsp_pdwriter__kernel_mmap(pw, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull,
				      "[kernel.kallsyms]_text") ||
	    rsp_pdwriter__fork(pw, 42, 1, 42, 1) || rsp_pdwriter__comm(pw, 42, 42, "true") ||
	    rsp_pdwriter__mmap2(pw, &mm) || rsp_pdwriter__build_id(pw, &bid) ||
	    rsp_pdwriter__window(pw, w, 0, UINT64_MAX))
		abort();
	if (fx_cgroups && (rsp_pdwriter__rsp_cgroup(pw, 42, 7, 100, FX_CGROUP) ||
			   rsp_pdwriter__rsp_cgroup(pw, 100, 3, 1000, "")))
		abort();
	if (rsp_pdwriter__finish(pw))
		abort();
	rsp_pdwriter__delete(pw);
	size = ftell(f);
	buf = malloc((size_t)size);
	rewind(f);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size)
		abort();
	fclose(f);
	rsp_buf__exit(&td);
	rsp_buf__exit(&err);
	*len = (size_t)size;
	return buf;
}

#endif
