// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl merge DUMP DUMP [...] net|graph|snapshot PID@HOST`: the
 * arguments, and the run that loads the hosts (merge.c), matches their
 * connections and answers: net (merge.c), graph (merge_graph.c) or the
 * snapshot across hosts (merge_local.c). On top of the others, so that
 * they never call back up into it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/merge.h>
#include <rsp/perfdata.h>
#include <rsp/socktab.h>
#include <rsp/tlstore.h>
#include <rsp/xhost.h>
#include "internal/merge.h"
#include "internal/u64map.h"

/* ---- arguments ------------------------------------------------------------ */

static int parse_shift(struct merge *m, const char *arg, struct rsp_buf *err)
{
	char *end;
	long idx = strtol(arg, &end, 10);
	long long ns;

	if (end == arg || *end != '=' || idx < 0 || idx >= m->nr)
		goto bad;
	ns = strtoll(end + 1, &end, 10);
	if (*end || ns < -3600000000000ll || ns > 3600000000000ll)
		goto bad;
	m->h[idx].shift = ns;
	m->h[idx].shifted = true;
	return 0;
bad:
	rsp_buf__printf(err,
			"merge: --test-clock-shift wants INDEX=NS (a dump's position from 0, a "
			"shift of at most an hour in nanoseconds), not '%s'",
			arg);
	return -EINVAL;
}

#define PID_LIMIT 4194304 /* the kernel's PID_MAX_LIMIT on 64-bit */

/* snapshot PID@HOST: HOST is a dump's position (from 0) or its host name. */
static int parse_target(struct merge *m, const char *arg, struct rsp_buf *err)
{
	const char *at = strchr(arg, '@');
	char *end;

	m->snapshot = true;
	m->pid = at ? strtol(arg, &end, 10) : -1;
	if (!at || end != at || m->pid <= 0 || !at[1]) {
		rsp_buf__printf(err,
				"merge snapshot: wants PID@HOST (HOST: a dump's position from 0, "
				"or its host name), not '%s'",
				arg);
		return -EINVAL;
	}
	/* a pid past the kernel's PID_MAX_LIMIT would wrap in uint32_t to another's */
	if (m->pid > PID_LIMIT) {
		rsp_buf__printf(err,
				"merge snapshot: %.*s is not a pid (Linux pids are at most %d, "
				"PID_MAX_LIMIT)",
				(int)(at - arg), arg, PID_LIMIT);
		return -EINVAL;
	}
	m->at = at + 1;
	return 0;
}

static int parse_depth(struct merge *m, const char *arg, struct rsp_buf *err)
{
	char *end;
	long d = strtol(arg, &end, 10);

	if (end == arg || *end || d < 1 || d > MERGE_DEPTH_MAX) {
		rsp_buf__printf(err,
				"merge snapshot: --depth wants the number of hosts to follow, 1 to "
				"%d (1: only PID's own host's answers), not '%s'",
				MERGE_DEPTH_MAX, arg);
		return -EINVAL;
	}
	m->depth = (int)d;
	return 0;
}

static int parse_args(struct merge *m, int argc, char **argv, struct rsp_buf *err)
{
	int i = 0;

	for (; i < argc && strcmp(argv[i], "net") && strcmp(argv[i], "graph") &&
	       strcmp(argv[i], "snapshot");
	     i++) {
		if (m->nr == MAX_HOSTS) {
			rsp_buf__printf(err, "merge: at most %d dumps at once", MAX_HOSTS);
			return -E2BIG;
		}
		m->h[m->nr++].path = argv[i];
	}
	if (i == argc) {
		rsp_buf__puts(err,
			      "merge: no command after the dumps: add 'net', e.g. 'rspctl merge "
			      "A.perf.data B.perf.data net'");
		return -EINVAL;
	}
	m->graph = !strcmp(argv[i], "graph");
	if (!strcmp(argv[i], "snapshot") && parse_target(m, i + 1 < argc ? argv[++i] : "", err))
		return -EINVAL;
	if (m->nr < 2) {
		rsp_buf__puts(err, "merge: needs at least two dumps, one per host");
		return -EINVAL;
	}
	for (i++; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--format=json")) {
			m->json = true;
		} else if (!strcmp(argv[i], "--depth") && m->snapshot) {
			if (parse_depth(m, i + 1 < argc ? argv[++i] : "", err))
				return -EINVAL;
		} else if (!strcmp(argv[i], "--test-clock-shift") && i + 1 < argc) {
			if (parse_shift(m, argv[++i], err))
				return -EINVAL;
		} else if (!strncmp(argv[i], "--cgroup", 8) ||
			   !strncmp(argv[i], "--container", 11)) {
			rsp_buf__puts(
				err, "merge: --cgroup and --container do not apply across "
				     "hosts (a cgroup names a directory of one host): run "
				     "'rspctl analyze DUMP net --cgroup PATH' on that host's dump");
			return -EINVAL;
		} else {
			rsp_buf__printf(err,
					"merge: unexpected argument '%s'; see 'rspctl help merge'",
					argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static void merge_exit(struct merge *m)
{
	for (int k = 0; k < m->nr; k++) {
		struct mhost *h = &m->h[k];

		free(h->ops);
		rsp_tlstore__delete(h->store);
		rsp_wsnap__unpin(h->snap);
		rsp_socktab__delete(h->socks);
		rsp_perfdata__delete(h->pd);
	}
	rsp_xmatch__delete(m->xm);
	free(m->conns);
	for (int i = 0; m->off && i < m->nr * m->nr; i++)
		rsp_clockoff__exit(&m->off[i].c);
	free(m->off);
	free(m->conn_k);
	free(m->procs);
	rsp_u64map__exit(&m->by_proc);
}

int rsp_merge__run(int argc, char **argv, struct rsp_buf *out, struct rsp_buf *err)
{
	struct merge *m = calloc(1, sizeof(*m));
	int ret;

	if (!m) {
		rsp_buf__puts(err, "merge: out of memory");
		return -ENOMEM;
	}
	rsp_u64map__init(&m->by_proc);
	m->depth = MERGE_DEPTH_DEFAULT;
	ret = parse_args(m, argc, argv, err);
	for (int k = 0; !ret && k < m->nr; k++)
		ret = rsp_merge__load_host(m, k, err);
	if (!ret && (ret = rsp_merge__match(m)))
		rsp_buf__puts(err, "merge: out of memory matching the connections");
	if (!ret)
		ret = rsp_merge__check_offsets(m, err);
	if (!ret && m->snapshot)
		ret = rsp_merge__snapshot(m, out, err);
	else if (!ret && m->graph)
		ret = rsp_merge__graph(m, out, err);
	else if (!ret && m->json && (ret = rsp_merge__net_json(m, out)))
		rsp_buf__puts(err, "merge: out of memory rendering the answer");
	else if (!ret && !m->json)
		rsp_merge__net_text(m, out);
	merge_exit(m);
	free(m);
	return ret;
}
