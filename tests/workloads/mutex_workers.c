// SPDX-License-Identifier: GPL-2.0
/*
 * mutex_workers SECONDS [CS_US]: four threads ("lockw-1" .. "lockw-4")
 * contend on one pthread mutex; each holds it for CS_US microseconds of
 * CPU (default 2000) and works 200 us outside it between acquisitions.
 *
 * Known answer (the wait-for graph): the four workers merge into one vertex
 * "lockw*" whose self-loop is the knot. Its weight is what wPerf's cascaded
 * redistribution makes of the lock waits: every wait [start, acquired]
 * of a worker is a wait for the previous holder (the unlock woke it), plus
 * what that holder itself waited for inside it, recursively. The workload
 * records every wait and its previous holder so that the test can compute
 * exactly that. A wait is recorded as [start, start + slept], slept being
 * its wall time minus CPU and runnable time (schedstat): the kernel's sleep.
 *
 * Prints one JSON line: {"pid", "tids": [4], "elapsed_s", "acquisitions",
 * "waits": [[tid, start_ns, end_ns, holder_tid], ...]}.
 */
#include <stdio.h>
#include <stdlib.h>
#include "wl.h"

#define NW   4
#define MAXW 200000

struct wait {
	pid_t tid, holder;
	uint64_t start, end;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t holder;
static uint64_t deadline, cs_ns;
static struct wait *waits;
static long nwaits;
static pid_t tids[NW];

static void *worker(void *arg)
{
	long idx = (long)arg;
	char name[16];

	tids[idx] = wl_gettid();
	snprintf(name, sizeof(name), "lockw-%d", (int)(idx % 8) + 1);
	wl_setname(name);
	while (wl_now() < deadline) {
		struct wl_sleepwatch sw;
		uint64_t t0, t1, slept;
		pid_t prev;

		wl_sleepwatch_start(&sw);
		t0 = wl_now();
		pthread_mutex_lock(&mu);
		t1 = wl_now();
		/* what it slept: the wait as the kernel's sleep, ending at the waking */
		slept = (uint64_t)(wl_sleepwatch_stop(&sw) * 1e9);
		prev = holder;
		holder = tids[idx];
		/* a wait that slept: worth recording (an uncontended lock takes < 20 us) */
		if (t1 - t0 > 20000 && nwaits < MAXW)
			waits[nwaits++] = (struct wait){tids[idx], prev, t0, t0 + slept};
		wl_spin_ns(cs_ns);
		pthread_mutex_unlock(&mu);
		wl_spin_ns(200000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	pthread_t th[NW];
	uint64_t t0;

	cs_ns = (uint64_t)(argc > 2 ? atol(argv[2]) : 2000) * 1000;
	if (secs <= 0 || !cs_ns) {
		fprintf(stderr, "usage: mutex_workers SECONDS [CS_US]\n");
		return 2;
	}
	waits = calloc(MAXW, sizeof(*waits));
	t0 = wl_now();
	deadline = t0 + (uint64_t)(secs * 1e9);
	/* The main thread is worker 1: none of the threads only waits for the others. */
	for (long i = 1; i < NW; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	worker((void *)0L);
	for (int i = 1; i < NW; i++)
		pthread_join(th[i], NULL);
	printf("{\"pid\": %d, \"tids\": [%d, %d, %d, %d], \"elapsed_s\": %.6f, "
	       "\"acquisitions\": %ld, \"waits\": [",
	       (int)getpid(), tids[0], tids[1], tids[2], tids[3], (double)(wl_now() - t0) / 1e9,
	       nwaits);
	for (long i = 0; i < nwaits; i++)
		printf("%s[%d, %llu, %llu, %d]", i ? ", " : "", waits[i].tid,
		       (unsigned long long)waits[i].start, (unsigned long long)waits[i].end,
		       waits[i].holder);
	printf("]}\n");
	return 0;
}
