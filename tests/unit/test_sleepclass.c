// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/timeline/sleepclass.c and the table tracepoints/sleep_reasons.def. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <rsp/sleepclass.h>
#include "kallsyms_fake.h"

/* The table, by name: a few functions per reason and some that match nothing. */
static void test_names(void **state)
{
	static const struct {
		const char *name;
		enum rsp_sleep_reason reason;
	} cases[] = {
		{"io_schedule", RSP_SR_BLOCK_IO},
		{"io_schedule_timeout", RSP_SR_BLOCK_IO},
		{"blk_mq_get_tag", RSP_SR_BLOCK_IO},
		{"submit_bio_wait", RSP_SR_BLOCK_IO},
		{"jbd2_log_wait_commit", RSP_SR_BLOCK_IO},
		{"ext4_sync_file", RSP_SR_BLOCK_IO},
		{"folio_wait_bit_common", RSP_SR_BLOCK_IO},
		{"futex_wait_queue", RSP_SR_LOCK},
		{"__mutex_lock", RSP_SR_LOCK},
		{"rwsem_down_write_slowpath", RSP_SR_LOCK},
		{"do_sys_poll", RSP_SR_POLL},
		{"do_select", RSP_SR_POLL},
		{"ep_poll", RSP_SR_POLL},
		{"pipe_read", RSP_SR_PIPE},
		{"anon_pipe_read", RSP_SR_PIPE},
		{"pipe_wait_readable", RSP_SR_PIPE},
		{"do_nanosleep", RSP_SR_SLEEP},
		{"hrtimer_nanosleep", RSP_SR_SLEEP},
		{"__x64_sys_clock_nanosleep", RSP_SR_SLEEP},
		{"schedule_timeout", RSP_SR_TIMER},
		{"schedule_hrtimeout_range", RSP_SR_TIMER},
		{"tcp_recvmsg", RSP_SR_NETWORK},
		{"inet_csk_accept", RSP_SR_NETWORK},
		{"sk_wait_data", RSP_SR_NETWORK},
		{"unix_stream_read_generic", RSP_SR_NETWORK},
		{"handle_mm_fault", RSP_SR_PAGE_FAULT},
		{"filemap_fault", RSP_SR_PAGE_FAULT},
		{"schedule", RSP_SR_UNKNOWN},
		{"do_wait", RSP_SR_UNKNOWN},
		{"worker_thread", RSP_SR_UNKNOWN},
		{"", RSP_SR_UNKNOWN},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int prio;

		if (rsp_sleepclass__match_name(cases[i].name, &prio) != cases[i].reason)
			fail_msg("%s: expected %s", cases[i].name,
				 rsp_sleep_reason__name(cases[i].reason));
		assert_true((prio >= 0) == (cases[i].reason != RSP_SR_UNKNOWN));
	}
}

/* Priorities: a page fault beats the I/O it waits on; a lock beats ext4. */
static void test_priority(void **state)
{
	int fault, io, lock, ext4, pipe;

	rsp_sleepclass__match_name("handle_mm_fault", &fault);
	rsp_sleepclass__match_name("io_schedule", &io);
	rsp_sleepclass__match_name("mutex_lock", &lock);
	rsp_sleepclass__match_name("ext4_file_write_iter", &ext4);
	rsp_sleepclass__match_name("anon_pipe_read", &pipe);
	assert_true(fault < io);
	assert_true(lock < ext4);
	assert_true(lock < pipe);
}

static void test_names_stable(void **state)
{
	assert_string_equal(rsp_sleep_reason__name(RSP_SR_BLOCK_IO), "block_io");
	assert_string_equal(rsp_sleep_reason__name(RSP_SR_PREEMPT), "preemption");
	assert_string_equal(rsp_sleep_reason__name(RSP_SR_TIMER), "timeout");
	assert_string_equal(rsp_sleep_reason__name(RSP_SR__NR), "unknown");
}

static enum rsp_sleep_reason classify(struct rsp_sleepclass *sc, int64_t state, const uint64_t *c,
				      uint64_t n)
{
	return rsp_sleepclass__classify(sc, state, c, n);
}

static void test_classify(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_ksyms *ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	struct rsp_sleepclass *sc = rsp_sleepclass__new(ks), *none = rsp_sleepclass__new(NULL);
	const uint64_t io[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_IO_SCHEDULE + 0x10,
			       K_FOLIO_WAIT + 0x30, K_EXT4_SYNC + 8,   PERF_CONTEXT_USER,
			       0x7f0000001000ull};
	const uint64_t fault_io[] = {PERF_CONTEXT_KERNEL, K_IO_SCHEDULE + 0x10, K_MM_FAULT + 4};
	/* user frames never match, even at kernel-looking addresses */
	const uint64_t user_only[] = {PERF_CONTEXT_USER, K_IO_SCHEDULE + 0x10};
	const uint64_t unknown[] = {PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_KSYS_READ + 1};

	assert_non_null(ks);
	assert_int_equal(classify(sc, 2, io, 7), RSP_SR_BLOCK_IO);
	/* the same stack again comes from the cache */
	assert_int_equal(classify(sc, 2, io, 7), RSP_SR_BLOCK_IO);
	assert_int_equal(classify(sc, 2, fault_io, 3), RSP_SR_PAGE_FAULT);
	assert_int_equal(classify(sc, 1, user_only, 2), RSP_SR_UNKNOWN);
	assert_int_equal(classify(sc, 1, unknown, 3), RSP_SR_UNKNOWN);
	/* runnable at switch-out: preempted (0x100) or yielded (0), whatever the stack */
	assert_int_equal(classify(sc, 0x100, io, 7), RSP_SR_PREEMPT);
	assert_int_equal(classify(sc, 0, NULL, 0), RSP_SR_PREEMPT);
	assert_int_equal(classify(sc, 1, NULL, 0), RSP_SR_UNKNOWN);
	/* without symbols, a real sleep is unknown */
	assert_int_equal(classify(none, 2, io, 7), RSP_SR_UNKNOWN);
	assert_int_equal(classify(none, 0x100, io, 7), RSP_SR_PREEMPT);
	rsp_sleepclass__delete(sc);
	rsp_sleepclass__delete(none);
	rsp_sleepclass__delete(NULL);
	rsp_ksyms__delete(ks);
	rsp_buf__exit(&err);
}

/*
 * Whole stacks are remembered (a small direct-mapped table): 600 distinct
 * stacks, more than it holds and some longer than it keeps, each asked
 * twice, in two rounds, with the reason each one's frames give.
 */
static void test_classify_memo(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_ksyms *ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	struct rsp_sleepclass *sc = rsp_sleepclass__new(ks);
	static const uint64_t reason_frame[3] = {K_IO_SCHEDULE + 0x10, K_MM_FAULT + 4,
						 K_KSYS_READ + 1};
	static const enum rsp_sleep_reason want[3] = {RSP_SR_BLOCK_IO, RSP_SR_PAGE_FAULT,
						      RSP_SR_UNKNOWN};
	uint64_t c[64];

	assert_non_null(ks);
	for (int round = 0; round < 2; round++)
		for (unsigned j = 0; j < 600; j++) {
			unsigned n = 0;

			c[n++] = PERF_CONTEXT_KERNEL;
			c[n++] = K_SCHEDULE + 1 + j; /* inside schedule(): matches nothing */
			for (unsigned k = 0; k < j % 40; k++)
				c[n++] = K_SCHEDULE + 0x20;
			c[n++] = reason_frame[j % 3];
			c[n++] = PERF_CONTEXT_USER;
			c[n++] = K_IO_SCHEDULE + 0x10; /* a user frame: never matches */
			assert_int_equal(classify(sc, 2, c, n), want[j % 3]);
			assert_int_equal(classify(sc, 2, c, n), want[j % 3]);
			assert_int_equal(classify(sc, 0x100, c, n), RSP_SR_PREEMPT);
		}
	rsp_sleepclass__delete(sc);
	rsp_ksyms__delete(ks);
	rsp_buf__exit(&err);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_names_stable),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_classify_memo),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
