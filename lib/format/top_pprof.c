// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl top --pprof FILE` and rspd's /debug/pprof/profile: the profile's
 * whole stacks (built by thread) as pprof (internal/pprof.h), on-CPU:
 * sample types samples/count and cpu/nanoseconds, one sample per stack and
 * thread with the labels thread, process and cgroup (where known). Frames
 * are named as `rspctl top` names its rows, so pprof -top and rspctl top
 * agree; mappings carry the build-id the process model recorded for the
 * file mapped there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <rsp/flatprof.h>
#include <rsp/maps.h>
#include "internal/pprof.h"

struct top_pp {
	struct rsp_pprof w;
	const struct rsp_flatprof *p;
	struct rsp_pprof_bids bids;
};

static uint64_t location(struct top_pp *t, const struct rsp_frame *f, uint32_t pid, uint64_t time)
{
	char name[512];
	struct rsp_pprof_frame pf = {.function =
					     rsp_sym__format(&f->sym, false, name, sizeof(name)),
				     .object = f->sym.hidden ? NULL : f->sym.object,
				     .addr = f->sym.hidden ? 0 : f->addr};

	rsp_pprof_bids__frame(&t->bids, pid, time, f->sym.kind == RSP_SYM_USER, &pf);
	return rsp_pprof__location(&t->w, &pf);
}

static void one_stack(struct top_pp *t, const struct rsp_flatprof_stack *r)
{
	const struct rsp_flatprof_proc *pr = rsp_flatprof__proc(t->p, r->pid);
	bool hidden = !pr || pr->hidden;
	uint64_t time = pr ? pr->last : 0, locs[RSP_FLATPROF_FRAMES];
	int64_t v[2] = {(int64_t)r->samples, (int64_t)r->period};
	struct rsp_pprof_label lab[3];
	char thread[200], process[200];
	const char *cg = NULL;
	size_t n = 0, nl = 0;

	for (uint32_t i = 0; i < r->nr; i++)
		locs[n++] = location(t, &r->frames[i], r->pid, time);
	if (!n)
		locs[n++] = rsp_pprof__location(&t->w,
						&(struct rsp_pprof_frame){.function = "[unknown]"});
	if (hidden) {
		snprintf(process, sizeof(process), "pid %u (other user)", r->pid);
		snprintf(thread, sizeof(thread), "pid %u (other user) tid %u", r->pid, r->tid);
	} else {
		snprintf(process, sizeof(process), "%s (pid %u)", pr->comm ? pr->comm : "?",
			 r->pid);
		if (r->tid == r->pid) /* named as rspctl snapshot names threads */
			snprintf(thread, sizeof(thread), "%s", process);
		else
			snprintf(thread, sizeof(thread), "%s %u (pid %u)",
				 pr->comm ? pr->comm : "?", r->tid, r->pid);
		cg = t->bids.maps ? rsp_maps__cgroup(t->bids.maps, r->pid, time) : NULL;
	}
	lab[nl++] = (struct rsp_pprof_label){.key = "thread", .str = thread};
	lab[nl++] = (struct rsp_pprof_label){.key = "process", .str = process};
	if (cg)
		lab[nl++] = (struct rsp_pprof_label){.key = "cgroup", .str = cg};
	rsp_pprof__sample(&t->w, locs, n, v, lab, nl);
}

int rsp_top__pprof(const struct rsp_flatprof *p, const struct rsp_maps *maps,
		   struct rsp_pprof_meta *meta, struct rsp_buf *out)
{
	static const struct rsp_pprof_type types[2] = {{"samples", "count"},
						       {"cpu", "nanoseconds"}};
	const struct rsp_flatprof_totals *tot = rsp_flatprof__totals(p);
	struct top_pp t = {.p = p};
	size_t n;
	const struct rsp_flatprof_stack *v = rsp_flatprof__stacks(p, &n);
	int ret;

	rsp_pprof__init(&t.w, types, 2);
	rsp_pprof_bids__init(&t.bids, maps);
	for (size_t i = 0; i < n; i++)
		one_stack(&t, &v[i]);
	/* cpu-clock's period as the profile's: the mean, as each sample has its own */
	meta->period_type = types[1];
	meta->period = tot->samples ? (int64_t)(tot->period / tot->samples) : 0;
	if (t.bids.err) {
		rsp_pprof__exit(&t.w);
		ret = t.bids.err;
	} else {
		ret = rsp_pprof__finish(&t.w, meta, out);
	}
	rsp_pprof_bids__exit(&t.bids);
	return ret;
}

void rsp_pprof_meta__range(struct rsp_pprof_meta *m, bool live, uint64_t now, uint64_t from,
			   uint64_t to)
{
	struct timespec ts;

	m->duration_nanos = to > from ? (int64_t)(to - from) : 0;
	/* live (rspd: capture known), the window's clock is CLOCK_MONOTONIC: its start
	 * in wall time is now less its age; offline it is not known */
	if (live && now >= from && !clock_gettime(CLOCK_REALTIME, &ts))
		m->time_nanos =
			(int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - (int64_t)(now - from);
}
