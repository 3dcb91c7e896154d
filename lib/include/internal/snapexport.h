/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SNAPEXPORT_H
#define RSP_INTERNAL_SNAPEXPORT_H

#include <rsp/buf.h>
#include "internal/snapnames.h"

/*
 * The snapshot as files (lib/format/snapshot_export.c), carried in the answer for
 * the client to write (rsp/answer.h):
 *
 * folded  one line per pseudostack, root first, frames separated by ';',
 *         then a space and its time in microseconds (FlameGraph's and
 *         speedscope's input):
 *           comm (pid P);main;read;ksys_read_[k];[sleep:pipe];comm (pid Q);main;spin 990
 *         a thread is a frame "comm (pid P)" or "comm T (pid P)"; kernel
 *         frames end in "_[k]"; markers in brackets: [sleep:REASON] ends a
 *         sleeper's stack (what it waited for is above it), [running, not
 *         sampled], [runnable], [preempted] (what preempted it, when it
 *         works for it, is above it), [disk 8:0], [timer], [irq N],
 *         [network], [other path: ...], [unknown].
 * chrome  the process running view in the Trace Event format (Perfetto,
 *         chrome://tracing): one track per thread in the chain, an "X"
 *         slice per run, runnable stretch and sleep, "M" names for
 *         processes and threads, "s"/"f" flow arrows for the wakeups the
 *         chain followed. Times in microseconds from the snapshot's start.
 */
int rsp_snapexport__folded(struct snapnames *n, struct rsp_buf *out);
int rsp_snapexport__chrome(struct snapnames *n, struct rsp_buf *out);

#endif
