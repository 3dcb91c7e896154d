// SPDX-License-Identifier: LGPL-2.1
/*
 * The profile store: shards with one writer each, a bounded table of
 * profiles with least-recently-updated eviction into "other", and a ring
 * of time slices with sparse entries. The concurrency model is described
 * in rsp/hist.h; in short: counters are relaxed atomics with one writer,
 * a sequence count per profile/entry makes each update appear whole, and
 * the shard mutex covers structural changes and readers.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include "internal/hist.h"
#include "internal/u64map.h"

#define NIL	      UINT32_MAX
#define NONE	      UINT64_MAX
#define MAX_SHARDS    64
#define PAGE_ENTRIES  32
#define PINNED_PER_OP 3 /* system, other processes, other threads */
#define IRQ_MAP	      4096
#define NAME_LEN      32
#define GAP_RING      16

/*
 * Profile keys inside a shard: subject kind, op index, subject id. Never
 * UINT64_MAX (the u64map's empty key): the kind is at most 4.
 */
static uint64_t pkey(unsigned kind, unsigned opidx, uint32_t id)
{
	return (uint64_t)kind << 56 | (uint64_t)opidx << 32 | id;
}

#define PKEY_KIND(k) ((unsigned)((k) >> 56))
#define PKEY_OP(k)   ((unsigned)(((k) >> 32) & 0xff))
#define PKEY_ID(k)   ((uint32_t)(k))

/* One profile. Followed in memory by nb _Atomic uint64_t buckets. */
struct slot {
	_Atomic uint32_t seq;
	_Atomic uint32_t tgid; /* threads: their process */
	_Atomic uint64_t key;
	_Atomic uint64_t comm[2];
	_Atomic uint64_t count, sum, min, max;
	/* writer only */
	uint32_t prev, next;  /* LRU list of evictable slots, most recent first */
	uint64_t slice_no;    /* slice of the cached entry */
	uint32_t slice_entry; /* its index in that slice */
	bool redirected;      /* the cached entry is "other" (slice at its cap) */
	bool pinned;
};

/* One slice entry. Followed by nb _Atomic uint32_t buckets. */
struct sentry {
	_Atomic uint32_t seq;
	_Atomic uint32_t tgid;
	_Atomic uint64_t key;
	_Atomic uint64_t comm[2];
	_Atomic uint64_t count, sum, min, max;
};

struct page {
	struct page *next;
	_Alignas(8) unsigned char data[];
};

struct slice {
	_Atomic uint64_t no; /* time / slice_ns; NONE: never used */
	_Atomic uint32_t nr; /* entries published */
	uint32_t nr_subject; /* process/thread entries (writer) */
	_Atomic uint64_t overflow;
	struct page **pages; /* max_pages; [0, ceil(nr / PAGE_ENTRIES)) valid */
};

struct rsp_hist_shard {
	struct rsp_hist_store *st;
	pthread_mutex_t lock;
	unsigned nb;
	size_t slot_size, entry_size;
	unsigned char *slots;
	uint32_t nr_slots;
	_Atomic uint32_t used;
	struct rsp_u64map index; /* pkey -> slot (writer) */
	struct rsp_u64map opmap; /* op -> op index (writer) */
	uint32_t lru_head, lru_tail, nr_evictable;
	struct slice *slices;
	unsigned max_pages;
	uint64_t cur_no;
	struct page *free_pages;
	uint64_t first;
	_Atomic uint64_t updates, evictions, overflow, late, dropped, nr_pages, first_pub;
};

struct op_info {
	_Atomic uint64_t key;
	_Atomic uint64_t incomplete, open, inferred;
};

struct rsp_hist_store {
	struct rsp_hist_config cfg;
	unsigned nb;
	pthread_mutex_t lock; /* ops and irq names: appends */
	struct op_info ops[RSP_HIST_MAX_OPS];
	_Atomic uint32_t nr_ops;
	char irq_names[RSP_HIST_MAX_IRQ_NAMES][NAME_LEN];
	_Atomic uint32_t nr_irq_names;
	_Atomic uint32_t irq_map[IRQ_MAP]; /* irq -> name id + 1 */
	_Atomic uint64_t gaps, gap_ns, gap_records, progress;
	struct rsp_hist_shard *shards[MAX_SHARDS];
};

#define LD(x)	 atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

static _Atomic uint64_t *slot_b(struct slot *s)
{
	return (_Atomic uint64_t *)(s + 1);
}

static _Atomic uint32_t *entry_b(struct sentry *e)
{
	return (_Atomic uint32_t *)(e + 1);
}

static struct slot *slot_at(const struct rsp_hist_shard *sh, uint32_t i)
{
	return (struct slot *)(sh->slots + (size_t)i * sh->slot_size);
}

static struct sentry *entry_at(const struct rsp_hist_shard *sh, const struct slice *s, uint32_t i)
{
	return (struct sentry *)(s->pages[i / PAGE_ENTRIES]->data +
				 (size_t)(i % PAGE_ENTRIES) * sh->entry_size);
}

void rsp_hist_config__init(struct rsp_hist_config *c)
{
	c->resolution = 1;
	c->max_profiles = RSP_HIST_DEFAULT_PROFILES;
	c->slice_ns = RSP_HIST_DEFAULT_SLICE_NS;
	c->nr_slices = RSP_HIST_DEFAULT_SLICES;
	c->slice_cap = RSP_HIST_DEFAULT_SLICE_CAP;
	c->nr_shards = 1;
}

/* ---- the writer's sequence count ---------------------------------------- */

static void seq_begin(_Atomic uint32_t *seq)
{
	atomic_store_explicit(seq, atomic_load_explicit(seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void seq_end(_Atomic uint32_t *seq)
{
	atomic_store_explicit(seq, atomic_load_explicit(seq, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* Reader side: wait for an even count; then copy; then check it again. */
static uint32_t seq_read_begin(_Atomic uint32_t *seq)
{
	unsigned spins = 0;
	uint32_t s;

	while ((s = atomic_load_explicit(seq, memory_order_acquire)) & 1)
		if (++spins % 64 == 0)
			sched_yield(); /* the writer was preempted mid-update */
	return s;
}

static bool seq_read_retry(_Atomic uint32_t *seq, uint32_t s)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(seq, memory_order_relaxed) != s;
}

/* ---- creation ------------------------------------------------------------ */

static void shard_delete(struct rsp_hist_shard *sh)
{
	struct page *p;

	if (!sh)
		return;
	for (unsigned i = 0; sh->slices && i < sh->st->cfg.nr_slices; i++) {
		struct slice *s = &sh->slices[i];
		uint32_t nr = LD(s->nr);

		for (uint32_t j = 0; s->pages && j < (nr + PAGE_ENTRIES - 1) / PAGE_ENTRIES; j++)
			free(s->pages[j]);
		free(s->pages);
	}
	while ((p = sh->free_pages)) {
		sh->free_pages = p->next;
		free(p);
	}
	free(sh->slices);
	free(sh->slots);
	rsp_u64map__exit(&sh->index);
	rsp_u64map__exit(&sh->opmap);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

static struct rsp_hist_shard *shard_new(struct rsp_hist_store *st)
{
	const struct rsp_hist_config *c = &st->cfg;
	struct rsp_hist_shard *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->st = st;
	pthread_mutex_init(&sh->lock, NULL);
	sh->nb = st->nb;
	sh->slot_size = sizeof(struct slot) + st->nb * sizeof(uint64_t);
	sh->entry_size = (sizeof(struct sentry) + st->nb * sizeof(uint32_t) + 7) & ~(size_t)7;
	sh->nr_slots = c->max_profiles + PINNED_PER_OP * RSP_HIST_MAX_OPS;
	sh->max_pages =
		(c->slice_cap + PINNED_PER_OP * RSP_HIST_MAX_OPS + PAGE_ENTRIES - 1) / PAGE_ENTRIES;
	sh->lru_head = sh->lru_tail = NIL;
	sh->cur_no = NONE;
	sh->first = NONE;
	rsp_u64map__init(&sh->index);
	rsp_u64map__init(&sh->opmap);
	/* calloc: the kernel maps pages as profiles are first used. */
	sh->slots = calloc(sh->nr_slots, sh->slot_size);
	sh->slices = calloc(c->nr_slices, sizeof(*sh->slices));
	if (!sh->slots || !sh->slices || rsp_u64map__reserve(&sh->index, sh->nr_slots) ||
	    rsp_u64map__reserve(&sh->opmap, RSP_HIST_MAX_OPS)) {
		shard_delete(sh);
		return NULL;
	}
	for (unsigned i = 0; i < c->nr_slices; i++) {
		atomic_init(&sh->slices[i].no, NONE);
		sh->slices[i].pages = calloc(sh->max_pages, sizeof(struct page *));
		if (!sh->slices[i].pages) {
			shard_delete(sh);
			return NULL;
		}
	}
	return sh;
}

struct rsp_hist_store *rsp_hist_store__new(const struct rsp_hist_config *cfg)
{
	struct rsp_hist_store *st;

	if ((cfg->resolution != 1 && cfg->resolution != 2) || !cfg->max_profiles ||
	    cfg->max_profiles > (1u << 24) || !cfg->slice_ns || !cfg->nr_slices ||
	    cfg->nr_slices > (1u << 20) || !cfg->nr_shards || cfg->nr_shards > MAX_SHARDS ||
	    cfg->slice_cap > (1u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->cfg = *cfg;
	st->nb = rsp_hist__nr_buckets(cfg->resolution);
	pthread_mutex_init(&st->lock, NULL);
	/* Name id 0 is the catch-all. */
	strcpy(st->irq_names[0], "(other)");
	atomic_init(&st->nr_irq_names, 1);
	for (unsigned i = 0; i < cfg->nr_shards; i++) {
		st->shards[i] = shard_new(st);
		if (!st->shards[i]) {
			rsp_hist_store__delete(st);
			errno = ENOMEM;
			return NULL;
		}
	}
	return st;
}

void rsp_hist_store__delete(struct rsp_hist_store *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < MAX_SHARDS; i++)
		shard_delete(st->shards[i]);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

const struct rsp_hist_config *rsp_hist_store__config(const struct rsp_hist_store *st)
{
	return &st->cfg;
}

struct rsp_hist_shard *rsp_hist_store__shard(struct rsp_hist_store *st, unsigned idx)
{
	return idx < st->cfg.nr_shards ? st->shards[idx] : NULL;
}

/* ---- ops and irq names ---------------------------------------------------- */

static int op_lookup(const struct rsp_hist_store *st, uint64_t op)
{
	uint32_t nr = atomic_load_explicit(&st->nr_ops, memory_order_acquire);

	for (uint32_t i = 0; i < nr; i++)
		if (LD(st->ops[i].key) == op)
			return (int)i;
	return -1;
}

uint32_t rsp_hist_store__irq_name_id(struct rsp_hist_store *st, const char *name, size_t len)
{
	uint32_t nr, id;

	if (len >= NAME_LEN)
		len = NAME_LEN - 1;
	pthread_mutex_lock(&st->lock);
	nr = LD(st->nr_irq_names);
	for (id = 1; id < nr; id++)
		if (!strncmp(st->irq_names[id], name, len) && !st->irq_names[id][len])
			break;
	if (id == nr) {
		if (nr < RSP_HIST_MAX_IRQ_NAMES) {
			memcpy(st->irq_names[id], name, len);
			st->irq_names[id][len] = '\0';
			atomic_store_explicit(&st->nr_irq_names, nr + 1, memory_order_release);
		} else {
			id = 0;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return id;
}

static int op_register(struct rsp_hist_store *st, uint64_t op);

/* The store-wide index of @op for shard @sh (cached per shard); -1 when full. */
static int op_index(struct rsp_hist_shard *sh, uint64_t op)
{
	uint32_t idx;
	int i;

	if (!rsp_u64map__get(&sh->opmap, op, &idx))
		return (int)idx;
	i = op_register(sh->st, op);
	if (i >= 0)
		rsp_u64map__put(&sh->opmap, op, (uint32_t)i); /* reserved: cannot fail */
	return i;
}

void rsp_hist_store__note_irq(struct rsp_hist_store *st, uint32_t irq, uint32_t name_id)
{
	if (irq < IRQ_MAP)
		ST(st->irq_map[irq], name_id + 1);
}

static const char *irq_name(const struct rsp_hist_store *st, uint32_t id)
{
	uint32_t nr = atomic_load_explicit(&st->nr_irq_names, memory_order_acquire);

	return id < nr ? st->irq_names[id] : "(other)";
}

int rsp_hist_store__irq_name(const struct rsp_hist_store *st, uint32_t id, char *buf, size_t n)
{
	if (id >= atomic_load_explicit(&st->nr_irq_names, memory_order_acquire))
		return -ENOENT;
	snprintf(buf, n, "%s", st->irq_names[id]);
	return 0;
}

int rsp_hist_store__irq_find(const struct rsp_hist_store *st, const char *s, uint32_t *ids, int max)
{
	uint32_t nr = atomic_load_explicit(&st->nr_irq_names, memory_order_acquire);
	char *end;
	unsigned long irq = strtoul(s, &end, 10);
	int n = 0;

	if (*s >= '0' && *s <= '9' && !*end) {
		uint32_t v = irq < IRQ_MAP ? LD(st->irq_map[irq]) : 0;

		if (v && max > 0)
			ids[n++] = v - 1;
		return n;
	}
	for (uint32_t id = 0; id < nr && n < max; id++)
		if (!strcmp(st->irq_names[id], s))
			ids[n++] = id;
	return n;
}

const char *rsp_hist_store__op_name(const struct rsp_hist_store *st, uint64_t op, char *buf,
				    size_t n)
{
	unsigned kind = RSP_HIST_OP_KIND(op);
	uint32_t arg = RSP_HIST_OP_ARG(op);

	rsp_hist__op_name(kind, arg, kind == RSP_HOP_IRQ ? irq_name(st, arg) : NULL, buf, n);
	return buf;
}

/* The index of @op in the store's table, registering it; -1 when full. */
static int op_register(struct rsp_hist_store *st, uint64_t op)
{
	int i = op_lookup(st, op);

	if (i >= 0)
		return i;
	pthread_mutex_lock(&st->lock);
	i = op_lookup(st, op);
	if (i < 0 && LD(st->nr_ops) < RSP_HIST_MAX_OPS) {
		i = (int)LD(st->nr_ops);
		ST(st->ops[i].key, op);
		atomic_store_explicit(&st->nr_ops, (uint32_t)i + 1, memory_order_release);
	}
	pthread_mutex_unlock(&st->lock);
	return i;
}

void rsp_hist_store__note_incomplete(struct rsp_hist_store *st, uint64_t op, uint64_t n)
{
	int i = op_register(st, op);

	if (i >= 0)
		atomic_fetch_add_explicit(&st->ops[i].incomplete, n, memory_order_relaxed);
}

void rsp_hist_store__note_inferred(struct rsp_hist_store *st, uint64_t op, uint64_t n)
{
	int i = op_register(st, op);

	if (i >= 0)
		atomic_fetch_add_explicit(&st->ops[i].inferred, n, memory_order_relaxed);
}

void rsp_hist_store__set_open(struct rsp_hist_store *st, uint64_t op, uint64_t n)
{
	int i = n ? op_register(st, op) : op_lookup(st, op);

	if (i >= 0)
		ST(st->ops[i].open, n);
}

void rsp_hist_store__note_gap(struct rsp_hist_store *st, uint64_t from, uint64_t to,
			      uint64_t records)
{
	atomic_fetch_add_explicit(&st->gaps, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->gap_ns, to > from ? to - from : 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->gap_records, records, memory_order_relaxed);
}

void rsp_hist_store__set_progress(struct rsp_hist_store *st, uint64_t until)
{
	ST(st->progress, until);
}

/* ---- profiles (writer) ---------------------------------------------------- */

static void lru_unlink(struct rsp_hist_shard *sh, struct slot *s)
{
	if (s->prev != NIL)
		slot_at(sh, s->prev)->next = s->next;
	else
		sh->lru_head = s->next;
	if (s->next != NIL)
		slot_at(sh, s->next)->prev = s->prev;
	else
		sh->lru_tail = s->prev;
	s->prev = s->next = NIL;
}

static void lru_push(struct rsp_hist_shard *sh, struct slot *s, uint32_t idx)
{
	s->prev = NIL;
	s->next = sh->lru_head;
	if (sh->lru_head != NIL)
		slot_at(sh, sh->lru_head)->prev = idx;
	else
		sh->lru_tail = idx;
	sh->lru_head = idx;
}

static void store_comm(_Atomic uint64_t comm[2], const char *c, size_t len)
{
	uint64_t w[2] = {0, 0};

	if (c) {
		if (len >= RSP_HIST_COMM_LEN)
			len = RSP_HIST_COMM_LEN - 1;
		memcpy(w, c, strnlen(c, len));
	}
	ST(comm[0], w[0]);
	ST(comm[1], w[1]);
}

static void load_comm(_Atomic uint64_t comm[2], char *out)
{
	uint64_t w[2] = {LD(comm[0]), LD(comm[1])};

	memcpy(out, w, RSP_HIST_COMM_LEN);
	out[RSP_HIST_COMM_LEN - 1] = '\0';
}

static void slot_init(struct rsp_hist_shard *sh, struct slot *s, uint64_t key, uint32_t tgid,
		      const char *comm, size_t comm_len, bool pinned)
{
	_Atomic uint64_t *b = slot_b(s);

	seq_begin(&s->seq);
	ST(s->key, key);
	ST(s->tgid, tgid);
	store_comm(s->comm, comm, comm_len);
	ST(s->count, 0);
	ST(s->sum, 0);
	ST(s->min, UINT64_MAX);
	ST(s->max, 0);
	for (unsigned i = 0; i < sh->nb; i++)
		ST(b[i], 0);
	seq_end(&s->seq);
	s->prev = s->next = NIL;
	s->slice_no = NONE;
	s->redirected = false;
	s->pinned = pinned;
}

static uint32_t slot_fresh(struct rsp_hist_shard *sh)
{
	uint32_t idx = LD(sh->used);

	atomic_store_explicit(&sh->used, idx + 1, memory_order_release);
	return idx;
}

static struct slot *pinned_get(struct rsp_hist_shard *sh, uint64_t key);

/* Merge the least recently updated profile into "other"; its slot is free. Locked. */
static uint32_t evict(struct rsp_hist_shard *sh)
{
	uint32_t idx = sh->lru_tail;
	struct slot *v = slot_at(sh, idx), *o;
	uint64_t key = LD(v->key), vmin, vmax;
	unsigned okind = PKEY_KIND(key) == RSP_HSUBJ_THREAD ? RSP_HSUBJ_OTHER_THREAD
							    : RSP_HSUBJ_OTHER_PROCESS;
	_Atomic uint64_t *vb = slot_b(v), *ob;

	o = pinned_get(sh, pkey(okind, PKEY_OP(key), 0));
	ob = slot_b(o);
	seq_begin(&o->seq);
	ST(o->count, LD(o->count) + LD(v->count));
	ST(o->sum, LD(o->sum) + LD(v->sum));
	vmin = LD(v->min);
	vmax = LD(v->max);
	if (vmin < LD(o->min))
		ST(o->min, vmin);
	if (vmax > LD(o->max))
		ST(o->max, vmax);
	for (unsigned i = 0; i < sh->nb; i++)
		ST(ob[i], LD(ob[i]) + LD(vb[i]));
	seq_end(&o->seq);
	rsp_u64map__del(&sh->index, key);
	lru_unlink(sh, v);
	sh->nr_evictable--;
	ST(sh->evictions, LD(sh->evictions) + 1);
	return idx;
}

/* A system or "other" profile: never evicted. Locked or not, writer only. */
static struct slot *pinned_get(struct rsp_hist_shard *sh, uint64_t key)
{
	uint32_t idx;
	struct slot *s;

	if (!rsp_u64map__get(&sh->index, key, &idx))
		return slot_at(sh, idx);
	idx = slot_fresh(sh);
	s = slot_at(sh, idx);
	slot_init(sh, s, key, 0, NULL, 0, true);
	rsp_u64map__put(&sh->index, key, idx);
	return s;
}

static struct slot *slot_new(struct rsp_hist_shard *sh, uint64_t key, uint32_t tgid,
			     const char *comm, size_t comm_len)
{
	unsigned kind = PKEY_KIND(key);
	bool pinned = kind != RSP_HSUBJ_PROCESS && kind != RSP_HSUBJ_THREAD;
	struct slot *s;
	uint32_t idx;

	pthread_mutex_lock(&sh->lock);
	if (pinned) {
		s = pinned_get(sh, key);
		pthread_mutex_unlock(&sh->lock);
		return s;
	}
	idx = sh->nr_evictable >= sh->st->cfg.max_profiles ? evict(sh) : slot_fresh(sh);
	s = slot_at(sh, idx);
	slot_init(sh, s, key, tgid, comm, comm_len, false);
	rsp_u64map__put(&sh->index, key, idx);
	lru_push(sh, s, idx);
	sh->nr_evictable++;
	pthread_mutex_unlock(&sh->lock);
	return s;
}

/* A new name (@cw, packed comm; NULL: keep it) when the subject renamed itself (exec). */
static void rename_comm(_Atomic uint64_t comm[2], const uint64_t *cw)
{
	if (cw && (LD(comm[0]) != cw[0] || LD(comm[1]) != cw[1])) {
		ST(comm[0], cw[0]);
		ST(comm[1], cw[1]);
	}
}

static void slot_add(struct rsp_hist_shard *sh, struct slot *s, unsigned b, uint64_t v,
		     const uint64_t *cw)
{
	_Atomic uint64_t *bk = slot_b(s);

	seq_begin(&s->seq);
	rename_comm(s->comm, cw);
	ST(s->count, LD(s->count) + 1);
	ST(s->sum, LD(s->sum) + v);
	if (v < LD(s->min))
		ST(s->min, v);
	if (v > LD(s->max))
		ST(s->max, v);
	ST(bk[b], LD(bk[b]) + 1);
	seq_end(&s->seq);
}

/* ---- slices (writer) ------------------------------------------------------ */

static void slice_recycle(struct rsp_hist_shard *sh, struct slice *s, uint64_t no)
{
	uint32_t nr = LD(s->nr);

	for (uint32_t j = 0; j < (nr + PAGE_ENTRIES - 1) / PAGE_ENTRIES; j++) {
		s->pages[j]->next = sh->free_pages;
		sh->free_pages = s->pages[j];
		s->pages[j] = NULL;
	}
	ST(s->nr, 0);
	s->nr_subject = 0;
	ST(s->overflow, 0);
	ST(s->no, no);
}

/* Open slice @no for new updates, recycling the slices it replaces. */
static void slice_roll(struct rsp_hist_shard *sh, uint64_t no)
{
	unsigned nr = sh->st->cfg.nr_slices;
	uint64_t from = sh->cur_no == NONE ? no : sh->cur_no + 1;

	if (no - from >= nr)
		from = no - nr + 1;
	pthread_mutex_lock(&sh->lock);
	for (uint64_t n = from; n <= no; n++)
		slice_recycle(sh, &sh->slices[n % nr], n);
	pthread_mutex_unlock(&sh->lock);
	sh->cur_no = no;
}

static struct sentry *entry_new(struct rsp_hist_shard *sh, struct slice *s, const struct slot *src,
				uint32_t *idx)
{
	uint32_t nr = LD(s->nr);
	struct sentry *e;
	_Atomic uint32_t *b;

	if (nr / PAGE_ENTRIES >= sh->max_pages)
		return NULL;
	if (nr % PAGE_ENTRIES == 0) {
		struct page *p = sh->free_pages;

		if (p) {
			sh->free_pages = p->next;
		} else {
			p = malloc(sizeof(*p) + PAGE_ENTRIES * sh->entry_size);
			if (!p)
				return NULL;
			ST(sh->nr_pages, LD(sh->nr_pages) + 1);
		}
		s->pages[nr / PAGE_ENTRIES] = p;
	}
	e = entry_at(sh, s, nr);
	b = entry_b(e);
	ST(e->seq, 0);
	ST(e->key, LD(src->key));
	ST(e->tgid, LD(src->tgid));
	ST(e->comm[0], LD(src->comm[0]));
	ST(e->comm[1], LD(src->comm[1]));
	ST(e->count, 0);
	ST(e->sum, 0);
	ST(e->min, UINT64_MAX);
	ST(e->max, 0);
	for (unsigned i = 0; i < sh->nb; i++)
		ST(b[i], 0);
	/* Publish: a reader that sees nr + 1 sees the entry and its page. */
	atomic_store_explicit(&s->nr, nr + 1, memory_order_release);
	*idx = nr;
	return e;
}

static void entry_add(struct sentry *e, unsigned b, uint64_t v, const uint64_t *cw)
{
	_Atomic uint32_t *bk = entry_b(e);

	seq_begin(&e->seq);
	rename_comm(e->comm, cw);
	ST(e->count, LD(e->count) + 1);
	ST(e->sum, LD(e->sum) + v);
	if (v < LD(e->min))
		ST(e->min, v);
	if (v > LD(e->max))
		ST(e->max, v);
	ST(bk[b], LD(bk[b]) + 1);
	seq_end(&e->seq);
}

/* An update of an older slice than the open one (rare): find its entry. */
static struct sentry *entry_find(struct rsp_hist_shard *sh, struct slice *s, const struct slot *src)
{
	uint32_t nr = LD(s->nr), idx;
	uint64_t key = LD(src->key);

	for (uint32_t i = 0; i < nr; i++) {
		struct sentry *e = entry_at(sh, s, i);

		if (LD(e->key) == key)
			return e;
	}
	if (!src->pinned && s->nr_subject >= sh->st->cfg.slice_cap)
		return NULL;
	s->nr_subject += !src->pinned;
	return entry_new(sh, s, src, &idx);
}

/* The entry of @sl in the open slice @s, going to "other" at the cap. */
static struct sentry *entry_current(struct rsp_hist_shard *sh, struct slice *s, struct slot *sl)
{
	struct sentry *e;
	struct slot *o;
	uint64_t key;

	if (sl->slice_no == sh->cur_no) {
		if (sl->redirected)
			atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
		return entry_at(sh, s, sl->slice_entry);
	}
	if (sl->pinned || s->nr_subject < sh->st->cfg.slice_cap) {
		e = entry_new(sh, s, sl, &sl->slice_entry);
		if (!e)
			return NULL;
		s->nr_subject += !sl->pinned;
		sl->slice_no = sh->cur_no;
		sl->redirected = false;
		return e;
	}
	/* At the cap: this subject's updates go to its op's "other" entry. */
	key = LD(sl->key);
	pthread_mutex_lock(&sh->lock);
	o = pinned_get(sh, pkey(PKEY_KIND(key) == RSP_HSUBJ_THREAD ? RSP_HSUBJ_OTHER_THREAD
								   : RSP_HSUBJ_OTHER_PROCESS,
				PKEY_OP(key), 0));
	pthread_mutex_unlock(&sh->lock);
	if (o->slice_no != sh->cur_no) {
		if (!entry_new(sh, s, o, &o->slice_entry))
			return NULL;
		o->slice_no = sh->cur_no;
	}
	sl->slice_no = sh->cur_no;
	sl->slice_entry = o->slice_entry;
	sl->redirected = true;
	atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
	return entry_at(sh, s, sl->slice_entry);
}

static void slice_add(struct rsp_hist_shard *sh, struct slot *sl, uint64_t time, unsigned b,
		      uint64_t v, const uint64_t *cw)
{
	unsigned nr = sh->st->cfg.nr_slices;
	uint64_t no = time / sh->st->cfg.slice_ns;
	struct slice *s;
	struct sentry *e;

	if (sh->cur_no == NONE || no > sh->cur_no)
		slice_roll(sh, no);
	s = &sh->slices[no % nr];
	if (no == sh->cur_no) {
		e = entry_current(sh, s, sl);
	} else if (sh->cur_no - no < nr && LD(s->no) == no) {
		e = entry_find(sh, s, sl);
	} else {
		ST(sh->late, LD(sh->late) + 1);
		return;
	}
	if (!e) {
		ST(sh->dropped, LD(sh->dropped) + 1);
		return;
	}
	/* An "other" entry (slice at its cap) keeps no name. */
	entry_add(e, b, v, sl->redirected ? NULL : cw);
}

/* ---- the update entry points ------------------------------------------- */

static void profile_add(struct rsp_hist_shard *sh, uint64_t key, uint32_t tgid, const char *comm,
			size_t comm_len, const uint64_t *cw, uint64_t time, unsigned b, uint64_t v)
{
	struct slot *s;
	uint32_t idx;

	if (!rsp_u64map__get(&sh->index, key, &idx)) {
		s = slot_at(sh, idx);
		if (!s->pinned && sh->lru_head != idx) {
			lru_unlink(sh, s);
			lru_push(sh, s, idx);
		}
	} else {
		s = slot_new(sh, key, tgid, comm, comm_len);
	}
	slot_add(sh, s, b, v, cw);
	slice_add(sh, s, time, b, v, cw);
}

static void note_update(struct rsp_hist_shard *sh, uint64_t time)
{
	ST(sh->updates, LD(sh->updates) + 1);
	if (sh->first == NONE) {
		sh->first = time;
		ST(sh->first_pub, time);
	}
}

int rsp_hist_shard__add(struct rsp_hist_shard *sh, uint64_t op, uint64_t time, uint64_t value,
			const struct rsp_hist_who *who)
{
	int opidx = op_index(sh, op);
	unsigned b = rsp_hist__bucket(value, sh->st->cfg.resolution);
	uint64_t cw[2] = {0, 0};

	if (opidx < 0) {
		ST(sh->dropped, LD(sh->dropped) + 1);
		return -ENOSPC;
	}
	note_update(sh, time);
	profile_add(sh, pkey(RSP_HSUBJ_SYSTEM, (unsigned)opidx, 0), 0, NULL, 0, NULL, time, b,
		    value);
	if (!who || (!who->tgid && !who->tid))
		return 0;
	/*
	 * Names follow renames (exec): a thread's is its own comm, a process's
	 * that of its main thread. 16 bytes, packed once per call.
	 */
	if (who->comm) {
		size_t len =
			who->comm_len < RSP_HIST_COMM_LEN ? who->comm_len : RSP_HIST_COMM_LEN - 1;

		memcpy(cw, who->comm, strnlen(who->comm, len));
	}
	profile_add(sh, pkey(RSP_HSUBJ_PROCESS, (unsigned)opidx, who->tgid), who->tgid, who->comm,
		    who->comm_len, cw[0] && who->tid == who->tgid ? cw : NULL, time, b, value);
	profile_add(sh, pkey(RSP_HSUBJ_THREAD, (unsigned)opidx, who->tid), who->tgid, who->comm,
		    who->comm_len, cw[0] ? cw : NULL, time, b, value);
	return 0;
}

int rsp_hist_shard__add_one(struct rsp_hist_shard *sh, const struct rsp_hist_subject *subj,
			    uint64_t op, uint64_t time, uint64_t value)
{
	unsigned b = rsp_hist__bucket(value, sh->st->cfg.resolution);
	int opidx;
	uint32_t id;

	if (subj->kind != RSP_HSUBJ_SYSTEM && subj->kind != RSP_HSUBJ_PROCESS &&
	    subj->kind != RSP_HSUBJ_THREAD)
		return -EINVAL;
	opidx = op_index(sh, op);
	if (opidx < 0) {
		ST(sh->dropped, LD(sh->dropped) + 1);
		return -ENOSPC;
	}
	note_update(sh, time);
	id = subj->kind == RSP_HSUBJ_SYSTEM    ? 0
	     : subj->kind == RSP_HSUBJ_PROCESS ? subj->pid
					       : subj->tid;
	profile_add(sh, pkey(subj->kind, (unsigned)opidx, id), subj->pid, subj->comm,
		    RSP_HIST_COMM_LEN, NULL, time, b, value);
	return 0;
}

/* ---- statistics ----------------------------------------------------------- */

void rsp_hist_store__stats(const struct rsp_hist_store *st, struct rsp_hist_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->resolution = st->cfg.resolution;
	out->nr_shards = st->cfg.nr_shards;
	out->max_profiles = st->cfg.max_profiles;
	out->slice_ns = st->cfg.slice_ns;
	out->nr_slices = st->cfg.nr_slices;
	out->slice_cap = st->cfg.slice_cap;
	out->ops = atomic_load_explicit(&st->nr_ops, memory_order_acquire);
	out->gaps = LD(st->gaps);
	out->gap_ns = LD(st->gap_ns);
	out->gap_records = LD(st->gap_records);
	out->progress = LD(st->progress);
	out->bytes = sizeof(*st);
	for (unsigned i = 0; i < st->cfg.nr_shards; i++) {
		struct rsp_hist_shard *sh = st->shards[i];
		uint64_t first = LD(sh->first_pub);

		/* Lock: nr_evictable and the pinned count move under it. */
		pthread_mutex_lock(&sh->lock);
		out->profiles += sh->nr_evictable;
		out->pinned += LD(sh->used) - sh->nr_evictable;
		pthread_mutex_unlock(&sh->lock);
		out->updates += LD(sh->updates);
		out->evictions += LD(sh->evictions);
		out->late += LD(sh->late);
		out->dropped += LD(sh->dropped);
		for (unsigned j = 0; j < st->cfg.nr_slices; j++)
			out->slice_overflow += LD(sh->slices[j].overflow);
		if (first && (!out->first || first < out->first))
			out->first = first;
		out->bytes += sizeof(*sh) + (size_t)LD(sh->used) * sh->slot_size +
			      (size_t)LD(sh->nr_pages) *
				      (sizeof(struct page) + PAGE_ENTRIES * sh->entry_size) +
			      st->cfg.nr_slices * (sizeof(struct slice) +
						   sh->max_pages * sizeof(struct page *)) +
			      (sh->index.cap + sh->opmap.cap) * 12;
	}
}

/* ---- collecting (readers) --------------------------------------------------- */

struct collect {
	struct rsp_hist_store *st;
	const struct rsp_hist_query *q;
	struct rsp_hist_set *set;
	uint64_t first_no, nr_rows; /* ranged */
	char names[RSP_HIST_MAX_OPS][64];
	bool named[RSP_HIST_MAX_OPS];
};

static bool op_wanted(const struct rsp_hist_query *q, uint64_t op)
{
	if (!q->ops)
		return true;
	for (size_t i = 0; i < q->nr_ops; i++) {
		const struct rsp_hist_opsel *o = &q->ops[i];

		if (o->kind == RSP_HIST_OP_KIND(op) && (o->any || o->arg == RSP_HIST_OP_ARG(op)))
			return true;
	}
	return false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool excluded(const struct rsp_hist_query *q, uint32_t pid)
{
	return q->nr_exclude && bsearch(&pid, q->exclude, q->nr_exclude, sizeof(pid), cmp_u32);
}

/* The subject a profile key shows as under @q, or false if @q excludes it. */
static bool subject_of(const struct rsp_hist_query *q, uint64_t key, uint32_t tgid,
		       const char *comm, struct rsp_hist_subject *out)
{
	unsigned kind = PKEY_KIND(key);
	uint32_t id = PKEY_ID(key);

	if ((kind == RSP_HSUBJ_PROCESS && excluded(q, id)) ||
	    (kind == RSP_HSUBJ_THREAD && excluded(q, tgid)))
		return false;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	switch (kind) {
	case RSP_HSUBJ_PROCESS:
		out->pid = id;
		memcpy(out->comm, comm, RSP_HIST_COMM_LEN);
		if (q->pid >= 0 && id != (uint32_t)q->pid)
			return false;
		if (q->comm && strcmp(comm, q->comm))
			return false;
		if (q->subjects & (1u << RSP_HSUBJ_PROCESS))
			return true;
		if (!(q->subjects & (1u << RSP_HSUBJ_COMM)) || !q->comm)
			return false;
		memset(out, 0, sizeof(*out));
		out->kind = RSP_HSUBJ_COMM;
		memcpy(out->comm, comm, RSP_HIST_COMM_LEN);
		return true;
	case RSP_HSUBJ_THREAD:
		out->pid = tgid;
		out->tid = id;
		memcpy(out->comm, comm, RSP_HIST_COMM_LEN);
		if (q->pid >= 0 && tgid != (uint32_t)q->pid)
			return false;
		if (q->tid >= 0 && id != (uint32_t)q->tid)
			return false;
		return q->subjects & (1u << RSP_HSUBJ_THREAD);
	default:
		return kind < RSP_HSUBJ__NR && (q->subjects & (1u << kind));
	}
}

static const char *collect_op_name(struct collect *c, unsigned opidx)
{
	if (!c->named[opidx]) {
		rsp_hist_store__op_name(c->st, LD(c->st->ops[opidx].key), c->names[opidx],
					sizeof(c->names[opidx]));
		c->named[opidx] = true;
	}
	return c->names[opidx];
}

struct counts {
	uint64_t key, count, sum, min, max;
	uint32_t tgid;
	char comm[RSP_HIST_COMM_LEN];
	uint64_t b[RSP_HIST_MAX_BUCKETS];
};

static void read_slot(const struct rsp_hist_shard *sh, struct slot *s, struct counts *c)
{
	_Atomic uint64_t *b = slot_b(s);
	uint32_t q;

	do {
		q = seq_read_begin(&s->seq);
		c->key = LD(s->key);
		c->tgid = LD(s->tgid);
		load_comm(s->comm, c->comm);
		c->count = LD(s->count);
		c->sum = LD(s->sum);
		c->min = LD(s->min);
		c->max = LD(s->max);
		for (unsigned i = 0; i < sh->nb; i++)
			c->b[i] = LD(b[i]);
	} while (seq_read_retry(&s->seq, q));
}

static void read_entry(const struct rsp_hist_shard *sh, struct sentry *e, struct counts *c)
{
	_Atomic uint32_t *b = entry_b(e);
	uint32_t q;

	do {
		q = seq_read_begin(&e->seq);
		c->key = LD(e->key);
		c->tgid = LD(e->tgid);
		load_comm(e->comm, c->comm);
		c->count = LD(e->count);
		c->sum = LD(e->sum);
		c->min = LD(e->min);
		c->max = LD(e->max);
		for (unsigned i = 0; i < sh->nb; i++)
			c->b[i] = LD(b[i]);
	} while (seq_read_retry(&e->seq, q));
}

static int row_alloc(struct rsp_hist_profile *p, uint64_t nr, uint64_t first_no, uint64_t slice_ns,
		     unsigned nb)
{
	uint64_t *mem;

	p->rows = calloc(nr, sizeof(*p->rows));
	mem = calloc(nr * nb, sizeof(uint64_t));
	if (!p->rows || !mem) {
		free(p->rows);
		free(mem);
		p->rows = NULL;
		return -ENOMEM;
	}
	p->nr_rows = nr;
	for (uint64_t i = 0; i < nr; i++) {
		p->rows[i].start = (first_no + i) * slice_ns;
		p->rows[i].buckets = mem + i * nb;
	}
	return 0;
}

/* Add @c (a slot, or an entry of slice @no) to the set if @q selects it. */
static int collect_one(struct collect *c, const struct counts *k, uint64_t no)
{
	struct rsp_hist_subject subj;
	struct rsp_hist_profile *p;
	unsigned opidx = PKEY_OP(k->key), nb = c->st->nb;
	uint64_t op = LD(c->st->ops[opidx].key);
	const char *name;

	if (!k->count || !op_wanted(c->q, op) || !subject_of(c->q, k->key, k->tgid, k->comm, &subj))
		return 0;
	name = collect_op_name(c, opidx);
	if (c->q->only && !rsp_hist_set__find(c->q->only, &subj, name))
		return 0;
	p = rsp_hist_set__get(c->set, &subj, name);
	if (!p)
		return -ENOMEM;
	p->op = op;
	/* Slices come oldest first: a subject is named as in the newest (after exec). */
	memcpy(p->subject.comm, subj.comm, sizeof(subj.comm));
	if (!p->count || k->min < p->min)
		p->min = k->min;
	if (k->max > p->max)
		p->max = k->max;
	p->count += k->count;
	p->sum += k->sum;
	for (unsigned i = 0; i < nb; i++)
		p->buckets[i] += k->b[i];
	if (c->q->rows && no != NONE) {
		struct rsp_hist_row *r;

		if (!p->rows && row_alloc(p, c->nr_rows, c->first_no, c->st->cfg.slice_ns, nb))
			return -ENOMEM;
		r = &p->rows[no - c->first_no];
		r->count += k->count;
		r->sum += k->sum;
		for (unsigned i = 0; i < nb; i++)
			r->buckets[i] += k->b[i];
	}
	return 0;
}

static int collect_slots(struct collect *c, struct rsp_hist_shard *sh)
{
	uint32_t used = atomic_load_explicit(&sh->used, memory_order_acquire);
	struct counts *k = malloc(sizeof(*k));
	int ret = 0;

	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < used && !ret; i++) {
		struct slot *s = slot_at(sh, i);

		/* Eviction and reuse happen under the lock we hold: keys are current. */
		read_slot(sh, s, k);
		ret = collect_one(c, k, NONE);
	}
	free(k);
	return ret;
}

static int collect_slices(struct collect *c, struct rsp_hist_shard *sh, uint64_t last_no)
{
	struct counts *k = malloc(sizeof(*k));
	int ret = 0;

	if (!k)
		return -ENOMEM;
	/* Oldest first (the ring's order would depend on where it wraps). */
	for (uint64_t want = c->first_no; want <= last_no && !ret; want++) {
		struct slice *s = &sh->slices[want % c->st->cfg.nr_slices];
		uint64_t no = LD(s->no);
		uint32_t nr = atomic_load_explicit(&s->nr, memory_order_acquire);

		if (no != want)
			continue;
		c->set->overflow += LD(s->overflow);
		for (uint32_t j = 0; j < nr && !ret; j++) {
			read_entry(sh, entry_at(sh, s, j), k);
			ret = collect_one(c, k, no);
		}
	}
	free(k);
	return ret;
}

/* The oldest and newest slice numbers any shard keeps; false if none. */
static bool slice_span(const struct rsp_hist_store *st, uint64_t *oldest, uint64_t *newest)
{
	*oldest = NONE;
	*newest = 0;
	for (unsigned i = 0; i < st->cfg.nr_shards; i++)
		for (unsigned j = 0; j < st->cfg.nr_slices; j++) {
			uint64_t no = LD(st->shards[i]->slices[j].no);

			if (no == NONE)
				continue;
			if (no < *oldest)
				*oldest = no;
			if (no > *newest)
				*newest = no;
		}
	return *oldest != NONE;
}

static void fill_notes(struct collect *c)
{
	struct rsp_hist_store *st = c->st;
	struct rsp_hist_stats s;

	rsp_hist_store__stats(st, &s);
	c->set->since = s.first;
	c->set->progress = s.progress;
	c->set->gaps = s.gaps;
	c->set->gap_ns = s.gap_ns;
	c->set->slice_ns = st->cfg.slice_ns;
	for (size_t i = 0; i < c->set->n; i++) {
		struct rsp_hist_profile *p = &c->set->v[i];
		int idx;

		if (p->subject.kind != RSP_HSUBJ_SYSTEM)
			continue;
		idx = op_lookup(st, p->op);
		if (idx < 0)
			continue;
		p->incomplete = LD(st->ops[idx].incomplete);
		p->open = LD(st->ops[idx].open);
		/* "of these": cumulative like the table, not per slice */
		if (!c->q->ranged)
			p->inferred = LD(st->ops[idx].inferred);
	}
}

/* System profiles of ops that only have incomplete operations (nothing observed). */
static int add_unobserved(struct collect *c)
{
	struct rsp_hist_store *st = c->st;
	uint32_t nr = atomic_load_explicit(&st->nr_ops, memory_order_acquire);
	struct rsp_hist_subject sys = {.kind = RSP_HSUBJ_SYSTEM};

	if (!(c->q->subjects & (1u << RSP_HSUBJ_SYSTEM)) || c->q->ranged)
		return 0;
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t op = LD(st->ops[i].key);

		if ((!LD(st->ops[i].incomplete) && !LD(st->ops[i].open)) || !op_wanted(c->q, op))
			continue;
		if (c->q->only && !rsp_hist_set__find(c->q->only, &sys, collect_op_name(c, i)))
			continue;
		struct rsp_hist_profile *p = rsp_hist_set__get(c->set, &sys, collect_op_name(c, i));

		if (!p)
			return -ENOMEM;
		p->op = op;
	}
	return 0;
}

static int range_check(struct collect *c, uint64_t *last_no, struct rsp_buf *err)
{
	const struct rsp_hist_query *q = c->q;
	uint64_t ns = c->st->cfg.slice_ns, oldest, newest;
	bool any = slice_span(c->st, &oldest, &newest);

	if (q->to < q->from) {
		rsp_buf__printf(err, "hist: the range ends (%.3f) before it starts (%.3f)",
				(double)q->to / 1e9, (double)q->from / 1e9);
		return -ERANGE;
	}
	c->first_no = q->from / ns;
	*last_no = q->to / ns;
	if (!any || *last_no < oldest || c->first_no > newest) {
		rsp_buf__printf(err,
				"hist: no time slices in %.3f .. %.3f; rspd keeps %u slices of "
				"%.3g s%s (raise --hist-slices to keep more)",
				(double)q->from / 1e9, (double)q->to / 1e9, c->st->cfg.nr_slices,
				(double)ns / 1e9,
				!any		       ? " and has none yet"
				: c->first_no > newest ? ", none that recent"
						       : ", none that old");
		return -ERANGE;
	}
	if (c->first_no < oldest) {
		c->set->clipped = true;
		c->first_no = oldest;
	}
	if (*last_no > newest)
		*last_no = newest;
	c->nr_rows = *last_no - c->first_no + 1;
	c->set->ranged = true;
	c->set->from = c->first_no * ns;
	c->set->to = (*last_no + 1) * ns;
	return 0;
}

int rsp_hist_store__collect(struct rsp_hist_store *st, const struct rsp_hist_query *q,
			    struct rsp_hist_set **out, struct rsp_buf *err)
{
	struct collect *c = calloc(1, sizeof(*c));
	uint64_t last_no = 0;
	int ret = 0;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->st = st;
	c->q = q;
	c->set = rsp_hist_set__new(st->cfg.resolution);
	if (!c->set) {
		free(c);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < st->cfg.nr_shards && !ret; i++) {
		struct rsp_hist_shard *sh = st->shards[i];

		pthread_mutex_lock(&sh->lock);
		if (q->ranged && i == 0)
			ret = range_check(c, &last_no, err);
		if (!ret)
			ret = q->ranged ? collect_slices(c, sh, last_no) : collect_slots(c, sh);
		pthread_mutex_unlock(&sh->lock);
	}
	if (!ret)
		ret = add_unobserved(c);
	if (!ret) {
		fill_notes(c);
		*out = c->set;
	} else {
		rsp_hist_set__delete(c->set);
	}
	free(c);
	return ret;
}
