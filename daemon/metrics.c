// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus metrics (metrics.h): the latency profiles and rspd's health,
 * served over HTTP by libmicrohttpd and written to a textfile.
 *
 * Threads. libmicrohttpd runs one thread of its own (internal polling):
 * it accepts, reads and writes every connection without blocking, so a
 * slow scraper holds up nobody, and answers requests one at a time, so at
 * most one render runs; --metrics-connections bounds the connections it
 * keeps, --metrics-timeout closes an idle one.
 *
 * Slow clients. An idle timeout does not stop a client that sends one byte
 * of its request every few seconds (slowloris), and a limit full of them
 * locked every scraper out. So each connection is tracked from its start
 * (notify_conn(), in MHD's thread): one whose request has not arrived whole
 * --metrics-timeout after it opened (or after its last answer) is shut
 * down, and when a new connection would pass --metrics-connections, the
 * oldest one still sending its request makes room for it (one more than the
 * limit is accepted, to be there to make room). The sweep runs when a
 * connection opens and every second on a janitor thread of its own; the
 * list's lock makes shutdown() safe there: MHD tells notify_conn() that a
 * connection closed (which takes it off the list, under the lock) before
 * it closes the socket, so a socket on the list is still open and still
 * that connection's. The textfile has a thread
 * of its own. Neither touches the capture thread: a render reads the
 * histogram store (as `rspctl hist` does) and the counters `rspctl status`
 * reads (status.c).
 *
 * Memory. A render is a query: its heap counts against --query-memory
 * (membudget.h; the value at start: a reload does not change it here). A
 * render over it answers 503 with the sentence `rspctl` would give.
 *
 * Exposure. The profiles name every process (comm, pid) with no access
 * control but who can reach the address, so the address must be loopback
 * unless metrics-remote says otherwise. The same server answers the pprof
 * profiles (/debug/pprof/: pprofhttp.h) under the same rule.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <microhttpd.h>
#include <rsp/file.h>
#include <rsp/maps.h>
#include <rsp/prom.h>
#include <rsp/prom_pb.h>
#include <rsp/symbols.h>
#include "histthread.h"
#include "clock.h"
#include "livemodel.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "pprofhttp.h"
#include "rspd.h"
#include "server.h"
#include "status.h"
#include "webhook.h"

/* A connection, from MHD's notify_connection to its close. */
struct conn {
	struct conn *prev, *next;
	int fd;
	uint64_t since; /* opened, or last answered: its request is due by since + timeout */
	bool asked;	/* its request is in: being answered */
	bool shut;	/* shut down by us, MHD closes it */
};

struct rspd_metrics {
	struct rspd *d;
	struct MHD_Daemon *mhd;
	struct conn *conns, *last; /* oldest first; under conn_lock */
	unsigned nr_conns;
	pthread_mutex_t conn_lock;
	pthread_cond_t janitor_cond;
	pthread_t janitor;
	bool janitor_on, janitor_stop;
	int lfd;		      /* ours until MHD takes it */
	struct rspd_webhook *webhook; /* POST /v1/trigger; NULL: trigger-webhook off */
	uint64_t query_memory;
	_Atomic uint64_t renders;
	/* the textfile thread */
	bool writer;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	char last_err[512]; /* logged once until it changes */
};

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* ---- one render ------------------------------------------------------------ */

struct cg_ctx {
	const struct rsp_maps *maps;
	uint64_t now;
};

static const char *cgroup_of(void *ctx, uint32_t pid)
{
	const struct cg_ctx *c = ctx;

	return rsp_maps__cgroup(c->maps, pid, c->now);
}

/*
 * rsp_cgroup_latency_seconds: the process profiles by cgroup, as the
 * process model knows each process's (under its lock, as a query).
 */
static int render_cgroups(struct rspd *d, const struct rsp_hist_set *all, enum rsp_prom_format fmt,
			  struct rsp_buf *out)
{
	struct rsp_symbolizer *sym = rspd_livemodel__try_acquire(d);
	struct cg_ctx c = {.now = rspd_clock__now_ns()};
	int ret;

	if (!sym)
		return 0; /* the model has not read /proc yet: the family comes next time */
	c.maps = rsp_symbolizer__maps(sym);
	ret = rsp_prom__render_cgroups(all, d->cfg.metrics_top_cgroups, cgroup_of, &c, fmt, out);
	rspd_livemodel__release(d);
	return ret;
}

/* @keep: where to hand over the cut set (the native histograms' input), or NULL. */
static int render_hist(struct rspd *d, unsigned top, enum rsp_prom_format fmt, struct rsp_buf *out,
		       struct rsp_hist_stats *hs, struct rsp_hist_set **keep)
{
	struct rsp_hist_store *st = rspd_histthread__store(d);
	struct rsp_hist_query q = {
		.subjects = 1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS |
			    1u << RSP_HSUBJ_OTHER_PROCESS,
		.pid = -1,
		.tid = -1,
	};
	struct rsp_hist_set *all = NULL, *cut = NULL;
	struct rsp_buf err = RSP_BUF_INIT;
	int ret;

	if (!st)
		return 0; /* --no-hist: health only (rsp_latency_* absent) */
	rsp_hist_store__stats(st, hs);
	ret = rsp_hist_store__collect(st, &q, &all, &err);
	if (!ret)
		ret = rsp_prom__cut(all, top, &cut);
	if (!ret)
		ret = rsp_prom__render_hist(cut, fmt, out);
	if (!ret)
		ret = render_cgroups(d, all, fmt, out);
	if (!ret && keep) {
		*keep = cut;
		cut = NULL;
	}
	rsp_hist_set__delete(all);
	rsp_hist_set__delete(cut);
	rsp_buf__exit(&err);
	return ret;
}

static int render_health(struct rspd *d, struct rspd_metrics *m, bool have_hist,
			 const struct rsp_hist_stats *hs, enum rsp_prom_format fmt,
			 struct rsp_buf *out)
{
	struct rsp_capture_info ci;
	struct rsp_window_stats ws;
	struct rsp_prom_health h = {.hs = have_hist ? hs : NULL};
	int ret;

	if (rspd_status__fill(d, &ci))
		return -ENOMEM;
	rsp_window__stats(d->window, &ws);
	h.ci = &ci;
	h.ws = &ws;
	rspd_server__query_stats(d, &h.queries, &h.query_ns);
	h.scrapes = atomic_fetch_add_explicit(&m->renders, 1, memory_order_relaxed);
	ret = rsp_prom__render_health(&h, fmt, out);
	rspd_status__free(&ci);
	return ret;
}

/*
 * The protobuf exposition: the text's families translated (one renderer
 * decides every number: rsp/prom_pb.h), then the native histograms of the
 * same cut set. Return: 0 or -errno, with one sentence in @err for -EINVAL.
 */
static int render_protobuf(struct rspd_metrics *m, struct rsp_buf *out, struct rsp_buf *err)
{
	struct rspd *d = m->d;
	struct rsp_buf text = RSP_BUF_INIT;
	struct rsp_hist_stats hs = {0};
	struct rsp_hist_set *cut = NULL;
	int ret = render_hist(d, d->cfg.metrics_top_processes, RSP_PROM_TEXT, &text, &hs, &cut);

	if (!ret)
		ret = render_health(d, m, rspd_histthread__store(d) != NULL, &hs, RSP_PROM_TEXT,
				    &text);
	if (!ret)
		ret = rsp_prom_pb__from_text(text.data ? text.data : "", text.len, out, err);
	if (!ret && cut)
		ret = rsp_prom_pb__native(cut, out);
	rsp_hist_set__delete(cut);
	rsp_buf__exit(&text);
	return ret;
}

/*
 * Everything, in @fmt, into @out; counted against --query-memory.
 * Return: 0, or -errno with one sentence in @err.
 */
static int render(struct rspd_metrics *m, enum rsp_prom_format fmt, struct rsp_buf *out,
		  struct rsp_buf *err)
{
	struct rspd *d = m->d;
	struct rspd_membudget b;
	struct rsp_hist_stats hs = {0};
	int ret;

	rspd_membudget__begin(&b, m->query_memory);
	if (fmt == RSP_PROM_PROTOBUF) {
		ret = render_protobuf(m, out, err);
	} else {
		ret = render_hist(d, d->cfg.metrics_top_processes, fmt, out, &hs, NULL);
		if (!ret)
			ret = render_health(d, m, rspd_histthread__store(d) != NULL, &hs, fmt, out);
		if (!ret)
			ret = rsp_prom__finish(fmt, out);
	}
	rspd_membudget__end();
	if (b.exceeded) {
		char limit[32];

		rspd_config__show_size(b.limit, limit, sizeof(limit));
		rsp_buf__printf(err,
				"the metrics need more memory than --query-memory %s; raise it "
				"(query-memory in rspd's configuration) or lower "
				"--metrics-top-processes",
				limit);
		return -ENOMEM;
	}
	if (ret && !err->len)
		rsp_buf__printf(err, "the metrics could not be rendered: %s", strerror(-ret));
	return ret;
}

/* ---- HTTP ------------------------------------------------------------------ */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *body = NULL;

	if (asprintf(&body, "%s\n", msg) < 0)
		return MHD_NO;
	return reply(c, status, "text/plain; charset=utf-8", body, strlen(body));
}

/* Gather the query string's parameters (MHD's iterator). */
static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct rspd_pprof_params *p = cls;

	(void)kind;
	if (p->n == RSPD_PPROF_MAX_PARAMS) {
		p->too_many = true;
		return MHD_NO;
	}
	p->key[p->n] = key;
	p->val[p->n++] = value;
	return MHD_YES;
}

/* A pprof profile (pprofhttp.h), answered as Go's net/http/pprof answers. */
static enum MHD_Result reply_pprof(struct rspd_metrics *m, struct MHD_Connection *c,
				   const char *url)
{
	struct rspd_pprof_params p = {0};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned status;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, &p);
	status = rspd_pprofhttp__answer(m->d, m->query_memory, url, &p, &out, &err);
	if (status != MHD_HTTP_OK) {
		ret = reply_text(c, status, err.data ? err.data : "the profile failed");
		rspd_log__write(RSP_LOG_INFO, "pprof %s: %s", url, err.data ? err.data : "?");
		rsp_buf__exit(&out);
		rsp_buf__exit(&err);
		return ret;
	}
	rsp_buf__exit(&err);
	r = MHD_create_response_from_buffer(out.len, out.data, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		rsp_buf__exit(&out);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * What the scraper's Accept header asks for, as client_golang chooses
 * (rsp_prom__negotiate): protobuf (with the native histograms), OpenMetrics
 * or the text format 0.0.4; a header rsp cannot read gets the text format.
 */
static enum rsp_prom_format negotiate(struct MHD_Connection *c)
{
	return rsp_prom__negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"));
}

/* ---- slow clients ------------------------------------------------------------ */

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void conn_shut(struct rspd_metrics *m, struct conn *x, const char *why)
{
	x->shut = true;
	shutdown(x->fd, SHUT_RDWR); /* MHD sees the end and closes it, in this thread */
	m->nr_conns--;
	rspd_log__write(RSP_LOG_DEBUG, "metrics http: a connection closed: %s", why);
}

/*
 * Shut down what is overdue, then, past the limit, the oldest connections
 * still sending their request. Under conn_lock: every fd on the list is
 * open (see the top of the file).
 */
static void conn_sweep(struct rspd_metrics *m)
{
	const struct rspd_config *cfg = &m->d->cfg;
	uint64_t now = rspd_clock__now_ns();

	for (struct conn *x = m->conns; x; x = x->next)
		if (!x->shut && !x->asked && now - x->since > cfg->metrics_timeout_ns)
			conn_shut(m, x, "its request did not arrive within --metrics-timeout");
	for (struct conn *x = m->conns; x && m->nr_conns > cfg->metrics_connections; x = x->next)
		if (!x->shut && !x->asked)
			conn_shut(m, x, "--metrics-connections reached: room for a new one");
}

static void conn_unlink(struct rspd_metrics *m, struct conn *x)
{
	*(x->prev ? &x->prev->next : &m->conns) = x->next;
	*(x->next ? &x->next->prev : &m->last) = x->prev;
}

static void notify_conn(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode toe)
{
	struct rspd_metrics *m = cls;
	struct conn *x = *socket_context;

	pthread_mutex_lock(&m->conn_lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		x = calloc(1, sizeof(*x));
		if (x && ci) {
			x->fd = ci->connect_fd;
			x->since = rspd_clock__now_ns();
			x->prev = m->last;
			*(m->last ? &m->last->next : &m->conns) = x;
			m->last = x;
			m->nr_conns++;
			*socket_context = x;
		} else {
			free(x);
		}
		conn_sweep(m);
	} else if (x) {
		if (!x->shut)
			m->nr_conns--;
		conn_unlink(m, x);
		free(x);
	}
	pthread_mutex_unlock(&m->conn_lock);
}

/* Every second: the sweep, for connections that stall while none opens. */
static void *janitor_main(void *arg)
{
	struct rspd_metrics *m = arg;
	struct timespec at;

	pthread_mutex_lock(&m->conn_lock);
	while (!m->janitor_stop) {
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec++;
		pthread_cond_timedwait(&m->janitor_cond, &m->conn_lock, &at);
		conn_sweep(m);
	}
	pthread_mutex_unlock(&m->conn_lock);
	return NULL;
}

/* An answer sent: the connection may ask again, within the timeout. */
static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct rspd_metrics *m = cls;
	struct conn *x = conn_of(c);

	(void)toe;
	pthread_mutex_lock(&m->conn_lock);
	if (x) {
		x->asked = false;
		x->since = rspd_clock__now_ns();
	}
	pthread_mutex_unlock(&m->conn_lock);
	/* the webhook's body, if it was one (GETs hold @cls itself) */
	if (*con_cls && *con_cls != cls)
		rspd_webhook__completed(*con_cls);
	*con_cls = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_len, void **con_cls)
{
	struct rspd_metrics *m = cls;
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	enum rsp_prom_format fmt;
	enum MHD_Result ret;

	(void)version;
	if (!*con_cls) { /* the headers are in: the janitor's clock stops (any request) */
		struct conn *x = conn_of(c);

		pthread_mutex_lock(&m->conn_lock);
		if (x)
			x->asked = true;
		pthread_mutex_unlock(&m->conn_lock);
	}
	if (!strcmp(url, "/v1/trigger"))
		return rspd_webhook__request(m->webhook, c, method, data, data_len, con_cls);
	if (!*con_cls) { /* answer once the (empty) body is in */
		*con_cls = m;
		return MHD_YES;
	}
	if (*data_len) {
		*data_len = 0; /* a body is not wanted: ignored */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET /metrics and GET /debug/pprof/ are served");
	if (rspd_pprofhttp__is_profile(url))
		return reply_pprof(m, c, url);
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND,
				  "rspd serves its metrics at /metrics, pprof profiles at "
				  "/debug/pprof/profile and /debug/pprof/offcpu");
	fmt = negotiate(c);
	if (render(m, fmt, &out, &err)) {
		ret = reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, err.data);
		rspd_log__write(RSP_LOG_WARN, "metrics scrape: %s", err.data);
		rsp_buf__exit(&out);
	} else {
		ret = reply(c, MHD_HTTP_OK, rsp_prom__content_type(fmt), out.data, out.len);
	}
	rsp_buf__exit(&err);
	return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	rspd_log__write(RSP_LOG_DEBUG, "metrics http: %s", line);
}

static int listen_metrics(struct rspd_metrics *m, char *err, size_t errlen)
{
	const struct rspd_config *cfg = &m->d->cfg;
	struct sockaddr_storage ss;
	int one = 1;

	if (rspd_metrics__parse_addr(cfg->metrics_listen, &ss)) {
		snprintf(err, errlen, "--metrics-listen %s is not ADDR:PORT", cfg->metrics_listen);
		return -EINVAL;
	}
	if (!is_loopback(&ss) && !cfg->metrics_remote) {
		snprintf(err, errlen,
			 "--metrics-listen %s is not a loopback address: anyone who reaches it "
			 "would "
			 "see every process's name and latencies; set metrics-remote = yes in "
			 "[metrics] (or --metrics-remote) to serve it there anyway",
			 cfg->metrics_listen);
		return -EPERM;
	}
	m->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (m->lfd < 0 || setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->lfd, (struct sockaddr *)&ss,
		 ss.ss_family == AF_INET ? sizeof(struct sockaddr_in)
					 : sizeof(struct sockaddr_in6)) ||
	    listen(m->lfd, 64)) {
		int e = errno;

		snprintf(err, errlen, "cannot listen on %s for metrics: %s; %s",
			 cfg->metrics_listen, strerror(e),
			 e == EAFNOSUPPORT
				 ? "allow AF_INET and AF_INET6 (RestrictAddressFamilies= of "
				   "rspd.service) or turn the metrics off"
				 : "choose another address or port with --metrics-listen "
				   "(metrics-listen in [metrics])");
		return -e;
	}
	return 0;
}

/* A condition variable whose timed waits are on CLOCK_MONOTONIC. */
static void monotonic_cond(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

static int start_http(struct rspd_metrics *m, char *err, size_t errlen)
{
	const struct rspd_config *cfg = &m->d->cfg;
	int ret = listen_metrics(m, err, errlen);

	if (ret)
		return ret;
	m->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, m, MHD_OPTION_LISTEN_SOCKET, m->lfd, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)cfg->metrics_connections + 1, MHD_OPTION_NOTIFY_CONNECTION, notify_conn,
		m, MHD_OPTION_NOTIFY_COMPLETED, request_done, m, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)(cfg->metrics_timeout_ns / 1000000000ull),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10), MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, NULL, MHD_OPTION_END);
	if (!m->mhd) {
		snprintf(err, errlen, "cannot serve metrics on %s: libmicrohttpd did not start",
			 cfg->metrics_listen);
		return -EIO;
	}
	m->lfd = -1; /* MHD's now: MHD_stop_daemon() closes it */
	ret = pthread_create(&m->janitor, NULL, janitor_main, m);
	if (ret) {
		snprintf(err, errlen, "cannot start the metrics connection janitor: %s",
			 strerror(ret));
		return -ret;
	}
	m->janitor_on = true;
	return 0;
}

/* ---- the textfile ------------------------------------------------------------ */

/* Whether @path is a name node_exporter's textfile collector reads (*.prom). */
static bool prom_name(const char *path)
{
	size_t l = strlen(path);

	return l > 5 && !strcmp(path + l - 5, ".prom") && path[l - 6] != '/';
}

/*
 * One write, temp + rename (rsp/file.h), readable by all: node_exporter
 * runs as its own user. Return: 0 or -errno with one sentence in @err.
 */
static int write_textfile(struct rspd_metrics *m, struct rsp_buf *err)
{
	const char *path = m->d->cfg.metrics_textfile;
	struct rsp_buf out = RSP_BUF_INIT;
	struct rsp_outfile f;
	int ret = render(m, RSP_PROM_TEXT, &out, err);

	if (!ret)
		ret = rsp_outfile__open(&f, path, 0, err);
	if (!ret) {
		size_t off = 0;

		while (off < out.len && !ret) {
			ssize_t w = write(f.fd, out.data + off, out.len - off);

			if (w < 0 && errno != EINTR)
				ret = -errno;
			else if (w > 0)
				off += (size_t)w;
		}
		if (!ret && fchmod(f.fd, 0644))
			ret = -errno;
		if (ret) {
			rsp_buf__printf(err, "cannot write %s: %s", path, strerror(-ret));
			rsp_outfile__abort(&f);
		} else {
			ret = rsp_outfile__commit(&f, err);
		}
	}
	rsp_buf__exit(&out);
	return ret;
}

static void *textfile_main(void *arg)
{
	struct rspd_metrics *m = arg;
	uint64_t ns = m->d->cfg.metrics_interval_ns;

	pthread_setname_np(pthread_self(), "rspd-metrics");

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		struct timespec ts;
		struct rsp_buf err = RSP_BUF_INIT;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec += (long)(ns % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!m->stop && pthread_cond_timedwait(&m->cond, &m->lock, &ts) != ETIMEDOUT)
			;
		if (m->stop)
			break;
		pthread_mutex_unlock(&m->lock);
		if (write_textfile(m, &err)) {
			if (strcmp(err.data ? err.data : "", m->last_err))
				rspd_log__write(RSP_LOG_WARN, "metrics textfile: %s", err.data);
			snprintf(m->last_err, sizeof(m->last_err), "%s", err.data ? err.data : "");
		} else if (m->last_err[0]) {
			rspd_log__write(RSP_LOG_INFO, "metrics textfile: written again");
			m->last_err[0] = '\0';
		}
		rsp_buf__exit(&err);
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* The first write happens now, so that a bad path stops rspd with one sentence. */
static int start_textfile(struct rspd_metrics *m, char *err, size_t errlen)
{
	const char *path = m->d->cfg.metrics_textfile;
	struct rsp_buf e = RSP_BUF_INIT;
	int ret;

	if (!prom_name(path)) {
		snprintf(err, errlen,
			 "--metrics-textfile %s: node_exporter's textfile collector reads only "
			 "files named *.prom; name the file NAME.prom",
			 path);
		return -EINVAL;
	}
	ret = write_textfile(m, &e);
	if (ret) {
		snprintf(err, errlen, "--metrics-textfile: %s", e.data ? e.data : strerror(-ret));
		rsp_buf__exit(&e);
		return ret;
	}
	rsp_buf__exit(&e);
	pthread_mutex_init(&m->lock, NULL);
	monotonic_cond(&m->cond);
	ret = pthread_create(&m->thread, NULL, textfile_main, m);
	if (ret) {
		snprintf(err, errlen, "cannot start the metrics textfile thread: %s",
			 strerror(ret));
		pthread_cond_destroy(&m->cond);
		pthread_mutex_destroy(&m->lock);
		return -ret;
	}
	m->writer = true;
	return 0;
}

int rspd_metrics__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_metrics *m;
	int ret = 0;

	if (!d->cfg.metrics_listen[0] && !d->cfg.metrics_textfile[0])
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory starting the metrics");
		return -ENOMEM;
	}
	m->d = d;
	m->lfd = -1;
	m->query_memory = rspd_config__query_memory(&d->cfg);
	pthread_mutex_init(&m->conn_lock, NULL);
	monotonic_cond(&m->janitor_cond);
	d->metrics = m;
	ret = rspd_webhook__open(d, &m->webhook, err, errlen);
	if (!ret && d->cfg.metrics_listen[0])
		ret = start_http(m, err, errlen);
	if (!ret && d->cfg.metrics_textfile[0])
		ret = start_textfile(m, err, errlen);
	if (ret) {
		rspd_metrics__stop(d);
		return ret;
	}
	if (m->mhd)
		rspd_log__write(RSP_LOG_INFO,
				"metrics at http://%s/metrics, pprof profiles at "
				"http://%s/debug/pprof/profile and /debug/pprof/offcpu%s%s%s",
				d->cfg.metrics_listen, d->cfg.metrics_listen,
				m->webhook ? ", triggers at http://" : "",
				m->webhook ? d->cfg.metrics_listen : "",
				m->webhook ? "/v1/trigger" : "");
	if (m->writer)
		rspd_log__write(RSP_LOG_INFO, "metrics written to %s every %.1f s",
				d->cfg.metrics_textfile, (double)d->cfg.metrics_interval_ns / 1e9);
	return 0;
}

void rspd_metrics__stop(struct rspd *d)
{
	struct rspd_metrics *m = d->metrics;

	if (!m)
		return;
	if (m->janitor_on) { /* first: MHD's closing takes the list's lock */
		pthread_mutex_lock(&m->conn_lock);
		m->janitor_stop = true;
		pthread_cond_signal(&m->janitor_cond);
		pthread_mutex_unlock(&m->conn_lock);
		pthread_join(m->janitor, NULL);
	}
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	rspd_webhook__close(m->webhook);
	if (m->lfd >= 0)
		close(m->lfd);
	if (m->writer) {
		pthread_mutex_lock(&m->lock);
		m->stop = true;
		pthread_cond_signal(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
		pthread_cond_destroy(&m->cond);
		pthread_mutex_destroy(&m->lock);
	}
	pthread_cond_destroy(&m->janitor_cond);
	pthread_mutex_destroy(&m->conn_lock);
	free(m);
	d->metrics = NULL;
}
