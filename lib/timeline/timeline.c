// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline builder: the object, its threads and CPUs, what it emits,
 * feeding, gaps, expiry. See lib/include/rsp/timeline.h for the contract and
 * internal/timeline.h for how the files share the work.
 */
#include "internal/timeline.h"
#include "tracepoints/bpf_records.h"

static const char *const softirq_names[RSP_SOFTIRQ__NR] = {
	"HI",	    "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
	"IRQ_POLL", "TASKLET", "SCHED",	 "HRTIMER", "RCU",
};

const char *rsp_softirq__name(unsigned vec)
{
	return vec < RSP_SOFTIRQ__NR ? softirq_names[vec] : "?";
}

struct rsp_timeline *rsp_timeline__new(const struct rsp_schema *schema,
				       const struct rsp_timeline_ops *ops, void *ctx)
{
	struct rsp_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->schema = schema;
	if (ops)
		tl->ops = *ops;
	tl->ctx = ctx;
	tl->free_slot = UINT32_MAX;
	tl->free_req = UINT32_MAX;
	tl->bcheck_reason = -1;
	tl->free_sock = UINT32_MAX;
	tl->next_req_id = 1;
	tl->next_op_id = 1;
	rsp_u64map__init(&tl->tmap);
	rsp_u64map__init(&tl->rmap);
	rsp_u64map__init(&tl->smap);
	rsp_kvec__init(&tl->bstacks, sizeof(struct bstack));
	rsp_kvec__init(&tl->bchains, sizeof(struct bchain));
	rsp_kvec__init(&tl->prenames, sizeof(struct prename));
	/*
	 * As far as a query reads ahead: every event in its place, as in a dump
	 * of the same range (rsp_pdwriter__window() holds as long).
	 */
	tl->unfold_delay = RSP_TIMELINE_READ_AHEAD_NS;
	tl->sc = rsp_sleepclass__new(NULL);
	tl->stab = rsp_socktab__new();
	if (!tl->sc || !tl->stab) {
		rsp_sleepclass__delete(tl->sc);
		rsp_socktab__delete(tl->stab);
		free(tl);
		return NULL;
	}
	return tl;
}

void rsp_timeline__delete(struct rsp_timeline *tl)
{
	if (!tl)
		return;
	for (uint32_t i = 0; i < tl->nr_slots; i++) {
		if (tl->slots[i])
			free(tl->slots[i]->stack_buf);
		free(tl->slots[i]);
	}
	for (uint32_t i = 0; i < tl->nr_irqs; i++)
		free(tl->irqs[i].name);
	for (uint32_t i = 0; i < tl->nr_cpus; i++)
		free(tl->cpus[i].copy_buf);
	free(tl->irqs);
	free(tl->slots);
	free(tl->cpus);
	free(tl->reqs);
	free(tl->socks);
	rsp_u64map__exit(&tl->tmap);
	rsp_u64map__exit(&tl->rmap);
	rsp_u64map__exit(&tl->smap);
	tl__bpf_exit(tl);
	rsp_unfold__delete(tl->unfold);
	rsp_sleepclass__delete(tl->sc);
	rsp_socktab__delete(tl->stab);
	free(tl);
}

void rsp_timeline__set_flags(struct rsp_timeline *tl, unsigned flags)
{
	tl->flags = flags;
}

int rsp_timeline__set_ksyms(struct rsp_timeline *tl, const struct rsp_ksyms *ks)
{
	struct rsp_sleepclass *sc = rsp_sleepclass__new(ks);

	if (!sc)
		return -ENOMEM;
	rsp_sleepclass__delete(tl->sc);
	tl->sc = sc;
	tl->ks = ks;
	return 0;
}

void rsp_timeline__set_socktab(struct rsp_timeline *tl, const struct rsp_socktab *base)
{
	tl->base = base;
}

const struct rsp_socktab *rsp_timeline__socktab(const struct rsp_timeline *tl)
{
	return tl->stab;
}

void rsp_timeline__set_start(struct rsp_timeline *tl, uint64_t start)
{
	tl->start = start;
	tl->started = true;
	/* events folded into the range's records from before it are not its */
	tl->unfold_from = start;
}

void rsp_timeline__stats(const struct rsp_timeline *tl, struct rsp_timeline_stats *st)
{
	*st = tl->st;
}

const struct rsp_timeline_stats *rsp_timeline__counters(const struct rsp_timeline *tl)
{
	return &tl->st;
}

/* ---- threads ------------------------------------------------------------ */

/* A fresh slot, reused from an exited thread when there is one. */
static struct thr *alloc_thr(struct rsp_timeline *tl, uint32_t *idx)
{
	struct thr *t;

	if (tl->free_slot != UINT32_MAX) {
		*idx = tl->free_slot;
		t = tl->slots[*idx];
		tl->free_slot = t->next_free;
		return t;
	}
	if (rsp_vec__reserve((void **)&tl->slots, &tl->cap_slots, tl->nr_slots + 1,
			     sizeof(*tl->slots)))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (!(tl->flags & (RSP_TL_RECORDS_STABLE | RSP_TL_NO_STACKS))) {
		t->stack_buf = malloc(STACK_WORDS * sizeof(uint64_t));
		if (!t->stack_buf) {
			free(t);
			return NULL;
		}
	}
	*idx = tl->nr_slots;
	tl->slots[tl->nr_slots++] = t;
	return t;
}

struct thr *tl__new_thr(struct rsp_timeline *tl, uint32_t tid)
{
	struct thr *t;
	uint64_t *buf;
	uint32_t idx;

	if (tl->max_threads && tl->live >= tl->max_threads) {
		tl->refused = true;
		return NULL;
	}
	t = alloc_thr(tl, &idx);
	if (!t)
		return NULL;
	if (rsp_u64map__put(&tl->tmap, tid, idx)) {
		t->next_free = tl->free_slot;
		tl->free_slot = idx;
		return NULL;
	}
	buf = t->stack_buf;
	memset(t, 0, sizeof(*t));
	t->stack_buf = buf;
	t->tid = tid;
	t->state = T_NEW;
	tl->st.threads++;
	tl->live++;
	if (rsp_kvec__len(&tl->prenames))
		tl__prename(tl, t);
	return t;
}

void tl__free_thr(struct rsp_timeline *tl, struct thr *t)
{
	uint32_t idx;

	if (rsp_u64map__get(&tl->tmap, t->tid, &idx))
		return;
	rsp_u64map__del(&tl->tmap, t->tid);
	tl->live--;
	if (tl->tcache[t->tid % TL_TCACHE] == idx + 1)
		tl->tcache[t->tid % TL_TCACHE] = 0;
	t->next_free = tl->free_slot;
	tl->free_slot = idx;
}

static void notify_thread(struct rsp_timeline *tl, struct thr *t, uint64_t time)
{
	if (tl->ops.thread)
		tl->ops.thread(tl->ctx, t->tid, t->tgid, t->comm, time);
}

static void set_comm(struct thr *t, struct rsp_str s)
{
	size_t n = s.len < sizeof(t->comm) - 1 ? s.len : sizeof(t->comm) - 1;

	if (!s.ptr)
		return;
	memcpy(t->comm, s.ptr, n);
	t->comm[n] = '\0';
}

/* A new name (a COMM record): kept, and told to the subscribers. */
void tl__rename(struct rsp_timeline *tl, struct thr *t, struct rsp_str s, uint64_t time)
{
	set_comm(t, s);
	notify_thread(tl, t, time);
}

/* First sight of a comm from a tracepoint field (later changes come as COMM records). */
void tl__learn_comm(struct rsp_timeline *tl, struct thr *t, struct rsp_str s, uint64_t time)
{
	if (t->comm[0] || !s.len)
		return;
	tl__rename(tl, t, s, time);
}

void tl__set_tgid(struct rsp_timeline *tl, struct thr *t, uint32_t tgid, uint64_t time)
{
	t->tgid = tgid;
	notify_thread(tl, t, time);
}

/* ---- emission ----------------------------------------------------------- */

void tl__emit_link(struct rsp_timeline *tl, struct thr *t, uint8_t kind, uint64_t time,
		   const struct rsp_waker *from)
{
	struct rsp_link l;

	memset(&l, 0, sizeof(l));
	l.kind = kind;
	l.tid = t->tid;
	l.tgid = t->tgid;
	l.time = time;
	l.from = *from;
	tl->st.links++;
	if (tl->ops.link)
		tl->ops.link(tl->ctx, &l);
}

/* The sleep that is open, closed at @end with @waker. */
void tl__sleep_seg(const struct thr *t, struct rsp_segment *s, uint64_t end,
		   const struct rsp_waker *waker)
{
	tl__seg_init(s, t, RSP_SEG_SLEEP, t->since, end);
	s->reason = t->reason;
	s->prev_state = t->prev_state;
	s->stack = t->stack;
	s->nr_stack = t->nr_stack;
	s->urec = t->urec;
	if (t->urec_probe)
		s->flags |= RSP_SEGF_UREC_PROBE;
	s->flags |= t->stack_flags;
	if (waker)
		s->waker = *waker;
	/* A generic timeout primitive is a timeout only if a timer ended it. */
	if (s->reason == RSP_SR_TIMER && s->waker.kind != RSP_WAKER_TIMER)
		s->reason = RSP_SR_UNKNOWN;
	else if (s->reason == RSP_SR_UNKNOWN && s->waker.kind == RSP_WAKER_TIMER)
		s->reason = RSP_SR_TIMER;
}

/* Close whatever segment @t has open at @end, as it is (no waker). */
void tl__close_open(struct rsp_timeline *tl, struct thr *t, uint64_t end, uint16_t flags)
{
	struct rsp_segment s;

	tl__emit_held(tl, t);
	switch (t->state) {
	case T_RUNNING:
		tl__seg_init(&s, t, RSP_SEG_RUN, t->since, end);
		break;
	case T_RUNNABLE:
		tl__seg_init(&s, t, RSP_SEG_RUNNABLE, t->since, end);
		s.reason = t->reason;
		s.waker = t->waker;
		break;
	case T_SLEEPING:
		tl__sleep_seg(t, &s, end, NULL);
		break;
	case T_GAP:
		tl__seg_init(&s, t, RSP_SEG_UNKNOWN, t->since, end);
		break;
	default:
		return;
	}
	s.flags |= flags;
	tl__emit_seg(tl, t, &s);
	t->seg_flags = 0;
}

/*
 * @t is running and its switch-out never came: its CPU's ring shows it
 * there until its last record (last_ev), and it is only inferred to have
 * run from there to @bound (a later record of another task on that CPU,
 * its own record elsewhere, the range's end). The RUN up to the evidence,
 * then the rest flagged RSP_SEGF_RUN_INFERRED, with @flags.
 */
void tl__end_run_unseen(struct rsp_timeline *tl, struct thr *t, uint64_t bound, uint16_t flags)
{
	uint64_t ev = t->last_ev < t->since ? t->since : t->last_ev;
	struct rsp_segment s;

	if (ev >= bound) {
		tl__close_open(tl, t, bound, flags);
		return;
	}
	tl__emit_held(tl, t);
	if (ev > t->since) {
		tl__seg_init(&s, t, RSP_SEG_RUN, t->since, ev);
		tl__emit_seg(tl, t, &s);
		t->seg_flags = 0;
	}
	tl__seg_init(&s, t, RSP_SEG_RUN, ev, bound);
	s.flags |= RSP_SEGF_RUN_INFERRED | flags;
	tl__emit_seg(tl, t, &s);
	t->seg_flags = 0;
}

/* ---- cpus --------------------------------------------------------------- */

static struct cpu_state *get_cpu(struct rsp_timeline *tl, uint32_t cpu)
{
	if (cpu >= 65536)
		return NULL;
	if (cpu >= tl->nr_cpus) {
		uint32_t n = cpu + 1 > tl->nr_cpus * 2 ? cpu + 1 : tl->nr_cpus * 2;
		struct cpu_state *c = realloc(tl->cpus, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + tl->nr_cpus, 0, (n - tl->nr_cpus) * sizeof(*c));
		tl->cpus = c;
		tl->nr_cpus = n;
	}
	return &tl->cpus[cpu];
}

/* ---- side-band and gaps ------------------------------------------------- */

static int on_sideband(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	const struct perf_event_header *h = e->rec;
	struct rsp_comm_rec c;
	struct rsp_task_rec k;
	struct thr *t;

	if (h->type == PERF_RECORD_COMM) {
		if (rsp_record__comm(h, &c))
			return -EINVAL;
		if (!(t = tl__get_thr(tl, c.tid)))
			return -ENOMEM;
		t->tgid = c.pid;
		tl__rename(tl, t, (struct rsp_str){c.comm, c.len}, e->time);
		return 0;
	}
	if (h->type == PERF_RECORD_FORK) {
		if (rsp_record__task(h, &k))
			return -EINVAL;
		/* the child's process */
		if (!(t = tl__get_thr(tl, k.tid)))
			return -ENOMEM;
		tl__learn_tgid(tl, t, k.pid, e->time);
		return 0;
	}
	return 1;
}

/*
 * Records of CPU @cpu (every CPU: UINT32_MAX) from @from on are missing:
 * every thread that could have changed state there (all but those running
 * on other CPUs) is UNKNOWN from @from until its next switch.
 */
static void gap_threads(struct rsp_timeline *tl, uint32_t cpu, uint64_t from)
{
	tl->st.gaps++;
	for (uint32_t i = 0; i < tl->nr_slots; i++) {
		struct thr *t = tl->slots[i];
		uint32_t idx;

		if (rsp_u64map__get(&tl->tmap, t->tid, &idx) || idx != i)
			continue; /* a free slot */
		if (t->state == T_NEW || t->state == T_GAP)
			continue;
		if (t->state == T_RUNNING && cpu != UINT32_MAX && t->cpu != cpu)
			continue;
		tl__close_open(tl, t, from < t->since ? t->since : from, RSP_SEGF_GAP);
		t->state = T_GAP;
		t->since = from < t->since ? t->since : from;
	}
}

static void on_gap(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_wentry *e)
{
	uint64_t from = c->seen ? c->last_time : e->time;

	gap_threads(tl, e->cpu, from);
	c->switched = false;
	c->last_switch = 0;
	tl__abandon_handlers(tl, c, from);
}

static int unfold_out(struct rsp_timeline *tl, bool all);

void rsp_timeline__gap(struct rsp_timeline *tl, uint64_t from)
{
	if (tl->finished)
		return;
	unfold_out(tl, true); /* what came before the gap, first */
	gap_threads(tl, UINT32_MAX, from);
	for (uint32_t i = 0; i < tl->nr_cpus; i++) {
		tl->cpus[i].switched = false;
		tl->cpus[i].last_switch = 0;
		tl__abandon_handlers(tl, &tl->cpus[i], from);
		tl->cpus[i].copy_stack = NULL;
	}
}

void rsp_timeline__set_max_threads(struct rsp_timeline *tl, uint32_t max)
{
	tl->max_threads = max;
}

/*
 * Sockets idle since before @before: an operation still open is emitted
 * (RSP_NETF_OPEN) and the socket forgotten. The addresses go by their own
 * age: a socket whose latest address version is that old is forgotten
 * from the table (a TCP connection still in use is named again, from the
 * start, by its next receive carrying the 4-tuple).
 */
void rsp_timeline__expire(struct rsp_timeline *tl, uint64_t before)
{
	if (tl->finished)
		return;
	tl__expire_reqs(tl, before);
	for (uint32_t i = 0; i < tl->nr_slots; i++) {
		struct thr *t = tl->slots[i];
		uint32_t idx;

		if (rsp_u64map__get(&tl->tmap, t->tid, &idx) || idx != i)
			continue;
		if (t->state != T_GAP || t->since >= before)
			continue;
		tl__emit_held(tl, t);
		tl->st.threads_expired++;
		tl__free_thr(tl, t);
	}
	tl__expire_socks(tl, before);
}

/* ---- implicit switch-ins ------------------------------------------------ */

/*
 * A record of another task than the one rsp believes current on this CPU
 * (c->curr, running there): that one's switch-out was not delivered, and
 * it is not running here any more. Records of one CPU may come a few
 * hundred ns out of order, so the next task's first record can precede
 * the switch that brought it: the verdict waits until a record after
 * INVERSION_NS, or another task's (commit), or the old task's own record
 * in that time, its switch-out (an inversion: nothing lost).
 */
static void commit_other(struct rsp_timeline *tl, struct cpu_state *c, uint32_t cpu)
{
	struct thr *o = c->curr ? tl__find_thr(tl, c->curr) : NULL;

	c->pend = false;
	c->curr = c->pend_tid;
	if (!o || o->state != T_RUNNING || o->cpu != cpu)
		return;
	tl->st.runs_inferred++;
	tl__end_run_unseen(tl, o, tl__clamp(tl, o, c->pend_time), 0);
	o->state = T_GAP;
	o->since = tl__clamp(tl, o, c->pend_time);
}

static void observe_other(struct rsp_timeline *tl, struct cpu_state *c,
			  const struct rsp_sample *smp)
{
	const struct thr *o;

	if (c->pend) {
		if (smp->tid == c->curr && smp->time <= c->pend_time + INVERSION_NS) {
			c->pend = false; /* its own record: still there, an inversion */
			return;
		}
		if (smp->tid == c->pend_tid && smp->time <= c->pend_time + INVERSION_NS)
			return;
		commit_other(tl, c, smp->cpu);
	}
	if (smp->tid == c->curr)
		return;
	o = c->curr ? tl__find_thr(tl, c->curr) : NULL;
	if (!o || o->state != T_RUNNING || o->cpu != smp->cpu) {
		c->curr = smp->tid;
		return;
	}
	c->pend = true;
	c->pend_tid = smp->tid;
	c->pend_time = smp->time;
}

/*
 * Every sample names the task current on its CPU. On this kernel a switch
 * away from the idle task is never delivered (it fires in the idle task's
 * context), so a thread woken onto an idle CPU shows up running with no
 * switch-in: the first record in its context is the evidence, and its time
 * the switch-in's (the real one lies between the CPU's previous record and
 * this one; rsp takes the end it has evidence for).
 */
static int observe_running(struct rsp_timeline *tl, struct cpu_state *c,
			   const struct rsp_sample *smp)
{
	struct thr *t;

	observe_other(tl, c, smp);
	if (!smp->tid)
		return 0;
	t = tl__get_thr(tl, smp->tid);
	if (!t) /* past set_max_threads(): untracked; else the record is dropped */
		return tl->refused ? 0 : -ENOMEM;
	tl__learn_tgid(tl, t, smp->pid, smp->time);
	/*
	 * A BPF record from before the thread's last switch (an event folded
	 * into a later record, fed after what followed it): the thread ran then,
	 * which says nothing of now. The BPF backend misses no switch but with
	 * lost records, which are gaps.
	 */
	if (smp->compact && t->state != T_NEW && t->state != T_RUNNING && smp->time < t->since)
		return 0;
	if (t->state == T_RUNNING && t->cpu == smp->cpu) {
		if (smp->time > t->last_ev)
			t->last_ev = smp->time;
		return 0;
	}
	if (t->state == T_NEW) {
		t->state = T_RUNNING;
		t->since = c->seen ? smp->time : tl->start;
		t->seg_flags = c->seen ? 0 : RSP_SEGF_TRUNCATED;
		t->run_start = t->since;
		t->last_ev = smp->time;
		t->cpu = smp->cpu;
		return 0;
	}
	tl->st.switches_not_seen++;
	tl__switch_in(tl, t, smp->cpu, smp->time, RSP_SEGF_SWITCH_NOT_SEEN);
	return 0;
}

/* ---- feed --------------------------------------------------------------- */

/* A libc uprobe: its user stack may repair the stack of the sleep that follows. */
static int on_probe(struct rsp_timeline *tl, const struct rsp_sample *smp,
		    const struct perf_event_header *rec)
{
	struct thr *t = smp->tid ? tl__find_thr(tl, smp->tid) : NULL;

	if (!t)
		return 0;
	t->probe_rec = rec;
	t->probe_time = smp->time;
	return 0;
}

static int on_sample(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		     const struct perf_event_header *rec)
{
	switch (smp->event) {
	case RSP_EV_uprobe:
		return on_probe(tl, smp, rec);
	case RSP_EV_sched_switch:
		return tl__on_switch(tl, c, smp, rec);
	case RSP_EV_sched_waking:
		return tl__on_waking(tl, c, smp);
	case RSP_EV_sched_wakeup_new:
		return tl__on_wakeup_new(tl, smp);
	case RSP_EV_sched_process_fork:
		return tl__on_fork(tl, smp);
	case RSP_EV_sched_process_exec:
		return tl__on_exec(tl, smp);
	case RSP_EV_sched_process_exit: {
		struct thr *t = tl__find_thr(tl, smp->tid);

		if (t)
			t->exiting = true;
		return 0;
	}
	case RSP_EV_block_rq_insert:
		return tl__on_insert(tl, smp);
	case RSP_EV_block_rq_issue:
		return tl__on_issue(tl, smp);
	case RSP_EV_block_rq_complete:
		return tl__on_complete(tl, c, smp);
	case RSP_EV_hrtimer_start:
		return tl__on_timer_start(tl, c, smp);
	case RSP_EV_cpu_clock:
		if (tl->ops.sample)
			tl->ops.sample(tl->ctx, smp, rec);
		return 0;
	default:
		/* network events last: the cases above are the common ones, none of them one */
		if (rsp_net__is_event(smp->event))
			return tl__on_net(tl, c, smp);
		return tl__on_handler(tl, c, smp);
	}
}

/*
 * A record's event, for the counts by event (stats.events). A BPF COMM
 * record is side-band, as perf's COMM (a dump writes it as one).
 */
static inline void count_event(struct rsp_timeline *tl, const struct rsp_sample *smp, bool ok)
{
	if (ok && smp->compact == RSP_BREC_COMM)
		tl->st.events[RSP_EV_sideband]++;
	else if (!ok || smp->event < 0 || smp->event >= RSP_EV__NR)
		tl->st.other++;
	else if (smp->role == RSP_ROLE_PRIMARY)
		tl->st.events[smp->event]++;
}

static int feed_sample(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_wentry *e)
{
	struct rsp_sample smp;
	int ret = rsp_record__parse_fast(tl->schema, e->rec, &smp)
			  ? 0
			  : rsp_record__parse_other(tl->schema, e->rec, &smp);

	count_event(tl, &smp, !ret);
	if (ret)
		return ret;
	tl->bstack_flags = 0;
	tl->bcheck_reason = -1;
	if (smp.compact) {
		if (smp.event < 0) /* a name or a stack, sent once */
			return tl__on_bpf_side(tl, &smp);
		tl__bpf_chain(tl, &smp);
	}
	if (smp.tid == UINT32_MAX) /* no task (-1): as the idle task */
		smp.tid = smp.pid = 0;
	if (smp.event >= 0 && smp.role == RSP_ROLE_PRIMARY && (ret = observe_running(tl, c, &smp)))
		return ret;
	return smp.event < 0 ? 1 : on_sample(tl, c, &smp, e->rec);
}

static int feed_other(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_wentry *e)
{
	struct rsp_sample smp;

	if (e->rec->type == PERF_RECORD_LOST) {
		tl->st.lost_records++;
		if (e->rec->size >= sizeof(*e->rec) + 16)
			tl->st.lost += ((const uint64_t *)(e->rec + 1))[1];
		on_gap(tl, c, e);
		return 0;
	}
	count_event(tl, &smp, rsp_record__parse_id(tl->schema, e->rec, &smp) >= 0);
	return on_sideband(tl, e);
}

/* One record, in time order (what the unfolder gives back). */
static int feed_one(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	struct cpu_state *c = get_cpu(tl, e->cpu);
	int ret;

	/* events, as a dump writes them: a folded record's count apart */
	tl->st.records++;
	if (!c) {
		tl->st.malformed++;
		return -ENOMEM;
	}
	tl->refused = false;
	c->nrec++;
	if (rsp_record__is_sample(e->rec))
		ret = feed_sample(tl, c, e);
	else
		ret = feed_other(tl, c, e);
	c->seen = true;
	if (e->time > c->last_time)
		c->last_time = e->time;
	if (tl->refused) {
		/* A thread past set_max_threads(): not an error of the record. */
		tl->st.untracked++;
		return 0;
	}
	if (ret == 0)
		tl->st.used++;
	else if (ret > 0)
		tl->st.skipped++;
	else
		tl->st.malformed++;
	return ret == -ENOMEM ? -ENOMEM : 0;
}

/* What the unfolder holds that is ready (@all: everything). */
static int unfold_out(struct rsp_timeline *tl, bool all)
{
	struct rsp_wentry o;
	int ret = 0;

	while (tl->unfold && rsp_unfold__pop(tl->unfold, &o, all))
		if (feed_one(tl, &o) == -ENOMEM)
			ret = -ENOMEM;
	return ret;
}

/*
 * A stream with rspd's BPF records goes through an unfolder: their folded
 * events (a switch-in's waking, a completion's insert and issue, a
 * handler's entry) are fed at their own times. Made at the first record,
 * when the flags are known: a timeline whose records do not outlive the
 * feed has the unfolder copy those it holds.
 */
static int unfold_in(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	if (!tl->unfold) {
		tl->unfold = rsp_unfold__new(!(tl->flags & RSP_TL_RECORDS_STABLE));
		if (!tl->unfold)
			return -ENOMEM;
		rsp_unfold__set_delay(tl->unfold, tl->unfold_delay);
		rsp_unfold__set_range(tl->unfold, tl->unfold_from,
				      tl->unfold_to ? tl->unfold_to : UINT64_MAX);
	}
	if (rsp_unfold__push(tl->unfold, e))
		return -ENOMEM;
	return unfold_out(tl, false);
}

static int feed_carried(void *ctx, const struct rsp_wentry *o)
{
	return feed_one(ctx, o) == -ENOMEM ? -ENOMEM : 0;
}

/*
 * No delay (rsp_timeline__set_unfold_delay()): a BPF record's carried
 * events, oldest first, then the record itself; nothing is held.
 */
static int unfold_now(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	uint64_t to = tl->unfold_to ? tl->unfold_to : UINT64_MAX;

	if (rsp_unfold__carried(e, tl->unfold_from, to, feed_carried, tl))
		return -ENOMEM;
	if (RSP_BREC_TYPE_KIND(e->rec->type) == RSP_BREC_CARRY || e->time > to)
		return 0;
	return feed_one(tl, e) == -ENOMEM ? -ENOMEM : 0;
}

int rsp_timeline__feed(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	if (tl->finished)
		return -EINVAL;
	if (!tl->started) {
		tl->start = e->time;
		tl->started = true;
	}
	if (!tl->unfold_delay && RSP_BREC_IS_TYPE(e->rec->type) &&
	    e->rec->size >= sizeof(struct rsp_brec_hdr))
		return unfold_now(tl, e);
	if (tl->unfold || RSP_BREC_IS_TYPE(e->rec->type))
		return unfold_in(tl, e);
	if (tl->unfold_to && e->time > tl->unfold_to)
		return 0; /* read ahead, and nothing folded in it */
	return feed_one(tl, e);
}

uint64_t rsp_timeline__advance(struct rsp_timeline *tl, uint64_t now)
{
	if (!tl->unfold)
		return now;
	rsp_unfold__advance(tl->unfold, now);
	unfold_out(tl, false);
	return now > tl->unfold_delay ? now - tl->unfold_delay : 0;
}

void rsp_timeline__set_unfold_delay(struct rsp_timeline *tl, uint64_t ns)
{
	tl->unfold_delay = ns;
}

void rsp_timeline__set_end(struct rsp_timeline *tl, uint64_t end)
{
	tl->unfold_to = end;
	if (tl->unfold)
		rsp_unfold__set_range(tl->unfold, tl->unfold_from, end ? end : UINT64_MAX);
}

void rsp_timeline__finish(struct rsp_timeline *tl, uint64_t end)
{
	if (tl->finished)
		return;
	unfold_out(tl, true);
	tl->finished = true;
	for (uint32_t i = 0; i < tl->nr_cpus; i++)
		if (tl->cpus[i].pend)
			commit_other(tl, &tl->cpus[i], i);
	for (uint32_t i = 0; i < tl->nr_slots; i++) {
		struct thr *t = tl->slots[i];
		uint32_t idx;

		if (rsp_u64map__get(&tl->tmap, t->tid, &idx) || idx != i)
			continue;
		if (t->state == T_NEW)
			continue;
		if (t->state == T_RUNNING)
			tl__end_run_unseen(tl, t, end < t->since ? t->since : end, RSP_SEGF_OPEN);
		else
			tl__close_open(tl, t, end < t->since ? t->since : end, RSP_SEGF_OPEN);
	}
	for (uint32_t i = 0; i < tl->nr_socks; i++)
		if (tl->socks[i].used)
			tl__emit_op(tl, &tl->socks[i], RSP_NETF_OPEN);
	tl__finish_reqs(tl);
}
