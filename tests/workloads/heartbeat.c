// SPDX-License-Identifier: GPL-2.0
/*
 * heartbeat SECONDS: a thread "heartbeat" sleeps 10 ms, takes a lock,
 * bumps a counter, releases it, again and again; a thread "hb-work" computes
 * without pause beside it (the process's real work).
 *
 * Known answer (the wait-for graph): the heartbeat and its timer form a knot
 * with no device whose threads use far less than a CPU: a background knot
 * (wPerf 3.3). heartbeat -> timer weighs the time it slept (measured here).
 * The worker waits for nothing: a sink.
 *
 * Prints one JSON line: {"pid", "tid_heartbeat", "tid_worker", "beats",
 * "elapsed_s", "offcpu_s", "slept_s"}: off-CPU time in nanosleep (wall minus
 * CPU) and the part of it not runnable (schedstat).
 */
#include <stdio.h>
#include <stdlib.h>
#include "wl.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t deadline;
static long beats;
static double slept, offcpu;
static pid_t tid_hb, tid_work;

static void *heartbeat(void *arg)
{
	struct timespec ten = {0, 10000000};

	(void)arg;
	tid_hb = wl_gettid();
	wl_setname("heartbeat");
	while (wl_now() < deadline) {
		struct wl_sleepwatch sw;
		uint64_t t0 = wl_now();
		double c0 = wl_thread_cpu();

		wl_sleepwatch_start(&sw);
		nanosleep(&ten, NULL);
		offcpu += (double)(wl_now() - t0) / 1e9 - (wl_thread_cpu() - c0);
		slept += wl_sleepwatch_stop(&sw);
		pthread_mutex_lock(&mu);
		beats++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *work(void *arg)
{
	(void)arg;
	tid_work = wl_gettid();
	wl_setname("hb-work");
	while (wl_now() < deadline)
		wl_spin_ns(1000000);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	pthread_t h;
	uint64_t t0;

	if (secs <= 0) {
		fprintf(stderr, "usage: heartbeat SECONDS\n");
		return 2;
	}
	t0 = wl_now();
	deadline = t0 + (uint64_t)(secs * 1e9);
	/* The main thread is the worker. */
	pthread_create(&h, NULL, heartbeat, NULL);
	work(NULL);
	pthread_join(h, NULL);
	printf("{\"pid\": %d, \"tid_heartbeat\": %d, \"tid_worker\": %d, \"beats\": %ld, "
	       "\"elapsed_s\": %.6f, \"offcpu_s\": %.6f, \"slept_s\": %.6f}\n",
	       (int)getpid(), tid_hb, tid_work, beats, (double)(wl_now() - t0) / 1e9, offcpu,
	       slept);
	return 0;
}
