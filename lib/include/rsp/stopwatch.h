/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_STOPWATCH_H
#define RSP_STOPWATCH_H

/*
 * Stopwatches (`rspctl stopwatch`): the time from a user function's entry
 * to its return, or from a system call's entry to its exit, measured and
 * aggregated in the kernel (bpf/stopwatch.bpf.c, daemon/stopwatch.c).
 * Here: the totals (exact integer sums, so that merging CPUs and seconds
 * loses nothing) and the callers; the request is rsp/sw_request.h and the
 * text and JSON rsp/sw_render.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>

struct rsp_sw_stat; /* bpf/stopwatch.h: one CPU's kernel counts */

#define RSP_SW_NAME_LEN	  32
#define RSP_SW_SPEC_LEN	  256
#define RSP_SW_NR_BUCKETS 65

/* The request and its targets: rsp/sw_request.h, the query layer. */

/* Totals of one stopwatch over some time: exact. */
struct rsp_sw_total {
	uint64_t count, sum, min, max;
	unsigned __int128 sumsq; /* ns^2 */
	uint64_t unmatched, overflow;
	uint64_t offcpu, asleep; /* of sum: off CPU inside the calls, and of that asleep */
	uint64_t off_unknown;	 /* calls whose off-CPU time was lost (not in offcpu) */
	/* --callers: calls with no stack taken / no row left (bpf/stopwatch.h) */
	uint64_t callers_lost, callers_overflow;
	uint64_t buckets[RSP_SW_NR_BUCKETS];
};

/** rsp_sw_total__add_stat() - add one CPU's kernel counts @s (bpf/stopwatch.h). */
RSP_API void rsp_sw_total__add_stat(struct rsp_sw_total *t, const struct rsp_sw_stat *s);
/** rsp_sw_total__merge() - add @src into @dst (exact: integer sums, min of mins, max of maxes). */
RSP_API void rsp_sw_total__merge(struct rsp_sw_total *dst, const struct rsp_sw_total *src);
/** rsp_sw_total__mean() - the mean in ns; 0 when empty. */
RSP_API double rsp_sw_total__mean(const struct rsp_sw_total *t);
/**
 * rsp_sw_total__stddev() - the population standard deviation in ns:
 * M2 = sumsq - sum^2/n from the exact sums in long double (64-bit mantissa),
 * the value Welford's update (or Chan's merge of per-CPU partials) tends
 * to, without their rounding.
 */
RSP_API double rsp_sw_total__stddev(const struct rsp_sw_total *t);

/*
 * --callers: a stopwatch's calls by caller stack, symbolized, merged when
 * their frames name the same functions (the kernel keys rows by process and
 * stack id: two processes of one program, or two call sites in one
 * function, are one row here), ranked by calls. Bounded by @max_rows.
 */
struct rsp_sw_callers;

struct rsp_sw_caller_row {
	uint64_t count, sum;	    /* calls, and their time in ns */
	unsigned nframes;	    /* innermost (the call site) first */
	const char *const *names;   /* "caller_a", "a->b", "[unknown]" */
	const char *const *objects; /* the file, or NULL when unknown */
};

#define RSP_SW_CALLERS_TOP 10 /* show --callers: rows shown without --top */
#define RSP_SW_CALLERS_MAX 64 /* add --callers: stacks kept without --callers-max */

/** rsp_sw_callers__new() - empty, at most @max_rows rows; NULL on ENOMEM. Free with __delete(). */
RSP_API struct rsp_sw_callers *rsp_sw_callers__new(size_t max_rows);
RSP_API void rsp_sw_callers__delete(struct rsp_sw_callers *c);
/**
 * rsp_sw_callers__add() - @count calls taking @sum ns from the stack of
 * @nframes frames (@names[i], @objects[i] may be NULL: copied). Added to the
 * row of the same frames, else a new row. Return: 0; -ENOSPC (a new row
 * beyond max_rows: its calls counted by __dropped()); -ENOMEM.
 */
RSP_API int rsp_sw_callers__add(struct rsp_sw_callers *c, const char *const *names,
				const char *const *objects, unsigned nframes, uint64_t count,
				uint64_t sum);
/** rsp_sw_callers__sort() - rank the rows: most calls first (ties: most time, then frames). */
RSP_API void rsp_sw_callers__sort(struct rsp_sw_callers *c);
RSP_API size_t rsp_sw_callers__rows(const struct rsp_sw_callers *c);
/** rsp_sw_callers__row() - row @i (owned by @c, valid until the next __add or __delete). */
RSP_API const struct rsp_sw_caller_row *rsp_sw_callers__row(const struct rsp_sw_callers *c,
							    size_t i);
/** rsp_sw_callers__calls() - the calls of all rows, and (__dropped) of refused ones. */
RSP_API uint64_t rsp_sw_callers__calls(const struct rsp_sw_callers *c);
RSP_API uint64_t rsp_sw_callers__dropped(const struct rsp_sw_callers *c);

/* One stopwatch as `list` and `show` describe it. */
struct rsp_sw_view {
	char name[RSP_SW_NAME_LEN];
	char spec[RSP_SW_SPEC_LEN];
	char where[4400];  /* what was probed: "/usr/bin/x:work (offset 0x1139)" */
	long pid;	   /* -1: any */
	char comm[16];	   /* --comm, or with --pid the process's name */
	bool by_comm;	   /* only threads named comm */
	uint64_t added_ns; /* CLOCK_MONOTONIC */
	uint64_t span_ns;  /* the time the totals cover */
	bool clipped;	   /* --last asked for more than is kept per second */
	bool since_added;  /* the totals cover all the stopwatch's life */
	struct rsp_sw_total total;
	bool callers_on;      /* added with --callers */
	unsigned callers_max; /* its --callers-max */
	/* show --callers: its callers since added (NULL: not asked), the top shown */
	const struct rsp_sw_callers *callers;
	unsigned callers_top;
};

/* `list` and `show` rendered: rsp/sw_render.h, the format layer. */

#endif
