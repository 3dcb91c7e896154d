// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl dump`: write the window (or its last part) as a perf.data file.
 *
 * The options are parsed here like every query's, so that rspctl checks
 * them without a daemon; the dump itself is written by rspd (daemon/dump.c),
 * which alone has what a dump needs besides the window: the tracepoint
 * formats, the host's description and the processes alive now. rspd takes
 * the request through rsp_request__dump_spec() instead of rsp_query__run().
 */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <rsp/parse.h>
#include "internal/query.h"

struct dump_opts {
	char output[PATH_MAX];
	bool expect_output; /* "-o" seen, its value comes next */
	int netns_pid;	    /* --netns PID */
};

enum {
	OPT_OUTPUT = 1,
	OPT_NETNS,
};

static const struct rsp_option dump_opts[] = {
	{"output", true, OPT_OUTPUT},
	{"netns", true, OPT_NETNS},
	{NULL, false, 0},
};

static int set_output(struct dump_opts *o, const char *arg, struct rsp_buf *err)
{
	if (!arg[0] || strlen(arg) >= sizeof(o->output)) {
		rsp_buf__printf(err, "dump: the output file name is %s",
				arg[0] ? "too long" : "empty");
		return -EINVAL;
	}
	snprintf(o->output, sizeof(o->output), "%s", arg);
	return 0;
}

static int dump_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct dump_opts *o = req->opts;

	if (id == OPT_OUTPUT)
		return set_output(o, arg, err);
	if (id == OPT_NETNS) {
		uint64_t pid;

		if (rsp_parse__u64(arg, 1, INT32_MAX, &pid)) {
			rsp_buf__printf(err, "dump: --netns takes a process id, not '%s'", arg);
			return -EINVAL;
		}
		o->netns_pid = (int)pid;
		return 0;
	}
	/* Positional: "-o FILE" (the query parser only knows long options). */
	if (o->expect_output) {
		o->expect_output = false;
		return set_output(o, arg, err);
	}
	if (!strcmp(arg, "-o")) {
		o->expect_output = true;
		return 0;
	}
	rsp_buf__printf(err, "dump: unexpected argument '%s'; see 'rspctl help dump'", arg);
	return -EINVAL;
}

static int dump_check(struct rsp_request *req, struct rsp_buf *err)
{
	const struct dump_opts *o = req->opts;

	if (o->expect_output) {
		rsp_buf__puts(err, "dump: -o needs a file name");
		return -EINVAL;
	}
	return 0;
}

static int dump_run(const struct rsp_request *req, const struct rsp_source *src,
		    struct rsp_buf *out, struct rsp_buf *err)
{
	rsp_buf__puts(err, src->offline
				   ? "dump: the file is already a dump; dump writes rspd's live "
				     "window (rspctl dump)"
				   : "dump: this rspd cannot write dumps");
	return -EOPNOTSUPP;
}

int rsp_request__dump_spec(const struct rsp_request *req, struct rsp_dump_spec *spec)
{
	const struct dump_opts *o = req->opts;

	if (req->cmd != &rsp_cmd_dump)
		return -EINVAL;
	spec->output = o->output[0] ? o->output : NULL;
	spec->last_ns = req->last_ns;
	spec->json = req->format == RSP_FMT_JSON;
	spec->netns_pid = o->netns_pid;
	return 0;
}

const struct rsp_command rsp_cmd_dump = {
	.name = "dump",
	.summary = "write the window as a perf.data file (also: SIGUSR1 to rspd)",
	.usage = "usage: rspctl dump [-o FILE] [--last DURATION] [--netns PID] [--json]\n"
		 "\n"
		 "  -o, --output FILE  write FILE instead of a new file in rspd's dump\n"
		 "                     directory (relative names are taken from here);\n"
		 "                     a new file, or a regular file it replaces\n"
		 "  --last DURATION    only the last part of the window, e.g. 10s\n"
		 "  --netns PID        only the records of the threads in PID's network\n"
		 "                     namespace (one \"host\" for rspctl merge)\n"
		 "  --json             JSON answer (same as --format json)\n"
		 "\n"
		 "The file is a perf.data file: perf script -i FILE and perf sched\n"
		 "timehist -i FILE read it, rspctl analyze FILE COMMAND queries it.\n"
		 "Files in the dump directory are named rsp-HOST-UTCTIME.perf.data,\n"
		 "mode 0600, written whole or not at all (temp file, fsync, rename);\n"
		 "the oldest are removed beyond rspd's --dump-keep and --dump-max-bytes.\n"
		 "Only root and members of rspd's admin group may dump: a dump holds\n"
		 "every process's records.\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl dump\n"
		 "  rspctl dump -o /tmp/slow.perf.data --last 10s\n"
		 "  rspctl dump -o /tmp/ns.perf.data --netns $(pidof nginx)\n"
		 "  kill -USR1 $(pidof rspd)\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_LAST,
	.opts = dump_opts,
	.opts_size = sizeof(struct dump_opts),
	.opt = dump_opt,
	.check = dump_check,
	.run = dump_run,
	.reads_window = rsp_query__never_reads_window, /* rspd's dump thread does */
	.no_symbols = true,
	.no_cgroup = "a dump holds the whole window and every process's cgroup; filter when "
		     "you read it (rspctl analyze FILE top --cgroup PATH)",
};
