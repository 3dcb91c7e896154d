/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_RSP_TRACEFS_H
#define RSPD_RSP_TRACEFS_H

/*
 * tracefs: mounted, its formats loaded, rsp's stale probes removed (tracefs.c).
 * Not "tracefs.h": daemon/ is on the include path, and that would shadow
 * libtracefs's <tracefs.h>.
 */
#include <stddef.h>

struct rsp_buf;
struct tep_handle;

/**
 * rsp_tracefs__read() - a whole small file (tracefs and procfs files report
 * no size), appended to @out. Return: 0, or -errno (-EFBIG past 4 MiB).
 */
int rsp_tracefs__read(const char *path, struct rsp_buf *out);

/**
 * rsp_tracefs__load() - make sure tracefs is mounted and load the formats of
 * the systems rsp uses. Return: a tep handle (free with tep_free()) or NULL
 * with one sentence in @err.
 */
struct tep_handle *rsp_tracefs__load(char *err, size_t errlen);

/**
 * rsp_tracefs__formats() - the formats of @systems' events (a NULL-ended
 * list), or of the one @event of them, read from tracefs (mounted already).
 * Return: a tep handle (free with tep_free()) or NULL if none could be parsed.
 */
struct tep_handle *rsp_tracefs__formats(const char *const *systems, const char *event);

/**
 * rsp_tracefs__remove_stale_probes() - remove every tracefs uprobe and
 * kprobe event of the group "rsp" (left by a process that died); after
 * rsp_tracefs__load(). Failures are logged.
 */
void rsp_tracefs__remove_stale_probes(void);

#endif
