// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-null-consumer: open exactly rspd's event set (same attrs, same rings,
 * same wakeup watermark) and only advance each ring's tail when woken. It
 * measures what the kernel side of capture costs, so that rspd's overhead
 * can be compared to it: rspd should cost barely more.
 *
 * With --capture bpf, rspd's BPF programs write into their BPF rings, which
 * it consumes without looking at a record (libbpf's consumer, a callback
 * that returns).
 *
 * Runs until SIGINT/SIGTERM, then prints one JSON line with its own CPU time.
 */
#include <errno.h>
#include <stdlib.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <perf/mmap.h>
#include <traceevent/event-parse.h>
#ifdef RSP_HAVE_BPF
#include "bpfcap.h"
#endif
#include "evset.h"
#include "log.h"
#include "rsp_tracefs.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse(struct rsp_capture_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"stacks", required_argument, NULL, 's'},
		{"freq", required_argument, NULL, 'F'},
		{"ring-pages", required_argument, NULL, 'r'},
		{"families", required_argument, NULL, 'f'},
		{"no-sample-stacks", no_argument, NULL, 'n'},
		{"capture", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0},
	};
	char err[256];
	int c;

	rsp_capture_opts__init(o);
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's' && !rsp_capture_opts__set_stacks(o, optarg))
			continue;
		if (c == 'F') {
			o->sample_freq = (unsigned)atoi(optarg);
			continue;
		}
		if (c == 'r') {
			o->ring_pages = (unsigned)atoi(optarg);
			continue;
		}
		if (c == 'f' && !rsp_capture_opts__set_families(o, optarg, err, sizeof(err)))
			continue;
		if (c == 'n') {
			o->sample_stacks = false;
			continue;
		}
		if (c == 'c' && !rsp_capture_opts__set_backend(o, optarg))
			continue;
		fprintf(stderr, "usage: rsp-null-consumer [--stacks P] [--freq HZ] "
				"[--ring-pages N] [--families LIST] [--no-sample-stacks] "
				"[--capture perf|bpf|auto]\n");
		return -1;
	}
	return 0;
}

#ifdef RSP_HAVE_BPF
static int ignore(void *ctx, unsigned cpu, const void *data, size_t size)
{
	(void)ctx, (void)cpu, (void)data, (void)size;
	return 0;
}
#endif

/* The BPF rings, if any: every record consumed, none looked at. */
static void skip_bpf(struct rsp_evset *es)
{
#ifdef RSP_HAVE_BPF
	if (es->bpf)
		rsp_bpfcap__consume(es->bpf, ignore, NULL);
#else
	(void)es;
#endif
}

/* Skip everything the ring holds without reading a record. */
static void skip_ring(struct perf_mmap *map)
{
	if (perf_mmap__read_init(map) < 0)
		return;
	perf_mmap__read_done(map); /* prev = head */
	perf_mmap__consume(map);   /* tail = prev */
}

int main(int argc, char **argv)
{
	struct rsp_capture_opts o;
	struct rsp_evset es;
	struct tep_handle *tep;
	struct epoll_event evs[64];
	struct rusage ru;
	char err[512];
	int epfd;

	if (parse(&o, argc, argv))
		return 2;
	rspd_log__init(RSP_LOG_WARN);
	tep = rsp_tracefs__load(err, sizeof(err));
	if (!tep || rsp_evset__open(&es, &o, tep, err, sizeof(err))) {
		fprintf(stderr, "rsp-null-consumer: %s\n", err);
		return 1;
	}
	tep_free(tep);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	epfd = epoll_create1(0);
	for (int i = 0; i < es.nr_rings; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};

		epoll_ctl(epfd, EPOLL_CTL_ADD, es.rings[i].fd, &ev);
	}
#ifdef RSP_HAVE_BPF
	if (es.bpf) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};

		epoll_ctl(epfd, EPOLL_CTL_ADD, rsp_bpfcap__poll_fd(es.bpf), &ev);
	}
#endif
	if (rsp_evset__enable(&es, err, sizeof(err))) {
		fprintf(stderr, "rsp-null-consumer: %s\n", err);
		rsp_evset__close(&es);
		return 1;
	}
	fprintf(stderr, "rsp-null-consumer: ready (%s)\n", es.backend);
	while (!stop) {
		int n = epoll_wait(epfd, evs, 64, 100);

		for (int i = 0; i < n; i++)
			if (evs[i].data.u32 != UINT32_MAX)
				skip_ring(es.rings[evs[i].data.u32].map);
		skip_bpf(&es); /* woken, or every 100 ms as rspd's flush */
	}
	rsp_evset__disable(&es);
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"cpu_seconds\": %.3f}\n", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
						    (double)ru.ru_stime.tv_sec +
						    ru.ru_stime.tv_usec / 1e6);
	rsp_evset__close(&es);
	close(epfd);
	return 0;
}
