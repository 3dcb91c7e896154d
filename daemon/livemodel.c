// SPDX-License-Identifier: GPL-2.0
/*
 * The live process model: the processes and symbols of the running system
 * (librsp's symbolizer) that queries resolve addresses with, kept current by
 * a small thread of its own. (A dump's processes are written by
 * dumpprocs.c, which keeps no model.)
 *
 * Threads and the lock. The capture thread never touches the model: as it
 * drains it copies the non-sample records (COMM, MMAP2, FORK, EXIT, LOST)
 * into a lock-free queue (sbq.h), and it publishes, after each timed drain,
 * the time up to which every ring has been drained (drain.drained_to). The
 * model thread reads /proc once at start (after the events are enabled, so
 * nothing falls between the snapshot and the records), then every
 * MODEL_PERIOD takes the queued records, sorts them by time, applies those
 * up to that watermark (the rest wait for the next round) and prunes what
 * the window no longer holds. It never walks the window itself: side-band
 * records are a few per second among tens of thousands of samples. The control
 * thread takes the same lock around each query, after applying the records
 * that arrived since. One mutex, held by the model thread for a few
 * milliseconds at a time and by the control thread for one query.
 *
 * Gaps. If the queue was full, or the kernel lost records, the model may
 * have missed an mmap or an exec: it reads
 * /proc again (at most every RESCAN_MIN), which repairs every process still
 * alive. Without the side-band events (--families without sideband), /proc
 * is read every RESCAN_MIN instead.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include "clock.h"
#include "livemodel.h"
#include "log.h"
#include "rspd.h"
#include "sbq.h"

#define MODEL_PERIOD_NS (250ull * 1000000)
#define RESCAN_MIN_NS	(10ull * 1000000000)
#define SBQ_BYTES	(1u << 20)

struct rspd_livemodel {
	struct rspd *d;
	struct rsp_symbolizer *sym;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stop, loaded;
	uint64_t cursor;      /* side-band records applied up to this time */
	uint64_t last_rescan; /* CLOCK_MONOTONIC of the last /proc pass */
	uint64_t rescans, gaps;
	struct rsp_sbq sbq;	/* from the drain */
	struct rsp_buf pending; /* taken from sbq, not yet applied: u64 time + record */
	bool pending_oom;
	uint64_t seen_dropped; /* sbq drops already accounted as a gap */
};

static void rescan(struct rspd_livemodel *m, const char *why)
{
	struct rsp_buf err = RSP_BUF_INIT;
	uint64_t t0 = rspd_clock__now_ns();
	unsigned n;

	if (rsp_procfs__load_all(rsp_symbolizer__maps(m->sym), "/proc", t0, &n, &err))
		rspd_log__write(RSP_LOG_WARN, "process model: %s", err.data);
	else
		rspd_log__write(RSP_LOG_DEBUG,
				"process model: read %u processes from /proc in %.1f ms (%s)", n,
				(double)(rspd_clock__now_ns() - t0) / 1e6, why);
	m->last_rescan = t0;
	m->rescans++;
	rsp_buf__exit(&err);
}

static void take(void *ctx, uint64_t time, const struct perf_event_header *rec)
{
	struct rspd_livemodel *m = ctx;

	if (rsp_buf__add(&m->pending, &time, 8) || rsp_buf__add(&m->pending, rec, rec->size))
		m->pending_oom = true;
}

struct pend {
	uint64_t time;
	size_t off;
};

static int cmp_pend(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off; /* drain order on ties */
}

/*
 * A process's first sight (its fork) and its exec: read its cgroup and
 * namespaced pid from /proc now (rsp_procfs__load_cgroup()). This is up to
 * MODEL_PERIOD after the record: a process gone by then keeps its parent's
 * cgroup (inherited at fork) and no namespaced pid. A process moved to
 * another cgroup later is seen at its next exec or /proc pass. The same for
 * both backends, and nothing added to the capture path.
 */
static int first_sight(const struct perf_event_header *h, uint64_t time, struct rsp_maps *maps)
{
	struct rsp_task_rec k;
	struct rsp_comm_rec c;

	/* a new process: its child's pid is not its parent's */
	if (!rsp_record__task(h, &k) && h->type == PERF_RECORD_FORK && k.pid != k.ppid)
		return rsp_procfs__load_cgroup(maps, "/proc", k.pid, time);
	if (!rsp_record__comm(h, &c) && c.exec && c.pid == c.tid)
		return rsp_procfs__load_cgroup(maps, "/proc", c.pid, time);
	return 0;
}

/*
 * Apply the queued records up to @to in time order; keep the later ones.
 * Return: whether a gap (lost records, a full queue) was seen.
 */
static bool apply_pending(struct rspd_livemodel *m, uint64_t to)
{
	struct rsp_maps *maps = rsp_symbolizer__maps(m->sym);
	struct rsp_buf keep = RSP_BUF_INIT;
	struct pend *v;
	size_t n = 0, cap = m->pending.len / 40 + 1;
	bool gap = false;

	v = malloc(cap * sizeof(*v));
	if (!v)
		return true;
	for (size_t off = 0; off + 8 + sizeof(struct perf_event_header) <= m->pending.len;) {
		const struct perf_event_header *h = (const void *)(m->pending.data + off + 8);

		if (n == cap) /* records are at least 40 bytes: cannot happen */
			break;
		memcpy(&v[n].time, m->pending.data + off, 8);
		v[n++].off = off;
		off += 8 + h->size;
	}
	qsort(v, n, sizeof(*v), cmp_pend);
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_header *h = (const void *)(m->pending.data + v[i].off + 8);

		if (v[i].time > to) {
			if (rsp_buf__add(&keep, m->pending.data + v[i].off, 8 + h->size))
				gap = true;
		} else if (h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_LOST_SAMPLES) {
			gap = true;
		} else if (rsp_maps__feed(maps, m->d->es.schema, h) == -ENOMEM) {
			gap = true;
		} else if (first_sight(h, v[i].time, maps) == -ENOMEM) {
			gap = true;
		}
	}
	free(v);
	rsp_buf__exit(&m->pending);
	m->pending = keep;
	return gap;
}

/* Apply what the drain queued since the last call; under the lock. */
static void sync_model(struct rspd_livemodel *m)
{
	struct rspd *d = m->d;
	/* Load the watermark first: every record older than it is queued by now. */
	uint64_t to = atomic_load_explicit(&d->drain.drained_to, memory_order_acquire);
	struct rsp_maps *maps = rsp_symbolizer__maps(m->sym);
	struct rsp_window_stats ws;
	uint64_t now = rspd_clock__now_ns(), dropped;
	bool sideband = d->es.status[RSP_EV_sideband].open, gap;

	rsp_sbq__pop(&m->sbq, take, m);
	dropped = atomic_load_explicit(&m->sbq.dropped, memory_order_relaxed);
	gap = apply_pending(m, to) || m->pending_oom || dropped != m->seen_dropped;
	m->seen_dropped = dropped;
	m->pending_oom = false;
	if (to > m->cursor)
		m->cursor = to;
	if (gap) {
		m->gaps++;
		if (now - m->last_rescan >= RESCAN_MIN_NS)
			rescan(m, "side-band records lost by the kernel or the queue");
	} else if (!sideband && now - m->last_rescan >= RESCAN_MIN_NS) {
		rescan(m, "no side-band events");
	}
	rsp_window__stats(d->window, &ws);
	if (ws.oldest)
		rsp_maps__prune(maps, ws.oldest);
}

/* The kernel table main.c loaded at start, shared with the timeline. */
static void load_kernel(struct rspd_livemodel *m)
{
	if (m->d->ksyms)
		rsp_symbolizer__use_ksyms(m->sym, m->d->ksyms);
}

static void *model_main(void *arg)
{
	struct rspd_livemodel *m = arg;
	struct timespec ts;

	pthread_setname_np(pthread_self(), "rspd-model");

	pthread_mutex_lock(&m->lock);
	rescan(m, "start");
	load_kernel(m);
	m->loaded = true;
	pthread_cond_broadcast(&m->cond);
	while (!m->stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)MODEL_PERIOD_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&m->cond, &m->lock, &ts);
		if (!m->stop)
			sync_model(m);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int rspd_livemodel__init(struct rspd *d, char *err, size_t errlen)
{
	struct rsp_symbolizer_config cfg = {
		.max_objects = d->cfg.symbol_cache,
		.live = true,
	};
	struct rspd_livemodel *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;

	if (!m || !(m->sym = rsp_symbolizer__new(&cfg)) || rsp_sbq__init(&m->sbq, SBQ_BYTES)) {
		if (m)
			rsp_symbolizer__delete(m->sym);
		free(m);
		snprintf(err, errlen, "out of memory creating the process model");
		return -ENOMEM;
	}
	m->d = d;
	/* Set before the events are enabled: the drain feeds the queue from then. */
	d->drain.sbq = &m->sbq;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	d->livemodel = m;
	return 0;
}

int rspd_livemodel__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_livemodel *m = d->livemodel;
	int ret = pthread_create(&m->thread, NULL, model_main, m);

	/* started is read by the main thread only (stop); never wait on the
	 * lock here: the model thread holds it while it reads /proc. */
	m->started = !ret;
	if (ret) {
		/* Queries must not wait for a load that will never happen. */
		pthread_mutex_lock(&m->lock);
		m->loaded = true;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		snprintf(err, errlen, "cannot start the process model thread: %s", strerror(ret));
	}
	return -ret;
}

void rspd_livemodel__stop(struct rspd *d)
{
	struct rspd_livemodel *m = d->livemodel;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (m->started)
		pthread_join(m->thread, NULL);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	d->drain.sbq = NULL;
	rsp_sbq__exit(&m->sbq);
	rsp_buf__exit(&m->pending);
	rsp_symbolizer__delete(m->sym);
	free(m);
	d->livemodel = NULL;
}

struct rsp_symbolizer *rspd_livemodel__acquire(struct rspd *d)
{
	struct rspd_livemodel *m = d->livemodel;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	while (!m->loaded)
		pthread_cond_wait(&m->cond, &m->lock);
	sync_model(m);
	rsp_symbolizer__begin(m->sym);
	return m->sym;
}

/* With the lock held: the model brought up to date, or false (unlocked) before its first load. */
static bool begin_loaded(struct rspd_livemodel *m)
{
	if (!m->loaded) {
		pthread_mutex_unlock(&m->lock);
		return false;
	}
	sync_model(m);
	rsp_symbolizer__begin(m->sym);
	return true;
}

struct rsp_symbolizer *rspd_livemodel__try_acquire(struct rspd *d)
{
	struct rspd_livemodel *m = d->livemodel;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	return begin_loaded(m) ? m->sym : NULL;
}

struct rsp_symbolizer *rspd_livemodel__acquire_nowait(struct rspd *d, bool *busy)
{
	struct rspd_livemodel *m = d->livemodel;

	*busy = false;
	if (!m)
		return NULL;
	if (pthread_mutex_trylock(&m->lock)) {
		*busy = true;
		return NULL;
	}
	if (!begin_loaded(m)) {
		*busy = true;
		return NULL;
	}
	return m->sym;
}

void rspd_livemodel__release(struct rspd *d)
{
	if (d->livemodel)
		pthread_mutex_unlock(&d->livemodel->lock);
}
