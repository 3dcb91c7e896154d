/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_FMT_H
#define RSP_INTERNAL_FMT_H

#include <stddef.h>
#include <stdint.h>

/** rsp_fmt__bytes() - "512 B", "1.5 KiB", "64.0 MiB" into @buf. Returns @buf. */
char *rsp_fmt__bytes(char *buf, size_t size, uint64_t bytes);

/* Room for any 15-byte thread name escaped (4 bytes per byte) and its NUL. */
#define RSP_FMT_NAME_MAX 64

/**
 * rsp_fmt__name() - @name (a thread's or a file's name, chosen by anyone)
 * made safe to print into @buf: control bytes (C0, DEL, C1) and bytes that
 * are not well-formed UTF-8 become C escapes (\n, \t, \x1b, ...), '\\'
 * becomes "\\\\"; printable UTF-8 stays. Cut at a whole character to fit
 * @size. The result is valid UTF-8 on one line. Returns @buf.
 */
char *rsp_fmt__name(char *buf, size_t size, const char *name);

#endif
