/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_FLAMETREE_H
#define RSP_FLAMETREE_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>

/*
 * A flame tree: folded stacks ("a;b;c 120\n", the snapshot's consolidated
 * flame view, rsp_snapexport__folded()) turned into the nested tree that
 * flame graph renderers draw (d3-flame-graph: {"name", "value",
 * "children"}), each frame with the kind of time it holds: running,
 * runnable, block_io, network, lock, timer, other or unknown, read from
 * the snapshot's markers ([running], [runnable], [sleep:REASON] ...); a
 * frame whose time is of several kinds, none of them two thirds, is
 * "mixed".
 *
 * Bounded: at most max_frames frames. Stacks are taken heaviest first; a
 * stack that would need a frame past the budget is left out whole and
 * counted (stats), and the root gets one frame that holds all that was
 * left out, so that every share of the total stays true.
 */
struct rsp_flametree;

enum rsp_flame_kind {
	RSP_FK_RUNNING,
	RSP_FK_RUNNABLE,
	RSP_FK_BLOCK_IO,
	RSP_FK_NETWORK,
	RSP_FK_LOCK,
	RSP_FK_TIMER,
	RSP_FK_OTHER,
	RSP_FK_UNKNOWN,
	RSP_FK_LEFT_OUT, /* the frame of the stacks the budget left out */
	RSP_FK_MIXED,	 /* a frame whose time no one kind holds two thirds of */
	RSP_FK__NR,
};

struct rsp_flametree_stats {
	size_t stacks;		/* lines read */
	size_t stacks_left_out; /* lines not in the tree for the frame budget */
	size_t frames;		/* frames in the tree, the root and the left-out frame included */
	uint64_t total;		/* the sum of every line's weight */
	uint64_t left_out;	/* the weight of the lines left out */
};

/**
 * rsp_flametree__new() - an empty tree of at most @max_frames frames (at
 * least 2: the root and the left-out frame); its root is named @root_name.
 * Return: the tree, freed with rsp_flametree__delete(); NULL without memory.
 */
RSP_API struct rsp_flametree *rsp_flametree__new(const char *root_name, size_t max_frames);
/** rsp_flametree__delete() - free @t; NULL is fine. */
RSP_API void rsp_flametree__delete(struct rsp_flametree *t);

/**
 * rsp_flametree__add_folded() - add every line of folded stacks @text
 * (@len bytes, need not be NUL-terminated), heaviest first.
 * Return: 0; -EINVAL with one sentence in @err naming the bad line (a line
 * without a weight); -ENOMEM.
 */
RSP_API int rsp_flametree__add_folded(struct rsp_flametree *t, const char *text, size_t len,
				      struct rsp_buf *err);

/**
 * rsp_flametree__render_json() - the tree as compact JSON for d3-flame-graph:
 * {"name", "value" (the frame's total), "kind", "children"}; '/' is
 * escaped so that the text may sit inside an HTML <script> element.
 * Return: 0 or -ENOMEM/-E2BIG.
 */
RSP_API int rsp_flametree__render_json(const struct rsp_flametree *t, struct rsp_buf *out);

/** rsp_flametree__stats() - what the tree holds and what it left out. */
RSP_API void rsp_flametree__stats(const struct rsp_flametree *t, struct rsp_flametree_stats *st);

/** rsp_flametree__kind_of() - the kind of the time of one folded line's frames. */
RSP_API enum rsp_flame_kind rsp_flametree__kind_of(const char *frames, size_t len);

/** rsp_flame_kind__name() - "running", "runnable", "block_io" ... */
RSP_API const char *rsp_flame_kind__name(enum rsp_flame_kind k);

#endif /* RSP_FLAMETREE_H */
