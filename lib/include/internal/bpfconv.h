/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_BPFCONV_H
#define RSP_INTERNAL_BPFCONV_H

/*
 * rspd's compact BPF records (tracepoints/bpf_records.h) written back as the
 * kernel's tracepoint samples, for a perf.data file that perf's tools read
 * as they read perf record's: each record becomes a sample of its
 * tracepoint with the raw layout this kernel's format gives (from the
 * schema), the names the COMM records carried in its comm fields, and the
 * stacks the STACK records carried as its callchain.
 *
 * The converter learns names and stacks from the side records it is shown
 * (in stream order, also those before the range written), and turns each
 * other record into a sample.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct rsp_schema;
struct rsp_bpfconv;

/* The ids of the tracepoint evsels a writer adds for converted records. */
#define RSP_BPFCONV_ID_BASE 0x5253000000000000ull

struct rsp_bpfconv_stats {
	uint64_t converted;
	uint64_t unnamed;	 /* comm fields left empty: the thread's COMM was not seen */
	uint64_t stacks_missing; /* stack hashes whose STACK record was not seen */
};

struct rsp_bpfconv *rsp_bpfconv__new(const struct rsp_schema *s);
void rsp_bpfconv__delete(struct rsp_bpfconv *c);

/** rsp_bpfconv__event() - @ev can be written as its tracepoint's samples. */
bool rsp_bpfconv__event(const struct rsp_bpfconv *c, int ev);

/**
 * rsp_bpfconv__attr() - the perf_event_attr of @ev's converted samples
 * (rsp's layout, with a callchain and the raw data), @like's clock and
 * flags.
 */
void rsp_bpfconv__attr(const struct rsp_bpfconv *c, int ev, const struct perf_event_attr *like,
		       struct perf_event_attr *a);

/**
 * rsp_bpfconv__learn() - take what a side record carries (a COMM, a STACK).
 * Return: 1 if @rec was one (it is not written), 0 if not, -ENOMEM.
 */
int rsp_bpfconv__learn(struct rsp_bpfconv *c, const struct perf_event_header *rec);

/**
 * rsp_bpfconv__sample() - @rec as its tracepoint's sample with id @id
 * @buf:  at least @cap bytes, 8-byte aligned
 * @ev:   set to the event
 * Return: the sample's size, -ENOENT (an event not converted), -EINVAL
 * (malformed), -E2BIG (it does not fit a record).
 */
int rsp_bpfconv__sample(struct rsp_bpfconv *c, const struct perf_event_header *rec, uint64_t id,
			void *buf, size_t cap, int *ev);

void rsp_bpfconv__stats(const struct rsp_bpfconv *c, struct rsp_bpfconv_stats *st);

#endif /* RSP_INTERNAL_BPFCONV_H */
