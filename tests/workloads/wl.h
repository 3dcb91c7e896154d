/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the workload programs: clocks, spinning, intervals. */
#ifndef RSP_WL_H
#define RSP_WL_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

struct wl_iv {
	uint64_t start, end;
};

static inline uint64_t wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread, seconds. */
static inline double wl_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn @ns of this thread's CPU time (not wall time: preemption does not shorten it). */
static inline void wl_spin_ns(uint64_t ns)
{
	double end = wl_thread_cpu() + (double)ns / 1e9;

	while (wl_thread_cpu() < end)
		;
}

/*
 * Time this thread spent runnable but waiting for a CPU (schedstat's
 * run_delay), seconds; 0 if the kernel does not say. Subtracted from wall
 * time it leaves what the thread slept, as the wait-for graph counts it.
 */
static inline double wl_run_delay(void)
{
	unsigned long long run, delay;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &run, &delay);
	fclose(f);
	return n == 2 ? (double)delay / 1e9 : 0;
}

/* A stopwatch of what a thread sleeps through: wall minus CPU minus runnable time. */
struct wl_sleepwatch {
	uint64_t wall;
	double cpu, delay;
};

static inline void wl_sleepwatch_start(struct wl_sleepwatch *w)
{
	w->delay = wl_run_delay();
	w->cpu = wl_thread_cpu();
	w->wall = wl_now();
}

static inline double wl_sleepwatch_stop(const struct wl_sleepwatch *w)
{
	uint64_t wall = wl_now();
	double cpu = wl_thread_cpu(), delay = wl_run_delay();

	return (double)(wall - w->wall) / 1e9 - (cpu - w->cpu) - (delay - w->delay);
}

static inline pid_t wl_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline void wl_setname(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

static inline double wl_iv_len(const struct wl_iv *iv)
{
	return iv->end > iv->start ? (double)(iv->end - iv->start) / 1e9 : 0;
}

/* Seconds of @iv covered by the sorted, disjoint intervals @set. */
static inline double wl_overlap(const struct wl_iv *iv, const struct wl_iv *set, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t a = set[i].start > iv->start ? set[i].start : iv->start;
		uint64_t b = set[i].end < iv->end ? set[i].end : iv->end;

		if (b > a)
			s += (double)(b - a) / 1e9;
	}
	return s;
}

/*
 * A temporary file in @dir (named @name.XXXXXX, unlinked at once) holding
 * @nblocks copies of @block, @bsize bytes each, on disk (fsync): overwriting
 * its blocks needs no metadata. Exits on failure.
 */
static inline int wl_filled_file(const char *dir, const char *name, const void *block, size_t bsize,
				 int nblocks)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.XXXXXX", dir, name);
	fd = mkstemp(path);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	unlink(path);
	for (int i = 0; i < nblocks; i++)
		if (write(fd, block, bsize) != (ssize_t)bsize)
			exit(1);
	if (fsync(fd))
		exit(1);
	return fd;
}

#endif
