// SPDX-License-Identifier: LGPL-2.1
#include <errno.h>
#include <stdlib.h>
#include "internal/u64map.h"

#define EMPTY RSP_U64MAP_EMPTY

static size_t slot(uint64_t key, size_t cap)
{
	return rsp_u64map__slot(key, cap);
}

void rsp_u64map__init(struct rsp_u64map *m)
{
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->count = 0;
}

void rsp_u64map__exit(struct rsp_u64map *m)
{
	free(m->keys);
	free(m->vals);
	rsp_u64map__init(m);
}

static int grow(struct rsp_u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		keys[i] = EMPTY;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (m->keys[i] == EMPTY)
			continue;
		for (j = slot(m->keys[i], cap); keys[j] != EMPTY; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int rsp_u64map__reserve(struct rsp_u64map *m, size_t n)
{
	while (n * 4 > m->cap * 3)
		if (grow(m))
			return -ENOMEM;
	return 0;
}

int rsp_u64map__put(struct rsp_u64map *m, uint64_t key, uint32_t val)
{
	size_t i;

	if (key == EMPTY)
		return -EINVAL;
	if ((m->count + 1) * 4 > m->cap * 3 && grow(m))
		return -ENOMEM;
	for (i = slot(key, m->cap); m->keys[i] != EMPTY; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
	return 0;
}

void rsp_u64map__del(struct rsp_u64map *m, uint64_t key)
{
	size_t i, j, k;

	if (!m->cap)
		return;
	for (i = slot(key, m->cap); m->keys[i] != key; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == EMPTY)
			return;
	/* Backward shift: move later entries of the probe run into the hole. */
	for (j = i;;) {
		m->keys[i] = EMPTY;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (m->keys[j] == EMPTY) {
				m->count--;
				return;
			}
			k = slot(m->keys[j], m->cap);
			/* Entry at j may move to i if its home k is not in (i, j]. */
			if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j)))
				break;
		}
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
}
