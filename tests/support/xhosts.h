/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TESTS_XHOSTS_H
#define RSP_TESTS_XHOSTS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Synthetic hosts' dumps for rspctl merge (the unit test test_merge_hosts
 * and bench/merge_gen.c): DIR/host-K.perf.data, each with a host name
 * (synth-K), a boot id, the clock pair and a socket table (RSP_HOST), and
 * the records of TCP exchanges between the hosts in rsp's layout and this
 * kernel's tracepoint formats (synth.h). Host K's monotonic clock runs K
 * seconds ahead of host 0's (records and clock pair alike): the offset of
 * hosts A and B is B - A seconds by construction.
 *
 * Host K's address is 10.(K / 256).(K % 256).1; connection c goes from
 * port 20000 + c to port 7000 + c, thread XHOSTS_TID_CLIENT + c asking,
 * thread XHOSTS_TID_SERVER + c answering.
 *   ring:  host K's clients ask host K + 1 (mod hosts), whose servers
 *          answer after 20-60 us of work (one level).
 *   chain: host 0's clients ask host 1, whose servers ask host 2 before
 *          answering (proxies), ... up to the last host, whose servers
 *          work 20-60 us: every exchange nests hosts - 1 levels deep.
 *   loop:  2 hosts: host 0's client asks host 1, whose server asks host 0
 *          back before answering, where the client thread itself answers
 *          (an event loop, still waiting for its own answer): a cycle.
 *   handoff (with chain): each proxy's server thread hands the request to
 *          a worker thread of its process (XHOSTS_TID_WORKER + c, CPU 0):
 *          it wakes the worker and sleeps; the worker asks the upstream
 *          and, its answer come, wakes the server thread, which answers.
 *          The proxy's wait for its upstream is then a local wait for the
 *          worker, whose own wait is on the network.
 * An exchange's records are what the kernel gives: the client's switch in,
 * sock_send_length, switch out (asleep); on each server the NET_RX
 * softirq with sk_data_ready and the waking, switch in, sock_recv_length,
 * ..., sock_send_length, switch out; the answer's arrival at the client.
 * Shapes of hostile or unusual dumps (each of any of the above):
 *   bad_clock:     host 1's clock pair is crafted: CLOCK_MONOTONIC at
 *                  0x7fffffff00000000 ns and its realtime shifted to match.
 *   early_arrival: on host 0, the answer of exchange slots / 2 is stamped
 *                  1.5 us before its request's send (records out of time
 *                  order: its operation ends before it starts).
 *   one_process:   each host's client threads are one process
 *                  (XHOSTS_TID_CLIENT): with many connections, more
 *                  answering threads than a snapshot shows.
 *   handover:      from exchange slots / 2 on, each client connection is
 *                  used by thread XHOSTS_TID_CLIENT + XHOSTS_HANDOVER + c,
 *                  another process (a connection handed over).
 *   stray_tgid:    the servers' socket records name process
 *                  XHOSTS_TID_SERVER + XHOSTS_STRAY + c, their other
 *                  records their own (an inconsistent dump): an answering
 *                  thread whose local snapshot finds no such process.
 *   bad_hostname:  host 1's host name is not valid UTF-8.
 * The server's work varies with the exchange: alike exchanges would let a
 * request pair with the answer before or after its own as consistently as
 * with its own. Failed checks abort (as synth.h's).
 */
#define XHOSTS_TID_CLIENT 1000u
#define XHOSTS_TID_SERVER 2000u
#define XHOSTS_TID_WORKER 3000u
#define XHOSTS_HANDOVER	  500u
#define XHOSTS_STRAY	  999u

struct xhosts {
	unsigned hosts;	     /* 2 .. 64 */
	unsigned conns;	     /* connections per pair of neighbours */
	unsigned long slots; /* exchanges per host, over its connections in turn */
	bool chain;
	bool loop;
	bool handoff;
	bool bad_clock;
	bool early_arrival;
	bool one_process;
	bool handover;
	bool stray_tgid;
	bool bad_hostname;
};

/**
 * xhosts__write() - write the dumps into @dir (which exists)
 * Return: 0, or -errno with one line on stderr; *@records (if not NULL):
 * the records of host 0's dump; *@bytes (if not NULL): of all the dumps.
 */
int xhosts__write(const struct xhosts *x, const char *dir, uint64_t *records, uint64_t *bytes);

#endif
