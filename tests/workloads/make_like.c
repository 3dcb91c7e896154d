// SPDX-License-Identifier: GPL-2.0
/*
 * make_like N MS [J]: like make -jJ (default 1): the parent forks N
 * children, at most J at a time; each computes MS milliseconds of CPU and
 * exits; the parent waits for them in waitpid().
 *
 * Known answer (rspctl snapshot PARENT): the parent mostly sleeps in
 * waitpid(), and the children's time is under those sleeps: the children
 * are in the chain.
 *
 * Prints one JSON line: {"pid", "children", "elapsed_s", "children_cpu_s"}
 * (children: their pids).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "wl.h"

#define MAX_CHILDREN 256

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20, ms = argc > 2 ? atol(argv[2]) : 50;
	long j = argc > 3 ? atol(argv[3]) : 1, running = 0, started = 0;
	pid_t kids[MAX_CHILDREN];
	struct rusage ru;
	uint64_t t0, t1;
	int status, ok = 1;

	if (n <= 0 || n > MAX_CHILDREN || ms <= 0 || j <= 0) {
		fprintf(stderr, "usage: make_like N MS [J]\n");
		return 2;
	}
	t0 = wl_now();
	while (started < n || running) {
		if (started < n && running < j) {
			pid_t c = fork();

			if (c == 0) {
				wl_spin_ns((uint64_t)ms * 1000000);
				_exit(0);
			}
			if (c < 0)
				return 1;
			kids[started++] = c;
			running++;
			continue;
		}
		if (wait(&status) < 0)
			return 1;
		ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
		running--;
	}
	t1 = wl_now();
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("{\"pid\": %d, \"children\": [", (int)getpid());
	for (long i = 0; i < n; i++)
		printf("%s%d", i ? ", " : "", (int)kids[i]);
	printf("], \"elapsed_s\": %.6f, \"children_cpu_s\": %.6f}\n", (double)(t1 - t0) / 1e9,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return ok ? 0 : 1;
}
