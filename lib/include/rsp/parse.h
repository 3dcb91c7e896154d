/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_PARSE_H
#define RSP_PARSE_H

#include <stdint.h>
#include <rsp/api.h>

/*
 * Strict parsing of user-supplied numbers: the whole string must be the
 * number, in range. Used for command-line options, control requests and
 * configuration alike.
 */

/*
 * Numbers are decimal only: "010" is ten (not octal eight), "08" is eight,
 * "0x10", "1e3", signs and blanks are refused.
 */

/** rsp_parse__u64() - decimal integer in [min, max]. 0 or -EINVAL/-ERANGE. */
RSP_API int rsp_parse__u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/**
 * rsp_parse__decimal() - a decimal number with an optional fraction ("25",
 * "2.5") in [min, max]. 0 or -EINVAL/-ERANGE.
 */
RSP_API int rsp_parse__decimal(const char *s, double min, double max, double *out);

/**
 * rsp_parse__duration() - "250ms", "10s", "2m", "1h", "500us", "100ns";
 * a bare number is seconds and may have a fraction ("1.5"). 0 or -EINVAL/-ERANGE.
 */
RSP_API int rsp_parse__duration(const char *s, uint64_t *ns);

/**
 * rsp_parse__seconds() - a time in seconds with up to 9 decimals ("13730.223133"),
 * as rsp prints CLOCK_MONOTONIC times, to nanoseconds exactly. 0 or -EINVAL/-ERANGE.
 */
RSP_API int rsp_parse__seconds(const char *s, uint64_t *ns);

/** rsp_parse__size() - bytes with an optional K, M, G suffix (powers of 1024). */
RSP_API int rsp_parse__size(const char *s, uint64_t *bytes);

#endif /* RSP_PARSE_H */
