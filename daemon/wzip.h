/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_WZIP_H
#define RSPD_WZIP_H

/*
 * The window's compressor: a thread of its own that compresses the
 * window's cold chunks (rsp_window__compress()), so that the same budget
 * holds several times the history. Off with --no-window-compress.
 */
#include <stddef.h>

struct rspd;

/** rspd_wzip__start() - start the thread (nothing when off). 0 or -errno with @err. */
int rspd_wzip__start(struct rspd *d, char *err, size_t errlen);
/** rspd_wzip__stop() - stop and join it (nothing if not started). */
void rspd_wzip__stop(struct rspd *d);

#endif
