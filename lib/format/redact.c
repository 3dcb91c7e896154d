// SPDX-License-Identifier: LGPL-2.1
/* The access rule's redaction: see internal/redact.h. */
#include <stdio.h>
#include <rsp/symbols.h>
#include <rsp/tlstore.h>
#include "internal/redact.h"

#define VISIBLE 1u
#define HIDDEN	2u

void rsp_redact__init(struct rsp_redact *r, const struct rsp_access *access)
{
	r->access = access;
	r->store = NULL;
	rsp_u64map__init(&r->seen);
}

void rsp_redact__exit(struct rsp_redact *r)
{
	rsp_u64map__exit(&r->seen);
}

void rsp_redact__use_store(struct rsp_redact *r, const struct rsp_tlstore *store)
{
	r->store = store;
}

uint32_t rsp_redact__owner(const struct rsp_redact *r, uint32_t tid, uint32_t tgid)
{
	const struct rsp_tlthread *t;

	if (tgid)
		return tgid;
	t = r->store && tid ? rsp_tlstore__find_thread(r->store, tid) : NULL;
	return t && t->tgid ? t->tgid : tid;
}

bool rsp_redact__hidden(struct rsp_redact *r, uint32_t tid, uint32_t tgid)
{
	uint32_t pid, v;

	if (!r->access->restricted)
		return false;
	pid = rsp_redact__owner(r, tid, tgid);
	if (!pid)
		return false; /* the idle task */
	if (!rsp_u64map__get(&r->seen, pid, &v))
		return v == HIDDEN;
	v = rsp_access__may_see(r->access, pid) ? VISIBLE : HIDDEN;
	/* Out of memory: decided again next time, never shown by mistake. */
	rsp_u64map__put(&r->seen, pid, v);
	return v == HIDDEN;
}

const char *rsp_redact__label(struct rsp_redact *r, uint32_t tid, uint32_t tgid, char *buf,
			      size_t n)
{
	if (!rsp_redact__hidden(r, tid, tgid))
		return NULL;
	snprintf(buf, n, "pid %u " RSP_OTHER_USER, rsp_redact__owner(r, tid, tgid));
	return buf;
}

const char *rsp_redact__comm(struct rsp_redact *r, uint32_t tid, uint32_t tgid, const char *comm)
{
	return rsp_redact__hidden(r, tid, tgid) ? RSP_OTHER_USER : comm;
}

unsigned rsp_redact__sym_flags(struct rsp_redact *r, uint32_t tid, uint32_t tgid)
{
	return rsp_redact__hidden(r, tid, tgid) ? RSP_SYM_HIDE_USER : 0;
}
