// SPDX-License-Identifier: GPL-2.0
/*
 * pipe_token N [US [CPU]]: two processes pass a token over two pipes N
 * times; each computes US microseconds (default 1000) of CPU per turn
 * before passing it on. With CPU, both run pinned to that CPU, which then
 * never idles: every switch is seen (on this kernel a switch away from the
 * idle task is not delivered).
 *
 * Known answer (the wait-for graph): one knot, the 2-cycle {parent, child},
 * each edge weighing the time that side waited in read() for the other:
 * near-equal, about half of the run each. Measured here: off-CPU time in
 * read() (wall minus CPU) and the part of it not runnable (schedstat).
 *
 * Prints one JSON line: {"parent", "child", "turns", "elapsed_s",
 * "parent_offcpu_s", "child_offcpu_s", "parent_slept_s", "child_slept_s"}.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "wl.h"

struct waited {
	double offcpu, slept;
};

/* Wait for the token, then pass it on after @us of work. */
static void take(int in, struct waited *w)
{
	struct wl_sleepwatch sw;
	uint64_t t0 = wl_now();
	double c0 = wl_thread_cpu();
	char c;

	wl_sleepwatch_start(&sw);
	if (read(in, &c, 1) != 1)
		exit(1);
	w->offcpu += (double)(wl_now() - t0) / 1e9 - (wl_thread_cpu() - c0);
	w->slept += wl_sleepwatch_stop(&sw);
}

static void play(int in, int out, long n, long us, int first, struct waited *w)
{
	char c = 't';

	for (long i = 0; i < n; i++) {
		if (!first || i)
			take(in, w);
		wl_spin_ns((uint64_t)us * 1000);
		if (write(out, &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, us = argc > 2 ? atol(argv[2]) : 1000;
	int ab[2], ba[2], rp[2], status;
	struct waited pw = {0, 0}, cw = {0, 0};
	uint64_t t0, t1;
	pid_t child;

	if (n <= 0 || us <= 0 || pipe(ab) || pipe(ba) || pipe(rp)) {
		fprintf(stderr, "usage: pipe_token N [US [CPU]]\n");
		return 2;
	}
	if (argc > 3) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[3]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	t0 = wl_now();
	child = fork();
	if (child == 0) {
		play(ab[0], ba[1], n, us, 0, &cw);
		if (write(rp[1], &cw, sizeof(cw)) != sizeof(cw))
			_exit(1);
		_exit(0);
	}
	play(ba[0], ab[1], n, us, 1, &pw);
	take(ba[0], &pw); /* the last token comes back once more */
	if (read(rp[0], &cw, sizeof(cw)) != sizeof(cw))
		return 1;
	waitpid(child, &status, 0);
	t1 = wl_now();
	printf("{\"parent\": %d, \"child\": %d, \"turns\": %ld, \"elapsed_s\": %.6f, "
	       "\"parent_offcpu_s\": %.6f, \"child_offcpu_s\": %.6f, "
	       "\"parent_slept_s\": %.6f, \"child_slept_s\": %.6f}\n",
	       (int)getpid(), (int)child, n, (double)(t1 - t0) / 1e9, pw.offcpu, cw.offcpu,
	       pw.slept, cw.slept);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
