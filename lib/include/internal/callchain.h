/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_CALLCHAIN_H
#define RSP_INTERNAL_CALLCHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

/*
 * Walking a perf callchain (PERF_SAMPLE_CALLCHAIN): addresses interleaved
 * with PERF_CONTEXT_* markers (values >= PERF_CONTEXT_MAX) that say whose
 * frames follow: the kernel's, the user's (or a guest's). The first
 * address after a marker is where the sample was taken (an ip); the others
 * are return addresses, which lie after their call: look them up at
 * address - 1 (rsp_chain_frame.lookup).
 *
 *	struct rsp_chain_iter it;
 *	struct rsp_chain_frame f;
 *
 *	rsp_chain__init(&it, chain, nr);
 *	while (rsp_chain__next(&it, &f))
 *		if (f.ctx == RSP_CHAIN_KERNEL) ...
 *
 * Frames before the first marker are of no known context (RSP_CHAIN_NONE;
 * what the kernel writes always starts with a marker).
 */
enum rsp_chain_ctx {
	RSP_CHAIN_NONE,
	RSP_CHAIN_KERNEL,
	RSP_CHAIN_USER,
	RSP_CHAIN_OTHER, /* guest and unknown contexts */
};

struct rsp_chain_frame {
	uint64_t addr;	 /* as recorded */
	uint64_t lookup; /* where its function is: addr for the first frame, else addr - 1 */
	uint32_t index;	 /* its position in the chain (markers counted) */
	uint8_t ctx;	 /* enum rsp_chain_ctx */
	bool first;	 /* the first frame of its context (an ip, not a return address) */
};

struct rsp_chain_iter {
	const uint64_t *chain;
	uint64_t nr, i;
	uint8_t ctx;
	bool first;
};

static inline void rsp_chain__init(struct rsp_chain_iter *it, const uint64_t *chain, uint64_t nr)
{
	it->chain = chain;
	it->nr = chain ? nr : 0;
	it->i = 0;
	it->ctx = RSP_CHAIN_NONE;
	it->first = true;
}

/** rsp_chain__is_marker() - @a is a PERF_CONTEXT_* marker, not an address. */
static inline bool rsp_chain__is_marker(uint64_t a)
{
	return a >= (uint64_t)PERF_CONTEXT_MAX;
}

/** rsp_chain__next() - the next address of the chain, markers skipped; false at its end. */
static inline bool rsp_chain__next(struct rsp_chain_iter *it, struct rsp_chain_frame *f)
{
	for (; it->i < it->nr; it->i++) {
		uint64_t a = it->chain[it->i];

		if (rsp_chain__is_marker(a)) {
			it->ctx = a == (uint64_t)PERF_CONTEXT_KERNEL ? RSP_CHAIN_KERNEL
				  : a == (uint64_t)PERF_CONTEXT_USER ? RSP_CHAIN_USER
								     : RSP_CHAIN_OTHER;
			it->first = true;
			continue;
		}
		f->addr = a;
		f->lookup = it->first ? a : a - 1;
		f->index = (uint32_t)it->i++;
		f->ctx = it->ctx;
		f->first = it->first;
		it->first = false;
		return true;
	}
	return false;
}

/** rsp_chain__user_mark() - index of the PERF_CONTEXT_USER marker in @chain, or @nr. */
static inline uint64_t rsp_chain__user_mark(const uint64_t *chain, uint64_t nr)
{
	for (uint64_t i = 0; i < nr; i++)
		if (chain[i] == (uint64_t)PERF_CONTEXT_USER)
			return i;
	return nr;
}

#endif /* RSP_INTERNAL_CALLCHAIN_H */
