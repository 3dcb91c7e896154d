/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_TRIGGER_H
#define RSP_TRIGGER_H

/*
 * Triggers (`rspctl trigger`, the [trigger] section of rspd.conf): a
 * condition on what rspd already computes (latency profiles, stopwatches,
 * run-queue and off-CPU time, capture health) or an alert from Prometheus'
 * Alertmanager, and what to do when it holds: dump the window (after a
 * post-trigger time), save a snapshot of a process, or log a line.
 * Here: the grammar (one parser for the control socket, the configuration
 * file and the fuzzer: lib/format/trigcond.c) and what `trigger list` and
 * `status` show of each trigger. rspd evaluates and fires (daemon/trigger.c).
 *
 * CONDITION (docs/triggers.md, rspctl(8)):
 *   hist OP [pid N|tid N|comm NAME] p99|p999|max > DURATION [over DURATION]
 *   hist OP [pid N|tid N|comm NAME] count > N/s [over DURATION]
 *   stopwatch NAME > DURATION
 *   runnable [pid N|tid N|comm NAME] > DURATION
 *   offcpu PID REASON > P% [over DURATION]
 *   lost > N
 *   shed > LEVEL
 *   alert [ALERTNAME]
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/amhook.h> /* RSP_TRIG_NAME_LEN */
#include <rsp/api.h>
#include <rsp/buf.h>

#define RSP_TRIG_COND_LEN	 256
#define RSP_TRIG_OVER_DEFAULT_NS 10000000000ull	 /* hist, offcpu: the last 10 s */
#define RSP_TRIG_OVER_MAX_NS	 300000000000ull /* the slices rspd keeps by default */

enum rsp_trig_kind {
	RSP_TRIG_HIST,
	RSP_TRIG_STOPWATCH,
	RSP_TRIG_RUNNABLE,
	RSP_TRIG_OFFCPU,
	RSP_TRIG_LOST,
	RSP_TRIG_SHED,
	RSP_TRIG_ALERT,
	RSP_TRIG__NR
};

/* hist: what of the profile is compared. */
enum rsp_trig_stat { RSP_TRIG_P99, RSP_TRIG_P999, RSP_TRIG_MAX, RSP_TRIG_COUNT };

/* hist: whose profile (the whole system unless given). */
enum rsp_trig_subject { RSP_TRIG_SYSTEM, RSP_TRIG_PID, RSP_TRIG_TID, RSP_TRIG_COMM };

/* One condition, parsed. */
struct rsp_trig_cond {
	enum rsp_trig_kind kind;
	/* HIST: the operation as given ("syscall:fsync") and its key */
	char op[64];
	unsigned op_kind;
	bool op_any;	  /* every argument of the kind ("offcpu") */
	uint32_t op_arg;  /* when known from the text alone */
	bool op_dev_name; /* blk_*:DEV (a name or MAJOR:MINOR): rspd resolves it */
	enum rsp_trig_subject subject;
	uint32_t id;   /* PID, TID; OFFCPU: the process */
	char comm[16]; /* COMM */
	enum rsp_trig_stat stat;
	uint64_t above_ns; /* HIST (not COUNT), STOPWATCH, RUNNABLE */
	double above;	   /* COUNT: calls per second; OFFCPU: percent; LOST, SHED */
	uint64_t over_ns;  /* HIST, OFFCPU: the window looked at */
	unsigned reason;   /* OFFCPU: enum rsp_sleep_reason */
	char name[64];	   /* STOPWATCH: the stopwatch; ALERT: the alertname ("" any) */
};

/**
 * rsp_trig_cond__parse() - one CONDITION (grammar above)
 * Return: 0, or -EINVAL with one sentence in @err naming the word that is
 * wrong and what is allowed there.
 */
RSP_API int rsp_trig_cond__parse(const char *text, struct rsp_trig_cond *c, struct rsp_buf *err);
/** rsp_trig_cond__format() - @c in its canonical form (parses back to @c) into @buf. */
RSP_API const char *rsp_trig_cond__format(const struct rsp_trig_cond *c, char *buf, size_t n);

enum rsp_trig_action { RSP_TRIG_DUMP, RSP_TRIG_SNAPSHOT, RSP_TRIG_LOG };

#define RSP_TRIG_HOLDOFF_DEFAULT_NS 60000000000ull /* one fire a minute */
#define RSP_TRIG_POST_MAX_NS	    300000000000ull

/* A trigger as added: name, condition and what to do. */
struct rsp_trig_spec {
	char name[RSP_TRIG_NAME_LEN];
	char cond_text[RSP_TRIG_COND_LEN]; /* canonical */
	struct rsp_trig_cond cond;
	enum rsp_trig_action action;
	uint32_t snapshot_pid; /* SNAPSHOT */
	uint64_t post_ns;      /* DUMP: keep recording this long, then write */
	uint64_t holdoff_ns;   /* at most one fire per this long */
};

/**
 * rsp_trig_spec__set_action() - "dump", "snapshot:PID" or "log" into @s.
 * Return: 0 or -EINVAL with one sentence in @err.
 */
RSP_API int rsp_trig_spec__set_action(struct rsp_trig_spec *s, const char *v, struct rsp_buf *err);
/**
 * rsp_trig_spec__check() - the whole spec: a valid name, and options that
 * fit its action (--post with dump only). 0 or -EINVAL with @err.
 */
RSP_API int rsp_trig_spec__check(const struct rsp_trig_spec *s, struct rsp_buf *err);
/**
 * rsp_trig_spec__parse_line() - the configuration file's form, the
 * arguments of `rspctl trigger add` on one line:
 *   NAME 'CONDITION' [--action A] [--post D] [--holdoff D]
 * (the quotes may be single or double, or left out when no option follows).
 * Return: 0 or -EINVAL with one sentence in @err.
 */
RSP_API int rsp_trig_spec__parse_line(const char *line, struct rsp_trig_spec *s,
				      struct rsp_buf *err);
/** rsp_trig__valid_name() - letters, digits, '_', '-', '.', at most 31. */
RSP_API bool rsp_trig__valid_name(const char *name);

#define RSP_TRIG_FILES_KEPT 4 /* trigger list: the newest files a trigger wrote */

/* One trigger as `trigger list` and `status` show it. */
struct rsp_trig_view {
	struct rsp_trig_spec spec;
	bool from_config;      /* the configuration file's, not rspctl's */
	uint64_t fires;	       /* conditions met and acted on */
	uint64_t held_off;     /* met within the hold-off of the last fire */
	uint64_t rate_limited; /* met, refused by trigger-rate */
	uint64_t failed;       /* actions that failed (disk full ...) */
	uint64_t last_fire_ns; /* CLOCK_MONOTONIC, 0: never */
	char last_value[96];   /* what tripped it: "p99 33.6ms over 10s" */
	unsigned nr_files;
	char files[RSP_TRIG_FILES_KEPT][512]; /* newest first */
	bool pending;			      /* a dump waits for its post-trigger time */
};

/* Totals that belong to no one trigger. */
struct rsp_trig_totals {
	unsigned nr, max;
	double rate_per_min; /* trigger-rate: fires per minute, all triggers */
	uint64_t webhook_posts, webhook_refused, webhook_unmatched;
	bool webhook_on;
};

/* `rspctl trigger add|list|rm` as a request, and `list` rendered: rsp/trig_request.h. */

/* Alertmanager's webhook payload: rsp/amhook.h (the format layer). */

#endif /* RSP_TRIGGER_H */
