// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis thread: feeds every record to the latency histograms
 * (lib/analysis/histfeed.c, which also runs a timeline for off-CPU and run-queue
 * times) exactly once, in time order across CPUs, without slowing
 * capture.
 *
 * Why a thread and not the drain loop: the drain copies one CPU's ring at
 * a time, so across CPUs its order is not time order, and block requests
 * (insert on one CPU, complete on another) and the timeline (a waking on
 * one CPU, the switch-in on another) need time order. The window already
 * merges the CPUs' streams by time (rsp_witer), so this thread reads the
 * window behind capture. The capture loop stays what it was: copy and
 * count, plus one store and a condition signal per full drain.
 *
 * Exactly once. After each rsp_drain__all() the capture thread publishes
 * a watermark, "complete until": the time the drain started, minus a
 * margin. Every record stamped before the drain started was in its ring
 * when the drain read it, except one still being written (its time is
 * taken before it is reserved and committed: microseconds, more if the
 * vCPU is preempted right then); the margin covers that. Each pass of this
 * thread pins the window's records in (done, watermark], feeds them in
 * time order and sets done = watermark. A record therefore lands in
 * exactly one pass.
 *
 * Falling behind. If this thread is so late that the window evicted
 * records it had not read (the window's complete_from, the newest time an
 * eviction may have cut, is past done), the pass skips to complete_from:
 * rsp_histfeed__gap() forgets open spans and counts the gap, which
 * `rspctl hist` and `rspctl status` show. Never silent.
 *
 * Cost: a pass per flush interval (100 ms by default); the iterator
 * re-reads the headers of records before `done` in each CPU's first
 * pinned chunk (the window has no resume position), at most one chunk per
 * CPU per pass; the feed itself costs ~0.3 us per record (bench/
 * hist_bench.sh). Measured in BENCHMARKS.md (histograms on vs off).
 *
 * Records are pinned only for the pass: the timeline runs without
 * RSP_TL_RECORDS_STABLE, so it copies what it keeps across passes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rsp/histfeed.h>
#include "histthread.h"
#include "log.h"
#include "rspd.h"
#include "syscalls.h"
#include "trigger.h"

#define MARGIN_NS 20000000ull /* 20 ms: records being written when a drain starts */

struct rspd_histthread {
	struct rspd *d;
	struct rsp_hist_store *store;
	struct rsp_histfeed *feed;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t complete_until;  /* under lock */
	bool stop;		  /* under lock */
	uint64_t done;		  /* thread only */
	_Atomic uint64_t read_to; /* done, for other threads */
	struct rsp_wmark *marks;  /* thread only: where the last pass stopped, per stream */
	unsigned nr_marks;
	_Atomic uint64_t passes, records, gaps;
	_Atomic double cpu_s;
};

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Feed the window's records in (done, until]. */
static void pass(struct rspd_histthread *a, uint64_t until)
{
	struct rsp_window *w = a->d->window;
	const struct rsp_schema *schema = a->d->es.schema;
	struct rsp_wsnap *snap = rsp_window__pin(w, a->done + 1, until);
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t from = a->done + 1, n = 0, complete_from;

	if (!snap)
		return; /* ENOMEM: try again next time */
	/* After pinning: what was evicted before the pin is gone; what after, we hold. */
	complete_from = rsp_window__complete_from(w);
	if (complete_from >= from) {
		rsp_histfeed__gap(a->feed, from, complete_from, 0);
		atomic_fetch_add_explicit(&a->gaps, 1, memory_order_relaxed);
		rspd_log__write(RSP_LOG_WARN,
				"histograms: records of %.3f .. %.3f were evicted before they were "
				"read; the histogram thread is behind (raise --window)",
				(double)from / 1e9, (double)complete_from / 1e9);
		from = complete_from + 1;
	}
	if (!a->marks) { /* the window's streams are fixed at its creation */
		a->nr_marks = rsp_wsnap__streams(snap);
		a->marks =
			calloc(a->nr_marks, sizeof(*a->marks)); /* NULL: scan from chunk starts */
	}
	/* each stream from where the last pass stopped: not its newest chunk again */
	it = from <= until ? rsp_witer__resume(snap, from, until, a->marks) : NULL;
	/* The feed also runs the timeline: sleeps and run-queue waits. */
	while (it && rsp_witer__next(it, &e)) {
		rsp_histfeed__record(a->feed, schema, &e);
		n++;
	}
	if (it && a->marks)
		rsp_witer__marks(it, a->marks);
	else if (a->marks) /* nothing read: the next pass starts from its chunks' starts */
		memset(a->marks, 0, a->nr_marks * sizeof(*a->marks));
	if (it || from > until) {
		a->done = until;
		atomic_store_explicit(&a->read_to, until, memory_order_release);
		rsp_hist_store__set_progress(a->store, rsp_histfeed__advance(a->feed, until));
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	/*
	 * Syscall profiles, counted in the kernel: stamped with the watermark,
	 * not the clock, so the store's slices keep moving forward with the
	 * records (a call lands up to the margin plus a read interval early).
	 */
	if (a->d->cfg.hist.nr_shards > 1)
		rspd_syscalls__read(a->d, rsp_hist_store__shard(a->store, 1), until);
	atomic_fetch_add_explicit(&a->records, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&a->passes, 1, memory_order_relaxed);
	/* the profiles are fed up to @until: their triggers, once a second */
	if (a->done == until)
		rspd_triggers__hist(a->d, until);
}

static void *analysis_main(void *arg)
{
	struct rspd_histthread *a = arg;

	/* top -H and perf name it (the main thread, capture, keeps rspd) */
	pthread_setname_np(pthread_self(), "rspd-hist");

	for (;;) {
		uint64_t until;

		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->complete_until <= a->done)
			pthread_cond_wait(&a->cond, &a->lock);
		until = a->complete_until;
		pthread_mutex_unlock(&a->lock);
		if (until > a->done)
			pass(a, until);
		atomic_store_explicit(&a->cpu_s, thread_cpu_s(), memory_order_relaxed);
		pthread_mutex_lock(&a->lock);
		if (a->stop && a->complete_until <= a->done) {
			pthread_mutex_unlock(&a->lock);
			break;
		}
		pthread_mutex_unlock(&a->lock);
	}
	return NULL;
}

static void analysis_free(struct rspd_histthread *a)
{
	rsp_histfeed__delete(a->feed);
	rsp_hist_store__delete(a->store);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a->marks);
	free(a);
}

int rspd_histthread__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_histthread *a;
	struct rsp_histfeed_config fc = {
		.shard = 0,
		.nr_cpus = d->es.max_cpu,
		.io_timeout_ns = d->cfg.hist_io_timeout_ns,
		/* off-CPU and run-queue times: a timeline over the same records */
		.schema = d->es.schema,
		.ksyms = d->ksyms,
		.max_threads = d->cfg.hist_max_threads,
	};
	int ret;

	if (!d->cfg.hist_on)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	a->d = d;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	/*
	 * One writer, this thread; a second shard of its own for the syscall
	 * family's profiles, so that their many (thread, syscall) subjects have
	 * their own --hist-profiles and --hist-slice-cap and do not crowd the
	 * timeline's profiles out of the table or the slices.
	 */
	d->cfg.hist.nr_shards = rspd_syscalls__wanted(d) ? 2 : 1;
	a->store = rsp_hist_store__new(&d->cfg.hist);
	a->feed = a->store ? rsp_histfeed__new(a->store, &fc) : NULL;
	if (!a->feed) {
		snprintf(err, errlen,
			 "cannot create the latency histograms (%u profiles, %u slices): %s — "
			 "lower --hist-profiles or --hist-slices, or run with --no-hist",
			 d->cfg.hist.max_profiles, d->cfg.hist.nr_slices, strerror(errno));
		analysis_free(a);
		return -ENOMEM;
	}
	ret = pthread_create(&a->thread, NULL, analysis_main, a);
	if (ret) {
		snprintf(err, errlen, "cannot start the histogram thread: %s", strerror(ret));
		analysis_free(a);
		return -ret;
	}
	a->running = true;
	d->histthread = a;
	return 0;
}

void rspd_histthread__publish(struct rspd *d, uint64_t drain_start)
{
	struct rspd_histthread *a = d->histthread;

	if (!a || drain_start <= MARGIN_NS)
		return;
	pthread_mutex_lock(&a->lock);
	if (drain_start - MARGIN_NS > a->complete_until) {
		a->complete_until = drain_start - MARGIN_NS;
		pthread_cond_signal(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
}

uint64_t rspd_histthread__read_to(struct rspd *d)
{
	return d->histthread ? atomic_load_explicit(&d->histthread->read_to, memory_order_acquire)
			     : 0;
}

void rspd_histthread__stop(struct rspd *d)
{
	struct rspd_histthread *a = d->histthread;
	struct rsp_histfeed_stats fs;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (a->running)
		pthread_join(a->thread, NULL);
	rsp_histfeed__stats(a->feed, &fs);
	rspd_log__write(RSP_LOG_INFO,
			"histograms: fed %llu records in %llu passes, %.2f s of CPU, %llu gaps; "
			"%llu sleeps (%llu with no wakeup seen), %llu run-queue waits (%llu more "
			"with no switch-in seen), %llu records of threads past hist-threads",
			(unsigned long long)atomic_load(&a->records),
			(unsigned long long)atomic_load(&a->passes), atomic_load(&a->cpu_s),
			(unsigned long long)atomic_load(&a->gaps), (unsigned long long)fs.sleeps,
			(unsigned long long)fs.sleeps_inferred, (unsigned long long)fs.runq,
			(unsigned long long)fs.switch_not_seen,
			(unsigned long long)fs.threads_untracked);
	d->histthread = NULL;
	analysis_free(a);
}

int rspd_histthread__feed_stats(struct rspd *d, struct rsp_histfeed_stats *out)
{
	if (!d->histthread || !d->histthread->feed)
		return -ENOENT;
	rsp_histfeed__stats(d->histthread->feed, out);
	return 0;
}

struct rsp_hist_store *rspd_histthread__store(struct rspd *d)
{
	return d->histthread ? d->histthread->store : NULL;
}
