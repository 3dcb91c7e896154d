// SPDX-License-Identifier: GPL-2.0
/*
 * direct_write FILE N [--sync-every K] [--cpu C] [--spin C]: write N blocks
 * of 4 KiB with O_DIRECT at distinct offsets of FILE, fdatasync() after
 * every K writes (default 8) and at the end.
 *
 * --cpu C   pin the writer to CPU C
 * --spin C  keep CPU C busy with a spinning thread while writing: on a
 *           kernel that sends no block_rq_complete for an interrupt that
 *           hits an idle CPU, a busy CPU makes the completions visible
 *
 * Known answer: N write requests of 4 KiB reach the device (O_DIRECT, one
 * pwrite at a time, distinct offsets: no merging), plus what the file
 * system adds for fdatasync (flushes, journal). The device's own request
 * count (/sys/block/DEV/stat) is the reference; this program reports what
 * it did. FILE may be a block device (its own device is then "dev").
 * Prints one JSON line: {"pid", "tid", "writes", "syncs", "bytes",
 * "dev": "MAJ:MIN" of FILE's file system, "elapsed_s"}.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#define BLOCK 4096

static atomic_bool done;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void *spin(void *arg)
{
	volatile unsigned long n = 0;

	pin((int)(long)arg);
	while (!atomic_load_explicit(&done, memory_order_relaxed))
		n++;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n, every = 8, syncs = 0, cpu = -1, spin_cpu = -1;
	pthread_t spinner;
	struct stat st;
	void *buf;
	double t0;
	int fd;

	if (argc < 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr,
			"usage: direct_write FILE N [--sync-every K] [--cpu C] [--spin C]\n");
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sync-every"))
			every = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--spin"))
			spin_cpu = atol(argv[i + 1]);
	}
	if (every <= 0)
		every = 1;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_DIRECT, 0600);
	if (fd < 0 || fstat(fd, &st) || posix_memalign(&buf, BLOCK, BLOCK)) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, BLOCK);
	/* Allocate a file's blocks first, so that the writes change no metadata. */
	if (!S_ISBLK(st.st_mode) && (posix_fallocate(fd, 0, (off_t)n * BLOCK) || fsync(fd))) {
		perror("fallocate");
		return 1;
	}
	if (S_ISBLK(st.st_mode))
		st.st_dev = st.st_rdev; /* the device itself */
	if (spin_cpu >= 0 && pthread_create(&spinner, NULL, spin, (void *)spin_cpu)) {
		perror("pthread_create");
		return 1;
	}
	if (cpu >= 0)
		pin((int)cpu);
	usleep(100000); /* the spinner is running */
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		if (pwrite(fd, buf, BLOCK, (off_t)i * BLOCK) != BLOCK) {
			perror("pwrite");
			return 1;
		}
		if ((i + 1) % every == 0 || i + 1 == n) {
			if (fdatasync(fd)) {
				perror("fdatasync");
				return 1;
			}
			syncs++;
		}
	}
	atomic_store(&done, true);
	if (spin_cpu >= 0)
		pthread_join(spinner, NULL);
	close(fd);
	printf("{\"pid\": %d, \"tid\": %ld, \"writes\": %ld, \"syncs\": %ld, \"bytes\": %ld, "
	       "\"dev\": \"%u:%u\", \"elapsed_s\": %.6f}\n",
	       (int)getpid(), (long)syscall(SYS_gettid), n, syncs, n * BLOCK, major(st.st_dev),
	       minor(st.st_dev), now_s() - t0);
	free(buf);
	return 0;
}
