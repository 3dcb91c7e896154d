/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_HIST_RENDER_H
#define RSP_HIST_RENDER_H

/*
 * Latency profiles rendered: as text (lib/format/hist_render.c: tables,
 * heat maps, diffs) and as the rsp-hist JSON that --save writes and
 * --baseline reads back (lib/format/hist_json.c). The format layer, above
 * the profiles themselves (rsp/hist.h, lib/analysis/).
 */
#include <stddef.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/hist.h>

#define RSP_HIST_R_ROWS 0x1u /* also a heat map of each profile's rows */

/**
 * rsp_hist_profile__render() - one profile as text, under 80 columns: a
 * header, count/mean/p50/p99/max/total, a bcc print_log2_hist table
 * ("low -> high : count |****|"), its peaks, and what ended unobserved.
 */
RSP_API int rsp_hist_profile__render(const struct rsp_hist_profile *p, struct rsp_buf *out);
/**
 * rsp_hist_profile__render_heatmap() - a profile's rows as a text heat map:
 * a line per slice (time, count), a column per bucket, the density of a
 * cell as one of " .:-=+*#%@" (log scale of its count). Under 80 columns
 * (r=2 profiles with a wide range are folded to r=1).
 */
RSP_API int rsp_hist_profile__render_heatmap(const struct rsp_hist_profile *p, struct rsp_buf *out);
/** rsp_hist_set__render_text() - the set's header, summary table and profiles. */
RSP_API int rsp_hist_set__render_text(const struct rsp_hist_set *s, unsigned flags,
				      struct rsp_buf *out);
/**
 * rsp_hist_set__render_json() - the set as JSON: the format that --save
 * writes and rsp_hist_set__load_json() reads ({"format": "rsp-hist",
 * "version": 1, "resolution", "range", "profiles": [{"subject", "op",
 * "count", "sum_ns", "buckets": [{"low_ns", "high_ns", "count"}], "peaks",
 * ...}]}).
 */
RSP_API int rsp_hist_set__render_json(const struct rsp_hist_set *s, unsigned flags,
				      struct rsp_buf *out);
/**
 * rsp_hist_set__load_json() - read what rsp_hist_set__render_json() wrote
 * @what: names the input in error messages ("baseline base.json")
 * Every field is checked: format and version, resolution, subjects, op
 * names, bucket bounds against the bucket math, counts against the sum of
 * buckets. Return: 0 and a new set in @out, or -EINVAL with one sentence
 * in @err (or -ENOMEM).
 */
RSP_API int rsp_hist_set__load_json(const char *text, size_t len, const char *what,
				    struct rsp_hist_set **out, struct rsp_buf *err);
/** rsp_hist_diff__render_text() - the ranked pairs and, for the first @show selected, both
 * histograms. */
RSP_API int rsp_hist_diff__render_text(const struct rsp_hist_diff *d, const char *base_what,
				       const char *cur_what, size_t show, struct rsp_buf *out);
/** rsp_hist_diff__render_json() - {"pairs": [...]} with every pair and its verdict. */
RSP_API int rsp_hist_diff__render_json(const struct rsp_hist_diff *d, const char *base_what,
				       const char *cur_what, struct rsp_buf *out);

#endif /* RSP_HIST_RENDER_H */
