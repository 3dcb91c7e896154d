// SPDX-License-Identifier: LGPL-2.1
/* librsp's own mappings, told to the application's hook: see rsp/mapped.h. */
#include <rsp/mapped.h>

/* Set once at start, before the threads that map: read without a lock. */
static rsp_mapped_hook hook;

void rsp_mapped__set_hook(rsp_mapped_hook h)
{
	hook = h;
}

bool rsp_mapped__charge(int64_t delta)
{
	return !hook || hook(delta) || delta <= 0;
}
