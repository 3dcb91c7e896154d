/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compact records rsp's BPF programs (bpf/rsp.bpf.c) write, and
 * userspace reads: one fixed, versioned layout, shared by both sides (it
 * compiles with clang -target bpf against vmlinux.h and with gcc against
 * <stdint.h>). Each record travels as the raw data of a perf sample of a
 * PERF_COUNT_SW_BPF_OUTPUT event, so its time, CPU and current task come
 * from that sample and are not repeated here.
 *
 * Only the fields rsp's decoder reads from the kernel's tracepoints, no
 * strings after a thread's first sight: a COMM record carries a thread's
 * name once per CPU ring (and again when it changes), a STACK record a
 * stack once per CPU ring, referenced by its hash afterwards. A consumer
 * that loses records asks for both to be sent again
 * (rsp_bpfcap__resend_all()).
 */
#ifndef RSP_BPF_RECORDS_H
#define RSP_BPF_RECORDS_H

#ifndef __VMLINUX_H__
#include <stdint.h>
typedef uint8_t rsp_u8;
typedef uint16_t rsp_u16;
typedef uint32_t rsp_u32;
typedef uint64_t rsp_u64;
#else
typedef __u8 rsp_u8;
typedef __u16 rsp_u16;
typedef __u32 rsp_u32;
typedef __u64 rsp_u64;
#endif

#define RSP_BPF_LAYOUT_VERSION 1
#define RSP_BPF_COMM_LEN       16
#define RSP_BPF_MAX_STACK      127 /* frames per STACK record */

enum rsp_brec_kind {
	RSP_BREC_COMM = 1,	   /* a thread's name */
	RSP_BREC_STACK = 2,	   /* a stack, referenced by hash */
	RSP_BREC_SWITCH = 4,	   /* sched_switch */
	RSP_BREC_SWITCH_STACK = 5, /* sched_switch into a sleep, with its stacks */
	RSP_BREC_WAKING = 6,	   /* sched_waking */
	RSP_BREC_WAKING_STACK = 7, /* sched_waking with the waker's stacks */
	RSP_BREC_WAKEUP_NEW = 8,   /* sched_wakeup_new */
	RSP_BREC_FORK = 9,	   /* sched_process_fork */
	RSP_BREC_EXEC = 10,	   /* sched_process_exec */
	RSP_BREC_EXIT = 11,	   /* sched_process_exit */
};

/* Every record starts so: what it is and its size in bytes (a multiple of 8). */
struct rsp_brec_hdr {
	rsp_u8 kind;
	rsp_u8 version; /* RSP_BPF_LAYOUT_VERSION */
	rsp_u16 size;
	rsp_u32 pad;
};

struct rsp_brec_comm {
	struct rsp_brec_hdr h;
	rsp_u32 tid, pid;
	char comm[RSP_BPF_COMM_LEN];
};

#define RSP_BSTACK_KERNEL 0
#define RSP_BSTACK_USER	  1

/* Followed by nr u64 instruction pointers, innermost first. */
struct rsp_brec_stack {
	struct rsp_brec_hdr h;
	rsp_u64 hash; /* of (which, ips): never 0 */
	rsp_u16 nr;
	rsp_u8 which; /* RSP_BSTACK_* */
	rsp_u8 pad[5];
};

/*
 * prev_state as the sched_switch tracepoint reports it (TASK_REPORT_MAX,
 * 0x100, for a preemption; else the bit of the sleep state, 0 running).
 */
struct rsp_brec_switch {
	struct rsp_brec_hdr h;
	rsp_u32 prev_tid, prev_pid;
	rsp_u32 next_tid, next_pid;
	rsp_u32 prev_state;
	rsp_u8 prev_prio, next_prio;
	rsp_u8 pad[2];
};

/* A stack hash of 0: none was taken (or the walk failed). */
struct rsp_brec_switch_stack {
	struct rsp_brec_switch sw;
	rsp_u64 kstack, ustack;
};

struct rsp_brec_waking {
	struct rsp_brec_hdr h;
	rsp_u32 tid, pid; /* the woken thread */
	rsp_u32 target_cpu;
	rsp_u8 prio;
	rsp_u8 pad[3];
};

struct rsp_brec_waking_stack {
	struct rsp_brec_waking wk;
	rsp_u64 kstack, ustack; /* the waker's */
};

struct rsp_brec_fork {
	struct rsp_brec_hdr h;
	rsp_u32 parent_tid, parent_pid;
	rsp_u32 child_tid, child_pid;
};

struct rsp_brec_exec {
	struct rsp_brec_hdr h;
	rsp_u32 pid, old_pid;
};

struct rsp_brec_exit {
	struct rsp_brec_hdr h;
	rsp_u32 tid, pid;
};

/* The layout is part of the protocol: these sizes do not change within a version. */
_Static_assert(sizeof(struct rsp_brec_hdr) == 8, "rsp_brec_hdr");
_Static_assert(sizeof(struct rsp_brec_comm) == 32, "rsp_brec_comm");
_Static_assert(sizeof(struct rsp_brec_stack) == 24, "rsp_brec_stack");
_Static_assert(sizeof(struct rsp_brec_switch) == 32, "rsp_brec_switch");
_Static_assert(sizeof(struct rsp_brec_switch_stack) == 48, "rsp_brec_switch_stack");
_Static_assert(sizeof(struct rsp_brec_waking) == 24, "rsp_brec_waking");
_Static_assert(sizeof(struct rsp_brec_waking_stack) == 40, "rsp_brec_waking_stack");
_Static_assert(sizeof(struct rsp_brec_fork) == 24, "rsp_brec_fork");
_Static_assert(sizeof(struct rsp_brec_exec) == 16, "rsp_brec_exec");
_Static_assert(sizeof(struct rsp_brec_exit) == 16, "rsp_brec_exit");

/* The stack policy the programs apply (their .rodata, set before load). */
enum rsp_bstack_policy {
	RSP_BSTACKS_NONE = 0,
	RSP_BSTACKS_SLEEPS = 1, /* switches into a sleep, and wakings */
	RSP_BSTACKS_ALL = 2,	/* every switch and waking */
};

#endif /* RSP_BPF_RECORDS_H */
