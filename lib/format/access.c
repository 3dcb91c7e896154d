// SPDX-License-Identifier: LGPL-2.1
/*
 * The access rule's decisions (rsp/access.h): what the requester may see,
 * from struct rsp_access alone, so that the renderers (redact.c,
 * snapnames.c) decide without the query layer's source.
 */
#include <rsp/access.h>

bool rsp_access__may_see(const struct rsp_access *a, long pid)
{
	uint32_t uid;

	if (!a->restricted || pid == 0)
		return true;
	if (pid < 0 || !a->uid_of || a->uid_of(a->ctx, pid, &uid))
		return false; /* unknown owner: another user's */
	return uid == a->uid;
}

bool rsp_access__system_wide(const struct rsp_access *a)
{
	return !a->restricted || a->paranoid <= 0;
}

bool rsp_access__kernel_symbols(const struct rsp_access *a)
{
	return !a->restricted || a->paranoid <= 1;
}
