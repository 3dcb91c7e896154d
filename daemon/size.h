/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_SIZE_H
#define RSPD_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * rspd_size__text() - @v bytes as the size options write them: exact
 * ("64M", "1536K", "1000"); or, @round_up, rounded up to a whole M (a
 * whole K under 1M) for a size nobody wrote (auto's: "514M" for
 * 538331008). Into @buf; returns it.
 */
char *rspd_size__text(uint64_t v, bool round_up, char *buf, size_t n);

#endif
