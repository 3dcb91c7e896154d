/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * rsp/annotate.h: wPerf's annotations (OSDI '18, section 4.1) as USDT
 * probes of provider "rsp", for programs that want rsp's wait-for graph and
 * snapshot to see what the kernel cannot:
 *
 *   RSP_SPIN_BEGIN(lock)  before a thread starts spinning for @lock (any
 *   RSP_SPIN_END(lock)    pointer: the lock's address); after it holds it.
 *                         A thread spinning is running to the kernel, but
 *                         it waits for the lock's holder.
 *   RSP_FALSE_WAKEUP()    after a wakeup whose condition check failed
 *                         (a broadcast woke it, another thread took the
 *                         item): the wakeup it follows was not a wait for
 *                         the thread that woke it.
 *
 * Each is a USDT probe (probe names spin_begin, spin_end, false_wakeup)
 * written by <sys/sdt.h> (Debian's systemtap-sdt-dev): a nop and an ELF note
 * in .note.stapsdt, free while nobody attaches a uprobe to it. Any tool
 * that reads those notes (perf probe sdt_rsp:*, bpftrace usdt:) sees them.
 *
 * Define RSP_NO_ANNOTATE before including this file to compile them out.
 */
#ifndef RSP_ANNOTATE_H
#define RSP_ANNOTATE_H

#ifdef RSP_NO_ANNOTATE
#define RSP_ANNOTATED	     0 /* whether the probes are compiled in */
#define RSP_SPIN_BEGIN(lock) ((void)(lock))
#define RSP_SPIN_END(lock)   ((void)(lock))
#define RSP_FALSE_WAKEUP()   ((void)0)
#else
#include <sys/sdt.h>
#define RSP_ANNOTATED	     1
#define RSP_SPIN_BEGIN(lock) DTRACE_PROBE1(rsp, spin_begin, (const void *)(lock))
#define RSP_SPIN_END(lock)   DTRACE_PROBE1(rsp, spin_end, (const void *)(lock))
#define RSP_FALSE_WAKEUP()   DTRACE_PROBE(rsp, false_wakeup)
#endif

#endif /* RSP_ANNOTATE_H */
