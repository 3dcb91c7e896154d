/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_U64MAP_H
#define RSP_INTERNAL_U64MAP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A map from u64 keys to u32 values (typically indexes into an array the
 * caller owns): open addressing, linear probing, power-of-two capacity.
 * Not thread-safe. Key UINT64_MAX is reserved.
 */
struct rsp_u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap;
	size_t count;
};

void rsp_u64map__init(struct rsp_u64map *m);
void rsp_u64map__exit(struct rsp_u64map *m);
/** Make room for @n keys, so that puts up to that count never allocate. 0 or -ENOMEM. */
int rsp_u64map__reserve(struct rsp_u64map *m, size_t n);
#define RSP_U64MAP_EMPTY UINT64_MAX

/* The home slot of @key in a table of @cap (a power of two) entries. */
static inline size_t rsp_u64map__slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/*
 * Find @key; 0 and *val, or -ENOENT. Inline: the timeline, the store and
 * the analyses look threads up by tid several times per record, and the
 * call cost as much as the probe.
 */
static inline int rsp_u64map__get(const struct rsp_u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return -ENOENT;
	for (size_t i = rsp_u64map__slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 0;
		}
		if (m->keys[i] == RSP_U64MAP_EMPTY)
			return -ENOENT;
	}
}
/** Insert or replace. 0 or -ENOMEM/-EINVAL. */
int rsp_u64map__put(struct rsp_u64map *m, uint64_t key, uint32_t val);
/** Remove @key if present (backward-shift deletion keeps probing correct). */
void rsp_u64map__del(struct rsp_u64map *m, uint64_t key);

#endif
