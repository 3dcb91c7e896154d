// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-bench-dwarf-sample: what copying the user stack costs the sampled
 * thread, per cpu-clock sample.
 *
 * A CPU-bound loop samples itself with two cpu-clock events opened as rspd
 * opens its cpu-clock (rsp's layout + PERIOD + CALLCHAIN), one of them also
 * with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER (rspd --dwarf
 * cpu_clock, --dwarf-stack BYTES), each with its own ring that a second
 * thread drains. The loop runs in short slices, alternating: no event, the
 * frame-pointer event, the DWARF event, so that drift on a shared machine
 * hits all three alike. Per slice it measures loop iterations and its own
 * CPU time (which, on a kernel without CONFIG_IRQ_TIME_ACCOUNTING, holds
 * the sampling interrupts); the drain thread counts samples per event.
 *
 * cost per sample = (CPU per iteration with the event - without) /
 *                   (samples per iteration)
 *
 * usage: rsp-bench-dwarf-sample [--freq HZ] [--stack BYTES] [--slices N]
 *                               [--slice-ms MS]
 * Prints one JSON line.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define RING_PAGES 256
#define REGS_MASK  0xff01ffull /* RSP_UNWIND_REGS_MASK: AX..IP, R8-R15 */

enum { M_NONE, M_FP, M_DWARF, M__NR };
static const char *const mode_name[M__NR] = {"none", "fp", "dwarf"};

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t size;
	_Atomic uint64_t samples;
	_Atomic uint64_t stack_bytes; /* dyn_size summed (DWARF event) */
	int dwarf;
};

static struct ring rings[M__NR];
static atomic_bool stop;
static size_t page;

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_event(struct ring *r, unsigned freq, unsigned stack, int dwarf)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = freq;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_CALLCHAIN;
	a.sample_max_stack = 64;
	a.disabled = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	if (dwarf) {
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = REGS_MASK;
		a.sample_stack_user = stack;
	}
	r->fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->size = RING_PAGES * page;
	r->meta = mmap(NULL, r->size + page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->meta == MAP_FAILED)
		return -errno;
	r->data = (unsigned char *)r->meta + page;
	r->dwarf = dwarf;
	return 0;
}

/* The dyn_size word: the last 8 bytes of a DWARF sample. */
static uint64_t dyn_size(const struct ring *r, uint64_t pos, uint16_t size)
{
	uint64_t v;
	size_t off = (size_t)((pos + size - 8) % r->size);

	if (off + 8 <= r->size) {
		memcpy(&v, r->data + off, 8);
	} else {
		size_t n = r->size - off;

		memcpy(&v, r->data + off, n);
		memcpy((unsigned char *)&v + n, r->data, 8 - n);
	}
	return v;
}

static void drain(struct ring *r)
{
	uint64_t head = atomic_load_explicit((_Atomic uint64_t *)&r->meta->data_head,
					     memory_order_acquire);
	uint64_t tail = r->meta->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % r->size);

		if (off + sizeof(h) <= r->size)
			memcpy(&h, r->data + off, sizeof(h));
		else
			break; /* a header never straddles the end: records are 8-aligned */
		if (h.type == PERF_RECORD_SAMPLE) {
			r->samples++;
			if (r->dwarf)
				r->stack_bytes += dyn_size(r, tail, h.size);
		}
		tail += h.size ? h.size : 8;
	}
	atomic_store_explicit((_Atomic uint64_t *)&r->meta->data_tail, head, memory_order_release);
}

static void *drainer(void *arg)
{
	(void)arg;
	while (!stop) {
		for (int m = M_FP; m < M__NR; m++)
			drain(&rings[m]);
		usleep(1000);
	}
	return NULL;
}

__attribute__((noinline)) static uint64_t work(uint64_t x)
{
	volatile uint64_t acc = x;

	for (int i = 0; i < 2000; i++)
		acc = acc * 6364136223846793005ull + 1442695040888963407ull;
	return acc;
}

struct acc {
	double cpu;
	uint64_t iters, samples;
};

static void slice(struct acc *a, int mode, double ms)
{
	uint64_t s0 = mode == M_NONE ? 0 : rings[mode].samples, n = 0, x = 1;
	double c0, t0;

	if (mode != M_NONE)
		ioctl(rings[mode].fd, PERF_EVENT_IOC_ENABLE, 0);
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	t0 = clock_s(CLOCK_MONOTONIC);
	while (clock_s(CLOCK_MONOTONIC) - t0 < ms / 1e3) {
		x = work(x) | 1;
		n++;
	}
	a->cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	if (mode != M_NONE) {
		ioctl(rings[mode].fd, PERF_EVENT_IOC_DISABLE, 0);
		usleep(3000); /* let the drainer count this slice's samples */
		a->samples += rings[mode].samples - s0;
	}
	a->iters += n;
}

/*
 * Warm up, then alternate, rotating which mode goes first; from under 16 KiB
 * of this frame, so that every sample finds the whole --stack above its
 * stack pointer, present (as in any thread not at its stack's very top).
 */
__attribute__((noinline)) static void run(struct acc *acc, unsigned slices, double slice_ms)
{
	volatile char pad[16384];

	/* Fault every page in: the kernel copies no further than the first absent one. */
	for (size_t i = 0; i < sizeof(pad); i += 512)
		pad[i] = 1;
	slice(&(struct acc){0}, M_DWARF, slice_ms);
	for (unsigned s = 0; s < slices; s++)
		for (int k = 0; k < M__NR; k++)
			slice(&acc[(k + (int)s) % M__NR], (k + (int)s) % M__NR, slice_ms);
	pad[1] = pad[0];
}

int main(int argc, char **argv)
{
	unsigned freq = 4999, stack = 8192, slices = 40;
	double slice_ms = 200;
	struct acc acc[M__NR] = {{0}};
	pthread_t th;
	int err;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--freq"))
			freq = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--stack"))
			stack = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--slices"))
			slices = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--slice-ms"))
			slice_ms = atof(argv[i + 1]);
	}
	page = (size_t)sysconf(_SC_PAGESIZE);
	err = open_event(&rings[M_FP], freq, stack, 0);
	if (!err)
		err = open_event(&rings[M_DWARF], freq, stack, 1);
	if (err) {
		fprintf(stderr, "rsp-bench-dwarf-sample: perf_event_open: %s — run as root\n",
			strerror(-err));
		return 1;
	}
	if (pthread_create(&th, NULL, drainer, NULL))
		return 1;
	run(acc, slices, slice_ms);
	stop = true;
	pthread_join(th, NULL);

	double cpi[M__NR];

	for (int m = 0; m < M__NR; m++)
		cpi[m] = acc[m].cpu / (double)acc[m].iters;
	printf("{\"freq\": %u, \"stack\": %u, \"slices\": %u, \"slice_ms\": %.0f", freq, stack,
	       slices, slice_ms);
	for (int m = 0; m < M__NR; m++)
		printf(", \"%s\": {\"cpu_s\": %.6f, \"iterations\": %llu, \"samples\": %llu, "
		       "\"ns_per_iteration\": %.3f}",
		       mode_name[m], acc[m].cpu, (unsigned long long)acc[m].iters,
		       (unsigned long long)acc[m].samples, cpi[m] * 1e9);
	printf(", \"stack_bytes_per_sample\": %.0f",
	       acc[M_DWARF].samples
		       ? (double)rings[M_DWARF].stack_bytes / (double)rings[M_DWARF].samples
		       : 0.0);
	for (int m = M_FP; m < M__NR; m++) {
		double spi = (double)acc[m].samples / (double)acc[m].iters;

		printf(", \"%s_us_per_sample\": %.3f", mode_name[m],
		       spi > 0 ? (cpi[m] - cpi[M_NONE]) / spi * 1e6 : 0.0);
	}
	{
		double spi = (double)acc[M_DWARF].samples / (double)acc[M_DWARF].iters;

		printf(", \"stack_copy_us_per_sample\": %.3f}\n",
		       spi > 0 ? (cpi[M_DWARF] - cpi[M_FP]) / spi * 1e6 : 0.0);
	}
	return 0;
}
