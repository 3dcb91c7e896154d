/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SW_REQUEST_H
#define RSP_SW_REQUEST_H

/*
 * `rspctl stopwatch ...` as a request (lib/query/cmd_stopwatch.c): its
 * options parsed, what a SPEC names, a stopwatch's valid names. The query
 * layer, above the totals (rsp/stopwatch.h) and their rendering.
 */
#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/stopwatch.h>

struct rsp_request;

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

#endif /* RSP_SW_REQUEST_H */
