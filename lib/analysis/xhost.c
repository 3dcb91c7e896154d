// SPDX-License-Identifier: LGPL-2.1
/*
 * Across hosts: socket ends of N hosts matched by 4-tuple in one hash
 * table, and the NTP-style bound of two hosts' clock offset (see
 * rsp/xhost.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <rsp/xhost.h>
#include "internal/hash.h"
#include "internal/u64map.h"
#include "internal/vec.h"

#define NONE UINT32_MAX
/*
 * Two ends whose lifetimes miss each other by up to this much still match:
 * the caller's common clock (each host's realtime) is only as good as the
 * hosts' time synchronisation.
 */
#define OVERLAP_SLACK_NS 1000000000ll

struct xend {
	struct rsp_xend e; /* addresses canonical */
	uint32_t next;	   /* the next end in the same hash chain */
	int64_t peer;	   /* -1: none */
	uint8_t state;	   /* enum rsp_xend_state */
};

struct rsp_xmatch {
	struct xend *v;
	size_t nr, cap;
	struct rsp_u64map map; /* tuple hash -> first end of its chain */
};

struct rsp_sockaddr rsp_sockaddr__canon(const struct rsp_sockaddr *a)
{
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	struct rsp_sockaddr c = *a;

	if (c.family == AF_INET6 && !memcmp(c.addr, v4mapped, 12)) {
		c.family = AF_INET;
		memmove(c.addr, c.addr + 12, 4);
	}
	if (c.family == AF_INET)
		memset(c.addr + 4, 0, 12);
	return c;
}

struct rsp_xmatch *rsp_xmatch__new(void)
{
	struct rsp_xmatch *m = calloc(1, sizeof(*m));

	if (m)
		rsp_u64map__init(&m->map);
	return m;
}

void rsp_xmatch__delete(struct rsp_xmatch *m)
{
	if (!m)
		return;
	rsp_u64map__exit(&m->map);
	free(m->v);
	free(m);
}

int64_t rsp_xmatch__add(struct rsp_xmatch *m, const struct rsp_xend *e)
{
	struct xend *x;

	if (m->nr >= NONE || rsp_vec__reserve((void **)&m->v, &m->cap, m->nr + 1, sizeof(*m->v)))
		return -ENOMEM;
	x = &m->v[m->nr];
	*x = (struct xend){.e = *e, .next = NONE, .peer = -1, .state = RSP_XEND_NO_PEER};
	x->e.local = rsp_sockaddr__canon(&e->local);
	x->e.remote = rsp_sockaddr__canon(&e->remote);
	return (int64_t)m->nr++;
}

/* The same key for (a, b) and (b, a): the smaller endpoint first. */
static uint64_t tuple_key(const struct rsp_xend *e)
{
	const struct rsp_sockaddr *a = &e->local, *b = &e->remote;
	uint64_t h;

	if (memcmp(a, b, sizeof(*a)) > 0) {
		a = &e->remote;
		b = &e->local;
	}
	h = rsp_hash__bytes(RSP_HASH_INIT, a, sizeof(*a));
	h = rsp_hash__bytes(h, b, sizeof(*b));
	return h == UINT64_MAX ? 0 : h; /* UINT64_MAX is the map's empty key */
}

static int index_end(struct rsp_xmatch *m, uint32_t i)
{
	struct xend *x = &m->v[i];
	uint64_t key;
	uint32_t head = NONE;

	if (!x->e.local.family || !x->e.remote.family) {
		x->state = RSP_XEND_UNKNOWN;
		return 0;
	}
	if (rsp_sockaddr__is_loopback(&x->e.local) || rsp_sockaddr__is_loopback(&x->e.remote)) {
		x->state = RSP_XEND_LOOPBACK;
		return 0;
	}
	key = tuple_key(&x->e);
	rsp_u64map__get(&m->map, key, &head);
	x->next = head;
	return rsp_u64map__put(&m->map, key, i) ? -ENOMEM : 0;
}

static bool is_peer(const struct rsp_xend *a, const struct rsp_xend *b)
{
	return a->host != b->host && !memcmp(&a->local, &b->remote, sizeof(a->local)) &&
	       !memcmp(&a->remote, &b->local, sizeof(a->remote));
}

static int64_t overlap(const struct rsp_xend *a, const struct rsp_xend *b)
{
	int64_t from = a->first > b->first ? a->first : b->first;
	int64_t to = a->last < b->last ? a->last : b->last;

	return to - from;
}

/* The unmatched peer of end @i whose lifetime overlaps its own the most. */
static int64_t best_peer(const struct rsp_xmatch *m, uint32_t i)
{
	const struct rsp_xend *a = &m->v[i].e;
	int64_t best = -1, best_ov = -OVERLAP_SLACK_NS - 1;
	uint32_t head = NONE;

	rsp_u64map__get(&m->map, tuple_key(a), &head);
	for (uint32_t j = head; j != NONE; j = m->v[j].next) {
		int64_t ov;

		if (m->v[j].peer >= 0 || !is_peer(a, &m->v[j].e))
			continue;
		ov = overlap(a, &m->v[j].e);
		if (ov > best_ov) {
			best_ov = ov;
			best = j;
		}
	}
	return best;
}

int64_t rsp_xmatch__run(struct rsp_xmatch *m)
{
	int64_t pairs = 0;

	rsp_u64map__exit(&m->map);
	rsp_u64map__init(&m->map);
	for (size_t i = 0; i < m->nr; i++) {
		m->v[i].peer = -1;
		m->v[i].state = RSP_XEND_NO_PEER;
		if (index_end(m, (uint32_t)i))
			return -ENOMEM;
	}
	for (size_t i = 0; i < m->nr; i++) {
		int64_t j;

		if (m->v[i].state != RSP_XEND_NO_PEER || m->v[i].peer >= 0)
			continue;
		j = best_peer(m, (uint32_t)i);
		if (j < 0)
			continue;
		m->v[i].peer = j;
		m->v[j].peer = (int64_t)i;
		m->v[i].state = m->v[j].state = RSP_XEND_MATCHED;
		pairs++;
	}
	return pairs;
}

const struct rsp_xend *rsp_xmatch__end(const struct rsp_xmatch *m, size_t i)
{
	return i < m->nr ? &m->v[i].e : NULL;
}

int64_t rsp_xmatch__peer(const struct rsp_xmatch *m, size_t i, enum rsp_xend_state *state)
{
	if (i >= m->nr) {
		if (state)
			*state = RSP_XEND_UNKNOWN;
		return -1;
	}
	if (state)
		*state = m->v[i].state;
	return m->v[i].peer;
}

const char *rsp_xend__state_name(enum rsp_xend_state s)
{
	switch (s) {
	case RSP_XEND_MATCHED:
		return "matched";
	case RSP_XEND_LOOPBACK:
		return "loopback";
	case RSP_XEND_NO_PEER:
		return "no-peer";
	default:
		return "unknown";
	}
}

void rsp_clockoff__init(struct rsp_clockoff *c)
{
	memset(c, 0, sizeof(*c));
}

void rsp_clockoff__exit(struct rsp_clockoff *c)
{
	free(c->iv);
	memset(c, 0, sizeof(*c));
}

int rsp_clockoff__add(struct rsp_clockoff *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4)
{
	if (c->nr_pairs == UINT32_MAX ||
	    rsp_vec__reserve((void **)&c->iv, &c->cap, c->nr_pairs + 1, sizeof(*c->iv)))
		return -ENOMEM;
	c->iv[c->nr_pairs++] = (struct rsp_clockoff_iv){t3 - t4, t2 - t1};
	return 0;
}

struct edge {
	int64_t at;
	int delta; /* +1 a pair's lower bound, -1 its upper bound */
};

static int edge_cmp(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return b->delta - a->delta; /* closed bounds: a lower bound before an upper one */
}

/*
 * Marzullo's algorithm: sweep the bounds in order; where the most pairs
 * overlap is the estimate's interval, from the lower bound that reached
 * the count to the next upper bound.
 */
static int marzullo(struct rsp_clockoff *c)
{
	struct edge *e = calloc(2 * (size_t)c->nr_pairs, sizeof(*e));
	int n = 0, best = 0;

	if (!e)
		return -ENOMEM;
	for (unsigned i = 0; i < c->nr_pairs; i++) {
		e[2 * i] = (struct edge){c->iv[i].lo, 1};
		e[2 * i + 1] = (struct edge){c->iv[i].hi, -1};
	}
	qsort(e, 2 * (size_t)c->nr_pairs, sizeof(*e), edge_cmp);
	for (size_t i = 0; i < 2 * (size_t)c->nr_pairs; i++) {
		n += e[i].delta;
		if (n > best) {
			best = n;
			c->lo = e[i].at;
			c->hi = e[i + 1].at; /* an upper bound follows: n > 0 */
		}
	}
	c->nr_agree = (unsigned)best;
	free(e);
	return 0;
}

int rsp_clockoff__result(struct rsp_clockoff *c, int64_t *estimate, int64_t *uncertainty)
{
	int err;

	c->nr_agree = 0;
	if (c->nr_pairs < RSP_CLOCKOFF_MIN_PAIRS)
		return -ENODATA;
	if ((err = marzullo(c)))
		return err;
	if (c->nr_agree < RSP_CLOCKOFF_MIN_PAIRS)
		return -ERANGE;
	/* Halves first: lo + hi may overflow. */
	*estimate = c->lo / 2 + c->hi / 2 + (c->lo % 2 + c->hi % 2) / 2;
	*uncertainty = (c->hi - c->lo + 1) / 2;
	return 0;
}
