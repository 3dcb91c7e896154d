// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl merge DUMP DUMP [...] net`: N hosts' dumps joined by their TCP
 * connections. Every socket end with a known 4-tuple (the window's state
 * and receive records, and the socket table the dump carries) goes into
 * one index (rsp/xhost.h); each matched connection's network operations on
 * both hosts give NTP-style request/response pairs that bound the hosts'
 * clock offset. The answer: the hosts, each pair's offset with its
 * uncertainty, and the connections across hosts with their threads; or
 * the snapshot across hosts (lib/query/merge_local.c); graph is
 * lib/query/merge_graph.c; the arguments and the run lib/query/merge_run.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/net.h>
#include <rsp/perfdata.h>
#include <rsp/query.h>
#include <rsp/sleepclass.h>
#include <rsp/socktab.h>
#include <rsp/timeline.h>
#include <rsp/tlstore.h>
#include <rsp/xhost.h>
#include "internal/json.h"
#include "internal/merge.h"
#include "internal/vec.h"
#include "internal/gallop.h"

/* ---- loading ---------------------------------------------------------------- */

/*
 * Times past 2^62 ns (146 years of uptime) are no clock's: a crafted or
 * corrupt dump. Below it, every sum and difference merge takes of two
 * times, a shift (an hour at most) and a clock pair fits in int64_t.
 */
#define TIME_LIMIT (1ull << 62)

static bool beyond_clocks(uint64_t a, uint64_t b)
{
	return a >= TIME_LIMIT || b >= TIME_LIMIT;
}

static int beyond_any_clock(const struct mhost *h, struct rsp_buf *err)
{
	rsp_buf__printf(err,
			"merge: %s is corrupt: its clock pair or record times are beyond any "
			"clock (%" PRIu64 ", %" PRIu64 "): take a new dump",
			h->path, h->di->clockid_time_ns, h->di->wall_clock_ns);
	return -EINVAL;
}

/* @str is valid UTF-8 (as jansson wants it: no overlong forms, no surrogates). */
static bool utf8_ok(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		unsigned char b = *s++;
		uint32_t c;
		int n;

		if (b < 0x80)
			continue;
		if (b >= 0xc2 && b <= 0xdf)
			n = 1, c = b & 0x1f;
		else if ((b & 0xf0) == 0xe0)
			n = 2, c = b & 0x0f;
		else if (b >= 0xf0 && b <= 0xf4)
			n = 3, c = b & 0x07;
		else
			return false;
		for (; n; n--, s++) {
			if ((*s & 0xc0) != 0x80)
				return false;
			c = c << 6 | (*s & 0x3f);
		}
		if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff || (b >= 0xe0 && c < 0x800) ||
		    (b >= 0xf0 && c < 0x10000))
			return false;
	}
	return true;
}

/*
 * --json carries a dump's host name, boot id and path as JSON strings,
 * which must be UTF-8: jansson refuses the rest (json_pack() returns NULL
 * and the host would vanish from the answer). Refused, naming the dump.
 */
static int check_utf8(const struct mhost *h, struct rsp_buf *err)
{
	const char *what = !utf8_ok(h->path)	       ? "its path"
			   : !utf8_ok(h->di->hostname) ? "its host name"
			   : !utf8_ok(h->di->boot_id)  ? "its boot id"
						       : NULL;

	if (!what)
		return 0;
	rsp_buf__printf(err,
			"merge: %s: %s is not valid UTF-8, which --json cannot carry: leave out "
			"--json for the text answer",
			h->path, what);
	return -EINVAL;
}

static int check_host(const struct merge *m, int k, struct rsp_buf *err)
{
	const struct mhost *h = &m->h[k];

	if (!h->di->written_by_rsp || !h->di->has_host || !h->di->clock_data) {
		rsp_buf__printf(
			err,
			"merge: %s was written by %s older than this one (or by perf); merge "
			"needs the host's boot id, clock pair and socket table: take a new "
			"dump with this rspd",
			h->path, h->di->written_by_rsp ? "an rspd" : "a program");
		return -EINVAL;
	}
	if (beyond_clocks(h->di->clockid_time_ns, h->di->wall_clock_ns))
		return beyond_any_clock(h, err);
	if (m->json && check_utf8(h, err))
		return -EINVAL;
	for (int j = 0; j < k; j++) {
		const struct mhost *o = &m->h[j];
		bool same_boot = h->di->boot_id[0] && !strcmp(h->di->boot_id, o->di->boot_id);

		/*
		 * Dumps of two network namespaces of one machine (rspctl dump
		 * --netns: "HOST/netns:INODE") are two hosts with one boot id.
		 */
		if (same_boot && strcmp(h->di->hostname, o->di->hostname) &&
		    (strstr(h->di->hostname, "/netns:") || strstr(o->di->hostname, "/netns:")))
			same_boot = false;
		/* The same host twice is only the tests' shifted copy (--test-clock-shift). */
		if ((same_boot || !strcmp(h->di->hostname, o->di->hostname)) &&
		    !(h->shifted || o->shifted)) {
			rsp_buf__printf(
				err,
				"merge: %s and %s are both from host %s%s: merge joins dumps "
				"of different hosts, give one dump per host",
				o->path, h->path, h->di->hostname,
				same_boot ? " (the same boot id)" : "");
			return -EINVAL;
		}
	}
	return 0;
}

static int sock_table(struct mhost *h)
{
	const struct rsp_sock_info *v = rsp_perfdata__sockets(h->pd);

	h->socks = rsp_socktab__new();
	if (!h->socks)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->di->nr_sockets; i++)
		if (rsp_socktab__add(h->socks, &v[i], 0))
			return -ENOMEM;
	return 0;
}

/* One socket end: the same socket with the same 4-tuple. */
static int end_cmp(const struct rsp_net_op *a, const struct rsp_net_op *b)
{
	int c;

	if (a->sk != b->sk)
		return a->sk < b->sk ? -1 : 1;
	if ((c = memcmp(&a->local, &b->local, sizeof(a->local))))
		return c;
	return memcmp(&a->remote, &b->remote, sizeof(a->remote));
}

static int op_cmp(const void *pa, const void *pb)
{
	const struct rsp_net_op *a = *(const struct rsp_net_op *const *)pa;
	const struct rsp_net_op *b = *(const struct rsp_net_op *const *)pb;
	int c = end_cmp(a, b);

	if (c)
		return c;
	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * The TCP operations whose 4-tuple is known, grouped by socket end. Records
 * are loaded per CPU in file order: one stamped out of time order may end
 * an operation before its start, whose length (end - start, unsigned
 * everywhere) would wrap. Such a dump is refused.
 */
static int collect_ops(struct mhost *h, struct rsp_buf *err)
{
	size_t n;
	const struct rsp_net_op *v = rsp_tlstore__net_ops(h->store, &n);

	h->ops = calloc(n ? n : 1, sizeof(*h->ops));
	if (!h->ops) {
		rsp_buf__printf(err, "merge: out of memory loading %s", h->path);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].proto != RSP_IPPROTO_TCP)
			continue;
		if (v[i].end < v[i].start) {
			rsp_buf__printf(err,
					"merge: %s is corrupt: a TCP operation ends before it "
					"starts (records out of time order)",
					h->path);
			return -EINVAL;
		}
		if (v[i].flags & RSP_NETF_TUPLE)
			h->ops[h->nr_ops++] = &v[i];
		else
			h->untupled++;
	}
	qsort(h->ops, h->nr_ops, sizeof(*h->ops), op_cmp);
	return 0;
}

int rsp_merge__load_host(struct merge *m, int k, struct rsp_buf *err)
{
	struct mhost *h = &m->h[k];
	struct rsp_tlstore_opts so = {0};
	struct rsp_source src;
	int ret;

	h->pd = rsp_perfdata__open(h->path, err);
	if (!h->pd)
		return -EINVAL;
	h->di = rsp_perfdata__info(h->pd);
	if ((ret = check_host(m, k, err)))
		return ret;
	if ((ret = rsp_perfdata__source(h->pd, &src, err)))
		return ret;
	if (sock_table(h))
		goto nomem;
	h->snap = rsp_window__pin(src.window, 0, UINT64_MAX);
	if (!h->snap)
		goto nomem;
	/* The store's window is the records' span (graph's percentages), not all time. */
	rsp_wsnap__span(h->snap, &so.from, &so.to);
	if (beyond_clocks(so.from, so.to))
		return beyond_any_clock(h, err);
	so.ksyms = src.ksyms;
	so.socks = h->socks;
	/* Every segment: a send's earliest start is the start of its run (see
	 * rsp_merge__send_start()). */
	h->store = rsp_tlstore__from_window(0, src.schema, h->snap, &so, NULL, err);
	if (!h->store)
		return -EINVAL;
	return collect_ops(h, err);
nomem:
	rsp_buf__printf(err, "merge: out of memory loading %s", h->path);
	return -ENOMEM;
}

/* ---- matching ------------------------------------------------------------------ */

/* A time of host @h's records in its (test-shifted) monotonic clock. */
int64_t rsp_merge__mono(const struct mhost *h, uint64_t t)
{
	return (int64_t)t + h->shift;
}

/* The same time in the host's realtime: the common clock lifetimes are compared in. */
static int64_t wall(const struct mhost *h, uint64_t t)
{
	return (int64_t)(t - h->di->clockid_time_ns + h->di->wall_clock_ns);
}

static int add_end(struct merge *m, uint32_t host, size_t at, size_t n)
{
	const struct mhost *h = &m->h[host];
	const struct rsp_net_op *o = h->ops[at], *last = h->ops[at + n - 1];
	struct rsp_xend e = {.host = host,
			     .sk = o->sk,
			     .local = o->local,
			     .remote = o->remote,
			     .first = wall(h, o->start),
			     .last = wall(h, last->end)};

	if (rsp_vec__reserve((void **)&m->conns, &m->cap_conns, m->nr_conns + 1,
			     sizeof(*m->conns)) ||
	    rsp_xmatch__add(m->xm, &e) < 0)
		return -ENOMEM;
	m->conns[m->nr_conns++] = (struct mconn){host, at, n};
	return 0;
}

static int index_ends(struct merge *m)
{
	for (int k = 0; k < m->nr; k++) {
		const struct mhost *h = &m->h[k];

		for (size_t i = 0, j; i < h->nr_ops; i = j) {
			for (j = i + 1; j < h->nr_ops && !end_cmp(h->ops[i], h->ops[j]); j++)
				;
			if (add_end(m, (uint32_t)k, i, j - i))
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---- clock offsets ---------------------------------------------------------------- */

/*
 * When the send that began @o started, at the earliest: the send records
 * (sock_send_length) come at the end of the send, after the peer may
 * already have the data (over a veth the receive runs inside the send),
 * and a send may be preempted in its middle. The thread was awake from its
 * last sleep on, and executed nothing before its first run after that
 * sleep: the send began no earlier than that run's start. -1 when it is
 * not known (the thread's records have a gap there): the pair is not used.
 */
int64_t rsp_merge__send_start(const struct mhost *h, const struct rsp_net_op *o)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(h->store, o->tid);
	/* after the last segment starting at or before the record */
	size_t lo = t ? rsp_gallop__above(t->segs, sizeof(t->segs[0]),
					  offsetof(struct rsp_segment, start), t->nr_segs, o->start)
		      : 0;
	int64_t first_run = -1;

	for (size_t i = lo; i-- > 0;) {
		const struct rsp_segment *g = &t->segs[i];

		if (g->kind == RSP_SEG_RUN)
			first_run = (int64_t)g->start;
		else if (g->kind == RSP_SEG_SLEEP)
			return first_run < 0 ? -1 : rsp_merge__mono(h, (uint64_t)first_run);
		else if (g->kind != RSP_SEG_RUNNABLE)
			return -1;
	}
	return -1; /* awake since before its first record: the start is not known */
}

/*
 * Side a's operation i (its send s_i, the last arrival of the answer f_i)
 * and side b's operation j (its send S_j, its answer's arrival F_j): a's
 * message sent at s_i arrives at b by F_{j-1} (the last arrival before
 * b's next send S_j), and b's answer sent at S_j arrives at a by f_i:
 * (t1, t2, t3, t4) = (s_i, F_{j-1}, S_j, f_i) with j = i + k, each send
 * time taken as its earliest start (rsp_merge__send_start()). The last send and the
 * last arrival of a message keep both bounds true when a message takes
 * several sends or packets. The same for either side initiating: the
 * pairs are symmetric.
 */
int rsp_merge__add_pairs(const struct merge *m, const struct mconn *a, const struct mconn *b,
			 long k, struct rsp_clockoff *c)
{
	const struct mhost *ha = &m->h[a->host], *hb = &m->h[b->host];

	for (size_t i = 0; i < a->n; i++) {
		long j = (long)i + k;
		const struct rsp_net_op *oa, *ob, *prev;
		int64_t t1, t3;

		if (j < 1 || j >= (long)b->n)
			continue;
		oa = ha->ops[a->at + i];
		ob = hb->ops[b->at + (size_t)j];
		prev = hb->ops[b->at + (size_t)j - 1];
		t1 = rsp_merge__send_start(ha, oa);
		t3 = rsp_merge__send_start(hb, ob);
		if (t1 >= 0 && t3 >= 0 &&
		    rsp_clockoff__add(c, t1, rsp_merge__mono(hb, prev->end), t3,
				      rsp_merge__mono(ha, oa->end)))
			return -ENOMEM;
	}
	return 0;
}

/* @a - @b, saturated at the ends of int64_t. */
static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return d;
}

/*
 * What the hosts' clock pairs say theta is, assuming their realtime clocks
 * agree. check_host() bounds the pairs; saturated all the same, as a guess
 * (the estimator keeps only the pairs that agree).
 */
static int64_t wall_guess(const struct mhost *ha, const struct mhost *hb)
{
	int64_t da = sat_sub(rsp_merge__mono(ha, ha->di->clockid_time_ns),
			     (int64_t)ha->di->wall_clock_ns);
	int64_t db = sat_sub(rsp_merge__mono(hb, hb->di->clockid_time_ns),
			     (int64_t)hb->di->wall_clock_ns);

	return sat_sub(db, da);
}

/*
 * The alignment of the two sides' operations (b's operation j answers a's
 * i when j = i + k): guessed where b's arrivals meet a's first send by the
 * hosts' realtime clocks; the pairs of every k near it go to the
 * estimator, which keeps those that agree (an operation one side missed
 * shifts k for the rest of the connection: both runs of pairs agree on
 * the true offset, the misaligned ones do not). The guess in *@guess;
 * returns 0 or -ENOMEM.
 */
static int connection_pairs(const struct merge *m, const struct mconn *a, const struct mconn *b,
			    struct rsp_clockoff *c, long *guess)
{
	const struct mhost *ha = &m->h[a->host], *hb = &m->h[b->host];
	int64_t t, g = wall_guess(ha, hb);
	long k0 = 1;

	if (__builtin_add_overflow(rsp_merge__mono(ha, ha->ops[a->at]->start), g, &t))
		t = g < 0 ? INT64_MIN : INT64_MAX;

	while (k0 < (long)b->n && rsp_merge__mono(hb, hb->ops[b->at + (size_t)k0 - 1]->end) < t)
		k0++;
	*guess = k0;
	for (long k = k0 - ALIGN_SPAN; k <= k0 + ALIGN_SPAN; k++)
		if (rsp_merge__add_pairs(m, a, b, k, c))
			return -ENOMEM;
	return 0;
}

/*
 * The ends of each process (host << 32 | tgid -> its first node in
 * procs[]), for the snapshot's recursion: an end goes under every process
 * that operated on it (a connection handed from one process to another).
 * The ends go in backwards and each in front: each process's in order.
 */
static int index_procs(struct merge *m)
{
	for (size_t i = m->nr_conns; i-- > 0;) {
		const struct mconn *c = &m->conns[i];

		for (size_t j = 0; j < c->n; j++) {
			uint64_t key = (uint64_t)c->host << 32 | m->h[c->host].ops[c->at + j]->tgid;
			uint32_t head = UINT32_MAX;

			rsp_u64map__get(&m->by_proc, key, &head);
			if (head != UINT32_MAX && m->procs[head].conn == i)
				continue; /* this end is under that process already */
			if (rsp_vec__reserve((void **)&m->procs, &m->cap_procs, m->nr_procs + 1,
					     sizeof(*m->procs)) ||
			    rsp_u64map__put(&m->by_proc, key, (uint32_t)m->nr_procs))
				return -ENOMEM;
			m->procs[m->nr_procs++] = (struct mproc){(uint32_t)i, head};
		}
	}
	return 0;
}

int rsp_merge__match(struct merge *m)
{
	int64_t pairs;
	size_t nn = (size_t)m->nr * (size_t)m->nr;

	m->xm = rsp_xmatch__new();
	m->off = calloc(nn, sizeof(*m->off));
	if (!m->xm || !m->off || index_ends(m))
		return -ENOMEM;
	m->conn_k = calloc(m->nr_conns ? m->nr_conns : 1, sizeof(*m->conn_k));
	if (!m->conn_k || index_procs(m))
		return -ENOMEM;
	for (size_t i = 0; i < nn; i++)
		rsp_clockoff__init(&m->off[i].c);
	for (int k = 0; k < m->nr; k++)
		m->untupled += m->h[k].untupled;
	pairs = rsp_xmatch__run(m->xm);
	if (pairs < 0)
		return -ENOMEM;
	m->matched = (size_t)pairs;
	for (size_t i = 0; i < m->nr_conns; i++) {
		enum rsp_xend_state st;
		int64_t p = rsp_xmatch__peer(m->xm, i, &st);
		const struct mconn *a = &m->conns[i], *b;
		struct poff *po;

		m->state[st]++;
		if (p < 0 || m->conns[p].host < a->host)
			continue;
		b = &m->conns[p];
		/* Every connection's pairs bound the same offset. */
		po = &m->off[a->host * (size_t)m->nr + b->host];
		po->conns++;
		po->expected += (unsigned)((a->n < b->n ? a->n : b->n) - 1);
		if (connection_pairs(m, a, b, &po->c, &m->conn_k[i]))
			return -ENOMEM;
	}
	return 0;
}

/* Every pair of hosts joined by a connection has a bounded offset; else one sentence. */
int rsp_merge__check_offsets(struct merge *m, struct rsp_buf *err)
{
	if (!m->matched) {
		rsp_buf__printf(err,
				"merge: no TCP connection of one dump has its other end in another "
				"(%zu loopback socket ends, %zu without a peer, %zu operations on "
				"sockets without a known 4-tuple): "
				"give dumps of hosts that talked to each other in the same time",
				m->state[RSP_XEND_LOOPBACK], m->state[RSP_XEND_NO_PEER],
				m->untupled);
		return -ENOENT;
	}
	for (int a = 0; a < m->nr; a++)
		for (int b = a + 1; b < m->nr; b++) {
			struct poff *po = &m->off[a * m->nr + b];
			struct rsp_clockoff *c = &po->c;
			int r;

			if (!po->conns)
				continue;
			r = rsp_clockoff__result(c, &po->est, &po->unc);
			/* Most exchanges must agree: a few outliers are rejected, not a crowd. */
			if (!r && 2 * c->nr_agree < po->expected)
				r = -ERANGE;
			if (r == -ENOMEM) {
				rsp_buf__puts(err,
					      "merge: out of memory estimating the clock offsets");
				return r;
			}
			if (r == -ENODATA) {
				rsp_buf__printf(
					err,
					"merge: only %u request/response pairs between %s and %s "
					"(%d needed) bound their clock offset: take dumps over a "
					"longer time in which the hosts exchange more",
					c->nr_pairs, m->h[a].path, m->h[b].path,
					RSP_CLOCKOFF_MIN_PAIRS);
				return r;
			}
			if (r) {
				rsp_buf__printf(
					err,
					"merge: the request/response pairs between %s and %s give "
					"inconsistent clock offsets (at most %u of about %u "
					"exchanges "
					"agree on one: a clock stepped, or the exchanges are not "
					"request/response)",
					m->h[a].path, m->h[b].path, c->nr_agree, po->expected);
				return r;
			}
		}
	return 0;
}

/* ---- the answer ------------------------------------------------------------------- */

const char *rsp_merge__comm(const struct mhost *h, uint32_t tid)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(h->store, tid);

	return t && t->comm[0] ? t->comm : "?";
}

/* Operations of an end: how many and their total time (the thread's network wait). */
static uint64_t end_wait(const struct merge *m, const struct mconn *c)
{
	const struct mhost *h = &m->h[c->host];
	uint64_t sum = 0;

	for (size_t i = 0; i < c->n; i++)
		sum += h->ops[c->at + i]->end - h->ops[c->at + i]->start;
	return sum;
}

static json_t *json_end(const struct merge *m, const struct mconn *c)
{
	const struct mhost *h = &m->h[c->host];
	const struct rsp_net_op *o = h->ops[c->at];
	char l[64], r[64];
	json_t *e = json_object();

	rsp_json__set_u64(e, "host", c->host);
	rsp_json__set_str(e, "hostname", h->di->hostname);
	rsp_json__set_u64(e, "pid", o->tgid);
	rsp_json__set_u64(e, "tid", o->tid);
	rsp_json__set_str(e, "comm", rsp_merge__comm(h, o->tid));
	rsp_json__set_str(e, "local", rsp_sockaddr__format(&o->local, l, sizeof(l)));
	rsp_json__set_str(e, "remote", rsp_sockaddr__format(&o->remote, r, sizeof(r)));
	rsp_json__set_u64(e, "operations", c->n);
	rsp_json__set_secs(e, "wait_s", end_wait(m, c));
	return e;
}

json_t *rsp_merge__offsets_json(const struct merge *m)
{
	json_t *arr = json_array();

	for (int a = 0; a < m->nr; a++)
		for (int b = a + 1; b < m->nr; b++) {
			const struct poff *po = &m->off[a * m->nr + b];
			int64_t est = po->est, unc = po->unc;
			json_t *o;

			if (!po->conns)
				continue;
			o = json_pack("{s:i, s:i, s:I, s:I, s:f, s:f, s:i, s:i}", "host_a", a,
				      "host_b", b, "offset_ns", (json_int_t)est, "uncertainty_ns",
				      (json_int_t)unc, "offset_s", (double)est / 1e9,
				      "uncertainty_s", (double)unc / 1e9, "pairs",
				      (int)po->c.nr_agree, "connections", (int)po->conns);
			rsp_json__set_u64(o, "pairs_rejected", po->c.nr_pairs - po->c.nr_agree);
			json_array_append_new(arr, o);
		}
	return arr;
}

#define MAX_UNMATCHED_SHOWN 50

/* The ends that met no peer: which, and why (at most MAX_UNMATCHED_SHOWN). */
static json_t *json_unmatched(const struct merge *m)
{
	json_t *arr = json_array();
	size_t shown = 0;

	for (size_t i = 0; i < m->nr_conns && shown < MAX_UNMATCHED_SHOWN; i++) {
		enum rsp_xend_state st;
		json_t *e;

		if (rsp_xmatch__peer(m->xm, i, &st) >= 0)
			continue;
		e = json_end(m, &m->conns[i]);
		rsp_json__set_str(e, "why", rsp_xend__state_name(st));
		json_array_append_new(arr, e);
		shown++;
	}
	return arr;
}

json_t *rsp_merge__hosts_json(const struct merge *m)
{
	json_t *hosts = json_array();

	for (int k = 0; k < m->nr; k++) {
		const struct mhost *h = &m->h[k];
		json_t *o = json_pack("{s:i, s:s, s:s, s:s, s:I}", "host", k, "hostname",
				      h->di->hostname, "boot_id", h->di->boot_id, "path", h->path,
				      "tcp_operations", (json_int_t)h->nr_ops);

		if (h->shifted)
			rsp_json__set_real(o, "test_clock_shift_s", (double)h->shift / 1e9);
		json_array_append_new(hosts, o);
	}
	return hosts;
}

int rsp_merge__net_json(const struct merge *m, struct rsp_buf *out)
{
	json_t *root = json_object(), *hosts = rsp_merge__hosts_json(m), *conns = json_array();

	for (size_t i = 0; i < m->nr_conns; i++) {
		int64_t p = rsp_xmatch__peer(m->xm, i, NULL);

		if (p < 0 || m->conns[p].host < m->conns[i].host)
			continue;
		json_array_append_new(conns, json_pack("{s:o, s:o}", "a", json_end(m, &m->conns[i]),
						       "b", json_end(m, &m->conns[p])));
	}
	json_object_set_new(root, "hosts", hosts);
	json_object_set_new(root, "clock_offsets", rsp_merge__offsets_json(m));
	json_object_set_new(root, "connections", conns);
	json_object_set_new(root, "unmatched",
			    json_pack("{s:I, s:I, s:I, s:o}", "loopback",
				      (json_int_t)m->state[RSP_XEND_LOOPBACK], "no_peer",
				      (json_int_t)m->state[RSP_XEND_NO_PEER],
				      "unknown_tuple_operations", (json_int_t)m->untupled, "ends",
				      json_unmatched(m)));
	return rsp_json__emit(root, out);
}

static void text_end(const struct merge *m, const struct mconn *c, bool first, struct rsp_buf *out)
{
	const struct mhost *h = &m->h[c->host];
	const struct rsp_net_op *o = h->ops[c->at];
	char l[64];

	rsp_buf__printf(out, "  %s %-21s host %u pid %u tid %u (%s): %zu ops, %.3f s\n",
			first ? "  " : "<>", rsp_sockaddr__format(&o->local, l, sizeof(l)), c->host,
			o->tgid, o->tid, rsp_merge__comm(h, o->tid), c->n,
			(double)end_wait(m, c) / 1e9);
}

void rsp_merge__offsets_text(const struct merge *m, struct rsp_buf *out)
{
	rsp_buf__printf(out, "merge: %d hosts\n", m->nr);
	for (int k = 0; k < m->nr; k++)
		rsp_buf__printf(out, "  host %d  %s  boot %.8s  %s%s\n", k, m->h[k].di->hostname,
				m->h[k].di->boot_id, m->h[k].path,
				m->h[k].shifted ? "  (clock shifted for a test)" : "");
	rsp_buf__puts(out, "clock offsets (NTP-style, from request/response pairs):\n");
	for (int a = 0; a < m->nr; a++)
		for (int b = a + 1; b < m->nr; b++) {
			const struct poff *po = &m->off[a * m->nr + b];

			if (!po->conns)
				continue;
			rsp_buf__printf(
				out,
				"  host %d = host %d %+.6f s +- %.6f s (%u pairs, %u rejected)\n",
				b, a, (double)po->est / 1e9, (double)po->unc / 1e9, po->c.nr_agree,
				po->c.nr_pairs - po->c.nr_agree);
		}
}

#define MAX_UNMATCHED_TEXT 5

static void text_unmatched(const struct merge *m, struct rsp_buf *out)
{
	size_t shown = 0, left = 0;

	for (size_t i = 0; i < m->nr_conns; i++) {
		const struct mconn *c = &m->conns[i];
		const struct rsp_net_op *o = m->h[c->host].ops[c->at];
		enum rsp_xend_state st;
		char l[64], r[64];

		if (rsp_xmatch__peer(m->xm, i, &st) >= 0)
			continue;
		if (shown == MAX_UNMATCHED_TEXT) {
			left++;
			continue;
		}
		rsp_buf__printf(out, "  host %u pid %u %s -> %s: %s\n", c->host, o->tgid,
				rsp_sockaddr__format(&o->local, l, sizeof(l)),
				rsp_sockaddr__format(&o->remote, r, sizeof(r)),
				st == RSP_XEND_LOOPBACK ? "loopback" : "no peer in these dumps");
		shown++;
	}
	if (left)
		rsp_buf__printf(out, "  and %zu more (--json lists up to %d)\n", left,
				MAX_UNMATCHED_SHOWN);
}

void rsp_merge__net_text(const struct merge *m, struct rsp_buf *out)
{
	rsp_merge__offsets_text(m, out);
	rsp_buf__printf(out,
			"TCP connections across hosts: %zu (per end: operations, time waited "
			"for answers)\n",
			m->matched);
	for (size_t i = 0; i < m->nr_conns; i++) {
		int64_t p = rsp_xmatch__peer(m->xm, i, NULL);

		if (p < 0 || m->conns[p].host < m->conns[i].host)
			continue;
		text_end(m, &m->conns[i], true, out);
		text_end(m, &m->conns[p], false, out);
	}
	rsp_buf__printf(out,
			"not matched: %zu loopback socket ends (never across hosts),\n"
			"  %zu with no peer in these dumps (a host not dumped, or behind a NAT:\n"
			"  rsp does not undo address translation); %zu TCP ops on sockets\n"
			"  whose 4-tuple is not known\n",
			m->state[RSP_XEND_LOOPBACK], m->state[RSP_XEND_NO_PEER], m->untupled);
	text_unmatched(m, out);
}
