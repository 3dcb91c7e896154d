// SPDX-License-Identifier: GPL-2.0
/*
 * Network events and operations: decoding (sock tracepoints and kprobes),
 * the socket table, and the timeline's network operations and wakers on
 * synthetic streams whose answer is known by construction.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <rsp/net.h>
#include <rsp/socktab.h>
#include <rsp/timeline.h>
#include "support/synth.h"

/* Kernel functions of a waking's stack in a loopback NET_RX softirq. */
#define K_TTWU	   0xffffffff81001000ull
#define K_DEFREAD  0xffffffff81002000ull
#define K_NETRX	   0xffffffff81003000ull
#define K_SOFTIRQS 0xffffffff81004000ull
#define K_BH_EN	   0xffffffff81005000ull
#define K_DEVXMIT  0xffffffff81006000ull
#define K_UDPSEND  0xffffffff81007000ull
#define K_IRQEXIT  0xffffffff81008000ull
#define K_TCPRECV  0xffffffff81009000ull
#define K_SCHED	   0xffffffff8100a000ull

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81001000 T try_to_wake_up\n"
			       "ffffffff81002000 T sock_def_readable\n"
			       "ffffffff81003000 T net_rx_action\n"
			       "ffffffff81004000 T handle_softirqs\n"
			       "ffffffff81005000 T __local_bh_enable_ip\n"
			       "ffffffff81006000 T __dev_queue_xmit\n"
			       "ffffffff81007000 T udp_sendmsg\n"
			       "ffffffff81008000 T irq_exit_rcu\n"
			       "ffffffff81009000 T tcp_recvmsg\n"
			       "ffffffff8100a000 T schedule\n"
			       "ffffffff81010000 T _etext\n";

static const uint64_t chain_send[] = {PERF_CONTEXT_KERNEL, K_TTWU,	   K_DEFREAD + 8,
				      K_NETRX + 8,	   K_SOFTIRQS + 8, K_BH_EN + 8,
				      K_DEVXMIT + 8,	   K_UDPSEND + 8};
static const uint64_t chain_irq[] = {PERF_CONTEXT_KERNEL, K_TTWU,	  K_DEFREAD + 8,
				     K_NETRX + 8,	  K_SOFTIRQS + 8, K_IRQEXIT + 8};
static const uint64_t chain_recv[] = {PERF_CONTEXT_KERNEL, K_SCHED + 8, K_TCPRECV + 8};

#define SK_C 0xffff888100000100ull /* the client's socket */
#define SK_S 0xffff888100000200ull /* the server's */
#define C    100
#define S    200

struct rec {
	struct rsp_segment segs[64];
	size_t nsegs;
	struct rsp_net_op ops[16];
	size_t nops;
};

static void on_seg(void *ctx, const struct rsp_segment *seg, const char *comm)
{
	struct rec *r = ctx;

	assert_true(r->nsegs < 64);
	r->segs[r->nsegs++] = *seg;
}

static void on_op(void *ctx, const struct rsp_net_op *op)
{
	struct rec *r = ctx;

	assert_true(r->nops < 16);
	r->ops[r->nops++] = *op;
}

struct fix {
	struct synth s;
	struct rsp_ksyms *ks;
	struct rec r;
	struct rsp_timeline_stats st;
	int kp_send, kp_recv, probe; /* extra evsels */
};

/* An evsel outside the tracepoints: kprobes (REGS_INTR), the uprobe (CALLCHAIN). */
static int add_evsel(struct fix *f, int ev, uint64_t extra)
{
	struct perf_event_attr a;
	int idx;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | extra;
	a.sample_regs_intr = extra & PERF_SAMPLE_REGS_INTR ? RSP_KPROBE_REGS : 0;
	a.sample_id_all = 1;
	idx = rsp_schema__add_evsel(f->s.schema, &a, ev, RSP_ROLE_PRIMARY, "extra");
	assert_true(idx >= 0);
	assert_int_equal(rsp_schema__add_id(f->s.schema, idx, SYNTH_ID_BASE + (uint64_t)idx), 0);
	return idx;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct rsp_buf err = RSP_BUF_INIT;

	synth__init(&f->s);
	f->ks = rsp_ksyms__new_from_text(kallsyms, strlen(kallsyms), &err);
	rsp_buf__exit(&err);
	f->kp_send = add_evsel(f, RSP_EV_kp_udp_sendmsg, PERF_SAMPLE_REGS_INTR);
	f->kp_recv = add_evsel(f, RSP_EV_kp_udp_queue_rcv_skb, PERF_SAMPLE_REGS_INTR);
	f->probe = add_evsel(f, RSP_EV_uprobe, PERF_SAMPLE_CALLCHAIN);
	*state = f;
	return f->ks ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	synth__exit(&f->s);
	rsp_ksyms__delete(f->ks);
	free(f);
	return 0;
}

/* A kprobe sample: the fixed words, then REGS_INTR {abi, dx, di} (bit order). */
static void kprobe(struct fix *f, int evsel, uint32_t cpu, uint64_t t, uint32_t tid, uint64_t di,
		   uint64_t dx, bool regs)
{
	size_t size = sizeof(struct perf_event_header) + 5 * 8 + (regs ? 3 * 8 : 8);
	uint64_t *w = (uint64_t *)synth__reserve(&f->s, size, cpu);

	((struct perf_event_header *)w)->type = PERF_RECORD_SAMPLE;
	((struct perf_event_header *)w)->size = (uint16_t)size;
	w[1] = SYNTH_ID_BASE + (uint64_t)evsel;
	w[3] = (uint64_t)tid | (uint64_t)tid << 32;
	w[4] = t;
	w[5] = cpu;
	w[6] = regs ? PERF_SAMPLE_REGS_ABI_64 : 0;
	if (regs) {
		w[7] = dx;
		w[8] = di;
	}
	synth__commit(&f->s);
}

/* A uprobe sample with a user callchain. */
static void uprobe(struct fix *f, uint32_t cpu, uint64_t t, uint32_t tid)
{
	size_t size = sizeof(struct perf_event_header) + 5 * 8 + 8 * 4;
	uint64_t *w = (uint64_t *)synth__reserve(&f->s, size, cpu);

	((struct perf_event_header *)w)->type = PERF_RECORD_SAMPLE;
	((struct perf_event_header *)w)->size = (uint16_t)size;
	w[1] = SYNTH_ID_BASE + (uint64_t)f->probe;
	w[2] = 0x401000;
	w[3] = (uint64_t)tid | (uint64_t)tid << 32;
	w[4] = t;
	w[5] = cpu;
	w[6] = 3;
	w[7] = PERF_CONTEXT_USER;
	w[8] = 0x401000;
	w[9] = 0x402345;
	synth__commit(&f->s);
}

static void run(struct fix *f, unsigned flags)
{
	static const struct rsp_timeline_ops ops = {.segment = on_seg, .net = on_op};
	struct rsp_timeline *tl = rsp_timeline__new(f->s.schema, &ops, &f->r);

	assert_non_null(tl);
	memset(&f->r, 0, sizeof(f->r));
	rsp_timeline__set_flags(tl, flags);
	assert_int_equal(rsp_timeline__set_ksyms(tl, f->ks), 0);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < f->s.n; i++) {
		struct rsp_wentry e = synth__entry(&f->s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	rsp_timeline__finish(tl, 100000);
	rsp_timeline__stats(tl, &f->st);
	rsp_timeline__delete(tl);
	synth__reset(&f->s);
}

static const struct rsp_segment *sleep_of(const struct fix *f, uint32_t tid, uint64_t t)
{
	for (size_t i = 0; i < f->r.nsegs; i++)
		if (f->r.segs[i].tid == tid && f->r.segs[i].kind == RSP_SEG_SLEEP &&
		    f->r.segs[i].start <= t && t < f->r.segs[i].end)
			return &f->r.segs[i];
	return NULL;
}

/*
 * The client C sends on SK_C and sleeps in recv; the server S, on the other
 * CPU, answers: its send runs the NET_RX softirq in its own context, data
 * arrives for SK_C, C is woken; then S's send returns (on SK_S). C sends
 * again at 3000, which completes the operation.
 */
static void client_server(struct fix *f, const uint64_t *wchain, uint32_t wnr, bool server_send)
{
	struct synth *s = &f->s;

	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_UDP, .bytes = 64);
	synth__switch(s, .cpu = 0, .t = 1100, .prev = C, .prev_comm = "client", .state = 1,
		      .next = 0, .chain = chain_recv, .nr = 3);
	synth__sock_len(s, .recv = true, .cpu = 1, .t = 1500, .tid = S, .sk = SK_S,
			.proto = RSP_IPPROTO_UDP, .bytes = 64);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 2000, .tid = S, .vec = RSP_SOFTIRQ_NET_RX);
	synth__data_ready(s, .cpu = 1, .t = 2010, .tid = S, .sk = SK_C, .proto = RSP_IPPROTO_UDP);
	synth__waking(s, .cpu = 1, .t = 2020, .tid = S, .target = C, .target_comm = "client",
		      .chain = wchain, .nr = wnr);
	synth__softirq(s, .entry = false, .cpu = 1, .t = 2030, .tid = S, .vec = RSP_SOFTIRQ_NET_RX);
	if (server_send)
		synth__sock_len(s, .recv = false, .cpu = 1, .t = 2040, .tid = S, .sk = SK_S,
				.proto = RSP_IPPROTO_UDP, .bytes = 64);
	synth__switch(s, .cpu = 0, .t = 2100, .prev = 0, .next = C, .next_comm = "client");
	synth__sock_len(s, .recv = false, .cpu = 0, .t = 3000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_UDP, .bytes = 64);
}

static const struct rsp_net_op *op_on(const struct fix *f, uint64_t sk)
{
	for (size_t i = 0; i < f->r.nops; i++)
		if (f->r.ops[i].sk == sk)
			return &f->r.ops[i];
	return NULL;
}

static void test_loopback_by_stack(void **state)
{
	struct fix *f = *state;
	const struct rsp_segment *sl;
	const struct rsp_net_op *op;

	client_server(f, chain_send, sizeof(chain_send) / 8, true);
	run(f, 0);
	sl = sleep_of(f, C, 1500);
	assert_non_null(sl);
	assert_int_equal(sl->end, 2020);
	assert_int_equal(sl->waker.kind, RSP_WAKER_THREAD);
	assert_int_equal(sl->waker.id, S);
	assert_int_equal(sl->waker.flags, RSP_WAKERF_NET | RSP_WAKERF_LOOPBACK);
	assert_true(sl->waker.sk == SK_C);
	assert_int_equal(f->st.net_loopback, 1);
	op = op_on(f, SK_C);
	assert_non_null(op);
	assert_int_equal(op->start, 1000);
	assert_int_equal(op->first, 2010);
	assert_int_equal(op->end, 2010);
	assert_int_equal(op->arrivals, 1);
	assert_int_equal(op->wakeups, 1);
	assert_int_equal(op->tid, C);
	assert_int_equal(op->peer_tid, S);
	assert_true(op->peer_sk == SK_S);
	assert_true(op->flags & RSP_NETF_LOOPBACK);
	assert_int_equal(op->bytes_sent, 64);
	assert_int_equal(op->proto, RSP_IPPROTO_UDP);
}

/* The softirq ran on an interrupt's exit: the task under it is a bystander. */
static void test_remote_by_stack(void **state)
{
	struct fix *f = *state;
	const struct rsp_segment *sl;
	const struct rsp_net_op *op;

	client_server(f, chain_irq, sizeof(chain_irq) / 8, false);
	run(f, 0);
	sl = sleep_of(f, C, 1500);
	assert_non_null(sl);
	assert_int_equal(sl->waker.kind, RSP_WAKER_SOFTIRQ);
	assert_int_equal(sl->waker.id, RSP_SOFTIRQ_NET_RX);
	assert_int_equal(sl->waker.flags, RSP_WAKERF_NET);
	assert_true(sl->waker.sk == SK_C);
	assert_int_equal(f->st.net_loopback, 0);
	op = op_on(f, SK_C);
	assert_non_null(op);
	assert_int_equal(op->peer_tid, 0);
	assert_false(op->flags & (RSP_NETF_LOOPBACK | RSP_NETF_LOCAL));
}

/*
 * No stack on the waking: the sleep's waker is the NIC (nothing says
 * otherwise when it is emitted), but the send that returns right after the
 * softirq, in the same task, names the operation's peer.
 */
static void test_loopback_by_send(void **state)
{
	struct fix *f = *state;
	const struct rsp_net_op *op;

	client_server(f, NULL, 0, true);
	run(f, 0);
	assert_int_equal(sleep_of(f, C, 1500)->waker.kind, RSP_WAKER_SOFTIRQ);
	op = op_on(f, SK_C);
	assert_non_null(op);
	assert_int_equal(op->peer_tid, S);
	assert_true(op->peer_sk == SK_S);
	assert_true(op->flags & RSP_NETF_LOOPBACK);
}

/* No stack, but the socket's addresses are local: the sender is the waker. */
static void test_loopback_by_address(void **state)
{
	struct fix *f = *state;
	const struct rsp_segment *sl;
	const struct rsp_net_op *op;

	synth__tcp_state(&f->s, .cpu = 0, .t = 500, .tid = C, .sk = SK_C,
			 .oldstate = RSP_TCP_SYN_SENT, .newstate = RSP_TCP_ESTABLISHED,
			 .saddr = 0x7f000001, .sport = 40000, .daddr = 0x7f000001, .dport = 8080);
	client_server(f, NULL, 0, false);
	run(f, 0);
	sl = sleep_of(f, C, 1500);
	assert_int_equal(sl->waker.kind, RSP_WAKER_THREAD);
	assert_int_equal(sl->waker.id, S);
	op = op_on(f, SK_C);
	assert_true(op->flags & RSP_NETF_TUPLE);
	assert_true(op->flags & RSP_NETF_LOCAL);
	assert_int_equal(op->local.port, 40000);
	assert_int_equal(op->remote.port, 8080);
	assert_int_equal(op->remote.addr[0], 127);
	assert_int_equal(op->remote.addr[3], 1);
}

/*
 * A connection older than the stream: no state record names it, its first
 * receive (tcp_rcv_space_adjust) does, after the first operation began;
 * the tuple holds for that operation too.
 */
static void test_tuple_of_older_socket(void **state)
{
	struct fix *f = *state;
	const struct rsp_net_op *op;

	struct synth *s = &f->s;

	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_TCP, .bytes = 64);
	synth__switch(s, .cpu = 0, .t = 1100, .prev = C, .prev_comm = "client", .state = 1,
		      .next = 0, .chain = chain_recv, .nr = 3);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 2000, .tid = S, .vec = RSP_SOFTIRQ_NET_RX);
	synth__data_ready(s, .cpu = 1, .t = 2010, .tid = S, .sk = SK_C, .proto = RSP_IPPROTO_TCP);
	synth__waking(s, .cpu = 1, .t = 2020, .tid = S, .target = C, .target_comm = "client",
		      .chain = chain_send, .nr = sizeof(chain_send) / 8);
	synth__softirq(s, .entry = false, .cpu = 1, .t = 2030, .tid = S, .vec = RSP_SOFTIRQ_NET_RX);
	synth__switch(s, .cpu = 0, .t = 2100, .prev = 0, .next = C, .next_comm = "client");
	/* The client's receive names the connection; then it sends again. */
	synth__tcp_rcv(s, .cpu = 0, .t = 2500, .tid = C, .sk = SK_C, .saddr = 0x7f000001,
		       .sport = 40000, .daddr = 0x7f000001, .dport = 8080);
	synth__sock_len(s, .recv = false, .cpu = 0, .t = 3000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_TCP, .bytes = 64);
	synth__data_ready(s, .cpu = 0, .t = 3100, .tid = C, .sk = SK_C, .proto = RSP_IPPROTO_TCP);
	run(f, 0);
	assert_int_equal(f->r.nops, 2);
	for (size_t i = 0; i < 2; i++) {
		op = &f->r.ops[i];
		assert_true(op->flags & RSP_NETF_TUPLE);
		assert_int_equal(op->local.port, 40000);
		assert_int_equal(op->remote.port, 8080);
	}
	assert_int_equal(f->r.ops[0].start, 1000);
}

/* Data from a remote peer delivered on an idle CPU: the NIC. */
static void test_remote_idle(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;
	const struct rsp_segment *sl;

	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_TCP, .bytes = 10);
	synth__switch(s, .cpu = 0, .t = 1100, .prev = C, .prev_comm = "client", .state = 1,
		      .next = 0, .chain = chain_recv, .nr = 3);
	synth__softirq(s, .entry = true, .cpu = 1, .t = 2000, .tid = 0, .vec = RSP_SOFTIRQ_NET_RX);
	synth__data_ready(s, .cpu = 1, .t = 2010, .tid = 0, .sk = SK_C, .proto = RSP_IPPROTO_TCP);
	synth__data_ready(s, .cpu = 1, .t = 2015, .tid = 0, .sk = SK_C, .proto = RSP_IPPROTO_TCP);
	synth__waking(s, .cpu = 1, .t = 2020, .tid = 0, .target = C, .target_comm = "client");
	synth__softirq(s, .entry = false, .cpu = 1, .t = 2030, .tid = 0, .vec = RSP_SOFTIRQ_NET_RX);
	/* The socket closes: the operation ends with it. */
	synth__tcp_state(s, .cpu = 0, .t = 2500, .tid = C, .sk = SK_C,
			 .oldstate = RSP_TCP_ESTABLISHED, .newstate = RSP_TCP_CLOSE,
			 .saddr = 0x0a000001, .sport = 40000, .daddr = 0x0a000002, .dport = 80);
	run(f, 0);
	sl = sleep_of(f, C, 1500);
	assert_int_equal(sl->waker.kind, RSP_WAKER_SOFTIRQ);
	assert_true(sl->waker.sk == SK_C);
	assert_int_equal(f->r.nops, 1);
	assert_int_equal(f->r.ops[0].arrivals, 2);
	assert_int_equal(f->r.ops[0].first, 2010);
	assert_int_equal(f->r.ops[0].end, 2015);
	assert_true(f->r.ops[0].flags & RSP_NETF_CLOSED);
	assert_int_equal(f->r.ops[0].peer_tid, 0);
}

/* Sends with no arrival make no operation; an open one is emitted at finish. */
static void test_ops_edges(void **state)
{
	struct fix *f = *state;
	struct synth *s = &f->s;

	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_UDP, .bytes = 10);
	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1100, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_UDP, .bytes = 20);
	synth__data_ready(s, .cpu = 0, .t = 1200, .tid = C, .sk = SK_C, .proto = RSP_IPPROTO_UDP);
	run(f, 0);
	assert_int_equal(f->r.nops, 1);
	assert_int_equal(f->r.ops[0].start, 1100); /* from the last send */
	assert_int_equal(f->r.ops[0].bytes_sent, 30);
	assert_true(f->r.ops[0].flags & RSP_NETF_OPEN);
	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_UDP, .bytes = 10);
	synth__sock_len(s, .recv = false, .cpu = 0, .t = 1100, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_UDP, .bytes = 20);
	run(f, 0);
	assert_int_equal(f->r.nops, 0);
}

/* The kprobe source: the send's kprobe fires first; arrivals in its run are its. */
static void test_kprobe_source(void **state)
{
	struct fix *f = *state;
	const struct rsp_net_op *op;

	kprobe(f, f->kp_send, 0, 1000, C, SK_C, 64, true);
	synth__switch(&f->s, .cpu = 0, .t = 1100, .prev = C, .prev_comm = "client", .state = 1,
		      .next = 0, .chain = chain_recv, .nr = 3);
	kprobe(f, f->kp_send, 1, 2000, S, SK_S, 64, true);
	synth__softirq(&f->s, .entry = true, .cpu = 1, .t = 2001, .tid = S,
		       .vec = RSP_SOFTIRQ_NET_RX);
	kprobe(f, f->kp_recv, 1, 2010, S, SK_C, 0, true);
	synth__waking(&f->s, .cpu = 1, .t = 2020, .tid = S, .target = C, .target_comm = "client");
	synth__softirq(&f->s, .entry = false, .cpu = 1, .t = 2030, .tid = S,
		       .vec = RSP_SOFTIRQ_NET_RX);
	kprobe(f, f->kp_send, 0, 3000, C, SK_C, 64, true);
	run(f, 0);
	assert_int_equal(sleep_of(f, C, 1500)->waker.id, S);
	op = op_on(f, SK_C);
	assert_non_null(op);
	assert_int_equal(op->peer_tid, S);
	assert_true(op->peer_sk == SK_S);
	assert_int_equal(op->bytes_sent, 64);
}

static void test_decode(void **state)
{
	struct fix *f = *state;
	struct rsp_net_event ev;
	struct rsp_sample smp;
	char buf[64];

	synth__sock_len(&f->s, .recv = true, .cpu = 0, .t = 10, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_TCP, .bytes = -11);
	synth__tcp_state(&f->s, .cpu = 0, .t = 20, .tid = C, .sk = SK_S, .oldstate = RSP_TCP_CLOSE,
			 .newstate = RSP_TCP_SYN_SENT, .saddr = 0xc0a80001, .sport = 1234,
			 .daddr = 0x7f000001, .dport = 80);
	kprobe(f, f->kp_send, 0, 30, C, SK_C, 99, true);
	kprobe(f, f->kp_recv, 0, 40, C, SK_C, 0, false); /* no registers */
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(
			rsp_record__parse_sample(f->s.schema, synth__entry(&f->s, i).rec, &smp), 0);
	rsp_record__parse_sample(f->s.schema, synth__entry(&f->s, 0).rec, &smp);
	assert_int_equal(rsp_net__decode(f->s.schema, &smp, &ev), 0);
	assert_int_equal(ev.kind, RSP_NET_RECV);
	assert_int_equal(ev.bytes, -11);
	assert_true(ev.sk == SK_C);
	rsp_record__parse_sample(f->s.schema, synth__entry(&f->s, 1).rec, &smp);
	assert_int_equal(rsp_net__decode(f->s.schema, &smp, &ev), 0);
	assert_int_equal(ev.kind, RSP_NET_STATE);
	assert_int_equal(ev.newstate, RSP_TCP_SYN_SENT);
	assert_string_equal(rsp_sockaddr__format(&ev.local, buf, sizeof(buf)), "192.168.0.1:1234");
	assert_string_equal(rsp_sockaddr__format(&ev.remote, buf, sizeof(buf)), "127.0.0.1:80");
	assert_true(rsp_sockaddr__is_loopback(&ev.remote));
	assert_false(rsp_sockaddr__is_loopback(&ev.local));
	rsp_record__parse_sample(f->s.schema, synth__entry(&f->s, 2).rec, &smp);
	assert_int_equal(smp.nr_intr_regs, 2);
	assert_int_equal(rsp_net__decode(f->s.schema, &smp, &ev), 0);
	assert_int_equal(ev.kind, RSP_NET_SEND);
	assert_true(ev.sk == SK_C);
	assert_int_equal(ev.bytes, 99);
	assert_int_equal(ev.proto, RSP_IPPROTO_UDP);
	assert_int_equal(ev.family, AF_INET);
	rsp_record__parse_sample(f->s.schema, synth__entry(&f->s, 3).rec, &smp);
	assert_int_equal(rsp_net__decode(f->s.schema, &smp, &ev), -EINVAL);
	synth__reset(&f->s);
	synth__switch(&f->s, .cpu = 0, .t = 1, .prev = 1, .prev_comm = "a", .state = 0, .next = 2,
		      .next_comm = "b");
	rsp_record__parse_sample(f->s.schema, synth__entry(&f->s, 0).rec, &smp);
	assert_int_equal(rsp_net__decode(f->s.schema, &smp, &ev), -ENOENT);
	synth__reset(&f->s);
}

/* A uprobe hit in the run before a sleep: the sleep's urec (records stable only). */
static void test_probe_urec(void **state)
{
	struct fix *f = *state;
	const struct rsp_segment *sl;

	for (int stable = 0; stable < 2; stable++) {
		uprobe(f, 0, 900, C);
		synth__switch(&f->s, .cpu = 0, .t = 1000, .prev = C, .prev_comm = "client",
			      .state = 1, .next = 0, .chain = chain_recv, .nr = 3);
		synth__waking(&f->s, .cpu = 1, .t = 2000, .tid = S, .target = C,
			      .target_comm = "client");
		synth__switch(&f->s, .cpu = 0, .t = 2100, .prev = 0, .next = C,
			      .next_comm = "client");
		synth__switch(&f->s, .cpu = 0, .t = 3000, .prev = C, .prev_comm = "client",
			      .state = 1, .next = 0, .chain = chain_recv, .nr = 3);
		run(f, stable ? RSP_TL_RECORDS_STABLE : 0);
		sl = sleep_of(f, C, 1500);
		assert_non_null(sl);
		if (stable) {
			assert_non_null(sl->urec);
			assert_int_equal(sl->urec->type, PERF_RECORD_SAMPLE);
			assert_true(sl->flags & RSP_SEGF_UREC_PROBE);
			assert_int_equal(f->st.probed_sleeps, 1);
		} else {
			assert_null(sl->urec);
		}
		/* The second sleep had no probe in its run. */
		sl = sleep_of(f, C, 5000);
		assert_non_null(sl);
		assert_null(sl->urec);
		synth__reset(&f->s);
	}
}

/* A timeline fed forever forgets idle sockets: their open operation is emitted. */
static void test_expire(void **state)
{
	static const struct rsp_timeline_ops ops = {.segment = on_seg, .net = on_op};
	struct fix *f = *state;
	struct rsp_timeline *tl = rsp_timeline__new(f->s.schema, &ops, &f->r);

	assert_non_null(tl);
	memset(&f->r, 0, sizeof(f->r));
	synth__tcp_state(&f->s, .cpu = 0, .t = 500, .tid = C, .sk = SK_C,
			 .oldstate = RSP_TCP_SYN_SENT, .newstate = RSP_TCP_ESTABLISHED,
			 .saddr = 0x7f000001, .sport = 40000, .daddr = 0x7f000001, .dport = 8080);
	synth__sock_len(&f->s, .recv = false, .cpu = 0, .t = 1000, .tid = C, .sk = SK_C,
			.proto = RSP_IPPROTO_TCP, .bytes = 64);
	synth__data_ready(&f->s, .cpu = 0, .t = 1200, .tid = C, .sk = SK_C,
			  .proto = RSP_IPPROTO_TCP);
	synth__sock_len(&f->s, .recv = false, .cpu = 0, .t = 9000, .tid = S, .sk = SK_S,
			.proto = RSP_IPPROTO_UDP, .bytes = 64);
	rsp_timeline__set_start(tl, 0);
	for (size_t i = 0; i < f->s.n; i++) {
		struct rsp_wentry e = synth__entry(&f->s, i);

		assert_int_equal(rsp_timeline__feed(tl, &e), 0);
	}
	assert_int_equal(rsp_socktab__count(rsp_timeline__socktab(tl)), 1);
	rsp_timeline__expire(tl, 5000);
	rsp_timeline__stats(tl, &f->st);
	assert_int_equal(f->st.sockets_expired, 1); /* SK_C; SK_S was seen at 9000 */
	assert_int_equal(f->r.nops, 1);
	assert_true(f->r.ops[0].sk == SK_C);
	assert_true(f->r.ops[0].flags & RSP_NETF_OPEN);
	assert_true(f->r.ops[0].flags & RSP_NETF_TUPLE); /* named before its address went */
	assert_int_equal(rsp_socktab__count(rsp_timeline__socktab(tl)), 0);
	rsp_timeline__finish(tl, 10000);
	assert_int_equal(f->r.nops, 1); /* nothing more: SK_S had no arrival */
	rsp_timeline__delete(tl);
	synth__reset(&f->s);
}

static void test_socktab(void **state)
{
	struct rsp_socktab *t = rsp_socktab__new();
	struct rsp_sock_info si = {.sk = SK_C, .proto = RSP_IPPROTO_TCP}, out;
	char dir[] = "/tmp/rsp-socktab-XXXXXX", path[128];
	struct rsp_socktab_load res;
	struct rsp_buf err = RSP_BUF_INIT;
	FILE *fp;

	assert_non_null(t);
	si.local.port = 1;
	assert_int_equal(rsp_socktab__add(t, &si, 100), 0);
	si.local.port = 2;
	assert_int_equal(rsp_socktab__add(t, &si, 200), 0);
	assert_int_equal(rsp_socktab__add(t, &si, 300), 0); /* the same again: no version */
	assert_int_equal(rsp_socktab__find(t, SK_C, 50, &out), -ENOENT);
	assert_int_equal(rsp_socktab__find(t, SK_C, 150, &out), 0);
	assert_int_equal(out.local.port, 1);
	assert_int_equal(rsp_socktab__find(t, SK_C, 250, &out), 0);
	assert_int_equal(out.local.port, 2);
	assert_int_equal(rsp_socktab__count(t), 1);
	/* Expiry keeps the sockets named since, with all their versions. */
	si.sk = SK_S;
	assert_int_equal(rsp_socktab__add(t, &si, 150), 0);
	si.local.port = 3;
	assert_int_equal(rsp_socktab__add(t, &si, 900), 0);
	assert_int_equal(rsp_socktab__expire(t, 500), 1);
	assert_int_equal(rsp_socktab__count(t), 1);
	assert_int_equal(rsp_socktab__find(t, SK_C, 250, &out), -ENOENT);
	assert_int_equal(rsp_socktab__find(t, SK_S, 160, &out), 0);
	assert_int_equal(out.local.port, 2);
	assert_int_equal(rsp_socktab__find(t, SK_S, 1000, &out), 0);
	assert_int_equal(out.local.port, 3);
	assert_int_equal(rsp_socktab__expire(t, 5000), 1);
	assert_int_equal(rsp_socktab__count(t), 0);
	assert_int_equal(rsp_socktab__find(t, SK_S, 1000, &out), -ENOENT);
	assert_int_equal(rsp_socktab__add(t, &si, 6000), 0); /* usable again */
	assert_int_equal(rsp_socktab__count(t), 1);
	si.sk = SK_C;

	/* /proc/net lines: real pointer, hashed pointer, v6, header, garbage. */
	assert_int_equal(
		rsp_socktab__parse_proc_line(
			"   0: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 "
			"00000000  1000        0 12345 1 ffff888103b4a000 20 4 30 10 -1",
			AF_INET, RSP_IPPROTO_TCP, &out),
		0);
	assert_true(out.sk == 0xffff888103b4a000ull);
	assert_int_equal(out.local.port, 8080);
	assert_int_equal(out.remote.port, 40000);
	assert_int_equal(out.local.addr[0], 127);
	assert_int_equal(out.inode, 12345);
	assert_int_equal(out.state, 1);
	assert_int_equal(
		rsp_socktab__parse_proc_line(
			"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 "
			"00000000     0        0 171 1 000000000a67aca6 100 0 0 10 0",
			AF_INET, RSP_IPPROTO_TCP, &out),
		-EPERM);
	assert_int_equal(
		rsp_socktab__parse_proc_line(
			"  3: 00000000000000000000000001000000:0035 "
			"00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 "
			"00000000   101        0 2222 2 ffff888100e55a40 0",
			AF_INET6, RSP_IPPROTO_UDP, &out),
		0);
	assert_int_equal(out.local.addr[15], 1);
	assert_int_equal(out.local.port, 53);
	assert_int_equal(out.state, 0);
	assert_int_equal(rsp_socktab__parse_proc_line("  sl  local_address rem_address   st "
						      "tx_queue rx_queue tr tm->when retrnsmt   "
						      "uid  timeout inode",
						      AF_INET, RSP_IPPROTO_TCP, &out),
			 -EINVAL);
	assert_int_equal(rsp_socktab__parse_proc_line("0: zz:zz", AF_INET, RSP_IPPROTO_TCP, &out),
			 -EINVAL);

	/* A fixture /proc: one readable socket, one hidden, no IPv6 files. */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/net", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/net/udp", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
		    "retrnsmt   uid  timeout inode ref pointer drops\n"
		    "  1: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000"
		    "   0 0 99 2 ffff888100e55a40 0\n"
		    "  2: 0100007F:0036 00000000:0000 07 00000000:00000000 00:00000000 00000000"
		    "   0 0 98 2 0000000012345678 0\n");
	fclose(fp);
	assert_int_equal(rsp_socktab__load_proc(t, dir, &res, &err), 0);
	assert_int_equal(res.files, 1);
	assert_int_equal(res.sockets, 1);
	assert_int_equal(res.hidden, 1);
	assert_int_equal(rsp_socktab__find(t, 0xffff888100e55a40ull, 5, &out), 0);
	assert_int_equal(out.proto, RSP_IPPROTO_UDP);
	unlink(path);
	snprintf(path, sizeof(path), "%s/net", dir);
	rmdir(path);
	assert_int_equal(rsp_socktab__load_proc(t, dir, &res, &err), -ENOENT);
	assert_non_null(err.data);
	rmdir(dir);
	rsp_buf__exit(&err);
	rsp_socktab__delete(t);
	rsp_socktab__delete(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_decode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback_by_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_by_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback_by_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback_by_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tuple_of_older_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ops_edges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kprobe_source, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_urec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expire, setup, teardown),
		cmocka_unit_test(test_socktab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
