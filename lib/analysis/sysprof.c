// SPDX-License-Identifier: LGPL-2.1
/*
 * Syscall profiles aggregated in the kernel: the merge of a key's per-CPU
 * values, and the delta reader (see rsp/sysprof.h; their names:
 * lib/model/syscall.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/parse.h>
#include <rsp/sysprof.h>
#include "internal/u64map.h"
#include "tracepoints/bpf_syscalls.h"

_Static_assert(RSP_SC_NR_BUCKETS == RSP_SYSPROF_NR_BUCKETS, "bucket layouts differ");
_Static_assert(RSP_SYSPROF_NR_BUCKETS == RSP_HIST_NR_BUCKETS(2), "not the r=2 layout");
_Static_assert(RSP_SC_COMM_LEN == RSP_HIST_COMM_LEN, "comm lengths differ");

/* ---- per-CPU merge ---------------------------------------------------------- */

void rsp_sysprof__merge_cpus(const void *percpu, unsigned nr_cpus, size_t stride,
			     struct rsp_sysprof_sum *out)
{
	bool named = false;

	out->count = out->sum = out->offcpu = out->sq = out->max = 0;
	out->min = UINT64_MAX;
	memset(out->comm, 0, sizeof(out->comm));
	memset(out->b, 0, sizeof(out->b));
	for (unsigned c = 0; c < nr_cpus; c++) {
		struct rsp_sc_val v;

		/* libbpf hands per-CPU values 8-byte aligned; copy, not cast */
		memcpy(&v, (const unsigned char *)percpu + (size_t)c * stride, sizeof(v));
		if (!named && v.comm[0]) {
			memcpy(out->comm, v.comm, sizeof(out->comm));
			out->comm[sizeof(out->comm) - 1] = '\0';
			named = true;
		}
		if (!v.count)
			continue;
		out->count += v.count;
		out->sum += v.sum;
		out->offcpu += v.offcpu;
		out->sq += v.sq;
		if (v.min < out->min)
			out->min = v.min;
		if (v.max > out->max)
			out->max = v.max;
		for (unsigned i = 0; i < RSP_SC_NR_BUCKETS; i++)
			out->b[i] += v.b[i]; /* modulo 2^32, as the kernel's */
	}
	if (!out->count)
		out->min = 0;
}

/* ---- the delta reader ---------------------------------------------------------- */

struct prev {
	uint64_t count, sum, offcpu, sq, min, max;
	uint32_t b[RSP_SYSPROF_NR_BUCKETS];
	uint32_t next_free;
};

struct rsp_sysprof {
	unsigned max_keys, used;
	uint32_t free_head; /* UINT32_MAX: none */
	uint32_t fresh;	    /* entries never used start here */
	struct prev *v;
	struct rsp_u64map index; /* key_of() -> entry */
};

/*
 * The kernel's whole key (tgid, tid, nr) in 64 bits: Linux pids are below
 * 2^22 (PID_MAX_LIMIT) and numbers below RSP_SC_MAX_NR. The tgid is part of
 * it: an exited thread's key may linger (its exit not queued, until the
 * sweep) while its tid is reused in another process, and the two keys must
 * not share one previous read. The per-number "other" keys: bit 62.
 */
static uint64_t key_of(uint32_t tgid, uint32_t tid, uint32_t nr)
{
	if (tid == RSP_SYSPROF_OTHER_ID)
		return 1ull << 62 | nr;
	return (uint64_t)(tgid & 0x3fffffu) << 42 | (uint64_t)(tid & 0x3fffffu) << 20 |
	       (nr & 0xfffffu); /* bit 63 clear: never UINT64_MAX */
}

struct rsp_sysprof *rsp_sysprof__new(unsigned max_keys)
{
	struct rsp_sysprof *sp;

	if (!max_keys) {
		errno = EINVAL;
		return NULL;
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->max_keys = max_keys;
	sp->free_head = UINT32_MAX;
	rsp_u64map__init(&sp->index);
	sp->v = calloc(max_keys, sizeof(*sp->v));
	/* The index never allocates after this: no failure in the read loop. */
	if (!sp->v || rsp_u64map__reserve(&sp->index, max_keys)) {
		rsp_sysprof__delete(sp);
		errno = ENOMEM;
		return NULL;
	}
	return sp;
}

void rsp_sysprof__delete(struct rsp_sysprof *sp)
{
	if (!sp)
		return;
	rsp_u64map__exit(&sp->index);
	free(sp->v);
	free(sp);
}

unsigned rsp_sysprof__nr_keys(const struct rsp_sysprof *sp)
{
	return sp->used;
}

static struct prev *entry_get(struct rsp_sysprof *sp, uint64_t key)
{
	uint32_t idx;

	if (!rsp_u64map__get(&sp->index, key, &idx))
		return &sp->v[idx];
	if (sp->used >= sp->max_keys)
		return NULL;
	if (sp->free_head != UINT32_MAX) {
		idx = sp->free_head;
		sp->free_head = sp->v[idx].next_free;
	} else {
		idx = sp->fresh++;
	}
	memset(&sp->v[idx], 0, sizeof(sp->v[idx]));
	rsp_u64map__put(&sp->index, key, idx); /* reserved: cannot fail */
	sp->used++;
	return &sp->v[idx];
}

int rsp_sysprof__forget(struct rsp_sysprof *sp, uint32_t tgid, uint32_t tid, uint32_t nr)
{
	uint64_t key = key_of(tgid, tid, nr);
	uint32_t idx;

	if (rsp_u64map__get(&sp->index, key, &idx))
		return -ENOENT;
	rsp_u64map__del(&sp->index, key);
	sp->v[idx].next_free = sp->free_head;
	sp->free_head = idx;
	sp->used--;
	return 0;
}

/* The delta's min and max: exact when a new extreme arrived, else bucket bounds. */
static void delta_extremes(const struct prev *p, const struct rsp_sysprof_sum *cur,
			   struct rsp_sysprof_delta *d)
{
	unsigned lo = 0, hi = 0;
	bool any = false;

	for (unsigned i = 0; i < RSP_SYSPROF_NR_BUCKETS; i++)
		if (d->b[i]) {
			if (!any)
				lo = i;
			hi = i;
			any = true;
		}
	if (!p->count || cur->min < p->min) {
		d->min = cur->min;
	} else {
		d->min = rsp_hist__bucket_low(lo, 2);
		if (d->min < cur->min)
			d->min = cur->min;
	}
	if (!p->count || cur->max > p->max) {
		d->max = cur->max;
	} else {
		d->max = rsp_hist__bucket_high(hi, 2);
		if (d->max > cur->max)
			d->max = cur->max;
	}
}

/*
 * The delta of the sum of squares, in ns^2 (the kernel squares 16 ns units).
 * The kernel's u64 sum wraps when a capped call (68 s or more, its square
 * ~2^64) and any other call of the key fall between two reads: @wrapped is
 * then the true value modulo 2^64. The true value is at least
 * (sum of units)^2 / count (Cauchy-Schwarz); each unit is at least
 * ns / 16 - 1/2, so that bound is known from @sum and @count, and 2^64 is
 * added until the value reaches it (a wrap always falls below it: the
 * bound is within a factor of count of the true value, far from 2^64 away).
 */
static double delta_sq(uint64_t wrapped, uint64_t sum, uint64_t count)
{
	double sq = (double)wrapped, units = (double)(sum >> RSP_SC_SQ_SHIFT) - (double)count;
	double lo = units > 0 && count ? units * units / (double)count : 0;

	for (int i = 0; i < 64 && sq < lo; i++)
		sq += 0x1p64;
	return sq * (double)(1u << (2 * RSP_SC_SQ_SHIFT));
}

int rsp_sysprof__delta(struct rsp_sysprof *sp, const struct rsp_sysprof_sum *cur,
		       struct rsp_sysprof_delta *d)
{
	struct prev *p;
	uint64_t key = key_of(cur->tgid, cur->tid, cur->nr);
	uint32_t idx;

	if (rsp_u64map__get(&sp->index, key, &idx) && !cur->count)
		return 0; /* nothing to remember yet */
	p = entry_get(sp, key);
	if (!p)
		return -ENOSPC;
	if (cur->count < p->count)
		return -EINVAL;
	if (cur->count == p->count)
		return 0;
	memset(d, 0, sizeof(*d));
	d->count = cur->count - p->count;
	d->sum = cur->sum - p->sum;
	d->offcpu = cur->offcpu - p->offcpu;
	d->sumsq = delta_sq(cur->sq - p->sq, d->sum, d->count);
	for (unsigned i = 0; i < RSP_SYSPROF_NR_BUCKETS; i++)
		d->b[i] = (uint32_t)(cur->b[i] - p->b[i]);
	delta_extremes(p, cur, d);
	p->count = cur->count;
	p->sum = cur->sum;
	p->offcpu = cur->offcpu;
	p->sq = cur->sq;
	p->min = cur->min;
	p->max = cur->max;
	memcpy(p->b, cur->b, sizeof(p->b));
	return 1;
}

void rsp_sysprof_delta__batch(const struct rsp_sysprof_delta *d, unsigned r, uint64_t *buckets,
			      struct rsp_hist_batch *bt)
{
	if (r == 2) {
		memcpy(buckets, d->b, sizeof(d->b));
	} else {
		/* r=2 buckets 1+2k and 2+2k make r=1 bucket k+1 (rsp/hist.h) */
		buckets[0] = d->b[0];
		for (unsigned k = 0; k < 64; k++)
			buckets[k + 1] = d->b[1 + 2 * k] + d->b[2 + 2 * k];
	}
	bt->count = d->count;
	bt->sum = d->sum;
	bt->min = d->min;
	bt->max = d->max;
	bt->offcpu = d->offcpu;
	bt->sumsq = d->sumsq;
	bt->buckets = buckets;
}
