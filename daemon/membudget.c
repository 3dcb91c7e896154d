// SPDX-License-Identifier: GPL-2.0
/*
 * The per-query memory budget (membudget.h). No allocation here: these
 * functions run inside malloc (daemon/malloc.c).
 */
#include "membudget.h"

/* Initial-exec TLS of the executable: reading it allocates nothing. */
static __thread struct rspd_membudget *current;

bool rspd_membudget__charge(struct rspd_membudget *b, size_t size)
{
	if (b->limit && (size > INT64_MAX / 2 || b->used + (int64_t)size > (int64_t)b->limit)) {
		if (!b->exceeded)
			b->refused = size;
		b->exceeded = true;
		return false;
	}
	rspd_membudget__adjust(b, (int64_t)size);
	return true;
}

void rspd_membudget__adjust(struct rspd_membudget *b, int64_t delta)
{
	b->used += delta;
	if (b->used > 0 && (uint64_t)b->used > b->peak)
		b->peak = (uint64_t)b->used;
}

void rspd_membudget__begin(struct rspd_membudget *b, uint64_t limit)
{
	*b = (struct rspd_membudget){.limit = limit};
	current = b;
}

void rspd_membudget__end(void)
{
	current = NULL;
}

struct rspd_membudget *rspd_membudget__current(void)
{
	return current;
}

bool rspd_membudget__mapped(int64_t delta)
{
	struct rspd_membudget *b = current;

	if (!b)
		return true;
	if (delta > 0)
		return rspd_membudget__charge(b, (size_t)delta);
	rspd_membudget__adjust(b, delta);
	return true;
}
