// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF capture programs against the kernel's own tracepoint, on the
 * real kernel (root; skipped with one line where BPF cannot load).
 *
 * Known answer: the BPF programs write into their BPF ring per CPU, the
 * kernel's sched:sched_switch tracepoint into a perf ring per CPU. A parent and
 * its child pass a byte back and forth over two pipes, both pinned to CPU
 * 0: every hand-off is a switch. For the child's switches the BPF SWITCH
 * records and the tracepoint's samples must be the same
 * sequence (prev, next, prev_state) in the same order; the child's name
 * arrives once as a COMM record on CPU 0, and its new name once when it
 * renames itself halfway (running: the switch out of it sends it), and its
 * fork and exit as records;
 * a switch into a sleep carries a kernel stack whose STACK record came
 * earlier in the same ring. A program the verifier refuses gives one
 * sentence naming it, and the verifier's log.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include "bpfcap.h"
#include "perf_internal.h"

#define ROUNDS	 1000
#define MAX_SW	 20000
#define MAX_CPUS 256

struct sw {
	uint32_t prev, next, state;
};

struct cap {
	struct perf_evlist *evlist;
	struct perf_evsel *tp;
	uint16_t tp_type; /* the tracepoint's id, first in its raw data */
	void *maps[MAX_CPUS];
	int fds[MAX_CPUS];
	unsigned cpus[MAX_CPUS];
	int nr_rings;
	/* what was read, for the workload's threads */
	struct sw bpf_sw[MAX_SW], tp_sw[MAX_SW];
	int nr_bpf_sw, nr_tp_sw;
	bool child_comm, child_fork, child_exit, stack_resolved;
	int sleeps_with_kstack, sleeps;
	/* the stack cache: sleeps served from it, walked as checks, and where a
	 * check found the cache's kernel stack different; kernel stacks a sleep
	 * named before its ring carried them (must not happen) */
	int sleeps_cached, sleeps_checked, checks_differ, kstack_unsent;
	uint64_t stacks_seen[4096];
	unsigned stacks_cpu[4096];
	int nr_stacks_seen;
	int stacks_again; /* STACK records of a (hash, CPU) already sent: resend_all */
	/* the child's COMM records: (tid, CPU, name) each once in a generation */
	struct {
		uint32_t tid;
		unsigned cpu;
		char comm[16];
	} comms[64];
	int nr_comms, comm_repeats;
	bool child_renamed;
};

static uint32_t child_tid;

/*
 * The machine may not allow BPF (no BTF, no privilege, lockdown): skipped
 * with the reason. The verifier refusing rsp's own programs is a failure.
 */
static void skip_unless_machine(const char *err)
{
	if (strstr(err, "verifier refused")) {
		print_message("%s\n", rsp_bpfcap__verifier_log());
		fail_msg("%s", err);
	}
	print_message("SKIP: %s\n", err);
	skip();
}

static int tracefs_id(const char *event)
{
	char path[256];
	FILE *f;
	int id = -1;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", event);
	f = fopen(path, "r");
	if (!f) {
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
		f = fopen(path, "r");
	}
	if (f) {
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a->disabled = 1;
	a->wakeup_events = 1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* Parent and child pass one byte back and forth, both on CPU 0. */
static void pingpong(void)
{
	int ab[2], ba[2], status;
	char c = 'x';
	pid_t pid;

	assert_int_equal(pipe(ab), 0);
	assert_int_equal(pipe(ba), 0);
	pin(0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_NAME, "bpfcap_child");
		for (int i = 0; i < ROUNDS; i++) {
			if (i == ROUNDS / 2) /* between switches: the name changes while it runs */
				prctl(PR_SET_NAME, "bpfcap_renamed");
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	child_tid = (uint32_t)pid;
	for (int i = 0; i < ROUNDS; i++) {
		assert_int_equal(write(ab[1], &c, 1), 1);
		assert_int_equal(read(ba[0], &c, 1), 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && !WEXITSTATUS(status));
	close(ab[0]), close(ab[1]), close(ba[0]), close(ba[1]);
}

/*
 * The child's switches: it lives only while the programs are attached (the
 * parent's also happen before and after, when only one side records).
 */
static bool ours(uint32_t tid)
{
	return tid && tid == child_tid;
}

static bool seen_stack(const struct cap *c, uint64_t h)
{
	for (int i = 0; i < c->nr_stacks_seen; i++)
		if (c->stacks_seen[i] == h)
			return true;
	return false;
}

/* Did the ring of @cpu carry stack @h (before now)? */
static bool seen_on(const struct cap *c, uint64_t h, unsigned cpu)
{
	for (int i = 0; i < c->nr_stacks_seen; i++)
		if (c->stacks_seen[i] == h && c->stacks_cpu[i] == cpu)
			return true;
	return false;
}

static int on_bpf(void *ctx, unsigned cpu, const void *data, size_t size)
{
	struct cap *c = ctx;
	const void *raw = data;
	const struct rsp_brec_hdr *h = raw;

	assert_int_equal((uintptr_t)data % 8, 0);
	assert_true(size >= sizeof(*h) && h->size == size && h->size % 8 == 0);
	assert_true(RSP_BREC_IS_TYPE(h->type));
	assert_int_equal(RSP_BREC_TYPE_VERSION(h->type), RSP_BPF_LAYOUT_VERSION);
	assert_int_equal(h->cpu, cpu);
	assert_true(h->time > 0);
	switch (RSP_BREC_TYPE_KIND(h->type)) {
	case RSP_BREC_COMM: {
		const struct rsp_brec_comm *r = raw;

		if (r->tid != child_tid)
			break;
		c->child_comm |= !strcmp(r->comm, "bpfcap_child");
		c->child_renamed |= !strcmp(r->comm, "bpfcap_renamed");
		for (int i = 0; i < c->nr_comms; i++)
			if (c->comms[i].tid == r->tid && c->comms[i].cpu == cpu &&
			    !strncmp(c->comms[i].comm, r->comm, sizeof(c->comms[i].comm))) {
				c->comm_repeats++;
				break;
			}
		if (c->nr_comms < 64) {
			c->comms[c->nr_comms].tid = r->tid;
			c->comms[c->nr_comms].cpu = cpu;
			snprintf(c->comms[c->nr_comms++].comm, sizeof(c->comms[0].comm), "%s",
				 r->comm);
		}
		break;
	}
	case RSP_BREC_STACK: {
		const struct rsp_brec_stack *r = raw;
		const uint64_t *ips = (const uint64_t *)(r + 1);

		assert_true(r->hash && r->nr && sizeof(*r) + r->nr * 8u <= h->size);
		if (r->which == RSP_BSTACK_KERNEL) {
			assert_true(ips[0] >= 0xffff800000000000ull);
			if (getenv("RSP_TEST_PRINT_STACK") && r->nr > 4)
				print_message(
					"kstack %llx %llx %llx %llx %llx\n",
					(unsigned long long)ips[0], (unsigned long long)ips[1],
					(unsigned long long)ips[2], (unsigned long long)ips[3],
					(unsigned long long)ips[4]);
		}
		for (int i = 0; i < c->nr_stacks_seen; i++)
			if (c->stacks_seen[i] == r->hash && c->stacks_cpu[i] == cpu) {
				c->stacks_again++;
				break;
			}
		if (c->nr_stacks_seen < 4096) {
			c->stacks_cpu[c->nr_stacks_seen] = cpu;
			c->stacks_seen[c->nr_stacks_seen++] = r->hash;
		}
		break;
	}
	case RSP_BREC_SWITCH:
	case RSP_BREC_SWITCH_STACK:
	case RSP_BREC_SWITCH_CHECK: {
		const struct rsp_brec_switch *r = raw;
		unsigned kind = RSP_BREC_TYPE_KIND(h->type);

		/* prev is the current task: the header's */
		if (!ours(h->tid) && !ours(r->next_tid))
			break;
		if (c->nr_bpf_sw < MAX_SW)
			c->bpf_sw[c->nr_bpf_sw++] = (struct sw){h->tid, r->next_tid, r->prev_state};
		if (ours(h->tid) && r->prev_state && r->prev_state != 0x100) {
			c->sleeps++;
			if (kind != RSP_BREC_SWITCH &&
			    ((const struct rsp_brec_switch_stack *)raw)->kstack) {
				uint64_t k = ((const struct rsp_brec_switch_stack *)raw)->kstack;

				c->sleeps_with_kstack++;
				c->stack_resolved |= seen_stack(c, k);
				c->kstack_unsent += !seen_on(c, k, cpu);
			}
			if (kind != RSP_BREC_SWITCH && (r->stack_flags & RSP_BSTACKF_KCACHED))
				c->sleeps_cached++;
			if (kind == RSP_BREC_SWITCH_CHECK) {
				const struct rsp_brec_switch_check *k = raw;

				c->sleeps_checked++;
				c->checks_differ += k->kcached != k->ss.kstack;
			}
		}
		break;
	}
	case RSP_BREC_FORK:
		if (((const struct rsp_brec_fork *)raw)->child_tid == child_tid)
			c->child_fork = true;
		break;
	case RSP_BREC_EXIT:
		if (h->tid == child_tid)
			c->child_exit = true;
		break;
	default:
		break;
	}
	return 0;
}

static void on_tp(struct cap *c, const unsigned char *raw, uint32_t size)
{
	int32_t prev, next;
	int64_t state;

	assert_true(size >= 64);
	memcpy(&prev, raw + 24, 4);
	memcpy(&state, raw + 32, 8);
	memcpy(&next, raw + 56, 4);
	if (!ours((uint32_t)prev) && !ours((uint32_t)next))
		return;
	if (c->nr_tp_sw < MAX_SW)
		c->tp_sw[c->nr_tp_sw++] =
			(struct sw){(uint32_t)prev, (uint32_t)next, (uint32_t)state};
}

/* Every ring; samples are {id, pid, tid, time, cpu, res, size, raw}. */
static void drain(struct cap *c)
{
	for (int i = 0; i < c->nr_rings; i++) {
		struct perf_mmap *map = c->maps[i];
		union perf_event *ev;

		if (perf_mmap__read_init(map) < 0)
			continue;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			const uint64_t *w = (const uint64_t *)ev;
			const unsigned char *raw;
			uint32_t size;
			uint16_t type;

			if (ev->header.type != PERF_RECORD_SAMPLE || ev->header.size < 48)
				goto next;
			memcpy(&size, w + 5, 4);
			if (44 + (size_t)size > ev->header.size)
				goto next;
			raw = (const unsigned char *)(w + 5) + 4;
			memcpy(&type, raw, 2);
			/* a tracepoint's raw data starts with its id */
			if (size >= 2 && type == c->tp_type)
				on_tp(c, raw, size);
next:
			perf_mmap__consume(map);
		}
		perf_mmap__read_done(map);
	}
}

static int open_events(struct cap *c)
{
	struct perf_cpu_map *cpus = perf_cpu_map__new(NULL);
	struct perf_thread_map *threads = perf_thread_map__new_dummy();
	struct perf_event_attr a;
	int id = tracefs_id("sched/sched_switch");

	assert_non_null(cpus);
	assert_non_null(threads);
	assert_true(id > 0);
	c->evlist = perf_evlist__new();
	attr_init(&a, PERF_TYPE_TRACEPOINT, (uint64_t)id);
	c->tp = perf_evsel__new(&a);
	perf_evlist__add(c->evlist, c->tp);
	perf_evlist__set_maps(c->evlist, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	if (perf_evlist__open(c->evlist))
		return -1;
	assert_int_equal(perf_evlist__mmap(c->evlist, 2048), 0);
	c->nr_rings =
		rsp_perf_internal__collect_rings(c->evlist, c->maps, c->fds, c->cpus, MAX_CPUS);
	assert_true(c->nr_rings > 0);
	c->tp_type = (uint16_t)id;
	return 0;
}

/* The programs with @o, and a zeroed capture state in *@c; skips where BPF cannot load. */
static struct rsp_bpfcap *open_or_skip(const struct rsp_bpfcap_opts *o, struct cap **c)
{
	char err[512] = "";
	struct rsp_bpfcap *bc;

	*c = calloc(1, sizeof(**c));
	assert_non_null(*c);
	bc = rsp_bpfcap__open(o, err, sizeof(err));
	if (!bc) {
		free(*c);
		skip_unless_machine(err);
	}
	return bc;
}

static void test_switches_match(void **state)
{
	struct cap *c;
	struct rsp_bpfcap_opts o;
	struct rsp_bpfcap *bc;
	struct rsp_bpfcap_stats st;
	char err[512] = "";

	(void)state;
	rsp_bpfcap__opts_init(&o);
	bc = open_or_skip(&o, &c);
	assert_int_equal(open_events(c), 0);
	perf_evlist__enable(c->evlist);
	assert_int_equal(rsp_bpfcap__attach(bc, err, sizeof(err)), 0);
	pingpong();
	assert_true(rsp_bpfcap__consume(bc, on_bpf, c) > 0);
	drain(c); /* both sides read while the child's tid is known */
	/* Again: its stacks were sent; after resend_all they are sent again. */
	{
		struct rsp_bpfcap_stats s1, s2, s3;

		assert_int_equal(rsp_bpfcap__stats(bc, &s1), 0);
		pingpong();
		assert_true(rsp_bpfcap__consume(bc, on_bpf, c) > 0);
		drain(c);
		assert_int_equal(rsp_bpfcap__stats(bc, &s2), 0);
		assert_int_equal(rsp_bpfcap__resend_all(bc), 0);
		pingpong();
		assert_int_equal(rsp_bpfcap__stats(bc, &s3), 0);
		print_message("stacks sent: %llu on a second run, %llu after resend_all\n",
			      (unsigned long long)(s2.stacks - s1.stacks),
			      (unsigned long long)(s3.stacks - s2.stacks));
	}
	rsp_bpfcap__detach(bc);
	perf_evlist__disable(c->evlist);
	rsp_bpfcap__consume(bc, on_bpf, c);
	drain(c);
	assert_int_equal(rsp_bpfcap__stats(bc, &st), 0);
	print_message("bpf: %d switches of the workload, tracepoint: %d; %d sleeps, %d with a "
		      "kernel stack; records %llu, stacks %llu, comms %llu, output errors %llu\n",
		      c->nr_bpf_sw, c->nr_tp_sw, c->sleeps, c->sleeps_with_kstack,
		      (unsigned long long)st.records, (unsigned long long)st.stacks,
		      (unsigned long long)st.comms, (unsigned long long)st.output_errors);
	assert_int_equal(st.output_errors, 0);
	assert_true(c->nr_tp_sw >= 3 * 2 * ROUNDS);
	assert_int_equal(c->nr_bpf_sw, c->nr_tp_sw);
	for (int i = 0; i < c->nr_tp_sw; i++) {
		if (memcmp(&c->bpf_sw[i], &c->tp_sw[i], sizeof(struct sw)))
			fail_msg("switch %d: bpf %u -> %u state 0x%x, tracepoint %u -> %u state "
				 "0x%x",
				 i, c->bpf_sw[i].prev, c->bpf_sw[i].next, c->bpf_sw[i].state,
				 c->tp_sw[i].prev, c->tp_sw[i].next, c->tp_sw[i].state);
	}
	assert_true(c->child_comm);
	/* renamed while running: sent at the switch out of it, and no name twice */
	assert_true(c->child_renamed);
	print_message("the children's names: %d COMM records, %d repeated\n", c->nr_comms,
		      c->comm_repeats);
	assert_int_equal(c->comm_repeats, 0);
	assert_true(c->child_fork);
	assert_true(c->child_exit);
	assert_true(c->sleeps > 0 && c->sleeps_with_kstack == c->sleeps);
	assert_true(c->stack_resolved);
	/* the default policy (cached): most of the same sleeps served from the
	 * cache, and only stacks this CPU's ring carried before */
	print_message("sleeps: %d from the cache, %d checked (%d differed)\n", c->sleeps_cached,
		      c->sleeps_checked, c->checks_differ);
	assert_true(c->sleeps_cached > c->sleeps / 2);
	assert_int_equal(c->kstack_unsent, 0);
	assert_true(st.stack_sites >= (uint64_t)c->sleeps &&
		    st.walks + st.cached == st.stack_sites);
	/* a stack a ring already carried came again only after resend_all */
	print_message("stacks sent again into the same ring: %d\n", c->stacks_again);
	assert_true(c->stacks_again > 0);
	rsp_bpfcap__close(bc);
	perf_evlist__close(c->evlist);
	rsp_perf_internal__delete_evlist(c->evlist);
	free(c);
}

/*
 * --stack-check: every stack walked, none served; every sleep the cache
 * had a key for is a check, compared. pingpong's sleeps are all in the
 * same read() of the same pipe: its checks agree.
 */
static void test_stack_check(void **state)
{
	struct cap *c;
	struct rsp_bpfcap_opts o;
	struct rsp_bpfcap *bc;
	struct rsp_bpfcap_stats st;
	char err[512] = "";

	(void)state;
	rsp_bpfcap__opts_init(&o);
	o.stack_check = true;
	bc = open_or_skip(&o, &c);
	assert_int_equal(rsp_bpfcap__attach(bc, err, sizeof(err)), 0);
	pingpong();
	rsp_bpfcap__detach(bc);
	assert_true(rsp_bpfcap__consume(bc, on_bpf, c) > 0);
	assert_int_equal(rsp_bpfcap__stats(bc, &st), 0);
	print_message("check mode: %d sleeps, %d checked (%d differed); sites %llu, walked %llu, "
		      "kernel checks %llu (%llu differed)\n",
		      c->sleeps, c->sleeps_checked, c->checks_differ,
		      (unsigned long long)st.stack_sites, (unsigned long long)st.walks,
		      (unsigned long long)st.kchecks, (unsigned long long)st.kdiffer);
	assert_int_equal(c->sleeps_cached, 0);
	assert_int_equal(st.cached, 0);
	assert_int_equal(st.walks, st.stack_sites);
	/* every sleep of the workload but the first of each key is a check
	 * (how many of its switches are sleeps, not preemptions, varies) */
	assert_true(c->sleeps_checked + 2 >= c->sleeps);
	assert_true(st.kchecks >= 100 && st.kchecks >= (uint64_t)c->sleeps_checked);
	assert_true(c->checks_differ <= c->sleeps_checked / 10);
	rsp_bpfcap__close(bc);
	free(c);
}

/* A program the verifier refuses: one sentence naming it, and the log. */
static void test_verifier_refusal(void **state)
{
	struct rsp_bpfcap_opts o;
	struct rsp_bpfcap *bc;
	char err[512] = "";

	(void)state;
	rsp_bpfcap__opts_init(&o);
	bc = rsp_bpfcap__open(&o, err, sizeof(err));
	if (!bc)
		skip_unless_machine(err);
	rsp_bpfcap__close(bc);
	o.force_verifier_failure = true;
	assert_null(rsp_bpfcap__open(&o, err, sizeof(err)));
	print_message("%s\n", err);
	assert_non_null(strstr(err, "verifier refused rsp's BPF program rsp_sched_switch"));
	assert_non_null(strstr(err, "--capture perf"));
	assert_true(strlen(rsp_bpfcap__verifier_log()) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switches_match),
		cmocka_unit_test(test_stack_check),
		cmocka_unit_test(test_verifier_refusal),
	};

	if (geteuid()) {
		printf("SKIP: test_bpfcap loads BPF programs and opens perf events: run as root\n");
		return 0;
	}
	libperf_init(NULL); /* its page size, for the rings */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
