/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TESTS_FAILALLOC_H
#define RSP_TESTS_FAILALLOC_H

/*
 * Allocation-failure injection, as SQLite's tests do it: fail the Nth
 * allocation after arming, for N = 1, 2, ... until the operation completes
 * without reaching it, and check that every run fails cleanly (an error,
 * or the documented counted loss), crashes nothing and leaks nothing (the
 * ASan build's leak check).
 *
 * A link-time wrapper: a test linked with
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
 * (tests/CMakeLists.txt, RSP_FAILALLOC_TESTS) has every call to those in
 * its own objects and in librsp's static archive go through here, and so
 * do jansson's while a query runs (librsp hands jansson its own malloc:
 * internal/json.h). Allocations inside other shared libraries (libc's own,
 * libtraceevent's) are not counted. Not thread-safe: arm it around single-threaded code.
 *
 * FAILALLOC_TRACE=1 in the environment prints the stack of each failed
 * allocation (addresses: resolve them with addr2line -e TEST).
 */
#include <stdbool.h>

/**
 * failalloc__arm() - fail the @nth allocation from now (1 is the next one),
 * and only that one: what the code does after a failure (its cleanup) is
 * not failed again. @nth 0 disarms.
 */
void failalloc__arm(unsigned long nth);
/** failalloc__disarm() - stop failing; allocations pass through. */
void failalloc__disarm(void);
/** failalloc__failed() - whether the armed failure happened since arming. */
bool failalloc__failed(void);
/** failalloc__count() - allocations made since arming (the failed one included). */
unsigned long failalloc__count(void);

/**
 * failalloc__each() - fail each allocation of an operation in turn
 * @op:  runs the operation once: does its setup, calls failalloc__arm(@nth)
 *       right before the operation, failalloc__disarm() right after it,
 *       then checks the outcome (given failalloc__failed()) and cleans up
 * @max: a bound on the runs
 *
 * Calls @op with @nth = 1, 2, ... until a run does not reach its nth
 * allocation (the operation then ran to completion, nothing failed).
 * Return: the runs made, or 0 if @max runs all reached their failure.
 */
unsigned long failalloc__each(void (*op)(void *ctx, unsigned long nth), void *ctx,
			      unsigned long max);

#endif
