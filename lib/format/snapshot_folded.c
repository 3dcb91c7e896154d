// SPDX-License-Identifier: LGPL-2.1
/*
 * The snapshot as folded stacks (the consolidated flame view; format:
 * internal/snapexport.h), on its own below the chronological view
 * (snapshot_chrono.c), which builds its flame tree from them, and the
 * Chrome trace (snapshot_export.c), which uses that view.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/symbols.h>
#include "internal/snapexport.h"

#define STACK_FRAMES 64

static const struct rsp_snode *node(const struct snapnames *n, uint32_t i)
{
	return rsp_snapshot__node(n->snap, i);
}

/* ---- folded ------------------------------------------------------------- */

struct fold {
	struct snapnames *n;
	struct rsp_buf *out;
	struct rsp_buf pre; /* the frames from the root, ';'-separated */
	int err;
};

/*
 * Append one frame to the prefix; ';' would split it, a newline end the line
 * (names in frames are escaped by rsp_fmt__name(): this is the last guard).
 */
static void push(struct fold *f, const char *frame, const char *suffix)
{
	size_t at;

	if (f->pre.len)
		f->err = f->err ? f->err : rsp_buf__add(&f->pre, ";", 1);
	at = f->pre.len;
	f->err = f->err ? f->err : rsp_buf__printf(&f->pre, "%s%s", frame, suffix);
	for (size_t i = at; !f->err && i < f->pre.len; i++)
		if (f->pre.data[i] == ';' || f->pre.data[i] == '\n')
			f->pre.data[i] = ':';
}

static void pop(struct fold *f, size_t len)
{
	f->pre.len = len;
	if (f->pre.data)
		f->pre.data[len] = '\0';
}

/* One line: the prefix, @marker as its last frame (cleaned as frames are), the weight. */
static void emit(struct fold *f, const char *marker, uint64_t ns)
{
	uint64_t us = (ns + 500) / 1000;
	size_t len = f->pre.len;

	if (!us || f->err)
		return;
	if (marker)
		push(f, marker, "");
	f->err = f->err ? f->err
			: rsp_buf__printf(f->out, "%s %llu\n", f->pre.data ? f->pre.data : "",
					  (unsigned long long)us);
	pop(f, len);
}

/* A callchain's frames, root first: user outermost to innermost, then kernel. */
static void push_stack(struct fold *f, const struct rsp_snode *x)
{
	struct snap_frame fr[STACK_FRAMES];
	int k = rsp_snapnames__frames(f->n, x->tid, x->tgid, x->first, x->stack, x->nr_stack, fr,
				      STACK_FRAMES);

	for (int i = k; i-- > 0;)
		push(f, fr[i].name, fr[i].kernel ? "_[k]" : "");
}

char *rsp_snapexport__marker(struct snapnames *n, const struct rsp_snode *x, int c, char *buf,
			     size_t size)
{
	char who[96];

	switch (c) {
	case RSP_CAT_UNDERSTOOD:
		snprintf(buf, size, "[running]");
		break;
	case RSP_CAT_SPIN:
		snprintf(buf, size, "[spinning]");
		break;
	case RSP_CAT_NOT_SAMPLED:
		snprintf(buf, size, "[running, not sampled]");
		break;
	case RSP_CAT_SCHEDULER:
		snprintf(buf, size, "[runnable]");
		break;
	case RSP_CAT_INVOLUNTARY:
		snprintf(buf, size, "[preempted]");
		break;
	case RSP_CAT_IO_QUEUE:
		snprintf(buf, size, "[%s queue]", rsp_snapnames__waker(n, x, who, sizeof(who)));
		break;
	case RSP_CAT_OTHER_PATH:
		snprintf(buf, size, "[other path: %s]",
			 rsp_snapnames__waker(n, x, who, sizeof(who)));
		break;
	case RSP_CAT_MISC_KERNEL:
		snprintf(buf, size, "[not followed: %s]",
			 rsp_snapnames__waker(n, x, who, sizeof(who)));
		break;
	case RSP_CAT_UNKNOWN:
		snprintf(buf, size, "[unknown]");
		break;
	default:
		snprintf(buf, size, "[%s]",
			 x->kind == RSP_SN_SLEEP ? rsp_snapnames__waker(n, x, who, sizeof(who))
						 : "?");
		break;
	}
	return buf;
}

static void fold_node(struct fold *f, uint32_t i)
{
	const struct rsp_snode *x = node(f->n, i);
	size_t len = f->pre.len;
	char buf[256];

	switch (x->kind) {
	case RSP_SN_THREAD: {
		char who[128];

		rsp_snapnames__thread(f->n, x->tid, x->tgid, who, sizeof(who));
		if (x->parent == RSP_SNODE_NONE && x->path)
			snprintf(buf, sizeof(buf), "path %u: %s", x->path, who);
		else
			snprintf(buf, sizeof(buf), "%s", who);
		push(f, buf, "");
		break;
	}
	case RSP_SN_SAMPLE:
		push_stack(f, x);
		if (!f->pre.len || f->pre.len == len)
			push(f, "[unknown]", "");
		break;
	case RSP_SN_SLEEP:
		push_stack(f, x);
		snprintf(buf, sizeof(buf), "[sleep:%s]",
			 rsp_sleep_reason__name((enum rsp_sleep_reason)x->reason));
		push(f, buf, "");
		break;
	case RSP_SN_RUNNABLE:
		/* a frame: what preempted it, when followed, is above it */
		push(f, x->reason == RSP_SR_PREEMPT ? "[preempted]" : "[runnable]", "");
		break;
	default:
		break;
	}
	for (int c = 0; c < RSP_CAT__NR; c++) {
		if (!x->self_ns[c])
			continue;
		if (x->kind == RSP_SN_SAMPLE || x->kind == RSP_SN_RUNNABLE) {
			emit(f, NULL, x->self_ns[c]);
			continue;
		}
		rsp_snapexport__marker(f->n, x, c, buf, sizeof(buf));
		emit(f, buf, x->self_ns[c]);
	}
	for (uint32_t k = x->first_child; k != RSP_SNODE_NONE; k = node(f->n, k)->next_sibling)
		fold_node(f, k);
	pop(f, len);
}

int rsp_snapexport__folded(struct snapnames *n, struct rsp_buf *out)
{
	struct fold f = {.n = n, .out = out};

	for (size_t i = 0; i < rsp_snapshot__nr_roots(n->snap); i++)
		fold_node(&f, rsp_snapshot__root(n->snap, i));
	rsp_buf__exit(&f.pre);
	return f.err;
}
