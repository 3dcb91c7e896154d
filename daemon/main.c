// SPDX-License-Identifier: GPL-2.0
/*
 * rspd: opens the perf rings, drains them into the window, serves queries.
 *
 * Threads: the main thread is the capture loop (epoll over the ring fds, a
 * signalfd and a timerfd); the control socket has its own thread
 * (server.c). Signal handling is a signalfd read by the capture loop: no
 * code runs in signal context.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <traceevent/event-parse.h>
#include <rsp/parse.h>
#include "log.h"
#include "rspd.h"

static const char usage_text[] =
	"usage: rspd [OPTIONS]\n"
	"\n"
	"The rsp daemon: records scheduler, block, irq and timer events from\n"
	"per-CPU perf rings into a bounded in-memory window; rspctl queries it.\n"
	"\n"
	"  -f, --foreground         stay in the foreground, log to stderr\n"
	"  -s, --socket PATH        control socket (default " RSPD_DEFAULT_SOCKET ")\n"
	"      --window SIZE        window budget, e.g. 64M (default 64M)\n"
	"      --chunk-size SIZE    window chunk size (default: derived)\n"
	"      --ring-pages N       data pages per CPU ring, a power of two (256)\n"
	"      --wakeup-percent P   wake the drain when a ring is P%% full (25)\n"
	"      --flush-interval D   drain every ring at least this often (100ms)\n"
	"      --freq HZ            cpu-clock sampling frequency, 0 = off (99)\n"
	"      --stacks POLICY      callchains on switches: all, sleeps,\n"
	"                           sampled:N (one switch in N) or none (sleeps)\n"
	"      --callchain WHAT     kernel+user, kernel or user (kernel+user)\n"
	"      --no-sample-stacks   no callchains on cpu-clock samples\n"
	"      --max-stack N        frames per callchain (64)\n"
	"      --families LIST      families to record, e.g. sched,block or all\n"
	"                           (sched,block,irq,timer,sample,sideband)\n"
	"      --log-level LEVEL    error, warning, info or debug (info)\n"
	"      --no-hist            keep no latency histograms (rspctl hist)\n"
	"      --hist-resolution R  1 (log2 buckets) or 2 (half octaves) (1)\n"
	"      --hist-profiles N    process/thread profiles kept; the least\n"
	"                           recently updated go to 'other' (4096)\n"
	"      --hist-slice D       length of a time slice (1s)\n"
	"      --hist-slices N      time slices kept (300)\n"
	"      --hist-io-timeout D  a block request still without a completion\n"
	"                           after D counts as unobserved (10s)\n"
	"  -h, --help               this text\n"
	"  -V, --version            print the version\n"
	"\n"
	"EXAMPLES\n"
	"  rspd --foreground\n"
	"  rspd --foreground --socket /tmp/rspd.sock --window 256M --stacks all\n";

enum {
	OPT_WINDOW = 256,
	OPT_CHUNK,
	OPT_RING_PAGES,
	OPT_WAKEUP,
	OPT_FLUSH,
	OPT_FREQ,
	OPT_STACKS,
	OPT_CALLCHAIN,
	OPT_NO_SAMPLE_STACKS,
	OPT_MAX_STACK,
	OPT_FAMILIES,
	OPT_LOG_LEVEL,
	OPT_NO_HIST,
	OPT_HIST_RESOLUTION,
	OPT_HIST_PROFILES,
	OPT_HIST_SLICE,
	OPT_HIST_SLICES,
	OPT_HIST_IO_TIMEOUT,
};

static const struct option long_opts[] = {
	{"foreground", no_argument, NULL, 'f'},
	{"socket", required_argument, NULL, 's'},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"chunk-size", required_argument, NULL, OPT_CHUNK},
	{"ring-pages", required_argument, NULL, OPT_RING_PAGES},
	{"wakeup-percent", required_argument, NULL, OPT_WAKEUP},
	{"flush-interval", required_argument, NULL, OPT_FLUSH},
	{"freq", required_argument, NULL, OPT_FREQ},
	{"stacks", required_argument, NULL, OPT_STACKS},
	{"callchain", required_argument, NULL, OPT_CALLCHAIN},
	{"no-sample-stacks", no_argument, NULL, OPT_NO_SAMPLE_STACKS},
	{"max-stack", required_argument, NULL, OPT_MAX_STACK},
	{"families", required_argument, NULL, OPT_FAMILIES},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{"no-hist", no_argument, NULL, OPT_NO_HIST},
	{"hist-resolution", required_argument, NULL, OPT_HIST_RESOLUTION},
	{"hist-profiles", required_argument, NULL, OPT_HIST_PROFILES},
	{"hist-slice", required_argument, NULL, OPT_HIST_SLICE},
	{"hist-slices", required_argument, NULL, OPT_HIST_SLICES},
	{"hist-io-timeout", required_argument, NULL, OPT_HIST_IO_TIMEOUT},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void config_init(struct rspd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", RSPD_DEFAULT_SOCKET);
	c->window_budget = 64ull << 20;
	c->flush_interval_ns = 100000000ull;
	c->log_level = RSP_LOG_INFO;
	rsp_capture_opts__init(&c->capture);
	c->hist_on = true;
	rsp_hist_config__init(&c->hist);
	c->hist_io_timeout_ns = 10000000000ull;
}

static int bad(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "rspd: %s: invalid value '%s'; %s\n", opt, val, want);
	return -1;
}

static int parse_number(const char *opt, const char *v, uint64_t lo, uint64_t hi,
			unsigned *out)
{
	uint64_t n;
	char want[64];

	if (rsp_parse__u64(v, lo, hi, &n)) {
		snprintf(want, sizeof(want), "want an integer in %llu..%llu",
			 (unsigned long long)lo, (unsigned long long)hi);
		return bad(opt, v, want);
	}
	*out = (unsigned)n;
	return 0;
}

static int set_callchain(struct rsp_capture_opts *o, const char *v)
{
	o->callchain_kernel = !strcmp(v, "kernel+user") || !strcmp(v, "kernel");
	o->callchain_user = !strcmp(v, "kernel+user") || !strcmp(v, "user");
	if (!o->callchain_kernel && !o->callchain_user)
		return bad("--callchain", v, "want kernel+user, kernel or user");
	return 0;
}

static int set_log_level(struct rspd_config *c, const char *v)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};

	for (int i = 0; i < 4; i++) {
		if (!strcmp(v, names[i])) {
			c->log_level = (enum rsp_log_level)i;
			return 0;
		}
	}
	return bad("--log-level", v, "want error, warning, info or debug");
}

/* The latency histogram options (--no-hist, --hist-*). */
static int parse_hist_opt(struct rspd_config *c, int opt, const char *v)
{
	switch (opt) {
	case OPT_NO_HIST:
		c->hist_on = false;
		return 0;
	case OPT_HIST_RESOLUTION:
		return parse_number("--hist-resolution", v, 1, 2, &c->hist.resolution);
	case OPT_HIST_PROFILES:
		return parse_number("--hist-profiles", v, 16, 1u << 20, &c->hist.max_profiles);
	case OPT_HIST_SLICE:
		if (rsp_parse__duration(v, &c->hist.slice_ns) || c->hist.slice_ns < 10000000 ||
		    c->hist.slice_ns > 3600000000000ull)
			return bad("--hist-slice", v, "want 10ms..1h, e.g. 1s");
		return 0;
	case OPT_HIST_SLICES:
		return parse_number("--hist-slices", v, 1, 100000, &c->hist.nr_slices);
	case OPT_HIST_IO_TIMEOUT:
		if (rsp_parse__duration(v, &c->hist_io_timeout_ns) ||
		    c->hist_io_timeout_ns < 100000000 || c->hist_io_timeout_ns > 3600000000000ull)
			return bad("--hist-io-timeout", v, "want 100ms..1h, e.g. 10s");
		return 0;
	default:
		return -1;
	}
}

static int parse_opt(struct rspd_config *c, int opt, const char *v)
{
	struct rsp_capture_opts *o = &c->capture;
	char err[256];

	switch (opt) {
	case 'f':
		c->foreground = true;
		return 0;
	case 's':
		snprintf(c->socket_path, sizeof(c->socket_path), "%s", v);
		return 0;
	case OPT_WINDOW:
		if (rsp_parse__size(v, &c->window_budget) || c->window_budget < (1u << 20))
			return bad("--window", v, "want a size of at least 1M, e.g. 64M");
		return 0;
	case OPT_CHUNK:
		if (rsp_parse__size(v, &c->chunk_size) || c->chunk_size < 4096 ||
		    c->chunk_size > (16u << 20) || c->chunk_size % 8)
			return bad("--chunk-size", v, "want 4K..16M, a multiple of 8");
		return 0;
	case OPT_RING_PAGES:
		if (parse_number("--ring-pages", v, 1, 1u << 20, &o->ring_pages))
			return -1;
		if (o->ring_pages & (o->ring_pages - 1))
			return bad("--ring-pages", v, "want a power of two, e.g. 64, 256, 1024");
		return 0;
	case OPT_WAKEUP:
		return parse_number("--wakeup-percent", v, 1, 90, &o->wakeup_percent);
	case OPT_FLUSH:
		if (rsp_parse__duration(v, &c->flush_interval_ns) ||
		    c->flush_interval_ns < 1000000 || c->flush_interval_ns > 10000000000ull)
			return bad("--flush-interval", v, "want 1ms..10s, e.g. 100ms");
		return 0;
	case OPT_FREQ:
		return parse_number("--freq", v, 0, 100000, &o->sample_freq);
	case OPT_STACKS:
		if (rsp_capture_opts__set_stacks(o, v))
			return bad("--stacks", v, "want all, sleeps, sampled:N (N >= 2) or none");
		return 0;
	case OPT_CALLCHAIN:
		return set_callchain(o, v);
	case OPT_NO_SAMPLE_STACKS:
		o->sample_stacks = false;
		return 0;
	case OPT_MAX_STACK:
		return parse_number("--max-stack", v, 1, 1024, &o->max_stack);
	case OPT_FAMILIES:
		if (rsp_capture_opts__set_families(o, v, err, sizeof(err)))
			return bad("--families", v, err);
		return 0;
	case OPT_LOG_LEVEL:
		return set_log_level(c, v);
	default:
		return parse_hist_opt(c, opt, v);
	}
}

/* Return: 0 to run, 1 to exit successfully (--help), -1 on a usage error. */
static int parse_args(struct rspd_config *c, int argc, char **argv)
{
	int opt;

	config_init(c);
	while ((opt = getopt_long(argc, argv, "fs:hV", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (opt == 'V') {
			printf("rspd %s\n", RSP_VERSION);
			return 1;
		}
		if (opt == '?' || parse_opt(c, opt, optarg)) {
			fprintf(stderr, "Try 'rspd --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rspd: unexpected argument '%s'\nTry 'rspd --help'.\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* Classic daemon: detach unless told not to or run by a supervisor. */
static int detach(const struct rspd_config *c)
{
	pid_t pid;

	if (c->foreground || getenv("NOTIFY_SOCKET") || getenv("JOURNAL_STREAM"))
		return 0;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0 || chdir("/"))
		return -1;
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
		return -1;
	return 0;
}

static int setup(struct rspd *d, char *err, size_t errlen)
{
	struct rsp_window_config wc;
	struct tep_handle *tep = rsp_tracefs__load(err, errlen);
	int ret;

	if (!tep)
		return -1;
	ret = rsp_evset__open(&d->es, &d->cfg.capture, tep, err, errlen);
	tep_free(tep);
	if (ret)
		return ret;
	wc.budget = d->cfg.window_budget;
	wc.nr_cpus = d->es.max_cpu;
	wc.chunk_size = d->cfg.chunk_size;
	d->window = rsp_window__new(&wc);
	if (!d->window) {
		snprintf(err, errlen,
			 "cannot create a %llu-byte window for %u CPUs — raise --window "
			 "(it must hold two chunks per CPU)",
			 (unsigned long long)wc.budget, wc.nr_cpus);
		return -EINVAL;
	}
	if (rsp_drain__init(&d->drain, &d->es, d->window)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return rspd_analysis__start(d, err, errlen);
}

static void teardown(struct rspd *d)
{
	rspd_server__stop(d);
	rspd_analysis__stop(d);
	rsp_evset__close(&d->es);
	rsp_drain__exit(&d->drain);
	rsp_window__delete(d->window);
}

static int make_fds(struct rspd *d, int *sfd, int *tfd)
{
	sigset_t set;
	struct itimerspec its = {0};

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGPIPE);
	/* Blocked before the control thread starts, so it inherits the mask. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	*sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	*tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (*sfd < 0 || *tfd < 0)
		return -1;
	its.it_interval.tv_sec = (time_t)(d->cfg.flush_interval_ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(d->cfg.flush_interval_ns % 1000000000ull);
	its.it_value = its.it_interval;
	return timerfd_settime(*tfd, 0, &its, NULL);
}

#define KEY_SIGNAL 0xfffffff0u
#define KEY_TIMER 0xfffffff1u

static void on_signal(struct rspd *d, int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGINT:
		case SIGTERM:
			rspd_log(RSP_LOG_INFO, "signal %d: stopping", (int)si.ssi_signo);
			d->stop = 1;
			break;
		case SIGHUP:
			rspd_log(RSP_LOG_WARN,
				 "SIGHUP: this rspd has no configuration file to reload; "
				 "restart it to change options");
			break;
		case SIGUSR1:
			rspd_log(RSP_LOG_WARN, "SIGUSR1: flight-recorder dumps are not "
					       "available in this version of rspd");
			break;
		default:
			break;
		}
	}
}

static void on_timer(struct rspd *d, int tfd, uint64_t *last_rates)
{
	uint64_t ticks, now;

	if (read(tfd, &ticks, sizeof(ticks)) < 0)
		return;
	now = rspd_now_ns();
	rsp_drain__all(&d->drain);
	/* Every record stamped before @now is in the window: feed the histograms. */
	rspd_analysis__publish(d, now);
	now = rspd_now_ns();
	if (now - *last_rates >= 1000000000ull) {
		rsp_drain__check(&d->drain);
		rsp_drain__rates(&d->drain, (double)(now - *last_rates) / 1e9);
		*last_rates = now;
	}
}

static int add_fd(int epfd, int fd, uint32_t key)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = key};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int capture_loop(struct rspd *d, int sfd, int tfd)
{
	struct epoll_event evs[64];
	uint64_t last_rates = rspd_now_ns();
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0 || add_fd(epfd, sfd, KEY_SIGNAL) || add_fd(epfd, tfd, KEY_TIMER))
		return -1;
	for (int i = 0; i < d->es.nr_rings; i++)
		if (add_fd(epfd, d->es.rings[i].fd, (uint32_t)i))
			return -1;
	while (!d->stop) {
		int n = epoll_wait(epfd, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			uint32_t key = evs[i].data.u32;

			if (key == KEY_SIGNAL)
				on_signal(d, sfd);
			else if (key == KEY_TIMER)
				on_timer(d, tfd, &last_rates);
			else if (evs[i].events & EPOLLIN)
				rsp_drain__ring(&d->drain, (int)key);
			else if (evs[i].events & (EPOLLHUP | EPOLLERR))
				epoll_ctl(epfd, EPOLL_CTL_DEL, d->es.rings[key].fd, NULL);
		}
		if (n < 0 && errno != EINTR) {
			rspd_log_errno(RSP_LOG_ERR, "epoll_wait");
			break;
		}
	}
	close(epfd);
	return 0;
}

static void log_started(struct rspd *d)
{
	char buf[32];
	int open = 0, wanted = 0;

	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		wanted += d->es.status[ev].wanted;
		open += d->es.status[ev].open;
		if (d->es.status[ev].wanted && !d->es.status[ev].open)
			rspd_log(RSP_LOG_WARN, "%s: %s", rsp_catalogue__event(ev)->name,
				 d->es.status[ev].problem);
	}
	rspd_log(RSP_LOG_INFO,
		 "capturing %d/%d events on %d CPUs (stacks %s), window %llu MiB, socket %s",
		 open, wanted, d->es.nr_rings,
		 rsp_capture_opts__stacks_name(&d->cfg.capture, buf, sizeof(buf)),
		 (unsigned long long)(d->cfg.window_budget >> 20), d->cfg.socket_path);
}

int main(int argc, char **argv)
{
	static struct rspd d;
	char err[512] = "";
	int sfd = -1, tfd = -1, ret;

	ret = parse_args(&d.cfg, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;
	rspd_log_init(d.cfg.log_level);
	if (detach(&d.cfg)) {
		rspd_log_errno(RSP_LOG_ERR, "cannot detach from the terminal");
		return 1;
	}
	d.start_ns = rspd_now_ns();
	if (make_fds(&d, &sfd, &tfd)) {
		rspd_log_errno(RSP_LOG_ERR, "cannot set up signals and timers");
		return 1;
	}
	if (setup(&d, err, sizeof(err)) || rspd_server__start(&d, err, sizeof(err))) {
		rspd_log(RSP_LOG_ERR, "%s", err);
		teardown(&d);
		return 1;
	}
	rsp_evset__enable(&d.es);
	log_started(&d);
	ret = capture_loop(&d, sfd, tfd);
	rsp_evset__disable(&d.es);
	rsp_drain__all(&d.drain);
	teardown(&d);
	close(sfd);
	close(tfd);
	rspd_log(RSP_LOG_INFO, "stopped");
	return ret ? 1 : 0;
}
