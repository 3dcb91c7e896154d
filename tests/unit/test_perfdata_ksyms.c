// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel symbols a dump carries: the writer puts in the file only the
 * symbols its records need (rsp_ksyms__mark()), and an offline timeline
 * must reach the same answers as a live one. Records built with the golden
 * formats of every catalogued event (tests/support/synth), a known
 * kallsyms (kallsyms_fake.h), written as perf.data and read back.
 *
 * Known answers: a callchain address is named as live; hrtimer_start's
 * callback, a kernel address in a field that no callchain holds, is named
 * too (the timeline tells a sleeper's timeout by it being hrtimer_wakeup);
 * a symbol nothing refers to is not in the file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <rsp/query.h>
#include "kallsyms_fake.h"
#include "pd_fixture.h"
#include "support/synth.h"

/* Write @s's window as perf.data with @ks, the tracing data of every golden format. */
static unsigned char *write_dump(struct synth *s, const struct rsp_ksyms *ks, size_t *len)
{
	struct rsp_buf td = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_perfdata_meta m;
	struct rsp_pdwriter *pw;
	FILE *f = tmpfile();
	unsigned char *buf;
	long size;

	assert_non_null(f);
	assert_int_equal(fx_golden_meta(&m, &td), 0);
	m.ksyms = ks;
	pw = rsp_pdwriter__new(fileno(f), s->schema, &m, &err);
	if (!pw)
		fail_msg("writer: %s", err.data);
	assert_int_equal(rsp_pdwriter__window(pw, s->window, 0, UINT64_MAX), 0);
	assert_int_equal(rsp_pdwriter__finish(pw), 0);
	rsp_pdwriter__delete(pw);
	size = ftell(f);
	assert_true(size > 0);
	buf = malloc((size_t)size);
	assert_non_null(buf);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	rsp_buf__exit(&td);
	rsp_buf__exit(&err);
	*len = (size_t)size;
	return buf;
}

static const char *name_at(const struct rsp_ksyms *ks, uint64_t addr)
{
	const struct rsp_ksym *k = rsp_ksyms__find(ks, addr, NULL);

	return k ? k->name : "(none)";
}

static void test_field_symbols(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct synth *s = synth__new(2, 1 << 20);
	struct rsp_ksyms *ks =
		rsp_ksyms__new_from_text(fake_kallsyms, sizeof(fake_kallsyms) - 1, &err);
	uint64_t chain[] = {K_SCHEDULE + 0x10, K_POLL + 0x40};
	struct rsp_perfdata *pd;
	struct rsp_source src;
	unsigned char *file;
	size_t len;

	(void)state;
	assert_non_null(s);
	assert_non_null(ks);
	/* A poller arms its timeout (callback hrtimer_wakeup), then sleeps in poll. */
	synth__hrtimer_start(s, .cpu = 0, .t = 1000, .tid = 10, .fn = K_HRTIMER_WAKEUP,
			     .expires = 5000);
	synth__switch(s, .cpu = 0, .t = 2000, .prev = 10, .prev_comm = "poller", .state = 1,
		      .next = 0, .chain = chain, .nr = 2);
	file = write_dump(s, ks, &len);

	pd = rsp_perfdata__parse(file, len, "ksyms.data", &err);
	if (!pd)
		fail_msg("parse: %s", err.data);
	if (rsp_perfdata__source(pd, &src, &err))
		fail_msg("source: %s", err.data);
	assert_non_null(src.ksyms);
	assert_string_equal(name_at(src.ksyms, K_SCHEDULE + 0x10 - 1), "schedule");
	assert_string_equal(name_at(src.ksyms, K_POLL + 0x40 - 1), "do_sys_poll");
	/* In a field only: must be in the file all the same. */
	assert_string_equal(name_at(src.ksyms, K_HRTIMER_WAKEUP), "hrtimer_wakeup");
	/* Referred to by nothing: left out (the address falls to the symbol before). */
	assert_string_not_equal(name_at(src.ksyms, K_PIPE_READ + 8), "anon_pipe_read");

	rsp_perfdata__delete(pd);
	free(file);
	rsp_ksyms__delete(ks);
	synth__delete(s);
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_symbols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
