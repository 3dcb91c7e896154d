/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_FMT_H
#define RSP_INTERNAL_FMT_H

#include <stddef.h>
#include <stdint.h>

/** rsp_fmt__bytes() - "512 B", "1.5 KiB", "64.0 MiB" into @buf. Returns @buf. */
char *rsp_fmt__bytes(char *buf, size_t size, uint64_t bytes);

#endif
