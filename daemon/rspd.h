/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_H
#define RSPD_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/log.h>
#include <rsp/status.h>
#include <rsp/window.h>
#include "capture.h"
#include "dump.h"

#define RSPD_DEFAULT_SOCKET "/run/rspd/rspd.sock"

struct rspd_config {
	char socket_path[PATH_MAX];
	bool foreground;
	uint64_t window_budget;
	uint64_t chunk_size;           /* 0: derived */
	uint64_t flush_interval_ns;    /* drain every ring at least this often */
	enum rsp_log_level log_level;
	struct rsp_capture_opts capture;
	struct rspd_dump_config dump;
};

struct rspd_server;

struct rspd {
	struct rspd_config cfg;
	struct rsp_evset es;
	struct rsp_window *window;
	struct rsp_drain drain;
	struct rspd_server *server;
	struct rspd_dumpmeta meta;     /* what dumps need of the live system */
	struct rspd_dumper *dumper;    /* the dump thread */
	uint64_t start_ns;             /* CLOCK_MONOTONIC */
	volatile sig_atomic_t stop;
};

/* status.c */
/** rspd_status__fill() - a snapshot of the capture's state; free ci->cpus. */
int rspd_status__fill(struct rspd *d, struct rsp_capture_info *ci);
uint64_t rspd_now_ns(void);

/* server.c */
/**
 * rspd_server__start() - listen on the control socket, serve in a thread
 * Return: 0 or -errno with one sentence in @err.
 */
int rspd_server__start(struct rspd *d, char *err, size_t errlen);
void rspd_server__stop(struct rspd *d);

#endif
