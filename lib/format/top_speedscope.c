// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl top --speedscope FILE`: the profile's samples as speedscope's
 * file format (internal/speedscope.h), one "sampled" profile per thread:
 * its whole stacks, root first, each weighing its samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal/speedscope.h"

#define TOP_SSCOPE_STACKS 100000 /* stacks written; the rest summed in one frame */

static int cmp_thread(const void *a, const void *b)
{
	const struct rsp_flatprof_stack *x = *(const struct rsp_flatprof_stack *const *)a;
	const struct rsp_flatprof_stack *y = *(const struct rsp_flatprof_stack *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

static void thread_name(const struct rsp_flatprof *p, const struct rsp_flatprof_stack *r, char *buf,
			size_t size)
{
	const struct rsp_flatprof_proc *pr = rsp_flatprof__proc(p, r->pid);

	if (!pr || pr->hidden)
		snprintf(buf, size, "pid %u (other user) tid %u", r->pid, r->tid);
	else if (r->tid == r->pid)
		snprintf(buf, size, "%s (pid %u)", pr->comm ? pr->comm : "?", r->pid);
	else
		snprintf(buf, size, "%s %u (pid %u)", pr->comm ? pr->comm : "?", r->tid, r->pid);
}

/* One stack: its frames root first (the profile's are innermost first). */
static void one_stack(struct rsp_sscope *w, const struct rsp_flatprof_stack *r)
{
	int fr[RSP_FLATPROF_FRAMES + 1];
	char name[512];
	size_t k = 0;

	for (uint32_t i = r->nr; i-- > 0;)
		fr[k++] = rsp_sscope__frame(
			w, rsp_sym__format(&r->frames[i].sym, false, name, sizeof(name)));
	if (!k)
		fr[k++] = rsp_sscope__frame(w, "[unknown]");
	rsp_sscope__sample(w, fr, k, r->samples);
}

int rsp_top__speedscope(const struct rsp_flatprof *p, const char *title, struct rsp_buf *out)
{
	size_t n, written = 0;
	const struct rsp_flatprof_stack *v = rsp_flatprof__stacks(p, &n);
	const struct rsp_flatprof_stack **by = malloc((n ? n : 1) * sizeof(*by));
	struct rsp_sscope w;
	char name[200];

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		by[i] = &v[i];
	qsort(by, n, sizeof(*by), cmp_thread);
	rsp_sscope__init(&w);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t total = 0, rest = 0;

		for (j = i; j < n && by[j]->pid == by[i]->pid && by[j]->tid == by[i]->tid; j++)
			total += by[j]->samples;
		thread_name(p, by[i], name, sizeof(name));
		rsp_sscope__sampled(&w, name, "none", 0, total);
		for (size_t k = i; k < j; k++) {
			if (written++ < TOP_SSCOPE_STACKS)
				one_stack(&w, by[k]);
			else
				rest += by[k]->samples;
		}
		if (rest) {
			int f = rsp_sscope__frame(&w,
						  "[more stacks: not written, the file's limit]");

			rsp_sscope__sample(&w, &f, 1, rest);
		}
	}
	free(by);
	return rsp_sscope__finish(&w, title, out);
}
