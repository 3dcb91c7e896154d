// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl stopwatch add|list|rm|show`: parsed here like every query's
 * options, so that rspctl checks them without a daemon; carried out by rspd
 * (daemon/stopwatch.c), which owns the BPF programs and their counts. rspd
 * takes the request through rsp_request__stopwatch() instead of
 * rsp_query__run().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <rsp/parse.h>
#include <rsp/stopwatch.h>
#include <rsp/sw_request.h>
#include "internal/query.h"

struct sw_opts {
	bool has_op;
	enum rsp_sw_op op;
	const char *arg; /* SPEC (add) or NAME (rm, show) */
	const char *name, *comm;
	const char *start, *end, *key, *where; /* a keyed pair */
	bool callers;			       /* --callers */
	uint64_t callers_max, top;	       /* 0: not given */
};

enum {
	OPT_NAME = 1,
	OPT_COMM = 2,
	OPT_START = 3,
	OPT_END = 4,
	OPT_KEY = 5,
	OPT_WHERE = 6,
	OPT_CALLERS = 7,
	OPT_CALLERS_MAX = 8,
	OPT_TOP = 9,
};

static const struct rsp_option sw_opts[] = {
	{"name", true, OPT_NAME},	 {"comm", true, OPT_COMM},
	{"start", true, OPT_START},	 {"end", true, OPT_END},
	{"key", true, OPT_KEY},		 {"where", true, OPT_WHERE},
	{"callers", false, OPT_CALLERS}, {"callers-max", true, OPT_CALLERS_MAX},
	{"top", true, OPT_TOP},		 {NULL, false, 0},
};

static int set_op(struct sw_opts *o, const char *arg, struct rsp_buf *err)
{
	static const char *const ops[] = {"add", "list", "rm", "show"};

	for (int i = 0; i < 4; i++)
		if (!strcmp(arg, ops[i])) {
			o->op = (enum rsp_sw_op)i;
			o->has_op = true;
			return 0;
		}
	rsp_buf__printf(err, "stopwatch: unknown subcommand '%s'; use add, list, rm or show", arg);
	return -EINVAL;
}

unsigned rsp_sw__user_key(const char *key)
{
	if (key && !strncmp(key, "arg", 3) && key[3] >= '1' && key[3] <= '6' && !key[4])
		return (unsigned)(key[3] - '0');
	return 0;
}

bool rsp_sw__valid_name(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= RSP_SW_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static int sw_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct sw_opts *o = req->opts;

	switch (id) {
	case 0:
		if (!o->has_op)
			return set_op(o, arg, err);
		if (o->arg || o->op == RSP_SW_LIST) {
			rsp_buf__printf(err,
					"stopwatch: unexpected argument '%s'; see 'rspctl help "
					"stopwatch'",
					arg);
			return -EINVAL;
		}
		o->arg = arg;
		return 0;
	case OPT_NAME:
		if (!rsp_sw__valid_name(arg)) {
			rsp_buf__printf(err,
					"stopwatch: --name wants 1 to %d letters, digits, '_', '-' "
					"or '.', not '%s'",
					RSP_SW_NAME_LEN - 1, arg);
			return -EINVAL;
		}
		o->name = arg;
		return 0;
	case OPT_START:
	case OPT_END:
		if (!strchr(arg, ':') || arg[0] == ':' || !strchr(arg, ':')[1]) {
			rsp_buf__printf(
				err,
				"stopwatch: --%s wants a tracepoint as SYSTEM:EVENT (e.g. "
				"block:block_rq_issue) or a user function as BINARY:SYMBOL, "
				"not '%s'",
				id == OPT_START ? "start" : "end", arg);
			return -EINVAL;
		}
		*(id == OPT_START ? &o->start : &o->end) = arg;
		return 0;
	case OPT_KEY:
		o->key = arg;
		return 0;
	case OPT_WHERE:
		if (!strchr(arg, '=') || arg[0] == '=') {
			rsp_buf__printf(
				err,
				"stopwatch: --where wants FIELD=NUMBER (a field of the start "
				"event), not '%s'",
				arg);
			return -EINVAL;
		}
		o->where = arg;
		return 0;
	case OPT_CALLERS:
		o->callers = true;
		return 0;
	case OPT_CALLERS_MAX:
		if (rsp_parse__u64(arg, 1, 1u << 20, &o->callers_max)) {
			rsp_buf__printf(err,
					"stopwatch: --callers-max wants a number of caller stacks "
					"from 1 to %u, not '%s'",
					1u << 20, arg);
			return -EINVAL;
		}
		return 0;
	case OPT_TOP:
		if (rsp_parse__u64(arg, 1, 100000, &o->top)) {
			rsp_buf__printf(err,
					"stopwatch: --top wants a number of caller stacks from 1 "
					"to 100000, not '%s'",
					arg);
			return -EINVAL;
		}
		return 0;
	case OPT_COMM:
		if (!arg[0] || strlen(arg) > 15) {
			rsp_buf__printf(err,
					"stopwatch: --comm wants a thread name of 1 to 15 "
					"characters (as ps shows it), not '%s'",
					arg);
			return -EINVAL;
		}
		o->comm = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * A pair keyed by argN is of user functions: both sides BINARY:SYMBOL (not
 * syscall:), no --where (it filters a tracepoint's field). An "argN"-like
 * key with another N is refused rather than taken for a field's name.
 */
static int user_pair_check(const struct sw_opts *o, struct rsp_buf *err)
{
	struct rsp_sw_target t;

	if (!rsp_sw__user_key(o->key)) {
		if (!strncmp(o->key, "arg", 3) && o->key[3] >= '0' && o->key[3] <= '9') {
			rsp_buf__printf(err,
					"stopwatch add: --key %s: a user function's argument is "
					"arg1 to arg6 (x86-64 passes six in registers)",
					o->key);
			return -EINVAL;
		}
		return 0;
	}
	if (o->where) {
		rsp_buf__puts(err, "stopwatch add: --where filters a tracepoint's field; a pair "
				   "of user functions (--key argN) has none");
		return -EINVAL;
	}
	for (int k = 0; k < 2; k++) {
		const char *side = k ? o->end : o->start;

		if (rsp_sw_target__parse(side, &t, err))
			return -EINVAL;
		if (t.kind != RSP_SW_FUNC) {
			rsp_buf__printf(err,
					"stopwatch add: --key %s pairs user functions: --%s wants "
					"BINARY:SYMBOL, not '%s'",
					o->key, k ? "end" : "start", side);
			return -EINVAL;
		}
	}
	return 0;
}

/* --callers (add, show), --callers-max (add), --top (show --callers). */
static int callers_check(const struct sw_opts *o, const struct rsp_request *req,
			 struct rsp_buf *err)
{
	bool add = o->op == RSP_SW_ADD, show = o->op == RSP_SW_SHOW;

	if (o->callers && !add && !show) {
		rsp_buf__puts(err, "stopwatch: --callers goes with add (take the callers' stacks) "
				   "or show (print them)");
		return -EINVAL;
	}
	if (o->callers_max && !(add && o->callers)) {
		rsp_buf__puts(err, "stopwatch: --callers-max goes with add --callers");
		return -EINVAL;
	}
	if (o->top && !(show && o->callers)) {
		rsp_buf__puts(err, "stopwatch: --top goes with show --callers");
		return -EINVAL;
	}
	if (add && o->callers && (o->start || o->end || o->key)) {
		rsp_buf__puts(err, "stopwatch add: --callers times a function's or a system "
				   "call's callers; a keyed pair's end is not called by anyone");
		return -EINVAL;
	}
	if (show && o->callers && req->last_ns) {
		rsp_buf__puts(err, "stopwatch show: --callers counts since the stopwatch was "
				   "added; give --callers or --last, not both");
		return -EINVAL;
	}
	return 0;
}

static int sw_check(struct rsp_request *req, struct rsp_buf *err)
{
	struct sw_opts *o = req->opts;
	bool add = o->op == RSP_SW_ADD;
	int ret;

	if (!o->has_op) {
		rsp_buf__puts(err, "stopwatch: give a subcommand: add, list, rm or show; see "
				   "'rspctl help stopwatch'");
		return -EINVAL;
	}
	if ((ret = callers_check(o, req, err)))
		return ret;
	if (add && (o->start || o->end || o->key)) {
		if (o->arg || !o->start || !o->end || !o->key) {
			rsp_buf__puts(err, "stopwatch add: a keyed pair is --start SYS:EVENT --end "
					   "SYS:EVENT --key FIELD[,FIELD], without a SPEC");
			return -EINVAL;
		}
		return user_pair_check(o, err);
	}
	if (o->where) {
		rsp_buf__puts(err, "stopwatch add: --where goes with a keyed pair (--start, --end, "
				   "--key)");
		return -EINVAL;
	}
	if (add && !o->arg) {
		rsp_buf__puts(err, "stopwatch add: give a SPEC: BINARY:SYMBOL or syscall:NAME");
		return -EINVAL;
	}
	if (o->op == RSP_SW_RM && !o->arg) {
		rsp_buf__puts(err, "stopwatch rm: give the name of the stopwatch to remove "
				   "(rspctl stopwatch list)");
		return -EINVAL;
	}
	if (!add &&
	    (o->name || o->comm || req->pid > 0 || o->start || o->end || o->key || o->where)) {
		rsp_buf__puts(err, "stopwatch: --name, --comm, --pid, --start, --end, --key and "
				   "--where go with add only");
		return -EINVAL;
	}
	if (add && o->comm && req->pid > 0) {
		rsp_buf__puts(err, "stopwatch add: give --pid or --comm, not both");
		return -EINVAL;
	}
	if (req->last_ns && o->op != RSP_SW_SHOW) {
		rsp_buf__puts(err, "stopwatch: --last goes with show only");
		return -EINVAL;
	}
	if (add) {
		struct rsp_sw_target t;

		return rsp_sw_target__parse(o->arg, &t, err);
	}
	return 0;
}

int rsp_sw_target__parse(const char *spec, struct rsp_sw_target *t, struct rsp_buf *err)
{
	const char *colon = strrchr(spec, ':');
	size_t olen;

	memset(t, 0, sizeof(*t));
	if (!colon || colon == spec || !colon[1]) {
		rsp_buf__printf(err,
				"stopwatch add: '%s' is not a SPEC; give BINARY:SYMBOL (e.g. "
				"/usr/bin/myprog:work, libc.so.6:read) or syscall:NAME "
				"(e.g. syscall:nanosleep)",
				spec);
		return -EINVAL;
	}
	olen = (size_t)(colon - spec);
	if (olen >= sizeof(t->object) || strlen(colon + 1) >= sizeof(t->symbol)) {
		rsp_buf__printf(err, "stopwatch add: the SPEC is longer than %zu characters",
				sizeof(t->object) - 1);
		return -EINVAL;
	}
	memcpy(t->object, spec, olen);
	snprintf(t->symbol, sizeof(t->symbol), "%s", colon + 1);
	t->kind = strcmp(t->object, "syscall") ? RSP_SW_FUNC : RSP_SW_SYSCALL;
	return 0;
}

static int sw_run(const struct rsp_request *req, const struct rsp_source *src, struct rsp_buf *out,
		  struct rsp_buf *err)
{
	(void)req;
	(void)out;
	rsp_buf__puts(err, src->offline ? "stopwatch: stopwatches are measured live by rspd; "
					  "a dump holds none (rspctl stopwatch, without analyze)"
					: "stopwatch: this rspd has no stopwatches");
	return -EOPNOTSUPP;
}

int rsp_request__stopwatch(const struct rsp_request *req, struct rsp_sw_request *out)
{
	const struct sw_opts *o = req->opts;

	if (req->cmd != &rsp_cmd_stopwatch)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->op = o->op;
	out->spec = o->op == RSP_SW_ADD ? o->arg : NULL;
	out->name = o->op == RSP_SW_ADD ? o->name : o->arg;
	out->pid = req->pid;
	out->comm = o->comm;
	out->last_ns = req->last_ns;
	out->json = req->format == RSP_FMT_JSON;
	out->start = o->start;
	out->end = o->end;
	out->key = o->key;
	out->where = o->where;
	out->callers = o->callers;
	out->callers_max = (unsigned)o->callers_max;
	out->top = (unsigned)o->top;
	return 0;
}

const struct rsp_command rsp_cmd_stopwatch = {
	.name = "stopwatch",
	.summary = "time a function or system call, entry to return, live",
	.usage = "usage: rspctl stopwatch add SPEC [--pid PID | --comm COMM] [--name NAME]\n"
		 "       rspctl stopwatch add --start SYS:EVENT --end SYS:EVENT\n"
		 "                            --key FIELD[,FIELD] [--where FIELD=N] [...]\n"
		 "       rspctl stopwatch add SPEC --callers [--callers-max N] [...]\n"
		 "       rspctl stopwatch list [--json]\n"
		 "       rspctl stopwatch rm NAME\n"
		 "       rspctl stopwatch show [NAME] [--last DURATION] [--json]\n"
		 "       rspctl stopwatch show [NAME] --callers [--top N] [--json]\n"
		 "\n"
		 "  SPEC             BINARY:SYMBOL  a user function, entry to return\n"
		 "                                  (BINARY: a path, or a loaded library's\n"
		 "                                  soname such as libc.so.6)\n"
		 "                   syscall:NAME   a system call, entry to exit\n"
		 "  --pid PID        only calls made by process PID\n"
		 "  --comm COMM      only calls made by threads named COMM\n"
		 "  --name NAME      the stopwatch's name (default: sw1, sw2, ...)\n"
		 "  --start, --end   a keyed pair: from a tracepoint to another whose\n"
		 "                   --key fields (1 or 2, of both events) are equal:\n"
		 "                   an item through a queue (systemtap's model)\n"
		 "  --where F=N      pair: only items whose start has field F = N\n"
		 "  --start BINARY:SYMBOL --end BINARY:SYMBOL --key argN\n"
		 "                   a keyed pair of user functions: from one's entry to\n"
		 "                   the other's with the same Nth integer argument (1-6,\n"
		 "                   x86-64 registers), in one process: enqueue(item) ->\n"
		 "                   dequeue(item) across threads\n"
		 "  --last DURATION  show: only the calls that ended in the last DURATION\n"
		 "                   (rspd keeps 300 one-second slots; default: all since\n"
		 "                   the stopwatch was added)\n"
		 "  --callers        add: also count the calls by caller: the user stack\n"
		 "                   (frame pointers) at each return, one stack walk per\n"
		 "                   call; show: print the top caller stacks with their\n"
		 "                   calls, total, mean and share (since added)\n"
		 "  --callers-max N  add --callers: at most N caller stacks (default 64);\n"
		 "                   calls from more are counted as of unknown caller\n"
		 "  --top N          show --callers: the N stacks with most calls (default 10)\n"
		 "  --json           JSON answer (same as --format json)\n"
		 "\n"
		 "Each call is timed in the kernel (BPF programs on a uprobe and a\n"
		 "uretprobe, or on sys_enter/sys_exit), per thread: nested and recursive\n"
		 "calls match by stack depth, whatever CPU each side ran on. An entry\n"
		 "that never returns (longjmp, exception, thread exit) is counted as\n"
		 "unmatched. show gives count, min, max, mean, stddev, p50, p99 and\n"
		 "the log2 histogram with its peaks. add and rm are for root and\n"
		 "rspd's admin group; at most --stopwatch-max stopwatches at once.\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl stopwatch add /usr/bin/myprog:work --name work\n"
		 "  rspctl stopwatch add syscall:fsync --pid 1234\n"
		 "  rspctl stopwatch add libc.so.6:malloc --comm postgres\n"
		 "  rspctl stopwatch add --start block:block_rq_issue\n"
		 "      --end block:block_rq_complete --key dev,sector --name io\n"
		 "  rspctl stopwatch add --start /usr/bin/srv:enqueue\n"
		 "      --end /usr/bin/srv:dequeue --key arg1 --name queue\n"
		 "  rspctl stopwatch show work --last 10s\n"
		 "  rspctl stopwatch add libc.so.6:malloc --pid 1234 --callers --name m\n"
		 "  rspctl stopwatch show m --callers --top 5\n"
		 "  rspctl stopwatch rm work\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST,
	.opts = sw_opts,
	.opts_size = sizeof(struct sw_opts),
	.opt = sw_opt,
	.check = sw_check,
	.run = sw_run,
	.reads_window = rsp_query__never_reads_window,
	.no_symbols = true,
	.no_cgroup = "a stopwatch counts in the kernel the calls of the process (--pid) or "
		     "command (--comm) it was added for; add one with --pid of a process inside",
};
