// SPDX-License-Identifier: LGPL-2.1
/*
 * Comparing profiles (OSprof section 3.2): Earth Mover's Distance,
 * chi-square, changes in count and total latency, and the three-phase
 * selection of the pairs of two sets that differ enough to look at.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include "internal/hist.h"

double rsp_hist__emd(const uint64_t *a, const uint64_t *b, unsigned nb)
{
	double ta = 0, tb = 0, ca = 0, cb = 0, emd = 0;

	for (unsigned i = 0; i < nb; i++) {
		ta += (double)a[i];
		tb += (double)b[i];
	}
	if (ta <= 0 || tb <= 0)
		return -1;
	/*
	 * In one dimension the least work is the area between the two
	 * cumulative distributions: what crosses each bucket boundary.
	 */
	for (unsigned i = 0; i + 1 < nb; i++) {
		ca += (double)a[i] / ta;
		cb += (double)b[i] / tb;
		emd += fabs(ca - cb);
	}
	return emd;
}

double rsp_hist__chi2(const uint64_t *a, const uint64_t *b, unsigned nb, int *df)
{
	double R = 0, S = 0, chi = 0, ka, kb;
	int used = 0;

	for (unsigned i = 0; i < nb; i++) {
		R += (double)a[i];
		S += (double)b[i];
	}
	*df = 0;
	if (R <= 0 || S <= 0)
		return -1;
	ka = sqrt(S / R);
	kb = sqrt(R / S);
	for (unsigned i = 0; i < nb; i++) {
		double d;

		if (!a[i] && !b[i])
			continue;
		d = ka * (double)a[i] - kb * (double)b[i];
		chi += d * d / ((double)a[i] + (double)b[i]);
		used++;
	}
	*df = used - 1;
	return chi;
}

void rsp_hist_cmp_config__init(struct rsp_hist_cmp_config *c)
{
	c->similar_total = 0.10;
	c->min_count = 10;
	c->min_latency_share = 0.01;
	rsp_hist_peak_config__init(&c->peaks);
}

void rsp_hist_diff__delete(struct rsp_hist_diff *d)
{
	if (!d)
		return;
	free(d->v);
	free(d);
}

static const uint64_t zero_buckets[RSP_HIST_MAX_BUCKETS];

static const uint64_t *pb(const struct rsp_hist_profile *p)
{
	return p ? p->buckets : zero_buckets;
}

/* Phase 2: peaks on each side, and whether their modes moved. */
static void pair_peaks(struct rsp_hist_pair *p, unsigned r, const struct rsp_hist_cmp_config *c)
{
	struct rsp_hist_peak a[16], b[16];

	p->peaks_base = rsp_hist__peaks(pb(p->base), r, &c->peaks, a, 16);
	p->peaks_cur = rsp_hist__peaks(pb(p->cur), r, &c->peaks, b, 16);
	p->peaks_moved = false;
	if (p->peaks_base != p->peaks_cur)
		return;
	for (int i = 0; i < p->peaks_base && i < 16; i++)
		if (a[i].mode != b[i].mode)
			p->peaks_moved = true;
}

static void pair_measure(struct rsp_hist_pair *p, unsigned r, const struct rsp_hist_cmp_config *c)
{
	unsigned nb = rsp_hist__nr_buckets(r);

	p->count_base = p->base ? p->base->count : 0;
	p->count_cur = p->cur ? p->cur->count : 0;
	p->total_base = p->base ? p->base->sum : 0;
	p->total_cur = p->cur ? p->cur->sum : 0;
	p->emd = rsp_hist__emd(pb(p->base), pb(p->cur), nb);
	p->chi2 = rsp_hist__chi2(pb(p->base), pb(p->cur), nb, &p->df);
	pair_peaks(p, r, c);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Phase 1: similar totals, or too small to matter next to its subject's others. */
static void pair_verdict(struct rsp_hist_pair *p, double sum_max,
			 const struct rsp_hist_cmp_config *c)
{
	uint64_t tmax = max_u64(p->total_base, p->total_cur);

	p->lopsided = p->emd < 0 || p->count_base < c->min_count || p->count_cur < c->min_count;
	if (max_u64(p->count_base, p->count_cur) < c->min_count ||
	    (double)tmax < c->min_latency_share * sum_max)
		p->verdict = RSP_HV_TINY;
	else if ((double)delta(p->total_base, p->total_cur) <= c->similar_total * (double)tmax)
		p->verdict = RSP_HV_SIMILAR;
	else
		p->verdict = RSP_HV_SELECTED;
}

static int pair_rank(const void *x, const void *y)
{
	const struct rsp_hist_pair *a = x, *b = y;
	uint64_t da = delta(a->total_base, a->total_cur), db = delta(b->total_base, b->total_cur);
	bool oa = a->lopsided, ob = b->lopsided;

	if (a->verdict != b->verdict)
		return (int)a->verdict - (int)b->verdict;
	if (a->verdict == RSP_HV_SELECTED) {
		/* Phase 3: appeared, vanished or too thin to compare first, then by EMD. */
		if (oa != ob)
			return oa ? -1 : 1;
		if (!oa && a->emd != b->emd)
			return a->emd > b->emd ? -1 : 1;
	}
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->cur ? a->cur->op_name : a->base->op_name,
		      b->cur ? b->cur->op_name : b->base->op_name);
}

static int pairs_build(const struct rsp_hist_set *base, const struct rsp_hist_set *cur,
		       struct rsp_hist_diff *d)
{
	d->v = calloc(base->n + cur->n + 1, sizeof(*d->v));
	if (!d->v)
		return -ENOMEM;
	for (size_t i = 0; i < cur->n; i++) {
		struct rsp_hist_pair *p = &d->v[d->n++];

		p->cur = &cur->v[i];
		p->base = rsp_hist_set__find(base, &cur->v[i].subject, cur->v[i].op_name);
	}
	for (size_t i = 0; i < base->n; i++) {
		if (rsp_hist_set__find(cur, &base->v[i].subject, base->v[i].op_name))
			continue;
		d->v[d->n].base = &base->v[i];
		d->n++;
	}
	return 0;
}

static const struct rsp_hist_subject *pair_subject(const struct rsp_hist_pair *p)
{
	return p->cur ? &p->cur->subject : &p->base->subject;
}

static int cmp_subject(const struct rsp_hist_subject *a, const struct rsp_hist_subject *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	switch (a->kind) {
	case RSP_HSUBJ_PROCESS:
		return a->pid < b->pid ? -1 : a->pid > b->pid;
	case RSP_HSUBJ_THREAD:
		return a->tid < b->tid ? -1 : a->tid > b->tid;
	case RSP_HSUBJ_COMM:
		return strncmp(a->comm, b->comm, RSP_HIST_COMM_LEN);
	case RSP_HSUBJ_CGROUP:
		return strcmp(a->cgroup ? a->cgroup : "", b->cgroup ? b->cgroup : "");
	default:
		return 0;
	}
}

static int cmp_pair_subject(const void *x, const void *y, void *ctx)
{
	const struct rsp_hist_pair *v = ctx;

	return cmp_subject(pair_subject(&v[*(const size_t *)x]),
			   pair_subject(&v[*(const size_t *)y]));
}

/*
 * Phase 1's "too small": a pair's larger total against the sum of its
 * subject's pairs (every op of that process, thread, command or of the
 * system), not of every subject compared: with --processes, a process
 * whose lock waits appeared is judged against its own time, not against
 * the idle sleeps of every other process on the machine.
 */
static int verdicts(struct rsp_hist_diff *d, const struct rsp_hist_cmp_config *cfg)
{
	size_t *ix = malloc((d->n ? d->n : 1) * sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++)
		ix[i] = i;
	qsort_r(ix, d->n, sizeof(*ix), cmp_pair_subject, d->v);
	for (size_t i = 0, j; i < d->n; i = j) {
		double sum_max = 0;

		for (j = i; j < d->n &&
			    !cmp_subject(pair_subject(&d->v[ix[i]]), pair_subject(&d->v[ix[j]]));
		     j++)
			sum_max += (double)max_u64(d->v[ix[j]].total_base, d->v[ix[j]].total_cur);
		for (size_t k = i; k < j; k++)
			pair_verdict(&d->v[ix[k]], sum_max, cfg);
	}
	free(ix);
	return 0;
}

/*
 * Whether the pair's subject can be folded into "other": a process or a
 * thread (evicted; a slice at its cap), processes merged by name, a real
 * cgroup (past --top-cgroups). Not the system, nor an "other" itself,
 * which only ever gains what is folded.
 */
static bool may_fold(const struct rsp_hist_pair *p)
{
	const struct rsp_hist_subject *s = &(p->base ? p->base : p->cur)->subject;

	switch (s->kind) {
	case RSP_HSUBJ_PROCESS:
	case RSP_HSUBJ_THREAD:
	case RSP_HSUBJ_COMM:
		return true;
	case RSP_HSUBJ_CGROUP:
		return s->cgroup && s->cgroup[0] == '/';
	default:
		return false;
	}
}

int rsp_hist__compare(const struct rsp_hist_set *base, const struct rsp_hist_set *cur,
		      const struct rsp_hist_cmp_config *cfg, struct rsp_hist_diff **out)
{
	struct rsp_hist_cmp_config def;
	struct rsp_hist_diff *d;

	*out = NULL;
	if (base->resolution != cur->resolution)
		return -EINVAL;
	if (!cfg) {
		rsp_hist_cmp_config__init(&def);
		cfg = &def;
	}
	d = calloc(1, sizeof(*d));
	if (!d || pairs_build(base, cur, d)) {
		rsp_hist_diff__delete(d);
		return -ENOMEM;
	}
	d->resolution = cur->resolution;
	d->min_count = cfg->min_count;
	d->folded_base = rsp_hist_set__folded(base);
	d->folded_cur = rsp_hist_set__folded(cur);
	for (size_t i = 0; i < d->n; i++) {
		struct rsp_hist_pair *p = &d->v[i];

		pair_measure(p, d->resolution, cfg);
		p->unsure = may_fold(p) && ((!p->count_cur && rsp_hist_set__folded(cur)) ||
					    (!p->count_base && rsp_hist_set__folded(base)));
	}
	if (verdicts(d, cfg)) {
		rsp_hist_diff__delete(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n; i++) {
		d->selected += d->v[i].verdict == RSP_HV_SELECTED;
		d->similar += d->v[i].verdict == RSP_HV_SIMILAR;
		d->tiny += d->v[i].verdict == RSP_HV_TINY;
	}
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), pair_rank);
	*out = d;
	return 0;
}
