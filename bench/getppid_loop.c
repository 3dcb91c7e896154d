// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-bench-getppid N: N getppid() system calls in a tight loop (the
 * syscall itself, not a cached libc value); prints one JSON line
 * {"calls", "ns", "ns_per_call"} of wall time (CLOCK_MONOTONIC). bench/
 * syscalls.py runs it with rspd's syscall family on and off: the
 * difference is what the family costs each system call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;
	uint64_t t0, t1;

	if (n <= 0) {
		fprintf(stderr, "usage: rsp-bench-getppid N (N > 0 calls)\n");
		return 2;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now_ns();
	printf("{\"calls\": %ld, \"ns\": %llu, \"ns_per_call\": %.1f}\n", n,
	       (unsigned long long)(t1 - t0), (double)(t1 - t0) / (double)n);
	return 0;
}
