// SPDX-License-Identifier: LGPL-2.1
/*
 * A sample's user stack copy cut to the bytes the kernel copied
 * (PERF_SAMPLE_STACK_USER's dyn_size), for the window: with --dwarf-stack
 * 8K every cpu-clock sample reserves 8 KiB of stack whatever it copied.
 *
 * The sample is located by the record interpreter's own parser
 * (rsp_record__parse_sample(), every length checked against the record's
 * size), not by a second one: it gives the copied bytes (user_stack), so
 * the size word is the one before them and dyn_size the one after size
 * bytes of them. Only what follows dyn_size (WEIGHT .. REGS_INTR, and any
 * field the parser does not know) moves.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <rsp/record.h>
#include <rsp/ustack.h>
#include "internal/ustack.h"

int rsp_ustack__rewrite(const struct perf_event_header *rec, size_t data, uint64_t size,
			const void *stack, uint64_t avail, uint64_t dyn, void *out, size_t cap)
{
	/* [rec, size word) | keep | keep bytes | dyn_size (if keep) | tail */
	const uint8_t *after = (const uint8_t *)rec + data + size + 8;
	uint64_t keep = (dyn + 7) & ~7ull;
	size_t head = data - 8, tail = rec->size - (data + size + 8);
	size_t n = head + 8 + (keep ? keep + 8 : 0) + tail;
	struct perf_event_header hdr = *rec;
	uint8_t *o = out;

	if (n > UINT16_MAX)
		return -EINVAL;
	if (n > cap)
		return -ENOSPC;
	memcpy(o, rec, head);
	memcpy(o + head, &keep, 8);
	if (keep) {
		memmove(o + head + 8, stack, avail < keep ? avail : keep);
		if (avail < keep)
			memset(o + head + 8 + avail, 0, keep - avail);
		memcpy(o + head + 8 + keep, &dyn, 8);
	}
	memcpy(o + n - tail, after, tail);
	hdr.type = PERF_RECORD_SAMPLE;
	hdr.size = (uint16_t)n;
	memcpy(o, &hdr, sizeof(hdr));
	return (int)n;
}

int rsp_ustack__trim(const struct rsp_schema *s, const struct perf_event_header *rec, void *out,
		     size_t cap)
{
	const uint8_t *data;
	struct rsp_sample smp;
	uint64_t size, dyn;
	int err;

	if (rec->type != PERF_RECORD_SAMPLE)
		return 0;
	err = rsp_record__parse_sample(s, rec, &smp);
	if (err)
		return err;
	if (!smp.user_stack)
		return 0; /* no STACK_USER, or size 0 (a kernel thread) */
	data = smp.user_stack;
	memcpy(&size, data - 8, 8);
	memcpy(&dyn, data + size, 8); /* the parser took size bytes and dyn_size */
	if (dyn > size)
		return -EINVAL;
	if (((dyn + 7) & ~7ull) == size)
		return 0;
	return rsp_ustack__rewrite(rec, (size_t)(data - (const uint8_t *)rec), size, data, size,
				   dyn, out, cap);
}
