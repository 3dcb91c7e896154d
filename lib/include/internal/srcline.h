/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SRCLINE_H
#define RSP_INTERNAL_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Source lines of link-time addresses in ELF files on disk, from their DWARF
 * line tables through elfutils' libdw (the parser: rsp does not read DWARF
 * itself). The DWARF is the file's own, or that of its separate debug file
 * found by build-id under DEBUG_DIR/.build-id/ab/cdef....debug, as the
 * symbolizer finds symbols (Debian's -dbgsym packages).
 *
 * Bounded: at most max_objects files are kept open (least recently used
 * closed first). Not thread-safe.
 */
struct rsp_srclines;

/**
 * rsp_srclines__new() - an empty cache
 * @debug_dir: NULL: /usr/lib/debug; "": no separate debug files
 * @max_objects: files kept open; 0: 16
 * Return: the cache (free with rsp_srclines__delete()), or NULL (ENOMEM).
 */
struct rsp_srclines *rsp_srclines__new(const char *debug_dir, size_t max_objects);
void rsp_srclines__delete(struct rsp_srclines *sl);

/**
 * rsp_srclines__find() - the source line of @addr in the ELF file @path
 * @file: set to the source file's path, copied into @buf (@size bytes)
 * @line: set to the line
 * Return: 0; -ENOENT when the file has no line for @addr (or no DWARF at
 * all), -errno when it cannot be read.
 */
int rsp_srclines__find(struct rsp_srclines *sl, const char *path, uint64_t addr, char *buf,
		       size_t size, int *line);

#endif
