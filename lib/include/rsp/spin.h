/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SPIN_H
#define RSP_SPIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/symbols.h>

/*
 * Busy waiting told from cpu-clock samples, without annotations (wPerf's
 * spin annotations, inferred; issue 36): a thread spinning on a lock runs,
 * to the kernel, but does no work. A sample is spinning when it lies in a
 * known spin loop: a small table of function names (glibc's, as Debian
 * 12's libc.so.6 names them) that the user extends (--spin-symbol NAME).
 *
 * Which frames count (rsp_spin__sample()): the sampled function itself
 * (the leaf, user or kernel), and the first RSP_SPIN_USER_FRAMES frames of
 * the user stack. The leaf catches a spin loop that calls nothing
 * (pthread_spin_lock's pause loop); the user frames catch a loop that
 * spins through a system call (sched_yield: the sample's leaf is the
 * kernel's scheduler, varying, while its first user frame is the libc
 * wrapper; of a sample taken in the kernel the user frames are looked at
 * only when its kernel frames are sched_yield's) and a user's spin
 * function that calls a small helper (a
 * backoff, a cpu_relax() not inlined). Not deeper: a frame further up is a
 * caller *of* a lock, whose other work is no spinning, and user stacks
 * walked by frame pointers through libc (built without them) are
 * reliable only at their first frame or two.
 */
#define RSP_SPIN_USER_FRAMES 3
#define RSP_SPIN_MAX_EXTRA   32	 /* --spin-symbol given at most this often */
#define RSP_SPIN_NAME_MAX    255 /* bytes of one name */

/* The table: the defaults and @extra (the caller's, kept alive while used). */
struct rsp_spin {
	const char *const *extra;
	size_t nr_extra;
};

/** rsp_spin__default_at() - the @i-th name of the built-in table; NULL past its end. */
RSP_API const char *rsp_spin__default_at(size_t i);

/**
 * rsp_spin__match() - whether function @name is a spin loop of @sp
 *
 * Return: the table's string for it (static, or one of @sp->extra), or
 * NULL (also for a NULL @name).
 */
RSP_API const char *rsp_spin__match(const struct rsp_spin *sp, const char *name);

/**
 * rsp_spin__sample() - the spin loop a cpu-clock sample lies in, by the
 * rule above
 * @sym:   names the addresses (required)
 * @flags: rsp_symbolizer__resolve()'s RSP_SYM_HIDE_* for the requester
 *         (hidden frames have no name: never spinning)
 * @chain: the sample's callchain with its PERF_CONTEXT_* markers, or NULL
 *
 * Return: as rsp_spin__match(), for the first frame that matches.
 */
RSP_API const char *rsp_spin__sample(const struct rsp_spin *sp, struct rsp_symbolizer *sym,
				     unsigned flags, uint32_t pid, uint64_t time, uint64_t ip,
				     const uint64_t *chain, uint32_t nr_chain);

/**
 * rsp_spin__user() - the same for the user frames of @chain alone, for a
 * caller that has matched the sampled function's name already (top).
 */
RSP_API const char *rsp_spin__user(const struct rsp_spin *sp, struct rsp_symbolizer *sym,
				   unsigned flags, uint32_t pid, uint64_t time, uint64_t ip,
				   const uint64_t *chain, uint32_t nr_chain);

#endif /* RSP_SPIN_H */
