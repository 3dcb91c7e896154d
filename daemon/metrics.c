// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus metrics (metrics.h): the latency profiles and rspd's health,
 * served over HTTP by libmicrohttpd and written to a textfile.
 *
 * Threads. libmicrohttpd runs one thread of its own (internal polling):
 * it accepts, reads and writes every connection without blocking, so a
 * slow scraper holds up nobody, and answers requests one at a time, so at
 * most one render runs; --metrics-connections bounds the connections it
 * keeps, --metrics-timeout closes an idle one. The textfile has a thread
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
 * unless metrics-remote says otherwise.
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
#include <sys/stat.h>
#include <microhttpd.h>
#include <rsp/file.h>
#include <rsp/maps.h>
#include <rsp/prom.h>
#include <rsp/prom_pb.h>
#include <rsp/symbols.h>
#include "analysis.h"
#include "clock.h"
#include "livemodel.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "rspd.h"
#include "server.h"
#include "status.h"
#include "webhook.h"

struct rspd_metrics {
	struct rspd *d;
	struct MHD_Daemon *mhd;
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

int rspd_metrics__parse_addr(const char *s, struct sockaddr_storage *ss)
{
	char host[64];
	const char *colon;
	char *end;
	unsigned long port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -1;
		hl = (size_t)(rb - s - 1);
		s++;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = (size_t)(colon - s);
	}
	if (!hl || hl >= sizeof(host) || colon[1] < '0' || colon[1] > '9')
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port < 1 || port > 65535)
		return -1;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		return 0;
	}
	return -1;
}

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
	struct rsp_hist_store *st = rspd_analysis__store(d);
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
		ret = render_health(d, m, rspd_analysis__store(d) != NULL, &hs, RSP_PROM_TEXT,
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
			ret = render_health(d, m, rspd_analysis__store(d) != NULL, &hs, fmt, out);
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

/*
 * What the scraper's Accept header asks for, as client_golang chooses
 * (rsp_prom__negotiate): protobuf (with the native histograms), OpenMetrics
 * or the text format 0.0.4; a header rsp cannot read gets the text format.
 */
static enum rsp_prom_format negotiate(struct MHD_Connection *c)
{
	return rsp_prom__negotiate(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"));
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
	if (!strcmp(url, "/v1/trigger"))
		return rspd_webhook__request(m->webhook, c, method, data, data_len, con_cls);
	if (!*con_cls) { /* the headers: answer once the (empty) body is in */
		*con_cls = m;
		return MHD_YES;
	}
	if (*data_len) {
		*data_len = 0; /* a body is not wanted: ignored */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics is served");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "rspd serves its metrics at /metrics");
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

/* A request ended: the webhook's body, if it was one (GETs hold @cls itself). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)c;
	(void)toe;
	if (*con_cls && *con_cls != cls)
		rspd_webhook__completed(*con_cls);
	*con_cls = NULL;
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

static int start_http(struct rspd_metrics *m, char *err, size_t errlen)
{
	const struct rspd_config *cfg = &m->d->cfg;
	int ret = listen_metrics(m, err, errlen);

	if (ret)
		return ret;
	m->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
		on_request, m, MHD_OPTION_LISTEN_SOCKET, m->lfd, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)cfg->metrics_connections, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned)(cfg->metrics_timeout_ns / 1000000000ull),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10), MHD_OPTION_EXTERNAL_LOGGER,
		mhd_log, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, m, MHD_OPTION_END);
	if (!m->mhd) {
		snprintf(err, errlen, "cannot serve metrics on %s: libmicrohttpd did not start",
			 cfg->metrics_listen);
		return -EIO;
	}
	m->lfd = -1; /* MHD's now: MHD_stop_daemon() closes it */
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
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&m->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
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
		rspd_log__write(RSP_LOG_INFO, "metrics at http://%s/metrics%s%s%s",
				d->cfg.metrics_listen, m->webhook ? ", triggers at http://" : "",
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
	free(m);
	d->metrics = NULL;
}
