/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_REDACT_H
#define RSP_INTERNAL_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/access.h>
#include "internal/u64map.h"

struct rsp_tlstore;

/*
 * The access rule's redaction (rule 3 of struct rsp_access in rsp/access.h),
 * in one place: every command asks here, and only here, whether a thread
 * or process is another user's, and names such a one only as "pid N (other
 * user)", with no command name, no stack below its kernel frames, no
 * addresses.
 *
 * A thread's details belong to its process: its tgid, from the record, or
 * else from the query's store when one is given (rsp_redact__use_store()),
 * or else the thread itself (/proc/TID answers for a live thread too). An
 * owner that cannot be told (a thread or process that has exited, a record
 * that names nobody) means hidden: never shown by default.
 *
 * The decision is cached per owner for the life of one query:
 * rsp_access__may_see() may read /proc, and a query asks about the same
 * process once per thread, profile or socket.
 */
struct rsp_redact {
	const struct rsp_access *access;
	const struct rsp_tlstore *store; /* NULL: none */
	struct rsp_u64map seen;		 /* owner pid -> 1 visible, 2 hidden */
};

/** rsp_redact__init() - decide for the requester @access; @access must outlive @r. */
void rsp_redact__init(struct rsp_redact *r, const struct rsp_access *access);
void rsp_redact__exit(struct rsp_redact *r);

/**
 * rsp_redact__use_store() - learn a thread's process from @store when a
 * record did not carry it; @store must outlive @r (or be replaced).
 */
void rsp_redact__use_store(struct rsp_redact *r, const struct rsp_tlstore *store);

/**
 * rsp_redact__owner() - the process whose owner decides for thread @tid
 * of process @tgid (0: not known): @tgid, else the store's, else @tid.
 * 0 only for the idle task (tid 0).
 */
uint32_t rsp_redact__owner(const struct rsp_redact *r, uint32_t tid, uint32_t tgid);

/**
 * rsp_redact__hidden() - THE access decision: are thread @tid's details
 * (of process @tgid, 0 when not known) hidden from the requester? Never
 * for an unrestricted requester, nor for the idle task (tid and tgid 0).
 * A process is asked about as its main thread: (pid, pid).
 */
bool rsp_redact__hidden(struct rsp_redact *r, uint32_t tid, uint32_t tgid);

/**
 * rsp_redact__label() - the name of a hidden thread
 * Return: NULL when it is visible (name it as you will); else @buf,
 * holding "pid N (other user)", N its owner (at most @n bytes,
 * NUL-terminated).
 */
const char *rsp_redact__label(struct rsp_redact *r, uint32_t tid, uint32_t tgid, char *buf,
			      size_t n);

/** rsp_redact__comm() - @comm, or "(other user)" when the thread is hidden. */
const char *rsp_redact__comm(struct rsp_redact *r, uint32_t tid, uint32_t tgid, const char *comm);

/** rsp_redact__sym_flags() - symbolizer flags for the thread's addresses (RSP_SYM_HIDE_USER or 0).
 */
unsigned rsp_redact__sym_flags(struct rsp_redact *r, uint32_t tid, uint32_t tgid);

#endif /* RSP_INTERNAL_REDACT_H */
