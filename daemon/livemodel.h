/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_LIVEMODEL_H
#define RSPD_LIVEMODEL_H

/* The live process model: the processes and symbols queries resolve addresses with. */
#include <stddef.h>

struct rspd;
struct rsp_symbolizer;

/**
 * rspd_livemodel__init() - create the process model (before the control thread
 * starts: queries wait until it is loaded). 0 or -ENOMEM with @err set.
 */
int rspd_livemodel__init(struct rspd *d, char *err, size_t errlen);
/**
 * rspd_livemodel__start() - start the model's thread, which reads /proc and
 * then follows the window's side-band records. Call after the events are
 * enabled. Return: 0 or -errno with one sentence in @err.
 */
int rspd_livemodel__start(struct rspd *d, char *err, size_t errlen);
void rspd_livemodel__stop(struct rspd *d);
/**
 * rspd_livemodel__acquire() - lock the model for one query, bring it up to date
 * and start a symbolizer generation. NULL if there is no model. Pair with
 * rspd_livemodel__release().
 */
struct rsp_symbolizer *rspd_livemodel__acquire(struct rspd *d);
void rspd_livemodel__release(struct rspd *d);
/*
 * rspd_livemodel__try_acquire() - the same, but NULL at once (and nothing
 * to release) while the model has not read /proc yet: for the metrics,
 * which rspd renders once before it starts the model.
 */
struct rsp_symbolizer *rspd_livemodel__try_acquire(struct rspd *d);
/*
 * rspd_livemodel__acquire_nowait() - the same as acquire, but never waits:
 * NULL with *busy set while a query holds the model (or it has not read
 * /proc yet), NULL with *busy clear when there is no model. For the
 * stopwatches' poller, which must not stall behind a long query.
 */
struct rsp_symbolizer *rspd_livemodel__acquire_nowait(struct rspd *d, bool *busy);

#endif
