/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_KALLSYMS_H
#define RSP_INTERNAL_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>

/*
 * Kernel text symbols from /proc/kallsyms text (the live file, or the copy
 * a dump carries): "ADDR TYPE NAME[\t[MODULE]]" per line. Only text
 * symbols (t, T, w, W) are kept; sizes are not in kallsyms, so a symbol
 * runs to the next one, capped (KALLSYMS_MAX_SPAN) where the next one is in
 * another module or far away.
 */
struct rsp_kallsyms;

/** rsp_kallsyms__parse() - parse @len bytes of kallsyms text; NULL with @err set. */
struct rsp_kallsyms *rsp_kallsyms__parse(const char *text, size_t len, struct rsp_buf *err);
/** rsp_kallsyms__load() - read and parse @path; NULL with @err set. */
struct rsp_kallsyms *rsp_kallsyms__load(const char *path, struct rsp_buf *err);
void rsp_kallsyms__delete(struct rsp_kallsyms *k);

/**
 * rsp_kallsyms__lookup() - the kernel function at @addr
 * @name:   owned by @k
 * @module: "[kernel]" or "[MODULE]", owned by @k
 * Return: 0, or -ENOENT.
 */
int rsp_kallsyms__lookup(const struct rsp_kallsyms *k, uint64_t addr, const char **name,
			 const char **module, uint64_t *offset);

size_t rsp_kallsyms__count(const struct rsp_kallsyms *k);
size_t rsp_kallsyms__bytes(const struct rsp_kallsyms *k);

#endif
