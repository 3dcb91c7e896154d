/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_PROM_H
#define RSP_PROM_H

/*
 * The latency profiles and rspd's health in Prometheus' text exposition
 * format (0.0.4) and in OpenMetrics 1.0 text: what `rspd --metrics-listen`
 * serves and `--metrics-textfile` writes. librsp only renders; rspd
 * gathers the numbers.
 *
 * Buckets. A profile's bucket b holds whole nanoseconds in [low, high]
 * (rsp/hist.h: at r=1, [2^(b-1), 2^b - 1]). Prometheus' buckets are
 * upper-inclusive (le). For whole nanoseconds [2^(b-1), 2^b) and
 * (2^(b-1) - 1, 2^b - 1] hold the same values, so the exact upper bound of
 * bucket b is its high value, 2^b - 1 ns, and that is the le we write: the
 * cumulative count at le="0.000001023" (1023 ns) is exactly the number of
 * latencies below 1024 ns. An le of 2^b ns itself would also have to count
 * the latencies of exactly 2^b ns, which the profile keeps in the next
 * bucket with 2^b + 1 .. 2^(b+1) - 1 and cannot tell apart: it would not be
 * exact. Bounds are written as exact decimals of seconds (no binary float
 * rounding), so every host writes the same le strings and they aggregate.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/hist.h>
#include <rsp/status.h>
#include <rsp/window.h>

enum rsp_prom_format {
	RSP_PROM_TEXT,	      /* text/plain; version=0.0.4 */
	RSP_PROM_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
	RSP_PROM_PROTOBUF,    /* delimited io.prometheus.client.MetricFamily (rsp/prom_pb.h) */
};

/**
 * rsp_prom__negotiate() - the format to answer a scrape whose Accept header
 * is @accept (NULL: none), as client_golang's expfmt.Negotiate chooses: of
 * the media ranges rsp speaks (protobuf MetricFamily delimited,
 * OpenMetrics 0.0.1 or 1.0.0, text 0.0.4), the one with the highest q
 * (equal q: the first listed; q=0 or a q that is not a number in [0, 1]:
 * not acceptable); none of them, or a header that does not parse: the
 * text format. Never fails (lib/format/prom_accept.c).
 */
RSP_API enum rsp_prom_format rsp_prom__negotiate(const char *accept);

/* The protobuf exposition's Content-Type (lib/format/prom_pb.c writes it):
 * here, beside the negotiation that chooses it. */
#define RSP_PROM_PB_CONTENT_TYPE                                                                   \
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "               \
	"encoding=delimited"

/** rsp_prom__content_type() - the Content-Type header of @fmt. */
RSP_API const char *rsp_prom__content_type(enum rsp_prom_format fmt);

/**
 * rsp_prom__seconds() - @ns nanoseconds as an exact decimal number of
 * seconds ("0", "0.000001023", "12.5") into @buf (at least 32 bytes).
 */
RSP_API const char *rsp_prom__seconds(uint64_t ns, char *buf, size_t n);

/**
 * rsp_prom__escape() - append @len bytes of @s as a label value (without
 * the quotes): backslash, double quote and newline escaped as the formats
 * want; a byte that is not part of valid UTF-8 (a comm is any bytes) becomes
 * U+FFFD, since Prometheus refuses a whole scrape with invalid UTF-8.
 * Return: 0 or the buffer's -errno.
 */
RSP_API int rsp_prom__escape(struct rsp_buf *out, const char *s, size_t len);

/**
 * rsp_prom__cut() - bound the process series: of @in's PROCESS and
 * OTHER_PROCESS profiles, keep those of the @top processes with the most
 * total latency (sum over their ops; ties: the lower pid); merge the other
 * processes' profiles, and the store's "other processes", per op into one
 * OTHER_PROCESS profile. SYSTEM profiles are kept; THREAD and COMM
 * profiles are left out (per-thread series never).
 * Return: 0 and a new set in @out (free it with rsp_hist_set__delete()),
 * or -ENOMEM.
 */
RSP_API int rsp_prom__cut(const struct rsp_hist_set *in, unsigned top, struct rsp_hist_set **out);

/**
 * rsp_prom__render_hist() - the profiles of @s (as rsp_prom__cut() left
 * them) as two histogram families: rsp_latency_seconds{op} (the SYSTEM
 * profiles: every latency) and rsp_process_latency_seconds{op,comm,pid}
 * (processes, and comm="other",pid="" for the rest), plus the counters
 * rsp_latency_incomplete_total{op} and rsp_latency_inferred_total{op}.
 * Buckets of an op run from le=0 to its highest non-empty bucket, the
 * same for all its series, then +Inf. Return: 0 or the buffer's -errno.
 */
RSP_API int rsp_prom__render_hist(const struct rsp_hist_set *s, enum rsp_prom_format fmt,
				  struct rsp_buf *out);

/* rspd's own health, from the sources `rspctl status` reads. */
struct rsp_prom_health {
	const struct rsp_capture_info *ci; /* NULL: left out */
	const struct rsp_window_stats *ws; /* NULL: left out */
	const struct rsp_hist_stats *hs;   /* NULL: left out (--no-hist) */
	uint64_t queries;		   /* control-socket queries answered */
	uint64_t query_ns;		   /* their total time, request to answer */
	uint64_t scrapes;		   /* metrics renders before this one */
};

/** rsp_prom__render_health() - the rsp_* health families. 0 or the buffer's -errno. */
RSP_API int rsp_prom__render_health(const struct rsp_prom_health *h, enum rsp_prom_format fmt,
				    struct rsp_buf *out);

/**
 * rsp_prom__render_cgroups() - the family rsp_cgroup_latency_seconds: the
 * PROCESS profiles of @in merged per op by their process's cgroup
 * (@cgroup_of(@ctx, pid); NULL: "unknown"), a series per cgroup for the
 * @top cgroups with the most total latency and cgroup="other" for the rest
 * and for the evicted processes (OTHER_PROCESS): bounded like the process
 * series. The names @cgroup_of returns must live until this returns.
 * Return: 0, -ENOMEM, or the buffer's -errno.
 */
RSP_API int rsp_prom__render_cgroups(const struct rsp_hist_set *in, unsigned top,
				     const char *(*cgroup_of)(void *ctx, uint32_t pid), void *ctx,
				     enum rsp_prom_format fmt, struct rsp_buf *out);

/** rsp_prom__finish() - what ends an exposition ("# EOF" in OpenMetrics). */
RSP_API int rsp_prom__finish(enum rsp_prom_format fmt, struct rsp_buf *out);

#endif /* RSP_PROM_H */
