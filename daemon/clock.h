/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_CLOCK_H
#define RSPD_CLOCK_H

#include <stdint.h>
#include <time.h>

/** rspd_clock__now_ns() - CLOCK_MONOTONIC in ns: the clock of every record's time. */
static inline uint64_t rspd_clock__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
