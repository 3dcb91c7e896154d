/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SNAPSHOT_H
#define RSP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/ksyms.h>
#include <rsp/samples.h>
#include <rsp/schema.h>
#include <rsp/socktab.h>
#include <rsp/spin.h>
#include <rsp/timeline.h>
#include <rsp/tlstore.h>
#include <rsp/window.h>

/*
 * The recursive snapshot (the Recursive Systemic Profiler's "Recursive
 * Stack Making"): why did process PID take the time it took?
 *
 * Every thread of PID is a root of the base control path and is explained
 * over its life in the range, segment by segment (rsp/timeline.h): a run is
 * running (sampled or not), a runnable stretch is scheduler overhead or a
 * preemption, and a sleep is explained by what ended it. When a thread W
 * ended it, W's own time over the sleep is explained the same way,
 * recursively, as a child of the sleep: the pseudostack "T sleeps in read()
 * <- W runs, or W sleeps in fsync() <- the disk". Clipping W to T's sleep is
 * the paper's triangle rule: of a C that began to sleep before A called B,
 * only the part after A began to wait counts for A.
 *
 * A waker's run fits as a child when it starts no more than fit_ns before
 * the sleep's de-facto start (or T itself woke or forked W to do it: a
 * call) and ends no more than fit_ns after T runs again (or a quarter of
 * what it ran for T before the waking, if more: a hand-off's tail, the
 * return from the waking call into its next wait, grows with a tracer's
 * stack walk there and a VM's noise). The de-facto
 * start merges consecutive sleeps with the same stack, all but the last
 * ended by a timer, separated by less than merge_ns of running: a poll loop
 * is one wait. A waker that does not fit (it went on running: a producer,
 * not a callee) is another control path: the sleep counts as "waiting on
 * other path" and the waker's time over it is explained under a root of
 * its own (its time counts in the total, as parallelism). A sleep ended by
 * another thread of PID is waiting on that thread's own path (a root
 * already).
 *
 * Work PID started is done on its behalf (the paper's total time "with
 * parallelism"): of a thread forked in the range by a thread of PID, or by
 * one of those, and not of PID itself (make's compilers, a shell's
 * pipeline), the time no sleep of the chain explained is explained under
 * a root of its own, from its fork (or the range's start) to its exit (or
 * the range's end). make -j2's second compiler, running beside the first
 * while make waits for the first, counts so.
 *
 * A preemption is involuntary, except while the thread that took the CPU
 * is one the preempted thread woke (or forked) itself: that thread is doing
 * its work (pass on a busy machine: the child woken by the parent's write
 * preempts it), so its running over the stretch is a child of the
 * RUNNABLE node, as a waker's is of a sleep.
 *
 * The time of every node is split into categories (the paper's table
 * "Categories of Explanation", plus deliberate sleeps apart from other
 * timeouts): see enum rsp_cat. Nothing is invented: time with no
 * evidence is unknown, and time resting on an inference (a waker this
 * kernel did not deliver, a switch from idle it did not deliver) is counted
 * in inferred_ns as well as in its category.
 */

enum rsp_cat {
	RSP_CAT_UNDERSTOOD,  /* running, in a run with cpu-clock samples */
	RSP_CAT_SPIN,	     /* running, its samples in a known spin loop (rsp/spin.h) */
	RSP_CAT_BLOCKING_IO, /* a sleep a disk ended, while a request was in the device */
	RSP_CAT_NOT_SAMPLED, /* running, in a run no sample fell in */
	RSP_CAT_IO_QUEUE,    /* such a sleep while its requests were only queued */
	RSP_CAT_SCHEDULER,   /* woken, waiting for a CPU */
	RSP_CAT_HARDWARE,    /* a sleep an irq (not disk, network or timer) ended */
	RSP_CAT_INVOLUNTARY, /* preempted, waiting for a CPU */
	RSP_CAT_MISC_KERNEL, /* a sleep a thread ended whose part rsp cannot follow */
	RSP_CAT_TIMED_OUT,   /* a sleep a timer ended (a timeout) */
	RSP_CAT_DELIBERATE,  /* a sleep a timer ended in nanosleep/clock_nanosleep */
	RSP_CAT_NETWORK,     /* a sleep the network (NET_RX/NET_TX softirq) ended */
	RSP_CAT_OTHER_PATH,  /* waiting on another control path */
	RSP_CAT_UNKNOWN,     /* no evidence: gaps, no data, wakeups not delivered */
	RSP_CAT__NR
};

/** rsp_cat__name() - the stable JSON key ("understood", ...). Static. */
RSP_API const char *rsp_cat__name(enum rsp_cat c);
/** rsp_cat__label() - the table's row ("in understood functions", ...). Static. */
RSP_API const char *rsp_cat__label(enum rsp_cat c);

struct rsp_snapshot_opts {
	long pid;		  /* the process of interest */
	uint64_t from, to;	  /* the range; to 0: the store's whole span */
	uint64_t fit_ns;	  /* 100 us */
	uint64_t merge_ns;	  /* 100 us */
	uint64_t sample_slack_ns; /* 20 us: a sample this late still belongs to the run */
	unsigned max_depth;	  /* 32 threads deep */
	size_t max_nodes;	  /* 200000 */
	size_t max_pieces;	  /* 500000 timed pieces for the chronological view; 0: none */
	/* Inputs of rsp_snapshot__from_window() (NULL: none): sockets older than the
	 * window (rspd's /proc/net table; must outlive the snapshot), and the
	 * symbolizer that repairs sleep stacks (rsp_tlstore__repair_stacks():
	 * libc uprobes stitched under them, DWARF user stacks). */
	const struct rsp_socktab *socks;
	struct rsp_symbolizer *sym;
	/* rsp_snapshot__from_window(): false wakeups, as rsp_tlstore_opts.fwake_ns */
	uint64_t fwake_ns;
	/* Busy waiting: the spin loops (rsp/spin.h; must outlive the snapshot)
	 * whose samples' time is RSP_CAT_SPIN, named through @sym. NULL, or no
	 * @sym: none, every sampled run is understood (the raw view). */
	const struct rsp_spin *spin;
	/* One thread of PID as the root (rspctl merge: the thread that answered
	 * a request on its host), 0: every thread of PID. PID's other threads
	 * are then wakers like any other thread: followed, not other paths. */
	uint32_t tid;
	/* The root threads explained over these spans only (sorted, disjoint,
	 * inside [from, to]; the array is the caller's and is read during
	 * rsp_snapshot__new() only), not over their lives: the answering
	 * thread's times from a request's arrival to its answer. NULL: lives. */
	const struct rsp_snapshot_span *spans;
	size_t nr_spans;
};

/* A span of time [from, to) (struct rsp_snapshot_opts.spans). */
struct rsp_snapshot_span {
	uint64_t from, to;
};

/** rsp_snapshot_opts__init() - the defaults above, for no pid (-1). */
RSP_API void rsp_snapshot_opts__init(struct rsp_snapshot_opts *o);

enum rsp_snode_kind {
	RSP_SN_THREAD,	 /* a thread's time: a root, or what a sleep waited for */
	RSP_SN_RUN,	 /* its running; SAMPLE children when sampled */
	RSP_SN_SAMPLE,	 /* one sampled stack's share of the runs */
	RSP_SN_RUNNABLE, /* woken or preempted, waiting for a CPU; preempted: THREAD
			  * children for what it woke and that took its CPU */
	RSP_SN_SLEEP,	 /* sleeps with one reason, waker and stack */
	RSP_SN_UNKNOWN,	 /* no data (gaps, before it was seen) */
};

#define RSP_SNODE_NONE UINT32_MAX

/*
 * A node of the consolidated pseudostack tree. Siblings with the same key
 * (thread; or kind, reason, waker and stack) are merged, so a node sums
 * every time its pseudostack occurred. Children are listed heaviest first.
 * total_ns = the sum of self_ns + the children's total_ns.
 */
struct rsp_snode {
	uint8_t kind;	/* enum rsp_snode_kind */
	uint8_t reason; /* SLEEP: enum rsp_sleep_reason; RUNNABLE: RSP_SR_PREEMPT if preempted */
	uint8_t waker_kind; /* SLEEP: enum rsp_waker_kind */
	uint8_t spin;	    /* SAMPLE: in a spin loop (opts.spin): its time is RSP_CAT_SPIN */
	uint32_t tid, tgid; /* the thread (of the node or of its THREAD parent); tgid 0 unknown */
	uint32_t waker_id;  /* SLEEP: tid, irq, softirq vector or dev_t, by waker_kind */
	uint32_t parent, first_child, next_sibling; /* RSP_SNODE_NONE when none */
	uint32_t other; /* SLEEP waiting on another path: that path's root, else NONE */
	uint32_t path;	/* control path: 0 is PID's own */
	uint32_t depth; /* 0 for roots */
	uint64_t total_ns;
	uint64_t self_ns[RSP_CAT__NR];
	uint64_t inferred_ns;  /* of self_ns, resting on an inference */
	uint64_t count;	       /* SLEEP: sleeps; RUN: runs; SAMPLE: samples; RUNNABLE: times */
	uint64_t first;	       /* time of the first occurrence (symbols are looked up then) */
	const uint64_t *stack; /* SLEEP: the switch-out callchain; SAMPLE: the sample's */
	uint32_t nr_stack;
	uint32_t samples; /* RUN: samples attached */
	const char *name; /* SLEEP ended by an irq: its name (lives with the store) */
	uint64_t ip;	  /* SAMPLE without a callchain: its ip */
	/* SLEEP ended by a data arrival (on loopback its sender is the waker
	 * thread; else the NIC): the network operation of its first occurrence
	 * (rsp/timeline.h; lives with the store), or NULL. Sleeps on different
	 * sockets are different nodes. */
	const struct rsp_net_op *net;
};

/* A wakeup the chain followed: from waker to wakee (flow arrows). */
struct rsp_slink {
	uint32_t from, to; /* tids */
	uint64_t time;	   /* the waking */
	uint64_t to_time;  /* the wakee runs again */
	bool other_path;   /* the waker is another control path */
};

/*
 * A timed piece of PID's own control path (path 0), as the walk explained
 * it: one stretch of one thread, the chronological view's slice (RSP's
 * flame view). PID's threads' stretches have no parent; the stretches of a
 * waker that explained a sleep have that sleep's piece as parent, those of
 * a thread that did a preempted thread's work its RUNNABLE piece; a child
 * lies inside its parent's [start, end]. Other control paths' time is not
 * nested in PID's and has no pieces. Kept in walk order (a parent before
 * its children), at most opts.max_pieces (then the rest are dropped and
 * __pieces() says so).
 */
struct rsp_spiece {
	uint64_t start, end;
	const struct rsp_segment *seg; /* the store's segment; NULL for time with no data */
	uint32_t tid, tgid;	       /* tgid 0 unknown */
	uint32_t parent;	       /* a piece's index, or RSP_SNODE_NONE */
	uint16_t depth;		       /* 0: a thread of PID */
	uint8_t kind;		       /* enum rsp_snode_kind: RUN, RUNNABLE, SLEEP or UNKNOWN */
	uint8_t inferred;	       /* RUN: running only inferred (RSP_SEGF_RUN_INFERRED, or
					* a switch from idle not delivered) */
};

struct rsp_snapshot_totals {
	uint64_t start, end; /* first and last activity of PID in the range */
	uint64_t wall_ns;    /* end - start */
	uint64_t total_ns;   /* every control path's time: wall time with parallelism */
	uint64_t accounted_ns;
	uint64_t cat_ns[RSP_CAT__NR];
	uint64_t inferred_ns;		   /* accounted time resting on an inference */
	uint64_t unknown_not_delivered_ns; /* of unknown: sleeps whose waking was not delivered */
	uint64_t unknown_gap_ns;	   /* of unknown: lost records */
	size_t nr_threads;		   /* PID's */
	size_t nr_involved;		   /* threads in the chain, PID's included */
	size_t nr_paths;
	uint64_t sleeps_followed;	      /* sleeps explained by their waker's own time */
	uint64_t samples, samples_unattached; /* PID's cpu-clock samples */
	bool truncated;			      /* the depth or node limit cut the chain somewhere */
	/*
	 * The chain's sleep time by where its stacks came from (BPF stacks
	 * cached; rsp/timeline.h RSP_SEGF_STACK_*): served from the cache,
	 * walked as a check of it, and of the checked time, where the cache's
	 * stack or its sleep reason differed.
	 */
	uint64_t sleep_ns, stack_cached_ns, stack_checked_ns, stack_differ_ns, reason_differ_ns;
	uint64_t user_stack_ns; /* of sleep_ns: with a user stack and a known sleep reason */
	struct rsp_tlstore_repair repair; /* what __load() did to sleep stacks (opts.sym) */
};

struct rsp_snapshot;

/**
 * rsp_snapshot__new() - explain @o->pid over a sealed store
 * @store:   full (not RSP_TLSTORE_WAITS_ONLY); must outlive the snapshot
 * @samples: sealed, or NULL (every run is then "not sampled"); must outlive it
 *
 * Return: the snapshot (free with rsp_snapshot__delete()), or NULL with
 * one sentence in @err (-ESRCH in errno: PID did nothing in the range;
 * ENOMEM).
 */
RSP_API struct rsp_snapshot *rsp_snapshot__new(const struct rsp_tlstore *store,
					       const struct rsp_samples *samples,
					       const struct rsp_snapshot_opts *o,
					       struct rsp_buf *err);

/**
 * rsp_snapshot__from_window() - the same from a pinned window, in one pass
 *
 * Loads [@o->from, @o->to] of @snap into a full store with its cpu-clock
 * samples (rsp_tlstore__load(), the one loader), which the snapshot owns.
 * With @o->sym, sleep stacks are repaired first (totals.repair says how
 * many); @o->socks names older sockets. Stacks point into @snap: keep it
 * pinned until rsp_snapshot__delete(). @st: if not NULL, the timeline's
 * counters.
 */
RSP_API struct rsp_snapshot *
rsp_snapshot__from_window(const struct rsp_schema *schema, const struct rsp_wsnap *snap,
			  const struct rsp_ksyms *ks, const struct rsp_snapshot_opts *o,
			  struct rsp_timeline_stats *st, struct rsp_buf *err);

/** rsp_snapshot__delete() - free it (and the store __from_window() built); NULL is fine. */
RSP_API void rsp_snapshot__delete(struct rsp_snapshot *s);

RSP_API const struct rsp_snapshot_totals *rsp_snapshot__totals(const struct rsp_snapshot *s);

RSP_API size_t rsp_snapshot__nr_nodes(const struct rsp_snapshot *s);
RSP_API const struct rsp_snode *rsp_snapshot__node(const struct rsp_snapshot *s, uint32_t i);

/** The roots: PID's threads (path 0) first, then other paths; heaviest first within. */
RSP_API size_t rsp_snapshot__nr_roots(const struct rsp_snapshot *s);
RSP_API uint32_t rsp_snapshot__root(const struct rsp_snapshot *s, size_t i);

/** rsp_snapshot__links() - the wakeups the chain followed, in time order. */
RSP_API const struct rsp_slink *rsp_snapshot__links(const struct rsp_snapshot *s, size_t *n);

/**
 * rsp_snapshot__pieces() - PID's path as timed pieces (struct rsp_spiece), in walk order
 * @truncated: set when opts.max_pieces dropped some (may be NULL)
 *
 * The array lives with the snapshot.
 */
RSP_API const struct rsp_spiece *rsp_snapshot__pieces(const struct rsp_snapshot *s, size_t *n,
						      bool *truncated);

/** rsp_snapshot__threads() - the tids in the chain, ascending. */
RSP_API const uint32_t *rsp_snapshot__threads(const struct rsp_snapshot *s, size_t *n);

/** rsp_snapshot__store() - the store it explains (its own after __load()). */
RSP_API const struct rsp_tlstore *rsp_snapshot__store(const struct rsp_snapshot *s);
RSP_API const struct rsp_samples *rsp_snapshot__samples(const struct rsp_snapshot *s);

#endif /* RSP_SNAPSHOT_H */
