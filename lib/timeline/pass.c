// SPDX-License-Identifier: LGPL-2.1
/* One pass over a pinned window range: see rsp/pass.h. */
#include <errno.h>
#include <string.h>
#include <rsp/pass.h>
#include <rsp/record.h>
#include "internal/schema.h"
#include "tracepoints/bpf_records.h"

/*
 * Is @rec a cpu-clock sample? In rsp's layout the sample id is the first
 * word after the header: its evsel is looked up (a few evsels, cached)
 * instead of decoding every record.
 */
struct idcache {
	uint64_t id[8];
	int8_t yes[8];
	unsigned next;
};

static bool is_cpu_clock(const struct rsp_schema *schema, const struct perf_event_header *h,
			 struct idcache *c)
{
	uint64_t id;
	unsigned slot;
	int ev;

	if (h->type != PERF_RECORD_SAMPLE && h->type != RSP_RECORD_ZSAMPLE)
		return false;
	if (!schema->all_identifier || h->size < 16)
		return true; /* decode to know */
	id = ((const uint64_t *)h)[1];
	for (unsigned i = 0; i < 8; i++)
		if (c->yes[i] && c->id[i] == id)
			return c->yes[i] > 0;
	ev = rsp_schema__evsel_by_id(schema, id);
	slot = c->next++ % 8;
	c->id[slot] = id;
	c->yes[slot] = ev >= 0 && rsp_schema__evsel_event(schema, ev) == RSP_EV_cpu_clock &&
				       rsp_schema__evsel_role(schema, ev) == RSP_ROLE_PRIMARY
			       ? 1
			       : -1;
	return c->yes[slot] > 0;
}

static int samples_only(const struct rsp_schema *schema, struct rsp_witer *it,
			const struct rsp_pass_opts *o, struct rsp_timeline_stats *st)
{
	struct idcache ic;
	struct rsp_wentry e;
	struct rsp_sample smp;

	memset(&ic, 0, sizeof(ic));
	while (rsp_witer__next(it, &e)) {
		if (st)
			st->records++;
		/* the gaps of the range, counted as the timeline counts them */
		if (st && e.rec->type == PERF_RECORD_LOST) {
			st->lost_records++;
			if (e.rec->size >= sizeof(*e.rec) + 16)
				st->lost += ((const uint64_t *)(e.rec + 1))[1];
			continue;
		}
		if (!is_cpu_clock(schema, e.rec, &ic) ||
		    rsp_record__parse_sample(schema, e.rec, &smp) ||
		    smp.event != RSP_EV_cpu_clock || smp.role != RSP_ROLE_PRIMARY)
			continue;
		if (smp.tid == UINT32_MAX) /* no task (-1): as the idle task */
			smp.tid = smp.pid = 0;
		if (st)
			st->events[RSP_EV_cpu_clock]++;
		o->ops->sample(o->ctx, &smp, e.rec);
	}
	return 0;
}

/*
 * rspd's BPF records name a thread and send a stack once: what the records
 * before the range sent (names, stacks) is learnt first, from the window's
 * start, so that the range gets them as a perf tracepoint stream has them.
 */
static int learn_before(struct rsp_timeline *tl, const struct rsp_wsnap *snap, uint64_t from)
{
	/*
	 * Streaming: learning copies what it keeps. A window that keeps its
	 * names and stacks raw beside the compressed chunks (rspd's) is read
	 * without decompressing them; another's compressed chunks are
	 * decompressed one at a time.
	 */
	const uint32_t side = 1u << RSP_BREC_COMM | 1u << RSP_BREC_STACK;
	struct rsp_window *w = rsp_wsnap__window(snap);
	struct rsp_wsnap *pre = (rsp_window__side_kinds(w) & side) == side
					? rsp_window__pin_side(w, 0, from - 1)
					: rsp_window__pin_stream(w, 0, from - 1);
	struct rsp_witer *it = pre ? rsp_witer__new(pre, 0, from - 1) : NULL;
	struct rsp_wentry e;
	int ret = it ? 0 : -ENOMEM;

	while (!ret && rsp_witer__next(it, &e))
		ret = rsp_timeline__learn(tl, &e);
	if (!ret && rsp_witer__error(it))
		ret = -rsp_witer__error(it);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(pre);
	return ret;
}

static int through_timeline(const struct rsp_schema *schema, const struct rsp_wsnap *snap,
			    struct rsp_witer *it, const struct rsp_pass_opts *o,
			    struct rsp_timeline_stats *st)
{
	struct rsp_timeline *tl = rsp_timeline__new(schema, o->ops, o->ctx);
	struct rsp_wentry e;
	int ret = tl ? rsp_timeline__set_ksyms(tl, o->ksyms) : -ENOMEM;

	if (!ret) {
		rsp_timeline__set_flags(tl, o->tl_flags | RSP_TL_RECORDS_STABLE);
		rsp_timeline__set_start(tl, o->from);
		rsp_timeline__set_end(tl, o->to);
		rsp_timeline__set_socktab(tl, o->socks);
	}
	if (!ret && schema && schema->bpf_evsel >= 0 && o->from)
		ret = learn_before(tl, snap, o->from);
	while (!ret && rsp_witer__next(it, &e))
		ret = rsp_timeline__feed(tl, &e);
	if (!ret) {
		rsp_timeline__finish(tl, o->to ? o->to : UINT64_MAX);
		if (st)
			rsp_timeline__stats(tl, st);
	}
	if (!ret && o->keep)
		*o->keep = tl;
	else
		rsp_timeline__delete(tl);
	return ret;
}

/* @to and the read-ahead after it (see rsp_pass__pin()). */
static uint64_t read_ahead(uint64_t to)
{
	return to < UINT64_MAX - RSP_TIMELINE_READ_AHEAD_NS ? to + RSP_TIMELINE_READ_AHEAD_NS : to;
}

struct rsp_wsnap *rsp_pass__pin(struct rsp_window *w, uint64_t from, uint64_t to)
{
	return rsp_window__pin(w, from, read_ahead(to));
}

int rsp_pass__run(const struct rsp_schema *schema, const struct rsp_wsnap *snap,
		  const struct rsp_pass_opts *o, struct rsp_timeline_stats *st)
{
	uint64_t to = o->to ? o->to : UINT64_MAX;
	/* past @to: the events BPF records after it carry from before it */
	uint64_t ahead = schema && schema->bpf_evsel >= 0 && !(o->flags & RSP_PASS_SAMPLES_ONLY)
				 ? read_ahead(to)
				 : to;
	struct rsp_witer *it = rsp_witer__new(snap, o->from, ahead);
	int ret;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!it)
		return -ENOMEM;
	if ((o->flags & RSP_PASS_SAMPLES_ONLY) && o->ops && o->ops->sample)
		ret = samples_only(schema, it, o, st);
	else
		ret = through_timeline(schema, snap, it, o, st);
	rsp_witer__delete(it);
	return ret;
}
