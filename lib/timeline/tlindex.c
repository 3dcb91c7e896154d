// SPDX-License-Identifier: LGPL-2.1
/* The timeline store's lookup indexes: see internal/tlindex.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal/tlindex.h"
#include "internal/vec.h"
#include "internal/gallop.h"

#define MAX_CPUS 4096

/* A thread's range of an index. */
struct range {
	size_t first, n;
};

/* The ends of a CPU's runs. */
struct ends {
	uint64_t *v;
	size_t n, cap;
};

struct rsp_tlindex {
	/* per CPU, the ends of every run, sorted */
	struct ends *cpus;
	size_t nr_cpus, cap_cpus;
	/* block requests by issuer, each thread's by insert */
	const struct rsp_block_req **rq;
	struct rsp_kvec rq_of; /* tid -> struct range */
	/* wakeups and forks by waker, each thread's by time */
	struct rsp_wake *wk;
	size_t nr_wk;
};

/*
 * Sort @n times: LSD radix on the offset from the earliest, 11 bits a pass
 * (a window of up to 2^44 ns, ~4.9 hours, in 4 passes; fewer for shorter
 * spans). @tmp holds @n. Each pass scatters from one array into the other
 * (no copy back per pass); an odd number of passes copies back once.
 */
static void sort_times(uint64_t *v, uint64_t *tmp, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0, *src = v, *dst = tmp, *x;
	size_t cnt[2048];

	for (size_t i = 0; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (unsigned sh = 0; sh < 64 && ((hi - lo) >> sh); sh += 11) {
		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < n; i++)
			cnt[((src[i] - lo) >> sh) & 2047]++;
		for (size_t b = 0, sum = 0; b < 2048; b++) {
			size_t c = cnt[b];

			cnt[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[((src[i] - lo) >> sh) & 2047]++] = src[i];
		x = src, src = dst, dst = x;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

static int add_end(struct rsp_tlindex *ix, uint32_t c, uint64_t end)
{
	struct ends *e;

	if (c >= ix->nr_cpus) {
		if (rsp_vec__reserve((void **)&ix->cpus, &ix->cap_cpus, c + 1, sizeof(*ix->cpus)))
			return -ENOMEM;
		memset(ix->cpus + ix->nr_cpus, 0, (c + 1 - ix->nr_cpus) * sizeof(*ix->cpus));
		ix->nr_cpus = c + 1;
	}
	e = &ix->cpus[c];
	if (rsp_vec__reserve((void **)&e->v, &e->cap, e->n + 1, sizeof(*e->v)))
		return -ENOMEM;
	e->v[e->n++] = end;
	return 0;
}

/* Per CPU, the sorted ends of every run in the store. */
static int build_cpus(struct rsp_tlindex *ix, const struct rsp_tlstore *s)
{
	size_t nt = rsp_tlstore__nr_threads(s);

	for (size_t i = 0; i < nt; i++) {
		const struct rsp_tlthread *t = rsp_tlstore__thread(s, i);

		for (size_t j = 0; j < t->nr_segs; j++) {
			const struct rsp_segment *g = &t->segs[j];

			if (g->kind == RSP_SEG_RUN && g->cpu < MAX_CPUS &&
			    add_end(ix, g->cpu, g->end))
				return -ENOMEM;
		}
	}
	for (size_t c = 0; c < ix->nr_cpus; c++) {
		struct ends *e = &ix->cpus[c];
		uint64_t *tmp;

		if (e->n < 2)
			continue;
		tmp = malloc(e->n * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		sort_times(e->v, tmp, e->n);
		free(tmp);
	}
	return 0;
}

/*
 * Block requests by issuer: a counting sort by thread (the store's order,
 * by issue, kept within a thread), then each thread's range by insert (an
 * insertion sort: inserts come almost in issue order).
 */
static int build_reqs(struct rsp_tlindex *ix, const struct rsp_tlstore *s)
{
	size_t nr, next = 0;
	const struct rsp_block_req *v = rsp_tlstore__block_reqs(s, &nr);

	if (!nr)
		return 0;
	ix->rq = malloc(nr * sizeof(*ix->rq));
	if (!ix->rq)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct range *r = rsp_kvec__get(&ix->rq_of, v[i].tid, NULL);

		if (!r)
			return -ENOMEM;
		r->n++;
	}
	for (size_t i = 0; i < rsp_kvec__len(&ix->rq_of); i++) {
		struct range *r = rsp_kvec__at(&ix->rq_of, i);

		r->first = next;
		next += r->n;
		r->n = 0;
	}
	for (size_t i = 0; i < nr; i++) {
		struct range *r = rsp_kvec__find(&ix->rq_of, v[i].tid);
		size_t k = r->first + r->n++;

		ix->rq[k] = &v[i];
		while (k > r->first && ix->rq[k - 1]->insert > ix->rq[k]->insert) {
			const struct rsp_block_req *x = ix->rq[k - 1];

			ix->rq[k - 1] = ix->rq[k];
			ix->rq[k--] = x;
		}
	}
	return 0;
}

/*
 * The wakeups and forks each thread did, in time order: the store's links
 * (in time order already) sorted by waker with a stable radix sort, 11 bits
 * of the tid a pass. A thread's range is found by binary search.
 */
static int build_wakes(struct rsp_tlindex *ix, const struct rsp_tlstore *s)
{
	size_t n, cnt[2048];
	const struct rsp_link *v = rsp_tlstore__links(s, &n);
	struct rsp_wake *tmp, *src, *dst, *x;
	uint32_t most = 0;

	ix->wk = malloc((n ? n : 1) * sizeof(*ix->wk));
	tmp = malloc((n ? n : 1) * sizeof(*tmp));
	if (!ix->wk || !tmp) {
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == RSP_LINK_EXEC || v[i].from.kind != RSP_WAKER_THREAD)
			continue;
		ix->wk[ix->nr_wk++] = (struct rsp_wake){v[i].time, v[i].from.id, v[i].tid};
		most = v[i].from.id > most ? v[i].from.id : most;
	}
	src = ix->wk, dst = tmp;
	for (unsigned sh = 0; sh < 32 && (most >> sh); sh += 11) {
		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < ix->nr_wk; i++)
			cnt[(src[i].waker >> sh) & 2047]++;
		for (size_t k = 0, sum = 0; k < 2048; k++) {
			size_t c = cnt[k];

			cnt[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < ix->nr_wk; i++)
			dst[cnt[(src[i].waker >> sh) & 2047]++] = src[i];
		x = src, src = dst, dst = x; /* scattered into the other: no copy back per pass */
	}
	/* the sorted array is kept, the other freed */
	free(dst);
	ix->wk = src;
	return 0;
}

struct rsp_tlindex *rsp_tlindex__new(const struct rsp_tlstore *s)
{
	struct rsp_tlindex *ix = calloc(1, sizeof(*ix));

	if (!ix)
		return NULL;
	rsp_kvec__init(&ix->rq_of, sizeof(struct range));
	if (build_cpus(ix, s) || build_reqs(ix, s) || build_wakes(ix, s)) {
		rsp_tlindex__delete(ix);
		return NULL;
	}
	return ix;
}

void rsp_tlindex__delete(struct rsp_tlindex *ix)
{
	if (!ix)
		return;
	for (size_t c = 0; c < ix->nr_cpus; c++)
		free(ix->cpus[c].v);
	free(ix->cpus);
	free(ix->rq);
	rsp_kvec__exit(&ix->rq_of);
	free(ix->wk);
	free(ix);
}

uint64_t rsp_tlindex__last_run_end(const struct rsp_tlindex *ix, uint32_t cpu, uint64_t t)
{
	const struct ends *e = cpu < ix->nr_cpus ? &ix->cpus[cpu] : NULL;
	size_t lo = e ? rsp_gallop__above(e->v, sizeof(e->v[0]), 0, e->n, t) : 0;

	return lo ? e->v[lo - 1] : 0;
}

const struct rsp_block_req *const *rsp_tlindex__reqs_of(const struct rsp_tlindex *ix, uint32_t tid,
							size_t *n)
{
	const struct range *r = rsp_kvec__find(&ix->rq_of, tid);

	*n = r ? r->n : 0;
	return r ? ix->rq + r->first : NULL;
}

const struct rsp_wake *rsp_tlindex__wakes_by(const struct rsp_tlindex *ix, uint32_t tid, size_t *n)
{
	size_t lo = 0, hi = ix->nr_wk, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->wk[mid].waker < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = ix->nr_wk;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->wk[mid].waker <= tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*n = lo - first;
	return ix->wk + first;
}
