// SPDX-License-Identifier: LGPL-2.1
/*
 * The record feed of the latency profiles (see rsp/histfeed.h): irq and
 * softirq handler times per CPU, block queue and service times by device
 * and sector, and, through a timeline over the same records, off-CPU and
 * run-queue times per thread. One thread per feed; the counters are
 * atomics only so that another thread may read them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/histfeed.h>
#include <rsp/record.h>
#include <rsp/timeline.h>
#include <rsp/tp.h>
#include "internal/u64map.h"

#define DEFAULT_MAX_REQUESTS 65536
#define EXPIRE_EVERY_NS	     1000000000ull
#define MAX_DEVS	     64
#define IRQ_CACHE	     256
#define NIL		     UINT32_MAX

struct span {
	bool open;
	uint32_t what; /* irq number or softirq vector */
	uint32_t name; /* irq name id */
	uint64_t since;
};

struct cpu_state {
	struct span irq, softirq;
};

struct req {
	uint64_t sector;
	uint32_t dev;
	bool issued;
	uint64_t t_insert, t_issue;
	uint32_t tgid, tid;
	char comm[RSP_HIST_COMM_LEN];
	bool used;
	uint32_t next_free;
};

struct dev_open {
	uint32_t dev;
	uint64_t open, published;
};

/* Where the last entry of an irq number found its name id (no string work on a hit). */
struct irq_cache {
	uint32_t irq;
	uint32_t id;
	uint32_t len;
	char name[32];
};

struct counters {
	_Atomic uint64_t records, used, latencies, irq_exit_alone, irq_lost_exit,
		softirq_exit_alone, softirq_lost_exit, blk_complete_alone, blk_no_completion,
		blk_never_issued, blk_table_full, blk_open, lost, gaps;
	_Atomic uint64_t sleeps, sleeps_inferred, runq, switch_not_seen, segments_skipped,
		no_process, threads_untracked, timeline_malformed;
};

struct rsp_histfeed {
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;
	struct rsp_histfeed_config cfg;
	struct cpu_state *cpus;
	struct req *reqs;
	uint32_t free_head, high; /* free list; slots [0, high) were ever used */
	struct rsp_u64map reqmap; /* (dev, sector) -> req */
	struct dev_open devs[MAX_DEVS];
	unsigned nr_devs;
	struct irq_cache irqc[IRQ_CACHE];
	uint64_t next_expire;
	struct rsp_timeline *tl; /* off-CPU and run-queue times; NULL without a schema */
	uint64_t last_time;	 /* of the newest record fed */
	struct counters c;
};

#define INC(x)                                                                                     \
	atomic_store_explicit(&(x), atomic_load_explicit(&(x), memory_order_relaxed) + 1,          \
			      memory_order_relaxed)
#define LDC(x) atomic_load_explicit(&(x), memory_order_relaxed)

static void on_segment(void *ctx, const struct rsp_segment *seg, const char *comm);
static void timeline_publish(struct rsp_histfeed *f);

/* The timeline that turns the same records into sleeps and run-queue waits. */
static int timeline_new(struct rsp_histfeed *f)
{
	static const struct rsp_timeline_ops ops = {.segment = on_segment};

	f->tl = rsp_timeline__new(f->cfg.schema, &ops, f);
	if (!f->tl)
		return -ENOMEM;
	/* Only reasons are needed: no stack copies, bounded threads. */
	rsp_timeline__set_flags(f->tl, RSP_TL_NO_STACKS);
	rsp_timeline__set_max_threads(f->tl, f->cfg.max_threads);
	return rsp_timeline__set_ksyms(f->tl, f->cfg.ksyms);
}

struct rsp_histfeed *rsp_histfeed__new(struct rsp_hist_store *st,
				       const struct rsp_histfeed_config *cfg)
{
	struct rsp_histfeed *f;

	if (!cfg->nr_cpus || !rsp_hist_store__shard(st, cfg->shard)) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->st = st;
	f->sh = rsp_hist_store__shard(st, cfg->shard);
	f->cfg = *cfg;
	if (!f->cfg.io_timeout_ns)
		f->cfg.io_timeout_ns = RSP_HISTFEED_IO_TIMEOUT_NS;
	if (!f->cfg.max_requests)
		f->cfg.max_requests = DEFAULT_MAX_REQUESTS;
	if (!f->cfg.max_threads)
		f->cfg.max_threads = RSP_HISTFEED_MAX_THREADS;
	f->free_head = NIL;
	rsp_u64map__init(&f->reqmap);
	f->cpus = calloc(cfg->nr_cpus, sizeof(*f->cpus));
	f->reqs = calloc(f->cfg.max_requests, sizeof(*f->reqs));
	if (!f->cpus || !f->reqs || rsp_u64map__reserve(&f->reqmap, f->cfg.max_requests) ||
	    (cfg->schema && timeline_new(f))) {
		rsp_histfeed__delete(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

void rsp_histfeed__delete(struct rsp_histfeed *f)
{
	if (!f)
		return;
	rsp_timeline__delete(f->tl);
	rsp_u64map__exit(&f->reqmap);
	free(f->cpus);
	free(f->reqs);
	free(f);
}

/* ---- irq and softirq ------------------------------------------------------- */

static uint32_t irq_name_id(struct rsp_histfeed *f, uint32_t irq, struct rsp_str name)
{
	struct irq_cache *c = &f->irqc[irq % IRQ_CACHE];
	uint32_t len = name.len < sizeof(c->name) - 1 ? name.len : sizeof(c->name) - 1;

	if (c->len == len && c->irq == irq && c->id && !memcmp(c->name, name.ptr, len))
		return c->id;
	c->irq = irq;
	c->len = len;
	memcpy(c->name, name.ptr ? name.ptr : "", len);
	c->id = rsp_hist_store__irq_name_id(f->st, c->name, len);
	rsp_hist_store__note_irq(f->st, irq, c->id);
	return c->id;
}

/* An open span that lost its end: counted, never measured. */
static void span_abandon(struct rsp_histfeed *f, struct span *s, bool irq)
{
	if (!s->open)
		return;
	s->open = false;
	if (irq) {
		INC(f->c.irq_lost_exit);
		rsp_hist_store__note_incomplete(f->st, RSP_HIST_OP(RSP_HOP_IRQ, s->name), 1);
	} else {
		INC(f->c.softirq_lost_exit);
		rsp_hist_store__note_incomplete(f->st, RSP_HIST_OP(RSP_HOP_SOFTIRQ, s->what), 1);
	}
}

static void record_latency(struct rsp_histfeed *f, uint64_t op, uint64_t end, uint64_t ns,
			   const struct rsp_hist_who *who)
{
	if (!rsp_hist_shard__add(f->sh, op, end, ns, who))
		INC(f->c.latencies);
}

static int on_irq_entry(struct rsp_histfeed *f, const struct rsp_schema *s,
			const struct rsp_sample *smp, struct cpu_state *cs)
{
	struct rsp_tp_irq_handler_entry tp;

	if (rsp_tp__irq_handler_entry(s, smp, &tp))
		return -EINVAL;
	span_abandon(f, &cs->irq, true);
	cs->irq.open = true;
	cs->irq.what = (uint32_t)tp.irq;
	cs->irq.name = irq_name_id(f, (uint32_t)tp.irq, tp.name);
	cs->irq.since = smp->time;
	return 1;
}

static int on_irq_exit(struct rsp_histfeed *f, const struct rsp_schema *s,
		       const struct rsp_sample *smp, struct cpu_state *cs)
{
	struct rsp_tp_irq_handler_exit tp;

	if (rsp_tp__irq_handler_exit(s, smp, &tp))
		return -EINVAL;
	if (!cs->irq.open || cs->irq.what != (uint32_t)tp.irq) {
		INC(f->c.irq_exit_alone);
		span_abandon(f, &cs->irq, true);
		return 0;
	}
	cs->irq.open = false;
	if (smp->time >= cs->irq.since)
		record_latency(f, RSP_HIST_OP(RSP_HOP_IRQ, cs->irq.name), smp->time,
			       smp->time - cs->irq.since, NULL);
	return 1;
}

static int on_softirq(struct rsp_histfeed *f, const struct rsp_schema *s,
		      const struct rsp_sample *smp, struct cpu_state *cs, bool entry)
{
	struct rsp_tp_softirq_entry tp; /* softirq_exit has the same field */
	struct rsp_tp_softirq_exit tx;
	uint32_t vec;

	if (entry ? rsp_tp__softirq_entry(s, smp, &tp) : rsp_tp__softirq_exit(s, smp, &tx))
		return -EINVAL;
	vec = (uint32_t)(entry ? tp.vec : tx.vec);
	if (entry) {
		span_abandon(f, &cs->softirq, false);
		cs->softirq = (struct span){.open = true, .what = vec, .since = smp->time};
		return 1;
	}
	if (!cs->softirq.open || cs->softirq.what != vec) {
		INC(f->c.softirq_exit_alone);
		span_abandon(f, &cs->softirq, false);
		return 0;
	}
	cs->softirq.open = false;
	if (smp->time >= cs->softirq.since)
		record_latency(f, RSP_HIST_OP(RSP_HOP_SOFTIRQ, vec), smp->time,
			       smp->time - cs->softirq.since, NULL);
	return 1;
}

/* ---- block requests ---------------------------------------------------------- */

static uint64_t req_key(uint32_t dev, uint64_t sector)
{
	uint64_t k = sector * 0x9e3779b97f4a7c15ull ^ dev;

	return k == UINT64_MAX ? 0 : k;
}

static struct req *req_find(struct rsp_histfeed *f, uint32_t dev, uint64_t sector)
{
	uint32_t idx;
	struct req *r;

	if (rsp_u64map__get(&f->reqmap, req_key(dev, sector), &idx))
		return NULL;
	r = &f->reqs[idx];
	return r->dev == dev && r->sector == sector ? r : NULL;
}

static struct dev_open *dev_slot(struct rsp_histfeed *f, uint32_t dev)
{
	for (unsigned i = 0; i < f->nr_devs; i++)
		if (f->devs[i].dev == dev)
			return &f->devs[i];
	if (f->nr_devs == MAX_DEVS)
		return NULL;
	f->devs[f->nr_devs] = (struct dev_open){.dev = dev};
	return &f->devs[f->nr_devs++];
}

static void req_free(struct rsp_histfeed *f, struct req *r)
{
	struct dev_open *d = r->issued ? dev_slot(f, r->dev) : NULL;

	if (d && d->open)
		d->open--;
	if (r->issued)
		atomic_store_explicit(&f->c.blk_open, LDC(f->c.blk_open) - 1, memory_order_relaxed);
	rsp_u64map__del(&f->reqmap, req_key(r->dev, r->sector));
	r->used = false;
	r->next_free = f->free_head;
	f->free_head = (uint32_t)(r - f->reqs);
}

static struct req *req_new(struct rsp_histfeed *f, uint32_t dev, uint64_t sector,
			   const struct rsp_sample *smp, struct rsp_str comm)
{
	uint32_t idx;
	struct req *r;

	if (f->free_head != NIL) {
		idx = f->free_head;
		f->free_head = f->reqs[idx].next_free;
	} else if (f->high < f->cfg.max_requests) {
		idx = f->high++;
	} else {
		INC(f->c.blk_table_full);
		return NULL;
	}
	r = &f->reqs[idx];
	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->sector = sector;
	r->tgid = smp->pid;
	r->tid = smp->tid;
	if (comm.ptr)
		memcpy(r->comm, comm.ptr,
		       comm.len < RSP_HIST_COMM_LEN ? comm.len : RSP_HIST_COMM_LEN - 1);
	r->used = true;
	r->next_free = NIL;
	rsp_u64map__put(&f->reqmap, req_key(dev, sector), idx); /* reserved */
	return r;
}

/* An issued request whose completion we will never see: count it. */
static void req_no_completion(struct rsp_histfeed *f, struct req *r)
{
	INC(f->c.blk_no_completion);
	rsp_hist_store__note_incomplete(f->st, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, r->dev), 1);
}

/* A tracked request in the way of a new one with the same device and sector. */
static void req_supersede(struct rsp_histfeed *f, struct req *r)
{
	if (r->issued)
		req_no_completion(f, r);
	else
		INC(f->c.blk_never_issued);
	req_free(f, r);
}

static void req_who(const struct req *r, struct rsp_hist_who *w)
{
	w->tgid = r->tgid;
	w->tid = r->tid;
	w->comm = r->comm;
	w->comm_len = RSP_HIST_COMM_LEN;
}

static int on_insert(struct rsp_histfeed *f, const struct rsp_schema *s,
		     const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_insert tp;
	struct req *r;

	if (rsp_tp__block_rq_insert(s, smp, &tp))
		return -EINVAL;
	r = req_find(f, (uint32_t)tp.dev, tp.sector);
	if (r)
		req_supersede(f, r);
	r = req_new(f, (uint32_t)tp.dev, tp.sector, smp, tp.comm);
	if (!r)
		return 0;
	r->t_insert = smp->time;
	return 1;
}

static int on_issue(struct rsp_histfeed *f, const struct rsp_schema *s,
		    const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_issue tp;
	struct rsp_hist_who who;
	struct dev_open *d;
	struct req *r;

	if (rsp_tp__block_rq_issue(s, smp, &tp))
		return -EINVAL;
	r = req_find(f, (uint32_t)tp.dev, tp.sector);
	if (r && r->issued) {
		/* Issued again with no completion between: a lost completion or a requeue. */
		req_supersede(f, r);
		r = NULL;
	}
	if (!r) {
		r = req_new(f, (uint32_t)tp.dev, tp.sector, smp, tp.comm);
		if (!r)
			return 0;
	} else if (smp->time >= r->t_insert) {
		req_who(r, &who);
		record_latency(f, RSP_HIST_OP(RSP_HOP_BLK_QUEUE, r->dev), smp->time,
			       smp->time - r->t_insert, &who);
	}
	r->issued = true;
	r->t_issue = smp->time;
	atomic_store_explicit(&f->c.blk_open, LDC(f->c.blk_open) + 1, memory_order_relaxed);
	d = dev_slot(f, r->dev);
	if (d)
		d->open++;
	return 1;
}

static int on_complete(struct rsp_histfeed *f, const struct rsp_schema *s,
		       const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_complete tp;
	struct rsp_hist_who who;
	struct req *r;

	if (rsp_tp__block_rq_complete(s, smp, &tp))
		return -EINVAL;
	r = req_find(f, (uint32_t)tp.dev, tp.sector);
	if (!r || !r->issued) {
		INC(f->c.blk_complete_alone);
		if (r) {
			INC(f->c.blk_never_issued);
			req_free(f, r);
		}
		return 0;
	}
	req_who(r, &who);
	if (smp->time >= r->t_issue)
		record_latency(f, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, r->dev), smp->time,
			       smp->time - r->t_issue, &who);
	req_free(f, r);
	return 1;
}

void rsp_histfeed__expire(struct rsp_histfeed *f, uint64_t now)
{
	uint64_t timeout = f->cfg.io_timeout_ns;

	for (uint32_t i = 0; i < f->high; i++) {
		struct req *r = &f->reqs[i];
		uint64_t since = r->issued ? r->t_issue : r->t_insert;

		if (!r->used || (now != UINT64_MAX && since + timeout > now))
			continue;
		if (r->issued)
			req_no_completion(f, r);
		else
			INC(f->c.blk_never_issued);
		req_free(f, r);
	}
	for (unsigned i = 0; i < f->nr_devs; i++) {
		struct dev_open *d = &f->devs[i];

		if (d->open == d->published)
			continue;
		rsp_hist_store__set_open(f->st, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, d->dev), d->open);
		d->published = d->open;
	}
	if (!f->tl)
		return;
	if (now == UINT64_MAX)
		rsp_timeline__finish(f->tl, f->last_time); /* held sleeps are emitted */
	else if (now > timeout)
		rsp_timeline__expire(f->tl, now - timeout);
	timeline_publish(f);
}

/* ---- sleeps and run-queue waits, from the timeline --------------------------- */

#define SEG_NOT_LATENCY (RSP_SEGF_TRUNCATED | RSP_SEGF_OPEN | RSP_SEGF_GAP)

/*
 * The timeline's callback, on this thread inside rsp_timeline__feed():
 * SLEEP and RUNNABLE segments become latencies (see rsp/histfeed.h).
 */
static void on_segment(void *ctx, const struct rsp_segment *seg, const char *comm)
{
	struct rsp_histfeed *f = ctx;
	struct rsp_hist_who who = {seg->tgid, seg->tid, comm, RSP_HIST_COMM_LEN};
	bool sleep = seg->kind == RSP_SEG_SLEEP;
	uint64_t op;

	if (seg->kind != RSP_SEG_SLEEP && seg->kind != RSP_SEG_RUNNABLE)
		return;
	if (seg->flags & SEG_NOT_LATENCY) {
		INC(f->c.segments_skipped);
		return;
	}
	if (sleep || seg->reason == RSP_SR_PREEMPT)
		op = RSP_HIST_OP(RSP_HOP_OFFCPU, sleep ? seg->reason : RSP_SR_PREEMPT);
	else
		op = RSP_HIST_OP(RSP_HOP_RUNQ, 0);
	if (!sleep && (seg->flags & RSP_SEGF_SWITCH_NOT_SEEN)) {
		/* Its end is the first record of the thread running: unknown, not measured. */
		INC(f->c.switch_not_seen);
		rsp_hist_store__note_incomplete(f->st, op, 1);
		return;
	}
	if (!seg->tgid) {
		/* The process is not known (yet): the system profile only. */
		INC(f->c.no_process);
		who.tid = 0;
	}
	if (rsp_hist_shard__add(f->sh, op, seg->end, seg->end - seg->start, &who))
		return;
	INC(f->c.latencies);
	if (RSP_HIST_OP_KIND(op) == RSP_HOP_RUNQ) {
		INC(f->c.runq);
		return;
	}
	INC(f->c.sleeps);
	if (sleep && (seg->flags & RSP_SEGF_WAKING_NOT_SEEN)) {
		INC(f->c.sleeps_inferred);
		rsp_hist_store__note_inferred(f->st, op, 1);
	}
}

/* The timeline's own counters, published for other threads (once a second). */
static void timeline_publish(struct rsp_histfeed *f)
{
	struct rsp_timeline_stats ts;

	if (!f->tl)
		return;
	rsp_timeline__stats(f->tl, &ts);
	atomic_store_explicit(&f->c.threads_untracked, ts.untracked, memory_order_relaxed);
	atomic_store_explicit(&f->c.timeline_malformed, ts.malformed, memory_order_relaxed);
}

/* ---- dispatch ------------------------------------------------------------------- */

static void on_lost(struct rsp_histfeed *f, unsigned cpu)
{
	INC(f->c.lost);
	if (cpu < f->cfg.nr_cpus) {
		span_abandon(f, &f->cpus[cpu].irq, true);
		span_abandon(f, &f->cpus[cpu].softirq, false);
	}
}

static int dispatch(struct rsp_histfeed *f, const struct rsp_schema *s, const struct rsp_wentry *e,
		    int event)
{
	struct rsp_sample smp;
	struct cpu_state *cs = e->cpu < f->cfg.nr_cpus ? &f->cpus[e->cpu] : NULL;

	if (rsp_record__parse_sample(s, e->rec, &smp) || smp.role != RSP_ROLE_PRIMARY)
		return -EINVAL;
	switch (event) {
	case RSP_EV_sched_switch:
		/* No switch inside a handler: whatever is open lost its exit. */
		if (cs) {
			span_abandon(f, &cs->irq, true);
			span_abandon(f, &cs->softirq, false);
		}
		return 0;
	case RSP_EV_irq_handler_entry:
		return cs ? on_irq_entry(f, s, &smp, cs) : 0;
	case RSP_EV_irq_handler_exit:
		return cs ? on_irq_exit(f, s, &smp, cs) : 0;
	case RSP_EV_softirq_entry:
	case RSP_EV_softirq_exit:
		return cs ? on_softirq(f, s, &smp, cs, event == RSP_EV_softirq_entry) : 0;
	case RSP_EV_block_rq_insert:
		return on_insert(f, s, &smp);
	case RSP_EV_block_rq_issue:
		return on_issue(f, s, &smp);
	case RSP_EV_block_rq_complete:
		return on_complete(f, s, &smp);
	default:
		return 0;
	}
}

int rsp_histfeed__record(struct rsp_histfeed *f, const struct rsp_schema *s,
			 const struct rsp_wentry *e)
{
	const struct perf_event_header *h = e->rec;
	int evsel, event, ret;

	INC(f->c.records);
	if (e->time >= f->next_expire) {
		if (f->next_expire)
			rsp_histfeed__expire(f, e->time);
		f->next_expire = e->time + EXPIRE_EVERY_NS;
	}
	if (e->time > f->last_time)
		f->last_time = e->time;
	if (f->tl)
		rsp_timeline__feed(f->tl, e); /* what it cannot use it counts */
	if (h->type == PERF_RECORD_LOST) {
		on_lost(f, e->cpu);
		return 0;
	}
	if (h->type != PERF_RECORD_SAMPLE || h->size < 16)
		return 0;
	/* Cheap filter: the identifier is the sample's first word. */
	evsel = rsp_schema__evsel_by_id(s, ((const uint64_t *)h)[1]);
	event = evsel < 0 ? -1 : rsp_schema__evsel_event(s, evsel);
	switch (event) {
	case RSP_EV_sched_switch:
		/* Only of interest when a span is open on its CPU (rare). */
		if (e->cpu >= f->cfg.nr_cpus ||
		    (!f->cpus[e->cpu].irq.open && !f->cpus[e->cpu].softirq.open))
			return 0;
		/* fall through */
	case RSP_EV_irq_handler_entry:
	case RSP_EV_irq_handler_exit:
	case RSP_EV_softirq_entry:
	case RSP_EV_softirq_exit:
	case RSP_EV_block_rq_insert:
	case RSP_EV_block_rq_issue:
	case RSP_EV_block_rq_complete:
		ret = dispatch(f, s, e, event);
		if (ret > 0)
			INC(f->c.used);
		return ret;
	default:
		return 0;
	}
}

void rsp_histfeed__gap(struct rsp_histfeed *f, uint64_t from, uint64_t to, uint64_t records)
{
	INC(f->c.gaps);
	for (unsigned i = 0; i < f->cfg.nr_cpus; i++) {
		span_abandon(f, &f->cpus[i].irq, true);
		span_abandon(f, &f->cpus[i].softirq, false);
	}
	if (f->tl)
		rsp_timeline__gap(f->tl, from);
	rsp_hist_store__note_gap(f->st, from, to, records);
}

int rsp_histfeed__offcpu(struct rsp_histfeed *f, enum rsp_sleep_reason reason,
			 const struct rsp_hist_who *who, uint64_t end, uint64_t ns)
{
	int ret = rsp_hist_shard__add(f->sh, RSP_HIST_OP(RSP_HOP_OFFCPU, reason), end, ns, who);

	if (!ret)
		INC(f->c.latencies);
	return ret;
}

int rsp_histfeed__runq(struct rsp_histfeed *f, const struct rsp_hist_who *who, uint64_t end,
		       uint64_t ns)
{
	int ret = rsp_hist_shard__add(f->sh, RSP_HIST_OP(RSP_HOP_RUNQ, 0), end, ns, who);

	if (!ret)
		INC(f->c.latencies);
	return ret;
}

void rsp_histfeed__stats(const struct rsp_histfeed *f, struct rsp_histfeed_stats *o)
{
	const struct counters *c = &f->c;

	o->records = LDC(c->records);
	o->used = LDC(c->used);
	o->latencies = LDC(c->latencies);
	o->irq_exit_alone = LDC(c->irq_exit_alone);
	o->irq_lost_exit = LDC(c->irq_lost_exit);
	o->softirq_exit_alone = LDC(c->softirq_exit_alone);
	o->softirq_lost_exit = LDC(c->softirq_lost_exit);
	o->blk_complete_alone = LDC(c->blk_complete_alone);
	o->blk_no_completion = LDC(c->blk_no_completion);
	o->blk_never_issued = LDC(c->blk_never_issued);
	o->blk_table_full = LDC(c->blk_table_full);
	o->blk_open = LDC(c->blk_open);
	o->lost = LDC(c->lost);
	o->gaps = LDC(c->gaps);
	o->sleeps = LDC(c->sleeps);
	o->sleeps_inferred = LDC(c->sleeps_inferred);
	o->runq = LDC(c->runq);
	o->switch_not_seen = LDC(c->switch_not_seen);
	o->segments_skipped = LDC(c->segments_skipped);
	o->no_process = LDC(c->no_process);
	o->threads_untracked = LDC(c->threads_untracked);
	o->timeline_malformed = LDC(c->timeline_malformed);
}
