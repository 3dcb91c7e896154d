/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SCC_H
#define RSP_INTERNAL_SCC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Strongly connected components (Tarjan), iterative: a graph of any depth
 * costs no stack. The graph is given in compressed rows: vertex v's
 * successors are to[start[v]] .. to[start[v + 1] - 1].
 */
struct rsp_scc {
	long *comp; /* per vertex: its component, -1 if skipped */
	long ncomp; /* components, numbered in the order they close (sinks first) */
	/* private */
	long *low, *idx;
	uint32_t *stack, *cstack;
	size_t *next;
	bool *on;
};

/**
 * rsp_scc__run() - the components of @n vertices; @skip (NULL: none) marks
 * vertices to leave out (comp -1; edges into them are ignored).
 * Return: 0 or -ENOMEM. Release with rsp_scc__exit() in either case.
 */
int rsp_scc__run(struct rsp_scc *c, size_t n, const size_t *start, const uint32_t *to,
		 const bool *skip);
void rsp_scc__exit(struct rsp_scc *c);

#endif /* RSP_INTERNAL_SCC_H */
