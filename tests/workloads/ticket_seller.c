// SPDX-License-Identifier: GPL-2.0
/*
 * ticket_seller SECONDS: wPerf's false-wakeup example (OSDI '18, 4.1). The
 * main thread "seller" adds one item every 2 ms (a nanosleep between) and
 * pthread_cond_signal()s; six threads "waiter-1" .. "waiter-6" share that
 * one condition variable. A waiter that gets an item works 300 us of CPU
 * and then pthread_cond_broadcast()s, which wakes the other waiters: they
 * find nothing and sleep again (a false wakeup, counted here and marked
 * with RSP_FALSE_WAKEUP() from rsp/annotate.h). Thousands of them a second.
 *
 * Built twice: ticket_seller carries the rsp USDT notes, ticket_seller_plain
 * (RSP_NO_ANNOTATE) carries none, for rsp's inference without annotations.
 *
 * Known answer (the wait-for graph with false wakeups removed): the waiters
 * wait for the seller (every item comes from it; the broadcasts among the
 * waiters wake nobody who then proceeds), the seller's own time is a
 * deliberate sleep (its timer), and there is no knot among the waiters.
 *
 * Prints one JSON line: {"pid", "tid_seller", "tids_waiters": [6],
 * "elapsed_s", "items", "false_wakeups", "annotated"}.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <rsp/annotate.h>
#include "wl.h"

#define NW	6
#define SELL_NS 2000000
#define WORK_NS 300000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long items, sold, false_wakeups;
static bool done;
static pid_t tids[NW];

/* Take one item, sleeping until there is one; false when the seller is done. */
static bool take(void)
{
	bool got;

	pthread_mutex_lock(&mu);
	while (!items && !done) {
		pthread_cond_wait(&cv, &mu);
		if (!items && !done) {
			false_wakeups++;
			RSP_FALSE_WAKEUP();
		}
	}
	got = items > 0;
	if (got)
		items--, sold++;
	pthread_mutex_unlock(&mu);
	return got;
}

static void *waiter(void *arg)
{
	long idx = (long)arg;
	char name[16];

	tids[idx] = wl_gettid();
	snprintf(name, sizeof(name), "waiter-%d", (int)(idx % NW) + 1);
	wl_setname(name);
	while (take()) {
		wl_spin_ns(WORK_NS);
		/* sloppy notify_all: wakes every other waiter, for nothing */
		pthread_mutex_lock(&mu);
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	const struct timespec gap = {0, SELL_NS};
	pthread_t th[NW];
	uint64_t t0, deadline;

	if (secs <= 0 || argc > 2) {
		fprintf(stderr, "usage: ticket_seller SECONDS\n");
		return 2;
	}
	wl_setname("seller");
	for (long i = 0; i < NW; i++)
		pthread_create(&th[i], NULL, waiter, (void *)i);
	t0 = wl_now();
	deadline = t0 + (uint64_t)(secs * 1e9);
	while (wl_now() < deadline) {
		nanosleep(&gap, NULL);
		pthread_mutex_lock(&mu);
		items++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	done = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	printf("{\"pid\": %d, \"tid_seller\": %d, \"tids_waiters\": [", (int)getpid(),
	       (int)wl_gettid());
	for (int i = 0; i < NW; i++)
		printf("%s%d", i ? ", " : "", (int)tids[i]);
	printf("], \"elapsed_s\": %.6f, \"items\": %ld, \"false_wakeups\": %ld, "
	       "\"annotated\": %s}\n",
	       (double)(wl_now() - t0) / 1e9, sold, false_wakeups,
	       RSP_ANNOTATED ? "true" : "false");
	return 0;
}
