/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_HIST_STORE_H
#define RSP_INTERNAL_HIST_STORE_H

/*
 * The profile store's layout, shared by its writer (hist_store.c) and its
 * readers (hist_collect.c). The concurrency model is in rsp/hist.h.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <rsp/hist.h>
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
static inline uint64_t pkey(unsigned kind, unsigned opidx, uint32_t id)
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
	_Atomic uint64_t sq;	 /* sum of squared latencies: a double's bits (stddev) */
	_Atomic uint64_t offcpu; /* ns of the latencies spent off CPU (syscall ops) */
	/* writer only */
	uint32_t prev, next;  /* LRU list of evictable slots, most recent first */
	uint32_t pushed;      /* sh->pushes when it last went to the list's head */
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
	_Atomic uint64_t sq;	 /* as struct slot's */
	_Atomic uint64_t offcpu; /* as struct slot's */
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
	uint32_t pushes;      /* slots put at the LRU list's head, ever (wraps) */
	uint32_t push_within; /* a slot pushed fewer pushes ago stays (profile_slot()) */
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

/* A double kept in an _Atomic uint64_t (the sums of squares): its bits. */
static inline double sq_get(uint64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static inline uint64_t sq_bits(double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

static inline _Atomic uint64_t *slot_b(struct slot *s)
{
	return (_Atomic uint64_t *)(s + 1);
}

static inline _Atomic uint32_t *entry_b(struct sentry *e)
{
	return (_Atomic uint32_t *)(e + 1);
}

static inline struct slot *slot_at(const struct rsp_hist_shard *sh, uint32_t i)
{
	return (struct slot *)(sh->slots + (size_t)i * sh->slot_size);
}

static inline struct sentry *entry_at(const struct rsp_hist_shard *sh, const struct slice *s,
				      uint32_t i)
{
	return (struct sentry *)(s->pages[i / PAGE_ENTRIES]->data +
				 (size_t)(i % PAGE_ENTRIES) * sh->entry_size);
}

/* Reader side: wait for an even count; then copy; then check it again. */
static inline uint32_t seq_read_begin(_Atomic uint32_t *seq)
{
	unsigned spins = 0;
	uint32_t s;

	while ((s = atomic_load_explicit(seq, memory_order_acquire)) & 1)
		if (++spins % 64 == 0)
			sched_yield(); /* the writer was preempted mid-update */
	return s;
}

static inline bool seq_read_retry(_Atomic uint32_t *seq, uint32_t s)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(seq, memory_order_relaxed) != s;
}

static inline void load_comm(_Atomic uint64_t comm[2], char *out)
{
	uint64_t w[2] = {LD(comm[0]), LD(comm[1])};

	memcpy(out, w, RSP_HIST_COMM_LEN);
	out[RSP_HIST_COMM_LEN - 1] = '\0';
}

static inline int op_lookup(const struct rsp_hist_store *st, uint64_t op)
{
	uint32_t nr = atomic_load_explicit(&st->nr_ops, memory_order_acquire);

	for (uint32_t i = 0; i < nr; i++)
		if (LD(st->ops[i].key) == op)
			return (int)i;
	return -1;
}

#endif /* RSP_INTERNAL_HIST_STORE_H */
