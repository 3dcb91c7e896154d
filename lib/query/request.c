// SPDX-License-Identifier: LGPL-2.1
/*
 * A query request: its command and options parsed from argv, what of it
 * goes to rspd, and where its answer goes.
 *
 * Options are parsed here rather than with getopt_long(3): getopt keeps its
 * state in globals (optind), which rspd's server thread cannot share with
 * anything else, and prints its own errors to stderr, which a library and a
 * daemon must not do. The grammar is small: --name, --name VALUE,
 * --name=VALUE, and positional arguments for the command.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/cgroup.h>
#include <rsp/maps.h>
#include <rsp/parse.h>
#include <rsp/tlstore.h>
#include "internal/analyses.h"
#include "internal/query.h"

const char *rsp_request__command(const struct rsp_request *req)
{
	return req->cmd ? req->cmd->name : "";
}

bool rsp_request__uses_symbols(const struct rsp_request *req)
{
	/* --cgroup, --container: the process model knows each process's cgroup */
	return !req->cmd || !req->cmd->no_symbols || req->cgroup || req->container ||
	       (req->cmd->uses_model && req->cmd->uses_model(req));
}

bool rsp_request__reads_window(const struct rsp_request *req)
{
	return !req->cmd || !req->cmd->reads_window || req->cmd->reads_window(req);
}

bool rsp_query__never_reads_window(const struct rsp_request *req)
{
	return false;
}

enum {
	COPT_JSON = -1,
	COPT_FORMAT = -2,
	COPT_PID = -3,
	COPT_LAST = -4,
	COPT_FROM = -5,
	COPT_TO = -6,
	COPT_CGROUP = -7,
	COPT_CONTAINER = -8,
	COPT_NO_ANNOT = -9,
	COPT_FWAKE_RUN = -10,
	COPT_SPIN_SYMBOL = -11,
};

static const struct rsp_option common_opts[] = {
	{"json", false, COPT_JSON},
	{"format", true, COPT_FORMAT},
	{"pid", true, COPT_PID},
	{"last", true, COPT_LAST},
	{"from", true, COPT_FROM},
	{"to", true, COPT_TO},
	{"cgroup", true, COPT_CGROUP},
	{"container", true, COPT_CONTAINER},
	{"no-annotations", false, COPT_NO_ANNOT},
	{"false-wakeup-run", true, COPT_FWAKE_RUN},
	{"spin-symbol", true, COPT_SPIN_SYMBOL},
	{NULL, false, 0},
};

static bool common_allowed(const struct rsp_command *c, int id)
{
	switch (id) {
	case COPT_JSON:
	case COPT_FORMAT:
		return c->common & RSP_COPT_FORMAT;
	case COPT_PID:
		return c->common & RSP_COPT_PID;
	case COPT_LAST:
		return c->common & RSP_COPT_LAST;
	case COPT_FROM:
	case COPT_TO:
		return c->common & RSP_COPT_RANGE;
	case COPT_CGROUP:
	case COPT_CONTAINER:
		return c->common & RSP_COPT_CGROUP;
	case COPT_NO_ANNOT:
	case COPT_FWAKE_RUN:
		return c->common & RSP_COPT_FWAKE;
	case COPT_SPIN_SYMBOL:
		return c->common & RSP_COPT_SPIN;
	default:
		return false;
	}
}

static int set_format(struct rsp_request *req, const char *v, struct rsp_buf *err)
{
	if (!strcmp(v, "text"))
		req->format = RSP_FMT_TEXT;
	else if (!strcmp(v, "json"))
		req->format = RSP_FMT_JSON;
	else if (!strcmp(v, "dot") && (req->cmd->common & RSP_COPT_DOT))
		req->format = RSP_FMT_DOT;
	else {
		rsp_buf__printf(err, "%s: unknown format '%s'; use %s", req->cmd->name, v,
				(req->cmd->common & RSP_COPT_DOT) ? "text, json or dot"
								  : "text or json");
		return -EINVAL;
	}
	return 0;
}

/* --cgroup PATH, --container ID: kept as given (one of each). */
static int cgroup_opt(struct rsp_request *req, int id, const char *v, struct rsp_buf *err)
{
	char **slot = id == COPT_CGROUP ? &req->cgroup : &req->container;

	if (id == COPT_CGROUP && (v[0] != '/' || strlen(v) >= 4096)) {
		rsp_buf__printf(
			err,
			"%s: --cgroup wants a cgroup v2 path as /proc/PID/cgroup shows it, "
			"starting with '/' (such as /system.slice/nginx.service), not '%.60s'",
			req->cmd->name, v);
		return -EINVAL;
	}
	if (id == COPT_CONTAINER && !rsp_cgroup__check_container_arg(v)) {
		rsp_buf__printf(err,
				"%s: --container wants a container id or its first 12 or more "
				"hex digits (as 'docker ps' shows it), not '%.70s'",
				req->cmd->name, v);
		return -EINVAL;
	}
	free(*slot);
	*slot = strdup(v);
	if (!*slot) {
		rsp_buf__printf(err, "%s: out of memory parsing the request", req->cmd->name);
		return -ENOMEM;
	}
	return 0;
}

bool rsp_request__cgroup_keeps(const struct rsp_request *req, const struct rsp_maps *m,
			       uint32_t pid, uint64_t time)
{
	const char *path;

	if (!req->cgroup && !req->container)
		return true;
	path = m ? rsp_maps__cgroup(m, pid, time) : NULL;
	if (!path)
		return false;
	if (req->cgroup && !rsp_cgroup__in_subtree(path, req->cgroup))
		return false;
	return !req->container || rsp_cgroup__container_matches(path, req->container);
}

/*
 * --spin-symbol NAME: a function name as rspctl top shows it (no blanks;
 * the symbolizer's names never hold any), kept once.
 */
static int spin_opt(struct rsp_request *req, const char *v, struct rsp_buf *err)
{
	size_t len = strlen(v);

	if (!len || len > RSP_SPIN_NAME_MAX || strpbrk(v, " \t\n")) {
		rsp_buf__printf(err,
				"%s: --spin-symbol wants a function name as 'rspctl top' shows "
				"it (1 to %d bytes, no blanks), such as my_spin_wait, not '%.60s'",
				req->cmd->name, RSP_SPIN_NAME_MAX, v);
		return -EINVAL;
	}
	for (size_t i = 0; i < req->nr_spin_syms; i++)
		if (!strcmp(req->spin_syms[i], v))
			return 0;
	if (req->nr_spin_syms == RSP_SPIN_MAX_EXTRA) {
		rsp_buf__printf(err, "%s: --spin-symbol given more than %d times; name at most %d",
				req->cmd->name, RSP_SPIN_MAX_EXTRA, RSP_SPIN_MAX_EXTRA);
		return -EINVAL;
	}
	req->spin_syms[req->nr_spin_syms] = strdup(v);
	if (!req->spin_syms[req->nr_spin_syms]) {
		rsp_buf__printf(err, "%s: out of memory parsing the request", req->cmd->name);
		return -ENOMEM;
	}
	req->nr_spin_syms++;
	return 0;
}

static int common_opt(struct rsp_request *req, int id, const char *v, struct rsp_buf *err)
{
	uint64_t n;

	switch (id) {
	case COPT_JSON:
		req->format = RSP_FMT_JSON;
		return 0;
	case COPT_FORMAT:
		return set_format(req, v, err);
	case COPT_PID:
		if (rsp_parse__u64(v, 1, 4194304, &n)) {
			rsp_buf__printf(err, "%s: --pid wants a process id, not '%s'",
					req->cmd->name, v);
			return -EINVAL;
		}
		req->pid = (long)n;
		return 0;
	case COPT_LAST:
		if (rsp_parse__duration(v, &n) || !n) {
			rsp_buf__printf(err,
					"%s: --last wants a duration such as 10s, 500ms or 2m, "
					"not '%s'",
					req->cmd->name, v);
			return -EINVAL;
		}
		req->last_ns = n;
		return 0;
	case COPT_FROM:
	case COPT_TO:
		if (rsp_parse__seconds(v, &n) || !n) {
			rsp_buf__printf(
				err,
				"%s: --%s wants a time in seconds as the window shows it "
				"(rspctl status: 'window: A .. B'), such as 1687.5621, not '%s'",
				req->cmd->name, id == COPT_FROM ? "from" : "to", v);
			return -EINVAL;
		}
		*(id == COPT_FROM ? &req->from_ns : &req->to_ns) = n;
		return 0;
	case COPT_CGROUP:
	case COPT_CONTAINER:
		return cgroup_opt(req, id, v, err);
	case COPT_NO_ANNOT:
		req->raw = true;
		return 0;
	case COPT_FWAKE_RUN:
		if (rsp_parse__u64(v, 1, 1000000, &n)) {
			rsp_buf__printf(err,
					"%s: --false-wakeup-run wants the longest run of a false "
					"wakeup in microseconds, from 1 to 1000000, not '%s'",
					req->cmd->name, v);
			return -EINVAL;
		}
		req->fwake_ns = n * 1000;
		return 0;
	case COPT_SPIN_SYMBOL:
		return spin_opt(req, v, err);
	default:
		return -EINVAL;
	}
}

uint64_t rsp_request__fwake_ns(const struct rsp_request *req)
{
	if (req->raw)
		return 0;
	return req->fwake_ns ? req->fwake_ns : RSP_FWAKE_DEFAULT_NS;
}

const struct rsp_spin *rsp_request__spin(const struct rsp_request *req, struct rsp_spin *out)
{
	if (req->raw)
		return NULL;
	out->extra = (const char *const *)req->spin_syms;
	out->nr_extra = req->nr_spin_syms;
	return out;
}

static const struct rsp_option *find_opt(const struct rsp_option *tab, const char *name, size_t len)
{
	for (; tab && tab->name; tab++)
		if (strlen(tab->name) == len && !strncmp(tab->name, name, len))
			return tab;
	return NULL;
}

/* One "--name[=value]" at argv[*i]; consumes its value. */
static int parse_one(struct rsp_request *req, int argc, const char *const argv[], int *i,
		     struct rsp_buf *err)
{
	const struct rsp_command *c = req->cmd;
	const char *name = argv[*i] + 2, *eq = strchr(name, '='), *val = NULL;
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct rsp_option *o = find_opt(c->opts, name, len);
	bool common = false;

	if (!o) {
		o = find_opt(common_opts, name, len);
		common = o && common_allowed(c, o->id);
	}
	if (o && !common && (o->id == COPT_CGROUP || o->id == COPT_CONTAINER) && c->no_cgroup) {
		rsp_buf__printf(err, "%s: --cgroup and --container do not apply: %s", c->name,
				c->no_cgroup);
		return -EINVAL;
	}
	if (!o || (!common && o->id < 0)) {
		rsp_buf__printf(err, "%s: unknown option '%s'; see 'rspctl help %s'", c->name,
				argv[*i], c->name);
		return -EINVAL;
	}
	if (o->has_arg) {
		if (eq)
			val = eq + 1;
		else if (*i + 1 < argc)
			val = argv[++*i];
		else {
			rsp_buf__printf(err, "%s: option --%s needs a value", c->name, o->name);
			return -EINVAL;
		}
	} else if (eq) {
		rsp_buf__printf(err, "%s: option --%s takes no value", c->name, o->name);
		return -EINVAL;
	}
	return common ? common_opt(req, o->id, val, err) : c->opt(req, o->id, val, err);
}

static int parse_args(struct rsp_request *req, int argc, const char *const argv[],
		      struct rsp_buf *err)
{
	const struct rsp_command *c = req->cmd;

	for (int i = 1; i < argc; i++) {
		int ret;

		if (!strncmp(argv[i], "--", 2) && argv[i][2]) {
			ret = parse_one(req, argc, argv, &i, err);
		} else if (c->opt) {
			/* Positional argument: id 0. */
			ret = c->opt(req, 0, argv[i], err);
		} else {
			rsp_buf__printf(err, "%s: unexpected argument '%s'; see 'rspctl help %s'",
					c->name, argv[i], c->name);
			ret = -EINVAL;
		}
		if (ret)
			return ret;
	}
	if (req->from_ns && req->to_ns && req->from_ns >= req->to_ns) {
		rsp_buf__printf(err, "%s: --from must be before --to", c->name);
		return -EINVAL;
	}
	if (req->last_ns && req->from_ns) {
		rsp_buf__printf(err, "%s: give --last or --from, not both", c->name);
		return -EINVAL;
	}
	if (req->raw && (req->fwake_ns || req->nr_spin_syms)) {
		rsp_buf__printf(err,
				req->fwake_ns ? "%s: --no-annotations keeps every wakeup and "
						"--false-wakeup-run sets which are false; give one "
						"of them"
					      : "%s: --no-annotations tells no spinning apart and "
						"--spin-symbol names spin loops; give one of them",
				c->name);
		return -EINVAL;
	}
	return c->check ? c->check(req, err) : 0;
}

int rsp_request__parse(int argc, const char *const argv[], struct rsp_request *req,
		       struct rsp_buf *err)
{
	const struct rsp_command *c;
	int ret;

	memset(req, 0, sizeof(*req));
	req->pid = -1;
	if (argc < 1 || !(c = rsp_query__find(argv[0]))) {
		rsp_buf__printf(err, "unknown command '%s'; run 'rspctl help' for the list",
				argc < 1 ? "" : argv[0]);
		return -EINVAL;
	}
	req->cmd = c;
	if (c->opts_size) {
		req->opts = calloc(1, c->opts_size);
		if (!req->opts) {
			rsp_buf__printf(err, "%s: out of memory parsing the request", c->name);
			return -ENOMEM;
		}
		if (c->init)
			c->init(req->opts);
	}
	ret = parse_args(req, argc, argv, err);
	if (ret)
		rsp_request__exit(req);
	return ret;
}

void rsp_request__exit(struct rsp_request *req)
{
	free(req->opts);
	req->opts = NULL;
	free(req->cgroup);
	free(req->container);
	req->cgroup = req->container = NULL;
	for (size_t i = 0; i < req->nr_spin_syms; i++)
		free(req->spin_syms[i]);
	req->nr_spin_syms = 0;
}

const char *rsp_request__option_at(const struct rsp_command *c, size_t i)
{
	for (const struct rsp_option *o = c->opts; o && o->name; o++)
		if (i-- == 0)
			return o->name;
	for (const struct rsp_option *o = common_opts; o->name; o++)
		if (common_allowed(c, o->id) && i-- == 0)
			return o->name;
	return NULL;
}

bool rsp_request__is_local(const struct rsp_request *req)
{
	return req->cmd && req->cmd->local && req->cmd->local(req);
}

/* Does the option at argv[*i] go to rspd? Advances *i past its value. */
static bool remote_keeps(const struct rsp_request *req, int argc, const char *const argv[], int *i)
{
	const struct rsp_command *c = req->cmd;
	const char *name = argv[*i] + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct rsp_option *o = find_opt(c->opts, name, len);
	bool common = !o;

	if (!o)
		o = find_opt(common_opts, name, len);
	if (o && o->has_arg && !eq && *i + 1 < argc)
		++*i;
	if (!o)
		return true;
	if (common)
		return o->id != COPT_JSON && o->id != COPT_FORMAT;
	return !c->keep || c->keep(req, o->id);
}

const char **rsp_request__remote_argv(const struct rsp_request *req, int argc,
				      const char *const argv[], int *out_argc)
{
	const char **v = calloc((size_t)argc + 2, sizeof(*v));
	int n = 0;

	if (!v)
		return NULL;
	for (int i = 0; i < argc; i++) {
		int first = i;

		if (i == 0 || strncmp(argv[i], "--", 2) || !argv[i][2]) {
			v[n++] = argv[i];
			continue;
		}
		if (!remote_keeps(req, argc, argv, &i))
			continue;
		for (int j = first; j <= i; j++)
			v[n++] = argv[j];
	}
	v[n++] = "--json";
	v[n] = NULL;
	*out_argc = n;
	return v;
}

int rsp_request__finish(const struct rsp_request *req, const char *answer, size_t len,
			struct rsp_buf *out, struct rsp_buf *err)
{
	if (!req->cmd || !req->cmd->finish)
		return rsp_buf__add(out, answer, len);
	return req->cmd->finish(req, answer, len, out, err);
}

const char *rsp_request__output_at(const struct rsp_request *req, size_t i, const char **name)
{
	if (!req->cmd || !req->cmd->output)
		return NULL;
	return req->cmd->output(req, i, name);
}

const char *rsp_request__nth_path(const char *const *paths, const char *const *names, size_t n,
				  size_t i, const char **name)
{
	for (size_t k = 0; k < n; k++) {
		if (!paths[k][0])
			continue;
		if (i-- == 0) {
			*name = names[k];
			return paths[k];
		}
	}
	return NULL;
}

const char *rsp_request__output(const struct rsp_request *req, const char *name, size_t len)
{
	const char *n, *path;

	for (size_t i = 0; (path = rsp_request__output_at(req, i, &n)); i++)
		if (strlen(n) == len && !memcmp(n, name, len))
			return path;
	return NULL;
}

void rsp_request__window_range(const struct rsp_request *req, const struct rsp_source *src,
			       uint64_t *from, uint64_t *to)
{
	struct rsp_window_stats ws;

	rsp_window__stats(src->window, &ws);
	*to = src->now ? src->now : ws.newest;
	*from = ws.oldest > ws.complete_from ? ws.oldest : ws.complete_from;
	if (req->to_ns && req->to_ns < *to)
		*to = req->to_ns;
	if (req->last_ns && *to > req->last_ns && *to - req->last_ns > *from)
		*from = *to - req->last_ns;
	if (req->from_ns > *from)
		*from = req->from_ns;
	if (*from > *to)
		*from = *to;
}

int rsp_request__check_events(const struct rsp_request *req, const struct rsp_schema *s,
			      struct rsp_buf *notes, struct rsp_buf *err)
{
	return rsp_analyses__check(rsp_request__command(req), s, notes, err);
}
