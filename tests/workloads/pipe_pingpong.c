// SPDX-License-Identifier: GPL-2.0
/*
 * pipe_pingpong N [CPU]: two processes pass one byte back and forth over two
 * pipes, N round trips, both pinned to one CPU (default 0).
 *
 * Known answer: on one CPU every hand-off is a context switch, so there are
 * at least N switch-outs of the parent and N of the child. At least one side
 * sleeps in read() per round trip and is woken by the other; the writer may
 * be preempted by the reader it woke instead of sleeping itself.
 *
 * Prints one JSON line: {"parent": PID, "child": PID, "round_trips": N,
 * "cpu": C, "elapsed_s": S, "parent_switches": P, "child_switches": C}: the
 * kernel's own counts of each side's context switches (getrusage, wait4;
 * the parent's up to the reaping of the child).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void xfer(int in, int out, long n, int first)
{
	char c = 'x';

	for (long i = 0; i < n; i++) {
		if (!first && read(in, &c, 1) != 1)
			exit(1);
		if (write(out, &c, 1) != 1)
			exit(1);
		if (first && read(in, &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	int ab[2], ba[2], status;
	struct timespec t0, t1;
	struct rusage pru, cru;
	pid_t child;

	if (n <= 0 || pipe(ab) || pipe(ba)) {
		fprintf(stderr, "usage: pipe_pingpong N [CPU]\n");
		return 2;
	}
	pin(cpu);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	child = fork();
	if (child == 0) {
		xfer(ab[0], ba[1], n, 0);
		_exit(0);
	}
	xfer(ba[0], ab[1], n, 1);
	wait4(child, &status, 0, &cru);
	getrusage(RUSAGE_SELF, &pru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("{\"parent\": %d, \"child\": %d, \"round_trips\": %ld, \"cpu\": %d, "
	       "\"elapsed_s\": %.6f, \"parent_switches\": %ld, \"child_switches\": %ld}\n",
	       (int)getpid(), (int)child, n, cpu,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       pru.ru_nvcsw + pru.ru_nivcsw, cru.ru_nvcsw + cru.ru_nivcsw);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
