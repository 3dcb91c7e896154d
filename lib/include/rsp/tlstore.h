/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_TLSTORE_H
#define RSP_TLSTORE_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/ksyms.h>
#include <rsp/schema.h>
#include <rsp/timeline.h>
#include <rsp/window.h>

/*
 * The timeline store: what a timeline emitted over a window, kept for
 * queries (the wait-for graph, the recursive snapshot). Per thread, its
 * segments in time order (tiling its observed life); all links sorted by
 * time; all block requests sorted by issue time.
 *
 * Lifetimes. Everything returned points into the store and lives until
 * rsp_tlstore__delete(). Stacks inside segments (rsp_segment.stack,
 * rsp_waker.stack) point into the records themselves: rsp_tlstore__load()
 * builds with RSP_TL_RECORDS_STABLE, so they stay valid only while the
 * snapshot it read stays pinned. Free the store before unpinning, or copy
 * the stacks you keep. Irq names live as long as the timeline that
 * produced them: __load() keeps that timeline inside the store.
 *
 * Threads are keyed by tid; a tid reused inside one window (a thread exits
 * and the kernel hands its id to a new one) appears as one thread whose
 * segments carry both lives, and its comm is the last one seen.
 *
 * Lookups: thread by tid is a hash lookup; "the segment of T covering t"
 * and "the run of the waker at the waking" are binary searches.
 */
struct rsp_tlstore;

struct rsp_tlthread {
	uint32_t tid, tgid; /* tgid 0 if never learnt */
	char comm[16];
	uint32_t parent; /* tid of the thread that forked it, if seen; else 0 */
	uint32_t pad;
	uint64_t forked;      /* time of its fork, 0 if not in the stream */
	uint64_t exited;      /* end of its last run if it exited, else 0 */
	uint64_t first, last; /* the span its segments cover */
	uint64_t run_ns, runnable_ns, sleep_ns, unknown_ns;
	uint64_t run_inferred_ns;	/* RUN flagged RSP_SEGF_RUN_INFERRED: not in run_ns */
	const struct rsp_segment *segs; /* time order */
	size_t nr_segs;
};

/*
 * rsp_tlstore__new() flags. RSP_TLSTORE_WAITS_ONLY keeps, per thread, only
 * the sleeps whose waker is known (what the wait-for graph reads) and the
 * per-thread totals: a third of the memory and time. Lookups by time then
 * see only those sleeps.
 */
#define RSP_TLSTORE_WAITS_ONLY 0x1u
/*
 * RSP_TLSTORE_NO_LINKS keeps no links (rsp_tlstore__links() has none; a
 * fork still sets the child's parent and forked): one per waking, which
 * the wait-for graph does not read.
 */
#define RSP_TLSTORE_NO_LINKS 0x2u
/* RSP_TLSTORE_SAMPLES also indexes the range's cpu-clock samples (rsp_tlstore__samples()). */
#define RSP_TLSTORE_SAMPLES 0x4u
/*
 * RSP_TLSTORE_STACK_HASHES hashes each kept sleep's stack and its waker's
 * as the sleep is stored (rsp_segment.stack_hash, rsp_waker.stack_hash),
 * when the records holding them were just read: the wait-for graph tells
 * stacks apart by them, and hashing them later read each one again from
 * wherever it lies in a dump (a TLB and cache miss per stack).
 */
#define RSP_TLSTORE_STACK_HASHES 0x8u

/**
 * rsp_tlstore__new() - an empty store
 * @flags: RSP_TLSTORE_*
 * Return: the store or NULL (ENOMEM). Free with rsp_tlstore__delete().
 */
RSP_API struct rsp_tlstore *rsp_tlstore__new(unsigned flags);
RSP_API void rsp_tlstore__delete(struct rsp_tlstore *s);

/**
 * rsp_tlstore__ops() - callbacks that fill @s; pass @s as the timeline's ctx
 *
 * For a caller that drives its own timeline; call rsp_tlstore__seal() after
 * rsp_timeline__finish(). A failed allocation inside a callback is
 * remembered and reported by __seal().
 */
RSP_API void rsp_tlstore__ops(struct rsp_timeline_ops *ops);

/**
 * rsp_tlstore__seal() - sort and index what was fed; no more callbacks
 * @start, @end: the window the stream covered
 *
 * Return: 0, or -ENOMEM if any callback or the indexing ran out of memory.
 */
RSP_API int rsp_tlstore__seal(struct rsp_tlstore *s, uint64_t start, uint64_t end);

/* What rsp_tlstore__load() reads with; zero it, then set what you have. */
struct rsp_tlstore_opts {
	uint64_t from, to;		 /* the range of the window; to 0: to its end */
	const struct rsp_ksyms *ksyms;	 /* sleep reasons; NULL: none */
	const struct rsp_socktab *socks; /* sockets older than the window (rspd's /proc table);
					    must outlive the store; NULL: none */
	/* merge suspected false wakeups: the longest run after one
	 * (rsp_tlstore__set_fwake()); 0: none, every wakeup as recorded */
	uint64_t fwake_ns;
};

/* What a false wakeup runs at most by default: a condition check and a futex call. */
#define RSP_FWAKE_DEFAULT_NS 150000ull

/**
 * rsp_tlstore__set_fwake() - merge suspected false wakeups as segments arrive
 * @max_run_ns: the longest run of a woken thread that then sleeps again at
 *              the same place; 0 (a new store's default) merges none
 *
 * Before the store keeps a thread's segments, a sleep ended by a thread
 * or by a waking not seen (a futex or kernel lock wait) after which the thread ran at most
 * @max_run_ns in all, taking back at most the lock of the same kind, and
 * slept again at the same place (reason and user stack) is a suspected
 * false wakeup (wPerf 4.1, found without its annotations): the two sleeps
 * and what lay between become one sleep whose waker is the later one's,
 * its waker.nr_false counting the wakeups merged. Every analysis reading
 * the store (the wait-for graph, the snapshot) sees the merged sleep. A
 * real wakeup whose work is shorter than @max_run_ns and that waits again
 * where it waited is taken for a false one. Set before feeding;
 * rsp_tlstore__load() sets it from its options.
 */
RSP_API void rsp_tlstore__set_fwake(struct rsp_tlstore *s, uint64_t max_run_ns);

/**
 * rsp_tlstore__fwake_stats() - false wakeups merged so far: how many, and
 * the run time folded into sleeps by them.
 */
RSP_API void rsp_tlstore__fwake_stats(const struct rsp_tlstore *s, uint64_t *merged,
				      uint64_t *run_ns);

/**
 * rsp_tlstore__load() - fill an empty store from a pinned window range
 * @snap: pinned by the caller, and kept pinned while the store's stacks
 *        (and samples' callchains) are used
 * @st:   if not NULL, the timeline's counters
 *
 * The one loader of every analysis: one pass (rsp/pass.h) through the
 * timeline, whose callbacks fill the store (and its sample index with
 * RSP_TLSTORE_SAMPLES), then rsp_tlstore__seal(). The store keeps the
 * timeline (irq names, the window's socket table).
 *
 * Return: 0, or -ENOMEM with one sentence in @err.
 */
RSP_API int rsp_tlstore__load(struct rsp_tlstore *s, const struct rsp_schema *schema,
			      const struct rsp_wsnap *snap, const struct rsp_tlstore_opts *o,
			      struct rsp_timeline_stats *st, struct rsp_buf *err);

/**
 * rsp_tlstore__from_window() - rsp_tlstore__new(@flags) and __load()
 * Return: the store (free with rsp_tlstore__delete()), or NULL with one
 * sentence in @err.
 */
RSP_API struct rsp_tlstore *
rsp_tlstore__from_window(unsigned flags, const struct rsp_schema *schema,
			 const struct rsp_wsnap *snap, const struct rsp_tlstore_opts *o,
			 struct rsp_timeline_stats *st, struct rsp_buf *err);

/**
 * rsp_tlstore__samples() - the cpu-clock samples of the range, indexed
 * (RSP_TLSTORE_SAMPLES); NULL without.
 */
RSP_API const struct rsp_samples *rsp_tlstore__samples(const struct rsp_tlstore *s);

/** rsp_tlstore__span() - the window the store covers. */
RSP_API void rsp_tlstore__span(const struct rsp_tlstore *s, uint64_t *start, uint64_t *end);

RSP_API size_t rsp_tlstore__nr_threads(const struct rsp_tlstore *s);
/** rsp_tlstore__thread() - thread @i (0 .. nr-1, in order of first sight). */
RSP_API const struct rsp_tlthread *rsp_tlstore__thread(const struct rsp_tlstore *s, size_t i);
/** rsp_tlstore__find_thread() - by tid, or NULL. */
RSP_API const struct rsp_tlthread *rsp_tlstore__find_thread(const struct rsp_tlstore *s,
							    uint32_t tid);

/**
 * rsp_tlstore__segment_at() - the segment of @tid covering @t
 *
 * The segment with start <= @t < end; at a boundary the later one. Return:
 * the segment or NULL (no such thread, or @t outside its observed span).
 */
RSP_API const struct rsp_segment *rsp_tlstore__segment_at(const struct rsp_tlstore *s, uint32_t tid,
							  uint64_t t);

/**
 * rsp_tlstore__waker_run() - the run of the thread that ended @sleep
 *
 * For a sleep whose waker is a thread, the RUN segment of the waker that
 * contains the waking (a waking at the very end of a run belongs to it).
 * Return: the run, or NULL (not a thread waker, or the waker's run is not
 * in the store).
 */
RSP_API const struct rsp_segment *rsp_tlstore__waker_run(const struct rsp_tlstore *s,
							 const struct rsp_segment *sleep);

/** rsp_tlstore__next_run() - the first RUN of @tid starting at or after @t, or NULL. */
RSP_API const struct rsp_segment *rsp_tlstore__next_run(const struct rsp_tlstore *s, uint32_t tid,
							uint64_t t);

/** rsp_tlstore__links() - every link, sorted by time; *n set to the count. */
RSP_API const struct rsp_link *rsp_tlstore__links(const struct rsp_tlstore *s, size_t *n);

/** rsp_tlstore__block_reqs() - every block request, sorted by issue time. */
RSP_API const struct rsp_block_req *rsp_tlstore__block_reqs(const struct rsp_tlstore *s, size_t *n);
/** rsp_tlstore__block_req() - a request by id, or NULL. */
RSP_API const struct rsp_block_req *rsp_tlstore__block_req(const struct rsp_tlstore *s,
							   uint64_t id);

/*
 * Lookups of a full store (not RSP_TLSTORE_WAITS_ONLY), indexed when it is
 * sealed.
 */

/** rsp_tlstore__last_run_end() - the latest end of a run on @cpu at or before @t; 0: none. */
RSP_API uint64_t rsp_tlstore__last_run_end(const struct rsp_tlstore *s, uint32_t cpu, uint64_t t);

/**
 * rsp_tlstore__reqs_of() - the block requests @tid issued (struct
 * rsp_block_req.tid), by insert time; *@n set to the count. Owned by @s.
 */
RSP_API const struct rsp_block_req *const *rsp_tlstore__reqs_of(const struct rsp_tlstore *s,
								uint32_t tid, size_t *n);

/* A wakeup or fork a thread did: when, by whom (the waker), of whom. */
struct rsp_wake {
	uint64_t time;
	uint32_t waker, tid;
};

/** rsp_tlstore__wakes_by() - the wakeups and forks @tid did, by time; owned by @s. */
RSP_API const struct rsp_wake *rsp_tlstore__wakes_by(const struct rsp_tlstore *s, uint32_t tid,
						     size_t *n);

struct rsp_symbolizer;

struct rsp_tlstore_repair {
	uint64_t candidates; /* sleeps with a record to repair their stack from */
	uint64_t stitched;   /* a uprobe's stack stitched under the sleep's */
	uint64_t dwarf;	     /* of those and the rest, user frames by DWARF */
	uint64_t not_inside; /* the sleep's stack was not in the probed function */
};

/**
 * rsp_tlstore__repair_stacks() - better user stacks for sleeps, at query time
 * @s:      filled by __load() (records pinned, urec set)
 * @schema: decodes the records
 * @sym:    names functions and finds objects for DWARF unwinding
 * @st:     if not NULL, what was done
 *
 * For each sleep with a urec (struct rsp_segment): when it is a uprobe of
 * the libc function the sleep's user stack is in (the sleep's first user
 * frame lies in that function, which a frame-pointer walk cannot get out
 * of when libc or its callers keep no frame pointer), the sleep's stack
 * becomes its kernel part, that first user frame, and the callers the
 * uprobe saw at the function's entry, unwound by DWARF when the uprobe
 * copied the stack, else its frame-pointer callchain (the RSP paper's
 * stitching; RSP_SEGF_STACK_STITCHED). When urec is the switch-out
 * itself, its user part is unwound by DWARF. RSP_SEGF_STACK_DWARF says
 * DWARF was used. New stacks live in the store.
 * Return: 0 or -ENOMEM (stacks repaired so far stay).
 */
RSP_API int rsp_tlstore__repair_stacks(struct rsp_tlstore *s, const struct rsp_schema *schema,
				       struct rsp_symbolizer *sym, struct rsp_tlstore_repair *st);

/**
 * rsp_tlstore__net_ops() - every network operation (struct rsp_net_op),
 * sorted by end time; kept also under RSP_TLSTORE_WAITS_ONLY.
 */
RSP_API const struct rsp_net_op *rsp_tlstore__net_ops(const struct rsp_tlstore *s, size_t *n);

/**
 * rsp_tlstore__net_op_of() - the network operation whose receive wakeup
 * ended @sleep (a sleep whose waker has RSP_WAKERF_NET), or NULL.
 */
RSP_API const struct rsp_net_op *rsp_tlstore__net_op_of(const struct rsp_tlstore *s,
							const struct rsp_segment *sleep);

#endif /* RSP_TLSTORE_H */
