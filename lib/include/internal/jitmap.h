/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_JITMAP_H
#define RSP_INTERNAL_JITMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <rsp/buf.h>

/*
 * A JIT's symbol map, /tmp/perf-PID.map (the format perf reads): one
 * "START SIZE NAME" per line, START and SIZE in hex with or without 0x.
 * When code is re-JITted at the same address, the later line wins.
 */
struct rsp_jitmap;

struct rsp_jitmap *rsp_jitmap__parse(const char *text, size_t len, struct rsp_buf *err);

/**
 * rsp_jitmap__load() - read @path, a regular file (not a symlink) owned by
 * root or by @uid (uid_t -1: do not check). Another user's file could name
 * this process's code anything, so it is refused.
 * Return: the map or NULL with @err set (errno-like code in *@errp).
 */
struct rsp_jitmap *rsp_jitmap__load(const char *path, uid_t uid, int *errp, struct rsp_buf *err);
void rsp_jitmap__delete(struct rsp_jitmap *j);

/** rsp_jitmap__lookup() - 0 and the name (owned by @j), or -ENOENT. */
int rsp_jitmap__lookup(const struct rsp_jitmap *j, uint64_t addr, const char **name,
		       uint64_t *offset);

size_t rsp_jitmap__count(const struct rsp_jitmap *j);
size_t rsp_jitmap__bytes(const struct rsp_jitmap *j);

#endif
