// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-bench-sched-floor LEVEL: attaches the floor programs of
 * bpf/sched_floor.bpf.c at LEVEL (0 nothing, 1 the clock, 2 a 40-byte
 * record into a BPF ring buffer) to sched_switch and sched_waking, drains
 * the ring every 50 ms (records read and dropped, as a consumer that polls
 * without wakeups), says "ready" on stderr, and keeps them attached until
 * SIGINT or SIGTERM. bench/bpf_floor.py measures rsp's switch and waking
 * programs beside these.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "sched_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int drop(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

int main(int argc, char **argv)
{
	struct rsp_sched_floor *skel;
	struct ring_buffer *rb = NULL;
	int level = argc == 2 ? atoi(argv[1]) : -1;

	if (level < 0 || level > 2) {
		fprintf(stderr, "usage: rsp-bench-sched-floor LEVEL (0: nothing, 1: the clock, "
				"2: a record)\n");
		return 2;
	}
	skel = rsp_sched_floor__open();
	if (!skel) {
		fprintf(stderr, "rsp-bench-sched-floor: cannot open the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->level = level;
	if (rsp_sched_floor__load(skel) || rsp_sched_floor__attach(skel) ||
	    !(rb = ring_buffer__new(bpf_map__fd(skel->maps.floor_ring), drop, NULL, NULL))) {
		fprintf(stderr,
			"rsp-bench-sched-floor: cannot load or attach the floor programs "
			"(run as root on a kernel with BTF): %s\n",
			strerror(errno));
		rsp_sched_floor__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "rsp-bench-sched-floor: ready\n");
	while (!stop) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		ring_buffer__consume(rb);
		nanosleep(&ts, NULL);
	}
	ring_buffer__free(rb);
	rsp_sched_floor__destroy(skel);
	return 0;
}
