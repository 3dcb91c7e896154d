/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_TIMELINE_H
#define RSP_INTERNAL_TIMELINE_H

/*
 * The timeline builder's insides, shared by its files (as libperf's
 * evlist, evsel and mmap share include/internal/): timeline.c (the object,
 * threads, emission, feeding, gaps, expiry), timeline_sched.c (switches,
 * wakings, forks, execs, wakers), timeline_block.c (block requests),
 * timeline_irq.c (irq, softirq and hrtimer handlers, timeouts),
 * timeline_net.c (sockets and network operations). The contract is in
 * rsp/timeline.h.
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
#include "internal/hash.h"
#include "internal/u64map.h"
#include "internal/unfold.h"
#include "internal/vec.h"

#define NEST_MAX	 8
#define STACK_WORDS	 256
#define TL_TCACHE	 64		  /* entries of find_thr()'s cache */
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
	uint64_t last_ev;   /* RUNNING: its last record on its CPU (or its switch-in) */
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
	uint16_t stack_flags; /* the open sleep's RSP_SEGF_STACK_CACHED etc. */
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
	uint32_t curr; /* the task believed current (last switched in, or seen) */
	/* a record of another task while curr was running: its verdict waits (observe_other()) */
	bool pend;
	uint32_t pend_tid;
	uint64_t pend_time;
	uint64_t last_time;
	int depth;
	struct handler h[NEST_MAX];
	/* the last block completion seen on this CPU (joins wakeups in its handler) */
	uint64_t last_complete;
	uint32_t last_complete_dev;
	uint64_t last_complete_req;
	uint64_t nrec;	      /* records of this CPU fed so far */
	uint64_t last_switch; /* time of its last sched_switch; 0: none since a gap */
	/* the last sched_switch: its prev tid and record number (a copy after it) */
	uint32_t sw_tid;
	uint64_t sw_at;
	/* sampled:N policy: a stack copy that arrived before its switch (keep_copy()) */
	uint32_t copy_tid;
	uint64_t copy_at;
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
	bool issued; /* its issue was seen (r.issue may be assumed at its end) */
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
	/* folded BPF records' events put back in time order (internal/unfold.h) */
	struct rsp_unfold *unfold;
	uint64_t unfold_delay; /* rsp_timeline__set_unfold_delay() */
	uint64_t unfold_from;  /* rsp_timeline__set_start() */
	uint64_t unfold_to;    /* rsp_timeline__set_end(): records after it are read ahead */
	/* threads */
	struct rsp_u64map tmap; /* tid -> slot */
	struct thr **slots;
	uint32_t nr_slots, free_slot; /* free list through next_free, UINT32_MAX = none */
	size_t cap_slots;
	/* cpus */
	struct cpu_state *cpus;
	uint32_t nr_cpus;
	/* block requests in flight */
	struct rsp_u64map rmap; /* key(dev, sector) -> pool index */
	struct req *reqs;
	uint32_t nr_reqs, free_req;
	size_t cap_reqs;
	uint32_t live_reqs, max_reqs; /* in flight now; 0: no limit */
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
	size_t cap_irqs;
	/* sockets */
	struct rsp_u64map smap; /* sk -> pool index */
	struct sock_st *socks;
	uint32_t nr_socks, free_sock;
	size_t cap_socks;
	uint64_t next_op_id;
	struct rsp_socktab *stab;	/* what the stream's records said */
	const struct rsp_socktab *base; /* sockets older than the stream, or NULL */
	struct rsp_timeline_stats st;
	uint32_t live;	      /* threads tracked now */
	uint32_t max_threads; /* 0: no limit */
	bool refused;	      /* get_thr() refused a thread for max_threads */
	/*
	 * find_thr()'s cache: the slot + 1 of the thread last found for each
	 * tid modulo TL_TCACHE (0: none), cleared when that thread's slot is
	 * freed. Records name a few dozen threads in turn (a switch names two).
	 */
	uint32_t tcache[TL_TCACHE];
	/* compact BPF records: stacks sent once (hash -> struct bstack), and the
	 * callchains of (kernel, user) pairs built from them (-> struct bchain) */
	struct rsp_kvec bstacks, bchains;
	/* the BPF record being fed: its stacks' RSP_SEGF_STACK_* flags (switch_out) */
	uint16_t bstack_flags;
	/* a check whose cached kernel stack differs: the sleep reason it gives (else -1) */
	int bcheck_reason;
	/* names BPF COMM records gave before the range (rsp_timeline__learn()):
	 * tid -> struct prename, a thread's name when it is first seen */
	struct rsp_kvec prenames;
};

struct prename {
	uint32_t tgid;
	char comm[16];
};

struct bstack {
	const void *ips; /* u64s into the record (RECORDS_STABLE: unaligned), or own */
	uint64_t *own;
	uint16_t nr;
};

struct bchain {
	uint64_t *chain; /* PERF_CONTEXT_KERNEL, ips..., PERF_CONTEXT_USER, ips... */
	uint32_t nr;
};

/* ---- threads, emission, CPUs (timeline.c) ---- */
struct thr *tl__new_thr(struct rsp_timeline *tl, uint32_t tid);
void tl__rename(struct rsp_timeline *tl, struct thr *t, struct rsp_str s, uint64_t time);

/* Inline: every record looks up one or two threads (the per-record path). */
static inline struct thr *tl__find_thr(struct rsp_timeline *tl, uint32_t tid)
{
	uint32_t *c = &tl->tcache[tid % TL_TCACHE], idx;

	if (*c && tl->slots[*c - 1]->tid == tid)
		return tl->slots[*c - 1];
	if (rsp_u64map__get(&tl->tmap, tid, &idx))
		return NULL;
	*c = idx + 1;
	return tl->slots[idx];
}

/* The thread, tracked from now on if new; NULL if refused or out of memory. */
static inline struct thr *tl__get_thr(struct rsp_timeline *tl, uint32_t tid)
{
	struct thr *t = tl__find_thr(tl, tid);

	return t ? t : tl__new_thr(tl, tid);
}

/* @time, or the thread's state start if earlier (records a few hundred ns out of order). */
static inline uint64_t tl__clamp(struct rsp_timeline *tl, const struct thr *t, uint64_t time)
{
	if (t->state != T_NEW && time < t->since) {
		tl->st.inversions++;
		return t->since;
	}
	return time;
}

static inline void tl__seg_init(struct rsp_segment *s, const struct thr *t, uint8_t kind,
				uint64_t start, uint64_t end)
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

static inline void tl__emit_seg(struct rsp_timeline *tl, struct thr *t, struct rsp_segment *s)
{
	s->tgid = t->tgid;
	tl->st.segments++;
	if (tl->ops.segment)
		tl->ops.segment(tl->ctx, s, t->comm);
}
void tl__close_open(struct rsp_timeline *tl, struct thr *t, uint64_t end, uint16_t flags);
void tl__end_run_unseen(struct rsp_timeline *tl, struct thr *t, uint64_t bound, uint16_t flags);

/* Records of one CPU may be written this much out of order (see rsp/timeline.h). */
#define INVERSION_NS 2000u
/* The sleep @t holds back, if any, emitted now (inline: at every switch). */
static inline void tl__emit_held(struct rsp_timeline *tl, struct thr *t)
{
	if (!t->held)
		return;
	t->held = false;
	tl__emit_seg(tl, t, &t->held_sleep);
}
void tl__emit_link(struct rsp_timeline *tl, struct thr *t, uint8_t kind, uint64_t time,
		   const struct rsp_waker *from);
void tl__free_thr(struct rsp_timeline *tl, struct thr *t);
void tl__learn_comm(struct rsp_timeline *tl, struct thr *t, struct rsp_str s, uint64_t time);
void tl__set_tgid(struct rsp_timeline *tl, struct thr *t, uint32_t tgid, uint64_t time);

/* A thread's process, from a record that names it (told to subscribers when it changes). */
static inline void tl__learn_tgid(struct rsp_timeline *tl, struct thr *t, uint32_t tgid,
				  uint64_t time)
{
	if (t->tgid != tgid && tgid) /* inline: most records repeat what is known */
		tl__set_tgid(tl, t, tgid, time);
}
void tl__sleep_seg(const struct thr *t, struct rsp_segment *s, uint64_t end,
		   const struct rsp_waker *waker);

/* ---- scheduler events and wakers (timeline_sched.c) ---- */
int tl__on_exec(struct rsp_timeline *tl, const struct rsp_sample *smp);
int tl__on_fork(struct rsp_timeline *tl, const struct rsp_sample *smp);
int tl__on_switch(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		  const struct perf_event_header *rec);
int tl__on_wakeup_new(struct rsp_timeline *tl, const struct rsp_sample *smp);
int tl__on_waking(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp);
void tl__switch_in(struct rsp_timeline *tl, struct thr *t, uint32_t cpu, uint64_t time,
		   uint16_t flags);

/* ---- block requests (timeline_block.c) ---- */
int tl__on_complete(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp);
int tl__on_insert(struct rsp_timeline *tl, const struct rsp_sample *smp);
int tl__on_issue(struct rsp_timeline *tl, const struct rsp_sample *smp);
uint64_t tl__infer_completions(struct rsp_timeline *tl, struct thr *t, uint64_t slept,
			       uint64_t now);
uint64_t tl__infer_on_behalf(struct rsp_timeline *tl, const struct thr *t, uint64_t now);
void tl__relayed_completion(struct rsp_timeline *tl, uint32_t relay, struct thr *t, uint64_t time);
void tl__emit_req(struct rsp_timeline *tl, struct req *r);
void tl__expire_reqs(struct rsp_timeline *tl, uint64_t before);
void tl__finish_reqs(struct rsp_timeline *tl);

/* ---- handlers and timers (timeline_irq.c) ---- */
int tl__on_handler(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp);
int tl__on_timer_start(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp);

void tl__abandon_from(struct rsp_timeline *tl, struct cpu_state *c, int from, uint64_t time);

/* Every handler open on @c lost its exit (a switch: task context). Inline: per switch. */
static inline void tl__abandon_handlers(struct rsp_timeline *tl, struct cpu_state *c, uint64_t time)
{
	if (c->depth)
		tl__abandon_from(tl, c, 0, time);
}

/* ---- compact BPF records' side records (timeline_bpf.c) ---- */
void tl__prename(struct rsp_timeline *tl, struct thr *t);
int tl__on_bpf_side(struct rsp_timeline *tl, const struct rsp_sample *smp);
void tl__bpf_chain(struct rsp_timeline *tl, struct rsp_sample *smp);
void tl__bpf_exit(struct rsp_timeline *tl);

/* ---- network (timeline_net.c) ---- */
bool tl__net_waker(struct rsp_timeline *tl, struct cpu_state *c, const struct handler *h,
		   const struct rsp_sample *smp, struct rsp_waker *w);
int tl__on_net(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp);
void tl__emit_op(struct rsp_timeline *tl, struct sock_st *so, uint32_t flags);
void tl__expire_socks(struct rsp_timeline *tl, uint64_t before);

#endif /* RSP_INTERNAL_TIMELINE_H */
