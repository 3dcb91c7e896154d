// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
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

void synth__sample(struct synth *s, int ev, uint32_t cpu, uint64_t time, uint32_t pid, uint32_t tid,
		   const uint64_t *chain, uint32_t nr, const struct synth_raw *raw)
{
	struct smp p = {.time = time,
			.ip = SYNTH_TP_IP,
			.cpu = cpu,
			.pid = pid,
			.tid = tid,
			.chain = chain,
			.nr = nr};

	put_sample(s, chain ? s->evsel_cc[ev] : s->evsel[ev], &p, raw);
}

void synth__switch(struct synth *s, uint32_t cpu, uint64_t t, uint32_t ptgid, uint32_t ptid,
		   const char *pcomm, int64_t state, uint32_t ntid, const char *ncomm,
		   const uint64_t *chain, uint32_t nr)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_sched_switch);
	synth__raw_str(s, &r, RSP_F_sched_switch__prev_comm, pcomm);
	synth__raw_u(s, &r, RSP_F_sched_switch__prev_pid, ptid);
	synth__raw_u(s, &r, RSP_F_sched_switch__prev_prio, 120);
	synth__raw_u(s, &r, RSP_F_sched_switch__prev_state, (uint64_t)state);
	synth__raw_str(s, &r, RSP_F_sched_switch__next_comm, ncomm);
	synth__raw_u(s, &r, RSP_F_sched_switch__next_pid, ntid);
	synth__raw_u(s, &r, RSP_F_sched_switch__next_prio, 120);
	synth__sample(s, RSP_EV_sched_switch, cpu, t, ptgid, ptid, chain, nr, &r);
}

void synth__waking(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		   uint32_t target, const char *tcomm, const uint64_t *chain, uint32_t nr)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_sched_waking);
	synth__raw_str(s, &r, RSP_F_sched_waking__comm, tcomm);
	synth__raw_u(s, &r, RSP_F_sched_waking__pid, target);
	synth__raw_u(s, &r, RSP_F_sched_waking__prio, 120);
	synth__raw_u(s, &r, RSP_F_sched_waking__target_cpu, cpu);
	synth__sample(s, RSP_EV_sched_waking, cpu, t, tgid, tid, chain, nr, &r);
}

void synth__process_fork(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t parent,
			 uint32_t child, const char *comm)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_sched_process_fork);
	synth__raw_str(s, &r, RSP_F_sched_process_fork__parent_comm, comm);
	synth__raw_u(s, &r, RSP_F_sched_process_fork__parent_pid, parent);
	synth__raw_str(s, &r, RSP_F_sched_process_fork__child_comm, comm);
	synth__raw_u(s, &r, RSP_F_sched_process_fork__child_pid, child);
	synth__sample(s, RSP_EV_sched_process_fork, cpu, t, tgid, parent, NULL, 0, &r);
}

void synth__wakeup_new(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		       uint32_t child, const char *comm)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_sched_wakeup_new);
	synth__raw_str(s, &r, RSP_F_sched_wakeup_new__comm, comm);
	synth__raw_u(s, &r, RSP_F_sched_wakeup_new__pid, child);
	synth__raw_u(s, &r, RSP_F_sched_wakeup_new__prio, 120);
	synth__raw_u(s, &r, RSP_F_sched_wakeup_new__target_cpu, cpu);
	synth__sample(s, RSP_EV_sched_wakeup_new, cpu, t, tgid, tid, NULL, 0, &r);
}

void synth__block(struct synth *s, int ev, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		  const char *comm, uint32_t dev, uint64_t sector, uint32_t bytes, const char *rwbs)
{
	struct synth_raw r;
	enum rsp_field f_dev, f_sector, f_nr, f_rwbs;

	synth__raw_init(s, &r, ev);
	if (ev == RSP_EV_block_rq_insert) {
		f_dev = RSP_F_block_rq_insert__dev, f_sector = RSP_F_block_rq_insert__sector;
		f_nr = RSP_F_block_rq_insert__nr_sector, f_rwbs = RSP_F_block_rq_insert__rwbs;
		synth__raw_u(s, &r, RSP_F_block_rq_insert__bytes, bytes);
		if (comm)
			synth__raw_str(s, &r, RSP_F_block_rq_insert__comm, comm);
	} else if (ev == RSP_EV_block_rq_issue) {
		f_dev = RSP_F_block_rq_issue__dev, f_sector = RSP_F_block_rq_issue__sector;
		f_nr = RSP_F_block_rq_issue__nr_sector, f_rwbs = RSP_F_block_rq_issue__rwbs;
		synth__raw_u(s, &r, RSP_F_block_rq_issue__bytes, bytes);
		if (comm)
			synth__raw_str(s, &r, RSP_F_block_rq_issue__comm, comm);
	} else {
		check(ev == RSP_EV_block_rq_complete && !comm);
		f_dev = RSP_F_block_rq_complete__dev, f_sector = RSP_F_block_rq_complete__sector;
		f_nr = RSP_F_block_rq_complete__nr_sector, f_rwbs = RSP_F_block_rq_complete__rwbs;
	}
	synth__raw_u(s, &r, f_dev, dev);
	synth__raw_u(s, &r, f_sector, sector);
	synth__raw_u(s, &r, f_nr, bytes / 512);
	synth__raw_str(s, &r, f_rwbs, rwbs);
	synth__sample(s, ev, cpu, t, tgid, tid, NULL, 0, &r);
}

void synth__irq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq, const char *name)
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
	synth__sample(s, ev, cpu, t, 0, 0, NULL, 0, &r);
}

void synth__softirq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, uint32_t tgid,
		    uint32_t tid, unsigned vec)
{
	struct synth_raw r;
	int ev = entry ? RSP_EV_softirq_entry : RSP_EV_softirq_exit;

	synth__raw_init(s, &r, ev);
	synth__raw_u(s, &r, entry ? RSP_F_softirq_entry__vec : RSP_F_softirq_exit__vec, vec);
	synth__sample(s, ev, cpu, t, tgid, tid, NULL, 0, &r);
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
	synth__sample(s, ev, cpu, t, 0, 0, NULL, 0, &r);
}

void synth__sock_len(struct synth *s, bool recv, uint32_t cpu, uint64_t t, uint32_t tgid,
		     uint32_t tid, uint64_t sk, unsigned proto, int bytes)
{
	struct synth_raw r;
	int ev = recv ? RSP_EV_sock_recv_length : RSP_EV_sock_send_length;

	synth__raw_init(s, &r, ev);
	synth__raw_u(s, &r, recv ? RSP_F_sock_recv_length__sk : RSP_F_sock_send_length__sk, sk);
	synth__raw_u(s, &r, recv ? RSP_F_sock_recv_length__family : RSP_F_sock_send_length__family,
		     2);
	synth__raw_u(s, &r,
		     recv ? RSP_F_sock_recv_length__protocol : RSP_F_sock_send_length__protocol,
		     proto);
	synth__raw_u(s, &r, recv ? RSP_F_sock_recv_length__ret : RSP_F_sock_send_length__ret,
		     (uint64_t)(int64_t)bytes);
	synth__sample(s, ev, cpu, t, tgid, tid, NULL, 0, &r);
}

void synth__data_ready(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		       uint64_t sk, unsigned proto)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_sk_data_ready);
	synth__raw_u(s, &r, RSP_F_sk_data_ready__skaddr, sk);
	synth__raw_u(s, &r, RSP_F_sk_data_ready__family, 2);
	synth__raw_u(s, &r, RSP_F_sk_data_ready__protocol, proto);
	synth__sample(s, RSP_EV_sk_data_ready, cpu, t, tgid, tid, NULL, 0, &r);
}

/* An IPv4 address, a host-order number, into the network-order bytes of field @f. */
static void raw_ip4(struct synth *s, struct synth_raw *r, enum rsp_field f, uint32_t addr)
{
	const struct rsp_field_loc *l = &s->schema->fields[f];
	uint8_t a[4] = {addr >> 24, addr >> 16, addr >> 8, addr};

	check(l->flags & RSP_FLOC_PRESENT && l->size >= 4);
	memcpy(r->data + l->offset, a, 4);
}

void synth__tcp_state(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		      uint64_t sk, int oldstate, int newstate, uint32_t saddr, uint16_t sport,
		      uint32_t daddr, uint16_t dport)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_inet_sock_set_state);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__skaddr, sk);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__oldstate, (uint64_t)(int64_t)oldstate);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__newstate, (uint64_t)(int64_t)newstate);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__sport, sport);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__dport, dport);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__family, 2);
	synth__raw_u(s, &r, RSP_F_inet_sock_set_state__protocol, 6);
	raw_ip4(s, &r, RSP_F_inet_sock_set_state__saddr, saddr);
	raw_ip4(s, &r, RSP_F_inet_sock_set_state__daddr, daddr);
	synth__sample(s, RSP_EV_inet_sock_set_state, cpu, t, tgid, tid, NULL, 0, &r);
}

void synth__tcp_rcv(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		    uint64_t sk, uint32_t saddr, uint16_t sport, uint32_t daddr, uint16_t dport)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_tcp_rcv_space_adjust);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__skaddr, sk);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__sport, sport);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__dport, dport);
	synth__raw_u(s, &r, RSP_F_tcp_rcv_space_adjust__family, 2);
	raw_ip4(s, &r, RSP_F_tcp_rcv_space_adjust__saddr, saddr);
	raw_ip4(s, &r, RSP_F_tcp_rcv_space_adjust__daddr, daddr);
	synth__sample(s, RSP_EV_tcp_rcv_space_adjust, cpu, t, tgid, tid, NULL, 0, &r);
}

void synth__hrtimer_start(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
			  uint64_t fn, uint64_t expires)
{
	struct synth_raw r;

	synth__raw_init(s, &r, RSP_EV_hrtimer_start);
	synth__raw_u(s, &r, RSP_F_hrtimer_start__hrtimer, 0xffffc90000123e58ull);
	synth__raw_u(s, &r, RSP_F_hrtimer_start__function, fn);
	synth__raw_u(s, &r, RSP_F_hrtimer_start__expires, expires);
	synth__sample(s, RSP_EV_hrtimer_start, cpu, t, tgid, tid, NULL, 0, &r);
}

void synth__cpu_sample(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		       uint64_t ip)
{
	synth__cpu_sample_mode(s, cpu, t, pid, tid, ip, PERF_RECORD_MISC_USER, SYNTH_PERIOD);
}

void synth__cpu_sample_mode(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
			    uint64_t ip, uint16_t cpumode, uint64_t period)
{
	struct smp p = {.time = t,
			.ip = ip,
			.period = period,
			.cpu = cpu,
			.pid = pid,
			.tid = tid,
			.misc = cpumode};

	put_sample(s, s->evsel[RSP_EV_cpu_clock], &p, NULL);
}

void synth__cpu_clock(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		      const uint64_t *chain, uint32_t nr)
{
	struct smp p = {.time = t,
			.ip = nr > 1 ? chain[1] : 0,
			.period = SYNTH_PERIOD,
			.cpu = cpu,
			.pid = tgid,
			.tid = tid,
			.chain = chain,
			.nr = nr};

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

const struct perf_event_header *synth__mmap2_rec(const struct synth *s, uint64_t *buf,
						 uint64_t time, uint32_t pid, uint64_t addr,
						 uint64_t len, uint64_t pgoff, uint64_t ino,
						 uint32_t prot, const char *path)
{
	size_t n = strlen(path) + 1, words = (n + 7) / 8;
	unsigned char *b = (unsigned char *)buf;
	uint32_t maj = 8, min = 1, flags = 2;

	check(n < 256);
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
	return trailer(s, buf, (unsigned)(9 + words), PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		       time, pid, pid);
}

const struct perf_event_header *synth__comm_rec(const struct synth *s, uint64_t *buf, uint64_t time,
						uint32_t pid, uint32_t tid, const char *comm,
						int exec)
{
	size_t n = strlen(comm) + 1, words = (n + 7) / 8;
	unsigned char *b = (unsigned char *)buf;

	check(n <= 16);
	memset(buf, 0, 512);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &tid, 4);
	memcpy(b + 16, comm, n);
	return trailer(s, buf, (unsigned)(2 + words), PERF_RECORD_COMM,
		       exec ? PERF_RECORD_MISC_COMM_EXEC : 0, time, pid, tid);
}

const struct perf_event_header *synth__task_rec(const struct synth *s, uint64_t *buf, int type,
						uint64_t time, uint32_t pid, uint32_t ppid,
						uint32_t tid, uint32_t ptid)
{
	unsigned char *b = (unsigned char *)buf;

	memset(buf, 0, 512);
	memcpy(b + 8, &pid, 4);
	memcpy(b + 12, &ppid, 4);
	memcpy(b + 16, &tid, 4);
	memcpy(b + 20, &ptid, 4);
	memcpy(b + 24, &time, 8);
	return trailer(s, buf, 4, type, 0, time, pid, tid);
}

/* Append a side-band record built by a *_rec function, its trailer naming @cpu. */
static void append_rec(struct synth *s, uint32_t cpu, const struct perf_event_header *h)
{
	uint64_t *w = synth__reserve(s, h->size, cpu);

	memcpy(w, h, h->size);
	w[h->size / 8 - 2] = cpu;
	synth__commit(s);
}

void synth__mmap2(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint64_t addr,
		  uint64_t len, uint64_t pgoff, uint64_t ino, uint32_t prot, const char *path)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__mmap2_rec(s, buf, t, pid, addr, len, pgoff, ino, prot, path));
}

void synth__comm(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		 const char *comm, int exec)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__comm_rec(s, buf, t, pid, tid, comm, exec));
}

void synth__task(struct synth *s, int type, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t ppid,
		 uint32_t tid, uint32_t ptid)
{
	uint64_t buf[64];

	append_rec(s, cpu, synth__task_rec(s, buf, type, t, pid, ppid, tid, ptid));
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
