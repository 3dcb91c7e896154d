// SPDX-License-Identifier: GPL-2.0
/*
 * Known answers for triggers (tests/e2e/test_trigger.py):
 *
 *   trigger_slow CALLS EVERY SLOW_MS  heldwork() CALLS times: each call
 *                                     sleeps 1 ms (nanosleep), every
 *                                     EVERY-th sleeps SLOW_MS instead
 *
 * Prints one JSON line: the pid, and each slow call's start and end
 * (CLOCK_MONOTONIC ns, the clock of rspd's records) and the end of the last
 * call, so that a test can find the slow calls in a dump.
 */
#include <stdbool.h>
#include <stdlib.h>
#include "wl.h"

void heldwork(int slow_ms);

/* The probed function: global, so that its symbol is plain to find. */
__attribute__((noinline)) void heldwork(int slow_ms)
{
	struct timespec ts = {slow_ms / 1000, (long)(slow_ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int calls, every, slow_ms, nslow = 0;
	struct wl_iv *slow;

	if (argc != 4 || (calls = atoi(argv[1])) <= 0 || (every = atoi(argv[2])) <= 0 ||
	    (slow_ms = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: trigger_slow CALLS EVERY SLOW_MS\n");
		return 2;
	}
	slow = calloc((size_t)calls / (size_t)every + 1, sizeof(*slow));
	if (!slow)
		return 1;
	for (int i = 1; i <= calls; i++) {
		bool is_slow = i % every == 0;
		uint64_t t0 = wl_now();

		heldwork(is_slow ? slow_ms : 1);
		if (is_slow)
			slow[nslow++] = (struct wl_iv){t0, wl_now()};
	}
	printf("{\"pid\": %d, \"calls\": %d, \"end_ns\": %llu, \"slow\": [", (int)getpid(), calls,
	       (unsigned long long)wl_now());
	for (int i = 0; i < nslow; i++)
		printf("%s[%llu, %llu]", i ? ", " : "", (unsigned long long)slow[i].start,
		       (unsigned long long)slow[i].end);
	printf("]}\n");
	free(slow);
	return 0;
}
