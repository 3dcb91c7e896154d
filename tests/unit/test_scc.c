// SPDX-License-Identifier: GPL-2.0
/*
 * rsp_scc: Tarjan's strongly connected components on graphs whose
 * components are known by construction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "internal/scc.h"

/* Compressed rows from an edge list of @m edges over @n vertices. */
struct csr {
	size_t start[16];
	uint32_t to[32];
};

static void csr_of(struct csr *g, size_t n, const uint32_t (*e)[2], size_t m)
{
	size_t fill[16] = {0};

	assert_true(n < 16 && m <= 32);
	for (size_t v = 0; v <= n; v++)
		g->start[v] = 0;
	for (size_t i = 0; i < m; i++)
		g->start[e[i][0] + 1]++;
	for (size_t v = 0; v < n; v++)
		g->start[v + 1] += g->start[v];
	for (size_t i = 0; i < m; i++)
		g->to[g->start[e[i][0]] + fill[e[i][0]]++] = e[i][1];
}

/*
 * 0 -> 1 -> 2 -> 0 (a cycle), 3 -> 0 (waits on it), 4 -> 4 (a self loop),
 * 5 alone. Components close sinks first: the cycle before 3.
 */
static void test_components(void **state)
{
	static const uint32_t e[][2] = {{0, 1}, {1, 2}, {2, 0}, {3, 0}, {4, 4}};
	struct csr g;
	struct rsp_scc c;

	(void)state;
	csr_of(&g, 6, e, 5);
	assert_int_equal(rsp_scc__run(&c, 6, g.start, g.to, NULL), 0);
	assert_int_equal(c.ncomp, 4);
	assert_int_equal(c.comp[0], c.comp[1]);
	assert_int_equal(c.comp[1], c.comp[2]);
	assert_true(c.comp[3] != c.comp[0]);
	assert_true(c.comp[0] < c.comp[3]);
	assert_true(c.comp[4] != c.comp[5] && c.comp[4] >= 0 && c.comp[5] >= 0);
	rsp_scc__exit(&c);
}

/* A skipped vertex breaks the cycle through it and has no component. */
static void test_skip(void **state)
{
	static const uint32_t e[][2] = {{0, 1}, {1, 2}, {2, 0}};
	const bool skip[3] = {false, true, false};
	struct csr g;
	struct rsp_scc c;

	(void)state;
	csr_of(&g, 3, e, 3);
	assert_int_equal(rsp_scc__run(&c, 3, g.start, g.to, skip), 0);
	assert_int_equal(c.comp[1], -1);
	assert_int_equal(c.ncomp, 2);
	assert_true(c.comp[0] != c.comp[2]);
	rsp_scc__exit(&c);
}

/* A chain of 1M vertices closed into one cycle: no recursion, one component. */
static void test_deep(void **state)
{
	const size_t n = 1000000;
	size_t *start = malloc((n + 1) * sizeof(*start));
	uint32_t *to = malloc(n * sizeof(*to));
	struct rsp_scc c;

	(void)state;
	assert_non_null(start);
	assert_non_null(to);
	for (size_t v = 0; v < n; v++) {
		start[v] = v;
		to[v] = (uint32_t)((v + 1) % n);
	}
	start[n] = n;
	assert_int_equal(rsp_scc__run(&c, n, start, to, NULL), 0);
	assert_int_equal(c.ncomp, 1);
	assert_int_equal(c.comp[n - 1], 0);
	rsp_scc__exit(&c);
	/* open the chain: every vertex its own component, the last one first */
	to[n - 1] = (uint32_t)(n - 1);
	start[n] = n - 1;
	assert_int_equal(rsp_scc__run(&c, n, start, to, NULL), 0);
	assert_int_equal(c.ncomp, (long)n);
	assert_int_equal(c.comp[n - 1], 0);
	assert_int_equal(c.comp[0], (long)n - 1);
	rsp_scc__exit(&c);
	free(start);
	free(to);
}

static void test_empty(void **state)
{
	size_t start[1] = {0};
	struct rsp_scc c;

	(void)state;
	assert_int_equal(rsp_scc__run(&c, 0, start, NULL, NULL), 0);
	assert_int_equal(c.ncomp, 0);
	rsp_scc__exit(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_components),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
