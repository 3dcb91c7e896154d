// SPDX-License-Identifier: LGPL-2.1
/* Tarjan's strongly connected components, iterative: see internal/scc.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal/scc.h"

struct graph {
	const size_t *start;
	const uint32_t *to;
	const bool *skip;
};

static void visit(struct rsp_scc *c, const struct graph *g, uint32_t root, long *counter,
		  size_t *sp)
{
	size_t csp = 0;

	c->idx[root] = c->low[root] = (*counter)++;
	c->stack[(*sp)++] = root;
	c->on[root] = true;
	c->cstack[csp++] = root;
	c->next[root] = 0;
	while (csp) {
		uint32_t v = c->cstack[csp - 1];
		size_t k = g->start[v] + c->next[v];

		if (k < g->start[v + 1]) {
			uint32_t w = g->to[k];

			c->next[v]++;
			if (g->skip && g->skip[w])
				continue;
			if (c->idx[w] < 0) {
				c->idx[w] = c->low[w] = (*counter)++;
				c->stack[(*sp)++] = w;
				c->on[w] = true;
				c->next[w] = 0;
				c->cstack[csp++] = w;
			} else if (c->on[w] && c->idx[w] < c->low[v]) {
				c->low[v] = c->idx[w];
			}
			continue;
		}
		csp--;
		if (csp && c->low[v] < c->low[c->cstack[csp - 1]])
			c->low[c->cstack[csp - 1]] = c->low[v];
		if (c->low[v] == c->idx[v]) {
			uint32_t w;

			do {
				w = c->stack[--(*sp)];
				c->on[w] = false;
				c->comp[w] = c->ncomp;
			} while (w != v);
			c->ncomp++;
		}
	}
}

int rsp_scc__run(struct rsp_scc *c, size_t n, const size_t *start, const uint32_t *to,
		 const bool *skip)
{
	const struct graph g = {start, to, skip};
	size_t m = n ? n : 1, sp = 0;
	long counter = 0;

	memset(c, 0, sizeof(*c));
	c->comp = malloc(m * sizeof(long));
	c->low = malloc(m * sizeof(long));
	c->idx = malloc(m * sizeof(long));
	c->stack = malloc(m * sizeof(uint32_t));
	c->cstack = malloc(m * sizeof(uint32_t));
	c->next = calloc(m, sizeof(size_t));
	c->on = calloc(m, sizeof(bool));
	if (!c->comp || !c->low || !c->idx || !c->stack || !c->cstack || !c->next || !c->on)
		return -ENOMEM;
	for (size_t v = 0; v < n; v++)
		c->idx[v] = c->comp[v] = -1;
	for (size_t v = 0; v < n; v++)
		if (!(skip && skip[v]) && c->idx[v] < 0)
			visit(c, &g, (uint32_t)v, &counter, &sp);
	return 0;
}

void rsp_scc__exit(struct rsp_scc *c)
{
	free(c->comp);
	free(c->low);
	free(c->idx);
	free(c->stack);
	free(c->cstack);
	free(c->next);
	free(c->on);
	memset(c, 0, sizeof(*c));
}
