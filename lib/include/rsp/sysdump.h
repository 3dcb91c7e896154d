/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SYSDUMP_H
#define RSP_SYSDUMP_H

/*
 * Syscall profiles in a dump. The `syscall` family is aggregated in the
 * kernel: a dump has no record of each call, so rspd writes the profiles
 * themselves, per time slice of its profile store, into a feature section
 * of the perf.data file that only rsp reads (RSP_PD_FEAT_RSP_SYSCALLS;
 * perf skips feature bits it does not know). `rspctl analyze DUMP hist`
 * adds them back into the file's store at the same slices, so a range
 * asked of the file gets the answer rspd gave live.
 *
 * Section layout (native byte order, as the rest of perf.data):
 *   header  char magic[8] "RSPSYSC1", u32 version (1), u32 resolution (1|2),
 *           u64 slice_ns, u64 nr_entries
 *   entry   u64 time (slice start), u32 tgid, u32 tid (0, 0: the system
 *           only), u32 nr (syscall number), u32 nb, char comm[16],
 *           u64 count, sum, min, max, offcpu, f64 sumsq,
 *           then nb { u32 bucket, u32 zero, u64 n }, buckets ascending
 * Per slice: an entry per (thread, syscall) the store kept, and one for
 * the system (tgid 0) with what no thread entry holds (threads past the
 * store's caps, or past --syscall-keys), so the system profile is exact.
 */
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/hist.h>

#define RSP_SYSDUMP_MAGIC "RSPSYSC1"

/**
 * rsp_sysdump__write() - the syscall profiles of @st's slices in [@from, @to]
 * @out: the section is appended here (nothing when the store has none)
 * @entries: if not NULL, set to the number of entries written
 * Return: 0 or -ENOMEM.
 */
RSP_API int rsp_sysdump__write(struct rsp_hist_store *st, uint64_t from, uint64_t to,
			       struct rsp_buf *out, uint64_t *entries);

/**
 * rsp_sysdump__load() - add a section's profiles to @st
 * @buf, @len: the section (untrusted: every field is checked before
 *             anything is added, so a corrupt section adds nothing)
 * @base: its offset in the file, for messages
 * @entries: if not NULL, set to the number of entries added
 * Return: 0, or -EINVAL with one sentence in @err naming the offset and
 * what was wrong, or -ENOSPC (the store's op table is full).
 */
RSP_API int rsp_sysdump__load(const void *buf, size_t len, uint64_t base, struct rsp_hist_store *st,
			      uint64_t *entries, struct rsp_buf *err);

#endif /* RSP_SYSDUMP_H */
