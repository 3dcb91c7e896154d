// SPDX-License-Identifier: LGPL-2.1
/*
 * The profile store and its writers: shards with one writer each, a bounded table of
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
#include "internal/hist_store.h"

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
	sh->push_within = c->max_profiles / 16;
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
	s->pushed = ++sh->pushes;
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
	ST(s->sq, sq_bits(0));
	ST(s->offcpu, 0);
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
	ST(o->sq, sq_bits(sq_get(LD(o->sq)) + sq_get(LD(v->sq))));
	ST(o->offcpu, LD(o->offcpu) + LD(v->offcpu));
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
	ST(s->sq, sq_bits(sq_get(LD(s->sq)) + (double)v * (double)v));
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
	ST(e->sq, sq_bits(0));
	ST(e->offcpu, 0);
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
	ST(e->sq, sq_bits(sq_get(LD(e->sq)) + (double)v * (double)v));
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

/* The entry of @sl in the slice of @time, or NULL (counted: too old, or no memory). */
static struct sentry *slice_entry(struct rsp_hist_shard *sh, struct slot *sl, uint64_t time)
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
		return NULL;
	}
	if (!e)
		ST(sh->dropped, LD(sh->dropped) + 1);
	return e;
}

static void slice_add(struct rsp_hist_shard *sh, struct slot *sl, uint64_t time, unsigned b,
		      uint64_t v, const uint64_t *cw)
{
	struct sentry *e = slice_entry(sh, sl, time);

	/* An "other" entry (slice at its cap) keeps no name. */
	if (e)
		entry_add(e, b, v, sl->redirected ? NULL : cw);
}

/* ---- the update entry points ------------------------------------------- */

/* The profile of @key, made (or taken by eviction) if new; most recently used now. */
static struct slot *profile_slot(struct rsp_hist_shard *sh, uint64_t key, uint32_t tgid,
				 const char *comm, size_t comm_len)
{
	uint32_t idx;
	struct slot *s;

	if (rsp_u64map__get(&sh->index, key, &idx))
		return slot_new(sh, key, tgid, comm, comm_len);
	s = slot_at(sh, idx);
	/*
	 * Each push moves a slot one place from the head: one pushed fewer
	 * than push_within pushes ago is in the list's first sixteenth, far
	 * from the tail that eviction takes, and stays there. Most updates
	 * then touch no other slot (relinking wrote two neighbours and the
	 * head: cache misses, 6% of rspd's time under pgbench). Eviction is
	 * least recently used to within that sixteenth.
	 */
	if (!s->pinned && sh->lru_head != idx && sh->pushes - s->pushed >= sh->push_within) {
		lru_unlink(sh, s);
		lru_push(sh, s, idx);
	}
	return s;
}

static void profile_add(struct rsp_hist_shard *sh, uint64_t key, uint32_t tgid, const char *comm,
			size_t comm_len, const uint64_t *cw, uint64_t time, unsigned b, uint64_t v)
{
	struct slot *s = profile_slot(sh, key, tgid, comm, comm_len);

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

/*
 * @who's name packed in 16 bytes (@cw, zeroed by the caller), once per
 * call of the single and batch adds. Names follow renames (exec): a
 * thread's is its own comm, a process's that of its main thread.
 */
static void pack_comm(const struct rsp_hist_who *who, uint64_t cw[2])
{
	size_t len;

	if (!who->comm)
		return;
	len = who->comm_len < RSP_HIST_COMM_LEN ? who->comm_len : RSP_HIST_COMM_LEN - 1;
	memcpy(cw, who->comm, strnlen(who->comm, len));
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
	pack_comm(who, cw);
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

/* ---- batches: many latencies at once (aggregated elsewhere, e.g. in the kernel) ---- */

/* Add @bt to one profile's counters and buckets (_Atomic u64 or u32 buckets). */
#define BATCH_ADD(x, bk, bt, nb)                                                                   \
	do {                                                                                       \
		ST((x)->count, LD((x)->count) + (bt)->count);                                      \
		ST((x)->sum, LD((x)->sum) + (bt)->sum);                                            \
		ST((x)->sq, sq_bits(sq_get(LD((x)->sq)) + (bt)->sumsq));                           \
		ST((x)->offcpu, LD((x)->offcpu) + (bt)->offcpu);                                   \
		if ((bt)->min < LD((x)->min))                                                      \
			ST((x)->min, (bt)->min);                                                   \
		if ((bt)->max > LD((x)->max))                                                      \
			ST((x)->max, (bt)->max);                                                   \
		for (unsigned i_ = 0; i_ < (nb); i_++)                                             \
			if ((bt)->buckets[i_])                                                     \
				ST((bk)[i_], LD((bk)[i_]) + (bt)->buckets[i_]);                    \
	} while (0)

static void profile_add_batch(struct rsp_hist_shard *sh, uint64_t key, uint32_t tgid,
			      const char *comm, size_t comm_len, const uint64_t *cw, uint64_t time,
			      const struct rsp_hist_batch *bt)
{
	struct slot *s = profile_slot(sh, key, tgid, comm, comm_len);
	struct sentry *e;
	_Atomic uint64_t *sb = slot_b(s);

	seq_begin(&s->seq);
	rename_comm(s->comm, cw);
	BATCH_ADD(s, sb, bt, sh->nb);
	seq_end(&s->seq);
	e = slice_entry(sh, s, time);
	if (e) {
		_Atomic uint32_t *eb = entry_b(e);

		seq_begin(&e->seq);
		rename_comm(e->comm, s->redirected ? NULL : cw);
		BATCH_ADD(e, eb, bt, sh->nb);
		seq_end(&e->seq);
	}
}

int rsp_hist_shard__add_batch(struct rsp_hist_shard *sh, uint64_t op, uint64_t time,
			      const struct rsp_hist_batch *bt, const struct rsp_hist_who *who)
{
	int opidx;
	uint64_t cw[2] = {0, 0};

	if (!bt->count)
		return 0;
	opidx = op_index(sh, op);
	if (opidx < 0) {
		ST(sh->dropped, LD(sh->dropped) + bt->count);
		return -ENOSPC;
	}
	note_update(sh, time);
	ST(sh->updates, LD(sh->updates) + bt->count - 1); /* note_update counted one */
	profile_add_batch(sh, pkey(RSP_HSUBJ_SYSTEM, (unsigned)opidx, 0), 0, NULL, 0, NULL, time,
			  bt);
	if (!who || (!who->tgid && !who->tid))
		return 0;
	pack_comm(who, cw);
	profile_add_batch(sh, pkey(RSP_HSUBJ_PROCESS, (unsigned)opidx, who->tgid), who->tgid,
			  who->comm, who->comm_len, cw[0] && who->tid == who->tgid ? cw : NULL,
			  time, bt);
	profile_add_batch(sh, pkey(RSP_HSUBJ_THREAD, (unsigned)opidx, who->tid), who->tgid,
			  who->comm, who->comm_len, cw[0] ? cw : NULL, time, bt);
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
