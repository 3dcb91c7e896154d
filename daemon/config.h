/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_CONFIG_H
#define RSPD_CONFIG_H

/*
 * rspd's options: one table (config.c) defines each option once, with its
 * name (the long option and the key in the file), its section in the file,
 * its default, its help line and how to parse and show it. The table makes
 * getopt's option list, --help, the commented default file
 * (rspd --default-config) and the checks of the man page.
 *
 * Precedence: built-in defaults, then the file (/etc/rspd.conf unless
 * --config says otherwise), then the command line.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <rsp/hist.h>
#include <rsp/log.h>
#include <rsp/trigger.h>
#include "capture_opts.h"
#include "dump.h"

#define RSPD_DEFAULT_SOCKET "/run/rspd/rspd.sock"
/*
 * The largest --ring-pages: 1 GiB per CPU. The kernel took 1048576 pages
 * and its rings then delivered nothing; 524288 failed with ENOMEM.
 */
#define RSPD_RING_PAGES_MAX (1u << 18)
/* The largest configuration file read (the commented default file is ~6 KiB). */
#define RSPD_CONFIG_MAX_BYTES (1 << 20)
/* trigger lines in the file and on the command line */
#define RSPD_CONFIG_MAX_TRIGGERS 64
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
	uint64_t query_memory;	     /* bytes one query may hold; 0: auto */
	uint64_t request_timeout_ns; /* to send a whole request */
	uint64_t reply_timeout_ns;   /* to read the whole answer */
	/* [window] */
	uint64_t window_budget;
	uint64_t chunk_size;  /* 0: derived */
	bool window_compress; /* compress cold chunks (wzip.c) */
	/* [capture] */
	uint64_t flush_interval_ns; /* drain every ring at least this often */
	unsigned symbol_cache;	    /* symbol tables cached (objects) */
	struct rsp_capture_opts capture;
	/* [dump] */
	struct rspd_dump_config dump;
	/* [stopwatch]: rspctl stopwatch (stopwatch.c) */
	struct {
		unsigned max;	  /* stopwatches at once */
		unsigned threads; /* threads inside probed calls at once (the key table) */
		unsigned callers; /* --callers: caller stacks of all stopwatches at once */
	} stopwatch;
	/* [hist]: the latency profiles (rspctl hist) */
	bool hist_on;
	struct rsp_hist_config hist;
	uint64_t hist_io_timeout_ns;
	unsigned hist_max_threads; /* threads the off-CPU/run-queue feed follows */
	unsigned syscall_keys;	   /* the syscall family's kernel table (syscalls.h) */
	bool syscall_system;	   /* without the family: the system's profile per number */
	/* [capture] overhead-budget: % of one CPU capture may cost (0: off) */
	double overhead_budget_pct;
	/* [metrics]: Prometheus metrics (metrics.c); "" listen and textfile: off */
	char metrics_listen[64];	 /* "127.0.0.1:9464", "[::1]:9464" */
	bool metrics_remote;		 /* listen may be other than loopback */
	char metrics_textfile[PATH_MAX]; /* node_exporter's textfile collector */
	uint64_t metrics_interval_ns;	 /* textfile written this often */
	unsigned metrics_top_processes;	 /* per-process series: the top N */
	unsigned metrics_top_cgroups;	 /* per-cgroup series: the top N */
	unsigned metrics_connections;	 /* HTTP connections served at once */
	uint64_t metrics_timeout_ns;	 /* an idle HTTP connection is closed after this */
	/* [trigger]: rspctl trigger (trigger.c) */
	struct rsp_trig_spec triggers[RSPD_CONFIG_MAX_TRIGGERS];
	unsigned nr_triggers;
	unsigned trigger_max;	       /* triggers at once */
	unsigned trigger_rate;	       /* fires a minute, all together */
	bool trigger_webhook;	       /* POST /v1/trigger on metrics-listen */
	char trigger_secret[PATH_MAX]; /* the bearer token's file */
};

enum rspd_config_result {
	RSPD_CONFIG_RUN = 0,   /* start the daemon */
	RSPD_CONFIG_EXIT = 1,  /* done (--help, --version, --check-config ...): exit 0 */
	RSPD_CONFIG_USAGE = 2, /* a command-line error, already printed: exit 2 */
	RSPD_CONFIG_BAD = 3,   /* a bad file or options that cannot work, said in @err: exit 1 */
};

/**
 * rspd_config__load() - defaults, then the file, then the command line
 * @argv: kept (not copied) for rspd_config__read(); it lives as long as
 *        the process
 * @err:  on RSPD_CONFIG_BAD, "FILE:LINE: what is wrong; what is allowed", or
 *        why the options cannot work together on this machine
 *
 * Command-line errors and --help go to stderr/stdout directly.
 */
enum rspd_config_result rspd_config__load(struct rspd_config *c, int argc, char **argv, char *err,
					  size_t errlen);

/**
 * rspd_config__read() - what a reload (SIGHUP) would bring: the defaults,
 * the file, then the command line again
 * @next: filled in (large: not on a small stack)
 *
 * Safe on any thread: it reads only the kept command line and the file.
 * It may wait for the file system, so the capture loop calls it through
 * reload.c's thread.
 * Return: 0, or -1 with "FILE:LINE: why" in @err.
 */
int rspd_config__read(struct rspd_config *next, char *err, size_t errlen);

/**
 * rspd_config__apply() - apply a configuration read by rspd_config__read()
 * @cfg: the configuration in force: the options marked reloadable in the
 *       table take their values from @next. The others keep theirs, with a
 *       warning in the log when the file changed them (they take effect at
 *       restart).
 *
 * Other threads must read only options that are not reloadable from @cfg
 * (the server keeps its own copy of its options, updated by
 * rspd_server__configure()).
 */
void rspd_config__apply(struct rspd_config *cfg, const struct rspd_config *next);

/*
 * --query-memory auto: RSPD_QUERY_MEMORY_WINDOWS times the window's budget,
 * at least RSPD_QUERY_MEMORY_MIN. 8: a BPF window's switch records (40-56
 * bytes) become two ~100-byte segments each in a query's timeline store,
 * whose mapped vectors the budget counts (rsp/mapped.h); at 4 a snapshot
 * of a full window of a switch storm was refused (e2e-bpf.test_budget).
 */
#define RSPD_QUERY_MEMORY_WINDOWS 8
#define RSPD_QUERY_MEMORY_MIN	  (64ull << 20)

/** rspd_config__query_memory() - the bytes one query may hold (auto resolved). */
uint64_t rspd_config__query_memory(const struct rspd_config *c);

/** rspd_config__show_size() - @v bytes as the options write it ("64M", "1536K"). */
void rspd_config__show_size(uint64_t v, char *buf, size_t n);

/** rspd_config__print_default() - the commented default configuration file. */
void rspd_config__print_default(FILE *f);

#endif
