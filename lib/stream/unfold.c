// SPDX-License-Identifier: LGPL-2.1
/* The unfolder: folded BPF records' events put back in time order (internal/unfold.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "internal/schema.h"
#include "internal/unfold.h"
#include "tracepoints/bpf_records.h"

/* A record in the FIFO: its address, or in a copying unfolder its offset in bytes[]. */
struct fent {
	uint64_t time;
	uint32_t cpu;
	uint32_t size;
	union {
		const struct perf_event_header *rec;
		size_t off;
	};
};

/*
 * A carried event in the heap: its key and the slot holding its record (the
 * heap moves 24-byte entries, not the records).
 */
struct hent {
	uint64_t time;
	uint64_t seq; /* push order: equal times come out as they went in */
	uint32_t cpu;
	uint32_t slot;
};

struct rsp_unfold {
	bool copy;
	uint64_t delay;
	size_t max_held;
	uint64_t from, to;
	uint64_t newest; /* the newest time pushed */
	uint64_t seq;
	/* the FIFO: a ring of entries, its size a power of two */
	struct fent *f;
	size_t fcap, fhead, fcount;
	/* a copying unfolder's records: a ring of bytes, [rd, wr) or wrapped */
	unsigned char *bytes;
	size_t bcap, wr;
	/* the carried events: a min-heap by (time, seq), their records in slots */
	struct hent *h;
	size_t hcap, hcount;
	uint64_t (*slots)[RSP_BPFREC_UNFOLD_WORDS];
	uint32_t *free_slots; /* a stack of the slots not in use */
	uint32_t nslots, nfree;
	uint32_t returned; /* the slot of the record last returned, UINT32_MAX: none */
};

struct rsp_unfold *rsp_unfold__new(bool copy)
{
	struct rsp_unfold *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->copy = copy;
	u->delay = RSP_UNFOLD_DELAY_NS;
	u->max_held = RSP_UNFOLD_MAX_HELD;
	u->to = UINT64_MAX;
	u->returned = UINT32_MAX;
	return u;
}

void rsp_unfold__delete(struct rsp_unfold *u)
{
	if (!u)
		return;
	free(u->f);
	free(u->bytes);
	free(u->h);
	free(u->slots);
	free(u->free_slots);
	free(u);
}

void rsp_unfold__set_delay(struct rsp_unfold *u, uint64_t ns)
{
	u->delay = ns;
	/* the bound grows with the delay: as many records a second as at the default */
	u->max_held = ns > RSP_UNFOLD_DELAY_NS
			      ? (size_t)(RSP_UNFOLD_MAX_HELD * (ns / RSP_UNFOLD_DELAY_NS))
			      : RSP_UNFOLD_MAX_HELD;
}

void rsp_unfold__set_range(struct rsp_unfold *u, uint64_t from, uint64_t to)
{
	u->from = from;
	u->to = to;
}

/* ---- the heap ------------------------------------------------------------ */

static bool before(const struct hent *a, const struct hent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void swap(struct hent *a, struct hent *b)
{
	struct hent t = *a;

	*a = *b;
	*b = t;
}

/* A free slot for a record (the stack of free ones grows with the slots). */
static int take_slot(struct rsp_unfold *u, uint32_t *slot)
{
	if (!u->nfree) {
		uint32_t n = u->nslots ? u->nslots * 2 : 64;
		void *sl = realloc(u->slots, n * sizeof(*u->slots));
		uint32_t *f;

		if (!sl)
			return -ENOMEM;
		u->slots = sl;
		f = realloc(u->free_slots, n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		u->free_slots = f;
		for (uint32_t i = n; i-- > u->nslots;)
			u->free_slots[u->nfree++] = i;
		u->nslots = n;
	}
	*slot = u->free_slots[--u->nfree];
	return 0;
}

/* The record returned last is no longer the caller's: its slot is free again. */
static void release_returned(struct rsp_unfold *u)
{
	if (u->returned == UINT32_MAX)
		return;
	u->free_slots[u->nfree++] = u->returned;
	u->returned = UINT32_MAX;
}

static int heap_push(struct rsp_unfold *u, uint64_t time, uint32_t cpu, const uint64_t *rec)
{
	struct hent *e;
	uint32_t slot;
	size_t i;

	if (u->hcount == u->hcap) {
		size_t n = u->hcap ? u->hcap * 2 : 64;
		struct hent *h = realloc(u->h, n * sizeof(*h));

		if (!h)
			return -ENOMEM;
		u->h = h;
		u->hcap = n;
	}
	if (take_slot(u, &slot))
		return -ENOMEM;
	memcpy(u->slots[slot], rec, sizeof(u->slots[slot]));
	i = u->hcount++;
	e = &u->h[i];
	e->time = time;
	e->seq = u->seq++;
	e->cpu = cpu;
	e->slot = slot;
	while (i && before(&u->h[i], &u->h[(i - 1) / 2])) {
		swap(&u->h[i], &u->h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

static void heap_pop(struct rsp_unfold *u)
{
	size_t i = 0;

	u->h[0] = u->h[--u->hcount];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < u->hcount && before(&u->h[l], &u->h[m]))
			m = l;
		if (l + 1 < u->hcount && before(&u->h[l + 1], &u->h[m]))
			m = l + 1;
		if (m == i)
			return;
		swap(&u->h[i], &u->h[m]);
		i = m;
	}
}

/* ---- the FIFO and its bytes ------------------------------------------------ */

static struct fent *fifo_at(const struct rsp_unfold *u, size_t i)
{
	return &u->f[(u->fhead + i) & (u->fcap - 1)];
}

static int fifo_grow(struct rsp_unfold *u)
{
	size_t n = u->fcap ? u->fcap * 2 : 256;
	struct fent *f = malloc(n * sizeof(*f));

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < u->fcount; i++)
		f[i] = *fifo_at(u, i);
	free(u->f);
	u->f = f;
	u->fcap = n;
	u->fhead = 0;
	return 0;
}

/* Lay the held records out from offset 0 of a buffer of @cap bytes. */
static int bytes_grow(struct rsp_unfold *u, size_t cap)
{
	unsigned char *b = malloc(cap);
	size_t at = 0;

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < u->fcount; i++) {
		struct fent *e = fifo_at(u, i);

		memcpy(b + at, u->bytes + e->off, e->size);
		e->off = at;
		at += e->size;
	}
	free(u->bytes);
	u->bytes = b;
	u->bcap = cap;
	u->wr = at;
	return 0;
}

/*
 * Room for @n bytes at u->wr, contiguous: after the newest record, or
 * from the start of the ring when the oldest is far enough on; else a
 * larger ring. Records never touch: wr never reaches the oldest's offset
 * from below, so an empty and a full ring cannot look alike.
 */
static int bytes_room(struct rsp_unfold *u, size_t n)
{
	size_t rd;

	if (!u->fcount)
		u->wr = 0;
	rd = u->fcount ? fifo_at(u, 0)->off : 0;
	if (u->fcount && u->wr <= rd) { /* wrapped: the free bytes are [wr, rd) */
		if (u->wr + n < rd)
			return 0;
	} else if (u->wr + n <= u->bcap) {
		return 0;
	} else if (u->fcount && n < rd) {
		u->wr = 0;
		return 0;
	}
	return bytes_grow(u, (u->bcap + n) * 2);
}

static int fifo_push(struct rsp_unfold *u, const struct rsp_wentry *e)
{
	struct fent *f;

	if (u->fcount == u->fcap && fifo_grow(u))
		return -ENOMEM;
	f = &u->f[(u->fhead + u->fcount) & (u->fcap - 1)];
	f->time = e->time;
	f->cpu = e->cpu;
	f->size = e->rec->size;
	if (!u->copy) {
		f->rec = e->rec;
	} else {
		if (bytes_room(u, f->size))
			return -ENOMEM;
		memcpy(u->bytes + u->wr, e->rec, f->size);
		f->off = u->wr;
		u->wr += f->size;
	}
	u->fcount++;
	return 0;
}

/* ---- in and out ---------------------------------------------------------- */

int rsp_unfold__carried(const struct rsp_wentry *e, uint64_t from, uint64_t to,
			int (*fn)(void *ctx, const struct rsp_wentry *o), void *ctx)
{
	uint64_t parts[RSP_BPFREC_UNFOLD_MAX][RSP_BPFREC_UNFOLD_WORDS];
	const struct rsp_brec_hdr *main = (const void *)e->rec;
	/* each part on its own CPU, in the stream family of the record (rspd's BPF streams) */
	uint32_t base = e->cpu >= main->cpu ? e->cpu - main->cpu : 0;
	int n = rsp_bpfrec__unfold(e->rec, e->rec->size, parts), ret = 0;

	for (int i = 0; i < n; i++) {
		const struct rsp_brec_hdr *h = (const void *)parts[i];
		struct rsp_wentry o = {
			.time = h->time, .cpu = base + h->cpu, .rec = (const void *)h};

		if (h->time >= from && h->time <= to && (ret = fn(ctx, &o)))
			return ret;
	}
	return 0;
}

static int heap_push_entry(void *ctx, const struct rsp_wentry *o)
{
	return heap_push(ctx, o->time, o->cpu, (const uint64_t *)o->rec);
}

/* The events @e's record carries, into the heap (those in the range). */
static int push_carried(struct rsp_unfold *u, const struct rsp_wentry *e)
{
	return rsp_unfold__carried(e, u->from, u->to, heap_push_entry, u);
}

void rsp_unfold__advance(struct rsp_unfold *u, uint64_t now)
{
	if (now > u->newest)
		u->newest = now;
}

int rsp_unfold__push(struct rsp_unfold *u, const struct rsp_wentry *e)
{
	release_returned(u);
	if (e->time > u->newest)
		u->newest = e->time;
	if (RSP_BREC_IS_TYPE(e->rec->type) && e->rec->size >= sizeof(struct rsp_brec_hdr)) {
		if (push_carried(u, e))
			return -ENOMEM;
		if (RSP_BREC_TYPE_KIND(e->rec->type) == RSP_BREC_CARRY)
			return 0; /* only its part is an event */
	}
	if (e->time > u->to)
		return 0; /* read ahead for what it carries */
	return fifo_push(u, e);
}

bool rsp_unfold__pop(struct rsp_unfold *u, struct rsp_wentry *e, bool all)
{
	const struct fent *f = u->fcount ? fifo_at(u, 0) : NULL;
	/* on a tie the record pushed first (a COMM sent at its waking's time) */
	bool heap = u->hcount && (!f || u->h[0].time < f->time);
	uint64_t t;

	release_returned(u);
	if (!heap && !f)
		return false;
	t = heap ? u->h[0].time : f->time;
	if (!all && t + u->delay > u->newest && u->fcount < u->max_held)
		return false;
	if (heap) {
		e->time = t;
		e->cpu = u->h[0].cpu;
		e->rec = (const struct perf_event_header *)u->slots[u->h[0].slot];
		u->returned = u->h[0].slot; /* free again at the next call */
		heap_pop(u);
		return true;
	}
	e->time = f->time;
	e->cpu = f->cpu;
	e->rec = u->copy ? (const struct perf_event_header *)(u->bytes + f->off) : f->rec;
	u->fhead = (u->fhead + 1) & (u->fcap - 1);
	u->fcount--;
	return true;
}
