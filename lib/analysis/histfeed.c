// SPDX-License-Identifier: LGPL-2.1
/*
 * The record feed of the latency profiles (see rsp/histfeed.h): a
 * subscriber of the timeline, the one interpreter of the records. Its
 * handler spans give irq and softirq handler times, its block requests
 * queue and service times, its segments off-CPU and run-queue times. One
 * thread per feed; the counters are atomics only so that another thread
 * may read them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/histfeed.h>
#include <rsp/record.h>
#include <rsp/timeline.h>

#define DEFAULT_MAX_REQUESTS 65536
#define EXPIRE_EVERY_NS	     1000000000ull
#define MAX_DEVS	     64
#define IRQ_CACHE	     256

/* Requests in flight on one device, published to the store once a second. */
struct dev_open {
	uint32_t dev;
	uint64_t open, published;
};

/* The store's id of an irq's name: the timeline interns names, so a pointer compare. */
struct irq_cache {
	uint32_t irq;
	const char *name;
	uint32_t id;
};

struct counters {
	_Atomic uint64_t records, used, latencies, irq_exit_alone, irq_lost_exit,
		softirq_exit_alone, softirq_lost_exit, blk_complete_alone, blk_no_completion,
		blk_never_issued, blk_table_full, blk_open, lost, gaps;
	_Atomic uint64_t sleeps, sleeps_inferred, runq, switch_not_seen, segments_skipped,
		no_process, threads_untracked, timeline_malformed;
	_Atomic uint64_t tl_switches, tl_switch_outs_not_seen, tl_switch_ins_not_seen,
		tl_wakings_not_seen;
	/* off-CPU time (sleeps) by where its stack came from (RSP_SEGF_STACK_*) */
	_Atomic uint64_t sleep_ns, cached_ns, checked_ns, stack_differ_ns, reason_differ_ns;
};

struct rsp_histfeed {
	struct rsp_hist_store *st;
	struct rsp_hist_shard *sh;
	struct rsp_histfeed_config cfg;
	bool offcpu;		 /* off-CPU and run-queue profiles (cfg.schema) */
	struct rsp_timeline *tl; /* made at the first record, with its schema */
	struct dev_open devs[MAX_DEVS];
	unsigned nr_devs;
	struct irq_cache irqc[IRQ_CACHE];
	uint64_t blk_complete_alone; /* with issue assumed (the timeline counts the rest) */
	uint64_t next_expire;
	uint64_t last_time; /* of the newest record fed */
	struct counters c;
};

#define INC(x)                                                                                     \
	atomic_store_explicit(&(x), atomic_load_explicit(&(x), memory_order_relaxed) + 1,          \
			      memory_order_relaxed)
#define SET(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)
#define ADD(x, v)                                                                                  \
	atomic_store_explicit(&(x), atomic_load_explicit(&(x), memory_order_relaxed) + (v),        \
			      memory_order_relaxed)
#define LDC(x) atomic_load_explicit(&(x), memory_order_relaxed)

static void on_segment(void *ctx, const struct rsp_segment *seg, const char *comm);
static void on_span(void *ctx, const struct rsp_handler_span *sp);
static void on_block(void *ctx, const struct rsp_block_req *r);

/* The timeline over the feed's records; only reasons are needed: no stack copies. */
static int timeline_new(struct rsp_histfeed *f, const struct rsp_schema *s)
{
	static const struct rsp_timeline_ops ops = {
		.segment = on_segment, .block = on_block, .handler = on_span};

	f->tl = rsp_timeline__new(s, &ops, f);
	if (!f->tl)
		return -ENOMEM;
	rsp_timeline__set_flags(f->tl, RSP_TL_NO_STACKS);
	/* lengths only: nothing held back, nothing copied (rsp_timeline__set_unfold_delay()) */
	rsp_timeline__set_unfold_delay(f->tl, 0);
	rsp_timeline__set_max_threads(f->tl, f->cfg.max_threads);
	rsp_timeline__set_max_requests(f->tl, f->cfg.max_requests);
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
	f->offcpu = cfg->schema != NULL;
	if (!f->cfg.io_timeout_ns)
		f->cfg.io_timeout_ns = RSP_HISTFEED_IO_TIMEOUT_NS;
	if (!f->cfg.max_requests)
		f->cfg.max_requests = DEFAULT_MAX_REQUESTS;
	if (!f->cfg.max_threads)
		f->cfg.max_threads = RSP_HISTFEED_MAX_THREADS;
	if (cfg->schema && timeline_new(f, cfg->schema)) {
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
	free(f);
}

static void record_latency(struct rsp_histfeed *f, uint64_t op, uint64_t end, uint64_t ns,
			   const struct rsp_hist_who *who)
{
	if (!rsp_hist_shard__add(f->sh, op, end, ns, who))
		INC(f->c.latencies);
}

/* ---- irq and softirq handlers ----------------------------------------------- */

static uint32_t irq_name_id(struct rsp_histfeed *f, uint32_t irq, const char *name)
{
	struct irq_cache *c = &f->irqc[irq % IRQ_CACHE];

	if (c->id && c->irq == irq && c->name == name)
		return c->id;
	c->irq = irq;
	c->name = name;
	c->id = rsp_hist_store__irq_name_id(f->st, name, strnlen(name, 31));
	rsp_hist_store__note_irq(f->st, irq, c->id);
	return c->id;
}

/*
 * The timeline's handler spans: a measured span is a latency; a span whose
 * exit was lost (an entry of its kind, a switch or a gap came first) is
 * counted as incomplete for its op, never measured.
 */
static void on_span(void *ctx, const struct rsp_handler_span *sp)
{
	struct rsp_histfeed *f = ctx;
	bool lost = sp->flags & RSP_HSPANF_LOST_EXIT;
	uint64_t op;

	if (sp->kind == RSP_HANDLER_IRQ) {
		op = RSP_HIST_OP(RSP_HOP_IRQ, irq_name_id(f, sp->id, sp->name));
		if (lost)
			INC(f->c.irq_lost_exit);
	} else if (sp->kind == RSP_HANDLER_SOFTIRQ) {
		op = RSP_HIST_OP(RSP_HOP_SOFTIRQ, sp->id);
		if (lost)
			INC(f->c.softirq_lost_exit);
	} else {
		return;
	}
	if (lost)
		rsp_hist_store__note_incomplete(f->st, op, 1);
	else
		record_latency(f, op, sp->end, sp->end - sp->start, NULL);
}

/* ---- block requests ------------------------------------------------------------ */

/*
 * The timeline's block requests, once they end: queue time (insert ->
 * issue; none without an insert) and service time (issue -> complete),
 * attributed to the task that inserted the request (or issued it), which
 * is the submitter most of the time but may be a kworker that dispatched
 * the queue. A request whose completion was not observed (superseded,
 * expired, or inferred from its issuer's wakeup) is counted as without an
 * observed completion, never measured; one never issued is counted as such.
 */
static void on_block(void *ctx, const struct rsp_block_req *r)
{
	struct rsp_histfeed *f = ctx;
	struct rsp_hist_who who = {r->tgid, r->tid, r->comm, sizeof(r->comm)};
	bool issued = !(r->flags & RSP_BLKF_ISSUE_ASSUMED);

	if (r->flags & (RSP_BLKF_COMPLETE_NOT_SEEN | RSP_BLKF_COMPLETE_INFERRED)) {
		if (!issued) {
			INC(f->c.blk_never_issued);
			return;
		}
		INC(f->c.blk_no_completion);
		rsp_hist_store__note_incomplete(f->st, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, r->dev), 1);
		return;
	}
	if (!issued) {
		/* Completed with no issue seen: no latency to measure. */
		f->blk_complete_alone++;
		INC(f->c.blk_never_issued);
		return;
	}
	if (!(r->flags & RSP_BLKF_NO_INSERT))
		record_latency(f, RSP_HIST_OP(RSP_HOP_BLK_QUEUE, r->dev), r->issue,
			       r->issue - r->insert, &who);
	record_latency(f, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, r->dev), r->complete,
		       r->complete - r->issue, &who);
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

/* An issued request in flight, for the open counts per device. */
static void count_open(void *ctx, const struct rsp_block_req *r)
{
	struct dev_open *d = r->issue ? dev_slot(ctx, r->dev) : NULL;

	if (d)
		d->open++;
}

/* Requests issued and still waiting for their completion, per device. */
static void publish_open(struct rsp_histfeed *f)
{
	for (unsigned i = 0; i < f->nr_devs; i++)
		f->devs[i].open = 0;
	if (f->tl)
		rsp_timeline__open_requests(f->tl, count_open, f);
	for (unsigned i = 0; i < f->nr_devs; i++) {
		struct dev_open *d = &f->devs[i];

		if (d->open == d->published)
			continue;
		rsp_hist_store__set_open(f->st, RSP_HIST_OP(RSP_HOP_BLK_SERVICE, d->dev), d->open);
		d->published = d->open;
	}
}

/* ---- sleeps and run-queue waits, from the timeline --------------------------- */

#define SEG_NOT_LATENCY (RSP_SEGF_TRUNCATED | RSP_SEGF_OPEN | RSP_SEGF_GAP)

/* A sleep's time by where its stacks came from: the stack cache's own check. */
static void stack_time(struct rsp_histfeed *f, const struct rsp_segment *seg)
{
	uint64_t ns = seg->end - seg->start;

	ADD(f->c.sleep_ns, ns);
	if (seg->flags & RSP_SEGF_STACK_CACHED)
		ADD(f->c.cached_ns, ns);
	if (!(seg->flags & RSP_SEGF_STACK_CHECKED))
		return;
	ADD(f->c.checked_ns, ns);
	if (seg->flags & RSP_SEGF_STACK_DIFFERS)
		ADD(f->c.stack_differ_ns, ns);
	if (seg->flags & RSP_SEGF_REASON_DIFFERS)
		ADD(f->c.reason_differ_ns, ns);
}

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

	if (!f->offcpu || (seg->kind != RSP_SEG_SLEEP && seg->kind != RSP_SEG_RUNNABLE))
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
	if (sleep)
		stack_time(f, seg);
	if (sleep && (seg->flags & RSP_SEGF_WAKING_NOT_SEEN)) {
		INC(f->c.sleeps_inferred);
		rsp_hist_store__note_inferred(f->st, op, 1);
	}
}

/* The timeline's own counters, published for other threads (after each record). */
static void timeline_publish(struct rsp_histfeed *f)
{
	const struct rsp_timeline_stats *ts;

	if (!f->tl)
		return;
	ts = rsp_timeline__counters(f->tl);
	SET(f->c.used, ts->used);
	SET(f->c.threads_untracked, ts->untracked);
	SET(f->c.timeline_malformed, ts->malformed);
	SET(f->c.irq_exit_alone, ts->handler_exits_alone[RSP_HANDLER_IRQ]);
	SET(f->c.softirq_exit_alone, ts->handler_exits_alone[RSP_HANDLER_SOFTIRQ]);
	SET(f->c.blk_complete_alone, ts->completions_alone + f->blk_complete_alone);
	SET(f->c.blk_table_full, ts->reqs_refused);
	SET(f->c.blk_open, ts->reqs_issued_open);
	SET(f->c.lost, ts->lost_records);
	SET(f->c.tl_switches, ts->events[RSP_EV_sched_switch]);
	SET(f->c.tl_switch_outs_not_seen, ts->runs_inferred);
	SET(f->c.tl_switch_ins_not_seen, ts->switches_not_seen);
	SET(f->c.tl_wakings_not_seen, ts->wakings_not_seen);
}

void rsp_histfeed__expire(struct rsp_histfeed *f, uint64_t now)
{
	uint64_t timeout = f->cfg.io_timeout_ns;

	if (f->tl) {
		if (now == UINT64_MAX)
			rsp_timeline__finish(f->tl, f->last_time); /* everything still open ends */
		else if (now > timeout)
			rsp_timeline__expire(f->tl, now - timeout);
	}
	publish_open(f);
	timeline_publish(f);
}

int rsp_histfeed__record(struct rsp_histfeed *f, const struct rsp_schema *s,
			 const struct rsp_wentry *e)
{
	uint64_t used;
	int ret;

	INC(f->c.records);
	if (!f->tl && timeline_new(f, s))
		return -ENOMEM;
	if (e->time >= f->next_expire) {
		if (f->next_expire)
			rsp_histfeed__expire(f, e->time);
		f->next_expire = e->time + EXPIRE_EVERY_NS;
	}
	if (e->time > f->last_time)
		f->last_time = e->time;
	used = LDC(f->c.used);
	ret = rsp_timeline__feed(f->tl, e); /* what it cannot use it counts */
	timeline_publish(f);
	return ret < 0 ? ret : LDC(f->c.used) > used;
}

uint64_t rsp_histfeed__advance(struct rsp_histfeed *f, uint64_t now)
{
	uint64_t done;

	if (!f->tl)
		return now;
	done = rsp_timeline__advance(f->tl, now);
	timeline_publish(f);
	return done;
}

void rsp_histfeed__gap(struct rsp_histfeed *f, uint64_t from, uint64_t to, uint64_t records)
{
	INC(f->c.gaps);
	if (f->tl)
		rsp_timeline__gap(f->tl, from); /* open handler spans lose their exits */
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
	o->tl_switches = LDC(c->tl_switches);
	o->tl_switch_outs_not_seen = LDC(c->tl_switch_outs_not_seen);
	o->tl_switch_ins_not_seen = LDC(c->tl_switch_ins_not_seen);
	o->tl_wakings_not_seen = LDC(c->tl_wakings_not_seen);
	o->segments_skipped = LDC(c->segments_skipped);
	o->no_process = LDC(c->no_process);
	o->threads_untracked = LDC(c->threads_untracked);
	o->timeline_malformed = LDC(c->timeline_malformed);
	o->sleep_ns = LDC(c->sleep_ns);
	o->cached_ns = LDC(c->cached_ns);
	o->checked_ns = LDC(c->checked_ns);
	o->stack_differ_ns = LDC(c->stack_differ_ns);
	o->reason_differ_ns = LDC(c->reason_differ_ns);
}
