// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <rsp/net.h>
#include <rsp/record.h>
#include "internal/schema.h"
#include "golden/golden.h"
#include "support/synth.h"

/* The ip of a tracepoint sample: an address in kernel text. */
#define SYNTH_TP_IP 0xffffffff81000000ull
/* The period of a cpu-clock sample unless the caller says. */
#define SYNTH_PERIOD 10101010

/* Always checked (also under NDEBUG): the expressions have effects. */
#define check(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: synth: %s failed\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void add_evsel(struct synth *s, int ev, bool cc)
{
	const struct rsp_event_info *ei = rsp_catalogue__event(ev);
	struct perf_event_attr a = {.size = sizeof(a), .sample_id_all = 1};
	int idx;

	a.type = ei->kind == RSP_EVK_TRACEPOINT ? PERF_TYPE_TRACEPOINT : PERF_TYPE_SOFTWARE;
	a.config = ev == RSP_EV_cpu_clock ? PERF_COUNT_SW_CPU_CLOCK : 0;
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE |
			(ei->kind == RSP_EVK_TRACEPOINT ? PERF_SAMPLE_RAW : 0) |
			(ev == RSP_EV_cpu_clock ? PERF_SAMPLE_PERIOD : 0) | /* as rspd */
			(cc ? PERF_SAMPLE_CALLCHAIN : 0);
	idx = rsp_schema__add_evsel(s->schema, &a, ev, RSP_ROLE_PRIMARY, ei->name);
	check(idx >= 0);
	check(!rsp_schema__add_id(s->schema, idx, SYNTH_ID_BASE + (uint64_t)idx));
	if (cc)
		s->evsel_cc[ev] = idx;
	else
		s->evsel[ev] = idx;
}

/* Bytes of @te's raw data before its __data_loc strings. */
static uint16_t fixed_size(struct tep_event *te)
{
	unsigned end = 0;

	for (struct tep_format_field *f = te->format.fields; f; f = f->next)
		if ((unsigned)(f->offset + f->size) > end)
			end = (unsigned)(f->offset + f->size);
	return (uint16_t)end;
}

void synth__init(struct synth *s)
{
	memset(s, 0, sizeof(*s));
	s->tep = tep_alloc();
	s->schema = rsp_schema__new();
	check(s->tep && s->schema);
	tep_set_long_size(s->tep, 8);
	tep_set_loglevel(TEP_LOG_NONE);
	for (const struct golden_format *f = golden_formats; f->system; f++)
		check(tep_parse_event(s->tep, f->format, strlen(f->format), f->system) == 0);
	rsp_schema__resolve_fields(s->schema, s->tep);
	/* An evsel for each event whose records synth builds. */
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_info *ei = rsp_catalogue__event(ev);

		s->evsel[ev] = s->evsel_cc[ev] = -1;
		if (ei->kind == RSP_EVK_TRACEPOINT) {
			struct tep_event *te = tep_find_event_by_name(s->tep, ei->system, ei->tp);

			check(te && rsp_schema__event_ok(s->schema, ev));
			s->raw_fixed[ev] = fixed_size(te);
		} else if (ev != RSP_EV_cpu_clock && ev != RSP_EV_sideband) {
			continue;
		}
		add_evsel(s, ev, false);
		if (ev == RSP_EV_sched_switch || ev == RSP_EV_sched_waking ||
		    ev == RSP_EV_cpu_clock)
			add_evsel(s, ev, true);
	}
}

void synth__exit(struct synth *s)
{
	rsp_schema__delete(s->schema);
	tep_free(s->tep);
	free(s->buf);
	free(s->offs);
	free(s->cpus);
}

struct synth *synth__new(unsigned nr_cpus, size_t budget)
{
	struct rsp_window_config wc = {.budget = budget, .nr_cpus = nr_cpus};
	struct synth *s = malloc(sizeof(*s));

	check(s);
	synth__init(s);
	s->nr_cpus = nr_cpus;
	s->window = rsp_window__new(&wc);
	check(s->window);
	return s;
}

void synth__delete(struct synth *s)
{
	if (!s)
		return;
	rsp_window__delete(s->window);
	synth__exit(s);
	free(s);
}

void synth__reset(struct synth *s)
{
	s->len = 0;
	s->n = 0;
}

struct rsp_wentry synth__entry(const struct synth *s, size_t i)
{
	struct rsp_wentry e;

	e.rec = (const struct perf_event_header *)(s->buf + s->offs[i]);
	e.cpu = s->cpus[i];
	e.time = rsp_layout__time(e.rec);
	return e;
}

void *synth__reserve(struct synth *s, size_t size, uint32_t cpu)
{
	while (s->len + size > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1 << 16;
		s->buf = realloc(s->buf, s->cap);
		check(s->buf);
	}
	if (s->n == s->cap_n) {
		s->cap_n = s->cap_n ? s->cap_n * 2 : 1024;
		s->offs = realloc(s->offs, s->cap_n * sizeof(*s->offs));
		s->cpus = realloc(s->cpus, s->cap_n * sizeof(*s->cpus));
		check(s->offs && s->cpus);
	}
	s->offs[s->n] = s->len;
	s->cpus[s->n++] = cpu;
	memset(s->buf + s->len, 0, size);
	s->len += size;
	return s->buf + s->len - size;
}

void synth__commit(struct synth *s)
{
	struct rsp_wentry e;

	if (!s->window)
		return;
	e = synth__entry(s, s->n - 1);
	check(!rsp_window__append(s->window, e.cpu, e.time, e.rec));
	s->len = s->offs[--s->n];
}

void synth__raw_init(struct synth *s, struct synth_raw *r, int ev)
{
	uint16_t type = (uint16_t)rsp_schema__tp_id(s->schema, ev);

	memset(r, 0, sizeof(*r));
	memcpy(r->data, &type, 2); /* common_type; common_pid is the sample's tid */
	r->len = s->raw_fixed[ev];
}

void synth__raw_u(struct synth *s, struct synth_raw *r, enum rsp_field f, uint64_t v)
{
	const struct rsp_field_loc *l = &s->schema->fields[f];

	check(l->flags & RSP_FLOC_PRESENT);
	memcpy(r->data + l->offset, &v, l->size); /* little-endian: the low bytes */
}

void synth__raw_str(struct synth *s, struct synth_raw *r, enum rsp_field f, const char *str)
{
	const struct rsp_field_loc *l = &s->schema->fields[f];
	size_t n = strlen(str);

	check(l->flags & RSP_FLOC_PRESENT);
	if (l->flags & RSP_FLOC_DYNAMIC) {
		uint32_t loc = (uint32_t)(n + 1) << 16 | r->len;

		check(r->len + n + 1 <= sizeof(r->data));
		memcpy(r->data + l->offset, &loc, 4);
		memcpy(r->data + r->len, str, n + 1);
		r->len += (uint32_t)n + 1;
	} else {
		memcpy(r->data + l->offset, str, n < l->size ? n : l->size);
	}
}

/* What a sample carries besides its raw data. */
struct smp {
	uint64_t time, ip, period;
	uint32_t cpu, pid, tid;
	uint16_t misc;
	const uint64_t *chain;
	uint32_t nr;
};

/*
 * Append a sample of @evsel: header, id, ip, tid, time, cpu, then what the
 * evsel's sample_type asks for: period, callchain, raw (size padded so that
 * the record stays 8-byte aligned, as the kernel does).
 */
static void put_sample(struct synth *s, int evsel, const struct smp *p, const struct synth_raw *raw)
{
	uint64_t st;
	uint32_t rawsz = raw ? raw->len : 0, padded = rawsz;
	struct perf_event_header *h;
	size_t size;
	uint64_t *w;

	check(evsel >= 0);
	st = rsp_schema__evsel_attr(s->schema, evsel)->sample_type;
	check(!(st & PERF_SAMPLE_CALLCHAIN) == !p->chain && !(st & PERF_SAMPLE_RAW) == !raw);
	while ((4 + padded) % 8)
		padded++;
	size = sizeof(*h) + 5 * 8 + (st & PERF_SAMPLE_PERIOD ? 8 : 0) +
	       (p->chain ? 8 * (1 + (size_t)p->nr) : 0) + (raw ? 4 + padded : 0);
	check(size <= UINT16_MAX);
	h = synth__reserve(s, size, p->cpu);
	h->type = PERF_RECORD_SAMPLE;
	h->misc = p->misc;
	h->size = (uint16_t)size;
	w = (uint64_t *)h;
	w[1] = SYNTH_ID_BASE + (uint64_t)evsel;
	w[2] = p->ip;
	w[3] = (uint64_t)p->pid | (uint64_t)p->tid << 32;
	w[4] = p->time;
	w[5] = p->cpu;
	w += 6;
	if (st & PERF_SAMPLE_PERIOD)
		*w++ = p->period;
	if (p->chain) {
		*w++ = p->nr;
		memcpy(w, p->chain, p->nr * 8);
		w += p->nr;
	}
	if (raw) {
		unsigned char *data = (unsigned char *)w + 4;

		memcpy(w, &padded, 4);
		memcpy(data, raw->data, rawsz);
		memcpy(data + 4, &p->tid, 4); /* common_pid */
	}
	synth__commit(s);
}

/* A context's tgid: 0 means the thread's own (a single-threaded process, or idle). */
static uint32_t tgid_of(uint32_t tgid, uint32_t tid)
{
	return tgid ? tgid : tid;
}

/* A task's comm: @comm, or "swapper/<cpu>" for the idle task, "task-<tid>" for others. */
static const char *comm_of(char buf[16], const char *comm, uint32_t tid, uint32_t cpu)
{
	if (comm)
		return comm;
	if (tid)
		snprintf(buf, 16, "task-%u", tid);
	else
		snprintf(buf, 16, "swapper/%u", cpu);
	return buf;
}

void synth__add_sample(struct synth *s, const struct synth_sample *a)
{
	struct smp p = {.time = a->t,
			.ip = SYNTH_TP_IP,
			.cpu = a->cpu,
			.pid = tgid_of(a->tgid, a->tid),
			.tid = a->tid,
			.chain = a->chain,
			.nr = a->nr};

	put_sample(s, a->chain ? s->evsel_cc[a->ev] : s->evsel[a->ev], &p, a->raw);
}

void synth__add_switch(struct synth *s, const struct synth_switch *a)
{
	struct synth_raw r;
	char pbuf[16], nbuf[16];

	synth__raw_init(s, &r, RSP_EV_sched_switch);
	synth__raw_str(s, &r, RSP_F_sched_switch__prev_comm,
		       comm_of(pbuf, a->prev_comm, a->prev, a->cpu));
	synth__raw_u(s, &r, RSP_F_sched_switch__prev_pid, a->prev);
	synth__raw_u(s, &r, RSP_F_sched_switch__prev_prio, 120);
	synth__raw_u(s, &r, RSP_F_sched_switch__prev_state, (uint64_t)a->state);
	synth__raw_str(s, &r, RSP_F_sched_switch__next_comm,
		       comm_of(nbuf, a->next_comm, a->next, a->cpu));
	synth__raw_u(s, &r, RSP_F_sched_switch__next_pid, a->next);
	synth__raw_u(s, &r, RSP_F_sched_switch__next_prio, 120);
	synth__sample(s, .ev = RSP_EV_sched_switch, .cpu = a->cpu, .t = a->t, .tgid = a->prev_tgid,
		      .tid = a->prev, .chain = a->chain, .nr = a->nr, .raw = &r);
}

void synth__add_waking(struct synth *s, const struct synth_waking *a)
{
	struct synth_raw r;
	char buf[16];

	synth__raw_init(s, &r, RSP_EV_sched_waking);
	synth__raw_str(s, &r, RSP_F_sched_waking__comm,
		       comm_of(buf, a->target_comm, a->target, a->cpu));
	synth__raw_u(s, &r, RSP_F_sched_waking__pid, a->target);
	synth__raw_u(s, &r, RSP_F_sched_waking__prio, 120);
	synth__raw_u(s, &r, RSP_F_sched_waking__target_cpu, a->cpu);
	synth__sample(s, .ev = RSP_EV_sched_waking, .cpu = a->cpu, .t = a->t, .tgid = a->tgid,
		      .tid = a->tid, .chain = a->chain, .nr = a->nr, .raw = &r);
}

void synth__add_process_fork(struct synth *s, const struct synth_process_fork *a)
{
	struct synth_raw r;
	char buf[16];
	const char *comm = comm_of(buf, a->comm, a->parent, a->cpu);

	synth__raw_init(s, &r, RSP_EV_sched_process_fork);
	synth__raw_str(s, &r, RSP_F_sched_process_fork__parent_comm, comm);
	synth__raw_u(s, &r, RSP_F_sched_process_fork__parent_pid, a->parent);
	synth__raw_str(s, &r, RSP_F_sched_process_fork__child_comm, comm);
	synth__raw_u(s, &r, RSP_F_sched_process_fork__child_pid, a->child);
	synth__sample(s, .ev = RSP_EV_sched_process_fork, .cpu = a->cpu, .t = a->t, .tgid = a->tgid,
		      .tid = a->parent, .raw = &r);
}

void synth__add_wakeup_new(struct synth *s, const struct synth_wakeup_new *a)
{
	struct synth_raw r;
	char buf[16];

	synth__raw_init(s, &r, RSP_EV_sched_wakeup_new);
	synth__raw_str(s, &r, RSP_F_sched_wakeup_new__comm,
		       comm_of(buf, a->comm, a->child, a->cpu));
	synth__raw_u(s, &r, RSP_F_sched_wakeup_new__pid, a->child);
	synth__raw_u(s, &r, RSP_F_sched_wakeup_new__prio, 120);
	synth__raw_u(s, &r, RSP_F_sched_wakeup_new__target_cpu, a->cpu);
	synth__sample(s, .ev = RSP_EV_sched_wakeup_new, .cpu = a->cpu, .t = a->t, .tgid = a->tgid,
		      .tid = a->tid, .raw = &r);
}

void synth__add_block(struct synth *s, const struct synth_block *a)
{
	struct synth_raw r;
	enum rsp_field f_dev, f_sector, f_nr, f_rwbs;
	int ev = a->ev;

	synth__raw_init(s, &r, ev);
	if (ev == RSP_EV_block_rq_insert) {
		f_dev = RSP_F_block_rq_insert__dev, f_sector = RSP_F_block_rq_insert__sector;
		f_nr = RSP_F_block_rq_insert__nr_sector, f_rwbs = RSP_F_block_rq_insert__rwbs;
		synth__raw_u(s, &r, RSP_F_block_rq_insert__bytes, a->bytes);
		if (a->comm)
			synth__raw_str(s, &r, RSP_F_block_rq_insert__comm, a->comm);
	} else if (ev == RSP_EV_block_rq_issue) {
		f_dev = RSP_F_block_rq_issue__dev, f_sector = RSP_F_block_rq_issue__sector;
		f_nr = RSP_F_block_rq_issue__nr_sector, f_rwbs = RSP_F_block_rq_issue__rwbs;
		synth__raw_u(s, &r, RSP_F_block_rq_issue__bytes, a->bytes);
		if (a->comm)
			synth__raw_str(s, &r, RSP_F_block_rq_issue__comm, a->comm);
	} else {
		check(ev == RSP_EV_block_rq_complete && !a->comm);
		f_dev = RSP_F_block_rq_complete__dev, f_sector = RSP_F_block_rq_complete__sector;
		f_nr = RSP_F_block_rq_complete__nr_sector, f_rwbs = RSP_F_block_rq_complete__rwbs;
	}
	synth__raw_u(s, &r, f_dev, a->dev);
	synth__raw_u(s, &r, f_sector, a->sector);
	synth__raw_u(s, &r, f_nr, a->bytes / 512);
	synth__raw_str(s, &r, f_rwbs, a->rwbs ? a->rwbs : "R");
	synth__sample(s, .ev = ev, .cpu = a->cpu, .t = a->t, .tgid = a->tgid, .tid = a->tid,
		      .raw = &r);
}

void synth__irq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq, const char *name)
{
	synth__irq_in(s, entry, cpu, t, irq, name, 0);
}

void synth__irq_in(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq, const char *name,
		   uint32_t tid)
{
	struct synth_raw r;
	int ev = entry ? RSP_EV_irq_handler_entry : RSP_EV_irq_handler_exit;

	synth__raw_init(s, &r, ev);
	if (entry) {
		synth__raw_u(s, &r, RSP_F_irq_handler_entry__irq, (uint64_t)irq);
		synth__raw_str(s, &r, RSP_F_irq_handler_entry__name, name);
	} else {
		synth__raw_u(s, &r, RSP_F_irq_handler_exit__irq, (uint64_t)irq);
		synth__raw_u(s, &r, RSP_F_irq_handler_exit__ret, 1);
	}
	synth__sample(s, .ev = ev, .cpu = cpu, .t = t, .tid = tid, .raw = &r);
}

void synth__add_softirq(struct synth *s, const struct synth_softirq *a)
{
	struct synth_raw r;
	int ev = a->entry ? RSP_EV_softirq_entry : RSP_EV_softirq_exit;

	synth__raw_init(s, &r, ev);
	synth__raw_u(s, &r, a->entry ? RSP_F_softirq_entry__vec : RSP_F_softirq_exit__vec, a->vec);
	synth__sample(s, .ev = ev, .cpu = a->cpu, .t = a->t, .tgid = a->tgid, .tid = a->tid,
		      .raw = &r);
}

void synth__hrtimer(struct synth *s, bool entry, uint32_t cpu, uint64_t t)
{
	struct synth_raw r;
	int ev = entry ? RSP_EV_hrtimer_expire_entry : RSP_EV_hrtimer_expire_exit;

	synth__raw_init(s, &r, ev);
	synth__raw_u(s, &r,
		     entry ? RSP_F_hrtimer_expire_entry__hrtimer
			   : RSP_F_hrtimer_expire_exit__hrtimer,
		     0xffff888000001000ull);
	if (entry)
		synth__raw_u(s, &r, RSP_F_hrtimer_expire_entry__function, 0xffffffff81100000ull);
	synth__sample(s, .ev = ev, .cpu = cpu, .t = t, .raw = &r);
}

void synth__add_sock_len(struct synth *s, const struct synth_sock_len *a)
{
	struct synth_raw r;
	bool recv = a->recv;
	int ev = recv ? RSP_EV_sock_recv_length : RSP_EV_sock_send_length;

	synth__raw_init(s, &r, ev);
	synth__raw_u(s, &r, recv ? RSP_F_sock_recv_length__sk : RSP_F_sock_send_length__sk, a->sk);
	synth__raw_u(s, &r, recv ? RSP_F_sock_recv_length__family : RSP_F_sock_send_length__family,
		     2);
	synth__raw_u(s, &r,
		     recv ? RSP_F_sock_recv_length__protocol : RSP_F_sock_send_length__protocol,
		     a->proto ? a->proto : RSP_IPPROTO_TCP);
	synth__raw_u(s, &r, recv ? RSP_F_sock_recv_length__ret : RSP_F_sock_send_length__ret,
		     (uint64_t)(int64_t)a->bytes);
	synth__sample(s, .ev = ev, .cpu = a->cpu, .t = a->t, .tgid = a->tgid, .tid = a->tid,
		      .raw = &r);
}

void synth__add_data_ready(struct synth *s, const struct synth_data_ready *a)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_sk_data_ready);
	synth__raw_u(s, &r, RSP_F_sk_data_ready__skaddr, a->sk);
	synth__raw_u(s, &r, RSP_F_sk_data_ready__family, 2);
	synth__raw_u(s, &r, RSP_F_sk_data_ready__protocol, a->proto ? a->proto : RSP_IPPROTO_TCP);
	synth__sample(s, .ev = RSP_EV_sk_data_ready, .cpu = a->cpu, .t = a->t, .tgid = a->tgid,
		      .tid = a->tid, .raw = &r);
}

/* An IPv4 address, a host-order number, into the network-order bytes of field @f. */
static void raw_ip4(struct synth *s, struct synth_raw *r, enum rsp_field f, uint32_t addr)
{
	const struct rsp_field_loc *l = &s->schema->fields[f];
	uint8_t a[4] = {addr >> 24, addr >> 16, addr >> 8, addr};

	check(l->flags & RSP_FLOC_PRESENT && l->size >= 4);
	memcpy(r->data + l->offset, a, 4);
}

void synth__add_tcp_state(struct synth *s, const struct synth_tcp *a)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_inet_sock_set_state);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__skaddr, a->sk);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__oldstate, (uint64_t)(int64_t)a->oldstate);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__newstate, (uint64_t)(int64_t)a->newstate);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__sport, a->sport);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__dport, a->dport);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__family, 2);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__protocol, 6);
	raw_ip4(s, &r, RSP_F_inet_sock_set_state__saddr, a->saddr);
	raw_ip4(s, &r, RSP_F_inet_sock_set_state__daddr, a->daddr);
	synth__sample(s, .ev = RSP_EV_inet_sock_set_state, .cpu = a->cpu, .t = a->t,
		      .tgid = a->tgid, .tid = a->tid, .raw = &r);
}

void synth__add_tcp_rcv(struct synth *s, const struct synth_tcp *a)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_tcp_rcv_space_adjust);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__skaddr, a->sk);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__sport, a->sport);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__dport, a->dport);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__family, 2);
	raw_ip4(s, &r, RSP_F_tcp_rcv_space_adjust__saddr, a->saddr);
	raw_ip4(s, &r, RSP_F_tcp_rcv_space_adjust__daddr, a->daddr);
	synth__sample(s, .ev = RSP_EV_tcp_rcv_space_adjust, .cpu = a->cpu, .t = a->t,
		      .tgid = a->tgid, .tid = a->tid, .raw = &r);
}

void synth__add_hrtimer_start(struct synth *s, const struct synth_hrtimer_start *a)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_hrtimer_start);
	synth__raw_u(s, &r, RSP_F_hrtimer_start__hrtimer, 0xffffc90000123e58ull);
	synth__raw_u(s, &r, RSP_F_hrtimer_start__function, a->fn);
	synth__raw_u(s, &r, RSP_F_hrtimer_start__expires, a->expires);
	synth__sample(s, .ev = RSP_EV_hrtimer_start, .cpu = a->cpu, .t = a->t, .tgid = a->tgid,
		      .tid = a->tid, .raw = &r);
}

void synth__add_cpu_sample(struct synth *s, const struct synth_cpu_sample *a)
{
	struct smp p = {.time = a->t,
			.ip = a->ip,
			.period = a->period ? a->period : SYNTH_PERIOD,
			.cpu = a->cpu,
			.pid = tgid_of(a->tgid, a->tid),
			.tid = a->tid,
			.misc = a->cpumode ? a->cpumode : PERF_RECORD_MISC_USER};

	put_sample(s, s->evsel[RSP_EV_cpu_clock], &p, NULL);
}

void synth__add_cpu_clock(struct synth *s, const struct synth_cpu_clock *a)
{
	struct smp p = {.time = a->t,
			.ip = a->nr > 1 ? a->chain[1] : 0,
			.period = SYNTH_PERIOD,
			.cpu = a->cpu,
			.pid = tgid_of(a->tgid, a->tid),
			.tid = a->tid,
			.chain = a->chain,
			.nr = a->nr};

	put_sample(s, s->evsel_cc[RSP_EV_cpu_clock], &p, NULL);
}

/* Close a side-band record at @words: the sample_id_all trailer, then the header. */
static const struct perf_event_header *trailer(const struct synth *s, uint64_t *buf, unsigned words,
					       int type, uint16_t misc, uint64_t time, uint32_t pid,
					       uint32_t tid)
{
	struct perf_event_header *h = (void *)buf;

	buf[words++] = pid | ((uint64_t)tid << 32);
	buf[words++] = time;
	buf[words++] = 0; /* cpu */
	buf[words++] = SYNTH_ID_BASE + (uint64_t)s->evsel[RSP_EV_sideband];
	h->type = (uint32_t)type;
	h->misc = misc;
	h->size = (uint16_t)(words * 8);
	return h;
}

const struct perf_event_header *synth__build_mmap2(const struct synth *s, uint64_t *buf,
						   const struct synth_mmap2 *a)
{
	size_t n = strlen(a->path) + 1, words = (n + 7) / 8;
	unsigned char *b = (unsigned char *)buf;
	uint32_t maj = 8, min = 1, flags = 2;

	check(n < 256);
	memset(buf, 0, 512);
	memcpy(b + 8, &a->pid, 4);
	memcpy(b + 12, &a->pid, 4);
	memcpy(b + 16, &a->addr, 8);
	memcpy(b + 24, &a->len, 8);
	memcpy(b + 32, &a->pgoff, 8);
	memcpy(b + 40, &maj, 4);
	memcpy(b + 44, &min, 4);
	memcpy(b + 48, &a->ino, 8);
	/* ino_generation 0 at 56 */
	memcpy(b + 64, &a->prot, 4);
	memcpy(b + 68, &flags, 4);
	memcpy(b + 72, a->path, n);
	return trailer(s, buf, (unsigned)(9 + words), PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		       a->t, a->pid, a->pid);
}

const struct perf_event_header *synth__build_comm(const struct synth *s, uint64_t *buf,
						  const struct synth_comm *a)
{
	size_t n = strlen(a->comm) + 1, words = (n + 7) / 8;
	unsigned char *b = (unsigned char *)buf;
	uint32_t tid = a->tid ? a->tid : a->pid;

	check(n <= 16);
	memset(buf, 0, 512);
	memcpy(b + 8, &a->pid, 4);
	memcpy(b + 12, &tid, 4);
	memcpy(b + 16, a->comm, n);
	return trailer(s, buf, (unsigned)(2 + words), PERF_RECORD_COMM,
		       a->exec ? PERF_RECORD_MISC_COMM_EXEC : 0, a->t, a->pid, tid);
}

const struct perf_event_header *synth__build_task(const struct synth *s, uint64_t *buf,
						  const struct synth_task *a)
{
	unsigned char *b = (unsigned char *)buf;

	memset(buf, 0, 512);
	memcpy(b + 8, &a->pid, 4);
	memcpy(b + 12, &a->ppid, 4);
	memcpy(b + 16, &a->tid, 4);
	memcpy(b + 20, &a->ptid, 4);
	memcpy(b + 24, &a->t, 8);
	return trailer(s, buf, 4, a->type, 0, a->t, a->pid, a->tid);
}

/* Append a side-band record built by a synth__build_* function, its trailer naming @cpu. */
static void append_rec(struct synth *s, uint32_t cpu, const struct perf_event_header *h)
{
	uint64_t *w = synth__reserve(s, h->size, cpu);

	memcpy(w, h, h->size);
	w[h->size / 8 - 2] = cpu;
	synth__commit(s);
}

void synth__add_mmap2(struct synth *s, const struct synth_mmap2 *a)
{
	uint64_t buf[64];

	append_rec(s, a->cpu, synth__build_mmap2(s, buf, a));
}

void synth__add_comm(struct synth *s, const struct synth_comm *a)
{
	uint64_t buf[64];

	append_rec(s, a->cpu, synth__build_comm(s, buf, a));
}

void synth__add_task(struct synth *s, const struct synth_task *a)
{
	uint64_t buf[64];

	append_rec(s, a->cpu, synth__build_task(s, buf, a));
}

void synth__lost(struct synth *s, uint32_t cpu, uint64_t t, uint64_t nr)
{
	uint64_t *w;

	if (s->window) {
		check(!rsp_window__note_lost(s->window, cpu, t, nr));
		return;
	}
	w = synth__reserve(s, 8 * 7, cpu);
	((struct perf_event_header *)w)->type = PERF_RECORD_LOST;
	((struct perf_event_header *)w)->size = 8 * 7;
	w[2] = nr;
	w[4] = t;
	w[5] = cpu;
}
