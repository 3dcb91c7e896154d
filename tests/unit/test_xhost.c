// SPDX-License-Identifier: GPL-2.0
/*
 * Across hosts: socket ends matched by 4-tuple (IPv4, IPv6, v4-mapped,
 * loopback, a port reused after a close) and the NTP-style clock offset on
 * synthetic pairs whose skew and jitter are known by construction.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <rsp/xhost.h>

#define S 1000000000ll

static struct rsp_sockaddr v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
	struct rsp_sockaddr s = {.family = AF_INET, .port = port};

	s.addr[0] = a, s.addr[1] = b, s.addr[2] = c, s.addr[3] = d;
	return s;
}

static struct rsp_sockaddr v6(uint8_t last, uint16_t port)
{
	struct rsp_sockaddr s = {.family = AF_INET6, .port = port};

	s.addr[0] = 0xfd, s.addr[1] = 0x77, s.addr[15] = last;
	return s;
}

static struct rsp_sockaddr mapped(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
	struct rsp_sockaddr s = {.family = AF_INET6, .port = port};

	s.addr[10] = s.addr[11] = 0xff;
	s.addr[12] = a, s.addr[13] = b, s.addr[14] = c, s.addr[15] = d;
	return s;
}

static int64_t add(struct rsp_xmatch *m, uint32_t host, struct rsp_sockaddr l,
		   struct rsp_sockaddr r, int64_t first, int64_t last)
{
	struct rsp_xend e = {.host = host,
			     .sk = 0xffff888100000000ull + (uint64_t)first,
			     .local = l,
			     .remote = r,
			     .first = first,
			     .last = last};
	int64_t i = rsp_xmatch__add(m, &e);

	assert_true(i >= 0);
	return i;
}

static void test_match_v4_v6_mapped(void **state)
{
	struct rsp_xmatch *m = rsp_xmatch__new();
	struct rsp_sockaddr a = v4(10, 77, 0, 1, 40000), b = v4(10, 77, 0, 2, 8080);
	enum rsp_xend_state st;
	int64_t c4, s4, c6, s6, cm, sm, lo, lone, other;

	(void)state;
	assert_non_null(m);
	c4 = add(m, 0, a, b, 0, 10 * S);
	other = add(m, 2, v4(10, 77, 0, 3, 1), b, 0, 10 * S); /* another host, same server */
	s4 = add(m, 1, b, a, 0, 10 * S);
	c6 = add(m, 0, v6(1, 40001), v6(2, 8080), 0, 10 * S);
	s6 = add(m, 1, v6(2, 8080), v6(1, 40001), 0, 10 * S);
	/* The client sees IPv4, the dual-stack server the v4-mapped address. */
	cm = add(m, 0, v4(10, 77, 0, 1, 40002), v4(10, 77, 0, 2, 8081), 0, 10 * S);
	sm = add(m, 1, mapped(10, 77, 0, 2, 8081), mapped(10, 77, 0, 1, 40002), 0, 10 * S);
	lo = add(m, 0, v4(127, 0, 0, 1, 5000), v4(127, 0, 0, 1, 5001), 0, 10 * S);
	add(m, 1, v4(127, 0, 0, 1, 5001), v4(127, 0, 0, 1, 5000), 0, 10 * S);
	lone = add(m, 0, v4(10, 77, 0, 1, 40003), v4(192, 0, 2, 1, 443), 0, 10 * S);

	assert_int_equal(rsp_xmatch__run(m), 3);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)c4, &st), s4);
	assert_int_equal(st, RSP_XEND_MATCHED);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)s4, NULL), c4);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)c6, NULL), s6);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)cm, NULL), sm);
	assert_int_equal(rsp_xmatch__end(m, (size_t)sm)->local.family, AF_INET);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)lo, &st), -1);
	assert_int_equal(st, RSP_XEND_LOOPBACK);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)lone, &st), -1);
	assert_int_equal(st, RSP_XEND_NO_PEER);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)other, &st), -1);
	assert_int_equal(st, RSP_XEND_NO_PEER);
	assert_string_equal(rsp_xend__state_name(st), "no-peer");
	rsp_xmatch__delete(m);
}

/* A client port reused after a close: each connection meets its own peer. */
static void test_match_reused_port(void **state)
{
	struct rsp_xmatch *m = rsp_xmatch__new();
	struct rsp_sockaddr a = v4(10, 77, 0, 1, 40000), b = v4(10, 77, 0, 2, 8080);
	int64_t c1, c2, s1, s2, same_host;

	(void)state;
	/* Added in an order that a first-come match would get wrong. */
	s2 = add(m, 1, b, a, 21 * S, 30 * S);
	c1 = add(m, 0, a, b, 0, 10 * S);
	s1 = add(m, 1, b, a, 1 * S, 11 * S); /* B's clock 1 s ahead */
	c2 = add(m, 0, a, b, 20 * S, 29 * S);
	same_host = add(m, 0, b, a, 0, 10 * S); /* a tuple twice on one host: not a peer */
	assert_int_equal(rsp_xmatch__run(m), 2);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)c1, NULL), s1);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)c2, NULL), s2);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)same_host, NULL), -1);
	/* Run twice: the same answer. */
	assert_int_equal(rsp_xmatch__run(m), 2);
	assert_int_equal(rsp_xmatch__peer(m, (size_t)c1, NULL), s1);
	rsp_xmatch__delete(m);
}

/* A small deterministic generator: the test's jitter is the same every run. */
static uint64_t rng = 88172645463325252ull;

static int64_t jitter(int64_t max)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int64_t)(rng % (uint64_t)max);
}

static void pairs(struct rsp_clockoff *c, int n, int64_t theta, int64_t max_delay)
{
	for (int i = 0; i < n; i++) {
		int64_t t1 = (int64_t)i * 10000000 + 5 * S;
		int64_t t2 = t1 + 20000 + jitter(max_delay) + theta; /* in B's clock */
		int64_t t3 = t2 + 3000000 + jitter(max_delay);	     /* the server's fsync */
		int64_t t4 = t3 - theta + 20000 + jitter(max_delay);

		assert_int_equal(rsp_clockoff__add(c, t1, t2, t3, t4), 0);
	}
}

static void test_offset_known_skew(void **state)
{
	const int64_t thetas[] = {2500000000ll, -2500000000ll, 0, 123456789};
	struct rsp_clockoff c;
	int64_t est, unc;

	(void)state;
	for (size_t k = 0; k < sizeof(thetas) / sizeof(thetas[0]); k++) {
		rsp_clockoff__init(&c);
		pairs(&c, 100, thetas[k], 200000);
		assert_int_equal(rsp_clockoff__result(&c, &est, &unc), 0);
		assert_true(est - unc <= thetas[k] && thetas[k] <= est + unc);
		assert_true(unc < 1000000); /* minimal one-way delays 20 us + jitter */
		assert_int_equal(c.nr_pairs, 100);
		assert_int_equal(c.nr_agree, 100);
		rsp_clockoff__exit(&c);
	}
}

/*
 * Pairs of misaligned exchanges (the answer to the next request taken for
 * this one's) exclude the true offset: they are rejected, the estimate
 * still holds it.
 */
static void test_offset_outliers(void **state)
{
	const int64_t theta = 2500000000ll;
	struct rsp_clockoff c;
	int64_t est, unc;

	(void)state;
	rsp_clockoff__init(&c);
	pairs(&c, 60, theta, 100000);
	for (int i = 0; i < 40; i++) {
		int64_t t1 = (int64_t)i * 10000000 + 5 * S;
		int64_t t2 = t1 + 10000000 + 20000 + theta; /* the next exchange's arrival */
		int64_t t3 = t2 + 3000000;
		int64_t t4 = t1 + 3100000; /* this exchange's answer */

		assert_int_equal(rsp_clockoff__add(&c, t1, t2, t3, t4), 0);
	}
	assert_int_equal(rsp_clockoff__result(&c, &est, &unc), 0);
	assert_int_equal(c.nr_agree, 60);
	assert_true(est - unc <= theta && theta <= est + unc);
	assert_true(unc < 1000000);
	rsp_clockoff__exit(&c);
}

static void test_offset_refused(void **state)
{
	struct rsp_clockoff c;
	int64_t est = 7, unc = 7;

	(void)state;
	rsp_clockoff__init(&c);
	assert_int_equal(rsp_clockoff__result(&c, &est, &unc), -ENODATA);
	pairs(&c, 2, S, 1000);
	assert_int_equal(rsp_clockoff__result(&c, &est, &unc), -ENODATA);
	assert_int_equal(est, 7);
	pairs(&c, 1, S, 1000);
	assert_int_equal(rsp_clockoff__result(&c, &est, &unc), 0);
	rsp_clockoff__exit(&c);
	/* Pairs that agree two by two at most (disjoint bounds): inconsistent. */
	rsp_clockoff__init(&c);
	for (int i = 0; i < 6; i++)
		assert_int_equal(rsp_clockoff__add(&c, 0, (i / 2) * S + 10, (i / 2) * S, 0), 0);
	assert_int_equal(rsp_clockoff__result(&c, &est, &unc), -ERANGE);
	assert_int_equal(c.nr_agree, 2);
	rsp_clockoff__exit(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_v4_v6_mapped), cmocka_unit_test(test_match_reused_port),
		cmocka_unit_test(test_offset_known_skew),  cmocka_unit_test(test_offset_outliers),
		cmocka_unit_test(test_offset_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
