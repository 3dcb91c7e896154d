// SPDX-License-Identifier: GPL-2.0
/*
 * sleep_two_peaks N: one thread alternates nanosleep(1 ms) and
 * nanosleep(8 ms), N times each, and measures every sleep.
 *
 * Known answer (latency profiles, tests/e2e/test_hist_offcpu.py): the
 * thread's off-CPU profile for deliberate sleeps (offcpu:sleep, --tid TID)
 * has exactly two peaks, in the buckets holding ~1 ms and ~8 ms (plus the
 * timer slack, 50 us by default), each with N sleeps (+-2).
 *
 * Prints one JSON line: {"pid", "tid", "n", "short_ns", "long_ns",
 * "short_mean_ns", "long_mean_ns", "short_median_ns", "long_median_ns",
 * "short_max_ns", "long_max_ns", "short_strays", "long_strays"}: the sleeps
 * as the thread measured them (CLOCK_MONOTONIC around each call, so a wait
 * for a CPU after the wakeup is in them too). A stray is a sleep the thread
 * itself measured outside the log2 bucket of its kind's median (short), or
 * beyond the bucket above it (long: 8 ms sits near a bucket's top, so its
 * peak may span two): other work on the machine delayed its timer, and no
 * profiler can put it in the peak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep @ns; return how long it took. */
static uint64_t nap(uint64_t ns)
{
	struct timespec req = {.tv_sec = 0, .tv_nsec = (long)ns};
	uint64_t t0 = now_ns();

	while (nanosleep(&req, &req))
		;
	return now_ns() - t0;
}

/* rsp's r=1 bucket of v ns: 0 for 0, else 1 + floor(log2 v). */
static int bucket(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

/* How many of v[0..n) lie above bucket(med) + slack buckets. */
static long strays(const uint64_t *v, long n, uint64_t med, int slack)
{
	long k = 0;

	for (long i = 0; i < n; i++)
		k += bucket(v[i]) > bucket(med) + slack;
	return k;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	const uint64_t s_ns = 1000000, l_ns = 8000000;
	uint64_t s_sum = 0, l_sum = 0, s_max = 0, l_max = 0, s_med, l_med, *sv, *lv;

	if (n <= 0 || n > 1000000) {
		fprintf(stderr, "usage: sleep_two_peaks N\n");
		return 2;
	}
	sv = calloc((size_t)n, sizeof(*sv));
	lv = calloc((size_t)n, sizeof(*lv));
	if (!sv || !lv)
		return 1;
	for (long i = 0; i < n; i++) {
		uint64_t a = nap(s_ns), b = nap(l_ns);

		sv[i] = a;
		lv[i] = b;
		s_sum += a;
		l_sum += b;
		s_max = a > s_max ? a : s_max;
		l_max = b > l_max ? b : l_max;
	}
	s_med = median(sv, n);
	l_med = median(lv, n);
	printf("{\"pid\": %d, \"tid\": %ld, \"n\": %ld, \"short_ns\": %llu, \"long_ns\": %llu, "
	       "\"short_mean_ns\": %llu, \"long_mean_ns\": %llu, \"short_median_ns\": %llu, "
	       "\"long_median_ns\": %llu, \"short_max_ns\": %llu, \"long_max_ns\": %llu, "
	       "\"short_strays\": %ld, \"long_strays\": %ld}\n",
	       (int)getpid(), (long)syscall(SYS_gettid), n, (unsigned long long)s_ns,
	       (unsigned long long)l_ns, (unsigned long long)(s_sum / (uint64_t)n),
	       (unsigned long long)(l_sum / (uint64_t)n), (unsigned long long)s_med,
	       (unsigned long long)l_med, (unsigned long long)s_max, (unsigned long long)l_max,
	       strays(sv, n, s_med, 0), strays(lv, n, l_med, 1));
	free(sv);
	free(lv);
	return 0;
}
