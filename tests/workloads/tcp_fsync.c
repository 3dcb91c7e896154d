// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_fsync server ADDR PORT DIR N [KIB]: accept one TCP connection on
 *   ADDR:PORT, then N times: read an 8-byte request, pwrite() 64 KiB into a
 *   file in DIR and fsync() it, send the 8-byte answer. With KIB, each
 *   answer writes KIB KiB with O_DIRECT (page-cache bypassed: the write
 *   itself waits for the disk) before the fsync, so that the disk's time
 *   dominates the answer by construction, not the CPU's.
 * tcp_fsync client ADDR PORT N: connect to ADDR:PORT (retrying for 10 s
 *   while the server starts) and ask N times, one request at a time.
 *
 * tcp_fsync proxy ADDR PORT UPADDR UPPORT N: accept one TCP connection on
 *   ADDR:PORT, connect to UPADDR:UPPORT, then N times: read an 8-byte
 *   request, pass it upstream, wait for the upstream's answer and pass it
 *   back (a third "host" between the client and the server).
 *
 * tcp_fsync worker ADDR PORT DIR N KIB: the server's answers done by a
 *   worker thread: the connection thread reads each request and hands it
 *   to the worker through a pipe, the worker writes KIB KiB with O_DIRECT
 *   and fsyncs (as the server does) and hands it back through another
 *   pipe, and the connection thread sends the answer. The connection
 *   thread's wait is a pipe read the worker ends: a local hand-off that
 *   merge's snapshot follows into the worker's disk wait. Prints the
 *   server's line with "worker": the worker's tid.
 *
 * For rspctl merge (two network namespaces standing for two hosts): the
 * client's network wait is the server's time on the other "host", most of
 * it in fsync() waiting for the disk; the server measures its fsyncs.
 *
 * Each prints one JSON line: the server {"server", "requests", "fsync_s"
 * (the disk's time: the O_DIRECT writes and the fsyncs)},
 * the client {"client", "requests", "elapsed_s"}, the proxy {"proxy",
 * "requests"}.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include "wl.h"

#define BYTES (64 * 1024)
#define ALIGN 4096

static int addr_of(const char *ip, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/* O_DIRECT wants an aligned buffer and size; 0 if not asked for (@kib 0). */
static int direct_setup(const char *path, long kib, int *dfd, char **dblock)
{
	size_t bytes = (size_t)kib * 1024;

	*dfd = -1;
	*dblock = NULL;
	if (!kib)
		return 0;
	if (bytes % ALIGN || posix_memalign((void **)dblock, ALIGN, bytes))
		return -1;
	memset(*dblock, 'd', bytes);
	*dfd = open(path, O_WRONLY | O_DIRECT);
	return *dfd < 0 ? -1 : 0;
}

static int serve(struct sockaddr_in *sa, const char *dir, long n, long kib)
{
	char path[4096], req[8];
	char *block = malloc(BYTES), *dblock;
	int one = 1, ls, s, fd, dfd;
	double fsync_s = 0;

	snprintf(path, sizeof(path), "%s/tcp_fsync.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd >= 0 && direct_setup(path, kib, &dfd, &dblock)) {
		perror("tcp_fsync server: O_DIRECT");
		return 1;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (!block || fd < 0 || ls < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)sa, sizeof(*sa)) || listen(ls, 1)) {
		perror("tcp_fsync server");
		return 1;
	}
	unlink(path);
	memset(block, 's', BYTES);
	s = accept(ls, NULL, NULL);
	if (s < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		uint64_t t0;

		if (recv(s, req, sizeof(req), MSG_WAITALL) != sizeof(req) ||
		    pwrite(fd, block, BYTES, (off_t)(i % 16) * BYTES) != BYTES)
			return 1;
		t0 = wl_now();
		if (kib && pwrite(dfd, dblock, (size_t)kib * 1024, (off_t)BYTES * 16) !=
				   (ssize_t)kib * 1024)
			return 1;
		if (fsync(fd))
			return 1;
		fsync_s += (double)(wl_now() - t0) / 1e9;
		if (send(s, req, sizeof(req), 0) != sizeof(req))
			return 1;
	}
	printf("{\"server\": %d, \"requests\": %ld, \"fsync_s\": %.6f}\n", (int)getpid(), n,
	       fsync_s);
	free(block);
	free(dblock);
	return 0;
}

struct worker {
	int in, out; /* the requests' pipe (read end), the answers' (write end) */
	int fd, dfd; /* the file, and the same opened with O_DIRECT */
	char *block, *dblock;
	long kib, n;
	double fsync_s;
	pid_t tid;
};

static void *work(void *p)
{
	struct worker *w = p;
	char req[8];

	w->tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < w->n; i++) {
		uint64_t t0;

		if (read(w->in, req, sizeof(req)) != sizeof(req) ||
		    pwrite(w->fd, w->block, BYTES, (off_t)(i % 16) * BYTES) != BYTES)
			break;
		t0 = wl_now();
		if (pwrite(w->dfd, w->dblock, (size_t)w->kib * 1024, (off_t)BYTES * 16) !=
			    (ssize_t)w->kib * 1024 ||
		    fsync(w->fd))
			break;
		w->fsync_s += (double)(wl_now() - t0) / 1e9;
		if (write(w->out, req, sizeof(req)) != sizeof(req))
			break;
	}
	return NULL;
}

static int hand_off(struct sockaddr_in *sa, const char *dir, long n, long kib)
{
	struct worker w = {.kib = kib, .n = n, .block = malloc(BYTES)};
	int one = 1, ls, s, to[2], back[2];
	char path[4096], req[8];
	pthread_t th;

	snprintf(path, sizeof(path), "%s/tcp_fsync.XXXXXX", dir);
	w.fd = mkstemp(path);
	if (!w.block || w.fd < 0 || direct_setup(path, kib, &w.dfd, &w.dblock) || pipe(to) ||
	    pipe(back)) {
		perror("tcp_fsync worker");
		return 1;
	}
	unlink(path);
	memset(w.block, 's', BYTES);
	w.in = to[0];
	w.out = back[1];
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)sa, sizeof(*sa)) || listen(ls, 1) ||
	    pthread_create(&th, NULL, work, &w)) {
		perror("tcp_fsync worker");
		return 1;
	}
	s = accept(ls, NULL, NULL);
	for (long i = 0; s >= 0 && i < n; i++)
		if (recv(s, req, sizeof(req), MSG_WAITALL) != sizeof(req) ||
		    write(to[1], req, sizeof(req)) != sizeof(req) ||
		    read(back[0], req, sizeof(req)) != sizeof(req) ||
		    send(s, req, sizeof(req), 0) != sizeof(req))
			return 1;
	pthread_join(th, NULL);
	printf("{\"server\": %d, \"worker\": %d, \"requests\": %ld, \"fsync_s\": %.6f}\n",
	       (int)getpid(), (int)w.tid, n, w.fsync_s);
	free(w.block);
	free(w.dblock);
	return s < 0;
}

/* Connect to @sa, retrying for 10 s while its server starts; -1 on failure. */
static int connect_retry(struct sockaddr_in *sa)
{
	int s = -1;

	for (int tries = 0; tries < 1000; tries++) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && !connect(s, (struct sockaddr *)sa, sizeof(*sa)))
			return s;
		close(s);
		s = -1;
		usleep(10000);
	}
	perror("tcp_fsync: connect");
	return -1;
}

static int proxy(struct sockaddr_in *sa, struct sockaddr_in *up, long n)
{
	char req[8];
	int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0), s, u;

	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)sa, sizeof(*sa)) || listen(ls, 1)) {
		perror("tcp_fsync proxy");
		return 1;
	}
	s = accept(ls, NULL, NULL);
	u = s < 0 ? -1 : connect_retry(up);
	if (u < 0)
		return 1;
	for (long i = 0; i < n; i++)
		if (recv(s, req, sizeof(req), MSG_WAITALL) != sizeof(req) ||
		    send(u, req, sizeof(req), 0) != sizeof(req) ||
		    recv(u, req, sizeof(req), MSG_WAITALL) != sizeof(req) ||
		    send(s, req, sizeof(req), 0) != sizeof(req))
			return 1;
	printf("{\"proxy\": %d, \"requests\": %ld}\n", (int)getpid(), n);
	return 0;
}

static int ask(struct sockaddr_in *sa, long n)
{
	char req[8] = "request";
	uint64_t t0;
	int s = connect_retry(sa);

	if (s < 0)
		return 1;
	t0 = wl_now();
	for (long i = 0; i < n; i++)
		if (send(s, req, sizeof(req), 0) != sizeof(req) ||
		    recv(s, req, sizeof(req), MSG_WAITALL) != sizeof(req))
			return 1;
	printf("{\"client\": %d, \"requests\": %ld, \"elapsed_s\": %.6f}\n", (int)getpid(), n,
	       (double)(wl_now() - t0) / 1e9);
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa, up;

	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "server") &&
	    !addr_of(argv[2], argv[3], &sa) && atol(argv[5]) > 0 &&
	    (argc == 6 || atol(argv[6]) > 0))
		return serve(&sa, argv[4], atol(argv[5]), argc == 7 ? atol(argv[6]) : 0);
	if (argc == 7 && !strcmp(argv[1], "worker") && !addr_of(argv[2], argv[3], &sa) &&
	    atol(argv[5]) > 0 && atol(argv[6]) > 0)
		return hand_off(&sa, argv[4], atol(argv[5]), atol(argv[6]));
	if (argc == 5 && !strcmp(argv[1], "client") && !addr_of(argv[2], argv[3], &sa) &&
	    atol(argv[4]) > 0)
		return ask(&sa, atol(argv[4]));
	if (argc == 7 && !strcmp(argv[1], "proxy") && !addr_of(argv[2], argv[3], &sa) &&
	    !addr_of(argv[4], argv[5], &up) && atol(argv[6]) > 0)
		return proxy(&sa, &up, atol(argv[6]));
	fprintf(stderr, "usage: tcp_fsync server ADDR PORT DIR N [KIB] | proxy ADDR PORT "
			"UPADDR UPPORT N | worker ADDR PORT DIR N KIB | client ADDR PORT N\n");
	return 2;
}
