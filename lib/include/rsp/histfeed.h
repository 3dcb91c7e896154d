/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_HISTFEED_H
#define RSP_HISTFEED_H

#include <stdint.h>
#include <rsp/api.h>
#include <rsp/hist.h>
#include <rsp/ksyms.h>
#include <rsp/schema.h>
#include <rsp/window.h>

/*
 * The record feed of the latency profiles: turns the record stream, in
 * time order across CPUs (a window iterator's order), into latencies.
 * rspd runs one in its analysis thread, over every record exactly once;
 * offline, a dump's records go through the same code to rebuild the
 * histograms.
 *
 * Straight from records:
 *   irq:NAME     irq_handler_entry -> irq_handler_exit on the same CPU
 *   softirq:VEC  softirq_entry -> softirq_exit on the same CPU
 *   blk_queue    block_rq_insert -> block_rq_issue, by device and sector
 *   blk_service  block_rq_issue -> block_rq_complete, by device and sector
 * Handlers do not nest on a CPU and a context switch cannot happen inside
 * one, so an entry still open at the next entry, at a switch or at a gap
 * (lost records) lost its exit: it is counted as incomplete for its op,
 * never measured. A request issued twice without a completion in between
 * (a flush to the same sector, or a requeue) counts the first issue as
 * incomplete; an issue without an insert has no queue time; a completion
 * without an issue is skipped. Block requests are attributed to the
 * process and thread that inserted them (or issued them, when no insert
 * was seen): the record's pid/tid, which is the submitter most of the time
 * but may be a kworker that dispatched the queue.
 *
 * This kernel does not emit block_rq_complete (nor irq samples) for an
 * interrupt that hits an idle CPU. A request whose completion has not
 * arrived io_timeout_ns after its issue is expired and counted as
 * "without an observed completion" (rsp_hist_store__note_incomplete); the
 * requests still waiting are published as open. So for every device,
 * observed completions + without completion + open = requests issued.
 *
 * From the timeline (lib/timeline/timeline.c), which the feed runs over the same
 * records when given a schema (rsp_histfeed_config.schema):
 *   offcpu:REASON  a sleep: switch-out -> the wakeup, by the reason the
 *                  timeline gives it (kernel stack, prev_state); when the
 *                  wakeup was not observed (this kernel drops those from
 *                  interrupts on an idle CPU), switch-out -> the thread's
 *                  next run, counted as "inferred" (an upper bound)
 *   offcpu:preemption  switched out still runnable -> back on a CPU
 *   runq           woken (or created) -> on a CPU
 * So sleeps + run-queue waits + preemptions tile a thread's time off CPU.
 * A wait for a CPU whose switch-in was not observed (a thread woken onto
 * an idle CPU is seen only by its first record there) has no measured end:
 * it is counted as incomplete for its op, never measured. Segments cut by
 * lost records, or begun before the stream, are not latencies and are
 * skipped. Each latency goes to the system, the thread and its process
 * (when the timeline knows the process; else the system only).
 *
 * rsp_histfeed__offcpu() and rsp_histfeed__runq() record such latencies
 * directly (tests, or another source of segments).
 */
struct rsp_histfeed;

struct rsp_histfeed_config {
	unsigned shard;		/* the store shard this feed writes (one per thread) */
	unsigned nr_cpus;	/* CPU numbers in the stream are below this */
	uint64_t io_timeout_ns; /* 0: 10 s */
	unsigned max_requests;	/* block requests tracked at once; 0: 65536 */
	/*
	 * The off-CPU and run-queue profiles: the records' schema (it must
	 * outlive the feed and be the one passed to rsp_histfeed__record()),
	 * NULL for none; kernel symbols for sleep reasons (NULL: reasons from
	 * prev_state only, every real sleep "unknown"); threads followed at
	 * once (0: 32768).
	 */
	const struct rsp_schema *schema;
	const struct rsp_ksyms *ksyms;
	unsigned max_threads;
};

#define RSP_HISTFEED_MAX_THREADS 32768

#define RSP_HISTFEED_IO_TIMEOUT_NS 10000000000ull

struct rsp_histfeed_stats {
	uint64_t records;	 /* records seen */
	uint64_t used;		 /* records that opened or closed a measurement */
	uint64_t latencies;	 /* latencies recorded */
	uint64_t irq_exit_alone; /* irq exits with no open entry (entry not sent) */
	uint64_t irq_lost_exit;	 /* irq entries whose exit never came */
	uint64_t softirq_exit_alone;
	uint64_t softirq_lost_exit;
	uint64_t blk_complete_alone; /* completions with no issue seen */
	uint64_t blk_no_completion;  /* issued, expired or superseded without completion */
	uint64_t blk_never_issued;   /* inserted, never issued (merged, or insert reused) */
	uint64_t blk_table_full;     /* requests not tracked: max_requests reached */
	uint64_t blk_open;	     /* issued, completion not yet seen */
	uint64_t lost;		     /* PERF_RECORD_LOST records (gaps in a CPU's stream) */
	uint64_t gaps;		     /* rsp_histfeed__gap() calls */
	/* the timeline's part */
	uint64_t sleeps;	  /* offcpu latencies (sleeps and preemptions) */
	uint64_t sleeps_inferred; /* of which the end was inferred (wakeup not seen) */
	uint64_t runq;		  /* run-queue latencies */
	uint64_t switch_not_seen; /* runnable waits with no observed switch-in */
	/*
	 * What capture did not deliver, as the timeline infers it from the
	 * records around it (the perf backend misses tracepoint samples the
	 * kernel fires in interrupts on an idle CPU; rspctl status shows them):
	 * of the switch records fed, runs ended by another task's record (their
	 * switch-out not delivered), switch-ins inferred from a thread's first
	 * record, and sleeps that ended with no waking seen.
	 */
	uint64_t tl_switches, tl_switch_outs_not_seen, tl_switch_ins_not_seen, tl_wakings_not_seen;
	uint64_t segments_skipped;   /* cut by lost records, or begun before the stream */
	uint64_t no_process;	     /* latencies of threads whose process was unknown */
	uint64_t threads_untracked;  /* records about threads past max_threads */
	uint64_t timeline_malformed; /* records the timeline could not decode */
	/*
	 * Sleep time (the sleeps profiled) by where its stack came from: served
	 * from the BPF stack cache, walked as a check of the cache, and of the
	 * checked time the part where the cache's stack or the sleep reason it
	 * gives differed (rsp/timeline.h, RSP_SEGF_STACK_*).
	 */
	uint64_t sleep_ns, cached_ns, checked_ns, stack_differ_ns, reason_differ_ns;
};

/**
 * rsp_histfeed__new() - a feed writing into @st's shard cfg->shard
 * Return: the feed (free with rsp_histfeed__delete()), or NULL (errno
 * EINVAL for a bad shard or nr_cpus 0, ENOMEM).
 */
RSP_API struct rsp_histfeed *rsp_histfeed__new(struct rsp_hist_store *st,
					       const struct rsp_histfeed_config *cfg);
/** rsp_histfeed__delete() - free the feed (the store keeps what it recorded). NULL is fine. */
RSP_API void rsp_histfeed__delete(struct rsp_histfeed *f);

/**
 * rsp_histfeed__record() - feed one record
 * @s: the stream's schema; @e: the record (from a window iterator)
 *
 * Records must come in time order across CPUs. Cheap for records it does
 * not use (an id lookup); no allocation. Return: 1 if the record was
 * used, 0 if not, -EINVAL for a malformed record (skipped).
 */
RSP_API int rsp_histfeed__record(struct rsp_histfeed *f, const struct rsp_schema *s,
				 const struct rsp_wentry *e);

/**
 * rsp_histfeed__advance() - every record up to @now was fed
 * (rsp_timeline__advance()). Return: the time up to which the profiles hold
 * what was fed.
 */
RSP_API uint64_t rsp_histfeed__advance(struct rsp_histfeed *f, uint64_t now);

/**
 * rsp_histfeed__gap() - records in [@from, @to] will never be fed
 * (evicted before the feed read them): forget every open irq/softirq span,
 * make every thread's state unknown (rsp_timeline__gap()), note the gap in
 * the store. Block requests stay open (their completion may still come,
 * or they expire).
 */
RSP_API void rsp_histfeed__gap(struct rsp_histfeed *f, uint64_t from, uint64_t to,
			       uint64_t records);

/**
 * rsp_histfeed__expire() - expire block requests older than the timeout
 * at time @now and publish the open counts (the timeline's too). The feed
 * does this by itself once a second of record time; call it with
 * UINT64_MAX at the end of a dump to close everything (then feed no more).
 */
RSP_API void rsp_histfeed__expire(struct rsp_histfeed *f, uint64_t now);

/** rsp_histfeed__offcpu() - a sleep of @ns ending at @end, for the timeline. 0 or -ENOSPC. */
RSP_API int rsp_histfeed__offcpu(struct rsp_histfeed *f, enum rsp_sleep_reason reason,
				 const struct rsp_hist_who *who, uint64_t end, uint64_t ns);
/** rsp_histfeed__runq() - run-queue latency (woken -> on CPU) of @ns ending at @end. */
RSP_API int rsp_histfeed__runq(struct rsp_histfeed *f, const struct rsp_hist_who *who, uint64_t end,
			       uint64_t ns);

/** rsp_histfeed__stats() - the feed's counters (any thread: relaxed atomic reads). */
RSP_API void rsp_histfeed__stats(const struct rsp_histfeed *f, struct rsp_histfeed_stats *out);

/**
 * rsp_histfeed__window_store() - the profiles of every record of @w (in
 * time order, as rspd's analysis thread computes them live), in a new store
 * with slices over the whole window (1 s, longer past an hour) and no
 * eviction: what `rspctl analyze FILE hist` answers from.
 * Return: 0, or -ENODATA/-ENOMEM with one sentence in @err.
 */
RSP_API int rsp_histfeed__window_store(struct rsp_window *w, const struct rsp_schema *schema,
				       const struct rsp_ksyms *ksyms, struct rsp_hist_store **out,
				       struct rsp_buf *err);

#endif /* RSP_HISTFEED_H */
