// SPDX-License-Identifier: GPL-2.0
/*
 * Triggers: the flight recorder keeps the slow moment by itself.
 *
 * Where each condition is evaluated (never by reading the window again):
 *   hist, runnable, offcpu  the histogram thread, after a pass, at most once
 *                           a second: one collect from the profiles' time
 *                           slices it just fed (histthread.c)
 *   stopwatch               the stopwatch poller, on each second it harvests
 *                           (stopwatch.c): that second's slowest call
 *   lost, shed              the trigger thread, once a second: the drain's
 *                           counters and the overhead budget's level
 *   alert                   the metrics listener's POST /v1/trigger
 *
 * A condition met is a fire unless the trigger fired less than its hold-off
 * ago (counted: held_off) or all triggers together fired trigger-rate
 * times in the last minute (counted: rate_limited). A fire logs one line,
 * then its action: log (that line is all), dump (queued for the dump thread
 * once the post-trigger time has passed, so that the dump holds the moments
 * after the trip too; the trip goes into its metadata), or snapshot (the
 * snapshot query of a process, as text and JSON, into the dump directory).
 * Actions run on the trigger thread, never on the thread that evaluated:
 * the histogram thread and the poller only take this module's lock for a
 * few comparisons.
 *
 * Incremental. A hist condition reads each whole slice of the profiles
 * once, as it ends: one collection of the slices that ended since the last
 * evaluation, kept in a ring of the condition's last W (bounded: W / slice
 * + 2 entries of ~0.5 KiB at r=1, 1 KiB at r=2); the condition is tested on
 * the ring merged. A collection over all of W each second cost rspd-hist
 * 8% of a CPU for 100 triggers at pgbench's load (bench/triggers.py).
 * After a fire the ring is emptied, so the same slow call does not fire
 * again once the hold-off ends.
 *
 * A dump that fails (a full disk) is logged once, then counted, until one
 * succeeds: a trigger firing at 3 a.m. on a full disk leaves one line, a
 * counter, and no partial file (dump.c removes its temp file).
 *
 * Lock order: the stopwatches' lock, then this one, then the histogram
 * store's shard locks (a collection), the budget's and the log's. Actions
 * (the dumper, a snapshot's query) run with this lock released.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rsp/file.h>
#include <rsp/hist.h>
#include <rsp/trig_request.h>
#include "histthread.h"
#include "clock.h"
#include "dump.h"
#include "log.h"
#include "rspd.h"
#include "server.h"
#include "syscalls.h"
#include "trigger.h"

#define EVAL_EVERY_NS	 1000000000ull /* hist conditions: once a second */
#define RUNNABLE_OVER_NS 2000000000ull /* runnable: the slices of the last 2 s */

/* What a hist condition keeps of one collection: whole slices [from_no, to_no]. */
struct agg {
	uint64_t from_no, to_no;
	uint64_t count, sum, min, max;
	uint32_t b[RSP_HIST_MAX_BUCKETS];
};

struct trig {
	bool used;
	struct rsp_trig_view v;
	uint64_t uses; /* bumped at each add: a late dump result of a removed one is dropped */
	struct rsp_hist_opsel sel; /* hist: the resolved operation */
	/* hist: the last W of whole slices, a ring of collections; the next slice to read */
	struct agg *ring;
	unsigned ring_len, ring_head, ring_n;
	uint64_t next_no;
	uint64_t last_lost;  /* lost: the total at the last look */
	unsigned last_level; /* shed: the level at the last look */
	/* a pending action: due at due_ns (0: none) */
	uint64_t due_ns;
	struct rspd_dump_trigger pend;
	unsigned inflight; /* actions taken, their outcome not yet known */
	bool failing;	   /* the last dump failed: the next failure is only counted */
};

struct rspd_triggers {
	struct rspd *d;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool running, stop;
	unsigned max;
	struct trig *t;
	uint64_t next_use;
	uint64_t last_hist_eval;
	/* trigger-rate: a token bucket of trigger-rate tokens, refilled over a minute */
	double tokens;
	uint64_t tokens_ns;
	uint64_t posts, refused, unmatched;
};

/* --- fires ---------------------------------------------------------------------- */

/*
 * trigger-rate, a token bucket: a burst of up to trigger-rate fires, then
 * trigger-rate a minute. Takes a token when there is one. Lock held.
 */
static bool over_rate(struct rspd_triggers *T, uint64_t now)
{
	double rate = T->d->cfg.trigger_rate;

	T->tokens += (double)(now - T->tokens_ns) * rate / 60e9;
	if (T->tokens > rate)
		T->tokens = rate;
	T->tokens_ns = now;
	if (T->tokens < 1)
		return true;
	T->tokens -= 1;
	return false;
}

static void act_now(struct rspd_triggers *T, struct trig *t, uint64_t now)
{
	const struct rsp_trig_spec *s = &t->v.spec;

	t->pend.trip_ns = now;
	t->pend.post_ns = s->post_ns;
	t->pend.id = t->uses;
	snprintf(t->pend.name, sizeof(t->pend.name), "%s", s->name);
	snprintf(t->pend.cond, sizeof(t->pend.cond), "%s", s->cond_text);
	snprintf(t->pend.value, sizeof(t->pend.value), "%s", t->v.last_value);
	if (s->action == RSP_TRIG_LOG)
		return;
	/*
	 * A record reaches the window up to a flush interval after its time
	 * (main.c drains the rings that often): wait two more, so that the
	 * window holds the whole post-trigger time when the dump pins it.
	 */
	t->due_ns = now + s->post_ns +
		    (s->action == RSP_TRIG_DUMP ? 2 * T->d->cfg.flush_interval_ns : 0);
	if (!t->due_ns)
		t->due_ns = 1;
	t->v.pending = true;
	pthread_cond_signal(&T->cond);
}

/* @t's condition holds (@value says how): fire, or count why not. Lock held. */
static void fire(struct rspd_triggers *T, struct trig *t, const char *value)
{
	const struct rsp_trig_spec *s = &t->v.spec;
	uint64_t now = rspd_clock__now_ns();

	/* a dump still in its post-trigger time holds the next (rspd keeps one per trigger) */
	if (t->due_ns || (t->v.last_fire_ns && now - t->v.last_fire_ns < s->holdoff_ns)) {
		t->v.held_off++;
		return;
	}
	if (over_rate(T, now)) {
		t->v.rate_limited++;
		return;
	}
	t->v.fires++;
	t->v.last_fire_ns = now;
	snprintf(t->v.last_value, sizeof(t->v.last_value), "%s", value);
	rspd_log__write(RSP_LOG_WARN, "trigger %s: %s (%s)%s%s", s->name, s->cond_text, value,
			s->action == RSP_TRIG_DUMP ? "; dumping the window" : "",
			s->action == RSP_TRIG_SNAPSHOT ? "; saving a snapshot" : "");
	act_now(T, t, now);
}

/* --- hist, runnable, offcpu: the histogram thread ------------------------------ */

static void hist_query(const struct trig *t, struct rsp_hist_query *q)
{
	const struct rsp_trig_cond *c = &t->v.spec.cond;

	memset(q, 0, sizeof(*q));
	q->pid = q->tid = -1;
	q->ops = &t->sel;
	q->nr_ops = 1;
	q->ranged = true;
	q->subjects = 1u << RSP_HSUBJ_SYSTEM;
	if (c->kind == RSP_TRIG_OFFCPU || c->subject == RSP_TRIG_PID) {
		q->subjects = 1u << RSP_HSUBJ_PROCESS;
		q->pid = c->id;
	} else if (c->subject == RSP_TRIG_TID) {
		q->subjects = 1u << RSP_HSUBJ_THREAD;
		q->tid = c->id;
	} else if (c->subject == RSP_TRIG_COMM) {
		q->subjects = 1u << RSP_HSUBJ_COMM;
		q->comm = c->comm;
	}
}

/*
 * Whole slices [@from_no, @to_no] of @t's profile, merged into @a: one
 * collection over the slices no earlier evaluation read.
 */
static void collect_agg(struct rsp_hist_store *st, const struct trig *t, uint64_t from_no,
			uint64_t to_no, struct agg *a)
{
	uint64_t slice = rsp_hist_store__config(st)->slice_ns;
	struct rsp_hist_query q;
	struct rsp_hist_set *set = NULL;
	struct rsp_buf err = RSP_BUF_INIT;

	memset(a, 0, sizeof(*a));
	a->from_no = from_no;
	a->to_no = to_no;
	hist_query(t, &q);
	q.from = from_no * slice;
	q.to = (to_no + 1) * slice - 1;
	if (!rsp_hist_store__collect(st, &q, &set, &err)) {
		for (size_t i = 0; i < set->n; i++) {
			const struct rsp_hist_profile *p = &set->v[i];

			if (!p->count)
				continue;
			if (!a->count || p->min < a->min)
				a->min = p->min;
			if (p->max > a->max)
				a->max = p->max;
			a->count += p->count;
			a->sum += p->sum;
			for (unsigned b = 0; b < RSP_HIST_MAX_BUCKETS; b++)
				a->b[b] += (uint32_t)p->buckets[b]; /* a second's calls: < 2^32 */
		}
	}
	rsp_hist_set__delete(set);
	rsp_buf__exit(&err);
}

/* The ring's slices merged into @p; the time they cover. */
static uint64_t ring_profile(const struct trig *t, unsigned r, uint64_t slice,
			     struct rsp_hist_profile *p)
{
	const struct agg *oldest = &t->ring[t->ring_head];

	memset(p, 0, sizeof(*p));
	p->resolution = r;
	for (unsigned i = 0; i < t->ring_n; i++) {
		const struct agg *a = &t->ring[(t->ring_head + i) % t->ring_len];

		if (a->count && (!p->count || a->min < p->min))
			p->min = a->min;
		if (a->max > p->max)
			p->max = a->max;
		p->count += a->count;
		p->sum += a->sum;
		for (unsigned b = 0; b < RSP_HIST_MAX_BUCKETS; b++)
			p->buckets[b] += a->b[b];
	}
	return t->ring_n ? (t->ring[(t->ring_head + t->ring_n - 1) % t->ring_len].to_no + 1 -
			    oldest->from_no) *
				   slice
			 : 0;
}

/* Append @a, dropping what is older than the condition's window. */
static void ring_push(struct trig *t, const struct agg *a, uint64_t keep_from_no)
{
	if (t->ring_n == t->ring_len) {
		t->ring_head = (t->ring_head + 1) % t->ring_len;
		t->ring_n--;
	}
	t->ring[(t->ring_head + t->ring_n++) % t->ring_len] = *a;
	while (t->ring_n && t->ring[t->ring_head].to_no < keep_from_no) {
		t->ring_head = (t->ring_head + 1) % t->ring_len;
		t->ring_n--;
	}
}

/* Does @p pass @c? Its value, said as people read it, into @value. */
static bool hist_holds(const struct rsp_trig_cond *c, const struct rsp_hist_profile *p,
		       uint64_t span, char *value, size_t n)
{
	static const char *const stat_names[] = {"p99", "p999", "max"};
	char v[32];
	uint64_t ns;

	if (c->kind == RSP_TRIG_OFFCPU) {
		double pct = span ? 100.0 * (double)p->sum / (double)span : 0;

		snprintf(value, n, "%.1f%% of %.0f s asleep on %s", pct, (double)span / 1e9,
			 rsp_hist__sleep_reason_name(c->reason));
		return pct > c->above;
	}
	if (c->stat == RSP_TRIG_COUNT) {
		double rate = span ? (double)p->count * 1e9 / (double)span : 0;

		snprintf(value, n, "%.1f calls/s over %.0f s", rate, (double)span / 1e9);
		return rate > c->above;
	}
	ns = c->stat == RSP_TRIG_MAX
		     ? p->max
		     : rsp_hist__percentile(p->buckets, p->resolution, p->count, p->min, p->max,
					    c->stat == RSP_TRIG_P99 ? 0.99 : 0.999);
	rsp_hist__fmt_ns((double)ns, v, sizeof(v));
	snprintf(value, n, "%s %s of %llu calls over %.0f s", stat_names[c->stat], v,
		 (unsigned long long)p->count, (double)span / 1e9);
	return ns > c->above_ns;
}

static bool evaluates_hist(const struct trig *t)
{
	enum rsp_trig_kind k = t->v.spec.cond.kind;

	return t->used && (k == RSP_TRIG_HIST || k == RSP_TRIG_RUNNABLE || k == RSP_TRIG_OFFCPU);
}

static uint64_t over_of(const struct rsp_trig_cond *c)
{
	return c->kind == RSP_TRIG_RUNNABLE ? RUNNABLE_OVER_NS : c->over_ns;
}

/*
 * The slices that ended since the last evaluation, collected once into the
 * ring; the condition over the ring (the last W of whole slices).
 */
static void eval_hist(struct rspd_triggers *T, struct rsp_hist_store *st, struct trig *t,
		      uint64_t until)
{
	const struct rsp_trig_cond *c = &t->v.spec.cond;
	const struct rsp_hist_config *hc = rsp_hist_store__config(st);
	uint64_t last = until / hc->slice_ns, over_no = over_of(c) / hc->slice_ns, span;
	struct rsp_hist_profile p;
	struct agg a;
	char value[96];

	if (!last || t->next_no > last - 1) /* slice @last is still filling */
		return;
	/* after a long pause (a lagging feed) only the window's own slices */
	if (last > over_no && t->next_no < last - over_no)
		t->next_no = last - over_no;
	collect_agg(st, t, t->next_no, last - 1, &a);
	t->next_no = last;
	ring_push(t, &a, last > over_no ? last - over_no : 0);
	span = ring_profile(t, hc->resolution, hc->slice_ns, &p);
	if (!p.count || !hist_holds(c, &p, span, value, sizeof(value)))
		return;
	fire(T, t, value);
	t->ring_n = 0; /* what tripped it does not fire again */
}

void rspd_triggers__hist(struct rspd *d, uint64_t until)
{
	struct rspd_triggers *T = d->triggers;
	struct rsp_hist_store *st = rspd_histthread__store(d);

	if (!T || !st || until - T->last_hist_eval < EVAL_EVERY_NS)
		return;
	T->last_hist_eval = until; /* only this thread writes it */
	pthread_mutex_lock(&T->lock);
	for (unsigned i = 0; i < T->max; i++)
		if (evaluates_hist(&T->t[i]))
			eval_hist(T, st, &T->t[i], until);
	pthread_mutex_unlock(&T->lock);
}

/* --- stopwatch: the poller ----------------------------------------------------- */

void rspd_triggers__stopwatch(struct rspd *d, const char *name, uint64_t count, uint64_t max_ns)
{
	struct rspd_triggers *T = d->triggers;
	char value[96], v[32];

	if (!T || !count)
		return;
	rsp_hist__fmt_ns((double)max_ns, v, sizeof(v));
	snprintf(value, sizeof(value), "a call took %s (slowest of %llu in a second)", v,
		 (unsigned long long)count);
	pthread_mutex_lock(&T->lock);
	for (unsigned i = 0; i < T->max; i++) {
		struct trig *t = &T->t[i];

		if (t->used && t->v.spec.cond.kind == RSP_TRIG_STOPWATCH &&
		    !strcmp(t->v.spec.cond.name, name) && max_ns > t->v.spec.cond.above_ns)
			fire(T, t, value);
	}
	pthread_mutex_unlock(&T->lock);
}

/* --- lost, shed: the trigger thread -------------------------------------------- */

static uint64_t lost_total(struct rspd *d)
{
	uint64_t n = 0;

	for (int i = 0; i < d->es.nr_rings; i++) {
		struct rsp_cpu_counters *k = &d->drain.cpu[d->es.rings[i].cpu];

		n += atomic_load_explicit(&k->lost, memory_order_relaxed) +
		     atomic_load_explicit(&k->dropped, memory_order_relaxed);
	}
	return n;
}

/* Lock held. */
static void eval_health(struct rspd_triggers *T)
{
	struct rsp_budget_status bs;
	uint64_t lost = lost_total(T->d);
	char value[96];

	rspd_budget__status(&T->d->budget, &bs);
	for (unsigned i = 0; i < T->max; i++) {
		struct trig *t = &T->t[i];
		const struct rsp_trig_cond *c = &t->v.spec.cond;

		if (!t->used)
			continue;
		if (c->kind == RSP_TRIG_LOST) {
			uint64_t delta = lost - t->last_lost;

			t->last_lost = lost;
			snprintf(value, sizeof(value), "%llu records lost in a second",
				 (unsigned long long)delta);
			if ((double)delta > c->above)
				fire(T, t, value);
		} else if (c->kind == RSP_TRIG_SHED) {
			bool rose = bs.level > t->last_level;

			t->last_level = bs.level;
			snprintf(value, sizeof(value), "the overhead budget shed to level %u (%s)",
				 bs.level, rsp_degrade__name(bs.level));
			if (rose && bs.level > c->above)
				fire(T, t, value);
		}
	}
}

/* --- actions: the trigger thread ----------------------------------------------- */

/* snapshot:PID: the query's text and JSON answers, each written whole. */
static void snapshot(struct rspd_triggers *T, const struct rspd_dump_trigger *p, uint32_t pid)
{
	struct rspd *d = T->d;
	char pidarg[16], path[PATH_MAX], files[2][PATH_MAX] = {"", ""};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	int ret = 0;

	snprintf(pidarg, sizeof(pidarg), "%u", pid);
	for (int json = 0; json < 2 && !ret; json++) {
		const char *argv[] = {"snapshot", pidarg, "--json"};

		rsp_buf__reset(&out);
		ret = rspd_server__query_all(d, json ? 3 : 2, argv, &out, &err);
		if (!ret)
			ret = rspd_dump__name(d, d->cfg.dump.dir,
					      json ? ".snapshot.json" : ".snapshot.txt", path,
					      sizeof(path));
		if (!ret)
			ret = rsp_file__write(path, out.data ? out.data : "", out.len,
					      RSP_FILE_NOREPLACE, &err);
		if (!ret)
			snprintf(files[json], sizeof(files[json]), "%s", path);
	}
	if (!ret) {
		rspd_log__write(RSP_LOG_INFO, "trigger %s: wrote %s and %s", p->name, files[0],
				files[1]);
		rspd_dump__retain(d, strrchr(files[1], '/') + 1);
	}
	/* the text file, then the JSON one or the failure: that ends the action */
	if (!ret)
		rspd_triggers__dumped(d, p, 1, files[0], NULL);
	rspd_triggers__dumped(d, p, ret, ret ? NULL : files[1],
			      err.data ? err.data : strerror(-ret));
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

/* The earliest pending action due by @now, taken (copied) from its trigger. Lock held. */
static struct trig *take_due(struct rspd_triggers *T, uint64_t now, uint64_t *next)
{
	for (unsigned i = 0; i < T->max; i++) {
		struct trig *t = &T->t[i];

		if (!t->used || !t->due_ns)
			continue;
		if (t->due_ns <= now) {
			t->due_ns = 0;
			t->inflight++; /* until rspd_triggers__dumped() */
			return t;
		}
		if (t->due_ns < *next)
			*next = t->due_ns;
	}
	return NULL;
}

static void run_action(struct rspd_triggers *T, struct trig *t)
{
	struct rspd_dump_trigger p = t->pend;
	enum rsp_trig_action a = t->v.spec.action;
	uint32_t pid = t->v.spec.snapshot_pid;
	int ret;

	pthread_mutex_unlock(&T->lock);
	if (a == RSP_TRIG_SNAPSHOT) {
		snapshot(T, &p, pid);
	} else if ((ret = rspd_dumper__submit_trigger(T->d, &p))) {
		rspd_triggers__dumped(T->d, &p, ret, NULL,
				      ret == -EBUSY ? "too many dumps are already queued"
						    : strerror(-ret));
	}
	pthread_mutex_lock(&T->lock);
}

static void wait_until(struct rspd_triggers *T, uint64_t next)
{
	uint64_t now = rspd_clock__now_ns();
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (next > now) {
		uint64_t ns = (uint64_t)ts.tv_nsec + (next - now);

		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		pthread_cond_timedwait(&T->cond, &T->lock, &ts);
	}
}

static void *trigger_main(void *arg)
{
	struct rspd_triggers *T = arg;
	uint64_t last_health = rspd_clock__now_ns();
	/* a snapshot is a query: its CPU time is not capture's (the overhead budget) */
	int slot = rspd_budget__asked(T->d, -1, true);

	pthread_setname_np(pthread_self(), "rspd-trigger");
	pthread_mutex_lock(&T->lock);
	while (!T->stop) {
		uint64_t now = rspd_clock__now_ns(), next = last_health + 1000000000ull;
		struct trig *t;

		if (now >= next) {
			eval_health(T);
			last_health = now;
			next = now + 1000000000ull;
		}
		while (!T->stop && (t = take_due(T, now, &next)))
			run_action(T, t);
		if (!T->stop)
			wait_until(T, next);
	}
	pthread_mutex_unlock(&T->lock);
	rspd_budget__asked(T->d, slot, false);
	return NULL;
}

/* --- the table ----------------------------------------------------------------- */

static struct trig *find(struct rspd_triggers *T, const char *name)
{
	for (unsigned i = 0; i < T->max; i++)
		if (T->t[i].used && !strcmp(T->t[i].v.spec.name, name))
			return &T->t[i];
	return NULL;
}

/* The operation of a hist, runnable or offcpu condition, as the store keys it. */
static int resolve(struct rspd *d, const struct rsp_trig_cond *c, struct rsp_hist_opsel *sel,
		   struct rsp_buf *err)
{
	char why[512];
	uint32_t dev;

	memset(sel, 0, sizeof(*sel));
	if (c->kind == RSP_TRIG_RUNNABLE) {
		sel->kind = RSP_HOP_RUNQ;
	} else if (c->kind == RSP_TRIG_OFFCPU) {
		sel->kind = RSP_HOP_OFFCPU;
		sel->arg = c->reason;
	} else if (c->op_dev_name) {
		if (rsp_hist__dev_parse(strchr(c->op, ':') + 1, &dev)) {
			rsp_buf__printf(err,
					"trigger: %s: no such block device on this machine "
					"(see /sys/class/block)",
					c->op);
			return -EINVAL;
		}
		*sel = (struct rsp_hist_opsel){.kind = c->op_kind, .arg = dev};
	} else {
		*sel = (struct rsp_hist_opsel){
			.kind = c->op_kind, .any = c->op_any, .arg = c->op_arg};
	}
	if (sel->kind == RSP_HOP_SYSCALL && !rspd_syscalls__status(d, why, sizeof(why))) {
		rsp_buf__printf(err, "trigger: %s: the syscall family is off (%s)", c->op, why);
		return -EOPNOTSUPP;
	}
	if (!rspd_histthread__store(d)) {
		rsp_buf__puts(err, "trigger: this rspd runs with --no-hist: hist, runnable and "
				   "offcpu conditions read the latency profiles; restart it with "
				   "hist = yes");
		return -EOPNOTSUPP;
	}
	return 0;
}

static bool needs_hist(const struct rsp_trig_cond *c)
{
	return c->kind == RSP_TRIG_HIST || c->kind == RSP_TRIG_RUNNABLE ||
	       c->kind == RSP_TRIG_OFFCPU;
}

/*
 * A hist condition's ring: W / slice collections and two more (each covers
 * at least one slice); it reads from the first slice after it was added.
 */
static int ring_alloc(struct rspd_triggers *T, struct trig *t)
{
	struct rsp_hist_store *st = rspd_histthread__store(T->d);
	uint64_t slice = rsp_hist_store__config(st)->slice_ns;

	t->ring_len = (unsigned)(over_of(&t->v.spec.cond) / slice) + 2;
	t->ring = calloc(t->ring_len, sizeof(*t->ring));
	t->next_no = rspd_histthread__read_to(T->d) / slice + 1;
	return t->ring ? 0 : -ENOMEM;
}

static void trig_clear(struct trig *t)
{
	free(t->ring);
	memset(t, 0, sizeof(*t));
}

/* Lock held. */
static int add(struct rspd_triggers *T, const struct rsp_trig_spec *s, bool from_config,
	       struct rsp_buf *err)
{
	struct rsp_hist_opsel sel = {0};
	struct trig *t = NULL;

	if (find(T, s->name)) {
		rsp_buf__printf(err,
				"trigger add: '%s' exists; remove it first (rspctl trigger rm "
				"%s)",
				s->name, s->name);
		return -EEXIST;
	}
	if (needs_hist(&s->cond) && resolve(T->d, &s->cond, &sel, err))
		return -EINVAL;
	if (s->cond.kind == RSP_TRIG_ALERT && !T->d->cfg.trigger_webhook)
		rspd_log__write(RSP_LOG_WARN,
				"trigger %s: an alert condition, but "
				"trigger-webhook is off: nothing will post to it",
				s->name);
	for (unsigned i = 0; i < T->max && !t; i++)
		if (!T->t[i].used)
			t = &T->t[i];
	if (!t) {
		rsp_buf__printf(err,
				"trigger add: rspd has %u triggers, its trigger-max; remove "
				"one first",
				T->max);
		return -ENOSPC;
	}
	trig_clear(t);
	t->used = true;
	t->uses = ++T->next_use;
	t->v.spec = *s;
	t->v.from_config = from_config;
	t->sel = sel;
	t->last_lost = lost_total(T->d);
	if (needs_hist(&s->cond) && ring_alloc(T, t)) {
		trig_clear(t);
		rsp_buf__puts(err, "trigger add: rspd is out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int request_add(struct rspd_triggers *T, const struct rsp_trig_spec *s, struct rsp_buf *out,
		       struct rsp_buf *err)
{
	int ret;

	pthread_mutex_lock(&T->lock);
	ret = add(T, s, false, err);
	pthread_mutex_unlock(&T->lock);
	if (ret)
		return ret;
	rspd_log__write(RSP_LOG_INFO, "trigger %s added: %s", s->name, s->cond_text);
	return rsp_buf__printf(out, "trigger %s: %s\n", s->name, s->cond_text);
}

static int request_rm(struct rspd_triggers *T, const char *name, struct rsp_buf *out,
		      struct rsp_buf *err)
{
	struct trig *t;

	pthread_mutex_lock(&T->lock);
	t = find(T, name);
	if (t)
		trig_clear(t);
	pthread_mutex_unlock(&T->lock);
	if (!t) {
		rsp_buf__printf(err, "trigger rm: no trigger '%s' (rspctl trigger list)", name);
		return -ENOENT;
	}
	rspd_log__write(RSP_LOG_INFO, "trigger %s removed", name);
	return rsp_buf__printf(out, "removed trigger %s\n", name);
}

int rspd_triggers__views(struct rspd *d, struct rsp_trig_view **v, unsigned *n,
			 struct rsp_trig_totals *tot)
{
	struct rspd_triggers *T = d->triggers;
	unsigned used = 0;

	*v = NULL;
	*n = 0;
	memset(tot, 0, sizeof(*tot));
	if (!T)
		return 0;
	pthread_mutex_lock(&T->lock);
	for (unsigned i = 0; i < T->max; i++)
		used += T->t[i].used;
	*v = used ? calloc(used, sizeof(**v)) : NULL;
	if (used && !*v) {
		pthread_mutex_unlock(&T->lock);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < T->max && *n < used; i++)
		if (T->t[i].used)
			(*v)[(*n)++] = T->t[i].v;
	tot->nr = *n;
	tot->max = T->max;
	tot->rate_per_min = d->cfg.trigger_rate;
	tot->webhook_on = d->cfg.trigger_webhook;
	tot->webhook_posts = T->posts;
	tot->webhook_refused = T->refused;
	tot->webhook_unmatched = T->unmatched;
	pthread_mutex_unlock(&T->lock);
	return 0;
}

int rspd_triggers__request(struct rspd *d, const struct rsp_trig_request *r, bool admin,
			   struct rsp_buf *out, struct rsp_buf *err)
{
	struct rspd_triggers *T = d->triggers;
	struct rsp_trig_totals tot;
	struct rsp_trig_view *v;
	unsigned n;
	int ret;

	if (!T) {
		rsp_buf__puts(err, "trigger: rspd is out of memory");
		return -ENOMEM;
	}
	if (r->op != RSP_TRIG_LIST && !admin) {
		rsp_buf__printf(
			err,
			"trigger: only root and members of rspd's admin group (%s) may add "
			"or remove triggers: a trigger's dump holds every process's records",
			d->cfg.admin_group[0] ? d->cfg.admin_group : "none configured");
		return -EACCES;
	}
	if (r->op == RSP_TRIG_ADD)
		return request_add(T, &r->spec, out, err);
	if (r->op == RSP_TRIG_RM)
		return request_rm(T, r->name, out, err);
	if (rspd_triggers__views(d, &v, &n, &tot))
		return rsp_buf__puts(err, "trigger: rspd is out of memory"), -ENOMEM;
	ret = rsp_trig__render_list(v, n, &tot, rspd_clock__now_ns(), r->json, out);
	free(v);
	return ret;
}

/* --- results -------------------------------------------------------------------- */

void rspd_triggers__dumped(struct rspd *d, const struct rspd_dump_trigger *p, int status,
			   const char *path, const char *why)
{
	struct rspd_triggers *T = d->triggers;
	struct trig *t;

	if (!T)
		return;
	pthread_mutex_lock(&T->lock);
	t = find(T, p->name);
	if (t && t->uses != p->id)
		t = NULL;		     /* removed (and maybe added again) meanwhile */
	if (t && status <= 0 && t->inflight) /* 1: one file of several, the action goes on */
		t->inflight--;
	if (t)
		t->v.pending = t->due_ns || t->inflight;
	if (t && status < 0) {
		t->v.failed++;
		if (!t->failing)
			rspd_log__write(RSP_LOG_ERR,
					"trigger %s: its %s was not written: %s; further failures "
					"are only counted (rspctl trigger list) until one succeeds",
					p->name,
					t->v.spec.action == RSP_TRIG_DUMP ? "dump" : "snapshot",
					why);
		t->failing = true;
	} else if (t) {
		t->failing = false;
		memmove(&t->v.files[1], &t->v.files[0],
			sizeof(t->v.files[0]) * (RSP_TRIG_FILES_KEPT - 1));
		snprintf(t->v.files[0], sizeof(t->v.files[0]), "%.*s", (int)strcspn(path, "\n"),
			 path);
		if (t->v.nr_files < RSP_TRIG_FILES_KEPT)
			t->v.nr_files++;
	}
	pthread_mutex_unlock(&T->lock);
}

/* --- the webhook ---------------------------------------------------------------- */

/* Lock held: the triggers one firing alert names; how many fired or were held off. */
static unsigned fire_alert(struct rspd_triggers *T, const struct rsp_am_alert *a)
{
	char value[96];
	unsigned n = 0;

	snprintf(value, sizeof(value), "alert %.40s%s%.40s", a->alertname,
		 a->instance[0] ? " on " : "", a->instance);
	for (unsigned i = 0; i < T->max; i++) {
		struct trig *t = &T->t[i];
		const struct rsp_trig_cond *c = &t->v.spec.cond;
		bool named = a->rsp_trigger[0] && !strcmp(a->rsp_trigger, t->v.spec.name);
		bool alert = c->kind == RSP_TRIG_ALERT &&
			     (!c->name[0] || !strcmp(c->name, a->alertname));

		if (t->used && (named || (!a->rsp_trigger[0] && alert))) {
			fire(T, t, value);
			n++;
		}
	}
	return n;
}

int rspd_triggers__webhook(struct rspd *d, const char *body, size_t len, struct rsp_buf *out)
{
	struct rspd_triggers *T = d->triggers;
	struct rsp_am_payload *p = calloc(1, sizeof(*p));
	unsigned matched = 0, firing = 0;

	if (!T || !p) {
		free(p);
		return rsp_buf__puts(out, "rspd is out of memory"), -ENOMEM;
	}
	if (rsp_am_payload__parse(body, len, p, out)) {
		rspd_triggers__refused(d);
		free(p);
		return -EINVAL;
	}
	pthread_mutex_lock(&T->lock);
	T->posts++;
	for (unsigned i = 0; i < p->nr; i++) {
		unsigned m = p->alerts[i].firing ? fire_alert(T, &p->alerts[i]) : 0;

		firing += p->alerts[i].firing;
		matched += m;
		if (p->alerts[i].firing && !m)
			T->unmatched++;
	}
	pthread_mutex_unlock(&T->lock);
	rsp_buf__printf(out, "%u firing alerts of %u met %u triggers", firing, p->nr, matched);
	free(p);
	return 0;
}

void rspd_triggers__refused(struct rspd *d)
{
	struct rspd_triggers *T = d->triggers;

	if (!T)
		return;
	pthread_mutex_lock(&T->lock);
	T->refused++;
	pthread_mutex_unlock(&T->lock);
}

/* --- start, stop ---------------------------------------------------------------- */

static int add_configured(struct rspd_triggers *T, char *err, size_t errlen)
{
	const struct rspd_config *c = &T->d->cfg;

	for (unsigned i = 0; i < c->nr_triggers; i++) {
		struct rsp_buf e = RSP_BUF_INIT;
		int ret = add(T, &c->triggers[i], true, &e);

		if (ret) {
			snprintf(err, errlen, "configuration: %s",
				 e.data ? e.data : "out of memory");
			rsp_buf__exit(&e);
			return ret;
		}
		rsp_buf__exit(&e);
	}
	return 0;
}

int rspd_triggers__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_triggers *T = calloc(1, sizeof(*T));
	int ret;

	if (T)
		T->t = calloc(d->cfg.trigger_max, sizeof(*T->t));
	if (!T || !T->t) {
		free(T);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	T->d = d;
	T->max = d->cfg.trigger_max;
	T->tokens = d->cfg.trigger_rate;
	T->tokens_ns = rspd_clock__now_ns();
	pthread_mutex_init(&T->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&T->cond, &ca);
	pthread_condattr_destroy(&ca);
	d->triggers = T;
	ret = add_configured(T, err, errlen);
	if (!ret) {
		ret = -pthread_create(&T->thread, NULL, trigger_main, T);
		if (ret)
			snprintf(err, errlen, "cannot start the trigger thread: %s",
				 strerror(-ret));
	}
	T->running = !ret;
	return ret;
}

void rspd_triggers__stop(struct rspd *d)
{
	struct rspd_triggers *T = d->triggers;

	if (!T || !T->running)
		return;
	pthread_mutex_lock(&T->lock);
	T->stop = true;
	pthread_cond_signal(&T->cond);
	pthread_mutex_unlock(&T->lock);
	pthread_join(T->thread, NULL);
	T->running = false;
	for (unsigned i = 0; i < T->max; i++)
		if (T->t[i].used && T->t[i].due_ns)
			rspd_log__write(RSP_LOG_INFO,
					"trigger %s: stopping before its post-trigger time ended: "
					"no dump",
					T->t[i].v.spec.name);
}

void rspd_triggers__delete(struct rspd *d)
{
	struct rspd_triggers *T = d->triggers;

	if (!T)
		return;
	rspd_triggers__stop(d);
	d->triggers = NULL;
	for (unsigned i = 0; i < T->max; i++)
		trig_clear(&T->t[i]);
	pthread_cond_destroy(&T->cond);
	pthread_mutex_destroy(&T->lock);
	free(T->t);
	free(T);
}
