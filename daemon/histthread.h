/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_HISTTHREAD_H
#define RSPD_HISTTHREAD_H

/* The thread that feeds the latency histograms (rspctl hist). */
#include <stddef.h>
#include <stdint.h>

struct rspd;
struct rsp_hist_store;
struct rsp_histfeed_stats;

/**
 * rspd_histthread__start() - create the histogram store and start the thread
 * (nothing with --no-hist). Return: 0 or -errno with one sentence in @err.
 */
int rspd_histthread__start(struct rspd *d, char *err, size_t errlen);
/** rspd_histthread__publish() - a full drain started at @drain_start: feed up to it. */
void rspd_histthread__publish(struct rspd *d, uint64_t drain_start);
/** rspd_histthread__stop() - feed what was published, stop the thread, free the store. */
void rspd_histthread__stop(struct rspd *d);
/** rspd_histthread__feed_stats() - the feed's counters (another thread may ask). 0 or -ENOENT. */
int rspd_histthread__feed_stats(struct rspd *d, struct rsp_histfeed_stats *out);
/**
 * rspd_histthread__read_to() - the time up to which the thread has read the
 * window (any thread may ask; 0 before its first pass or when off).
 */
uint64_t rspd_histthread__read_to(struct rspd *d);
/** rspd_histthread__store() - the histograms for queries, NULL when off. */
struct rsp_hist_store *rspd_histthread__store(struct rspd *d);

#endif
