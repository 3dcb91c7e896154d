// SPDX-License-Identifier: GPL-2.0
/*
 * burn7030 SECONDS: one thread burns CPU in two functions, hot7 and cold3,
 * 7 ms and 3 ms of its CPU time in turn (CPU time, not wall time: a busy
 * machine's preemptions do not move the shares), for SECONDS of CPU.
 *
 * Known answer for a profiler: of the thread's samples, 70% in hot7 and
 * 30% in cold3 (within a few points: the samples' own randomness). Both
 * loop on arithmetic and look at the clock only every 65536 steps, so the
 * samples land in the functions themselves, not in the vDSO.
 *
 * Prints one JSON line: {"pid": P, "hot_s": H, "cold_s": C}.
 */
#include <stdio.h>
#include <stdlib.h>
#include "wl.h"

static volatile uint64_t sink;

/* noipa: GCC's identical-code folding must not make the two one function */
__attribute__((noinline, noipa)) static double hot7(double ns)
{
	double t0 = wl_thread_cpu(), end = t0 + ns / 1e9, t;
	uint64_t x = sink;

	do {
		for (int i = 0; i < 65536; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	} while ((t = wl_thread_cpu()) < end);
	sink = x;
	return t - t0;
}

__attribute__((noinline, noipa)) static double cold3(double ns)
{
	double t0 = wl_thread_cpu(), end = t0 + ns / 1e9, t;
	uint64_t x = sink;

	do {
		for (int i = 0; i < 65536; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
	} while ((t = wl_thread_cpu()) < end);
	sink = x;
	return t - t0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, hot = 0, cold = 0;

	if (secs <= 0) {
		fprintf(stderr, "usage: burn7030 SECONDS\n");
		return 2;
	}
	while (hot + cold < secs) {
		hot += hot7(7e6);
		cold += cold3(3e6);
	}
	printf("{\"pid\": %d, \"hot_s\": %.6f, \"cold_s\": %.6f}\n", (int)getpid(), hot, cold);
	return 0;
}
