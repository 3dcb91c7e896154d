// SPDX-License-Identifier: GPL-2.0
/*
 * The window's compressor (wzip.h).
 *
 * Which chunks: sealed ones (the capture thread has moved past them) whose
 * newest record is COLD_NS older than both what the capture thread has
 * drained and what the analysis thread has read. A pin decompresses what
 * it takes, so the readers that follow the window as it is written (the
 * analysis thread, every drain) must stay on raw chunks, and so should a
 * query of the last seconds: COLD_NS is that margin.
 *
 * Its own thread, not the capture thread's (a 1 MiB chunk takes a few ms:
 * the rings would wait) nor the analysis thread's (histograms would lag):
 * every PERIOD_NS it compresses what turned cold. Its CPU is rspd's and
 * counts in the overhead budget as the rest of rspd's does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "histthread.h"
#include "log.h"
#include "rspd.h"
#include "wzip.h"

#define COLD_NS	  2000000000ull /* 2 s */
#define PERIOD_NS 500000000ull	/* 0.5 s */

struct rspd_wzip {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	bool stop;
};

static uint64_t cold_before(struct rspd *d)
{
	uint64_t t = atomic_load_explicit(&d->drain.drained_to, memory_order_acquire);
	uint64_t read = rspd_histthread__read_to(d);

	if (d->histthread && read < t)
		t = read;
	return t > COLD_NS ? t - COLD_NS : 0;
}

static void *wzip_main(void *arg)
{
	struct rspd *d = arg;
	struct rspd_wzip *z = d->wzip;
	bool warned = false;

	pthread_setname_np(pthread_self(), "rspd-zip");

	pthread_mutex_lock(&z->lock);
	while (!z->stop) {
		struct timespec ts;
		uint64_t before;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)(PERIOD_NS % 1000000000ull);
		ts.tv_sec += (time_t)(PERIOD_NS / 1000000000ull) + ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		while (!z->stop && pthread_cond_timedwait(&z->cond, &z->lock, &ts) != ETIMEDOUT)
			;
		if (z->stop)
			break;
		pthread_mutex_unlock(&z->lock);
		before = cold_before(d);
		n = before ? rsp_window__compress(d->window, before, 0) : 0;
		if (n < 0 && !warned) {
			rspd_log__write(
				RSP_LOG_WARN,
				"window: out of memory while compressing cold chunks; they "
				"stay raw (the window holds less history) until memory frees");
			warned = true;
		}
		pthread_mutex_lock(&z->lock);
	}
	pthread_mutex_unlock(&z->lock);
	return NULL;
}

int rspd_wzip__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_wzip *z;
	pthread_condattr_t ca;
	int ret;

	if (!d->cfg.window_compress)
		return 0;
	z = calloc(1, sizeof(*z));
	if (!z) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&z->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&z->cond, &ca);
	pthread_condattr_destroy(&ca);
	d->wzip = z;
	ret = pthread_create(&z->thread, NULL, wzip_main, d);
	if (ret) {
		snprintf(err, errlen,
			 "cannot start the window's compressor thread: %s — or run with "
			 "--no-window-compress",
			 strerror(ret));
		pthread_mutex_destroy(&z->lock);
		pthread_cond_destroy(&z->cond);
		free(z);
		d->wzip = NULL;
		return -ret;
	}
	return 0;
}

void rspd_wzip__stop(struct rspd *d)
{
	struct rspd_wzip *z = d->wzip;

	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	z->stop = true;
	pthread_cond_signal(&z->cond);
	pthread_mutex_unlock(&z->lock);
	pthread_join(z->thread, NULL);
	pthread_mutex_destroy(&z->lock);
	pthread_cond_destroy(&z->cond);
	free(z);
	d->wzip = NULL;
}
