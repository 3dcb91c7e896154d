// SPDX-License-Identifier: LGPL-2.1
/* What a window holds: see rsp/census.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/census.h>
#include <rsp/pass.h>
#include <rsp/record.h>
#include "internal/vec.h"

/* sched_waking pairs: (woken tid << 32 | waker tid) -> count */
struct pair {
	uint32_t target, waker;
	uint64_t n;
};

struct rsp_census {
	long pid;
	struct rsp_timeline_stats st;
	struct rsp_census_sleeps sl;
	struct rsp_kvec threads; /* tid -> struct rsp_census_thread */
	struct rsp_kvec pairs;	 /* struct pair */
	struct rsp_census_thread *kept;
	size_t nr_kept;
	struct rsp_census_waker *wakers;
	size_t nr_wakers, cap_wakers;
	bool failed;
};

static struct rsp_census_thread *thread(struct rsp_census *c, uint32_t tid)
{
	bool added;
	struct rsp_census_thread *t = rsp_kvec__get(&c->threads, tid, &added);

	if (!t) {
		c->failed = true;
		return NULL;
	}
	if (added) {
		t->tid = tid;
		t->pid = UINT32_MAX;
	}
	return t;
}

static void set_comm(struct rsp_census_thread *t, struct rsp_str s)
{
	size_t n = s.len < sizeof(t->comm) - 1 ? s.len : sizeof(t->comm) - 1;

	if (!s.ptr || !n)
		return;
	memcpy(t->comm, s.ptr, n);
	t->comm[n] = '\0';
}

static void on_switch(void *ctx, const struct rsp_switch *sw)
{
	struct rsp_census *c = ctx;
	struct rsp_census_thread *t = thread(c, sw->prev_tid);

	if (t) {
		t->switches_out++;
		t->run_ns += sw->ran_ns;
		set_comm(t, sw->prev_comm);
		if (sw->prev_tgid)
			t->pid = sw->prev_tgid;
	}
	t = thread(c, sw->next_tid);
	if (t) {
		t->switches_in++;
		set_comm(t, sw->next_comm);
	}
}

static void on_waking(void *ctx, const struct rsp_waking *wk)
{
	struct rsp_census *c = ctx;
	struct rsp_census_thread *t = thread(c, wk->tid);
	struct pair *p;
	bool added;

	if (t)
		t->wakeups++;
	/* The waker is the task running when sched_waking fired. */
	if (wk->waker_tid && (t = thread(c, wk->waker_tid)))
		t->pid = wk->waker_tgid;
	p = rsp_kvec__get(&c->pairs, (uint64_t)wk->tid << 32 | wk->waker_tid, &added);
	if (!p) {
		c->failed = true;
		return;
	}
	if (added)
		*p = (struct pair){wk->tid, wk->waker_tid, 0};
	p->n++;
}

static void on_sample(void *ctx, const struct rsp_sample *smp, const struct perf_event_header *rec)
{
	struct rsp_census *c = ctx;
	struct rsp_census_thread *t = thread(c, smp->tid);

	if (!t)
		return;
	t->samples++;
	if (smp->tid)
		t->pid = smp->pid;
}

/*
 * Any record in a thread's context tells which process it belongs to; the
 * name comes here too when the records do not carry it (compact BPF
 * records: a COMM record names a thread once).
 */
static void on_thread(void *ctx, uint32_t tid, uint32_t tgid, const char *comm, uint64_t time)
{
	struct rsp_census *c = ctx;
	struct rsp_census_thread *t = tgid && tid ? thread(c, tid) : NULL;

	(void)time;
	if (!t)
		return;
	t->pid = tgid;
	if (comm && comm[0])
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

/* A sleep that ended in the range (its switch-out seen): did it carry a stack? */
static void on_segment(void *ctx, const struct rsp_segment *seg, const char *comm)
{
	struct rsp_census *c = ctx;
	uint64_t d = seg->end - seg->start;

	if (seg->kind != RSP_SEG_SLEEP ||
	    (seg->flags & (RSP_SEGF_TRUNCATED | RSP_SEGF_OPEN | RSP_SEGF_GAP)))
		return;
	c->sl.sleeps++;
	c->sl.sleep_ns += d;
	if (seg->stack) {
		c->sl.with_stack++;
		c->sl.stack_ns += d;
	}
}

static int waker_cmp(const void *a, const void *b)
{
	const struct rsp_census_waker *x = a, *y = b;

	if (x->wakings != y->wakings)
		return x->wakings < y->wakings ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct rsp_census_waker *waker(struct rsp_census *c, uint32_t pid)
{
	for (size_t j = 0; j < c->nr_wakers; j++)
		if (c->wakers[j].pid == pid)
			return &c->wakers[j];
	if (rsp_vec__reserve((void **)&c->wakers, &c->cap_wakers, c->nr_wakers + 1,
			     sizeof(*c->wakers)))
		return NULL;
	memset(&c->wakers[c->nr_wakers], 0, sizeof(c->wakers[0]));
	c->wakers[c->nr_wakers].pid = pid;
	return &c->wakers[c->nr_wakers++];
}

/* The processes whose threads woke a thread of the census's process, with their names. */
static int collect_wakers(struct rsp_census *c)
{
	for (size_t i = 0; i < rsp_kvec__len(&c->pairs); i++) {
		const struct pair *p = rsp_kvec__at(&c->pairs, i);
		const struct rsp_census_thread *t = rsp_kvec__find(&c->threads, p->target);
		const struct rsp_census_thread *w =
			p->waker ? rsp_kvec__find(&c->threads, p->waker) : NULL;
		const struct rsp_census_thread *leader;
		uint32_t wpid = w ? w->pid : 0;
		struct rsp_census_waker *x;

		if (!t || t->pid != (uint32_t)c->pid || (p->waker && (!w || w->pid == UINT32_MAX)))
			continue;
		x = waker(c, wpid);
		if (!x)
			return -ENOMEM;
		if (!x->comm[0]) {
			leader = rsp_kvec__find(&c->threads, wpid);
			snprintf(x->comm, sizeof(x->comm), "%s",
				 !wpid			     ? "(idle)"
				 : leader && leader->comm[0] ? leader->comm
							     : w->comm);
		}
		x->wakings += p->n;
	}
	if (c->nr_wakers)
		qsort(c->wakers, c->nr_wakers, sizeof(c->wakers[0]), waker_cmp);
	return 0;
}

/* Keep the threads of the census's process. */
static int keep_threads(struct rsp_census *c)
{
	size_t n = rsp_kvec__len(&c->threads);

	c->kept = calloc(n ? n : 1, sizeof(*c->kept));
	if (!c->kept)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rsp_census_thread *t = rsp_kvec__at(&c->threads, i);

		if (t->pid == (uint32_t)c->pid)
			c->kept[c->nr_kept++] = *t;
	}
	return 0;
}

struct rsp_census *rsp_census__new(const struct rsp_schema *schema, const struct rsp_wsnap *snap,
				   uint64_t from, uint64_t to, long pid)
{
	struct rsp_census *c = calloc(1, sizeof(*c));
	struct rsp_timeline_ops ops = {.segment = on_segment};
	struct rsp_pass_opts o = {.from = from, .to = to, .ops = &ops, .ctx = c};
	int ret;

	if (!c)
		return NULL;
	c->pid = pid;
	rsp_kvec__init(&c->threads, sizeof(struct rsp_census_thread));
	rsp_kvec__init(&c->pairs, sizeof(struct pair));
	if (pid >= 0) {
		ops.sched_switch = on_switch;
		ops.waking = on_waking;
		ops.sample = on_sample;
		ops.thread = on_thread;
	}
	ret = rsp_pass__run(schema, snap, &o, &c->st);
	if (!ret && c->failed)
		ret = -ENOMEM;
	if (!ret && pid >= 0)
		ret = collect_wakers(c) ? -ENOMEM : keep_threads(c);
	if (ret) {
		rsp_census__delete(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void rsp_census__delete(struct rsp_census *c)
{
	if (!c)
		return;
	rsp_kvec__exit(&c->threads);
	rsp_kvec__exit(&c->pairs);
	free(c->kept);
	free(c->wakers);
	free(c);
}

const struct rsp_timeline_stats *rsp_census__stats(const struct rsp_census *c)
{
	return &c->st;
}

const struct rsp_census_sleeps *rsp_census__sleeps(const struct rsp_census *c)
{
	return &c->sl;
}

const struct rsp_census_thread *rsp_census__threads(const struct rsp_census *c, size_t *n)
{
	*n = c->nr_kept;
	return c->kept;
}

const struct rsp_census_waker *rsp_census__wakers(const struct rsp_census *c, size_t *n)
{
	*n = c->nr_wakers;
	return c->wakers;
}
