// SPDX-License-Identifier: GPL-2.0
/*
 * front_syncer N DIR [append]: wPerf's Figure 1 with small writes. Thread
 * "front" hands N items (10 us of CPU each) to thread "syncer" through a
 * bounded queue of 4; the syncer works 200 us per item, pwrite()s 4 KiB
 * and fdatasync()s. By default it overwrites the blocks of a preallocated
 * file (the data and a cache flush, no metadata); with "append" it appends
 * to an empty file (each fdatasync also commits the new size through the
 * journal).
 *
 * The syncer's fdatasync waits are short (a few hundred us) and end in the
 * disk's completion interrupt, which on this kernel mostly lands on an
 * idle CPU: the perf backend does not see those wakings and must infer
 * them. Known answer (the wait-for graph): a knot {syncer, the disk serving
 * it}, front outside it with an edge front -> syncer.
 *
 * Prints one JSON line: {"pid", "tid_front", "tid_syncer", "items",
 * "elapsed_s", "front_slept_s", "sync_wall_s", "sync_slept_s",
 * "syncer_empty_s"}; *_slept_s is wall time minus CPU time minus runnable
 * time (schedstat), what the graph counts as waiting; syncer_empty_s is
 * the syncer's wall time waiting on an empty queue (the front did not
 * keep up: on a machine busy enough to starve it, the syncer waits for
 * the front too, and the front belongs in the knot).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl.h"

#define QCAP	    4
#define BLOCK	    4096
#define FILE_BLOCKS 64
#define FRONT_NS    10000
#define SYNCER_NS   200000

static long nitems;
static int fd;
static bool append;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static long queued;
static pid_t tid_front, tid_syncer;
static double front_slept, sync_slept, sync_wall, syncer_empty;
static char block[BLOCK];

static void *front(void *arg)
{
	(void)arg;
	tid_front = wl_gettid();
	wl_setname("front");
	for (long i = 0; i < nitems; i++) {
		struct wl_sleepwatch sw;

		wl_spin_ns(FRONT_NS);
		pthread_mutex_lock(&mu);
		wl_sleepwatch_start(&sw);
		while (queued == QCAP)
			pthread_cond_wait(&not_full, &mu);
		front_slept += wl_sleepwatch_stop(&sw);
		queued++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void sync_one(long i)
{
	off_t off = append ? (off_t)i * BLOCK : (off_t)(i % FILE_BLOCKS) * BLOCK;
	struct wl_sleepwatch sw;
	uint64_t t0;

	if (pwrite(fd, block, BLOCK, off) != BLOCK)
		exit(1);
	wl_sleepwatch_start(&sw);
	t0 = wl_now();
	if (fdatasync(fd))
		exit(1);
	sync_wall += (double)(wl_now() - t0) / 1e9;
	sync_slept += wl_sleepwatch_stop(&sw);
}

static void *syncer(void *arg)
{
	(void)arg;
	tid_syncer = wl_gettid();
	wl_setname("syncer");
	for (long i = 0; i < nitems; i++) {
		uint64_t t0 = wl_now();

		pthread_mutex_lock(&mu);
		while (queued == 0)
			pthread_cond_wait(&not_empty, &mu);
		syncer_empty += (double)(wl_now() - t0) / 1e9;
		queued--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mu);
		wl_spin_ns(SYNCER_NS);
		sync_one(i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t s;
	uint64_t t0, t1;

	nitems = argc > 2 ? atol(argv[1]) : 0;
	append = argc > 3 && !strcmp(argv[3], "append");
	if (nitems <= 0 || (argc > 3 && !append) || argc > 4) {
		fprintf(stderr, "usage: front_syncer N DIR [append]\n");
		return 2;
	}
	memset(block, 's', sizeof(block));
	/* preallocated real blocks (overwrites need no metadata), or empty (append) */
	fd = wl_filled_file(argv[2], "front_syncer", block, BLOCK, append ? 0 : FILE_BLOCKS);
	/* The main thread is the front itself: a main thread that only joined
	 * would wait for it all along, and cascading would count that twice. */
	t0 = wl_now();
	pthread_create(&s, NULL, syncer, NULL);
	front(NULL);
	pthread_join(s, NULL);
	t1 = wl_now();
	printf("{\"pid\": %d, \"tid_front\": %d, \"tid_syncer\": %d, \"items\": %ld, "
	       "\"elapsed_s\": %.6f, \"front_slept_s\": %.6f, \"sync_wall_s\": %.6f, "
	       "\"sync_slept_s\": %.6f, \"syncer_empty_s\": %.6f}\n",
	       (int)getpid(), (int)tid_front, (int)tid_syncer, nitems, (double)(t1 - t0) / 1e9,
	       front_slept, sync_wall, sync_slept, syncer_empty);
	return 0;
}
