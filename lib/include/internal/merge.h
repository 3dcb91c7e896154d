/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_MERGE_H
#define RSP_INTERNAL_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <rsp/buf.h>
#include <rsp/net.h>
#include <rsp/perfdata.h>
#include <rsp/xhost.h>
#include "internal/u64map.h"

/*
 * rspctl merge's state, shared by its commands: lib/query/merge.c (loading,
 * matching, clock offsets, net and snapshot) and lib/query/merge_graph.c
 * (graph). Not exported.
 */
#define MAX_HOSTS 64
/* Alignments of two sides' operations tried around the wall-clock guess. */
#define ALIGN_SPAN 3
/* snapshot --depth: hosts followed at most (default), and its bound. */
#define MERGE_DEPTH_DEFAULT 4
#define MERGE_DEPTH_MAX	    16

struct mhost {
	const char *path;
	struct rsp_perfdata *pd;
	const struct rsp_dump_info *di;
	struct rsp_socktab *socks;
	struct rsp_wsnap *snap;
	struct rsp_tlstore *store;
	const struct rsp_net_op **ops; /* TCP, with a 4-tuple, by socket then time */
	size_t nr_ops;
	size_t untupled; /* TCP operations on sockets whose 4-tuple is not known */
	int64_t shift;	 /* --test-clock-shift: added to every time of this dump */
	bool shifted;
};

/* One socket end: a run of ops[] of one host with the same socket and tuple. */
struct mconn {
	uint32_t host;
	size_t at, n; /* in its host's ops[] */
};

/* Two hosts' clock offset. */
struct poff {
	struct rsp_clockoff c;
	unsigned conns;	   /* matched connections between them */
	unsigned expected; /* exchanges those connections hold (one pair each) */
	int64_t est, unc;  /* check_offsets() */
};

struct merge {
	struct mhost h[MAX_HOSTS];
	int nr;
	bool json;
	struct mconn *conns; /* conns[i] is the index's end i */
	size_t nr_conns, cap_conns;
	struct rsp_xmatch *xm;
	struct poff *off; /* [a * nr + b], a < b: theta = clock_b - clock_a */
	size_t matched;
	size_t state[4]; /* ends per enum rsp_xend_state */
	size_t untupled; /* all hosts' */
	long *conn_k;	 /* per end on the lower host of a match: the alignment guessed */
	/* the ends of each process: host << 32 | tgid -> first end, then proc_next[] */
	struct rsp_u64map by_proc;
	uint32_t *proc_next;
	/* snapshot PID@HOST */
	bool snapshot;
	long pid;
	const char *at;
	int target;
	int depth; /* snapshot --depth: hosts followed at most */
	bool graph;
};

/** rsp_merge__comm() - thread @tid's name on host @h, "?" if not known. */
const char *rsp_merge__comm(const struct mhost *h, uint32_t tid);

/**
 * rsp_merge__answer() - the operation of end @yi (the peer of @xi) that
 * answers end @xi's operation @i: its index j >= 1 in the end (the request
 * arrived by the end of operation j - 1, the answer left at the start of
 * j), or -1. @next carries the last answer from one call to the next on
 * the same end (start it at -1, call with i in order).
 */
long rsp_merge__answer(const struct merge *m, size_t xi, size_t yi, size_t i, long *next);

/** rsp_merge__offsets_text() - the hosts and their clock offsets, as text. */
void rsp_merge__offsets_text(const struct merge *m, struct rsp_buf *out);
/** rsp_merge__hosts_json() - the hosts; rsp_merge__offsets_json(): the offsets. */
json_t *rsp_merge__hosts_json(const struct merge *m);
json_t *rsp_merge__offsets_json(const struct merge *m);

/** rsp_merge__graph() - `merge ... graph`: the wait-for graph over all hosts. */
int rsp_merge__graph(const struct merge *m, struct rsp_buf *out, struct rsp_buf *err);

#endif /* RSP_INTERNAL_MERGE_H */
