// SPDX-License-Identifier: LGPL-2.1
/*
 * Access control for queries: the rule is in lib/include/rsp/query.h, next
 * to struct rsp_access. Every command decides through these functions, so
 * that redaction is the same everywhere.
 */
#include <errno.h>
#include <stdio.h>
#include <rsp/query.h>

bool rsp_source__may_see(const struct rsp_source *src, long pid)
{
	const struct rsp_access *a = &src->access;
	uint32_t uid;

	if (!a->restricted || pid == 0)
		return true;
	if (pid < 0 || !a->uid_of || a->uid_of(a->ctx, pid, &uid))
		return false; /* unknown owner: another user's */
	return uid == a->uid;
}

bool rsp_source__system_wide(const struct rsp_source *src)
{
	return !src->access.restricted || src->access.paranoid <= 0;
}

bool rsp_source__kernel_symbols(const struct rsp_source *src)
{
	return !src->access.restricted || src->access.paranoid <= 1;
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

char *rsp_source__label(const struct rsp_source *src, long pid, const char *comm, char *buf,
			size_t n)
{
	if (!rsp_source__may_see(src, pid))
		snprintf(buf, n, "pid %ld " RSP_OTHER_USER, pid);
	else if (comm && comm[0])
		snprintf(buf, n, "pid %ld %s", pid, comm);
	else
		snprintf(buf, n, "pid %ld", pid);
	return buf;
}
