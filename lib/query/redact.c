// SPDX-License-Identifier: LGPL-2.1
/* The access rule's redaction: see internal/redact.h. */
#include <stdio.h>
#include <rsp/symbols.h>
#include "internal/redact.h"

#define VISIBLE 1u
#define HIDDEN	2u

void rsp_redact__init(struct rsp_redact *r, const struct rsp_source *src)
{
	r->src = src;
	rsp_u64map__init(&r->seen);
}

void rsp_redact__exit(struct rsp_redact *r)
{
	rsp_u64map__exit(&r->seen);
}

bool rsp_redact__hidden(struct rsp_redact *r, uint32_t pid)
{
	uint32_t v;

	if (!r->src->access.restricted || !pid)
		return false;
	if (!rsp_u64map__get(&r->seen, pid, &v))
		return v == HIDDEN;
	v = rsp_source__may_see(r->src, pid) ? VISIBLE : HIDDEN;
	/* Out of memory: decided again next time, never shown by mistake. */
	rsp_u64map__put(&r->seen, pid, v);
	return v == HIDDEN;
}

const char *rsp_redact__label(struct rsp_redact *r, uint32_t pid, char *buf, size_t n)
{
	if (!rsp_redact__hidden(r, pid))
		return NULL;
	snprintf(buf, n, "pid %u " RSP_OTHER_USER, pid);
	return buf;
}

const char *rsp_redact__comm(struct rsp_redact *r, uint32_t pid, const char *comm)
{
	return rsp_redact__hidden(r, pid) ? RSP_OTHER_USER : comm;
}

unsigned rsp_redact__sym_flags(struct rsp_redact *r, uint32_t pid)
{
	return rsp_redact__hidden(r, pid) ? RSP_SYM_HIDE_USER : 0;
}
