/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_STOPWATCH_H
#define RSPD_STOPWATCH_H

#include <stdbool.h>
#include <rsp/buf.h>
#include <rsp/stopwatch.h>
#include <rsp/sw_request.h>

struct rspd;
struct rspd_stopwatches;

/**
 * rspd_stopwatches__new() - no stopwatch yet; the BPF programs are loaded
 * when the first is added. NULL on ENOMEM. Free with __delete(), which
 * removes every probe (the kernel also does when rspd dies: the links are
 * rspd's file descriptors). @d is kept: show --callers symbolizes with its
 * process model.
 */
struct rspd_stopwatches *rspd_stopwatches__new(struct rspd *d);
void rspd_stopwatches__delete(struct rspd_stopwatches *s);
/**
 * rspd_stopwatches__run_time() - the stopwatch programs' run time so far, ns
 * (BPF_STATS_RUN_TIME held; it starts again at 0 when their last stopwatch
 * is removed and the programs are unloaded).
 */
uint64_t rspd_stopwatches__run_time(struct rspd_stopwatches *s);

/**
 * rspd_stopwatches__request() - carry out `rspctl stopwatch ...` for a
 * client; @admin: root or the admin group (add and rm need it). The
 * answer goes to @out; an error is one sentence in @err.
 */
int rspd_stopwatches__request(struct rspd_stopwatches *s, const struct rsp_sw_request *req,
			      bool admin, struct rsp_buf *out, struct rsp_buf *err);

#endif
