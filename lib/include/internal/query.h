/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_QUERY_H
#define RSP_INTERNAL_QUERY_H

#include <jansson.h>
#include <rsp/query.h>
#include <rsp/trigger.h>

/* Common options a command may accept. */
#define RSP_COPT_FORMAT 0x1u  /* --json, --format text|json */
#define RSP_COPT_DOT	0x2u  /* --format dot too */
#define RSP_COPT_PID	0x4u  /* --pid PID */
#define RSP_COPT_LAST	0x8u  /* --last DURATION */
#define RSP_COPT_RANGE	0x10u /* --from T --to T (seconds, as the window shows them) */
#define RSP_COPT_CGROUP 0x20u /* --cgroup PATH, --container ID (rsp_request__cgroup_keeps()) */
/* --no-annotations, --false-wakeup-run US: rsp_tlstore_opts.raw and .fwake_ns */
#define RSP_COPT_FWAKE 0x40u
/* --spin-symbol NAME (repeatable): rsp_request__spin() */
#define RSP_COPT_SPIN 0x80u

struct rsp_option {
	const char *name; /* long name without "--" */
	bool has_arg;
	int id;
};

/*
 * One command. Its implementation lives in lib/cmd_<name>.c and is listed
 * in the table of lib/query/query.c. The options struct (opts_size bytes) is
 * zeroed, then @init may set defaults, then @opt is called per option.
 */
struct rsp_command {
	const char *name;
	const char *summary;
	const char *usage; /* option lines and EXAMPLES, under 80 columns */
	unsigned common;
	const struct rsp_option *opts; /* terminated by {NULL} */
	size_t opts_size;
	void (*init)(void *opts);
	int (*opt)(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err);
	int (*check)(struct rsp_request *req, struct rsp_buf *err);
	int (*run)(const struct rsp_request *req, const struct rsp_source *src, struct rsp_buf *out,
		   struct rsp_buf *err);
	/* Files the request asks the answer to carry (rsp/answer.h): the @i-th
	 * one's path and part name, NULL past the end. NULL: none ever. */
	const char *(*output)(const struct rsp_request *req, size_t i, const char **name);
	/*
	 * Never reads src->symbols (user symbols, the process model): an
	 * offline source may then skip building them (a full pass over the
	 * window). False, the safe default, for any command that might.
	 */
	bool no_symbols;
	/*
	 * Whether answering @req passes over the window's records (a store,
	 * a census, a profile of samples). NULL: it does, the safe default.
	 * rspd answers the requests that do not on a lane of their own
	 * (rsp_request__reads_window()).
	 */
	bool (*reads_window)(const struct rsp_request *req);
	/*
	 * Optional: a part that runs in rspctl, for options that name the
	 * user's own files (rspd must not open paths a client names). When
	 * @local says so, rspctl sends the arguments minus the options @keep
	 * rejects (and minus the format options), plus --json, and @finish
	 * makes the answer from rspd's JSON.
	 */
	bool (*local)(const struct rsp_request *req);
	bool (*keep)(const struct rsp_request *req, int id);
	int (*finish)(const struct rsp_request *req, const char *answer, size_t len,
		      struct rsp_buf *out, struct rsp_buf *err);
	/*
	 * Optional, with no_symbols: whether @req reads the process model all
	 * the same (hist --by cgroup: each process's cgroup), beside --cgroup
	 * and --container, which always do (rsp_request__uses_symbols()).
	 */
	bool (*uses_model)(const struct rsp_request *req);
	/*
	 * For a command without RSP_COPT_CGROUP: why --cgroup and --container
	 * do not apply to it (the end of one sentence; NULL: "unknown option").
	 */
	const char *no_cgroup;
};

extern const struct rsp_command rsp_cmd_status;
extern const struct rsp_command rsp_cmd_hist;
extern const struct rsp_command rsp_cmd_dump;
extern const struct rsp_command rsp_cmd_graph;
extern const struct rsp_command rsp_cmd_top;
extern const struct rsp_command rsp_cmd_net;
extern const struct rsp_command rsp_cmd_snapshot;
extern const struct rsp_command rsp_cmd_stopwatch;
extern const struct rsp_command rsp_cmd_trigger;

/** rsp_trig__list_json() - `trigger list --json`'s object (status shows it too). */
json_t *rsp_trig__list_json(const struct rsp_trig_view *v, size_t n,
			    const struct rsp_trig_totals *t, uint64_t now);

/** rsp_query__never_reads_window() - a command's reads_window when it never does. */
bool rsp_query__never_reads_window(const struct rsp_request *req);

struct rsp_maps;
/**
 * rsp_request__cgroup_keeps() - whether process @pid at @time passes the
 * request's --cgroup and --container, by its cgroup in the process model
 * @m (true when neither was given; false when its cgroup is unknown)
 */
bool rsp_request__cgroup_keeps(const struct rsp_request *req, const struct rsp_maps *m,
			       uint32_t pid, uint64_t time);

/**
 * rsp_request__fwake_ns() - the longest run of a false wakeup a request asks
 * for (rsp_tlstore_opts.fwake_ns): --false-wakeup-run, else the default;
 * 0 with --no-annotations
 */
uint64_t rsp_request__fwake_ns(const struct rsp_request *req);

/**
 * rsp_request__spin() - the spin loops a request asks for (rsp/spin.h's
 * table and its --spin-symbol names, which @out points to: keep @req
 * alive while @out is used). Return: @out, or NULL with --no-annotations
 * (the raw view: no busy waiting told apart).
 */
const struct rsp_spin *rsp_request__spin(const struct rsp_request *req, struct rsp_spin *out);

struct rsp_tlstore;
/**
 * rsp_query__text_fwake(), rsp_query__json_fwake() - the false wakeups the
 * store removed (none with @raw, --no-annotations), for graph and snapshot
 */
void rsp_query__text_fwake(const struct rsp_tlstore *s, bool raw, struct rsp_buf *out);
json_t *rsp_query__json_fwake(const struct rsp_tlstore *s, bool raw);

/** rsp_query__find() - the command named @name, NULL if none. */
const struct rsp_command *rsp_query__find(const char *name);
/** rsp_query__command_at() - the @i-th command of the table, NULL past the end. */
const struct rsp_command *rsp_query__command_at(size_t i);
/**
 * rsp_request__option_at() - the @i-th option (long name, no "--") that
 * command @c accepts, its own then the common ones; NULL past the end.
 * For the documentation checks.
 */
const char *rsp_request__option_at(const struct rsp_command *c, size_t i);
/**
 * rsp_request__nth_path() - for a command's output(): the @i-th of the @n
 * @paths that is not "" and, in *@name, its part name from @names; NULL
 * past the end.
 */
const char *rsp_request__nth_path(const char *const *paths, const char *const *names, size_t n,
				  size_t i, const char **name);
/**
 * rsp_request__window_range() - the part of @src's window a request asks
 * for: all of it from its oldest complete time to now (live) or its newest
 * record (a file), narrowed by --to, --last and --from, in that order.
 */
void rsp_request__window_range(const struct rsp_request *req, const struct rsp_source *src,
			       uint64_t *from, uint64_t *to);

/**
 * rsp_source__settle() - live only (src->capture set): wait, at most 5 s,
 * until @reached(@src, until) says that what was recorded before the
 * query began (src->now), plus a margin, has reached what the query reads
 * (the window: the capture thread drains the rings every flush interval;
 * the latency profiles: the analysis thread feeds them after that). A
 * process that began or ended just before the query is then not called
 * absent for want of records still in a ring. Offline: returns at once.
 */
void rsp_source__settle(const struct rsp_source *src,
			bool (*reached)(const struct rsp_source *src, uint64_t until));

#endif
