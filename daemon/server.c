// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket: a thread with its own poll loop, so that queries never
 * run on the capture thread. Every client is non-blocking and has a
 * deadline: a client that sends a partial request, or does not read its
 * answer, is dropped without holding up the others. One request per
 * connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <rsp/proto.h>
#include <rsp/query.h>
#include "log.h"
#include "rspd.h"

#define MAX_CLIENTS 64
#define REQUEST_TIMEOUT_NS (5ull * 1000000000)
#define WRITE_TIMEOUT_NS (60ull * 1000000000)

enum client_state {
	C_FREE,
	C_READ,
	C_WRITE,
};

struct client {
	enum client_state state;
	int fd;
	uint64_t deadline;
	unsigned char hdr[RSP_PROTO_REQ_HEADER];
	size_t hdr_got;
	char *payload;
	size_t len, got;
	struct rsp_buf out;
	size_t sent;
};

struct rspd_server {
	struct rspd *d;
	int lfd;
	int wake[2];
	pthread_t thread;
	bool running;
	struct client c[MAX_CLIENTS];
};

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->payload);
	rsp_buf__exit(&c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->state = C_FREE;
}

/* Frame an answer: header then body; the client then only writes. */
static void client_answer(struct client *c, int status, const struct rsp_buf *body)
{
	unsigned char hdr[RSP_PROTO_RESP_HEADER];
	uint32_t len = body->len > RSP_PROTO_MAX_RESPONSE ? 0 : (uint32_t)body->len;

	if (body->len > RSP_PROTO_MAX_RESPONSE)
		status = -EMSGSIZE;
	rsp_proto__encode_response_header(hdr, status, len);
	rsp_buf__reset(&c->out);
	if (rsp_buf__add(&c->out, hdr, sizeof(hdr)) || rsp_buf__add(&c->out, body->data, len)) {
		client_close(c);
		return;
	}
	c->state = C_WRITE;
	c->sent = 0;
	c->deadline = rspd_now_ns() + WRITE_TIMEOUT_NS;
}

static void client_error(struct client *c, int status, const char *msg)
{
	struct rsp_buf b = RSP_BUF_INIT;

	rsp_buf__puts(&b, msg);
	client_answer(c, status, &b);
	rsp_buf__exit(&b);
}

static int run_query(struct rspd *d, const struct rsp_proto_args *args, struct rsp_buf *out,
		     struct rsp_buf *err)
{
	struct rsp_request req;
	struct rsp_capture_info ci;
	struct rsp_source src = {0};
	int ret;

	ret = rsp_query__parse(args->argc, args->argv, &req, err);
	if (ret)
		return ret;
	if (rspd_status__fill(d, &ci)) {
		rsp_request__exit(&req);
		rsp_buf__puts(err, "rspd is out of memory");
		return -ENOMEM;
	}
	src.window = d->window;
	src.hist = rspd_analysis__store(d);
	src.schema = d->es.schema;
	src.capture = &ci;
	src.now = ci.now_ns;
	ret = rsp_query__run(&req, &src, out, err);
	rspd_log(RSP_LOG_DEBUG, "query %s: %s", rsp_query__command_name(&req),
		 ret ? err->data : "ok");
	free(ci.cpus);
	rsp_request__exit(&req);
	return ret;
}

static void client_request(struct rspd *d, struct client *c)
{
	struct rsp_proto_args args;
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	int ret = rsp_proto__decode_request(c->payload, c->len, &args);

	if (ret) {
		client_error(c, ret, rsp_proto__strerror(ret));
		return;
	}
	ret = run_query(d, &args, &out, &err);
	if (ret && !err.len)
		rsp_buf__printf(&err, "query failed: %s", strerror(-ret));
	client_answer(c, ret, ret ? &err : &out);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

/* Read what is there; handle the request once complete. */
static void client_read(struct rspd *d, struct client *c)
{
	ssize_t n;
	long len;

	if (c->hdr_got < sizeof(c->hdr)) {
		n = read(c->fd, c->hdr + c->hdr_got, sizeof(c->hdr) - c->hdr_got);
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				client_close(c);
			return;
		}
		c->hdr_got += (size_t)n;
		if (c->hdr_got < sizeof(c->hdr))
			return;
		len = rsp_proto__request_length(c->hdr);
		if (len <= 0) {
			client_error(c, len ? (int)len : -EINVAL,
				     rsp_proto__strerror(len ? (int)len : -EINVAL));
			return;
		}
		c->len = (size_t)len;
		c->payload = malloc(c->len);
		if (!c->payload) {
			client_close(c);
			return;
		}
	}
	n = read(c->fd, c->payload + c->got, c->len - c->got);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			client_close(c);
		return;
	}
	c->got += (size_t)n;
	if (c->got == c->len)
		client_request(d, c);
}

static void client_write(struct client *c)
{
	ssize_t n = send(c->fd, c->out.data + c->sent, c->out.len - c->sent, MSG_NOSIGNAL);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client_close(c);
		return;
	}
	c->sent += (size_t)n;
	if (c->sent == c->out.len)
		client_close(c);
}

static void accept_client(struct rspd_server *s)
{
	int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (fd < 0)
		return;
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
		rspd_log(RSP_LOG_DEBUG, "client pid %d uid %d", (int)cred.pid, (int)cred.uid);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &s->c[i];

		if (c->state != C_FREE)
			continue;
		c->fd = fd;
		c->state = C_READ;
		c->deadline = rspd_now_ns() + REQUEST_TIMEOUT_NS;
		return;
	}
	/* Full: refuse this one rather than stall the others. */
	close(fd);
}

static int build_pollfds(struct rspd_server *s, struct pollfd *p, int *map, int *timeout)
{
	uint64_t now = rspd_now_ns(), next = UINT64_MAX;
	int n = 2;

	p[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
	p[1] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &s->c[i];

		if (c->state == C_FREE)
			continue;
		if (c->deadline <= now) {
			rspd_log(RSP_LOG_DEBUG, "dropping a control client that timed out");
			client_close(c);
			continue;
		}
		if (c->deadline < next)
			next = c->deadline;
		p[n] = (struct pollfd){.fd = c->fd, .events = c->state == C_READ ? POLLIN : POLLOUT};
		map[n++] = i;
	}
	*timeout = next == UINT64_MAX ? -1 : (int)((next - now) / 1000000 + 1);
	return n;
}

static void *server_main(void *arg)
{
	struct rspd_server *s = arg;
	struct pollfd p[MAX_CLIENTS + 2];
	int map[MAX_CLIENTS + 2];

	for (;;) {
		int timeout, n = build_pollfds(s, p, map, &timeout);

		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			accept_client(s);
		for (int i = 2; i < n; i++) {
			struct client *c = &s->c[map[i]];

			if (!p[i].revents || c->state == C_FREE)
				continue;
			if (c->state == C_READ)
				client_read(s->d, c);
			else if (c->state == C_WRITE)
				client_write(c);
		}
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->c[i].state != C_FREE)
			client_close(&s->c[i]);
	return NULL;
}

/* Refuse to take over a socket another rspd is serving; remove a stale one. */
static int check_stale(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (!ret) {
		snprintf(err, errlen,
			 "another rspd is already serving %s — stop it first, or give this one "
			 "--socket PATH",
			 path);
		return -EADDRINUSE;
	}
	if (errno == ECONNREFUSED)
		unlink(path);
	return 0;
}

static int make_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int listen_on(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path %s is too long (max %zu bytes)", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	ret = check_stale(path, err, errlen);
	if (ret)
		return ret;
	if (make_parent(path)) {
		snprintf(err, errlen, "cannot create the directory of %s: %s", path,
			 strerror(errno));
		return -errno;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0660) ||
	    listen(fd, 64)) {
		ret = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

int rspd_server__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->d = d;
	for (int i = 0; i < MAX_CLIENTS; i++)
		s->c[i].fd = -1;
	s->lfd = listen_on(d->cfg.socket_path, err, errlen);
	if (s->lfd < 0) {
		ret = s->lfd;
		free(s);
		return ret;
	}
	if (pipe2(s->wake, O_CLOEXEC)) {
		ret = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(s->lfd);
		free(s);
		return ret;
	}
	ret = pthread_create(&s->thread, NULL, server_main, s);
	if (ret) {
		snprintf(err, errlen, "cannot start the control thread: %s", strerror(ret));
		close(s->wake[0]);
		close(s->wake[1]);
		close(s->lfd);
		free(s);
		return -ret;
	}
	s->running = true;
	d->server = s;
	return 0;
}

void rspd_server__stop(struct rspd *d)
{
	struct rspd_server *s = d->server;

	if (!s)
		return;
	if (write(s->wake[1], "x", 1) < 0)
		rspd_log_errno(RSP_LOG_WARN, "waking the control thread");
	pthread_join(s->thread, NULL);
	close(s->wake[0]);
	close(s->wake[1]);
	close(s->lfd);
	unlink(d->cfg.socket_path);
	free(s);
	d->server = NULL;
}
