/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_H
#define RSPD_H

/*
 * The daemon: what its threads share. Each part's functions are declared in
 * its own header (config.h, evset.h, drain.h, server.h, livemodel.h,
 * histthread.h, status.h, dump.h, dumpmeta.h, notify.h).
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/ksyms.h>
#include <rsp/socktab.h>
#include <rsp/window.h>
#include "config.h"
#include "drain.h"
#include "dumpmeta.h"
#include "budget.h"
#include "evset.h"

struct rspd_server;
struct rspd_metrics;
struct rspd_livemodel;
struct rspd_histthread;
struct rspd_wzip;
struct rspd_syscalls;
struct rspd_triggers;
struct rsp_symbolizer;

#define RSPD_ASKED_CLOCKS 32 /* past that many such threads, the others count as capture */

struct rspd {
	struct rspd_config cfg;
	struct rsp_evset es;
	struct rsp_window *window;
	struct rsp_drain drain;
	struct rspd_server *server;
	struct rspd_metrics *metrics; /* NULL: no --metrics-listen, --metrics-textfile */
	struct rspd_livemodel *livemodel;
	struct rspd_histthread *histthread; /* NULL with --no-hist */
	struct rspd_wzip *wzip;		    /* NULL with --no-window-compress */
	struct rspd_syscalls *syscalls;	    /* the syscall family (syscalls.h) */
	struct rsp_ksyms *ksyms;	    /* /proc/kallsyms at start, NULL if unreadable */
	struct rsp_socktab *socks;	    /* /proc/net at start: sockets older than rspd */
	struct rspd_dumpmeta meta;	    /* what dumps need of the live system */
	struct rspd_dumper *dumper;	    /* the dump thread */
	struct rspd_budget budget;	    /* --overhead-budget */
	uint64_t start_ns;		    /* CLOCK_MONOTONIC */
	/* no record reached the rings in this long after start (0: they do; main.c) */
	_Atomic uint64_t silent_ns;
	/*
	 * The CPU clocks of the threads that answer what is asked of rspd (the
	 * query threads, the dump thread): the overhead budget leaves their
	 * time out of what capture costs (asked for; no level sheds it). Each
	 * slot: 1 << 32 | the clock id, 0 if free (rspd_budget__asked()). Here,
	 * not in the server, which the capture thread's budget outlives.
	 */
	_Atomic uint64_t asked_clocks[RSPD_ASKED_CLOCKS];
	bool silent_checked; /* capture thread only */
	volatile sig_atomic_t stop;
	struct rspd_stopwatches *stopwatches; /* rspctl stopwatch (stopwatch.c); NULL without BPF */
	struct rspd_triggers *triggers;	      /* rspctl trigger (trigger.h) */
};

#endif
