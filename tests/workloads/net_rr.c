// SPDX-License-Identifier: GPL-2.0
/*
 * net_rr tcp|udp [N] [COMPUTE_MS]: request/response over loopback between
 * two processes. The server binds 127.0.0.1 on a free port; the client
 * sends N requests of 64 bytes (TCP: one connection; UDP: a connected
 * socket), and waits for each answer; the server computes COMPUTE_MS of
 * CPU time per request (a busy loop on its thread CPU clock), then answers.
 *
 * Known answer: the client waits about N x COMPUTE_MS for the server (each
 * wait is woken by the server's send over loopback), so the wait-for graph
 * has client -> server weighing what the client measured as its wait; each
 * network operation is on a socket whose remote end is 127.0.0.1:PORT.
 *
 * Prints one JSON line: {"proto", "server", "server_tid", "client",
 * "client_tid", "port", "requests", "compute_ms", "client_wait_s" (summed
 * from each send's return to its answer's receipt), "server_cpu_s",
 * "elapsed_s"}.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MSG 64

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "net_rr: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void compute(double ms)
{
	double until = now(CLOCK_THREAD_CPUTIME_ID) + ms / 1e3;
	volatile unsigned long x = 0;

	while (now(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i;
}

static void xfer(int fd, char *buf, int recv_it)
{
	size_t done = 0;

	while (done < MSG) {
		ssize_t n = recv_it ? recv(fd, buf + done, MSG - done, 0)
				    : send(fd, buf + done, MSG - done, 0);

		if (n <= 0)
			die(recv_it ? "recv" : "send");
		done += (size_t)n;
	}
}

static void serve(int tcp, int fd, long n, double ms, int report)
{
	char buf[MSG];
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	double cpu0;
	int c = fd;

	if (tcp && (c = accept(fd, NULL, NULL)) < 0)
		die("accept");
	cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		if (tcp)
			xfer(c, buf, 1);
		else if (recvfrom(fd, buf, MSG, 0, (struct sockaddr *)&peer, &plen) != MSG)
			die("recvfrom");
		compute(ms);
		if (tcp)
			xfer(c, buf, 0);
		else if (sendto(fd, buf, MSG, 0, (struct sockaddr *)&peer, plen) != MSG)
			die("sendto");
	}
	if (write(report, &(double){now(CLOCK_THREAD_CPUTIME_ID) - cpu0}, sizeof(double)) < 0)
		die("write");
}

static double client(int tcp, const struct sockaddr_in *srv, long n)
{
	int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	char buf[MSG];
	double wait = 0;

	if (fd < 0 || connect(fd, (const struct sockaddr *)srv, sizeof(*srv)))
		die("connect");
	memset(buf, 'r', sizeof(buf));
	for (long i = 0; i < n; i++) {
		double t0;

		if (tcp)
			xfer(fd, buf, 0);
		else if (send(fd, buf, MSG, 0) != MSG)
			die("send");
		t0 = now(CLOCK_MONOTONIC);
		if (tcp)
			xfer(fd, buf, 1);
		else if (recv(fd, buf, MSG, 0) != MSG)
			die("recv");
		wait += now(CLOCK_MONOTONIC) - t0;
	}
	close(fd);
	return wait;
}

int main(int argc, char **argv)
{
	int tcp = argc > 1 && !strcmp(argv[1], "tcp");
	long n = argc > 2 ? atol(argv[2]) : 200;
	double ms = argc > 3 ? atof(argv[3]) : 3.0, t0, wait, cpu = 0;
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int fd, pfd[2], status, tid[2];
	pid_t server;

	if (argc < 2 || (!tcp && strcmp(argv[1], "udp")) || n <= 0 || ms < 0) {
		fprintf(stderr, "usage: net_rr tcp|udp [N] [COMPUTE_MS]\n");
		return 2;
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) || (tcp && listen(fd, 4)) || pipe(pfd))
		die("server socket");
	t0 = now(CLOCK_MONOTONIC);
	server = fork();
	if (server < 0)
		die("fork");
	if (server == 0) {
		tid[0] = (int)syscall(SYS_gettid);
		if (write(pfd[1], &tid[0], sizeof(tid[0])) < 0)
			die("write");
		serve(tcp, fd, n, ms, pfd[1]);
		_exit(0);
	}
	close(fd);
	if (read(pfd[0], &tid[0], sizeof(tid[0])) != sizeof(tid[0]))
		die("read");
	tid[1] = (int)syscall(SYS_gettid);
	wait = client(tcp, &a, n);
	if (read(pfd[0], &cpu, sizeof(cpu)) != sizeof(cpu))
		die("read");
	waitpid(server, &status, 0);
	printf("{\"proto\": \"%s\", \"server\": %d, \"server_tid\": %d, \"client\": %d, "
	       "\"client_tid\": %d, \"port\": %u, \"requests\": %ld, \"compute_ms\": %.3f, "
	       "\"client_wait_s\": %.6f, \"server_cpu_s\": %.6f, \"elapsed_s\": %.6f}\n",
	       tcp ? "tcp" : "udp", (int)server, tid[0], (int)getpid(), tid[1], ntohs(a.sin_port),
	       n, ms, wait, cpu, now(CLOCK_MONOTONIC) - t0);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}
