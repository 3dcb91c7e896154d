// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_fsync server ADDR PORT DIR N: accept one TCP connection on ADDR:PORT,
 *   then N times: read an 8-byte request, pwrite() 64 KiB into a file in
 *   DIR and fsync() it, send the 8-byte answer.
 * tcp_fsync client ADDR PORT N: connect to ADDR:PORT (retrying for 10 s
 *   while the server starts) and ask N times, one request at a time.
 *
 * For rspctl merge (two network namespaces standing for two hosts): the
 * client's network wait is the server's time on the other "host", most of
 * it in fsync() waiting for the disk; the server measures its fsyncs.
 *
 * Each prints one JSON line: the server {"server", "requests", "fsync_s"},
 * the client {"client", "requests", "elapsed_s"}.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "wl.h"

#define BYTES (64 * 1024)

static int addr_of(const char *ip, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

static int serve(struct sockaddr_in *sa, const char *dir, long n)
{
	char path[4096], req[8];
	char *block = malloc(BYTES);
	int one = 1, ls, s, fd;
	double fsync_s = 0;

	snprintf(path, sizeof(path), "%s/tcp_fsync.XXXXXX", dir);
	fd = mkstemp(path);
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
		if (fsync(fd))
			return 1;
		fsync_s += (double)(wl_now() - t0) / 1e9;
		if (send(s, req, sizeof(req), 0) != sizeof(req))
			return 1;
	}
	printf("{\"server\": %d, \"requests\": %ld, \"fsync_s\": %.6f}\n", (int)getpid(), n,
	       fsync_s);
	free(block);
	return 0;
}

static int ask(struct sockaddr_in *sa, long n)
{
	char req[8] = "request";
	uint64_t t0;
	int s = -1;

	for (int tries = 0; tries < 1000; tries++) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && !connect(s, (struct sockaddr *)sa, sizeof(*sa)))
			break;
		close(s);
		s = -1;
		usleep(10000);
	}
	if (s < 0) {
		perror("tcp_fsync client: connect");
		return 1;
	}
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
	struct sockaddr_in sa;

	if (argc == 6 && !strcmp(argv[1], "server") && !addr_of(argv[2], argv[3], &sa) &&
	    atol(argv[5]) > 0)
		return serve(&sa, argv[4], atol(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "client") && !addr_of(argv[2], argv[3], &sa) &&
	    atol(argv[4]) > 0)
		return ask(&sa, atol(argv[4]));
	fprintf(stderr, "usage: tcp_fsync server ADDR PORT DIR N | client ADDR PORT N\n");
	return 2;
}
