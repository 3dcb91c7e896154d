/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the workload programs: clocks, spinning, intervals. */
#ifndef RSP_WL_H
#define RSP_WL_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
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

#endif
