// SPDX-License-Identifier: GPL-2.0
/*
 * rspd's allocator: the C library's (or, under AddressSanitizer, ASan's),
 * with each block counted against the calling thread's query budget
 * (membudget.h says why at malloc rather than in lib/).
 *
 * How: rspd defines malloc, calloc, realloc, free and the aligned
 * allocators; the dynamic linker resolves every caller in the process to
 * them (the executable comes first in symbol lookup: librsp, jansson,
 * libelf, libunwind and glibc's own internal calls), and each forwards to
 * the next definition (dlsym(RTLD_NEXT)), so the allocator itself is not
 * replaced. A thread that counts nothing (capture, drain, I/O) pays one
 * thread-local load per call. Blocks are never moved or wrapped: a block
 * from one allocator function may be freed by any other.
 *
 * dlsym() itself may allocate before the real functions are known: those
 * few early blocks come from a static buffer and are never freed.
 *
 * The one allowed arrow back up between files: every file (lib/
 * included) calls malloc() and free(), and in rspd they land here. That is
 * the linker's doing, not a design dependency: no file of lib/ knows of
 * this hook, so scripts/layers.py (HOOKS) leaves calls into this file out
 * of the layers and of the circles it checks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "membudget.h"

/* The exported names, declared here: -Wmissing-prototypes. */
void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void free(void *p);
int posix_memalign(void **out, size_t align, size_t size);
void *aligned_alloc(size_t align, size_t size);
void *memalign(size_t align, size_t size);

static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	size_t (*usable)(void *);
} real;

static _Alignas(16) unsigned char early[8192];
static size_t early_used;
static __thread int resolving;

static bool is_early(const void *p)
{
	return (const unsigned char *)p >= early &&
	       (const unsigned char *)p < early + sizeof(early);
}

static void *early_alloc(size_t size)
{
	size_t at = (early_used + 15) & ~(size_t)15;

	if (size > sizeof(early) - at)
		return NULL;
	early_used = at + size;
	return early + at; /* zeroed: static storage, never reused */
}

static void resolve(void)
{
	resolving = 1;
	real.malloc = dlsym(RTLD_NEXT, "malloc");
	real.calloc = dlsym(RTLD_NEXT, "calloc");
	real.realloc = dlsym(RTLD_NEXT, "realloc");
	real.free = dlsym(RTLD_NEXT, "free");
	real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real.memalign = dlsym(RTLD_NEXT, "memalign");
	real.usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	resolving = 0;
}

static bool ready(void)
{
	if (!real.usable && !resolving)
		resolve();
	return real.usable != NULL;
}

/* Count a new block of @size bytes (asked) at @p; refuse it over the budget. */
static void *admit(struct rspd_membudget *b, void *p)
{
	size_t got;

	if (!b || !p)
		return p;
	got = real.usable(p);
	if (rspd_membudget__charge(b, got))
		return p;
	real.free(p);
	errno = ENOMEM;
	return NULL;
}

void *malloc(size_t size)
{
	if (!ready())
		return early_alloc(size);
	return admit(rspd_membudget__current(), real.malloc(size));
}

void *calloc(size_t n, size_t size)
{
	if (!ready())
		return n && size > SIZE_MAX / n ? NULL : early_alloc(n * size);
	return admit(rspd_membudget__current(), real.calloc(n, size));
}

void free(void *p)
{
	struct rspd_membudget *b;

	if (!p || is_early(p))
		return;
	b = rspd_membudget__current();
	if (b)
		rspd_membudget__adjust(b, -(int64_t)real.usable(p));
	real.free(p);
}

/* An early block moves to the real allocator on its first realloc. */
static void *realloc_early(void *p, size_t size)
{
	void *q = malloc(size);
	size_t avail = (size_t)(early + sizeof(early) - (unsigned char *)p);

	if (q)
		memcpy(q, p, size < avail ? size : avail);
	return q;
}

void *realloc(void *p, size_t size)
{
	struct rspd_membudget *b;
	size_t old;
	void *q;

	if (!ready() || !p || is_early(p))
		return p ? realloc_early(p, size) : malloc(size);
	b = rspd_membudget__current();
	old = real.usable(p);
	/* Checked before: a refused realloc must leave the old block as it was. */
	if (b && size > old && !rspd_membudget__charge(b, size - old)) {
		errno = ENOMEM;
		return NULL;
	}
	q = real.realloc(p, size);
	if (b) {
		int64_t asked = size > old ? (int64_t)(size - old) : 0;

		/* Undo the check's charge; count what really changed (a 0-size realloc frees). */
		rspd_membudget__adjust(b, -asked);
		if (q)
			rspd_membudget__adjust(b, (int64_t)real.usable(q) - (int64_t)old);
		else if (!size)
			rspd_membudget__adjust(b, -(int64_t)old);
	}
	return q;
}

int posix_memalign(void **out, size_t align, size_t size)
{
	int ret;

	if (!ready())
		return ENOMEM;
	ret = real.posix_memalign(out, align, size);
	if (!ret && !admit(rspd_membudget__current(), *out))
		ret = ENOMEM;
	return ret;
}

void *aligned_alloc(size_t align, size_t size)
{
	if (!ready())
		return NULL;
	return admit(rspd_membudget__current(), real.aligned_alloc(align, size));
}

void *memalign(size_t align, size_t size)
{
	if (!ready())
		return NULL;
	return admit(rspd_membudget__current(), real.memalign(align, size));
}
