// SPDX-License-Identifier: GPL-2.0
/*
 * rspd's options, defined once in one table that serves getopt, the INI
 * file (parsed by inih), --help, the commented default file and the
 * man-page check. Adding an option is adding one entry to opts[] (and its
 * field to struct rspd_config).
 *
 * The file is INI: "[section]" lines, "key = value" lines, comments start
 * with '#' or ';' at the beginning of a line. Unknown sections and keys,
 * keys in the wrong section and bad values are errors with FILE:LINE and
 * what is allowed: rspd refuses to start on them, and a reload keeps the
 * configuration in force.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <ini.h>
#include <rsp/parse.h>
#include <rsp/trigger.h>
#include <rsp/window.h>
#include "config.h"
#include "log.h"
#include "metrics_addr.h"
#include "size.h"

enum opt_type {
	T_ACTION, /* command line only, no value (--foreground, --help) */
	T_BOOL,	  /* --NAME / --no-NAME; yes or no in the file */
	T_UINT,	  /* unsigned in [min, max] */
	T_SIZE,	  /* uint64_t bytes, K/M/G suffixes, in [min, max] */
	T_DUR,	  /* uint64_t ns, "100ms", in [min, max] */
	T_STR,	  /* char[size] */
	T_CUSTOM, /* set/show below */
};

#define OPTF_RELOAD 0x1u /* SIGHUP applies a new value */

struct rspd_opt {
	const char *name;    /* --NAME and the key in the file */
	int short_name;	     /* 0: none */
	const char *section; /* NULL: command line only */
	const char *arg;     /* what the value is, for --help: "SIZE" */
	const char *def;     /* default as written by the user; NULL: set by init */
	enum opt_type type;
	size_t off, size; /* the field in struct rspd_config */
	uint64_t min, max;
	unsigned flags;
	const char *help;    /* one line, under 52 columns */
	const char *allowed; /* for error messages; derived from min/max if NULL */
	int (*set)(struct rspd_config *c, const char *v, char *why, size_t n);
	void (*show)(const struct rspd_config *c, char *buf, size_t n);
};

/* --- custom options ------------------------------------------------------ */

static const char *const level_names[] = {"error", "warning", "info", "debug"};

static int set_log_level(struct rspd_config *c, const char *v, char *why, size_t n)
{
	for (int i = 0; i < 4; i++) {
		if (!strcmp(v, level_names[i])) {
			c->log_level = (enum rsp_log_level)i;
			return 0;
		}
	}
	return -1;
}

static void show_log_level(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", level_names[c->log_level]);
}

static int set_socket(struct rspd_config *c, const char *v, char *why, size_t n)
{
	if (v[0] != '/' || strlen(v) > 107)
		return -1;
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", v);
	return 0;
}

static void show_socket(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", c->socket_path);
}

static int set_chunk(struct rspd_config *c, const char *v, char *why, size_t n)
{
	uint64_t sz;

	if (!strcmp(v, "auto")) {
		c->chunk_size = 0;
		return 0;
	}
	if (rsp_parse__size(v, &sz) || sz < 4096 || sz > (16u << 20) || sz % 8)
		return -1;
	c->chunk_size = sz;
	return 0;
}

static void show_size(uint64_t v, char *buf, size_t n)
{
	rspd_size__text(v, false, buf, n);
}

static int set_query_memory(struct rspd_config *c, const char *v, char *why, size_t n)
{
	uint64_t sz;

	if (!strcmp(v, "auto")) {
		c->query_memory = 0;
		return 0;
	}
	if (rsp_parse__size(v, &sz) || sz < (1u << 20) || sz > (1ull << 40))
		return -1;
	c->query_memory = sz;
	return 0;
}

static void show_query_memory(const struct rspd_config *c, char *buf, size_t n)
{
	if (!c->query_memory)
		snprintf(buf, n, "auto");
	else
		show_size(c->query_memory, buf, n);
}

uint64_t rspd_config__query_memory(const struct rspd_config *c)
{
	uint64_t auto_bytes = RSPD_QUERY_MEMORY_WINDOWS * c->window_budget;

	if (c->query_memory)
		return c->query_memory;
	return auto_bytes > RSPD_QUERY_MEMORY_MIN ? auto_bytes : RSPD_QUERY_MEMORY_MIN;
}

void rspd_config__show_size(uint64_t v, char *buf, size_t n)
{
	show_size(v, buf, n);
}

static void show_chunk(const struct rspd_config *c, char *buf, size_t n)
{
	if (!c->chunk_size)
		snprintf(buf, n, "auto");
	else
		show_size(c->chunk_size, buf, n);
}

static int set_ring_pages(struct rspd_config *c, const char *v, char *why, size_t n)
{
	uint64_t p;

	if (rsp_parse__u64(v, 1, RSPD_RING_PAGES_MAX, &p) || (p & (p - 1)))
		return -1;
	c->capture.ring_pages = (unsigned)p;
	return 0;
}

static void show_ring_pages(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%u", c->capture.ring_pages);
}

static int set_stacks(struct rspd_config *c, const char *v, char *why, size_t n)
{
	return rsp_capture_opts__set_stacks(&c->capture, v) ? -1 : 0;
}

static void show_stacks(const struct rspd_config *c, char *buf, size_t n)
{
	char tmp[32];

	snprintf(buf, n, "%s", rsp_capture_opts__stacks_name(&c->capture, tmp, sizeof(tmp)));
}

/* A percentage of one CPU: a decimal number from 0 to 100, "%" optional. */
static int set_budget(struct rspd_config *c, const char *v, char *why, size_t n)
{
	char buf[32];
	size_t len = strlen(v);

	if (len && v[len - 1] == '%')
		len--;
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	return rsp_parse__decimal(buf, 0, 100, &c->overhead_budget_pct) ? -1 : 0;
}

static void show_budget(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%g", c->overhead_budget_pct);
}

static int set_callchain(struct rspd_config *c, const char *v, char *why, size_t n)
{
	bool k = !strcmp(v, "kernel+user") || !strcmp(v, "kernel");
	bool u = !strcmp(v, "kernel+user") || !strcmp(v, "user");

	if (!k && !u)
		return -1;
	c->capture.callchain_kernel = k;
	c->capture.callchain_user = u;
	return 0;
}

static void show_callchain(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s",
		 c->capture.callchain_kernel && c->capture.callchain_user ? "kernel+user"
		 : c->capture.callchain_kernel				  ? "kernel"
									  : "user");
}

static int set_families(struct rspd_config *c, const char *v, char *why, size_t n)
{
	char e[256];

	if (!rsp_capture_opts__set_families(&c->capture, v, e, sizeof(e)))
		return 0;
	snprintf(why, n, "all, a comma-separated list of families, or +/- changes (%s)", e);
	return -1;
}

static void show_families(const struct rspd_config *c, char *buf, size_t n)
{
	size_t len = 0;
	bool all = true;

	buf[0] = '\0';
	for (int f = 0; f < RSP_FAM__NR; f++) {
		all = all && c->capture.families[f];
		if (c->capture.families[f] && len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "",
						rsp_catalogue__family(f)->name);
	}
	if (all)
		snprintf(buf, n, "all");
}

static int set_net_source(struct rspd_config *c, const char *v, char *why, size_t n)
{
	return rsp_capture_opts__set_net_source(&c->capture, v) ? -1 : 0;
}

static void show_net_source(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", rsp_capture_opts__net_source_name(&c->capture));
}

static int set_backend(struct rspd_config *c, const char *v, char *why, size_t n)
{
	return rsp_capture_opts__set_backend(&c->capture, v) ? -1 : 0;
}

static void show_backend(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", rsp_capture_opts__backend_name(&c->capture));
}

static int set_uprobes(struct rspd_config *c, const char *v, char *why, size_t n)
{
	return rsp_capture_opts__set_uprobes(&c->capture, v, why, n) ? -1 : 0;
}

static void show_uprobes(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", c->capture.uprobes[0] ? c->capture.uprobes : "none");
}

static int set_capture_cgroup(struct rspd_config *c, const char *v, char *why, size_t n)
{
	if (v[0] && (v[0] != '/' || strlen(v) >= sizeof(c->capture.cgroup))) {
		snprintf(why, n, "a cgroup v2 path starting with '/' and shorter than %zu bytes",
			 sizeof(c->capture.cgroup));
		return -1;
	}
	snprintf(c->capture.cgroup, sizeof(c->capture.cgroup), "%s", v);
	return 0;
}

static void show_capture_cgroup(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", c->capture.cgroup);
}

static int set_dwarf(struct rspd_config *c, const char *v, char *why, size_t n)
{
	return rsp_capture_opts__set_dwarf(&c->capture, v, why, n) ? -1 : 0;
}

static void show_dwarf(const struct rspd_config *c, char *buf, size_t n)
{
	rsp_capture_opts__dwarf_name(&c->capture, buf, n);
}

static int set_dwarf_stack(struct rspd_config *c, const char *v, char *why, size_t n)
{
	uint64_t sz;

	/* The kernel takes at most 65528 bytes (a record is at most 64 KiB). */
	if (rsp_parse__size(v, &sz) || sz > 65528 || sz % 8)
		return -1;
	c->capture.dwarf_stack = (unsigned)sz;
	return 0;
}

static void show_dwarf_stack(const struct rspd_config *c, char *buf, size_t n)
{
	show_size(c->capture.dwarf_stack, buf, n);
}

static int set_dump_dir(struct rspd_config *c, const char *v, char *why, size_t n)
{
	/* Room for "/rsp-HOST-TIME.perf.data" and the temp file's name. */
	if (v[0] != '/' || strlen(v) >= sizeof(c->dump.dir) - 320)
		return -1;
	snprintf(c->dump.dir, sizeof(c->dump.dir), "%s", v);
	return 0;
}

static void show_dump_dir(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", c->dump.dir);
}

static int set_metrics_listen(struct rspd_config *c, const char *v, char *why, size_t n)
{
	struct sockaddr_storage ss;

	if (v[0] && rspd_metrics__parse_addr(v, &ss))
		return -1;
	snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s", v);
	return 0;
}

static void show_metrics_listen(const struct rspd_config *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s", c->metrics_listen);
}

/* [trigger] trigger: one per line, repeated; an empty value clears those before. */
static int set_trigger(struct rspd_config *c, const char *v, char *why, size_t n)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_trig_spec *t;

	if (!v[0]) {
		c->nr_triggers = 0;
		return 0;
	}
	if (c->nr_triggers == RSPD_CONFIG_MAX_TRIGGERS) {
		snprintf(why, n, "at most %d trigger lines", RSPD_CONFIG_MAX_TRIGGERS);
		return -1;
	}
	t = &c->triggers[c->nr_triggers];
	if (rsp_trig_spec__parse_line(v, t, &err)) {
		snprintf(why, n, "NAME 'CONDITION' [--action A] [--post D] [--holdoff D]: %s",
			 err.data ? err.data : "out of memory");
		rsp_buf__exit(&err);
		return -1;
	}
	for (unsigned i = 0; i < c->nr_triggers; i++)
		if (!strcmp(c->triggers[i].name, t->name)) {
			snprintf(why, n, "a trigger named %s is already defined", t->name);
			return -1;
		}
	c->nr_triggers++;
	return 0;
}

static void show_trigger(const struct rspd_config *c, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < c->nr_triggers && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s '%s'", i ? "; " : "",
					c->triggers[i].name, c->triggers[i].cond_text);
}

/* --- the table ------------------------------------------------------------ */

#define F(field)                                                                                   \
	.off = offsetof(struct rspd_config, field), .size = sizeof(((struct rspd_config *)0)->field)
#define CUSTOM(fn) .type = T_CUSTOM, .set = set_##fn, .show = show_##fn
#define RELOAD	   .flags = OPTF_RELOAD

/* One entry per option; the order is that of --help and the default file. */
// clang-format off
static const struct rspd_opt opts[] = {
	/* Command line only. */
	{.name = "config", .short_name = 'c', .arg = "FILE", .def = RSPD_DEFAULT_CONFIG, .type = T_STR,
	 F(config_path), .help = "the configuration file", .allowed = "a path of at most 4095 bytes"},
	{.name = "foreground", .short_name = 'f', .type = T_ACTION,
	 .help = "stay in the foreground, log to stderr"},
	{.name = "check-config", .type = T_ACTION, .help = "check the file and the options, then exit"},
	{.name = "default-config", .type = T_ACTION, .help = "print the commented default file, then exit"},
	{.name = "help", .short_name = 'h', .type = T_ACTION, .help = "this text"},
	{.name = "version", .short_name = 'V', .type = T_ACTION, .help = "print the version"},

	{.section = "daemon", .name = "log-level", .arg = "LEVEL", .def = "info", CUSTOM(log_level),
	 F(log_level), RELOAD, .help = "least important messages logged",
	 .allowed = "error, warning, info or debug"},

	{.section = "control", .name = "socket", .short_name = 's', .arg = "PATH",
	 .def = RSPD_DEFAULT_SOCKET, CUSTOM(socket), .help = "the control socket",
	 .allowed = "an absolute path of at most 107 bytes"},
	{.section = "control", .name = "socket-group", .arg = "GROUP", .def = "rsp", .type = T_STR,
	 F(socket_group), RELOAD, .allowed = "a group name (at most 63 bytes) or nothing",
	 .help = "may connect (socket mode 0660); empty or no such group: root only"},
	{.section = "control", .name = "admin-group", .arg = "GROUP", .def = "rsp-admin", .type = T_STR,
	 F(admin_group), RELOAD, .allowed = "a group name (at most 63 bytes) or nothing",
	 .help = "may query every process; others only their own"},
	{.section = "control", .name = "max-clients", .arg = "N", .def = "256", .type = T_UINT,
	 F(max_clients), .min = 1, .max = 4096, .help = "control connections served at once"},
	{.section = "control", .name = "query-threads", .arg = "N", .def = "2", .type = T_UINT,
	 F(query_threads), .min = 1, .max = 64,
	 .help = "queries that read the window answered in parallel (status, hist and dump "
		 "requests have a lane of their own)"},
	/*
	 * auto: 4 windows, at least 64M. A graph of a full 64M window needed
	 * ~150 MiB here, a graph --no-merge --json ~700 MiB (its JSON tree).
	 */
	{.section = "control", .name = "query-memory", .arg = "SIZE", .def = "auto",
	 CUSTOM(query_memory), F(query_memory), RELOAD,
	 .help = "heap one query may hold (its store, graph, snapshot, symbols, answer); over "
		 "it the query fails and says so; auto: 8 x the window's records, raw (8 x window "
		 "without compression), at least 64M",
	 .allowed = "auto, or a size from 1M to 1024G"},
	{.section = "control", .name = "request-timeout", .arg = "DURATION", .def = "5s", .type = T_DUR,
	 F(request_timeout_ns), .min = 10000000, .max = 3600000000000ull, RELOAD,
	 .help = "a client must send its request within this"},
	{.section = "control", .name = "reply-timeout", .arg = "DURATION", .def = "60s", .type = T_DUR,
	 F(reply_timeout_ns), .min = 10000000, .max = 3600000000000ull, RELOAD,
	 .help = "a client must read its answer within this"},

	{.section = "window", .name = "window", .arg = "SIZE", .def = "64M", .type = T_SIZE,
	 F(window_budget), .min = 1u << 20, .max = 1ull << 40,
	 .help = "byte budget of the in-memory window"},
	{.section = "window", .name = "chunk-size", .arg = "SIZE", .def = "auto", CUSTOM(chunk),
	 .help = "window chunk size; auto: from the budget and CPUs",
	 .allowed = "auto, or 4K..16M, a multiple of 8"},
	{.section = "window", .name = "window-compress", .def = "yes", .type = T_BOOL,
	 F(window_compress),
	 .help = "compress the window's chunks once they are 2 s old (zstd): the same budget "
		 "holds several times the history; queries decompress what they read"},

	{.section = "capture", .name = "capture", .arg = "BACKEND", .def = "auto", CUSTOM(backend),
	 .help = "who records the scheduler's events: perf tracepoints, rsp's BPF programs, or "
		 "auto (BPF where the kernel allows it, else perf)",
	 .allowed = "perf, bpf or auto"},
	{.section = "capture", .name = "families", .arg = "LIST", CUSTOM(families),
	 .help = "event families to record, all, or changes (+syscall,-net)",
	 .allowed = "all, or a comma-separated list of sched, block, irq, timer, sample, net, libc, "
		    "sideband, syscall"},
	{.section = "capture", .name = "stacks", .arg = "POLICY", .def = "cached", CUSTOM(stacks),
	 .help = "callchains on sleeps and wakings, from the BPF stack cache (cached) or "
		 "walked (sleeps); all switches; sampled:N; none",
	 .allowed = "cached, all, sleeps, sampled:N (N >= 2) or none"},
	/*
	 * 25: full capture under pgbench costs ~20% of one CPU on the project's
	 * 2-vCPU VM (BPF programs ~14%, rspd 4-7%; BENCHMARKS.md "Overhead
	 * budget"): the default keeps that whole and caps a switch storm
	 * (perf bench sched pipe: ~35%). Not yet "a few percent" (issue 13).
	 */
	{.section = "capture", .name = "overhead-budget", .arg = "PCT", .def = "25",
	 CUSTOM(budget),
	 .help = "share of one CPU capture may cost (rspd and its BPF programs); over it the BPF "
		 "programs degrade their stacks, under half of it they recover; 0: off",
	 .allowed = "a percentage from 0 to 100"},
	{.section = "capture", .name = "stack-check", .def = "no", .type = T_BOOL,
	 F(capture.stack_check),
	 .help = "stacks cached: walk every stack anyway and count where the cache would have "
		 "differed (rspctl status)"},
	{.section = "capture", .name = "stack-refresh", .arg = "N", .def = "256", .type = T_UINT,
	 F(capture.stack_refresh), .min = 1, .max = 1000000,
	 .help = "stacks cached: walk a cache hit anyway, and compare, once in N hits"},
	{.section = "capture", .name = "callchain", .arg = "WHAT", .def = "kernel+user",
	 CUSTOM(callchain), .help = "frames in callchains", .allowed = "kernel+user, kernel or user"},
	{.section = "capture", .name = "sample-stacks", .def = "yes", .type = T_BOOL,
	 F(capture.sample_stacks), .help = "callchains on cpu-clock samples"},
	{.section = "capture", .name = "waker-stacks", .def = "yes", .type = T_BOOL,
	 F(capture.waker_stacks),
	 .help = "callchains on every waking too (stacks cached, all, sleeps): the graph's waker stacks"},
	{.section = "capture", .name = "max-stack", .arg = "N", .def = "64", .type = T_UINT,
	 F(capture.max_stack), .min = 1, .max = 1024, .help = "frames per callchain"},
	{.section = "capture", .name = "freq", .arg = "HZ", .def = "99", .type = T_UINT,
	 F(capture.sample_freq), .min = 0, .max = 100000, .help = "cpu-clock sampling frequency, 0: off"},
	{.section = "capture", .name = "net-source", .arg = "SOURCE", .def = "auto",
	 CUSTOM(net_source), .help = "network events from kprobes or the sock tracepoints; auto: "
				      "kprobes where the kernel has them",
	 .allowed = "auto, tracepoint or kprobe"},
	{.section = "capture", .name = "uprobes", .arg = "LIST", .def = RSP_UPROBES_DEFAULT,
	 CUSTOM(uprobes), .help = "libc functions to probe (family libc), or none"},
	{.section = "capture", .name = "dwarf", .arg = "EVENTS", .def = "cpu_clock,uprobe",
	 CUSTOM(dwarf), .help = "events that copy the user stack for DWARF unwinding, or none",
	 .allowed = "none, or some of cpu_clock, uprobe, sched_switch"},
	{.section = "capture", .name = "dwarf-stack", .arg = "SIZE", .def = "8K",
	 CUSTOM(dwarf_stack), .help = "bytes of user stack those events copy",
	 .allowed = "a size up to 65528 bytes, a multiple of 8, e.g. 4K, 8K"},
	{.section = "capture", .name = "ring-pages", .arg = "N", .def = "256", CUSTOM(ring_pages),
	 .help = "data pages per CPU ring",
	 .allowed = "a power of two from 1 to 262144 (1 GiB per CPU), e.g. 64, 256, 1024"},
	{.section = "capture", .name = "wakeup-percent", .arg = "P", .def = "25", .type = T_UINT,
	 F(capture.wakeup_percent), .min = 1, .max = 90, .help = "wake the drain when a ring is P% full"},
	{.section = "capture", .name = "flush-interval", .arg = "DURATION", .def = "100ms",
	 .type = T_DUR, F(flush_interval_ns), .min = 1000000, .max = 10000000000ull, RELOAD,
	 .help = "drain every ring at least this often"},
	{.section = "capture", .name = "capture-cgroup", .arg = "PATH", CUSTOM(capture_cgroup),
	 .help = "record the scheduler's events of this cgroup v2 subtree only (in the BPF "
		 "programs: BPF backend only); empty: every thread",
	 .allowed = "a cgroup v2 path as /proc/PID/cgroup shows it, starting with '/'"},

	{.section = "analysis", .name = "symbol-cache", .arg = "N", .def = "256", .type = T_UINT,
	 F(symbol_cache), .min = 1, .max = 1000000,
	 .help = "symbol tables (ELF files, JIT maps) kept in memory"},

	/* Flight-recorder dumps (dump.c): rspctl dump, SIGUSR1. */
	{.section = "dump", .name = "dump-dir", .arg = "DIR", .def = RSPD_DEFAULT_DUMP_DIR,
	 CUSTOM(dump_dir), RELOAD, .help = "where dumps go (created 0700)",
	 .allowed = "an absolute directory path of at most 3775 bytes"},
	{.section = "dump", .name = "dump-keep", .arg = "N", .def = "10", .type = T_UINT,
	 F(dump.keep), .min = 1, .max = 100000, RELOAD,
	 .help = "dumps kept in the directory; the oldest are removed"},
	{.section = "dump", .name = "dump-max-bytes", .arg = "SIZE", .def = "1G", .type = T_SIZE,
	 F(dump.max_bytes), .min = 1u << 20, .max = 1ull << 50, RELOAD,
	 .help = "total size of the dumps kept in the directory"},
	{.section = "dump", .name = "dump-on-exit", .def = "no", .type = T_BOOL, F(dump.on_exit),
	 RELOAD, .help = "dump the window when stopped (SIGTERM, SIGINT)"},

	/* Stopwatches (stopwatch.c): rspctl stopwatch. */
	{.section = "stopwatch", .name = "stopwatch-max", .arg = "N", .def = "16", .type = T_UINT,
	 F(stopwatch.max), .min = 1, .max = 64,
	 .help = "stopwatches at once (rspctl stopwatch add)"},
	{.section = "stopwatch", .name = "stopwatch-threads", .arg = "N", .def = "4096",
	 .type = T_UINT, F(stopwatch.threads), .min = 1, .max = 1u << 20,
	 .help = "threads inside stopwatched calls at once; beyond, calls are counted as overflow"},
	{.section = "stopwatch", .name = "stopwatch-callers", .arg = "N", .def = "2048",
	 .type = T_UINT, F(stopwatch.callers), .min = 16, .max = 1u << 18,
	 .help = "caller stacks of all stopwatches at once (add --callers): the kernel's stack "
		 "and caller tables; beyond, calls are counted as of unknown caller"},

	{.section = "hist", .name = "hist", .def = "yes", .type = T_BOOL, F(hist_on),
	 .help = "keep the latency profiles (rspctl hist) from the start"},
	{.section = "hist", .name = "hist-resolution", .arg = "R", .def = "1", .type = T_UINT,
	 F(hist.resolution), .min = 1, .max = 2,
	 .help = "buckets: 1 = log2 of ns, 2 = half octaves"},
	{.section = "hist", .name = "hist-profiles", .arg = "N", .def = "4096", .type = T_UINT,
	 F(hist.max_profiles), .min = 16, .max = 1u << 20,
	 .help = "process and thread profiles kept; the least recently updated go to 'other'"},
	{.section = "hist", .name = "hist-slice", .arg = "DURATION", .def = "1s", .type = T_DUR,
	 F(hist.slice_ns), .min = 10000000, .max = 3600000000000ull,
	 .help = "length of a time slice: the resolution of ranges in rspctl hist"},
	{.section = "hist", .name = "hist-slices", .arg = "N", .def = "300", .type = T_UINT,
	 F(hist.nr_slices), .min = 1, .max = 100000, .help = "time slices kept"},
	{.section = "hist", .name = "hist-slice-cap", .arg = "N", .def = "256", .type = T_UINT,
	 F(hist.slice_cap), .min = 1, .max = 65536,
	 .help = "process and thread entries per slice; more go to the slice's 'other'"},
	{.section = "hist", .name = "hist-threads", .arg = "N", .def = "32768", .type = T_UINT,
	 F(hist_max_threads), .min = 64, .max = 1u << 22,
	 .help = "threads followed at once for off-CPU and run-queue times; more are left out"},
	{.section = "hist", .name = "hist-io-timeout", .arg = "DURATION", .def = "10s", .type = T_DUR,
	 F(hist_io_timeout_ns), .min = 100000000, .max = 3600000000000ull,
	 .help = "a block request still without a completion after this counts as unobserved"},
	{.section = "hist", .name = "syscall-system", .def = "no", .type = T_BOOL,
	 F(syscall_system),
	 .help = "without the syscall family, the system's latency profile of each syscall, "
		 "counted in the kernel in a per-CPU array (BPF backend)"},
	{.section = "hist", .name = "syscall-keys", .arg = "N", .def = "4096", .type = T_UINT,
	 F(syscall_keys), .min = 64, .max = 1u << 20,
	 .help = "(thread, syscall) keys the syscall family counts in the kernel; calls of "
		 "threads past them go to the system's profile only"},

	/* Prometheus metrics (metrics.c): off unless listen or textfile is set. */
	{.section = "metrics", .name = "metrics-listen", .arg = "ADDR:PORT", .def = "",
	 CUSTOM(metrics_listen),
	 .help = "serve Prometheus metrics over HTTP here (loopback unless metrics-remote); "
		 "empty: off",
	 .allowed = "IPV4:PORT or [IPV6]:PORT (a numeric address, port 1..65535), or nothing"},
	{.section = "metrics", .name = "metrics-remote", .def = "no", .type = T_BOOL,
	 F(metrics_remote),
	 .help = "let metrics-listen be an address other than loopback (anyone who reaches it "
		 "sees every process's name and latencies)"},
	{.section = "metrics", .name = "metrics-textfile", .arg = "PATH", .def = "", .type = T_STR,
	 F(metrics_textfile),
	 .help = "write the metrics to this *.prom file every metrics-interval "
		 "(node_exporter's textfile collector); empty: off",
	 .allowed = "a path of at most 4095 bytes, or nothing"},
	{.section = "metrics", .name = "metrics-interval", .arg = "DURATION", .def = "15s",
	 .type = T_DUR, F(metrics_interval_ns), .min = 100000000, .max = 3600000000000ull,
	 .help = "how often metrics-textfile is written"},
	{.section = "metrics", .name = "metrics-top-processes", .arg = "N", .def = "20",
	 .type = T_UINT, F(metrics_top_processes), .min = 0, .max = 1000,
	 .help = "processes with series of their own (most total latency); the rest are "
		 "comm other"},
	{.section = "metrics", .name = "metrics-top-cgroups", .arg = "N", .def = "20",
	 .type = T_UINT, F(metrics_top_cgroups), .min = 0, .max = 1000,
	 .help = "cgroups with series of their own (rsp_cgroup_latency_seconds, most total "
		 "latency); the rest are cgroup other"},
	{.section = "metrics", .name = "metrics-connections", .arg = "N", .def = "8", .type = T_UINT,
	 F(metrics_connections), .min = 1, .max = 256,
	 .help = "HTTP connections served at once; past it, the oldest one still sending its "
		 "request is closed to make room"},
	{.section = "metrics", .name = "metrics-timeout", .arg = "DURATION", .def = "10s",
	 .type = T_DUR, F(metrics_timeout_ns), .min = 1000000000, .max = 3600000000000ull,
	 .help = "an HTTP connection idle this long, or whose request has not arrived whole "
		 "this long after it opened, is closed"},

	/* Triggers (trigger.c): rspctl trigger; docs/triggers.md. */
	{.section = "trigger", .name = "trigger", .arg = "LINE", .def = "", CUSTOM(trigger),
	 .help = "a trigger: NAME 'CONDITION' [--action dump|snapshot:PID|log] [--post D] "
		 "[--holdoff D], as rspctl trigger add takes it; repeat the key for more",
	 .allowed = "NAME 'CONDITION' [--action A] [--post D] [--holdoff D] (rspctl help trigger)"},
	{.section = "trigger", .name = "trigger-max", .arg = "N", .def = "128", .type = T_UINT,
	 F(trigger_max), .min = 1, .max = 4096, .help = "triggers at once (file and rspctl)"},
	{.section = "trigger", .name = "trigger-rate", .arg = "N", .def = "10", .type = T_UINT,
	 F(trigger_rate), .min = 1, .max = 100000, RELOAD,
	 .help = "fires a minute, all triggers together; more are counted as rate-limited"},
	{.section = "trigger", .name = "trigger-webhook", .def = "no", .type = T_BOOL,
	 F(trigger_webhook),
	 .help = "take Alertmanager's webhook at POST /v1/trigger on metrics-listen "
		 "(needs trigger-secret)"},
	{.section = "trigger", .name = "trigger-secret", .arg = "PATH", .def = "", .type = T_STR,
	 F(trigger_secret),
	 .help = "a file (root's, not readable by others) whose first line is the bearer "
		 "token a POST to /v1/trigger must carry",
	 .allowed = "an absolute path of at most 4095 bytes, or nothing"},
};
// clang-format on

#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

static const char *const sections[] = {"daemon", "control", "window",  "capture", "analysis",
				       "dump",	 "hist",    "metrics", "trigger"};
#define NR_SECTIONS (sizeof(sections) / sizeof(sections[0]))

/* --- parsing and showing one value ---------------------------------------- */

static void *field(struct rspd_config *c, const struct rspd_opt *o)
{
	return (char *)c + o->off;
}

static const void *cfield(const struct rspd_config *c, const struct rspd_opt *o)
{
	return (const char *)c + o->off;
}

static void show_dur(uint64_t ns, char *buf, size_t n)
{
	if (ns % 1000000000ull == 0)
		snprintf(buf, n, "%llus", (unsigned long long)(ns / 1000000000ull));
	else if (ns % 1000000 == 0)
		snprintf(buf, n, "%llums", (unsigned long long)(ns / 1000000));
	else
		snprintf(buf, n, "%lluus", (unsigned long long)(ns / 1000));
}

/* The value as a user would write it: for --help, the default file, diffs. */
static void opt_show(const struct rspd_opt *o, const struct rspd_config *c, char *buf, size_t n)
{
	const void *p = cfield(c, o);

	switch (o->type) {
	case T_BOOL:
		snprintf(buf, n, "%s", *(const bool *)p ? "yes" : "no");
		break;
	case T_UINT:
		snprintf(buf, n, "%u", *(const unsigned *)p);
		break;
	case T_SIZE:
		show_size(*(const uint64_t *)p, buf, n);
		break;
	case T_DUR:
		show_dur(*(const uint64_t *)p, buf, n);
		break;
	case T_STR:
		snprintf(buf, n, "%s", (const char *)p);
		break;
	case T_CUSTOM:
		o->show(c, buf, n);
		break;
	case T_ACTION:
		buf[0] = '\0';
		break;
	}
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (int i = 0; i < 4; i++) {
		if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
			*out = !strcmp(v, yes[i]);
			return 0;
		}
	}
	return -1;
}

/* What a value of @o may be, for errors and the default file. */
static void opt_allowed(const struct rspd_opt *o, char *buf, size_t n)
{
	char lo[32], hi[32];

	buf[0] = '\0';
	switch (o->type) {
	case T_BOOL:
		snprintf(buf, n, "yes or no");
		break;
	case T_UINT:
		snprintf(buf, n, "an integer from %llu to %llu", (unsigned long long)o->min,
			 (unsigned long long)o->max);
		break;
	case T_SIZE:
		show_size(o->min, lo, sizeof(lo));
		show_size(o->max, hi, sizeof(hi));
		snprintf(buf, n, "a size from %s to %s, e.g. 64M, 1G", lo, hi);
		break;
	case T_DUR:
		show_dur(o->min, lo, sizeof(lo));
		show_dur(o->max, hi, sizeof(hi));
		snprintf(buf, n, "a duration from %s to %s, e.g. 100ms, 5s, 2m", lo, hi);
		break;
	case T_STR:
		if (o->allowed)
			snprintf(buf, n, "%s", o->allowed);
		else
			snprintf(buf, n, "text of at most %zu bytes", o->size - 1);
		break;
	case T_CUSTOM:
		snprintf(buf, n, "%s", o->allowed ? o->allowed : "");
		break;
	case T_ACTION:
		break;
	}
}

/* 0, or -1 with what is allowed in @why. */
static int opt_set(const struct rspd_opt *o, struct rspd_config *c, const char *v, char *why,
		   size_t n)
{
	void *p = field(c, o);
	uint64_t u;

	why[0] = '\0';
	switch (o->type) {
	case T_ACTION:
		return 0;
	case T_BOOL:
		if (!parse_bool(v, p))
			return 0;
		break;
	case T_UINT:
		if (!rsp_parse__u64(v, o->min, o->max, &u)) {
			*(unsigned *)p = (unsigned)u;
			return 0;
		}
		break;
	case T_SIZE:
		if (!rsp_parse__size(v, &u) && u >= o->min && u <= o->max) {
			*(uint64_t *)p = u;
			return 0;
		}
		break;
	case T_DUR:
		if (!rsp_parse__duration(v, &u) && u >= o->min && u <= o->max) {
			*(uint64_t *)p = u;
			return 0;
		}
		break;
	case T_STR:
		if (strlen(v) < o->size) {
			memcpy(p, v, strlen(v) + 1);
			return 0;
		}
		break;
	case T_CUSTOM:
		if (!o->set(c, v, why, n))
			return 0;
		break;
	}
	if (!why[0])
		opt_allowed(o, why, n);
	return -1;
}

static const struct rspd_opt *find_key(const char *name)
{
	for (size_t i = 0; i < NR_OPTS; i++)
		if (!strcmp(opts[i].name, name))
			return &opts[i];
	return NULL;
}

static void config_defaults(struct rspd_config *c)
{
	char why[256];

	memset(c, 0, sizeof(*c));
	rsp_capture_opts__init(&c->capture);
	rsp_hist_config__init(&c->hist); /* what the table does not set: one shard */
	for (size_t i = 0; i < NR_OPTS; i++)
		if (opts[i].def && opt_set(&opts[i], c, opts[i].def, why, sizeof(why)))
			abort(); /* a default the table itself rejects: a bug */
}

/* --- the file ------------------------------------------------------------- */

/*
 * The file is read whole before it is parsed, and only a regular file of at
 * most RSPD_CONFIG_MAX_BYTES: a directory read as an empty file (every key
 * at its default), opening a FIFO blocks until a writer comes and /dev/zero
 * never ends. The type is checked before the open (opening some devices
 * acts on them) and again on the open file (it may have been replaced):
 * O_NONBLOCK|O_NOCTTY make that open harmless whatever it found.
 */
static const char *file_type(mode_t mode)
{
	return S_ISDIR(mode)	? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a regular file";
}

static int check_file(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen,
			 "the configuration file %s is %s — give a regular file with --config FILE",
			 path, file_type(st->st_mode));
		return -1;
	}
	if (st->st_size > RSPD_CONFIG_MAX_BYTES) {
		snprintf(err, errlen,
			 "the configuration file %s has %lld bytes, more than the %d a "
			 "configuration may have — is it the right file?",
			 path, (long long)st->st_size, RSPD_CONFIG_MAX_BYTES);
		return -1;
	}
	return 0;
}

static int read_error(const char *path, int fd, char *buf, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read the configuration file %s: %s%s", path, strerror(errno),
		 errno == EAGAIN ? " (reading it would block: it is not a plain file)" : "");
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

/* At most RSPD_CONFIG_MAX_BYTES, NUL-terminated into @buf (that size + 2). */
static int read_bounded(const char *path, int fd, char *buf, size_t *len, char *err, size_t errlen)
{
	ssize_t n = 1;

	*len = 0;
	while (n > 0 && *len <= RSPD_CONFIG_MAX_BYTES) {
		n = read(fd, buf + *len, RSPD_CONFIG_MAX_BYTES + 1 - *len);
		if (n < 0 && errno == EINTR)
			n = 1;
		else if (n < 0)
			return read_error(path, -1, NULL, err, errlen);
		else
			*len += (size_t)n;
	}
	buf[*len] = '\0';
	if (*len <= RSPD_CONFIG_MAX_BYTES)
		return 0;
	snprintf(err, errlen,
		 "the configuration file %s has more than the %d bytes a configuration may have — "
		 "is it the right file?",
		 path, RSPD_CONFIG_MAX_BYTES);
	return -1;
}

/*
 * The file's bytes in *@out (the caller frees), or *@out NULL when it is
 * absent and @may_be_absent. 0, or -1 with the sentence in @err.
 */
static int read_file(const char *path, bool may_be_absent, char **out, size_t *len, char *err,
		     size_t errlen)
{
	struct stat st;
	char *buf;
	int fd;

	*out = NULL;
	if (stat(path, &st)) {
		if (errno == ENOENT && may_be_absent)
			return 0; /* no file at the default place: the defaults */
		snprintf(err, errlen, "cannot read the configuration file %s: %s%s", path,
			 strerror(errno),
			 errno == ENOENT ? " — give an existing file with --config FILE" : "");
		return -1;
	}
	if (check_file(path, &st, err, errlen))
		return -1;
	buf = malloc(RSPD_CONFIG_MAX_BYTES + 2);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (!buf || fd < 0 || fstat(fd, &st))
		return read_error(path, fd, buf, err, errlen);
	if (check_file(path, &st, err, errlen) || read_bounded(path, fd, buf, len, err, errlen)) {
		close(fd);
		free(buf);
		return -1;
	}
	close(fd);
	*out = buf;
	return 0;
}

/* A configuration is text: a NUL byte is an error at its line. */
static int check_text(const char *path, const char *buf, size_t len, char *err, size_t errlen)
{
	const char *nul = memchr(buf, '\0', len), *bol = buf;
	int line = 1;

	if (!nul)
		return 0;
	for (const char *p = buf; p < nul; p++) {
		if (*p == '\n') {
			line++;
			bol = p + 1;
		}
	}
	snprintf(err, errlen,
		 "%s:%d: a NUL byte at column %d; a configuration file is text — is it the right "
		 "file?",
		 path, line, (int)(nul - bol) + 1);
	return -1;
}

struct file_ctx {
	struct rspd_config *c;
	const char *p, *end; /* what is left of the file's bytes */
	int line;
	char msg[1024]; /* the first error; ini_parse() tells its line */
};

/*
 * inih's reader, fgets-like over the bytes read. inih would cut a line
 * longer than its buffer and go on with the cut line: instead, such a line
 * becomes an error.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct file_ctx *x = stream;
	const char *nl;
	size_t len;

	if (x->p >= x->end)
		return NULL;
	nl = memchr(x->p, '\n', (size_t)(x->end - x->p));
	len = nl ? (size_t)(nl - x->p) + 1 : (size_t)(x->end - x->p);
	x->line++;
	if (len < (size_t)num) {
		memcpy(str, x->p, len);
		str[len] = '\0';
		x->p += len;
		return str;
	}
	x->p += len;
	if (!x->msg[0])
		snprintf(x->msg, sizeof(x->msg), "the line is longer than %d bytes", num - 2);
	snprintf(str, (size_t)num, "[\n"); /* a syntax error, at this line */
	return str;
}

static void known_sections(char *buf, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < NR_SECTIONS && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s[%s]", i ? ", " : "", sections[i]);
}

static void keys_of(const char *section, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NR_OPTS && len < n; i++)
		if (opts[i].section && !strcmp(opts[i].section, section))
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
						opts[i].name);
}

static bool section_exists(const char *s)
{
	for (size_t i = 0; i < NR_SECTIONS; i++)
		if (!strcmp(sections[i], s))
			return true;
	return false;
}

/* Why @section/@name is not a key, or NULL with *out the option. */
static int check_key(struct file_ctx *x, const char *section, const char *name,
		     const struct rspd_opt **out)
{
	const struct rspd_opt *o = find_key(name);
	char list[400];

	if (!section[0]) {
		snprintf(x->msg, sizeof(x->msg), "'%s' is outside any section; put it under [%s]",
			 name, o && o->section ? o->section : "daemon");
		return -1;
	}
	if (!section_exists(section)) {
		known_sections(list, sizeof(list));
		snprintf(x->msg, sizeof(x->msg), "unknown section [%s]; the sections are %s",
			 section, list);
		return -1;
	}
	if (o && !o->section) {
		snprintf(x->msg, sizeof(x->msg),
			 "'%s' can only be given on the command line (--%s)", name, name);
		return -1;
	}
	if (!o) {
		keys_of(section, list, sizeof(list));
		snprintf(x->msg, sizeof(x->msg), "unknown key '%s' in [%s]; its keys are: %s", name,
			 section, list);
		return -1;
	}
	if (strcmp(o->section, section)) {
		snprintf(x->msg, sizeof(x->msg), "'%s' belongs in [%s], not in [%s]", name,
			 o->section, section);
		return -1;
	}
	*out = o;
	return 0;
}

/* inih's callback: nonzero to go on; on 0, ini_parse() returns the line. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct file_ctx *x = user;
	const struct rspd_opt *o;
	char why[256];

	if (x->msg[0])
		return 1; /* keep the first error only: ini_parse() reports its line */
	if (check_key(x, section, name, &o))
		return 0;
	if (opt_set(o, x->c, value, why, sizeof(why))) {
		snprintf(x->msg, sizeof(x->msg), "%s: invalid value '%s'; want %s", name, value,
			 why);
		return 0;
	}
	return 1;
}

static int parse_file(struct rspd_config *c, const char *buf, size_t len, char *err, size_t errlen)
{
	struct file_ctx x = {.c = c, .p = buf, .end = buf + len};
	int line;

	if (check_text(c->config_path, buf, len, err, errlen))
		return -1;
	line = ini_parse_stream(read_line, &x, on_key, &x);
	if (line == 0)
		return 0;
	if (line < 0) {
		snprintf(err, errlen, "%s: out of memory while reading it", c->config_path);
		return -1;
	}
	if (!x.msg[0])
		snprintf(x.msg, sizeof(x.msg), "not a '[section]' or 'key = value' line");
	snprintf(err, errlen, "%s:%d: %s", c->config_path, line, x.msg);
	return -1;
}

static int load_file(struct rspd_config *c, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int ret;

	if (read_file(c->config_path, !c->config_given, &buf, &len, err, errlen))
		return -1;
	if (!buf)
		return 0;
	ret = parse_file(c, buf, len, err, errlen);
	free(buf);
	return ret;
}

/* --- the command line ----------------------------------------------------- */

/* getopt values: 256 + index, and 1024 + index for --no-NAME. */
#define OPT_BASE 256
#define OPT_NEG	 1024

struct cli_arg {
	const struct rspd_opt *o;
	const char *val; /* NULL for actions; "no"/"yes" for booleans */
};

/* The command line, kept to apply it again over a reloaded file. */
static struct cli_arg *cli;
static int nr_cli;

static void help_left(const struct rspd_opt *o, const struct rspd_config *def, char *buf, size_t n)
{
	char name[48];

	if (o->type == T_BOOL)
		snprintf(name, sizeof(name), "--[no-]%s", o->name);
	else
		snprintf(name, sizeof(name), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	if (o->short_name)
		snprintf(buf, n, "  -%c, %s", o->short_name, name);
	else
		snprintf(buf, n, "      %s", name);
}

/* One option of --help: name column, then the help wrapped under 80 columns. */
static void help_line(FILE *f, const struct rspd_opt *o, const struct rspd_config *def)
{
	char left[64], text[PATH_MAX + 256], dv[PATH_MAX];
	const char *p;
	int col;

	help_left(o, def, left, sizeof(left));
	opt_show(o, def, dv, sizeof(dv));
	if (o->type == T_ACTION || !dv[0])
		snprintf(text, sizeof(text), "%s", o->help);
	else
		snprintf(text, sizeof(text), "%s (%s)", o->help, dv);
	col = fprintf(f, "%s", left);
	if (col > 26) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", 27 - col, "");
	col = 27;
	for (p = text; *p;) {
		size_t w = strcspn(p, " ");

		if (col > 27 && col + 1 + (int)w > 79) {
			fprintf(f, "\n%27s", "");
			col = 27;
		} else if (col > 27) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	struct rspd_config def;

	config_defaults(&def);
	fputs("usage: rspd [OPTIONS]\n"
	      "\n"
	      "The rsp daemon: records scheduler, block, irq and timer events from\n"
	      "per-CPU perf rings into a bounded in-memory window; rspctl queries it.\n",
	      f);
	fputs("\nCommand line only:\n", f);
	for (size_t i = 0; i < NR_OPTS; i++)
		if (!opts[i].section)
			help_line(f, &opts[i], &def);
	for (size_t s = 0; s < NR_SECTIONS; s++) {
		fprintf(f, "\nIn the file's [%s] section, or on the command line:\n", sections[s]);
		for (size_t i = 0; i < NR_OPTS; i++)
			if (opts[i].section && !strcmp(opts[i].section, sections[s]))
				help_line(f, &opts[i], &def);
	}
	fprintf(f,
		"\nThe command line overrides the file (default %s); SIGHUP\n"
		"reloads the file. 'rspd --default-config' prints every key with its default.\n"
		"SIGUSR1 writes the window as a perf.data file into dump-dir (like\n"
		"'rspctl dump'); the file name or the error goes to the log.\n"
		"\n"
		"EXAMPLES\n"
		"  rspd --foreground\n"
		"  rspd --foreground --socket /tmp/rspd.sock --window 256M --stacks all\n"
		"  rspd --check-config --config /etc/rspd.conf\n",
		RSPD_DEFAULT_CONFIG);
}

/* getopt's table from opts[]: booleans get a --no-NAME twin. */
static struct option *make_long_opts(void)
{
	static char neg[NR_OPTS][48]; /* "no-NAME": getopt keeps pointers to it */
	struct option *lo = calloc(2 * NR_OPTS + 1, sizeof(*lo));
	size_t n = 0;

	if (!lo)
		return NULL;
	for (size_t i = 0; i < NR_OPTS; i++) {
		lo[n++] =
			(struct option){opts[i].name, opts[i].arg ? required_argument : no_argument,
					NULL, OPT_BASE + (int)i};
		if (opts[i].type != T_BOOL)
			continue;
		snprintf(neg[i], sizeof(neg[i]), "no-%s", opts[i].name);
		lo[n++] = (struct option){neg[i], no_argument, NULL, OPT_NEG + (int)i};
	}
	return lo;
}

static const struct rspd_opt *by_short(int ch)
{
	for (size_t i = 0; i < NR_OPTS; i++)
		if (opts[i].short_name == ch)
			return &opts[i];
	return NULL;
}

/* Collect the command line into cli[]; nothing is applied yet. */
static int collect_args(int argc, char **argv)
{
	struct option *lo = make_long_opts();
	int ch;

	free(cli); /* a load before this one (tests load many): no reload thread yet */
	nr_cli = 0;
	cli = calloc((size_t)argc + 1, sizeof(*cli));
	if (!lo || !cli) {
		free(lo);
		fprintf(stderr, "rspd: out of memory\n");
		return -1;
	}
	/*
	 * Never freed: a reload thread still reading a hung file when rspd
	 * exits may use it (reload.c); a static pointer keeps it reachable.
	 */
	optind = 0;
	while ((ch = getopt_long(argc, argv, "c:fs:hV", lo, NULL)) != -1) {
		const struct rspd_opt *o = NULL;
		const char *val = optarg;

		if (ch >= OPT_NEG)
			o = &opts[ch - OPT_NEG];
		else if (ch >= OPT_BASE)
			o = &opts[ch - OPT_BASE];
		else if (ch != '?')
			o = by_short(ch);
		if (!o) {
			free(lo);
			fprintf(stderr, "Try 'rspd --help'.\n");
			return -1;
		}
		if (o->type == T_BOOL)
			val = ch >= OPT_NEG ? "no" : "yes";
		cli[nr_cli++] = (struct cli_arg){o, val};
	}
	free(lo);
	if (optind < argc) {
		fprintf(stderr, "rspd: unexpected argument '%s'\nTry 'rspd --help'.\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

static bool has_action(const char *name)
{
	for (int i = 0; i < nr_cli; i++)
		if (cli[i].o->type == T_ACTION && !strcmp(cli[i].o->name, name))
			return true;
	return false;
}

/* Apply the collected options; @file_opts: those the file may also set. */
static int apply_args(struct rspd_config *c, bool file_opts, bool quiet)
{
	char why[256];

	for (int i = 0; i < nr_cli; i++) {
		const struct rspd_opt *o = cli[i].o;

		if (!!o->section != file_opts)
			continue;
		if (!strcmp(o->name, "foreground"))
			c->foreground = true;
		else if (!strcmp(o->name, "check-config"))
			c->check_only = true;
		else if (!strcmp(o->name, "config"))
			c->config_given = true;
		if (!opt_set(o, c, cli[i].val, why, sizeof(why)))
			continue;
		if (!quiet)
			fprintf(stderr,
				"rspd: --%s: invalid value '%s'; want %s\nTry 'rspd --help'.\n",
				o->name, cli[i].val, why);
		return -1;
	}
	return 0;
}

static void show_gib(uint64_t bytes, char *buf, size_t n)
{
	snprintf(buf, n, "%.1f GiB", (double)bytes / (1ull << 30));
}

/*
 * What the options ask for must fit in this machine: the window and the
 * rings are memory rspd will hold (a window of 1024G on a 24 GiB machine
 * was taken without a word, and failed only when it filled).
 */
static int check_fits(const struct rspd_config *c, char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	uint64_t rings = (uint64_t)c->capture.ring_pages * 4096 * (uint64_t)(cpus > 0 ? cpus : 1);
	char a[32], b[32], m[32];

	if (!phys || c->window_budget + rings <= phys)
		return 0;
	show_size(c->window_budget, a, sizeof(a));
	show_size(rings, b, sizeof(b));
	show_gib(phys, m, sizeof(m));
	snprintf(err, errlen,
		 "the window (%s) and the perf rings (%u pages on each of %ld CPUs: %s) need more "
		 "than this machine's memory (%s) — lower --window or --ring-pages",
		 a, c->capture.ring_pages, cpus, b, m);
	return -1;
}

/*
 * The window the start will make (setup() in main.c), made and freed here
 * by the same rules: a window too small for two chunks per CPU, or chunks
 * too small for a sample with its user stack, passed --check-config and
 * failed at start. Every CPU the machine may have, and two streams per CPU
 * where the BPF backend may be chosen (evset.c's choose_backend()).
 */
static int check_window(const struct rspd_config *c, char *err, size_t errlen)
{
	const struct rsp_capture_opts *o = &c->capture;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	bool perf = o->backend == RSP_CAPTURE_PERF || !o->families[RSP_FAM_SCHED] ||
		    o->dwarf[RSP_EV_sched_switch] || o->dwarf[RSP_EV_sched_waking];
	struct rsp_window_config wc = {.budget = c->window_budget,
				       .nr_cpus = cpus > 0 ? (unsigned)cpus : 1,
				       .chunk_size = c->chunk_size,
				       .streams_per_cpu = perf ? 1 : 2};
	struct rsp_window *w = rsp_window__new(&wc);
	struct rsp_window_stats ws;
	char a[32];

	show_size(c->window_budget, a, sizeof(a));
	if (!w) {
		snprintf(err, errlen,
			 "a window of %s cannot hold two chunks for each of this machine's %u "
			 "CPUs — raise --window",
			 a, wc.nr_cpus);
		return -1;
	}
	rsp_window__stats(w, &ws);
	rsp_window__delete(w);
	if (!rsp_capture_opts__may_dwarf(o) || ws.chunk_size >= rsp_capture_opts__dwarf_bytes(o))
		return 0;
	snprintf(err, errlen,
		 "the window's chunks (%zu bytes with --window %s on %u CPUs) cannot hold a "
		 "sample with a %u-byte user stack — raise --window or --chunk-size, lower "
		 "--dwarf-stack, or turn it off with --dwarf none",
		 ws.chunk_size, a, wc.nr_cpus, o->dwarf_stack);
	return -1;
}

/*
 * At least one event: families whose every event another option turns off
 * (sample with --freq 0, libc with --uprobes none) record nothing, and
 * libperf then maps no ring: rspd passed --check-config and died at start.
 */
static int check_events(const struct rspd_config *c, char *err, size_t errlen)
{
	const struct rsp_capture_opts *o = &c->capture;
	char fams[256];

	for (int f = 0; f < RSP_FAM__NR; f++)
		if (o->families[f] && !(f == RSP_FAM_SAMPLE && !o->sample_freq) &&
		    !(f == RSP_FAM_LIBC && !o->uprobes[0]))
			return 0;
	show_families(c, fams, sizeof(fams));
	snprintf(err, errlen,
		 "families %s record no event (sample needs --freq above 0, libc needs "
		 "--uprobes) — add a family, e.g. --families sched,%s",
		 fams, fams);
	return -1;
}

/* The webhook answers on the metrics listener, and only to who has the secret. */
static int check_webhook(const struct rspd_config *c, char *err, size_t errlen)
{
	if (!c->trigger_webhook)
		return 0;
	if (!c->metrics_listen[0] || c->trigger_secret[0] != '/') {
		snprintf(err, errlen,
			 "trigger-webhook needs metrics-listen (the address it answers on) and "
			 "trigger-secret (an absolute path to the file of its bearer token) — "
			 "set both, or trigger-webhook = no");
		return -1;
	}
	return 0;
}

/* What a start would refuse, refused by --check-config and a reload too. */
static int check_all(const struct rspd_config *c, char *err, size_t errlen)
{
	if (check_events(c, err, errlen) || check_fits(c, err, errlen) ||
	    check_webhook(c, err, errlen))
		return -1;
	return check_window(c, err, errlen);
}

/*
 * A relative --config is made absolute on the kept command line: rspd
 * detaches into / (main.c), and a SIGHUP would then read another file, or
 * none.
 */
static int absolute_config(char *err, size_t errlen)
{
	static char path[PATH_MAX];
	char cwd[PATH_MAX];

	for (int i = 0; i < nr_cli; i++) {
		if (strcmp(cli[i].o->name, "config") || cli[i].val[0] == '/')
			continue;
		if (!getcwd(cwd, sizeof(cwd)) || (size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
								  cli[i].val) >= sizeof(path)) {
			snprintf(err, errlen,
				 "cannot make the configuration file %s an absolute path — give "
				 "--config /PATH",
				 cli[i].val);
			return -1;
		}
		cli[i].val = path;
	}
	return 0;
}

enum rspd_config_result rspd_config__load(struct rspd_config *c, int argc, char **argv, char *err,
					  size_t errlen)
{
	config_defaults(c);
	if (collect_args(argc, argv))
		return RSPD_CONFIG_USAGE;
	if (has_action("help")) {
		usage(stdout);
		return RSPD_CONFIG_EXIT;
	}
	if (has_action("version")) {
		printf("rspd %s\n", RSP_VERSION);
		return RSPD_CONFIG_EXIT;
	}
	if (has_action("default-config")) {
		rspd_config__print_default(stdout);
		return RSPD_CONFIG_EXIT;
	}
	if (absolute_config(err, errlen))
		return RSPD_CONFIG_BAD;
	if (apply_args(c, false, false))
		return RSPD_CONFIG_USAGE;
	if (load_file(c, err, errlen))
		return RSPD_CONFIG_BAD;
	if (apply_args(c, true, false))
		return RSPD_CONFIG_USAGE;
	if (check_all(c, err, errlen))
		return RSPD_CONFIG_BAD;
	if (c->check_only) {
		printf("rspd: the configuration is valid (%s%s)\n", c->config_path,
		       access(c->config_path, F_OK) ? ", absent: the defaults" : "");
		return RSPD_CONFIG_EXIT;
	}
	return RSPD_CONFIG_RUN;
}

int rspd_config__read(struct rspd_config *next, char *err, size_t errlen)
{
	config_defaults(next);
	if (apply_args(next, false, true) || load_file(next, err, errlen))
		return -1;
	if (apply_args(next, true, true)) {
		snprintf(err, errlen, "the command line no longer applies (a bug)");
		return -1;
	}
	return check_all(next, err, errlen);
}

void rspd_config__apply(struct rspd_config *cfg, const struct rspd_config *next)
{
	char a[PATH_MAX], b[PATH_MAX];

	for (size_t i = 0; i < NR_OPTS; i++) {
		const struct rspd_opt *o = &opts[i];

		if (!o->section)
			continue;
		if (o->flags & OPTF_RELOAD) {
			/* Only the capture thread reads these fields: no lock. */
			memcpy(field(cfg, o), cfield(next, o), o->size);
			continue;
		}
		opt_show(o, cfg, a, sizeof(a));
		opt_show(o, next, b, sizeof(b));
		if (strcmp(a, b))
			rspd_log__write(
				RSP_LOG_WARN,
				"reload: %s changed from %s to %s in the file; it takes effect "
				"when rspd restarts",
				o->name, a, b);
	}
}

static void print_help_comment(FILE *f, const struct rspd_opt *o)
{
	char allowed[256];

	opt_allowed(o, allowed, sizeof(allowed));
	fprintf(f, "\n# %s%s\n", o->help, (o->flags & OPTF_RELOAD) ? "" : " (restart to change)");
	if (allowed[0])
		fprintf(f, "# %s\n", allowed);
}

void rspd_config__print_default(FILE *f)
{
	struct rspd_config def;
	char v[PATH_MAX];

	config_defaults(&def);
	fprintf(f,
		"# rspd configuration (%s), rspd %s.\n"
		"#\n"
		"# Every key rspd knows, with its default. Uncomment a line to change it.\n"
		"# rspd's command line overrides this file (--KEY VALUE). 'systemctl reload\n"
		"# rspd' (SIGHUP) reads the file again; keys marked \"restart to change\" take\n"
		"# effect only when rspd restarts. A bad file is refused with its line number:\n"
		"# check one with 'rspd --check-config --config FILE'. See rspd(8).\n",
		RSPD_DEFAULT_CONFIG, RSP_VERSION);
	for (size_t s = 0; s < NR_SECTIONS; s++) {
		fprintf(f, "\n[%s]", sections[s]);
		for (size_t i = 0; i < NR_OPTS; i++) {
			if (!opts[i].section || strcmp(opts[i].section, sections[s]))
				continue;
			opt_show(&opts[i], &def, v, sizeof(v));
			print_help_comment(f, &opts[i]);
			fprintf(f, "#%s = %s\n", opts[i].name, v);
		}
	}
}
