/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compact records rsp's BPF programs (bpf/rsp.bpf.c) write, and
 * userspace reads: one fixed, versioned layout, shared by both sides (it
 * compiles with clang -target bpf against vmlinux.h and with gcc against
 * <stdint.h>).
 *
 * Each record starts with a header shaped like perf's (struct
 * perf_event_header: type, misc, size), with a type of rsp's own outside
 * perf's range, then the time and the current task: the programs write
 * them into a BPF ring buffer per CPU, and the drain stores them in the
 * window as they are, beside the perf rings' records, in a stream of their
 * own per CPU that the window's merge orders by time. A dump writes each
 * one as the raw data of a bpf-output sample (perf reads it as such).
 *
 * Only the fields rsp's decoder reads from the kernel's tracepoints, no
 * strings after a thread's first sight: a COMM record carries a thread's
 * name once per CPU ring (and again when it changes), a STACK record a
 * stack once per CPU ring, referenced by its hash afterwards. A consumer
 * that loses records asks for both to be sent again
 * (rsp_bpfcap__resend_all()).
 *
 * One record per fact (layout 3): what the kernel reports in several
 * events travels as one record, written when the fact is complete. A
 * waking waits in the wakee's task storage and rides on its next
 * switch-in (a wake part at the end of the switch record); a block
 * request's insert and issue wait in a map keyed by the request and ride
 * on its completion (block parts); an irq, softirq or hrtimer expiry is
 * one record at its exit with its start. Readers unfold them
 * (rsp_bpfrec__unfold(), lib/stream/unfold.c) into the records of layout
 * 2's kinds at their own times, so the timeline and dumps see the same
 * events as before. A part that cannot ride (its slot is taken again
 * before the record it waits for: a waking of a task that never slept, a
 * requeued request) goes alone in a CARRY record, written then, so that
 * every ring stays in time order.
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

#define RSP_BPF_LAYOUT_VERSION 3
#define RSP_BPF_COMM_LEN       16
#define RSP_BPF_MAX_STACK      127 /* frames per STACK record */

enum rsp_brec_kind {
	RSP_BREC_COMM = 1,		    /* a thread's name */
	RSP_BREC_STACK = 2,		    /* a stack, referenced by hash */
	RSP_BREC_SWITCH = 4,		    /* sched_switch */
	RSP_BREC_SWITCH_STACK = 5,	    /* sched_switch into a sleep, with its stacks */
	RSP_BREC_WAKING = 6,		    /* sched_waking */
	RSP_BREC_WAKING_STACK = 7,	    /* sched_waking with the waker's stacks */
	RSP_BREC_WAKEUP_NEW = 8,	    /* sched_wakeup_new */
	RSP_BREC_FORK = 9,		    /* sched_process_fork */
	RSP_BREC_EXEC = 10,		    /* sched_process_exec */
	RSP_BREC_EXIT = 11,		    /* sched_process_exit */
	RSP_BREC_BLOCK_INSERT = 12,	    /* block_rq_insert */
	RSP_BREC_BLOCK_ISSUE = 13,	    /* block_rq_issue */
	RSP_BREC_BLOCK_COMPLETE = 14,	    /* block_rq_complete */
	RSP_BREC_IRQ_ENTRY = 15,	    /* irq_handler_entry */
	RSP_BREC_IRQ_EXIT = 16,		    /* irq_handler_exit */
	RSP_BREC_SOFTIRQ_ENTRY = 17,	    /* softirq_entry */
	RSP_BREC_SOFTIRQ_EXIT = 18,	    /* softirq_exit */
	RSP_BREC_HRTIMER_START = 19,	    /* hrtimer_start */
	RSP_BREC_HRTIMER_EXPIRE_ENTRY = 20, /* hrtimer_expire_entry */
	RSP_BREC_HRTIMER_EXPIRE_EXIT = 21,  /* hrtimer_expire_exit */
	RSP_BREC_SWITCH_CHECK = 22,	    /* SWITCH_STACK walked as a check of the cache */
	RSP_BREC_CARRY = 23,		    /* a folded part alone (see rsp_brec_carry) */
	RSP_BREC_IRQ = 24,		    /* irq_handler_exit with its entry folded in */
	RSP_BREC_SOFTIRQ = 25,		    /* softirq_exit with its entry folded in */
	RSP_BREC_HRTIMER = 26,		    /* hrtimer_expire_exit with its entry folded in */
	RSP_BREC__NR
};

/*
 * The record type: "RS" in the high half (far above perf's record types,
 * and its user types from 64), the layout version, the kind.
 */
#define RSP_BREC_TYPE_TAG	    0x52530000u
#define RSP_BREC_TYPE(kind)	    (RSP_BREC_TYPE_TAG | (RSP_BPF_LAYOUT_VERSION << 8) | (kind))
#define RSP_BREC_IS_TYPE(type)	    (((type)&0xffff0000u) == RSP_BREC_TYPE_TAG)
#define RSP_BREC_TYPE_VERSION(type) (((type) >> 8) & 0xffu)
#define RSP_BREC_TYPE_KIND(type)    ((type)&0xffu)

/*
 * Every record starts so: perf's header (type, misc = the CPU, size in
 * bytes, a multiple of 8), the time (CLOCK_MONOTONIC, as rspd's perf
 * events), and the task that was current when it was written.
 */
struct rsp_brec_hdr {
	rsp_u32 type; /* RSP_BREC_TYPE(kind) */
	rsp_u16 cpu;
	rsp_u16 size;
	rsp_u64 time;
	rsp_u32 pid, tid; /* the current task */
};

/* A thread's name: not always the current task's (the next task of a switch). */
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
 * Where a record's stacks came from (stack_flags of SWITCH_STACK and
 * WAKING_STACK): 0, walked for this record; RSP_BSTACKF_*CACHED, served
 * from the stack cache (RSP_BSTACKS_CACHED) by the thread's user context,
 * not walked.
 */
#define RSP_BSTACKF_KCACHED 0x01u
#define RSP_BSTACKF_UCACHED 0x02u

/* What a record carries folded in (a switch's fold, a block completion's fold). */
#define RSP_BFOLD_WAKING       0x01u /* a switch: next's waking, a wake part at its end */
#define RSP_BFOLD_BLOCK_INSERT 0x01u /* a completion: the insert's block part */
#define RSP_BFOLD_BLOCK_ISSUE                                                                      \
	0x02u /* a completion: the issue's block part (after the insert's)                         \
	       */

/*
 * prev is the current task (the header's pid and tid). prev_state as the
 * sched_switch tracepoint reports it (TASK_REPORT_MAX, 0x100, for a
 * preemption; else the bit of the sleep state, 0 running). With
 * RSP_BFOLD_WAKING in fold, the last sizeof(struct rsp_brec_wake_part)
 * bytes are the waking that made next runnable.
 */
struct rsp_brec_switch {
	struct rsp_brec_hdr h;
	rsp_u32 next_tid, next_pid;
	rsp_u32 prev_state;
	rsp_u8 prev_prio, next_prio;
	rsp_u8 stack_flags; /* RSP_BSTACKF_*: SWITCH_STACK only */
	rsp_u8 fold;	    /* RSP_BFOLD_WAKING */
};

/*
 * A sched_waking or sched_wakeup_new of the switch's next task, less what
 * the switch says (the woken thread): the waker is the task that was
 * current on @cpu at @time. kstack and ustack are the waker's for kind
 * RSP_BREC_WAKING_STACK, else 0.
 */
struct rsp_brec_wake_part {
	rsp_u64 time;
	rsp_u32 pid, tid; /* the waker */
	rsp_u32 target_cpu;
	rsp_u16 cpu;
	rsp_u8 prio;
	rsp_u8 kind; /* RSP_BREC_WAKING, RSP_BREC_WAKING_STACK or RSP_BREC_WAKEUP_NEW */
	rsp_u8 stack_flags;
	rsp_u8 pad[7];
	rsp_u64 kstack, ustack;
};

/* A stack hash of 0: none was taken (or the walk failed). */
struct rsp_brec_switch_stack {
	struct rsp_brec_switch sw;
	rsp_u64 kstack, ustack;
};

/*
 * A switch into a sleep whose stacks were walked although the stack cache
 * had its key (a refresh, or --stack-check): kstack and ustack are what
 * the walk found, kcached and ucached what the cache would have served.
 * Consumers read it as a SWITCH_STACK and compare (sleep reasons).
 */
struct rsp_brec_switch_check {
	struct rsp_brec_switch_stack ss;
	rsp_u64 kcached, ucached;
};

/* The waker is the current task (the header's), the woken one here. */
struct rsp_brec_waking {
	struct rsp_brec_hdr h;
	rsp_u32 tid, pid; /* the woken thread */
	rsp_u32 target_cpu;
	rsp_u8 prio;
	rsp_u8 stack_flags; /* RSP_BSTACKF_*: WAKING_STACK only */
	rsp_u8 pad[2];
};

struct rsp_brec_waking_stack {
	struct rsp_brec_waking wk;
	rsp_u64 kstack, ustack; /* the waker's */
};

/* The parent is the current task. */
struct rsp_brec_fork {
	struct rsp_brec_hdr h;
	rsp_u32 child_tid, child_pid;
};

/* The task that exec'd is the current one; its tid before (a thread's exec). */
struct rsp_brec_exec {
	struct rsp_brec_hdr h;
	rsp_u32 old_pid;
	rsp_u32 pad;
};

/* The exiting task is the current one. */
struct rsp_brec_exit {
	struct rsp_brec_hdr h;
};

/*
 * A block request, as the block_rq_* tracepoints show it: dev in the
 * kernel's dev_t encoding (major << 20 | minor), rwbs as blk_fill_rwbs()
 * writes it. For a completion nr_sector and bytes are what completed. The
 * issuing task is the current one (its name comes as COMM records). A
 * completion's fold says which block parts follow it (insert, then issue).
 */
struct rsp_brec_block {
	struct rsp_brec_hdr h;
	rsp_u64 sector;
	rsp_u32 dev;
	rsp_u32 nr_sector;
	rsp_u32 bytes;
	char rwbs[8];
	rsp_u32 fold; /* RSP_BFOLD_BLOCK_*: BLOCK_COMPLETE only */
};

/* A block_rq_insert or block_rq_issue of the request: its record, less the dev. */
struct rsp_brec_block_part {
	rsp_u64 time;
	rsp_u32 pid, tid; /* the current task then */
	rsp_u64 sector;
	rsp_u32 nr_sector, bytes;
	rsp_u16 cpu;
	rsp_u8 kind; /* RSP_BREC_BLOCK_INSERT or RSP_BREC_BLOCK_ISSUE */
	rsp_u8 pad[5];
	char rwbs[8];
};

/*
 * A part written alone (what: RSP_BREC_WAKING, _WAKING_STACK, _WAKEUP_NEW
 * with a wake part after it, woken = the woken thread's tid and pid;
 * RSP_BREC_BLOCK_INSERT or _ISSUE with a block part after it, dev in
 * woken[0]). Not an event itself: only its part is.
 */
struct rsp_brec_carry {
	struct rsp_brec_hdr h;
	rsp_u32 woken[2];
	rsp_u8 what;
	rsp_u8 pad[7];
};

/* irq_handler_entry: the handler's name travels in each record (irqs are few). */
struct rsp_brec_irq_entry {
	struct rsp_brec_hdr h;
	rsp_u32 irq;
	rsp_u32 pad;
	char name[16];
};

struct rsp_brec_irq_exit {
	struct rsp_brec_hdr h;
	rsp_u32 irq;
	rsp_u32 ret;
};

struct rsp_brec_softirq {
	struct rsp_brec_hdr h;
	rsp_u32 vec;
	rsp_u32 pad;
};

/*
 * What waits in the programs' maps for the record that carries it, as
 * rspd reads it for a dump (rsp_bpfcap__pending()): a thread's waking in
 * its task storage (map wake_task), a request's insert and issue (map
 * rq_pending, keyed by the request's address).
 */
struct rsp_bpf_wake_slot {
	struct rsp_brec_wake_part p;
	rsp_u32 valid;
	rsp_u32 pad;
};

struct rsp_bpf_rq_parts {
	struct rsp_brec_block_part ins, iss;
	rsp_u32 has; /* RSP_BFOLD_BLOCK_* */
	rsp_u32 dev;
};

/* An irq handler's exit with its entry: the handler ran from start to the header's time. */
struct rsp_brec_irq {
	struct rsp_brec_hdr h;
	rsp_u32 irq;
	rsp_u32 ret;
	rsp_u64 start; /* 0: its entry was not seen */
	char name[16];
};

/* A softirq's exit with its entry. */
struct rsp_brec_softirq_span {
	struct rsp_brec_hdr h;
	rsp_u32 vec;
	rsp_u32 pad;
	rsp_u64 start; /* 0: its entry was not seen */
};

/* An hrtimer expiry's exit with its entry (now: hrtimer_expire_entry's). */
struct rsp_brec_hrtimer_span {
	struct rsp_brec_hdr h;
	rsp_u64 hrtimer;
	rsp_u64 function;
	rsp_u64 now;
	rsp_u64 start; /* 0: its entry was not seen */
};

/* hrtimer_start (time: the expiry) and hrtimer_expire_entry (time: now). */
struct rsp_brec_hrtimer {
	struct rsp_brec_hdr h;
	rsp_u64 hrtimer; /* the timer's address: the key */
	rsp_u64 function;
	rsp_u64 time;
};

struct rsp_brec_hrtimer_exit {
	struct rsp_brec_hdr h;
	rsp_u64 hrtimer;
};

/*
 * How many events @raw (a record of this layout, its size checked) carries
 * folded in besides its own: counted by rspd's drain, which reads each
 * header anyway, rather than by the programs (a map update each).
 */
static inline unsigned rsp_brec__folded(const void *raw)
{
	const struct rsp_brec_hdr *h = (const struct rsp_brec_hdr *)raw;
	unsigned kind = RSP_BREC_TYPE_KIND(h->type);

	if (kind == RSP_BREC_SWITCH || kind == RSP_BREC_SWITCH_STACK ||
	    kind == RSP_BREC_SWITCH_CHECK)
		return ((const struct rsp_brec_switch *)raw)->fold & RSP_BFOLD_WAKING ? 1 : 0;
	if (kind == RSP_BREC_BLOCK_COMPLETE)
		return !!(((const struct rsp_brec_block *)raw)->fold & RSP_BFOLD_BLOCK_INSERT) +
		       !!(((const struct rsp_brec_block *)raw)->fold & RSP_BFOLD_BLOCK_ISSUE);
	if (kind == RSP_BREC_IRQ)
		return ((const struct rsp_brec_irq *)raw)->start ? 1 : 0;
	if (kind == RSP_BREC_SOFTIRQ)
		return ((const struct rsp_brec_softirq_span *)raw)->start ? 1 : 0;
	if (kind == RSP_BREC_HRTIMER)
		return ((const struct rsp_brec_hrtimer_span *)raw)->start ? 1 : 0;
	return 0;
}

/* The layout is part of the protocol: these sizes do not change within a version. */
_Static_assert(sizeof(struct rsp_brec_hdr) == 24, "rsp_brec_hdr");
_Static_assert(sizeof(struct rsp_brec_comm) == 48, "rsp_brec_comm");
_Static_assert(sizeof(struct rsp_brec_stack) == 40, "rsp_brec_stack");
_Static_assert(sizeof(struct rsp_brec_switch) == 40, "rsp_brec_switch");
_Static_assert(sizeof(struct rsp_brec_switch_stack) == 56, "rsp_brec_switch_stack");
_Static_assert(sizeof(struct rsp_brec_switch_check) == 72, "rsp_brec_switch_check");
_Static_assert(sizeof(struct rsp_brec_waking) == 40, "rsp_brec_waking");
_Static_assert(sizeof(struct rsp_brec_waking_stack) == 56, "rsp_brec_waking_stack");
_Static_assert(sizeof(struct rsp_brec_fork) == 32, "rsp_brec_fork");
_Static_assert(sizeof(struct rsp_brec_exec) == 32, "rsp_brec_exec");
_Static_assert(sizeof(struct rsp_brec_exit) == 24, "rsp_brec_exit");
_Static_assert(sizeof(struct rsp_brec_block) == 56, "rsp_brec_block");
_Static_assert(sizeof(struct rsp_brec_irq_entry) == 48, "rsp_brec_irq_entry");
_Static_assert(sizeof(struct rsp_brec_irq_exit) == 32, "rsp_brec_irq_exit");
_Static_assert(sizeof(struct rsp_brec_softirq) == 32, "rsp_brec_softirq");
_Static_assert(sizeof(struct rsp_brec_hrtimer) == 48, "rsp_brec_hrtimer");
_Static_assert(sizeof(struct rsp_brec_hrtimer_exit) == 32, "rsp_brec_hrtimer_exit");
_Static_assert(sizeof(struct rsp_brec_wake_part) == 48, "rsp_brec_wake_part");
_Static_assert(sizeof(struct rsp_brec_block_part) == 48, "rsp_brec_block_part");
_Static_assert(sizeof(struct rsp_brec_carry) == 40, "rsp_brec_carry");
_Static_assert(sizeof(struct rsp_brec_irq) == 56, "rsp_brec_irq");
_Static_assert(sizeof(struct rsp_brec_softirq_span) == 40, "rsp_brec_softirq_span");
_Static_assert(sizeof(struct rsp_brec_hrtimer_span) == 56, "rsp_brec_hrtimer_span");

/* The stack policy the programs apply (their .rodata, set before load). */
enum rsp_bstack_policy {
	RSP_BSTACKS_NONE = 0,
	RSP_BSTACKS_SLEEPS = 1,	 /* switches into a sleep, and wakings */
	RSP_BSTACKS_ALL = 2,	 /* every switch and waking */
	RSP_BSTACKS_SAMPLED = 3, /* every stack_every-th switch of a CPU, and no waking */
	RSP_BSTACKS_CACHED = 4,	 /* as SLEEPS, the stacks from the cache by user context */
};

/*
 * Degradation levels (the overhead budget, rspd --overhead-budget): rspd
 * writes one into the programs' "tune" map at run time, each level keeping
 * the ones before it. The stated order: walk less first, then drop the
 * waker stacks, then stack only some sleeps, then none.
 */
enum rsp_degrade {
	RSP_DEGRADE_NONE = 0,
	RSP_DEGRADE_FEWER_CHECKS = 1, /* stacks cached: a hit checked 8 times more rarely */
	RSP_DEGRADE_NO_WAKER = 2,     /* no stacks on wakings */
	RSP_DEGRADE_SOME_SLEEPS = 3,  /* stacks on one switch into a sleep in 8, at random */
	RSP_DEGRADE_NO_STACKS = 4,    /* no stacks */
	RSP_DEGRADE__NR
};

/*
 * The programs' counters (a per-CPU array; rspd sums them): what was
 * written, and the stack cache's bookkeeping. A check walks a stack the
 * cache had, and compares: a disagreement is a stack the cache would have
 * served wrong. A hit is checked at random, once in stack_refresh on
 * average.
 */
enum rsp_bcounter {
	RSP_BC_RECORDS,
	RSP_BC_STACKS, /* STACK records written */
	RSP_BC_COMMS,
	RSP_BC_OUTPUT_ERRORS, /* a full ring: records lost */
	RSP_BC_STACK_ERRORS,  /* a walk failed */
	RSP_BC_SWITCHES,      /* per CPU: RSP_BSTACKS_SAMPLED counts switches with it */
	RSP_BC_STACK_SITES,   /* switches and wakings that wanted stacks */
	RSP_BC_WALKS,	      /* of those, walked (a miss, a check, no key) */
	RSP_BC_HITS,	      /* of those, the cache had the key (served or checked) */
	RSP_BC_CACHED,	      /* of those, served from the cache */
	RSP_BC_NO_KEY,	      /* walked: no user context to key (kernel thread, interrupt) */
	RSP_BC_KCHECKS,	      /* kernel stacks walked where the cache had one */
	RSP_BC_KDIFFER,	      /* ... and the cache's differed */
	RSP_BC_UCHECKS,
	RSP_BC_UDIFFER,
	RSP_BC_CARRIED, /* folded events that went alone (a CARRY record) */
	RSP_BC__NR
};

#endif /* RSP_BPF_RECORDS_H */
