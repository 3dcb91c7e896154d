// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline store: timeline callbacks appended to per-thread vectors
 * (segments of one thread arrive in time order, so nothing needs sorting),
 * links and block requests to flat vectors sorted once at seal time.
 */
#include <errno.h>
#include <sys/mman.h>
#include <rsp/mapped.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/pass.h>
#include <rsp/record.h>
#include <rsp/samples.h>
#include <rsp/symbols.h>
#include <rsp/tlstore.h>
#include <rsp/unwind.h>
#include "internal/fwake.h"
#include "internal/hash.h"
#include "internal/tlindex.h"
#include "internal/vec.h"
#include "internal/u64map.h"
#include "internal/gallop.h"

struct tthread {
	struct rsp_tlthread pub;
	struct rsp_segment *segs;
	size_t cap;
	bool mapped;	      /* segs is an mmap()ed region grown by mremap() */
	size_t charged;	      /* of it, bytes told to rsp/mapped.h's hook: pages touched */
	struct rsp_fwake *fw; /* its false-wakeup filter, from its first sleep (fwake_ns) */
};

/*
 * Segments of busy threads run to hundreds of MB over a long window. Past
 * SEG_MAP_BYTES a thread's vector lives in its own mapping and grows by
 * mremap(): pages are moved, never copied, as realloc() would copy them
 * once the heap holds them. Past SEG_HUGE_BYTES the mapping asks for
 * transparent huge pages (where the system leaves them to madvise, as
 * Debian does): faulting a busy thread's segments in 4 KiB at a time was
 * a sixth of a snapshot's time on a pgbench window (BENCHMARKS.md); it is
 * then charged SEG_HUGE_BYTES at a time, what a fault may bring in.
 */
#define SEG_FIRST      256
#define TCACHE	       64
#define SEG_MAP_BYTES  (64u << 10)
#define SEG_CHARGE     (64u << 10) /* a mapped vector counted this many bytes at a time */
#define SEG_HUGE_BYTES (2u << 20)

static void seg_free(struct tthread *t);

struct rsp_tlstore {
	struct rsp_kvec threads; /* tid -> struct tthread */
	struct rsp_link *links;
	size_t nr_links, cap_links;
	struct rsp_block_req *reqs;
	size_t nr_reqs, cap_reqs;
	struct rsp_u64map rmap; /* request id -> index, after seal */
	uint64_t **chains;	/* repaired stacks */
	size_t nr_chains, cap_chains;
	struct rsp_net_op *ops;
	size_t nr_ops, cap_ops;
	const struct rsp_socktab *socks; /* the base table __load() was given */
	uint64_t start, end;
	bool failed, sealed;
	/*
	 * get_thread()'s cache: the index + 1 of the thread last found for
	 * each tid modulo TCACHE (0: none). Segments alternate between the
	 * threads a switch takes off and puts on a CPU, so a one-entry cache
	 * missed 70% of them on a database's window; a few dozen threads are
	 * busy at a time.
	 */
	uint32_t tcache[TCACHE];
	unsigned flags;
	struct rsp_timeline *tl;     /* owns the interned irq names, when __load() built it */
	struct rsp_samples *samples; /* RSP_TLSTORE_SAMPLES */
	struct rsp_tlindex *ix;	     /* lookups, built at seal (not RSP_TLSTORE_WAITS_ONLY) */
	uint64_t fwake_ns;	     /* false wakeups: the longest run; 0: none merged */
	struct rsp_fwake_stats fwst;
};

struct rsp_tlstore *rsp_tlstore__new(unsigned flags)
{
	struct rsp_tlstore *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->flags = flags;
	if ((flags & RSP_TLSTORE_SAMPLES) && !(s->samples = rsp_samples__new())) {
		free(s);
		return NULL;
	}
	rsp_kvec__init(&s->threads, sizeof(struct tthread));
	rsp_u64map__init(&s->rmap);
	return s;
}

void rsp_tlstore__delete(struct rsp_tlstore *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < rsp_kvec__len(&s->threads); i++)
		seg_free(rsp_kvec__at(&s->threads, i));
	rsp_kvec__exit(&s->threads);
	free(s->links);
	free(s->reqs);
	free(s->ops);
	for (size_t i = 0; i < s->nr_chains; i++)
		free(s->chains[i]);
	free(s->chains);
	rsp_u64map__exit(&s->rmap);
	rsp_timeline__delete(s->tl);
	rsp_samples__delete(s->samples);
	rsp_tlindex__delete(s->ix);
	free(s);
}

/* The thread of @tid, added if new; NULL out of memory. Inline: per segment. */
static inline __attribute__((always_inline)) struct tthread *get_thread(struct rsp_tlstore *s,
									uint32_t tid)
{
	uint32_t *c = &s->tcache[tid % TCACHE];
	struct tthread *t;
	bool added;

	if (*c && *c <= rsp_kvec__len(&s->threads)) {
		t = rsp_kvec__at(&s->threads, *c - 1);
		if (t->pub.tid == tid)
			return t;
	}
	t = rsp_kvec__get(&s->threads, tid, &added);
	if (!t) {
		s->failed = true;
		return NULL;
	}
	if (added)
		t->pub.tid = tid;
	*c = (uint32_t)(((char *)t - (char *)s->threads.items) / sizeof(*t)) + 1;
	return t;
}

static void set_comm(struct tthread *t, const char *comm)
{
	if (comm && comm[0])
		snprintf(t->pub.comm, sizeof(t->pub.comm), "%s", comm);
}

static void add_time(struct rsp_tlthread *p, const struct rsp_segment *seg)
{
	uint64_t d = seg->end - seg->start;

	switch (seg->kind) {
	case RSP_SEG_RUN:
		if (seg->flags & RSP_SEGF_RUN_INFERRED)
			p->run_inferred_ns += d;
		else
			p->run_ns += d;
		if (seg->flags & RSP_SEGF_EXITED)
			p->exited = seg->end;
		break;
	case RSP_SEG_RUNNABLE:
		p->runnable_ns += d;
		break;
	case RSP_SEG_SLEEP:
		p->sleep_ns += d;
		break;
	default:
		p->unknown_ns += d;
		break;
	}
}

/*
 * A mapped vector's pages count against the query's memory as they are
 * touched (SEG_CHARGE at a time), not as mremap() reserves them: what the
 * process really holds, as malloc's count is for the heap.
 */
static int seg_charge(struct tthread *t)
{
	size_t want = (t->pub.nr_segs + 1) * sizeof(*t->segs), to, unit;

	if (!t->mapped || want <= t->charged)
		return 0;
	unit = t->cap * sizeof(*t->segs) >= SEG_HUGE_BYTES ? SEG_HUGE_BYTES : SEG_CHARGE;
	to = (want + unit - 1) / unit * unit;
	if (to > t->cap * sizeof(*t->segs))
		to = t->cap * sizeof(*t->segs);
	if (!rsp_mapped__charge((int64_t)(to - t->charged)))
		return -ENOMEM;
	t->charged = to;
	return 0;
}

/* Room for one more segment of @t. */
static int seg_room(struct tthread *t)
{
	size_t cap, bytes;
	void *p;

	if (t->pub.nr_segs < t->cap)
		return seg_charge(t);
	cap = t->cap ? t->cap * 2 : SEG_FIRST;
	bytes = cap * sizeof(*t->segs);
	if (bytes < SEG_MAP_BYTES) {
		p = realloc(t->segs, bytes);
	} else if (t->mapped) {
		p = mremap(t->segs, t->cap * sizeof(*t->segs), bytes, MREMAP_MAYMOVE);
		p = p == MAP_FAILED ? NULL : p;
	} else {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
		else {
			memcpy(p, t->segs, t->pub.nr_segs * sizeof(*t->segs));
			free(t->segs);
			t->mapped = true;
			t->charged = 0;
		}
	}
	if (!p)
		return -ENOMEM;
	if (bytes >= SEG_HUGE_BYTES)
		(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: refused, 4 KiB pages */
	t->segs = p;
	t->cap = cap;
	return seg_charge(t);
}

static void seg_free(struct tthread *t)
{
	free(t->fw);
	if (t->mapped) {
		munmap(t->segs, t->cap * sizeof(*t->segs));
		rsp_mapped__charge(-(int64_t)t->charged);
	} else
		free(t->segs);
}

/* Keep @seg (what the false-wakeup filter let through) in its thread's vector. */
static void store_segment(void *ctx, const struct rsp_segment *seg)
{
	struct rsp_tlstore *s = ctx;
	struct tthread *t = get_thread(s, seg->tid);

	if (!t)
		return;
	add_time(&t->pub, seg);
	if ((s->flags & RSP_TLSTORE_WAITS_ONLY) &&
	    (seg->kind != RSP_SEG_SLEEP || seg->waker.kind == RSP_WAKER_NONE))
		return;
	if (seg_room(t)) {
		s->failed = true;
		return;
	}
	t->segs[t->pub.nr_segs] = *seg;
	if ((s->flags & RSP_TLSTORE_STACK_HASHES) && seg->kind == RSP_SEG_SLEEP) {
		struct rsp_segment *k = &t->segs[t->pub.nr_segs];

		k->stack_hash = k->stack ? rsp_hash__stack32(k->stack, k->nr_stack) : 0;
		k->waker.stack_hash =
			k->waker.stack ? rsp_hash__stack32(k->waker.stack, k->waker.nr_stack) : 0;
	}
	t->pub.nr_segs++;
}

static void on_segment(void *ctx, const struct rsp_segment *seg, const char *comm)
{
	struct rsp_tlstore *s = ctx;
	struct tthread *t = get_thread(s, seg->tid);

	if (!t)
		return;
	if (seg->tgid)
		t->pub.tgid = seg->tgid;
	if (!t->pub.comm[0])
		set_comm(t, comm);
	if (!t->pub.last)
		t->pub.first = seg->start;
	if (seg->end > t->pub.last)
		t->pub.last = seg->end;
	if (s->fwake_ns && !t->fw && seg->kind == RSP_SEG_SLEEP &&
	    !(t->fw = calloc(1, sizeof(*t->fw))))
		s->failed = true;
	if (t->fw)
		rsp_fwake__feed(t->fw, s->fwake_ns, seg, store_segment, s, &s->fwst);
	else
		store_segment(s, seg);
}

void rsp_tlstore__set_fwake(struct rsp_tlstore *s, uint64_t max_run_ns)
{
	s->fwake_ns = max_run_ns;
}

void rsp_tlstore__fwake_stats(const struct rsp_tlstore *s, uint64_t *merged, uint64_t *run_ns)
{
	*merged = s->fwst.merged;
	*run_ns = s->fwst.run_ns;
}

static void on_link(void *ctx, const struct rsp_link *l)
{
	struct rsp_tlstore *s = ctx;

	if (l->kind == RSP_LINK_FORK) {
		struct tthread *t = get_thread(s, l->tid);

		if (t) {
			t->pub.parent = l->from.id;
			t->pub.forked = l->time;
		}
	}
	if (s->flags & RSP_TLSTORE_NO_LINKS)
		return;
	if (rsp_vec__reserve((void **)&s->links, &s->cap_links, s->nr_links + 1,
			     sizeof(*s->links))) {
		s->failed = true;
		return;
	}
	s->links[s->nr_links++] = *l;
}

static void on_block(void *ctx, const struct rsp_block_req *r)
{
	struct rsp_tlstore *s = ctx;

	if (rsp_vec__reserve((void **)&s->reqs, &s->cap_reqs, s->nr_reqs + 1, sizeof(*s->reqs))) {
		s->failed = true;
		return;
	}
	s->reqs[s->nr_reqs++] = *r;
}

static void on_net(void *ctx, const struct rsp_net_op *op)
{
	struct rsp_tlstore *s = ctx;

	if (rsp_vec__reserve((void **)&s->ops, &s->cap_ops, s->nr_ops + 1, sizeof(*s->ops))) {
		s->failed = true;
		return;
	}
	s->ops[s->nr_ops++] = *op;
}

static void on_thread(void *ctx, uint32_t tid, uint32_t tgid, const char *comm, uint64_t time)
{
	struct tthread *t = get_thread(ctx, tid);

	if (!t)
		return;
	if (tgid)
		t->pub.tgid = tgid;
	set_comm(t, comm);
}

/* A cpu-clock sample, for the store's sample index (RSP_TLSTORE_SAMPLES). */
static void on_sample(void *ctx, const struct rsp_sample *smp, const struct perf_event_header *rec)
{
	struct rsp_tlstore *s = ctx;
	struct rsp_csample c = {.time = smp->time,
				.ip = smp->ip,
				.tid = smp->tid,
				.pid = smp->pid,
				.cpu = smp->cpu,
				.nr_chain = (uint32_t)smp->nr_callchain,
				.chain = smp->nr_callchain ? smp->callchain : NULL};

	if (s->samples && rsp_samples__add(s->samples, &c))
		s->failed = true;
}

void rsp_tlstore__ops(struct rsp_timeline_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->sample = on_sample;
	ops->segment = on_segment;
	ops->link = on_link;
	ops->block = on_block;
	ops->thread = on_thread;
	ops->net = on_net;
}

static int cmp_op(const void *a, const void *b)
{
	const struct rsp_net_op *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_link(const void *a, const void *b)
{
	const struct rsp_link *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static int cmp_req(const void *a, const void *b)
{
	const struct rsp_block_req *x = a, *y = b;

	if (x->issue != y->issue)
		return x->issue < y->issue ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int rsp_tlstore__seal(struct rsp_tlstore *s, uint64_t start, uint64_t end)
{
	s->start = start;
	s->end = end;
	/* the sleeps still held: no later sleep said they were false (the window's end) */
	for (size_t i = 0; i < rsp_kvec__len(&s->threads); i++) {
		struct tthread *t = rsp_kvec__at(&s->threads, i);

		if (t->fw)
			rsp_fwake__flush(t->fw, store_segment, s);
	}
	for (size_t i = 0; i < rsp_kvec__len(&s->threads); i++) {
		struct tthread *t = rsp_kvec__at(&s->threads, i);

		t->pub.segs = t->segs;
	}
	rsp_vec__sort(s->links, s->nr_links, sizeof(*s->links), cmp_link);
	rsp_vec__sort(s->reqs, s->nr_reqs, sizeof(*s->reqs), cmp_req);
	rsp_vec__sort(s->ops, s->nr_ops, sizeof(*s->ops), cmp_op);
	for (size_t i = 0; i < s->nr_reqs; i++)
		if (rsp_u64map__put(&s->rmap, s->reqs[i].id, (uint32_t)i))
			s->failed = true;
	if (s->samples && rsp_samples__seal(s->samples))
		s->failed = true;
	s->sealed = true;
	if (!s->failed && !(s->flags & RSP_TLSTORE_WAITS_ONLY) && !(s->ix = rsp_tlindex__new(s)))
		s->failed = true;
	return s->failed ? -ENOMEM : 0;
}

int rsp_tlstore__load(struct rsp_tlstore *s, const struct rsp_schema *schema,
		      const struct rsp_wsnap *snap, const struct rsp_tlstore_opts *o,
		      struct rsp_timeline_stats *st, struct rsp_buf *err)
{
	struct rsp_timeline_ops ops;
	struct rsp_pass_opts po = {.from = o->from,
				   .to = o->to,
				   .ksyms = o->ksyms,
				   .socks = o->socks,
				   .ops = &ops,
				   .ctx = s,
				   .keep = &s->tl};
	int ret;

	rsp_tlstore__ops(&ops);
	s->socks = o->socks;
	s->fwake_ns = o->fwake_ns;
	ret = rsp_pass__run(schema, snap, &po, st);
	if (!ret)
		ret = rsp_tlstore__seal(s, o->from, o->to ? o->to : UINT64_MAX);
	if (ret)
		rsp_buf__puts(err, "out of memory building the timeline of the window; "
				   "ask for a shorter --last");
	return ret;
}

struct rsp_tlstore *rsp_tlstore__from_window(unsigned flags, const struct rsp_schema *schema,
					     const struct rsp_wsnap *snap,
					     const struct rsp_tlstore_opts *o,
					     struct rsp_timeline_stats *st, struct rsp_buf *err)
{
	struct rsp_tlstore *s = rsp_tlstore__new(flags);

	if (!s) {
		rsp_buf__puts(err, "out of memory building the timeline of the window; "
				   "ask for a shorter --last");
		return NULL;
	}
	if (rsp_tlstore__load(s, schema, snap, o, st, err)) {
		rsp_tlstore__delete(s);
		return NULL;
	}
	return s;
}

const struct rsp_samples *rsp_tlstore__samples(const struct rsp_tlstore *s)
{
	return s->samples;
}

void rsp_tlstore__span(const struct rsp_tlstore *s, uint64_t *start, uint64_t *end)
{
	*start = s->start;
	*end = s->end;
}

size_t rsp_tlstore__nr_threads(const struct rsp_tlstore *s)
{
	return rsp_kvec__len(&s->threads);
}

const struct rsp_tlthread *rsp_tlstore__thread(const struct rsp_tlstore *s, size_t i)
{
	return i < rsp_kvec__len(&s->threads)
		       ? &((struct tthread *)rsp_kvec__at(&s->threads, i))->pub
		       : NULL;
}

const struct rsp_tlthread *rsp_tlstore__find_thread(const struct rsp_tlstore *s, uint32_t tid)
{
	const struct tthread *t = rsp_kvec__find(&s->threads, tid);

	return t ? &t->pub : NULL;
}

/* Index of the last segment starting at or before @t, or -1. */
static long seg_index(const struct rsp_tlthread *t, uint64_t when)
{
	return (long)rsp_gallop__above(t->segs, sizeof(t->segs[0]),
				       offsetof(struct rsp_segment, start), t->nr_segs, when) -
	       1;
}

const struct rsp_segment *rsp_tlstore__segment_at(const struct rsp_tlstore *s, uint32_t tid,
						  uint64_t when)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(s, tid);
	long i;

	if (!t || !t->nr_segs)
		return NULL;
	i = seg_index(t, when);
	if (i < 0)
		return NULL;
	if (when < t->segs[i].end || (when == t->segs[i].end && (size_t)i + 1 == t->nr_segs))
		return &t->segs[i];
	return NULL;
}

const struct rsp_segment *rsp_tlstore__waker_run(const struct rsp_tlstore *s,
						 const struct rsp_segment *sleep)
{
	const struct rsp_tlthread *t;
	long i;

	if (sleep->waker.kind != RSP_WAKER_THREAD || !sleep->waker.time)
		return NULL;
	t = rsp_tlstore__find_thread(s, sleep->waker.id);
	if (!t || !t->nr_segs)
		return NULL;
	i = seg_index(t, sleep->waker.time);
	/* A waking stamped at the very end of a run (the waker then slept) is part of it. */
	for (; i >= 0 && t->segs[i].end >= sleep->waker.time; i--)
		if (t->segs[i].kind == RSP_SEG_RUN)
			return &t->segs[i];
	return NULL;
}

const struct rsp_segment *rsp_tlstore__next_run(const struct rsp_tlstore *s, uint32_t tid,
						uint64_t when)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(s, tid);
	long i;

	if (!t)
		return NULL;
	for (i = seg_index(t, when); i < (long)t->nr_segs; i++)
		if (i >= 0 && t->segs[i].kind == RSP_SEG_RUN && t->segs[i].start >= when)
			return &t->segs[i];
	return NULL;
}

const struct rsp_link *rsp_tlstore__links(const struct rsp_tlstore *s, size_t *n)
{
	*n = s->nr_links;
	return s->links;
}

const struct rsp_block_req *rsp_tlstore__block_reqs(const struct rsp_tlstore *s, size_t *n)
{
	*n = s->nr_reqs;
	return s->reqs;
}

const struct rsp_block_req *rsp_tlstore__block_req(const struct rsp_tlstore *s, uint64_t id)
{
	uint32_t idx;

	return rsp_u64map__get(&s->rmap, id, &idx) ? NULL : &s->reqs[idx];
}

const struct rsp_net_op *rsp_tlstore__net_ops(const struct rsp_tlstore *s, size_t *n)
{
	*n = s->nr_ops;
	return s->ops;
}

/* A receive wakeup follows its arrival by microseconds; allow for a loaded machine. */
#define WAKE_AFTER_ARRIVAL_NS 2000000ull

const struct rsp_net_op *rsp_tlstore__net_op_of(const struct rsp_tlstore *s,
						const struct rsp_segment *sleep)
{
	uint64_t t = sleep->waker.time, from;
	size_t lo;

	if (!(sleep->waker.flags & RSP_WAKERF_NET) || !t)
		return NULL;
	from = t > WAKE_AFTER_ARRIVAL_NS ? t - WAKE_AFTER_ARRIVAL_NS : 0;
	lo = rsp_gallop__at_or_above(s->ops, sizeof(s->ops[0]), offsetof(struct rsp_net_op, end),
				     s->nr_ops, from);
	/*
	 * Of the operations on that socket around the waking, the one that
	 * started last: a socket's memory is reused at once for the next one
	 * (a client's new connection gets the address of the server's side of
	 * the connection it just closed), and the older socket's last
	 * operation, which ends at its FIN, is still in the window.
	 */
	const struct rsp_net_op *best = NULL;

	for (size_t i = lo; i < s->nr_ops && s->ops[i].first <= t; i++) {
		const struct rsp_net_op *op = &s->ops[i];

		if (op->sk == sleep->waker.sk && op->start <= t &&
		    (!best || op->start > best->start))
			best = op;
	}
	return best;
}

/* ---- stack repair ---------------------------------------------------------- */

#define REPAIR_FRAMES 128

/* Index of the PERF_CONTEXT_USER marker in @chain, or @nr. */
static uint32_t user_mark(const uint64_t *chain, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++)
		if (chain[i] == PERF_CONTEXT_USER)
			return i;
	return nr;
}

/* The function a user address lies in, as the symbolizer names it (pointer identity). */
static bool same_function(struct rsp_symbolizer *sym, uint32_t pid, uint64_t t1, uint64_t a1,
			  uint64_t t2, uint64_t a2)
{
	struct rsp_sym x, y;

	if (rsp_symbolizer__resolve(sym, pid, t1, a1, 0, &x) ||
	    rsp_symbolizer__resolve(sym, pid, t2, a2, 0, &y))
		return false;
	return x.name == y.name && x.object == y.object && x.match == RSP_SYM_EXACT;
}

static int keep_chain(struct rsp_tlstore *s, struct rsp_segment *seg, const uint64_t *chain,
		      uint32_t n, uint16_t flags)
{
	uint64_t *c = malloc(n * sizeof(*c));

	if (!c || rsp_vec__reserve((void **)&s->chains, &s->cap_chains, s->nr_chains + 1,
				   sizeof(*s->chains))) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c, chain, n * sizeof(*c));
	s->chains[s->nr_chains++] = c;
	seg->stack = c;
	seg->nr_stack = n;
	seg->stack_hash = (s->flags & RSP_TLSTORE_STACK_HASHES) ? rsp_hash__stack32(c, n) : 0;
	seg->flags |= flags;
	return 0;
}

static int repair_one(struct rsp_tlstore *s, const struct rsp_schema *schema,
		      struct rsp_symbolizer *sym, struct rsp_segment *seg,
		      struct rsp_tlstore_repair *st)
{
	struct rsp_unwinder *u = rsp_symbolizer__unwinder(sym);
	uint64_t chain[REPAIR_FRAMES], user[REPAIR_FRAMES];
	uint32_t mark = seg->stack ? user_mark(seg->stack, seg->nr_stack) : 0, n;
	enum rsp_unwind_method m;
	struct rsp_sample smp;
	int nu;

	if (rsp_record__parse_sample(schema, seg->urec, &smp) || mark + 3 > REPAIR_FRAMES)
		return 0;
	st->candidates++;
	nu = rsp_unwind__user_chain(u, schema, &smp, user, REPAIR_FRAMES - (int)mark - 2, &m);
	if (nu <= 0)
		return 0;
	if (seg->stack)
		memcpy(chain, seg->stack, mark * sizeof(*chain));
	n = mark;
	chain[n++] = PERF_CONTEXT_USER;
	if (!(seg->flags & RSP_SEGF_UREC_PROBE)) {
		/* The switch-out copied its own user stack. */
		if (m != RSP_UNWIND_DWARF)
			return 0;
		memcpy(chain + n, user, (size_t)nu * sizeof(*user));
		st->dwarf++;
		return keep_chain(s, seg, chain, n + (uint32_t)nu, RSP_SEGF_STACK_DWARF);
	}
	/* Stitch: the sleep's first user frame, in the probed function, then its callers. */
	if (mark + 1 >= seg->nr_stack ||
	    !same_function(sym, seg->tgid, seg->start, seg->stack[mark + 1], smp.time, user[0])) {
		st->not_inside++;
		return 0;
	}
	chain[n++] = seg->stack[mark + 1];
	memcpy(chain + n, user + 1, (size_t)(nu - 1) * sizeof(*user));
	st->stitched++;
	st->dwarf += m == RSP_UNWIND_DWARF;
	return keep_chain(s, seg, chain, n + (uint32_t)nu - 1,
			  RSP_SEGF_STACK_STITCHED |
				  (m == RSP_UNWIND_DWARF ? RSP_SEGF_STACK_DWARF : 0));
}

int rsp_tlstore__repair_stacks(struct rsp_tlstore *s, const struct rsp_schema *schema,
			       struct rsp_symbolizer *sym, struct rsp_tlstore_repair *st)
{
	struct rsp_tlstore_repair none;

	if (!st)
		st = &none;
	memset(st, 0, sizeof(*st));
	if (!sym)
		return 0;
	for (size_t i = 0; i < rsp_kvec__len(&s->threads); i++) {
		struct tthread *t = rsp_kvec__at(&s->threads, i);

		for (size_t k = 0; k < t->pub.nr_segs; k++) {
			struct rsp_segment *seg = &t->segs[k];

			if (seg->kind != RSP_SEG_SLEEP || !seg->urec ||
			    (seg->flags & (RSP_SEGF_STACK_STITCHED | RSP_SEGF_STACK_DWARF)))
				continue;
			if (repair_one(s, schema, sym, seg, st))
				return -ENOMEM;
		}
	}
	return 0;
}

uint64_t rsp_tlstore__last_run_end(const struct rsp_tlstore *s, uint32_t cpu, uint64_t t)
{
	return s->ix ? rsp_tlindex__last_run_end(s->ix, cpu, t) : 0;
}

const struct rsp_block_req *const *rsp_tlstore__reqs_of(const struct rsp_tlstore *s, uint32_t tid,
							size_t *n)
{
	*n = 0;
	return s->ix ? rsp_tlindex__reqs_of(s->ix, tid, n) : NULL;
}

const struct rsp_wake *rsp_tlstore__wakes_by(const struct rsp_tlstore *s, uint32_t tid, size_t *n)
{
	*n = 0;
	return s->ix ? rsp_tlindex__wakes_by(s->ix, tid, n) : NULL;
}
