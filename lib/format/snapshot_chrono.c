// SPDX-License-Identifier: LGPL-2.1
/*
 * The chronological flame view (RSP's flame view, speedscope's "time
 * order"): the pid's pseudostacks on a time axis, from the snapshot's timed
 * pieces (rsp_snapshot__pieces()). Format: internal/snapexport.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal/snapexport.h"

const char *rsp_chrono_kind__name(enum rsp_chrono_kind k)
{
	static const char *const names[] = {
		[RSP_CK_RUNNING] = "running",	[RSP_CK_RUNNABLE] = "runnable",
		[RSP_CK_BLOCK_IO] = "block_io", [RSP_CK_NETWORK] = "network",
		[RSP_CK_LOCK] = "lock",		[RSP_CK_TIMER] = "timer",
		[RSP_CK_OTHER] = "other",	[RSP_CK_UNKNOWN] = "unknown",
	};

	return (unsigned)k < RSP_CK__NR ? names[k] : "unknown";
}

/* What ended a sleep, when its reason does not say what it waited for. */
static enum rsp_chrono_kind waker_kind(const struct rsp_segment *g)
{
	if (g->waker.flags & RSP_WAKERF_NET)
		return RSP_CK_NETWORK;
	switch (g->waker.kind) {
	case RSP_WAKER_DEVICE:
		return RSP_CK_BLOCK_IO;
	case RSP_WAKER_TIMER:
		return RSP_CK_TIMER;
	case RSP_WAKER_SOFTIRQ:
		if (g->waker.id == RSP_SOFTIRQ_NET_RX || g->waker.id == RSP_SOFTIRQ_NET_TX)
			return RSP_CK_NETWORK;
		if (g->waker.id == RSP_SOFTIRQ_TIMER || g->waker.id == RSP_SOFTIRQ_HRTIMER)
			return RSP_CK_TIMER;
		return g->waker.id == RSP_SOFTIRQ_BLOCK ? RSP_CK_BLOCK_IO : RSP_CK_OTHER;
	case RSP_WAKER_NONE:
		return g->reason == RSP_SR_UNKNOWN ? RSP_CK_UNKNOWN : RSP_CK_OTHER;
	default:
		return RSP_CK_OTHER;
	}
}

enum rsp_chrono_kind rsp_chrono__kind(const struct rsp_spiece *p)
{
	const struct rsp_segment *g = p->seg;

	switch (p->kind) {
	case RSP_SN_RUN:
		return RSP_CK_RUNNING;
	case RSP_SN_RUNNABLE:
		return RSP_CK_RUNNABLE;
	case RSP_SN_SLEEP:
		break;
	default:
		return RSP_CK_UNKNOWN;
	}
	if (!g)
		return RSP_CK_UNKNOWN;
	switch (g->reason) {
	case RSP_SR_BLOCK_IO:
		return RSP_CK_BLOCK_IO;
	case RSP_SR_NETWORK:
		return RSP_CK_NETWORK;
	case RSP_SR_LOCK:
		return RSP_CK_LOCK;
	case RSP_SR_TIMER:
	case RSP_SR_SLEEP:
		return RSP_CK_TIMER;
	case RSP_SR_PREEMPT:
		return RSP_CK_RUNNABLE;
	default: /* poll, pipe, page fault, unknown: what ended it tells more */
		return waker_kind(g);
	}
}

char *rsp_chrono__name(struct snapnames *n, const struct rsp_spiece *p, char *buf, size_t size)
{
	char fn[SNAP_FRAME_LEN], who[128], what[SNAP_FRAME_LEN + 48];
	const struct rsp_segment *g = p->seg;

	switch (p->kind) {
	case RSP_SN_RUN:
		snprintf(what, sizeof(what), p->inferred ? "running (inferred)" : "running");
		break;
	case RSP_SN_RUNNABLE:
		snprintf(what, sizeof(what),
			 g && g->reason == RSP_SR_PREEMPT ? "preempted" : "runnable");
		break;
	case RSP_SN_SLEEP:
		fn[0] = '\0';
		if (g)
			rsp_snapnames__user_fn(n, p->tid, p->tgid, g->start, g->stack, g->nr_stack,
					       fn, sizeof(fn));
		snprintf(what, sizeof(what), "sleep %s%s%s",
			 rsp_sleep_reason__name(g ? (enum rsp_sleep_reason)g->reason
						  : RSP_SR_UNKNOWN),
			 fn[0] ? ": " : "", fn);
		break;
	default:
		snprintf(what, sizeof(what), "unknown");
		break;
	}
	if (p->depth)
		snprintf(buf, size, "%s: %s",
			 rsp_snapnames__thread(n, p->tid, p->tgid, who, sizeof(who)), what);
	else
		snprintf(buf, size, "%s", what);
	return buf;
}

void rsp_snapexport__jstr(struct rsp_buf *out, const char *s)
{
	rsp_buf__add(out, "\"", 1);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			rsp_buf__printf(out, "\\%c", ch);
		else if (ch < 0x20)
			rsp_buf__printf(out, "\\u%04x", ch);
		else
			rsp_buf__add(out, s, 1);
	}
	rsp_buf__add(out, "\"", 1);
}

/* ---- choosing and ordering ------------------------------------------------ */

static int cmp_keep(const void *a, const void *b, void *ctx)
{
	const struct rsp_spiece *v = ctx;
	const struct rsp_spiece *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_time(const void *a, const void *b, void *ctx)
{
	const struct rsp_spiece *v = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (v[i].start != v[j].start)
		return v[i].start < v[j].start ? -1 : 1;
	if (v[i].depth != v[j].depth)
		return v[i].depth < v[j].depth ? -1 : 1;
	return i < j ? -1 : i > j;
}

int rsp_chrono__select(const struct rsp_spiece *v, size_t nv, size_t max, uint32_t **out,
		       size_t *nout)
{
	uint32_t *idx = malloc((nv ? nv : 1) * sizeof(*idx));
	size_t k = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < nv; i++)
		idx[k++] = (uint32_t)i;
	if (k > max) {
		/*
		 * Shallowest first, then longest: a kept piece's parent (one
		 * level up) ranks before every piece of its level, so it is kept.
		 */
		qsort_r(idx, k, sizeof(*idx), cmp_keep, (void *)v);
		k = max;
	}
	qsort_r(idx, k, sizeof(*idx), cmp_time, (void *)v);
	*out = idx;
	*nout = k;
	return 0;
}

int rsp_snapexport__chrono(struct snapnames *n, size_t max_slices, struct rsp_buf *out)
{
	const struct rsp_snapshot_totals *tot = rsp_snapshot__totals(n->snap);
	const struct rsp_snode *root =
		rsp_snapshot__nr_roots(n->snap)
			? rsp_snapshot__node(n->snap, rsp_snapshot__root(n->snap, 0))
			: NULL;
	size_t nv, nk;
	bool dropped;
	const struct rsp_spiece *v = rsp_snapshot__pieces(n->snap, &nv, &dropped);
	uint32_t *keep;
	char name[SNAP_FRAME_LEN + 256];
	int ret = rsp_chrono__select(v, nv, max_slices, &keep, &nk);

	if (ret)
		return ret;
	rsp_buf__printf(out,
			"{\"unit\":\"ns\",\"start_ns\":%llu,\"end_ns\":%llu,\"pid\":%u,"
			"\"truncated\":%s,\"max_slices\":%zu,\"slices\":[",
			(unsigned long long)tot->start, (unsigned long long)tot->end,
			root ? (root->tgid ? root->tgid : root->tid) : 0,
			dropped || nk < nv ? "true" : "false", max_slices);
	for (size_t i = 0; i < nk; i++) {
		const struct rsp_spiece *p = &v[keep[i]];

		rsp_buf__printf(out, "%s\n{\"depth\":%u,\"start\":%llu,\"end\":%llu,\"name\":",
				i ? "," : "", p->depth, (unsigned long long)(p->start - tot->start),
				(unsigned long long)(p->end - tot->start));
		rsp_snapexport__jstr(out, rsp_chrono__name(n, p, name, sizeof(name)));
		rsp_buf__printf(out, ",\"kind\":\"%s\",\"tid\":%u}",
				rsp_chrono_kind__name(rsp_chrono__kind(p)), p->tid);
	}
	rsp_buf__puts(out, "\n]}\n");
	free(keep);
	return out->error;
}
