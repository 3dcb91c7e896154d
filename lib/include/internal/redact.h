/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_REDACT_H
#define RSP_INTERNAL_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/query.h>
#include "internal/u64map.h"

/*
 * The access rule's redaction (rule 3 of struct rsp_access in rsp/query.h),
 * in one place: every command asks here whether a process is another
 * user's, and names such a process only as "pid N (other user)", with no
 * command name, no stack below its kernel frames, no addresses.
 *
 * The decision is cached per process for the life of one query:
 * rsp_source__may_see() may read /proc, and a query asks about the same
 * process once per thread, profile or socket.
 */
struct rsp_redact {
	const struct rsp_source *src;
	struct rsp_u64map seen; /* pid -> 1 visible, 2 hidden */
};

/** rsp_redact__init() - decide for @src's requester; @src must outlive @r. */
void rsp_redact__init(struct rsp_redact *r, const struct rsp_source *src);
void rsp_redact__exit(struct rsp_redact *r);

/**
 * rsp_redact__hidden() - is process @pid another user's? Never for an
 * unrestricted requester, nor for pid 0 (the idle task, the kernel).
 */
bool rsp_redact__hidden(struct rsp_redact *r, uint32_t pid);

/**
 * rsp_redact__label() - the name of a hidden process
 * Return: NULL when @pid is visible (name it as you will); else @buf,
 * holding "pid N (other user)" (at most @n bytes, NUL-terminated).
 */
const char *rsp_redact__label(struct rsp_redact *r, uint32_t pid, char *buf, size_t n);

/** rsp_redact__comm() - @comm, or "(other user)" when @pid is hidden. */
const char *rsp_redact__comm(struct rsp_redact *r, uint32_t pid, const char *comm);

/** rsp_redact__sym_flags() - symbolizer flags for @pid's addresses (RSP_SYM_HIDE_USER or 0). */
unsigned rsp_redact__sym_flags(struct rsp_redact *r, uint32_t pid);

#endif /* RSP_INTERNAL_REDACT_H */
