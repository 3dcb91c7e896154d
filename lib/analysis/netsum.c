// SPDX-License-Identifier: LGPL-2.1
/* Network operations per socket: see rsp/netsum.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/netsum.h>
#include "internal/hash.h"
#include "internal/vec.h"

static uint64_t row_key(const struct rsp_net_op *op)
{
	uint64_t h = rsp_hash__u64(RSP_HASH_INIT, op->sk);

	h = rsp_hash__bytes(h, &op->local, sizeof(op->local));
	return rsp_hash__key(rsp_hash__bytes(h, &op->remote, sizeof(op->remote)));
}

static bool same_socket(const struct rsp_net_op *a, const struct rsp_net_op *b)
{
	return a->sk == b->sk && !memcmp(&a->local, &b->local, sizeof(a->local)) &&
	       !memcmp(&a->remote, &b->remote, sizeof(a->remote));
}

static struct rsp_netsum_row *get_row(struct rsp_kvec *by_key, const struct rsp_net_op *op)
{
	/* Two sockets whose keys collide: the second probes the next key. */
	for (uint64_t key = row_key(op);; key = rsp_hash__key(key + 1)) {
		bool added;
		struct rsp_netsum_row *r = rsp_kvec__get(by_key, key, &added);

		if (!r || (!added && same_socket(r->op, op)))
			return r;
		if (added) {
			r->op = op;
			r->tid = op->tid;
			r->tgid = op->tgid;
			return r;
		}
	}
}

static void add_peer(struct rsp_netsum_row *r, const struct rsp_net_op *op)
{
	uint32_t tid = op->flags & RSP_NETF_LOOPBACK ? op->peer_tid : 0;
	bool local = !tid && (op->flags & RSP_NETF_LOCAL);

	for (uint32_t i = 0; i < r->nr_peers; i++) {
		if (r->peers[i].tid == tid && r->peers[i].local == local) {
			r->peers[i].ops++;
			return;
		}
	}
	if (r->nr_peers == RSP_NETSUM_MAX_PEERS) {
		r->other_peers++;
		return;
	}
	r->peers[r->nr_peers++] = (struct rsp_netsum_peer){tid, tid ? op->peer_tgid : 0, local, 1};
}

static int add_op(struct rsp_netsum *t, struct rsp_kvec *by_key, const struct rsp_net_op *op)
{
	struct rsp_netsum_row *r = get_row(by_key, op);
	uint64_t d = op->end - op->start;

	if (!r)
		return -ENOMEM;
	r->ops++;
	r->total_ns += d;
	if (d > r->max_ns)
		r->max_ns = d;
	r->arrivals += op->arrivals;
	r->wakeups += op->wakeups;
	r->bytes_sent += op->bytes_sent;
	add_peer(r, op);
	t->ops++;
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct rsp_netsum_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->op->sk < y->op->sk ? -1 : x->op->sk > y->op->sk;
}

int rsp_netsum__collect(struct rsp_netsum *ns, const struct rsp_tlstore *store, long pid)
{
	struct rsp_kvec by_key; /* row_key() -> row */
	size_t n;
	const struct rsp_net_op *ops = rsp_tlstore__net_ops(store, &n);

	memset(ns, 0, sizeof(*ns));
	rsp_kvec__init(&by_key, sizeof(struct rsp_netsum_row));
	for (size_t i = 0; i < n; i++) {
		if (pid >= 0 && ops[i].tgid != (uint32_t)pid)
			continue;
		if (add_op(ns, &by_key, &ops[i])) {
			rsp_kvec__exit(&by_key);
			ns->ops = 0;
			return -ENOMEM;
		}
	}
	ns->rows = rsp_kvec__take(&by_key, &ns->nr);
	if (ns->nr > 1)
		qsort(ns->rows, ns->nr, sizeof(ns->rows[0]), cmp_rows);
	return 0;
}

void rsp_netsum__exit(struct rsp_netsum *ns)
{
	free(ns->rows);
	memset(ns, 0, sizeof(*ns));
}
