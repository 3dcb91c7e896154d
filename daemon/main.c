// SPDX-License-Identifier: GPL-2.0
/*
 * rspd: opens the perf rings, drains them into the window, serves queries.
 *
 * Threads: the main thread is the capture loop (epoll over the ring fds, a
 * signalfd and two timerfds); the control socket has its own threads
 * (server.c). Signal handling is a signalfd read by the capture loop: no
 * code runs in signal context. Options: config.c; systemd: notify.c;
 * dumps (SIGUSR1, rspctl dump, --dump-on-exit): dump.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <traceevent/event-parse.h>
#include <rsp/mapped.h>
#include "histthread.h"
#include "wzip.h"
#ifdef RSP_HAVE_BPF
#include "bpfcap.h"
#endif
#include "clock.h"
#include "config.h"
#include "dump.h"
#include "livemodel.h"
#include "log.h"
#include "membudget.h"
#include "notify.h"
#include "reload.h"
#ifdef RSP_HAVE_BPF
#include "stopwatch.h"
#endif
#include "rspd.h"
#include "server.h"
#include "syscalls.h"
#include "testhook.h"
#include "trigger.h"
#include "metrics.h"
#include "rsp_tracefs.h"
#include "tracepoints/bpf_records.h"

/* The capture loop's own fds. */
struct loop_fds {
	int sfd;		    /* signalfd: SIGINT, SIGTERM, SIGHUP, SIGUSR1 */
	int tfd;		    /* timerfd: drain every ring (--flush-interval) */
	int hfd;		    /* timerfd: housekeeping (systemd status, watchdog) */
	bool watchdog;		    /* the unit has WatchdogSec */
	struct rspd_reload *reload; /* SIGHUP reads the file on its own thread */
};

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

/* Kernel symbols name sleep reasons and stacks; without them queries still work. */
static void load_ksyms(struct rspd *d)
{
	struct rsp_buf err = RSP_BUF_INIT;

	d->ksyms = rsp_ksyms__new_from_file("/proc/kallsyms", &err);
	if (!d->ksyms)
		rspd_log__write(RSP_LOG_WARN, "%s",
				err.data ? err.data : "cannot load kernel symbols");
	rsp_buf__exit(&err);
}

/* A sample that copies the user stack must fit in one window chunk. */
static int check_chunks(struct rspd *d, char *err, size_t errlen)
{
	const struct rsp_capture_opts *o = &d->cfg.capture;
	struct rsp_window_stats ws;
	bool dwarf = false;
	size_t need;

	for (int ev = 0; ev < RSP_EV__NR; ev++)
		dwarf = dwarf || (o->dwarf[ev] && d->es.status[ev].open);
	if (!dwarf || !o->dwarf_stack)
		return 0;
	need = rsp_capture_opts__dwarf_bytes(o);
	rsp_window__stats(d->window, &ws);
	if (ws.chunk_size >= need)
		return 0;
	snprintf(err, errlen,
		 "the window's chunks (%zu bytes) cannot hold a sample with a %u-byte user "
		 "stack — raise --window or --chunk-size, lower --dwarf-stack, or turn it off "
		 "with --dwarf none",
		 ws.chunk_size, o->dwarf_stack);
	return -1;
}

/*
 * Sockets older than rspd: /proc/net names them with their addresses only
 * where the kernel shows pointers to root (kptr_restrict 1); elsewhere their
 * 4-tuples come from the TCP receive tracepoint as they are used.
 */
static void load_sockets(struct rspd *d)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_socktab_load res;

	d->socks = rsp_socktab__new();
	if (!d->socks || rsp_socktab__load_proc(d->socks, "/proc", &res, &err)) {
		rspd_log__write(RSP_LOG_WARN, "socket table: %s",
				err.data ? err.data : "out of memory");
	} else if (res.hidden) {
		rspd_log__write(
			RSP_LOG_INFO,
			"socket table: %u sockets from /proc/net; the kernel hides the address "
			"of %u (kptr_restrict): their TCP 4-tuples come as they receive",
			res.sockets, res.hidden);
	} else {
		rspd_log__write(RSP_LOG_INFO, "socket table: %u sockets from /proc/net",
				res.sockets);
	}
	rsp_buf__exit(&err);
}

static int setup(struct rspd *d, int argc, char **argv, char *err, size_t errlen)
{
	struct rsp_window_config wc = {0};
	struct tep_handle *tep = rsp_tracefs__load(err, errlen);
	int ret;

	if (!tep)
		return -1;
	rsp_tracefs__remove_stale_probes();
	load_ksyms(d);
	/* the BPF backend sends only the timer starts the timeline reads */
	d->cfg.capture.hrtimer_wakeup = rsp_ksyms__addr(d->ksyms, "hrtimer_wakeup");
	d->cfg.capture.bpf_refuse = rspd_testhook__bpf_refuse();
	load_sockets(d);
	ret = rsp_evset__open(&d->es, &d->cfg.capture, tep, err, errlen);
	tep_free(tep);
	if (ret)
		return ret;
	rspd_budget__init(&d->budget, d->cfg.overhead_budget_pct, d->es.bpf, rspd_clock__now_ns());
	wc.budget = d->cfg.window_budget;
	wc.nr_cpus = d->es.max_cpu;
	wc.chunk_size = d->cfg.chunk_size;
	wc.streams_per_cpu = d->es.bpf ? 2 : 1; /* the perf rings, and the BPF rings */
	/* compact BPF records carry their time: stored without the window's prefix */
	wc.time_offset[1] = d->es.bpf ? offsetof(struct rsp_brec_hdr, time) : 0;
	/* the names and stacks a query learns before its range: kept raw when compressed */
	wc.side_bpf_kinds = 1u << RSP_BREC_COMM | 1u << RSP_BREC_STACK;
	d->window = rsp_window__new(&wc);
	if (!d->window) {
		snprintf(err, errlen,
			 "cannot create a %llu-byte window for %u CPUs — raise --window "
			 "(it must hold two chunks per CPU)",
			 (unsigned long long)wc.budget, wc.nr_cpus);
		return -EINVAL;
	}
	if (check_chunks(d, err, errlen))
		return -EINVAL;
	if (rsp_drain__init(&d->drain, &d->es, d->window)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = rspd_livemodel__init(d, err, errlen);
	if (!ret)
		ret = rspd_dumpmeta__init(&d->meta, &d->es, argc, argv, err, errlen);
	/* Before the threads that read d->syscalls (analysis, dumper): set once, then read. */
	if (!ret)
		rspd_syscalls__open(d); /* never fatal: off with a sentence in status */
	if (!ret)
		ret = rspd_dumper__start(d, err, errlen);
	if (!ret)
		ret = rspd_histthread__start(d, err, errlen);
	if (!ret) /* after the analysis thread: it reads how far that one has read */
		ret = rspd_wzip__start(d, err, errlen);
	if (!ret) /* after the dump and analysis threads: it hands work to them */
		ret = rspd_triggers__start(d, err, errlen);
	if (!ret) /* the syscall family's and the stopwatches' programs count too */
		rspd_budget__watch(&d->budget, d);
	return ret;
}

static void teardown(struct rspd *d)
{
	/* The metrics read the server's counters: before it. */
	rspd_metrics__stop(d);
	/* The server first: its query threads may still hand dumps over. */
	rspd_server__stop(d);
	/* Then the trigger thread: it queues dumps and runs snapshots. */
	rspd_triggers__stop(d);
	/* Then the dumper (it runs every queued dump): they read the profiles and syscalls. */
	rspd_dumper__stop(d);
	rspd_wzip__stop(d); /* before the analysis thread: it asks that one */
	rspd_histthread__stop(d);
	rspd_syscalls__close(d);
	rspd_dumpmeta__exit(&d->meta);
	rspd_livemodel__stop(d);
	rspd_budget__exit(&d->budget);
	rsp_evset__close(&d->es);
	rsp_drain__exit(&d->drain);
	rsp_window__delete(d->window);
	rsp_ksyms__delete(d->ksyms);
	d->ksyms = NULL;
	rsp_socktab__delete(d->socks);
	d->socks = NULL;
#ifdef RSP_HAVE_BPF
	rspd_stopwatches__delete(d->stopwatches); /* after the server: no query uses them */
	d->stopwatches = NULL;
#endif
	rspd_triggers__delete(d); /* last: the threads above report to it */
}

static int set_interval(int tfd, uint64_t ns)
{
	struct itimerspec its = {0};

	its.it_interval.tv_sec = (time_t)(ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(ns % 1000000000ull);
	its.it_value = its.it_interval;
	return timerfd_settime(tfd, 0, &its, NULL);
}

/*
 * The housekeeping tick: systemd's STATUS= once a second, WATCHDOG=1 at
 * half the unit's WatchdogSec (or faster). It runs on the capture thread,
 * so a capture loop that hangs stops the pings and systemd restarts rspd.
 */
static uint64_t house_interval(void)
{
	uint64_t wd_ns = rspd_notify__watchdog_usec() * 1000ull;

	return wd_ns && wd_ns / 2 < 1000000000ull ? wd_ns / 2 : 1000000000ull;
}

static int make_fds(struct rspd *d, struct loop_fds *f)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGPIPE);
	/* Blocked before the control thread starts, so it inherits the mask. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	f->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	f->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	f->hfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (f->sfd < 0 || f->tfd < 0 || f->hfd < 0)
		return -1;
	f->watchdog = rspd_notify__watchdog_usec() != 0;
	f->reload = rspd_reload__new();
	if (!f->reload || set_interval(f->hfd, house_interval()))
		return -1;
	return set_interval(f->tfd, d->cfg.flush_interval_ns);
}

static void close_fds(struct loop_fds *f)
{
	rspd_reload__delete(f->reload);
	f->reload = NULL;
	if (f->sfd >= 0)
		close(f->sfd);
	if (f->tfd >= 0)
		close(f->tfd);
	if (f->hfd >= 0)
		close(f->hfd);
}

#define KEY_SIGNAL 0xfffffff0u
#define KEY_TIMER  0xfffffff1u
#define KEY_HOUSE  0xfffffff2u
#define KEY_BPF	   0xfffffff3u
#define KEY_RELOAD 0xfffffff4u

/* A reload still reading its file after this is logged (a hung file system). */
#define RELOAD_OVERDUE_NS 10000000000ull

/*
 * SIGHUP: read the file again, on the reload thread (reload.c): the file
 * may be on a file system that does not answer, and capture and SIGTERM
 * must not wait for it. finish_reload() applies what it read.
 */
static void request_reload(struct loop_fds *f)
{
	uint64_t busy_ns;

	rspd_notify__send("RELOADING=1");
	rspd_reload__request(f->reload, &busy_ns);
	if (busy_ns)
		rspd_log__write(RSP_LOG_WARN,
				"reload: the previous reload has been reading the file for %.1f s; "
				"the file is read again once it ends",
				(double)busy_ns / 1e9);
}

/*
 * A bad file changes nothing (the error, with FILE:LINE, goes to the log);
 * a good one applies the options that can change at run time and warns
 * about those that need a restart.
 */
static void finish_reload(struct rspd *d, struct loop_fds *f)
{
	char err[1024];
	int ret = rspd_reload__take(f->reload, &d->cfg, err, sizeof(err));

	if (!ret)
		return;
	if (ret < 0) {
		rspd_log__write(RSP_LOG_ERR, "reload: %s; keeping the configuration in force", err);
		rspd_notify__send("READY=1");
		return;
	}
	rspd_log__set_level(d->cfg.log_level);
	if (set_interval(f->tfd, d->cfg.flush_interval_ns))
		rspd_log__errno(RSP_LOG_WARN, "reload: cannot change the flush interval");
	rspd_server__configure(d);
	rspd_dumper__configure(d);
	rspd_log__write(RSP_LOG_INFO, "reloaded %s", d->cfg.config_path);
	rspd_notify__send("READY=1");
	rspd_notify__status(d);
}

/* SIGUSR1: a dump into the dump directory, written by the dump thread. */
static void on_usr1(struct rspd *d)
{
	struct rsp_dump_spec spec = {0};
	int err = rspd_dumper__submit(d, &spec, NULL, -1, 0);

	if (err)
		rspd_log__write(RSP_LOG_ERR, "SIGUSR1: no dump: %s",
				err == -EBUSY ? "too many dumps are already queued"
					      : strerror(-err));
	else
		rspd_log__write(RSP_LOG_INFO, "SIGUSR1: dumping the window into %s",
				d->cfg.dump.dir);
}

static void on_signal(struct rspd *d, struct loop_fds *f)
{
	struct signalfd_siginfo si;

	while (read(f->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGINT:
		case SIGTERM:
			rspd_log__write(RSP_LOG_INFO, "signal %d: stopping", (int)si.ssi_signo);
			d->stop = 1;
			break;
		case SIGHUP:
			request_reload(f);
			break;
		case SIGUSR1:
			on_usr1(d);
			break;
		default:
			break;
		}
	}
}

/*
 * A record's timestamp is taken a few microseconds before the kernel writes
 * it into the ring: records stamped more than this before a drain started
 * are in the window once it ends.
 */
#define DRAIN_SLACK_NS 5000000ull

/*
 * A start that records nothing must say so: the kernel took --ring-pages
 * 1048576, logged nothing, and its rings never delivered a record. Once,
 * SILENT_AFTER_NS after start: no record on any ring while the kernel
 * counted events, or while sched_switch is open (rspd's own capture thread
 * switches at least once a second), is an error in the log and in status.
 */
#define SILENT_AFTER_NS 5000000000ull

static void check_silent(struct rspd *d, uint64_t now)
{
	uint64_t records = 0, fired = 0;

	if (d->silent_checked || now - d->start_ns < SILENT_AFTER_NS)
		return;
	d->silent_checked = true;
	for (unsigned c = 0; c < d->es.max_cpu; c++)
		records += atomic_load_explicit(&d->drain.cpu[c].records, memory_order_relaxed);
	for (int i = 0; i < d->es.nr && i < RSP_EVSET_MAX; i++)
		fired += atomic_load_explicit(&d->drain.checked_fired[i], memory_order_relaxed);
	if (records || (!fired && !d->es.status[RSP_EV_sched_switch].open))
		return;
	atomic_store_explicit(&d->silent_ns, now - d->start_ns, memory_order_relaxed);
	rspd_log__write(RSP_LOG_ERR,
			"no record reached the rings in the %.1f s since start although %s: rspd "
			"records nothing — restart it, and if that does not help, with the "
			"default --ring-pages and --capture perf",
			(double)(now - d->start_ns) / 1e9,
			fired ? "the kernel counted events" : "sched_switch is open");
}

static void on_timer(struct rspd *d, int tfd, uint64_t *last_rates)
{
	uint64_t ticks, now, start = rspd_clock__now_ns();

	if (read(tfd, &ticks, sizeof(ticks)) < 0)
		return;
	rsp_drain__all(&d->drain);
	if (start > DRAIN_SLACK_NS)
		atomic_store_explicit(&d->drain.drained_to, start - DRAIN_SLACK_NS,
				      memory_order_release);
	/* Every record stamped before @start is in the window: feed the histograms. */
	rspd_histthread__publish(d, start);
	now = rspd_clock__now_ns();
	if (now - *last_rates >= 1000000000ull) {
		rsp_drain__check(&d->drain);
		check_silent(d, now);
		rsp_drain__rates(&d->drain, (double)(now - *last_rates) / 1e9);
		rsp_drain__refresh(&d->drain, now);
		*last_rates = now;
	}
	rspd_budget__tick(&d->budget, now); /* samples the BPF run time between seconds */
}

static void on_house(struct rspd *d, struct loop_fds *f, uint64_t *last_status)
{
	uint64_t ticks, now = rspd_clock__now_ns();

	if (read(f->hfd, &ticks, sizeof(ticks)) < 0)
		return;
	if (f->watchdog)
		rspd_notify__send("WATCHDOG=1");
	if (rspd_reload__overdue(f->reload, RELOAD_OVERDUE_NS))
		rspd_log__write(
			RSP_LOG_WARN,
			"reload: reading %s has taken more than %llu s (a file system that "
			"does not answer?); capture goes on with the configuration in force",
			d->cfg.config_path, RELOAD_OVERDUE_NS / 1000000000ull);
	if (now - *last_status >= 999000000ull) {
		rspd_notify__status(d);
		*last_status = now;
	}
}

static int add_fd(int epfd, int fd, uint32_t key)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = key};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int capture_loop(struct rspd *d, struct loop_fds *f)
{
	struct epoll_event evs[64];
	uint64_t last_rates = rspd_clock__now_ns(), last_status = 0;
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0 || add_fd(epfd, f->sfd, KEY_SIGNAL) || add_fd(epfd, f->tfd, KEY_TIMER) ||
	    add_fd(epfd, f->hfd, KEY_HOUSE) || add_fd(epfd, rspd_reload__fd(f->reload), KEY_RELOAD))
		return -1;
	for (int i = 0; i < d->es.nr_rings; i++)
		if (add_fd(epfd, d->es.rings[i].fd, (uint32_t)i))
			return -1;
#ifdef RSP_HAVE_BPF
	if (d->es.bpf && add_fd(epfd, rsp_bpfcap__poll_fd(d->es.bpf), KEY_BPF))
		return -1;
#endif
	while (!d->stop) {
		int n = epoll_wait(epfd, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			uint32_t key = evs[i].data.u32;

			if (key == KEY_SIGNAL)
				on_signal(d, f);
			else if (key == KEY_TIMER)
				on_timer(d, f->tfd, &last_rates);
			else if (key == KEY_HOUSE)
				on_house(d, f, &last_status);
			else if (key == KEY_RELOAD)
				finish_reload(d, f);
			else if (key == KEY_BPF)
				rsp_drain__bpf(&d->drain);
			else if (evs[i].events & EPOLLIN)
				rsp_drain__ring(&d->drain, (int)key);
			else if (evs[i].events & (EPOLLHUP | EPOLLERR))
				epoll_ctl(epfd, EPOLL_CTL_DEL, d->es.rings[key].fd, NULL);
		}
		if (n < 0 && errno != EINTR) {
			rspd_log__errno(RSP_LOG_ERR, "epoll_wait");
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
			rspd_log__write(RSP_LOG_WARN, "%s: %s", rsp_catalogue__event(ev)->name,
					d->es.status[ev].problem);
	}
	if (d->es.backend_note[0])
		rspd_log__write(RSP_LOG_WARN, "%s", d->es.backend_note);
	if (d->es.stacks_note[0])
		rspd_log__write(RSP_LOG_INFO, "%s", d->es.stacks_note);
	rspd_log__write(RSP_LOG_INFO,
			"capturing %d/%d events on %d CPUs with %s (stacks %s), window %llu MiB, "
			"socket %s",
			open, wanted, d->es.nr_rings, d->es.backend,
			rsp_capture_opts__stacks_name(&d->es.opts, buf, sizeof(buf)),
			(unsigned long long)(d->cfg.window_budget >> 20), d->cfg.socket_path);
}

/*
 * dump-on-exit: the last window, once nothing else writes to it: after
 * capture stopped and the rings were drained, with the control socket
 * closed, on this thread (the dump thread has finished its queue).
 */
static void dump_on_exit(struct rspd *d)
{
	struct rsp_dump_spec spec = {0};
	struct rsp_buf out = RSP_BUF_INIT;

	if (!d->cfg.dump.on_exit)
		return;
	rspd_metrics__stop(d);
	rspd_server__stop(d);
	rspd_triggers__stop(d);
	rspd_dumper__stop(d);
	rspd_dump__write(d, &d->cfg.dump, &spec, NULL, NULL, &out); /* logs its outcome */
	rsp_buf__exit(&out);
}

int main(int argc, char **argv)
{
	static struct rspd d;
	struct loop_fds f = {-1, -1, -1, false, NULL};
	char err[1024] = "";
	int ret;

	switch (rspd_config__load(&d.cfg, argc, argv, err, sizeof(err))) {
	case RSPD_CONFIG_RUN:
		break;
	case RSPD_CONFIG_EXIT:
		return 0;
	case RSPD_CONFIG_USAGE:
		return 2;
	case RSPD_CONFIG_BAD:
		fprintf(stderr, "rspd: %s\n", err);
		return 1;
	}
	rspd_log__init(d.cfg.log_level);
	/* the timeline's mapped segment vectors count in a query's memory too */
	rsp_mapped__set_hook(rspd_membudget__mapped);
	if (detach(&d.cfg)) {
		rspd_log__errno(RSP_LOG_ERR, "cannot detach from the terminal");
		return 1;
	}
	d.start_ns = rspd_clock__now_ns();
	if (make_fds(&d, &f)) {
		rspd_log__errno(RSP_LOG_ERR, "cannot set up signals and timers");
		close_fds(&f);
		return 1;
	}
#ifdef RSP_HAVE_BPF
	d.stopwatches = rspd_stopwatches__new(&d); /* NULL: add says rspd is out of memory */
#endif
	if (setup(&d, argc, argv, err, sizeof(err)) || rspd_server__start(&d, err, sizeof(err)) ||
	    rspd_metrics__start(&d, err, sizeof(err))) {
		rspd_log__write(RSP_LOG_ERR, "%s", err);
		teardown(&d);
		close_fds(&f);
		return 1;
	}
	/* After enabling: every process is then either in /proc or in the records. */
	if (rsp_evset__enable(&d.es, err, sizeof(err)) ||
	    rspd_livemodel__start(&d, err, sizeof(err))) {
		rspd_log__write(RSP_LOG_ERR, "%s", err);
		rsp_evset__disable(&d.es);
		teardown(&d);
		close_fds(&f);
		return 1;
	}
	log_started(&d);
	rspd_notify__send("READY=1");
	rspd_notify__status(&d);
	ret = capture_loop(&d, &f);
	rspd_notify__send("STOPPING=1");
	rsp_evset__disable(&d.es);
	rsp_drain__all(&d.drain);
	dump_on_exit(&d);
	teardown(&d);
	close_fds(&f);
	rspd_log__write(RSP_LOG_INFO, "stopped");
	return ret ? 1 : 0;
}
