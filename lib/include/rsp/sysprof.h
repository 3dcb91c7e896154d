/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SYSPROF_H
#define RSP_SYSPROF_H

/*
 * Per-syscall latency profiles aggregated in the kernel (the `syscall`
 * family, bpf/syscalls.bpf.c): the merge of a key's per-CPU values, and the delta reader that turns
 * the kernel's cumulative counts into batches for the profile store (rsp_hist_shard__add_batch())
 * each time rspd reads the map.
 *
 * The kernel keeps, per (process, thread, syscall number) key and per CPU:
 * count, sum, off-CPU ns, a sum of squares in 16 ns units, min, max, the
 * thread's comm and 129 half-octave buckets in 32 bits (a reader takes
 * differences modulo 2^32, so a bucket may wrap between two reads as long
 * as it gains fewer than 2^32 calls in between).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/hist.h>
#include <rsp/syscall.h> /* their names */

#define RSP_SYSPROF_NR_BUCKETS 129	   /* RSP_HIST_NR_BUCKETS(2) */
#define RSP_SYSPROF_OTHER_ID   0xffffffffu /* tid of the per-number overflow profiles */

/* One key's values, summed over CPUs (cumulative since the key was made). */
struct rsp_sysprof_sum {
	uint32_t tgid, tid, nr;
	uint64_t count, sum, offcpu, sq, min, max;
	char comm[RSP_HIST_COMM_LEN];
	uint32_t b[RSP_SYSPROF_NR_BUCKETS]; /* modulo 2^32 */
};

/**
 * rsp_sysprof__merge_cpus() - sum a key's per-CPU values
 * @percpu: @nr_cpus values (struct rsp_sc_val of tracepoints/bpf_syscalls.h),
 *          @stride bytes apart, as bpf_map_lookup_elem() returns a per-CPU
 *          map's value
 * Counts and sums add, min and max are those of the CPUs that have calls,
 * the comm is that of the first CPU that has one. @out's ids are left as
 * they are.
 */
RSP_API void rsp_sysprof__merge_cpus(const void *percpu, unsigned nr_cpus, size_t stride,
				     struct rsp_sysprof_sum *out);

/* What a key gained since the last read: a batch at r=2. */
struct rsp_sysprof_delta {
	uint64_t count, sum, offcpu, min, max;
	double sumsq; /* ns^2 */
	uint64_t b[RSP_SYSPROF_NR_BUCKETS];
};

/**
 * rsp_sysprof_delta__batch() - @d as a batch at resolution @r (1: folded)
 * @buckets: room for RSP_HIST_NR_BUCKETS(@r); @bt points into it.
 */
RSP_API void rsp_sysprof_delta__batch(const struct rsp_sysprof_delta *d, unsigned r,
				      uint64_t *buckets, struct rsp_hist_batch *bt);

struct rsp_sysprof;

/**
 * rsp_sysprof__new() - a delta reader remembering at most @max_keys keys
 * Return: the reader (free with rsp_sysprof__delete()), or NULL with errno
 * EINVAL (@max_keys 0) or ENOMEM. Memory: ~600 bytes per key, allocated here.
 */
RSP_API struct rsp_sysprof *rsp_sysprof__new(unsigned max_keys);
/** rsp_sysprof__delete() - free the reader. NULL is fine. */
RSP_API void rsp_sysprof__delete(struct rsp_sysprof *sp);

/**
 * rsp_sysprof__delta() - what @cur gained since this key's last read
 *
 * The min and max of a delta are exact when the key's cumulative min or
 * max moved (a new extreme is in the delta); otherwise they are the bounds
 * of the delta's lowest and highest buckets, clamped to the cumulative
 * ones: within a bucket of the truth.
 * Return: 1 with @d filled, 0 when the key gained nothing, -ENOSPC when
 * the key is new and the reader holds @max_keys keys (the caller counts
 * it), -EINVAL when @cur's count went down (a key deleted and made again
 * without rsp_sysprof__forget()).
 */
RSP_API int rsp_sysprof__delta(struct rsp_sysprof *sp, const struct rsp_sysprof_sum *cur,
			       struct rsp_sysprof_delta *d);
/** rsp_sysprof__forget() - drop key (@tgid, @tid, @nr): its map entry was deleted. 0 or -ENOENT. */
RSP_API int rsp_sysprof__forget(struct rsp_sysprof *sp, uint32_t tgid, uint32_t tid, uint32_t nr);
/** rsp_sysprof__nr_keys() - keys remembered. */
RSP_API unsigned rsp_sysprof__nr_keys(const struct rsp_sysprof *sp);

#endif /* RSP_SYSPROF_H */
