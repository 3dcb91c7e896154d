/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SNAPNAMES_H
#define RSP_INTERNAL_SNAPNAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/access.h>
#include <rsp/snapshot.h>
#include "internal/redact.h"

struct rsp_ksyms;
struct rsp_symbolizer;

/*
 * Names for what a snapshot holds, as the requester may see them: threads
 * and processes (other users' as "pid N (other user)", THE RULE in
 * rsp/query.h), wakers, and stacks as function names (the source's
 * symbolizer; without one, kernel names from its kernel symbols and user
 * frames as addresses). Shared by the snapshot's renderers.
 */
struct snapnames {
	const struct rsp_access *access;
	struct rsp_symbolizer *symbols; /* NULL: none */
	const struct rsp_ksyms *ksyms;	/* NULL: none */
	const struct rsp_snapshot *snap;
	const struct rsp_tlstore *store;
	struct rsp_redact red; /* the access rule */
};

#define SNAP_FRAME_LEN 160

struct snap_frame {
	bool kernel;
	char name[SNAP_FRAME_LEN];
	uint64_t addr;	    /* 0: not shown (hidden) */
	const char *object; /* the symbolizer's (interned), "[kernel]"; NULL: not known */
};

/*
 * rsp_snapnames__init() - names for @snap as the requester @access may
 * see them, from @symbols and @ksyms (a query's source's; NULL: none).
 * All must outlive @n.
 */
int rsp_snapnames__init(struct snapnames *n, const struct rsp_access *access,
			struct rsp_symbolizer *symbols, const struct rsp_ksyms *ksyms,
			const struct rsp_snapshot *snap);
void rsp_snapnames__exit(struct snapnames *n);

/**
 * Thread @tid (of process @tgid, 0: not known) is another user's, or its
 * owner cannot be told: hide its names and stacks (rsp_redact__hidden()).
 */
bool rsp_snapnames__hidden(struct snapnames *n, uint32_t tid, uint32_t tgid);

/** The thread's comm as the window knows it ("" if never seen). */
const char *rsp_snapnames__comm(const struct snapnames *n, uint32_t tid);

/**
 * "comm (pid P)" for a main thread, "comm T (pid P)" for another, or
 * "pid P (other user)". Writes into @buf and returns it.
 */
char *rsp_snapnames__thread(struct snapnames *n, uint32_t tid, uint32_t tgid, char *buf,
			    size_t size);

/**
 * A runnable node's label by the sleep reason before it: "preempted
 * (runnable)" after a preemption, else "runnable (woken -> running)". Static.
 */
const char *rsp_snapnames__runnable(uint8_t reason);

/** What ended sleep node @sl: a thread (named as above), "disk 8:0", "timer", ... */
char *rsp_snapnames__waker(struct snapnames *n, const struct rsp_snode *sl, char *buf, size_t size);

/**
 * The frames worth showing of callchain @ips of thread @tid (of @tgid, 0:
 * not known) at @time, innermost first: the scheduler's own frames at the
 * top of the kernel part are skipped; a hidden thread (another user's)
 * gets none. Return: how many.
 */
int rsp_snapnames__frames(struct snapnames *n, uint32_t tid, uint32_t tgid, uint64_t time,
			  const uint64_t *ips, uint32_t nr, struct snap_frame *out, int max);

/** The innermost user function of @ips ("" if none or hidden): into @buf. */
char *rsp_snapnames__user_fn(struct snapnames *n, uint32_t tid, uint32_t tgid, uint64_t time,
			     const uint64_t *ips, uint32_t nr, char *buf, size_t size);

#endif
