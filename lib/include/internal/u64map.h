/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_U64MAP_H
#define RSP_INTERNAL_U64MAP_H

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
/** Find @key; 0 and *val, or -ENOENT. */
int rsp_u64map__get(const struct rsp_u64map *m, uint64_t key, uint32_t *val);
/** Insert or replace. 0 or -ENOMEM/-EINVAL. */
int rsp_u64map__put(struct rsp_u64map *m, uint64_t key, uint32_t val);
/** Remove @key if present (backward-shift deletion keeps probing correct). */
void rsp_u64map__del(struct rsp_u64map *m, uint64_t key);

#endif
