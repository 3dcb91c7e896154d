/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_ACCESS_H
#define RSP_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>

/*
 * Who asks, for access control. rspd fills it from the client's
 * SO_PEERCRED on every request; offline (`rspctl analyze FILE`: whoever
 * can read the dump sees all of it) and in-process callers leave it zeroed,
 * which means unrestricted.
 *
 * THE RULE, which every command applies through the helpers of rsp/query.h
 * (rsp_source__*(), which ask rsp_access__*() below):
 *  1. An unrestricted requester (root, a member of rspd's admin group,
 *     offline) sees everything.
 *  2. A restricted requester may name (--pid, a positional PID, ...) only
 *     processes whose real uid is theirs: call rsp_source__check_pid() on
 *     every process the user names, before reading the window; it answers
 *     -EACCES with one sentence otherwise. A process whose owner cannot be
 *     told (it exited, so /proc no longer has it) counts as another user's.
 *  3. In the answers to a restricted requester, every process for which
 *     rsp_source__may_see() is false appears only as "pid N (other user)"
 *     (text; rsp_redact__label() writes it) or {"pid": N, "other_user":
 *     true} (JSON): no comm, no command line, no thread names, no stacks,
 *     no file or socket names. Counts and durations may stay: they are
 *     what the user's own process experienced.
 *  4. pid 0 (the idle task, whose context interrupts on an idle CPU run
 *     in) is nobody's process and is always shown.
 * Decide per process (tgid), never per thread name; call may_see() once
 * per process in the answer, not per record (it may read /proc). The
 * commands decide rule 3 through one function, rsp_redact__hidden()
 * (lib/include/internal/redact.h), which also settles a thread whose
 * process the window never said: by the thread itself, hidden when its
 * owner cannot be told; never as if it were pid 0.
 * Known gap: ownership is read at query time, so if a pid was reused, the
 * window's records of its earlier holder are attributed to the current one
 * (a fix needs each process's start time; not done yet).
 */
struct rsp_access {
	bool restricted; /* false: sees everything */
	uint32_t uid;	 /* the requester's uid, when restricted */
	/*
	 * The real uid of live process @pid: 0 and *uid, or -errno (-ESRCH:
	 * gone). rspd reads /proc/PID/status and caches per request.
	 */
	int (*uid_of)(void *ctx, long pid, uint32_t *uid);
	void *ctx;
	/*
	 * perf_event_paranoid as the owner read it for this query (rspd reads
	 * /proc/sys/kernel/perf_event_paranoid for each restricted one): what
	 * a restricted requester may see of the cpu-clock samples, as perf
	 * would let them profile the machine themselves:
	 *   <= 0  every process's samples (other users' as rule 3 says);
	 *   1     only those of their own processes: no other user's, not
	 *         the idle task (perf: no system-wide events);
	 *   >= 2  as 1, and no kernel symbols or addresses: kernel frames
	 *         are counted but not named (perf: no kernel profiling).
	 * The kernel-symbol part holds wherever an answer shows frames.
	 */
	int paranoid;
};

/*
 * The rule's decisions on @a alone (lib/format/access.c), below the
 * renderers that apply them (internal/redact.h, internal/snapnames.h); the
 * query layer's rsp_source__*() ask these.
 */
/** rsp_access__may_see() - may @a see process @pid's details? (rule 1, 3, 4) */
RSP_API bool rsp_access__may_see(const struct rsp_access *a, long pid);
/** rsp_access__system_wide() - other users' samples too (paranoid <= 0, or unrestricted)? */
RSP_API bool rsp_access__system_wide(const struct rsp_access *a);
/** rsp_access__kernel_symbols() - kernel names and addresses (paranoid <= 1, or unrestricted)? */
RSP_API bool rsp_access__kernel_symbols(const struct rsp_access *a);

#define RSP_OTHER_USER "(other user)"

#endif /* RSP_ACCESS_H */
