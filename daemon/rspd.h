/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_H
#define RSPD_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/hist.h>
#include <rsp/ksyms.h>
#include <rsp/socktab.h>
#include <rsp/log.h>
#include <rsp/status.h>
#include <rsp/window.h>
#include "capture.h"
#include "dump.h"

#define RSPD_DEFAULT_SOCKET "/run/rspd/rspd.sock"
#ifndef RSPD_DEFAULT_CONFIG
#define RSPD_DEFAULT_CONFIG "/etc/rspd.conf"
#endif

/*
 * Every option rspd has; config.c's table says which section of the file
 * each belongs to, its default, and whether SIGHUP can change it.
 */
struct rspd_config {
	/* command line only */
	char config_path[PATH_MAX];
	bool config_given; /* --config: the file must exist */
	bool foreground;
	bool check_only; /* --check-config */
	/* [daemon] */
	enum rsp_log_level log_level;
	/* [control] */
	char socket_path[PATH_MAX];
	char socket_group[64]; /* owns the socket (mode 0660); "" or absent: root only */
	char admin_group[64];  /* members may query every process */
	unsigned max_clients;
	unsigned query_threads;
	uint64_t request_timeout_ns; /* to send a whole request */
	uint64_t reply_timeout_ns;   /* to read the whole answer */
	/* [window] */
	uint64_t window_budget;
	uint64_t chunk_size; /* 0: derived */
	/* [capture] */
	uint64_t flush_interval_ns; /* drain every ring at least this often */
	unsigned symbol_cache;	    /* symbol tables cached (objects) */
	struct rsp_capture_opts capture;
	/* [dump] */
	struct rspd_dump_config dump;
	/* [hist]: the latency profiles (rspctl hist) */
	bool hist_on;
	struct rsp_hist_config hist;
	uint64_t hist_io_timeout_ns;
	unsigned hist_max_threads; /* threads the off-CPU/run-queue feed follows */
};

struct rspd_server;
struct rspd_livemodel;
struct rspd_analysis;
struct rsp_symbolizer;

struct rspd {
	struct rspd_config cfg;
	struct rsp_evset es;
	struct rsp_window *window;
	struct rsp_drain drain;
	struct rspd_server *server;
	struct rspd_livemodel *livemodel;
	struct rspd_analysis *analysis; /* NULL with --no-hist */
	struct rsp_ksyms *ksyms;	/* /proc/kallsyms at start, NULL if unreadable */
	struct rsp_socktab *socks;	/* /proc/net at start: sockets older than rspd */
	struct rspd_dumpmeta meta;	/* what dumps need of the live system */
	struct rspd_dumper *dumper;	/* the dump thread */
	uint64_t start_ns;		/* CLOCK_MONOTONIC */
	volatile sig_atomic_t stop;
};

/* status.c */
/** rspd_status__fill() - a snapshot of the capture's state; free ci->cpus. */
int rspd_status__fill(struct rspd *d, struct rsp_capture_info *ci);

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
/**
 * rspd_server__configure() - apply the control options that a reload may
 * change (socket group and mode, admin group, timeouts); capture thread.
 */
void rspd_server__configure(struct rspd *d);

/* livemodel.c */
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

#endif
