/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TESTS_GOLDEN_H
#define RSP_TESTS_GOLDEN_H

#include <stddef.h>

/* Real tracepoint formats and records, with perf's reading of them. */
struct golden_format {
	const char *system, *name, *format;
};

struct golden_field {
	const char *name;
	const char *str; /* expected string, or NULL for an integer */
	unsigned long long num; /* sign-extended for signed fields */
};

struct golden_record {
	const char *event; /* tracefs name */
	unsigned int size;
	const unsigned char *raw;
	const char *perf_text; /* what perf script printed */
	struct golden_field fields[12];
};

extern const struct golden_format golden_formats[];
extern const struct golden_record golden_records[];

#endif
