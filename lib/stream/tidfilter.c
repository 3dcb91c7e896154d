// SPDX-License-Identifier: LGPL-2.1
/*
 * The records of a set of threads (rsp/tidfilter.h says which and why).
 * Each record is decoded once with the one decoder (record.c, tp.c), so
 * perf tracepoint samples and the BPF backend's compact records follow the
 * same rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/net.h>
#include <rsp/record.h>
#include <rsp/tidfilter.h>
#include <rsp/tp.h>
#include "internal/u64map.h"
#include "tracepoints/bpf_records.h"

/*
 * One life of a socket address: from its first record to its close (the
 * kernel reuses a freed socket's address for the next one, maybe another
 * namespace's). Kept when a kept thread called on it in that life.
 */
struct sklife {
	uint64_t first;
	uint32_t prev; /* the address's previous life, NO_LIFE: none */
	bool open, kept;
};

#define NO_LIFE UINT32_MAX

struct rsp_tidfilter {
	const struct rsp_schema *s;
	struct rsp_u64map tids;	   /* kept threads */
	struct rsp_u64map sockets; /* socket address -> its latest life */
	struct sklife *lives;
	uint32_t nr_lives, cap_lives;
	struct rsp_u64map blocks; /* requests of kept threads in flight: dev, sector */
	/*
	 * Records kept for the records around them: the last one of a CPU
	 * before its lost records (the gap starts at the CPU's last record: a
	 * record left out would make it start earlier). By address: the
	 * window's pinned chunks do not move between the scan and the writing.
	 */
	struct rsp_u64map must;
	const struct perf_event_header **last; /* per CPU, during the scan */
	uint32_t nr_last;
	struct rsp_tidfilter_stats st;
};

struct rsp_tidfilter *rsp_tidfilter__new(const struct rsp_schema *s)
{
	struct rsp_tidfilter *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->s = s;
	rsp_u64map__init(&f->tids);
	rsp_u64map__init(&f->sockets);
	rsp_u64map__init(&f->blocks);
	rsp_u64map__init(&f->must);
	return f;
}

void rsp_tidfilter__delete(struct rsp_tidfilter *f)
{
	if (!f)
		return;
	rsp_u64map__exit(&f->tids);
	rsp_u64map__exit(&f->sockets);
	rsp_u64map__exit(&f->blocks);
	rsp_u64map__exit(&f->must);
	free(f->last);
	free(f->lives);
	free(f);
}

bool rsp_tidfilter__has(const struct rsp_tidfilter *f, uint32_t tid)
{
	uint32_t v;

	return !rsp_u64map__get(&f->tids, tid, &v);
}

int rsp_tidfilter__add(struct rsp_tidfilter *f, uint32_t tid)
{
	int err;

	if (rsp_tidfilter__has(f, tid))
		return 0;
	err = rsp_u64map__put(&f->tids, tid, 1);
	if (!err)
		f->st.threads++;
	return err;
}

/* The life of socket address @sk at time @t: kept or not (no life: not). */
static bool has_sock(const struct rsp_tidfilter *f, uint64_t sk, uint64_t t)
{
	uint32_t i;

	if (!sk || rsp_u64map__get(&f->sockets, sk, &i))
		return false;
	while (i != NO_LIFE && f->lives[i].first > t)
		i = f->lives[i].prev;
	return i != NO_LIFE && f->lives[i].kept;
}

/* The current life of @sk, a new one from @t if it has none open. */
static int life_of(struct rsp_tidfilter *f, uint64_t sk, uint64_t t, uint32_t *out)
{
	uint32_t i = NO_LIFE;

	if (!rsp_u64map__get(&f->sockets, sk, &i) && f->lives[i].open) {
		*out = i;
		return 0;
	}
	if (f->nr_lives == f->cap_lives) {
		uint32_t cap = f->cap_lives ? 2 * f->cap_lives : 64;
		struct sklife *v = cap > f->cap_lives ? realloc(f->lives, cap * sizeof(*v)) : NULL;

		if (!v)
			return -ENOMEM;
		f->lives = v;
		f->cap_lives = cap;
	}
	f->lives[f->nr_lives] = (struct sklife){.first = t, .prev = i, .open = true};
	*out = f->nr_lives++;
	return rsp_u64map__put(&f->sockets, sk, *out);
}

/* The socket a network record names, 0 if none (kprobe records: their registers). */
/* The network event @smp is, by the decoder all analyses use: its socket, or 0. */
static uint64_t sock_of(const struct rsp_tidfilter *f, const struct rsp_sample *smp,
			struct rsp_net_event *ne)
{
	if (!rsp_net__is_event(smp->event) || rsp_net__decode(f->s, smp, ne))
		return 0;
	return ne->sk;
}

/* A socket's records: its lives, and whether a kept thread called on it in each. */
static int learn_sock(struct rsp_tidfilter *f, const struct rsp_sample *smp,
		      const struct rsp_net_event *ne)
{
	bool own = ne->kind == RSP_NET_SEND || ne->kind == RSP_NET_RECV ||
		   (ne->kind == RSP_NET_STATE && ne->newstate == RSP_TCP_SYN_SENT);
	uint32_t i;
	int err = life_of(f, ne->sk, smp->time, &i);

	if (err)
		return err;
	/*
	 * Only a thread's own calls make a socket its: a send, a receive, a
	 * connect (SYN_SENT). Arrivals and the other state changes come in
	 * whatever context the softirq ran, over a veth the peer's.
	 */
	if (!f->lives[i].kept && own && rsp_tidfilter__has(f, smp->tid)) {
		f->lives[i].kept = true;
		f->st.sockets++;
	}
	if (ne->kind == RSP_NET_STATE && ne->newstate == RSP_TCP_CLOSE)
		f->lives[i].open = false;
	return 0;
}

/* What the scan learns from one sample: a kept thread's child, a kept thread's socket. */
static int learn(struct rsp_tidfilter *f, const struct rsp_sample *smp)
{
	struct rsp_tp_sched_process_fork fk;
	struct rsp_net_event ne;
	int err = 0;

	if (!rsp_tp__sched_process_fork(f->s, smp, &fk)) {
		if (rsp_tidfilter__has(f, (uint32_t)fk.parent_pid) &&
		    !rsp_tidfilter__has(f, (uint32_t)fk.child_pid)) {
			err = rsp_tidfilter__add(f, (uint32_t)fk.child_pid);
			f->st.inherited += !err;
		}
		return err;
	}
	return sock_of(f, smp, &ne) ? learn_sock(f, smp, &ne) : 0;
}

/* A perf FORK record of a kept parent keeps its child too (side-band only windows). */
static int learn_fork(struct rsp_tidfilter *f, const struct perf_event_header *rec)
{
	struct rsp_task_rec b;
	int err = 0;

	if (rsp_record__task(rec, &b))
		return 0;
	if (rsp_tidfilter__has(f, b.ptid) && !rsp_tidfilter__has(f, b.tid)) {
		err = rsp_tidfilter__add(f, b.tid);
		f->st.inherited += !err;
	}
	return err;
}

/* The CPU's record before a lost-records one is kept (see struct rsp_tidfilter). */
static int learn_cpu(struct rsp_tidfilter *f, const struct rsp_wentry *e)
{
	if (e->cpu >= f->nr_last) {
		uint32_t n = e->cpu + 16;
		const struct perf_event_header **v;

		if (e->cpu > 65535)
			return 0; /* not a CPU rsp records */
		v = realloc(f->last, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + f->nr_last, 0, (n - f->nr_last) * sizeof(*v));
		f->last = v;
		f->nr_last = n;
	}
	if (e->rec->type == PERF_RECORD_LOST && f->last[e->cpu]) {
		int err = rsp_u64map__put(&f->must, (uint64_t)(uintptr_t)f->last[e->cpu], 1);

		if (err)
			return err;
	}
	f->last[e->cpu] = e->rec;
	return 0;
}

int rsp_tidfilter__scan(struct rsp_tidfilter *f, const struct rsp_wsnap *snap, uint64_t from,
			uint64_t to)
{
	struct rsp_witer *it = rsp_witer__new(snap, from, to);
	struct rsp_wentry e;
	int err = it ? 0 : -ENOMEM;

	while (!err && rsp_witer__next(it, &e)) {
		struct rsp_sample smp;

		err = learn_cpu(f, &e);
		if (err)
			break;
		if (e.rec->type == PERF_RECORD_FORK)
			err = learn_fork(f, e.rec);
		else if (rsp_record__is_sample(e.rec) &&
			 !rsp_record__parse_sample(f->s, e.rec, &smp))
			err = learn(f, &smp);
	}
	rsp_witer__delete(it);
	return err;
}

static uint64_t block_key(uint64_t dev, uint64_t sector)
{
	return (dev << 44 ^ sector) & ~(uint64_t)0 >> 1; /* UINT64_MAX is the map's */
}

/* A block request: kept from its first record by a kept thread to its completion. */
static bool keep_block(struct rsp_tidfilter *f, const struct rsp_sample *smp, uint64_t dev,
		       uint64_t sector, bool complete)
{
	uint64_t key = block_key(dev, sector);
	uint32_t v;
	bool ours = !rsp_u64map__get(&f->blocks, key, &v);

	if (complete) {
		if (ours)
			rsp_u64map__del(&f->blocks, key);
		return ours;
	}
	if (!ours && rsp_tidfilter__has(f, smp->tid))
		ours = !rsp_u64map__put(&f->blocks, key, 1);
	return ours;
}

/* Records of no thread, or of CPUs: kept (see the header). */
static bool cpu_record(int ev)
{
	return ev == RSP_EV_sched_switch || ev == RSP_EV_irq_handler_entry ||
	       ev == RSP_EV_irq_handler_exit || ev == RSP_EV_softirq_entry ||
	       ev == RSP_EV_softirq_exit || ev == RSP_EV_hrtimer_expire_entry ||
	       ev == RSP_EV_hrtimer_expire_exit;
}

static bool keep_sample(struct rsp_tidfilter *f, const struct perf_event_header *rec,
			const struct rsp_sample *smp)
{
	union {
		struct rsp_tp_sched_waking wk;
		struct rsp_tp_sched_wakeup_new wn;
		struct rsp_tp_sched_process_fork fk;
		struct rsp_tp_block_rq_insert bi;
		struct rsp_tp_block_rq_issue bs;
		struct rsp_tp_block_rq_complete bc;
	} u;
	struct rsp_net_event ne;
	uint64_t sk;

	if (smp->compact && smp->event < 0) {
		struct rsp_brec_comm c;

		/* A compact COMM names its thread in its body; a stack serves whoever cites it. */
		if (RSP_BREC_TYPE_KIND(rec->type) != RSP_BREC_COMM || rec->size < sizeof(c))
			return true;
		memcpy(&c, rec, sizeof(c));
		return rsp_tidfilter__has(f, c.tid);
	}
	if (cpu_record(smp->event))
		return true;
	sk = sock_of(f, smp, &ne);
	if (sk)
		return has_sock(f, sk, smp->time); /* whoever's context it came in */
	if (!rsp_tp__block_rq_insert(f->s, smp, &u.bi))
		return keep_block(f, smp, u.bi.dev, u.bi.sector, false);
	if (!rsp_tp__block_rq_issue(f->s, smp, &u.bs))
		return keep_block(f, smp, u.bs.dev, u.bs.sector, false);
	if (!rsp_tp__block_rq_complete(f->s, smp, &u.bc))
		return keep_block(f, smp, u.bc.dev, u.bc.sector, true);
	if (rsp_tidfilter__has(f, smp->tid))
		return true;
	if (!rsp_tp__sched_waking(f->s, smp, &u.wk))
		return rsp_tidfilter__has(f, (uint32_t)u.wk.pid);
	if (!rsp_tp__sched_wakeup_new(f->s, smp, &u.wn))
		return rsp_tidfilter__has(f, (uint32_t)u.wn.pid);
	if (!rsp_tp__sched_process_fork(f->s, smp, &u.fk))
		return rsp_tidfilter__has(f, (uint32_t)u.fk.child_pid);
	return false;
}

/* Side-band and other non-sample records: by their thread, or kept if they name none. */
static bool keep_other(struct rsp_tidfilter *f, const struct perf_event_header *rec)
{
	struct rsp_sample smp;
	struct rsp_task_rec b;
	int has;

	if (rec->type == PERF_RECORD_FORK && !rsp_record__task(rec, &b))
		return rsp_tidfilter__has(f, b.tid) || rsp_tidfilter__has(f, b.ptid);
	if (rec->type == PERF_RECORD_LOST)
		return true;
	has = rsp_record__parse_id(f->s, rec, &smp);
	return has < 0 || !(has & RSP_SAMPLE_HAS_TID) || rsp_tidfilter__has(f, smp.tid);
}

bool rsp_tidfilter__keep(struct rsp_tidfilter *f, const struct perf_event_header *rec)
{
	struct rsp_sample smp;
	uint32_t v;
	bool keep;

	if (!rsp_u64map__get(&f->must, (uint64_t)(uintptr_t)rec, &v))
		keep = true;
	else if (!rsp_record__is_sample(rec))
		keep = keep_other(f, rec);
	else if (rsp_record__parse_sample(f->s, rec, &smp))
		keep = true; /* not the schema's: the writer leaves it out or keeps it as is */
	else
		keep = keep_sample(f, rec, &smp);
	f->st.kept += keep;
	f->st.left_out += !keep;
	return keep;
}

void rsp_tidfilter__stats(const struct rsp_tidfilter *f, struct rsp_tidfilter_stats *st)
{
	*st = f->st;
}
