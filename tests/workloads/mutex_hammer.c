// SPDX-License-Identifier: GPL-2.0
/*
 * mutex_hammer THREADS SECONDS: THREADS threads take one pthread mutex in
 * a loop for SECONDS. Inside it a thread works a little (2000 steps of an
 * LCG) and sleeps 100 us (nanosleep) before it lets go; outside it works a
 * quarter of that.
 *
 * Why a sleep inside: on a shared, loaded machine two CPU-bound threads are
 * rarely on CPUs at the same time, so a purely CPU-bound critical section
 * is contended only as much as the scheduler happens to allow. A holder
 * that sleeps keeps the mutex taken whatever the load: with two threads or
 * more, the others wait in futex_wait for it, most of the run.
 *
 * Known answer (latency profiles, tests/e2e/test_hist_mutex.py): with
 * one thread the mutex is never contended; the only lock wait is main's
 * pthread_join at the end (at most one). With two, the threads wait for
 * each other on the lock, for about the run's length in total, while the
 * deliberate sleeps keep their shape. So `rspctl hist --diff` between a
 * run with 1 thread (baseline) and a run with 2 ranks the lock wait
 * profile (offcpu:lock) first.
 *
 * Prints one JSON line: {"pid", "threads", "seconds", "acquisitions",
 * "contended": acquisitions that found the mutex taken (trylock failed),
 * "tids": [...]}.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define MAX_THREADS 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool stop;
static volatile uint64_t shared;

struct worker {
	pthread_t th;
	long tid;
	uint64_t acquisitions, contended;
};

static void work(unsigned iters)
{
	for (unsigned i = 0; i < iters; i++)
		shared = shared * 6364136223846793005ull + 1442695040888963407ull;
}

static void *run(void *arg)
{
	const struct timespec hold = {.tv_sec = 0, .tv_nsec = 100000};
	struct worker *w = arg;

	w->tid = (long)syscall(SYS_gettid);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (pthread_mutex_trylock(&mu)) {
			w->contended++;
			pthread_mutex_lock(&mu);
		}
		w->acquisitions++;
		work(2000); /* held */
		nanosleep(&hold, NULL);
		pthread_mutex_unlock(&mu);
		work(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	double secs = argc > 2 ? atof(argv[2]) : 2.0;
	struct worker w[MAX_THREADS] = {0};
	uint64_t acq = 0, cont = 0;
	struct timespec d;

	if (n < 1 || n > MAX_THREADS || secs <= 0) {
		fprintf(stderr, "usage: mutex_hammer THREADS(1..64) SECONDS\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&w[i].th, NULL, run, &w[i]))
			return 1;
	d.tv_sec = (time_t)secs;
	d.tv_nsec = (long)((secs - (double)d.tv_sec) * 1e9);
	nanosleep(&d, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].th, NULL);
		acq += w[i].acquisitions;
		cont += w[i].contended;
	}
	printf("{\"pid\": %d, \"threads\": %d, \"seconds\": %.3f, \"acquisitions\": %llu, "
	       "\"contended\": %llu, \"tids\": [",
	       (int)getpid(), n, secs, (unsigned long long)acq, (unsigned long long)cont);
	for (int i = 0; i < n; i++)
		printf("%s%ld", i ? ", " : "", w[i].tid);
	printf("]}\n");
	return 0;
}
