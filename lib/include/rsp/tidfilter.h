/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_TIDFILTER_H
#define RSP_TIDFILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>
#include <rsp/schema.h>
#include <rsp/window.h>

/*
 * rsp_tidfilter: which of a window's records belong to a set of threads
 * (rspctl dump --netns: the threads of one network namespace). A record is
 * kept when ANY thread it names is kept: a waking's waker or wakee, a
 * fork's parent or child, an exec's or exit's thread, the thread of a
 * sample or of a side-band record (COMM, FORK, EXIT, MMAP2).
 * Besides:
 *  - a child forked by a kept thread is kept (it inherits the namespace
 *    unless it unshares or setns(2)es: the filter cannot see that);
 *  - block requests inserted or issued by a kept thread are kept, and so
 *    are their later records (issue, completion in whatever context) by
 *    device and sector;
 *  - network records that name a socket (sock_send_length,
 *    sock_recv_length, sk_data_ready, inet_sock_set_state,
 *    tcp_rcv_space_adjust) are kept when a kept thread sent or received on
 *    that socket, or connected it (SYN_SENT), in the same life of the
 *    socket's address (from its first record to its close: the kernel
 *    reuses a freed socket's address), whoever's context the record came
 *    in (data arrives in the sender's softirq, over a veth the peer's);
 *    kprobe records (no socket field) by their thread;
 *  - every CPU's records, whoever's context they came in: all context
 *    switches (the timeline reads each CPU's sequence of switches: this
 *    kernel does not deliver switches away from the idle task, a run is
 *    inferred from the next record on the CPU, and a switch of another
 *    thread left out made kept threads' runs end unseen and their waits
 *    unknown), and the handlers of interrupts, softirqs and timers (in
 *    whose context a kept thread's waking ran). Another thread named
 *    there gets its runs, not its other records (samples, wakings of it
 *    by threads not kept, its block requests, its sockets);
 *  - records of no thread (lost records, compact stack records), and the
 *    last record of a CPU before lost records (where the gap starts).
 * Memory: the kept threads, the lives of the window's sockets and the
 * block requests in flight (all bounded by the window's records).
 */
struct rsp_tidfilter;

struct rsp_tidfilter_stats {
	uint64_t kept, left_out; /* records rsp_tidfilter__keep() answered */
	uint32_t threads;	 /* kept threads, inherited ones included */
	uint32_t inherited;	 /* children of kept threads forked in the window */
	uint32_t sockets;	 /* socket lives of kept threads */
};

/**
 * rsp_tidfilter__new() - an empty filter for records of schema @s (which
 * must outlive it). Return: the filter, or NULL (ENOMEM). Free with
 * rsp_tidfilter__delete().
 */
RSP_API struct rsp_tidfilter *rsp_tidfilter__new(const struct rsp_schema *s);
/** rsp_tidfilter__delete() - free @f. NULL is fine. */
RSP_API void rsp_tidfilter__delete(struct rsp_tidfilter *f);
/** rsp_tidfilter__add() - keep thread @tid. 0 or -ENOMEM. */
RSP_API int rsp_tidfilter__add(struct rsp_tidfilter *f, uint32_t tid);
/** rsp_tidfilter__has() - @tid is kept. */
RSP_API bool rsp_tidfilter__has(const struct rsp_tidfilter *f, uint32_t tid);
/**
 * rsp_tidfilter__scan() - learn, from @snap's records in [from, to] in time
 * order, the children of kept threads and the sockets kept threads use.
 * Call after the __add()s and before the first __keep(), which must be
 * given records of the same @snap: the filter remembers some records by
 * address (a pin of a compressed window decompresses its chunks anew, so
 * another snapshot's records are elsewhere). 0 or -ENOMEM.
 */
RSP_API int rsp_tidfilter__scan(struct rsp_tidfilter *f, const struct rsp_wsnap *snap,
				uint64_t from, uint64_t to);
/**
 * rsp_tidfilter__keep() - whether record @rec (window records in time
 * order) belongs to the kept threads, by the rules above.
 */
RSP_API bool rsp_tidfilter__keep(struct rsp_tidfilter *f, const struct perf_event_header *rec);
RSP_API void rsp_tidfilter__stats(const struct rsp_tidfilter *f, struct rsp_tidfilter_stats *st);

#endif /* RSP_TIDFILTER_H */
