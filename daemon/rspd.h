/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_H
#define RSPD_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/hist.h>
#include <rsp/log.h>
#include <rsp/status.h>
#include <rsp/window.h>
#include "capture.h"

#define RSPD_DEFAULT_SOCKET "/run/rspd/rspd.sock"

struct rspd_config {
	char socket_path[PATH_MAX];
	bool foreground;
	uint64_t window_budget;
	uint64_t chunk_size;           /* 0: derived */
	uint64_t flush_interval_ns;    /* drain every ring at least this often */
	enum rsp_log_level log_level;
	struct rsp_capture_opts capture;
	/* Latency histograms (rspctl hist): --no-hist, --hist-* */
	bool hist_on;
	struct rsp_hist_config hist;
	uint64_t hist_io_timeout_ns;
};

struct rspd_server;
struct rspd_analysis;

struct rspd {
	struct rspd_config cfg;
	struct rsp_evset es;
	struct rsp_window *window;
	struct rsp_drain drain;
	struct rspd_server *server;
	struct rspd_analysis *analysis; /* NULL with --no-hist */
	uint64_t start_ns;             /* CLOCK_MONOTONIC */
	volatile sig_atomic_t stop;
};

/* status.c */
/** rspd_status__fill() - a snapshot of the capture's state; free ci->cpus. */
int rspd_status__fill(struct rspd *d, struct rsp_capture_info *ci);
uint64_t rspd_now_ns(void);

/* analysis.c: the thread that feeds the latency histograms */
/**
 * rspd_analysis__start() - create the histogram store and start the thread
 * (nothing with --no-hist). Return: 0 or -errno with one sentence in @err.
 */
int rspd_analysis__start(struct rspd *d, char *err, size_t errlen);
/** rspd_analysis__publish() - a full drain started at @drain_start: feed up to it. */
void rspd_analysis__publish(struct rspd *d, uint64_t drain_start);
/** rspd_analysis__stop() - feed what was published, stop the thread, free the store. */
void rspd_analysis__stop(struct rspd *d);
/** rspd_analysis__store() - the histograms for queries, NULL when off. */
struct rsp_hist_store *rspd_analysis__store(struct rspd *d);

/* server.c */
/**
 * rspd_server__start() - listen on the control socket, serve in a thread
 * Return: 0 or -errno with one sentence in @err.
 */
int rspd_server__start(struct rspd *d, char *err, size_t errlen);
void rspd_server__stop(struct rspd *d);

#endif
