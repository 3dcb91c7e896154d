// SPDX-License-Identifier: GPL-2.0
/*
 * Known answers for triggers (tests/e2e/test_trigger.py):
 *
 *   trigger_slow CALLS EVERY SLOW_MS  heldwork() CALLS times: each call
 *                                     sleeps 1 ms (nanosleep), every
 *                                     EVERY-th sleeps SLOW_MS instead
 *   trigger_slow fsync FILE SECONDS   the writer: 4 KiB pwrite() + fsync()
 *                                     every 5 ms (after one warm-up pass
 *                                     over its 64 blocks: no allocation;
 *                                     "warm" on a line of its own then)
 *   trigger_slow nap SECONDS          10 ms asleep, then 2 ms of CPU, again
 *   trigger_slow hog SECONDS          CPU only
 *
 * Prints one JSON line: the pid, and for heldwork each slow call's start
 * and end (CLOCK_MONOTONIC ns, the clock of rspd's records) and the end of
 * the last call, so that a test can find the slow calls in a dump; for
 * fsync, the slowest fsync() and the count.
 */
#include <fcntl.h>
#include <string.h>
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

static int writer(const char *path, double seconds)
{
	char block[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), n = 0;
	uint64_t end = wl_now() + (uint64_t)(seconds * 1e9), worst = 0;
	struct timespec gap = {0, 5000000};

	if (fd < 0)
		return 1;
	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 64; i++)
		if (pwrite(fd, block, sizeof(block), (off_t)i * 4096) != (ssize_t)sizeof(block))
			return 1;
	fsync(fd);
	printf("warm\n"); /* its blocks allocated: what follows is the steady state */
	fflush(stdout);
	while (wl_now() < end) {
		uint64_t t0;

		if (pwrite(fd, block, sizeof(block), (off_t)(n % 64) * 4096) < 0)
			return 1;
		t0 = wl_now();
		fsync(fd);
		if (wl_now() - t0 > worst)
			worst = wl_now() - t0;
		n++;
		nanosleep(&gap, NULL);
	}
	close(fd);
	printf("{\"pid\": %d, \"fsyncs\": %d, \"worst_ns\": %llu}\n", (int)getpid(), n,
	       (unsigned long long)worst);
	return 0;
}

/* nap: 10 ms asleep then 2 ms of CPU; hog: CPU only. */
static int cpu(bool nap, double seconds)
{
	uint64_t end = wl_now() + (uint64_t)(seconds * 1e9);
	struct timespec ts = {0, 10000000};
	int rounds = 0;

	while (wl_now() < end) {
		if (nap)
			nanosleep(&ts, NULL);
		wl_spin_ns(nap ? 2000000 : 100000000);
		rounds++;
	}
	printf("{\"pid\": %d, \"rounds\": %d}\n", (int)getpid(), rounds);
	return 0;
}

int main(int argc, char **argv)
{
	int calls, every, slow_ms, nslow = 0;
	struct wl_iv *slow;

	if (argc == 4 && !strcmp(argv[1], "fsync"))
		return writer(argv[2], atof(argv[3]));
	if (argc == 3 && (!strcmp(argv[1], "nap") || !strcmp(argv[1], "hog")))
		return cpu(argv[1][0] == 'n', atof(argv[2]));
	if (argc != 4 || (calls = atoi(argv[1])) <= 0 || (every = atoi(argv[2])) <= 0 ||
	    (slow_ms = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: trigger_slow CALLS EVERY SLOW_MS | fsync FILE SECONDS | "
				"nap SECONDS | hog SECONDS\n");
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
