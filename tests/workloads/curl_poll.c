// SPDX-License-Identifier: GPL-2.0
/*
 * curl_poll N: the pattern the Recursive Systemic Profiler found in curl.
 * For each of N requests the main thread starts a resolver thread that
 * computes for 2 ms and stores its answer, but never signals the main
 * thread, which polls (on a pipe nobody writes) with a 5 ms timeout and
 * looks for the answer after each timeout.
 *
 * Known answer (rspctl snapshot PID): "waits that timed out" is the largest
 * category, about 5 ms per request, although the answer was there after
 * 2; and the resolver threads are in the chain. Measured here: the main
 * thread's time in poll() and the resolvers' CPU time.
 *
 * Prints one JSON line: {"pid", "requests", "elapsed_s", "poll_s",
 * "resolver_cpu_s", "resolvers"} (resolvers: their tids).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include "wl.h"

#define MAX_REQ 1000

static volatile int answer;
static double resolver_cpu;
static pid_t tids[MAX_REQ];

static void *resolve(void *arg)
{
	wl_setname("resolver");
	*(pid_t *)arg = wl_gettid();
	wl_spin_ns(2000000);
	/*
	 * The thread's CPU time since it started (one resolver at a time,
	 * joined before the next): its start-up is in the run rsp sees, and
	 * under the sanitizers it is not small (their thread set-up, ~0.2 ms
	 * a thread: counting the spin alone, rsp's run was 20-22% over it in
	 * an ASan CI run, against the test's 20%; with the start-up, 9-10%).
	 * Its exit is not in it: that is inside the test's 20%.
	 */
	resolver_cpu += wl_thread_cpu();
	__atomic_store_n(&answer, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	struct pollfd pf;
	double in_poll = 0;
	uint64_t t0, t1;
	int p[2];

	if (n <= 0 || n > MAX_REQ || pipe(p)) {
		fprintf(stderr, "usage: curl_poll N (1..%d)\n", MAX_REQ);
		return 2;
	}
	pf = (struct pollfd){.fd = p[0], .events = POLLIN};
	t0 = wl_now();
	for (long i = 0; i < n; i++) {
		pthread_t th;

		__atomic_store_n(&answer, 0, __ATOMIC_RELEASE);
		if (pthread_create(&th, NULL, resolve, &tids[i]))
			return 1;
		while (!__atomic_load_n(&answer, __ATOMIC_ACQUIRE)) {
			uint64_t a = wl_now();

			if (poll(&pf, 1, 5) < 0)
				return 1;
			in_poll += (double)(wl_now() - a) / 1e9;
		}
		pthread_join(th, NULL);
	}
	t1 = wl_now();
	printf("{\"pid\": %d, \"requests\": %ld, \"elapsed_s\": %.6f, \"poll_s\": %.6f, "
	       "\"resolver_cpu_s\": %.6f, \"resolvers\": [",
	       (int)getpid(), n, (double)(t1 - t0) / 1e9, in_poll, resolver_cpu);
	for (long i = 0; i < n; i++)
		printf("%s%d", i ? ", " : "", (int)tids[i]);
	printf("]}\n");
	return 0;
}
