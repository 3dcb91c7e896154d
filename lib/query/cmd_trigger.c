// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl trigger add|list|rm`: parsed here like every query's options, so
 * that rspctl checks a condition without a daemon; carried out by rspd
 * (daemon/trigger.c), which evaluates the conditions where their data is.
 * rspd takes the request through rsp_request__trigger() instead of
 * rsp_query__run(). Also the text and JSON of `trigger list`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/parse.h>
#include <rsp/trig_request.h>
#include <rsp/trigger.h>
#include "internal/query.h"

struct trig_opts {
	bool has_op;
	enum rsp_trig_op op;
	unsigned nr_args;
	const char *args[2]; /* add: NAME CONDITION; rm: NAME */
	struct rsp_trig_spec spec;
};

enum { OPT_ACTION = 1, OPT_POST = 2, OPT_HOLDOFF = 3 };

static const struct rsp_option trig_opts[] = {
	{"action", true, OPT_ACTION},
	{"post", true, OPT_POST},
	{"holdoff", true, OPT_HOLDOFF},
	{NULL, false, 0},
};

static void trig_init(void *opts)
{
	struct trig_opts *o = opts;

	o->spec.holdoff_ns = RSP_TRIG_HOLDOFF_DEFAULT_NS;
}

static int set_op(struct trig_opts *o, const char *arg, struct rsp_buf *err)
{
	static const char *const ops[] = {"add", "list", "rm"};

	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, ops[i])) {
			o->op = (enum rsp_trig_op)i;
			o->has_op = true;
			return 0;
		}
	rsp_buf__printf(err, "trigger: unknown subcommand '%s'; use add, list or rm", arg);
	return -EINVAL;
}

static int trig_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct trig_opts *o = req->opts;
	uint64_t ns;

	switch (id) {
	case 0:
		if (!o->has_op)
			return set_op(o, arg, err);
		if (o->nr_args == (o->op == RSP_TRIG_ADD ? 2u : o->op == RSP_TRIG_RM ? 1u : 0u)) {
			rsp_buf__printf(err,
					"trigger: unexpected argument '%.60s'; a condition of "
					"several words goes in quotes (see 'rspctl help trigger')",
					arg);
			return -EINVAL;
		}
		o->args[o->nr_args++] = arg;
		return 0;
	case OPT_ACTION:
		return rsp_trig_spec__set_action(&o->spec, arg, err);
	default:
		if (rsp_parse__duration(arg, &ns)) {
			rsp_buf__printf(err, "trigger: --%s wants a duration such as 5s, not '%s'",
					id == OPT_POST ? "post" : "holdoff", arg);
			return -EINVAL;
		}
		*(id == OPT_POST ? &o->spec.post_ns : &o->spec.holdoff_ns) = ns;
		return 0;
	}
}

static int check_add(struct trig_opts *o, struct rsp_buf *err)
{
	if (o->nr_args < 2) {
		rsp_buf__puts(err, "trigger add: give a NAME and a 'CONDITION' (in quotes), e.g. "
				   "rspctl trigger add slow 'stopwatch work > 20ms'");
		return -EINVAL;
	}
	if (strlen(o->args[0]) >= sizeof(o->spec.name)) {
		rsp_buf__printf(err,
				"trigger add: the name '%.40s...' is longer than %d characters",
				o->args[0], RSP_TRIG_NAME_LEN - 1);
		return -EINVAL;
	}
	snprintf(o->spec.name, sizeof(o->spec.name), "%s", o->args[0]);
	if (rsp_trig_cond__parse(o->args[1], &o->spec.cond, err))
		return -EINVAL;
	rsp_trig_cond__format(&o->spec.cond, o->spec.cond_text, sizeof(o->spec.cond_text));
	return rsp_trig_spec__check(&o->spec, err);
}

static int trig_check(struct rsp_request *req, struct rsp_buf *err)
{
	struct trig_opts *o = req->opts;
	bool opts_given = o->spec.post_ns || o->spec.action != RSP_TRIG_DUMP ||
			  o->spec.holdoff_ns != RSP_TRIG_HOLDOFF_DEFAULT_NS;

	if (!o->has_op) {
		rsp_buf__puts(err, "trigger: give a subcommand: add, list or rm; see 'rspctl help "
				   "trigger'");
		return -EINVAL;
	}
	if (o->op != RSP_TRIG_ADD && opts_given) {
		rsp_buf__puts(err, "trigger: --action, --post and --holdoff go with add only");
		return -EINVAL;
	}
	if (o->op == RSP_TRIG_RM && !o->nr_args) {
		rsp_buf__puts(err, "trigger rm: give the name of the trigger to remove (rspctl "
				   "trigger list)");
		return -EINVAL;
	}
	return o->op == RSP_TRIG_ADD ? check_add(o, err) : 0;
}

static int trig_run(const struct rsp_request *req, const struct rsp_source *src,
		    struct rsp_buf *out, struct rsp_buf *err)
{
	(void)req;
	(void)out;
	rsp_buf__puts(err, src->offline ? "trigger: triggers are evaluated live by rspd; a dump "
					  "holds none (rspctl trigger, without analyze)"
					: "trigger: this rspd has no triggers");
	return -EOPNOTSUPP;
}

int rsp_request__trigger(const struct rsp_request *req, struct rsp_trig_request *out)
{
	const struct trig_opts *o = req->opts;

	if (req->cmd != &rsp_cmd_trigger)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->op = o->op;
	out->spec = o->spec;
	out->name = o->op == RSP_TRIG_RM ? o->args[0] : NULL;
	out->json = req->format == RSP_FMT_JSON;
	return 0;
}

/* --- trigger list ---------------------------------------------------------------- */

static const char *action_name(const struct rsp_trig_spec *s, char *buf, size_t n)
{
	if (s->action == RSP_TRIG_SNAPSHOT)
		snprintf(buf, n, "snapshot:%u", s->snapshot_pid);
	else
		snprintf(buf, n, "%s", s->action == RSP_TRIG_DUMP ? "dump" : "log");
	return buf;
}

static json_t *view_json(const struct rsp_trig_view *v, uint64_t now)
{
	char act[32];
	json_t *files = json_array(), *o;

	for (unsigned i = 0; i < v->nr_files; i++)
		json_array_append_new(files, json_string(v->files[i]));
	o = json_pack("{s:s, s:s, s:s, s:f, s:f, s:b, s:I, s:I, s:I, s:I, s:o, s:s, s:b}", "name",
		      v->spec.name, "condition", v->spec.cond_text, "action",
		      action_name(&v->spec, act, sizeof(act)), "post_s",
		      (double)v->spec.post_ns / 1e9, "holdoff_s", (double)v->spec.holdoff_ns / 1e9,
		      "from_config", v->from_config, "fires", (json_int_t)v->fires, "held_off",
		      (json_int_t)v->held_off, "rate_limited", (json_int_t)v->rate_limited,
		      "failed", (json_int_t)v->failed, "last_fire_ago_s",
		      v->last_fire_ns && now >= v->last_fire_ns
			      ? json_real((double)(now - v->last_fire_ns) / 1e9)
			      : json_null(),
		      "last_value", v->last_value, "pending", v->pending);
	if (o)
		json_object_set_new(o, "files", files);
	else
		json_decref(files);
	return o;
}

json_t *rsp_trig__list_json(const struct rsp_trig_view *v, size_t n,
			    const struct rsp_trig_totals *t, uint64_t now)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, view_json(&v[i], now));
	return json_pack("{s:o, s:I, s:f, s:b, s:I, s:I, s:I}", "triggers", arr, "max",
			 (json_int_t)t->max, "rate_per_min", t->rate_per_min, "webhook",
			 t->webhook_on, "webhook_posts", (json_int_t)t->webhook_posts,
			 "webhook_refused", (json_int_t)t->webhook_refused, "webhook_unmatched",
			 (json_int_t)t->webhook_unmatched);
}

static int render_json(const struct rsp_trig_view *v, size_t n, const struct rsp_trig_totals *t,
		       uint64_t now, struct rsp_buf *out)
{
	json_t *root = rsp_trig__list_json(v, n, t, now);
	char *s;
	int ret = -ENOMEM;

	s = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	if (s)
		ret = rsp_buf__puts(out, s) || rsp_buf__puts(out, "\n") ? -ENOMEM : 0;
	free(s);
	json_decref(root);
	return ret;
}

static void view_text(const struct rsp_trig_view *v, uint64_t now, struct rsp_buf *out)
{
	char act[32];

	rsp_buf__printf(out, "%s%s: %s -> %s", v->spec.name, v->from_config ? " (config)" : "",
			v->spec.cond_text, action_name(&v->spec, act, sizeof(act)));
	if (v->spec.post_ns)
		rsp_buf__printf(out, ", post %.3g s", (double)v->spec.post_ns / 1e9);
	rsp_buf__printf(out, ", hold-off %.3g s\n", (double)v->spec.holdoff_ns / 1e9);
	rsp_buf__printf(out, "  fires %llu, held off %llu, rate-limited %llu, failed %llu",
			(unsigned long long)v->fires, (unsigned long long)v->held_off,
			(unsigned long long)v->rate_limited, (unsigned long long)v->failed);
	if (v->last_fire_ns && now >= v->last_fire_ns)
		rsp_buf__printf(out, "; last %.1f s ago (%s)",
				(double)(now - v->last_fire_ns) / 1e9, v->last_value);
	rsp_buf__puts(out, v->pending ? "; a dump waits for its post-trigger time\n" : "\n");
	for (unsigned i = 0; i < v->nr_files; i++)
		rsp_buf__printf(out, "  wrote %s\n", v->files[i]);
}

int rsp_trig__render_list(const struct rsp_trig_view *v, size_t n, const struct rsp_trig_totals *t,
			  uint64_t now, bool json, struct rsp_buf *out)
{
	if (json)
		return render_json(v, n, t, now, out);
	if (!n)
		rsp_buf__printf(out, "no triggers (at most %u; rspctl trigger add)\n", t->max);
	for (size_t i = 0; i < n; i++)
		view_text(&v[i], now, out);
	rsp_buf__printf(out, "rate limit %g fires a minute; webhook %s", t->rate_per_min,
			t->webhook_on ? "on" : "off");
	if (t->webhook_on)
		rsp_buf__printf(out, " (%llu posts, %llu refused, %llu matching no trigger)",
				(unsigned long long)t->webhook_posts,
				(unsigned long long)t->webhook_refused,
				(unsigned long long)t->webhook_unmatched);
	return rsp_buf__puts(out, "\n");
}

const struct rsp_command rsp_cmd_trigger = {
	.name = "trigger",
	.summary = "dump, snapshot or log by itself when a condition holds",
	.usage = "usage: rspctl trigger add NAME 'CONDITION' [--action dump|snapshot:PID|log]\n"
		 "                          [--post DURATION] [--holdoff DURATION]\n"
		 "       rspctl trigger list [--json]\n"
		 "       rspctl trigger rm NAME\n"
		 "\n"
		 "  CONDITION (one argument: quote it)\n"
		 "    hist OP [pid N|tid N|comm C] p99|p999|max > DURATION [over DURATION]\n"
		 "    hist OP [pid N|tid N|comm C] count > N/s [over DURATION]\n"
		 "                     the latency profile of OP (as rspctl hist names\n"
		 "                     it: syscall:fsync, runq, ...) over the\n"
		 "                     last DURATION (default 10s, 1s to 300s)\n"
		 "    stopwatch NAME > DURATION\n"
		 "                     one call of stopwatch NAME took longer\n"
		 "    runnable [pid N|tid N|comm C] > DURATION\n"
		 "                     a thread (of the whole system unless given)\n"
		 "                     waited longer for a CPU (run queue)\n"
		 "    offcpu PID REASON > P% [over DURATION]\n"
		 "                     process PID's threads slept for REASON (block_io,\n"
		 "                     lock, network, ...) more than P% of DURATION\n"
		 "    lost > N         more than N records lost in a second\n"
		 "    shed > LEVEL     the overhead budget shed above LEVEL\n"
		 "    alert [NAME]     an Alertmanager alert NAME (any: no NAME) posted\n"
		 "                     to rspd's /v1/trigger (trigger-webhook)\n"
		 "  --action A         dump (default): the window into dump-dir;\n"
		 "                     snapshot:PID: rspctl snapshot PID, as text and JSON\n"
		 "                     into dump-dir; log: a line in rspd's log\n"
		 "  --post DURATION    dump: keep recording this long after the trip,\n"
		 "                     then write (default 0, at most 300s)\n"
		 "  --holdoff DURATION at most one fire per DURATION (default 60s)\n"
		 "  --json             JSON answer (same as --format json)\n"
		 "\n"
		 "Conditions are evaluated where their data is: profiles by the\n"
		 "histogram thread each second, stopwatches by their poller each\n"
		 "second. A fire within its trigger's hold-off, or beyond rspd's\n"
		 "trigger-rate, is counted as suppressed. A dump's metadata holds the\n"
		 "trigger, its condition and the trip time (rspctl analyze DUMP status).\n"
		 "add and rm are for root and rspd's admin group.\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl trigger add slow 'stopwatch work > 20ms' --post 5s\n"
		 "  rspctl trigger add fsync 'hist syscall:fsync p99 > 20ms over 10s'\n"
		 "  rspctl trigger add rq 'runnable > 100ms' --holdoff 5m\n"
		 "  rspctl trigger add io 'offcpu 1234 block_io > 50% over 5s'\n"
		 "      --action snapshot:1234\n"
		 "  rspctl trigger add loss 'lost > 0' --action log\n"
		 "  rspctl trigger list\n"
		 "  rspctl trigger rm slow\n",
	.common = RSP_COPT_FORMAT,
	.opts = trig_opts,
	.opts_size = sizeof(struct trig_opts),
	.init = trig_init,
	.opt = trig_opt,
	.check = trig_check,
	.run = trig_run,
	.reads_window = rsp_query__never_reads_window,
	.no_symbols = true,
	.no_cgroup = "a trigger's condition names what it watches",
};
