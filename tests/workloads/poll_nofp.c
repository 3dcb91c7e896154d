// SPDX-License-Identifier: GPL-2.0
/*
 * poll_nofp [N] [MS]: sleeps N times (default 20) in poll() on a pipe that a
 * child process writes a byte to every MS (default 50 ms; it spins in
 * between, so that it waits for nothing: a sink of the graph), the poll called
 * from wait_inner(), from wait_middle(), from wait_outer(), from main();
 * built with -O2 -fomit-frame-pointer
 * (tests/CMakeLists.txt: workloads named *_nofp). Neither libc's poll nor
 * these functions keep a frame pointer: the switch-out's frame-pointer
 * callchain stops in poll (or jumps to whatever %rbp last held).
 *
 * Known answer: every sleep of this thread is in poll under wait_inner,
 * wait_middle and wait_outer, in that order, and is ended by the writer
 * (so the wait-for graph has the edge poll_nofp -> writer carrying them);
 * rsp finds the three functions by stitching the uprobe on poll (whose
 * stack copy DWARF unwinds at poll's entry) under the sleep's stack, as the
 * RSP paper does.
 *
 * Prints one JSON line: {"pid", "tid", "writer", "sleeps", "ms", "slept_s",
 * "functions": [...]}.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static int wait_inner(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r = poll(&p, 1, 10000);
	char c;

	if (r == 1 && read(fd, &c, 1) != 1)
		r = -1;
	return r + 1;
}

__attribute__((noinline)) static int wait_middle(int fd)
{
	int r = wait_inner(fd);

	return r * 2;
}

__attribute__((noinline)) static int wait_outer(int fd)
{
	int r = wait_middle(fd);

	return r - 1;
}

static void writer(int fd, int n, int ms)
{
	for (int i = 0; i < n; i++) {
		double until = now() + ms / 1e3;

		while (now() < until)
			;
		if (write(fd, "x", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, ms = argc > 2 ? atoi(argv[2]) : 50, sum = 0;
	double t0 = now(), slept;
	int fds[2], status;
	pid_t child;

	if (n <= 0 || ms < 0 || pipe(fds)) {
		fprintf(stderr, "usage: poll_nofp [N] [MS]\n");
		return 2;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0)
		writer(fds[1], n, ms);
	for (int i = 0; i < n; i++)
		sum += wait_outer(fds[0]);
	slept = now() - t0;
	waitpid(child, &status, 0);
	printf("{\"pid\": %d, \"tid\": %d, \"writer\": %d, \"sleeps\": %d, \"ms\": %d, "
	       "\"slept_s\": %.6f, \"functions\": [\"wait_outer\", \"wait_middle\", "
	       "\"wait_inner\"], \"sum\": %d}\n",
	       (int)getpid(), (int)syscall(SYS_gettid), (int)child, n, ms, slept, sum);
	return sum == 3 * n && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}
