// SPDX-License-Identifier: GPL-2.0
/*
 * barrier_imbalance ROUNDS [UNIT_US]: two threads ("imb-a", "imb-b") work
 * in phases separated by a barrier: in phase 1 A works 3 units and B one,
 * in phase 2 A one and B three (a unit is UNIT_US microseconds of CPU,
 * default 1000). Each waits at the barrier for the other in turn.
 *
 * Known answer (the wait-for graph, wPerf's load-imbalance cycle): a
 * 2-cycle knot {A, B}; A -> B weighs A's waits (phase 2), B -> A weighs B's
 * (phase 1), each about 2 units per round. The workload measures them: the
 * off-CPU time in the barrier (wall minus CPU) and the part of it not
 * runnable (schedstat).
 *
 * Prints one JSON line: {"pid", "tid_a", "tid_b", "rounds", "elapsed_s",
 * "a_offcpu_s", "b_offcpu_s", "a_slept_s", "b_slept_s"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include "wl.h"

static pthread_barrier_t bar;
static long rounds;
static uint64_t unit;
static pid_t tid[2];
static double offcpu[2], slept[2];

static void barrier(int who)
{
	struct wl_sleepwatch sw;
	uint64_t t0 = wl_now();
	double c0 = wl_thread_cpu();

	wl_sleepwatch_start(&sw);
	pthread_barrier_wait(&bar);
	offcpu[who] += (double)(wl_now() - t0) / 1e9 - (wl_thread_cpu() - c0);
	slept[who] += wl_sleepwatch_stop(&sw);
}

static void *run(void *arg)
{
	int who = (int)(long)arg;

	tid[who] = wl_gettid();
	wl_setname(who ? "imb-b" : "imb-a");
	pthread_barrier_wait(&bar); /* start together */
	for (long r = 0; r < rounds; r++) {
		wl_spin_ns(unit * (who ? 1 : 3));
		barrier(who);
		wl_spin_ns(unit * (who ? 3 : 1));
		barrier(who);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t b;
	uint64_t t0;

	rounds = argc > 1 ? atol(argv[1]) : 300;
	unit = (uint64_t)(argc > 2 ? atol(argv[2]) : 1000) * 1000;
	if (rounds <= 0 || !unit) {
		fprintf(stderr, "usage: barrier_imbalance ROUNDS [UNIT_US]\n");
		return 2;
	}
	pthread_barrier_init(&bar, NULL, 2);
	t0 = wl_now();
	/* The main thread is A: none of the threads only waits for the others. */
	pthread_create(&b, NULL, run, (void *)1L);
	run((void *)0L);
	pthread_join(b, NULL);
	printf("{\"pid\": %d, \"tid_a\": %d, \"tid_b\": %d, \"rounds\": %ld, \"elapsed_s\": %.6f, "
	       "\"a_offcpu_s\": %.6f, \"b_offcpu_s\": %.6f, \"a_slept_s\": %.6f, "
	       "\"b_slept_s\": %.6f}\n",
	       (int)getpid(), tid[0], tid[1], rounds, (double)(wl_now() - t0) / 1e9, offcpu[0],
	       offcpu[1], slept[0], slept[1]);
	return 0;
}
