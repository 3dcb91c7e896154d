// SPDX-License-Identifier: LGPL-2.1
/* Growable arrays: see internal/vec.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal/vec.h"

#define FIRST_CAP 64

int rsp_vec__grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : FIRST_CAP;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (!size || c > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

void rsp_vec__sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp((char *)v + (i - 1) * size, (char *)v + i * size) > 0) {
			qsort(v, n, size, cmp);
			return;
		}
}

void rsp_kvec__init(struct rsp_kvec *kv, size_t size)
{
	memset(kv, 0, sizeof(*kv));
	rsp_u64map__init(&kv->map);
	kv->size = size;
}

void rsp_kvec__exit(struct rsp_kvec *kv)
{
	size_t size = kv->size;

	rsp_u64map__exit(&kv->map);
	free(kv->items);
	rsp_kvec__init(kv, size);
}

void *rsp_kvec__append(struct rsp_kvec *kv, uint64_t key)
{
	void *item;

	if (kv->n >= UINT32_MAX || rsp_vec__reserve(&kv->items, &kv->cap, kv->n + 1, kv->size) ||
	    rsp_u64map__put(&kv->map, key, (uint32_t)kv->n))
		return NULL;
	item = rsp_kvec__at(kv, kv->n++);
	memset(item, 0, kv->size);
	return item;
}

void *rsp_kvec__take(struct rsp_kvec *kv, size_t *n)
{
	void *items = kv->items;

	*n = kv->n;
	kv->items = NULL;
	kv->n = kv->cap = 0;
	rsp_u64map__exit(&kv->map);
	return items;
}
