/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_WAITGRAPH_H
#define RSP_WAITGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/tlstore.h>

/*
 * The wait-for graph of wPerf (OSDI '18) over a timeline store.
 *
 * Vertices are threads and pseudo-threads: each block device, the NIC (the
 * network's NET_RX/NET_TX softirqs: remote peers), one timer per thread
 * that sleeps on timers, other irqs and softirqs by name. A thread woken by
 * data that a local thread sent over loopback waits for that thread, not
 * for the NIC (the timeline names the sender as the waker). An edge A -> B weighs the time A waited
 * for B, with wPerf's cascaded redistribution (Figure 4): while A waits for
 * B over [t0, t2], whatever B itself waited on inside [t0, t2] is added to
 * B's edges, recursively (along paths of distinct threads).
 *
 * Pseudo-threads wait too:
 *   - a block device is one vertex per device and requester ("disk 254:0
 *     for fs-sync[812]": a thread waits for the disk serving its requests)
 *     and waits, during its idle time, for that requester: each idle
 *     interval (from a known completion to the next issue) goes to the
 *     issuers of the requests that end it, split by bytes (wPerf 4.1,
 *     applied per interval). One vertex per device made every thread that
 *     used the disk (kworkers, jbd2, a shell) one component with the thread
 *     waiting on it, and a knot {thread, disk} never closed;
 *   - a thread's timer waits for the thread whenever it is not counting
 *     down for it (the thread's span minus its timer-ended sleeps);
 *   - the short-lived threads of one parent, merged into one virtual
 *     thread, wait for the parent when none of them is alive (wPerf 3.3);
 *   - the network and irqs wait for nothing rsp records: they are sinks.
 *
 * Analysis: strongly connected components (Tarjan); an SCC with no edge
 * leaving it is a knot (size > 1, or a self-loop) or a sink. Knots with no
 * device in them whose threads together use less than 100% of a CPU
 * (running + runnable time over each thread's span) are background knots
 * (wPerf 3.3): reported and removed, and the search goes on (a vertex
 * whose only waits lead into one is not a sink: it waits for the knot). A
 * knot that is
 * neither a single vertex nor a simple cycle is refined: its lightest edge
 * is removed until it splits, unless that edge weighs more than the
 * threshold (default 20% of the window). So is a component with an edge
 * leaving it: a light edge into it (a consumer's few waits for its
 * producer, which waits for its own disk) kept a knot from closing.
 *
 * Noise floor: on a real system every thread has a few stray waits (a
 * kworker, an RCU softirq) that would keep any component from being closed,
 * so that no knot is ever found. Edges lighter than the noise floor (default
 * 1% of the window) are left out of the structure, as if refinement had
 * trimmed them first; they are still weighed and listed.
 */
enum rsp_wv_kind {
	RSP_WV_THREAD,	/* one thread */
	RSP_WV_MERGED,	/* threads of one process alike ("w~": by wait stacks; "w*": by name) */
	RSP_WV_SHORT,	/* short-lived threads of one parent */
	RSP_WV_DISK,	/* a block device (dev 0: a device rsp could not name) */
	RSP_WV_NET,	/* the NIC: the network beyond this machine */
	RSP_WV_TIMER,	/* the timer of vertex `owner` */
	RSP_WV_IRQ,	/* a hard irq (id, name) */
	RSP_WV_SOFTIRQ, /* another softirq (id = vector) */
};

struct rsp_wvertex {
	uint8_t kind; /* enum rsp_wv_kind */
	bool removed; /* in a background knot, or outside --pid's reach */
	/*
	 * In a background knot (then also removed): an edge into it from a
	 * vertex still drawn says what that vertex waited for, and is listed;
	 * such a vertex is not a sink
	 */
	bool background;
	char name[64]; /* "comm[tid]", "worker*[tgid]", "disk 254:0", "timer:comm[tid]", ... */
	uint32_t tgid;
	uint32_t id;	/* THREAD: tid; DISK: dev; IRQ: irq; SOFTIRQ: vector; TIMER: owner vertex */
	uint32_t owner; /* DISK: the vertex whose requests it serves; else UINT32_MAX */
	uint32_t nr_threads;
	const uint32_t *tids;		       /* member threads, nr_threads of them */
	uint64_t run_ns, runnable_ns, wait_ns; /* summed over members */
	uint64_t run_inferred_ns;	       /* summed: runs only inferred, not in run_ns */
	uint64_t span_ns;		       /* summed over members: each one's observed span */
	double cpu_util;		       /* sum over members of (run + runnable) / span */
};

#define RSP_WG_TOP_STACKS 3

struct rsp_wstack {
	const uint64_t *ips; /* callchain with PERF_CONTEXT_* markers; see rsp_tlstore lifetimes */
	uint32_t nr;
	uint64_t count;
	uint64_t weight_ns;
	uint32_t pid;  /* the process whose stack it is (0: not known) */
	uint64_t time; /* when one of its samples was taken: names its user frames */
};

struct rsp_wedge {
	uint32_t from, to;    /* vertex indexes */
	bool removed;	      /* by knot refinement or a removed vertex */
	uint64_t weight_ns;   /* cascaded weight */
	uint64_t direct_ns;   /* the waits themselves */
	uint64_t inferred_ns; /* part of direct_ns whose waker was inferred */
	uint64_t net_ns;      /* part of direct_ns ended by a network arrival */
	/* part of direct_ns re-attributed: sleeps that false wakeups were merged into
	 * (rsp_waker.nr_false), whose earlier wakers got none of it */
	uint64_t reattributed_ns;
	uint64_t count; /* waits */
	uint32_t nr_wait_stacks, nr_waker_stacks;
	struct rsp_wstack wait_stacks[RSP_WG_TOP_STACKS];  /* the waiter's switch-out stacks */
	struct rsp_wstack waker_stacks[RSP_WG_TOP_STACKS]; /* the waker's stacks at the waking */
};

struct rsp_wknot {
	bool background;
	bool refined; /* found after removing light edges */
	size_t nr_vertices, nr_edges;
	uint32_t *vertices;
	uint32_t *edges; /* edge indexes inside the knot, heaviest first */
	double cpu_util;
	uint64_t runnable_ns;
	bool wants_cores; /* its threads were runnable >= 10% of the time they used */
};

struct rsp_waitgraph_opts {
	double threshold; /* fraction of the window; 0.20 */
	/* edges lighter than this fraction of the window do not hold components
	 * together (0.01); they are still listed */
	double noise;
	bool merge; /* merge a process's alike threads, and short-lived threads (true) */
	/* with merge: threads are alike when they spend most of their wait time at
	 * the same stacks (wPerf), else (false, the default) when their names
	 * differ only by a number (worker-1 .. worker-8) */
	bool merge_stacks;
	long pid; /* keep only what this process's threads reach (through edges over the noise
		     floor), with weights judged against their span; -1 for all */
	/*
	 * If not NULL (and pid is -1): keep only what the threads of the
	 * processes it accepts reach, as for pid (rspctl graph --cgroup)
	 */
	bool (*keep_tgid)(uint32_t tgid, void *ctx);
	void *keep_ctx;
	/*
	 * If not NULL: a thread it accepts keeps its own vertex (is neither
	 * merged with alike threads nor with short-lived siblings), and the
	 * graph is not filtered (rspctl merge graph: the threads whose waits
	 * cross hosts)
	 */
	bool (*own_vertex)(uint32_t tid, void *ctx);
	void *own_ctx;
};

/** rsp_waitgraph_opts__init() - the defaults. */
RSP_API void rsp_waitgraph_opts__init(struct rsp_waitgraph_opts *o);

struct rsp_waitgraph;

/**
 * rsp_waitgraph__new() - build and analyse the graph of @s
 * @s: a sealed store; must outlive the graph (stacks and tids point into it)
 *
 * Return: the graph, or NULL with one sentence in @err and errno set
 * (ENOMEM; --pid names a process with no thread in the window: ESRCH). Free with
 * rsp_waitgraph__delete().
 */
RSP_API struct rsp_waitgraph *rsp_waitgraph__new(const struct rsp_tlstore *s,
						 const struct rsp_waitgraph_opts *o,
						 struct rsp_buf *err);
RSP_API void rsp_waitgraph__delete(struct rsp_waitgraph *g);

RSP_API size_t rsp_waitgraph__nr_vertices(const struct rsp_waitgraph *g);
RSP_API const struct rsp_wvertex *rsp_waitgraph__vertex(const struct rsp_waitgraph *g, size_t i);
RSP_API size_t rsp_waitgraph__nr_edges(const struct rsp_waitgraph *g);
/** rsp_waitgraph__edge() - edge @i; edges are sorted heaviest first. */
RSP_API const struct rsp_wedge *rsp_waitgraph__edge(const struct rsp_waitgraph *g, size_t i);
/** rsp_waitgraph__find_edge() - the edge @from -> @to, or NULL. */
RSP_API const struct rsp_wedge *rsp_waitgraph__find_edge(const struct rsp_waitgraph *g,
							 uint32_t from, uint32_t to);
/** rsp_waitgraph__vertex_of() - the vertex holding thread @tid, or -1. */
RSP_API long rsp_waitgraph__vertex_of(const struct rsp_waitgraph *g, uint32_t tid);
/** Knots: the final ones first (heaviest first), then background knots. */
RSP_API size_t rsp_waitgraph__nr_knots(const struct rsp_waitgraph *g);
RSP_API const struct rsp_wknot *rsp_waitgraph__knot(const struct rsp_waitgraph *g, size_t i);
RSP_API size_t rsp_waitgraph__nr_sinks(const struct rsp_waitgraph *g);
/** rsp_waitgraph__sink() - vertex index of sink @i; the most waited for first. */
RSP_API uint32_t rsp_waitgraph__sink(const struct rsp_waitgraph *g, size_t i);
/** rsp_waitgraph__in_knot() - @edge lies inside a reported knot. */
RSP_API bool rsp_waitgraph__in_knot(const struct rsp_waitgraph *g, size_t edge);
/** rsp_waitgraph__window() - the window the graph covers, ns. */
RSP_API void rsp_waitgraph__window(const struct rsp_waitgraph *g, uint64_t *start, uint64_t *end);
/**
 * rsp_waitgraph__reference() - what the threshold and the noise floor are
 * fractions of: the window, or with a pid the span of its threads in it.
 */
RSP_API void rsp_waitgraph__reference(const struct rsp_waitgraph *g, uint64_t *start,
				      uint64_t *end);

/**
 * rsp_waitgraph__relayed() - block I/O waits ended by a thread that the
 * disk had just woken (a kworker finishing writeback): counted as waits
 * for the disk serving the sleeper, not for the relay.
 */
RSP_API uint64_t rsp_waitgraph__relayed(const struct rsp_waitgraph *g);

#endif /* RSP_WAITGRAPH_H */
