// SPDX-License-Identifier: LGPL-2.1
/*
 * The window: per-CPU lists of chunks, a byte budget, pinning readers.
 *
 * Locking: w->lock protects the lists, the free list, chunk refcounts and
 * the eviction counters. The writer takes it only when it rolls to a new
 * chunk; appending inside a chunk is lock-free: the writer fills bytes past
 * `used` and then publishes the new `used` with a release store, readers
 * load it with acquire and never look past it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>
#include <zstd_errors.h>
#include <rsp/record.h>
#include <rsp/window.h>
#include "internal/vec.h"
#include "tracepoints/bpf_records.h"

#define CHUNK_MIN    (8u * 1024)
#define CHUNK_MAX    (1u * 1024 * 1024)
#define ENTRY_PREFIX 8 /* u64 time before each record */

/*
 * In a self-timed stream (rsp_window_config.time_offset), a record that
 * does not hold its time at the stream's offset (a gap marker; any record
 * whose type is this one's) is stored behind this wrapper: a header with
 * a type no perf or rsp record has, then the time. 16 bytes, rare.
 */
#define WRAP_TYPE 0x50415257u /* "WRAP" */
struct wrap {
	struct perf_event_header h; /* type WRAP_TYPE, size sizeof(struct wrap) */
	uint64_t time;
};

/* An entry of a chunk of references: the time and where the record lives. */
struct ref_entry {
	uint64_t time;
	const struct perf_event_header *rec;
};

/*
 * Records and bytes of each kind a chunk holds (RSP_WKIND_*), counted as
 * they are appended: stats sum the linked chunks' counts, and a chunk's
 * leave with it when it is evicted. Counted here rather than by walking a
 * pinned snapshot when asked, because plain `rspctl status` shows them and
 * must stay cheap (a sum over chunks, not a pass over a million records),
 * while counting costs the writer two adds in a table it already has in
 * cache. 1.25 KiB per chunk beside its data (0.1% of 1 MiB chunks).
 */
struct kind_count {
	_Atomic uint32_t records;
	_Atomic uint32_t bytes; /* a chunk's data is far below 4 GiB */
};

/*
 * Cold chunks compressed (rsp_window__compress()): a sealed chunk's bytes
 * as one zstd frame, in a chunk of its own that takes the sealed one's
 * place in its list (same seq, times, counts; `used` still the raw size).
 * A pin decompresses the ones it takes into memory of its own, so readers
 * see raw records, pointer-stable while pinned, as before.
 *
 * What a compressed chunk counts against the budget: its size, but at
 * least its raw bytes / ZRATIO_MAX, so that the records a full window can
 * hold, and a query over all of it must decompress, stay within
 * ZRATIO_MAX x the budget whatever the records are (a stream of zeros
 * compresses 1000x). At 4, a whole 64 MiB window decompresses into at most
 * 256 MiB (rspd's --query-memory auto is 8x what its window holds raw).
 *
 * zstd at level -3 (its fast mode): on 119 chunks (119 MiB) of rspd's BPF
 * window under full pgbench load (--stacks sleeps), compressed one by one
 * with one context as here, 3 passes each (BENCHMARKS.md): level 3 5.15x
 * at 3.9-4.9 ms of CPU a MiB, 1 4.95x at 3.3-3.8, -1 4.81x at 2.9-3.3, -2
 * 5.01x at 2.2-2.7, -3 4.80x at 2.2, -4 4.71x at 2.0-2.7, -5 3.77x at 1.8,
 * -7 3.16x at 1.7; decompression 0.85 ms a MiB at -3, 1.2 at 1. Above
 * ZRATIO_MAX the ratio buys nothing, so the fastest level well above it.
 * A chunk that does not shrink by 1/8 is left raw (and not tried again).
 */
#define ZRATIO_MAX 4u
#define ZLEVEL	   (-3)

struct rsp_chunk {
	struct rsp_chunk *next; /* newer chunk of the same CPU */
	uint32_t cpu;
	uint32_t refs;	   /* readers pinning it (under lock) */
	bool evicted;	   /* unlinked; freed by the last unpin */
	bool refs_only;	   /* holds struct ref_entry, not copies of records */
	bool compressed;   /* data holds a zstd frame (zsize bytes) of `used` bytes */
	bool raw_kept;	   /* tried and did not compress: left raw */
	uint16_t time_off; /* records carry their time here (0: an 8-byte prefix) */
	uint64_t seq;	   /* which linking this is (a reused chunk gets a new one) */
	_Atomic uint64_t t_min;
	_Atomic uint64_t t_max;
	_Atomic size_t used;
	_Atomic uint64_t nr_records;
	size_t cap;		    /* bytes of data[] */
	size_t zsize;		    /* compressed: the frame's bytes (rounded up to 8 in cap) */
	size_t side_off, side_used; /* compressed: its side records, raw, at data + side_off */
	size_t charge;		    /* what it counts against the budget: cap, or see ZRATIO_MAX */
	struct kind_count kinds[RSP_WINDOW_KINDS];
	alignas(8) unsigned char data[];
};

struct cpu_list {
	struct rsp_chunk *head; /* oldest */
	struct rsp_chunk *tail; /* being written */
};

/*
 * Streams: one list of chunks per (source, CPU): stream s holds records of
 * CPU s % nr_cpus (a window with two sources per CPU, the perf ring and a
 * BPF ring, has 2 * nr_cpus streams). Each stream is in time order; the
 * iterator merges them. Below, "cpu" indexes of lists are stream indexes.
 */
struct rsp_window {
	pthread_mutex_t lock;
	size_t budget;
	size_t chunk_size;
	unsigned nr_cpus;     /* streams */
	unsigned real_cpus;   /* CPUs: stream s is CPU s % real_cpus */
	uint16_t time_off[4]; /* per source: see rsp_window_config.time_offset */
	uint32_t side_kinds;  /* rsp_window_config.side_bpf_kinds */
	struct cpu_list *cpus;
	struct rsp_chunk *free; /* evicted chunks kept for reuse */
	size_t linked_bytes;	/* capacity of chunks in the lists */
	size_t allocated_bytes; /* capacity of every chunk that exists */
	uint64_t chunks;
	_Atomic uint64_t appended;
	_Atomic uint64_t dropped;
	_Atomic uint64_t lost_marked;
	uint64_t evicted_chunks;
	uint64_t evicted_records;
	uint64_t complete_from;
	uint64_t seq; /* chunks linked so far: the next one's rsp_chunk.seq */
	/* rsp_window__compress(): one caller at a time, under zlock */
	pthread_mutex_t zlock;
	ZSTD_CCtx *zc;
	unsigned char *zbuf; /* a frame's worst case for one chunk */
	size_t zbuf_cap;
	unsigned char *sbuf; /* the side records of the chunk being compressed */
	size_t sbuf_cap;
	uint64_t zchunks, zkept_raw;
	double zseconds;
};

struct snap_chunk {
	const struct rsp_chunk *c;
	const unsigned char *data; /* the records: c->data, or own */
	unsigned char *own;	   /* a compressed chunk's records, decompressed at pin */
	size_t used;		   /* bytes valid at pin time */
};

struct rsp_wsnap {
	struct rsp_window *w;
	unsigned nr_cpus; /* streams */
	unsigned real_cpus;
	size_t *first; /* per CPU: index of its first chunk in chunks[] */
	size_t *count; /* per CPU: number of chunks */
	struct snap_chunk *chunks;
	size_t nr_chunks;
	uint64_t oldest, newest;
};

static size_t pick_chunk_size(size_t budget, unsigned nr_cpus)
{
	size_t per = budget / ((size_t)nr_cpus * 8), size = CHUNK_MIN;

	while (size * 2 <= per && size < CHUNK_MAX)
		size *= 2;
	return size;
}

struct rsp_window *rsp_window__new(const struct rsp_window_config *cfg)
{
	struct rsp_window *w;
	unsigned per = cfg->streams_per_cpu ? cfg->streams_per_cpu : 1, streams;
	size_t chunk;

	if (!cfg->nr_cpus || cfg->nr_cpus > 65536 || per > 4) {
		errno = EINVAL;
		return NULL;
	}
	for (unsigned k = 0; k < 4; k++) {
		if (cfg->time_offset[k] % 8 || (cfg->time_offset[k] && k >= per)) {
			errno = EINVAL;
			return NULL;
		}
	}
	streams = cfg->nr_cpus * per;
	chunk = cfg->chunk_size ? cfg->chunk_size : pick_chunk_size(cfg->budget, streams);
	while (chunk > CHUNK_MIN && chunk * 2 * streams > cfg->budget)
		chunk /= 2;
	if (chunk < 256 || chunk % 8 || chunk * 2 * streams > cfg->budget) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cpus = calloc(streams, sizeof(*w->cpus));
	if (!w->cpus) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->zlock, NULL);
	w->budget = cfg->budget;
	w->chunk_size = chunk;
	w->nr_cpus = streams;
	w->real_cpus = cfg->nr_cpus;
	memcpy(w->time_off, cfg->time_offset, sizeof(w->time_off));
	w->side_kinds = cfg->side_bpf_kinds;
	return w;
}

static void free_list(struct rsp_chunk *c)
{
	while (c) {
		struct rsp_chunk *next = c->next;

		free(c);
		c = next;
	}
}

void rsp_window__delete(struct rsp_window *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->nr_cpus; i++)
		free_list(w->cpus[i].head);
	free_list(w->free);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->zlock);
	ZSTD_freeCCtx(w->zc);
	free(w->zbuf);
	free(w->sbuf);
	free(w->cpus);
	free(w);
}

unsigned rsp_window__nr_cpus(const struct rsp_window *w)
{
	return w->real_cpus;
}

/* An evicted chunk nobody reads any more: reuse it, or free it if over budget. */
static void release_chunk(struct rsp_window *w, struct rsp_chunk *c)
{
	if (w->allocated_bytes > w->budget || c->cap != w->chunk_size) {
		w->allocated_bytes -= c->cap;
		free(c);
		return;
	}
	c->next = w->free;
	w->free = c;
}

/*
 * Unlink the chunk with the oldest first record, whatever its CPU; under
 * lock. A chunk still being written (the tail of a CPU other than @rolling,
 * whose tail is full) goes last: on a quiet CPU it holds that CPU's newest
 * records too, and evicting it would cut a hole in the recent past.
 */
static bool evict_oldest(struct rsp_window *w, unsigned rolling)
{
	struct cpu_list *victim = NULL;
	bool victim_open = true;
	struct rsp_chunk *c;
	uint64_t best = UINT64_MAX, t;

	for (unsigned i = 0; i < w->nr_cpus; i++) {
		bool open;

		c = w->cpus[i].head;
		if (!c)
			continue;
		open = c == w->cpus[i].tail && i != rolling;
		t = atomic_load_explicit(&c->t_min, memory_order_relaxed);
		if (!victim || (victim_open && !open) || (open == victim_open && t < best)) {
			best = t;
			victim = &w->cpus[i];
			victim_open = open;
		}
	}
	if (!victim)
		return false;
	c = victim->head;
	victim->head = c->next;
	if (victim->tail == c)
		victim->tail = NULL;
	w->linked_bytes -= c->charge;
	w->chunks--;
	w->evicted_chunks++;
	w->evicted_records += atomic_load_explicit(&c->nr_records, memory_order_relaxed);
	t = atomic_load_explicit(&c->t_max, memory_order_relaxed);
	if (t > w->complete_from)
		w->complete_from = t;
	c->evicted = true;
	c->next = NULL;
	if (!c->refs)
		release_chunk(w, c);
	return true;
}

static void chunk_reset(struct rsp_window *w, struct rsp_chunk *c, unsigned cpu, bool refs)
{
	c->next = NULL;
	c->cpu = cpu;
	c->refs = 0;
	c->evicted = false;
	c->refs_only = refs;
	c->compressed = false;
	c->raw_kept = false;
	c->side_off = c->side_used = 0;
	c->charge = c->cap;
	c->time_off = refs ? 0 : w->time_off[cpu / w->real_cpus];
	atomic_store_explicit(&c->t_min, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&c->t_max, 0, memory_order_relaxed);
	atomic_store_explicit(&c->nr_records, 0, memory_order_relaxed);
	atomic_store_explicit(&c->used, 0, memory_order_relaxed);
	for (unsigned k = 0; k < RSP_WINDOW_KINDS; k++) {
		atomic_store_explicit(&c->kinds[k].records, 0, memory_order_relaxed);
		atomic_store_explicit(&c->kinds[k].bytes, 0, memory_order_relaxed);
	}
}

/* Seal @cpu's chunk and link a fresh one, evicting to stay in budget. */
static struct rsp_chunk *roll(struct rsp_window *w, unsigned cpu, bool refs)
{
	struct cpu_list *l = &w->cpus[cpu];
	struct rsp_chunk *c = NULL;

	pthread_mutex_lock(&w->lock);
	while (w->linked_bytes + w->chunk_size > w->budget && evict_oldest(w, cpu))
		;
	if (w->free) {
		c = w->free;
		w->free = c->next;
	} else {
		c = malloc(sizeof(*c) + w->chunk_size);
		if (c) {
			c->cap = w->chunk_size;
			w->allocated_bytes += c->cap;
		}
	}
	if (c) {
		chunk_reset(w, c, cpu, refs);
		c->seq = ++w->seq;
		if (l->tail)
			l->tail->next = c;
		else
			l->head = c;
		l->tail = c;
		w->linked_bytes += c->charge;
		w->chunks++;
	}
	pthread_mutex_unlock(&w->lock);
	return c;
}

/* Account an entry written at the end of @c and make it visible to readers (inline: per record). */
static inline __attribute__((always_inline)) void publish(struct rsp_window *w, struct rsp_chunk *c,
							  uint64_t time, size_t used, unsigned kind,
							  size_t bytes)
{
	struct kind_count *k = &c->kinds[kind];

	atomic_store_explicit(&k->records,
			      atomic_load_explicit(&k->records, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(
		&k->bytes, atomic_load_explicit(&k->bytes, memory_order_relaxed) + (uint32_t)bytes,
		memory_order_relaxed);
	if (time < atomic_load_explicit(&c->t_min, memory_order_relaxed))
		atomic_store_explicit(&c->t_min, time, memory_order_relaxed);
	if (time > atomic_load_explicit(&c->t_max, memory_order_relaxed))
		atomic_store_explicit(&c->t_max, time, memory_order_relaxed);
	atomic_store_explicit(&c->nr_records,
			      atomic_load_explicit(&c->nr_records, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&c->used, used, memory_order_release);
	atomic_store_explicit(&w->appended,
			      atomic_load_explicit(&w->appended, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/*
 * The bytes before @rec in a stream of time offset @off: none when the
 * record holds @time there, else a wrapper (self-timed) or the prefix.
 */
static size_t entry_prefix(unsigned off, uint64_t time, const struct perf_event_header *rec)
{
	uint64_t t;

	if (!off)
		return ENTRY_PREFIX;
	if (rec->type == WRAP_TYPE || rec->size < off + sizeof(t))
		return sizeof(struct wrap);
	memcpy(&t, (const unsigned char *)rec + off, sizeof(t));
	return t == time ? 0 : sizeof(struct wrap);
}

/* Write @rec behind its @pre bytes of prefix at @p. */
static void entry_write(unsigned char *p, size_t pre, uint64_t time,
			const struct perf_event_header *rec)
{
	if (pre == ENTRY_PREFIX) {
		memcpy(p, &time, ENTRY_PREFIX);
	} else if (pre) {
		struct wrap wr = {.h = {.type = WRAP_TYPE, .size = sizeof(wr)}, .time = time};

		memcpy(p, &wr, sizeof(wr));
	}
	memcpy(p + pre, rec, rec->size);
}

/* The kind a record's header tells (inline: per record). */
static inline unsigned kind_of(const struct perf_event_header *rec)
{
	if (RSP_BREC_IS_TYPE(rec->type))
		return RSP_WKIND_BPF(RSP_BREC_TYPE_KIND(rec->type));
	return RSP_WKIND_PERF(rec->type);
}

int rsp_window__append(struct rsp_window *w, unsigned cpu, uint64_t time,
		       const struct perf_event_header *rec)
{
	return rsp_window__append_kind(w, cpu, time, rec, kind_of(rec));
}

int rsp_window__append_kind(struct rsp_window *w, unsigned cpu, uint64_t time,
			    const struct perf_event_header *rec, unsigned kind)
{
	struct rsp_chunk *c;
	size_t used, need, pre;

	if (cpu >= w->nr_cpus || rec->size < sizeof(*rec) || rec->size % 8 ||
	    kind >= RSP_WINDOW_KINDS)
		return -EINVAL;
	pre = entry_prefix(w->time_off[cpu / w->real_cpus], time, rec);
	need = pre + rec->size;
	if (need > w->chunk_size) {
		atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
		return -E2BIG;
	}
	c = w->cpus[cpu].tail;
	used = c ? atomic_load_explicit(&c->used, memory_order_relaxed) : 0;
	if (!c || c->refs_only || used + need > c->cap) {
		c = roll(w, cpu, false);
		if (!c) {
			atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
			return -ENOMEM;
		}
		used = 0;
	}
	entry_write(c->data + used, pre, time, rec);
	publish(w, c, time, used + need, kind, need);
	return 0;
}

int rsp_window__append_ref(struct rsp_window *w, unsigned cpu, uint64_t time,
			   const struct perf_event_header *rec)
{
	struct ref_entry e = {time, rec};
	struct rsp_chunk *c;
	size_t used;

	/* The record is not read here: the caller checked it, and touching it
	 * would bring a cold line of a large file into the cache for nothing. */
	if (cpu >= w->nr_cpus || (uintptr_t)rec % 8)
		return -EINVAL;
	c = w->cpus[cpu].tail;
	used = c ? atomic_load_explicit(&c->used, memory_order_relaxed) : 0;
	if (!c || !c->refs_only || used + sizeof(e) > c->cap) {
		c = roll(w, cpu, true);
		if (!c) {
			atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
			return -ENOMEM;
		}
		used = 0;
	}
	memcpy(c->data + used, &e, sizeof(e));
	/* other: the record's kind would take reading it (and a reference is
	 * not the record's bytes) */
	publish(w, c, time, used + sizeof(e), RSP_WKIND_OTHER, sizeof(e));
	return 0;
}

_Static_assert(sizeof(struct ref_entry) == sizeof(struct rsp_wref) &&
		       offsetof(struct ref_entry, rec) == offsetof(struct rsp_wref, rec),
	       "a struct rsp_wref is stored as a struct ref_entry");

/* Store the first references of @v that fit in @c after @used; how many. */
static size_t refs_into(struct rsp_window *w, struct rsp_chunk *c, size_t used,
			const struct rsp_wref *v, size_t n, int *err)
{
	size_t k = (c->cap - used) / sizeof(*v), i;
	uint64_t lo = atomic_load_explicit(&c->t_min, memory_order_relaxed);
	uint64_t hi = atomic_load_explicit(&c->t_max, memory_order_relaxed);
	struct kind_count *kc = &c->kinds[RSP_WKIND_OTHER];

	if (k > n)
		k = n;
	for (i = 0; i < k; i++) {
		if ((uintptr_t)v[i].rec % 8) {
			*err = -EINVAL;
			break;
		}
		lo = v[i].time < lo ? v[i].time : lo;
		hi = v[i].time > hi ? v[i].time : hi;
	}
	k = i;
	if (!k)
		return 0;
	memcpy(c->data + used, v, k * sizeof(*v));
	/* publish() for k entries */
	atomic_store_explicit(&kc->records,
			      atomic_load_explicit(&kc->records, memory_order_relaxed) +
				      (uint32_t)k,
			      memory_order_relaxed);
	atomic_store_explicit(&kc->bytes,
			      atomic_load_explicit(&kc->bytes, memory_order_relaxed) +
				      (uint32_t)(k * sizeof(*v)),
			      memory_order_relaxed);
	atomic_store_explicit(&c->t_min, lo, memory_order_relaxed);
	atomic_store_explicit(&c->t_max, hi, memory_order_relaxed);
	atomic_store_explicit(&c->nr_records,
			      atomic_load_explicit(&c->nr_records, memory_order_relaxed) + k,
			      memory_order_relaxed);
	atomic_store_explicit(&c->used, used + k * sizeof(*v), memory_order_release);
	atomic_store_explicit(&w->appended,
			      atomic_load_explicit(&w->appended, memory_order_relaxed) + k,
			      memory_order_relaxed);
	return k;
}

size_t rsp_window__append_refs(struct rsp_window *w, unsigned cpu, const struct rsp_wref *v,
			       size_t n, int *err)
{
	size_t done = 0;

	*err = 0;
	if (cpu >= w->nr_cpus) {
		*err = n ? -EINVAL : 0;
		return 0;
	}
	while (done < n && !*err) {
		struct rsp_chunk *c = w->cpus[cpu].tail;
		size_t used = c ? atomic_load_explicit(&c->used, memory_order_relaxed) : 0;

		if (!c || !c->refs_only || used + sizeof(*v) > c->cap) {
			/* as append_ref(): a misaligned first reference is refused before a roll */
			if ((uintptr_t)v[done].rec % 8) {
				*err = -EINVAL;
				break;
			}
			c = roll(w, cpu, true);
			if (!c) {
				atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
				*err = -ENOMEM;
				break;
			}
			used = 0;
		}
		done += refs_into(w, c, used, v + done, n - done, err);
	}
	return done;
}

int rsp_window__note_lost(struct rsp_window *w, unsigned cpu, uint64_t time, uint64_t nr)
{
	/* PERF_RECORD_LOST {id, lost} + trailer {tid, time, cpu, identifier}. */
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
		uint64_t tid, time, cpu, identifier;
	} rec = {
		.h = {.type = PERF_RECORD_LOST, .misc = 0, .size = sizeof(rec)},
		.lost = nr,
		.time = time,
		.cpu = cpu % w->real_cpus,
	};

	atomic_fetch_add_explicit(&w->lost_marked, nr, memory_order_relaxed);
	return rsp_window__append(w, cpu, time, &rec.h);
}

/* Cold enough to compress: sealed (not its list's tail), copies, not tried, older than @before. */
static bool compressible(const struct rsp_window *w, const struct rsp_chunk *c, uint64_t before)
{
	return !c->compressed && !c->raw_kept && !c->refs_only && !c->evicted &&
	       c != w->cpus[c->cpu].tail &&
	       atomic_load_explicit(&c->nr_records, memory_order_relaxed) &&
	       atomic_load_explicit(&c->t_max, memory_order_relaxed) < before;
}

/*
 * The next entry of @c's records at @off (its prefix or wrapper included):
 * its length, and the record in *@rec. 0 at the end. The layouts are
 * entry_write()'s; the iterator (timed_next(), cursor_next()) steps them
 * inline, reading each entry's time as it goes.
 */
static size_t entry_at(const struct rsp_chunk *c, size_t used, size_t off,
		       const struct perf_event_header **rec)
{
	const unsigned char *p = c->data + off;
	const struct perf_event_header *h = (const void *)p;

	if (!c->time_off) {
		if (off + ENTRY_PREFIX + sizeof(*h) > used)
			return 0;
		*rec = (const void *)(p + ENTRY_PREFIX);
		return ENTRY_PREFIX + (*rec)->size;
	}
	if (off + sizeof(*h) > used)
		return 0;
	if (h->type == WRAP_TYPE) {
		*rec = (const void *)(p + sizeof(struct wrap));
		return sizeof(struct wrap) + (*rec)->size;
	}
	*rec = h;
	return h->size;
}

/*
 * Copy the entries of @c whose records are of the window's side kinds into
 * w->sbuf (under zlock), their bytes into *@n. -ENOMEM or 0.
 */
static int side_records(struct rsp_window *w, const struct rsp_chunk *c, size_t *n)
{
	size_t used = atomic_load_explicit(&c->used, memory_order_relaxed), off = 0, len;
	const struct perf_event_header *rec;

	*n = 0;
	if (!w->side_kinds || !c->time_off)
		return 0; /* only self-timed streams carry rsp's BPF records */
	for (; (len = entry_at(c, used, off, &rec)); off += len) {
		if (!RSP_BREC_IS_TYPE(rec->type) ||
		    !(w->side_kinds >> RSP_BREC_TYPE_KIND(rec->type) & 1))
			continue;
		if (rsp_vec__reserve((void **)&w->sbuf, &w->sbuf_cap, *n + len, 1))
			return -ENOMEM;
		memcpy(w->sbuf + *n, c->data + off, len);
		*n += len;
	}
	return 0;
}

/*
 * @c's compressed twin, its frame taken from w->zbuf (@zsize bytes) and its
 * side records from w->sbuf (@side bytes); NULL on ENOMEM.
 */
static struct rsp_chunk *twin(const struct rsp_chunk *c, const unsigned char *frame, size_t zsize,
			      const unsigned char *sbuf, size_t side)
{
	size_t off = (zsize + 7) & ~(size_t)7, cap = off + side,
	       used = atomic_load_explicit(&c->used, memory_order_relaxed);
	struct rsp_chunk *z = malloc(sizeof(*z) + cap);

	if (!z)
		return NULL;
	z->next = NULL;
	z->cpu = c->cpu;
	z->refs = 0;
	z->evicted = false;
	z->refs_only = false;
	z->compressed = true;
	z->raw_kept = false;
	z->time_off = c->time_off;
	z->seq = c->seq;
	atomic_init(&z->t_min, atomic_load_explicit(&c->t_min, memory_order_relaxed));
	atomic_init(&z->t_max, atomic_load_explicit(&c->t_max, memory_order_relaxed));
	atomic_init(&z->used, used);
	atomic_init(&z->nr_records, atomic_load_explicit(&c->nr_records, memory_order_relaxed));
	z->cap = cap;
	z->zsize = zsize;
	z->side_off = off;
	z->side_used = side;
	z->charge = cap > used / ZRATIO_MAX ? cap : used / ZRATIO_MAX;
	for (unsigned k = 0; k < RSP_WINDOW_KINDS; k++) {
		atomic_init(&z->kinds[k].records,
			    atomic_load_explicit(&c->kinds[k].records, memory_order_relaxed));
		atomic_init(&z->kinds[k].bytes,
			    atomic_load_explicit(&c->kinds[k].bytes, memory_order_relaxed));
	}
	memcpy(z->data, frame, zsize);
	memset(z->data + zsize, 0, off - zsize);
	if (side)
		memcpy(z->data + off, sbuf, side);
	return z;
}

/* Put @z in @c's place in its list; under lock. @c is then freed by its last unpin. */
static void swap_in(struct rsp_window *w, struct rsp_chunk *c, struct rsp_chunk *z)
{
	struct cpu_list *l = &w->cpus[c->cpu];
	struct rsp_chunk **pp = &l->head;

	while (*pp != c)
		pp = &(*pp)->next;
	z->next = c->next;
	*pp = z;
	w->linked_bytes = w->linked_bytes - c->charge + z->charge;
	w->allocated_bytes += z->cap;
	c->evicted = true; /* unlinked: released when its last reader unpins */
	c->next = NULL;
}

/* The calling thread's CPU time: what compressing costs, not how long it was preempted. */
static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Compress one chunk the caller holds a reference on (sealed: nobody
 * writes it): its twin, or NULL with *@raw set when the frame would not
 * be 1/8 smaller, or NULL on ENOMEM.
 */
static struct rsp_chunk *squeeze(struct rsp_window *w, const struct rsp_chunk *c, bool *raw)
{
	size_t used = atomic_load_explicit(&c->used, memory_order_relaxed);
	size_t bound = ZSTD_compressBound(used), n;
	size_t side;

	*raw = false;
	if (!w->zc) {
		w->zc = ZSTD_createCCtx();
		if (!w->zc)
			return NULL;
	}
	if (w->zbuf_cap < bound) {
		unsigned char *b = realloc(w->zbuf, bound);

		if (!b)
			return NULL;
		w->zbuf = b;
		w->zbuf_cap = bound;
	}
	n = ZSTD_compressCCtx(w->zc, w->zbuf, w->zbuf_cap, c->data, used, ZLEVEL);
	if (ZSTD_isError(n) || n > used - used / 8) {
		*raw = true;
		return NULL;
	}
	if (side_records(w, c, &side))
		return NULL;
	return twin(c, w->zbuf, n, w->sbuf, side);
}

int rsp_window__compress(struct rsp_window *w, uint64_t before, unsigned max)
{
	enum { BATCH = 16 };
	struct rsp_chunk *todo[BATCH], *done[BATCH];
	bool raw[BATCH];
	int total = 0, ret = 0;

	pthread_mutex_lock(&w->zlock);
	while (!ret && (!max || (unsigned)total < max)) {
		size_t n = 0, want = BATCH;
		double t0;

		if (max && max - (unsigned)total < want)
			want = max - (unsigned)total;
		/* Take a batch (a reference on each: eviction may unlink them meanwhile). */
		pthread_mutex_lock(&w->lock);
		for (unsigned i = 0; i < w->nr_cpus && n < want; i++)
			for (struct rsp_chunk *c = w->cpus[i].head; c && n < want; c = c->next)
				if (compressible(w, c, before)) {
					c->refs++;
					todo[n++] = c;
				}
		pthread_mutex_unlock(&w->lock);
		if (!n)
			break;
		t0 = thread_cpu_s();
		for (size_t i = 0; i < n; i++) {
			done[i] = squeeze(w, todo[i], &raw[i]);
			if (!done[i] && !raw[i])
				ret = -ENOMEM;
		}
		pthread_mutex_lock(&w->lock);
		w->zseconds += thread_cpu_s() - t0;
		for (size_t i = 0; i < n; i++) {
			struct rsp_chunk *c = todo[i];

			if (done[i] && !c->evicted) {
				w->zchunks++;
				swap_in(w, c, done[i]);
				total++;
			} else {
				free(done[i]); /* evicted meanwhile: its twin goes too */
				if (raw[i]) {
					c->raw_kept = true;
					w->zkept_raw++;
				}
			}
			if (--c->refs == 0 && c->evicted)
				release_chunk(w, c);
		}
		pthread_mutex_unlock(&w->lock);
	}
	pthread_mutex_unlock(&w->zlock);
	return ret ? ret : total;
}

/*
 * A chunk's counts by kind, and its records and bytes as their sums: the
 * writer may go on meanwhile, and the totals then still add up.
 */
static void add_kinds(struct rsp_window_stats *st, const struct rsp_chunk *c)
{
	for (unsigned k = 0; k < RSP_WINDOW_KINDS; k++) {
		uint32_t n = atomic_load_explicit(&c->kinds[k].records, memory_order_relaxed);
		uint32_t b = atomic_load_explicit(&c->kinds[k].bytes, memory_order_relaxed);

		st->kinds[k].records += n;
		st->kinds[k].bytes += b;
		st->records += n;
		st->bytes_used += b;
	}
}

void rsp_window__stats(struct rsp_window *w, struct rsp_window_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&w->lock);
	st->budget = w->budget;
	st->chunk_size = w->chunk_size;
	st->bytes_allocated = w->allocated_bytes;
	st->chunks = w->chunks;
	st->evicted_chunks = w->evicted_chunks;
	st->evicted_records = w->evicted_records;
	st->complete_from = w->complete_from;
	st->zchunks = w->zchunks;
	st->zkept_raw = w->zkept_raw;
	st->zseconds = w->zseconds;
	for (unsigned i = 0; i < w->nr_cpus; i++) {
		for (struct rsp_chunk *c = w->cpus[i].head; c; c = c->next) {
			uint64_t lo = atomic_load_explicit(&c->t_min, memory_order_relaxed);
			uint64_t hi = atomic_load_explicit(&c->t_max, memory_order_relaxed);
			uint64_t n = atomic_load_explicit(&c->nr_records, memory_order_relaxed);
			size_t raw = st->bytes_used;

			add_kinds(st, c);
			raw = st->bytes_used - raw;
			if (c->compressed) {
				st->compressed_chunks++;
				st->compressed_raw += raw;
				st->compressed_bytes += c->cap;
				st->bytes_stored += c->cap;
			} else {
				st->bytes_stored += raw;
			}
			if (!n)
				continue;
			if (!st->oldest || lo < st->oldest)
				st->oldest = lo;
			if (hi > st->newest)
				st->newest = hi;
		}
	}
	pthread_mutex_unlock(&w->lock);
	st->appended = atomic_load_explicit(&w->appended, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&w->dropped, memory_order_relaxed);
	st->lost_marked = atomic_load_explicit(&w->lost_marked, memory_order_relaxed);
}

size_t rsp_window__bytes_used(struct rsp_window *w)
{
	size_t n = 0;

	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < w->nr_cpus; i++)
		for (struct rsp_chunk *c = w->cpus[i].head; c; c = c->next)
			n += atomic_load_explicit(&c->used, memory_order_relaxed);
	pthread_mutex_unlock(&w->lock);
	return n;
}

uint64_t rsp_window__complete_from(struct rsp_window *w)
{
	uint64_t t;

	pthread_mutex_lock(&w->lock);
	t = w->complete_from;
	pthread_mutex_unlock(&w->lock);
	return t;
}

static bool chunk_overlaps(const struct rsp_chunk *c, uint64_t from, uint64_t to)
{
	uint64_t lo = atomic_load_explicit(&c->t_min, memory_order_relaxed);
	uint64_t hi = atomic_load_explicit(&c->t_max, memory_order_relaxed);

	return atomic_load_explicit(&c->nr_records, memory_order_relaxed) && hi >= from && lo <= to;
}

static size_t count_overlapping(struct rsp_window *w, uint64_t from, uint64_t to)
{
	size_t n = 0;

	for (unsigned i = 0; i < w->nr_cpus; i++)
		for (struct rsp_chunk *c = w->cpus[i].head; c; c = c->next)
			n += chunk_overlaps(c, from, to);
	return n;
}

static void snap_take(struct rsp_wsnap *s, struct rsp_chunk *c, bool side)
{
	struct snap_chunk *sc = &s->chunks[s->nr_chunks++];
	uint64_t lo = atomic_load_explicit(&c->t_min, memory_order_relaxed);
	uint64_t hi;

	c->refs++;
	sc->c = c;
	sc->data = c->compressed ? NULL : c->data; /* NULL: decompressed when read */
	sc->own = NULL;
	sc->used = atomic_load_explicit(&c->used, memory_order_acquire);
	if (side && c->compressed) { /* its side records only */
		sc->data = c->data + c->side_off;
		sc->used = c->side_used;
	}
	/* t_max is stored before used is published: it covers sc->used. */
	hi = atomic_load_explicit(&c->t_max, memory_order_relaxed);
	if (!s->oldest || lo < s->oldest)
		s->oldest = lo;
	if (hi > s->newest)
		s->newest = hi;
}

/*
 * Decompress the snapshot's compressed chunks into memory of its own
 * (outside the lock: the references keep them). -1 and errno on failure.
 */
static int inflate_all(struct rsp_wsnap *s)
{
	ZSTD_DCtx *d = NULL;
	int ret = 0;

	for (size_t i = 0; i < s->nr_chunks && !ret; i++) {
		struct snap_chunk *sc = &s->chunks[i];
		size_t n;

		if (!sc->c->compressed)
			continue;
		if (!d)
			d = ZSTD_createDCtx();
		sc->own = d ? malloc(sc->used ? sc->used : 1) : NULL;
		if (!sc->own) {
			errno = ENOMEM;
			ret = -1;
			break;
		}
		n = ZSTD_decompressDCtx(d, sc->own, sc->used, sc->c->data, sc->c->zsize);
		if (ZSTD_isError(n) || n != sc->used) {
			errno = ZSTD_isError(n) &&
						ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation
					? ENOMEM
					: EIO;
			ret = -1;
			break;
		}
		sc->data = sc->own;
	}
	ZSTD_freeDCtx(d);
	return ret;
}

static struct rsp_wsnap *pin(struct rsp_window *w, uint64_t from, uint64_t to, bool stream,
			     bool side)
{
	struct rsp_wsnap *s = calloc(1, sizeof(*s));
	size_t n;

	if (!s)
		return NULL;
	s->w = w;
	s->nr_cpus = w->nr_cpus;
	s->real_cpus = w->real_cpus;
	s->first = calloc(w->nr_cpus, sizeof(*s->first));
	s->count = calloc(w->nr_cpus, sizeof(*s->count));
	pthread_mutex_lock(&w->lock);
	/*
	 * The writer publishes into each stream's newest chunk without the
	 * lock: between the count and the taking below, that chunk may get its
	 * first record or one in range. Sealed chunks do not change and none is
	 * linked while the lock is held: at most one more chunk per stream.
	 */
	n = count_overlapping(w, from, to) + w->nr_cpus;
	s->chunks = calloc(n, sizeof(*s->chunks));
	if (!s->first || !s->count || !s->chunks) {
		pthread_mutex_unlock(&w->lock);
		free(s->first);
		free(s->count);
		free(s->chunks);
		free(s);
		return NULL;
	}
	for (unsigned i = 0; i < w->nr_cpus; i++) {
		s->first[i] = s->nr_chunks;
		for (struct rsp_chunk *c = w->cpus[i].head; c; c = c->next)
			if (chunk_overlaps(c, from, to))
				snap_take(s, c, side);
		s->count[i] = s->nr_chunks - s->first[i];
	}
	pthread_mutex_unlock(&w->lock);
	if (!stream && inflate_all(s)) {
		int err = errno;

		rsp_wsnap__unpin(s);
		errno = err;
		return NULL;
	}
	return s;
}

struct rsp_wsnap *rsp_window__pin(struct rsp_window *w, uint64_t from, uint64_t to)
{
	return pin(w, from, to, false, false);
}

struct rsp_wsnap *rsp_window__pin_stream(struct rsp_window *w, uint64_t from, uint64_t to)
{
	return pin(w, from, to, true, false);
}

struct rsp_wsnap *rsp_window__pin_side(struct rsp_window *w, uint64_t from, uint64_t to)
{
	return pin(w, from, to, true, true);
}

uint32_t rsp_window__side_kinds(const struct rsp_window *w)
{
	return w->side_kinds;
}

void rsp_wsnap__unpin(struct rsp_wsnap *s)
{
	struct rsp_window *w;

	if (!s)
		return;
	w = s->w;
	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < s->nr_chunks; i++) {
		struct rsp_chunk *c = (struct rsp_chunk *)s->chunks[i].c;

		if (--c->refs == 0 && c->evicted)
			release_chunk(w, c);
	}
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < s->nr_chunks; i++)
		free(s->chunks[i].own);
	free(s->chunks);
	free(s->first);
	free(s->count);
	free(s);
}

struct rsp_window *rsp_wsnap__window(const struct rsp_wsnap *s)
{
	return s->w;
}

void rsp_wsnap__span(const struct rsp_wsnap *s, uint64_t *oldest, uint64_t *newest)
{
	*oldest = s->oldest;
	*newest = s->newest;
}

/* Iteration: one cursor per CPU, a binary min-heap of CPUs by current time. */
struct cursor {
	size_t chunk;		   /* index into snap->chunks */
	size_t end;		   /* one past this CPU's last chunk */
	size_t off;		   /* in the current chunk */
	const unsigned char *data; /* the current chunk's records (NULL: not entered yet) */
	unsigned char *own;	   /* a streaming snapshot's chunk, decompressed here */
	struct rsp_wentry cur;
	struct rsp_wmark mark; /* its first record after @to, once seen (seq 0: not yet) */
};

struct rsp_witer {
	const struct rsp_wsnap *snap;
	uint64_t from, to;
	unsigned nr_heap;
	unsigned *heap; /* CPU indexes */
	struct cursor *cur;
	ZSTD_DCtx *d; /* a streaming snapshot's: made at the first compressed chunk */
	int err;      /* what ended a stream early (rsp_witer__error()) */
	/*
	 * Streaming: the record rsp_witer__next() is returning while it moves
	 * that record's cursor on, and the chunk holding it if the cursor left
	 * it: freed at the next call, so the record stays valid until then.
	 */
	const void *returning;
	unsigned char *keep;
};

/*
 * Enter the cursor's current chunk: its records are the snapshot's, or for
 * a compressed chunk of a streaming snapshot, decompressed into the
 * cursor's own buffer (the one of the chunk it left was freed then). False
 * (it->err set) when that fails: the stream ends there.
 */
static bool enter(struct rsp_witer *it, struct cursor *k, const struct snap_chunk *sc)
{
	size_t n;

	if (sc->data) {
		k->data = sc->data;
		return true;
	}
	if (!it->d)
		it->d = ZSTD_createDCtx();
	k->own = it->d ? malloc(sc->used ? sc->used : 1) : NULL;
	if (!k->own) {
		it->err = ENOMEM;
		return false;
	}
	n = ZSTD_decompressDCtx(it->d, k->own, sc->used, sc->c->data, sc->c->zsize);
	if (ZSTD_isError(n) || n != sc->used) {
		it->err = ZSTD_isError(n) && ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation
				  ? ENOMEM
				  : EIO;
		free(k->own);
		k->own = NULL;
		return false;
	}
	k->data = k->own;
	return true;
}

/*
 * Move the cursor to its next chunk, freeing what it decompressed of this
 * one, unless it holds the record being returned (kept until the next call).
 */
static void leave(struct rsp_witer *it, struct cursor *k, const struct snap_chunk *sc)
{
	k->chunk++;
	k->off = 0;
	k->data = NULL;
	if (k->own) {
		uintptr_t at = (uintptr_t)it->returning, lo = (uintptr_t)k->own;

		if (at >= lo && at < lo + sc->used)
			it->keep = k->own;
		else
			free(k->own);
		k->own = NULL;
	}
}

/* A record after the range, at @off of @sc: the first one is where the next range starts. */
static void mark_after(struct cursor *k, const struct snap_chunk *sc, size_t off)
{
	if (k->mark.seq)
		return;
	k->mark.seq = sc->c->seq; /* never 0: seqs count links from 1 */
	k->mark.off = off;
}

/*
 * No prefetch of referenced records ahead (a dump's records, in the mapped
 * file): asked for 6 entries ahead, with their second line and their end,
 * the graph of a 1.96M-record pgbench dump took 1.004x the CPU of a build
 * without (paired median of 10; 1.004x on an RPC window): read in time
 * order, per-CPU runs of a file, the hardware's prefetcher has them.
 * (Until 2026-11-27 the calls were in functions of their own that GCC
 * found without side effects and dropped: they never ran.)
 */
/* Bytes ahead of the record a stored-record cursor reads (timed_next()). */
#define WITER_AHEAD 384

/* Advance a cursor in a chunk of references; false at the chunk's end (inline: per record). */
static inline __attribute__((always_inline)) bool
ref_next(const struct rsp_witer *it, struct cursor *k, const struct snap_chunk *sc)
{
	while (k->off + sizeof(struct ref_entry) <= sc->used) {
		struct ref_entry e;

		memcpy(&e, k->data + k->off, sizeof(e));
		k->off += sizeof(e);
		if (e.time < it->from || e.time > it->to) {
			if (e.time > it->to)
				mark_after(k, sc, k->off - sizeof(e));
			continue;
		}
		k->cur.time = e.time;
		k->cur.rec = e.rec;
		return true;
	}
	return false;
}

/*
 * Advance a cursor in a chunk of a self-timed stream: each record holds
 * its time at the chunk's offset, or comes behind a wrapper that does.
 * False at the chunk's end (inline: per record).
 */
static inline __attribute__((always_inline)) bool
timed_next(const struct rsp_witer *it, struct cursor *k, const struct snap_chunk *sc)
{
	size_t off = sc->c->time_off;

	while (k->off + sizeof(struct perf_event_header) <= sc->used) {
		const unsigned char *p = k->data + k->off;
		const struct perf_event_header *h = (const void *)p;
		size_t at = k->off;
		uint64_t t;

		/*
		 * Records a few lines on: the histograms' thread reads each
		 * record soon after the drain wrote it, often on the other CPU,
		 * and waited for every line to come over (a third of its time
		 * in this function's first read of a record, under pgbench).
		 * Past the chunk's end a prefetch is only wasted, never a fault.
		 */
		__builtin_prefetch(p + WITER_AHEAD);
		if (h->type == WRAP_TYPE) {
			memcpy(&t, p + offsetof(struct wrap, time), sizeof(t));
			h = (const void *)(p + sizeof(struct wrap));
			k->off += sizeof(struct wrap) + h->size;
		} else {
			memcpy(&t, p + off, sizeof(t));
			k->off += h->size;
		}
		if (t < it->from || t > it->to) {
			if (t > it->to)
				mark_after(k, sc, at);
			continue;
		}
		k->cur.time = t;
		k->cur.rec = h;
		return true;
	}
	return false;
}

/* Advance a cursor to its next record in [from, to]; false at its end. Inline: per record. */
static inline __attribute__((always_inline)) bool cursor_next(struct rsp_witer *it, unsigned cpu)
{
	struct cursor *k = &it->cur[cpu];

	while (k->chunk < k->end) {
		const struct snap_chunk *sc = &it->snap->chunks[k->chunk];

		if (!k->data && !enter(it, k, sc))
			return false;
		if (sc->c->refs_only) {
			if (ref_next(it, k, sc))
				return true;
			leave(it, k, sc);
			continue;
		}
		if (sc->c->time_off) {
			if (timed_next(it, k, sc))
				return true;
			leave(it, k, sc);
			continue;
		}
		while (k->off + ENTRY_PREFIX + sizeof(struct perf_event_header) <= sc->used) {
			const unsigned char *p = k->data + k->off;
			const struct perf_event_header *h = (const void *)(p + ENTRY_PREFIX);
			uint64_t t;

			__builtin_prefetch(p + WITER_AHEAD); /* as timed_next() */
			memcpy(&t, p, sizeof(t));
			k->off += ENTRY_PREFIX + h->size;
			if (t < it->from || t > it->to) {
				if (t > it->to)
					mark_after(k, sc, (size_t)(p - k->data));
				continue;
			}
			k->cur.time = t;
			k->cur.rec = h;
			return true;
		}
		leave(it, k, sc);
	}
	/* every record was in range or before it: the next range starts at the end */
	if (k->end > it->snap->first[cpu])
		mark_after(k, &it->snap->chunks[k->end - 1], it->snap->chunks[k->end - 1].used);
	return false;
}

static bool heap_less(const struct rsp_witer *it, unsigned a, unsigned b)
{
	const struct rsp_wentry *x = &it->cur[a].cur, *y = &it->cur[b].cur;

	return x->time < y->time || (x->time == y->time && a < b);
}

/* Sift entry @i down. Inline: once per record. */
static inline __attribute__((always_inline)) void heap_down(struct rsp_witer *it, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < it->nr_heap && heap_less(it, it->heap[l], it->heap[m]))
			m = l;
		if (r < it->nr_heap && heap_less(it, it->heap[r], it->heap[m]))
			m = r;
		if (m == i)
			return;
		t = it->heap[i];
		it->heap[i] = it->heap[m];
		it->heap[m] = t;
		i = m;
	}
}

/* Start stream @i's cursor at @m, if its snapshot holds that chunk: what is before it is past. */
static void resume_at(struct rsp_witer *it, unsigned i, const struct rsp_wmark *m)
{
	struct cursor *k = &it->cur[i];

	if (!m->seq)
		return;
	for (size_t j = k->chunk; j < k->end; j++) {
		const struct snap_chunk *sc = &it->snap->chunks[j];

		if (sc->c->seq != m->seq)
			continue;
		if (m->off <= sc->used) {
			k->chunk = j;
			k->off = m->off;
		}
		return;
	}
}

struct rsp_witer *rsp_witer__new(const struct rsp_wsnap *snap, uint64_t from, uint64_t to)
{
	return rsp_witer__resume(snap, from, to, NULL);
}

unsigned rsp_wsnap__streams(const struct rsp_wsnap *snap)
{
	return snap->nr_cpus;
}

void rsp_witer__marks(const struct rsp_witer *it, struct rsp_wmark *marks)
{
	for (unsigned i = 0; i < it->snap->nr_cpus; i++)
		marks[i] = it->cur[i].mark;
}

struct rsp_witer *rsp_witer__resume(const struct rsp_wsnap *snap, uint64_t from, uint64_t to,
				    const struct rsp_wmark *marks)
{
	struct rsp_witer *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	it->snap = snap;
	it->from = from;
	it->to = to;
	it->heap = calloc(snap->nr_cpus, sizeof(*it->heap));
	it->cur = calloc(snap->nr_cpus, sizeof(*it->cur));
	if (!it->heap || !it->cur) {
		rsp_witer__delete(it);
		return NULL;
	}
	for (unsigned i = 0; i < snap->nr_cpus; i++) {
		it->cur[i].chunk = snap->first[i];
		it->cur[i].end = snap->first[i] + snap->count[i];
		/* a stream's CPU, set once (a division per record otherwise) */
		it->cur[i].cur.cpu = i % snap->real_cpus;
		if (marks)
			resume_at(it, i, &marks[i]);
		if (cursor_next(it, i))
			it->heap[it->nr_heap++] = i;
	}
	for (unsigned i = it->nr_heap / 2; i-- > 0;)
		heap_down(it, i);
	return it;
}

void rsp_witer__delete(struct rsp_witer *it)
{
	if (!it)
		return;
	if (it->cur)
		for (unsigned i = 0; i < it->snap->nr_cpus; i++)
			free(it->cur[i].own);
	ZSTD_freeDCtx(it->d);
	free(it->keep);
	free(it->heap);
	free(it->cur);
	free(it);
}

int rsp_witer__error(const struct rsp_witer *it)
{
	return it->err;
}

int rsp_witer__next(struct rsp_witer *it, struct rsp_wentry *e)
{
	unsigned top;

	if (it->keep) { /* the chunk of the record the last call returned, which its cursor left */
		free(it->keep);
		it->keep = NULL;
	}
	if (!it->nr_heap)
		return 0;
	top = it->heap[0];
	*e = it->cur[top].cur;
	it->returning = e->rec;
	if (!cursor_next(it, top))
		it->heap[0] = it->heap[--it->nr_heap];
	heap_down(it, 0);
	return 1;
}
