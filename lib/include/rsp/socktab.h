/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SOCKTAB_H
#define RSP_SOCKTAB_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/net.h>

/*
 * The socket table: kernel socket address -> protocol and 4-tuple,
 * versioned by time (the kernel reuses a freed socket's address for a new
 * one). Sources:
 *  - the TCP state and receive tracepoints of the stream (the timeline
 *    keeps one table per stream);
 *  - /proc/net/{tcp,tcp6,udp,udp6}, read by rspd at start for sockets
 *    older than it (the base table queries pass to the timeline). Those
 *    files show the socket's address only when the kernel lets its reader
 *    see kernel pointers: with kptr_restrict 0 they print a hash, with 2
 *    zeros, and such lines are counted as hidden, not used.
 *
 * The table is plain data, so that a dump can carry it. Not thread-safe:
 * fill it, then share it read-only.
 */
struct rsp_socktab;

struct rsp_sock_info {
	uint64_t sk;
	uint8_t proto;	/* RSP_IPPROTO_* */
	uint8_t state;	/* TCP state, 0 if not known */
	uint8_t source; /* RSP_SOCK_FROM_* */
	uint8_t pad;
	uint32_t inode; /* /proc only, 0 otherwise */
	struct rsp_sockaddr local, remote;
};

#define RSP_SOCK_FROM_RECORD 1 /* a state or receive tracepoint */
#define RSP_SOCK_FROM_PROC   2 /* /proc/net at start */

/** rsp_socktab__new() - an empty table; NULL on ENOMEM. Free with __delete(). */
RSP_API struct rsp_socktab *rsp_socktab__new(void);
RSP_API void rsp_socktab__delete(struct rsp_socktab *t);

/**
 * rsp_socktab__add() - what @si->sk is from @from on
 *
 * A version equal to the latest one for the same socket is not added again
 * (a receive tracepoint repeats the tuple). Return: 0 or -ENOMEM.
 */
RSP_API int rsp_socktab__add(struct rsp_socktab *t, const struct rsp_sock_info *si, uint64_t from);

/**
 * rsp_socktab__find() - what @sk was at @time: its latest version from at
 * or before @time. Return: 0 and *out, or -ENOENT.
 */
RSP_API int rsp_socktab__find(const struct rsp_socktab *t, uint64_t sk, uint64_t time,
			      struct rsp_sock_info *out);

/**
 * rsp_socktab__expire() - forget every socket whose latest version is from
 * before @before (for a table fed forever: bounded memory; a socket still
 * in use is named again by its next state or receive record).
 * Return: the sockets forgotten.
 */
RSP_API size_t rsp_socktab__expire(struct rsp_socktab *t, uint64_t before);

/**
 * rsp_socktab__version() - version @i (0 ... in the order added) of any
 * socket, and the time it holds from (@from may be NULL)
 * Return: 0, or -ENOENT past the last version.
 */
RSP_API int rsp_socktab__version(const struct rsp_socktab *t, size_t i, struct rsp_sock_info *out,
				 uint64_t *from);

/** rsp_socktab__count() - sockets (not versions) in the table. */
RSP_API size_t rsp_socktab__count(const struct rsp_socktab *t);

/**
 * rsp_socktab__parse_proc_line() - one line of /proc/net/{tcp,udp}{,6}
 * @family: AF_INET or AF_INET6 (which file); @proto: RSP_IPPROTO_*
 *
 * Return: 0; -EPERM when the line hides its socket's address (a hashed or
 * zeroed pointer); -EINVAL for a header or malformed line.
 */
RSP_API int rsp_socktab__parse_proc_line(const char *line, uint16_t family, uint8_t proto,
					 struct rsp_sock_info *out);

struct rsp_socktab_load {
	unsigned files;	  /* files read */
	unsigned sockets; /* added */
	unsigned hidden;  /* lines whose socket address the kernel hid */
};

/**
 * rsp_socktab__load_proc() - add every socket of @proc_dir/net/{tcp,tcp6,
 * udp,udp6}, valid from the start of time
 *
 * A file that does not exist (no IPv6) is skipped. Return: 0, or -errno
 * with one sentence in @err when none could be read.
 */
RSP_API int rsp_socktab__load_proc(struct rsp_socktab *t, const char *proc_dir,
				   struct rsp_socktab_load *res, struct rsp_buf *err);

#endif /* RSP_SOCKTAB_H */
