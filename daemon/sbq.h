/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_SBQ_H
#define RSPD_SBQ_H

/*
 * The side-band queue: the drain (capture thread) copies every record that
 * is not a sample -- COMM, MMAP2, FORK, EXIT, LOST -- into it as it copies
 * it into the window, and the process model's thread takes them from it.
 * They are a tiny fraction of the stream, so the model no longer has to
 * walk the whole window to find them.
 *
 * One producer, one consumer, no lock: the producer never waits. When the
 * queue is full the record is dropped and counted; the consumer then knows
 * its model missed something (and reads /proc again). Entries are in drain
 * order (ring by ring), not in time order across CPUs: the consumer sorts.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct rsp_sbq {
	unsigned char *buf;
	size_t size;	       /* a power of two */
	_Atomic uint64_t head; /* written by the producer */
	_Atomic uint64_t tail; /* written by the consumer */
	_Atomic uint64_t dropped;
};

/** rsp_sbq__init() - a queue of @size bytes (rounded up to a power of two). */
int rsp_sbq__init(struct rsp_sbq *q, size_t size);
void rsp_sbq__exit(struct rsp_sbq *q);

/** rsp_sbq__push() - producer: copy @rec with its @time. 0, or -ENOSPC (counted). */
int rsp_sbq__push(struct rsp_sbq *q, uint64_t time, const struct perf_event_header *rec);

/**
 * rsp_sbq__pop() - consumer: call @fn for every queued record, oldest
 * pushed first, then free their space. @rec is valid only during the call.
 * Return: the number of records.
 */
size_t rsp_sbq__pop(struct rsp_sbq *q,
		    void (*fn)(void *ctx, uint64_t time, const struct perf_event_header *rec),
		    void *ctx);

#endif
