/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SYMBOLIZER_H
#define RSP_INTERNAL_SYMBOLIZER_H

#include <sys/stat.h>
#include <rsp/symbols.h>

/*
 * What the symbolizer lends other readers of mapped objects (the DWARF
 * unwinder): the same way to open the file a process had mapped, deleted or
 * replaced files included, and the model it reads.
 */

/**
 * rsp_symbolizer__open_mapped() - open the file of region @mv of @pid at @time
 * Return: an fd the caller closes (*st filled), or -1 with *why set.
 */
int rsp_symbolizer__open_mapped(struct rsp_symbolizer *s, uint32_t pid, uint64_t time,
				const struct rsp_map_view *mv, struct stat *st, const char **why);

#endif
