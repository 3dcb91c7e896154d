// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl status`: what rspd captures, from which source, at what rate, how
 * much was lost, and what the window holds. With --pid, what the window
 * holds of that process's threads (a quick "is my process being seen?").
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <rsp/hist.h>
#include <rsp/perfdata.h>
#include <rsp/record.h>
#include <rsp/tp.h>
#include "internal/fmt.h"
#include "internal/query.h"
#include "internal/u64map.h"

struct status_opts {
	bool events;
};

enum {
	OPT_EVENTS = 1,
};

static const struct rsp_option status_opts[] = {
	{"events", false, OPT_EVENTS},
	{NULL, false, 0},
};

static int status_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct status_opts *o = req->opts;

	if (id == OPT_EVENTS) {
		o->events = true;
		return 0;
	}
	rsp_buf__printf(err, "status: unexpected argument '%s'", arg);
	return -EINVAL;
}

/*
 * How much off-CPU time has a stack: for every sleep (a switch-out with a
 * sleep state) that ends in the window, its length, and whether the
 * switch-out carried a callchain (itself, or through its sampled copy).
 * Tells an operator what the stack policy (rspd --stacks) buys.
 */
struct sleep_cov {
	struct rsp_u64map map; /* tid -> index in pending */
	struct pending_sleep {
		uint64_t since;
		uint64_t copy_at; /* time of a stack copy seen before its primary */
		bool open, stack;
	} * pending;
	size_t n, cap;
	uint64_t sleeps, with_stack, off_ns, stack_ns;
};

#define COPY_SLACK_NS 20000

static struct pending_sleep *cov_get(struct sleep_cov *c, uint64_t tid)
{
	uint32_t idx;

	if (!rsp_u64map__get(&c->map, tid, &idx))
		return &c->pending[idx];
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct pending_sleep *p = realloc(c->pending, cap * sizeof(*p));

		if (!p)
			return NULL;
		c->pending = p;
		c->cap = cap;
	}
	if (rsp_u64map__put(&c->map, tid, (uint32_t)c->n))
		return NULL;
	memset(&c->pending[c->n], 0, sizeof(c->pending[0]));
	return &c->pending[c->n++];
}

static void cov_switch(struct sleep_cov *c, const struct rsp_schema *s,
		       const struct rsp_sample *smp)
{
	struct rsp_tp_sched_switch sw;
	struct pending_sleep *p;

	if (rsp_tp__sched_switch(s, smp, &sw))
		return;
	p = cov_get(c, (uint64_t)sw.prev_pid);
	if (p && smp->role == RSP_ROLE_STACK_COPY) {
		/*
		 * The sampled copy of a switch-out carries its stack. The kernel
		 * fires the evsel attached last first, and each evsel reads the
		 * clock itself: the copy comes just before its primary record,
		 * on the same CPU, a few hundred ns earlier.
		 */
		if (p->open && smp->time - p->since < COPY_SLACK_NS && smp->nr_callchain)
			p->stack = true;
		else if (smp->nr_callchain)
			p->copy_at = smp->time;
		return;
	}
	if (p && sw.prev_pid) {
		p->open = (sw.prev_state & RSP_TASK_STATE_MASK) != 0;
		p->since = smp->time;
		p->stack = smp->nr_callchain > 0 ||
			   (p->copy_at && smp->time - p->copy_at < COPY_SLACK_NS);
		p->copy_at = 0;
	}
	p = cov_get(c, (uint64_t)sw.next_pid);
	if (!p || !p->open || !sw.next_pid)
		return;
	p->open = false;
	c->sleeps++;
	c->off_ns += smp->time - p->since;
	if (p->stack) {
		c->with_stack++;
		c->stack_ns += smp->time - p->since;
	}
}

/* Records in the window per catalogue event, and gaps. */
struct event_counts {
	uint64_t n[RSP_EV__NR];
	uint64_t other, lost_records, lost;
	uint64_t stack_copies; /* sampled:N duplicates carrying a stack */
	struct sleep_cov cov;
};

static void count_events(const struct rsp_source *src, struct event_counts *ec)
{
	struct rsp_wsnap *snap = rsp_window__pin(src->window, 0, UINT64_MAX);
	struct rsp_witer *it = snap ? rsp_witer__new(snap, 0, UINT64_MAX) : NULL;
	struct rsp_wentry e;
	struct rsp_sample smp;

	memset(ec, 0, sizeof(*ec));
	rsp_u64map__init(&ec->cov.map);
	while (it && rsp_witer__next(it, &e)) {
		int ret;

		if (e.rec->type == PERF_RECORD_LOST) {
			ec->lost_records++;
			ec->lost += ((const uint64_t *)(e.rec + 1))[1];
			continue;
		}
		ret = e.rec->type == PERF_RECORD_SAMPLE
			      ? rsp_record__parse_sample(src->schema, e.rec, &smp)
			      : rsp_record__parse_id(src->schema, e.rec, &smp) < 0;
		if (ret || smp.event < 0) {
			ec->other++;
			continue;
		}
		if (smp.role == RSP_ROLE_PRIMARY)
			ec->n[smp.event]++;
		else
			ec->stack_copies++;
		if (smp.event == RSP_EV_sched_switch)
			cov_switch(&ec->cov, src->schema, &smp);
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	rsp_u64map__exit(&ec->cov.map);
	free(ec->cov.pending);
	ec->cov.pending = NULL;
}

static json_t *json_events(const struct event_counts *ec)
{
	json_t *o = json_object();

	for (int ev = 0; ev < RSP_EV__NR; ev++)
		json_object_set_new(o, rsp_catalogue__event(ev)->name,
				    json_integer((json_int_t)ec->n[ev]));
	json_object_set_new(o, "other", json_integer((json_int_t)ec->other));
	json_object_set_new(o, "lost_records", json_integer((json_int_t)ec->lost_records));
	json_object_set_new(o, "lost", json_integer((json_int_t)ec->lost));
	json_object_set_new(o, "stack_copies", json_integer((json_int_t)ec->stack_copies));
	json_object_set_new(o, "sleeps", json_integer((json_int_t)ec->cov.sleeps));
	json_object_set_new(o, "sleeps_with_stack", json_integer((json_int_t)ec->cov.with_stack));
	json_object_set_new(o, "off_cpu_s", json_real((double)ec->cov.off_ns / 1e9));
	json_object_set_new(o, "off_cpu_with_stack_s", json_real((double)ec->cov.stack_ns / 1e9));
	return o;
}

static void text_events(const struct event_counts *ec, struct rsp_buf *out)
{
	rsp_buf__puts(out, "\nrecords in the window by event\n");
	for (int ev = 0; ev < RSP_EV__NR; ev++)
		rsp_buf__printf(out, "  %-22s %12llu\n", rsp_catalogue__event(ev)->name,
				(unsigned long long)ec->n[ev]);
	rsp_buf__printf(out, "  %-22s %12llu\n", "(other)", (unsigned long long)ec->other);
	rsp_buf__printf(out, "  %-22s %12llu (%llu records lost)\n", "(gaps)",
			(unsigned long long)ec->lost_records, (unsigned long long)ec->lost);
	rsp_buf__printf(
		out,
		"sleeps that ended in the window: %llu, %.3f s off CPU\n"
		"  with a stack: %.1f%% of them, %.1f%% of the time\n",
		(unsigned long long)ec->cov.sleeps, (double)ec->cov.off_ns / 1e9,
		ec->cov.sleeps ? 100.0 * (double)ec->cov.with_stack / (double)ec->cov.sleeps : 0.0,
		ec->cov.off_ns ? 100.0 * (double)ec->cov.stack_ns / (double)ec->cov.off_ns : 0.0);
}

struct thread_count {
	uint32_t tid, pid;
	char comm[16];
	uint64_t switches_out, switches_in, wakeups, samples;
	uint64_t run_ns;
};

/* Who woke the process's threads: per waker process. */
struct waker {
	uint32_t pid;
	char comm[16];
	uint64_t wakings;
};

struct thread_counts {
	struct rsp_u64map map;
	struct thread_count *v;
	size_t n, cap;
	/* sched_waking (target tid << 32 | waker tid) -> index into pairs */
	struct rsp_u64map pair_map;
	struct waking_pair {
		uint32_t target, waker;
		uint64_t n;
	} * pairs;
	size_t npairs, pcap;
	struct waker *wakers;
	size_t nwakers;
	/*
	 * Run time: a thread that switches out on a CPU ran there since the
	 * previous switch on that CPU (as perf sched timehist counts it). 0:
	 * not known (no switch seen yet, or a gap in the records since).
	 */
	uint64_t *cpu_last;
	unsigned nr_cpus;
};

static struct thread_count *tc_get(struct thread_counts *tc, uint32_t tid)
{
	uint32_t idx;

	if (!rsp_u64map__get(&tc->map, tid, &idx))
		return &tc->v[idx];
	if (tc->n == tc->cap) {
		size_t cap = tc->cap ? tc->cap * 2 : 64;
		struct thread_count *v = realloc(tc->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		tc->v = v;
		tc->cap = cap;
	}
	if (rsp_u64map__put(&tc->map, tid, (uint32_t)tc->n))
		return NULL;
	memset(&tc->v[tc->n], 0, sizeof(tc->v[0]));
	tc->v[tc->n].tid = tid;
	tc->v[tc->n].pid = UINT32_MAX;
	return &tc->v[tc->n++];
}

static int pair_add(struct thread_counts *tc, uint32_t target, uint32_t waker)
{
	uint64_t key = (uint64_t)target << 32 | waker;
	uint32_t idx;

	if (!rsp_u64map__get(&tc->pair_map, key, &idx)) {
		tc->pairs[idx].n++;
		return 0;
	}
	if (tc->npairs == tc->pcap) {
		size_t cap = tc->pcap ? tc->pcap * 2 : 64;
		struct waking_pair *v = realloc(tc->pairs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		tc->pairs = v;
		tc->pcap = cap;
	}
	if (rsp_u64map__put(&tc->pair_map, key, (uint32_t)tc->npairs))
		return -ENOMEM;
	tc->pairs[tc->npairs++] = (struct waking_pair){target, waker, 1};
	return 0;
}

static void set_comm(struct thread_count *t, struct rsp_str s)
{
	size_t n = s.len < sizeof(t->comm) - 1 ? s.len : sizeof(t->comm) - 1;

	if (!s.ptr || !n)
		return;
	memcpy(t->comm, s.ptr, n);
	t->comm[n] = '\0';
}

/* What the CPU ran since its previous switch goes to the thread leaving it. */
static void account_run(struct thread_counts *tc, struct thread_count *prev,
			const struct rsp_sample *smp)
{
	uint64_t *last;

	if (smp->cpu >= tc->nr_cpus)
		return;
	last = &tc->cpu_last[smp->cpu];
	if (*last && smp->time >= *last)
		prev->run_ns += smp->time - *last;
	*last = smp->time;
}

static int count_switch(struct thread_counts *tc, const struct rsp_schema *s,
			const struct rsp_sample *smp)
{
	struct rsp_tp_sched_switch sw;
	struct thread_count *t;

	if (smp->role != RSP_ROLE_PRIMARY || rsp_tp__sched_switch(s, smp, &sw))
		return 0;
	t = tc_get(tc, (uint32_t)sw.prev_pid);
	if (!t)
		return -ENOMEM;
	account_run(tc, t, smp);
	t->switches_out++;
	set_comm(t, sw.prev_comm);
	if ((uint32_t)sw.prev_pid == smp->tid)
		t->pid = smp->pid;
	t = tc_get(tc, (uint32_t)sw.next_pid);
	if (!t)
		return -ENOMEM;
	t->switches_in++;
	set_comm(t, sw.next_comm);
	return 0;
}

static int count_record(struct thread_counts *tc, const struct rsp_schema *s,
			const struct rsp_wentry *e)
{
	const struct perf_event_header *h = e->rec;
	struct rsp_sample smp;
	struct rsp_tp_sched_waking wk;
	struct thread_count *t;

	if (h->type == PERF_RECORD_LOST && e->cpu < tc->nr_cpus)
		tc->cpu_last[e->cpu] = 0; /* who ran across the gap is unknown */
	if (h->type != PERF_RECORD_SAMPLE || rsp_record__parse_sample(s, h, &smp))
		return 0;
	switch (smp.event) {
	case RSP_EV_sched_switch:
		return count_switch(tc, s, &smp);
	case RSP_EV_sched_waking:
		if (rsp_tp__sched_waking(s, &smp, &wk))
			return 0;
		t = tc_get(tc, (uint32_t)wk.pid);
		if (!t)
			return -ENOMEM;
		t->wakeups++;
		/* The waker is the task running when sched_waking fired. */
		if (smp.tid && (t = tc_get(tc, smp.tid)))
			t->pid = smp.pid;
		return pair_add(tc, (uint32_t)wk.pid, smp.tid);
	case RSP_EV_cpu_clock:
		t = tc_get(tc, smp.tid);
		if (!t)
			return -ENOMEM;
		t->samples++;
		if (smp.tid)
			t->pid = smp.pid;
		return 0;
	default:
		break;
	}
	/* Any other sample tells which process a thread belongs to. */
	if (smp.tid && (t = tc_get(tc, smp.tid)))
		t->pid = smp.pid;
	return 0;
}

static const struct thread_count *tc_find(const struct thread_counts *tc, uint32_t tid)
{
	uint32_t idx;

	return rsp_u64map__get(&tc->map, tid, &idx) ? NULL : &tc->v[idx];
}

static int waker_cmp(const void *a, const void *b)
{
	const struct waker *x = a, *y = b;

	if (x->wakings != y->wakings)
		return x->wakings < y->wakings ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The processes whose threads woke a thread of @pid, with their names. */
static int collect_wakers(struct thread_counts *tc, long pid)
{
	for (size_t i = 0; i < tc->npairs; i++) {
		const struct waking_pair *p = &tc->pairs[i];
		const struct thread_count *t = tc_find(tc, p->target);
		const struct thread_count *w = p->waker ? tc_find(tc, p->waker) : NULL;
		const struct thread_count *leader;
		uint32_t wpid = w ? w->pid : 0;
		size_t j;

		if (!t || t->pid != (uint32_t)pid || (p->waker && (!w || w->pid == UINT32_MAX)))
			continue;
		for (j = 0; j < tc->nwakers && tc->wakers[j].pid != wpid; j++)
			;
		if (j == tc->nwakers) {
			struct waker *v = realloc(tc->wakers, (j + 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			tc->wakers = v;
			memset(&v[j], 0, sizeof(v[j]));
			v[j].pid = wpid;
			leader = tc_find(tc, wpid);
			snprintf(v[j].comm, sizeof(v[j].comm), "%s",
				 !wpid			     ? "(idle)"
				 : leader && leader->comm[0] ? leader->comm
							     : w->comm);
			tc->nwakers++;
		}
		tc->wakers[j].wakings += p->n;
	}
	if (tc->nwakers)
		qsort(tc->wakers, tc->nwakers, sizeof(tc->wakers[0]), waker_cmp);
	return 0;
}

/* Count what the window holds of each thread; keep those of process @pid. */
static int count_threads(const struct rsp_source *src, long pid, struct thread_counts *tc)
{
	struct rsp_wsnap *snap = rsp_window__pin(src->window, 0, UINT64_MAX);
	struct rsp_witer *it = snap ? rsp_witer__new(snap, 0, UINT64_MAX) : NULL;
	struct rsp_wentry e;
	size_t keep = 0;
	int err = 0;

	tc->nr_cpus = rsp_window__nr_cpus(src->window);
	tc->cpu_last = calloc(tc->nr_cpus, sizeof(*tc->cpu_last));
	if (!it || !tc->cpu_last) {
		rsp_witer__delete(it);
		rsp_wsnap__unpin(snap);
		return -ENOMEM;
	}
	while (!err && rsp_witer__next(it, &e))
		err = count_record(tc, src->schema, &e);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	if (!err)
		err = collect_wakers(tc, pid);
	for (size_t i = 0; i < tc->n; i++)
		if (tc->v[i].pid == (uint32_t)pid)
			tc->v[keep++] = tc->v[i];
	tc->n = keep;
	return err;
}

/* Probes say more about a family's source than the tracepoints that come with them. */
static int source_rank(const char *src)
{
	return !strcmp(src, "kprobe") || !strcmp(src, "uprobe") ? 3 : !strcmp(src, "tracepoint") ? 2
												    : 1;
}

static const char *family_source(const struct rsp_capture_info *ci, int fam, int *open, int *wanted)
{
	const char *src = "missing";

	*open = *wanted = 0;
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		if ((int)rsp_catalogue__event(ev)->family != fam || !ci->events[ev].wanted)
			continue;
		(*wanted)++;
		if (ci->events[ev].open) {
			(*open)++;
			if (!strcmp(src, "missing") ||
			    source_rank(ci->events[ev].source) > source_rank(src))
				src = ci->events[ev].source;
		}
	}
	if (!ci->families_on[fam])
		return "off";
	return src;
}

static json_t *json_families(const struct rsp_capture_info *ci)
{
	json_t *arr = json_array();

	for (int fam = 0; fam < RSP_FAM__NR; fam++) {
		json_t *f = json_object(), *evs = json_array();
		int open, wanted;
		const char *src = family_source(ci, fam, &open, &wanted);

		for (int ev = 0; ev < RSP_EV__NR; ev++) {
			const struct rsp_event_status *es = &ci->events[ev];

			if ((int)rsp_catalogue__event(ev)->family != fam)
				continue;
			json_t *e = json_pack("{s:s, s:s, s:b, s:s?}", "name",
					      rsp_catalogue__event(ev)->name, "source", es->source,
					      "open", es->open, "problem",
					      es->problem[0] ? es->problem : NULL);

			if (es->counted) {
				json_object_set_new(e, "fired",
						    json_integer((json_int_t)es->fired));
				json_object_set_new(e, "delivered",
						    json_integer((json_int_t)es->delivered));
			}
			json_array_append_new(evs, e);
		}
		json_object_set_new(f, "name", json_string(rsp_catalogue__family(fam)->name));
		json_object_set_new(f, "enabled", json_boolean(ci->families_on[fam]));
		json_object_set_new(f, "source", json_string(src));
		json_object_set_new(f, "events_open", json_integer(open));
		json_object_set_new(f, "events_wanted", json_integer(wanted));
		if (ci->family_note[fam][0])
			json_object_set_new(f, "note", json_string(ci->family_note[fam]));
		json_object_set_new(f, "events", evs);
		json_array_append_new(arr, f);
	}
	return arr;
}

static json_t *json_cpus(const struct rsp_capture_info *ci)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < ci->nr_cpus; i++) {
		const struct rsp_cpu_status *c = &ci->cpus[i];

		json_array_append_new(arr,
				      json_pack("{s:i, s:I, s:f, s:I, s:I, s:I}", "cpu",
						(int)c->cpu, "records", (json_int_t)c->records,
						"records_per_s", c->records_per_s, "bytes",
						(json_int_t)c->bytes, "lost", (json_int_t)c->lost,
						"lost_events", (json_int_t)c->lost_events));
	}
	return arr;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static json_t *json_window(const struct rsp_window_stats *ws)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "oldest_s", secs(ws->oldest), "newest_s", secs(ws->newest), "span_s",
			 ws->newest > ws->oldest ? secs(ws->newest - ws->oldest) : 0.0,
			 "complete_from_s", secs(ws->complete_from), "bytes",
			 (json_int_t)ws->bytes_used, "budget_bytes", (json_int_t)ws->budget,
			 "allocated_bytes", (json_int_t)ws->bytes_allocated, "chunks",
			 (json_int_t)ws->chunks, "records", (json_int_t)ws->records,
			 "evicted_chunks", (json_int_t)ws->evicted_chunks, "evicted_records",
			 (json_int_t)ws->evicted_records, "dropped", (json_int_t)ws->dropped,
			 "lost_marked", (json_int_t)ws->lost_marked);
}

/* A process in an answer: its name only if the requester may see it. */
static json_t *json_process(const struct rsp_source *src, long pid, const char *comm)
{
	if (!rsp_source__may_see(src, pid))
		return json_pack("{s:I, s:b}", "pid", (json_int_t)pid, "other_user", 1);
	return json_pack("{s:I, s:s}", "pid", (json_int_t)pid, "comm", comm);
}

static json_t *json_threads(const struct rsp_source *src, const struct thread_counts *tc)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < tc->n; i++) {
		const struct thread_count *t = &tc->v[i];
		json_t *o = json_pack("{s:i}", "tid", (int)t->tid);
		json_t *p = json_process(src, t->pid, t->comm);

		json_object_update(o, p);
		json_decref(p);
		json_object_set_new(o, "switches_out", json_integer((json_int_t)t->switches_out));
		json_object_set_new(o, "switches_in", json_integer((json_int_t)t->switches_in));
		json_object_set_new(o, "wakeups", json_integer((json_int_t)t->wakeups));
		json_object_set_new(o, "samples", json_integer((json_int_t)t->samples));
		json_object_set_new(o, "run_time_s", json_real(secs(t->run_ns)));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_wakers(const struct rsp_source *src, const struct thread_counts *tc)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < tc->nwakers; i++) {
		const struct waker *w = &tc->wakers[i];
		json_t *o = json_process(src, w->pid, w->comm);

		json_object_set_new(o, "wakings", json_integer((json_int_t)w->wakings));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* UTC time of a clock value, from the file's wall-clock reference pair. */
static void wall_time(const struct rsp_dump_info *di, uint64_t t, char *buf, size_t n)
{
	/* Unsigned: wraps instead of overflowing on a hostile file's values. */
	uint64_t wall = di->wall_clock_ns + (t - di->clockid_time_ns);
	time_t sec = (time_t)(wall / 1000000000);
	struct tm tm;

	buf[0] = '\0';
	if (di->clock_data && wall <= (uint64_t)INT64_MAX && gmtime_r(&sec, &tm))
		strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *json_event_list(const struct rsp_dump_info *di, bool present)
{
	json_t *arr = json_array();

	for (int ev = 0; ev < RSP_EV__NR; ev++)
		if (di->event_present[ev] == present)
			json_array_append_new(arr, json_string(rsp_catalogue__event(ev)->name));
	return arr;
}

static json_t *json_dump(const struct rsp_dump_info *di)
{
	char from[32], to[32];
	json_t *o;

	wall_time(di, di->first_time, from, sizeof(from));
	wall_time(di, di->last_time, to, sizeof(to));
	o = json_pack("{s:s, s:I, s:b, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:I}",
		      "path", di->path, "file_bytes", (json_int_t)di->file_size, "written_by_rsp",
		      di->written_by_rsp, "version", di->version, "hostname", di->hostname,
		      "os_release", di->os_release, "arch", di->arch, "cpu_desc", di->cpu_desc,
		      "cmdline", di->cmdline, "nr_cpus_online", (int)di->nr_cpus_online,
		      "nr_cpus_avail", (int)di->nr_cpus_avail, "records", (json_int_t)di->records,
		      "process_records", (json_int_t)di->process_records, "perf_records",
		      (json_int_t)di->perf_records);
	json_object_set_new(o, "first_utc", from[0] ? json_string(from) : json_null());
	json_object_set_new(o, "last_utc", to[0] ? json_string(to) : json_null());
	json_object_set_new(o, "events_present", json_event_list(di, true));
	json_object_set_new(o, "events_missing", json_event_list(di, false));
	return o;
}

static json_t *json_capture(const struct rsp_capture_info *ci)
{
	json_t *o =
		json_pack("{s:s, s:i, s:f, s:I, s:f, s:f, s:I, s:I, s:f}", "version", ci->version,
			  "pid", (int)ci->pid, "uptime_s", ci->uptime_s, "rss_bytes",
			  (json_int_t)ci->rss_bytes, "cpu_seconds", ci->cpu_seconds, "now_s",
			  secs(ci->now_ns), "records", (json_int_t)ci->records_total, "lost",
			  (json_int_t)ci->lost_total, "records_per_s", ci->records_per_s);

	json_object_set_new(o, "config",
			    json_pack("{s:s, s:s, s:i, s:i, s:s, s:i}", "stacks", ci->stacks,
				      "callchain", ci->callchain, "sample_freq_hz",
				      (int)ci->sample_freq, "ring_pages", (int)ci->ring_pages,
				      "dwarf", ci->dwarf, "dwarf_stack_bytes", (int)ci->dwarf_stack));
	json_object_set_new(o, "families", json_families(ci));
	json_object_set_new(o, "cpus", json_cpus(ci));
	return o;
}

/* The latency histograms: size, how far they are fed, gaps. */
static json_t *json_hist(const struct rsp_source *src)
{
	struct rsp_hist_stats hs;

	if (!src->hist)
		return json_null();
	rsp_hist_store__stats(src->hist, &hs);
	return json_pack(
		"{s:i, s:I, s:i, s:I, s:I, s:I, s:f, s:i, s:I, s:f, s:f, s:I, s:f, s:I}",
		"resolution", (int)hs.resolution, "profiles", (json_int_t)hs.profiles,
		"max_profiles", (int)hs.max_profiles, "system_and_other", (json_int_t)hs.pinned,
		"evictions", (json_int_t)hs.evictions, "updates", (json_int_t)hs.updates, "slice_s",
		secs(hs.slice_ns), "slices", (int)hs.nr_slices, "slice_overflow",
		(json_int_t)hs.slice_overflow, "progress_s", secs(hs.progress), "behind_s",
		src->now > hs.progress && hs.progress ? secs(src->now - hs.progress) : 0.0, "gaps",
		(json_int_t)hs.gaps, "gap_s", secs(hs.gap_ns), "bytes", (json_int_t)hs.bytes);
}

static void text_hist(const struct rsp_source *src, struct rsp_buf *out)
{
	struct rsp_hist_stats hs;
	char mem[32];

	if (!src->hist) {
		if (!src->offline)
			rsp_buf__puts(out, "\nhistograms: off (rspd --no-hist)\n");
		return;
	}
	rsp_hist_store__stats(src->hist, &hs);
	rsp_fmt__bytes(mem, sizeof(mem), hs.bytes);
	rsp_buf__printf(out,
			"\nhistograms: r=%u, %llu profiles (max %u) + %llu system/other, "
			"%llu evicted\n",
			hs.resolution, (unsigned long long)hs.profiles, hs.max_profiles,
			(unsigned long long)hs.pinned, (unsigned long long)hs.evictions);
	rsp_buf__printf(out, "        %llu latencies, %u slices of %.3g s, %s\n",
			(unsigned long long)hs.updates, hs.nr_slices, secs(hs.slice_ns), mem);
	rsp_buf__printf(out, "        fed up to %.3f (%.3f s behind), %llu gaps (%.3f s)\n",
			secs(hs.progress),
			src->now > hs.progress && hs.progress ? secs(src->now - hs.progress) : 0.0,
			(unsigned long long)hs.gaps, secs(hs.gap_ns));
	if (hs.gaps)
		rsp_buf__puts(out, "  ! the analysis thread fell behind the window: records were "
				   "evicted before they were fed (raise --window)\n");
}

static int render_json(const struct rsp_source *src, const struct rsp_window_stats *ws,
		       const struct thread_counts *tc, long pid, const struct event_counts *ec,
		       struct rsp_buf *out)
{
	json_t *o = src->capture ? json_capture(src->capture) : json_object();
	char *text;
	int err;

	json_object_set_new(o, "offline", json_boolean(src->offline));
	if (src->dump)
		json_object_set_new(o, "dump", json_dump(src->dump));
	json_object_set_new(o, "window", json_window(ws));
	json_object_set_new(o, "hist", json_hist(src));
	if (pid >= 0) {
		json_object_set_new(o, "query_pid", json_integer(pid));
		json_object_set_new(o, "threads", json_threads(src, tc));
		json_object_set_new(o, "woken_by", json_wakers(src, tc));
	}
	if (ec)
		json_object_set_new(o, "events", json_events(ec));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(o);
	if (!text)
		return -ENOMEM;
	err = rsp_buf__puts(out, text);
	free(text);
	return err ? err : rsp_buf__puts(out, "\n");
}

/* Events the kernel counted more often than it sent samples for. */
static void text_shortfall(const struct rsp_capture_info *ci, struct rsp_buf *out)
{
	uint64_t missing = 0;

	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_status *es = &ci->events[ev];

		if (!es->counted || es->fired <= es->delivered)
			continue;
		rsp_buf__printf(out, "  ! %s: the kernel counted %llu, sent %llu\n",
				rsp_catalogue__event(ev)->name, (unsigned long long)es->fired,
				(unsigned long long)es->delivered);
		missing += es->fired - es->delivered;
	}
	if (missing > ci->lost_total)
		rsp_buf__printf(
			out,
			"  %llu occurrences were counted by the kernel but never sent, beyond\n"
			"  the %llu lost in full rings. This kernel does not sample tracepoints\n"
			"  hit in an interrupt on an idle CPU; analyses mark the wakeups they\n"
			"  could not see as inferred or unknown.\n",
			(unsigned long long)(missing - ci->lost_total),
			(unsigned long long)ci->lost_total);
}

/* A family's note, wrapped under 80 columns. */
static void text_note(const char *note, struct rsp_buf *out)
{
	const char *p = note;
	int col = 0;

	rsp_buf__puts(out, "  ");
	col = 2;
	while (*p) {
		size_t w = strcspn(p, " ");

		if (col > 2 && col + 1 + (int)w > 78) {
			rsp_buf__puts(out, "\n    ");
			col = 4;
		} else if (col > 2) {
			rsp_buf__puts(out, " ");
			col++;
		}
		rsp_buf__printf(out, "%.*s", (int)w, p);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	rsp_buf__puts(out, "\n");
}

static void text_families(const struct rsp_capture_info *ci, struct rsp_buf *out)
{
	rsp_buf__puts(out, "family    source      events\n");
	for (int fam = 0; fam < RSP_FAM__NR; fam++) {
		int open, wanted;
		const char *src = family_source(ci, fam, &open, &wanted);

		rsp_buf__printf(out, "%-9s %-11s %d/%d\n", rsp_catalogue__family(fam)->name, src,
				open, wanted);
		if (ci->family_note[fam][0] && ci->families_on[fam])
			text_note(ci->family_note[fam], out);
		for (int ev = 0; ev < RSP_EV__NR; ev++) {
			const struct rsp_event_status *es = &ci->events[ev];

			if ((int)rsp_catalogue__event(ev)->family == fam && es->wanted &&
			    es->problem[0])
				rsp_buf__printf(out, "  ! %s: %s\n", rsp_catalogue__event(ev)->name,
						es->problem);
		}
	}
	text_shortfall(ci, out);
}

static void text_cpus(const struct rsp_capture_info *ci, struct rsp_buf *out)
{
	char b[32];

	rsp_buf__puts(out, "\ncpu     records/s       records         bytes      lost\n");
	for (unsigned i = 0; i < ci->nr_cpus; i++) {
		const struct rsp_cpu_status *c = &ci->cpus[i];

		rsp_fmt__bytes(b, sizeof(b), c->bytes);
		rsp_buf__printf(out, "%-4u %12.0f %13llu %13s %9llu\n", c->cpu, c->records_per_s,
				(unsigned long long)c->records, b, (unsigned long long)c->lost);
	}
	rsp_buf__printf(out, "%-4s %12.0f %13llu %13s %9llu\n", "all", ci->records_per_s,
			(unsigned long long)ci->records_total, "",
			(unsigned long long)ci->lost_total);
}

static void text_capture(const struct rsp_capture_info *ci, struct rsp_buf *out)
{
	char rss[32];

	rsp_fmt__bytes(rss, sizeof(rss), ci->rss_bytes);
	rsp_buf__printf(out, "rspd %s, pid %d, up %.1f s, RSS %s, CPU %.2f s\n", ci->version,
			(int)ci->pid, ci->uptime_s, rss, ci->cpu_seconds);
	rsp_buf__printf(out, "stacks %s (%s), cpu-clock %u Hz, ring %u pages per CPU\n",
			ci->stacks, ci->callchain, ci->sample_freq, ci->ring_pages);
	rsp_buf__printf(out, "user stacks for DWARF: %s (%u bytes)\n\n", ci->dwarf[0] ? ci->dwarf : "none",
			ci->dwarf_stack);
	text_families(ci, out);
	text_cpus(ci, out);
}

static void text_window(const struct rsp_window_stats *ws, uint64_t now, struct rsp_buf *out)
{
	char used[32], budget[32];

	rsp_fmt__bytes(used, sizeof(used), ws->bytes_used);
	rsp_fmt__bytes(budget, sizeof(budget), ws->budget);
	if (!ws->records) {
		rsp_buf__printf(out, "\nwindow: empty, budget %s\n", budget);
		return;
	}
	rsp_buf__printf(out, "\nwindow: %.3f s, %.3f .. %.3f (%.3f s ago)\n",
			secs(ws->newest - ws->oldest), secs(ws->oldest), secs(ws->newest),
			now > ws->newest ? secs(now - ws->newest) : 0.0);
	rsp_buf__printf(out, "        %llu records, %s of %s, %llu chunks\n",
			(unsigned long long)ws->records, used, budget,
			(unsigned long long)ws->chunks);
	rsp_buf__printf(out, "        evicted %llu chunks (%llu records), dropped %llu\n",
			(unsigned long long)ws->evicted_chunks,
			(unsigned long long)ws->evicted_records, (unsigned long long)ws->dropped);
}

static void text_threads(const struct rsp_source *src, const struct thread_counts *tc, long pid,
			 struct rsp_buf *out)
{
	char label[64];

	rsp_buf__printf(out, "\nprocess %ld in the window: %zu thread%s\n", pid, tc->n,
			tc->n == 1 ? "" : "s");
	if (!tc->n)
		return;
	rsp_buf__puts(out,
		      "     tid comm          switch-out switch-in  wakeups  samples    run s\n");
	for (size_t i = 0; i < tc->n; i++) {
		const struct thread_count *t = &tc->v[i];

		rsp_buf__printf(out, "%8u %-16.16s %7llu %9llu %8llu %8llu %8.3f\n", t->tid,
				rsp_source__may_see(src, t->pid) ? t->comm : RSP_OTHER_USER,
				(unsigned long long)t->switches_out,
				(unsigned long long)t->switches_in, (unsigned long long)t->wakeups,
				(unsigned long long)t->samples, secs(t->run_ns));
	}
	if (!tc->nwakers)
		return;
	rsp_buf__puts(out, "\nwoken by (the task running when sched_waking fired)\n");
	for (size_t i = 0; i < tc->nwakers; i++) {
		const struct waker *w = &tc->wakers[i];

		rsp_buf__printf(out, "  %-40s %10llu\n",
				rsp_source__label(src, w->pid, w->comm, label, sizeof(label)),
				(unsigned long long)w->wakings);
	}
}

/* Words of @names, wrapped under 80 columns after @lead. */
static void text_wrapped(struct rsp_buf *out, const char *lead, const struct rsp_dump_info *di,
			 bool present)
{
	size_t col = strlen(lead);
	int n = 0;

	rsp_buf__puts(out, lead);
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const char *name = rsp_catalogue__event(ev)->name;

		if (di->event_present[ev] != present)
			continue;
		if (col + strlen(name) + 1 > 78) {
			rsp_buf__puts(out, "\n        ");
			col = 8;
		}
		rsp_buf__printf(out, " %s", name);
		col += strlen(name) + 1;
		n++;
	}
	rsp_buf__puts(out, n ? "\n" : " (none)\n");
}

static void text_dump(const struct rsp_dump_info *di, struct rsp_buf *out)
{
	char size[32], from[32], to[32];

	rsp_fmt__bytes(size, sizeof(size), di->file_size);
	wall_time(di, di->first_time, from, sizeof(from));
	wall_time(di, di->last_time, to, sizeof(to));
	rsp_buf__printf(out, "perf.data %s (%s)\n", di->path, size);
	rsp_buf__printf(out, "written by %s%s on %s (%s, %s, %u CPUs)\n",
			di->written_by_rsp || !di->version[0] ? "" : "perf ",
			di->version[0] ? di->version : "an unknown tool",
			di->hostname[0] ? di->hostname : "an unknown host",
			di->os_release[0] ? di->os_release : "?", di->arch[0] ? di->arch : "?",
			di->nr_cpus_online);
	if (from[0])
		rsp_buf__printf(out, "records from %s to %s\n", from, to);
	if (di->cmdline[0])
		rsp_buf__printf(out, "command: %.70s%s\n", di->cmdline,
				strlen(di->cmdline) > 70 ? "..." : "");
	rsp_buf__printf(out, "%llu records, %llu process records, %llu perf records\n",
			(unsigned long long)di->records, (unsigned long long)di->process_records,
			(unsigned long long)di->perf_records);
	text_wrapped(out, "events:", di, true);
	text_wrapped(out, "missing:", di, false);
}

static int status_run(const struct rsp_request *req, const struct rsp_source *src,
		      struct rsp_buf *out, struct rsp_buf *err)
{
	const struct status_opts *o = req->opts;
	struct thread_counts tc = {0};
	struct rsp_window_stats ws;
	struct event_counts ec;
	int ret = 0;

	if (req->pid >= 0 && (ret = rsp_source__check_pid(src, "status", req->pid, err)))
		return ret;
	rsp_u64map__init(&tc.map);
	rsp_u64map__init(&tc.pair_map);
	rsp_window__stats(src->window, &ws);
	if (req->pid >= 0)
		ret = count_threads(src, req->pid, &tc);
	if (ret) {
		rsp_buf__puts(err, "status: out of memory while counting threads");
		goto out;
	}
	if (o->events)
		count_events(src, &ec);
	if (req->format == RSP_FMT_JSON) {
		ret = render_json(src, &ws, &tc, req->pid, o->events ? &ec : NULL, out);
		goto out;
	}
	if (src->capture)
		text_capture(src->capture, out);
	else if (src->dump)
		text_dump(src->dump, out);
	else if (src->offline)
		rsp_buf__printf(out, "dump %s\n", src->path ? src->path : "");
	text_window(&ws, src->now, out);
	text_hist(src, out);
	if (o->events)
		text_events(&ec, out);
	if (req->pid >= 0)
		text_threads(src, &tc, req->pid, out);
out:
	rsp_u64map__exit(&tc.map);
	rsp_u64map__exit(&tc.pair_map);
	free(tc.v);
	free(tc.cpu_last);
	free(tc.pairs);
	free(tc.wakers);
	return ret;
}

const struct rsp_command rsp_cmd_status = {
	.name = "status",
	.summary = "what rspd captures, rates, losses, the window",
	.usage = "usage: rspctl status [--pid PID] [--events] [--json | --format text|json]\n"
		 "\n"
		 "  --pid PID   also count what the window holds of PID's threads, and\n"
		 "              their run time (from the switches on each CPU), and\n"
		 "              which processes woke them (PID must be yours unless you\n"
		 "              are root or in rspd's admin group)\n"
		 "  --events    also count the window's records by event, and its gaps\n"
		 "  --json      JSON output (same as --format json)\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl status\n"
		 "  rspctl status --pid 1234 --json\n"
		 "  rspctl status --events\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID,
	.opts = status_opts,
	.opts_size = sizeof(struct status_opts),
	.opt = status_opt,
	.run = status_run,
};
