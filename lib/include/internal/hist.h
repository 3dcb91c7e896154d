/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_HIST_H
#define RSP_INTERNAL_HIST_H

#include <rsp/hist.h>

/*
 * Shared between the hist_*.c files: parsing op names, helpers on
 * profiles. Not exported.
 */

/**
 * rsp_hist__merge_extremes() - the part of a merge every aggregate shares
 * (profiles, rsp_hist_profile__merge(); stopwatch totals,
 * rsp_sw_total__merge()): min of the non-empty sides' mins, max of maxes,
 * @nb buckets added. Call before adding the counts (@dst_count is the
 * destination's count so far); counts and sums are the caller's, their
 * types differ.
 */
static inline void rsp_hist__merge_extremes(uint64_t dst_count, uint64_t *dst_min,
					    uint64_t *dst_max, uint64_t *dst_b, uint64_t src_count,
					    uint64_t src_min, uint64_t src_max,
					    const uint64_t *src_b, unsigned nb)
{
	if (src_count && (!dst_count || src_min < *dst_min))
		*dst_min = src_min;
	if (src_count && src_max > *dst_max)
		*dst_max = src_max;
	for (unsigned i = 0; i < nb; i++)
		dst_b[i] += src_b[i];
}

/**
 * rsp_hist__parse_op() - split "kind[:arg]" into a kind and its argument
 * @arg: set to the text after the first ':' (NULL when there is none)
 * Checks the kind, and the argument of offcpu (a reason) and softirq (a
 * name or vector, any case), which need no outside knowledge; devices and
 * irq names are resolved by the caller. Return: 0, or -EINVAL with one
 * sentence in @err.
 */
int rsp_hist__parse_op(const char *s, unsigned *kind, const char **arg, uint32_t *num,
		       bool *has_num, struct rsp_buf *err);

/** rsp_hist__op_name() - canonical op name from kind, arg and irq name (may be NULL). */
void rsp_hist__op_name(unsigned kind, uint32_t arg, const char *irq_name, char *buf, size_t n);

/** rsp_hist_profile__init() - an empty profile of @subj/@op_name at resolution @r. */
void rsp_hist_profile__init(struct rsp_hist_profile *p, const struct rsp_hist_subject *subj,
			    const char *op_name, unsigned r);

/** rsp_hist__subject_equal() - same subject (kind and the ids that matter for it). */
bool rsp_hist__subject_equal(const struct rsp_hist_subject *a, const struct rsp_hist_subject *b);

/**
 * rsp_hist_set__keep_if() - drop the profiles of @s for which @keep says
 * false (freeing what they own), keeping the others in their order.
 */
void rsp_hist_set__keep_if(struct rsp_hist_set *s,
			   bool (*keep)(const struct rsp_hist_profile *p, void *ctx), void *ctx);

/** rsp_hist__bucket_mid() - geometric middle of a bucket, for estimates. */
double rsp_hist__bucket_mid(unsigned b, unsigned r);

#endif
