// SPDX-License-Identifier: LGPL-2.1
/*
 * Access control for queries: the rule is in lib/include/rsp/access.h, next
 * to struct rsp_access. Every command decides through these functions, so
 * that redaction is the same everywhere.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <rsp/census.h>
#include <rsp/query.h>
#include <rsp/window.h>
#include "internal/fmt.h"
#include "internal/query.h"

#define SETTLE_MARGIN_NS 50000000ull /* past one drain pass over every CPU */
#define SETTLE_STEP_NS	 10000000l
/* 5 s: a loaded machine drains late; a stalled capture is not waited on longer. */
#define SETTLE_STEPS 500

bool rsp_source__may_see(const struct rsp_source *src, long pid)
{
	return rsp_access__may_see(&src->access, pid);
}

bool rsp_source__system_wide(const struct rsp_source *src)
{
	return rsp_access__system_wide(&src->access);
}

bool rsp_source__kernel_symbols(const struct rsp_source *src)
{
	return rsp_access__kernel_symbols(&src->access);
}

int rsp_source__check_pid(const struct rsp_source *src, const char *cmd, long pid,
			  struct rsp_buf *err)
{
	const struct rsp_access *a = &src->access;
	uint32_t uid;
	int ret;

	if (!a->restricted || pid == 0)
		return 0;
	ret = a->uid_of ? a->uid_of(a->ctx, pid, &uid) : -ENOSYS;
	if (!ret && uid == a->uid)
		return 0;
	if (ret)
		rsp_buf__printf(err,
				"%s: process %ld is not running, so rspd cannot tell whose it was; "
				"only root and rspd's admin group may query processes that have "
				"exited",
				cmd, pid);
	else
		rsp_buf__printf(err,
				"%s: process %ld belongs to another user; you may query only your "
				"own processes (root and rspd's admin group may query any)",
				cmd, pid);
	return -EACCES;
}

void rsp_source__settle(const struct rsp_source *src,
			bool (*reached)(const struct rsp_source *src, uint64_t until))
{
	struct timespec step = {0, SETTLE_STEP_NS};

	if (!src->capture || src->offline || !src->now)
		return;
	for (int i = 0; i < SETTLE_STEPS && !reached(src, src->now + SETTLE_MARGIN_NS); i++)
		nanosleep(&step, NULL);
}

static bool window_reached(const struct rsp_source *src, uint64_t until)
{
	struct rsp_window_stats ws;

	rsp_window__stats(src->window, &ws);
	return ws.newest >= until;
}

/* Threads of @pid in [@from, @to], and the records lost there; -ENOMEM. */
static long count_threads(const struct rsp_source *src, long pid, uint64_t from, uint64_t to,
			  uint64_t *lost)
{
	struct rsp_wsnap *snap = rsp_window__pin(src->window, from, to);
	struct rsp_census *cs = snap ? rsp_census__new(src->schema, snap, from, to, pid) : NULL;
	size_t n = 0;

	rsp_wsnap__unpin(snap);
	if (!cs)
		return -ENOMEM;
	rsp_census__threads(cs, &n);
	*lost = rsp_census__stats(cs)->lost;
	rsp_census__delete(cs);
	return (long)n;
}

int rsp_source__check_seen(const struct rsp_source *src, const char *cmd, long pid, uint64_t from,
			   uint64_t to, struct rsp_buf *err)
{
	uint64_t lost = 0;
	long n = count_threads(src, pid, from, to, &lost);

	if (!n && src->capture && !window_reached(src, src->now + SETTLE_MARGIN_NS)) {
		rsp_source__settle(src, window_reached);
		n = count_threads(src, pid, from, to, &lost);
	}
	if (n < 0) {
		rsp_buf__printf(err, "%s: out of memory looking for process %ld in the window", cmd,
				pid);
		return -ENOMEM;
	}
	if (n)
		return 0;
	if (lost) {
		/* Not "check the pid": rsp cannot tell it from a process whose records it lost. */
		rsp_buf__printf(
			err,
			"%s: process %ld has no thread in the window, which lost %llu "
			"records in that time (rspctl status: lost); it may have been among "
			"them — check the pid, or give rspd larger rings (--ring-pages)",
			cmd, pid, (unsigned long long)lost);
		return -ESRCH;
	}
	return rsp_source__not_seen(cmd, pid, err);
}

int rsp_source__not_seen(const char *cmd, long pid, struct rsp_buf *err)
{
	rsp_buf__printf(err,
			"%s: process %ld has no thread in the window; check the pid, or widen "
			"--last",
			cmd, pid);
	return -ESRCH;
}
