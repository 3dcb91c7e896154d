// SPDX-License-Identifier: GPL-2.0
/*
 * rsp_netsum: network operations summed per socket. Known answer by
 * construction: operations given to a store, in an order that interleaves
 * sockets; a socket's new incarnation (same kernel address, new addresses)
 * is its own row; peers beyond the fourth are counted as others.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <rsp/netsum.h>
#include <rsp/tlstore.h>

#define SK_A 0xffff888100000100ull
#define SK_B 0xffff888100000200ull

static struct rsp_net_op op(uint64_t sk, uint32_t tgid, uint64_t start, uint64_t end, uint32_t peer,
			    uint16_t port)
{
	struct rsp_net_op o = {.sk = sk,
			       .tid = tgid,
			       .tgid = tgid,
			       .start = start,
			       .first = end,
			       .end = end,
			       .arrivals = 1,
			       .wakeups = 1,
			       .bytes_sent = 10};

	if (peer) {
		o.flags |= RSP_NETF_LOOPBACK;
		o.peer_tid = o.peer_tgid = peer;
	}
	o.local.port = port;
	return o;
}

static struct rsp_tlstore *store_of(const struct rsp_net_op *ops, size_t n)
{
	struct rsp_tlstore *st = rsp_tlstore__new(0);
	struct rsp_timeline_ops to;

	assert_non_null(st);
	rsp_tlstore__ops(&to);
	for (size_t i = 0; i < n; i++)
		to.net(st, &ops[i]);
	assert_int_equal(rsp_tlstore__seal(st, 0, 1000000), 0);
	return st;
}

static void test_rows(void **state)
{
	const struct rsp_net_op ops[] = {
		op(SK_A, 10, 100, 200, 20, 5000), /* A: 100 ns, answered by 20 */
		op(SK_B, 11, 150, 1150, 0, 6000), /* B: 1000 ns, the NIC */
		op(SK_A, 10, 300, 500, 20, 5000), /* A: 200 ns */
		op(SK_A, 10, 600, 650, 21, 5001), /* A again, new addresses: its own row */
		op(SK_B, 11, 2000, 2500, 0, 6000),
	};
	struct rsp_tlstore *st = store_of(ops, 5);
	struct rsp_netsum ns;

	(void)state;
	assert_int_equal(rsp_netsum__collect(&ns, st, -1), 0);
	assert_int_equal(ns.nr, 3);
	assert_int_equal(ns.ops, 5);
	/* longest total first */
	assert_true(ns.rows[0].op->sk == SK_B);
	assert_int_equal(ns.rows[0].ops, 2);
	assert_int_equal(ns.rows[0].total_ns, 1500);
	assert_int_equal(ns.rows[0].max_ns, 1000);
	assert_int_equal(ns.rows[0].nr_peers, 1);
	assert_int_equal(ns.rows[0].peers[0].tid, 0);
	assert_true(ns.rows[1].op->sk == SK_A && ns.rows[1].op->local.port == 5000);
	assert_int_equal(ns.rows[1].ops, 2);
	assert_int_equal(ns.rows[1].total_ns, 300);
	assert_int_equal(ns.rows[1].bytes_sent, 20);
	assert_int_equal(ns.rows[1].peers[0].tid, 20);
	assert_int_equal(ns.rows[1].peers[0].ops, 2);
	assert_int_equal(ns.rows[2].op->local.port, 5001);
	assert_int_equal(ns.rows[2].tgid, 10);
	rsp_netsum__exit(&ns);

	/* one process's */
	assert_int_equal(rsp_netsum__collect(&ns, st, 11), 0);
	assert_int_equal(ns.nr, 1);
	assert_int_equal(ns.ops, 2);
	rsp_netsum__exit(&ns);
	assert_int_equal(rsp_netsum__collect(&ns, st, 99), 0);
	assert_int_equal(ns.nr, 0);
	rsp_netsum__exit(&ns);
	rsp_tlstore__delete(st);
}

/* Up to four peers by name; the rest are counted. */
static void test_peers(void **state)
{
	struct rsp_net_op ops[6];
	struct rsp_tlstore *st;
	struct rsp_netsum ns;

	(void)state;
	for (uint32_t i = 0; i < 6; i++)
		ops[i] = op(SK_A, 10, 100 * i, 100 * i + 50, 20 + i, 5000);
	st = store_of(ops, 6);
	assert_int_equal(rsp_netsum__collect(&ns, st, -1), 0);
	assert_int_equal(ns.nr, 1);
	assert_int_equal(ns.rows[0].nr_peers, RSP_NETSUM_MAX_PEERS);
	assert_int_equal(ns.rows[0].other_peers, 2);
	rsp_netsum__exit(&ns);
	rsp_tlstore__delete(st);
}

/*
 * A socket's kernel address reused at once: the server's side of a closed
 * connection (its last operation ends at the FIN) and the client's next
 * connection. The client's sleep woken by an arrival on that address
 * belongs to the client's operation, the one that started last (seen with
 * redis-benchmark: its first connection asks for the configuration).
 */
static void test_op_of_reused_socket(void **state)
{
	const struct rsp_net_op ops[] = {
		op(SK_A, 20, 100000, 990000, 10, 6379),	   /* server, old connection */
		op(SK_A, 10, 1000000, 1200000, 20, 40000), /* client, new connection */
	};
	struct rsp_tlstore *st = store_of(ops, 2);
	struct rsp_segment sleep = {.tid = 10,
				    .kind = RSP_SEG_SLEEP,
				    .start = 1000500,
				    .end = 1200100,
				    .waker = {.kind = RSP_WAKER_THREAD,
					      .id = 20,
					      .flags = RSP_WAKERF_NET | RSP_WAKERF_LOOPBACK,
					      .sk = SK_A,
					      .time = 1200000}};
	const struct rsp_net_op *o;

	(void)state;
	o = rsp_tlstore__net_op_of(st, &sleep);
	assert_non_null(o);
	assert_int_equal(o->tid, 10);
	assert_int_equal(o->local.port, 40000);
	rsp_tlstore__delete(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_op_of_reused_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
