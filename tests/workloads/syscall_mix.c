// SPDX-License-Identifier: GPL-2.0
/*
 * syscall_mix N M DIR: one thread (not the main one) writes 4 KiB to a
 * real file in DIR and fsync()s it, N times, then makes M nanosleep(1 ms)
 * system calls (the nanosleep syscall itself: glibc's nanosleep() makes
 * clock_nanosleep). The main thread only starts and joins it, so the
 * process makes exactly the worker's fsyncs and nanosleeps.
 *
 * Known answer (syscall profiles, tests/e2e/test_syscall_profiles.py): the
 * worker's and the process's syscall:fsync counts are exactly N and their
 * syscall:nanosleep counts exactly M; nanosleep's peak holds the 1 ms
 * bucket [2^20, 2^21) ns (1 ms plus the 50 us timer slack); nanosleep is
 * almost all off CPU (asleep), fsync partly.
 *
 * Prints one JSON line: {"pid", "tid", "n", "m", "sleep_median_ns",
 * "sleep_max_ns"}: the sleeps as the thread measured them around each call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "wl.h"

struct job {
	long n, m;
	const char *dir;
	pid_t tid;
	uint64_t *sleeps;
	int err;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int do_fsyncs(struct job *j)
{
	char path[4096], buf[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/syscall_mix.%d", j->dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return errno;
	unlink(path);
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < j->n; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fsync(fd)) {
			close(fd);
			return errno ? errno : EIO;
		}
	close(fd);
	return 0;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct timespec req = {.tv_sec = 0, .tv_nsec = 1000000};

	j->tid = (pid_t)syscall(SYS_gettid);
	j->err = do_fsyncs(j);
	for (long i = 0; !j->err && i < j->m; i++) {
		uint64_t t0 = wl_now();

		if (syscall(SYS_nanosleep, &req, NULL))
			j->err = errno;
		j->sleeps[i] = wl_now() - t0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct job j = {0};
	pthread_t th;

	if (argc != 4 || (j.n = atol(argv[1])) < 0 || (j.m = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: syscall_mix N M DIR (N fsyncs, M >= 1 nanosleeps)\n");
		return 2;
	}
	j.dir = argv[3];
	j.sleeps = calloc((size_t)j.m, sizeof(*j.sleeps));
	if (!j.sleeps || pthread_create(&th, NULL, worker, &j)) {
		fprintf(stderr, "syscall_mix: cannot start the worker\n");
		return 1;
	}
	pthread_join(th, NULL);
	if (j.err) {
		fprintf(stderr, "syscall_mix: %s\n", strerror(j.err));
		return 1;
	}
	qsort(j.sleeps, (size_t)j.m, sizeof(*j.sleeps), cmp_u64);
	printf("{\"pid\": %d, \"tid\": %d, \"n\": %ld, \"m\": %ld, \"sleep_median_ns\": %llu, "
	       "\"sleep_max_ns\": %llu}\n",
	       (int)getpid(), (int)j.tid, j.n, j.m, (unsigned long long)j.sleeps[j.m / 2],
	       (unsigned long long)j.sleeps[j.m - 1]);
	free(j.sleeps);
	return 0;
}
