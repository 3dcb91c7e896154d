/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_MEMBUDGET_H
#define RSPD_MEMBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The memory budget of one query (--query-memory): the heap bytes a query
 * thread holds, counted by rspd's allocator (daemon/malloc.c) on the thread
 * that allocates, from rspd_membudget__begin() to rspd_membudget__end().
 *
 * Why count every allocation of the thread rather than have the big
 * consumers (the timeline store, the wait-for graph, the snapshot, the
 * symbol and unwind caches) charge a budget before they grow: librsp
 * allocates in a few hundred places with plain malloc, and so do the
 * libraries a query calls (jansson for JSON answers, libelf for symbol
 * tables, libunwind); a budget the big consumers charge would leave the
 * rest uncounted, and the bound would hold only as long as nobody adds an
 * uncounted vector. Counting at malloc bounds them all, with no change in
 * lib/: an allocation over the budget fails like any other, and librsp
 * already turns a failed allocation into an error answer (rsp_buf's error,
 * jansson's failures, -ENOMEM from the timeline). The budget remembers that
 * it refused one, so the server can name the option instead of saying
 * "out of memory".
 *
 * Counted: malloc_usable_size() of each block (what the allocator really
 * set aside, >= what was asked). A block freed on the thread is uncounted
 * whoever allocated it, so a query that frees what it did not allocate
 * (rare: the answer is freed by the I/O thread) gets that much more room;
 * what a query allocates and leaves to others (a cache entry, the answer)
 * stays counted until the query ends.
 */
struct rspd_membudget {
	uint64_t limit;	  /* bytes; 0: not counting */
	int64_t used;	  /* may go below 0: blocks allocated before, freed during */
	uint64_t peak;	  /* the most used at once */
	bool exceeded;	  /* an allocation was refused */
	uint64_t refused; /* the size of the first one refused */
};

/**
 * rspd_membudget__charge() - count @size more bytes, unless that would pass
 * the limit: then nothing is counted, the budget notes the refusal, and
 * the caller fails its allocation.
 * Return: true when counted.
 */
bool rspd_membudget__charge(struct rspd_membudget *b, size_t size);

/** rspd_membudget__adjust() - count @delta bytes more (or fewer), unchecked. */
void rspd_membudget__adjust(struct rspd_membudget *b, int64_t delta);

/**
 * rspd_membudget__begin() - count this thread's allocations against a new
 * budget of @limit bytes (0: count without a limit) until
 * rspd_membudget__end(). @b is the caller's and must outlive the count.
 */
void rspd_membudget__begin(struct rspd_membudget *b, uint64_t limit);

/** rspd_membudget__end() - stop counting this thread's allocations. */
void rspd_membudget__end(void);

/** rspd_membudget__current() - the budget this thread counts against, or NULL. */
struct rspd_membudget *rspd_membudget__current(void);

/*
 * rspd_membudget__mapped() - librsp's own mappings (rsp/mapped.h's hook):
 * counted against this thread's budget as its heap blocks are.
 */
bool rspd_membudget__mapped(int64_t delta);

#endif
