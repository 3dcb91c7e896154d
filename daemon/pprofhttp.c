// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof profiles served beside the metrics (pprofhttp.h). Each is the
 * answer of the query rspctl would send (top --pprof, snapshot --pprof),
 * run by the same code (rspd_server__query_all()) on the metrics' HTTP
 * thread, and its "pprof" part is the body.
 *
 * Access: as the metrics. Whoever reaches the address sees every process,
 * so the address is loopback unless metrics-remote says otherwise
 * (metrics.c); the labels carry names (comm, pid, cgroup), never command
 * lines or environments.
 *
 * Memory: each pull is a query counted against --query-memory
 * (membudget.h), and libmicrohttpd answers one request at a time (one
 * internal thread), so concurrent pulls wait their turn and hold one
 * query's budget at most; a pull over it answers 503 with the sentence.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <rsp/answer.h>
#include <rsp/parse.h>
#include "config.h"
#include "membudget.h"
#include "pprofhttp.h"
#include "server.h"

#define PROFILE "/debug/pprof/profile"
#define OFFCPU	"/debug/pprof/offcpu"

bool rspd_pprofhttp__is_profile(const char *url)
{
	return !strcmp(url, PROFILE) || !strcmp(url, OFFCPU);
}

/* The query's arguments: seconds and, off-CPU, pid. Return: 0, or 400 with @err. */
static unsigned params(const char *url, const struct rspd_pprof_params *p, uint64_t *seconds,
		       uint64_t *pid, struct rsp_buf *err)
{
	bool offcpu = !strcmp(url, OFFCPU);

	*seconds = RSPD_PPROF_DEFAULT_SECONDS;
	*pid = 0;
	if (p->too_many) {
		rsp_buf__printf(err, "%s takes at most seconds%s; drop the other parameters", url,
				offcpu ? " and pid" : "");
		return 400;
	}
	for (size_t i = 0; i < p->n; i++) {
		const char *v = p->val[i] ? p->val[i] : "";

		if (!strcmp(p->key[i], "seconds")) {
			if (rsp_parse__u64(v, 1, RSPD_PPROF_MAX_SECONDS, seconds)) {
				rsp_buf__printf(err,
						"seconds wants a whole number of seconds from 1 to "
						"%d (the last N seconds of rspd's window), not "
						"'%.40s'",
						RSPD_PPROF_MAX_SECONDS, v);
				return 400;
			}
		} else if (offcpu && !strcmp(p->key[i], "pid")) {
			if (rsp_parse__u64(v, 1, 4194304, pid)) {
				rsp_buf__printf(err, "pid wants a process id, not '%.40s'", v);
				return 400;
			}
		} else {
			rsp_buf__printf(err, "%s takes seconds%s, not '%.40s'", url,
					offcpu ? " and pid" : "", p->key[i]);
			return 400;
		}
	}
	if (offcpu && !*pid) {
		rsp_buf__printf(err, "%s wants the process: add pid=PID", url);
		return 400;
	}
	return 0;
}

/* The answer's "pprof" part into @out. */
static int take_part(const struct rsp_buf *answer, struct rsp_buf *out)
{
	struct rsp_part part;
	size_t pos = 0;
	int r;

	while ((r = rsp_answer__next(answer->data, answer->len, &pos, &part)) > 0)
		if (part.name_len == 5 && !memcmp(part.name, "pprof", 5))
			return rsp_buf__add(out, part.data, part.len);
	return -EPROTO;
}

/* An error of the query: the client's (400) or rspd's (503). */
static unsigned query_status(int ret)
{
	return ret == -EINVAL || ret == -ESRCH || ret == -EACCES || ret == -ENOENT ||
			       ret == -EOPNOTSUPP
		       ? 400
		       : 503;
}

static int run(struct rspd *d, const char *url, uint64_t seconds, uint64_t pid,
	       struct rsp_buf *answer, struct rsp_buf *err)
{
	char last[32], spid[32];
	/* --limit 1: the text beside the file is not wanted */
	const char *top[] = {"top", "--last", last, "--pprof", "http", "--limit", "1"},
		   *snap[] = {"snapshot", spid, "--last", last, "--pprof", "http"};

	snprintf(last, sizeof(last), "%llus", (unsigned long long)seconds);
	snprintf(spid, sizeof(spid), "%llu", (unsigned long long)pid);
	if (!strcmp(url, PROFILE))
		return rspd_server__query_all(d, 7, top, answer, err);
	return rspd_server__query_all(d, 6, snap, answer, err);
}

unsigned rspd_pprofhttp__answer(struct rspd *d, uint64_t query_memory, const char *url,
				const struct rspd_pprof_params *p, struct rsp_buf *out,
				struct rsp_buf *err)
{
	struct rsp_buf answer = RSP_BUF_INIT;
	struct rspd_membudget b;
	uint64_t seconds, pid;
	unsigned status = params(url, p, &seconds, &pid, err);
	int ret;

	if (status)
		return status;
	rspd_membudget__begin(&b, query_memory);
	ret = run(d, url, seconds, pid, &answer, err);
	if (!ret)
		ret = take_part(&answer, out);
	rsp_buf__exit(&answer);
	rspd_membudget__end();
	if (b.exceeded) {
		char limit[32];

		rspd_config__show_size(b.limit, limit, sizeof(limit));
		rsp_buf__reset(err);
		rsp_buf__printf(err,
				"the profile needs more memory than --query-memory %s; raise it "
				"(query-memory in rspd's configuration) or ask for fewer seconds",
				limit);
		return 503;
	}
	if (ret && !err->len)
		rsp_buf__printf(err, "the profile could not be made: %s", strerror(-ret));
	return ret ? query_status(ret) : 200;
}
