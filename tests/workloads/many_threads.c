// SPDX-License-Identifier: GPL-2.0
/*
 * many_threads N [SLEEPS]: start N threads; each sleeps 1 ms SLEEPS times
 * (default 3), then all are joined.
 *
 * Known answer: the process has N+1 threads; each of the N leaves the CPU
 * to sleep at least SLEEPS times (a switch-out each). `rspctl status --pid`
 * on it lists N+1 threads (the main thread also sleeps in join), and its
 * JSON answer is large: it serves the control-socket tests that need an
 * answer bigger than a socket buffer.
 *
 * Prints one JSON line: {"pid": PID, "threads": N, "sleeps": SLEEPS}.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int sleeps = 3;

static void *body(void *arg)
{
	struct timespec ts = {0, 1000000};

	for (int i = 0; i < sleeps; i++)
		nanosleep(&ts, NULL);
	return arg;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	pthread_attr_t attr;
	pthread_t *t;

	if (argc > 2)
		sleeps = atoi(argv[2]);
	t = calloc((size_t)n, sizeof(*t));
	if (n < 1 || !t) {
		fprintf(stderr, "usage: many_threads N [SLEEPS]\n");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		if (pthread_create(&t[i], &attr, body, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("{\"pid\": %d, \"threads\": %ld, \"sleeps\": %d}\n", (int)getpid(), n, sleeps);
	free(t);
	return 0;
}
