/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_TIMELINE_H
#define RSP_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/catalogue.h>
#include <rsp/ksyms.h>
#include <rsp/net.h>
#include <rsp/schema.h>
#include <rsp/socktab.h>
#include <rsp/sleepclass.h>
#include <rsp/tp.h>
#include <rsp/stackhash.h>
#include <rsp/window.h>

/*
 * The timeline builder: one streaming state machine that turns the
 * time-ordered record stream (a pinned window, a dump, or live capture)
 * into what every analysis consumes:
 *
 *   segments   per thread, back to back: RUN (on a CPU), RUNNABLE (woken
 *              or preempted, waiting for a CPU), SLEEP (not runnable; with
 *              a reason and a waker), UNKNOWN (lost records or no data)
 *   links      waker -> wakee (a sched_waking that ended a sleep), fork, exec
 *   block      block requests: insert -> issue -> complete, by dev+sector
 *   handlers   hard irq, softirq and hrtimer handler spans, per CPU
 *
 * CONTRACT (issues 4 and 5 code against it)
 *
 * Feeding. Call rsp_timeline__feed() with every record in merged time
 * order (rsp_witer__next() order). Records of other kinds, events the
 * builder does not use and malformed records are skipped and counted.
 * Small inversions are tolerated: within one CPU the kernel may write a
 * record a few hundred ns out of order, and the merge is only by
 * timestamp. The builder never lets time run backwards inside a thread:
 * an event stamped before the thread's current segment began is taken to
 * happen at that segment's start (segments are never negative).
 *
 * Cost. No allocation per record in steady state: per-thread state lives in
 * a hash map of slots reused after a thread exits, block requests in a
 * pool, handler nesting in fixed per-CPU stacks. Only the first sight of a
 * thread, a CPU or a kernel return address (the classifier's cache) may
 * allocate. No string work per record: comms are copied only when they
 * change, irq names interned once per irq number.
 *
 * Callbacks run synchronously inside feed()/finish(); they must not call
 * back into the timeline except the const getters. Everything a callback
 * receives is valid only during the call, except:
 *   - irq names (struct rsp_waker.name, rsp_handler_span.name) live as long
 *     as the timeline;
 *   - stacks (rsp_segment.stack) point into the switch-out record itself
 *     when the timeline was told RSP_TL_RECORDS_STABLE (the caller keeps
 *     every fed record alive, e.g. a pinned snapshot, for as long as it
 *     keeps the pointers); otherwise they point into a per-thread copy that
 *     is overwritten by the thread's next sleep: copy what you keep.
 *
 * Ordering of emissions. Segments of one thread are emitted in time order
 * and tile its observed life without holes or overlaps (start of one ==
 * end of the previous). Segments of different threads interleave in no
 * particular order. A segment is emitted once it is complete: a RUN at its
 * switch-out; a SLEEP at the waking that ends it; the RUNNABLE after it at
 * the switch-in; a SLEEP whose waking was not seen is held until the
 * thread's run ends (a waking written up to 2 us late on another CPU can
 * still name its waker), then emitted just before that RUN. Histograms fed
 * live therefore see a sleep at most one run late.
 * rsp_timeline__finish() emits what is still open, flagged RSP_SEGF_OPEN.
 *
 * The kernel quirk. On this kernel a tracepoint that fires in an interrupt
 * while the CPU was idle is counted but not delivered: wakings from irqs on
 * idle CPUs and block completions are often missing. A sleep that ends with
 * no waking observed gets RSP_SEGF_WAKING_NOT_SEEN and a waker only when
 * the evidence supports it, with RSP_SEGF_WAKER_INFERRED:
 *   - the thread left in D state, or its stack says block I/O, and it had
 *     issued block requests not yet seen completing (or one was issued
 *     while it slept): the device (the request is marked completed at the
 *     switch-in, RSP_BLKF_COMPLETE_INFERRED);
 *   - a deliberate sleep (nanosleep): the timer;
 *   - a sleep whose own timeout had expired: the timer. The thread armed it
 *     (hrtimer_start in its context, callback hrtimer_wakeup: poll, select,
 *     epoll_wait, futex and nanosleep timeouts) in the run that ended in
 *     the sleep, and its expiry is not after the switch-in;
 *   - a network wait: the network (NET_RX softirq);
 *   - a thread whose own waking was not seen and that, within 2 ms of its
 *     run, wakes a thread asleep on block I/O with requests in flight
 *     relays their completion (ext4's end-of-I/O kworker): the device.
 *     Whenever a thread wakes one asleep on block I/O whose requests of
 *     its last run were not seen completing, they are marked completed
 *     (RSP_BLKF_COMPLETE_INFERRED) at the relay's switch-in or waking;
 *   - an I/O sleep whose first act (within 2 ms) is to submit a request:
 *     that device, no request joined;
 * otherwise the waker stays RSP_WAKER_NONE ("unknown").
 *
 * The same quirk hides every switch away from the idle task (it fires in the
 * idle task's context): a thread woken onto an idle CPU is seen running
 * only by its first record there (any sample names the task current on its
 * CPU). That record's time is taken as the switch-in; the segment it ends
 * carries RSP_SEGF_SWITCH_NOT_SEEN. So a run's start (and the end of the
 * sleep or runnable time before it) can be late by the part of the run
 * before its first record.
 *
 * The same thread keeps every CPU's ring in its context: a record on a CPU
 * names the task current there. A thread seen switching in whose
 * switch-out never comes (lost, or its CPU went idle and its ring silent)
 * is running only as far as the ring shows it: its last record there. A
 * later record of another task on that CPU ends its run; the time from its
 * last record to that one (or to its own record on another CPU, or to the
 * range's end) is a RUN flagged RSP_SEGF_RUN_INFERRED, and it is UNKNOWN
 * after it, until its next record. A record of the next task up to 2 us
 * before the switch that brings it is an inversion (see Feeding), not
 * evidence.
 *
 * Gaps. A PERF_RECORD_LOST (from the kernel or the window) on CPU c means
 * records of c between its previous record and the LOST are missing. Every
 * thread that could have changed state there (all but those running on
 * other CPUs) has its open segment closed at the gap's start
 * (RSP_SEGF_GAP) and is UNKNOWN until its next switch: nothing is invented
 * across a gap.
 *
 * Stream edges. A thread first seen switching out has run since the
 * earlier of its CPU's first record and the stream's start: its first RUN
 * starts at the stream's start, flagged RSP_SEGF_TRUNCATED; a thread first
 * seen being woken has slept since the stream's start (TRUNCATED, reason
 * unknown). Other first sightings start UNKNOWN.
 */

enum rsp_seg_kind {
	RSP_SEG_RUN,
	RSP_SEG_RUNNABLE,
	RSP_SEG_SLEEP,
	RSP_SEG_UNKNOWN,
};

enum rsp_waker_kind {
	RSP_WAKER_NONE,	   /* unknown */
	RSP_WAKER_THREAD,  /* a task: id = tid */
	RSP_WAKER_IRQ,	   /* a hard irq handler: id = irq number, name */
	RSP_WAKER_SOFTIRQ, /* a softirq handler: id = vector (RSP_SOFTIRQ_*) */
	RSP_WAKER_TIMER,   /* an hrtimer (or the TIMER/HRTIMER softirq) */
	RSP_WAKER_DEVICE,  /* a block device: id = dev_t as the block tracepoints give it */
};

/* Softirq vectors, as the kernel numbers them (softirq_entry's vec). */
enum {
	RSP_SOFTIRQ_HI,
	RSP_SOFTIRQ_TIMER,
	RSP_SOFTIRQ_NET_TX,
	RSP_SOFTIRQ_NET_RX,
	RSP_SOFTIRQ_BLOCK,
	RSP_SOFTIRQ_IRQ_POLL,
	RSP_SOFTIRQ_TASKLET,
	RSP_SOFTIRQ_SCHED,
	RSP_SOFTIRQ_HRTIMER,
	RSP_SOFTIRQ_RCU,
	RSP_SOFTIRQ__NR
};

/** rsp_softirq__name() - "NET_RX", ...; "?" for an unknown vector. Static. */
RSP_API const char *rsp_softirq__name(unsigned vec);

/* rsp_waker.flags */
#define RSP_WAKERF_NET	    0x1u /* a network arrival woke it: sk names the socket */
#define RSP_WAKERF_LOOPBACK 0x2u /* ... sent by the waker thread itself over loopback */

/* Who ended a sleep (or made a thread runnable). */
struct rsp_waker {
	uint8_t kind;  /* enum rsp_waker_kind */
	uint8_t flags; /* RSP_WAKERF_* */
	/*
	 * SLEEP: wakeups before this one that were false (a thread woken
	 * that found nothing and slept again at the same place), merged
	 * into this sleep by the timeline store (rsp_tlstore_opts.fwake_ns);
	 * saturates at 65535. This waker then gets the whole wait (wPerf).
	 */
	uint16_t nr_false;
	uint32_t id;   /* tid, irq number, softirq vector or dev_t by kind; 0 for TIMER/NONE */
	uint32_t tgid; /* THREAD: the waker's process, 0 if not known */
	uint32_t cpu;  /* where the waking ran */
	uint64_t time; /* the sched_waking's timestamp; 0 when not observed */
	uint64_t req;  /* DEVICE: the block request joined to the wakeup (rsp_block_req.id), 0 if
			  none */
	const char
		*name; /* IRQ: the handler's name (interned, lives with the timeline); else NULL */
	const uint64_t *stack; /* THREAD: the waker's callchain at the waking when recorded; valid
				  as rsp_segment.stack */
	uint32_t nr_stack;
	uint32_t stack_hash; /* of stack, never 0, in a store made with RSP_TLSTORE_STACK_HASHES;
				else 0 */
	uint64_t sk; /* RSP_WAKERF_NET: the socket whose data arrival woke (kernel address) */
};

/* RSP_STACK_HASH_USER: rsp/stackhash.h. */

/* rsp_segment.flags */
#define RSP_SEGF_TRUNCATED	 0x01u /* began before the stream: start is the stream's start */
#define RSP_SEGF_OPEN		 0x02u /* still open at finish(): end is finish()'s time */
#define RSP_SEGF_GAP		 0x04u /* ended by lost records: end is the gap's start */
#define RSP_SEGF_WAKING_NOT_SEEN 0x08u /* SLEEP: no sched_waking seen; end is the switch-in */
#define RSP_SEGF_WAKER_INFERRED	 0x10u /* SLEEP: waker inferred from evidence, not observed */
#define RSP_SEGF_EXITED		 0x20u /* RUN: the thread exited at its end */
/* SLEEP: the waking ran inside an irq, softirq or hrtimer handler */
#define RSP_SEGF_IN_HANDLER 0x40u
/* ended by a switch-in never delivered (from idle): end is the thread's first record running */
#define RSP_SEGF_SWITCH_NOT_SEEN 0x80u
/* SLEEP: urec is the uprobe record of the blocking function this sleep is in */
#define RSP_SEGF_UREC_PROBE 0x100u
/* SLEEP: stack was repaired at query time (rsp_tlstore__repair_stacks()): a uprobe's
 * stack stitched under it, or its user part unwound from the captured stack */
#define RSP_SEGF_STACK_STITCHED 0x200u
#define RSP_SEGF_STACK_DWARF	0x400u
/*
 * SLEEP, BPF backend with stacks cached: its stacks were served from the
 * stack cache, not walked (CACHED); or walked as a check of what the cache
 * had (CHECKED), which differed in the kernel or user stack (DIFFERS) and
 * in the sleep reason its kernel stack gives (REASON_DIFFERS). A check
 * whose cached stack is not in the range is not CHECKED.
 */
#define RSP_SEGF_STACK_CACHED	0x800u
#define RSP_SEGF_STACK_CHECKED	0x1000u
#define RSP_SEGF_STACK_DIFFERS	0x2000u
#define RSP_SEGF_REASON_DIFFERS 0x4000u
/*
 * RUN: only inferred. The thread's switch-out was never delivered and no
 * record showed it on its CPU in this time: it ran at most from its last
 * record there until a record of another task on that CPU, its own record
 * elsewhere, or the range's end ("running (inferred)"; it may as well have
 * slept). Not run time: tlstore counts it apart (run_inferred_ns).
 */
#define RSP_SEGF_RUN_INFERRED 0x8000u

struct rsp_segment {
	uint64_t start, end;   /* ns, CLOCK_MONOTONIC; end >= start */
	uint32_t tid, tgid;    /* tgid 0 if not yet known */
	uint8_t kind;	       /* enum rsp_seg_kind */
	uint8_t reason;	       /* SLEEP: enum rsp_sleep_reason; RUNNABLE: the reason of
				* the sleep it followed, or RSP_SR_PREEMPT */
	uint16_t flags;	       /* RSP_SEGF_* */
	uint32_t cpu;	       /* RUN: its CPU; SLEEP: the CPU it left; RUNNABLE: the CPU it got */
	int64_t prev_state;    /* SLEEP: sched_switch's prev_state */
	const uint64_t *stack; /* SLEEP: switch-out callchain incl. PERF_CONTEXT_*; NULL if none */
	uint32_t nr_stack;
	uint32_t stack_hash;	/* SLEEP: of stack, never 0, in a store made with
				   RSP_TLSTORE_STACK_HASHES; else 0. Its low bit:
				   RSP_STACK_HASH_USER */
	struct rsp_waker waker; /* SLEEP and RUNNABLE after a wakeup: who; NONE if unknown */
	/*
	 * SLEEP, RSP_TL_RECORDS_STABLE only: a record whose user stack can
	 * repair this sleep's: the uprobe record of the libc function the
	 * thread entered before it slept (RSP_SEGF_UREC_PROBE), or the
	 * switch-out record itself when it captured the user stack and
	 * registers (PERF_SAMPLE_STACK_USER). NULL if none.
	 */
	const struct perf_event_header *urec;
};

enum rsp_link_kind {
	RSP_LINK_WAKEUP, /* from = the waker, at time; to = the wakee (its next run) */
	RSP_LINK_FORK,	 /* from = the parent thread; to = the child */
	RSP_LINK_EXEC,	 /* from = to = the thread; its image changed at time */
};

struct rsp_link {
	uint8_t kind; /* enum rsp_link_kind */
	uint8_t pad[3];
	uint32_t tid, tgid; /* the wakee, child or exec'ing thread */
	uint64_t time;
	struct rsp_waker from; /* WAKEUP: as the sleep's waker; FORK/EXEC: kind THREAD */
};

/* rsp_block_req.flags */
#define RSP_BLKF_NO_INSERT 0x1u /* issued without an insert seen: insert = issue */
/* no issue seen (it completed, or its end was not seen either): issue = insert (as RSP does) */
#define RSP_BLKF_ISSUE_ASSUMED	   0x2u
#define RSP_BLKF_COMPLETE_INFERRED 0x4u /* completion not seen; complete = the issuer's wake */
#define RSP_BLKF_COMPLETE_NOT_SEEN 0x8u /* completion unknown: complete is 0 */
#define RSP_BLKF_WRITE		   0x10u
#define RSP_BLKF_FLUSH		   0x20u /* a cache flush (rwbs F) */
#define RSP_BLKF_SYNC		   0x40u
/* issued without an insert by a thread woken for it (a flush kblockd issues): the issuer
 * is the thread that woke it */
#define RSP_BLKF_ON_BEHALF 0x80u

struct rsp_block_req {
	uint64_t id;  /* unique within the timeline, from 1 */
	uint32_t dev; /* dev_t as the tracepoint gives it (major << 20 | minor) */
	uint32_t nr_sector;
	uint64_t sector;
	uint32_t bytes;
	uint32_t flags;			  /* RSP_BLKF_* */
	uint32_t tid, tgid;		  /* the issuer: the task that inserted it (or issued it) */
	uint64_t insert, issue, complete; /* complete 0 if RSP_BLKF_COMPLETE_NOT_SEEN */
	uint32_t issue_cpu, complete_cpu;
	char comm[16]; /* the task that inserted (or issued) it: its comm when the request ends,
			* else as the insert record named it; "" if not known */
};

/*
 * A network operation (the RSP paper's Figure "A TCP operation with
 * multiple wakeups"): on one socket, from the last send before an answer
 * to the last data arrival before the next send. Sends with no arrival
 * after them make no operation. Matched by the socket's kernel address;
 * its addresses come from the socket table when known.
 *
 * The peer: on loopback the thread whose send delivered the (last) arrival
 * (the NET_RX softirq runs in its context: the waking's kernel stack shows
 * the send under the softirq, or the socket's addresses are local);
 * otherwise the NIC (peer_tid 0), unless the addresses say the peer is
 * local (RSP_NETF_LOCAL): then a thread rsp did not identify.
 */
/* rsp_net_op.flags */
#define RSP_NETF_LOOPBACK    0x1u  /* peer_tid is the local thread that sent the answer */
#define RSP_NETF_TUPLE	     0x2u  /* local and remote are known */
#define RSP_NETF_REMOTE_PEER 0x4u  /* remote is the peer socket's local address (loopback UDP) */
#define RSP_NETF_OPEN	     0x8u  /* still open at finish(): end is the last arrival seen */
#define RSP_NETF_CLOSED	     0x10u /* ended by the socket's close */
/* its addresses say the peer is on this machine: without LOOPBACK, a local thread rsp did
 * not identify (not the NIC) */
#define RSP_NETF_LOCAL 0x20u

struct rsp_net_op {
	uint64_t id; /* unique within the timeline, from 1 */
	uint64_t sk;
	uint32_t tid, tgid; /* the thread that sent (and waits for the answer) */
	uint8_t proto;	    /* RSP_IPPROTO_*, 0 unknown */
	uint8_t pad;
	uint16_t family;
	uint32_t flags;		      /* RSP_NETF_* */
	uint64_t start;		      /* the last send before the answer */
	uint64_t first, end;	      /* first and last data arrival */
	uint32_t arrivals;	      /* data arrivals for the socket in [first, end] */
	uint32_t wakeups;	      /* of which woke a thread */
	uint32_t peer_tid, peer_tgid; /* LOOPBACK: the sender of the last arrival; 0: the NIC */
	uint64_t peer_sk;	      /* LOOPBACK: the socket it sent on, 0 if not seen */
	uint64_t bytes_sent;	      /* by the sends that led to it (0 if not known) */
	struct rsp_sockaddr local, remote; /* RSP_NETF_TUPLE */
};

enum rsp_handler_kind {
	RSP_HANDLER_IRQ,
	RSP_HANDLER_SOFTIRQ,
	RSP_HANDLER_HRTIMER,
};

/* rsp_handler_span.flags */
/* its exit was never seen (an entry of its kind, a switch or lost records came first):
 * end is when the timeline gave up on it, not a measured end */
#define RSP_HSPANF_LOST_EXIT 0x1u

struct rsp_handler_span {
	uint8_t kind;  /* enum rsp_handler_kind */
	uint8_t flags; /* RSP_HSPANF_* */
	uint8_t pad[2];
	uint32_t cpu;
	uint64_t start, end;
	uint32_t id;	  /* irq number or softirq vector; 0 for HRTIMER */
	uint32_t wakeups; /* sched_wakings seen inside */
	const char
		*name; /* IRQ: handler name (interned); SOFTIRQ: vector name; HRTIMER: "hrtimer" */
	uint64_t function; /* HRTIMER: the callback's address */
};

/*
 * A sched_switch as recorded (struct rsp_timeline_ops.sched_switch): for
 * counters that follow perf's own rules (perf sched timehist) rather than
 * the segments' (which tile each thread's life).
 */
struct rsp_switch {
	uint64_t time;
	uint32_t cpu;
	uint32_t prev_tid, prev_tgid; /* prev_tgid 0 if not known */
	uint32_t next_tid;
	int64_t prev_state;
	/*
	 * What the CPU ran since its previous switch, given to the thread
	 * leaving it (as perf sched timehist counts a run); 0 when not known:
	 * no switch on this CPU yet, or lost records since.
	 */
	uint64_t ran_ns;
	struct rsp_str prev_comm, next_comm; /* the record's own fields; may be empty */
};

/* A sched_waking as recorded (struct rsp_timeline_ops.waking). */
struct rsp_waking {
	uint64_t time;
	uint32_t cpu;
	uint32_t tid;			/* woken */
	uint32_t waker_tid, waker_tgid; /* the task current when it fired (0: idle) */
	bool in_handler;		/* inside an irq, softirq or hrtimer handler */
};

struct rsp_sample;
struct perf_event_header;

/*
 * Callbacks; any may be NULL. @comm is the thread's current comm (or "" if
 * never seen), valid during the call.
 */
struct rsp_timeline_ops {
	void (*segment)(void *ctx, const struct rsp_segment *seg, const char *comm);
	void (*link)(void *ctx, const struct rsp_link *link);
	void (*block)(void *ctx, const struct rsp_block_req *req);
	void (*handler)(void *ctx, const struct rsp_handler_span *span);
	/* A thread's comm or process became known or changed. */
	void (*thread)(void *ctx, uint32_t tid, uint32_t tgid, const char *comm, uint64_t time);
	/* A network operation is complete (see struct rsp_net_op). */
	void (*net)(void *ctx, const struct rsp_net_op *op);
	/* Every sched_switch and sched_waking record (primary), as recorded. */
	void (*sched_switch)(void *ctx, const struct rsp_switch *sw);
	void (*waking)(void *ctx, const struct rsp_waking *wk);
	/* Every cpu-clock sample (primary), decoded; @rec is its record. */
	void (*sample)(void *ctx, const struct rsp_sample *smp,
		       const struct perf_event_header *rec);
};

/* rsp_timeline__new() flags */
#define RSP_TL_RECORDS_STABLE                                                                      \
	0x1u /* fed records outlive the timeline's users: stacks by pointer                        \
	      */
/* no switch-out stacks in segments (rsp_segment.stack NULL): a user that needs
 * only reasons (the histograms) saves the per-thread copy of each sleep's stack */
#define RSP_TL_NO_STACKS 0x2u

struct rsp_timeline_stats {
	uint64_t records;	    /* fed */
	uint64_t used;		    /* records that changed state */
	uint64_t skipped;	    /* other events, sideband kinds rsp does not use */
	uint64_t malformed;	    /* records that failed to decode */
	uint64_t gaps;		    /* PERF_RECORD_LOST seen */
	uint64_t inversions;	    /* events stamped before the state they change (clamped) */
	uint64_t wakings_not_seen;  /* sleeps that ended with no waking observed */
	uint64_t wakings_stale;	    /* BPF wakings fed after the sleep they came before: ignored */
	uint64_t switches_not_seen; /* switch-ins inferred from a thread's first record */
	uint64_t runs_inferred;	    /* runs ended by another task's record: switch-out not seen */
	uint64_t wakers_inferred;
	uint64_t segments, links, block_reqs, handler_spans;
	uint64_t threads;	     /* distinct threads seen */
	uint64_t untracked;	     /* records about threads refused by set_max_threads() */
	uint64_t reqs_expired;	     /* block requests emitted by expire() */
	uint64_t threads_expired;    /* threads unknown since a gap, forgotten by expire() */
	uint64_t net_ops;	     /* network operations emitted */
	uint64_t net_loopback;	     /* network wakings whose waker is the local sender */
	uint64_t net_wakings;	     /* wakings that followed a data arrival */
	uint64_t sockets;	     /* distinct sockets seen */
	uint64_t sockets_expired;    /* sockets idle since before expire() forgot */
	uint64_t probed_sleeps;	     /* sleeps that entered through a probed libc function */
	uint64_t handlers_lost_exit; /* handler spans whose exit was not seen */
	uint64_t completions_alone;  /* block completions of no request seen */
	uint64_t reqs_refused;	     /* block requests not followed: set_max_requests() */
	uint64_t reqs_issued_open;   /* block requests issued and in flight now */
	/* records by catalogue event (primary samples; side-band records by the event
	 * that carried them), sampled:N stack copies, records of no known event, and
	 * PERF_RECORD_LOST: how many, and the records they say were lost */
	uint64_t events[RSP_EV__NR];
	uint64_t stack_copies, other, lost_records, lost;
	uint64_t handler_exits_alone[3]; /* by enum rsp_handler_kind: exits with no entry seen */
	/* compact BPF records: names and stacks sent (side records), and stacks a
	 * record referenced that the stream never carried (left out: unknown) */
	uint64_t bpf_comms, bpf_stacks, bpf_stacks_missing;
};

struct rsp_timeline;

/**
 * rsp_timeline__new() - a builder over records of @schema
 * @schema: decodes the records; must outlive the timeline
 * @ops:    callbacks, copied; NULL for none
 * @ctx:    passed to every callback
 *
 * Return: the timeline or NULL (ENOMEM). Free with rsp_timeline__delete().
 */
RSP_API struct rsp_timeline *rsp_timeline__new(const struct rsp_schema *schema,
					       const struct rsp_timeline_ops *ops, void *ctx);
RSP_API void rsp_timeline__delete(struct rsp_timeline *tl);

/** rsp_timeline__set_flags() - RSP_TL_*; before the first feed. */
RSP_API void rsp_timeline__set_flags(struct rsp_timeline *tl, unsigned flags);

/**
 * rsp_timeline__set_ksyms() - kernel symbols for sleep reasons
 * @ks: must outlive the timeline; NULL: reasons from prev_state only
 *
 * Before the first feed. Return: 0 or -ENOMEM.
 */
RSP_API int rsp_timeline__set_ksyms(struct rsp_timeline *tl, const struct rsp_ksyms *ks);

/**
 * rsp_timeline__set_socktab() - socket addresses known from elsewhere
 * @base: sockets older than the stream (rspd's /proc/net table), consulted
 *        when the stream's own state records do not name a socket; must
 *        outlive the timeline. NULL: none. Before the first feed.
 */
RSP_API void rsp_timeline__set_socktab(struct rsp_timeline *tl, const struct rsp_socktab *base);

/**
 * rsp_timeline__socktab() - the sockets the stream named (state and
 * receive records), owned by @tl.
 */
RSP_API const struct rsp_socktab *rsp_timeline__socktab(const struct rsp_timeline *tl);

/**
 * rsp_timeline__set_start() - the stream's start, if earlier than its first
 * record (a query over [from, to] passes from). Before the first feed.
 */
RSP_API void rsp_timeline__set_start(struct rsp_timeline *tl, uint64_t start);

/**
 * rsp_timeline__feed() - advance the state machine by one record
 * @e: time, cpu and the record (rsp's layout or any layout @schema decodes)
 *
 * Return: 0; -ENOMEM if a new thread, request or socket address could not
 * be tracked (the record is then dropped and counted as malformed).
 */
RSP_API int rsp_timeline__feed(struct rsp_timeline *tl, const struct rsp_wentry *e);

/**
 * rsp_timeline__set_end() - a range's end (0: none), before the first feed
 *
 * rspd's BPF records carry events that happened before them (a waking
 * rides on the switch-in it caused). A reader of [from, @end] may feed up
 * to RSP_TIMELINE_READ_AHEAD_NS of records after @end: only the events
 * they carry from before @end are taken from them.
 */
RSP_API void rsp_timeline__set_end(struct rsp_timeline *tl, uint64_t end);

/**
 * rsp_timeline__set_unfold_delay() - how long a timeline of rspd's BPF
 * records holds them back, so that the events later records carry (a
 * waking on its switch-in) are fed in their place among the other CPUs'
 * records (before the first feed; RSP_TIMELINE_READ_AHEAD_NS by default,
 * copied where the records are not RSP_TL_RECORDS_STABLE). 0: nothing is
 * held; each carried event is fed just before the record that carries it,
 * after the records of other threads and CPUs from in between. The
 * wakee's story is the same (its sleep ends, it waits, it runs), and so is
 * each request's and handler's span; who woke a thread (an interrupt's
 * context) is what that order loses: for a user that reads only lengths
 * (the histograms), which then costs no more than the records themselves.
 */
RSP_API void rsp_timeline__set_unfold_delay(struct rsp_timeline *tl, uint64_t ns);

/**
 * rsp_timeline__advance() - every record up to @now was fed (a live
 * reader's watermark). A timeline of rspd's BPF records holds the last of
 * them back (rsp_timeline__set_unfold_delay()), for the events later records
 * carry into that time; this lets what is older than that out without
 * waiting for a newer record. Return: the time up to which everything fed
 * has been interpreted.
 */
RSP_API uint64_t rsp_timeline__advance(struct rsp_timeline *tl, uint64_t now);
/*
 * A second: a thread runnable for longer than that before its switch-in
 * (which carries its waking) is rare; such a waking comes from a window
 * whose range ended earlier than the switch-in only when read this far.
 */
#define RSP_TIMELINE_READ_AHEAD_NS 1000000000ull

/**
 * rsp_timeline__learn() - a record before the range: only what rspd's BPF
 * records send once is taken from it (a COMM record's name, given to the
 * thread when the range first shows it; a STACK record's frames, copied),
 * so that a range that starts after a thread was named or a stack was sent
 * still has both. Other records are ignored. Return: 0 or -ENOMEM.
 */
RSP_API int rsp_timeline__learn(struct rsp_timeline *tl, const struct rsp_wentry *e);

/**
 * rsp_timeline__finish() - close everything still open at @end
 *
 * Emits open segments (RSP_SEGF_OPEN), block requests never completed
 * (RSP_BLKF_COMPLETE_NOT_SEEN) and open handler spans are dropped. The
 * timeline accepts no records afterwards.
 */
RSP_API void rsp_timeline__finish(struct rsp_timeline *tl, uint64_t end);

/**
 * rsp_timeline__gap() - records from @from on were never fed (a consumer
 * that fell behind and skipped): every thread's open segment closes at
 * @from (RSP_SEGF_GAP) and it is UNKNOWN until its next switch, as for a
 * PERF_RECORD_LOST on every CPU.
 */
RSP_API void rsp_timeline__gap(struct rsp_timeline *tl, uint64_t from);

/**
 * rsp_timeline__set_max_threads() - track at most @max threads at once
 * (0: no limit). Records that would need one more thread are skipped for
 * that thread (stats.untracked); its sleeps and runs are not emitted. A
 * timeline fed forever bounds its memory so.
 */
RSP_API void rsp_timeline__set_max_threads(struct rsp_timeline *tl, uint32_t max);

/**
 * rsp_timeline__expire() - for a timeline fed forever: emit the block
 * requests issued (or inserted) before @before whose completion was never
 * seen (RSP_BLKF_COMPLETE_NOT_SEEN), forget the threads UNKNOWN since
 * a gap before @before (learnt again at their next record), and the
 * sockets idle since before @before (an open network operation is emitted
 * with RSP_NETF_OPEN) with the addresses last named before then.
 */
RSP_API void rsp_timeline__expire(struct rsp_timeline *tl, uint64_t before);

/**
 * rsp_timeline__set_max_requests() - follow at most @max block requests at
 * once (0: no limit). A request past it is not followed (stats.reqs_refused):
 * it is never emitted and its issue and completion are skipped.
 */
RSP_API void rsp_timeline__set_max_requests(struct rsp_timeline *tl, uint32_t max);

/**
 * rsp_timeline__open_requests() - call @fn for every block request in
 * flight (inserted or issued, not yet emitted); the request is valid
 * during the call only.
 */
RSP_API void rsp_timeline__open_requests(const struct rsp_timeline *tl,
					 void (*fn)(void *ctx, const struct rsp_block_req *r),
					 void *ctx);

/** rsp_timeline__stats() - counters so far. */
RSP_API void rsp_timeline__stats(const struct rsp_timeline *tl, struct rsp_timeline_stats *st);

/**
 * rsp_timeline__counters() - the counters themselves, updated by every
 * feed: for a caller that reads a few of them per record (no copy). Owned
 * by @tl; read them on the feeding thread only.
 */
RSP_API const struct rsp_timeline_stats *rsp_timeline__counters(const struct rsp_timeline *tl);

#endif /* RSP_TIMELINE_H */
