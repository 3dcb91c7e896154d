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
#include <stdio.h>
#include <rsp/census.h>
#include <rsp/hist.h>
#include <rsp/perfdata.h>
#include <rsp/symbols.h>
#include <rsp/trig_request.h>
#include <rsp/wkind.h>
#include "internal/cgroupq.h"
#include "internal/fmt.h"
#include "internal/json.h"
#include "internal/query.h"
#include "internal/redact.h"

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

static json_t *json_events(const struct rsp_census *cs)
{
	const struct rsp_timeline_stats *st = rsp_census__stats(cs);
	const struct rsp_census_sleeps *sl = rsp_census__sleeps(cs);
	json_t *o = json_object();

	for (int ev = 0; ev < RSP_EV__NR; ev++)
		rsp_json__set_u64(o, rsp_catalogue__event(ev)->name, st->events[ev]);
	rsp_json__set_u64(o, "other", st->other);
	rsp_json__set_u64(o, "lost_records", st->lost_records);
	rsp_json__set_u64(o, "lost", st->lost);
	rsp_json__set_u64(o, "stack_copies", st->stack_copies);
	rsp_json__set_u64(o, "sleeps", sl->sleeps);
	rsp_json__set_u64(o, "sleeps_with_stack", sl->with_stack);
	rsp_json__set_secs(o, "off_cpu_s", sl->sleep_ns);
	rsp_json__set_secs(o, "off_cpu_with_stack_s", sl->stack_ns);
	return o;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void text_events(const struct rsp_census *cs, struct rsp_buf *out)
{
	const struct rsp_timeline_stats *st = rsp_census__stats(cs);
	const struct rsp_census_sleeps *sl = rsp_census__sleeps(cs);

	rsp_buf__puts(out, "\nrecords in the window by event\n");
	for (int ev = 0; ev < RSP_EV__NR; ev++)
		rsp_buf__printf(out, "  %-22s %12llu\n", rsp_catalogue__event(ev)->name,
				(unsigned long long)st->events[ev]);
	rsp_buf__printf(out, "  %-22s %12llu\n", "(other)", (unsigned long long)st->other);
	rsp_buf__printf(out, "  %-22s %12llu (%llu records lost)\n", "(gaps)",
			(unsigned long long)st->lost_records, (unsigned long long)st->lost);
	rsp_buf__printf(out,
			"sleeps that ended in the window: %llu, %.3f s asleep\n"
			"  with a stack: %.1f%% of them, %.1f%% of the time\n",
			(unsigned long long)sl->sleeps, (double)sl->sleep_ns / 1e9,
			pct(sl->with_stack, sl->sleeps), pct(sl->stack_ns, sl->sleep_ns));
}

/* The census of the whole window: by event, or of @pid's threads (pid -1: none). */
static struct rsp_census *take_census(const struct rsp_source *src, long pid)
{
	struct rsp_wsnap *snap = rsp_window__pin(src->window, 0, UINT64_MAX);
	struct rsp_census *cs =
		snap ? rsp_census__new(src->schema, snap, 0, UINT64_MAX, pid) : NULL;

	rsp_wsnap__unpin(snap);
	return cs;
}

/* Probes say more about a family's source than the tracepoints that come with them. */
static int source_rank(const char *src)
{
	return !strcmp(src, "kprobe") || !strcmp(src, "uprobe") ? 3
	       : !strcmp(src, "tracepoint")			? 2
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
	if (fam == RSP_FAM_SYSCALL)
		return "bpf"; /* no records: raw_syscalls aggregated in the kernel */
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

/* The kinds the window holds, most bytes first (ties by kind); their count. */
static size_t kinds_by_bytes(const struct rsp_window_stats *ws, unsigned *idx)
{
	size_t n = 0;

	for (unsigned k = 0; k < RSP_WINDOW_KINDS; k++) {
		size_t i = n++;

		if (!ws->kinds[k].records) {
			n--;
			continue;
		}
		for (; i > 0 && ws->kinds[idx[i - 1]].bytes < ws->kinds[k].bytes; i--)
			idx[i] = idx[i - 1];
		idx[i] = k;
	}
	return n;
}

/* What each kind of record takes of the window (they add up to its records and bytes). */
static json_t *json_kinds(const struct rsp_source *src, const struct rsp_window_stats *ws)
{
	unsigned idx[RSP_WINDOW_KINDS];
	size_t n = kinds_by_bytes(ws, idx);
	json_t *arr = json_array();
	char name[80];

	for (size_t i = 0; i < n; i++) {
		const struct rsp_wkind_count *c = &ws->kinds[idx[i]];
		json_t *o = json_object();

		rsp_json__set_str(o, "kind",
				  rsp_wkind__name(src->schema, idx[i], name, sizeof(name)));
		rsp_json__set_u64(o, "records", c->records);
		rsp_json__set_u64(o, "bytes", c->bytes);
		rsp_json__set_real(o, "bytes_per_record", (double)c->bytes / (double)c->records);
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_window(const struct rsp_window_stats *ws)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f}", "stored_bytes",
			      (json_int_t)ws->bytes_stored, "compressed_chunks",
			      (json_int_t)ws->compressed_chunks, "compressed_raw_bytes",
			      (json_int_t)ws->compressed_raw, "compressed_bytes",
			      (json_int_t)ws->compressed_bytes, "compress_kept_raw",
			      (json_int_t)ws->zkept_raw, "compress_seconds", ws->zseconds);
	json_t *w = json_pack("{s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "oldest_s", secs(ws->oldest), "newest_s", secs(ws->newest), "span_s",
			      ws->newest > ws->oldest ? secs(ws->newest - ws->oldest) : 0.0,
			      "complete_from_s", secs(ws->complete_from), "bytes",
			      (json_int_t)ws->bytes_used, "budget_bytes", (json_int_t)ws->budget,
			      "allocated_bytes", (json_int_t)ws->bytes_allocated, "chunks",
			      (json_int_t)ws->chunks, "records", (json_int_t)ws->records,
			      "evicted_chunks", (json_int_t)ws->evicted_chunks, "evicted_records",
			      (json_int_t)ws->evicted_records, "dropped", (json_int_t)ws->dropped,
			      "lost_marked", (json_int_t)ws->lost_marked);

	if (w && o)
		json_object_update(w, o);
	json_decref(o);
	return w;
}

/* A thread or process in an answer: its name only if the requester may see it. */
static json_t *json_process(struct rsp_redact *r, uint32_t tid, uint32_t pid, const char *comm)
{
	if (rsp_redact__hidden(r, tid, pid))
		return json_pack("{s:I, s:b}", "pid", (json_int_t)pid, "other_user", 1);
	return json_pack("{s:I, s:s}", "pid", (json_int_t)pid, "comm", comm);
}

/* The process model (--pid: each process's cgroup and namespaced pid); NULL without one. */
static const struct rsp_maps *model(const struct rsp_source *src)
{
	return src->symbols ? rsp_symbolizer__maps(src->symbols) : NULL;
}

static json_t *json_threads(struct rsp_redact *r, const struct rsp_census *cs,
			    const struct rsp_source *src)
{
	json_t *arr = json_array();
	size_t n;
	const struct rsp_census_thread *v = rsp_census__threads(cs, &n);

	for (size_t i = 0; i < n; i++) {
		const struct rsp_census_thread *t = &v[i];
		json_t *o = json_pack("{s:i}", "tid", (int)t->tid);
		json_t *p = json_process(r, t->tid, t->pid == UINT32_MAX ? 0 : t->pid, t->comm);

		json_object_update(o, p);
		json_decref(p);
		if (!rsp_redact__hidden(r, t->tid, t->pid == UINT32_MAX ? 0 : t->pid))
			rsp_cgroupq__json(o, model(src), t->pid, src->now);
		rsp_json__set_u64(o, "switches_out", t->switches_out);
		rsp_json__set_u64(o, "switches_in", t->switches_in);
		rsp_json__set_u64(o, "wakeups", t->wakeups);
		rsp_json__set_u64(o, "samples", t->samples);
		rsp_json__set_secs(o, "run_time_s", t->run_ns);
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *json_wakers(struct rsp_redact *r, const struct rsp_census *cs,
			   const struct rsp_source *src)
{
	json_t *arr = json_array();
	size_t n;
	const struct rsp_census_waker *v = rsp_census__wakers(cs, &n);

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_process(r, v[i].pid, v[i].pid, v[i].comm);

		if (v[i].pid && !rsp_redact__hidden(r, v[i].pid, v[i].pid))
			rsp_cgroupq__json(o, model(src), v[i].pid, src->now);

		rsp_json__set_u64(o, "wakings", v[i].wakings);
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

/* RSP_PD_FEAT_RSP_TRIGGER: what made the dump (null: no trigger did). */
static json_t *json_dump_trigger(const struct rsp_dump_info *di)
{
	char at[32];

	if (!di->has_trigger)
		return json_null();
	wall_time(di, di->trigger_time, at, sizeof(at));
	return json_pack("{s:s, s:s, s:s, s:f, s:s?, s:f}", "name", di->trigger_name, "condition",
			 di->trigger_condition, "value", di->trigger_value, "trip_s",
			 secs(di->trigger_time), "trip_utc", at[0] ? at : NULL, "post_s",
			 secs(di->trigger_post_ns));
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
	/* RSP_PD_FEAT_RSP_HOST: what rspctl merge needs (null: an older dump) */
	json_object_set_new(o, "boot_id", di->has_host ? json_string(di->boot_id) : json_null());
	json_object_set_new(o, "host_sockets",
			    di->has_host ? json_integer((json_int_t)di->nr_sockets) : json_null());
	json_object_set_new(o, "trigger", json_dump_trigger(di));
	return o;
}

/* What the timeline infers capture did not deliver; null when nothing feeds it. */
static json_t *json_delivery(const struct rsp_delivery_status *d)
{
	if (!d->valid)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I}", "switches", (json_int_t)d->switches,
			 "switch_outs_not_seen", (json_int_t)d->switch_outs_not_seen,
			 "switch_ins_not_seen", (json_int_t)d->switch_ins_not_seen,
			 "wakings_not_seen", (json_int_t)d->wakings_not_seen);
}

/* The overhead budget: the cost, the level, its changes. */
static json_t *json_budget(const struct rsp_budget_status *b)
{
	json_t *o, *ch = json_array();

	for (unsigned i = 0; ch && i < b->nr_changes; i++) {
		const struct rsp_budget_change *c = &b->changes[i];

		json_array_append_new(ch, json_pack("{s:f, s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f}",
						    "time_s", (double)c->time_ns / 1e9, "from",
						    (int)c->from, "to", (int)c->to, "to_name",
						    rsp_degrade__name(c->to), "cost_pct",
						    c->cost_pct, "rspd_pct", c->rspd_pct, "bpf_pct",
						    c->bpf_pct, "query_pct", c->query_pct,
						    "unshed_bpf_pct", c->unshed_bpf_pct));
	}
	o = json_pack("{s:b, s:f, s:f, s:f, s:f, s:f, s:i, s:s, s:f, s:I, s:o}", "enforced",
		      b->enabled, "budget_pct", b->budget_pct, "cost_pct", b->cost_pct, "rspd_pct",
		      b->rspd_pct, "bpf_pct", b->bpf_pct, "cost_max_pct", b->cost_max_pct, "level",
		      (int)b->level, "level_name", rsp_degrade__name(b->level), "since_s",
		      (double)b->since_ns / 1e9, "changes_total", (json_int_t)b->changes_total,
		      "changes", ch ? ch : json_array());
	if (o && b->note[0])
		json_object_set_new(o, "note", json_string(b->note));
	if (o) { /* of bpf_pct: the syscall family's and the stopwatches' programs */
		json_object_set_new(o, "syscall_bpf_pct", json_real(b->syscall_pct));
		json_object_set_new(o, "stopwatch_bpf_pct", json_real(b->stopwatch_pct));
		json_object_set_new(o, "syscall_bpf_ns", json_integer((json_int_t)b->syscall_ns));
		json_object_set_new(o, "stopwatch_bpf_ns",
				    json_integer((json_int_t)b->stopwatch_ns));
		json_object_set_new(o, "query_pct", json_real(b->query_pct));
	}
	return o;
}

static void text_note(const char *note, struct rsp_buf *out);

static void text_budget(const struct rsp_budget_status *b, uint64_t now, struct rsp_buf *out)
{
	if (b->budget_pct <= 0)
		return;
	rsp_buf__printf(
		out,
		"overhead: %.1f%% of a CPU (rspd %.1f%%, BPF %.1f%%; at most %.1f%%), budget "
		"%.1f%%: %s",
		b->cost_pct, b->rspd_pct, b->bpf_pct, b->cost_max_pct, b->budget_pct,
		b->enabled ? rsp_degrade__name(b->level) : "not enforced");
	if (b->enabled && b->level)
		rsp_buf__printf(out, " since %.1f s ago",
				now > b->since_ns ? (double)(now - b->since_ns) / 1e9 : 0.0);
	rsp_buf__printf(out, ", %llu changes\n", (unsigned long long)b->changes_total);
	if (b->syscall_ns || b->stopwatch_ns)
		rsp_buf__printf(out,
				"  of BPF: syscall profiles %.2f%%, stopwatches %.2f%% (run time "
				"since start %.3f s, %.3f s)\n",
				b->syscall_pct, b->stopwatch_pct, (double)b->syscall_ns / 1e9,
				(double)b->stopwatch_ns / 1e9);
	if (b->query_pct >= 0.05)
		rsp_buf__printf(out,
				"  of rspd: queries %.1f%% (asked for: not shed by the budget)\n",
				b->query_pct);
	if (b->note[0])
		text_note(b->note, out);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* The stack cache's bookkeeping (null where the backend has none). */
static json_t *json_stack(const struct rsp_stack_status *s)
{
	json_t *o;

	if (!s->valid)
		return json_null();
	o = json_pack("{s:b, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f}",
		      "check", s->check, "refresh", (int)s->refresh, "sites", (json_int_t)s->sites,
		      "walked", (json_int_t)s->walked, "cached", (json_int_t)s->cached, "no_key",
		      (json_int_t)s->no_key, "kernel_checks", (json_int_t)s->kchecks,
		      "kernel_differ", (json_int_t)s->kdiffer, "user_checks",
		      (json_int_t)s->uchecks, "user_differ", (json_int_t)s->udiffer, "walk_errors",
		      (json_int_t)s->walk_errors, "walked_share", share(s->walked, s->sites),
		      "kernel_differ_rate", share(s->kdiffer, s->kchecks), "user_differ_rate",
		      share(s->udiffer, s->uchecks));
	if (o && s->have_time)
		json_object_set_new(
			o, "sleep_time",
			json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "sleep_s", s->sleep_s,
				  "cached_s", s->cached_s, "checked_s", s->checked_s,
				  "stack_differ_s", s->stack_differ_s, "reason_differ_s",
				  s->reason_differ_s, "stack_differ_share",
				  s->checked_s > 0 ? s->stack_differ_s / s->checked_s : 0.0,
				  "reason_differ_share",
				  s->checked_s > 0 ? s->reason_differ_s / s->checked_s : 0.0));
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

	json_object_set_new(o, "skipped_nested", json_integer((json_int_t)ci->skipped_nested));
	json_object_set_new(o, "folded", json_integer((json_int_t)ci->folded));
	json_object_set_new(o, "carried", json_integer((json_int_t)ci->carried));
	json_object_set_new(o, "delivery", json_delivery(&ci->delivery));
	json_object_set_new(o, "config",
			    json_pack("{s:s, s:s, s:i, s:i, s:s, s:i}", "stacks", ci->stacks,
				      "callchain", ci->callchain, "sample_freq_hz",
				      (int)ci->sample_freq, "ring_pages", (int)ci->ring_pages,
				      "dwarf", ci->dwarf, "dwarf_stack_bytes",
				      (int)ci->dwarf_stack));
	json_object_set_new(json_object_get(o, "config"), "capture",
			    json_string(ci->backend[0] ? ci->backend : "perf"));
	if (ci->backend_note[0])
		json_object_set_new(json_object_get(o, "config"), "capture_note",
				    json_string(ci->backend_note));
	if (ci->capture_cgroup[0])
		json_object_set_new(json_object_get(o, "config"), "capture_cgroup",
				    json_string(ci->capture_cgroup));
	if (ci->stacks_note[0])
		json_object_set_new(json_object_get(o, "config"), "stacks_note",
				    json_string(ci->stacks_note));
	json_object_set_new(o, "capture_problem",
			    ci->capture_problem[0] ? json_string(ci->capture_problem)
						   : json_null());
	json_object_set_new(o, "stack_cache", json_stack(&ci->stack));
	json_object_set_new(o, "overhead", json_budget(&ci->budget));
	json_object_set_new(o, "families", json_families(ci));
	json_object_set_new(o, "cpus", json_cpus(ci));
	json_object_set_new(o, "triggers",
			    rsp_trig__list_json(ci->triggers, ci->nr_triggers, &ci->trigger_totals,
						ci->now_ns));
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
		       struct rsp_redact *r, const struct rsp_census *threads, long pid,
		       const struct rsp_census *events, struct rsp_buf *out)
{
	json_t *o = src->capture ? json_capture(src->capture) : json_object();

	json_object_set_new(o, "offline", json_boolean(src->offline));
	if (src->dump)
		json_object_set_new(o, "dump", json_dump(src->dump));
	json_object_set_new(o, "window", json_window(ws));
	json_object_set_new(json_object_get(o, "window"), "kinds", json_kinds(src, ws));
	json_object_set_new(o, "hist", json_hist(src));
	if (pid >= 0) {
		json_object_set_new(o, "query_pid", json_integer(pid));
		json_object_set_new(o, "threads", json_threads(r, threads, src));
		json_object_set_new(o, "woken_by", json_wakers(r, threads, src));
	}
	if (events)
		json_object_set_new(o, "events", json_events(events));
	return rsp_json__emit(o, out);
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
	if (ci->skipped_nested)
		rsp_buf__printf(
			out,
			"  ! %llu events ran no BPF program: the kernel does not run a program\n"
			"  already running on that CPU (an interrupt's waking or timer inside\n"
			"  it), and their records never were; analyses mark the wakeups they\n"
			"  could not see as inferred or unknown.\n",
			(unsigned long long)ci->skipped_nested);
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
		if (ci->family_note[fam][0] && (ci->families_on[fam] || fam == RSP_FAM_SYSCALL))
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
	if (ci->folded || ci->carried)
		rsp_buf__printf(out,
				"folded: %llu events rode on the record they wait for (a waking "
				"on its\n  switch-in, a request on its completion, an irq's entry "
				"on its exit); %llu alone\n",
				(unsigned long long)ci->folded, (unsigned long long)ci->carried);
	if (ci->delivery.valid)
		rsp_buf__printf(out,
				"not delivered (the timeline's inference): of %llu switches, %llu "
				"switch-outs\n  and %llu switch-ins; %llu sleeps ended with no "
				"waking seen\n",
				(unsigned long long)ci->delivery.switches,
				(unsigned long long)ci->delivery.switch_outs_not_seen,
				(unsigned long long)ci->delivery.switch_ins_not_seen,
				(unsigned long long)ci->delivery.wakings_not_seen);
}

/* One line on the stack cache: how much was walked, how often a check disagreed. */
static void text_stack(const struct rsp_stack_status *s, struct rsp_buf *out)
{
	if (!s->valid || !s->sites)
		return;
	rsp_buf__printf(out, "stacks: %llu wanted, %.1f%% walked, %.1f%% from the cache%s\n",
			(unsigned long long)s->sites, 100.0 * share(s->walked, s->sites),
			100.0 * share(s->cached, s->sites), s->check ? " (--stack-check)" : "");
	rsp_buf__printf(out,
			"  checks differed: kernel %.2f%% (%llu of %llu), user %.2f%% (%llu of "
			"%llu)\n",
			100.0 * share(s->kdiffer, s->kchecks), (unsigned long long)s->kdiffer,
			(unsigned long long)s->kchecks, 100.0 * share(s->udiffer, s->uchecks),
			(unsigned long long)s->udiffer, (unsigned long long)s->uchecks);
	if (s->have_time && s->sleep_s > 0)
		rsp_buf__printf(out,
				"  sleeps %.3f s, %.1f%% cached; checked %.3f s: stacks differ "
				"%.2f%%, reasons %.2f%%\n",
				s->sleep_s, 100.0 * s->cached_s / s->sleep_s, s->checked_s,
				s->checked_s > 0 ? 100.0 * s->stack_differ_s / s->checked_s : 0.0,
				s->checked_s > 0 ? 100.0 * s->reason_differ_s / s->checked_s : 0.0);
}

static void text_capture(const struct rsp_capture_info *ci, struct rsp_buf *out)
{
	char rss[32];

	rsp_fmt__bytes(rss, sizeof(rss), ci->rss_bytes);
	rsp_buf__printf(out, "rspd %s, pid %d, up %.1f s, RSS %s, CPU %.2f s\n", ci->version,
			(int)ci->pid, ci->uptime_s, rss, ci->cpu_seconds);
	rsp_buf__printf(out, "capture %s, stacks %s (%s), cpu-clock %u Hz, ring %u pages per CPU\n",
			ci->backend[0] ? ci->backend : "perf", ci->stacks, ci->callchain,
			ci->sample_freq, ci->ring_pages);
	if (ci->capture_problem[0])
		rsp_buf__printf(out, "  ! %s\n", ci->capture_problem);
	if (ci->backend_note[0])
		text_note(ci->backend_note, out);
	if (ci->capture_cgroup[0])
		rsp_buf__printf(out,
				"  scheduler events of cgroup %s only (--capture-cgroup; samples, "
				"interrupts, block and side-band of every process)\n",
				ci->capture_cgroup);
	if (ci->stacks_note[0])
		text_note(ci->stacks_note, out);
	text_stack(&ci->stack, out);
	text_budget(&ci->budget, ci->now_ns, out);
	rsp_buf__printf(out, "user stacks for DWARF: %s (%u bytes)\n\n",
			ci->dwarf[0] ? ci->dwarf : "none", ci->dwarf_stack);
	text_families(ci, out);
	text_cpus(ci, out);
	rsp_buf__puts(out, "\ntriggers (rspctl trigger list):\n");
	rsp_trig__render_list(ci->triggers, ci->nr_triggers, &ci->trigger_totals, ci->now_ns, false,
			      out);
}

/* One line (wrapped): the kinds that take the most of the window's bytes. */
static void text_kinds(const struct rsp_source *src, const struct rsp_window_stats *ws,
		       struct rsp_buf *out)
{
	unsigned idx[RSP_WINDOW_KINDS];
	size_t n = kinds_by_bytes(ws, idx), shown = n > 6 ? 5 : n, col;
	uint64_t rest = 0;
	char name[80], item[128];

	if (!n || !ws->bytes_used)
		return;
	rsp_buf__puts(out, "        bytes by kind (bytes per record):");
	col = 41;
	for (size_t i = 0; i < n; i++) {
		const struct rsp_wkind_count *c = &ws->kinds[idx[i]];

		if (i >= shown) {
			rest += c->bytes;
			continue;
		}
		snprintf(item, sizeof(item), " %s %.1f%% (%.0f)%s",
			 rsp_wkind__name(src->schema, idx[i], name, sizeof(name)),
			 pct(c->bytes, ws->bytes_used), (double)c->bytes / (double)c->records,
			 i + 1 < n ? "," : "");
		if (col + strlen(item) > 79) {
			rsp_buf__puts(out, "\n           ");
			col = 11;
		}
		rsp_buf__puts(out, item);
		col += strlen(item);
	}
	if (rest)
		rsp_buf__printf(out, "%s %zu more %.1f%%", col + 16 > 79 ? "\n           " : "",
				n - shown, pct(rest, ws->bytes_used));
	rsp_buf__puts(out, "\n");
}

static void text_window(const struct rsp_window_stats *ws, uint64_t now, struct rsp_buf *out)
{
	char used[32], budget[32];

	rsp_fmt__bytes(used, sizeof(used), ws->bytes_stored);
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
	if (ws->compressed_chunks) {
		char raw[32], z[32];

		rsp_fmt__bytes(raw, sizeof(raw), ws->compressed_raw);
		rsp_fmt__bytes(z, sizeof(z), ws->compressed_bytes);
		rsp_buf__printf(out,
				"        compressed: %llu chunks, %s of records in %s (%.1fx)\n",
				(unsigned long long)ws->compressed_chunks, raw, z,
				(double)ws->compressed_raw / (double)ws->compressed_bytes);
	}
	rsp_buf__printf(out, "        evicted %llu chunks (%llu records), dropped %llu\n",
			(unsigned long long)ws->evicted_chunks,
			(unsigned long long)ws->evicted_records, (unsigned long long)ws->dropped);
}

static void text_threads(struct rsp_redact *r, const struct rsp_census *cs, long pid,
			 const struct rsp_source *src, struct rsp_buf *out)
{
	size_t n, nw;
	const struct rsp_census_thread *v = rsp_census__threads(cs, &n);
	const struct rsp_census_waker *w = rsp_census__wakers(cs, &nw);
	char label[64], cg[64];

	rsp_buf__printf(out, "\nprocess %ld in the window: %zu thread%s\n", pid, n,
			n == 1 ? "" : "s");
	/* one cgroup per process (the model's): its line, not a column per thread */
	if (rsp_cgroupq__line(model(src), (uint32_t)pid, src->now, out))
		rsp_buf__puts(out, "\n");
	if (!n)
		return;
	rsp_buf__puts(out,
		      "     tid comm          switch-out switch-in  wakeups  samples    run s\n");
	for (size_t i = 0; i < n; i++)
		rsp_buf__printf(out, "%8u %-16.16s %7llu %9llu %8llu %8llu %8.3f\n", v[i].tid,
				rsp_redact__comm(r, v[i].tid, v[i].pid == UINT32_MAX ? 0 : v[i].pid,
						 v[i].comm),
				(unsigned long long)v[i].switches_out,
				(unsigned long long)v[i].switches_in,
				(unsigned long long)v[i].wakeups, (unsigned long long)v[i].samples,
				secs(v[i].run_ns));
	if (!nw)
		return;
	rsp_buf__puts(out, "\nwoken by (the task running when sched_waking fired)\n");
	for (size_t i = 0; i < nw; i++) {
		const char *hidden = rsp_redact__label(r, w[i].pid, w[i].pid, label, sizeof(label));

		char comm[RSP_FMT_NAME_MAX];

		if (!hidden)
			snprintf(label, sizeof(label), w[i].comm[0] ? "pid %u %s" : "pid %u",
				 w[i].pid, rsp_fmt__name(comm, sizeof(comm), w[i].comm));
		cg[0] = '\0';
		if (!hidden && w[i].pid)
			rsp_cgroupq__text(model(src), w[i].pid, src->now, 24, cg, sizeof(cg));
		rsp_buf__printf(out, "  %-40s %10llu%s%s\n", label,
				(unsigned long long)w[i].wakings, cg[0] ? "  " : "", cg);
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
	if (di->has_trigger) {
		wall_time(di, di->trigger_time, from, sizeof(from));
		rsp_buf__printf(out,
				"trigger %s: %s\n  tripped at %.3f s%s%s%s: %s; recorded %.1f s "
				"after\n",
				di->trigger_name, di->trigger_condition, secs(di->trigger_time),
				from[0] ? " (" : "", from, from[0] ? ")" : "", di->trigger_value,
				secs(di->trigger_post_ns));
	}
}

/* Plain status reads counters; --pid and --events take a census of the window. */
static bool status_reads_window(const struct rsp_request *req)
{
	const struct status_opts *o = req->opts;

	return req->pid >= 0 || o->events;
}

static int status_run(const struct rsp_request *req, const struct rsp_source *src,
		      struct rsp_buf *out, struct rsp_buf *err)
{
	const struct status_opts *o = req->opts;
	struct rsp_census *threads = NULL, *events = NULL;
	struct rsp_window_stats ws;
	struct rsp_redact r;
	size_t n = 0;
	int ret = 0;

	if (req->pid >= 0 && (ret = rsp_source__check_pid(src, "status", req->pid, err)))
		return ret;
	rsp_redact__init(&r, &src->access);
	rsp_window__stats(src->window, &ws);
	if ((req->pid >= 0 && !(threads = take_census(src, req->pid))) ||
	    (o->events && !(events = take_census(src, -1)))) {
		rsp_buf__puts(err, "status: out of memory while counting the window");
		ret = -ENOMEM;
		goto out;
	}
	/* None of its threads: absent, or just begun and not drained yet (live). */
	if (threads && (rsp_census__threads(threads, &n), !n)) {
		ret = rsp_source__check_seen(src, "status", req->pid, 0, UINT64_MAX, err);
		if (ret)
			goto out;
		rsp_census__delete(threads);
		rsp_window__stats(src->window, &ws);
		if (!(threads = take_census(src, req->pid))) {
			rsp_buf__puts(err, "status: out of memory while counting the window");
			ret = -ENOMEM;
			goto out;
		}
	}
	if (req->format == RSP_FMT_JSON) {
		ret = render_json(src, &ws, &r, threads, req->pid, events, out);
		goto out;
	}
	if (src->capture)
		text_capture(src->capture, out);
	else if (src->dump)
		text_dump(src->dump, out);
	else if (src->offline)
		rsp_buf__printf(out, "dump %s\n", src->path ? src->path : "");
	text_window(&ws, src->now, out);
	if (ws.records)
		text_kinds(src, &ws, out);
	text_hist(src, out);
	if (events)
		text_events(events, out);
	if (threads)
		text_threads(&r, threads, req->pid, src, out);
out:
	rsp_census__delete(threads);
	rsp_census__delete(events);
	rsp_redact__exit(&r);
	return ret;
}

/* --pid: the process's (and its wakers') cgroups and namespaced pids, from the process model. */
static bool status_uses_model(const struct rsp_request *req)
{
	return req->pid >= 0;
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
	.reads_window = status_reads_window,
	.no_symbols = true,
	.uses_model = status_uses_model,
	.no_cgroup = "status describes rspd and the whole machine; --pid PID adds one "
		     "process with its cgroup, and top, hist, graph, net and snapshot take "
		     "--cgroup",
};
