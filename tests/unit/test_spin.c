// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/analysis/spin.c (busy waiting from cpu-clock samples)
 * and of its use by the snapshot: hand-built samples and stacks, named by
 * the real symbolizer from a kallsyms text (kernel) and a perf-PID.map
 * (user functions at made-up addresses: a JIT map is the one user symbol
 * source that needs no ELF file), so that every frame's name is known.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <rsp/maps.h>
#include <rsp/samples.h>
#include <rsp/snapshot.h>
#include <rsp/spin.h>
#include <rsp/symbols.h>
#include <rsp/tlstore.h>

#define US  1000ull
#define PID 4343u
#define K   (uint64_t) PERF_CONTEXT_KERNEL
#define U   (uint64_t) PERF_CONTEXT_USER

static const char kallsyms[] = "ffffffff81000000 T _text\n"
			       "ffffffff81000100 t do_sched_yield\n"
			       "ffffffff81000200 T __x64_sys_sched_yield\n"
			       "ffffffff81000300 T _raw_spin_lock\n"
			       "ffffffff81000400 T entry_SYSCALL_64\n"
			       "ffffffff81000500 T _etext\n";

/* user functions: at 0x7f0000001000 + 0x100 * i, 0x100 bytes each */
static const char *const user_fns[] = {
	"pthread_spin_lock",
	"__sched_yield",
	"main",
	"work",
	"cpu_relax",
	"my_spin_wait",
	"a",
	"b",
	"c",
	"pthread_mutex_lock",
};

static uint64_t fn(const char *name)
{
	for (size_t i = 0; i < sizeof(user_fns) / sizeof(user_fns[0]); i++)
		if (!strcmp(user_fns[i], name))
			return 0x7f0000001000ull + 0x100 * i;
	fail_msg("no function %s", name);
	return 0;
}

struct fix {
	char dir[64];
	struct rsp_symbolizer *sym;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct rsp_map_info anon = {.start = 0x7f0000000000ull,
				    .end = 0x7f0000100000ull,
				    .prot = PROT_EXEC,
				    .path = "//anon",
				    .path_len = 6};
	struct rsp_buf err = RSP_BUF_INIT;
	char path[128];
	FILE *fp;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/rsp_spin_test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/perf-%u.map", f->dir, PID);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (size_t i = 0; i < sizeof(user_fns) / sizeof(user_fns[0]); i++)
		fprintf(fp, "%llx 100 %s\n", (unsigned long long)fn(user_fns[i]), user_fns[i]);
	fclose(fp);
	f->sym = rsp_symbolizer__new(
		&(struct rsp_symbolizer_config){.kallsyms = "", .jit_dir = f->dir});
	assert_non_null(f->sym);
	assert_int_equal(rsp_symbolizer__set_kallsyms(f->sym, kallsyms, strlen(kallsyms), &err), 0);
	rsp_buf__exit(&err);
	assert_int_equal(rsp_maps__mmap(rsp_symbolizer__maps(f->sym), PID, 1, &anon), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/perf-%u.map", f->dir, PID);
	unlink(path);
	rmdir(f->dir);
	rsp_symbolizer__delete(f->sym);
	free(f);
	return 0;
}

static const char *classify(struct fix *f, const struct rsp_spin *sp, unsigned flags,
			    const uint64_t *chain, uint32_t nr)
{
	/* the sampled ip is the chain's first frame */
	return rsp_spin__sample(sp, f->sym, flags, PID, 2, chain[1], chain, nr);
}

static void test_table(void **state)
{
	static const char *const extra[] = {"my_spin_wait"};
	struct rsp_spin none = {0}, sp = {.extra = extra, .nr_extra = 1};

	(void)state;
	assert_string_equal(rsp_spin__match(&none, "pthread_spin_lock"), "pthread_spin_lock");
	assert_string_equal(rsp_spin__match(&none, "__sched_yield"), "__sched_yield");
	assert_null(rsp_spin__match(&none, "pthread_spin_unlock"));
	assert_null(rsp_spin__match(&none, "pthread_mutex_lock")); /* see spin.c */
	assert_null(rsp_spin__match(&none, "my_spin_wait"));
	assert_null(rsp_spin__match(&none, NULL));
	assert_ptr_equal(rsp_spin__match(&sp, "my_spin_wait"), extra[0]);
	for (size_t i = 0; rsp_spin__default_at(i); i++)
		assert_non_null(rsp_spin__match(NULL, rsp_spin__default_at(i)));
}

/* Where the sample lands, and its first user frames. */
static void test_frames(void **state)
{
	struct fix *f = *state;
	static const char *const extra[] = {"my_spin_wait"};
	struct rsp_spin sp = {0}, more = {.extra = extra, .nr_extra = 1};
	/* the spin loop itself, sampled in user mode */
	const uint64_t in_lock[] = {U, fn("pthread_spin_lock") + 8, fn("main") + 0x20};
	/* sched_yield: the leaf is the kernel's, the first user frame libc's wrapper */
	const uint64_t yield[] = {
		K, 0xffffffff81000110ull,   0xffffffff81000210ull, 0xffffffff81000410ull,
		U, fn("__sched_yield") + 9, fn("work") + 0x30};
	/* a spin loop three user frames up: counted; four: not (a caller of a lock) */
	const uint64_t third[] = {U, fn("a") + 1, fn("b") + 5, fn("pthread_spin_lock") + 5};
	const uint64_t fourth[] = {U, fn("a") + 1, fn("b") + 5, fn("c") + 5,
				   fn("pthread_spin_lock") + 5};
	/* a kernel spin lock: not in the table */
	const uint64_t kspin[] = {K, 0xffffffff81000310ull, U, fn("work") + 3};
	const uint64_t kfault[] = {K, 0xffffffff81000310ull, U, fn("pthread_spin_lock") + 5};
	/* a user's own spin function calling a helper: the extra name */
	const uint64_t own[] = {U, fn("cpu_relax") + 2, fn("my_spin_wait") + 0x11, fn("main") + 4};
	/* a return address just past a call at a function's end names that function */
	const uint64_t edge[] = {U, fn("work") + 1, fn("__sched_yield") + 0x100};
	const uint64_t work[] = {U, fn("work") + 1, fn("main") + 4};

	assert_string_equal(classify(f, &sp, 0, in_lock, 3), "pthread_spin_lock");
	assert_string_equal(classify(f, &sp, 0, yield, 7), "__sched_yield");
	assert_string_equal(classify(f, &sp, 0, third, 4), "pthread_spin_lock");
	assert_null(classify(f, &sp, 0, fourth, 5));
	assert_null(classify(f, &sp, 0, kspin, 4));
	/* taken in the kernel elsewhere than sched_yield: its user frames are not named */
	assert_null(classify(f, &sp, 0, kfault, 4));
	assert_null(classify(f, &sp, 0, own, 4));
	assert_string_equal(classify(f, &more, 0, own, 4), "my_spin_wait");
	assert_string_equal(classify(f, &sp, 0, edge, 3), "__sched_yield");
	assert_null(classify(f, &sp, 0, work, 3));
	/* the user frames alone (top has named the sampled function): not the leaf again */
	assert_null(rsp_spin__user(&sp, f->sym, 0, PID, 2, in_lock[1], in_lock, 3));
	assert_string_equal(rsp_spin__user(&sp, f->sym, 0, PID, 2, yield[1], yield, 7),
			    "__sched_yield");
	/* no callchain: the sampled function alone */
	assert_string_equal(
		rsp_spin__sample(&sp, f->sym, 0, PID, 2, fn("pthread_spin_lock"), NULL, 0),
		"pthread_spin_lock");
	assert_null(rsp_spin__sample(&sp, f->sym, 0, PID, 2, 0xffffffff81000110ull, NULL, 0));
	/* another user's process: its frames have no names, so nothing spins */
	assert_null(classify(f, &sp, RSP_SYM_HIDE_USER, in_lock, 3));
	assert_null(classify(f, &sp, RSP_SYM_HIDE_USER, yield, 7));
	/* an unmapped address is no spin loop */
	assert_null(rsp_spin__sample(&sp, f->sym, 0, PID, 2, 0x1000, NULL, 0));
}

static void seg(struct rsp_tlstore *st, struct rsp_timeline_ops *ops, uint8_t kind, uint64_t a,
		uint64_t z)
{
	static const uint64_t stack[] = {K, 0xffffffff81000110ull, U, 0x7f0000001310ull};
	struct rsp_segment s;

	memset(&s, 0, sizeof(s));
	s.tid = s.tgid = PID;
	s.kind = kind;
	s.start = a * US;
	s.end = z * US;
	if (kind == RSP_SEG_SLEEP) {
		s.reason = RSP_SR_TIMER;
		s.waker.kind = RSP_WAKER_TIMER;
		s.waker.time = s.end;
		s.stack = stack;
		s.nr_stack = 4;
	}
	ops->segment(st, &s, "spinner");
}

/*
 * The snapshot: a thread runs 0-300 us with three samples, one in
 * pthread_spin_lock, one yielding, one at work, then sleeps. Each sample
 * holds a third of the run: 200 us busy waiting, 100 us understood; with
 * no table (the raw view), all 300 understood.
 */
static void test_snapshot(void **state)
{
	struct fix *f = *state;
	const uint64_t lock[] = {U, fn("pthread_spin_lock") + 8, fn("main") + 0x20};
	const uint64_t yield[] = {K, 0xffffffff81000110ull, U, fn("__sched_yield") + 9};
	const uint64_t work[] = {U, fn("work") + 1, fn("main") + 4};
	const uint64_t *chains[] = {lock, yield, work};
	const uint32_t nrs[] = {3, 4, 3};
	struct rsp_spin sp = {0};

	for (int raw = 0; raw < 2; raw++) {
		struct rsp_tlstore *st = rsp_tlstore__new(0);
		struct rsp_samples *sm = rsp_samples__new();
		struct rsp_snapshot_opts o;
		struct rsp_timeline_ops ops;
		struct rsp_buf err = RSP_BUF_INIT;
		const struct rsp_snapshot_totals *t;
		struct rsp_snapshot *s;

		assert_non_null(st);
		assert_non_null(sm);
		rsp_tlstore__ops(&ops);
		seg(st, &ops, RSP_SEG_RUN, 0, 300);
		seg(st, &ops, RSP_SEG_SLEEP, 300, 400);
		for (int i = 0; i < 3; i++) {
			struct rsp_csample c = {.time = (uint64_t)(50 + 100 * i) * US,
						.ip = chains[i][1],
						.tid = PID,
						.pid = PID,
						.nr_chain = nrs[i],
						.chain = chains[i]};

			assert_int_equal(rsp_samples__add(sm, &c), 0);
		}
		assert_int_equal(rsp_tlstore__seal(st, 0, 400 * US), 0);
		assert_int_equal(rsp_samples__seal(sm), 0);
		rsp_snapshot_opts__init(&o);
		o.pid = PID;
		o.sym = f->sym;
		o.spin = raw ? NULL : &sp;
		s = rsp_snapshot__new(st, sm, &o, &err);
		if (!s)
			fail_msg("snapshot: %s", err.data);
		t = rsp_snapshot__totals(s);
		assert_int_equal(t->cat_ns[RSP_CAT_SPIN], raw ? 0 : 200 * US);
		assert_int_equal(t->cat_ns[RSP_CAT_UNDERSTOOD], raw ? 300 * US : 100 * US);
		for (uint32_t i = 0; i < rsp_snapshot__nr_nodes(s); i++) {
			const struct rsp_snode *n = rsp_snapshot__node(s, i);

			if (n->kind == RSP_SN_SAMPLE)
				assert_int_equal(n->spin,
						 !raw && n->self_ns[RSP_CAT_SPIN] == 100 * US);
		}
		assert_string_equal(rsp_cat__name(RSP_CAT_SPIN), "spin");
		assert_string_equal(rsp_cat__label(RSP_CAT_SPIN), "busy waiting (spin)");
		rsp_snapshot__delete(s);
		rsp_samples__delete(sm);
		rsp_tlstore__delete(st);
		rsp_buf__exit(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test_setup_teardown(test_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
