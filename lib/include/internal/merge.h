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
#include <rsp/sleepclass.h>
#include <rsp/snapshot.h>
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

/* One end of a process (index_procs()): conns[conn], then its next end (UINT32_MAX: none). */
struct mproc {
	uint32_t conn, next;
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
	/* the ends of each process: host << 32 | tgid -> its first node in procs[] */
	struct rsp_u64map by_proc;
	struct mproc *procs;
	size_t nr_procs, cap_procs;
	/* snapshot PID@HOST */
	bool snapshot;
	long pid;
	const char *at;
	int target;
	int depth; /* snapshot --depth: hosts followed at most */
	bool graph;
};

/* ---- snapshot PID@HOST (merge.c; the local waits: merge_local.c) ---- */

#define MAX_HOPS     64
#define CAT_RUN	     0
#define CAT_RUNNABLE 1
#define CAT_UNKNOWN  2 /* no segment of the thread (lost records, not seen) */
#define CAT_SLEEP    3 /* + enum rsp_sleep_reason */
#define NR_CATS	     (CAT_SLEEP + RSP_SR__NR)

_Static_assert(MAX_HOPS <= 64, "merge_local.c's lctx.shown is one bit per hop");

struct hop {
	int parent; /* index in hops[] of the thread it answered; -1: PID */
	int depth;  /* 1: answered PID */
	uint32_t host, pid, tid;
	size_t ops;
	uint64_t asked;	  /* the waits of the thread it answered that its answers ended */
	uint64_t service; /* request arrival to answer send, summed */
	uint64_t cat[NR_CATS];
	/*
	 * local: not an answering thread but a thread of the parent's host that
	 * the parent's local waits were followed into (merge_local.c), an
	 * anchor for what it waited for across hosts in turn; its depth is
	 * its parent's (the same host).
	 */
	bool local;
	struct rsp_snapshot_span *spans; /* the answers' service intervals */
	size_t nr_spans, cap_spans;
	struct rsp_snapshot *snap; /* its local waits followed (merge_local.c), or NULL */
	int snap_errno;		   /* why not, if it failed */
	/* its snapshot's pieces past LOCAL_PIECES dropped: those wakers not followed */
	bool pieces_cut;
};

/* One of PID's network operations (thread @tid), for the union of its threads' waits. */
struct mwait {
	uint32_t tid;
	uint64_t from, to;
};

struct msnap {
	size_t ops, matched_ops;
	/*
	 * PID's network operations, all and matched: per thread the union of
	 * its operations' spans (an event loop's operations on several sockets
	 * overlap), summed over its threads (snap_collect() from the spans).
	 */
	uint64_t wait, matched_wait;
	struct mwait *waits, *mwaits;
	size_t nr_waits, cap_waits, nr_mwaits, cap_mwaits;
	bool nomem; /* a span not kept: the answer is refused */
	struct hop hops[MAX_HOPS];
	int nr_hops;
	size_t other_ops; /* answered by threads beyond MAX_HOPS */
	size_t cycles;	  /* answers by a thread already on the path: not followed again */
	/* at depth 0, the service of those two: the answering side's time, not the network's */
	uint64_t other_service;
	size_t cut;    /* network waits at --depth, on matched connections: not followed */
	int max_depth; /* the deepest hop found */
};

/*
 * rsp_merge__follow() - the network operations of process @tgid on @host
 * (thread @tid only, if not 0) inside [@lo, @hi), on matched connections,
 * followed into the threads that answered them (new hops under @parent at
 * @depth + 1). Depth 0 is PID's: its totals are counted.
 */
void rsp_merge__follow(const struct merge *m, struct msnap *sn, uint32_t host, uint32_t tgid,
		       uint32_t tid, uint64_t lo, uint64_t hi, int parent, int depth);

/** rsp_merge__on_path() - thread @tid of @host is PID or a hop from @parent up. */
bool rsp_merge__on_path(const struct merge *m, const struct msnap *sn, int parent, uint32_t host,
			uint32_t tgid, uint32_t tid);

/**
 * rsp_merge__local() - hop @i's local waits on its host, followed into
 * their wakers by the recursive snapshot (rsp/snapshot.h) over its
 * answers' intervals; the local wakers' own network waits are followed
 * across hosts again (new hops). Stored in the hop (freed by
 * rsp_merge__snap_exit()); a failure is kept in snap_errno.
 */
void rsp_merge__local(const struct merge *m, struct msnap *sn, int i);
/** rsp_merge__local_error() - why hop @hp's local waits were not followed (snap_errno set). */
const char *rsp_merge__local_error(const struct hop *hp);
/** rsp_merge__local_text() - hop @i's local waits, indented by @ind, as text. */
void rsp_merge__local_text(const struct merge *m, const struct msnap *sn, int i, int ind,
			   struct rsp_buf *out);
/** rsp_merge__local_json() - the same as a JSON array (new reference), or NULL if none. */
json_t *rsp_merge__local_json(const struct merge *m, const struct msnap *sn, int i);
/** rsp_merge__hop_text(), rsp_merge__hops_json(): the hops under @parent (merge.c). */
void rsp_merge__hop_text(const struct merge *m, const struct msnap *sn, int i, struct rsp_buf *out);
json_t *rsp_merge__hops_json(const struct merge *m, const struct msnap *sn, int parent);
/** rsp_merge__snap_exit() - free what the hops hold. */
void rsp_merge__snap_exit(struct msnap *sn);

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

/* ---- the steps of a run (merge_run.c calls them in this order) ---- */

/** rsp_merge__load_host() - host @k's dump loaded, checked and its network operations indexed. */
int rsp_merge__load_host(struct merge *m, int k, struct rsp_buf *err);
/** rsp_merge__match() - the socket ends matched across hosts; 0 or -ENOMEM. */
int rsp_merge__match(struct merge *m);
/** rsp_merge__check_offsets() - every pair of hosts has a clock offset, or one sentence. */
int rsp_merge__check_offsets(struct merge *m, struct rsp_buf *err);
/** rsp_merge__net_json(), rsp_merge__net_text() - `merge ... net`'s answer. */
int rsp_merge__net_json(const struct merge *m, struct rsp_buf *out);
void rsp_merge__net_text(const struct merge *m, struct rsp_buf *out);
/** rsp_merge__snapshot() - `merge ... snapshot PID@HOST`'s answer (merge_local.c). */
int rsp_merge__snapshot(struct merge *m, struct rsp_buf *out, struct rsp_buf *err);

/* What the snapshot across hosts (merge_local.c) takes of the clock offsets (merge.c). */
int64_t rsp_merge__mono(const struct mhost *h, uint64_t t);
int64_t rsp_merge__send_start(const struct mhost *h, const struct rsp_net_op *o);
int rsp_merge__add_pairs(const struct merge *m, const struct mconn *a, const struct mconn *b,
			 long k, struct rsp_clockoff *c);

/** rsp_merge__graph() - `merge ... graph`: the wait-for graph over all hosts. */
int rsp_merge__graph(const struct merge *m, struct rsp_buf *out, struct rsp_buf *err);

#endif /* RSP_INTERNAL_MERGE_H */
