// SPDX-License-Identifier: GPL-2.0
/*
 * burn_split split CPU_SECONDS: one worker thread burns CPU_SECONDS of CPU
 * time, 70% in burn_hot() and 30% in burn_cold(), then exits. Both run the
 * same loop body (one multiply-add chain, no memory access) and burn_hot
 * runs 7 iterations for every 3 of burn_cold, so the shares are 70/30 by
 * construction, whatever the CPU's speed. The main thread sleeps in
 * pthread_join.
 *
 * burn_split zero CPU_SECONDS: the worker reads /dev/zero in 1 MiB chunks
 * until it has used CPU_SECONDS: nearly all of it in the kernel (clearing
 * the user buffer), for a kernel-heavy profile.
 *
 * Built with -O1 -g and frame pointers, no inlining (tests/CMakeLists.txt),
 * so that each function is one symbol with its loop inside it and the
 * DWARF line table maps the loop to HOT_LOOP_LINE.
 *
 * Known answer for a profiler: the worker's samples split 70/30 between
 * burn_hot and burn_cold (split), or fall mostly in the kernel (zero);
 * the samples of burn_hot lie on the instructions of its loop, whose
 * source line is HOT_LOOP_LINE.
 *
 * Prints one JSON line: {"pid", "tid" (the worker), "mode", "cpu_s",
 * "hot_line" (the loop's line in this file), "cold_line", "source"}.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define UNIT (2u * 1000u * 1000u) /* iterations: about 2 ms of CPU */

static volatile uint64_t sink;
static double goal;
static int zero_mode;
static pid_t worker_tid;

uint64_t burn_hot(uint64_t n);
uint64_t burn_cold(uint64_t n);

/* clang-format off */
enum { HOT_LOOP_LINE = __LINE__ + 5 };
__attribute__((noinline, noipa)) uint64_t burn_hot(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++) x = x * 2862933555777941757ull + 7;
	sink = x;
	return x;
}

enum { COLD_LOOP_LINE = __LINE__ + 5 };
__attribute__((noinline, noipa)) uint64_t burn_cold(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++) x = x * 2862933555777941757ull + 7;
	sink = x;
	return x;
}
/* clang-format on */

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn_zero(void)
{
	static char buf[1 << 20];
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("/dev/zero");
		exit(1);
	}
	while (thread_cpu() < goal)
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("read /dev/zero");
			exit(1);
		}
	close(fd);
}

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	if (zero_mode) {
		burn_zero();
		return NULL;
	}
	while (thread_cpu() < goal) {
		burn_hot(7 * UNIT);
		burn_cold(3 * UNIT);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3 || (strcmp(argv[1], "split") && strcmp(argv[1], "zero")) ||
	    (goal = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: burn_split split|zero CPU_SECONDS\n");
		return 2;
	}
	zero_mode = !strcmp(argv[1], "zero");
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL)) {
		fprintf(stderr, "burn_split: cannot run the worker thread\n");
		return 1;
	}
	printf("{\"pid\": %d, \"tid\": %d, \"mode\": \"%s\", \"cpu_s\": %.3f, "
	       "\"hot_line\": %d, \"cold_line\": %d, \"source\": \"%s\"}\n",
	       (int)getpid(), (int)worker_tid, argv[1], goal, HOT_LOOP_LINE, COLD_LOOP_LINE,
	       __FILE__);
	return 0;
}
