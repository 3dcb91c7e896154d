// SPDX-License-Identifier: GPL-2.0
/*
 * spin_fsync SECONDS DIR: a spin lock held across fdatasync. Thread
 * "holder" takes a pthread_spinlock_t, overwrites 4 KiB of a preallocated
 * file in DIR, fdatasync()s it and releases the lock, then sleeps 1 ms;
 * the main thread "spinner" takes the same lock in a loop, holding it for
 * 20 us of CPU and working 50 us outside it. Every acquisition is wrapped in RSP_SPIN_BEGIN/END
 * (rsp/annotate.h); spin_fsync_plain (RSP_NO_ANNOTATE) carries no notes.
 *
 * Known answer: the spinner runs, to the kernel, nearly all the time, but
 * most of it spins in pthread_spin_lock while the holder waits for the
 * disk: with the annotations, its spin time is a wait on the holder and,
 * through it, on the disk; without them, its samples are in
 * pthread_spin_lock. spin_s is the spinner's wall time inside
 * pthread_spin_lock; spin_during_sync_s the part of it while the holder
 * was in fdatasync.
 *
 * cpu_spinner_s is the spinner's CPU time: of it, 70 us per acquisition
 * is work (held and outside, wl_spin_ns() counts CPU time), the rest
 * spinning, which its cpu-clock samples should show.
 *
 * Prints one JSON line: {"pid", "tid_holder", "tid_spinner", "elapsed_s",
 * "acquisitions", "syncs", "spin_s", "spin_during_sync_s", "sync_s",
 * "cpu_spinner_s", "work_ns", "annotated"}.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/annotate.h>
#include "wl.h"

#define BLOCK	    4096
#define FILE_BLOCKS 64
#define HOLD_NS	    20000
#define OUTSIDE_NS  50000

static pthread_spinlock_t lock;
static int fd;
static uint64_t deadline;
static atomic_bool stop;
/* the holder's last fdatasync, [start, end]; end 0 while it runs */
static _Atomic uint64_t sync_start, sync_end;
static pid_t tid_holder;
static long syncs, acquisitions;
static double spin_s, spin_sync_s, sync_s;
static char block[BLOCK];

static void *holder(void *arg)
{
	const struct timespec pause = {0, 1000000};

	(void)arg;
	tid_holder = wl_gettid();
	wl_setname("holder");
	while (!atomic_load(&stop)) {
		uint64_t t0;

		RSP_SPIN_BEGIN(&lock);
		pthread_spin_lock(&lock);
		RSP_SPIN_END(&lock);
		if (pwrite(fd, block, BLOCK, (off_t)(syncs % FILE_BLOCKS) * BLOCK) != BLOCK)
			exit(1);
		t0 = wl_now();
		atomic_store(&sync_end, 0);
		atomic_store(&sync_start, t0);
		if (fdatasync(fd))
			exit(1);
		atomic_store(&sync_end, wl_now());
		sync_s += (double)(atomic_load(&sync_end) - t0) / 1e9;
		syncs++;
		pthread_spin_unlock(&lock);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* One acquisition by the spinner; adds its spin to the totals. */
static void spin_once(void)
{
	uint64_t t0 = wl_now(), t1, s, e;

	RSP_SPIN_BEGIN(&lock);
	pthread_spin_lock(&lock);
	RSP_SPIN_END(&lock);
	t1 = wl_now();
	s = atomic_load(&sync_start);
	e = atomic_load(&sync_end);
	spin_s += (double)(t1 - t0) / 1e9;
	/* the holder's last fdatasync (it released the lock after it) overlapped the spin */
	if (s > t0 ? e > s : e > t0)
		spin_sync_s += (double)((e < t1 ? e : t1) - (s > t0 ? s : t0)) / 1e9;
	acquisitions++;
	wl_spin_ns(HOLD_NS);
	pthread_spin_unlock(&lock);
	/* outside the lock a while: the holder gets its turn (the lock is not fair) */
	wl_spin_ns(OUTSIDE_NS);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, cpu_spinner;
	pthread_t th;
	uint64_t t0;

	if (secs <= 0 || argc != 3) {
		fprintf(stderr, "usage: spin_fsync SECONDS DIR\n");
		return 2;
	}
	memset(block, 'l', sizeof(block));
	fd = wl_filled_file(argv[2], "spin_fsync", block, BLOCK, FILE_BLOCKS);
	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	wl_setname("spinner");
	t0 = wl_now();
	cpu_spinner = wl_thread_cpu();
	deadline = t0 + (uint64_t)(secs * 1e9);
	pthread_create(&th, NULL, holder, NULL);
	while (wl_now() < deadline)
		spin_once();
	cpu_spinner = wl_thread_cpu() - cpu_spinner;
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("{\"pid\": %d, \"tid_holder\": %d, \"tid_spinner\": %d, \"elapsed_s\": %.6f, "
	       "\"acquisitions\": %ld, \"syncs\": %ld, \"spin_s\": %.6f, "
	       "\"spin_during_sync_s\": %.6f, \"sync_s\": %.6f, \"cpu_spinner_s\": %.6f, "
	       "\"work_ns\": %d, \"annotated\": %s}\n",
	       (int)getpid(), (int)tid_holder, (int)wl_gettid(), (double)(wl_now() - t0) / 1e9,
	       acquisitions, syncs, spin_s, spin_sync_s, sync_s, cpu_spinner, HOLD_NS + OUTSIDE_NS,
	       RSP_ANNOTATED ? "true" : "false");
	return 0;
}
