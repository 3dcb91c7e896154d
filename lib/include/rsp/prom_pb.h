/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_PROM_PB_H
#define RSP_PROM_PB_H

/*
 * Prometheus' protobuf exposition (io.prometheus.client.MetricFamily,
 * length-delimited), which a Prometheus started with
 * --enable-feature=native-histograms asks for first: the families of the
 * text exposition translated one by one, plus the latency profiles as
 * native histograms. Encoded with protobuf-c from the vendored
 * lib/format/proto/io/prometheus/client/metrics.proto.
 *
 * Native histograms, exactly. A native histogram's schema s has bucket
 * index i = (2^((i-1)/2^s), 2^(i/2^s)] in the metric's unit, upper
 * inclusive; the zero bucket holds [-zero_threshold, zero_threshold]. The
 * families are in NANOSECONDS (rsp_latency_nanoseconds,
 * rsp_process_latency_nanoseconds): in seconds no bound would fall on a
 * power of two of nanoseconds. A profile at r=1 is schema 0, at r=2
 * schema 1, and each of its buckets keeps its count unchanged: profile
 * bucket b >= 1, which holds the whole nanoseconds of [2^k, 2^(k+1)) (r=1,
 * b = k+1) or of a half octave [2^(k/2), 2^((k+1)/2)) (r=2, b = k+1), is
 * native index b, (2^k, 2^(k+1)] resp. (2^(k/2), 2^((k+1)/2)]. The two
 * intervals hold the same whole numbers except the lower bound itself when
 * it is a whole number: a latency of exactly 2^k ns (the only whole-number
 * bound: 2^(k+1/2) is irrational) is counted one bucket above the one
 * Prometheus would have put it in. Bucket 0 (latencies of 0 ns) is the
 * zero bucket, with threshold 2^-128 (as client_golang's default): it holds
 * exactly the 0 ns latencies, and a threshold above zero keeps an empty
 * histogram native for Prometheus, which reads a histogram with no
 * buckets, no zero count and a zero threshold of 0 as a classic one.
 */
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/hist.h>
#include <rsp/prom.h> /* RSP_PROM_PB_CONTENT_TYPE */

/* rsp_prom_pb__index()'s answer for the zero bucket. */
#define RSP_PROM_PB_ZERO_BUCKET INT32_MIN

/**
 * rsp_prom_pb__index() - the native histogram bucket index (schema @r - 1)
 * where a latency of @ns nanoseconds is counted in a profile of resolution
 * @r (1 or 2): RSP_PROM_PB_ZERO_BUCKET for 0, else the index as the header
 * above says (one above Prometheus' own for @ns = 2^k exactly).
 */
RSP_API int32_t rsp_prom_pb__index(uint64_t ns, unsigned r);

/**
 * rsp_prom_pb__native() - the profiles of @s (as rsp_prom__cut() left
 * them) as two native histogram families, appended to @out as
 * length-delimited MetricFamily messages: rsp_latency_nanoseconds{op}
 * (SYSTEM profiles) and rsp_process_latency_nanoseconds{op,comm,pid}
 * (processes; comm="other",pid="" for the rest). A family without series
 * is left out. Return: 0, -ENOMEM, or the buffer's -errno.
 */
RSP_API int rsp_prom_pb__native(const struct rsp_hist_set *s, struct rsp_buf *out);

/**
 * rsp_prom_pb__from_text() - translate @len bytes of text exposition 0.0.4
 * (as rsp_prom__render_*() write it: every family opened by # HELP and #
 * TYPE, a histogram's series as consecutive _bucket, _sum and _count lines)
 * into length-delimited MetricFamily messages appended to @out. A classic
 * histogram keeps its buckets without the +Inf one (optional in protobuf:
 * Prometheus takes it from the count) and its count and sum; counters,
 * gauges and untyped samples their value. A family without samples is
 * left out. Return: 0; -EINVAL with one sentence in @err naming the line
 * that is not what rsp writes; -ENOMEM or the buffer's -errno.
 */
RSP_API int rsp_prom_pb__from_text(const char *text, size_t len, struct rsp_buf *out,
				   struct rsp_buf *err);

#endif /* RSP_PROM_PB_H */
