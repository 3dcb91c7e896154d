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

/* Records in the window per catalogue event, and gaps. */
struct event_counts {
	uint64_t n[RSP_EV__NR];
	uint64_t other, lost_records, lost;
};

static void count_events(const struct rsp_source *src, struct event_counts *ec)
{
	struct rsp_wsnap *snap = rsp_window__pin(src->window, 0, UINT64_MAX);
	struct rsp_witer *it = snap ? rsp_witer__new(snap, 0, UINT64_MAX) : NULL;
	struct rsp_wentry e;
	struct rsp_sample smp;

	memset(ec, 0, sizeof(*ec));
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
		if (ret || smp.event < 0)
			ec->other++;
		else
			ec->n[smp.event]++;
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
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
}

struct thread_count {
	uint32_t tid, pid;
	char comm[16];
	uint64_t switches_out, switches_in, wakeups, samples;
	uint64_t run_ns;
};

struct thread_counts {
	struct rsp_u64map map;
	struct thread_count *v;
	size_t n, cap;
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
		return 0;
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
	for (size_t i = 0; i < tc->n; i++)
		if (tc->v[i].pid == (uint32_t)pid)
			tc->v[keep++] = tc->v[i];
	tc->n = keep;
	return err;
}

static const char *family_source(const struct rsp_capture_info *ci, int fam, int *open,
				 int *wanted)
{
	const char *src = "missing";

	*open = *wanted = 0;
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		if ((int)rsp_catalogue__event(ev)->family != fam || !ci->events[ev].wanted)
			continue;
		(*wanted)++;
		if (ci->events[ev].open) {
			(*open)++;
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
				json_object_set_new(e, "fired", json_integer((json_int_t)es->fired));
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

		json_array_append_new(arr, json_pack("{s:i, s:I, s:f, s:I, s:I, s:I}", "cpu",
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

static json_t *json_threads(const struct thread_counts *tc)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < tc->n; i++) {
		const struct thread_count *t = &tc->v[i];

		json_array_append_new(
			arr, json_pack("{s:i, s:i, s:s, s:I, s:I, s:I, s:I, s:f}", "tid",
				       (int)t->tid, "pid", (int)t->pid, "comm", t->comm,
				       "switches_out", (json_int_t)t->switches_out, "switches_in",
				       (json_int_t)t->switches_in, "wakeups",
				       (json_int_t)t->wakeups, "samples", (json_int_t)t->samples,
				       "run_time_s", secs(t->run_ns)));
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
	json_t *o = json_pack("{s:s, s:i, s:f, s:I, s:f, s:f, s:I, s:I, s:f}", "version",
			      ci->version, "pid", (int)ci->pid, "uptime_s", ci->uptime_s,
			      "rss_bytes", (json_int_t)ci->rss_bytes, "cpu_seconds", ci->cpu_seconds,
			      "now_s", secs(ci->now_ns), "records", (json_int_t)ci->records_total,
			      "lost", (json_int_t)ci->lost_total, "records_per_s",
			      ci->records_per_s);

	json_object_set_new(o, "config",
			    json_pack("{s:s, s:s, s:i, s:i}", "stacks", ci->stacks, "callchain",
				      ci->callchain, "sample_freq_hz", (int)ci->sample_freq,
				      "ring_pages", (int)ci->ring_pages));
	json_object_set_new(o, "families", json_families(ci));
	json_object_set_new(o, "cpus", json_cpus(ci));
	return o;
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
	if (pid >= 0) {
		json_object_set_new(o, "query_pid", json_integer(pid));
		json_object_set_new(o, "threads", json_threads(tc));
	}
	if (ec)
		json_object_set_new(o, "events", json_events(ec));
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
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
		rsp_buf__printf(out,
				"  %llu occurrences were counted by the kernel but never sent, beyond\n"
				"  the %llu lost in full rings. This kernel does not sample tracepoints\n"
				"  hit in an interrupt on an idle CPU; analyses mark the wakeups they\n"
				"  could not see as inferred or unknown.\n",
				(unsigned long long)(missing - ci->lost_total),
				(unsigned long long)ci->lost_total);
}

static void text_families(const struct rsp_capture_info *ci, struct rsp_buf *out)
{
	rsp_buf__puts(out, "family    source      events\n");
	for (int fam = 0; fam < RSP_FAM__NR; fam++) {
		int open, wanted;
		const char *src = family_source(ci, fam, &open, &wanted);

		rsp_buf__printf(out, "%-9s %-11s %d/%d\n", rsp_catalogue__family(fam)->name, src,
				open, wanted);
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
	rsp_buf__printf(out, "stacks %s (%s), cpu-clock %u Hz, ring %u pages per CPU\n\n",
			ci->stacks, ci->callchain, ci->sample_freq, ci->ring_pages);
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

static void text_threads(const struct thread_counts *tc, long pid, struct rsp_buf *out)
{
	rsp_buf__printf(out, "\nprocess %ld in the window: %zu thread%s\n", pid, tc->n,
			tc->n == 1 ? "" : "s");
	if (!tc->n)
		return;
	rsp_buf__puts(out,
		      "     tid comm          switch-out switch-in  wakeups  samples    run s\n");
	for (size_t i = 0; i < tc->n; i++) {
		const struct thread_count *t = &tc->v[i];

		rsp_buf__printf(out, "%8u %-16.16s %7llu %9llu %8llu %8llu %8.3f\n", t->tid,
				t->comm, (unsigned long long)t->switches_out,
				(unsigned long long)t->switches_in, (unsigned long long)t->wakeups,
				(unsigned long long)t->samples, secs(t->run_ns));
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

	rsp_u64map__init(&tc.map);
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
	if (o->events)
		text_events(&ec, out);
	if (req->pid >= 0)
		text_threads(&tc, req->pid, out);
out:
	rsp_u64map__exit(&tc.map);
	free(tc.v);
	free(tc.cpu_last);
	return ret;
}

const struct rsp_command rsp_cmd_status = {
	.name = "status",
	.summary = "what rspd captures, rates, losses, the window",
	.usage = "usage: rspctl status [--pid PID] [--events] [--json | --format text|json]\n"
		 "\n"
		 "  --pid PID   also count what the window holds of PID's threads, and\n"
		 "              their run time (from the switches on each CPU)\n"
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
