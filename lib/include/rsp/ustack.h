/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_USTACK_H
#define RSP_USTACK_H

#include <stddef.h>
#include <linux/perf_event.h>
#include <rsp/api.h>

struct rsp_schema;

/**
 * rsp_ustack__trim() - a sample with its user stack copy cut to what the
 * kernel copied
 * @s:   the stream's schema: the sample's evsel (found by its id) gives
 *       sample_type, sample_regs_user, read_format, branch_sample_type
 * @rec: a PERF_RECORD_SAMPLE; its header.size bytes must be readable
 * @out: where the trimmed record is written (8-byte aligned)
 * @cap: bytes at @out; @rec's size is always enough
 *
 * PERF_SAMPLE_STACK_USER is "u64 size; char data[size]; u64 dyn_size": the
 * kernel reserves the whole size it was asked for (--dwarf-stack) and
 * copies dyn_size bytes of it, up to the first unmapped page above the
 * stack pointer; the rest is junk. The record written to @out is @rec with
 * size := dyn_size rounded up to 8, data cut to it, dyn_size kept, every
 * field after STACK_USER copied after it and header.size updated. A
 * dyn_size of 0 becomes the kernel's own empty stack: size 0, with neither
 * data nor dyn_size (perf's evsel__parse_sample() reads dyn_size only when
 * size is not 0). perf and rsp read only dyn_size bytes of a stack, so the
 * trimmed record unwinds as the original did.
 *
 * Return: the trimmed record's size in bytes (written to @out); 0 if @rec
 * needs no trim (its event has no STACK_USER, its stack is empty, or
 * dyn_size rounded up is already size: store @rec itself); -EINVAL if @rec
 * is malformed (a length runs past its end, dyn_size > size); -ENOENT if
 * its id is not in @s; -ENOSPC if @cap is too small. Nothing is read past
 * @rec's size, nothing written to @out unless the return is positive.
 */
RSP_API int rsp_ustack__trim(const struct rsp_schema *s, const struct perf_event_header *rec,
			     void *out, size_t cap);

#endif /* RSP_USTACK_H */
