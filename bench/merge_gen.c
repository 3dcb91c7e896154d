// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-merge-gen DIR HOSTS RECORDS [CONNS]: HOSTS synthetic hosts' dumps for
 * `rspctl merge` (bench/merge.py), DIR/host-K.perf.data, about RECORDS
 * records each.
 *
 * The hosts talk in a ring: host K runs CONNS client threads (default 8),
 * each with one TCP connection to host K+1 (mod HOSTS), whose server
 * thread for it answers every request; host K's own server threads
 * answer host K-1's clients. Addresses: host K is 10.0.K/256.K%256 .1,
 * clients from port 20000 + c, servers on port 7000 + c. Every exchange
 * is the records the kernel would give (rsp's layout and this kernel's
 * tracepoint formats, tests/support/synth.h): on the client's CPU its
 * switch in, sock_send_length, its switch out (asleep), then the answer's
 * NET_RX softirq with sk_data_ready and the waking, the switch in,
 * sock_recv_length, the switch out; on the server's CPU the request's
 * softirq, data ready, waking, switch in, recv, 40 us of work, send,
 * switch out. The connections' inet_sock_set_state records (their
 * 4-tuples) come first, and the sockets are in each dump's socket table.
 * Each dump carries what merge needs: a host name (synth-K), a boot id,
 * the clock pair; host K's monotonic clock runs K seconds ahead of host
 * 0's (its records and clock pair shifted alike), so every pair of
 * neighbours has a known offset of 1 s (and the ring's last pair HOSTS-1).
 *
 * Prints one JSON line: {"hosts", "records_per_host", "connections",
 * "exchanges_per_connection", "bytes"}.
 */
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
#include "unit/pd_fixture.h"

#define SLOT_NS	   100000ull /* one exchange per slot (+ up to 50 us) on each CPU */
#define REC_SLOT   18	     /* records per slot of one host: 10 client side, 8 server side */
#define BUDGET	   (2048ull << 20)
#define SK_CLIENT  0xffff888000100000ull
#define SK_SERVER  0xffff888000200000ull
#define TID_CLIENT 1000u
#define TID_SERVER 2000u
#define NET_RX	   3

struct gen {
	unsigned hosts, conns;
	unsigned long slots;
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

/* The connections' states: host @k's clients (to k+1) and servers (for k-1's clients). */
static void states(struct synth *s, const struct gen *g, unsigned k, uint64_t t)
{
	unsigned next = (k + 1) % g->hosts, prev = (k + g->hosts - 1) % g->hosts;

	for (unsigned c = 0; c < g->conns; c++) {
		synth__tcp_state(s, .cpu = 0, .t = t + c, .tid = TID_CLIENT + c,
				 .sk = SK_CLIENT + c * 0x1000, .oldstate = 2, .newstate = 1,
				 .saddr = addr_of(k), .sport = (uint16_t)(20000 + c),
				 .daddr = addr_of(next), .dport = (uint16_t)(7000 + c));
		synth__tcp_state(s, .cpu = 1, .t = t + c, .tid = TID_SERVER + c,
				 .sk = SK_SERVER + c * 0x1000, .oldstate = 3, .newstate = 1,
				 .saddr = addr_of(k), .sport = (uint16_t)(7000 + c),
				 .daddr = addr_of(prev), .dport = (uint16_t)(20000 + c));
	}
}

/* The NET_RX softirq on @cpu that delivers data to @sk and wakes @tid. */
static void arrival(struct synth *s, uint32_t cpu, uint64_t t, uint64_t sk, uint32_t tid)
{
	synth__softirq(s, .entry = true, .cpu = cpu, .t = t, .vec = NET_RX);
	synth__data_ready(s, .cpu = cpu, .t = t + 1000, .sk = sk);
	synth__waking(s, .cpu = cpu, .t = t + 2000, .target = tid);
	synth__softirq(s, .entry = false, .cpu = cpu, .t = t + 3000, .vec = NET_RX);
}

/* A jitter from @i alone: both ends of an exchange (two hosts) draw the same. */
static uint64_t jitter(unsigned long i, uint64_t range)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (x ^ x >> 32) % range;
}

/*
 * Slot @i of host @k at @t: client @c's exchange (CPU 0), and server @c
 * answering k-1's client c (CPU 1). The server's work varies (20-60 us):
 * with exchanges all alike, a pairing of each request with the answer
 * before or after its own would be as consistent as the true one.
 */
static void slot(struct synth *s, uint64_t t, unsigned long i, unsigned c)
{
	uint32_t ct = TID_CLIENT + c, st = TID_SERVER + c;
	uint64_t csk = SK_CLIENT + c * 0x1000, ssk = SK_SERVER + c * 0x1000;
	uint64_t sent = t + 15000 + 20000 + jitter(i, 40000); /* the server's answer */

	/* CPU 0: the client asks at t + 1 us, the answer arrives 10 us after it left */
	synth__switch(s, .cpu = 0, .t = t, .prev = 0, .next = ct, .next_comm = "client");
	synth__sock_len(s, .cpu = 0, .t = t + 1000, .tid = ct, .sk = csk, .bytes = 8);
	synth__switch(s, .cpu = 0, .t = t + 2000, .prev = ct, .prev_comm = "client", .state = 1,
		      .next = 0);
	/* CPU 1: the request arrives at t + 10 us */
	arrival(s, 1, t + 10000, ssk, st);
	synth__switch(s, .cpu = 1, .t = t + 14000, .prev = 0, .next = st, .next_comm = "server");
	synth__sock_len(s, .recv = true, .cpu = 1, .t = t + 15000, .tid = st, .sk = ssk,
			.bytes = 8);
	synth__sock_len(s, .cpu = 1, .t = sent, .tid = st, .sk = ssk, .bytes = 8);
	synth__switch(s, .cpu = 1, .t = sent + 1000, .prev = st, .prev_comm = "server", .state = 1,
		      .next = 0);
	arrival(s, 0, sent + 10000, csk, ct);
	synth__switch(s, .cpu = 0, .t = sent + 14000, .prev = 0, .next = ct, .next_comm = "client");
	synth__sock_len(s, .recv = true, .cpu = 0, .t = sent + 15000, .tid = ct, .sk = csk,
			.bytes = 8);
	synth__switch(s, .cpu = 0, .t = sent + 16000, .prev = ct, .prev_comm = "client", .state = 1,
		      .next = 0);
}

/*
 * The file's evsels: synth's (same order, same sample ids), with what perf
 * and the reader need of a tracepoint's attr: its id in config, and the
 * "system:name" name.
 */
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

static int write_host(const struct gen *g, unsigned k, const char *dir, const struct rsp_buf *td,
		      uint64_t *bytes)
{
	uint64_t shift = (uint64_t)k * 1000000000ull, t0 = 1000000000ull + shift;
	struct synth *s = synth__new(2, BUDGET);
	struct rsp_sock_info *socks = calloc(2 * (size_t)g->conns, sizeof(*socks));
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_perfdata_meta m;
	struct rsp_pdwriter *pw = NULL;
	struct rsp_schema *fs = s ? file_schema(s) : NULL;
	struct rsp_pd_stats st;
	char path[4096], host[32], boot[40];
	int fd = -1, ret = -ENOMEM;

	if (!s || !socks || !fs)
		goto out;
	states(s, g, k, t0);
	for (unsigned long i = 0, t = t0 + 100000; i < g->slots; i++) {
		slot(s, t, i, (unsigned)(i % g->conns));
		t += SLOT_NS + jitter(i + 1000000007ul, 50000);
	}
	for (unsigned c = 0; c < g->conns; c++) {
		socks[2 * c] = (struct rsp_sock_info){
			.sk = SK_CLIENT + c * 0x1000,
			.proto = RSP_IPPROTO_TCP,
			.state = 1,
			.source = RSP_SOCK_FROM_PROC,
			.local = sockaddr_of(k, (uint16_t)(20000 + c)),
			.remote = sockaddr_of((k + 1) % g->hosts, (uint16_t)(7000 + c))};
		socks[2 * c + 1] =
			(struct rsp_sock_info){.sk = SK_SERVER + c * 0x1000,
					       .proto = RSP_IPPROTO_TCP,
					       .state = 1,
					       .source = RSP_SOCK_FROM_PROC,
					       .local = sockaddr_of(k, (uint16_t)(7000 + c)),
					       .remote = sockaddr_of((k + g->hosts - 1) % g->hosts,
								     (uint16_t)(20000 + c))};
	}
	fx_meta(&m, td);
	snprintf(host, sizeof(host), "synth-%u", k);
	snprintf(boot, sizeof(boot), "5e5e5e5e-0000-4000-8000-%012x", k);
	m.hostname = host;
	m.boot_id = boot;
	m.sockets = socks;
	m.nr_sockets = 2 * (size_t)g->conns;
	m.clockid_time_ns +=
		shift; /* the same wall clock instant, K s later on this host's clock */
	snprintf(path, sizeof(path), "%s/host-%u.perf.data", dir, k);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "rsp-merge-gen: %s: %s\n", path, strerror(errno));
		goto out;
	}
	pw = rsp_pdwriter__new(fd, fs, &m, &err);
	if (!pw || (ret = rsp_pdwriter__window(pw, s->window, 0, UINT64_MAX)) ||
	    (ret = rsp_pdwriter__finish(pw))) {
		fprintf(stderr, "rsp-merge-gen: writing %s: %s\n", path,
			err.data ? err.data : strerror(ret < 0 ? -ret : ENOMEM));
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	rsp_pdwriter__stats(pw, &st);
	*bytes += st.bytes;
	ret = 0;
out:
	rsp_pdwriter__delete(pw);
	rsp_schema__delete(fs);
	if (fd >= 0)
		close(fd);
	free(socks);
	synth__delete(s);
	rsp_buf__exit(&err);
	return ret;
}

/* The tracing data: every golden format (this kernel's), as the fixture writes it. */
static int tracing(struct rsp_buf *td)
{
	struct rsp_tracedata_event ev[128];
	int nr = 0;

	for (const struct golden_format *f = golden_formats; f->system && nr < 128; f++, nr++)
		ev[nr] = (struct rsp_tracedata_event){f->system, f->format, strlen(f->format)};
	return rsp_tracedata__build(td, fx_header_page, sizeof(fx_header_page) - 1, fx_header_event,
				    sizeof(fx_header_event) - 1, ev, nr, NULL, 0, NULL);
}

static unsigned long number(const char *arg, unsigned long lo, unsigned long hi, const char *what)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "rsp-merge-gen: %s wants a number from %lu to %lu, not '%s'\n",
			what, lo, hi, arg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct rsp_buf td = RSP_BUF_INIT;
	struct gen g;
	uint64_t bytes = 0;
	unsigned long records;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: rsp-merge-gen DIR HOSTS RECORDS [CONNS]\n");
		return 2;
	}
	g.hosts = (unsigned)number(argv[2], 2, 64, "HOSTS");
	records = number(argv[3], 1000, 100000000, "RECORDS");
	g.conns = argc == 5 ? (unsigned)number(argv[4], 1, 1000, "CONNS") : 8;
	g.slots = records / REC_SLOT;
	if (tracing(&td)) {
		fprintf(stderr, "rsp-merge-gen: out of memory building the tracing data\n");
		return 1;
	}
	for (unsigned k = 0; k < g.hosts; k++)
		if (write_host(&g, k, argv[1], &td, &bytes))
			return 1;
	printf("{\"hosts\": %u, \"records_per_host\": %lu, \"connections\": %u, "
	       "\"exchanges_per_connection\": %lu, \"bytes\": %llu}\n",
	       g.hosts, g.slots * REC_SLOT + 2 * g.conns, g.hosts * g.conns, g.slots / g.conns,
	       (unsigned long long)bytes);
	rsp_buf__exit(&td);
	return 0;
}
