/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SPEEDSCOPE_H
#define RSP_INTERNAL_SPEEDSCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>
#include <rsp/flatprof.h>
#include "internal/u64map.h"

/*
 * A writer of speedscope's file format (lib/format/speedscope.c;
 * https://www.speedscope.app/file-format-schema.json): frames shared by
 * name, then profiles, each "evented" (open/close events at times, nested)
 * or "sampled" (stacks, root first, with weights). Written as it goes,
 * bounded by what the caller adds. Every call after an allocation failure
 * does nothing; rsp_sscope__finish() returns that failure.
 *
 *	struct rsp_sscope w;
 *	rsp_sscope__init(&w);
 *	rsp_sscope__evented(&w, "main 12", "nanoseconds", 0, end);
 *	rsp_sscope__event(&w, 'O', rsp_sscope__frame(&w, "running"), 0); ...
 *	rsp_sscope__sampled(&w, "consolidated", "microseconds", 0, total);
 *	rsp_sscope__sample(&w, frames, n, weight); ...
 *	rsp_sscope__finish(&w, "rsp snapshot 12", out);  (also frees)
 */
struct rsp_sscope {
	struct rsp_buf frames;		 /* "{\"name\":...}," items */
	struct rsp_buf profiles;	 /* the profiles written */
	struct rsp_buf samples, weights; /* of the open sampled profile */
	struct rsp_u64map byname;	 /* name hash -> frame index */
	char **names;			 /* the frames' names, to tell hash collisions apart */
	size_t nr_frames, cap_names, nr_profiles, nr_events, nr_samples;
	int open; /* 0 none, 'E' evented, 'S' sampled */
	int err;
};

void rsp_sscope__init(struct rsp_sscope *w);
/** The index of frame @name (added on first use), or -ENOMEM. */
int rsp_sscope__frame(struct rsp_sscope *w, const char *name);
/* Begin a profile (the open one ends). @unit: "nanoseconds", "microseconds", "none", ... */
void rsp_sscope__evented(struct rsp_sscope *w, const char *name, const char *unit, uint64_t start,
			 uint64_t end);
void rsp_sscope__sampled(struct rsp_sscope *w, const char *name, const char *unit, uint64_t start,
			 uint64_t end);
/** An 'O'pen or 'C'lose event of @frame at @at (the caller nests them). */
void rsp_sscope__event(struct rsp_sscope *w, char type, int frame, uint64_t at);
/** A stack of frame indexes, root first, with its weight. */
void rsp_sscope__sample(struct rsp_sscope *w, const int *frames, size_t n, uint64_t weight);
/** Append the file to @out and free the writer: 0 or a negative errno. */
int rsp_sscope__finish(struct rsp_sscope *w, const char *name, struct rsp_buf *out);
/** Free without writing (an error path). */
void rsp_sscope__exit(struct rsp_sscope *w);

/*
 * rsp_top__speedscope() - @p's stacks (built with stacks_by_thread) as
 * one "sampled" profile per thread, weights in samples (unit "none"), at
 * most 100000 stacks written in all (a thread's others summed in one
 * frame that says so). lib/format/top_speedscope.c. 0 or -ENOMEM.
 */
int rsp_top__speedscope(const struct rsp_flatprof *p, const char *title, struct rsp_buf *out);

#endif
