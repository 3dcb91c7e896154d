// SPDX-License-Identifier: GPL-2.0
/*
 * rspctl: a thin client. It checks the command line with the same parser
 * rspd uses (so a typo is caught without a daemon), sends the arguments
 * over the control socket, and prints the answer.
 *
 * `rspctl analyze FILE COMMAND ...` needs no daemon: it runs the same
 * command with librsp on a perf.data file (a dump, or perf record's).
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <rsp/answer.h>
#include <rsp/buf.h>
#include <rsp/file.h>
#include <rsp/log.h>
#include <rsp/merge.h>
#include <rsp/parse.h>
#include <rsp/perfdata.h>
#include <rsp/proto.h>
#include <rsp/query.h>
#include <rsp/stopwatch.h>
#include <rsp/sw_request.h>
#include "report.h"

#define DEFAULT_SOCKET "/run/rspd/rspd.sock"
/*
 * How long rspctl waits for rspd's whole answer. A queued query waits its
 * turn behind others (rspd sets it no deadline); a dump of a large window
 * to a slow disk takes tens of seconds: two minutes covers both.
 */
#define DEFAULT_TIMEOUT "2m"

struct env {
	const char *socket;
	const char *timeout_arg;
	uint64_t timeout_ns; /* 0: wait without limit */
	uint64_t deadline_ns;
};

static void usage(FILE *f)
{
	struct rsp_buf b = RSP_BUF_INIT;

	rsp_query__usage(&b, NULL);
	fprintf(f,
		"usage: rspctl [--socket PATH] [--timeout DURATION] COMMAND [OPTIONS]\n"
		"\n"
		"Ask rspd, the rsp daemon, what it has seen.\n"
		"\n"
		"Commands:\n"
		"%s"
		"  %-10s %s\n"
		"  %-10s %s\n"
		"  %-10s %s\n"
		"  %-10s %s\n"
		"\n"
		"Global options:\n"
		"  -s, --socket PATH   rspd's control socket (default %s)\n"
		"  -t, --timeout D     wait at most D for rspd's answer (default " DEFAULT_TIMEOUT
		"; 0: no limit)\n"
		"  -h, --help          this text; 'rspctl help COMMAND' for one command\n"
		"  -V, --version       print the version\n"
		"\n"
		"EXAMPLES\n"
		"  rspctl status\n"
		"  rspctl status --json\n"
		"  rspctl top --pid 1234 --last 10s\n"
		"  rspctl --socket /tmp/rspd.sock status --pid 1234\n"
		"  rspctl dump -o /tmp/now.perf.data\n"
		"  rspctl analyze /tmp/now.perf.data top --pid 1234\n"
		"  rspctl report 1234 --last 10s -o slow.html\n",
		b.data ? b.data : "", "report",
		"one HTML page about a process (flame graph, graph...)", "analyze",
		"FILE COMMAND ...: a command on a perf.data file", "merge",
		"DUMP DUMP ... net|snapshot: hosts' dumps joined by TCP", "help",
		"usage of a command", DEFAULT_SOCKET);
	rsp_buf__exit(&b);
}

static const char analyze_usage[] =
	"rspctl analyze — run a command on a perf.data file, without rspd\n"
	"\n"
	"usage: rspctl analyze FILE COMMAND [OPTIONS]\n"
	"\n"
	"FILE is a dump (rspctl dump, SIGUSR1 to rspd) or a file perf record\n"
	"wrote. COMMAND is a query command with its options: status, top,\n"
	"graph, snapshot, hist or report. On a dump the answer is the one rspd gave\n"
	"live on the same window; capture-only facts (rates, rspd's own cost)\n"
	"are left out. Files a command writes (snapshot --folded) are written\n"
	"here. hist recomputes the latency profiles from the file's records, as\n"
	"rspd does live (cumulative: over the file).\n"
	"Kernel functions are named with the file's own kernel symbols, user\n"
	"functions with this machine's files when they are the ones recorded.\n"
	"No access control: whoever can read FILE sees all of it.\n"
	"\n"
	"A perf record file must have been recorded system-wide with the\n"
	"monotonic clock and the events the command needs, e.g.:\n"
	"\n"
	"  perf record -a -k mono -g -o FILE \\\n"
	"    -e sched:sched_switch -e sched:sched_waking \\\n"
	"    -e sched:sched_wakeup_new -e sched:sched_process_fork \\\n"
	"    -e sched:sched_process_exec -e sched:sched_process_exit \\\n"
	"    -e block:block_rq_insert -e block:block_rq_issue \\\n"
	"    -e block:block_rq_complete \\\n"
	"    -e irq:irq_handler_entry -e irq:irq_handler_exit \\\n"
	"    -e irq:softirq_entry -e irq:softirq_exit \\\n"
	"    -e timer:hrtimer_expire_entry -e timer:hrtimer_expire_exit \\\n"
	"    -e timer:hrtimer_start -e cpu-clock -F 99 -- sleep 10\n"
	"\n"
	"analyze says which commands are impossible for lack of events, and\n"
	"what an answer lacks when useful events are missing.\n"
	"\n"
	"EXAMPLES\n"
	"  rspctl analyze /var/lib/rspd/dumps/rsp-web1-20250102T030405.678Z.perf.data \\\n"
	"    status\n"
	"  rspctl analyze perf.data status --pid 1234 --json\n"
	"  rspctl analyze slow.perf.data graph --last 5s\n"
	"  rspctl analyze slow.perf.data top --pid 1234\n"
	"  rspctl analyze slow.perf.data snapshot 1234 --folded slow.folded\n"
	"  rspctl analyze slow.perf.data hist --pid 1234 --op offcpu\n";

static const char merge_usage[] =
	"rspctl merge — one answer from several hosts' dumps, joined by TCP\n"
	"\n"
	"usage: rspctl merge DUMP DUMP [DUMP...] net [--json]\n"
	"       rspctl merge DUMP DUMP [DUMP...] snapshot PID@HOST [--depth N] [--json]\n"
	"       rspctl merge DUMP DUMP [DUMP...] graph [--json]\n"
	"\n"
	"Each DUMP is one host's (rspctl dump on each host, at about the same\n"
	"time). Their TCP connections are matched by 4-tuple (one host's local\n"
	"address and port are the other's remote ones; IPv4, IPv6, v4-mapped).\n"
	"Each pair of hosts' clock offset is bounded as NTP does, from the\n"
	"request/response pairs of their connections, and shown with its\n"
	"uncertainty; too few pairs, or pairs no offset fits, are refused.\n"
	"net shows the connections across hosts with the thread at each end.\n"
	"snapshot PID@HOST (HOST: a dump's position from 0, or its host name):\n"
	"PID's network wait, and what the answering threads on the other hosts\n"
	"did from each request's arrival to the answer (running, runnable,\n"
	"asleep by reason: block_io is their disk), inferred via the network;\n"
	"their own network waits are followed the same way into further hosts,\n"
	"up to --depth N hosts from PID (default 4), a thread already on the\n"
	"path not again. Their waits on their own host are followed into the\n"
	"local threads that ended them as 'snapshot' does (a worker, a lock\n"
	"holder), and those threads' network waits across hosts again.\n"
	"graph: one wait-for graph over the hosts (each host's as 'graph' makes\n"
	"it, vertices named THREAD@HOST) joined by edges across hosts: a thread's\n"
	"network waits answered by a thread on another host, inferred via the\n"
	"network; knots and sinks of the whole, the way on from each such edge.\n"
	"Loopback sockets never match across hosts; addresses rewritten by a NAT\n"
	"do not match (rsp does not undo address translation): both are counted.\n"
	"Dumps from rspd versions without a boot id and socket table are refused.\n"
	"Network namespaces of one machine are hosts of their own: rspctl dump\n"
	"--netns PID writes one namespace's threads, named HOST/netns:INODE.\n"
	"\n"
	"EXAMPLES\n"
	"  rspctl merge web1.perf.data db1.perf.data net\n"
	"  rspctl merge a.perf.data b.perf.data c.perf.data net --json\n"
	"  rspctl merge web1.perf.data db1.perf.data snapshot 1234@web1\n"
	"  rspctl merge web1.perf.data app1.perf.data db1.perf.data graph\n";

static int help(const char *cmd)
{
	struct rsp_buf b = RSP_BUF_INIT;

	if (!cmd) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "analyze")) {
		fputs(analyze_usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "report")) {
		fputs(report_usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "merge")) {
		fputs(merge_usage, stdout);
		return 0;
	}
	if (!rsp_query__exists(cmd)) {
		fprintf(stderr, "rspctl: unknown command '%s'\n\n", cmd);
		usage(stderr);
		return 2;
	}
	rsp_query__usage(&b, cmd);
	fputs(b.data, stdout);
	rsp_buf__exit(&b);
	return 0;
}

/* Say who may connect, from the socket's own mode and group. */
static void denied(const char *path)
{
	struct stat st;
	struct group *g;

	if (stat(path, &st)) {
		fprintf(stderr, "rspctl: permission denied on %s: %s\n", path, strerror(errno));
		return;
	}
	g = getgrgid(st.st_gid);
	if ((st.st_mode & 0060) == 0060 && st.st_gid != 0 && g)
		fprintf(stderr,
			"rspctl: permission denied on %s — run rspctl as root or as a member of "
			"group %s ('adduser $USER %s', then log in again)\n",
			path, g->gr_name, g->gr_name);
	else
		fprintf(stderr,
			"rspctl: permission denied on %s: rspd lets only root connect — run rspctl "
			"as root, or set socket-group in rspd's configuration (rspd(8))\n",
			path);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void no_answer(const struct env *env)
{
	fprintf(stderr,
		"rspctl: no answer from rspd at %s within %s — it is busy or hung; wait longer "
		"with --timeout DURATION (0: no limit), or see rspd's log\n",
		env->socket, env->timeout_arg);
}

static int connect_socket(const struct env *env)
{
	const char *path = env->socket;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = (time_t)(env->timeout_ns / 1000000000ull),
			     .tv_usec = (suseconds_t)(env->timeout_ns % 1000000000ull / 1000)};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "rspctl: socket path %s is too long\n", path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("rspctl: socket");
		return -1;
	}
	/* Bounds connect() (a full backlog) and each send(); reads poll the deadline. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
	if (errno == EAGAIN || errno == EINPROGRESS)
		no_answer(env);
	else if (errno == ENOENT || errno == ECONNREFUSED)
		fprintf(stderr,
			"rspctl: no rspd at %s — start it with 'systemctl start rspd' or "
			"'rspd --foreground', or point rspctl at it with --socket PATH\n",
			path);
	else if (errno == EACCES || errno == EPERM)
		denied(path);
	else
		fprintf(stderr, "rspctl: cannot connect to %s: %s\n", path, strerror(errno));
	close(fd);
	return -1;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Wait for something to read until @deadline_ns (0: no limit); -ETIMEDOUT past it. */
static int wait_readable(int fd, uint64_t deadline_ns)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	uint64_t now;
	int r;

	do {
		int ms = -1;

		if (deadline_ns) {
			now = now_ns();
			if (now >= deadline_ns)
				return -ETIMEDOUT;
			ms = (int)((deadline_ns - now + 999999) / 1000000);
		}
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

static int read_all(int fd, void *p, size_t n, uint64_t deadline_ns)
{
	while (n) {
		int err = wait_readable(fd, deadline_ns);
		ssize_t r;

		if (err)
			return err;
		r = read(fd, p, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return r == 0 ? -EPIPE : -errno;
		p = (char *)p + r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Write @len bytes to @path: a new file or a regular one replaced whole,
 * never through a link, a device or a FIFO (rsp/file.h); one sentence on
 * stderr when it fails.
 */
static int write_file(const char *path, const char *data, size_t len)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int ret = rsp_file__write(path, data, len, 0, &err);

	if (ret)
		fprintf(stderr, "rspctl: %s\n", err.data ? err.data : strerror(-ret));
	else
		fprintf(stderr, "rspctl: wrote %s (%zu bytes)\n", path, len);
	rsp_buf__exit(&err);
	return ret ? -1 : 0;
}

/*
 * Print an answer and write the files it carries (rsp/answer.h): the one
 * place where rspctl writes what a query produced, whoever answered it. The
 * paths are the user's, relative to where rspctl runs; rspd never writes
 * them (it runs as root, the user may not).
 */
static int deliver(const struct rsp_request *req, const char *body, size_t len)
{
	struct rsp_part p;
	size_t pos = 0;
	int r, ret = 0;

	if (!rsp_answer__has_parts(body, len)) {
		fwrite(body, 1, len, stdout);
		return 0;
	}
	while ((r = rsp_answer__next(body, len, &pos, &p)) > 0) {
		const char *path;

		if (p.name_len == strlen(RSP_ANSWER_STDOUT) &&
		    !memcmp(p.name, RSP_ANSWER_STDOUT, p.name_len)) {
			fwrite(p.data, 1, p.len, stdout);
			continue;
		}
		path = rsp_request__output(req, p.name, p.name_len);
		if (!path) {
			fprintf(stderr,
				"rspctl: the answer carries '%.*s', which was not asked for; "
				"ignored\n",
				(int)p.name_len, p.name);
			continue;
		}
		fflush(stdout);
		if (write_file(path, p.data, p.len))
			ret = 1;
	}
	if (r < 0) {
		fprintf(stderr, "rspctl: a broken answer: its parts do not add up\n");
		return 1;
	}
	return ret;
}

/* Fail before asking when a file the request names cannot be written. */
static int check_outputs(const struct rsp_request *req)
{
	const char *name, *path;

	for (size_t i = 0; (path = rsp_request__output_at(req, i, &name)); i++) {
		char dir[PATH_MAX];
		struct stat st;
		int ok;

		if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
			fprintf(stderr,
				"rspctl: %s (--%s) is %s, not a regular file: rspctl writes only a "
				"new file or replaces a regular one — choose another path\n",
				path, name, rsp_file__type(st.st_mode));
			return -1;
		}
		snprintf(dir, sizeof(dir), "%s", path);
		ok = !access(path, F_OK) ? !access(path, W_OK) : !access(dirname(dir), W_OK | X_OK);
		if (!ok) {
			fprintf(stderr,
				"rspctl: cannot write %s (--%s): %s — choose another path\n", path,
				name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Read rspd's answer: 0 and its body in @body, 1 after printing why not. */
static int read_answer(int fd, const struct env *env, struct rsp_buf *body)
{
	const char *path = env->socket;
	unsigned char hdr[RSP_PROTO_RESP_HEADER];
	uint32_t len;
	int status, err = read_all(fd, hdr, sizeof(hdr), env->deadline_ns);

	if (err == -ETIMEDOUT) {
		no_answer(env);
		return 1;
	}
	if (err || rsp_proto__decode_response_header(hdr, &status, &len)) {
		fprintf(stderr, "rspctl: a broken answer from rspd at %s\n", path);
		return 1;
	}
	if (!rsp_buf__reserve(body, (size_t)len + 1))
		err = read_all(fd, body->data, len, env->deadline_ns);
	else
		err = -ENOMEM;
	if (err == -ETIMEDOUT) {
		no_answer(env);
		return 1;
	}
	if (err) {
		fprintf(stderr, "rspctl: the answer from %s was cut short\n", path);
		return 1;
	}
	body->len = len;
	body->data[len] = '\0';
	if (status) {
		fprintf(stderr, "rspctl: %s\n", body->data);
		return 1;
	}
	return 0;
}

/* Send @argv to rspd; 0 and the answer in @body, or 1 after printing why not. */
static int ask(struct env *env, int argc, const char *const *argv, struct rsp_buf *body)
{
	struct rsp_buf req = RSP_BUF_INIT;
	int fd, ret;

	if (rsp_proto__encode_request(argc, (char *const *)argv, &req)) {
		fprintf(stderr, "rspctl: the command line is too long to send\n");
		return 2;
	}
	env->deadline_ns = env->timeout_ns ? now_ns() + env->timeout_ns : 0;
	fd = connect_socket(env);
	if (fd < 0) {
		rsp_buf__exit(&req);
		return 1;
	}
	/*
	 * rspd may answer before it has read the request (it is busy, or the
	 * request is too long) and close: read that answer rather than report
	 * the broken pipe.
	 */
	if (write_all(fd, req.data, req.len) && errno != EPIPE && errno != ECONNRESET) {
		if (errno == EAGAIN)
			no_answer(env);
		else
			fprintf(stderr, "rspctl: could not send the request to %s: %s\n",
				env->socket, strerror(errno));
		ret = 1;
	} else {
		ret = read_answer(fd, env, body);
	}
	close(fd);
	rsp_buf__exit(&req);
	return ret;
}

/*
 * A query with a local part (it names the user's files): rspd answers the
 * selection in JSON, librsp finishes here, as the user who runs rspctl.
 */
static int ask_local(struct env *env, const struct rsp_request *req, int argc, char **argv)
{
	struct rsp_buf body = RSP_BUF_INIT, out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	int rargc, ret;
	const char **rargv = rsp_request__remote_argv(req, argc, (const char *const *)argv, &rargc);

	if (!rargv) {
		fprintf(stderr, "rspctl: out of memory\n");
		return 1;
	}
	ret = ask(env, rargc, rargv, &body);
	if (!ret && rsp_request__finish(req, body.data, body.len, &out, &err)) {
		fprintf(stderr, "rspctl: %s\n",
			err.data ? err.data
				 : "the answer could not be finished here, and librsp did not say "
				   "why (a bug: please report the command line)");
		ret = 1;
	} else if (!ret && out.len) {
		fwrite(out.data, 1, out.len, stdout);
	}
	free(rargv);
	rsp_buf__exit(&body);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return ret;
}

/* Check a query locally before bothering the daemon with it. */
static int check_query(int argc, char **argv, struct rsp_request *req)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int ret = rsp_request__parse(argc, (const char *const *)argv, req, &err);

	if (ret) {
		fprintf(stderr, "rspctl: %s\n", err.data ? err.data : "invalid command");
		if (!rsp_query__exists(argv[0])) {
			fputc('\n', stderr);
			usage(stderr);
		}
	} else if (check_outputs(req)) {
		rsp_request__exit(req);
		ret = -EINVAL;
	}
	rsp_buf__exit(&err);
	return ret;
}

static void log_stderr(enum rsp_log_level level, const char *msg, void *ctx)
{
	if (level <= RSP_LOG_WARN)
		fprintf(stderr, "rspctl: %s\n", msg);
}

/* Open, check, load, run: each step's failure is one sentence. */
static int analyze_file(const char *path, const struct rsp_request *req, struct rsp_buf *out,
			struct rsp_buf *err)
{
	struct rsp_buf notes = RSP_BUF_INIT;
	struct rsp_perfdata *pd = rsp_perfdata__open(path, err);
	struct rsp_source src;
	int ret = pd ? rsp_request__check_events(req, rsp_perfdata__schema(pd), &notes, err)
		     : -EINVAL;

	if (notes.len)
		fputs(notes.data, stderr);
	if (!ret)
		ret = rsp_perfdata__source_for(pd, req, &src, err);
	if (!ret)
		ret = rsp_query__run(req, &src, out, err);
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&notes);
	return ret ? 1 : 0;
}

/* rspctl report's questions, asked of rspd (report.h). */
static int report_ask_live(void *ctx, int argc, const char **argv, struct rsp_buf *answer)
{
	return ask(ctx, argc, argv, answer);
}

/* rspctl report's questions, run on a file: each query as analyze runs it. */
static int report_ask_file(void *ctx, int argc, const char **argv, struct rsp_buf *answer)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;
	int ret = rsp_request__parse(argc, argv, &req, &err);

	if (!ret) {
		ret = analyze_file(ctx, &req, answer, &err);
		rsp_request__exit(&req);
	}
	if (ret)
		fprintf(stderr, "rspctl: %s\n", err.data ? err.data : "analyze failed");
	rsp_buf__exit(&err);
	return ret ? 1 : 0;
}

static int report_offline(const char *file, int argc, char **argv)
{
	struct report_asker a = {report_ask_file, (void *)file, file};

	return report__main(argc, argv, &a);
}

/* The same query as rspd would answer, on a dump; files it asks for written here too. */
static int analyze(int argc, char **argv)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_request req;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "rspctl: analyze needs a file and a command, e.g. 'rspctl analyze "
				"FILE status'; see 'rspctl help analyze'\n");
		return 2;
	}
	rsp_log__set(log_stderr, NULL);
	if (!strcmp(argv[2], "report"))
		return report_offline(argv[1], argc - 2, argv + 2);
	if (check_query(argc - 2, argv + 2, &req))
		return 2;
	ret = analyze_file(argv[1], &req, &out, &err);
	if (ret)
		fprintf(stderr, "rspctl: %s\n", err.data ? err.data : "analyze failed");
	else if (out.len)
		ret = deliver(&req, out.data, out.len);
	rsp_request__exit(&req);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return ret;
}

/* rspctl merge: several hosts' dumps, offline like analyze. */
static int merge(int argc, char **argv)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	int ret;

	rsp_log__set(log_stderr, NULL);
	ret = rsp_merge__run(argc - 1, argv + 1, &out, &err);
	if (ret)
		fprintf(stderr, "rspctl: %s\n", err.data ? err.data : "merge failed");
	else if (out.len)
		fwrite(out.data, 1, out.len, stdout);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return ret ? 1 : 0;
}

/*
 * Arguments that name the caller's files, made absolute: rspd runs in its
 * own working directory, and would find another file (or none) under a
 * relative name. At most three: dump's -o, a stopwatch's SPEC, --start and
 * --end (never all at once).
 */
struct abs_args {
	char buf[3][PATH_MAX];
	int used;
};

/*
 * The argument of @argv that holds @value (all of it: "F"; or its end:
 * "--output=F") again, in a buffer of @a, with the working directory and a
 * '/' before @value, whose first @path_len bytes are a relative path.
 */
static int absolute_arg(struct abs_args *a, int argc, char **argv, const char *value,
			size_t path_len)
{
	char cwd[PATH_MAX];
	size_t dot = 0;

	while (dot + 2 < path_len && !strncmp(value + dot, "./", 2))
		dot += 2; /* "cwd/prog", not "cwd/./prog" */
	for (int i = 0; i < argc; i++) {
		/* addresses compared as integers: @value may be in any argument */
		size_t at = (size_t)((uintptr_t)value - (uintptr_t)argv[i]);

		if ((uintptr_t)value < (uintptr_t)argv[i] || at > strlen(argv[i]))
			continue;
		if (a->used == 3 || !getcwd(cwd, sizeof(cwd)) ||
		    (size_t)snprintf(a->buf[a->used], PATH_MAX, "%.*s%s/%.*s%s", (int)at, argv[i],
				     cwd, (int)(path_len - dot), value + dot,
				     value + path_len) >= PATH_MAX) {
			fprintf(stderr, "rspctl: cannot make %.*s an absolute path\n",
				(int)path_len, value);
			return -1;
		}
		argv[i] = a->buf[a->used++];
		return 0;
	}
	return 0;
}

/* A stopwatch's BINARY:SYMBOL whose BINARY is a relative path ("./prog:work"). */
static int absolute_binary(struct abs_args *a, int argc, char **argv, const char *spec)
{
	const char *colon = spec ? strrchr(spec, ':') : NULL;

	if (!colon || spec[0] == '/' || !memchr(spec, '/', (size_t)(colon - spec)))
		return 0; /* syscall:NAME, SYS:EVENT, a soname or an absolute path */
	return absolute_arg(a, argc, argv, spec, (size_t)(colon - spec));
}

static int absolute_paths(const struct rsp_request *req, int argc, char **argv, struct abs_args *a)
{
	struct rsp_sw_request sw;

	if (!rsp_request__stopwatch(req, &sw)) {
		if (sw.op != RSP_SW_ADD)
			return 0;
		return absolute_binary(a, argc, argv, sw.spec) ||
				       absolute_binary(a, argc, argv, sw.start) ||
				       absolute_binary(a, argc, argv, sw.end)
			       ? -1
			       : 0;
	}
	if (strcmp(argv[0], "dump"))
		return 0;
	for (int i = 1; i < argc; i++) {
		const char *file = NULL;

		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			file = argv[++i];
		else if (!strncmp(argv[i], "--output=", 9))
			file = argv[i] + 9;
		if (file && file[0] && file[0] != '/' &&
		    absolute_arg(a, argc, argv, file, strlen(file)))
			return -1;
	}
	return 0;
}

/* A query for rspd: checked here first; one with a local part is finished here. */
static int run_query(struct env *env, int argc, char **argv, struct abs_args *abs)
{
	struct rsp_buf body = RSP_BUF_INIT;
	struct rsp_request req;
	int ret;

	if (check_query(argc, argv, &req))
		return 2;
	if (absolute_paths(&req, argc, argv, abs)) {
		rsp_request__exit(&req);
		return 2;
	}
	if (rsp_request__is_local(&req)) {
		ret = ask_local(env, &req, argc, argv);
	} else {
		ret = ask(env, argc, (const char *const *)argv, &body);
		if (!ret)
			ret = deliver(&req, body.data, body.len);
	}
	rsp_request__exit(&req);
	rsp_buf__exit(&body);
	return ret;
}

static void set_timeout(struct env *env, const char *v)
{
	if (rsp_parse__duration(v, &env->timeout_ns)) {
		fprintf(stderr,
			"rspctl: --timeout wants a duration such as 30s or 5m (0: no limit), not "
			"'%s'\n",
			v);
		exit(2);
	}
	env->timeout_arg = v;
}

/* Global options come before the command; returns the command's index. */
static int parse_global(struct env *env, int argc, char **argv)
{
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("rspctl %s\n", RSP_VERSION);
			exit(0);
		} else if (!strcmp(a, "-s") || !strcmp(a, "--socket")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "rspctl: %s needs a path\n", a);
				exit(2);
			}
			env->socket = argv[++i];
		} else if (!strncmp(a, "--socket=", 9)) {
			env->socket = a + 9;
		} else if (!strcmp(a, "-t") || !strcmp(a, "--timeout")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "rspctl: %s needs a duration, e.g. 30s\n", a);
				exit(2);
			}
			set_timeout(env, argv[++i]);
		} else if (!strncmp(a, "--timeout=", 10)) {
			set_timeout(env, a + 10);
		} else {
			fprintf(stderr, "rspctl: unknown option '%s'\n\n", a);
			usage(stderr);
			exit(2);
		}
		i++;
	}
	return i;
}

int main(int argc, char **argv)
{
	struct env env = {.socket = DEFAULT_SOCKET};
	static struct abs_args abs;
	int cmd;

	set_timeout(&env, DEFAULT_TIMEOUT);
	cmd = parse_global(&env, argc, argv);

	if (cmd >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[cmd], "help"))
		return help(cmd + 1 < argc ? argv[cmd + 1] : NULL);
	if (!strcmp(argv[cmd], "analyze"))
		return analyze(argc - cmd, argv + cmd);
	if (!strcmp(argv[cmd], "merge"))
		return merge(argc - cmd, argv + cmd);
	if (!strcmp(argv[cmd], "report")) {
		struct report_asker a = {report_ask_live, &env, env.socket};

		return report__main(argc - cmd, argv + cmd, &a);
	}
	return run_query(&env, argc - cmd, argv + cmd, &abs);
}
