// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_nofp [SECONDS]: burns CPU for SECONDS (default 2) in level3(), called
 * from level2(), from level1(), from main(); built with -O2
 * -fomit-frame-pointer (tests/CMakeLists.txt: workloads named *_nofp), so a
 * frame-pointer walk from level3 cannot find its callers.
 *
 * Known answer: nearly every cpu-clock sample of this process is in level3
 * with level2, level1 and main above it, in that order; only DWARF
 * unwinding of the sample's stack copy finds them.
 *
 * Prints one JSON line: {"pid", "tid", "seconds", "functions": [...],
 * "iterations", "cpu_s" (the thread's CPU time: with no separate irq time
 * accounting it includes the sampling interrupts that hit it)}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* noinline and a use of each result after the call: no inlining, no tail call. */
__attribute__((noinline)) static unsigned long level3(unsigned long x)
{
	volatile unsigned long acc = x;

	for (int i = 0; i < 200000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

__attribute__((noinline)) static unsigned long level2(unsigned long x)
{
	unsigned long r = level3(x + 1);

	return r ^ (x << 1);
}

__attribute__((noinline)) static unsigned long level1(unsigned long x)
{
	unsigned long r = level2(x + 2);

	return r + (x >> 1);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, t0 = now();
	double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	unsigned long x = 1, n = 0;

	while (now() - t0 < secs) {
		x = level1(x) | 1;
		n++;
	}
	printf("{\"pid\": %d, \"tid\": %d, \"seconds\": %.3f, \"functions\": [\"level1\", "
	       "\"level2\", \"level3\"], \"iterations\": %lu, \"x\": %lu, \"cpu_s\": %.6f}\n",
	       (int)getpid(), (int)syscall(SYS_gettid), now() - t0, n, x & 1,
	       clock_s(CLOCK_THREAD_CPUTIME_ID) - c0);
	return 0;
}
