/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_PPROFHTTP_H
#define RSPD_PPROFHTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>

struct rspd;

/*
 * The pprof profiles rspd serves beside its metrics (pprofhttp.c), as Go's
 * net/http/pprof serves them, so that go tool pprof and the continuous
 * profilers' scrapers (Pyroscope, Parca) pull them the same way:
 *
 *   GET /debug/pprof/profile?seconds=N         on-CPU, the last N seconds
 *                                              of the window (rspctl top --pprof)
 *   GET /debug/pprof/offcpu?seconds=N&pid=P    process P's chain over the
 *                                              last N seconds (rspctl
 *                                              snapshot P --pprof)
 *
 * N: 1 to RSPD_PPROF_MAX_SECONDS, 30 when not given (Go's default). The
 * profile is the window's past, so the answer comes at once rather than
 * after N seconds as Go's does.
 */
#define RSPD_PPROF_MAX_SECONDS	   3600
#define RSPD_PPROF_DEFAULT_SECONDS 30
#define RSPD_PPROF_MAX_PARAMS	   8

struct rspd_pprof_params {
	size_t n;
	const char *key[RSPD_PPROF_MAX_PARAMS], *val[RSPD_PPROF_MAX_PARAMS]; /* val NULL: "?k" */
	bool too_many;
};

/** Whether @url is one of the profiles above (else: not found). */
bool rspd_pprofhttp__is_profile(const char *url);

/**
 * rspd_pprofhttp__answer() - the profile @url asks for, with query
 * parameters @p, into @out (gzip-compressed profile.proto), its heap
 * counted against @query_memory bytes.
 * Return: the HTTP status: 200, else 400 (a bad query: one sentence in
 * @err), 503 (over --query-memory, or rspd cannot answer now).
 */
unsigned rspd_pprofhttp__answer(struct rspd *d, uint64_t query_memory, const char *url,
				const struct rspd_pprof_params *p, struct rsp_buf *out,
				struct rsp_buf *err);

#endif
