// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl merge DUMP DUMP [...] net`: N hosts' dumps joined by their TCP
 * connections. Every socket end with a known 4-tuple (the window's state
 * and receive records, and the socket table the dump carries) goes into
 * one index (rsp/xhost.h); each matched connection's network operations on
 * both hosts give NTP-style request/response pairs that bound the hosts'
 * clock offset. The answer: the hosts, each pair's offset with its
 * uncertainty, and the connections across hosts with their threads; or
 * the snapshot across hosts (below); graph is lib/query/merge_graph.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/merge.h>
#include <rsp/net.h>
#include <rsp/parse.h>
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

/* ---- arguments ------------------------------------------------------------ */

static int parse_shift(struct merge *m, const char *arg, struct rsp_buf *err)
{
	char *end;
	long idx = strtol(arg, &end, 10);
	long long ns;

	if (end == arg || *end != '=' || idx < 0 || idx >= m->nr)
		goto bad;
	ns = strtoll(end + 1, &end, 10);
	if (*end || ns < -3600000000000ll || ns > 3600000000000ll)
		goto bad;
	m->h[idx].shift = ns;
	m->h[idx].shifted = true;
	return 0;
bad:
	rsp_buf__printf(err,
			"merge: --test-clock-shift wants INDEX=NS (a dump's position from 0, a "
			"shift of at most an hour in nanoseconds), not '%s'",
			arg);
	return -EINVAL;
}

#define PID_LIMIT 4194304 /* the kernel's PID_MAX_LIMIT on 64-bit */

/* snapshot PID@HOST: HOST is a dump's position (from 0) or its host name. */
static int parse_target(struct merge *m, const char *arg, struct rsp_buf *err)
{
	const char *at = strchr(arg, '@');
	char *end;

	m->snapshot = true;
	m->pid = at ? strtol(arg, &end, 10) : -1;
	if (!at || end != at || m->pid <= 0 || !at[1]) {
		rsp_buf__printf(err,
				"merge snapshot: wants PID@HOST (HOST: a dump's position from 0, "
				"or its host name), not '%s'",
				arg);
		return -EINVAL;
	}
	/* a pid past the kernel's PID_MAX_LIMIT would wrap in uint32_t to another's */
	if (m->pid > PID_LIMIT) {
		rsp_buf__printf(err,
				"merge snapshot: %.*s is not a pid (Linux pids are at most %d, "
				"PID_MAX_LIMIT)",
				(int)(at - arg), arg, PID_LIMIT);
		return -EINVAL;
	}
	m->at = at + 1;
	return 0;
}

static int parse_depth(struct merge *m, const char *arg, struct rsp_buf *err)
{
	char *end;
	long d = strtol(arg, &end, 10);

	if (end == arg || *end || d < 1 || d > MERGE_DEPTH_MAX) {
		rsp_buf__printf(err,
				"merge snapshot: --depth wants the number of hosts to follow, 1 to "
				"%d (1: only PID's own host's answers), not '%s'",
				MERGE_DEPTH_MAX, arg);
		return -EINVAL;
	}
	m->depth = (int)d;
	return 0;
}

static int parse_args(struct merge *m, int argc, char **argv, struct rsp_buf *err)
{
	int i = 0;

	for (; i < argc && strcmp(argv[i], "net") && strcmp(argv[i], "graph") &&
	       strcmp(argv[i], "snapshot");
	     i++) {
		if (m->nr == MAX_HOSTS) {
			rsp_buf__printf(err, "merge: at most %d dumps at once", MAX_HOSTS);
			return -E2BIG;
		}
		m->h[m->nr++].path = argv[i];
	}
	if (i == argc) {
		rsp_buf__puts(err,
			      "merge: no command after the dumps: add 'net', e.g. 'rspctl merge "
			      "A.perf.data B.perf.data net'");
		return -EINVAL;
	}
	m->graph = !strcmp(argv[i], "graph");
	if (!strcmp(argv[i], "snapshot") && parse_target(m, i + 1 < argc ? argv[++i] : "", err))
		return -EINVAL;
	if (m->nr < 2) {
		rsp_buf__puts(err, "merge: needs at least two dumps, one per host");
		return -EINVAL;
	}
	for (i++; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--format=json")) {
			m->json = true;
		} else if (!strcmp(argv[i], "--depth") && m->snapshot) {
			if (parse_depth(m, i + 1 < argc ? argv[++i] : "", err))
				return -EINVAL;
		} else if (!strcmp(argv[i], "--test-clock-shift") && i + 1 < argc) {
			if (parse_shift(m, argv[++i], err))
				return -EINVAL;
		} else if (!strncmp(argv[i], "--cgroup", 8) ||
			   !strncmp(argv[i], "--container", 11)) {
			rsp_buf__puts(
				err, "merge: --cgroup and --container do not apply across "
				     "hosts (a cgroup names a directory of one host): run "
				     "'rspctl analyze DUMP net --cgroup PATH' on that host's dump");
			return -EINVAL;
		} else {
			rsp_buf__printf(err,
					"merge: unexpected argument '%s'; see 'rspctl help merge'",
					argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

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

static int load_host(struct merge *m, int k, struct rsp_buf *err)
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
	/* Every segment: a send's earliest start is the start of its run (see send_start()). */
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
static int64_t mono(const struct mhost *h, uint64_t t)
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
static int64_t send_start(const struct mhost *h, const struct rsp_net_op *o)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(h->store, o->tid);
	size_t lo = 0, hi = t ? t->nr_segs : 0;
	int64_t first_run = -1;

	while (lo < hi) { /* the last segment starting at or before the record */
		size_t mid = lo + (hi - lo) / 2;

		if (t->segs[mid].start <= o->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		const struct rsp_segment *g = &t->segs[i];

		if (g->kind == RSP_SEG_RUN)
			first_run = (int64_t)g->start;
		else if (g->kind == RSP_SEG_SLEEP)
			return first_run < 0 ? -1 : mono(h, (uint64_t)first_run);
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
 * time taken as its earliest start (send_start()). The last send and the
 * last arrival of a message keep both bounds true when a message takes
 * several sends or packets. The same for either side initiating: the
 * pairs are symmetric.
 */
static int add_pairs(const struct merge *m, const struct mconn *a, const struct mconn *b, long k,
		     struct rsp_clockoff *c)
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
		t1 = send_start(ha, oa);
		t3 = send_start(hb, ob);
		if (t1 >= 0 && t3 >= 0 &&
		    rsp_clockoff__add(c, t1, mono(hb, prev->end), t3, mono(ha, oa->end)))
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
	int64_t da = sat_sub(mono(ha, ha->di->clockid_time_ns), (int64_t)ha->di->wall_clock_ns);
	int64_t db = sat_sub(mono(hb, hb->di->clockid_time_ns), (int64_t)hb->di->wall_clock_ns);

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

	if (__builtin_add_overflow(mono(ha, ha->ops[a->at]->start), g, &t))
		t = g < 0 ? INT64_MIN : INT64_MAX;

	while (k0 < (long)b->n && mono(hb, hb->ops[b->at + (size_t)k0 - 1]->end) < t)
		k0++;
	*guess = k0;
	for (long k = k0 - ALIGN_SPAN; k <= k0 + ALIGN_SPAN; k++)
		if (add_pairs(m, a, b, k, c))
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

static int match(struct merge *m)
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
static int check_offsets(struct merge *m, struct rsp_buf *err)
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

static int render_json(const struct merge *m, struct rsp_buf *out)
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

static void render_text(const struct merge *m, struct rsp_buf *out)
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

/* ---- snapshot PID@HOST: the recursion across hosts -------------------------------------- */

/*
 * What the answering threads on the other hosts did while PID waited for
 * their answers: for each of PID's operations on a matched connection, the
 * peer's interval from the request's arrival to the answer's send (both in
 * the peer host's own records: no clock offset needed inside it), and the
 * peer thread's segments in it by kind and sleep reason (block_io: its
 * disk). The recursion goes on: the peer's own network operations inside
 * that interval, on connections matched to further hosts, are followed
 * the same way (a proxy's wait for its upstream), up to --depth hosts
 * from PID; a thread already on the path (PID itself, answering its
 * server's request back) is not followed again, and counted.
 */
static int find_target(struct merge *m, struct rsp_buf *err)
{
	char *end;
	long idx = strtol(m->at, &end, 10);
	bool idx_given = false;
	int found = 0;

	if (end != m->at && !*end) {
		if (idx < 0 || idx >= m->nr) {
			rsp_buf__printf(err,
					"merge snapshot: host %ld is not one of the %d dumps "
					"(positions from 0)",
					idx, m->nr);
			return -EINVAL;
		}
		m->target = (int)idx;
		found = 1;
		idx_given = true;
	}
	/* a host name names one dump; two anywhere in the list are ambiguous */
	for (int k = 0, n = 0; !idx_given && k < m->nr; k++)
		if (!strcmp(m->h[k].di->hostname, m->at)) {
			if (!n++)
				m->target = k;
			found = n > 1 ? -1 : 1;
		}
	if (found != 1) {
		rsp_buf__printf(err,
				found ? "merge snapshot: several dumps are of host %s: name it by "
					"its position (PID@0, PID@1, ...)"
				      : "merge snapshot: no dump is of host %s; the hosts are the "
					"dumps' host names or positions from 0",
				m->at);
		return -EINVAL;
	}
	for (size_t i = 0; i < rsp_tlstore__nr_threads(m->h[m->target].store); i++)
		if (rsp_tlstore__thread(m->h[m->target].store, i)->tgid == (uint32_t)m->pid)
			return 0;
	rsp_buf__printf(err, "merge snapshot: process %ld has no thread in %s; check the pid",
			m->pid, m->h[m->target].path);
	return -ENOENT;
}

/* The node of thread @o->tid on @host under @parent: found, added, or NULL (full). */
static struct hop *hop_of(struct msnap *sn, int parent, int depth, uint32_t host,
			  const struct rsp_net_op *o)
{
	for (int i = 0; i < sn->nr_hops; i++)
		if (sn->hops[i].parent == parent && sn->hops[i].host == host &&
		    sn->hops[i].tid == o->tid && !sn->hops[i].local)
			return &sn->hops[i];
	if (sn->nr_hops == MAX_HOPS)
		return NULL;
	sn->hops[sn->nr_hops] = (struct hop){
		.parent = parent, .depth = depth, .host = host, .pid = o->tgid, .tid = o->tid};
	if (depth > sn->max_depth)
		sn->max_depth = depth;
	return &sn->hops[sn->nr_hops++];
}

/* Thread @tid of @host is PID itself or a node on the path from @parent up: a cycle. */
bool rsp_merge__on_path(const struct merge *m, const struct msnap *sn, int parent, uint32_t host,
			uint32_t tgid, uint32_t tid)
{
	if ((int)host == m->target && tgid == (uint32_t)m->pid)
		return true;
	for (int i = parent; i >= 0; i = sn->hops[i].parent)
		if (sn->hops[i].host == host && sn->hops[i].tid == tid)
			return true;
	return false;
}

static void thread_time(const struct mhost *h, uint32_t tid, uint64_t lo, uint64_t hi,
			struct hop *hp)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(h->store, tid);
	uint64_t covered = 0;
	size_t a = 0, b = t ? t->nr_segs : 0;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (t->segs[mid].end <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; t && i < t->nr_segs && t->segs[i].start < hi; i++) {
		const struct rsp_segment *g = &t->segs[i];
		uint64_t from = g->start > lo ? g->start : lo, to = g->end < hi ? g->end : hi;
		int c = g->kind == RSP_SEG_RUN				     ? CAT_RUN
			: g->kind == RSP_SEG_RUNNABLE			     ? CAT_RUNNABLE
			: g->kind == RSP_SEG_SLEEP && g->reason < RSP_SR__NR ? CAT_SLEEP + g->reason
									     : CAT_UNKNOWN;

		if (to <= from)
			continue;
		hp->cat[c] += to - from;
		covered += to - from;
	}
	hp->cat[CAT_UNKNOWN] += (hi - lo) - covered;
}

/*
 * The peer's operation that answers our operation @i: of those near the
 * guess @jc, the one whose request/response pair is consistent with the
 * offset @theta (clock_y - clock_x) the merge found. -1: none.
 */

/*
 * The peer's operation that answers our operation @i: of those near the
 * guess @jc, the one whose request/response pair is consistent with the
 * offset @theta (clock_y - clock_x) the merge found. -1: none.
 */
static long answer_of(const struct merge *m, const struct mconn *x, const struct mconn *y, size_t i,
		      long jc, int64_t theta)
{
	const struct mhost *hx = &m->h[x->host], *hy = &m->h[y->host];
	const struct rsp_net_op *o = hx->ops[x->at + i];
	int64_t t1 = send_start(hx, o);

	for (long d = 0; t1 >= 0 && d <= 2 * ALIGN_SPAN; d++) {
		long j = jc + (d % 2 ? (d + 1) / 2 : -(d / 2)); /* jc, jc+1, jc-1, ... */
		int64_t t3;

		if (j < 1 || j >= (long)y->n)
			continue;
		t3 = send_start(hy, hy->ops[y->at + (size_t)j]);
		if (t3 >= 0 && t3 - mono(hx, o->end) <= theta &&
		    theta <= mono(hy, hy->ops[y->at + (size_t)j - 1]->end) - t1)
			return j;
	}
	return -1;
}

long rsp_merge__answer(const struct merge *m, size_t xi, size_t yi, size_t i, long *next)
{
	const struct mconn *x = &m->conns[xi], *y = &m->conns[yi];
	/* See add_pairs(): the peer's operation j answers ours i, j = i + k on side b. */
	bool x_is_a = x->host < y->host;
	long k = x_is_a ? m->conn_k[xi] : m->conn_k[yi];
	const struct poff *po = &m->off[(x_is_a ? x->host : y->host) * (size_t)m->nr +
					(x_is_a ? y->host : x->host)];
	int64_t theta = x_is_a ? po->est : -po->est; /* clock_y - clock_x */
	long guess = x_is_a ? (long)i + k : (long)i - k + 1;
	long j = answer_of(m, x, y, i, *next >= 0 ? *next : guess, theta);

	if (j < 0 && *next >= 0)
		j = answer_of(m, x, y, i, guess, theta);
	/* After an answer found, the next one is likely the next operation. */
	*next = j >= 0 ? j + 1 : -1;
	return j;
}

/* The first operation of end @c starting at or after @lo. */
static size_t first_op(const struct mhost *h, const struct mconn *c, uint64_t lo)
{
	size_t a = 0, b = c->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (h->ops[c->at + mid]->start < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* End @yi's operation @j answered: the time from the request's arrival to the answer. */
static uint64_t answer_time(const struct merge *m, size_t yi, long j)
{
	const struct mconn *y = &m->conns[yi];
	const struct mhost *hy = &m->h[y->host];
	uint64_t lo = hy->ops[y->at + (size_t)j - 1]->end, hi = hy->ops[y->at + (size_t)j]->start;

	return hi > lo ? hi - lo : 0;
}

/*
 * Operation @i of end @xi (a thread at @parent, or PID), answered by the
 * peer end @yi's operation @j: the answering thread's time, and what it
 * waited for across hosts in turn.
 */
static void answered(const struct merge *m, struct msnap *sn, size_t xi, size_t yi, size_t i,
		     long j, int parent, int depth)
{
	const struct mconn *x = &m->conns[xi], *y = &m->conns[yi];
	const struct mhost *hx = &m->h[x->host], *hy = &m->h[y->host];
	const struct rsp_net_op *o = hx->ops[x->at + i], *a = hy->ops[y->at + (size_t)j];
	uint64_t lo = hy->ops[y->at + (size_t)j - 1]->end, hi = a->start;
	struct hop *hp;

	/*
	 * Not followed: a cycle, or hops[] full. At depth 0 the answer's
	 * service is still the answering side's, not the network's.
	 */
	if (rsp_merge__on_path(m, sn, parent, y->host, a->tgid, a->tid)) {
		sn->cycles++;
		if (!depth)
			sn->other_service += hi - lo;
		return;
	}
	hp = hop_of(sn, parent, depth + 1, y->host, a);
	if (!hp) {
		sn->other_ops++;
		if (!depth)
			sn->other_service += hi - lo;
		return;
	}
	hp->ops++;
	hp->asked += o->end - o->start;
	hp->service += hi - lo;
	if (!rsp_vec__reserve((void **)&hp->spans, &hp->cap_spans, hp->nr_spans + 1,
			      sizeof(*hp->spans)))
		hp->spans[hp->nr_spans++] = (struct rsp_snapshot_span){lo, hi};
	else
		hp->snap_errno = ENOMEM;
	thread_time(hy, a->tid, lo, hi, hp);
	rsp_merge__follow(m, sn, y->host, a->tgid, a->tid, lo, hi, (int)(hp - sn->hops), depth + 1);
}

static void keep_wait(struct mwait **v, size_t *n, size_t *cap, const struct rsp_net_op *o,
		      struct msnap *sn)
{
	if (rsp_vec__reserve((void **)v, cap, *n + 1, sizeof(**v)))
		sn->nomem = true;
	else
		(*v)[(*n)++] = (struct mwait){o->tid, o->start, o->end};
}

static int wait_cmp(const void *pa, const void *pb)
{
	const struct mwait *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

/* Per thread the union of its operations' spans, summed over the threads. */
static uint64_t union_waits(struct mwait *v, size_t n)
{
	uint64_t sum = 0;

	qsort(v, n, sizeof(*v), wait_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t from = v[i].from, to = v[i].to;

		for (j = i + 1; j < n && v[j].tid == v[i].tid; j++) {
			if (v[j].from > to) {
				sum += to - from;
				from = v[j].from;
			}
			if (v[j].to > to)
				to = v[j].to;
		}
		sum += to - from;
	}
	return sum;
}

void rsp_merge__follow(const struct merge *m, struct msnap *sn, uint32_t host, uint32_t tgid,
		       uint32_t tid, uint64_t lo, uint64_t hi, int parent, int depth)
{
	uint32_t n = UINT32_MAX;

	rsp_u64map__get(&m->by_proc, (uint64_t)host << 32 | tgid, &n);
	for (; n != UINT32_MAX; n = m->procs[n].next) {
		uint32_t c = m->procs[n].conn;
		const struct mconn *x = &m->conns[c];
		const struct mhost *h = &m->h[host];
		int64_t p = rsp_xmatch__peer(m->xm, c, NULL);
		long next = -1;

		for (size_t i = first_op(h, x, lo); i < x->n && h->ops[x->at + i]->start < hi;
		     i++) {
			const struct rsp_net_op *o = h->ops[x->at + i];
			long j;

			/* the end's operations by this process (an end may change hands) */
			if (o->tgid != tgid || (tid && o->tid != tid))
				continue;
			if (!depth) {
				sn->ops++;
				keep_wait(&sn->waits, &sn->nr_waits, &sn->cap_waits, o, sn);
			}
			if (p < 0)
				continue;
			if (depth >= m->depth) {
				sn->cut++;
				continue;
			}
			j = rsp_merge__answer(m, c, (size_t)p, i, &next);
			if (j < 1 || !answer_time(m, (size_t)p, j))
				continue;
			if (!depth) {
				sn->matched_ops++;
				keep_wait(&sn->mwaits, &sn->nr_mwaits, &sn->cap_mwaits, o, sn);
			}
			answered(m, sn, c, (size_t)p, i, j, parent, depth);
		}
	}
}

/*
 * Across hosts first (each answering thread's own network waits), then
 * each answering thread's local waits followed into their wakers, which
 * may add hops (a local waker's network waits): those are expanded in
 * turn, as the loop reaches them.
 */
static void snap_collect(const struct merge *m, struct msnap *sn)
{
	memset(sn, 0, sizeof(*sn));
	rsp_merge__follow(m, sn, (uint32_t)m->target, (uint32_t)m->pid, 0, 0, UINT64_MAX, -1, 0);
	sn->wait = union_waits(sn->waits, sn->nr_waits);
	sn->matched_wait = union_waits(sn->mwaits, sn->nr_mwaits);
	for (int i = 0; i < sn->nr_hops; i++)
		if (!sn->hops[i].local)
			rsp_merge__local(m, sn, i);
}

static const char *cat_name(int c, char *buf, size_t n)
{
	if (c == CAT_RUN)
		return "running";
	if (c == CAT_RUNNABLE)
		return "runnable";
	if (c == CAT_UNKNOWN)
		return "unknown";
	snprintf(buf, n, "asleep: %s",
		 rsp_sleep_reason__name((enum rsp_sleep_reason)(c - CAT_SLEEP)));
	return buf;
}

static const char *cat_key(int c, char *buf, size_t n)
{
	if (c < CAT_SLEEP)
		return c == CAT_RUN ? "run" : c == CAT_RUNNABLE ? "runnable" : "unknown";
	snprintf(buf, n, "sleep_%s",
		 rsp_sleep_reason__name((enum rsp_sleep_reason)(c - CAT_SLEEP)));
	return buf;
}

void rsp_merge__hop_text(const struct merge *m, const struct msnap *sn, int i, struct rsp_buf *out)
{
	const struct hop *hp = &sn->hops[i];
	int ind = 2 * hp->depth;
	char buf[64];

	rsp_buf__printf(out,
			"%*s%spid %u tid %u (%s) on host %u (%s): %zu answers, %.6f s "
			"(for %.6f s of waits)\n",
			ind, "", hp->depth > 1 ? "-> " : "", hp->pid, hp->tid,
			rsp_merge__comm(&m->h[hp->host], hp->tid), hp->host,
			m->h[hp->host].di->hostname, hp->ops, (double)hp->service / 1e9,
			(double)hp->asked / 1e9);
	for (int c = 0; c < NR_CATS; c++)
		if (hp->cat[c])
			rsp_buf__printf(out, "%*s  %10.6f s %5.1f%%  %s\n", ind, "",
					(double)hp->cat[c] / 1e9,
					100.0 * (double)hp->cat[c] / (double)hp->service,
					cat_name(c, buf, sizeof(buf)));
	rsp_merge__local_text(m, sn, i, ind + 2, out);
	for (int k = 0; k < sn->nr_hops; k++)
		if (sn->hops[k].parent == i && !sn->hops[k].local)
			rsp_merge__hop_text(m, sn, k, out);
}

static uint64_t first_service(const struct msnap *sn)
{
	uint64_t service = 0;

	for (int i = 0; i < sn->nr_hops; i++)
		if (sn->hops[i].parent < 0)
			service += sn->hops[i].service;
	return service;
}

/* The matched wait that no answering thread's service covers: the network's. */
static uint64_t outside(const struct msnap *sn)
{
	uint64_t service = first_service(sn) + sn->other_service;

	return sn->matched_wait > service ? sn->matched_wait - service : 0;
}

static void snap_text(const struct merge *m, const struct msnap *sn, struct rsp_buf *out)
{
	const struct mhost *h = &m->h[m->target];

	rsp_buf__printf(out, "process %ld on host %d (%s): %.6f s of network wait, %zu TCP ops\n",
			m->pid, m->target, h->di->hostname, (double)sn->wait / 1e9, sn->ops);
	rsp_buf__printf(out,
			"%zu ops (%.6f s) answered across hosts; the answering threads' time\n"
			"from request to answer, inferred via the network (not kernel wakeups),\n"
			"and what they waited for across hosts in turn (-> , up to %d hosts):\n",
			sn->matched_ops, (double)sn->matched_wait / 1e9, m->depth);
	for (int i = 0; i < sn->nr_hops; i++)
		if (sn->hops[i].parent < 0)
			rsp_merge__hop_text(m, sn, i, out);
	if (sn->other_service)
		rsp_buf__printf(out, "  %10.6f s answered by threads not shown (below)\n",
				(double)sn->other_service / 1e9);
	rsp_buf__printf(out, "  %10.6f s of the wait outside the answering threads (network)\n",
			(double)outside(sn) / 1e9);
	if (sn->other_ops)
		rsp_buf__printf(out, "  %zu answers by more threads than shown (%d at most)\n",
				sn->other_ops, MAX_HOPS);
	if (sn->cycles)
		rsp_buf__printf(out,
				"  %zu answers by a thread already on the path: not followed "
				"again\n",
				sn->cycles);
	if (sn->cut)
		rsp_buf__printf(out,
				"  %zu network waits at depth %d not followed (--depth to go "
				"further)\n",
				sn->cut, m->depth);
}

json_t *rsp_merge__hops_json(const struct merge *m, const struct msnap *sn, int parent)
{
	json_t *hops = json_array();

	for (int i = 0; i < sn->nr_hops; i++) {
		const struct hop *hp = &sn->hops[i];
		json_t *o, *cats;
		char buf[64];

		json_t *local;

		if (hp->parent != parent || hp->local)
			continue;
		o = json_object();
		cats = json_object();
		rsp_json__set_u64(o, "host", hp->host);
		rsp_json__set_str(o, "hostname", m->h[hp->host].di->hostname);
		rsp_json__set_u64(o, "pid", hp->pid);
		rsp_json__set_u64(o, "tid", hp->tid);
		rsp_json__set_str(o, "comm", rsp_merge__comm(&m->h[hp->host], hp->tid));
		rsp_json__set_u64(o, "depth", (uint64_t)hp->depth);
		rsp_json__set_u64(o, "answers", hp->ops);
		rsp_json__set_secs(o, "asked_s", hp->asked);
		rsp_json__set_secs(o, "service_s", hp->service);
		for (int c = 0; c < NR_CATS; c++)
			rsp_json__set_secs(cats, cat_key(c, buf, sizeof(buf)), hp->cat[c]);
		json_object_set_new(o, "categories", cats);
		json_object_set_new(o, "answered_by", rsp_merge__hops_json(m, sn, i));
		local = rsp_merge__local_json(m, sn, i);
		if (local)
			json_object_set_new(o, "local_waits", local);
		else if (hp->snap_errno)
			rsp_json__set_str(o, "local_waits_error", rsp_merge__local_error(hp));
		if (hp->pieces_cut)
			json_object_set_new(o, "local_pieces_truncated", json_true());
		json_array_append_new(hops, o);
	}
	return hops;
}

static int snap_json(const struct merge *m, const struct msnap *sn, struct rsp_buf *out)
{
	json_t *root = json_object();

	rsp_json__set_u64(root, "pid", (uint64_t)m->pid);
	rsp_json__set_u64(root, "host", (uint64_t)m->target);
	rsp_json__set_u64(root, "depth", (uint64_t)m->depth);
	rsp_json__set_u64(root, "operations", sn->ops);
	rsp_json__set_secs(root, "network_wait_s", sn->wait);
	rsp_json__set_u64(root, "matched_operations", sn->matched_ops);
	rsp_json__set_secs(root, "matched_wait_s", sn->matched_wait);
	rsp_json__set_secs(root, "outside_s", outside(sn));
	rsp_json__set_u64(root, "other_operations", sn->other_ops);
	rsp_json__set_secs(root, "other_service_s", sn->other_service);
	rsp_json__set_u64(root, "cycles_not_followed", sn->cycles);
	rsp_json__set_u64(root, "beyond_depth", sn->cut);
	rsp_json__set_u64(root, "deepest", (uint64_t)sn->max_depth);
	json_object_set_new(root, "answered_by", rsp_merge__hops_json(m, sn, -1));
	json_object_set_new(root, "clock_offsets", rsp_merge__offsets_json(m));
	return rsp_json__emit(root, out);
}

static int snapshot_answer(struct merge *m, struct rsp_buf *out, struct rsp_buf *err)
{
	struct msnap *sn;
	int ret = find_target(m, err);

	if (ret)
		return ret;
	sn = malloc(sizeof(*sn));
	if (!sn) {
		rsp_buf__puts(err, "merge: out of memory");
		return -ENOMEM;
	}
	snap_collect(m, sn);
	if (sn->nomem) {
		rsp_buf__puts(err, "merge: out of memory following the network waits");
		ret = -ENOMEM;
	} else if (m->json) {
		ret = snap_json(m, sn, out);
		if (ret)
			rsp_buf__puts(err, "merge: out of memory rendering the answer");
	} else {
		rsp_merge__offsets_text(m, out);
		snap_text(m, sn, out);
	}
	rsp_merge__snap_exit(sn);
	free(sn);
	return ret;
}

static void merge_exit(struct merge *m)
{
	for (int k = 0; k < m->nr; k++) {
		struct mhost *h = &m->h[k];

		free(h->ops);
		rsp_tlstore__delete(h->store);
		rsp_wsnap__unpin(h->snap);
		rsp_socktab__delete(h->socks);
		rsp_perfdata__delete(h->pd);
	}
	rsp_xmatch__delete(m->xm);
	free(m->conns);
	for (int i = 0; m->off && i < m->nr * m->nr; i++)
		rsp_clockoff__exit(&m->off[i].c);
	free(m->off);
	free(m->conn_k);
	free(m->procs);
	rsp_u64map__exit(&m->by_proc);
}

int rsp_merge__run(int argc, char **argv, struct rsp_buf *out, struct rsp_buf *err)
{
	struct merge *m = calloc(1, sizeof(*m));
	int ret;

	if (!m) {
		rsp_buf__puts(err, "merge: out of memory");
		return -ENOMEM;
	}
	rsp_u64map__init(&m->by_proc);
	m->depth = MERGE_DEPTH_DEFAULT;
	ret = parse_args(m, argc, argv, err);
	for (int k = 0; !ret && k < m->nr; k++)
		ret = load_host(m, k, err);
	if (!ret && (ret = match(m)))
		rsp_buf__puts(err, "merge: out of memory matching the connections");
	if (!ret)
		ret = check_offsets(m, err);
	if (!ret && m->snapshot)
		ret = snapshot_answer(m, out, err);
	else if (!ret && m->graph)
		ret = rsp_merge__graph(m, out, err);
	else if (!ret && m->json && (ret = render_json(m, out)))
		rsp_buf__puts(err, "merge: out of memory rendering the answer");
	else if (!ret && !m->json)
		render_text(m, out);
	merge_exit(m);
	free(m);
	return ret;
}
