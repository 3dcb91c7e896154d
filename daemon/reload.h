/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_RELOAD_H
#define RSPD_RELOAD_H

/*
 * SIGHUP's reload, off the capture thread. Reading the file may wait for
 * its file system (NFS, FUSE): the capture loop only asks for a reload and
 * later takes what the reload thread read, when its eventfd is readable, so
 * capture never waits for the file and shutdown never waits for a read.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "config.h"

struct rspd_reload;

/** rspd_reload__new() - start the reload thread; NULL with errno on failure. */
struct rspd_reload *rspd_reload__new(void);

/**
 * rspd_reload__delete() - stop the thread. One still reading a file is left
 * to finish on its own (detached, and @r with it): exit never waits for it.
 * NULL is fine.
 */
void rspd_reload__delete(struct rspd_reload *r);

/** rspd_reload__fd() - readable when a reload has finished: call __take(). */
int rspd_reload__fd(const struct rspd_reload *r);

/**
 * rspd_reload__request() - read the file again, on the reload thread
 * @busy_ns: set to how long the read under way has taken, when there is
 *           one (the file is then read again once it ends), else 0
 */
void rspd_reload__request(struct rspd_reload *r, uint64_t *busy_ns);

/**
 * rspd_reload__take() - the finished reload, applied to @cfg
 * Return: 1 when @cfg took the new configuration (rspd_config__apply()),
 * 0 when nothing has finished, -1 when the file was refused: @cfg is
 * unchanged and @err says why ("FILE:LINE: why").
 */
int rspd_reload__take(struct rspd_reload *r, struct rspd_config *cfg, char *err, size_t errlen);

/**
 * rspd_reload__overdue() - true once per reload that has been reading for
 * more than @limit_ns (a hung file system): the caller logs it.
 */
bool rspd_reload__overdue(struct rspd_reload *r, uint64_t limit_ns);

#endif
