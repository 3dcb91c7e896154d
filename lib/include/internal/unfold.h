/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The unfolder: a window's records in time order as they go in, with what
 * rsp's folded BPF records (tracepoints/bpf_records.h, layout 3) stand for
 * put back at its own time, so that readers see the events of layout 2: a
 * waking before the switch-in that carries it, a request's insert and
 * issue before its completion, a handler's entry before what it did.
 *
 * A folded record comes after the events it carries (a switch-in after
 * its waking, by the time its wakee waited for a CPU), so records are
 * held RSP_UNFOLD_DELAY_NS behind the newest one pushed before they come
 * out: a carried event at most that old goes out in its place. One
 * carried from further back (a thread runnable for longer) goes out as
 * soon as it is pushed, late; the timeline reads a late waking of a
 * thread that has slept again since as stale.
 *
 * Records in time order go through a FIFO (O(1) each), the carried events,
 * fewer and out of order, through a heap. Memory is bounded: at most
 * RSP_UNFOLD_MAX_HELD records are held per RSP_UNFOLD_DELAY_NS of delay,
 * the oldest going out early when more come.
 */
#ifndef RSP_INTERNAL_UNFOLD_H
#define RSP_INTERNAL_UNFOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/window.h>

#define RSP_UNFOLD_DELAY_NS 100000000ull /* 100 ms */
#define RSP_UNFOLD_MAX_HELD 65536u

struct rsp_unfold;

/*
 * rsp_unfold__new() - an empty unfolder
 * @copy: the records pushed do not outlive the push (a live stream read
 *        in passes): they are copied; else only their addresses are kept
 *
 * Return: NULL on ENOMEM. Free with rsp_unfold__delete().
 */
struct rsp_unfold *rsp_unfold__new(bool copy);
void rsp_unfold__delete(struct rsp_unfold *u);

/*
 * rsp_unfold__set_delay() - hold records @ns instead of RSP_UNFOLD_DELAY_NS
 * (a dump, whose reader, perf, wants every record in its place: a second).
 */
void rsp_unfold__set_delay(struct rsp_unfold *u, uint64_t ns);

/*
 * rsp_unfold__set_range() - what comes out is in [@from, @to]: carried
 * events outside it are dropped, and records after @to only give the
 * carried events they hold (a reader may push up to RSP_UNFOLD_DELAY_NS
 * past @to, so that the wakings before @to whose switch-ins came after it
 * are known).
 */
void rsp_unfold__set_range(struct rsp_unfold *u, uint64_t from, uint64_t to);

/*
 * rsp_unfold__advance() - every record up to @now has been pushed (a live
 * reader's watermark): what is the delay older than @now is ready, even
 * when no newer record came.
 */
void rsp_unfold__advance(struct rsp_unfold *u, uint64_t now);

/*
 * rsp_unfold__carried() - the events a BPF record @e carries folded in (a
 * switch's waking, a completion's insert and issue, a span's entry, a
 * CARRY's part), those in [@from, @to], oldest first, each to @fn as a
 * window entry on its own CPU's stream (its record valid during the call),
 * with nothing held: for a reader that needs no other order (the
 * histograms' timeline). Return: the first non-zero @fn returned, or 0.
 */
int rsp_unfold__carried(const struct rsp_wentry *e, uint64_t from, uint64_t to,
			int (*fn)(void *ctx, const struct rsp_wentry *o), void *ctx);

/* rsp_unfold__push() - one record of the window, in its order. Return: 0 or -ENOMEM. */
int rsp_unfold__push(struct rsp_unfold *u, const struct rsp_wentry *e);

/*
 * rsp_unfold__pop() - the next record in time order, if it is ready (as
 * old as the delay behind the newest pushed, or @all: everything held).
 * The record (e->rec) is valid until the next push or pop. Return: true
 * and *@e, or false.
 */
bool rsp_unfold__pop(struct rsp_unfold *u, struct rsp_wentry *e, bool all);

#endif
