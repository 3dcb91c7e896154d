/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_XHOST_H
#define RSP_XHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/net.h>

/*
 * Across hosts: the two ends of one TCP connection seen by two hosts'
 * dumps, and the offset between the hosts' clocks.
 *
 * struct rsp_xmatch indexes every TCP socket end of N hosts in one hash
 * table keyed by the connection's 4-tuple taken in a canonical order, so
 * that host A's end (local a, remote b) and host B's end (local b, remote
 * a) fall in the same chain: matching N hosts costs one pass, not a scan
 * of every pair of dumps. A v4-mapped IPv6 address (::ffff:a.b.c.d)
 * equals the IPv4 address. When a port is reused after a close, several
 * ends share a 4-tuple: an end is matched to the peer whose lifetime
 * overlaps its own the most (lifetimes in a common coarse clock the caller
 * gives, e.g. each host's realtime). Loopback ends are never matched
 * across hosts (127.0.0.1 on A is not 127.0.0.1 on B); ends behind a NAT
 * are not matched either: the 4-tuples the two hosts see differ and
 * nothing in a dump says how (stated, not guessed).
 *
 * struct rsp_clockoff bounds the offset theta = clock_B - clock_A from
 * request/response pairs as NTP does: A sends at t1 (A's clock), B
 * receives at t2 (B's), B answers at t3 (B's), A receives at t4 (A's).
 * Delays are never negative, so t3 - t4 <= theta <= t2 - t1; the bounds of
 * the pairs that agree are intersected. The estimate is the midpoint, the
 * uncertainty the half-width: the true offset is inside by construction.
 */

/* One socket end, as one host saw it. */
struct rsp_xend {
	uint32_t host; /* the caller's host index */
	uint64_t sk;   /* the socket's kernel address on that host */
	struct rsp_sockaddr local, remote;
	int64_t first, last; /* lifetime seen, in the caller's common clock */
};

enum rsp_xend_state {
	RSP_XEND_MATCHED,
	RSP_XEND_LOOPBACK, /* a loopback address: never across hosts */
	RSP_XEND_NO_PEER,  /* no dump holds the other end (host not dumped, NAT) */
	RSP_XEND_UNKNOWN,  /* no 4-tuple known for the socket */
};

struct rsp_xmatch;

/** rsp_xmatch__new() - an empty index; NULL on ENOMEM. Free with __delete(). */
RSP_API struct rsp_xmatch *rsp_xmatch__new(void);
RSP_API void rsp_xmatch__delete(struct rsp_xmatch *m);

/**
 * rsp_xmatch__add() - index one socket end (copied)
 * Return: its index (0, 1, ... in call order), or -ENOMEM.
 */
RSP_API int64_t rsp_xmatch__add(struct rsp_xmatch *m, const struct rsp_xend *e);

/**
 * rsp_xmatch__run() - pair every end with its peer on another host
 * Return: the number of matched pairs, or -ENOMEM.
 */
RSP_API int64_t rsp_xmatch__run(struct rsp_xmatch *m);

/** rsp_xmatch__end() - end @i (owned by @m), NULL when out of range. */
RSP_API const struct rsp_xend *rsp_xmatch__end(const struct rsp_xmatch *m, size_t i);

/**
 * rsp_xmatch__peer() - after __run(): the index of end @i's peer, or -1
 * with *@state saying why (@state may be NULL).
 */
RSP_API int64_t rsp_xmatch__peer(const struct rsp_xmatch *m, size_t i, enum rsp_xend_state *state);

/** rsp_xend__state_name() - "matched", "loopback", "no-peer", "unknown". Static. */
RSP_API const char *rsp_xend__state_name(enum rsp_xend_state s);

/** rsp_sockaddr__canon() - @a with a v4-mapped IPv6 address made IPv4. */
RSP_API struct rsp_sockaddr rsp_sockaddr__canon(const struct rsp_sockaddr *a);

struct rsp_clockoff_iv {
	int64_t lo, hi;
};

struct rsp_clockoff {
	struct rsp_clockoff_iv *iv; /* every pair's bounds */
	size_t cap;
	unsigned nr_pairs; /* request/response pairs added */
	unsigned nr_agree; /* after __result(): the pairs whose bounds hold the estimate */
	int64_t lo, hi;	   /* after __result(): the intersection of those pairs' bounds */
};

/** rsp_clockoff__init() - no pair yet. */
RSP_API void rsp_clockoff__init(struct rsp_clockoff *c);
/** rsp_clockoff__exit() - free the pairs. */
RSP_API void rsp_clockoff__exit(struct rsp_clockoff *c);

/** rsp_clockoff__add() - one request/response pair (see above), ns. 0 or -ENOMEM. */
RSP_API int rsp_clockoff__add(struct rsp_clockoff *c, int64_t t1, int64_t t2, int64_t t3,
			      int64_t t4);

#define RSP_CLOCKOFF_MIN_PAIRS 3

/**
 * rsp_clockoff__result() - theta's estimate (midpoint) and uncertainty
 * (half-width), ns
 *
 * A pair from a wrongly aligned exchange (an operation one side missed)
 * gives bounds that exclude the true offset; as NTP combines its sources
 * (Marzullo's algorithm), the estimate is the interval where the most
 * pairs' bounds overlap, the intersection of those pairs' bounds; the
 * others are rejected (nr_pairs - nr_agree). Return: 0; -ENODATA with
 * fewer than RSP_CLOCKOFF_MIN_PAIRS pairs; -ERANGE when fewer than that
 * many agree (pairs wrongly matched, or a clock that stepped).
 */
RSP_API int rsp_clockoff__result(struct rsp_clockoff *c, int64_t *estimate, int64_t *uncertainty);

#endif /* RSP_XHOST_H */
