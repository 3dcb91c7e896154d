/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_HASH_H
#define RSP_INTERNAL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/stackhash.h>

/*
 * The one hash of librsp, in two forms:
 *   rsp_hash__mix()    a 64-bit key to a well-spread 64-bit value (the
 *                      finaliser of MurmurHash3), for integer keys and
 *                      for combining hashes;
 *   rsp_hash__bytes()  FNV-1a over bytes, chained from RSP_HASH_INIT (or a
 *                      previous result), for strings and structs;
 *   rsp_hash__stack()  FNV-1a's step a word at a time in four chains,
 *                      mixed, for stacks (below).
 * None is a defence against chosen keys: every table that holds keys
 * from outside (dumps, queries) is bounded in size instead.
 */
#define RSP_HASH_INIT 0xcbf29ce484222325ull

static inline uint64_t rsp_hash__mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static inline uint64_t rsp_hash__bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/** rsp_hash__u64() - chain one 64-bit word into @h (FNV-1a's step, a word at a time). */
static inline uint64_t rsp_hash__u64(uint64_t h, uint64_t w)
{
	return (h ^ w) * 0x100000001b3ull;
}

/*
 * rsp_hash__stack() - @n words (a stack's addresses) to one hash, for
 * telling stacks apart in memory (never stored): four chains of
 * rsp_hash__u64() over words 0, 4, 8..., 1, 5, 9..., and so on (the words
 * past the last four on the first), seeded apart, then each mixed into the
 * next with rsp_hash__mix() and the length. One chain (what it was)
 * waits at each step for the multiply before it (4 cycles a word), and
 * the wait-for graph hashes two stacks per sleep (a pgbench dump: 40% of
 * the graph's construction waited on that chain); four chains overlap.
 * The classifier's memo and the snapshot hash stacks with it too.
 * rsp_hash__stack_user() also sets @user when a word is PERF_CONTEXT_USER
 * (for rsp_hash__stack32(): compares of the words already loaded, which
 * rsp_hash__stack() drops as unused).
 */
static inline uint64_t rsp_hash__stack_user(const uint64_t *w, size_t n, uint64_t *user)
{
	uint64_t h0 = RSP_HASH_INIT, h1 = RSP_HASH_INIT ^ 1, h2 = RSP_HASH_INIT ^ 2,
		 h3 = RSP_HASH_INIT ^ 3, u = 0;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		h0 = rsp_hash__u64(h0, w[i]);
		h1 = rsp_hash__u64(h1, w[i + 1]);
		h2 = rsp_hash__u64(h2, w[i + 2]);
		h3 = rsp_hash__u64(h3, w[i + 3]);
		u |= (uint64_t)(w[i] == PERF_CONTEXT_USER) | (w[i + 1] == PERF_CONTEXT_USER) |
		     (w[i + 2] == PERF_CONTEXT_USER) | (w[i + 3] == PERF_CONTEXT_USER);
	}
	for (; i < n; i++) {
		h0 = rsp_hash__u64(h0, w[i]);
		u |= w[i] == PERF_CONTEXT_USER;
	}
	*user = u;
	return rsp_hash__mix(h0 ^ rsp_hash__mix(h1 ^ rsp_hash__mix(h2 ^ rsp_hash__mix(h3 ^ n))));
}

static inline uint64_t rsp_hash__stack(const uint64_t *w, size_t n)
{
	uint64_t unused;

	return rsp_hash__stack_user(w, n, &unused);
}

/*
 * rsp_hash__stack32() - a callchain's hash as rsp_segment.stack_hash
 * holds it: rsp_hash__stack() in 32 bits, never 0 (0: not computed), its
 * low bit RSP_STACK_HASH_USER: the chain has a user part (a
 * PERF_CONTEXT_USER marker before its last entry), which its readers then
 * know without reading the chain where it lies.
 */
static inline uint32_t rsp_hash__stack32(const uint64_t *w, size_t n)
{
	uint64_t user, h = rsp_hash__stack_user(w, n, &user);
	uint32_t x = (uint32_t)(h ^ h >> 32) & ~RSP_STACK_HASH_USER;

	if (user && w[n - 1] == PERF_CONTEXT_USER) { /* a marker last: none before it? */
		user = 0;
		for (size_t i = 0; i + 1 < n; i++)
			user |= w[i] == PERF_CONTEXT_USER;
	}
	x |= user ? RSP_STACK_HASH_USER : 0;
	return x ? x : 2;
}

/*
 * rsp_hash__key() - a hash as a key of struct rsp_u64map, which reserves
 * UINT64_MAX: that value is folded to 0.
 */
static inline uint64_t rsp_hash__key(uint64_t h)
{
	return h == UINT64_MAX ? 0 : h;
}

#endif /* RSP_INTERNAL_HASH_H */
