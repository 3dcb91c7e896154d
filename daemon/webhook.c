// SPDX-License-Identifier: GPL-2.0
/*
 * POST /v1/trigger on the metrics listener (trigger-webhook): Prometheus
 * Alertmanager's webhook payload fires the alert triggers it names
 * (trigger.c), so that an alert computed across machines makes the right
 * hosts dump.
 *
 * Authentication: a shared secret, sent as "Authorization: Bearer TOKEN"
 * (Alertmanager's http_config.authorization with credentials_file). Chosen
 * over mTLS because rspd's listener speaks plain HTTP and Alertmanager's
 * credentials_file makes a shared token a one-line receiver; the threat
 * model is in docs/triggers.md: whoever holds the token can fire the
 * triggers configured on this host (nothing else: a payload names no file,
 * no pid, no action), bounded by their hold-off, trigger-rate and the dump
 * directory's retention; the token crosses the network in the clear unless
 * a TLS proxy carries it, so metrics-listen stays on loopback or a trusted
 * network. The secret file must be root's and unreadable by others, read
 * once at start; the comparison takes the same time whatever the token.
 *
 * Refusals write nothing and fire nothing: no or a wrong token, 401; a body
 * over MAX_BODY, not JSON, or not Alertmanager's payload, 400; each answer
 * one sentence.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <microhttpd.h>
#include "log.h"
#include "rspd.h"
#include "trigger.h"
#include "webhook.h"

#define MAX_BODY   (256u << 10) /* Alertmanager's payload of 64 alerts fits many times */
#define MAX_SECRET 1024

struct rspd_webhook {
	struct rspd *d;
	char secret[MAX_SECRET];
	size_t secret_len;
};

/* One POST being read. */
struct post {
	char *body;
	size_t len;
	bool too_big;
};

static int read_secret(struct rspd_webhook *w, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen,
			 "trigger-secret %s: %s — create it (mode 0600) with the token", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		snprintf(err, errlen,
			 "trigger-secret %s must be a regular file of rspd's user that no one "
			 "else may read or write — chown it and chmod 0600",
			 path);
		return -EPERM;
	}
	n = read(fd, w->secret, sizeof(w->secret) - 1);
	close(fd);
	w->secret[n > 0 ? n : 0] = '\0';
	w->secret_len = strcspn(w->secret, "\r\n");
	w->secret[w->secret_len] = '\0';
	if (w->secret_len < 16) {
		snprintf(err, errlen,
			 "trigger-secret %s holds a token of %zu characters; write one of at "
			 "least 16 (e.g. openssl rand -hex 32)",
			 path, w->secret_len);
		return -EINVAL;
	}
	return 0;
}

int rspd_webhook__open(struct rspd *d, struct rspd_webhook **out, char *err, size_t errlen)
{
	struct rspd_webhook *w;
	int ret;

	*out = NULL;
	if (!d->cfg.trigger_webhook)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->d = d;
	ret = read_secret(w, d->cfg.trigger_secret, err, errlen);
	if (ret) {
		free(w);
		return ret;
	}
	*out = w;
	return 0;
}

void rspd_webhook__close(struct rspd_webhook *w)
{
	if (w)
		explicit_bzero(w->secret, sizeof(w->secret));
	free(w);
}

/* "Bearer TOKEN" with our token, compared in constant time. */
static bool authorized(const struct rspd_webhook *w, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	unsigned char diff = 0;
	size_t len;

	if (!h || strncmp(h, "Bearer ", 7))
		return false;
	h += 7;
	len = strlen(h);
	for (size_t i = 0; i < w->secret_len; i++)
		diff |= (unsigned char)(w->secret[i] ^ (i < len ? h[i] : 0));
	return !diff && len == w->secret_len;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *body = NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (asprintf(&body, "%s\n", msg) < 0)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result refuse(struct rspd_webhook *w, struct MHD_Connection *c, unsigned status,
			      const char *msg)
{
	rspd_triggers__refused(w->d);
	rspd_log__write(RSP_LOG_INFO, "webhook /v1/trigger: refused (%u): %s", status, msg);
	return answer(c, status, msg);
}

/* Append a piece of the body; past MAX_BODY only remember that it was too big. */
static void take(struct post *p, const char *data, size_t n)
{
	char *nb;

	if (p->too_big || p->len + n > MAX_BODY) {
		p->too_big = true;
		return;
	}
	nb = realloc(p->body, p->len + n + 1);
	if (!nb) {
		p->too_big = true;
		return;
	}
	p->body = nb;
	memcpy(p->body + p->len, data, n);
	p->len += n;
	p->body[p->len] = '\0';
}

static enum MHD_Result finish(struct rspd_webhook *w, struct MHD_Connection *c, struct post *p)
{
	struct rsp_buf out = RSP_BUF_INIT;
	enum MHD_Result ret;
	char msg[256];

	if (p->too_big) {
		snprintf(msg, sizeof(msg),
			 "the body is larger than %u KiB: not an Alertmanager payload (lower "
			 "max_alerts in the webhook_config)",
			 MAX_BODY >> 10);
		return refuse(w, c, MHD_HTTP_BAD_REQUEST, msg);
	}
	if (rspd_triggers__webhook(w->d, p->body ? p->body : "", p->len, &out)) {
		snprintf(msg, sizeof(msg), "%s", out.data ? out.data : "out of memory");
		rsp_buf__exit(&out);
		rspd_log__write(RSP_LOG_INFO, "webhook /v1/trigger: refused (400): %s", msg);
		return answer(c, MHD_HTTP_BAD_REQUEST, msg);
	}
	ret = answer(c, MHD_HTTP_OK, out.data ? out.data : "");
	rsp_buf__exit(&out);
	return ret;
}

enum MHD_Result rspd_webhook__request(struct rspd_webhook *w, struct MHD_Connection *c,
				      const char *method, const char *data, size_t *data_len,
				      void **con_cls)
{
	struct post *p = *con_cls;

	if (!w)
		return answer(c, MHD_HTTP_NOT_FOUND,
			      "rspd takes no triggers over HTTP: trigger-webhook is off");
	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "/v1/trigger takes POST only");
	if (!p) { /* the headers: refuse before reading a body from who has no token */
		if (!authorized(w, c))
			return refuse(w, c, MHD_HTTP_UNAUTHORIZED,
				      "/v1/trigger wants 'Authorization: Bearer TOKEN' with the "
				      "token of rspd's trigger-secret");
		p = calloc(1, sizeof(*p));
		if (!p)
			return MHD_NO;
		*con_cls = p;
		return MHD_YES;
	}
	if (*data_len) {
		take(p, data, *data_len);
		*data_len = 0;
		return MHD_YES;
	}
	return finish(w, c, p);
}

void rspd_webhook__completed(void *con_cls)
{
	struct post *p = con_cls;

	if (p)
		free(p->body);
	free(p);
}
