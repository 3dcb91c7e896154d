/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_VEC_H
#define RSP_INTERNAL_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "internal/u64map.h"

/*
 * Growable arrays, the two shapes librsp keeps things in.
 *
 * rsp_vec__reserve() grows any array (a pointer, its capacity in items) to
 * hold @need items: the one growth policy (double, from 64, overflow
 * checked) instead of a helper per file.
 *
 *	if (rsp_vec__reserve((void **)&v, &cap, n + 1, sizeof(*v)))
 *		return -ENOMEM;
 *	v[n++] = x;
 *
 * struct rsp_kvec is a vector of fixed-size items found by a 64-bit key
 * (a tid, a pid, a hash, an address): "find it, or append a zeroed one",
 * which rsp needs for every per-thread, per-process and per-stack table.
 * Items are addressed by index (stable) or pointer (valid until the next
 * append). Key UINT64_MAX is reserved (see struct rsp_u64map). Not
 * thread-safe.
 */

/* rsp_vec__reserve() when the array must grow (vec.c). */
int rsp_vec__grow(void **v, size_t *cap, size_t need, size_t size);

/**
 * rsp_vec__reserve() - make *@v hold at least @need items of @size bytes
 * @cap: its capacity in items, updated
 * Return: 0, or -ENOMEM (then *@v and *@cap are unchanged).
 * Inline when there is room (per record in the store and the graph).
 */
static inline int rsp_vec__reserve(void **v, size_t *cap, size_t need, size_t size)
{
	return need <= *cap ? 0 : rsp_vec__grow(v, cap, need, size);
}

/**
 * rsp_vec__sort() - qsort() @n items of @size bytes by @cmp, unless they are
 * in order already (one pass of @cmp): what the timeline yields in time
 * order (links, requests, spans) mostly is, and glibc's merge sort does
 * its n log n comparisons on a sorted array too (vec.c).
 */
void rsp_vec__sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

struct rsp_kvec {
	struct rsp_u64map map; /* key -> index */
	void *items;
	size_t n, cap;
	size_t size; /* of an item */
};

/** rsp_kvec__init() - an empty vector of @size-byte items. */
void rsp_kvec__init(struct rsp_kvec *kv, size_t size);
/** rsp_kvec__exit() - free it; safe on an initialised or zeroed vector. */
void rsp_kvec__exit(struct rsp_kvec *kv);

/** rsp_kvec__append() - a new zeroed item for @key (not there yet); NULL: ENOMEM. */
void *rsp_kvec__append(struct rsp_kvec *kv, uint64_t key);

/** rsp_kvec__at() - item @i (0 .. n-1). */
static inline void *rsp_kvec__at(const struct rsp_kvec *kv, size_t i)
{
	return (char *)kv->items + i * kv->size;
}

/** rsp_kvec__len() - how many items. */
static inline size_t rsp_kvec__len(const struct rsp_kvec *kv)
{
	return kv->n;
}

/* Inline: a lookup is on the per-record path of the store and the timeline. */

/** rsp_kvec__index() - the index of @key's item, or -1. */
static inline long rsp_kvec__index(const struct rsp_kvec *kv, uint64_t key)
{
	uint32_t idx;

	return rsp_u64map__get(&kv->map, key, &idx) ? -1 : (long)idx;
}

/** rsp_kvec__find() - the item of @key, or NULL. */
static inline void *rsp_kvec__find(const struct rsp_kvec *kv, uint64_t key)
{
	long i = rsp_kvec__index(kv, key);

	return i < 0 ? NULL : rsp_kvec__at(kv, (size_t)i);
}

/**
 * rsp_kvec__get() - the item of @key; appended, zeroed, if it is not there
 * @added: if not NULL, set to whether it was appended
 * Return: the item, or NULL (ENOMEM: nothing changed).
 */
static inline void *rsp_kvec__get(struct rsp_kvec *kv, uint64_t key, bool *added)
{
	void *item = rsp_kvec__find(kv, key);

	if (added)
		*added = !item;
	return item ? item : rsp_kvec__append(kv, key);
}

/**
 * rsp_kvec__take() - hand the items over: returns the array (the caller
 * frees it) with *@n items, and empties the vector (its map too).
 */
void *rsp_kvec__take(struct rsp_kvec *kv, size_t *n);

#endif /* RSP_INTERNAL_VEC_H */
