/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_QUERY_H
#define RSP_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/schema.h>
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

struct rsp_hist_store;

/* Where a query reads from. */
struct rsp_source {
	struct rsp_window *window;
	struct rsp_hist_store *hist; /* latency profiles; NULL when off (rspd --no-hist) */
	const struct rsp_schema *schema;
	const struct rsp_capture_info *capture; /* NULL when not known */
	uint64_t now;      /* "now" for --last: CLOCK_MONOTONIC live, newest record offline */
	bool offline;
	const char *path;  /* the dump, offline */
};

struct rsp_command;

struct rsp_request {
	const struct rsp_command *cmd;
	enum rsp_format format;
	long pid;          /* --pid, -1 if not given */
	uint64_t last_ns;  /* --last, 0 if not given */
	void *opts;        /* the command's own options, owned */
};

/**
 * rsp_query__parse() - parse a command line ("status --json", ...)
 * @argv: argv[0] is the command name
 * @req:  filled on success; release with rsp_request__exit()
 * @err:  on failure, one sentence for the user
 *
 * Return: 0 or -EINVAL (unknown command or option, bad value) / -ENOMEM.
 */
RSP_API int rsp_query__parse(int argc, const char *const argv[], struct rsp_request *req,
			     struct rsp_buf *err);
RSP_API void rsp_request__exit(struct rsp_request *req);

/**
 * rsp_query__run() - answer a parsed request from @src into @out
 * Return: 0, or -errno with one sentence in @err.
 */
RSP_API int rsp_query__run(const struct rsp_request *req, const struct rsp_source *src,
			   struct rsp_buf *out, struct rsp_buf *err);

/**
 * rsp_query__local() - @req has a part that rspctl runs itself (it names
 * the user's files: hist --save FILE, --diff FILE). Then rspctl sends
 * rsp_query__remote_argv() to rspd and hands the answer to
 * rsp_query__finish().
 */
RSP_API bool rsp_query__local(const struct rsp_request *req);
/**
 * rsp_query__remote_argv() - the arguments to send to rspd for @req
 * @argv: what @req was parsed from; the result points into it
 * Return: a NULL-terminated array (free() it; not its strings) with its
 * length in *@out_argc, or NULL on ENOMEM.
 */
RSP_API const char **rsp_query__remote_argv(const struct rsp_request *req, int argc,
					    const char *const argv[], int *out_argc);
/**
 * rsp_query__finish() - make @req's answer from rspd's JSON answer
 * Return: 0, or -errno with one sentence in @err.
 */
RSP_API int rsp_query__finish(const struct rsp_request *req, const char *answer, size_t len,
			      struct rsp_buf *out, struct rsp_buf *err);

/** rsp_query__command_name() - the request's command, e.g. "status". */
RSP_API const char *rsp_query__command_name(const struct rsp_request *req);

/** rsp_query__usage() - usage text of every command (@cmd NULL) or one. */
RSP_API void rsp_query__usage(struct rsp_buf *out, const char *cmd);

/** rsp_query__exists() - @name is a query command. */
RSP_API bool rsp_query__exists(const char *name);

#endif /* RSP_QUERY_H */
