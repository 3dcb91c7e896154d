// SPDX-License-Identifier: GPL-2.0
/*
 * burn_nap N BURN_MS NAP_MS: one thread, N rounds of burning BURN_MS of CPU
 * (wall time) in burn_loop() and then sleeping NAP_MS in nanosleep() from nap().
 *
 * Known answer for rspctl report: the process's flame graph holds a frame
 * burn_loop (running: the samples' stacks) and, under nap, a sleep of
 * reason timeout (a timer); burn_loop's share of the process's time is
 * about BURN_MS / (BURN_MS + NAP_MS).
 *
 * Prints one JSON line: {"pid", "rounds", "burn_ms", "nap_ms", "elapsed_s"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "wl.h"

static volatile uint64_t sink;

/*
 * Arithmetic, and the clock read only every 2^16 rounds: a sample lands in
 * this function, not in clock_gettime (libc's, without a frame pointer,
 * would hide this frame from a frame-pointer walk).
 */
static __attribute__((noinline)) void burn_loop(long ms)
{
	uint64_t end = wl_now() + (uint64_t)ms * 1000000ull, x = 1;

	for (uint64_t i = 1;; i++) {
		x = x * 2862933555777941757ull + 7;
		if (!(i & 0xffff) && wl_now() >= end)
			break;
	}
	sink = x;
}

static __attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20, burn = argc > 2 ? atol(argv[2]) : 30,
	     ms = argc > 3 ? atol(argv[3]) : 20;
	uint64_t t0 = wl_now();

	for (long i = 0; i < n; i++) {
		burn_loop(burn);
		nap(ms);
	}
	printf("{\"pid\": %d, \"rounds\": %ld, \"burn_ms\": %ld, \"nap_ms\": %ld, "
	       "\"elapsed_s\": %.6f}\n",
	       (int)getpid(), n, burn, ms, (double)(wl_now() - t0) / 1e9);
	return 0;
}
