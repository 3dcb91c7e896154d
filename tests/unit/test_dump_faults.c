// SPDX-License-Identifier: GPL-2.0
/*
 * The dump path under failing I/O (tests/support/failio.h): a window
 * written as perf.data through rsp_outfile (what rspd does for `rspctl dump
 * -o FILE` and for the dump directory), with each openat, write, pwrite,
 * fsync, close, renameat2 and linkat failing in turn. Every run either
 * succeeds whole or fails with a sentence, leaves the old file as it was
 * (or no file, for a new one), leaves no temp file, and leaks nothing (the
 * ASan build's leak check).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <rsp/file.h>
#include <rsp/perfdata.h>
#include "pd_fixture.h"
#include "support/failio.h"
#include "support/synth.h"

#define OLD	 "the old dump\n"
#define MAX_RUNS 10000

static char dir[] = "/tmp/rsp-test-dump-faults.XXXXXX";

struct job {
	struct synth *s;
	struct rsp_perfdata_meta m;
	char path[300];
};

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static bool holds(const char *path, const char *want, size_t len)
{
	char buf[64] = {0};
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	if (f)
		fclose(f);
	return n >= len && !memcmp(buf, want, len);
}

/* One dump as rspd writes it: temp file, records, commit; abort on error. */
static int dump(struct job *j, unsigned flags, struct rsp_buf *err)
{
	struct rsp_outfile f;
	struct rsp_pdwriter *w;
	int ret = rsp_outfile__open(&f, j->path, flags, err);

	if (ret)
		return ret;
	w = rsp_pdwriter__new(f.fd, j->s->schema, &j->m, err);
	ret = w ? rsp_pdwriter__comm(w, 42, 42, "worker") : -errno;
	if (!ret)
		ret = rsp_pdwriter__window(w, j->s->window, 0, UINT64_MAX);
	if (!ret)
		ret = rsp_pdwriter__finish(w);
	rsp_pdwriter__delete(w);
	if (ret) {
		rsp_outfile__abort(&f);
		return ret;
	}
	return rsp_outfile__commit(&f, err);
}

/* Fail the nth call; check the outcome. @replace: an old file is there. */
static bool run_once(struct job *j, unsigned long nth, bool replace)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int ret;

	unlink(j->path);
	if (replace) {
		FILE *f = fopen(j->path, "w");

		assert_non_null(f);
		fputs(OLD, f);
		fclose(f);
	}
	failio__arm(nth);
	ret = dump(j, replace ? 0 : RSP_FILE_NOREPLACE, &err);
	failio__arm(0);
	if (!failio__failed()) {
		if (ret)
			fail_msg("run %lu: %d (%s) with no failure injected", nth, ret,
				 err.data ? err.data : "");
		assert_true(holds(j->path, "PERFILE2", 8));
		assert_int_equal(entries(), 1);
		rsp_buf__exit(&err);
		return false;
	}
	/*
	 * A failed fsync or close of the directory after the rename is not the
	 * dump's failure: the file is there whole.
	 */
	if (!ret) {
		if (strcmp(failio__what(), "fsync") && strcmp(failio__what(), "close"))
			fail_msg("run %lu: %s failed, yet the dump succeeded", nth, failio__what());
		assert_true(holds(j->path, "PERFILE2", 8));
	} else {
		if (!err.len && ret != -EIO)
			fail_msg("run %lu (%s): %d without a sentence", nth, failio__what(), ret);
		if (replace)
			assert_true(holds(j->path, OLD, strlen(OLD)));
		else
			assert_int_equal(access(j->path, F_OK), -1);
	}
	if (entries() != (replace || !ret ? 1 : 0))
		fail_msg("run %lu (%s failed): %d files left", nth, failio__what(), entries());
	rsp_buf__exit(&err);
	return true;
}

static void each(struct job *j, bool replace)
{
	unsigned long nth;

	for (nth = 1; nth <= MAX_RUNS && run_once(j, nth, replace); nth++)
		;
	/* Several calls failed in turn, then a run passed. */
	assert_true(nth > 5 && nth <= MAX_RUNS);
	print_message("%s: %lu calls failed in turn\n", replace ? "replace" : "new file", nth - 1);
}

static void test_dump_faults(void **state)
{
	struct rsp_buf td = RSP_BUF_INIT;
	struct job j = {.s = synth__new(2, 1u << 20)};

	assert_int_equal(fx_golden_meta(&j.m, &td), 0);
	for (int i = 0; i < 2000; i++)
		synth__switch(j.s, .cpu = (unsigned)(i % 2), .t = 1000 + 100 * (uint64_t)i,
			      .prev_tgid = 42, .prev = 42, .prev_comm = "worker", .state = 1,
			      .next = 43, .next_comm = "other");
	assert_non_null(mkdtemp(dir));
	snprintf(j.path, sizeof(j.path), "%s/x.perf.data", dir);
	each(&j, true);	 /* -o over an existing regular file */
	each(&j, false); /* a new name in the dump directory */
	unlink(j.path);
	rmdir(dir);
	synth__delete(j.s);
	rsp_buf__exit(&td);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
