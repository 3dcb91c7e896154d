/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_GALLOP_H
#define RSP_INTERNAL_GALLOP_H

#include <stddef.h>
#include <stdint.h>

/*
 * rsp_gallop__first_above() - in an array of @n elements @stride bytes
 * apart, whose uint64_t keys (@key points at the first element's) never
 * decrease, the first index whose key is > @t; @n if none.
 *
 * The search starts at @hint, an earlier answer (any value: past @n is
 * taken as @n): steps of 1, 2, 4... away from it in the direction of the
 * answer, then a binary search inside the last step (exponential search,
 * Bentley and Yao 1976). An answer d elements from the hint costs
 * O(log d) probes, all near the hint, instead of a binary search's
 * O(log n) probes spread over the whole array, each a cache miss on a long
 * array (the wait-for graph asks about nearby times, question after
 * question). The answer is the binary search's: the one index where the
 * keys cross @t.
 *
 * Hand-written: libc's bsearch() finds an equal key, not the first one
 * above, and starts from the middle.
 */
static inline uint64_t rsp_gallop__key(const void *key, size_t stride, size_t i)
{
	return *(const uint64_t *)(const void *)((const char *)key + i * stride);
}

/* The first index in [@lo, @hi) whose key is > @t, @hi if none: a binary search. */
static inline size_t rsp_gallop__bisect(const void *key, size_t stride, size_t lo, size_t hi,
					uint64_t t)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rsp_gallop__key(key, stride, mid) <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline size_t rsp_gallop__first_above(const void *key, size_t stride, size_t n, size_t hint,
					     uint64_t t)
{
	size_t lo, hi, step = 1;

	if (hint > n)
		hint = n;
	if (hint == 0 || rsp_gallop__key(key, stride, hint - 1) <= t) {
		/* the answer is at or after the hint: keys before lo are <= t */
		lo = hi = hint;
		while (hi < n && rsp_gallop__key(key, stride, hi) <= t) {
			lo = hi + 1;
			hi = step < n - hi ? hi + step : n;
			step <<= 1;
		}
	} else {
		/* before it: the key at hi is > t */
		lo = hi = hint - 1;
		while (lo > 0 && rsp_gallop__key(key, stride, lo - 1) > t) {
			hi = lo - 1;
			lo = step < hi ? hi - step : 0;
			step <<= 1;
		}
	}
	/* the answer is in [lo, hi]: hi == n or its key is > t */
	return rsp_gallop__bisect(key, stride, lo, hi, t);
}

/*
 * rsp_gallop__above() - the same answer for a question with no earlier one
 * nearby: the first index whose key is > @t (@n if none), by a binary
 * search over elements @stride bytes apart from @base, their keys @off
 * bytes into each. rsp's one hand-written binary search (libc's bsearch()
 * finds an equal key); callers ask "the last at or below" as the answer
 * minus one, and "the first at or above @t" as the answer for @t - 1.
 */
static inline size_t rsp_gallop__above(const void *base, size_t stride, size_t off, size_t n,
				       uint64_t t)
{
	return n ? rsp_gallop__bisect((const char *)base + off, stride, 0, n, t) : 0;
}

/* rsp_gallop__at_or_above() - the first index whose key is >= @t (@n if none). */
static inline size_t rsp_gallop__at_or_above(const void *base, size_t stride, size_t off, size_t n,
					     uint64_t t)
{
	return t ? rsp_gallop__above(base, stride, off, n, t - 1) : 0;
}

#endif /* RSP_INTERNAL_GALLOP_H */
