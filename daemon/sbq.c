// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sbq.h"

/* An entry: u64 time, then the record; a time of WRAP means "go to 0". */
#define WRAP UINT64_MAX

int rsp_sbq__init(struct rsp_sbq *q, size_t size)
{
	size_t n = 4096;

	while (n < size)
		n *= 2;
	q->buf = malloc(n);
	if (!q->buf)
		return -ENOMEM;
	q->size = n;
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	atomic_init(&q->dropped, 0);
	return 0;
}

void rsp_sbq__exit(struct rsp_sbq *q)
{
	free(q->buf);
	q->buf = NULL;
}

int rsp_sbq__push(struct rsp_sbq *q, uint64_t time, const struct perf_event_header *rec)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
	size_t need = 8 + rec->size, at = (size_t)(head & (q->size - 1));
	size_t pad = at + need > q->size ? q->size - at : 0;

	/* An entry never wraps: pad to the end (a WRAP marker) and start at 0. */
	if (need + pad > q->size - (size_t)(head - tail) || need > q->size / 2) {
		atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	if (pad) {
		uint64_t wrap = WRAP;

		memcpy(q->buf + at, &wrap, 8);
		head += pad;
		at = 0;
	}
	memcpy(q->buf + at, &time, 8);
	memcpy(q->buf + at + 8, rec, rec->size);
	atomic_store_explicit(&q->head, head + need, memory_order_release);
	return 0;
}

size_t rsp_sbq__pop(struct rsp_sbq *q,
		    void (*fn)(void *ctx, uint64_t time, const struct perf_event_header *rec),
		    void *ctx)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	size_t n = 0;

	while (tail < head) {
		size_t at = (size_t)(tail & (q->size - 1));
		const struct perf_event_header *rec;
		uint64_t time;

		memcpy(&time, q->buf + at, 8);
		if (time == WRAP) {
			tail += q->size - at;
			continue;
		}
		rec = (const void *)(q->buf + at + 8);
		fn(ctx, time, rec);
		tail += 8 + rec->size;
		n++;
	}
	atomic_store_explicit(&q->tail, tail, memory_order_release);
	return n;
}
