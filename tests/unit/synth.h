/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic record streams for tests and benchmarks: records in rsp's
 * layout (IDENTIFIER|IP|TID|TIME|CPU, + CALLCHAIN, + RAW), with raw data
 * laid out by the field offsets that libtraceevent parses from this
 * kernel's format text (formats.h), exactly as rspd resolves them.
 *
 * Header-only (static functions), so a test or a benchmark includes it
 * without build changes.
 */
#ifndef RSP_TEST_SYNTH_H
#define RSP_TEST_SYNTH_H

#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <traceevent/event-parse.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/tp.h>
#include <rsp/window.h>
#include "internal/schema.h"
#include "formats.h"

#define SYNTH_ID_BASE 1000u

/* Always checked (also under NDEBUG): the expressions have effects. */
#define synth_check(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: synth: %s failed\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct synth {
	struct tep_handle *tep;
	struct rsp_schema *schema;
	int evsel[RSP_EV__NR];	  /* without callchain */
	int evsel_cc[RSP_EV__NR]; /* with callchain (sched_switch into sleeps, sched_waking) */
	uint16_t raw_fixed[RSP_EV__NR];
	/* the stream */
	unsigned char *buf;
	size_t len, cap;
	size_t *offs;
	uint32_t *cpus;
	size_t n, cap_n;
};

static inline void synth_add_evsel(struct synth *s, int ev, bool cc)
{
	struct perf_event_attr a;
	int idx;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev == RSP_EV_sideband || ev == RSP_EV_cpu_clock ? PERF_TYPE_SOFTWARE
								 : PERF_TYPE_TRACEPOINT;
	a.config = ev == RSP_EV_cpu_clock ? PERF_COUNT_SW_CPU_CLOCK : 0;
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE |
			(ev == RSP_EV_sideband || ev == RSP_EV_cpu_clock ? 0 : PERF_SAMPLE_RAW) |
			(cc ? PERF_SAMPLE_CALLCHAIN : 0);
	a.sample_id_all = 1;
	idx = rsp_schema__add_evsel(s->schema, &a, ev, RSP_ROLE_PRIMARY, "synth");
	synth_check(idx >= 0);
	synth_check(!rsp_schema__add_id(s->schema, idx, SYNTH_ID_BASE + (uint64_t)idx));
	if (cc)
		s->evsel_cc[ev] = idx;
	else
		s->evsel[ev] = idx;
}

static inline uint16_t synth_fixed_size(struct tep_event *te)
{
	unsigned end = 0;

	for (struct tep_format_field *f = te->format.fields; f; f = f->next)
		if ((unsigned)(f->offset + f->size) > end)
			end = (unsigned)(f->offset + f->size);
	return (uint16_t)end;
}

static inline void synth_init(struct synth *s)
{
	memset(s, 0, sizeof(*s));
	s->tep = tep_alloc();
	s->schema = rsp_schema__new();
	synth_check(s->tep && s->schema);
	for (size_t i = 0; i < sizeof(test_formats) / sizeof(test_formats[0]); i++) {
		const struct test_format *f = &test_formats[i];
		struct tep_event *te = NULL;

		synth_check(tep_parse_format(s->tep, &te, f->text, strlen(f->text), f->system) ==
			    0);
	}
	rsp_schema__resolve_fields(s->schema, s->tep);
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_info *ei = rsp_catalogue__event(ev);
		struct tep_event *te;

		s->evsel[ev] = s->evsel_cc[ev] = -1;
		if (ev == RSP_EV_cpu_clock) {
			synth_add_evsel(s, ev, true); /* samples with a callchain */
			continue;
		}
		if (ei->kind != RSP_EVK_TRACEPOINT && ev != RSP_EV_sideband)
			continue;
		if (ei->kind == RSP_EVK_TRACEPOINT) {
			te = tep_find_event_by_name(s->tep, ei->system, ei->tp);
			synth_check(te && rsp_schema__event_ok(s->schema, ev));
			s->raw_fixed[ev] = synth_fixed_size(te);
		}
		synth_add_evsel(s, ev, false);
		if (ev == RSP_EV_sched_switch || ev == RSP_EV_sched_waking)
			synth_add_evsel(s, ev, true);
	}
}

static inline void synth_reset(struct synth *s)
{
	s->len = 0;
	s->n = 0;
}

static inline void synth_exit(struct synth *s)
{
	rsp_schema__delete(s->schema);
	tep_free(s->tep);
	free(s->buf);
	free(s->offs);
	free(s->cpus);
}

/* Room for @size more bytes and one more record; returns where to write. */
static inline unsigned char *synth_reserve(struct synth *s, size_t size, uint32_t cpu)
{
	while (s->len + size > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1 << 16;
		s->buf = realloc(s->buf, s->cap);
		synth_check(s->buf);
	}
	if (s->n == s->cap_n) {
		s->cap_n = s->cap_n ? s->cap_n * 2 : 1024;
		s->offs = realloc(s->offs, s->cap_n * sizeof(*s->offs));
		s->cpus = realloc(s->cpus, s->cap_n * sizeof(*s->cpus));
		synth_check(s->offs && s->cpus);
	}
	s->offs[s->n] = s->len;
	s->cpus[s->n++] = cpu;
	memset(s->buf + s->len, 0, size);
	s->len += size;
	return s->buf + s->len - size;
}

/* Raw payload under construction: fixed part, then __data_loc strings. */
struct synth_raw {
	unsigned char data[512];
	uint32_t len;
};

static inline void raw_init(struct synth *s, struct synth_raw *r, int ev)
{
	memset(r, 0, sizeof(*r));
	r->len = s->raw_fixed[ev];
}

static inline void raw_u(struct synth *s, struct synth_raw *r, enum rsp_field f, uint64_t v)
{
	const struct rsp_field_loc *l = &s->schema->fields[f];

	synth_check(l->flags & RSP_FLOC_PRESENT);
	memcpy(r->data + l->offset, &v, l->size); /* little-endian: the low bytes */
}

static inline void raw_str(struct synth *s, struct synth_raw *r, enum rsp_field f, const char *str)
{
	const struct rsp_field_loc *l = &s->schema->fields[f];
	size_t n = strlen(str);

	synth_check(l->flags & RSP_FLOC_PRESENT);
	if (l->flags & RSP_FLOC_DYNAMIC) {
		uint32_t loc = (uint32_t)(n + 1) << 16 | r->len;

		memcpy(r->data + l->offset, &loc, 4);
		memcpy(r->data + r->len, str, n + 1);
		r->len += (uint32_t)n + 1;
	} else {
		memcpy(r->data + l->offset, str, n < l->size ? n : l->size);
	}
}

/* Append one sample: header, id, ip, tid, time, cpu, [callchain], raw. */
static inline void synth_sample(struct synth *s, int ev, uint32_t cpu, uint64_t time, uint32_t pid,
				uint32_t tid, const uint64_t *chain, uint32_t nr,
				const struct synth_raw *raw)
{
	int evsel = chain ? s->evsel_cc[ev] : s->evsel[ev];
	uint32_t rawsz = raw ? raw->len : 0, padded = rawsz;
	size_t size;
	uint64_t *w;

	synth_check(evsel >= 0);
	while ((4 + padded) % 8)
		padded++;
	size = sizeof(struct perf_event_header) + 5 * 8 + (chain ? 8 * (1 + (size_t)nr) : 0) +
	       (raw ? 4 + padded : 0);
	w = (uint64_t *)synth_reserve(s, size, cpu);
	((struct perf_event_header *)w)->type = PERF_RECORD_SAMPLE;
	((struct perf_event_header *)w)->size = (uint16_t)size;
	w[1] = SYNTH_ID_BASE + (uint64_t)evsel;
	w[2] = 0;
	w[3] = (uint64_t)pid | (uint64_t)tid << 32;
	w[4] = time;
	w[5] = cpu;
	w += 6;
	if (chain) {
		*w++ = nr;
		memcpy(w, chain, nr * 8);
		w += nr;
	}
	if (raw) {
		memcpy(w, &padded, 4);
		memcpy((unsigned char *)w + 4, raw->data, rawsz);
	}
}

/* sched_switch on @cpu: prev (@ptgid/@ptid) leaves in @state, next comes on. */
static inline void synth_switch(struct synth *s, uint32_t cpu, uint64_t t, uint32_t ptgid,
				uint32_t ptid, const char *pcomm, int64_t state, uint32_t ntid,
				const char *ncomm, const uint64_t *chain, uint32_t nr)
{
	struct synth_raw r;

	raw_init(s, &r, RSP_EV_sched_switch);
	raw_str(s, &r, RSP_F_sched_switch__prev_comm, pcomm);
	raw_u(s, &r, RSP_F_sched_switch__prev_pid, ptid);
	raw_u(s, &r, RSP_F_sched_switch__prev_prio, 120);
	raw_u(s, &r, RSP_F_sched_switch__prev_state, (uint64_t)state);
	raw_str(s, &r, RSP_F_sched_switch__next_comm, ncomm);
	raw_u(s, &r, RSP_F_sched_switch__next_pid, ntid);
	raw_u(s, &r, RSP_F_sched_switch__next_prio, 120);
	synth_sample(s, RSP_EV_sched_switch, cpu, t, ptgid, ptid, chain, nr, &r);
}

/* sched_waking of @target on @cpu, in the context of @tgid/@tid. */
static inline void synth_waking(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				uint32_t tid, uint32_t target, const char *tcomm,
				const uint64_t *chain, uint32_t nr)
{
	struct synth_raw r;

	raw_init(s, &r, RSP_EV_sched_waking);
	raw_str(s, &r, RSP_F_sched_waking__comm, tcomm);
	raw_u(s, &r, RSP_F_sched_waking__pid, target);
	raw_u(s, &r, RSP_F_sched_waking__prio, 120);
	raw_u(s, &r, RSP_F_sched_waking__target_cpu, cpu);
	synth_sample(s, RSP_EV_sched_waking, cpu, t, tgid, tid, chain, nr, &r);
}

static inline void synth_fork(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
			      uint32_t parent, uint32_t child, const char *comm)
{
	struct synth_raw r;

	raw_init(s, &r, RSP_EV_sched_process_fork);
	raw_str(s, &r, RSP_F_sched_process_fork__parent_comm, comm);
	raw_u(s, &r, RSP_F_sched_process_fork__parent_pid, parent);
	raw_str(s, &r, RSP_F_sched_process_fork__child_comm, comm);
	raw_u(s, &r, RSP_F_sched_process_fork__child_pid, child);
	synth_sample(s, RSP_EV_sched_process_fork, cpu, t, tgid, parent, NULL, 0, &r);
}

static inline void synth_wakeup_new(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				    uint32_t tid, uint32_t child, const char *comm)
{
	struct synth_raw r;

	raw_init(s, &r, RSP_EV_sched_wakeup_new);
	raw_str(s, &r, RSP_F_sched_wakeup_new__comm, comm);
	raw_u(s, &r, RSP_F_sched_wakeup_new__pid, child);
	raw_u(s, &r, RSP_F_sched_wakeup_new__prio, 120);
	raw_u(s, &r, RSP_F_sched_wakeup_new__target_cpu, cpu);
	synth_sample(s, RSP_EV_sched_wakeup_new, cpu, t, tgid, tid, NULL, 0, &r);
}

/* block_rq_insert / _issue / _complete, in the context of @tgid/@tid. */
static inline void synth_block(struct synth *s, int ev, uint32_t cpu, uint64_t t, uint32_t tgid,
			       uint32_t tid, uint32_t dev, uint64_t sector, uint32_t bytes,
			       const char *rwbs)
{
	struct synth_raw r;
	enum rsp_field f_dev, f_sector, f_nr, f_rwbs;

	raw_init(s, &r, ev);
	if (ev == RSP_EV_block_rq_insert) {
		f_dev = RSP_F_block_rq_insert__dev, f_sector = RSP_F_block_rq_insert__sector;
		f_nr = RSP_F_block_rq_insert__nr_sector, f_rwbs = RSP_F_block_rq_insert__rwbs;
		raw_u(s, &r, RSP_F_block_rq_insert__bytes, bytes);
	} else if (ev == RSP_EV_block_rq_issue) {
		f_dev = RSP_F_block_rq_issue__dev, f_sector = RSP_F_block_rq_issue__sector;
		f_nr = RSP_F_block_rq_issue__nr_sector, f_rwbs = RSP_F_block_rq_issue__rwbs;
		raw_u(s, &r, RSP_F_block_rq_issue__bytes, bytes);
	} else {
		f_dev = RSP_F_block_rq_complete__dev, f_sector = RSP_F_block_rq_complete__sector;
		f_nr = RSP_F_block_rq_complete__nr_sector, f_rwbs = RSP_F_block_rq_complete__rwbs;
	}
	raw_u(s, &r, f_dev, dev);
	raw_u(s, &r, f_sector, sector);
	raw_u(s, &r, f_nr, bytes / 512);
	raw_str(s, &r, f_rwbs, rwbs);
	synth_sample(s, ev, cpu, t, tgid, tid, NULL, 0, &r);
}

static inline void synth_irq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq,
			     const char *name)
{
	struct synth_raw r;

	raw_init(s, &r, entry ? RSP_EV_irq_handler_entry : RSP_EV_irq_handler_exit);
	if (entry) {
		raw_u(s, &r, RSP_F_irq_handler_entry__irq, (uint64_t)irq);
		raw_str(s, &r, RSP_F_irq_handler_entry__name, name);
	} else {
		raw_u(s, &r, RSP_F_irq_handler_exit__irq, (uint64_t)irq);
		raw_u(s, &r, RSP_F_irq_handler_exit__ret, 1);
	}
	synth_sample(s, entry ? RSP_EV_irq_handler_entry : RSP_EV_irq_handler_exit, cpu, t, 0, 0,
		     NULL, 0, &r);
}

static inline void synth_softirq(struct synth *s, bool entry, uint32_t cpu, uint64_t t,
				 uint32_t tgid, uint32_t tid, unsigned vec)
{
	struct synth_raw r;
	int ev = entry ? RSP_EV_softirq_entry : RSP_EV_softirq_exit;

	raw_init(s, &r, ev);
	raw_u(s, &r, entry ? RSP_F_softirq_entry__vec : RSP_F_softirq_exit__vec, vec);
	synth_sample(s, ev, cpu, t, tgid, tid, NULL, 0, &r);
}

static inline void synth_hrtimer(struct synth *s, bool entry, uint32_t cpu, uint64_t t)
{
	struct synth_raw r;
	int ev = entry ? RSP_EV_hrtimer_expire_entry : RSP_EV_hrtimer_expire_exit;

	raw_init(s, &r, ev);
	raw_u(s, &r,
	      entry ? RSP_F_hrtimer_expire_entry__hrtimer : RSP_F_hrtimer_expire_exit__hrtimer,
	      0xffff888000001000ull);
	if (entry)
		raw_u(s, &r, RSP_F_hrtimer_expire_entry__function, 0xffffffff81100000ull);
	synth_sample(s, ev, cpu, t, 0, 0, NULL, 0, &r);
}

/* sock_send_length (@recv: sock_recv_length) of @sk in the context of @tgid/@tid. */
static inline void synth_sock_len(struct synth *s, bool recv, uint32_t cpu, uint64_t t,
				  uint32_t tgid, uint32_t tid, uint64_t sk, unsigned proto,
				  int bytes)
{
	struct synth_raw r;
	int ev = recv ? RSP_EV_sock_recv_length : RSP_EV_sock_send_length;

	raw_init(s, &r, ev);
	raw_u(s, &r, recv ? RSP_F_sock_recv_length__sk : RSP_F_sock_send_length__sk, sk);
	raw_u(s, &r, recv ? RSP_F_sock_recv_length__family : RSP_F_sock_send_length__family, 2);
	raw_u(s, &r, recv ? RSP_F_sock_recv_length__protocol : RSP_F_sock_send_length__protocol,
	      proto);
	raw_u(s, &r, recv ? RSP_F_sock_recv_length__ret : RSP_F_sock_send_length__ret,
	      (uint64_t)(int64_t)bytes);
	synth_sample(s, ev, cpu, t, tgid, tid, NULL, 0, &r);
}

/* sk_data_ready of @sk, in the context of @tgid/@tid (0: an idle CPU). */
static inline void synth_data_ready(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				    uint32_t tid, uint64_t sk, unsigned proto)
{
	struct synth_raw r;

	raw_init(s, &r, RSP_EV_sk_data_ready);
	raw_u(s, &r, RSP_F_sk_data_ready__skaddr, sk);
	raw_u(s, &r, RSP_F_sk_data_ready__family, 2);
	raw_u(s, &r, RSP_F_sk_data_ready__protocol, proto);
	synth_sample(s, RSP_EV_sk_data_ready, cpu, t, tgid, tid, NULL, 0, &r);
}

/* inet_sock_set_state of TCP socket @sk (IPv4 addresses as 32-bit host-order numbers). */
static inline void synth_tcp_state(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				   uint32_t tid, uint64_t sk, int oldstate, int newstate,
				   uint32_t saddr, uint16_t sport, uint32_t daddr, uint16_t dport)
{
	struct synth_raw r;
	const struct rsp_field_loc *ls = &s->schema->fields[RSP_F_inet_sock_set_state__saddr];
	const struct rsp_field_loc *ld = &s->schema->fields[RSP_F_inet_sock_set_state__daddr];
	uint8_t sa[4] = {saddr >> 24, saddr >> 16, saddr >> 8, saddr};
	uint8_t da[4] = {daddr >> 24, daddr >> 16, daddr >> 8, daddr};

	raw_init(s, &r, RSP_EV_inet_sock_set_state);
	raw_u(s, &r, RSP_F_inet_sock_set_state__skaddr, sk);
	raw_u(s, &r, RSP_F_inet_sock_set_state__oldstate, (uint64_t)(int64_t)oldstate);
	raw_u(s, &r, RSP_F_inet_sock_set_state__newstate, (uint64_t)(int64_t)newstate);
	raw_u(s, &r, RSP_F_inet_sock_set_state__sport, sport);
	raw_u(s, &r, RSP_F_inet_sock_set_state__dport, dport);
	raw_u(s, &r, RSP_F_inet_sock_set_state__family, 2);
	raw_u(s, &r, RSP_F_inet_sock_set_state__protocol, 6);
	memcpy(r.data + ls->offset, sa, 4);
	memcpy(r.data + ld->offset, da, 4);
	synth_sample(s, RSP_EV_inet_sock_set_state, cpu, t, tgid, tid, NULL, 0, &r);
}

/* tcp_rcv_space_adjust of TCP socket @sk: a receive that repeats its 4-tuple. */
static inline void synth_tcp_rcv(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				 uint32_t tid, uint64_t sk, uint32_t saddr, uint16_t sport,
				 uint32_t daddr, uint16_t dport)
{
	struct synth_raw r;
	const struct rsp_field_loc *ls = &s->schema->fields[RSP_F_tcp_rcv_space_adjust__saddr];
	const struct rsp_field_loc *ld = &s->schema->fields[RSP_F_tcp_rcv_space_adjust__daddr];
	uint8_t sa[4] = {saddr >> 24, saddr >> 16, saddr >> 8, saddr};
	uint8_t da[4] = {daddr >> 24, daddr >> 16, daddr >> 8, daddr};

	raw_init(s, &r, RSP_EV_tcp_rcv_space_adjust);
	raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__skaddr, sk);
	raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__sport, sport);
	raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__dport, dport);
	raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__family, 2);
	memcpy(r.data + ls->offset, sa, 4);
	memcpy(r.data + ld->offset, da, 4);
	synth_sample(s, RSP_EV_tcp_rcv_space_adjust, cpu, t, tgid, tid, NULL, 0, &r);
}

/* hrtimer_start in the context of @tgid/@tid: a timer with callback @fn expiring at @expires. */
static inline void synth_hrtimer_start(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				       uint32_t tid, uint64_t fn, uint64_t expires)
{
	struct synth_raw r;

	raw_init(s, &r, RSP_EV_hrtimer_start);
	raw_u(s, &r, RSP_F_hrtimer_start__hrtimer, 0xffffc90000123e58ull);
	raw_u(s, &r, RSP_F_hrtimer_start__function, fn);
	raw_u(s, &r, RSP_F_hrtimer_start__expires, expires);
	synth_sample(s, RSP_EV_hrtimer_start, cpu, t, tgid, tid, NULL, 0, &r);
}

/* A cpu-clock sample of @tgid/@tid at @ip with callchain @chain (nr entries, markers included). */
static inline void synth_cpu_clock(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid,
				   uint32_t tid, const uint64_t *chain, uint32_t nr)
{
	uint64_t *w;

	synth_sample(s, RSP_EV_cpu_clock, cpu, t, tgid, tid, chain, nr, NULL);
	w = (uint64_t *)(s->buf + s->offs[s->n - 1]);
	w[2] = nr > 1 ? chain[1] : 0; /* the ip: the innermost frame */
}

/* A PERF_RECORD_LOST as the window synthesizes it (id 0). */
static inline void synth_lost(struct synth *s, uint32_t cpu, uint64_t t, uint64_t nr)
{
	uint64_t *w = (uint64_t *)synth_reserve(s, 8 * 7, cpu);

	((struct perf_event_header *)w)->type = PERF_RECORD_LOST;
	((struct perf_event_header *)w)->size = 8 * 7;
	w[2] = nr;
	w[4] = t;
	w[5] = cpu;
}

/* A PERF_RECORD_COMM (exec: a new name) with the sample_id_all trailer. */
static inline void synth_comm(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
			      const char *comm)
{
	uint64_t *w = (uint64_t *)synth_reserve(s, 8 + 8 + 16 + 32, cpu);
	uint32_t *ids = (uint32_t *)(w + 1);

	((struct perf_event_header *)w)->type = PERF_RECORD_COMM;
	((struct perf_event_header *)w)->misc = PERF_RECORD_MISC_COMM_EXEC;
	((struct perf_event_header *)w)->size = 8 + 8 + 16 + 32;
	ids[0] = pid;
	ids[1] = tid;
	strncpy((char *)(w + 2), comm, 15);
	w[4] = (uint64_t)pid | (uint64_t)tid << 32; /* trailer: tid, time, cpu, id */
	w[5] = t;
	w[6] = cpu;
	w[7] = SYNTH_ID_BASE + (uint64_t)s->evsel[RSP_EV_sideband];
}

/* Entry @i of the stream, for rsp_timeline__feed() or rsp_window__append(). */
static inline struct rsp_wentry synth_entry(const struct synth *s, size_t i)
{
	struct rsp_wentry e;

	e.rec = (const struct perf_event_header *)(s->buf + s->offs[i]);
	e.cpu = s->cpus[i];
	e.time = rsp_layout__time(e.rec);
	return e;
}

#endif /* RSP_TEST_SYNTH_H */
