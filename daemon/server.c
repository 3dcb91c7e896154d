// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket. Queries never run on the capture thread.
 *
 * One I/O thread owns every connection: it accepts, reads requests and
 * writes answers with non-blocking sockets and a poll loop, and enforces
 * the deadlines (a client that sends half a request, or never reads its
 * answer, is dropped when its deadline passes, without holding anyone up).
 *
 * Complete requests go to a small pool of query threads (query-threads,
 * default 2 = the CPUs of a small machine). Why a pool rather than running
 * queries on the I/O thread: a query walks the window (tens of MB for
 * status --pid or a graph) and can take a second; on the I/O thread it
 * would stall every other client's accept, reads and writes for that long.
 * Why not a thread per query: a burst of 100 clients would start 100
 * threads that each pin the window and compete with the capture thread for
 * the CPUs; a fixed pool bounds the CPU and memory queries can take. The
 * pool runs at nice +10 so that, on a busy machine, the capture thread
 * (nice 0) wins. A queued request waits without a deadline: it is rspd's
 * turn, not the client's.
 *
 * Two lanes. The pool takes the requests that pass over the window (graph,
 * snapshot, top, net, status --pid/--events: rsp_request__reads_window());
 * one more query thread takes the others (status, hist, dump: counters,
 * the histogram store, a hand-off), so that a burst of graphs queued
 * behind the pool never holds up a status. The I/O thread parses a request
 * once to choose its lane (a parse reads only the request). Those requests
 * resolve no addresses either, so they do not wait for the process
 * model's lock, which a query that does holds throughout (livemodel.c).
 *
 * Memory. Each query counts its heap against --query-memory
 * (membudget.h, malloc.c): one over it fails, and its answer says which
 * option to raise, whatever error the failed allocation turned into. So
 * queries hold at most query-memory x (query-threads + 1) at once. After
 * each query that held TRIM_AFTER or more the thread hands freed memory
 * back to the system (malloc_trim): glibc keeps a thread's freed heap for
 * reuse, which made rspd's RSS the peak of its largest query ever, not of
 * the current ones.
 *
 * Access: each connection's SO_PEERCRED (and SO_PEERGROUPS) is read once at
 * accept; root and members of the admin group are unrestricted, anyone
 * else is restricted to their own processes (the rule is in
 * lib/include/rsp/query.h). One request per connection.
 *
 * Dumps (`rspctl dump`). A dump writes the whole window to disk: seconds
 * for a large window, bound by the disk, not the CPU. It runs on the dump
 * thread (dump.c), never on a query thread: a query thread that parses a
 * dump request checks who asks, hands the request to the dump thread and
 * is free again at once, without posting an answer; the client stays
 * C_QUEUED (no deadline, like any queued query). The dump thread reports
 * through its own pipe, which this I/O thread polls next to its own: it
 * reaps the finished dump and answers the client if the slot still holds
 * the same connection (slot and generation match). So a dump holds neither
 * a query thread nor the I/O thread, other clients are served meanwhile,
 * and the capture thread never waits (the dump reads pinned chunks).
 * Lifetimes: the server stops (its threads joined) before the dump thread
 * does, so nobody submits to a stopped dumper, and answers nobody reaped
 * are freed by rspd_dumper__stop().
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <rsp/cgroup.h>
#include <rsp/file.h>
#include <rsp/proto.h>
#include <rsp/query.h>
#include "histthread.h"
#include "clock.h"
#include "dump.h"
#include "livemodel.h"
#include "log.h"
#include "membudget.h"
#include "rspd.h"
#include "server.h"
#include "size.h"
#include "status.h"
#include "trigger.h"
#ifdef RSP_HAVE_BPF
#include "stopwatch.h"
#else
#include <rsp/stopwatch.h>
#include <rsp/sw_request.h>
#include <rsp/trig_request.h>
#endif

#define QUERY_NICE	10
#define TRIM_AFTER	(1u << 20) /* a query that held this much heap trims after */
#define MAX_PEER_GROUPS 1024
#define NR_FIXED_FDS	3 /* wake, listen, dumps done: before the clients' */

enum client_state {
	C_FREE,
	C_READ,	  /* reading the request */
	C_QUEUED, /* a query thread has it */
	C_WRITE,  /* writing the answer */
};

struct client {
	enum client_state state;
	int fd;
	uint32_t gen; /* which use of this slot a job belongs to */
	uint64_t deadline;
	struct ucred cred;
	bool admin;
	unsigned char hdr[RSP_PROTO_REQ_HEADER];
	size_t hdr_got;
	char *payload;
	size_t len, got;
	struct rsp_buf out;
	size_t sent;
};

/* A request on its way to a query thread and back. */
struct job {
	bool handed_off; /* a dump: the dump thread answers, not this job */
	bool light;	 /* does not read the window: the light lane */
	struct job *next;
	int slot;
	uint32_t gen;
	char *payload; /* owned */
	size_t len;
	struct ucred cred;
	bool admin;
	int status;
	struct rsp_buf answer;
};

/* What a reload may change, read under s->lock. */
struct server_settings {
	bool has_admin;
	gid_t admin_gid;
	uint64_t request_timeout_ns;
	uint64_t reply_timeout_ns;
	uint64_t query_memory; /* bytes one query may hold */
	bool query_memory_auto;
};

/* A queue of jobs and the threads that take from it. */
struct lane {
	struct job *queue, *tail;
	pthread_cond_t cond;
};

enum { LANE_HEAVY, LANE_LIGHT, NR_LANES };

struct worker {
	struct rspd_server *s;
	struct lane *lane;
	pthread_t thread;
};

struct rspd_server {
	struct rspd *d;
	int lfd;
	dev_t sock_dev; /* the socket file bind() made: the only one to remove */
	ino_t sock_ino;
	int wake[2]; /* a job is done, or stop */
	pthread_t io;
	struct worker *workers; /* query-threads on the heavy lane, then one light */
	unsigned nworkers;
	pthread_mutex_t lock; /* the lanes, done, stopping, settings */
	struct lane lanes[NR_LANES];
	struct job *done;
	bool stopping;
	struct server_settings set;
	/* queries run, and their time on a query thread (metrics.c reads them) */
	_Atomic uint64_t queries, query_ns;
	/* I/O thread only */
	unsigned max_clients;
	struct client *c;
	struct pollfd *p;
	int *map;
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->payload);
	rsp_buf__exit(&j->answer);
	free(j);
}

static struct server_settings settings(struct rspd_server *s)
{
	struct server_settings v;

	pthread_mutex_lock(&s->lock);
	v = s->set;
	pthread_mutex_unlock(&s->lock);
	return v;
}

static void client_close(struct client *c)
{
	uint32_t gen = c->gen;

	if (c->fd >= 0)
		close(c->fd);
	free(c->payload);
	rsp_buf__exit(&c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->gen = gen;
	c->state = C_FREE;
}

/* Frame an answer: header then body; the client then only writes. */
static void client_answer(struct rspd_server *s, struct client *c, int status,
			  const struct rsp_buf *body)
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
	c->deadline = rspd_clock__now_ns() + settings(s).reply_timeout_ns;
}

static void client_error(struct rspd_server *s, struct client *c, int status, const char *msg)
{
	struct rsp_buf b = RSP_BUF_INIT;

	rsp_buf__puts(&b, msg);
	client_answer(s, c, status, &b);
	rsp_buf__exit(&b);
}

/* --- query threads --------------------------------------------------------- */

/* Owners of the processes one request asks about: /proc read once per pid. */
struct uid_entry {
	long pid;
	uint32_t uid;
	int ret;
};

struct uid_cache {
	int n;
	struct uid_entry e[64];
	uint32_t requester; /* the restricted requester's uid */
	int cg_ret;	    /* 1: not looked for yet; else rsp_cgroup__find_mount()'s */
	char cg_mount[256]; /* the cgroup2 mount */
};

/*
 * A process in a cgroup whose directory the requester owns (a subtree
 * delegated to them: systemd's Delegate=, or chown by the administrator)
 * counts as theirs, whoever runs it. Read at query time from /proc and the
 * cgroup2 mount; a process gone by then is not.
 */
static bool delegated(struct uid_cache *uc, long pid)
{
	char path[4096];
	uint32_t nspid, owner;

	if (uc->cg_ret == 1)
		uc->cg_ret = rsp_cgroup__find_mount(uc->cg_mount, sizeof(uc->cg_mount));
	if (uc->cg_ret || pid <= 0 || pid > UINT32_MAX)
		return false;
	if (rsp_cgroup__read_proc("/proc", (uint32_t)pid, path, sizeof(path), &nspid) || !path[0] ||
	    rsp_cgroup__owner(uc->cg_mount, path, &owner))
		return false;
	return owner == uc->requester;
}

static int read_proc_uid(long pid, uint32_t *uid)
{
	char path[64], line[256];
	FILE *f;
	int ret = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned u;

		/* "Uid:	real	effective	saved	fs": the real uid owns it. */
		if (!strncmp(line, "Uid:", 4) && sscanf(line + 4, "%u", &u) == 1) {
			*uid = u;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int uid_of(void *ctx, long pid, uint32_t *uid)
{
	struct uid_cache *uc = ctx;
	int ret;

	for (int i = 0; i < uc->n; i++) {
		if (uc->e[i].pid == pid) {
			*uid = uc->e[i].uid;
			return uc->e[i].ret;
		}
	}
	ret = read_proc_uid(pid, uid);
	if (!ret && *uid != uc->requester && delegated(uc, pid))
		*uid = uc->requester;
	if (uc->n < (int)(sizeof(uc->e) / sizeof(uc->e[0])))
		uc->e[uc->n++] = (struct uid_entry){pid, ret ? 0 : *uid, ret};
	return ret;
}

/*
 * perf_event_paranoid now (a sysctl may change it at any time): what a
 * restricted requester may see of the samples (struct rsp_access). When it
 * cannot be read, the strictest level perf knows, and the log says so.
 */
static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v, n = f ? fscanf(f, "%d", &v) : 0;

	if (f)
		fclose(f);
	if (n == 1)
		return v;
	rspd_log__write(RSP_LOG_WARN,
			"cannot read /proc/sys/kernel/perf_event_paranoid: restricted users are "
			"shown only their own processes' samples, without kernel symbols");
	return 3;
}

static void describe(const struct rsp_proto_args *args, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < args->argc && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? " " : "", args->argv[i]);
}

/*
 * A dump holds every process's records and writes a file as root: only
 * unrestricted requesters may ask for one (THE RULE in rsp/query.h lets a
 * restricted user see only their own processes). -o FILE is written with
 * the requester's own file permissions (dump.c), so the admin group does
 * not get root's.
 */
static int queue_dump(struct rspd *d, struct job *j, const struct rsp_dump_spec *spec,
		      struct rsp_buf *err)
{
	struct rspd_dump_owner owner = {.uid = j->cred.uid, .gid = j->cred.gid};
	int ret;

	if (!j->admin) {
		rsp_buf__printf(err,
				"dump: only root and members of rspd's admin group (%s) may "
				"write dumps: a dump holds every process's records",
				d->cfg.admin_group[0] ? d->cfg.admin_group : "none configured");
		return -EACCES;
	}
	if (spec->output && spec->output[0] != '/') {
		rsp_buf__printf(err, "dump: -o wants an absolute path, not '%s'", spec->output);
		return -EINVAL;
	}
	ret = rspd_dumper__submit(d, spec, &owner, j->slot, j->gen);
	if (ret == -EBUSY)
		rsp_buf__puts(err, "dump: too many dumps are already being written; try again "
				   "when they are done");
	else if (ret)
		rsp_buf__printf(err, "dump: cannot queue the dump: %s", strerror(-ret));
	else
		j->handed_off = true;
	return ret;
}

/* rspctl stopwatch: stopwatch.c, which says who may. */
static int run_stopwatch(struct rspd *d, struct job *j, const struct rsp_sw_request *sw,
			 struct rsp_buf *err)
{
#ifdef RSP_HAVE_BPF
	if (d->stopwatches)
		return rspd_stopwatches__request(d->stopwatches, sw, j->admin, &j->answer, err);
	rsp_buf__puts(err, "stopwatch: rspd is out of memory");
	return -ENOMEM;
#else
	(void)d;
	(void)j;
	(void)sw;
	rsp_buf__puts(err, "stopwatch: this rspd was built without BPF (bpf/CMakeLists.txt says "
			   "what was missing); stopwatches need it");
	return -EOPNOTSUPP;
#endif
}

/*
 * Answer @req (a query over the window or the profiles) from rspd's
 * state, as the requester @acc allows: the one path of rspctl's queries
 * and of the HTTP profiles (metrics.c).
 */
static int answer(struct rspd *d, const struct rsp_request *req, const struct rsp_access *acc,
		  struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_capture_info ci;
	struct rsp_source src = {0};
	bool symbols;
	int ret;

	if (rspd_status__fill(d, &ci)) {
		rsp_buf__puts(err, "rspd is out of memory");
		return -ENOMEM;
	}
	symbols = rsp_request__uses_symbols(req);
	src.window = d->window;
	src.hist = rspd_histthread__store(d);
	src.schema = d->es.schema;
	src.capture = &ci;
	src.now = ci.now_ns;
	src.access = *acc;
	src.ksyms = d->ksyms;
	src.socks = d->socks;
	/*
	 * The model's lock is held for a whole query: only for those that
	 * resolve addresses, else a status on the light lane would wait for
	 * the graph that holds it.
	 */
	if (symbols)
		src.symbols = rspd_livemodel__acquire(d);
	ret = rsp_query__run(req, &src, out, err);
	if (symbols)
		rspd_livemodel__release(d);
	rspd_status__free(&ci);
	return ret;
}

static int run_query(struct rspd *d, struct job *j, const struct rsp_proto_args *args,
		     struct rsp_buf *err)
{
	struct rsp_request req;
	struct rsp_dump_spec spec;
	struct rsp_sw_request sw;
	struct uid_cache uc = {.requester = j->cred.uid, .cg_ret = 1};
	struct rsp_access acc = {.restricted = !j->admin,
				 .uid = j->cred.uid,
				 .uid_of = uid_of,
				 .ctx = &uc,
				 .paranoid = j->admin ? -1 : read_paranoid()};
	struct rsp_trig_request tr;
	int ret;

	ret = rsp_request__parse(args->argc, args->argv, &req, err);
	if (ret)
		return ret;
	if (!rsp_request__stopwatch(&req, &sw))
		ret = run_stopwatch(d, j, &sw, err);
	else if (!rsp_request__trigger(&req, &tr))
		ret = rspd_triggers__request(d, &tr, j->admin, &j->answer, err);
	else if (!rsp_request__dump_spec(&req, &spec))
		ret = queue_dump(d, j, &spec, err);
	else
		ret = answer(d, &req, &acc, &j->answer, err);
	rsp_request__exit(&req);
	return ret;
}

int rspd_server__query_all(struct rspd *d, int argc, const char *const argv[], struct rsp_buf *out,
			   struct rsp_buf *err)
{
	struct rsp_access all = {.paranoid = -1}; /* unrestricted, as root */
	struct rsp_request req;
	int ret = rsp_request__parse(argc, argv, &req, err);

	if (ret)
		return ret;
	ret = answer(d, &req, &all, out, err);
	rsp_request__exit(&req);
	return ret;
}

/*
 * A query that went over --query-memory: whatever its failed allocation
 * became (an error, or a lost line), the answer names the option.
 */
static void over_budget(const struct rspd_membudget *b, bool is_auto, struct rsp_buf *err)
{
	char limit[32], text[64];

	/* auto's limit is no size anyone wrote: rounded up to one the option takes */
	rspd_size__text(b->limit, is_auto, limit, sizeof(limit));
	if (is_auto)
		snprintf(text, sizeof(text), "auto (%s here)", limit);
	rsp_buf__reset(err);
	rsp_buf__printf(err,
			"the query needs more memory than --query-memory %s; raise it "
			"(query-memory in rspd's configuration) or ask for a shorter range "
			"(--last, --from/--to)",
			is_auto ? text : limit);
}

static void log_query(const struct job *j, const struct rsp_proto_args *args, int ret,
		      const struct rsp_buf *err, const struct rspd_membudget *b)
{
	char what[256];

	describe(args, what, sizeof(what));
	if (ret == -EACCES)
		rspd_log__write(RSP_LOG_INFO, "denied to uid %u (pid %d): %s: %s",
				(unsigned)j->cred.uid, (int)j->cred.pid, what, err->data);
	else
		rspd_log__write(b->exceeded ? RSP_LOG_INFO : RSP_LOG_DEBUG,
				"uid %u (pid %d): %s: %s (heap: peak %llu KiB)",
				(unsigned)j->cred.uid, (int)j->cred.pid, what,
				ret ? err->data : "ok", (unsigned long long)(b->peak >> 10));
}

/* Return: the most heap the query held at once. */
static uint64_t run_job(struct rspd_server *s, struct job *j)
{
	struct rsp_proto_args args;
	struct rsp_buf err = RSP_BUF_INIT;
	struct rspd_membudget b = {0};
	struct server_settings set = settings(s);
	uint64_t limit = set.query_memory;
	int ret = rsp_proto__decode_request(j->payload, j->len, &args);

	/*
	 * auto: RSPD_QUERY_MEMORY_WINDOWS x the window's budget, or x what it
	 * holds raw when that is more (a compressed window holds up to 4x its
	 * budget of records, and a query reads them decompressed).
	 */
	if (set.query_memory_auto) {
		uint64_t raw = RSPD_QUERY_MEMORY_WINDOWS * rsp_window__bytes_used(s->d->window);

		limit = raw > limit ? raw : limit;
	}

	if (ret) {
		rsp_buf__puts(&err, rsp_proto__strerror(ret));
	} else {
		rspd_membudget__begin(&b, limit);
		ret = run_query(s->d, j, &args, &err);
		rspd_membudget__end();
		if (b.exceeded && !j->handed_off) {
			ret = -ENOMEM;
			over_budget(&b, set.query_memory_auto, &err);
		}
		log_query(j, &args, ret, &err, &b);
	}
	if (ret && !err.len)
		rsp_buf__printf(&err, "query failed: %s", strerror(-ret));
	j->status = ret;
	if (ret) {
		rsp_buf__exit(&j->answer);
		j->answer = err;
	} else {
		rsp_buf__exit(&err);
	}
	return b.peak;
}

/* The next job of @l, NULL once the server stops. Called and returns with s->lock held. */
static struct job *lane_take(struct rspd_server *s, struct lane *l)
{
	struct job *j;

	while (!l->queue && !s->stopping)
		pthread_cond_wait(&l->cond, &s->lock);
	if (s->stopping)
		return NULL;
	j = l->queue;
	l->queue = j->next;
	if (!l->queue)
		l->tail = NULL;
	return j;
}

static void lane_put(struct lane *l, struct job *j)
{
	if (l->tail)
		l->tail->next = j;
	else
		l->queue = j;
	l->tail = j;
	pthread_cond_signal(&l->cond);
}

static void post_done(struct rspd_server *s, struct job *j)
{
	pthread_mutex_lock(&s->lock);
	j->next = s->done;
	s->done = j;
	/* The pipe is non-blocking: if it is full, a wakeup is pending. */
	if (write(s->wake[1], "j", 1) < 0 && errno != EAGAIN)
		rspd_log__errno(RSP_LOG_WARN, "waking the control thread");
	pthread_mutex_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rspd_server *s = w->s;

	pthread_setname_np(pthread_self(), "rspd-query");

	/* its CPU time is not capture's (the overhead budget) */
	int slot = rspd_budget__asked(s->d, -1, true);

	/* Lower priority than the capture thread: see the top of this file. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), QUERY_NICE))
		rspd_log__errno(RSP_LOG_DEBUG, "setpriority of a query thread");
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct job *j = lane_take(s, w->lane);
		uint64_t peak, t0;

		if (!j)
			break;
		pthread_mutex_unlock(&s->lock);
		t0 = rspd_clock__now_ns();
		peak = run_job(s, j);
		atomic_fetch_add_explicit(&s->query_ns, rspd_clock__now_ns() - t0,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&s->queries, 1, memory_order_relaxed);
		if (j->handed_off)
			job_free(j); /* the dump thread answers (dumps_done()) */
		else
			post_done(s, j);
		/*
		 * What the query freed goes back to the system (top of this
		 * file); not after the small ones (a status): a trim walks every
		 * thread's heap.
		 */
		if (peak >= TRIM_AFTER)
			malloc_trim(0);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	rspd_budget__asked(s->d, slot, false);
	return NULL;
}

/* --- the I/O thread ------------------------------------------------------- */

/*
 * Whether a request goes to the light lane: it does not pass over the
 * window, or it does not parse (its answer is the parser's sentence).
 */
static bool is_light(const char *payload, size_t len)
{
	struct rsp_proto_args args;
	struct rsp_request req;
	struct rsp_buf err = RSP_BUF_INIT;
	bool light = true;

	if (!rsp_proto__decode_request(payload, len, &args) &&
	    !rsp_request__parse(args.argc, args.argv, &req, &err)) {
		light = !rsp_request__reads_window(&req);
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&err);
	return light;
}

static void client_queue(struct rspd_server *s, struct client *c)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j) {
		client_error(s, c, -ENOMEM, "rspd is out of memory");
		return;
	}
	j->slot = (int)(c - s->c);
	j->gen = c->gen;
	j->payload = c->payload;
	j->len = c->len;
	j->cred = c->cred;
	j->admin = c->admin;
	j->light = is_light(j->payload, j->len);
	c->payload = NULL;
	c->state = C_QUEUED;
	c->deadline = UINT64_MAX;
	pthread_mutex_lock(&s->lock);
	lane_put(&s->lanes[j->light ? LANE_LIGHT : LANE_HEAVY], j);
	pthread_mutex_unlock(&s->lock);
}

/* Answers from the query threads. Return: true when the server stops. */
static bool take_done(struct rspd_server *s)
{
	char buf[256];
	struct job *j, *next;
	bool stop;

	while (read(s->wake[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&s->lock);
	j = s->done;
	s->done = NULL;
	stop = s->stopping;
	pthread_mutex_unlock(&s->lock);
	for (; j; j = next) {
		struct client *c = &s->c[j->slot];

		next = j->next;
		if (c->state == C_QUEUED && c->gen == j->gen)
			client_answer(s, c, j->status, &j->answer);
		job_free(j);
	}
	return stop;
}

/* Dumps the dump thread finished: answer their clients if still there. */
static void dumps_done(struct rspd_server *s)
{
	struct rspd_dump_job *j;

	while ((j = rspd_dumper__reap(s->d))) {
		const struct rsp_buf *ans;
		unsigned slot;
		uint32_t gen;
		int status;

		if (rspd_dump_job__result(j, &slot, &gen, &status, &ans) && slot < s->max_clients &&
		    s->c[slot].state == C_QUEUED && s->c[slot].gen == gen)
			client_answer(s, &s->c[slot], status, ans);
		rspd_dump_job__free(j);
	}
}

/* Read what is there; queue the request once complete. */
static void client_read(struct rspd_server *s, struct client *c)
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
		/* Checked before anything is allocated. */
		len = rsp_proto__request_length(c->hdr);
		if (len <= 0) {
			client_error(s, c, len ? (int)len : -EINVAL,
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
		client_queue(s, c);
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

static bool in_groups(int fd, gid_t primary, gid_t want)
{
	gid_t groups[MAX_PEER_GROUPS];
	socklen_t len = sizeof(groups);

	if (primary == want)
		return true;
	/* The peer's supplementary groups as they were when it connected. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == want)
			return true;
	return false;
}

/* A client over the limit gets one sentence, not a silent close. */
static void refuse_busy(struct rspd_server *s, int fd)
{
	unsigned char msg[RSP_PROTO_RESP_HEADER + 160];
	int n = snprintf((char *)msg + RSP_PROTO_RESP_HEADER, sizeof(msg) - RSP_PROTO_RESP_HEADER,
			 "rspd is serving its maximum of %u clients (max-clients); try again",
			 s->max_clients);

	rsp_proto__encode_response_header(msg, -EBUSY, (uint32_t)n);
	if (send(fd, msg, RSP_PROTO_RESP_HEADER + (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		rspd_log__errno(RSP_LOG_DEBUG, "refusing a control client");
	close(fd);
}

static struct client *free_slot(struct rspd_server *s)
{
	for (unsigned i = 0; i < s->max_clients; i++)
		if (s->c[i].state == C_FREE)
			return &s->c[i];
	return NULL;
}

static void accept_clients(struct rspd_server *s)
{
	struct server_settings set = settings(s);

	/* A burst of connections is taken in one go, a bounded one. */
	for (unsigned k = 0; k < s->max_clients; k++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		socklen_t cl = sizeof(struct ucred);
		struct client *c;

		if (fd < 0)
			return;
		c = free_slot(s);
		if (!c) {
			refuse_busy(s, fd);
			continue;
		}
		c->fd = fd;
		c->gen++;
		c->state = C_READ;
		c->deadline = rspd_clock__now_ns() + set.request_timeout_ns;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &cl)) {
			/* Unknown peer: restricted to nothing of anyone's. */
			c->cred = (struct ucred){.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
		}
		c->admin = c->cred.uid == 0 ||
			   (set.has_admin && in_groups(fd, c->cred.gid, set.admin_gid));
		rspd_log__write(RSP_LOG_DEBUG, "client pid %d uid %u%s", (int)c->cred.pid,
				(unsigned)c->cred.uid, c->admin ? " (sees everything)" : "");
	}
}

static void drop_late(struct client *c)
{
	rspd_log__write(RSP_LOG_INFO, "dropping the control client uid %u (pid %d): %s in time",
			(unsigned)c->cred.uid, (int)c->cred.pid,
			c->state == C_READ ? "it did not send a whole request"
					   : "it did not read its whole answer");
	client_close(c);
}

static int build_pollfds(struct rspd_server *s, int *timeout)
{
	uint64_t now = rspd_clock__now_ns(), next = UINT64_MAX;
	int n = NR_FIXED_FDS;

	s->p[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
	s->p[1] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
	s->p[2] = (struct pollfd){.fd = rspd_dumper__fd(s->d), .events = POLLIN};
	for (unsigned i = 0; i < s->max_clients; i++) {
		struct client *c = &s->c[i];

		if (c->state == C_FREE || c->state == C_QUEUED)
			continue;
		if (c->deadline <= now) {
			drop_late(c);
			continue;
		}
		if (c->deadline < next)
			next = c->deadline;
		s->p[n] = (struct pollfd){.fd = c->fd,
					  .events = c->state == C_READ ? POLLIN : POLLOUT};
		s->map[n++] = (int)i;
	}
	*timeout = next == UINT64_MAX ? -1 : (int)((next - now) / 1000000 + 1);
	return n;
}

static void *io_main(void *arg)
{
	struct rspd_server *s = arg;

	pthread_setname_np(pthread_self(), "rspd-io");

	for (;;) {
		int timeout, n = build_pollfds(s, &timeout);

		if (poll(s->p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if ((s->p[0].revents & POLLIN) && take_done(s))
			break;
		if (s->p[1].revents & POLLIN)
			accept_clients(s);
		if (s->p[2].revents & POLLIN)
			dumps_done(s);
		for (int i = NR_FIXED_FDS; i < n; i++) {
			struct client *c = &s->c[s->map[i]];

			if (!s->p[i].revents || c->state == C_FREE)
				continue;
			if (c->state == C_READ)
				client_read(s, c);
			else if (c->state == C_WRITE)
				client_write(c);
		}
	}
	for (unsigned i = 0; i < s->max_clients; i++)
		if (s->c[i].state != C_FREE)
			client_close(&s->c[i]);
	return NULL;
}

/* --- the socket ------------------------------------------------------------ */

/*
 * Refuse to take over a socket another rspd is serving; remove a stale one.
 * Only a socket nobody answers on is ever removed: whatever else is at
 * @path (a file, a directory, a link) is the user's, and refused.
 */
static int check_stale(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, ret;

	if (lstat(path, &st))
		return 0; /* nothing there; or bind() says what is wrong with the path */
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen,
			 "%s is %s, not a socket — remove it or give rspd another --socket PATH",
			 path, rsp_file__type(st.st_mode));
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
	if (errno == ECONNREFUSED && unlink(path) && errno != ENOENT) {
		ret = -errno;
		snprintf(err, errlen, "cannot remove the stale socket %s: %s", path,
			 strerror(-ret));
		return ret;
	}
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
	mode_t old;
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
	/* Born root-only (0600); rspd_server__configure() opens it to the group. */
	old = umask(0177);
	ret = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret || listen(fd, SOMAXCONN)) {
		ret = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

/* Remember the socket file bind() made, so that only it is ever removed. */
static void note_socket(struct rspd_server *s, const char *path)
{
	struct stat st;

	if (!lstat(path, &st) && S_ISSOCK(st.st_mode)) {
		s->sock_dev = st.st_dev;
		s->sock_ino = st.st_ino;
	}
}

/* Remove our socket file; not whatever replaced it meanwhile. */
static void unlink_socket(const struct rspd_server *s, const char *path)
{
	struct stat st;

	if (!lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_dev == s->sock_dev &&
	    st.st_ino == s->sock_ino)
		unlink(path);
}

static bool find_group(const char *name, gid_t *gid)
{
	struct group gr, *res = NULL;
	char buf[16384];

	if (!name[0] || getgrnam_r(name, &gr, buf, sizeof(buf), &res) || !res)
		return false;
	*gid = res->gr_gid;
	return true;
}

/* Mode 0660 and the group when it exists, else 0600: root only. */
static void socket_access(struct rspd *d)
{
	const char *path = d->cfg.socket_path, *grp = d->cfg.socket_group;
	gid_t gid;

	if (find_group(grp, &gid)) {
		if (chown(path, (uid_t)-1, gid) || chmod(path, 0660))
			rspd_log__errno(RSP_LOG_WARN, "cannot give %s to group %s (mode 0660)",
					path, grp);
		else
			rspd_log__write(RSP_LOG_INFO,
					"control socket %s: root and group %s (mode 0660)", path,
					grp);
		return;
	}
	if (chmod(path, 0600))
		rspd_log__errno(RSP_LOG_WARN, "chmod 0600 %s", path);
	rspd_log__write(RSP_LOG_INFO, "control socket %s: root only (mode 0600)%s%s%s", path,
			grp[0] ? ": there is no group '" : "", grp, grp[0] ? "'" : "");
}

void rspd_server__configure(struct rspd *d)
{
	struct rspd_server *s = d->server;
	struct server_settings set = {0};

	if (!s)
		return;
	socket_access(d);
	set.has_admin = find_group(d->cfg.admin_group, &set.admin_gid);
	if (!set.has_admin && d->cfg.admin_group[0])
		rspd_log__write(RSP_LOG_DEBUG, "no group '%s': only root may query every process",
				d->cfg.admin_group);
	set.request_timeout_ns = d->cfg.request_timeout_ns;
	set.reply_timeout_ns = d->cfg.reply_timeout_ns;
	set.query_memory = rspd_config__query_memory(&d->cfg);
	set.query_memory_auto = !d->cfg.query_memory;
	pthread_mutex_lock(&s->lock);
	s->set = set;
	pthread_mutex_unlock(&s->lock);
}

/* --- start and stop -------------------------------------------------------- */

static void server_free(struct rspd_server *s)
{
	struct job *j, *next;

	for (int l = 0; l < NR_LANES; l++) {
		for (j = s->lanes[l].queue; j; j = next) {
			next = j->next;
			job_free(j);
		}
		pthread_cond_destroy(&s->lanes[l].cond);
	}
	for (j = s->done; j; j = next) {
		next = j->next;
		job_free(j);
	}
	if (s->c)
		for (unsigned i = 0; i < s->max_clients; i++)
			if (s->c[i].state != C_FREE)
				client_close(&s->c[i]);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	if (s->lfd >= 0)
		close(s->lfd);
	pthread_mutex_destroy(&s->lock);
	free(s->workers);
	free(s->c);
	free(s->p);
	free(s->map);
	free(s);
}

static struct rspd_server *server_new(struct rspd *d)
{
	struct rspd_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->d = d;
	s->lfd = s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	for (int l = 0; l < NR_LANES; l++)
		pthread_cond_init(&s->lanes[l].cond, NULL);
	s->max_clients = d->cfg.max_clients;
	s->c = calloc(s->max_clients, sizeof(*s->c));
	s->p = calloc(s->max_clients + NR_FIXED_FDS, sizeof(*s->p));
	s->map = calloc(s->max_clients + NR_FIXED_FDS, sizeof(*s->map));
	s->workers = calloc(d->cfg.query_threads + 1, sizeof(*s->workers));
	if (!s->c || !s->p || !s->map || !s->workers) {
		server_free(s);
		return NULL;
	}
	for (unsigned i = 0; i < s->max_clients; i++)
		s->c[i].fd = -1;
	return s;
}

static void stop_threads(struct rspd_server *s, bool io)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (int l = 0; l < NR_LANES; l++)
		pthread_cond_broadcast(&s->lanes[l].cond);
	pthread_mutex_unlock(&s->lock);
	if (io) {
		if (write(s->wake[1], "x", 1) < 0)
			rspd_log__errno(RSP_LOG_WARN, "waking the control thread");
		pthread_join(s->io, NULL);
	}
	for (unsigned i = 0; i < s->nworkers; i++)
		pthread_join(s->workers[i].thread, NULL);
}

static int start_threads(struct rspd_server *s, char *err, size_t errlen)
{
	int ret;

	/* query-threads on the heavy lane, one on the light lane. */
	for (unsigned i = 0; i <= s->d->cfg.query_threads; i++) {
		struct worker *w = &s->workers[i];

		w->s = s;
		w->lane = &s->lanes[i < s->d->cfg.query_threads ? LANE_HEAVY : LANE_LIGHT];
		ret = pthread_create(&w->thread, NULL, worker_main, w);
		if (ret)
			goto fail;
		s->nworkers++;
	}
	ret = pthread_create(&s->io, NULL, io_main, s);
	if (!ret)
		return 0;
fail:
	snprintf(err, errlen, "cannot start the control threads: %s", strerror(ret));
	stop_threads(s, false);
	return -ret;
}

int rspd_server__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_server *s;
	int ret;

	/*
	 * A fixed threshold: blocks of 256 KiB and more (a query's vectors,
	 * maps and answer) are mappings of their own, unmapped when freed by
	 * any thread. glibc's default raises the threshold to the largest
	 * block freed so far, after which such blocks stay in the heap until a
	 * trim.
	 */
	if (!mallopt(M_MMAP_THRESHOLD, 256 << 10))
		rspd_log__write(RSP_LOG_DEBUG, "mallopt(M_MMAP_THRESHOLD) refused");
	s = server_new(d);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->lfd = listen_on(d->cfg.socket_path, err, errlen);
	if (s->lfd < 0) {
		ret = s->lfd;
		s->lfd = -1;
		server_free(s);
		return ret;
	}
	note_socket(s, d->cfg.socket_path);
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		unlink_socket(s, d->cfg.socket_path);
		server_free(s);
		return ret;
	}
	d->server = s;
	rspd_server__configure(d);
	ret = start_threads(s, err, errlen);
	if (ret) {
		d->server = NULL;
		unlink_socket(s, d->cfg.socket_path);
		server_free(s);
	}
	return ret;
}

void rspd_server__stop(struct rspd *d)
{
	struct rspd_server *s = d->server;

	if (!s)
		return;
	stop_threads(s, true);
	unlink_socket(s, d->cfg.socket_path);
	server_free(s);
	d->server = NULL;
}

void rspd_server__query_stats(struct rspd *d, uint64_t *queries, uint64_t *ns)
{
	struct rspd_server *s = d->server;

	*queries = s ? atomic_load_explicit(&s->queries, memory_order_relaxed) : 0;
	*ns = s ? atomic_load_explicit(&s->query_ns, memory_order_relaxed) : 0;
}
