// SPDX-License-Identifier: GPL-2.0
/* Synthetic hosts' dumps for rspctl merge: see xhosts.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <traceevent/event-parse.h>
#include <rsp/catalogue.h>
#include <rsp/perfdata.h>
#include <rsp/schema.h>
#include <rsp/socktab.h>
#include "golden/golden.h"
#include "support/synth.h"
#include "support/xhosts.h"
#include "unit/pd_fixture.h"

#define SLOT_NS	  100000ull /* a slot per exchange (+ up to 50 us, + 40 us per level) */
#define LEVEL_NS  40000ull
#define BUDGET	  (2048ull << 20)
#define SK_CLIENT 0xffff888000100000ull
#define SK_SERVER 0xffff888000200000ull
#define NET_RX	  3
#define NONE	  UINT32_MAX

/* What one host's dump gets: host @k's records, in its own clock (@shift ahead). */
struct emit {
	struct synth *s;
	const struct xhosts *x;
	unsigned k;
	uint64_t shift;
};

static uint32_t addr_of(unsigned k)
{
	return 10u << 24 | (k / 256) << 16 | (k % 256) << 8 | 1;
}

static struct rsp_sockaddr sockaddr_of(unsigned k, uint16_t port)
{
	struct rsp_sockaddr a = {.family = AF_INET, .port = port};
	uint32_t v = addr_of(k);

	a.addr[0] = v >> 24;
	a.addr[1] = v >> 16 & 0xff;
	a.addr[2] = v >> 8 & 0xff;
	a.addr[3] = v & 0xff;
	return a;
}

/* A jitter from @i alone: every host draws the same for one exchange. */
static uint64_t jitter(unsigned long i, uint64_t range)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (x ^ x >> 32) % range;
}

/* The host host @k's clients ask, and the one whose clients ask it (NONE: none). */
static unsigned upstream(const struct xhosts *x, unsigned k)
{
	if (x->chain)
		return k + 1 < x->hosts ? k + 1 : NONE;
	return (k + 1) % x->hosts;
}

static unsigned downstream(const struct xhosts *x, unsigned k)
{
	if (x->chain)
		return k ? k - 1 : NONE;
	return (k + x->hosts - 1) % x->hosts;
}

/* Host @k's clients (to its upstream) and servers (for its downstream): sockets. */
static size_t sockets(const struct xhosts *x, unsigned k, struct rsp_sock_info *v)
{
	unsigned up = upstream(x, k), down = downstream(x, k);
	size_t n = 0;

	for (unsigned c = 0; c < x->conns; c++) {
		if (up != NONE)
			v[n++] = (struct rsp_sock_info){
				.sk = SK_CLIENT + c * 0x1000,
				.proto = RSP_IPPROTO_TCP,
				.state = 1,
				.source = RSP_SOCK_FROM_PROC,
				.local = sockaddr_of(k, (uint16_t)(20000 + c)),
				.remote = sockaddr_of(up, (uint16_t)(7000 + c))};
		if (down != NONE)
			v[n++] = (struct rsp_sock_info){
				.sk = SK_SERVER + c * 0x1000,
				.proto = RSP_IPPROTO_TCP,
				.state = 1,
				.source = RSP_SOCK_FROM_PROC,
				.local = sockaddr_of(k, (uint16_t)(7000 + c)),
				.remote = sockaddr_of(down, (uint16_t)(20000 + c))};
	}
	return n;
}

/* The connections' states (their 4-tuples): the sockets' table as records. */
static void states(const struct emit *e, uint64_t t)
{
	struct rsp_sock_info v[2];

	for (unsigned c = 0; c < e->x->conns; c++) {
		struct xhosts one = *e->x;
		size_t n;

		one.conns = 1;
		n = sockets(&one, e->k, v);
		for (size_t i = 0; i < n; i++) {
			bool client = v[i].sk == SK_CLIENT;
			uint32_t rv = (uint32_t)v[i].remote.addr[0] << 24 |
				      (uint32_t)v[i].remote.addr[1] << 16 |
				      (uint32_t)v[i].remote.addr[2] << 8 | v[i].remote.addr[3];

			/* a proxy's client socket is its server thread's; the loop's
			 * host 0 answers on its client thread */
			bool ct = client ? !(e->x->chain && e->k) && !(e->x->loop && e->k)
					 : e->x->loop && !e->k;

			/* handoff: a proxy's client socket is its worker's */
			bool wk = client && e->x->handoff && !ct;

			synth__tcp_state(e->s, .cpu = ct || wk ? 0 : 1, .t = t + c,
					 .tgid = wk ? XHOSTS_TID_SERVER + c : 0,
					 .tid = ct   ? XHOSTS_TID_CLIENT + c
						: wk ? XHOSTS_TID_WORKER + c
						     : XHOSTS_TID_SERVER + c,
					 .sk = v[i].sk + c * 0x1000, .oldstate = client ? 2 : 3,
					 .newstate = 1, .saddr = addr_of(e->k),
					 .sport = (uint16_t)(v[i].local.port + c), .daddr = rv,
					 .dport = (uint16_t)(v[i].remote.port + c));
		}
	}
}

/* The NET_RX softirq on @cpu that delivers data to @sk and wakes @tid (host time @t). */
static void arrival(struct synth *s, uint32_t cpu, uint64_t t, uint64_t sk, uint32_t tid)
{
	synth__softirq(s, .entry = true, .cpu = cpu, .t = t, .vec = NET_RX);
	synth__data_ready(s, .cpu = cpu, .t = t + 1000, .sk = sk);
	synth__waking(s, .cpu = cpu, .t = t + 2000, .target = tid);
	synth__softirq(s, .entry = false, .cpu = cpu, .t = t + 3000, .vec = NET_RX);
}

static uint64_t serve(const struct emit *e, unsigned h, unsigned long i, unsigned c, uint64_t a);

/*
 * A proxy's server thread (CPU 1), the request read, hands it to its
 * worker (CPU 0), which asks the upstream and wakes the server thread back
 * when the answer has come. Return: the global time of the answer's
 * arrival (the server thread runs again before + 16 us).
 */
static uint64_t handoff(const struct emit *e, unsigned h, unsigned long i, unsigned c, uint64_t a)
{
	uint32_t st = XHOSTS_TID_SERVER + c, wt = XHOSTS_TID_WORKER + c;
	uint64_t usk = SK_CLIENT + c * 0x1000, sh = e->shift, back;
	bool mine = h == e->k;

	if (mine) {
		synth__waking(e->s, .cpu = 0, .t = a + 5500 + sh, .tid = st, .target = wt,
			      .target_comm = "worker");
		synth__switch(e->s, .cpu = 1, .t = a + 5800 + sh, .prev = st, .prev_comm = "server",
			      .state = 1, .next = 0);
		synth__switch(e->s, .cpu = 0, .t = a + 6000 + sh, .prev = 0, .next = wt,
			      .next_comm = "worker");
		synth__sock_len(e->s, .cpu = 0, .t = a + 6500 + sh, .tgid = st, .tid = wt,
				.sk = usk, .bytes = 8);
		synth__switch(e->s, .cpu = 0, .t = a + 7000 + sh, .prev = wt, .prev_tgid = st,
			      .prev_comm = "worker", .state = 1, .next = 0);
	}
	back = serve(e, upstream(e->x, h), i, c, a + 16000);
	if (mine) {
		arrival(e->s, 0, back + 10000 + sh, usk, wt);
		synth__switch(e->s, .cpu = 0, .t = back + 14000 + sh, .prev = 0, .next = wt,
			      .next_comm = "worker");
		synth__sock_len(e->s, .recv = true, .cpu = 0, .t = back + 15000 + sh, .tgid = st,
				.tid = wt, .sk = usk, .bytes = 8);
		synth__waking(e->s, .cpu = 1, .t = back + 15500 + sh, .tgid = st, .tid = wt,
			      .target = st, .target_comm = "server");
		synth__switch(e->s, .cpu = 0, .t = back + 15800 + sh, .prev = wt, .prev_tgid = st,
			      .prev_comm = "worker", .state = 1, .next = 0);
		synth__switch(e->s, .cpu = 1, .t = back + 15900 + sh, .prev = 0, .next = st,
			      .next_comm = "server");
	}
	return back;
}

/*
 * The server of connection @c on host @h (its CPU 1) gets a request at
 * global time @a, in exchange @i: its records if @h is the host written,
 * and the global time its answer leaves. A proxy (chain, and host 1 of the
 * loop) asks its own upstream first and answers when that answer has come.
 * The loop's host 0 answers on its client thread (CPU 0), which is still
 * waiting for its own request's answer (an event loop).
 */
static uint64_t serve(const struct emit *e, unsigned h, unsigned long i, unsigned c, uint64_t a)
{
	bool ev = e->x->loop && !h, mine = h == e->k;
	bool proxy = e->x->chain ? h + 1 < e->x->hosts : e->x->loop && h;
	uint32_t st = (ev ? XHOSTS_TID_CLIENT : XHOSTS_TID_SERVER) + c, cpu = ev ? 0 : 1;
	uint64_t ssk = SK_SERVER + c * 0x1000, usk = SK_CLIENT + c * 0x1000, sh = e->shift;
	uint64_t sent;
	/* stray_tgid: the server's socket records name a process its others do not */
	uint32_t stray = e->x->stray_tgid && !ev ? st + XHOSTS_STRAY : 0;

	if (mine) {
		arrival(e->s, cpu, a + sh, ssk, st);
		synth__switch(e->s, .cpu = cpu, .t = a + 4000 + sh, .prev = 0, .next = st,
			      .next_comm = ev ? "client" : "server");
		synth__sock_len(e->s, .recv = true, .cpu = cpu, .t = a + 5000 + sh, .tgid = stray,
				.tid = st, .sk = ssk, .bytes = 8);
	}
	if (!proxy) {
		sent = a + 5000 + 20000 + jitter(i, 40000);
	} else if (e->x->handoff) {
		sent = handoff(e, h, i, c, a) + 16000;
	} else {
		uint64_t back;

		if (mine) {
			synth__sock_len(e->s, .cpu = cpu, .t = a + 6000 + sh, .tid = st, .sk = usk,
					.bytes = 8);
			synth__switch(e->s, .cpu = cpu, .t = a + 7000 + sh, .prev = st,
				      .prev_comm = ev ? "client" : "server", .state = 1, .next = 0);
		}
		back = serve(e, upstream(e->x, h), i, c, a + 16000);
		if (mine) {
			arrival(e->s, cpu, back + 10000 + sh, usk, st);
			synth__switch(e->s, .cpu = cpu, .t = back + 14000 + sh, .prev = 0,
				      .next = st, .next_comm = ev ? "client" : "server");
			synth__sock_len(e->s, .recv = true, .cpu = cpu, .t = back + 15000 + sh,
					.tid = st, .sk = usk, .bytes = 8);
		}
		sent = back + 16000;
	}
	if (mine) {
		synth__sock_len(e->s, .cpu = cpu, .t = sent + sh, .tgid = stray, .tid = st,
				.sk = ssk, .bytes = 8);
		synth__switch(e->s, .cpu = cpu, .t = sent + 1000 + sh, .prev = st,
			      .prev_comm = ev ? "client" : "server", .state = 1, .next = 0);
	}
	return sent;
}

/* The thread of client @c in exchange @i: handover moves it to another process. */
static uint32_t client_tid(const struct xhosts *x, unsigned long i, unsigned c)
{
	return XHOSTS_TID_CLIENT + c + (x->handover && i >= x->slots / 2 ? XHOSTS_HANDOVER : 0);
}

/* Exchange @i at global time @t: client @c of host @h asks its upstream (CPU 0). */
static void ask(const struct emit *e, unsigned h, unsigned long i, unsigned c, uint64_t t)
{
	uint32_t ct = client_tid(e->x, i, c), pt = e->x->one_process ? XHOSTS_TID_CLIENT : 0;
	uint64_t csk = SK_CLIENT + c * 0x1000, sh = e->shift, back;
	bool mine = h == e->k;
	/* early_arrival: host 0's answer stamped 1.5 us before its request's send */
	bool early = e->x->early_arrival && !e->k && i == e->x->slots / 2;

	if (mine) {
		synth__switch(e->s, .cpu = 0, .t = t + sh, .prev = 0, .next = ct,
			      .next_comm = "client");
		synth__sock_len(e->s, .cpu = 0, .t = t + 1000 + sh, .tgid = pt, .tid = ct,
				.sk = csk, .bytes = 8);
		synth__switch(e->s, .cpu = 0, .t = t + 2000 + sh, .prev = ct, .prev_tgid = pt,
			      .prev_comm = "client", .state = 1, .next = 0);
	}
	back = serve(e, upstream(e->x, h), i, c, t + 10000);
	if (mine) {
		arrival(e->s, 0, early ? t - 1500 + sh : back + 10000 + sh, csk, ct);
		synth__switch(e->s, .cpu = 0, .t = back + 14000 + sh, .prev = 0, .next = ct,
			      .next_comm = "client");
		synth__sock_len(e->s, .recv = true, .cpu = 0, .t = back + 15000 + sh, .tgid = pt,
				.tid = ct, .sk = csk, .bytes = 8);
		synth__switch(e->s, .cpu = 0, .t = back + 16000 + sh, .prev = ct, .prev_tgid = pt,
			      .prev_comm = "client", .state = 1, .next = 0);
	}
}

/* Every exchange host @e->k takes part in, in time order on each of its CPUs. */
static void exchanges(const struct emit *e)
{
	const struct xhosts *x = e->x;
	uint64_t t = 1000000000ull + 100000,
		 slot = SLOT_NS + (x->chain || x->loop ? x->hosts * LEVEL_NS : 0);

	for (unsigned long i = 0; i < x->slots; i++) {
		unsigned c = (unsigned)(i % x->conns);

		if (x->chain || x->loop) {
			ask(e, 0, i, c, t);
		} else {
			/* its own client, and its server answering the host before */
			ask(e, e->k, i, c, t);
			ask(e, downstream(x, e->k), i, c, t);
		}
		t += slot + jitter(i + 1000000007ul, 50000);
	}
}

static struct rsp_schema *file_schema(const struct synth *s)
{
	struct rsp_schema *fs = rsp_schema__new();

	for (int i = 0; fs && i < rsp_schema__nr_evsels(s->schema); i++) {
		struct perf_event_attr a = *rsp_schema__evsel_attr(s->schema, i);
		int ev = rsp_schema__evsel_event(s->schema, i);
		const struct rsp_event_info *ei = rsp_catalogue__event(ev);
		char name[128];

		snprintf(name, sizeof(name), "%s", rsp_schema__evsel_name(s->schema, i));
		if (a.type == PERF_TYPE_TRACEPOINT) {
			struct tep_event *te = tep_find_event_by_name(s->tep, ei->system, ei->tp);

			if (!te)
				goto fail;
			a.config = (uint64_t)te->id;
			snprintf(name, sizeof(name), "%s:%s", ei->system, ei->tp);
		}
		if (rsp_schema__add_evsel(fs, &a, ev, rsp_schema__evsel_role(s->schema, i), name) !=
			    i ||
		    rsp_schema__add_id(fs, i, SYNTH_ID_BASE + (uint64_t)i))
			goto fail;
	}
	if (fs && rsp_schema__resolve_fields(fs, s->tep) < 0)
		goto fail;
	return fs;
fail:
	rsp_schema__delete(fs);
	return NULL;
}

static int tracing(struct rsp_buf *td)
{
	struct rsp_tracedata_event ev[128];
	int nr = 0;

	for (const struct golden_format *f = golden_formats; f->system && nr < 128; f++, nr++)
		ev[nr] = (struct rsp_tracedata_event){f->system, f->format, strlen(f->format)};
	return rsp_tracedata__build(td, fx_header_page, sizeof(fx_header_page) - 1, fx_header_event,
				    sizeof(fx_header_event) - 1, ev, nr, NULL, 0, NULL);
}

static int write_host(const struct xhosts *x, unsigned k, const char *dir, const struct rsp_buf *td,
		      uint64_t *records, uint64_t *bytes)
{
	struct emit e = {.x = x, .k = k, .shift = (uint64_t)k * 1000000000ull};
	struct rsp_sock_info *socks = calloc(2 * (size_t)x->conns, sizeof(*socks));
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_perfdata_meta m;
	struct rsp_pdwriter *pw = NULL;
	struct rsp_schema *fs = NULL;
	struct rsp_pd_stats st;
	char path[4096], host[32], boot[40];
	int fd = -1, ret = -ENOMEM;

	e.s = synth__new(2, BUDGET);
	fs = e.s ? file_schema(e.s) : NULL;
	if (!socks || !fs)
		goto out;
	states(&e, 1000000000ull + e.shift);
	exchanges(&e);
	fx_meta(&m, td);
	snprintf(host, sizeof(host), x->bad_hostname && k == 1 ? "synth-\xff%u" : "synth-%u", k);
	snprintf(boot, sizeof(boot), "5e5e5e5e-0000-4000-8000-%012x", k);
	m.hostname = host;
	m.boot_id = boot;
	m.sockets = socks;
	m.nr_sockets = sockets(x, k, socks);
	m.clockid_time_ns += e.shift; /* one wall-clock instant, K s later on this host's clock */
	if (x->bad_clock && k == 1) {
		/* a crafted pair: the same wall clock, a monotonic clock near INT64_MAX */
		uint64_t d = m.wall_clock_ns - m.clockid_time_ns;

		m.clockid_time_ns = 0x7fffffff00000000ull;
		m.wall_clock_ns = m.clockid_time_ns + d;
	}
	snprintf(path, sizeof(path), "%s/host-%u.perf.data", dir, k);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "xhosts: %s: %s\n", path, strerror(errno));
		goto out;
	}
	pw = rsp_pdwriter__new(fd, fs, &m, &err);
	if (!pw || (ret = rsp_pdwriter__window(pw, e.s->window, 0, UINT64_MAX)) ||
	    (ret = rsp_pdwriter__finish(pw))) {
		fprintf(stderr, "xhosts: writing %s: %s\n", path,
			err.data ? err.data : strerror(ret < 0 ? -ret : ENOMEM));
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	rsp_pdwriter__stats(pw, &st);
	if (bytes)
		*bytes += st.bytes;
	if (records && !k)
		*records = st.records;
	ret = 0;
out:
	rsp_pdwriter__delete(pw);
	rsp_schema__delete(fs);
	if (fd >= 0)
		close(fd);
	free(socks);
	synth__delete(e.s);
	rsp_buf__exit(&err);
	return ret;
}

int xhosts__write(const struct xhosts *x, const char *dir, uint64_t *records, uint64_t *bytes)
{
	struct rsp_buf td = RSP_BUF_INIT;
	int ret = 0;

	if (bytes)
		*bytes = 0;
	if (x->hosts < 2 || x->hosts > 64 || !x->conns || !x->slots || (x->loop && x->hosts != 2) ||
	    (x->loop && x->chain)) {
		fprintf(stderr, "xhosts: 2 to 64 hosts (a loop: 2, not a chain), and connections "
				"and exchanges\n");
		return -EINVAL;
	}
	if (tracing(&td)) {
		fprintf(stderr, "xhosts: out of memory building the tracing data\n");
		return -ENOMEM;
	}
	for (unsigned k = 0; !ret && k < x->hosts; k++)
		ret = write_host(x, k, dir, &td, records, bytes);
	rsp_buf__exit(&td);
	return ret;
}
