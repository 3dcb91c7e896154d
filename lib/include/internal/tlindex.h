/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_TLINDEX_H
#define RSP_INTERNAL_TLINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/tlstore.h>

/*
 * The timeline store's lookup indexes (built when a full store is sealed;
 * the store answers through them, see rsp/tlstore.h): per CPU, the sorted
 * ends of every run; per thread, its block requests by insert time and
 * the wakeups and forks it did by time.
 */
struct rsp_tlindex;

/** rsp_tlindex__new() - index a filled store (its vectors must not move afterwards). */
struct rsp_tlindex *rsp_tlindex__new(const struct rsp_tlstore *s);
void rsp_tlindex__delete(struct rsp_tlindex *ix);

uint64_t rsp_tlindex__last_run_end(const struct rsp_tlindex *ix, uint32_t cpu, uint64_t t);
const struct rsp_block_req *const *rsp_tlindex__reqs_of(const struct rsp_tlindex *ix, uint32_t tid,
							size_t *n);
const struct rsp_wake *rsp_tlindex__wakes_by(const struct rsp_tlindex *ix, uint32_t tid, size_t *n);

#endif /* RSP_INTERNAL_TLINDEX_H */
