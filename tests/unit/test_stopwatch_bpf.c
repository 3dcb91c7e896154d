// SPDX-License-Identifier: GPL-2.0
/*
 * Stopwatches in the kernel: bpf/stopwatch.bpf.c loaded with its skeleton,
 * a uprobe and a uretprobe on a function of this program (root; skipped
 * with one line where BPF cannot load). Known answers:
 *
 * - cross-CPU: a call entered on CPU 0 that moves itself to CPU 1 before
 *   returning is timed once, with its whole duration;
 * - the thread table's bound: with room for 2 threads, 3 threads inside
 *   the function at once time 2 calls and count 1 overflow;
 * - a thread that exits inside the function leaves no entry behind: its
 *   entry is counted unmatched and the table is empty afterwards;
 * - calls that sleep 5 ms have at least that much asleep (off CPU).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <rsp/buf.h>
#include <rsp/stopwatch.h>
#include <rsp/uprobe.h>
#include "bpf/stopwatch.h"
#include "stopwatch.skel.h"

void probed(int mode);

static pthread_barrier_t inside;

enum { MODE_MIGRATE, MODE_WAIT, MODE_EXIT, MODE_SLEEP };

__attribute__((noinline)) void probed(int mode)
{
	cpu_set_t set;

	switch (mode) {
	case MODE_MIGRATE:
		CPU_ZERO(&set);
		CPU_SET(1, &set);
		assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
		assert_int_equal(sched_getcpu(), 1);
		break;
	case MODE_WAIT:
		pthread_barrier_wait(&inside);
		break;
	case MODE_EXIT:
		pthread_exit(NULL);
	case MODE_SLEEP:
		usleep(5000);
		break;
	}
	__asm__ volatile("" ::: "memory");
}

struct fix {
	struct rsp_sw *skel;
	struct bpf_link *entry, *ret, *exit, *sw;
};

static int setup(void **state)
{
	static struct fix f;
	struct rsp_uprobe_target ut;
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_sw_filter flt = {.active = 1, .tgid = (uint32_t)getpid()};
	uint32_t zero = 0;

	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = 0);
	memset(&f, 0, sizeof(f));
	*state = &f;
	if (geteuid() != 0)
		return 0;
	f.skel = rsp_sw__open();
	if (!f.skel)
		return 0;
	bpf_map__set_max_entries(f.skel->maps.frames, 2);
	if (rsp_sw__load(f.skel)) {
		rsp_sw__destroy(f.skel);
		f.skel = NULL;
		return 0;
	}
	assert_int_equal(rsp_uprobe__resolve("/proc/self/exe", "probed", &ut, &err), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(f.skel->maps.filters), &zero, &flt, 0), 0);
	f.entry = bpf_program__attach_uprobe_opts(f.skel->progs.sw_entry, -1, "/proc/self/exe",
						  ut.offset, &o);
	o.retprobe = true;
	f.ret = bpf_program__attach_uprobe_opts(f.skel->progs.sw_return, -1, "/proc/self/exe",
						ut.offset, &o);
	f.exit = bpf_program__attach(f.skel->progs.sw_exit);
	f.sw = bpf_program__attach(f.skel->progs.sw_switch);
	assert_non_null(f.sw);
	assert_non_null(f.entry);
	assert_non_null(f.ret);
	assert_non_null(f.exit);
	rsp_buf__exit(&err);
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	bpf_link__destroy(f->entry);
	bpf_link__destroy(f->ret);
	bpf_link__destroy(f->exit);
	bpf_link__destroy(f->sw);
	rsp_sw__destroy(f->skel);
	return 0;
}

static struct fix *need(void **state)
{
	struct fix *f = *state;

	if (!f->skel) {
		print_message("SKIP: %s\n",
			      geteuid() ? "needs root (BPF)"
					: "the stopwatch BPF programs do not load here");
		skip();
	}
	return f;
}

/* Stopwatch 0's counts (epoch 0: nobody flips it here), then cleared. */
static struct rsp_sw_total take(struct fix *f)
{
	int n = libbpf_num_possible_cpus(), fd = bpf_map__fd(f->skel->maps.stats);
	struct rsp_sw_stat *cpus = calloc((size_t)n, sizeof(*cpus));
	struct rsp_sw_total t = {0};
	uint32_t key = 0;

	assert_non_null(cpus);
	assert_int_equal(bpf_map_lookup_elem(fd, &key, cpus), 0);
	for (int c = 0; c < n; c++)
		rsp_sw_total__add_stat(&t, &cpus[c]);
	memset(cpus, 0, sizeof(*cpus) * (size_t)n);
	assert_int_equal(bpf_map_update_elem(fd, &key, cpus, 0), 0);
	free(cpus);
	return t;
}

static int frames_left(struct fix *f)
{
	struct rsp_sw_key k, *prev = NULL, next;
	int n = 0;

	while (!bpf_map_get_next_key(bpf_map__fd(f->skel->maps.frames), prev, &next)) {
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

static void test_cross_cpu(void **state)
{
	struct fix *f = need(state);
	struct rsp_sw_total t;
	cpu_set_t set, old;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		print_message("SKIP: one CPU: no call can change CPU\n");
		skip();
	}
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
		probed(MODE_MIGRATE); /* enters on CPU 0, returns on CPU 1 */
	}
	sched_setaffinity(0, sizeof(old), &old);
	t = take(f);
	assert_int_equal(t.count, 10);
	assert_int_equal(t.unmatched, 0);
	assert_int_equal(t.overflow, 0);
	assert_int_equal(frames_left(f), 0);
}

static void *waiter(void *arg)
{
	probed((int)(intptr_t)arg);
	return NULL;
}

static void test_table_bound(void **state)
{
	struct fix *f = need(state);
	struct rsp_sw_total t;
	pthread_t th[3];

	/* 3 threads and this one meet inside probed(): all 3 are in at once */
	pthread_barrier_init(&inside, NULL, 4);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, waiter, (void *)(intptr_t)MODE_WAIT),
				 0);
	pthread_barrier_wait(&inside);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&inside);
	t = take(f);
	assert_int_equal(t.count, 2);
	assert_int_equal(t.overflow, 1);
	assert_int_equal(t.unmatched, 0);
	assert_int_equal(frames_left(f), 0);
}

static void test_thread_exit(void **state)
{
	struct fix *f = need(state);
	struct rsp_sw_total t;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, waiter, (void *)(intptr_t)MODE_EXIT), 0);
	pthread_join(th, NULL);
	t = take(f);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.unmatched, 1);
	assert_int_equal(frames_left(f), 0);
}

/* Three calls that sleep 5 ms: at least 15 ms asleep, all of it off CPU. */
static void test_offcpu(void **state)
{
	struct fix *f = need(state);
	struct rsp_sw_total t;

	for (int i = 0; i < 3; i++)
		probed(MODE_SLEEP);
	t = take(f);
	assert_int_equal(t.count, 3);
	assert_int_equal(t.off_unknown, 0);
	assert_true(t.asleep >= 15000000);
	assert_true(t.asleep <= t.offcpu && t.offcpu <= t.sum);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cross_cpu),
		cmocka_unit_test(test_table_bound),
		cmocka_unit_test(test_thread_exit),
		cmocka_unit_test(test_offcpu),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
