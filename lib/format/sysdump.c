// SPDX-License-Identifier: LGPL-2.1
/*
 * Syscall profiles in a dump: the writer (from a live store's slices) and
 * the loader (into a file's store). See rsp/sysdump.h for the layout.
 *
 * Hand-written: the section is a flat array of fixed-size structs in
 * perf.data's own style; no serialization library would be smaller than
 * the bounds checks it would still need here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/sysdump.h>
#include <rsp/sysprof.h>

#define VERSION 1
#define MAX_NR	4096 /* syscall numbers: rsp_syscall__parse()'s bound */

struct hdr {
	char magic[8];
	uint32_t version, resolution;
	uint64_t slice_ns, nr_entries;
};

struct ent {
	uint64_t time;
	uint32_t tgid, tid, nr, nb;
	char comm[RSP_HIST_COMM_LEN];
	uint64_t count, sum, min, max, offcpu;
	double sumsq;
};

struct bkt {
	uint32_t idx, zero;
	uint64_t n;
};

_Static_assert(sizeof(struct hdr) == 32, "header layout");
_Static_assert(sizeof(struct ent) == 88, "entry layout");
_Static_assert(sizeof(struct bkt) == 16, "bucket layout");

/* ---- writing ------------------------------------------------------------------------------ */

static int put(struct rsp_buf *out, const struct rsp_hist_profile *p, uint64_t time, uint32_t tgid,
	       uint32_t tid, unsigned nbk)
{
	struct ent e = {
		.time = time,
		.tgid = tgid,
		.tid = tid,
		.nr = RSP_HIST_OP_ARG(p->op),
		.count = p->count,
		.sum = p->sum,
		.min = p->min,
		.max = p->max,
		.offcpu = p->offcpu,
		.sumsq = p->sumsq,
	};
	int err;

	if (tgid || tid)
		memcpy(e.comm, p->subject.comm, sizeof(e.comm));
	e.comm[sizeof(e.comm) - 1] = '\0';
	for (unsigned i = 0; i < nbk; i++)
		e.nb += p->buckets[i] != 0;
	err = rsp_buf__add(out, &e, sizeof(e));
	for (unsigned i = 0; !err && i < nbk; i++) {
		struct bkt b = {.idx = i, .n = p->buckets[i]};

		if (b.n)
			err = rsp_buf__add(out, &b, sizeof(b));
	}
	return err;
}

/* The system's residual: what its profile has beyond the sum of its threads'. */
static void subtract(struct rsp_hist_profile *sys, const struct rsp_hist_profile *t, unsigned nbk)
{
	sys->count -= t->count < sys->count ? t->count : sys->count;
	sys->sum -= t->sum < sys->sum ? t->sum : sys->sum;
	sys->offcpu -= t->offcpu < sys->offcpu ? t->offcpu : sys->offcpu;
	sys->sumsq = sys->sumsq > t->sumsq ? sys->sumsq - t->sumsq : 0;
	for (unsigned i = 0; i < nbk; i++)
		sys->buckets[i] -=
			t->buckets[i] < sys->buckets[i] ? t->buckets[i] : sys->buckets[i];
}

/* One slice: thread entries, then the system residuals. */
static int write_slice(struct rsp_hist_set *s, uint64_t time, int32_t *sys_of, struct rsp_buf *out,
		       uint64_t *n)
{
	unsigned nbk = rsp_hist__nr_buckets(s->resolution);
	int err = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct rsp_hist_profile *p = &s->v[i];

		if (p->subject.kind == RSP_HSUBJ_SYSTEM && RSP_HIST_OP_ARG(p->op) < MAX_NR)
			sys_of[RSP_HIST_OP_ARG(p->op)] = (int32_t)i;
	}
	for (size_t i = 0; !err && i < s->n; i++) {
		struct rsp_hist_profile *p = &s->v[i];
		uint32_t nr = RSP_HIST_OP_ARG(p->op);

		if (p->subject.kind != RSP_HSUBJ_THREAD || !p->count || nr >= MAX_NR)
			continue;
		err = put(out, p, time, p->subject.pid, p->subject.tid, nbk);
		if (!err && sys_of[nr] >= 0)
			subtract(&s->v[sys_of[nr]], p, nbk);
		(*n)++;
	}
	for (size_t i = 0; !err && i < s->n; i++) {
		struct rsp_hist_profile *p = &s->v[i];

		if (p->subject.kind != RSP_HSUBJ_SYSTEM || RSP_HIST_OP_ARG(p->op) >= MAX_NR)
			continue;
		sys_of[RSP_HIST_OP_ARG(p->op)] = -1;
		if (!p->count)
			continue;
		err = put(out, p, time, 0, 0, nbk);
		(*n)++;
	}
	return err;
}

int rsp_sysdump__write(struct rsp_hist_store *st, uint64_t from, uint64_t to, struct rsp_buf *out,
		       uint64_t *entries)
{
	const struct rsp_hist_config *c = rsp_hist_store__config(st);
	struct rsp_hist_opsel sel = {.kind = RSP_HOP_SYSCALL, .any = true};
	struct hdr h = {.magic = RSP_SYSDUMP_MAGIC,
			.version = VERSION,
			.resolution = c->resolution,
			.slice_ns = c->slice_ns};
	struct rsp_buf why = RSP_BUF_INIT;
	int32_t *sys_of = malloc(MAX_NR * sizeof(*sys_of));
	size_t start = out->len;
	uint64_t n = 0;
	int err = sys_of ? rsp_buf__add(out, &h, sizeof(h)) : -ENOMEM;

	if (entries)
		*entries = 0;
	for (size_t i = 0; sys_of && i < MAX_NR; i++)
		sys_of[i] = -1;
	for (uint64_t no = from / c->slice_ns; !err && no <= to / c->slice_ns; no++) {
		struct rsp_hist_query q = {
			.subjects = (1u << RSP_HSUBJ_SYSTEM) | (1u << RSP_HSUBJ_THREAD),
			.pid = -1,
			.tid = -1,
			.ops = &sel,
			.nr_ops = 1,
			.ranged = true,
			.from = no * c->slice_ns,
			.to = no * c->slice_ns,
		};
		struct rsp_hist_set *s = NULL;
		int ret = rsp_hist_store__collect(st, &q, &s, &why);

		rsp_buf__reset(&why);
		if (ret == -ERANGE)
			continue; /* outside the slices kept */
		err = ret ? ret : write_slice(s, no * c->slice_ns, sys_of, out, &n);
		rsp_hist_set__delete(s);
	}
	rsp_buf__exit(&why);
	free(sys_of);
	if (!err && !n)
		out->len = start; /* nothing: no section */
	else if (!err) {
		h.nr_entries = n;
		memcpy(out->data + start, &h, sizeof(h));
	}
	if (entries && !err)
		*entries = n;
	return err;
}

/* ---- loading ------------------------------------------------------------------------------ */

static int bad(struct rsp_buf *err, uint64_t off, const char *what, uint64_t v)
{
	rsp_buf__printf(err,
			"offset 0x%llx: the dump's syscall profiles (rsp's feature section) are "
			"corrupt: %s (%llu); dump again from rspd",
			(unsigned long long)off, what, (unsigned long long)v);
	return -EINVAL;
}

/* Check entry at @p (@left bytes); its size in *@size. */
static int check(const unsigned char *p, size_t left, uint64_t off, unsigned r, uint64_t *size,
		 struct rsp_buf *err)
{
	unsigned nbk = rsp_hist__nr_buckets(r);
	uint64_t total = 0;
	struct ent e;

	if (left < sizeof(e))
		return bad(err, off, "an entry runs past the section's end; bytes left", left);
	memcpy(&e, p, sizeof(e));
	if (e.nr >= MAX_NR)
		return bad(err, off, "a syscall number is out of range", e.nr);
	if (e.nb > nbk)
		return bad(err, off, "an entry claims more buckets than its resolution has", e.nb);
	if ((uint64_t)e.nb * sizeof(struct bkt) > left - sizeof(e))
		return bad(err, off, "an entry's buckets run past the section's end; buckets",
			   e.nb);
	if (!e.count || e.min > e.max)
		return bad(err, off, "an entry has no calls or a minimum above its maximum; count",
			   e.count);
	if (!(e.sumsq >= 0))
		return bad(err, off, "an entry's sum of squares is negative or not a number; count",
			   e.count);
	for (uint32_t i = 0; i < e.nb; i++) {
		struct bkt b, prev;

		memcpy(&b, p + sizeof(e) + (size_t)i * sizeof(b), sizeof(b));
		if (b.idx >= nbk || b.zero || !b.n)
			return bad(err, off, "a bucket is out of range or empty; bucket", b.idx);
		if (i) {
			memcpy(&prev, p + sizeof(e) + (size_t)(i - 1) * sizeof(b), sizeof(b));
			if (prev.idx >= b.idx)
				return bad(err, off, "buckets are not in ascending order; bucket",
					   b.idx);
		}
		if (total + b.n < total)
			return bad(err, off, "bucket counts overflow; bucket", b.idx);
		total += b.n;
	}
	if (total != e.count)
		return bad(err, off, "an entry's buckets do not add up to its count", e.count);
	*size = sizeof(e) + (uint64_t)e.nb * sizeof(struct bkt);
	return 0;
}

static int add(struct rsp_hist_shard *sh, const unsigned char *p, unsigned r, unsigned store_r)
{
	struct rsp_sysprof_delta d;
	uint64_t b[RSP_HIST_MAX_BUCKETS];
	struct rsp_hist_batch bt;
	struct rsp_hist_who who;
	struct ent e;

	memcpy(&e, p, sizeof(e));
	memset(&d, 0, sizeof(d));
	d.count = e.count;
	d.sum = e.sum;
	d.offcpu = e.offcpu;
	d.min = e.min;
	d.max = e.max;
	d.sumsq = e.sumsq;
	for (uint32_t i = 0; i < e.nb; i++) {
		struct bkt k;

		memcpy(&k, p + sizeof(e) + (size_t)i * sizeof(k), sizeof(k));
		d.b[k.idx] = k.n;
	}
	if (r == store_r) {
		memset(b, 0, sizeof(b));
		memcpy(b, d.b, rsp_hist__nr_buckets(r) * sizeof(uint64_t));
		bt = (struct rsp_hist_batch){.count = d.count,
					     .sum = d.sum,
					     .min = d.min,
					     .max = d.max,
					     .offcpu = d.offcpu,
					     .sumsq = d.sumsq,
					     .buckets = b};
	} else {
		rsp_sysprof_delta__batch(&d, store_r, b, &bt); /* folds r=2 into r=1 */
	}
	who = (struct rsp_hist_who){
		.tgid = e.tgid, .tid = e.tid, .comm = e.comm, .comm_len = sizeof(e.comm)};
	return rsp_hist_shard__add_batch(sh, RSP_HIST_OP(RSP_HOP_SYSCALL, e.nr), e.time, &bt,
					 e.tgid || e.tid ? &who : NULL);
}

int rsp_sysdump__load(const void *buf, size_t len, uint64_t base, struct rsp_hist_store *st,
		      uint64_t *entries, struct rsp_buf *err)
{
	unsigned store_r = rsp_hist_store__config(st)->resolution;
	const unsigned char *p = buf;
	uint64_t at = sizeof(struct hdr), size;
	struct hdr h;
	int ret = 0;

	if (entries)
		*entries = 0;
	if (len < sizeof(h))
		return bad(err, base, "the section is shorter than its header; bytes", len);
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, RSP_SYSDUMP_MAGIC, 8))
		return bad(err, base, "the section does not start with RSPSYSC1; bytes", len);
	if (h.version != VERSION)
		return bad(err, base + 8, "unknown version", h.version);
	if (h.resolution != 1 && h.resolution != 2)
		return bad(err, base + 12, "the resolution is neither 1 nor 2", h.resolution);
	if (h.resolution < store_r) {
		rsp_buf__printf(err,
				"offset 0x%llx: the dump's syscall profiles are at resolution 1, "
				"which cannot fill profiles at resolution %u; ask at resolution 1",
				(unsigned long long)base + 12, store_r);
		return -EINVAL;
	}
	if (!h.slice_ns)
		return bad(err, base + 16, "the slice length is zero", 0);
	if (h.nr_entries > (len - sizeof(h)) / sizeof(struct ent))
		return bad(err, base + 24, "more entries than the section has room for",
			   h.nr_entries);
	/* Check all first: a corrupt section adds nothing. */
	for (uint64_t i = 0; i < h.nr_entries; i++) {
		ret = check(p + at, len - at, base + at, h.resolution, &size, err);
		if (ret)
			return ret;
		at += size;
	}
	if (at != len)
		return bad(err, base + at, "bytes after the last entry", len - at);
	at = sizeof(h);
	for (uint64_t i = 0; i < h.nr_entries && !ret; i++) {
		ret = add(rsp_hist_store__shard(st, 0), p + at, h.resolution, store_r);
		check(p + at, len - at, base + at, h.resolution, &size, err);
		at += size;
	}
	if (ret == -ENOSPC)
		rsp_buf__printf(
			err, "the dump's syscall profiles do not fit in the file's profile store "
			     "(its table of operations is full)");
	if (!ret && entries)
		*entries = h.nr_entries;
	return ret;
}
