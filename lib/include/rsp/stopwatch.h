/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_STOPWATCH_H
#define RSP_STOPWATCH_H

/*
 * Stopwatches (`rspctl stopwatch`): the time from a user function's entry
 * to its return, or from a system call's entry to its exit, measured and
 * aggregated in the kernel (bpf/stopwatch.bpf.c, daemon/stopwatch.c).
 * Here: the request, the totals (exact integer sums, so that merging CPUs
 * and seconds loses nothing) and their text and JSON.
 */
#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>

struct rsp_request;
struct rsp_sw_stat; /* bpf/stopwatch.h: one CPU's kernel counts */

#define RSP_SW_NAME_LEN	  32
#define RSP_SW_SPEC_LEN	  256
#define RSP_SW_NR_BUCKETS 65

enum rsp_sw_op { RSP_SW_ADD, RSP_SW_LIST, RSP_SW_RM, RSP_SW_SHOW };

/* `rspctl stopwatch ...`, parsed (strings point into the request's argv). */
struct rsp_sw_request {
	enum rsp_sw_op op;
	const char *spec; /* ADD: BINARY:SYMBOL or syscall:NAME */
	const char *name; /* ADD: --name; RM, SHOW: the stopwatch (SHOW: NULL = all) */
	long pid;	  /* ADD: --pid, -1: any */
	const char *comm; /* ADD: --comm, NULL: any */
	uint64_t last_ns; /* SHOW: --last, 0: since it was added */
	bool json;
	/* ADD, a keyed pair instead of SPEC: --start SYS:EVENT --end SYS:EVENT
	 * --key FIELD[,FIELD] [--where FIELD=VALUE]; or of user functions:
	 * --start BINARY:SYMBOL --end BINARY:SYMBOL --key argN */
	const char *start, *end, *key, *where;
	/* ADD: --callers [--callers-max N]; SHOW: --callers [--top N] */
	bool callers;
	unsigned callers_max; /* 0: the default */
	unsigned top;	      /* 0: the default */
};

/** rsp_request__stopwatch() - @req's stopwatch request; -EINVAL if @req is not one. */
RSP_API int rsp_request__stopwatch(const struct rsp_request *req, struct rsp_sw_request *out);

/* What a SPEC names. */
enum rsp_sw_kind { RSP_SW_FUNC, RSP_SW_SYSCALL };

struct rsp_sw_target {
	enum rsp_sw_kind kind;
	char object[RSP_SW_SPEC_LEN]; /* FUNC: the binary as given */
	char symbol[RSP_SW_SPEC_LEN]; /* FUNC: the function; SYSCALL: the call's name */
};

/**
 * rsp_sw_target__parse() - split SPEC: "syscall:NAME" or "BINARY:SYMBOL"
 * (the last ':' separates). Return: 0, or -EINVAL with one sentence in @err.
 */
RSP_API int rsp_sw_target__parse(const char *spec, struct rsp_sw_target *t, struct rsp_buf *err);

/**
 * rsp_sw__user_key() - N when @key is "argN" (1 to 6): a keyed pair of user
 * functions (--start BINARY:SYMBOL --end BINARY:SYMBOL), timed from one's
 * entry to the other's by their Nth integer argument; else 0 (tracepoints).
 */
RSP_API unsigned rsp_sw__user_key(const char *key);

/** rsp_sw__valid_name() - letters, digits, '_', '-', '.', at most 31: a stopwatch's name. */
RSP_API bool rsp_sw__valid_name(const char *name);

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

/**
 * rsp_sw__render_list() - `stopwatch list`: @n views, text or JSON into @out.
 * @max: the bound (--stopwatch-max). Return: 0 or -ENOMEM.
 */
RSP_API int rsp_sw__render_list(const struct rsp_sw_view *v, size_t n, unsigned max, bool json,
				struct rsp_buf *out);
/**
 * rsp_sw__render_show() - `stopwatch show`: each view's statistics and
 * log2 histogram with peaks (the hist renderer's), text or JSON.
 */
RSP_API int rsp_sw__render_show(const struct rsp_sw_view *v, size_t n, bool json,
				struct rsp_buf *out);

#endif
