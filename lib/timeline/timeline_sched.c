// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline's scheduler events: switches, wakings, forks and execs, and
 * who woke a sleeper (observed, or inferred from the evidence).
 */
#include "internal/timeline.h"

/* ---- wakers ------------------------------------------------------------- */

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
		/*
		 * A completion in this handler: its wakeups are the device's,
		 * however long after it (a softirq interrupted for ms on a
		 * busy machine) and whoever's request it was (a flush kblockd
		 * issued on its behalf; a metadata block another process's
		 * request was writing, that fdatasync() waits on too).
		 */
		if (c->last_complete && smp->time >= c->last_complete &&
		    c->last_complete >= h->start) {
			w->kind = RSP_WAKER_DEVICE;
			w->id = c->last_complete_dev;
			w->req = c->last_complete_req;
			return;
		}
		if (tl__net_waker(tl, c, h, smp, w))
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
		tl__net_waker(tl, c, NULL, smp, w);
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
		w->req = tl__infer_completions(tl, t, now, now);
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
		w->req = tl__infer_on_behalf(tl, t, now);
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
static inline __attribute__((always_inline)) bool read_int(const struct rsp_timeline *tl,
							   enum rsp_field f,
							   const struct rsp_sample *smp,
							   int64_t *out)
{
	const struct rsp_field_loc *l = &rsp_schema__locs(tl->schema, smp->compact)[f];
	const uint8_t *raw = smp->raw;
	int32_t i32;

	if (!(l->flags & RSP_FLOC_PRESENT) || !raw || (uint32_t)l->offset + l->size > smp->raw_size)
		return false;
	if (l->size == 4) {
		memcpy(&i32, raw + l->offset, 4);
		*out = (l->flags & RSP_FLOC_SIGNED) ? i32 : (int64_t)(uint32_t)i32;
	} else if (l->size == 8) {
		memcpy(out, raw + l->offset, 8);
	} else if (l->size == 1) {
		*out = (l->flags & RSP_FLOC_SIGNED) ? (int8_t)raw[l->offset] : raw[l->offset];
	} else {
		*out = (int64_t)rsp_field__u64(tl->schema, f, raw, smp->raw_size);
	}
	return true;
}

static void learn_comm_field(struct rsp_timeline *tl, struct thr *t, enum rsp_field f,
			     const struct rsp_sample *smp)
{
	/* a compact record has no names: they come as COMM side records */
	if (!t->comm[0] && !smp->compact)
		tl__learn_comm(tl, t, rsp_field__str(tl->schema, f, smp->raw, smp->raw_size),
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
 * sampled:N. The stack of one switch in N comes in a second, sampled copy
 * of the sched_switch record (RSP_ROLE_STACK_COPY). Both are written by one
 * tracepoint call with interrupts off, so they are adjacent in their CPU's
 * stream with nothing between; the evsel attached last fires first, so the
 * copy comes first. Each evsel reads the clock itself, after its callchain
 * walk: the two times differ, by 10 to 100 us on this machine (measured),
 * so times cannot pair them; adjacency can, in either order.
 *
 * A copy that came before its switch is kept until the switch. A caller
 * that feeds records it may release at once (a live stream read in passes)
 * gets a copy, as the switch may be in the next pass.
 */
static void keep_copy(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		      uint32_t prev_tid)
{
	uint64_t nr = smp->nr_callchain < STACK_WORDS ? smp->nr_callchain : STACK_WORDS;

	c->copy_tid = prev_tid;
	c->copy_at = c->nrec;
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
	time = tl__clamp(tl, t, time);
	if (t->state == T_RUNNING) {
		tl__emit_held(tl, t);
		tl__seg_init(&s, t, RSP_SEG_RUN, t->since, time);
		s.cpu = smp->cpu;
		if ((prev_state & RSP_TASK_STATE_MASK) & TASK_REPORT_DEAD)
			s.flags |= RSP_SEGF_EXITED;
		tl__emit_seg(tl, t, &s);
	} else if (t->state != T_NEW) {
		tl->st.inversions += t->state != T_GAP;
		tl__close_open(tl, t, time, 0);
	}
	t->seg_flags = 0;
	t->cpu = smp->cpu;
	t->since = time;
	t->prev_state = prev_state;
	if ((prev_state & RSP_TASK_STATE_MASK) & TASK_REPORT_DEAD) {
		tl__emit_held(tl, t);
		tl__free_thr(tl, t);
		return;
	}
	if (!chain && c->copy_stack && c->copy_tid == t->tid && c->copy_at + 1 == c->nrec) {
		chain = c->copy_stack;
		nr = c->copy_nr;
	}
	c->copy_stack = NULL;
	t->reason = (uint8_t)rsp_sleepclass__classify(tl->sc, prev_state, chain, nr);
	t->stack_flags = tl->bstack_flags;
	if (tl->bcheck_reason >= 0 && tl->bcheck_reason != t->reason)
		t->stack_flags |= RSP_SEGF_REASON_DIFFERS;
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
void tl__switch_in(struct rsp_timeline *tl, struct thr *t, uint32_t cpu, uint64_t time,
		   uint16_t flags)
{
	struct rsp_segment s;
	struct rsp_waker w;

	time = tl__clamp(tl, t, time);
	switch (t->state) {
	case T_RUNNABLE:
		tl__seg_init(&s, t, RSP_SEG_RUNNABLE, t->since, time);
		s.cpu = cpu;
		s.reason = t->reason;
		s.waker = t->waker;
		s.flags |= flags;
		if (!(tl->flags & RSP_TL_RECORDS_STABLE))
			s.waker.stack = NULL, s.waker.nr_stack = 0;
		tl__emit_seg(tl, t, &s);
		break;
	case T_SLEEPING:
		/* No waking seen: hold the sleep until the run ends. */
		tl__emit_held(tl, t);
		infer_waker(tl, t, time, &w);
		tl__sleep_seg(t, &t->held_sleep, time, &w);
		t->held_sleep.flags |= RSP_SEGF_WAKING_NOT_SEEN | flags;
		if (w.kind != RSP_WAKER_NONE)
			t->held_sleep.flags |= RSP_SEGF_WAKER_INFERRED;
		t->held = true;
		tl->st.wakings_not_seen++;
		break;
	case T_GAP:
		tl__close_open(tl, t, time, flags);
		break;
	case T_RUNNING:
		/* Its switch-out (and this switch-in's) not delivered: seen until its last record.
		 */
		tl->st.inversions++;
		if (time <= t->last_ev + INVERSION_NS) {
			tl__close_open(tl, t, time, 0); /* written out of order: nothing lost */
			break;
		}
		tl->st.runs_inferred++;
		tl__end_run_unseen(tl, t, time, 0);
		break;
	default:
		break;
	}
	t->state = T_RUNNING;
	t->since = time;
	t->run_start = time;
	t->last_ev = time;
	t->cpu = cpu;
	t->seg_flags = 0;
}

/*
 * Every switch, as recorded, for counters that follow perf sched's rules:
 * what the CPU ran since its previous switch goes to the thread leaving it.
 */
static void notify_switch(struct rsp_timeline *tl, struct cpu_state *c,
			  const struct rsp_sample *smp, const struct thr *prev, int64_t prev_pid,
			  int64_t next_pid, int64_t prev_state)
{
	struct rsp_switch sw = {.time = smp->time,
				.cpu = smp->cpu,
				.prev_tid = (uint32_t)prev_pid,
				.next_tid = (uint32_t)next_pid,
				.prev_state = prev_state};

	sw.ran_ns = c->last_switch && smp->time >= c->last_switch ? smp->time - c->last_switch : 0;
	c->last_switch = smp->time;
	c->sw_tid = (uint32_t)prev_pid;
	c->sw_at = c->nrec;
	if (!tl->ops.sched_switch)
		return;
	sw.prev_tgid = (uint32_t)prev_pid == smp->tid ? smp->pid : prev ? prev->tgid : 0;
	if (!smp->compact) {
		sw.prev_comm = rsp_field__str(tl->schema, RSP_F_sched_switch__prev_comm, smp->raw,
					      smp->raw_size);
		sw.next_comm = rsp_field__str(tl->schema, RSP_F_sched_switch__next_comm, smp->raw,
					      smp->raw_size);
	}
	tl->ops.sched_switch(tl->ctx, &sw);
}

int tl__on_switch(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		  const struct perf_event_header *rec)
{
	struct thr *prev = NULL, *next = NULL;
	int64_t prev_pid, next_pid, prev_state;

	if (smp->event != RSP_EV_sched_switch ||
	    (!smp->compact && !tl->schema->ev_ok[RSP_EV_sched_switch]) ||
	    !read_int(tl, RSP_F_sched_switch__prev_pid, smp, &prev_pid) ||
	    !read_int(tl, RSP_F_sched_switch__next_pid, smp, &next_pid) ||
	    !read_int(tl, RSP_F_sched_switch__prev_state, smp, &prev_state))
		return -EINVAL;
	if (smp->role == RSP_ROLE_STACK_COPY) {
		/* sampled:N: a duplicate that only brings a callchain (keep_copy()). */
		struct thr *t = tl__find_thr(tl, (uint32_t)prev_pid);

		tl->st.stack_copies++;
		if (c->sw_tid == (uint32_t)prev_pid && c->sw_at + 1 == c->nrec) {
			/* after its switch */
			if (t && t->state == T_SLEEPING && !t->stack)
				keep_stack(tl, t, smp->callchain, smp->nr_callchain);
		} else {
			keep_copy(tl, c, smp, (uint32_t)prev_pid);
		}
		return 0;
	}
	/* A thread refused for set_max_threads() is left out; the other is followed. */
	if (prev_pid > 0 && !(prev = tl__get_thr(tl, (uint32_t)prev_pid)) && !tl->refused)
		return -ENOMEM;
	if (next_pid > 0 && !(next = tl__get_thr(tl, (uint32_t)next_pid)) && !tl->refused)
		return -ENOMEM;
	/* A context switch happens in task context: what is open lost its exit. */
	tl__abandon_handlers(tl, c, smp->time);
	if (prev) {
		learn_comm_field(tl, prev, RSP_F_sched_switch__prev_comm, smp);
		if ((uint32_t)prev_pid == smp->tid)
			tl__learn_tgid(tl, prev, smp->pid, smp->time);
		switch_out(tl, c, prev, smp, prev_state, smp->time, rec);
	}
	if (next) {
		learn_comm_field(tl, next, RSP_F_sched_switch__next_comm, smp);
		tl__switch_in(tl, next, smp->cpu, smp->time, 0);
	}
	notify_switch(tl, c, smp, prev, prev_pid, next_pid, prev_state);
	c->switched = true;
	c->curr = (uint32_t)next_pid;
	c->arr_sk = 0; /* a switch ends the context an arrival ran in */
	return 0;
}

static void wake_sleeping(struct rsp_timeline *tl, struct thr *t, const struct rsp_waker *w,
			  uint64_t time)
{
	struct rsp_segment s;

	time = tl__clamp(tl, t, time);
	if (t->state == T_SLEEPING) {
		tl__sleep_seg(t, &s, time, w);
		t->reason = s.reason;
	} else if (t->state == T_GAP) {
		tl__seg_init(&s, t, RSP_SEG_UNKNOWN, t->since, time);
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
		tl__sleep_seg(t, &s, time, w);
	}
	if (s.kind == RSP_SEG_SLEEP && w->kind != RSP_WAKER_THREAD && w->kind != RSP_WAKER_NONE)
		s.flags |= RSP_SEGF_IN_HANDLER;
	tl__emit_seg(tl, t, &s);
	tl__emit_link(tl, t, RSP_LINK_WAKEUP, time, w);
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
	tl__emit_held(tl, t);
	tl__emit_link(tl, t, RSP_LINK_WAKEUP, time, w);
	if (time < t->since) {
		struct rsp_segment r;

		tl__seg_init(&r, t, RSP_SEG_RUNNABLE, time, t->since);
		r.reason = s->reason;
		r.waker = s->waker;
		r.waker.stack = NULL;
		r.waker.nr_stack = 0;
		tl__emit_seg(tl, t, &r);
	}
}

int tl__on_waking(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_waker w;
	struct thr *t;
	int64_t pid;

	if (smp->event != RSP_EV_sched_waking ||
	    (!smp->compact && !tl->schema->ev_ok[RSP_EV_sched_waking]) ||
	    !read_int(tl, RSP_F_sched_waking__pid, smp, &pid))
		return -EINVAL;
	if (pid <= 0)
		return 0;
	t = tl__get_thr(tl, (uint32_t)pid);
	if (!t)
		return -ENOMEM;
	learn_comm_field(tl, t, RSP_F_sched_waking__comm, smp);
	if (smp->tid && c->depth == 0) {
		struct thr *waker = tl__get_thr(tl, smp->tid);

		if (waker)
			tl__learn_tgid(tl, waker, smp->pid, smp->time);
	}
	if (tl->ops.waking) {
		struct rsp_waking wk = {.time = smp->time,
					.cpu = smp->cpu,
					.tid = (uint32_t)pid,
					.waker_tid = smp->tid,
					.waker_tgid = smp->pid,
					.in_handler = c->depth > 0};

		tl->ops.waking(tl->ctx, &wk);
	}
	waker_of(tl, c, smp, t, &w);
	/*
	 * A BPF waking from before this sleep began (folded into the switch-in
	 * and fed just before it: rsp_timeline__set_unfold_delay()): in time
	 * order it came while the thread still ran, and ended no sleep.
	 */
	if (smp->compact && t->state == T_SLEEPING && smp->time < t->since) {
		tl->st.wakings_stale++;
		return 0;
	}
	if (w.kind == RSP_WAKER_THREAD && t->state == T_SLEEPING)
		tl__relayed_completion(tl, w.id, t, smp->time);
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

int tl__on_wakeup_new(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_wakeup_new wk;
	struct thr *t;

	if (rsp_tp__sched_wakeup_new(tl->schema, smp, &wk))
		return -EINVAL;
	t = wk.pid > 0 ? tl__get_thr(tl, (uint32_t)wk.pid) : NULL;
	if (!t)
		return wk.pid > 0 ? -ENOMEM : 0;
	tl__learn_comm(tl, t, wk.comm, smp->time);
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

int tl__on_fork(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_process_fork f;
	struct rsp_waker from;
	struct thr *child;

	if (rsp_tp__sched_process_fork(tl->schema, smp, &f))
		return -EINVAL;
	if (f.child_pid <= 0 || !(child = tl__get_thr(tl, (uint32_t)f.child_pid)))
		return f.child_pid > 0 ? -ENOMEM : 0;
	tl__learn_comm(tl, child, f.child_comm, smp->time);
	memset(&from, 0, sizeof(from));
	from.kind = RSP_WAKER_THREAD;
	from.id = (uint32_t)f.parent_pid;
	from.tgid = smp->pid;
	from.time = smp->time;
	from.cpu = smp->cpu;
	tl__emit_link(tl, child, RSP_LINK_FORK, smp->time, &from);
	return 0;
}

int tl__on_exec(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_process_exec x;
	struct rsp_waker from;
	struct rsp_segment s;
	struct thr *t;
	uint64_t time;

	if (rsp_tp__sched_process_exec(tl->schema, smp, &x))
		return -EINVAL;
	t = x.pid > 0 ? tl__get_thr(tl, (uint32_t)x.pid) : NULL;
	if (!t)
		return x.pid > 0 ? -ENOMEM : 0;
	time = tl__clamp(tl, t, smp->time);
	if (t->state == T_RUNNING) {
		/* One run ends and another begins: the image changed. */
		tl__emit_held(tl, t);
		tl__seg_init(&s, t, RSP_SEG_RUN, t->since, time);
		tl__emit_seg(tl, t, &s);
		t->since = time;
		t->seg_flags = 0;
	}
	memset(&from, 0, sizeof(from));
	from.kind = RSP_WAKER_THREAD;
	from.id = (uint32_t)x.old_pid;
	from.tgid = t->tgid;
	from.time = time;
	from.cpu = smp->cpu;
	tl__emit_link(tl, t, RSP_LINK_EXEC, time, &from);
	return 0;
}
