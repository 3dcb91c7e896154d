// SPDX-License-Identifier: GPL-2.0
/*
 * The allocation wrappers of failalloc.h. __real_* are the libc functions
 * (under ASan, its interceptors); the linker sends every wrapped call of
 * the test's objects and of librsp.a here.
 */
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "support/failalloc.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static unsigned long armed_nth, count;
static bool failed;

void failalloc__arm(unsigned long nth)
{
	armed_nth = nth;
	count = 0;
	failed = false;
}

void failalloc__disarm(void)
{
	armed_nth = 0;
}

bool failalloc__failed(void)
{
	return failed;
}

unsigned long failalloc__count(void)
{
	return count;
}

unsigned long failalloc__each(void (*op)(void *ctx, unsigned long nth), void *ctx,
			      unsigned long max)
{
	for (unsigned long nth = 1; nth <= max; nth++) {
		op(ctx, nth);
		failalloc__disarm();
		if (!failed)
			return nth;
	}
	return 0;
}

/* Whether this allocation is the one to fail. */
static bool fail_now(void)
{
	if (!armed_nth)
		return false;
	if (++count != armed_nth)
		return false;
	failed = true;
	errno = ENOMEM;
	if (getenv("FAILALLOC_TRACE")) { /* where it failed: resolve with addr2line */
		void *pc[32];
		int n = backtrace(pc, 32);

		fprintf(stderr, "failalloc: allocation %lu fails here:\n", count);
		backtrace_symbols_fd(pc, n, 2);
	}
	return true;
}

void *__wrap_malloc(size_t size)
{
	return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return fail_now() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}
