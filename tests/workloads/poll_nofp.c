// SPDX-License-Identifier: GPL-2.0
/*
 * poll_nofp [N] [MS]: sleeps N times (default 20) in poll(NULL, 0, MS)
 * (default 50 ms) called from wait_inner(), from wait_middle(), from
 * wait_outer(), from main(); built with -O2 -fomit-frame-pointer
 * (tests/CMakeLists.txt: workloads named *_nofp). Neither libc's poll nor
 * these functions keep a frame pointer: the switch-out's frame-pointer
 * callchain stops in poll (or jumps to whatever %rbp last held).
 *
 * Known answer: every sleep of this thread is in poll under wait_inner,
 * wait_middle and wait_outer, in that order; rsp finds them by stitching
 * the uprobe on poll (whose stack copy DWARF unwinds at poll's entry) under
 * the sleep's stack, as the RSP paper does.
 *
 * Prints one JSON line: {"pid", "tid", "sleeps", "ms", "slept_s",
 * "functions": [...]}.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static int wait_inner(int ms)
{
	int r = poll(NULL, 0, ms);

	return r + 1;
}

__attribute__((noinline)) static int wait_middle(int ms)
{
	int r = wait_inner(ms);

	return r * 2;
}

__attribute__((noinline)) static int wait_outer(int ms)
{
	int r = wait_middle(ms);

	return r - 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, ms = argc > 2 ? atoi(argv[2]) : 50, sum = 0;
	double t0 = now();

	for (int i = 0; i < n; i++)
		sum += wait_outer(ms);
	printf("{\"pid\": %d, \"tid\": %d, \"sleeps\": %d, \"ms\": %d, \"slept_s\": %.6f, "
	       "\"functions\": [\"wait_outer\", \"wait_middle\", \"wait_inner\"], \"sum\": %d}\n",
	       (int)getpid(), (int)syscall(SYS_gettid), n, ms, now() - t0, sum);
	return 0;
}
