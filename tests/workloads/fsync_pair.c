// SPDX-License-Identifier: GPL-2.0
/*
 * fsync_pair N DIR [KIB]: wPerf's Figure 1. Thread A ("fs-prod") prepares each of
 * N requests (0.5 ms of CPU) and hands it to thread B ("fs-sync") through a
 * bounded queue; B computes 1 ms per request, then pwrite()s KIB KiB (default 1024) into
 * a preallocated file in DIR and fdatasync()s it. B and the disk take turns,
 * and A, faster, mostly waits for B.
 *
 * Known answer (the wait-for graph): a knot {B, disk}, A outside it with
 * an edge A -> B. B -> disk weighs B's time off-CPU in fdatasync, plus, by
 * cascading, the part of it inside A's waits for B; disk -> B weighs the
 * disk's idle time before B's requests. The workload measures what these
 * imply: its off-CPU time in fdatasync (wall minus thread CPU time), the
 * overlap with A's waits, A's total wait, B's time outside fdatasync.
 *
 * Prints one JSON line: {"pid", "tid_a", "tid_b", "requests", "elapsed_s",
 * "a_wait_s", "b_sync_wall_s", "b_sync_offcpu_s", "b_sync_offcpu_in_a_wait_s",
 * "b_outside_sync_s", "a_slept_s", "b_sync_slept_s"}; *_slept_s is wall time
 * minus CPU time minus runnable time (schedstat), what the graph counts.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "wl.h"

#define QCAP	    2
#define FILE_BLOCKS 16
#define MAX_KIB	    1024

static long nreq;
static int fd;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static long queued, produced;
static pid_t tid_a, tid_b;
static bool started;
static struct wl_iv *a_waits, *b_syncs;
static size_t na, nb;
static double b_sync_cpu, b_outside, b_sync_slept, a_slept;
static size_t bsize = 1024 * 1024;
static char *block;

static void *producer(void *arg)
{
	(void)arg;
	tid_a = wl_gettid();
	wl_setname("fs-prod");
	for (long i = 0; i < nreq; i++) {
		uint64_t t0;

		wl_spin_ns(500000);
		struct wl_sleepwatch sw;

		pthread_mutex_lock(&mu);
		wl_sleepwatch_start(&sw);
		t0 = wl_now();
		while (queued == QCAP)
			pthread_cond_wait(&not_full, &mu);
		if (wl_now() - t0 > 1000) {
			a_waits[na++] = (struct wl_iv){t0, wl_now()};
			a_slept += wl_sleepwatch_stop(&sw);
		}
		queued++;
		__atomic_store_n(&produced, produced + 1, __ATOMIC_RELEASE);
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *syncer(void *arg)
{
	uint64_t last = 0;

	(void)arg;
	tid_b = wl_gettid();
	wl_setname("fs-sync");
	/* Start once the queue is full: B then never waits for A, but at the end. */
	while (__atomic_load_n(&produced, __ATOMIC_ACQUIRE) < QCAP)
		usleep(100);
	for (long i = 0; i < nreq; i++) {
		uint64_t t0, t1;
		double c0, c1;
		struct wl_sleepwatch sw;

		pthread_mutex_lock(&mu);
		while (queued == 0)
			pthread_cond_wait(&not_empty, &mu);
		queued--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&mu);
		wl_spin_ns(1000000);
		if (pwrite(fd, block, bsize, (off_t)(i % FILE_BLOCKS) * (off_t)bsize) !=
		    (ssize_t)bsize)
			exit(1);
		wl_sleepwatch_start(&sw);
		c0 = wl_thread_cpu();
		t0 = wl_now();
		if (last)
			b_outside += (double)(t0 - last) / 1e9;
		if (fdatasync(fd))
			exit(1);
		t1 = wl_now();
		c1 = wl_thread_cpu();
		b_sync_slept += wl_sleepwatch_stop(&sw);
		last = t1;
		b_syncs[nb++] = (struct wl_iv){t0, t1};
		b_sync_cpu += c1 - c0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t b;
	uint64_t t0, t1;
	double a_wait = 0, sync_wall = 0, sync_offcpu, in_a = 0;

	nreq = argc > 1 ? atol(argv[1]) : 1000;
	if (nreq <= 0 || argc < 3) {
		fprintf(stderr, "usage: fsync_pair N DIR [KIB]\n");
		return 2;
	}
	if (argc > 3)
		bsize = (size_t)atol(argv[3]) * 1024;
	if (!bsize || bsize > MAX_KIB * 1024) {
		fprintf(stderr, "fsync_pair: KIB must be 1..%d\n", MAX_KIB);
		return 2;
	}
	block = malloc(bsize);
	if (!block)
		return 1;
	memset(block, 'b', bsize);
	/* real blocks, so that overwrites need no metadata */
	fd = wl_filled_file(argv[2], "fsync_pair", block, bsize, FILE_BLOCKS);
	a_waits = calloc((size_t)nreq + 1, sizeof(*a_waits));
	b_syncs = calloc((size_t)nreq + 1, sizeof(*b_syncs));
	/*
	 * The main thread is A itself: a main thread that only joined would wait
	 * for A all along, and cascading would count A's waits twice.
	 */
	t0 = wl_now();
	started = true;
	pthread_create(&b, NULL, syncer, NULL);
	producer(NULL);
	pthread_join(b, NULL);
	t1 = wl_now();
	for (size_t i = 0; i < na; i++)
		a_wait += wl_iv_len(&a_waits[i]);
	for (size_t i = 0; i < nb; i++)
		sync_wall += wl_iv_len(&b_syncs[i]);
	sync_offcpu = sync_wall - b_sync_cpu;
	/* The cascaded part: B's off-CPU sync time inside A's waits for B. */
	for (size_t i = 0; i < nb; i++) {
		double w = wl_iv_len(&b_syncs[i]), ov = wl_overlap(&b_syncs[i], a_waits, na);

		if (w > 0)
			in_a += ov * (sync_offcpu / sync_wall);
	}
	printf("{\"pid\": %d, \"tid_a\": %d, \"tid_b\": %d, \"requests\": %ld, "
	       "\"elapsed_s\": %.6f, \"a_wait_s\": %.6f, \"b_sync_wall_s\": %.6f, "
	       "\"b_sync_offcpu_s\": %.6f, \"b_sync_offcpu_in_a_wait_s\": %.6f, "
	       "\"b_outside_sync_s\": %.6f, \"a_slept_s\": %.6f, \"b_sync_slept_s\": %.6f}\n",
	       (int)getpid(), (int)tid_a, (int)tid_b, nreq, (double)(t1 - t0) / 1e9, a_wait,
	       sync_wall, sync_offcpu, in_a, b_outside, a_slept, b_sync_slept);
	return 0;
}
