// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline builder: a per-thread state machine driven by sched_switch,
 * sched_waking, fork/exec/exit, block and irq records. See
 * lib/include/rsp/timeline.h for the contract; the comments here say how.
 *
 * Thread states:
 *   NEW       never seen in a way that tells its state; no segment open
 *   RUNNING   on cpu since `since`
 *   RUNNABLE  woken (or preempted) at `since`, waiting for a CPU
 *   SLEEPING  switched out asleep at `since`
 *   GAP       state unknown since `since` (lost records)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/net.h>
#include <rsp/record.h>
#include <rsp/socktab.h>
#include <rsp/timeline.h>
#include <rsp/tp.h>
#include "internal/schema.h"
#include "internal/u64map.h"

#define NEST_MAX	 8
#define STACK_WORDS	 256
#define JOIN_NS		 2000000ull	  /* a completion wakeup follows its completion by less */
#define LATE_WAKING_NS	 2000ull	  /* a waking delivered after the switch-in it caused */
#define STALE_HANDLER_NS 20000000ull	  /* a handler "open" this long lost its exit */
#define NET_JOIN_NS	 200000ull	  /* a waking in task context this soon after an arrival */
#define TASK_REPORT_DEAD 0x30		  /* X (0x10) or Z (0x20) in prev_state */
#define TIMEOUT_MAX_NS	 3600000000000ull /* an expiry further away is not a sleep's timeout */

enum tstate {
	T_NEW,
	T_RUNNING,
	T_RUNNABLE,
	T_SLEEPING,
	T_GAP,
};

struct thr {
	uint32_t tid, tgid;
	char comm[16];
	uint8_t state;
	uint8_t reason;
	uint16_t seg_flags; /* flags the open segment will carry */
	uint32_t cpu;
	uint64_t since;
	int64_t prev_state;
	const uint64_t *stack;
	uint32_t nr_stack;
	uint64_t *stack_buf;	/* copy mode: STACK_WORDS words */
	struct rsp_waker waker; /* RUNNABLE: who made it runnable */
	bool exiting;
	bool held; /* held_sleep waits for a late waking or the run's end */
	struct rsp_segment held_sleep;
	uint64_t run_start; /* start of its current or last run */
	uint32_t inflight;  /* block requests it issued, not seen completing */
	uint32_t last_dev;
	uint64_t last_issue;
	uint64_t last_complete; /* time of the last completion of its requests */
	uint32_t last_complete_dev;
	uint64_t last_complete_req;
	/* the last timeout it armed (hrtimer_start in its context), when, and
	 * the expiry of the one armed for the sleep it is in (0: none) */
	uint64_t timer_expires, timer_armed, sleep_timer;
	uint32_t next_free;
	/* libc uprobes: the last probe hit in this run (stitches the next sleep's stack) */
	const struct perf_event_header *probe_rec;
	uint64_t probe_time;
	const struct perf_event_header *urec; /* the open sleep's (rsp_segment.urec) */
	bool urec_probe;
	/* kprobe source: a send entered in this run (the send tracepoint fires at its end) */
	uint64_t kp_send_time;
	uint64_t kp_send_sk;
};

struct handler {
	uint8_t kind;
	uint32_t id;
	uint64_t start;
	uint64_t function;
	uint32_t wakeups;
	const char *name;
};

struct cpu_state {
	bool seen;     /* any record */
	bool switched; /* a sched_switch was seen: curr is known */
	uint32_t curr;
	uint64_t last_time;
	int depth;
	struct handler h[NEST_MAX];
	/* the last block completion seen on this CPU (joins wakeups in its handler) */
	uint64_t last_complete;
	uint32_t last_complete_dev;
	uint64_t last_complete_req;
	/* sampled:N policy: a stack copy that arrived before its switch */
	uint64_t copy_time;
	const uint64_t *copy_stack;
	uint32_t copy_nr;
	uint64_t *copy_buf; /* not RSP_TL_RECORDS_STABLE: the copy outlives its record */
	/* the last data arrival on this CPU: wakings after it in the same handler are its */
	uint64_t arr_sk, arr_time;
	uint32_t arr_tid; /* the task it ran in the context of (0: idle) */
	int arr_depth;	  /* handler depth at the arrival; -1: that handler ended */
};

/* A socket: the network operation being built on it (see struct rsp_net_op). */
struct sock_st {
	uint64_t sk;
	uint8_t proto;
	bool used;
	bool loopback; /* the last arrival was sent by peer_tid over loopback */
	uint16_t family;
	uint32_t next_free;
	uint32_t tid, tgid; /* the last sender */
	uint64_t send;	    /* its last send; 0: none since the last operation */
	uint64_t bytes_sent;
	uint64_t first, last; /* arrivals after the send */
	uint32_t arrivals, wakeups;
	uint32_t peer_tid, peer_tgid;
	uint64_t peer_sk;
	uint64_t seen; /* its latest event (rsp_timeline__expire()) */
};

struct req {
	struct rsp_block_req r;
	bool used;
	uint32_t next_free;
};

struct irq_name {
	int32_t irq;
	char *name;
};

struct rsp_timeline {
	const struct rsp_schema *schema;
	struct rsp_timeline_ops ops;
	void *ctx;
	unsigned flags;
	struct rsp_sleepclass *sc;
	const struct rsp_ksyms *ks;
	/* hrtimer callbacks seen: address -> is hrtimer_wakeup (a sleeper's timeout) */
	uint64_t fn_addr[4];
	bool fn_wakeup[4];
	unsigned fn_next;
	bool started, finished;
	uint64_t start;
	/* threads */
	struct rsp_u64map tmap; /* tid -> slot */
	struct thr **slots;
	uint32_t nr_slots, cap_slots,
		free_slot; /* free list through next_free, UINT32_MAX = none */
	/* cpus */
	struct cpu_state *cpus;
	uint32_t nr_cpus;
	/* block requests in flight */
	struct rsp_u64map rmap; /* key(dev, sector) -> pool index */
	struct req *reqs;
	uint32_t nr_reqs, cap_reqs, free_req;
	uint64_t next_req_id;
	uint64_t last_issue_any;
	uint32_t last_issue_any_dev;
	uint32_t last_issue_any_idx; /* its pool slot, to complete it by inference */
	uint64_t last_issue_any_id;
	uint64_t last_complete_any;
	uint32_t last_complete_any_dev;
	/* interned irq names */
	struct irq_name *irqs;
	uint32_t nr_irqs;
	/* sockets */
	struct rsp_u64map smap; /* sk -> pool index */
	struct sock_st *socks;
	uint32_t nr_socks, cap_socks, free_sock;
	uint64_t next_op_id;
	struct rsp_socktab *stab;	  /* what the stream's records said */
	const struct rsp_socktab *base; /* sockets older than the stream, or NULL */
	struct rsp_timeline_stats st;
	uint32_t live;	      /* threads tracked now */
	uint32_t max_threads; /* 0: no limit */
	bool refused;	      /* get_thr() refused a thread for max_threads */
	struct thr *last_thr; /* find_thr()'s one-entry cache */
	bool last_thr_live;
};

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
	tl->free_sock = UINT32_MAX;
	tl->next_req_id = 1;
	tl->next_op_id = 1;
	rsp_u64map__init(&tl->tmap);
	rsp_u64map__init(&tl->rmap);
	rsp_u64map__init(&tl->smap);
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
}

uint64_t rsp_timeline__start(const struct rsp_timeline *tl)
{
	return tl->start;
}

void rsp_timeline__stats(const struct rsp_timeline *tl, struct rsp_timeline_stats *st)
{
	*st = tl->st;
}

/* ---- threads ------------------------------------------------------------ */

static struct thr *find_thr(struct rsp_timeline *tl, uint32_t tid)
{
	uint32_t idx;
	struct thr *t;

	/* Consecutive records mostly name the same few threads. */
	if (tl->last_thr && tl->last_thr->tid == tid && tl->last_thr_live)
		return tl->last_thr;
	t = rsp_u64map__get(&tl->tmap, tid, &idx) ? NULL : tl->slots[idx];
	tl->last_thr = t;
	tl->last_thr_live = t != NULL;
	return t;
}

static int grow_slots(struct rsp_timeline *tl)
{
	uint32_t cap = tl->cap_slots ? tl->cap_slots * 2 : 256;
	struct thr **s = realloc(tl->slots, cap * sizeof(*s));

	if (!s)
		return -ENOMEM;
	tl->slots = s;
	tl->cap_slots = cap;
	return 0;
}

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
	if (tl->nr_slots == tl->cap_slots && grow_slots(tl))
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

static struct thr *get_thr(struct rsp_timeline *tl, uint32_t tid)
{
	struct thr *t = find_thr(tl, tid);
	uint64_t *buf;
	uint32_t idx;

	if (t)
		return t;
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
	return t;
}

static void free_thr(struct rsp_timeline *tl, struct thr *t)
{
	uint32_t idx;

	if (rsp_u64map__get(&tl->tmap, t->tid, &idx))
		return;
	rsp_u64map__del(&tl->tmap, t->tid);
	tl->live--;
	if (tl->last_thr == t)
		tl->last_thr_live = false;
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

/* First sight of a comm from a tracepoint field (later changes come as COMM records). */
static void learn_comm(struct rsp_timeline *tl, struct thr *t, struct rsp_str s, uint64_t time)
{
	if (t->comm[0] || !s.len)
		return;
	set_comm(t, s);
	notify_thread(tl, t, time);
}

static void learn_tgid(struct rsp_timeline *tl, struct thr *t, uint32_t tgid, uint64_t time)
{
	if (t->tgid == tgid || !tgid)
		return;
	t->tgid = tgid;
	notify_thread(tl, t, time);
}

/* ---- emission ----------------------------------------------------------- */

static void seg_init(struct rsp_segment *s, const struct thr *t, uint8_t kind, uint64_t start,
		     uint64_t end)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->tid = t->tid;
	s->tgid = t->tgid;
	s->start = start;
	s->end = end < start ? start : end;
	s->cpu = t->cpu;
	s->flags = t->seg_flags;
}

static void emit_seg(struct rsp_timeline *tl, struct thr *t, struct rsp_segment *s)
{
	s->tgid = t->tgid;
	tl->st.segments++;
	if (tl->ops.segment)
		tl->ops.segment(tl->ctx, s, t->comm);
}

static void emit_held(struct rsp_timeline *tl, struct thr *t)
{
	if (!t->held)
		return;
	t->held = false;
	emit_seg(tl, t, &t->held_sleep);
}

static void emit_link(struct rsp_timeline *tl, struct thr *t, uint8_t kind, uint64_t time,
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
static void sleep_seg(const struct thr *t, struct rsp_segment *s, uint64_t end,
		      const struct rsp_waker *waker)
{
	seg_init(s, t, RSP_SEG_SLEEP, t->since, end);
	s->reason = t->reason;
	s->prev_state = t->prev_state;
	s->stack = t->stack;
	s->nr_stack = t->nr_stack;
	s->urec = t->urec;
	if (t->urec_probe)
		s->flags |= RSP_SEGF_UREC_PROBE;
	if (waker)
		s->waker = *waker;
	/* A generic timeout primitive is a timeout only if a timer ended it. */
	if (s->reason == RSP_SR_TIMER && s->waker.kind != RSP_WAKER_TIMER)
		s->reason = RSP_SR_UNKNOWN;
	else if (s->reason == RSP_SR_UNKNOWN && s->waker.kind == RSP_WAKER_TIMER)
		s->reason = RSP_SR_TIMER;
}

/* Close whatever segment @t has open at @end, as it is (no waker). */
static void close_open(struct rsp_timeline *tl, struct thr *t, uint64_t end, uint16_t flags)
{
	struct rsp_segment s;

	emit_held(tl, t);
	switch (t->state) {
	case T_RUNNING:
		seg_init(&s, t, RSP_SEG_RUN, t->since, end);
		break;
	case T_RUNNABLE:
		seg_init(&s, t, RSP_SEG_RUNNABLE, t->since, end);
		s.reason = t->reason;
		s.waker = t->waker;
		break;
	case T_SLEEPING:
		sleep_seg(t, &s, end, NULL);
		break;
	case T_GAP:
		seg_init(&s, t, RSP_SEG_UNKNOWN, t->since, end);
		break;
	default:
		return;
	}
	s.flags |= flags;
	emit_seg(tl, t, &s);
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

static uint64_t clamp(struct rsp_timeline *tl, const struct thr *t, uint64_t time)
{
	if (t->state != T_NEW && time < t->since) {
		tl->st.inversions++;
		return t->since;
	}
	return time;
}

/* ---- block requests ----------------------------------------------------- */

static uint64_t req_key(uint64_t dev, uint64_t sector)
{
	uint64_t k = sector * 0x9E3779B97F4A7C15ull ^ (dev << 1 | 1);

	return k == UINT64_MAX ? 0 : k;
}

static struct req *find_req(struct rsp_timeline *tl, uint32_t dev, uint64_t sector)
{
	uint32_t idx;
	struct req *r;

	if (rsp_u64map__get(&tl->rmap, req_key(dev, sector), &idx))
		return NULL;
	r = &tl->reqs[idx];
	return r->used && r->r.dev == dev && r->r.sector == sector ? r : NULL;
}

static struct req *alloc_req(struct rsp_timeline *tl, uint32_t dev, uint64_t sector)
{
	uint32_t idx;
	struct req *r;

	if (tl->free_req != UINT32_MAX) {
		idx = tl->free_req;
		tl->free_req = tl->reqs[idx].next_free;
	} else {
		if (tl->nr_reqs == tl->cap_reqs) {
			uint32_t cap = tl->cap_reqs ? tl->cap_reqs * 2 : 64;
			struct req *n = realloc(tl->reqs, cap * sizeof(*n));

			if (!n)
				return NULL;
			tl->reqs = n;
			tl->cap_reqs = cap;
		}
		idx = tl->nr_reqs++;
	}
	if (rsp_u64map__put(&tl->rmap, req_key(dev, sector), idx)) {
		tl->reqs[idx].used = false;
		tl->reqs[idx].next_free = tl->free_req;
		tl->free_req = idx;
		return NULL;
	}
	r = &tl->reqs[idx];
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->r.id = tl->next_req_id++;
	r->r.dev = dev;
	r->r.sector = sector;
	return r;
}

static void release_req(struct rsp_timeline *tl, struct req *r)
{
	uint32_t idx = (uint32_t)(r - tl->reqs);
	uint32_t cur;

	if (!rsp_u64map__get(&tl->rmap, req_key(r->r.dev, r->r.sector), &cur) && cur == idx)
		rsp_u64map__del(&tl->rmap, req_key(r->r.dev, r->r.sector));
	r->used = false;
	r->next_free = tl->free_req;
	tl->free_req = idx;
}

static void emit_req(struct rsp_timeline *tl, struct req *r)
{
	struct thr *t = r->r.tid ? find_thr(tl, r->r.tid) : NULL;

	if (t && t->inflight)
		t->inflight--;
	if (t && r->r.complete) {
		t->last_complete = r->r.complete;
		t->last_complete_dev = r->r.dev;
		t->last_complete_req = r->r.id;
	}
	tl->st.block_reqs++;
	if (tl->ops.block)
		tl->ops.block(tl->ctx, &r->r);
	release_req(tl, r);
}

static uint32_t rwbs_flags(struct rsp_str s)
{
	uint32_t f = 0;

	for (uint32_t i = 0; i < s.len; i++) {
		f |= s.ptr[i] == 'W' ? RSP_BLKF_WRITE : 0;
		f |= s.ptr[i] == 'F' ? RSP_BLKF_FLUSH : 0;
		f |= s.ptr[i] == 'S' ? RSP_BLKF_SYNC : 0;
	}
	return f;
}

/* A request seen for the first time (at insert, or at issue without insert). */
static int new_req(struct rsp_timeline *tl, const struct rsp_sample *smp, uint32_t dev,
		   uint64_t sector, uint32_t nr_sector, uint32_t bytes, struct rsp_str rwbs)
{
	struct req *r = find_req(tl, dev, sector);
	struct thr *t;

	/* The same sector again while the old one is open: its end was not seen. */
	if (r) {
		r->r.flags |= RSP_BLKF_COMPLETE_NOT_SEEN;
		emit_req(tl, r);
	}
	r = alloc_req(tl, dev, sector);
	if (!r)
		return -ENOMEM;
	r->r.nr_sector = nr_sector;
	r->r.bytes = bytes ? bytes : nr_sector * 512;
	r->r.flags = rwbs_flags(rwbs);
	r->r.insert = smp->time;
	r->r.tid = smp->tid;
	r->r.tgid = smp->pid;
	t = smp->tid ? get_thr(tl, smp->tid) : NULL;
	if (t) {
		learn_tgid(tl, t, smp->pid, smp->time);
		t->inflight++;
		t->last_dev = dev;
		t->last_issue = smp->time;
	}
	tl->last_issue_any = smp->time;
	tl->last_issue_any_dev = dev;
	return 0;
}

static int on_insert(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_insert b;

	if (rsp_tp__block_rq_insert(tl->schema, smp, &b))
		return -EINVAL;
	return new_req(tl, smp, (uint32_t)b.dev, b.sector, (uint32_t)b.nr_sector, (uint32_t)b.bytes,
		       b.rwbs);
}

/*
 * A request issued with no insert (a flush, a request that bypassed the
 * scheduler) by a thread that another thread woke just before: issued on
 * that thread's behalf. kblockd issues the flushes of fdatasync() so; the
 * device then waits for the thread that asked, not for kblockd.
 */
static void on_behalf(struct rsp_timeline *tl, struct req *r, const struct rsp_sample *smp)
{
	struct thr *k = smp->tid ? find_thr(tl, smp->tid) : NULL, *t;

	if (!k || k->waker.kind != RSP_WAKER_THREAD || !k->waker.id || k->waker.id == smp->tid ||
	    smp->time < k->waker.time || smp->time - k->waker.time > JOIN_NS)
		return;
	t = find_thr(tl, k->waker.id);
	if (!t)
		return;
	if (k->inflight)
		k->inflight--;
	r->r.tid = t->tid;
	r->r.tgid = t->tgid;
	r->r.flags |= RSP_BLKF_ON_BEHALF;
	t->inflight++;
	t->last_dev = r->r.dev;
	t->last_issue = smp->time;
}

static int on_issue(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_issue b;
	struct req *r;
	int ret;

	if (rsp_tp__block_rq_issue(tl->schema, smp, &b))
		return -EINVAL;
	r = find_req(tl, (uint32_t)b.dev, b.sector);
	if (r && r->r.issue) {
		/* Issued again: the first one's completion was not seen (flushes all
		 * have sector 0), or a requeue; either way a new request starts. */
		r->r.flags |= RSP_BLKF_COMPLETE_NOT_SEEN;
		emit_req(tl, r);
		r = NULL;
	}
	if (!r) {
		ret = new_req(tl, smp, (uint32_t)b.dev, b.sector, (uint32_t)b.nr_sector,
			      (uint32_t)b.bytes, b.rwbs);
		if (ret)
			return ret;
		r = find_req(tl, (uint32_t)b.dev, b.sector);
		r->r.flags |= RSP_BLKF_NO_INSERT;
		on_behalf(tl, r, smp);
	}
	r->r.issue = smp->time < r->r.insert ? r->r.insert : smp->time;
	r->r.issue_cpu = smp->cpu;
	tl->last_issue_any = smp->time;
	tl->last_issue_any_dev = r->r.dev;
	tl->last_issue_any_idx = (uint32_t)(r - tl->reqs);
	tl->last_issue_any_id = r->r.id;
	return 0;
}

static int on_complete(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_complete b;
	struct req *r;

	if (rsp_tp__block_rq_complete(tl->schema, smp, &b))
		return -EINVAL;
	r = find_req(tl, (uint32_t)b.dev, b.sector);
	if (!r)
		return 0;
	if (!r->r.issue) {
		r->r.issue = r->r.insert;
		r->r.flags |= RSP_BLKF_ISSUE_ASSUMED;
	}
	r->r.complete = smp->time < r->r.issue ? r->r.issue : smp->time;
	r->r.complete_cpu = smp->cpu;
	if (c) {
		c->last_complete = r->r.complete;
		c->last_complete_dev = r->r.dev;
		c->last_complete_req = r->r.id;
	}
	tl->last_complete_any = r->r.complete;
	tl->last_complete_any_dev = r->r.dev;
	emit_req(tl, r);
	return 0;
}

/* The issuer woke from its I/O sleep without a completion seen: its requests are done. */
static uint64_t infer_completions(struct rsp_timeline *tl, struct thr *t, uint64_t slept,
				  uint64_t now)
{
	uint64_t req = 0;

	for (uint32_t i = 0; i < tl->nr_reqs; i++) {
		struct req *r = &tl->reqs[i];

		if (!r->used || r->r.tid != t->tid || r->r.insert > slept)
			continue;
		if (!r->r.issue) {
			r->r.issue = r->r.insert;
			r->r.flags |= RSP_BLKF_ISSUE_ASSUMED;
		}
		r->r.complete = now < r->r.issue ? r->r.issue : now;
		r->r.flags |= RSP_BLKF_COMPLETE_INFERRED;
		if (r->r.id > req)
			req = r->r.id;
		emit_req(tl, r);
	}
	return req;
}

/*
 * A request issued by another context while @t slept (a flush that kblockd
 * issued for it), still open: it completed before @t woke. Returns its id.
 */
static uint64_t infer_on_behalf(struct rsp_timeline *tl, const struct thr *t, uint64_t now)
{
	struct req *r;

	if (tl->last_issue_any < t->since || tl->last_issue_any_idx >= tl->nr_reqs)
		return 0;
	r = &tl->reqs[tl->last_issue_any_idx];
	if (!r->used || r->r.id != tl->last_issue_any_id)
		return 0;
	r->r.complete = now < r->r.issue ? r->r.issue : now;
	r->r.flags |= RSP_BLKF_COMPLETE_INFERRED;
	emit_req(tl, r);
	return tl->last_issue_any_id;
}

/* ---- sockets and network operations ------------------------------------ */

static struct sock_st *find_sock(struct rsp_timeline *tl, uint64_t sk)
{
	uint32_t idx;

	if (!sk || rsp_u64map__get(&tl->smap, sk, &idx))
		return NULL;
	return &tl->socks[idx];
}

static struct sock_st *get_sock(struct rsp_timeline *tl, uint64_t sk)
{
	struct sock_st *so = find_sock(tl, sk);
	uint32_t idx;

	if (so || !sk)
		return so;
	if (tl->free_sock != UINT32_MAX) {
		idx = tl->free_sock;
		tl->free_sock = tl->socks[idx].next_free;
	} else {
		if (tl->nr_socks == tl->cap_socks) {
			uint32_t cap = tl->cap_socks ? tl->cap_socks * 2 : 64;
			struct sock_st *n = realloc(tl->socks, cap * sizeof(*n));

			if (!n)
				return NULL;
			tl->socks = n;
			tl->cap_socks = cap;
		}
		idx = tl->nr_socks++;
	}
	if (rsp_u64map__put(&tl->smap, sk, idx)) {
		tl->socks[idx].used = false;
		tl->socks[idx].next_free = tl->free_sock;
		tl->free_sock = idx;
		return NULL;
	}
	so = &tl->socks[idx];
	memset(so, 0, sizeof(*so));
	so->sk = sk;
	so->used = true;
	tl->st.sockets++;
	return so;
}

static void free_sock(struct rsp_timeline *tl, struct sock_st *so)
{
	uint32_t idx = (uint32_t)(so - tl->socks);

	rsp_u64map__del(&tl->smap, so->sk);
	so->used = false;
	so->next_free = tl->free_sock;
	tl->free_sock = idx;
}

/* What the stream (or, failing that, the base table) says @sk was at @time. */
static int sock_info(const struct rsp_timeline *tl, uint64_t sk, uint64_t time,
		     struct rsp_sock_info *si)
{
	if (!rsp_socktab__find(tl->stab, sk, time, si))
		return 0;
	return rsp_socktab__find(tl->base, sk, time, si);
}

/* Its addresses say the traffic stays on this machine. */
static bool sock_is_local(const struct rsp_timeline *tl, uint64_t sk, uint64_t time)
{
	struct rsp_sock_info si;

	if (sock_info(tl, sk, time, &si) || !si.remote.family)
		return false;
	return rsp_sockaddr__is_loopback(&si.remote) ||
	       (si.remote.family == si.local.family &&
		!memcmp(si.remote.addr, si.local.addr, sizeof(si.local.addr)));
}

static void emit_op(struct rsp_timeline *tl, struct sock_st *so, uint32_t flags)
{
	struct rsp_net_op op;
	struct rsp_sock_info si, peer;

	if (so->send && so->arrivals) {
		memset(&op, 0, sizeof(op));
		op.id = tl->next_op_id++;
		op.sk = so->sk;
		op.tid = so->tid;
		op.tgid = so->tgid;
		op.proto = so->proto;
		op.family = so->family;
		op.flags = flags | (so->loopback ? RSP_NETF_LOOPBACK : 0) |
			   (sock_is_local(tl, so->sk, so->send) ? RSP_NETF_LOCAL : 0);
		op.start = so->send;
		op.first = so->first;
		op.end = so->last;
		op.arrivals = so->arrivals;
		op.wakeups = so->wakeups;
		op.peer_tid = so->loopback ? so->peer_tid : 0;
		op.peer_tgid = so->loopback ? so->peer_tgid : 0;
		op.peer_sk = so->loopback ? so->peer_sk : 0;
		op.bytes_sent = so->bytes_sent;
		if (!sock_info(tl, so->sk, so->send, &si) && si.local.family) {
			op.local = si.local;
			op.remote = si.remote;
			op.flags |= RSP_NETF_TUPLE;
			if (!op.proto)
				op.proto = si.proto;
		} else if (op.peer_sk && !sock_info(tl, op.peer_sk, so->last, &peer) &&
			   peer.local.family) {
			/* An unconnected socket: it talked to the peer socket's address. */
			op.remote = peer.local;
			op.flags |= RSP_NETF_REMOTE_PEER;
		}
		tl->st.net_ops++;
		if (tl->ops.net)
			tl->ops.net(tl->ctx, &op);
	}
	so->send = 0;
	so->bytes_sent = 0;
	so->first = so->last = 0;
	so->arrivals = so->wakeups = 0;
	so->loopback = false;
	so->peer_tid = so->peer_tgid = 0;
	so->peer_sk = 0;
}

static bool is_ksoftirqd(const struct thr *t)
{
	return !strncmp(t->comm, "ksoftirqd/", 10);
}

/* The arrival @c holds was delivered by @peer's send on @peer_sk (loopback). */
static void loopback_peer(struct rsp_timeline *tl, struct cpu_state *c, uint32_t tid,
			  uint32_t tgid, uint64_t peer_sk)
{
	struct sock_st *so = find_sock(tl, c->arr_sk);

	if (!so || so->sk == peer_sk)
		return;
	so->loopback = true;
	so->peer_tid = tid;
	so->peer_tgid = tgid;
	if (peer_sk)
		so->peer_sk = peer_sk;
}

static void on_send(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		    const struct rsp_net_event *ev, struct sock_st *so)
{
	struct thr *t = smp->tid ? find_thr(tl, smp->tid) : NULL;
	bool kprobe = rsp_catalogue__event(smp->event)->kind == RSP_EVK_KPROBE;

	/*
	 * The send tracepoint fires when the send returns: an arrival on this
	 * CPU earlier in the same run, in this task's context, came from this
	 * send (loopback delivers in the sender's softirq).
	 */
	if (c->arr_sk && smp->tid && c->arr_tid == smp->tid && t && c->arr_time >= t->run_start) {
		loopback_peer(tl, c, smp->tid, smp->pid, ev->sk);
		c->arr_sk = 0;
	}
	if (kprobe && t) {
		/* The kprobe fires when the send starts: arrivals until the run ends are its. */
		t->kp_send_time = smp->time;
		t->kp_send_sk = ev->sk;
	}
	if (so->arrivals)
		emit_op(tl, so, 0);
	so->tid = smp->tid;
	so->tgid = smp->pid;
	so->send = smp->time;
	if (ev->bytes > 0)
		so->bytes_sent += (uint64_t)ev->bytes;
}

static void on_arrival(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		       const struct rsp_net_event *ev, struct sock_st *so)
{
	struct thr *t = smp->tid ? find_thr(tl, smp->tid) : NULL;

	if (so->send) {
		if (!so->arrivals)
			so->first = smp->time;
		so->arrivals++;
		so->last = smp->time;
	}
	so->loopback = false;
	so->peer_tid = so->peer_tgid = 0;
	so->peer_sk = 0;
	c->arr_sk = ev->sk;
	c->arr_time = smp->time;
	c->arr_tid = smp->tid;
	c->arr_depth = c->depth;
	/* A kprobe send entered in this run delivered it. */
	if (t && t->kp_send_time && t->kp_send_time >= t->run_start)
		loopback_peer(tl, c, smp->tid, smp->pid, t->kp_send_sk);
}

static void on_state(struct rsp_timeline *tl, const struct rsp_sample *smp,
		     const struct rsp_net_event *ev)
{
	struct rsp_sock_info si = {.sk = ev->sk,
				   .proto = ev->proto,
				   .state = (uint8_t)ev->newstate,
				   .source = RSP_SOCK_FROM_RECORD,
				   .local = ev->local,
				   .remote = ev->remote};
	struct sock_st *so = find_sock(tl, ev->sk);
	uint64_t from = smp->time;

	if (ev->kind == RSP_NET_TUPLE) {
		struct rsp_sock_info cur;
		int known = rsp_socktab__find(tl->stab, ev->sk, smp->time, &cur);

		/* A receive repeats what is known: add only what is new. */
		if (!known && !memcmp(&cur.local, &ev->local, sizeof(cur.local)) &&
		    !memcmp(&cur.remote, &ev->remote, sizeof(cur.remote)))
			return;
		si.state = RSP_TCP_ESTABLISHED;
		/*
		 * A TCP receive on a socket the stream saw no state change of:
		 * the connection was established before the stream began, so
		 * its 4-tuple holds from the start (its first operations too).
		 */
		if (known)
			from = 0;
	}
	rsp_socktab__add(tl->stab, &si, from); /* ENOMEM only loses an address */
	if (!so || ev->kind != RSP_NET_STATE)
		return;
	if (ev->newstate == RSP_TCP_CLOSE) {
		emit_op(tl, so, RSP_NETF_CLOSED);
		free_sock(tl, so);
	} else if (ev->oldstate == RSP_TCP_CLOSE) {
		/* A new socket at the address of a freed one. */
		emit_op(tl, so, RSP_NETF_CLOSED);
		free_sock(tl, so);
	}
}

static int on_net(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_net_event ev;
	struct sock_st *so;

	if (rsp_net__decode(tl->schema, smp, &ev))
		return -EINVAL;
	if (ev.kind == RSP_NET_STATE || ev.kind == RSP_NET_TUPLE) {
		on_state(tl, smp, &ev);
		return 0;
	}
	if (ev.kind == RSP_NET_RECV)
		return 0;
	so = get_sock(tl, ev.sk);
	if (!so)
		return -ENOMEM;
	so->seen = smp->time;
	if (ev.proto)
		so->proto = ev.proto;
	if (ev.family)
		so->family = ev.family;
	if (ev.kind == RSP_NET_SEND)
		on_send(tl, c, smp, &ev, so);
	else
		on_arrival(tl, c, smp, &ev, so);
	return 0;
}

/*
 * Whether the task interrupted by the softirq that is waking someone after
 * a data arrival is the sender of that data: loopback packets are delivered
 * in their sender's context. Evidence, strongest first: the waking's kernel
 * stack (the send under the softirq, or an interrupt's exit instead); a
 * kprobe send entered in this run; the socket's addresses are local.
 */
static bool is_sender(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct thr *t = find_thr(tl, smp->tid);
	enum rsp_wake_context ctx =
		rsp_sleepclass__wake_context(tl->sc, smp->callchain, smp->nr_callchain);

	if (ctx == RSP_WCTX_SEND)
		return true;
	if (ctx == RSP_WCTX_INTERRUPT || !t || is_ksoftirqd(t))
		return false;
	if (t->kp_send_time && t->kp_send_time >= t->run_start)
		return true;
	return sock_is_local(tl, c->arr_sk, smp->time);
}

/*
 * A waking right after a data arrival in the same handler is the arrival's
 * receive wakeup. Returns true when the waker is the local sender (@w is
 * then complete); otherwise @w only gains the socket and the handler
 * decides the kind (the NIC for NET_RX).
 */
static bool net_waker(struct rsp_timeline *tl, struct cpu_state *c, const struct handler *h,
		      const struct rsp_sample *smp, struct rsp_waker *w)
{
	struct sock_st *so;

	if (!c->arr_sk || c->arr_depth != c->depth || (h && c->arr_time < h->start))
		return false;
	w->sk = c->arr_sk;
	w->flags |= RSP_WAKERF_NET;
	tl->st.net_wakings++;
	so = find_sock(tl, c->arr_sk);
	if (so && so->arrivals)
		so->wakeups++;
	if (!smp->tid || !h || !is_sender(tl, c, smp)) {
		/* Local traffic whose sender this context is not: not the NIC either. */
		if (h && sock_is_local(tl, c->arr_sk, smp->time)) {
			w->kind = RSP_WAKER_NONE;
			return true;
		}
		return false;
	}
	loopback_peer(tl, c, smp->tid, smp->pid, 0);
	w->kind = RSP_WAKER_THREAD;
	w->id = smp->tid;
	w->tgid = smp->pid;
	w->flags |= RSP_WAKERF_LOOPBACK;
	w->stack = smp->callchain;
	w->nr_stack = (uint32_t)smp->nr_callchain;
	tl->st.net_loopback++;
	return true;
}

/* ---- wakers ------------------------------------------------------------- */

static const char *irq_name(struct rsp_timeline *tl, int32_t irq, struct rsp_str s)
{
	struct irq_name *n;

	for (uint32_t i = 0; i < tl->nr_irqs; i++)
		if (tl->irqs[i].irq == irq)
			return tl->irqs[i].name;
	n = realloc(tl->irqs, (tl->nr_irqs + 1) * sizeof(*n));
	if (!n)
		return "?";
	tl->irqs = n;
	n = &tl->irqs[tl->nr_irqs];
	n->irq = irq;
	n->name = strndup(s.ptr ? s.ptr : "?", s.ptr ? s.len : 1);
	if (!n->name)
		return "?";
	tl->nr_irqs++;
	return n->name;
}

/* A completion of @t's request just before @time: the wakeup it caused. */
static bool join_device(const struct thr *t, uint64_t time, struct rsp_waker *w)
{
	if (!t->last_complete || time < t->last_complete || time - t->last_complete > JOIN_NS)
		return false;
	w->kind = RSP_WAKER_DEVICE;
	w->id = t->last_complete_dev;
	w->req = t->last_complete_req;
	return true;
}

/* Who is waking @target on @c: the innermost open handler, or the task. */
static void waker_of(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		     const struct thr *target, struct rsp_waker *w)
{
	memset(w, 0, sizeof(*w));
	w->time = smp->time;
	w->cpu = smp->cpu;
	if (c->depth > 0) {
		struct handler *h = &c->h[c->depth - 1];

		h->wakeups++;
		if (join_device(target, smp->time, w))
			return;
		/* A completion of a request issued on its behalf (a flush by kblockd). */
		if (c->last_complete && smp->time >= c->last_complete &&
		    smp->time - c->last_complete <= JOIN_NS && c->last_complete >= h->start) {
			w->kind = RSP_WAKER_DEVICE;
			w->id = c->last_complete_dev;
			w->req = c->last_complete_req;
			return;
		}
		if (net_waker(tl, c, h, smp, w))
			return;
		if (h->kind == RSP_HANDLER_HRTIMER ||
		    (h->kind == RSP_HANDLER_SOFTIRQ &&
		     (h->id == RSP_SOFTIRQ_TIMER || h->id == RSP_SOFTIRQ_HRTIMER))) {
			w->kind = RSP_WAKER_TIMER;
		} else if (h->kind == RSP_HANDLER_SOFTIRQ) {
			w->kind = RSP_WAKER_SOFTIRQ;
			w->id = h->id;
		} else {
			w->kind = RSP_WAKER_IRQ;
			w->id = h->id;
			w->name = h->name;
		}
		return;
	}
	if (!smp->tid) {
		/* The idle task outside any handler we saw: an interrupt whose entry was lost. */
		if (!join_device(target, smp->time, w))
			w->kind = RSP_WAKER_NONE;
		return;
	}
	/* Data that arrived in task context (a socket backlog its owner processed). */
	if (c->arr_tid == smp->tid && smp->time - c->arr_time <= NET_JOIN_NS)
		net_waker(tl, c, NULL, smp, w);
	w->kind = RSP_WAKER_THREAD;
	w->id = smp->tid;
	w->tgid = smp->pid;
	w->stack = smp->callchain;
	w->nr_stack = (uint32_t)smp->nr_callchain;
}

/* No waking seen for a sleep that ended at @now: infer only what the evidence supports. */
static void infer_waker(struct rsp_timeline *tl, struct thr *t, uint64_t now, struct rsp_waker *w)
{
	bool io = (t->prev_state & RSP_TASK_UNINTERRUPTIBLE) || t->reason == RSP_SR_BLOCK_IO ||
		  t->reason == RSP_SR_PAGE_FAULT;

	memset(w, 0, sizeof(w[0]));
	if (io && (t->inflight || t->last_issue >= t->run_start)) {
		/* It issued requests before it slept: they completed, it woke. */
		w->kind = RSP_WAKER_DEVICE;
		w->id = t->last_dev;
		w->req = infer_completions(tl, t, now, now);
		if (!w->req && t->last_complete >= t->since) {
			w->id = t->last_complete_dev;
			w->req = t->last_complete_req;
		}
	} else if (io && t->last_complete >= t->since) {
		/* One of its requests was seen completing while it slept. */
		w->kind = RSP_WAKER_DEVICE;
		w->id = t->last_complete_dev;
		w->req = t->last_complete_req;
	} else if (io && t->reason == RSP_SR_BLOCK_IO &&
		   (tl->last_issue_any >= t->since || tl->last_complete_any >= t->since)) {
		/* Issued on its behalf by another context (a flush by kblockd). */
		w->kind = RSP_WAKER_DEVICE;
		w->id = tl->last_complete_any >= t->since ? tl->last_complete_any_dev
							  : tl->last_issue_any_dev;
		w->req = infer_on_behalf(tl, t, now);
	} else if (t->reason == RSP_SR_SLEEP || (t->sleep_timer && now >= t->sleep_timer)) {
		/* A deliberate sleep, or its own timeout had expired and nothing else was seen. */
		w->kind = RSP_WAKER_TIMER;
	} else if (t->reason == RSP_SR_NETWORK) {
		w->kind = RSP_WAKER_SOFTIRQ;
		w->id = RSP_SOFTIRQ_NET_RX;
	} else {
		return;
	}
	tl->st.wakers_inferred++;
}

/* ---- scheduler events --------------------------------------------------- */

/*
 * The hottest records (sched_switch, sched_waking) are read field by field
 * at their resolved offsets: the comms, the only strings, are read only the
 * first time a thread is seen.
 */
static bool read_int(const struct rsp_timeline *tl, enum rsp_field f, const struct rsp_sample *smp,
		     int64_t *out)
{
	const struct rsp_field_loc *l = &tl->schema->fields[f];
	const uint8_t *raw = smp->raw;
	int32_t i32;

	if (!(l->flags & RSP_FLOC_PRESENT) || !raw || (uint32_t)l->offset + l->size > smp->raw_size)
		return false;
	if (l->size == 4) {
		memcpy(&i32, raw + l->offset, 4);
		*out = (l->flags & RSP_FLOC_SIGNED) ? i32 : (int64_t)(uint32_t)i32;
	} else if (l->size == 8) {
		memcpy(out, raw + l->offset, 8);
	} else {
		*out = (int64_t)rsp_field__u64(tl->schema, f, raw, smp->raw_size);
	}
	return true;
}

static void learn_comm_field(struct rsp_timeline *tl, struct thr *t, enum rsp_field f,
			     const struct rsp_sample *smp)
{
	if (!t->comm[0])
		learn_comm(tl, t, rsp_field__str(tl->schema, f, smp->raw, smp->raw_size),
			   smp->time);
}

static void keep_stack(struct rsp_timeline *tl, struct thr *t, const uint64_t *chain, uint64_t nr)
{
	if (!chain || !nr || (tl->flags & RSP_TL_NO_STACKS)) {
		t->stack = NULL;
		t->nr_stack = 0;
		return;
	}
	if (tl->flags & RSP_TL_RECORDS_STABLE) {
		t->stack = chain;
		t->nr_stack = (uint32_t)nr;
		return;
	}
	if (nr > STACK_WORDS)
		nr = STACK_WORDS;
	memcpy(t->stack_buf, chain, nr * sizeof(*chain));
	t->stack = t->stack_buf;
	t->nr_stack = (uint32_t)nr;
}

/*
 * A stack copy that came before its switch: kept until the switch. A
 * caller that feeds records it may release at once (a live stream read in
 * passes) gets a copy, as the switch may be in the next pass.
 */
static void keep_copy(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	uint64_t nr = smp->nr_callchain < STACK_WORDS ? smp->nr_callchain : STACK_WORDS;

	c->copy_time = smp->time;
	c->copy_stack = smp->callchain;
	c->copy_nr = (uint32_t)nr;
	if ((tl->flags & RSP_TL_RECORDS_STABLE) || !smp->callchain)
		return;
	if (!c->copy_buf)
		c->copy_buf = malloc(STACK_WORDS * sizeof(uint64_t));
	if (!c->copy_buf) {
		c->copy_stack = NULL; /* no memory: the switch goes without this stack */
		return;
	}
	memcpy(c->copy_buf, smp->callchain, nr * sizeof(uint64_t));
	c->copy_stack = c->copy_buf;
}

/* @t leaves cpu @c at @time. */
/*
 * The record that can repair @t's next sleep stack: the switch-out itself
 * when it captured the user stack (DWARF), else the libc uprobe hit in this
 * run (stitching). Only when records outlive the timeline's users.
 */
static void keep_urec(struct rsp_timeline *tl, struct thr *t, const struct rsp_sample *smp,
		      const struct perf_event_header *rec)
{
	t->urec = NULL;
	t->urec_probe = false;
	if (!(tl->flags & RSP_TL_RECORDS_STABLE))
		return;
	if (smp->user_stack_size && rec) {
		t->urec = rec;
	} else if (t->probe_rec && t->probe_time >= t->run_start) {
		t->urec = t->probe_rec;
		t->urec_probe = true;
		tl->st.probed_sleeps++;
	}
}

static void switch_out(struct rsp_timeline *tl, struct cpu_state *c, struct thr *t,
		       const struct rsp_sample *smp, int64_t prev_state, uint64_t time,
		       const struct perf_event_header *rec)
{
	const uint64_t *chain = smp->callchain;
	uint64_t nr = smp->nr_callchain;
	struct rsp_segment s;

	if (t->state == T_NEW && !c->switched) {
		/* Running here since before the stream began. */
		t->state = T_RUNNING;
		t->since = tl->start;
		t->seg_flags = RSP_SEGF_TRUNCATED;
	}
	time = clamp(tl, t, time);
	if (t->state == T_RUNNING) {
		emit_held(tl, t);
		seg_init(&s, t, RSP_SEG_RUN, t->since, time);
		s.cpu = smp->cpu;
		if ((prev_state & RSP_TASK_STATE_MASK) & TASK_REPORT_DEAD)
			s.flags |= RSP_SEGF_EXITED;
		emit_seg(tl, t, &s);
	} else if (t->state != T_NEW) {
		tl->st.inversions += t->state != T_GAP;
		close_open(tl, t, time, 0);
	}
	t->seg_flags = 0;
	t->cpu = smp->cpu;
	t->since = time;
	t->prev_state = prev_state;
	if ((prev_state & RSP_TASK_STATE_MASK) & TASK_REPORT_DEAD) {
		emit_held(tl, t);
		free_thr(tl, t);
		return;
	}
	if (!chain && c->copy_stack && c->copy_time == smp->time) {
		chain = c->copy_stack;
		nr = c->copy_nr;
	}
	c->copy_stack = NULL;
	t->reason = (uint8_t)rsp_sleepclass__classify(tl->sc, prev_state, chain, nr);
	memset(&t->waker, 0, sizeof(t->waker));
	if (t->reason == RSP_SR_PREEMPT) {
		t->state = T_RUNNABLE;
		t->stack = NULL;
		t->nr_stack = 0;
		t->urec = NULL;
		t->urec_probe = false;
		return;
	}
	t->state = T_SLEEPING;
	keep_stack(tl, t, chain, nr);
	/* A timeout armed in this run, for later than now: the sleep's own. */
	t->sleep_timer = t->timer_armed && t->timer_armed >= t->run_start &&
					 t->timer_expires >= time &&
					 t->timer_expires - time <= TIMEOUT_MAX_NS
				 ? t->timer_expires
				 : 0;
	t->timer_armed = 0;
	keep_urec(tl, t, smp, rec);
	t->probe_rec = NULL;
}

/* @t gets cpu @cpu at @time; @flags mark the segment this closes. */
static void switch_in(struct rsp_timeline *tl, struct thr *t, uint32_t cpu, uint64_t time,
		      uint16_t flags)
{
	struct rsp_segment s;
	struct rsp_waker w;

	time = clamp(tl, t, time);
	switch (t->state) {
	case T_RUNNABLE:
		seg_init(&s, t, RSP_SEG_RUNNABLE, t->since, time);
		s.cpu = cpu;
		s.reason = t->reason;
		s.waker = t->waker;
		s.flags |= flags;
		if (!(tl->flags & RSP_TL_RECORDS_STABLE))
			s.waker.stack = NULL, s.waker.nr_stack = 0;
		emit_seg(tl, t, &s);
		break;
	case T_SLEEPING:
		/* No waking seen: hold the sleep until the run ends. */
		emit_held(tl, t);
		infer_waker(tl, t, time, &w);
		sleep_seg(t, &t->held_sleep, time, &w);
		t->held_sleep.flags |= RSP_SEGF_WAKING_NOT_SEEN | flags;
		if (w.kind != RSP_WAKER_NONE)
			t->held_sleep.flags |= RSP_SEGF_WAKER_INFERRED;
		t->held = true;
		tl->st.wakings_not_seen++;
		break;
	case T_GAP:
		close_open(tl, t, time, flags);
		break;
	case T_RUNNING:
		tl->st.inversions++;
		close_open(tl, t, time, 0);
		break;
	default:
		break;
	}
	t->state = T_RUNNING;
	t->since = time;
	t->run_start = time;
	t->cpu = cpu;
	t->seg_flags = 0;
}

static int on_switch(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		     const struct perf_event_header *rec)
{
	struct thr *prev = NULL, *next = NULL;
	int64_t prev_pid, next_pid, prev_state;

	if (smp->event != RSP_EV_sched_switch || !tl->schema->ev_ok[RSP_EV_sched_switch] ||
	    !read_int(tl, RSP_F_sched_switch__prev_pid, smp, &prev_pid) ||
	    !read_int(tl, RSP_F_sched_switch__next_pid, smp, &next_pid) ||
	    !read_int(tl, RSP_F_sched_switch__prev_state, smp, &prev_state))
		return -EINVAL;
	if (smp->role == RSP_ROLE_STACK_COPY) {
		/* sampled:N: a duplicate that only brings a callchain. */
		struct thr *t = find_thr(tl, (uint32_t)prev_pid);

		if (t && t->state == T_SLEEPING && t->since == smp->time && !t->stack)
			keep_stack(tl, t, smp->callchain, smp->nr_callchain);
		else if (!t || t->since != smp->time)
			keep_copy(tl, c, smp);
		return 0;
	}
	/* A thread refused for set_max_threads() is left out; the other is followed. */
	if (prev_pid > 0 && !(prev = get_thr(tl, (uint32_t)prev_pid)) && !tl->refused)
		return -ENOMEM;
	if (next_pid > 0 && !(next = get_thr(tl, (uint32_t)next_pid)) && !tl->refused)
		return -ENOMEM;
	/* A context switch happens in task context: no handler is open here. */
	c->depth = 0;
	if (prev) {
		learn_comm_field(tl, prev, RSP_F_sched_switch__prev_comm, smp);
		if ((uint32_t)prev_pid == smp->tid)
			learn_tgid(tl, prev, smp->pid, smp->time);
		switch_out(tl, c, prev, smp, prev_state, smp->time, rec);
	}
	if (next) {
		learn_comm_field(tl, next, RSP_F_sched_switch__next_comm, smp);
		switch_in(tl, next, smp->cpu, smp->time, 0);
	}
	c->switched = true;
	c->curr = (uint32_t)next_pid;
	c->arr_sk = 0; /* a switch ends the context an arrival ran in */
	return 0;
}

static void wake_sleeping(struct rsp_timeline *tl, struct thr *t, const struct rsp_waker *w,
			  uint64_t time)
{
	struct rsp_segment s;

	time = clamp(tl, t, time);
	if (t->state == T_SLEEPING) {
		sleep_seg(t, &s, time, w);
		t->reason = s.reason;
	} else if (t->state == T_GAP) {
		seg_init(&s, t, RSP_SEG_UNKNOWN, t->since, time);
		t->reason = RSP_SR_UNKNOWN;
	} else { /* NEW: asleep since before the stream */
		t->since = tl->start;
		t->prev_state = 0;
		t->stack = NULL;
		t->nr_stack = 0;
		t->urec = NULL;
		t->urec_probe = false;
		t->reason = RSP_SR_UNKNOWN;
		t->seg_flags = RSP_SEGF_TRUNCATED;
		sleep_seg(t, &s, time, w);
	}
	if (s.kind == RSP_SEG_SLEEP && w->kind != RSP_WAKER_THREAD && w->kind != RSP_WAKER_NONE)
		s.flags |= RSP_SEGF_IN_HANDLER;
	emit_seg(tl, t, &s);
	emit_link(tl, t, RSP_LINK_WAKEUP, time, w);
	t->state = T_RUNNABLE;
	t->since = time;
	t->seg_flags = 0;
	t->waker = *w;
}

/* A waking delivered just after the switch-in it caused: name the held sleep's waker. */
static void late_waking(struct rsp_timeline *tl, struct thr *t, const struct rsp_waker *w)
{
	struct rsp_segment *s = &t->held_sleep;
	uint64_t time = w->time < s->start ? s->start : w->time;

	if (w->kind == RSP_WAKER_DEVICE && w->req == 0 && s->waker.req)
		return; /* the inference already joined the request */
	s->waker = *w;
	if (!(tl->flags & RSP_TL_RECORDS_STABLE))
		s->waker.stack = NULL, s->waker.nr_stack = 0;
	s->flags &= (uint16_t) ~(RSP_SEGF_WAKING_NOT_SEEN | RSP_SEGF_WAKER_INFERRED);
	if (time < s->end)
		s->end = time;
	tl->st.wakings_not_seen--;
	emit_held(tl, t);
	emit_link(tl, t, RSP_LINK_WAKEUP, time, w);
	if (time < t->since) {
		struct rsp_segment r;

		seg_init(&r, t, RSP_SEG_RUNNABLE, time, t->since);
		r.reason = s->reason;
		r.waker = s->waker;
		r.waker.stack = NULL;
		r.waker.nr_stack = 0;
		emit_seg(tl, t, &r);
	}
}

static int on_waking(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_waker w;
	struct thr *t;
	int64_t pid;

	if (smp->event != RSP_EV_sched_waking || !tl->schema->ev_ok[RSP_EV_sched_waking] ||
	    !read_int(tl, RSP_F_sched_waking__pid, smp, &pid))
		return -EINVAL;
	if (pid <= 0)
		return 0;
	t = get_thr(tl, (uint32_t)pid);
	if (!t)
		return -ENOMEM;
	learn_comm_field(tl, t, RSP_F_sched_waking__comm, smp);
	if (smp->tid && c->depth == 0) {
		struct thr *waker = get_thr(tl, smp->tid);

		if (waker)
			learn_tgid(tl, waker, smp->pid, smp->time);
	}
	waker_of(tl, c, smp, t, &w);
	switch (t->state) {
	case T_SLEEPING:
	case T_GAP:
	case T_NEW:
		wake_sleeping(tl, t, &w, smp->time);
		break;
	case T_RUNNING:
		if (t->held && smp->time <= t->since + LATE_WAKING_NS)
			late_waking(tl, t, &w);
		break;
	default:
		break; /* already runnable */
	}
	return 0;
}

static int on_wakeup_new(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_wakeup_new wk;
	struct thr *t;

	if (rsp_tp__sched_wakeup_new(tl->schema, smp, &wk))
		return -EINVAL;
	t = wk.pid > 0 ? get_thr(tl, (uint32_t)wk.pid) : NULL;
	if (!t)
		return wk.pid > 0 ? -ENOMEM : 0;
	learn_comm(tl, t, wk.comm, smp->time);
	if (t->state != T_NEW)
		return 0;
	t->state = T_RUNNABLE;
	t->since = smp->time;
	t->reason = RSP_SR_UNKNOWN;
	memset(&t->waker, 0, sizeof(t->waker));
	t->waker.kind = smp->tid ? RSP_WAKER_THREAD : RSP_WAKER_NONE;
	t->waker.id = smp->tid;
	t->waker.tgid = smp->pid;
	t->waker.time = smp->time;
	t->waker.cpu = smp->cpu;
	return 0;
}

static int on_fork(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_process_fork f;
	struct rsp_waker from;
	struct thr *child;

	if (rsp_tp__sched_process_fork(tl->schema, smp, &f))
		return -EINVAL;
	if (f.child_pid <= 0 || !(child = get_thr(tl, (uint32_t)f.child_pid)))
		return f.child_pid > 0 ? -ENOMEM : 0;
	learn_comm(tl, child, f.child_comm, smp->time);
	memset(&from, 0, sizeof(from));
	from.kind = RSP_WAKER_THREAD;
	from.id = (uint32_t)f.parent_pid;
	from.tgid = smp->pid;
	from.time = smp->time;
	from.cpu = smp->cpu;
	emit_link(tl, child, RSP_LINK_FORK, smp->time, &from);
	return 0;
}

static int on_exec(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_process_exec x;
	struct rsp_waker from;
	struct rsp_segment s;
	struct thr *t;
	uint64_t time;

	if (rsp_tp__sched_process_exec(tl->schema, smp, &x))
		return -EINVAL;
	t = x.pid > 0 ? get_thr(tl, (uint32_t)x.pid) : NULL;
	if (!t)
		return x.pid > 0 ? -ENOMEM : 0;
	time = clamp(tl, t, smp->time);
	if (t->state == T_RUNNING) {
		/* One run ends and another begins: the image changed. */
		emit_held(tl, t);
		seg_init(&s, t, RSP_SEG_RUN, t->since, time);
		emit_seg(tl, t, &s);
		t->since = time;
		t->seg_flags = 0;
	}
	memset(&from, 0, sizeof(from));
	from.kind = RSP_WAKER_THREAD;
	from.id = (uint32_t)x.old_pid;
	from.tgid = t->tgid;
	from.time = time;
	from.cpu = smp->cpu;
	emit_link(tl, t, RSP_LINK_EXEC, time, &from);
	return 0;
}

/* ---- handlers ----------------------------------------------------------- */

static void push_handler(struct cpu_state *c, uint8_t kind, uint32_t id, uint64_t time,
			 const char *name, uint64_t function)
{
	struct handler *h;

	/* A handler open for this long lost its exit record: forget it. */
	while (c->depth > 0 && time - c->h[c->depth - 1].start > STALE_HANDLER_NS)
		c->depth--;
	if (c->depth == NEST_MAX)
		return;
	h = &c->h[c->depth++];
	h->kind = kind;
	h->id = id;
	h->start = time;
	h->name = name;
	h->function = function;
	h->wakeups = 0;
}

static void pop_handler(struct rsp_timeline *tl, struct cpu_state *c, uint8_t kind, uint32_t id,
			uint64_t time, uint32_t cpu)
{
	struct rsp_handler_span sp;
	int i;

	for (i = c->depth - 1; i >= 0; i--)
		if (c->h[i].kind == kind && c->h[i].id == id)
			break;
	if (i < 0)
		return; /* the entry was not seen */
	memset(&sp, 0, sizeof(sp));
	sp.kind = kind;
	sp.cpu = cpu;
	sp.start = c->h[i].start;
	sp.end = time < sp.start ? sp.start : time;
	sp.id = id;
	sp.wakeups = c->h[i].wakeups;
	sp.name = c->h[i].name;
	sp.function = c->h[i].function;
	c->depth = i;
	/* The handler the arrival ran in is over: no waking joins it any more, but
	 * the send that delivered it (its tracepoint fires after) may still claim it. */
	if (c->arr_depth > c->depth)
		c->arr_depth = -1;
	tl->st.handler_spans++;
	if (tl->ops.handler)
		tl->ops.handler(tl->ctx, &sp);
}

static int on_handler(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	const struct rsp_schema *s = tl->schema;
	union {
		struct rsp_tp_irq_handler_entry ie;
		struct rsp_tp_irq_handler_exit ix;
		struct rsp_tp_softirq_entry se;
		struct rsp_tp_softirq_exit sx;
		struct rsp_tp_hrtimer_expire_entry he;
		struct rsp_tp_hrtimer_expire_exit hx;
	} u;
	uint64_t t = smp->time;

	switch (smp->event) {
	case RSP_EV_irq_handler_entry:
		if (rsp_tp__irq_handler_entry(s, smp, &u.ie))
			return -EINVAL;
		push_handler(c, RSP_HANDLER_IRQ, (uint32_t)u.ie.irq, t,
			     irq_name(tl, (int32_t)u.ie.irq, u.ie.name), 0);
		return 0;
	case RSP_EV_irq_handler_exit:
		if (rsp_tp__irq_handler_exit(s, smp, &u.ix))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_IRQ, (uint32_t)u.ix.irq, t, smp->cpu);
		return 0;
	case RSP_EV_softirq_entry:
		if (rsp_tp__softirq_entry(s, smp, &u.se))
			return -EINVAL;
		push_handler(c, RSP_HANDLER_SOFTIRQ, (uint32_t)u.se.vec, t,
			     rsp_softirq__name((unsigned)u.se.vec), 0);
		return 0;
	case RSP_EV_softirq_exit:
		if (rsp_tp__softirq_exit(s, smp, &u.sx))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_SOFTIRQ, (uint32_t)u.sx.vec, t, smp->cpu);
		return 0;
	case RSP_EV_hrtimer_expire_entry:
		if (rsp_tp__hrtimer_expire_entry(s, smp, &u.he))
			return -EINVAL;
		push_handler(c, RSP_HANDLER_HRTIMER, 0, t, "hrtimer", u.he.function);
		return 0;
	case RSP_EV_hrtimer_expire_exit:
		if (rsp_tp__hrtimer_expire_exit(s, smp, &u.hx))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_HRTIMER, 0, t, smp->cpu);
		return 0;
	default:
		return 1;
	}
}

/* Is @fn hrtimer_wakeup, the callback of every sleeper's timeout? Unknown without symbols: yes. */
static bool wakeup_fn(struct rsp_timeline *tl, uint64_t fn)
{
	const struct rsp_ksym *sym;
	unsigned i;

	if (!tl->ks || !fn)
		return true;
	for (i = 0; i < 4; i++)
		if (tl->fn_addr[i] == fn)
			return tl->fn_wakeup[i];
	sym = rsp_ksyms__find(tl->ks, fn, NULL);
	i = tl->fn_next++ % 4;
	tl->fn_addr[i] = fn;
	tl->fn_wakeup[i] = sym && !strcmp(sym->name, "hrtimer_wakeup");
	return tl->fn_wakeup[i];
}

/*
 * A task arms a timer in its own context (poll, epoll_wait, select,
 * nanosleep, futex with a timeout do so just before they sleep). On this
 * kernel the timer's expiry on an idle CPU, and the wakeup it does, are not
 * delivered: the expiry is then the evidence that the timeout ended the
 * sleep (infer_waker).
 */
static int on_timer_start(struct rsp_timeline *tl, struct cpu_state *c,
			  const struct rsp_sample *smp)
{
	struct rsp_tp_hrtimer_start h;
	struct thr *t;

	if (rsp_tp__hrtimer_start(tl->schema, smp, &h))
		return -EINVAL;
	if (!smp->tid || c->depth > 0 || !wakeup_fn(tl, h.function))
		return 0;
	t = find_thr(tl, smp->tid);
	if (t) {
		t->timer_expires = (uint64_t)h.expires;
		t->timer_armed = smp->time;
	}
	return 0;
}

/* ---- side-band and gaps ------------------------------------------------- */

static int on_sideband(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	const struct perf_event_header *h = e->rec;
	const uint32_t *w = (const uint32_t *)(h + 1);
	struct thr *t;

	if (h->size < sizeof(*h) + 16)
		return -EINVAL;
	if (h->type == PERF_RECORD_COMM) {
		/* {u32 pid, tid; char comm[]} + trailer */
		struct rsp_str s = {(const char *)(w + 2), 0};
		size_t max = h->size - sizeof(*h) - 8;

		s.len = (uint32_t)strnlen(s.ptr, max < 16 ? max : 16);
		if (!(t = get_thr(tl, w[1])))
			return -ENOMEM;
		t->tgid = w[0];
		set_comm(t, s);
		notify_thread(tl, t, e->time);
		return 0;
	}
	if (h->type == PERF_RECORD_FORK) {
		/* {u32 pid, ppid, tid, ptid; u64 time}: the child's process */
		if (!(t = get_thr(tl, w[2])))
			return -ENOMEM;
		learn_tgid(tl, t, w[0], e->time);
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
		close_open(tl, t, from < t->since ? t->since : from, RSP_SEGF_GAP);
		t->state = T_GAP;
		t->since = from < t->since ? t->since : from;
	}
}

static void on_gap(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_wentry *e)
{
	gap_threads(tl, e->cpu, c->seen ? c->last_time : e->time);
	c->switched = false;
	c->depth = 0;
}

void rsp_timeline__gap(struct rsp_timeline *tl, uint64_t from)
{
	if (tl->finished)
		return;
	gap_threads(tl, UINT32_MAX, from);
	for (uint32_t i = 0; i < tl->nr_cpus; i++) {
		tl->cpus[i].switched = false;
		tl->cpus[i].depth = 0;
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
static void expire_socks(struct rsp_timeline *tl, uint64_t before)
{
	for (uint32_t i = 0; i < tl->nr_socks; i++) {
		struct sock_st *so = &tl->socks[i];

		if (!so->used || so->seen >= before)
			continue;
		emit_op(tl, so, RSP_NETF_OPEN);
		free_sock(tl, so);
		tl->st.sockets_expired++;
	}
	rsp_socktab__expire(tl->stab, before);
}

/*
 * Bounded state for a timeline fed forever (rspd's analysis thread): block
 * requests that saw no completion by @before (this kernel drops the
 * completions of interrupts that hit an idle CPU) are emitted as never
 * completed, threads unknown since a gap before @before are forgotten
 * (their exit may have been in the gap; if they live, they are learnt
 * again at their next record), and idle sockets (expire_socks()).
 */
void rsp_timeline__expire(struct rsp_timeline *tl, uint64_t before)
{
	if (tl->finished)
		return;
	for (uint32_t i = 0; i < tl->nr_reqs; i++) {
		struct req *r = &tl->reqs[i];

		if (!r->used || (r->r.issue ? r->r.issue : r->r.insert) >= before)
			continue;
		r->r.flags |= RSP_BLKF_COMPLETE_NOT_SEEN;
		if (!r->r.issue)
			r->r.issue = r->r.insert;
		tl->st.reqs_expired++;
		emit_req(tl, r);
	}
	for (uint32_t i = 0; i < tl->nr_slots; i++) {
		struct thr *t = tl->slots[i];
		uint32_t idx;

		if (rsp_u64map__get(&tl->tmap, t->tid, &idx) || idx != i)
			continue;
		if (t->state != T_GAP || t->since >= before)
			continue;
		emit_held(tl, t);
		tl->st.threads_expired++;
		free_thr(tl, t);
	}
	expire_socks(tl, before);
}

/* ---- implicit switch-ins ------------------------------------------------ */

/*
 * Every sample names the task current on its CPU. On this kernel a switch
 * away from the idle task is never delivered (it fires in the idle task's
 * context), so a thread woken onto an idle CPU shows up running with no
 * switch-in: the first record in its context is the evidence, and its time
 * the switch-in's (the real one lies between the CPU's previous record and
 * this one; rsp takes the end it has evidence for).
 */
static void observe_running(struct rsp_timeline *tl, struct cpu_state *c,
			    const struct rsp_sample *smp)
{
	struct thr *t;

	if (!smp->tid)
		return;
	t = get_thr(tl, smp->tid);
	if (!t)
		return;
	learn_tgid(tl, t, smp->pid, smp->time);
	if (t->state == T_RUNNING)
		return;
	if (t->state == T_NEW) {
		t->state = T_RUNNING;
		t->since = c->seen ? smp->time : tl->start;
		t->seg_flags = c->seen ? 0 : RSP_SEGF_TRUNCATED;
		t->run_start = t->since;
		t->cpu = smp->cpu;
		return;
	}
	tl->st.switches_not_seen++;
	switch_in(tl, t, smp->cpu, smp->time, RSP_SEGF_SWITCH_NOT_SEEN);
}

/* ---- feed --------------------------------------------------------------- */

/* A libc uprobe: its user stack may repair the stack of the sleep that follows. */
static int on_probe(struct rsp_timeline *tl, const struct rsp_sample *smp,
		    const struct perf_event_header *rec)
{
	struct thr *t = smp->tid ? find_thr(tl, smp->tid) : NULL;

	if (!t)
		return 0;
	t->probe_rec = rec;
	t->probe_time = smp->time;
	return 0;
}

static int on_sample(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		     const struct perf_event_header *rec)
{
	if (rsp_net__is_event(smp->event))
		return on_net(tl, c, smp);
	switch (smp->event) {
	case RSP_EV_uprobe:
		return on_probe(tl, smp, rec);
	case RSP_EV_sched_switch:
		return on_switch(tl, c, smp, rec);
	case RSP_EV_sched_waking:
		return on_waking(tl, c, smp);
	case RSP_EV_sched_wakeup_new:
		return on_wakeup_new(tl, smp);
	case RSP_EV_sched_process_fork:
		return on_fork(tl, smp);
	case RSP_EV_sched_process_exec:
		return on_exec(tl, smp);
	case RSP_EV_sched_process_exit: {
		struct thr *t = find_thr(tl, smp->tid);

		if (t)
			t->exiting = true;
		return 0;
	}
	case RSP_EV_block_rq_insert:
		return on_insert(tl, smp);
	case RSP_EV_block_rq_issue:
		return on_issue(tl, smp);
	case RSP_EV_block_rq_complete:
		return on_complete(tl, c, smp);
	case RSP_EV_hrtimer_start:
		return on_timer_start(tl, c, smp);
	default:
		return on_handler(tl, c, smp);
	}
}

int rsp_timeline__feed(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	struct cpu_state *c;
	struct rsp_sample smp;
	int ret;

	if (tl->finished)
		return -EINVAL;
	tl->st.records++;
	if (!tl->started) {
		tl->start = e->time;
		tl->started = true;
	}
	c = get_cpu(tl, e->cpu);
	if (!c) {
		tl->st.malformed++;
		return -ENOMEM;
	}
	tl->refused = false;
	if (e->rec->type == PERF_RECORD_SAMPLE) {
		ret = rsp_record__parse_sample(tl->schema, e->rec, &smp);
		if (smp.tid == UINT32_MAX) /* no task (-1): as the idle task */
			smp.tid = smp.pid = 0;
		if (!ret && smp.event >= 0 && smp.role == RSP_ROLE_PRIMARY)
			observe_running(tl, c, &smp);
		if (!ret)
			ret = smp.event < 0 ? 1 : on_sample(tl, c, &smp, e->rec);
	} else if (e->rec->type == PERF_RECORD_LOST) {
		on_gap(tl, c, e);
		ret = 0;
	} else {
		ret = on_sideband(tl, e);
	}
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

void rsp_timeline__finish(struct rsp_timeline *tl, uint64_t end)
{
	if (tl->finished)
		return;
	tl->finished = true;
	for (uint32_t i = 0; i < tl->nr_slots; i++) {
		struct thr *t = tl->slots[i];
		uint32_t idx;

		if (rsp_u64map__get(&tl->tmap, t->tid, &idx) || idx != i)
			continue;
		if (t->state == T_NEW)
			continue;
		close_open(tl, t, end < t->since ? t->since : end, RSP_SEGF_OPEN);
	}
	for (uint32_t i = 0; i < tl->nr_socks; i++)
		if (tl->socks[i].used)
			emit_op(tl, &tl->socks[i], RSP_NETF_OPEN);
	for (uint32_t i = 0; i < tl->nr_reqs; i++) {
		if (!tl->reqs[i].used)
			continue;
		tl->reqs[i].r.flags |= RSP_BLKF_COMPLETE_NOT_SEEN;
		if (!tl->reqs[i].r.issue)
			tl->reqs[i].r.issue = tl->reqs[i].r.insert;
		emit_req(tl, &tl->reqs[i]);
	}
}
