/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_QUERY_H
#define RSP_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/access.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/ksyms.h>
#include <rsp/schema.h>
#include <rsp/spin.h>
#include <rsp/status.h>
#include <rsp/window.h>

/*
 * Queries: the commands rspctl sends to rspd, and that `rspctl analyze FILE`
 * runs on a dump. One parser and one implementation serve both, so the
 * same question gets the same answer live and offline.
 */
enum rsp_format {
	RSP_FMT_TEXT,
	RSP_FMT_JSON,
	RSP_FMT_DOT,
};

/* Who asks, and THE RULE of what they see: struct rsp_access, rsp/access.h. */

struct rsp_symbolizer;
struct rsp_socktab;
struct rsp_hist_store;

/* Where a query reads from. */
struct rsp_dump_info;

struct rsp_source {
	struct rsp_window *window;
	struct rsp_hist_store *hist; /* latency profiles; NULL when off (rspd --no-hist) */
	const struct rsp_schema *schema;
	const struct rsp_capture_info *capture; /* NULL when not known (offline) */
	/*
	 * Names for addresses: the process model (kept current with the
	 * window's side-band records) and the symbol cache; NULL when there is
	 * none. A query may call rsp_symbolizer__resolve(), which reads symbol
	 * tables lazily: the owner serialises queries with model updates (rspd
	 * holds its model lock for the whole query) and calls
	 * rsp_symbolizer__begin() before each query.
	 */
	struct rsp_symbolizer *symbols;
	uint64_t now; /* "now" for --last: CLOCK_MONOTONIC live, newest record offline */
	bool offline;
	const char *path;		  /* the dump, offline */
	struct rsp_access access;	  /* zeroed: unrestricted */
	const struct rsp_dump_info *dump; /* offline: what the file records (rsp/perfdata.h) */
	/* Kernel symbols (sleep reasons, stacks): rspd loads /proc/kallsyms at
	 * start; offline, the dump's copy. NULL when not available. */
	const struct rsp_ksyms *ksyms;
	/* Sockets older than the window (rspd reads /proc/net at start); the
	 * window's own state records name the newer ones. NULL: none. */
	const struct rsp_socktab *socks;
};

/**
 * rsp_source__may_see() - may the requester see process @pid's details?
 *
 * True when unrestricted, for pid 0, and when @pid's real uid is the
 * requester's. False when it is another user's or cannot be told.
 */
RSP_API bool rsp_source__may_see(const struct rsp_source *src, long pid);

/**
 * rsp_source__check_pid() - may the requester name process @pid in a query?
 * @cmd: the command, for the message
 *
 * Return: 0, or -EACCES with one sentence in @err (rule 2 above).
 */
RSP_API int rsp_source__check_pid(const struct rsp_source *src, const char *cmd, long pid,
				  struct rsp_buf *err);

/**
 * rsp_source__check_seen() - does the window's [@from, @to] hold a thread of @pid?
 * @cmd: the command, for the message
 *
 * The one rule of every command that takes --pid (graph and snapshot apply
 * it through their own passes): a process with no thread in the time asked
 * for is an error, not an empty answer, so that a mistyped pid fails.
 * Return: 0, -ESRCH with one sentence in @err, or -ENOMEM.
 */
RSP_API int rsp_source__check_seen(const struct rsp_source *src, const char *cmd, long pid,
				   uint64_t from, uint64_t to, struct rsp_buf *err);
/** rsp_source__not_seen() - that sentence in @err for @pid; returns -ESRCH. */
RSP_API int rsp_source__not_seen(const char *cmd, long pid, struct rsp_buf *err);

/**
 * rsp_source__system_wide() - may the requester see the samples of
 * processes not theirs (perf_event_paranoid <= 0, or unrestricted)?
 */
RSP_API bool rsp_source__system_wide(const struct rsp_source *src);

/**
 * rsp_source__kernel_symbols() - may the requester see kernel function
 * names and addresses (perf_event_paranoid <= 1, or unrestricted)?
 */
RSP_API bool rsp_source__kernel_symbols(const struct rsp_source *src);

struct rsp_command;

struct rsp_request {
	const struct rsp_command *cmd;
	enum rsp_format format;
	long pid;	   /* --pid, -1 if not given */
	uint64_t last_ns;  /* --last, 0 if not given */
	uint64_t from_ns;  /* --from, CLOCK_MONOTONIC ns; 0 if not given */
	uint64_t to_ns;	   /* --to, CLOCK_MONOTONIC ns; 0 if not given */
	void *opts;	   /* the command's own options, owned */
	char *cgroup;	   /* --cgroup PATH (a subtree, as /proc/PID/cgroup shows it); NULL: all */
	char *container;   /* --container ID (12 to 64 hex digits, a prefix); NULL: all */
	bool raw;	   /* --no-annotations: no false wakeup removed, no spinning */
	uint64_t fwake_ns; /* --false-wakeup-run, ns; 0: RSP_FWAKE_DEFAULT_NS */
	/* --spin-symbol NAME, each owned: spin loops beside rsp/spin.h's table */
	char *spin_syms[RSP_SPIN_MAX_EXTRA];
	size_t nr_spin_syms;
};

/**
 * rsp_request__parse() - parse a command line ("status --json", ...)
 * @argv: argv[0] is the command name
 * @req:  filled on success; release with rsp_request__exit()
 * @err:  on failure, one sentence for the user
 *
 * Return: 0 or -EINVAL (unknown command or option, bad value) / -ENOMEM.
 */
RSP_API int rsp_request__parse(int argc, const char *const argv[], struct rsp_request *req,
			       struct rsp_buf *err);
RSP_API void rsp_request__exit(struct rsp_request *req);

/**
 * rsp_query__run() - answer a parsed request from @src into @out
 * Return: 0, or -errno with one sentence in @err.
 */
RSP_API int rsp_query__run(const struct rsp_request *req, const struct rsp_source *src,
			   struct rsp_buf *out, struct rsp_buf *err);

/**
 * rsp_request__is_local() - @req has a part that rspctl runs itself (it names
 * the user's files: hist --save FILE, --diff FILE). Then rspctl sends
 * rsp_request__remote_argv() to rspd and hands the answer to
 * rsp_request__finish().
 */
RSP_API bool rsp_request__is_local(const struct rsp_request *req);
/**
 * rsp_request__remote_argv() - the arguments to send to rspd for @req
 * @argv: what @req was parsed from; the result points into it
 * Return: a NULL-terminated array (free() it; not its strings) with its
 * length in *@out_argc, or NULL on ENOMEM.
 */
RSP_API const char **rsp_request__remote_argv(const struct rsp_request *req, int argc,
					      const char *const argv[], int *out_argc);
/**
 * rsp_request__finish() - make @req's answer from rspd's JSON answer
 * Return: 0, or -errno with one sentence in @err.
 */
RSP_API int rsp_request__finish(const struct rsp_request *req, const char *answer, size_t len,
				struct rsp_buf *out, struct rsp_buf *err);

/** rsp_request__command() - the request's command, e.g. "status". */
RSP_API const char *rsp_request__command(const struct rsp_request *req);

/**
 * rsp_request__uses_symbols() - whether answering @req may read
 * src->symbols; when false, an offline source need not build them.
 */
RSP_API bool rsp_request__uses_symbols(const struct rsp_request *req);

/**
 * rsp_request__reads_window() - whether answering @req passes over the
 * window's records (status --pid or --events, top, graph, net, snapshot):
 * the queries that take time and memory in proportion to the window.
 * status, hist (the histogram store) and dump (handed to rspd's dump
 * thread) do not: rspd answers them on a lane of their own, so that they
 * never wait behind those that do.
 */
RSP_API bool rsp_request__reads_window(const struct rsp_request *req);

/** rsp_query__usage() - usage text of every command (@cmd NULL) or one. */
RSP_API void rsp_query__usage(struct rsp_buf *out, const char *cmd);

/** rsp_query__exists() - @name is a query command. */
RSP_API bool rsp_query__exists(const char *name);

/**
 * rsp_request__output_at() - the @i-th file @req asks the answer to carry
 * (e.g. snapshot's --folded FILE), for the client to write (rsp/answer.h)
 * @name: set to the answer part that holds its content
 *
 * Return: the path as the user gave it, or NULL past the last one.
 */
RSP_API const char *rsp_request__output_at(const struct rsp_request *req, size_t i,
					   const char **name);

/** rsp_request__output() - the path for answer part @name (@len bytes), NULL if none. */
RSP_API const char *rsp_request__output(const struct rsp_request *req, const char *name,
					size_t len);

/**
 * rsp_request__check_events() - can @req be answered from records with @s's events?
 * @notes: one line per missing useful event family: what the answer will lack
 * @err:   on -ENOENT, the missing required events and what to do
 *
 * The requirements are data: tracepoints/analyses.def. Return: 0 or -ENOENT.
 */
RSP_API int rsp_request__check_events(const struct rsp_request *req, const struct rsp_schema *s,
				      struct rsp_buf *notes, struct rsp_buf *err);

/* `rspctl dump`: parsed here, carried out by rspd, which alone has the live
 * system's description (tracing formats, processes) a dump needs. */
struct rsp_dump_spec {
	const char *output; /* -o FILE (absolute), NULL: a new file in the dump directory */
	uint64_t last_ns;   /* --last, 0: the whole window */
	bool json;
	int netns_pid; /* --netns PID: only PID's network namespace's threads; 0: all */
};

/** rsp_request__dump_spec() - @req's dump options; -EINVAL if @req is not a dump. */
RSP_API int rsp_request__dump_spec(const struct rsp_request *req, struct rsp_dump_spec *spec);

/*
 * A dump as a query source (lib/query/perfdata_source.c): the query
 * layer's, above the perf.data reader (rsp/perfdata.h, lib/format/).
 */
struct rsp_perfdata;

/**
 * rsp_perfdata__source() - load, then describe the file as a query source
 * (offline, now = its newest record). The window stays owned by @pd.
 */
RSP_API int rsp_perfdata__source(struct rsp_perfdata *pd, struct rsp_source *src,
				 struct rsp_buf *err);

/**
 * rsp_perfdata__source_for() - rsp_perfdata__source() for one request:
 * builds only what @req's command reads. src->symbols is NULL when the
 * command never resolves user symbols (rsp_request__uses_symbols()).
 */
RSP_API int rsp_perfdata__source_for(struct rsp_perfdata *pd, const struct rsp_request *req,
				     struct rsp_source *src, struct rsp_buf *err);

#endif /* RSP_QUERY_H */
