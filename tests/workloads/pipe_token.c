// SPDX-License-Identifier: GPL-2.0
/*
 * pipe_token N [US]: two processes pass a token over two pipes N times;
 * each computes US microseconds (default 1000) of CPU per turn before
 * passing it on.
 *
 * Known answer (the wait-for graph): one knot, the 2-cycle {parent, child},
 * each edge weighing the time that side waited in read() for the other
 * (measured here as wall time in read() minus the thread's CPU time in it):
 * near-equal, about half of the run each.
 *
 * Prints one JSON line: {"parent", "child", "turns", "elapsed_s",
 * "parent_wait_s", "child_wait_s"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "wl.h"

/* Wait for the token, pass it on after @us of work; returns the time spent waiting. */
static double play(int in, int out, long n, long us, int first)
{
	char c = 't';
	double waited = 0;

	for (long i = 0; i < n; i++) {
		if (!first || i) {
			uint64_t t0 = wl_now();
			double c0 = wl_thread_cpu();

			if (read(in, &c, 1) != 1)
				exit(1);
			waited += (double)(wl_now() - t0) / 1e9 - (wl_thread_cpu() - c0);
		}
		wl_spin_ns((uint64_t)us * 1000);
		if (write(out, &c, 1) != 1)
			exit(1);
	}
	return waited;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, us = argc > 2 ? atol(argv[2]) : 1000;
	int ab[2], ba[2], rp[2], status;
	double pw, cw = 0;
	uint64_t t0, t1;
	pid_t child;

	if (n <= 0 || us <= 0 || pipe(ab) || pipe(ba) || pipe(rp)) {
		fprintf(stderr, "usage: pipe_token N [US]\n");
		return 2;
	}
	t0 = wl_now();
	child = fork();
	if (child == 0) {
		cw = play(ab[0], ba[1], n, us, 0);
		if (write(rp[1], &cw, sizeof(cw)) != sizeof(cw))
			_exit(1);
		_exit(0);
	}
	pw = play(ba[0], ab[1], n, us, 1);
	/* the last token comes back once more */
	{
		char c;
		uint64_t w0 = wl_now();
		double c0 = wl_thread_cpu();

		if (read(ba[0], &c, 1) != 1)
			return 1;
		pw += (double)(wl_now() - w0) / 1e9 - (wl_thread_cpu() - c0);
	}
	if (read(rp[0], &cw, sizeof(cw)) != sizeof(cw))
		return 1;
	waitpid(child, &status, 0);
	t1 = wl_now();
	printf("{\"parent\": %d, \"child\": %d, \"turns\": %ld, \"elapsed_s\": %.6f, "
	       "\"parent_wait_s\": %.6f, \"child_wait_s\": %.6f}\n",
	       (int)getpid(), (int)child, n, (double)(t1 - t0) / 1e9, pw, cw);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
