// SPDX-License-Identifier: GPL-2.0
/*
 * The process model and symbols of the live system (librsp's symbolizer),
 * kept current by a small thread of its own.
 *
 * Threads and the lock. The capture thread never touches the model: it
 * only publishes, after each timed drain, the time up to which every ring
 * has been copied into the window (drain.drained_to). The model thread
 * reads /proc once at start (after the events are enabled, so nothing falls
 * between the snapshot and the records), preloads the kernel's symbols,
 * then every MODEL_PERIOD applies the window's new side-band records up to
 * that watermark and prunes what the window no longer holds. The control
 * thread takes the same lock around each query, after applying the records
 * that arrived since. One mutex, held by the model thread for a few
 * milliseconds at a time and by the control thread for one query.
 *
 * Gaps. If records were evicted before the model read them, or the kernel
 * lost records, the model may have missed an mmap or an exec: it reads
 * /proc again (at most every RESCAN_MIN), which repairs every process still
 * alive. Without the side-band events (--families without sideband), /proc
 * is read every RESCAN_MIN instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include "log.h"
#include "rspd.h"

#define MODEL_PERIOD_NS (250ull * 1000000)
#define RESCAN_MIN_NS	(10ull * 1000000000)

struct rspd_model {
	struct rspd *d;
	struct rsp_symbolizer *sym;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stop, loaded;
	uint64_t cursor;      /* side-band records applied up to this time */
	uint64_t last_rescan; /* CLOCK_MONOTONIC of the last /proc pass */
	uint64_t rescans, gaps;
};

static void rescan(struct rspd_model *m, const char *why)
{
	struct rsp_buf err = RSP_BUF_INIT;
	uint64_t t0 = rspd_now_ns();
	unsigned n;

	if (rsp_procfs__load_all(rsp_symbolizer__maps(m->sym), "/proc", t0, &n, &err))
		rspd_log(RSP_LOG_WARN, "process model: %s", err.data);
	else
		rspd_log(RSP_LOG_DEBUG,
			 "process model: read %u processes from /proc in %.1f ms (%s)", n,
			 (double)(rspd_now_ns() - t0) / 1e6, why);
	m->last_rescan = t0;
	m->rescans++;
	rsp_buf__exit(&err);
}

/* Apply what the window gained since the last call; under the lock. */
static void sync_model(struct rspd_model *m)
{
	struct rspd *d = m->d;
	uint64_t to = atomic_load_explicit(&d->drain.drained_to, memory_order_acquire);
	struct rsp_maps *maps = rsp_symbolizer__maps(m->sym);
	struct rsp_maps_ingest res;
	struct rsp_window_stats ws;
	uint64_t now = rspd_now_ns();
	bool sideband = d->es.status[RSP_EV_sideband].open;

	if (rsp_maps__ingest(maps, d->es.schema, d->window, m->cursor, to, &res))
		rspd_log(RSP_LOG_WARN, "process model: out of memory applying side-band records");
	m->cursor = res.until;
	if (res.evicted_gap || res.lost) {
		m->gaps++;
		if (now - m->last_rescan >= RESCAN_MIN_NS)
			rescan(m, res.evicted_gap ? "records evicted before the model read them"
						  : "records lost by the kernel");
	} else if (!sideband && now - m->last_rescan >= RESCAN_MIN_NS) {
		rescan(m, "no side-band events");
	}
	rsp_window__stats(d->window, &ws);
	if (ws.oldest)
		rsp_maps__prune(maps, ws.oldest);
}

/* The kernel table main.c loaded at start, shared with the timeline. */
static void load_kernel(struct rspd_model *m)
{
	if (m->d->ksyms)
		rsp_symbolizer__use_ksyms(m->sym, m->d->ksyms);
}

static void *model_main(void *arg)
{
	struct rspd_model *m = arg;
	struct timespec ts;

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

int rspd_model__init(struct rspd *d, char *err, size_t errlen)
{
	struct rsp_symbolizer_config cfg = {
		.max_objects = d->cfg.symbol_cache,
		.live = true,
	};
	struct rspd_model *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;

	if (!m || !(m->sym = rsp_symbolizer__new(&cfg))) {
		free(m);
		snprintf(err, errlen, "out of memory creating the process model");
		return -ENOMEM;
	}
	m->d = d;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	d->model = m;
	return 0;
}

int rspd_model__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_model *m = d->model;
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

void rspd_model__stop(struct rspd *d)
{
	struct rspd_model *m = d->model;

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
	rsp_symbolizer__delete(m->sym);
	free(m);
	d->model = NULL;
}

struct rsp_symbolizer *rspd_model__acquire(struct rspd *d)
{
	struct rspd_model *m = d->model;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	while (!m->loaded)
		pthread_cond_wait(&m->cond, &m->lock);
	sync_model(m);
	rsp_symbolizer__begin(m->sym);
	return m->sym;
}

void rspd_model__release(struct rspd *d)
{
	if (d->model)
		pthread_mutex_unlock(&d->model->lock);
}
