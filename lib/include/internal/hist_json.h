/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_HIST_JSON_H
#define RSP_INTERNAL_HIST_JSON_H

#include <stdint.h>
#include <jansson.h>
#include <rsp/hist.h>

/*
 * Pieces of the "rsp-hist" JSON format (lib/format/hist_json.c) that the
 * diff's JSON answer shares.
 */

/* JSON integers are signed 64-bit: larger values (2^63 and up) go as reals. */
json_t *rsp_hist_json__u64(uint64_t v);
/* {"kind": ..., "pid"/"tid"/"comm"/"dev"...} as the profiles have it. */
json_t *rsp_hist_json__subject(const struct rsp_hist_subject *s);

#endif /* RSP_INTERNAL_HIST_JSON_H */
