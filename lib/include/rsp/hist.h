/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_HIST_H
#define RSP_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/sleepclass.h>

/*
 * Latency profiles (OSprof): log2 histograms of one operation's latency for
 * one subject, always on from rspd's start.
 *
 * Buckets. Latencies are nanoseconds. At resolution r=1, bucket 0 holds 0
 * and bucket b >= 1 holds [2^(b-1), 2^b - 1], so UINT64_MAX lands in bucket
 * 64 (65 buckets). At r=2 (half octaves) each octave [2^k, 2^(k+1)) is cut
 * at 2^k * sqrt(2): bucket 0 holds 0, bucket 1 + 2k holds [2^k, ceil(2^k
 * sqrt2) - 1] and bucket 2 + 2k holds [ceil(2^k sqrt2), 2^(k+1) - 1]
 * (129 buckets). Bucket 2 at r=2, [sqrt2, 2), holds no integer and is
 * always empty. An r=2 profile folds exactly into r=1 (buckets 1+2k and 2+2k
 * make r=1 bucket k+1). Every profile also keeps count, sum, min and max in
 * 64 bits, so mean and total latency are exact; percentiles and peak means
 * come from the buckets.
 *
 * Operations (the `op` key, a u64 built by RSP_HIST_OP(kind, arg)):
 *
 *   kind         arg                      name (as --op takes it)
 *   OFFCPU       enum rsp_sleep_reason    offcpu:lock, offcpu:block_io, ...
 *   RUNQ         0                        runq (woken -> on a CPU)
 *   BLK_QUEUE    kernel dev_t             blk_queue:254:0 or blk_queue:vda
 *   BLK_SERVICE  kernel dev_t             blk_service:254:0, blk_service:vda
 *   IRQ          irq name id (store's)    irq:virtio1-req.0 (handler name)
 *   SOFTIRQ      vector 0..9              softirq:NET_RX, softirq:TIMER, ...
 *   SYSCALL      syscall number           syscall:read, syscall:fsync, syscall:335
 *
 * A kernel dev_t is (major << 20) | minor, as the block tracepoints give it.
 * irq handlers are keyed by name, not number: a shared line runs several
 * handlers, each with its own entry/exit pair. The canonical name of an op
 * (rsp_hist_store__op_name) uses numbers for devices; names are labels.
 *
 * Subjects: the whole system, a process (tgid, with its comm), a thread
 * (tid, with its process and comm), and two catch-alls, "other processes"
 * and "other threads", that absorb the profiles evicted from the table.
 *
 * Concurrency model. A store has nr_shards shards; each shard has exactly
 * one writer thread (rsp_hist_store__shard() hands it out), and holds its
 * own profiles and slices. This is OSprof's per-CPU buckets: no cache line
 * is written by two CPUs and no update needs a locked instruction. rspd has
 * one writer, its analysis thread, hence one shard; more writers (a
 * parallel timeline) take more shards. Readers (queries) merge all shards.
 *   - Counters are _Atomic and written with relaxed loads and stores (one
 *     writer: no read-modify-write), so a reader never sees a torn value
 *     and no update is lost.
 *   - Each profile and each slice entry has a sequence count, bumped to odd
 *     before an update and to even after (release); a reader retries until
 *     it reads the same even count before and after (acquire), so it sees
 *     every update whole: count, sum and buckets agree.
 *   - Structural changes (a new profile, an eviction that merges a profile
 *     into "other", rolling to a new slice) take the shard's mutex, which
 *     readers hold while they copy a shard. The writer takes it once per
 *     new profile and once per slice; plain updates never lock.
 *
 * Memory is bounded by the configuration and never grows with the number
 * of subjects seen:
 *   - per shard, max_profiles process/thread profiles plus three per
 *     operation (system, other processes, other threads), at most
 *     RSP_HIST_MAX_OPS operations; a new process/thread profile beyond
 *     max_profiles evicts the least recently updated one, whose counts are
 *     added to "other processes"/"other threads" for that op (so the
 *     totals stay exact; that subject's past is no longer separate).
 *   - per shard, nr_slices time slices of slice_ns each (a ring: the
 *     oldest is reused). A slice holds sparse entries, one per profile
 *     updated during it, at most slice_cap process/thread entries plus the
 *     system and "other" entries. At the cap, a new process/thread's update
 *     goes to the slice's "other" entry of its op and is counted in the
 *     slice's overflow; nothing is dropped and the system entries are
 *     always exact. Entry memory is taken in pages as slices fill and
 *     reused when a slice is recycled.
 *   - at most RSP_HIST_MAX_OPS operations and RSP_HIST_MAX_IRQ_NAMES irq
 *     names; an update for an op beyond the table is counted as dropped
 *     (rsp_hist_stats.dropped), a handler name beyond it is "(other)".
 */

#define RSP_HIST_MAX_RES       2
#define RSP_HIST_NR_BUCKETS(r) (64u * (r) + 1u)
#define RSP_HIST_MAX_BUCKETS   RSP_HIST_NR_BUCKETS(RSP_HIST_MAX_RES)
#define RSP_HIST_MAX_OPS       256
#define RSP_HIST_MAX_IRQ_NAMES 128
#define RSP_HIST_COMM_LEN      16

/* floor(sqrt(2) * 2^63): the r=2 cut of an octave, as a Q63 mantissa. */
#define RSP_HIST_SQRT2_Q63 0xb504f333f9de6484ull

/**
 * rsp_hist__bucket() - the bucket of @v nanoseconds at resolution @r (1, 2)
 *
 * Inline: it is on every update. Two instructions at r=1, four at r=2.
 */
static inline unsigned rsp_hist__bucket(uint64_t v, unsigned r)
{
	unsigned k;

	if (!v)
		return 0;
	k = 63u - (unsigned)__builtin_clzll(v);
	if (r == 1)
		return k + 1;
	/* Upper half of the octave iff v >= 2^k sqrt2, i.e. v's mantissa > F. */
	return 1 + 2 * k + ((v << (63 - k)) > RSP_HIST_SQRT2_Q63);
}

/** rsp_hist__nr_buckets() - buckets at resolution @r: 65 (r=1) or 129 (r=2). */
RSP_API unsigned rsp_hist__nr_buckets(unsigned r);
/** rsp_hist__bucket_low() - smallest value of bucket @b at resolution @r. */
RSP_API uint64_t rsp_hist__bucket_low(unsigned b, unsigned r);
/**
 * rsp_hist__bucket_high() - largest value of bucket @b at resolution @r
 *
 * Less than the low bound for the one empty bucket (b=2 at r=2).
 */
RSP_API uint64_t rsp_hist__bucket_high(unsigned b, unsigned r);

/* ---- operations and subjects ------------------------------------------- */

enum rsp_hist_op_kind {
	RSP_HOP_OFFCPU,
	RSP_HOP_RUNQ,
	RSP_HOP_BLK_QUEUE,
	RSP_HOP_BLK_SERVICE,
	RSP_HOP_IRQ,
	RSP_HOP_SOFTIRQ,
	RSP_HOP_SYSCALL, /* arg: syscall number (rsp/sysprof.h) */
	RSP_HOP__NR
};

/*
 * Why a thread was off CPU: enum rsp_sleep_reason (rsp/sleepclass.h), as
 * the timeline classifies it; --op offcpu:NAME takes rsp_sleep_reason__name().
 */

#define RSP_HIST_NR_SOFTIRQS 10

#define RSP_HIST_OP(kind, arg) (((uint64_t)(kind) << 32) | (uint32_t)(arg))
#define RSP_HIST_OP_KIND(op)   ((unsigned)((op) >> 32))
#define RSP_HIST_OP_ARG(op)    ((uint32_t)(op))

enum rsp_hist_subject_kind {
	RSP_HSUBJ_SYSTEM,
	RSP_HSUBJ_PROCESS,
	RSP_HSUBJ_THREAD,
	RSP_HSUBJ_OTHER_PROCESS, /* evicted process profiles */
	RSP_HSUBJ_OTHER_THREAD,	 /* evicted thread profiles */
	RSP_HSUBJ_COMM,		 /* query side only: processes merged by comm */
	RSP_HSUBJ_CGROUP,	 /* query side only: processes merged by cgroup (--by cgroup) */
	RSP_HSUBJ__NR
};

struct rsp_hist_subject {
	enum rsp_hist_subject_kind kind;
	uint32_t pid; /* process (tgid): PROCESS, THREAD */
	uint32_t tid; /* THREAD */
	char comm[RSP_HIST_COMM_LEN];
	bool other_user; /* PROCESS, THREAD: another user's, shown without its comm */
	/*
	 * CGROUP: the cgroup v2 path, or a group that is none: "(unknown)",
	 * "(other user)", "(other processes)", "(other cgroups)". A profile in a
	 * set owns its copy (rsp_hist_set__get() makes it); elsewhere borrowed.
	 */
	const char *cgroup;
};

/**
 * struct rsp_hist_who - who performed an operation (process and thread)
 * @comm may be NULL; it is not NUL-terminated (@comm_len bytes at most).
 */
struct rsp_hist_who {
	uint32_t tgid, tid;
	const char *comm;
	uint32_t comm_len;
};

/** rsp_hist__op_kind_name() - "offcpu", "runq", ...; NULL when out of range. */
RSP_API const char *rsp_hist__op_kind_name(unsigned kind);
/** rsp_hist__sleep_reason_name() - "unknown", "block_io", ...; NULL when out of range. */
RSP_API const char *rsp_hist__sleep_reason_name(unsigned reason);
/** rsp_hist__subject_kind_name() - "system", "process", ...; NULL when out of range. */
RSP_API const char *rsp_hist__subject_kind_name(unsigned kind);
/**
 * rsp_hist_subject__format() - a subject's label into @buf (names escaped as
 * rsp_fmt__name() does); the only place subjects are worded.
 * @column: 0 for a heading or JSON: "system", "process 12 (make)", "thread 13
 *   (cc1) of 12", "comm make", "other processes", "other threads", "cgroup
 *   /a/b"; another user's "pid 12 (other user)", "thread 13 of pid 12 (other
 *   user)". Else the short form of a table's column that wide: "pid 12 make",
 *   "tid 13 cc1", "other procs", a cgroup's path shortened to @column
 *   (rsp_cgroup__short()); the caller cuts the rest at the column.
 */
RSP_API const char *rsp_hist_subject__format(const struct rsp_hist_subject *s, unsigned column,
					     char *buf, size_t n);

/**
 * rsp_hist__dev_name() - a block device's name from sysfs (/sys/dev/block)
 * @dev: kernel dev_t (major << 20 | minor)
 * Return: 0 and "vda" in @buf, or -ENOENT (then @buf holds "254:0").
 */
RSP_API int rsp_hist__dev_name(uint32_t dev, char *buf, size_t n);
/**
 * rsp_hist__dev_parse() - "254:0" or a name under /sys/class/block
 * Return: 0 and the kernel dev_t, or -ENOENT / -EINVAL.
 */
RSP_API int rsp_hist__dev_parse(const char *s, uint32_t *dev);

/* ---- the store (writers) ----------------------------------------------- */

struct rsp_hist_config {
	unsigned resolution;   /* 1 or 2 */
	unsigned max_profiles; /* per shard, process and thread profiles */
	uint64_t slice_ns;     /* length of a time slice */
	unsigned nr_slices;    /* slices kept per shard */
	unsigned slice_cap;    /* process/thread entries per slice */
	unsigned nr_shards;    /* writer threads */
};

#define RSP_HIST_DEFAULT_PROFILES  4096
#define RSP_HIST_DEFAULT_SLICE_NS  1000000000ull
#define RSP_HIST_DEFAULT_SLICES	   300
#define RSP_HIST_DEFAULT_SLICE_CAP 256

/** rsp_hist_config__init() - the defaults: r=1, 4096 profiles, 300 slices of 1 s, cap 256, one
 * shard. */
RSP_API void rsp_hist_config__init(struct rsp_hist_config *c);

struct rsp_hist_store;
struct rsp_hist_shard;

/**
 * rsp_hist_store__new() - an empty store
 * Return: the store, or NULL with errno EINVAL (resolution not 1 or 2, no
 * profiles, slice_ns 0, no slices or shards, more than 64 shards) or
 * ENOMEM. Free with rsp_hist_store__delete().
 */
RSP_API struct rsp_hist_store *rsp_hist_store__new(const struct rsp_hist_config *cfg);
/** rsp_hist_store__delete() - free the store; no writer or reader may use it. NULL is fine. */
RSP_API void rsp_hist_store__delete(struct rsp_hist_store *st);
/** rsp_hist_store__config() - the configuration it was made with. */
RSP_API const struct rsp_hist_config *rsp_hist_store__config(const struct rsp_hist_store *st);

/**
 * rsp_hist_store__shard() - the writer handle of shard @idx
 * Exactly one thread may write through a shard. Owned by the store.
 */
RSP_API struct rsp_hist_shard *rsp_hist_store__shard(struct rsp_hist_store *st, unsigned idx);

/**
 * rsp_hist_shard__add() - record one latency (writer only)
 * @op:    RSP_HIST_OP(kind, arg)
 * @time:  when the operation ended (CLOCK_MONOTONIC ns): picks the slice
 * @value: its latency in ns
 * @who:   the process and thread it belongs to; NULL (or tgid and tid 0,
 *         the idle task) for the system profile only
 *
 * Updates the system profile, and the process and thread profiles of @who,
 * each in the cumulative table and in the time slice of @time. No
 * allocation except when a slice needs a new page of entries.
 * Return: 0, or -ENOSPC (op table full, counted in stats.dropped).
 */
RSP_API int rsp_hist_shard__add(struct rsp_hist_shard *sh, uint64_t op, uint64_t time,
				uint64_t value, const struct rsp_hist_who *who);

/**
 * rsp_hist_shard__add_one() - record one latency into one profile only
 * @subj: SYSTEM, PROCESS (pid, comm) or THREAD (pid, tid, comm)
 * Return: 0, -ENOSPC as above, -EINVAL for another subject kind.
 */
RSP_API int rsp_hist_shard__add_one(struct rsp_hist_shard *sh, const struct rsp_hist_subject *subj,
				    uint64_t op, uint64_t time, uint64_t value);

/**
 * struct rsp_hist_batch - many latencies of one op, aggregated elsewhere
 * @buckets: at the store's resolution (rsp_hist_store__config()), @count in all
 * @min, @max: of these latencies (bounds within their buckets are fine)
 * @sumsq: their sum of squares, ns^2
 * @offcpu: ns of their total (@sum) spent off CPU (syscall ops; 0 otherwise)
 */
struct rsp_hist_batch {
	uint64_t count, sum, min, max, offcpu;
	double sumsq;
	const uint64_t *buckets;
};

/**
 * rsp_hist_shard__add_batch() - record a batch of latencies (writer only)
 * As rsp_hist_shard__add(), for @bt->count latencies at once, all in the
 * slice of @time: the system profile and those of @who. Used for profiles
 * aggregated in the kernel (syscalls), read as deltas.
 * Return: 0, or -ENOSPC (op table full: @bt->count counted in stats.dropped).
 */
RSP_API int rsp_hist_shard__add_batch(struct rsp_hist_shard *sh, uint64_t op, uint64_t time,
				      const struct rsp_hist_batch *bt,
				      const struct rsp_hist_who *who);

/**
 * rsp_hist_store__irq_name_id() - the id of an irq handler name (interned)
 * @name: @len bytes, not NUL-terminated; names are cut at 31 bytes
 * Thread-safe (takes the store's lock): writers cache the answer.
 * Return: the id for RSP_HIST_OP(RSP_HOP_IRQ, id); 0 is "(other)", used
 * when the table is full.
 */
RSP_API uint32_t rsp_hist_store__irq_name_id(struct rsp_hist_store *st, const char *name,
					     size_t len);
/** rsp_hist_store__irq_name() - the name of id @id into @buf; -ENOENT past the last. */
RSP_API int rsp_hist_store__irq_name(const struct rsp_hist_store *st, uint32_t id, char *buf,
				     size_t n);
/** rsp_hist_store__note_irq() - remember that irq @irq ran handler @name_id (for --op irq:N). */
RSP_API void rsp_hist_store__note_irq(struct rsp_hist_store *st, uint32_t irq, uint32_t name_id);
/**
 * rsp_hist_store__irq_find() - name ids matching "NAME" or an irq number
 * Return: how many ids were written to @ids (at most @max).
 */
RSP_API int rsp_hist_store__irq_find(const struct rsp_hist_store *st, const char *s, uint32_t *ids,
				     int max);

/**
 * rsp_hist_store__op_name() - the canonical name of @op: "offcpu:lock",
 * "blk_service:254:0", "irq:virtio1-req.0", "softirq:NET_RX". Into @buf.
 */
RSP_API const char *rsp_hist_store__op_name(const struct rsp_hist_store *st, uint64_t op, char *buf,
					    size_t n);

/*
 * Evidence that is not a latency: per op, operations that started but whose
 * end was never observed (a block request issued whose completion never
 * arrived, counted when it expires), and how many are still open.
 */
/** rsp_hist_store__note_incomplete() - @n more operations of @op ended unobserved. */
RSP_API void rsp_hist_store__note_incomplete(struct rsp_hist_store *st, uint64_t op, uint64_t n);
/**
 * rsp_hist_store__note_inferred() - @n more latencies of @op (already
 * recorded) ended where their end was inferred, not observed: upper bounds
 * (a sleep whose wakeup was not seen, measured to the thread's next run).
 */
RSP_API void rsp_hist_store__note_inferred(struct rsp_hist_store *st, uint64_t op, uint64_t n);
/** rsp_hist_store__set_open() - @n operations of @op are open (started, end not yet seen). */
RSP_API void rsp_hist_store__set_open(struct rsp_hist_store *st, uint64_t op, uint64_t n);
/** rsp_hist_store__note_gap() - records in [@from, @to] were never fed (@records if known). */
RSP_API void rsp_hist_store__note_gap(struct rsp_hist_store *st, uint64_t from, uint64_t to,
				      uint64_t records);
/** rsp_hist_store__set_progress() - every record up to @until has been fed. */
RSP_API void rsp_hist_store__set_progress(struct rsp_hist_store *st, uint64_t until);

struct rsp_hist_stats {
	unsigned resolution;
	unsigned nr_shards;
	unsigned max_profiles; /* per shard */
	uint64_t slice_ns;
	unsigned nr_slices, slice_cap;
	uint64_t profiles; /* in use, all shards (process and thread) */
	uint64_t pinned;   /* system and "other" profiles */
	uint64_t ops;
	uint64_t updates;	 /* latencies recorded */
	uint64_t evictions;	 /* profiles merged into "other" */
	uint64_t slice_overflow; /* slice updates that went to an "other" entry (cap) */
	uint64_t late;		 /* updates older than the slices kept (only in the table) */
	uint64_t dropped;	 /* updates refused: op table full */
	uint64_t gaps;		 /* stretches of records never fed */
	uint64_t gap_ns;
	uint64_t gap_records;
	uint64_t first;	   /* time of the first update, 0 if none */
	uint64_t progress; /* every record up to here was fed */
	uint64_t bytes;	   /* memory held by the store */
};

/** rsp_hist_store__stats() - the counters, summed over shards. */
RSP_API void rsp_hist_store__stats(const struct rsp_hist_store *st, struct rsp_hist_stats *out);

/* ---- sets of profiles (what queries and analyses work on) -------------- */

struct rsp_hist_row {
	uint64_t start; /* slice start, ns */
	uint64_t count, sum;
	uint64_t *buckets; /* nr_buckets */
};

struct rsp_hist_profile {
	struct rsp_hist_subject subject;
	uint64_t op;	   /* store key; kind is meaningful everywhere, arg only live */
	char op_name[64];  /* canonical, as rsp_hist_store__op_name() */
	char op_label[64]; /* for people: "blk_service:vda"; = op_name when unknown */
	unsigned resolution;
	uint64_t count, sum, min, max;
	double sumsq;	 /* sum of squared latencies, ns^2: rsp_hist_profile__stddev() */
	uint64_t offcpu; /* ns of @sum spent off CPU (syscall ops; 0 for others) */
	uint64_t buckets[RSP_HIST_MAX_BUCKETS];
	uint64_t incomplete; /* ended unobserved (system subject only) */
	uint64_t open;	     /* still open */
	uint64_t inferred;   /* of count, ends inferred: upper bounds (system subject only) */
	size_t nr_rows;	     /* per-slice rows, with --slices */
	struct rsp_hist_row *rows;
};

struct rsp_hist_set {
	unsigned resolution;
	bool ranged;	   /* from slices: [from, to) */
	uint64_t from, to; /* the range actually covered, slice-aligned */
	uint64_t slice_ns;
	bool clipped;	    /* the range asked for began before the oldest slice kept */
	uint64_t overflow;  /* slice updates in the range that went to "other" */
	uint64_t evictions; /* cumulative: profiles evicted into "other" since the first update */
	uint64_t cut;	    /* profiles merged into "(other cgroups)" past --top-cgroups */
	uint64_t gaps, gap_ns; /* gaps overlapping the range (or all, cumulative) */
	uint64_t since;	       /* first update (cumulative) */
	uint64_t progress;     /* fed up to here */
	size_t n, cap;
	struct rsp_hist_profile *v;
	void *index; /* private */
};

/** rsp_hist_set__new() - an empty set at resolution @r; NULL on ENOMEM. */
RSP_API struct rsp_hist_set *rsp_hist_set__new(unsigned r);
/** rsp_hist_set__delete() - free the set, its profiles and rows. NULL is fine. */
RSP_API void rsp_hist_set__delete(struct rsp_hist_set *s);
/**
 * rsp_hist_set__get() - the profile of (@subj, @op_name), created empty
 * Return: the profile (owned by the set, valid until the next __get), or NULL on ENOMEM.
 */
RSP_API struct rsp_hist_profile *
rsp_hist_set__get(struct rsp_hist_set *s, const struct rsp_hist_subject *subj, const char *op_name);
/** rsp_hist_set__find() - the profile of (@subj, @op_name) or NULL. */
RSP_API struct rsp_hist_profile *rsp_hist_set__find(const struct rsp_hist_set *s,
						    const struct rsp_hist_subject *subj,
						    const char *op_name);
/**
 * rsp_hist_profile__merge() - add @src's counts into @dst (same resolution
 * or @src at 2 and @dst at 1). 0 or -EINVAL.
 */
RSP_API int rsp_hist_profile__merge(struct rsp_hist_profile *dst,
				    const struct rsp_hist_profile *src);
/**
 * rsp_hist_set__folded() - how many profiles (cumulative: evictions) or
 * slice updates (ranged: a slice at its cap) went to "other" rather than
 * to their own subject's profile, and profiles cut into "(other cgroups)";
 * while it is not 0, a subject absent from @s may have been active all the
 * same.
 */
RSP_API uint64_t rsp_hist_set__folded(const struct rsp_hist_set *s);
/** rsp_hist_set__fold() - bring every profile down to resolution 1 (exact). */
RSP_API void rsp_hist_set__fold(struct rsp_hist_set *s);
/**
 * rsp_hist_set__sort() - order by total latency (sum), then count, both
 * descending (OSprof's preprocessing), then by op and subject; keep the first
 * @top (0: all).
 */
RSP_API void rsp_hist_set__sort(struct rsp_hist_set *s, size_t top);

/* ---- collecting from the store (readers) -------------------------------- */

/* One --op: a kind with any argument, or one argument. */
struct rsp_hist_opsel {
	unsigned kind;
	bool any;     /* every arg of the kind */
	uint32_t arg; /* reason, dev_t, vector; for IRQ a name id */
};

struct rsp_hist_query {
	unsigned subjects;		  /* mask of 1u << RSP_HSUBJ_*; COMM merges processes */
	long pid;			  /* PROCESS, THREAD: only this process; -1 any */
	long tid;			  /* THREAD: only this thread; -1 any */
	const char *comm;		  /* COMM (and PROCESS if set): processes with this comm */
	const struct rsp_hist_opsel *ops; /* NULL: every op */
	size_t nr_ops;
	bool ranged; /* from slices, [from, to]; else the cumulative table */
	uint64_t from, to;
	bool rows;			 /* keep a row per slice (heat map) */
	const struct rsp_hist_set *only; /* only profiles also in this set (NULL: any) */
	/* processes (and their threads) left out, sorted ascending: access control */
	const uint32_t *exclude;
	size_t nr_exclude;
};

/**
 * rsp_hist_store__collect() - the profiles a query selects, merged over shards
 * @out: a new set (free with rsp_hist_set__delete())
 * Return: 0, -ENOMEM, or -ERANGE with one sentence in @err when the range
 * lies entirely outside the slices kept.
 */
RSP_API int rsp_hist_store__collect(struct rsp_hist_store *st, const struct rsp_hist_query *q,
				    struct rsp_hist_set **out, struct rsp_buf *err);

/* ---- analyses ----------------------------------------------------------- */

/**
 * rsp_hist__percentile() - the value at fraction @p (0..1) of @count
 * operations: the upper edge of the bucket that holds that rank, capped at
 * @max (and raised to @min); so within a factor 2 (r=1) or sqrt2 (r=2) of the
 * true value. 0 for an empty profile.
 */
/**
 * rsp_hist_profile__stddev() - the standard deviation of @p's latencies, ns
 * (population: sqrt(E[x^2] - mean^2) from the exact sums; 0 for under two).
 */
RSP_API double rsp_hist_profile__stddev(const struct rsp_hist_profile *p);

RSP_API uint64_t rsp_hist__percentile(const uint64_t *buckets, unsigned r, uint64_t count,
				      uint64_t min, uint64_t max, double p);

struct rsp_hist_peak {
	unsigned lo, hi; /* bucket range */
	unsigned mode;	 /* its fullest bucket */
	uint64_t count;
	double share;	/* of the profile's count */
	double mean_ns; /* estimated: each bucket at its geometric middle */
};

struct rsp_hist_peak_config {
	double min_share;    /* a bucket below this share of the count is noise (0.01) */
	double valley_ratio; /* a valley splits two maxima if it is below this
				fraction of the lower one (0.5) */
};

RSP_API void rsp_hist_peak_config__init(struct rsp_hist_peak_config *c);
/**
 * rsp_hist__peaks() - the peaks of a histogram
 *
 * Buckets below min_share of the total are noise and separate peaks; a run
 * of other buckets is split at each local minimum lower than valley_ratio
 * times the lower of the two maxima around it (the minimum belongs to
 * neither). A peak then takes its tails: the noise buckets next to it that
 * fall away from it without an empty bucket (stragglers of the same mode);
 * between two peaks, the lowest bucket of such a run belongs to neither.
 * @cfg NULL: defaults. Return: the number of peaks (at most @max are
 * written to @out; tails only when all fit).
 */
RSP_API int rsp_hist__peaks(const uint64_t *buckets, unsigned r,
			    const struct rsp_hist_peak_config *cfg, struct rsp_hist_peak *out,
			    int max);

/**
 * rsp_hist__emd() - Earth Mover's Distance between two histograms of @nb
 * buckets, each normalised to unit mass: the mass moved times the buckets
 * it moves (so 1.0 = everything one bucket over; divide by r for octaves).
 * Return: >= 0, or -1 when either histogram is empty.
 */
RSP_API double rsp_hist__emd(const uint64_t *a, const uint64_t *b, unsigned nb);
/**
 * rsp_hist__chi2() - chi-square statistic of two binned samples of possibly
 * different sizes (R = sum a, S = sum b):
 *   sum over buckets with a+b > 0 of (sqrt(S/R) a - sqrt(R/S) b)^2 / (a + b)
 * @df: degrees of freedom (buckets used - 1). Return: >= 0, or -1 when
 * either is empty.
 */
RSP_API double rsp_hist__chi2(const uint64_t *a, const uint64_t *b, unsigned nb, int *df);

/* OSprof's three-phase selection of the pairs worth a look (section 3.2). */
struct rsp_hist_cmp_config {
	double similar_total;	  /* phase 1: |dTotal| / max total below this: similar (0.10) */
	uint64_t min_count;	  /* phase 1: fewer ops than this on both sides: tiny (10) */
	double min_latency_share; /* phase 1: a pair's larger total below this share of
				     the sum of its subject's pairs' larger totals: tiny
				     (0.01; rspctl hist --min-share) */
	struct rsp_hist_peak_config peaks; /* phase 2 */
};

RSP_API void rsp_hist_cmp_config__init(struct rsp_hist_cmp_config *c);

enum rsp_hist_verdict {
	RSP_HV_SELECTED,
	RSP_HV_SIMILAR, /* phase 1: totals within similar_total */
	RSP_HV_TINY,	/* phase 1: too few ops or too little latency */
};

struct rsp_hist_pair {
	const struct rsp_hist_profile *base, *cur; /* either may be NULL (absent) */
	enum rsp_hist_verdict verdict;
	double emd;  /* -1: one side empty (appeared or vanished) */
	double chi2; /* -1: one side empty */
	int df;
	uint64_t count_base, count_cur, total_base, total_cur;
	int peaks_base, peaks_cur;
	bool peaks_moved; /* phase 2: same number, but some mode bucket moved */
	/* one side empty or under min_count ops: its shape says nothing, so the
	 * pair ranks with those that appeared or vanished, not by EMD */
	bool lopsided;
	/*
	 * One side absent while that side's set folded profiles into "other"
	 * (evicted, or a slice at its cap): gone (or new), or only evicted —
	 * not known. rsp_hist_set__folded().
	 */
	bool unsure;
};

struct rsp_hist_diff {
	unsigned resolution;
	size_t n;
	struct rsp_hist_pair *v; /* selected first, in rank order; then the rest */
	size_t selected, similar, tiny;
	uint64_t min_count;		  /* the configuration's, for the text */
	uint64_t folded_base, folded_cur; /* rsp_hist_set__folded() of each side */
};

/**
 * rsp_hist__compare() - pair two sets by (subject, op) and rank the pairs
 *
 * Phase 1 drops pairs whose totals are similar or that are tiny; phase 2
 * counts each side's peaks and notes moved modes; phase 3 ranks what is
 * left: lopsided pairs first (one side empty or with fewer than min_count
 * operations: appeared, vanished, or a shape too thin to compare), by
 * change in total latency; then by EMD, then by change in total latency. Both sets must outlive
 * @out; sets at different resolutions must be folded to 1 first. @cfg NULL: defaults. Return: 0,
 * -EINVAL (resolutions differ) or -ENOMEM. Free with rsp_hist_diff__delete().
 */
RSP_API int rsp_hist__compare(const struct rsp_hist_set *base, const struct rsp_hist_set *cur,
			      const struct rsp_hist_cmp_config *cfg, struct rsp_hist_diff **out);
RSP_API void rsp_hist_diff__delete(struct rsp_hist_diff *d);

/* Rendering (text, JSON, the saved baseline): rsp/hist_render.h, the format layer. */

/** rsp_hist__fmt_ns() - "812 ns", "3.2 us", "1.05 ms", "2.31 s" into @buf. */
RSP_API const char *rsp_hist__fmt_ns(double ns, char *buf, size_t n);

#endif /* RSP_HIST_H */
