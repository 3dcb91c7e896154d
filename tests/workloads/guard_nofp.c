// SPDX-License-Identifier: GPL-2.0
/*
 * guard_nofp [SECONDS]: burns CPU for SECONDS (default 2) in level3(),
 * called from level2(), from level1(), from burn_guarded(), on a thread
 * whose stack is a 64 KiB mapping of this program's own with an unreadable
 * (PROT_NONE) page right above it (pthread_attr_setstack); built with -O2
 * -fomit-frame-pointer like cpu_nofp.
 *
 * Known answer: a cpu-clock sample with a user stack copy (rspd --dwarf)
 * reserves --dwarf-stack bytes (8 KiB by default: the mapping lies far
 * below the top of the address space, so the kernel does not shorten it),
 * but the kernel can copy only from the stack pointer up to the guard page:
 * "above_sp" bytes (printed: measured in burn_guarded(), glibc's thread
 * descriptor and TLS at the top of the stack included) plus the frames of
 * level1 .. level3. Nearly every sample of the process is in level3 with
 * level2, level1 and burn_guarded above it; only DWARF unwinding finds them.
 *
 * Prints one JSON line: {"pid", "tid" (the burning thread), "seconds",
 * "above_sp", "stack_bytes", "iterations"}.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define STACK_BYTES (64 * 1024)

struct burn {
	double secs;
	char *guard;
	long tid;
	unsigned long above_sp, n, x;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* noinline and a use of each result after the call: no inlining, no tail call. */
__attribute__((noinline)) static unsigned long level3(unsigned long x)
{
	volatile unsigned long acc = x;

	for (int i = 0; i < 200000; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return acc;
}

__attribute__((noinline)) static unsigned long level2(unsigned long x)
{
	unsigned long r = level3(x + 1);

	return r ^ (x << 1);
}

__attribute__((noinline)) static unsigned long level1(unsigned long x)
{
	unsigned long r = level2(x + 2);

	return r + (x >> 1);
}

__attribute__((noinline)) static void *burn_guarded(void *arg)
{
	struct burn *b = arg;
	double t0 = now();

	b->tid = (long)syscall(SYS_gettid);
	b->above_sp = (unsigned long)(b->guard - (char *)__builtin_frame_address(0));
	b->x = 1;
	while (now() - t0 < b->secs) {
		b->x = level1(b->x) | 1;
		b->n++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct burn b = {.secs = argc > 1 ? atof(argv[1]) : 2.0};
	long page = sysconf(_SC_PAGESIZE);
	double t0 = now();
	pthread_attr_t attr;
	pthread_t th;
	char *base;

	base = mmap(NULL, STACK_BYTES + (size_t)page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (base == MAP_FAILED || mprotect(base + STACK_BYTES, (size_t)page, PROT_NONE)) {
		perror("guard_nofp: the thread's stack");
		return 1;
	}
	b.guard = base + STACK_BYTES;
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, base, STACK_BYTES) ||
	    pthread_create(&th, &attr, burn_guarded, &b) || pthread_join(th, NULL)) {
		fprintf(stderr, "guard_nofp: cannot run the thread\n");
		return 1;
	}
	printf("{\"pid\": %d, \"tid\": %ld, \"seconds\": %.3f, \"above_sp\": %lu, "
	       "\"stack_bytes\": %d, \"iterations\": %lu, \"x\": %lu}\n",
	       (int)getpid(), b.tid, now() - t0, b.above_sp, STACK_BYTES, b.n, b.x & 1);
	return 0;
}
