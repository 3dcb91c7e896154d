// SPDX-License-Identifier: GPL-2.0
/*
 * Known answers for `rspctl stopwatch` (tests/e2e/test_stopwatch*.py):
 *
 *   stopwatch_work work THREADS CALLS  each thread calls work() CALLS times:
 *                                      2 ms asleep, then ~1 ms of CPU
 *   stopwatch_work recurse K           rec(5) K times: rec() is entered 5K times
 *   stopwatch_work longjmp N M         jumper() leaves by longjmp N times,
 *                                      then returns normally M times
 *   stopwatch_work nanosleep N         N nanosleep(1 ms) system calls (not
 *                                      clock_nanosleep, which glibc uses)
 *   stopwatch_work loop N              tiny() N times, and getppid N times
 *                                      (bench/stopwatch.py: cost per call)
 *   stopwatch_work callers A B         work() A times from caller_a(), then
 *                                      B times from caller_b() (--callers)
 *   stopwatch_work queue N MS          a producer thread enqueue()s N items, one
 *                                      per ms; a consumer thread dequeue()s each
 *                                      MS ms after its enqueue (a keyed pair by
 *                                      arg1); prints the program's own mean
 *
 * Prints one JSON line: what it did, and work()'s own mean duration as
 * the program measured it around each call.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "wl.h"

/* The probed functions: global, so that their symbols are plain to find. */
void work(void);
int rec(int depth);
void jumper(int jump);
void tiny(void);
void caller_a(void);
void caller_b(void);

/* An item through a queue: enqueue(item) and dequeue(item), arg1 the item. */
struct item {
	uint64_t t0, t1; /* just before enqueue(), just after dequeue() was entered */
	struct item *next;
};
void enqueue(struct item *it);
void dequeue(struct item *it);

static jmp_buf env;
static volatile int sink;

__attribute__((noinline)) void work(void)
{
	struct timespec ts = {0, 2000000};

	nanosleep(&ts, NULL);
	wl_spin_ns(1000000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int rec(int depth)
{
	int r = depth > 1 ? rec(depth - 1) : 0;

	__asm__ volatile("" ::: "memory");
	return r + 1; /* work after the call: no tail call */
}

__attribute__((noinline)) void jumper(int jump)
{
	if (jump)
		longjmp(env, 1);
	sink++;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void tiny(void)
{
	sink++;
	__asm__ volatile("" ::: "memory");
}

/* Two call sites of work(), each in its own function; not tail calls. */
__attribute__((noinline)) void caller_a(void)
{
	work();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void caller_b(void)
{
	work();
	__asm__ volatile("" ::: "memory");
}

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static struct item *q_head, **q_tail = &q_head;

__attribute__((noinline)) void enqueue(struct item *it)
{
	pthread_mutex_lock(&q_lock);
	it->next = NULL;
	*q_tail = it;
	q_tail = &it->next;
	pthread_cond_signal(&q_cond);
	pthread_mutex_unlock(&q_lock);
}

__attribute__((noinline)) void dequeue(struct item *it)
{
	it->t1 = wl_now();
	__asm__ volatile("" ::: "memory");
}

struct queue_arg {
	int n;
	uint64_t wait_ns;
};

/* Takes each item and hands it to dequeue() wait_ns after its enqueue. */
static void *consumer(void *p)
{
	struct queue_arg *a = p;

	for (int i = 0; i < a->n; i++) {
		struct item *it;
		uint64_t due;

		pthread_mutex_lock(&q_lock);
		while (!q_head)
			pthread_cond_wait(&q_cond, &q_lock);
		it = q_head;
		q_head = it->next;
		if (!q_head)
			q_tail = &q_head;
		pthread_mutex_unlock(&q_lock);
		due = it->t0 + a->wait_ns;
		while (wl_now() < due) {
			uint64_t left = due - wl_now();
			struct timespec ts = {0, (long)(left < 999999999 ? left : 999999999)};

			nanosleep(&ts, NULL);
		}
		dequeue(it);
	}
	return NULL;
}

static int do_queue(int n, int ms)
{
	struct item *items = calloc((size_t)n, sizeof(*items));
	struct queue_arg a = {n, (uint64_t)ms * 1000000};
	struct timespec gap = {0, 1000000};
	uint64_t total = 0;
	pthread_t t;

	if (!items || pthread_create(&t, NULL, consumer, &a))
		return 1;
	for (int i = 0; i < n; i++) {
		items[i].t0 = wl_now();
		enqueue(&items[i]);
		nanosleep(&gap, NULL);
	}
	pthread_join(t, NULL);
	for (int i = 0; i < n; i++)
		total += items[i].t1 - items[i].t0;
	printf("{\"items\": %d, \"mean_ns\": %.0f}\n", n, (double)total / n);
	free(items);
	return 0;
}

/* ns per call of tiny(), then of the getppid system call. */
static int do_loop(int n)
{
	uint64_t t0 = wl_now(), t1, t2;

	for (int i = 0; i < n; i++)
		tiny();
	t1 = wl_now();
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	t2 = wl_now();
	printf("{\"calls\": %d, \"tiny_ns\": %.1f, \"getppid_ns\": %.1f}\n", n,
	       (double)(t1 - t0) / n, (double)(t2 - t1) / n);
	return 0;
}

struct arg {
	int calls;
	uint64_t total;
};

static void *work_thread(void *p)
{
	struct arg *a = p;

	for (int i = 0; i < a->calls; i++) {
		uint64_t t0 = wl_now();

		work();
		a->total += wl_now() - t0;
	}
	return NULL;
}

static int do_work(int threads, int calls)
{
	struct arg *a = calloc((size_t)threads, sizeof(*a));
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	uint64_t total = 0;

	if (!a || !t)
		return 1;
	for (int i = 0; i < threads; i++) {
		a[i].calls = calls;
		if (pthread_create(&t[i], NULL, work_thread, &a[i]))
			return 1;
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		total += a[i].total;
	}
	printf("{\"calls\": %d, \"mean_ns\": %.0f}\n", threads * calls,
	       (double)total / (threads * calls));
	free(a);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0, m = argc > 3 ? atoi(argv[3]) : 0;

	if (!strcmp(mode, "work") && argc == 4)
		return do_work(n, m);
	if (!strcmp(mode, "recurse") && argc == 3) {
		for (int i = 0; i < n; i++)
			sink += rec(5);
		printf("{\"entries\": %d}\n", 5 * n);
		return 0;
	}
	if (!strcmp(mode, "longjmp") && argc == 4) {
		volatile int jumps = 0;

		if (setjmp(env))
			jumps++;
		if (jumps < n)
			jumper(1);
		for (int i = 0; i < m; i++)
			jumper(0);
		printf("{\"jumps\": %d, \"returns\": %d}\n", (int)jumps, m);
		return 0;
	}
	if (!strcmp(mode, "callers") && argc == 4) {
		for (int i = 0; i < n; i++)
			caller_a();
		for (int i = 0; i < m; i++)
			caller_b();
		printf("{\"caller_a\": %d, \"caller_b\": %d}\n", n, m);
		return 0;
	}
	if (!strcmp(mode, "queue") && argc == 4)
		return do_queue(n, m);
	if (!strcmp(mode, "loop") && argc == 3)
		return do_loop(n);
	if (!strcmp(mode, "nanosleep") && argc == 3) {
		struct timespec ts = {0, 1000000};

		for (int i = 0; i < n; i++)
			syscall(SYS_nanosleep, &ts, NULL);
		printf("{\"nanosleeps\": %d}\n", n);
		return 0;
	}
	fprintf(stderr, "usage: stopwatch_work work THREADS CALLS | recurse K | longjmp N M | "
			"nanosleep N | loop N | callers A B | queue N MS\n");
	return 2;
}
