/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps of the syscall-latency programs (bpf/syscalls.bpf.c), shared by
 * the BPF side (clang -target bpf, vmlinux.h) and rspd (daemon/syscalls.c)
 * and librsp (lib/analysis/sysprof.c), which reads them.
 *
 * One key per (thread, syscall number); its value is per CPU (a
 * BPF_MAP_TYPE_PERCPU_HASH): each CPU adds into its own copy, no atomic
 * instruction and no shared cache line (OSprof's per-CPU buckets), and the
 * reader sums the CPUs. Buckets are always kept at half octaves (r=2, the
 * hist family's layout, 129 buckets): an r=1 store folds them exactly.
 */
#ifndef RSP_BPF_SYSCALLS_H
#define RSP_BPF_SYSCALLS_H

#ifndef __VMLINUX_H__
#include <stdint.h>
typedef uint32_t rsp_sc_u32;
typedef uint64_t rsp_sc_u64;
#else
typedef __u32 rsp_sc_u32;
typedef __u64 rsp_sc_u64;
#endif

#define RSP_SC_NR_BUCKETS 129 /* RSP_HIST_NR_BUCKETS(2) */
#define RSP_SC_COMM_LEN	  16
/* Syscall numbers timed: below this (x86-64 has ~470; sc_other has one key each). */
#define RSP_SC_MAX_NR 1024
/* Latencies are squared in units of 16 ns (stddev), rounded: see syscalls.bpf.c. */
#define RSP_SC_SQ_SHIFT 4

struct rsp_sc_key {
	rsp_sc_u32 tgid, tid;
	rsp_sc_u32 nr; /* syscall number (this architecture's native ABI) */
	rsp_sc_u32 pad;
};

struct rsp_sc_val {
	rsp_sc_u64 count, sum; /* calls, ns of entry -> exit */
	rsp_sc_u64 offcpu;     /* ns of that spent off the CPU (switched out) */
	rsp_sc_u64 sq;	       /* sum of ((ns + 8) >> 4)^2 */
	rsp_sc_u64 min, max;   /* this CPU's; min 0 with count 0 means none */
	char comm[RSP_SC_COMM_LEN];
	rsp_sc_u32 b[RSP_SC_NR_BUCKETS]; /* r=2 buckets; wrap is fine: readers take deltas */
	rsp_sc_u32 pad;
};

/* Per-CPU counters (map sc_counters), indices: */
enum rsp_sc_counter {
	RSP_SC_OVERFLOW,  /* calls that went to the "other" key: the key table was full */
	RSP_SC_NO_STATE,  /* calls not timed: no per-thread state (task storage refused) */
	RSP_SC_UNMATCHED, /* exits without an entry seen (calls begun before attach, fork) */
	RSP_SC_OTHER_ABI, /* calls of the ia32 or x32 ABI (other numbering), or nr >= MAX_NR */
	RSP_SC_EXIT_LOST, /* exits not queued (sc_exited full): their keys wait for the sweep */
	RSP_SC_LATE,	  /* calls found at exit in the task's storage: its switch-in missed it */
	RSP_SC__NR
};

/* Exited threads that made syscalls, queued for rspd to delete their keys. */
#define RSP_SC_EXIT_QUEUE 8192

/*
 * Threads that exec'd (map sc_renamed, by tid): a key keeps the name its
 * thread had when the key was made, so a fork's calls before its exec (and
 * the same calls after it, on the same keys) would carry the parent's name;
 * rspd names them with this instead.
 */
#define RSP_SC_RENAMED 1024
struct rsp_sc_name {
	rsp_sc_u32 tgid;
	char comm[RSP_SC_COMM_LEN];
};

/* floor(log2(v)) for v > 0: BPF has no count-leading-zeros instruction. */
static inline rsp_sc_u32 rsp_sc__ilog2(rsp_sc_u64 v)
{
	rsp_sc_u32 k = 0;

	if (v >> 32) {
		v >>= 32;
		k += 32;
	}
	if (v >> 16) {
		v >>= 16;
		k += 16;
	}
	if (v >> 8) {
		v >>= 8;
		k += 8;
	}
	if (v >> 4) {
		v >>= 4;
		k += 4;
	}
	if (v >> 2) {
		v >>= 2;
		k += 2;
	}
	return k + (rsp_sc_u32)(v >> 1);
}

/*
 * rsp_hist__bucket(v, 2) of rsp/hist.h, without clz: the bucket the BPF
 * side adds a latency to (unit-tested against the library's).
 */
static inline rsp_sc_u32 rsp_sc__bucket(rsp_sc_u64 v)
{
	rsp_sc_u32 k;

	if (!v)
		return 0;
	k = rsp_sc__ilog2(v);
	return 1 + 2 * k + ((v << (63 - k)) > 0xb504f333f9de6484ull);
}

#endif /* RSP_BPF_SYSCALLS_H */
