/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stopwatches: the layouts bpf/stopwatch.bpf.c and userspace share, and
 * the matching of entries with returns, written once as inline functions
 * that both sides compile (clang -target bpf against vmlinux.h; gcc in
 * librsp and its unit tests), so the unit tests check the code the kernel
 * runs.
 *
 * Matching (systemtap's stopwatch, per thread): each (thread, stopwatch)
 * has a stack of open entries, each with the stack pointer at the call
 * (pointing at the return address) and its time. A return pops the entry
 * whose stack pointer is its own minus 8 (x86-64's ret pops the return
 * address; checked on this kernel: the uretprobe sees the entry's sp + 8),
 * so nesting and recursion match by depth, whatever CPU each side ran on.
 * Entries deeper than the returning frame (lower addresses) were left
 * without a return, by longjmp or a C++ exception: popped and counted
 * "unmatched". An entry at or above a new call's stack pointer was left
 * the same way (the new call reuses its stack): popped and counted too.
 * System calls use stack pointer 0: an entry open when the thread enters
 * again never returned (counted). A thread that exits with entries open
 * counts them in its exit handler.
 */
#ifndef RSP_BPF_STOPWATCH_H
#define RSP_BPF_STOPWATCH_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
#include <stdint.h>
typedef uint32_t sw_u32;
typedef uint64_t sw_u64;
#define SW_INLINE static inline
#else
typedef __u32 sw_u32;
typedef __u64 sw_u64;
#define SW_INLINE static __always_inline
#endif

#define RSP_SW_MAX	   64 /* stopwatches at once, the most --stopwatch-max allows */
#define RSP_SW_DEPTH	   16 /* open entries per thread and stopwatch (a power of 2) */
#define RSP_SW_BUCKETS	   65 /* log2 buckets of ns, as the hist family's r=1 */
#define RSP_SW_RET_SP	   8  /* a return's stack pointer minus its entry's */
#define RSP_SW_NR_SYSCALLS 512
#define RSP_SW_STACK_DEPTH 32 /* --callers: user frames kept per caller stack */

/* Key of the per-thread table: one entry per thread inside a probed call. */
struct rsp_sw_key {
	sw_u32 tid;
	sw_u32 sw;
};

struct rsp_sw_frames {
	sw_u32 depth;
	sw_u32 pad;
	sw_u64 sp[RSP_SW_DEPTH];
	sw_u64 t[RSP_SW_DEPTH];
	/* the thread's off-CPU and asleep clocks (struct rsp_sw_thread) at entry */
	sw_u64 off[RSP_SW_DEPTH];
	sw_u64 slp[RSP_SW_DEPTH];
};

/*
 * Per thread that has entered a timed call: how long it has been off CPU,
 * and of that asleep (switched out not runnable), since first seen; the
 * sched_switch program keeps it. An LRU of --stopwatch-threads: a thread
 * evicted inside a call has its call's off-CPU time counted unknown.
 */
struct rsp_sw_thread {
	sw_u64 off_ns, sleep_ns;
	sw_u64 out_at; /* switched out at (0: on CPU) */
	sw_u32 slept;  /* it left the CPU asleep, not preempted */
	sw_u32 pad;
};

/*
 * Per CPU, per stopwatch and epoch: exact integer sums (the sum of squares
 * in 128 bits, hi:lo), so that merging CPUs and seconds loses nothing.
 */
struct rsp_sw_stat {
	sw_u64 count, sum, sumsq_lo, sumsq_hi, min, max;
	sw_u64 unmatched;   /* entries left without a return (longjmp, exit) */
	sw_u64 overflow;    /* entries not kept: the thread table full, or too deep */
	sw_u64 offcpu;	    /* of sum: off CPU inside the calls, ns */
	sw_u64 asleep;	    /* of offcpu: asleep (not runnable) */
	sw_u64 off_unknown; /* calls (of count) whose off-CPU time was lost */
	/* --callers: calls whose user stack could not be taken (the stack map
	 * full, or a different stack in its hash bucket), and calls whose stack
	 * was taken but found the callers table full (--stopwatch-callers) */
	sw_u64 callers_lost;
	sw_u64 callers_overflow;
	sw_u64 buckets[RSP_SW_BUCKETS];
};

/*
 * --callers: per stopwatch, process and caller stack (an id of map
 * "stacks", taken at the return, so its first frame is the caller's
 * return address), the calls and their time: map "callers". Cumulative
 * since the stopwatch was added; updated with atomic adds.
 */
struct rsp_sw_caller_key {
	sw_u32 sw;
	sw_u32 tgid;
	sw_u32 stack; /* id in map "stacks" */
	sw_u32 pad;
};

struct rsp_sw_caller_val {
	sw_u64 count, sum;
	sw_u64 first; /* CLOCK_MONOTONIC ns of its first return: its process was alive */
};

/*
 * A keyed pair: the key's fields in the start event's record ([0]) and in
 * the end event's ([1]), at their tracefs format offsets; and an optional
 * filter on a field of the start record.
 */
struct rsp_sw_pair {
	sw_u32 nfields;
	sw_u32 has_where;
	sw_u32 off[2][2], size[2][2];
	sw_u32 where_off, where_size;
	sw_u64 where_value;
	/* A pair of user functions instead (uprobes): the key is the function's
	 * arg-th integer argument (1 to 6: rdi, rsi, rdx, rcx, r8, r9) at each
	 * side's entry, with the process's id (an address means nothing in
	 * another process). nfields is 1. */
	sw_u32 uprobe;
	sw_u32 arg[2];
	sw_u32 pad;
};

/* An item between its start and its end (map "items"); a user pair's k[1] is the tgid. */
struct rsp_sw_item {
	sw_u32 sw;
	sw_u32 pad;
	sw_u64 k[2];
};

/* What one stopwatch watches; active = 0 when the slot is free. */
struct rsp_sw_filter {
	sw_u32 active;
	sw_u32 tgid;	     /* 0: any process */
	char comm[16];	     /* "": any */
	sw_u32 callers;	     /* --callers: take the user stack at each return */
	sw_u32 callers_max;  /* --callers-max: rows of map "callers" it may make */
	sw_u32 callers_rows; /* rows it made (atomic adds) */
	sw_u32 pad;
};

/* The r=1 bucket of @v ns: 0 for 0, else 1 + floor(log2 v) (lib/analysis/hist.c). */
SW_INLINE sw_u32 rsp_sw__bucket(sw_u64 v)
{
	sw_u32 b = 0;

	if (v >= (1ull << 32)) {
		v >>= 32;
		b += 32;
	}
	if (v >= (1ull << 16)) {
		v >>= 16;
		b += 16;
	}
	if (v >= (1ull << 8)) {
		v >>= 8;
		b += 8;
	}
	if (v >= (1ull << 4)) {
		v >>= 4;
		b += 4;
	}
	if (v >= (1ull << 2)) {
		v >>= 2;
		b += 2;
	}
	if (v >= (1ull << 1)) {
		v >>= 1;
		b += 1;
	}
	return v ? b + 1 : 0;
}

/* Add one duration @d: 128-bit sum of squares from 32-bit halves. */
SW_INLINE void rsp_sw__record(struct rsp_sw_stat *s, sw_u64 d)
{
	sw_u64 a = d >> 32, b = d & 0xffffffffull, lo, mid, old;
	sw_u32 k = rsp_sw__bucket(d);

	s->count++;
	s->sum += d;
	if (s->count == 1 || d < s->min)
		s->min = d;
	if (d > s->max)
		s->max = d;
	if (k < RSP_SW_BUCKETS) /* always: says so to the verifier */
		s->buckets[k]++;
	/* d^2 = a^2 2^64 + 2ab 2^32 + b^2 */
	s->sumsq_hi += a * a;
	mid = 2 * a * b; /* < 2^65 only when a, b near 2^32: d > 2^63 ns is not a latency */
	s->sumsq_hi += mid >> 32;
	lo = mid << 32;
	old = s->sumsq_lo;
	s->sumsq_lo += lo;
	if (s->sumsq_lo < old)
		s->sumsq_hi++;
	old = s->sumsq_lo;
	s->sumsq_lo += b * b;
	if (s->sumsq_lo < old)
		s->sumsq_hi++;
}

/*
 * An entry at stack pointer @sp, time @t. Pops stale entries first (each
 * adds one to *@unmatched); an entry beyond RSP_SW_DEPTH adds one to
 * *@overflow and is not kept (its return then finds no entry).
 */
SW_INLINE void rsp_sw__push(struct rsp_sw_frames *f, sw_u64 sp, sw_u64 t, sw_u64 *unmatched,
			    sw_u64 *overflow)
{
	for (int i = 0; i < RSP_SW_DEPTH; i++) {
		sw_u32 d = f->depth;

		if (d == 0 || d > RSP_SW_DEPTH || f->sp[(d - 1) & (RSP_SW_DEPTH - 1)] > sp)
			break;
		f->depth = d - 1;
		(*unmatched)++;
	}
	if (f->depth >= RSP_SW_DEPTH) {
		(*overflow)++;
		return;
	}
	f->sp[f->depth & (RSP_SW_DEPTH - 1)] = sp;
	f->t[f->depth & (RSP_SW_DEPTH - 1)] = t;
	f->depth++;
}

/*
 * A return whose entry had stack pointer @entry_sp (the return's sp minus
 * RSP_SW_RET_SP; 0 for a system call), at time @t. Return: true with the
 * duration in *@dur when its entry was open; false when it was not (the
 * stopwatch began inside the call, or the entry was not kept).
 */
SW_INLINE bool rsp_sw__pop(struct rsp_sw_frames *f, sw_u64 entry_sp, sw_u64 t, sw_u64 *dur,
			   sw_u64 *unmatched)
{
	for (int i = 0; i < RSP_SW_DEPTH; i++) {
		sw_u32 d = f->depth;
		sw_u64 top;

		if (d == 0 || d > RSP_SW_DEPTH)
			return false;
		top = f->sp[(d - 1) & (RSP_SW_DEPTH - 1)];
		if (top > entry_sp)
			return false;
		f->depth = d - 1;
		if (top == entry_sp) {
			sw_u64 t0 = f->t[(d - 1) & (RSP_SW_DEPTH - 1)];

			*dur = t > t0 ? t - t0 : 0;
			return true;
		}
		(*unmatched)++;
	}
	return false;
}

#endif
