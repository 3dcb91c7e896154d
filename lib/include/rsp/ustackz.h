/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_USTACKZ_H
#define RSP_USTACKZ_H

/*
 * User stacks compressed in the window (issue 12: window density).
 *
 * A sample with PERF_SAMPLE_STACK_USER (rspd --dwarf: cpu-clock samples and
 * uprobes) carries the top --dwarf-stack bytes of the thread's user stack,
 * 8 KiB by default, whatever part of it the kernel could copy (dyn_size):
 * under 1% of a busy server's records, yet a quarter to two thirds of the
 * window's bytes. rspd stores such a sample as an RSP_RECORD_ZSAMPLE: the
 * sample as the kernel wrote it up to its stack, the dyn_size bytes of the
 * stack compressed with zstd (level -1: ~4x on real stacks, ~16 µs per
 * sample), then the rest of the sample. Its layout is a sample's, so the
 * record interpreter reads it as one (rsp_record__parse_sample(), which
 * sets rsp_sample.user_stack_z); the stack is inflated only where it is
 * read, by the unwinder (rsp_ustackz__inflate()). A ZSAMPLE never leaves
 * rsp: the dump writer writes it back as the PERF_RECORD_SAMPLE it stands
 * for (rsp_ustackz__expand()), its stack cut to dyn_size.
 *
 * ZSAMPLE: perf_event_header {type RSP_RECORD_ZSAMPLE, misc and the fields
 * of the sample}, then at the stack: u64 size = 8 + zsize rounded up to 8;
 * {u32 zsize; u32 0; zsize bytes of one zstd frame; zero padding}; u64
 * dyn_size (the stack's bytes, what the frame inflates to); the fields
 * after the stack.
 */
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>
#include <rsp/record.h>
#include <rsp/schema.h>

struct rsp_ustackz;

/** rsp_ustackz__new() - the compressor's and decompressor's state; NULL on ENOMEM. */
RSP_API struct rsp_ustackz *rsp_ustackz__new(void);
/** rsp_ustackz__delete() - free it; NULL is fine. */
RSP_API void rsp_ustackz__delete(struct rsp_ustackz *z);

/**
 * rsp_ustackz__pack() - @rec as a ZSAMPLE, into @out
 * @s:   the stream's schema (@rec's evsel has PERF_SAMPLE_STACK_USER)
 * @rec: a PERF_RECORD_SAMPLE, header.size bytes readable
 * @out: @cap bytes, 8-aligned
 *
 * Return: the ZSAMPLE's size; 0 when it would not be smaller than @rec, or
 * @rec has no user stack (store @rec as it is); -EINVAL for a record the
 * interpreter cannot decode (stored as it is too: counted where it is read);
 * -ENOSPC when @cap is too small; -ENOMEM.
 */
RSP_API int rsp_ustackz__pack(struct rsp_ustackz *z, const struct rsp_schema *s,
			      const struct perf_event_header *rec, void *out, size_t cap);

/**
 * rsp_ustackz__expand() - a ZSAMPLE as the PERF_RECORD_SAMPLE it stands for
 *
 * Its stack's size is dyn_size rounded up to 8 (zero padded), dyn_size
 * kept: what the kernel would have written with that much stack asked for,
 * and what perf reads; dyn_size 0 as the kernel's empty stack (size 0, no
 * dyn_size), as rsp_ustack__trim() cuts it. Return: its size; -EINVAL for a malformed ZSAMPLE
 * (a frame that does not inflate to dyn_size, lengths past the record);
 * -ENOSPC when @cap is too small.
 */
RSP_API int rsp_ustackz__expand(struct rsp_ustackz *z, const struct rsp_schema *s,
				const struct perf_event_header *rec, void *out, size_t cap);

/**
 * rsp_ustackz__inflate() - the user stack of a sample decoded from a ZSAMPLE
 * @smp: rsp_record__parse_sample()'s, with user_stack_z set
 * @buf: @cap bytes, at least smp->user_stack_size
 *
 * Return: 0 with smp->user_stack_size bytes in @buf; -EINVAL when the frame
 * does not inflate to exactly that many bytes; -ENOSPC.
 */
RSP_API int rsp_ustackz__inflate(struct rsp_ustackz *z, const struct rsp_sample *smp, void *buf,
				 size_t cap);

#endif /* RSP_USTACKZ_H */
