/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SNAPEXPORT_H
#define RSP_INTERNAL_SNAPEXPORT_H

#include <rsp/buf.h>
#include "internal/snapnames.h"

/*
 * The snapshot as files (lib/format/snapshot_folded.c, snapshot_export.c), carried in the answer
 * for the client to write (rsp/answer.h):
 *
 * folded  one line per pseudostack, root first, frames separated by ';',
 *         then a space and its time in microseconds (FlameGraph's and
 *         speedscope's input):
 *           comm (pid P);main;read;ksys_read_[k];[sleep:pipe];comm (pid Q);main;spin 990
 *         a thread is a frame "comm (pid P)" or "comm T (pid P)"; kernel
 *         frames end in "_[k]"; markers in brackets: [sleep:REASON] ends a
 *         sleeper's stack (what it waited for is above it), [running, not
 *         sampled], [runnable], [preempted] (what preempted it, when it
 *         works for it, is above it), [disk 8:0], [timer], [irq N],
 *         [network], [other path: ...], [unknown].
 * chrome  the process running view in the Trace Event format (Perfetto,
 *         chrome://tracing): one track per thread in the chain, an "X"
 *         slice per run, runnable stretch and sleep, "M" names for
 *         processes and threads, "s"/"f" flow arrows for the wakeups the
 *         chain followed. Times in microseconds from the snapshot's start.
 *         Beside them, per thread of PID, a track "pseudostacks of THREAD"
 *         (tid RSP_CHRONO_TRACK + the thread's tid) with the chrono slices
 *         below as nested "X" slices (cat "chrono"; args: kind, tid, depth):
 *         the chronological flame view, at most RSP_CHRONO_TRACE_SLICES
 *         (otherData.truncated is true when they or the events were cut).
 */
#define RSP_CHRONO_TRACK	0x40000000u /* above any tid (pid_max is at most 2^22) */
#define RSP_CHRONO_TRACE_SLICES 100000
int rsp_snapexport__folded(struct snapnames *n, struct rsp_buf *out);
/*
 * The marker of node @x's own time in category @c (enum rsp_cat), as the
 * folded stacks end it: "[running, not sampled]", "[disk 8:0 queue]", ...
 * Into @buf; returns it.
 */
char *rsp_snapexport__marker(struct snapnames *n, const struct rsp_snode *x, int c, char *buf,
			     size_t size);

/*
 * pprof   the consolidated view as a pprof profile (lib/format/snapshot_pprof.c,
 *         internal/pprof.h): sample types wait/nanoseconds and
 *         cpu/nanoseconds, one sample per pseudostack (the folded stacks'
 *         frames, leaf first: a thread is a frame "comm (pid P)", markers
 *         are frames of their own; stack frames have their addresses,
 *         objects and build-ids) and labels: reason (what the thread of
 *         PID at the chain's root was doing: its sleep's reason, "running",
 *         "runnable", "preempted", "unknown"), waker (who ended that sleep),
 *         thread and process (of the time's own thread, named as the
 *         requester may see it), cgroup (where known and visible),
 *         category (rsp_cat__name()) and depth (threads down the chain, a
 *         number). wait: the time PID's threads did not run (all the
 *         time below depth 0); cpu: the running in it (of every thread).
 *         @meta: the caller's (its duration, time); 0 or -ENOMEM.
 */
struct rsp_pprof_meta;
int rsp_snapexport__pprof(struct snapnames *n, struct rsp_pprof_meta *meta, struct rsp_buf *out);

/*
 * chrono  the pid's pseudostacks on a time axis (RSP's flame view,
 *         speedscope's "time order"; lib/format/snapshot_chrono.c), one
 *         JSON object:
 *           {"unit":"ns","start_ns":S,"end_ns":E,"pid":P,"truncated":false,
 *            "max_slices":M,"slices":[{"depth":0,"start":0,"end":1500,
 *            "name":"sleep pipe: read","kind":"other","tid":T}, ...]}
 *         start_ns/end_ns are absolute (CLOCK_MONOTONIC), a slice's
 *         start/end are ns from start_ns. Depth 0: the stretches of PID's
 *         threads (running, runnable or preempted, a sleep with its reason,
 *         unknown); a sleep's children are the stretches of the waker that
 *         explained it, a preempted stretch's those of the thread doing its
 *         work, recursively as the snapshot's chain nests them (other
 *         control paths are not nested: they are their own roots in the
 *         consolidated view). Every child lies inside its parent's
 *         [start, end]. Names: "running", "running (inferred)", "runnable",
 *         "preempted", "sleep REASON[: user function]", "unknown"; below
 *         depth 0 prefixed with the thread, "comm (pid P): running".
 *         Kinds (enum rsp_chrono_kind): running; runnable (woken or
 *         preempted, waiting for a CPU); a sleep by its reason: block_io,
 *         network, lock (futex), timer (timeouts and nanosleep); a sleep
 *         whose reason is poll, pipe, page fault or unknown by what ended
 *         it: a disk or the BLOCK softirq block_io, a network arrival or
 *         NET_RX/NET_TX network, a timer timer, a thread or irq other, not
 *         known unknown (other if its reason was known); time with no data
 *         unknown. Sorted by (start, depth). At most @max_slices slices:
 *         beyond, the shallowest are kept, and of one depth the longest,
 *         so every kept slice's parent is kept; "truncated" is true then,
 *         or when the snapshot itself kept no more pieces
 *         (rsp_snapshot_opts.max_pieces).
 *
 * Returns 0 or a negative errno (out of memory).
 */
int rsp_snapexport__chrono(struct snapnames *n, size_t max_slices, struct rsp_buf *out);

/*
 * speedscope  speedscope's file format (internal/speedscope.h): one
 *         "evented" profile per thread of PID, its chronological nest (the
 *         chrono slices above, at most @max_slices in all, chosen the same
 *         way; times in ns from the snapshot's start), then one "sampled"
 *         profile of the consolidated view (the folded stacks, weights in
 *         microseconds). When slices were cut, the file's name says
 *         "(chronological view truncated: K of N slices)" ("N+" when the
 *         snapshot kept no more pieces). Returns 0 or a negative errno.
 */
int rsp_snapexport__speedscope(struct snapnames *n, size_t max_slices, struct rsp_buf *out);

enum rsp_chrono_kind {
	RSP_CK_RUNNING,
	RSP_CK_RUNNABLE,
	RSP_CK_BLOCK_IO,
	RSP_CK_NETWORK,
	RSP_CK_LOCK,
	RSP_CK_TIMER,
	RSP_CK_OTHER,
	RSP_CK_UNKNOWN,
	RSP_CK__NR
};

/* The kind of piece @p (above) and its name, "running", ... (static). */
enum rsp_chrono_kind rsp_chrono__kind(const struct rsp_spiece *p);
const char *rsp_chrono_kind__name(enum rsp_chrono_kind k);
/* The slice name of @p (above), into @buf. */
char *rsp_chrono__name(struct snapnames *n, const struct rsp_spiece *p, char *buf, size_t size);
/*
 * The pieces to show, at most @max, by the rule above, as indexes into @v
 * in (start, depth) order: *@out is malloc'ed, the caller frees it.
 * 0 or -ENOMEM.
 */
int rsp_chrono__select(const struct rsp_spiece *v, size_t nv, size_t max, uint32_t **out,
		       size_t *nout);
/*
 * Per piece of @v, the thread of PID whose nest it is in (a piece of
 * depth 0: its own): malloc'ed, the caller frees it; NULL on ENOMEM.
 */
uint32_t *rsp_chrono__root_tids(const struct rsp_spiece *v, size_t nv);
/*
 * The threads of PID whose nests have pieces among @keep (@nk of them,
 * indexes into @v): ascending, unique, into @out (room for @nk). Returns
 * how many.
 */
size_t rsp_chrono__nest_tids(const struct rsp_spiece *v, const uint32_t *keep, size_t nk,
			     uint32_t *out);
int rsp_snapexport__chrome(struct snapnames *n, struct rsp_buf *out);

#endif
