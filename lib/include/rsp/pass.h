/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_PASS_H
#define RSP_PASS_H

#include <stdint.h>
#include <rsp/api.h>
#include <rsp/ksyms.h>
#include <rsp/schema.h>
#include <rsp/socktab.h>
#include <rsp/timeline.h>
#include <rsp/window.h>

/*
 * One pass over a pinned window range: the one way every query reads
 * records. Each record is decoded once and fed to a timeline (the one
 * interpreter of the records, rsp/timeline.h), whose callbacks reach the
 * query's subscriber (@ops, @ctx): segments, links, block requests,
 * handler spans, network operations, switches and wakings as recorded,
 * and cpu-clock samples.
 *
 * A subscriber that wants only the cpu-clock samples (a flat profile)
 * says RSP_PASS_SAMPLES_ONLY: no timeline runs, records that are not
 * cpu-clock samples are skipped by their sample id without decoding.
 *
 * Stacks and records handed to the subscriber point into the window:
 * valid while the caller keeps @snap pinned (the timeline runs with
 * RSP_TL_RECORDS_STABLE).
 */
#define RSP_PASS_SAMPLES_ONLY 0x1u

struct rsp_pass_opts {
	uint64_t from, to;		 /* the range; to 0: to the end */
	const struct rsp_ksyms *ksyms;	 /* sleep reasons; NULL: from prev_state only */
	const struct rsp_socktab *socks; /* sockets older than the window; NULL: none */
	unsigned flags;			 /* RSP_PASS_* */
	unsigned tl_flags;		 /* RSP_TL_* besides RSP_TL_RECORDS_STABLE */
	const struct rsp_timeline_ops *ops;
	void *ctx;
	/* if not NULL, set to the finished timeline (the caller deletes it): irq names
	 * and the socket table the stream named live as long as it */
	struct rsp_timeline **keep;
};

/**
 * rsp_pass__pin() - rsp_window__pin() of [@from, @to] for rsp_pass__run(),
 * with the records RSP_TIMELINE_READ_AHEAD_NS after @to: the events BPF
 * records after @to carry from before it (a waking rides on the switch-in
 * it caused). Unpin with rsp_wsnap__unpin().
 */
RSP_API struct rsp_wsnap *rsp_pass__pin(struct rsp_window *w, uint64_t from, uint64_t to);

/**
 * rsp_pass__run() - read [@o->from, @o->to] of @snap through the timeline
 * @st: if not NULL, the timeline's counters at the end (zeroed with
 *      RSP_PASS_SAMPLES_ONLY but for records and lost records)
 *
 * The timeline is finished at @o->to (UINT64_MAX when 0), so the subscriber
 * also gets what is still open then (RSP_SEGF_OPEN ...).
 * Return: 0, or -ENOMEM (the subscriber may have had part of the range).
 */
RSP_API int rsp_pass__run(const struct rsp_schema *schema, const struct rsp_wsnap *snap,
			  const struct rsp_pass_opts *o, struct rsp_timeline_stats *st);

#endif /* RSP_PASS_H */
