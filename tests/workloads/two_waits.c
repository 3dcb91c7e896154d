// SPDX-License-Identifier: GPL-2.0
/*
 * two_waits N MS: one call site, two kernel waits. The parent reads one
 * byte N times from the same line of code and the same fd, 10, which
 * dup2() makes a UNIX stream socket before the even reads and a UNIX
 * datagram socket before the odd ones (the same kind of file: socket); a
 * child spins MS ms, then writes the next byte to one or the other in turn.
 *
 * Known answer: the parent sleeps N times in read() for about MS ms each,
 * from one user context (IP, SP, return address, syscall, the fd's file
 * operations): half in unix_stream_read_generic, half in
 * __skb_wait_for_more_packets, both network waits. A stack cache keyed by
 * that context serves the other half's kernel stack: its checks must count
 * it (rspd --stack-check: nearly every checked sleep's kernel stack
 * differs, no sleep reason does). The child never sleeps: the chain's
 * sleeps are the parent's.
 *
 * Prints one JSON line: {"parent": PID, "child": PID, "reads": N,
 * "elapsed_s": S}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "wl.h"

#define FD 10

/* The one call site every sleep is in. */
static __attribute__((noinline)) int read_one(void)
{
	char c;

	return read(FD, &c, 1) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200, ms = argc > 2 ? atol(argv[2]) : 2;
	int st[2], dg[2], status;
	uint64_t t0, t1;
	pid_t child;

	if (n <= 0 || ms <= 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, st) ||
	    socketpair(AF_UNIX, SOCK_DGRAM, 0, dg)) {
		fprintf(stderr, "usage: two_waits N MS\n");
		return 2;
	}
	t0 = wl_now();
	child = fork();
	if (child == 0) {
		for (long i = 0; i < n; i++) {
			wl_spin_ns((uint64_t)ms * 1000000);
			if (write(i % 2 ? dg[1] : st[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (long i = 0; i < n; i++) {
		if (dup2(i % 2 ? dg[0] : st[0], FD) != FD || read_one())
			return 1;
	}
	waitpid(child, &status, 0);
	t1 = wl_now();
	printf("{\"parent\": %d, \"child\": %d, \"reads\": %ld, \"elapsed_s\": %.6f}\n",
	       (int)getpid(), (int)child, n, (double)(t1 - t0) / 1e9);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
