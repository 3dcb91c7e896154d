/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_NETSUM_H
#define RSP_NETSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/tlstore.h>

/*
 * The window's network operations (struct rsp_net_op: from a socket's last
 * send to the last arrival of its answer) summed per socket, for rspctl
 * net: how many, how long, and who answered (a local thread over loopback,
 * an unidentified local thread, or the NIC).
 */
#define RSP_NETSUM_MAX_PEERS 4

struct rsp_netsum_peer {
	uint32_t tid, tgid; /* 0: the NIC, or an unidentified local thread */
	bool local;
	uint64_t ops;
};

/* One socket (one incarnation of a kernel address: its addresses are part of the key). */
struct rsp_netsum_row {
	const struct rsp_net_op *op; /* the first: socket, addresses, protocol */
	uint32_t tid, tgid;
	uint64_t ops, total_ns, max_ns, arrivals, wakeups, bytes_sent;
	struct rsp_netsum_peer peers[RSP_NETSUM_MAX_PEERS];
	uint32_t nr_peers;
	uint64_t other_peers; /* operations whose peer did not fit */
};

struct rsp_netsum {
	struct rsp_netsum_row *rows; /* by total time, longest first */
	size_t nr;
	uint64_t ops;
};

/**
 * rsp_netsum__collect() - sum @store's network operations per socket, of
 * process @pid only when @pid >= 0. The rows point into @store.
 * Return: 0 or -ENOMEM (@ns is then empty).
 */
RSP_API int rsp_netsum__collect(struct rsp_netsum *ns, const struct rsp_tlstore *store, long pid);
RSP_API void rsp_netsum__exit(struct rsp_netsum *ns);

#endif /* RSP_NETSUM_H */
