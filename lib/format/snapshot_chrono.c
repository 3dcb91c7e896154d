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
#include "internal/json.h"
#include "internal/snapexport.h"
#include "internal/speedscope.h"
#include "internal/vec.h"

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
		rsp_json__str(out, rsp_chrono__name(n, p, name, sizeof(name)));
		rsp_buf__printf(out, ",\"kind\":\"%s\",\"tid\":%u}",
				rsp_chrono_kind__name(rsp_chrono__kind(p)), p->tid);
	}
	rsp_buf__puts(out, "\n]}\n");
	free(keep);
	return out->error;
}

/* ---- speedscope ------------------------------------------------------------ */

struct open_frame {
	int frame;
	uint64_t end;
};

uint32_t *rsp_chrono__root_tids(const struct rsp_spiece *v, size_t nv)
{
	uint32_t *r = malloc((nv ? nv : 1) * sizeof(*r));

	/* a parent's index is below its children's (walk order) */
	for (size_t i = 0; r && i < nv; i++)
		r[i] = v[i].parent == RSP_SNODE_NONE ? v[i].tid : r[v[i].parent];
	return r;
}

/* Thread @tid's nest as one evented profile: open and close events, LIFO. */
static void evented(struct snapnames *n, struct rsp_sscope *w, uint32_t tid,
		    const struct rsp_spiece *v, const uint32_t *keep, size_t nk,
		    const uint32_t *root, struct open_frame *stk, uint64_t base, uint64_t len)
{
	char name[SNAP_FRAME_LEN + 256];
	size_t d = 0;

	rsp_sscope__evented(w, rsp_snapnames__thread(n, tid, 0, name, sizeof(name)), "nanoseconds",
			    0, len);
	for (size_t i = 0; i < nk; i++) {
		const struct rsp_spiece *p = &v[keep[i]];
		uint64_t a = p->start - base, b = p->end - base;

		if (root[keep[i]] != tid)
			continue;
		while (d && stk[d - 1].end <= a) {
			d--;
			rsp_sscope__event(w, 'C', stk[d].frame, stk[d].end);
		}
		if (d && b > stk[d - 1].end)
			b = stk[d - 1].end; /* a child lies in its parent: never more */
		stk[d].frame = rsp_sscope__frame(w, rsp_chrono__name(n, p, name, sizeof(name)));
		stk[d].end = b;
		rsp_sscope__event(w, 'O', stk[d].frame, a);
		d++;
	}
	while (d--)
		rsp_sscope__event(w, 'C', stk[d].frame, stk[d].end);
}

/* The folded stacks (the consolidated view) as one sampled profile, in us. */
static int consolidated(struct snapnames *n, struct rsp_sscope *w, const char *who)
{
	struct rsp_buf f = RSP_BUF_INIT;
	uint64_t total = 0;
	int *fr = NULL;
	size_t cap = 0;
	char name[256], *end;
	int ret = rsp_snapexport__folded(n, &f);

	/* "a;b;c 123\n" lines: cut into NUL-terminated lines, summing the weights */
	for (size_t i = 0; !ret && i < f.len; i++)
		if (f.data[i] == '\n')
			f.data[i] = '\0';
	end = f.data + f.len;
	for (char *l = f.data; !ret && l && l < end; l += strlen(l) + 1) {
		char *sp = strrchr(l, ' ');

		total += sp ? strtoull(sp + 1, NULL, 10) : 0;
	}
	snprintf(name, sizeof(name), "consolidated: %s", who);
	rsp_sscope__sampled(w, name, "microseconds", 0, total);
	for (char *l = f.data, *next; !ret && l && l < end; l = next) {
		char *sp = strrchr(l, ' ');
		size_t k = 0;

		next = l + strlen(l) + 1;
		if (!sp)
			continue;
		*sp = '\0';
		for (char *s = l, *semi; s; s = semi ? semi + 1 : NULL) {
			semi = strchr(s, ';');
			if (semi)
				*semi = '\0';
			if (rsp_vec__reserve((void **)&fr, &cap, k + 1, sizeof(*fr))) {
				ret = -ENOMEM;
				break;
			}
			fr[k++] = rsp_sscope__frame(w, s);
		}
		rsp_sscope__sample(w, fr, k, strtoull(sp + 1, NULL, 10));
	}
	free(fr);
	rsp_buf__exit(&f);
	return ret;
}

static int cmp_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t rsp_chrono__nest_tids(const struct rsp_spiece *v, const uint32_t *keep, size_t nk,
			     uint32_t *out)
{
	size_t k = 0, u = 0;

	for (size_t i = 0; i < nk; i++)
		if (v[keep[i]].parent == RSP_SNODE_NONE)
			out[k++] = v[keep[i]].tid;
	qsort(out, k, sizeof(*out), cmp_tid);
	for (size_t i = 0; i < k; i++)
		if (!u || out[u - 1] != out[i])
			out[u++] = out[i];
	return u;
}

int rsp_snapexport__speedscope(struct snapnames *n, size_t max_slices, struct rsp_buf *out)
{
	const struct rsp_snapshot_totals *tot = rsp_snapshot__totals(n->snap);
	size_t nv, nk = 0, nt;
	bool cut;
	const struct rsp_spiece *v = rsp_snapshot__pieces(n->snap, &nv, &cut);
	uint32_t *keep = NULL, *root = rsp_chrono__root_tids(v, nv),
		 *tids = malloc((nv ? nv : 1) * 4);
	struct open_frame *stk = malloc((nv ? nv : 1) * sizeof(*stk));
	const struct rsp_snode *r0 =
		rsp_snapshot__nr_roots(n->snap)
			? rsp_snapshot__node(n->snap, rsp_snapshot__root(n->snap, 0))
			: NULL;
	char who[160], title[300];
	struct rsp_sscope w;
	int ret = root && stk && tids ? rsp_chrono__select(v, nv, max_slices, &keep, &nk) : -ENOMEM;

	rsp_sscope__init(&w);
	who[0] = '\0';
	if (r0)
		rsp_snapnames__thread(n, r0->tgid ? r0->tgid : r0->tid, r0->tgid, who, sizeof(who));
	nt = ret ? 0 : rsp_chrono__nest_tids(v, keep, nk, tids);
	for (size_t t = 0; t < nt; t++)
		evented(n, &w, tids[t], v, keep, nk, root, stk, tot->start, tot->end - tot->start);
	if (!ret)
		ret = consolidated(n, &w, who);
	if (cut || nk < nv)
		snprintf(title, sizeof(title),
			 "rsp snapshot of %s (chronological view truncated: %zu of %zu%s slices)",
			 who, nk, nv, cut ? "+" : "");
	else
		snprintf(title, sizeof(title), "rsp snapshot of %s", who);
	if (ret)
		rsp_sscope__exit(&w);
	else
		ret = rsp_sscope__finish(&w, title, out);
	free(keep);
	free(root);
	free(tids);
	free(stk);
	return ret;
}
