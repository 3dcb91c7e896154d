// SPDX-License-Identifier: GPL-2.0
/*
 * pass N US: the Recursive Systemic Profiler's "pass". Two processes are
 * connected by two pipes and pass the act of doing work back and forth N
 * times: one computes US microseconds of CPU, writes to one pipe (waking
 * the other) and reads from the other (blocking on it).
 *
 * Known answer (rspctl snapshot PARENT): one control path, the parent's
 * runs and, under each of its sleeps in read(), the child's runs; nearly
 * all of it accounted. The CPU time of both, as the kernel counts it
 * (getrusage: the parent's own and its waited-for child's), is what the
 * snapshot's running time should add up to.
 *
 * Prints one JSON line: {"parent", "child", "turns", "elapsed_s", "cpu_s",
 * "parent_cpu_s", "child_cpu_s"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "wl.h"

static double tv(const struct timeval *t)
{
	return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

static void play(int in, int out, long n, long us, int first)
{
	char c = 'w';

	for (long i = 0; i < n; i++) {
		if ((!first || i) && read(in, &c, 1) != 1)
			exit(1);
		wl_spin_ns((uint64_t)us * 1000);
		if (write(out, &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500, us = argc > 2 ? atol(argv[2]) : 2000;
	int ab[2], ba[2], status;
	struct rusage self, kids;
	uint64_t t0, t1;
	pid_t child;
	char c;

	if (n <= 0 || us <= 0 || pipe(ab) || pipe(ba)) {
		fprintf(stderr, "usage: pass N US\n");
		return 2;
	}
	t0 = wl_now();
	child = fork();
	if (child == 0) {
		play(ab[0], ba[1], n, us, 0);
		_exit(0);
	}
	play(ba[0], ab[1], n, us, 1);
	if (read(ba[0], &c, 1) != 1) /* the last turn comes back */
		return 1;
	waitpid(child, &status, 0);
	t1 = wl_now();
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("{\"parent\": %d, \"child\": %d, \"turns\": %ld, \"elapsed_s\": %.6f, "
	       "\"cpu_s\": %.6f, \"parent_cpu_s\": %.6f, \"child_cpu_s\": %.6f}\n",
	       (int)getpid(), (int)child, n, (double)(t1 - t0) / 1e9,
	       tv(&self.ru_utime) + tv(&self.ru_stime) + tv(&kids.ru_utime) + tv(&kids.ru_stime),
	       tv(&self.ru_utime) + tv(&self.ru_stime), tv(&kids.ru_utime) + tv(&kids.ru_stime));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
