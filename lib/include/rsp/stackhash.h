/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_STACKHASH_H
#define RSP_STACKHASH_H

/*
 * The one bit of a stack's 32-bit hash that has a meaning, on its own so
 * that internal/hash.h (util, which computes it) and rsp/timeline.h (which
 * stores it) share it without the hash reaching up to the timeline.
 *
 * rsp_segment.stack_hash, rsp_waker.stack_hash (when not 0): the stack has
 * a user part (a PERF_CONTEXT_USER marker), known without reading it.
 */
#define RSP_STACK_HASH_USER 0x1u

#endif
