// SPDX-License-Identifier: GPL-2.0
/*
 * rpc_fsync N DIR [KIB]: a client asks a server, over a UNIX stream socket,
 * N times; for each request the server pwrite()s KIB KiB (default 64) into
 * a file in DIR and fsync()s it before it replies. The client (the parent)
 * does nothing but wait for the answers.
 *
 * Known answer (rspctl snapshot CLIENT): the chain client -> server ->
 * disk: the client's sleeps in recv() are the server's time, most of it in
 * fsync() waiting for the disk. The server measures each fsync(): its wall
 * time, the part off the CPU (wall minus CPU time) and the part asleep
 * (off the CPU and not runnable either, schedstat), the part runnable
 * (schedstat's run_delay), and sends the sums to the client at the end.
 *
 * Prints one JSON line: {"client", "server", "requests", "elapsed_s",
 * "fsync_s", "fsync_offcpu_s", "fsync_slept_s", "fsync_runq_s", "server_cpu_s"}.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "wl.h"

#define MAX_KIB 1024

struct sums {
	double fsync, offcpu, slept, runq, cpu;
};

static void serve(int s, int fd, size_t bytes, long n)
{
	char *block = malloc(bytes), req[8];
	struct sums sum = {0, 0, 0, 0, 0};
	double c0 = wl_thread_cpu();

	if (!block)
		exit(1);
	memset(block, 's', bytes);
	for (long i = 0; i < n; i++) {
		struct wl_sleepwatch sw;
		uint64_t t0, t1;
		double cpu, runq;

		if (recv(s, req, sizeof(req), MSG_WAITALL) != sizeof(req))
			exit(1);
		if (pwrite(fd, block, bytes, (off_t)(i % 16) * (off_t)bytes) != (ssize_t)bytes)
			exit(1);
		wl_sleepwatch_start(&sw);
		cpu = wl_thread_cpu();
		runq = wl_run_delay();
		t0 = wl_now();
		if (fsync(fd))
			exit(1);
		t1 = wl_now();
		sum.runq += wl_run_delay() - runq;
		sum.slept += wl_sleepwatch_stop(&sw);
		sum.fsync += (double)(t1 - t0) / 1e9;
		sum.offcpu += (double)(t1 - t0) / 1e9 - (wl_thread_cpu() - cpu);
		if (send(s, req, sizeof(req), 0) != sizeof(req))
			exit(1);
	}
	sum.cpu = wl_thread_cpu() - c0;
	if (send(s, &sum, sizeof(sum), 0) != sizeof(sum))
		exit(1);
	free(block);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	size_t bytes = (size_t)(argc > 3 ? atol(argv[3]) : 64) * 1024;
	char path[4096], req[8] = "request";
	struct sums sum;
	int sv[2], fd, status;
	uint64_t t0, t1;
	pid_t server;

	if (n <= 0 || argc < 3 || !bytes || bytes > MAX_KIB * 1024) {
		fprintf(stderr, "usage: rpc_fsync N DIR [KIB]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/rpc_fsync.XXXXXX", argv[2]);
	fd = mkstemp(path);
	if (fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror(path);
		return 1;
	}
	unlink(path);
	t0 = wl_now();
	server = fork();
	if (server == 0) {
		close(sv[0]);
		serve(sv[1], fd, bytes, n);
		_exit(0);
	}
	close(sv[1]);
	for (long i = 0; i < n; i++)
		if (send(sv[0], req, sizeof(req), 0) != sizeof(req) ||
		    recv(sv[0], req, sizeof(req), MSG_WAITALL) != sizeof(req))
			return 1;
	if (recv(sv[0], &sum, sizeof(sum), MSG_WAITALL) != sizeof(sum))
		return 1;
	t1 = wl_now();
	waitpid(server, &status, 0);
	printf("{\"client\": %d, \"server\": %d, \"requests\": %ld, \"elapsed_s\": %.6f, "
	       "\"fsync_s\": %.6f, \"fsync_offcpu_s\": %.6f, \"fsync_slept_s\": %.6f, "
	       "\"fsync_runq_s\": %.6f, \"server_cpu_s\": %.6f}\n",
	       (int)getpid(), (int)server, n, (double)(t1 - t0) / 1e9, sum.fsync, sum.offcpu,
	       sum.slept, sum.runq, sum.cpu);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
