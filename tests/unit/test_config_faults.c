// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation-failure injection (support/failalloc.h) over rspd's
 * configuration reader (daemon/config.c): the start's load (the command
 * line, then the file, then the command line again over it) and a reload's
 * read, each with its 1st, 2nd, ... allocation failing until one runs to
 * the end. A run either gives the configuration the run that failed nothing
 * gives, or refuses in one sentence (in @err, or on stderr for what the
 * command line's parser says); the ASan build's leak check finds what a
 * failure leaks.
 */
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
#include "config.h"
#include "support/failalloc.h"

#define MAX_RUNS 1000

static const char conf[] = "# a file with a value in each section a test can check\n"
			   "[window]\nwindow = 32M\n"
			   "[control]\nquery-memory = 128M\n"
			   "[metrics]\nmetrics-connections = 4\nmetrics-timeout = 3s\n";

struct run {
	char dir[64], path[128];
	char *argv[8];
	int argc;
	struct rspd_config ref, got; /* large: not on the stack */
	bool reload;
};

/* Whatever rspd prints on stderr meanwhile, into @said. */
static int stderr_to(const char *file)
{
	int saved = dup(2), fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	return saved;
}

static void stderr_back(int saved, const char *file, char *said, size_t n)
{
	FILE *f;
	size_t got = 0;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(file, "r");
	if (f) {
		got = fread(said, 1, n - 1, f);
		fclose(f);
	}
	said[got] = '\0';
}

/* One line, no line break inside. */
static bool one_sentence(const char *s)
{
	const char *nl = strchr(s, '\n');

	return *s && (!nl || !nl[1]);
}

static int once(struct run *r, char *err, size_t n)
{
	if (r->reload)
		return rspd_config__read(&r->got, err, n) ? RSPD_CONFIG_BAD : RSPD_CONFIG_RUN;
	return (int)rspd_config__load(&r->got, r->argc, r->argv, err, n);
}

static void load_once(void *ctx, unsigned long nth)
{
	struct run *r = ctx;
	char err[1024] = "", said[1024], out[160];
	int saved, res;

	snprintf(out, sizeof(out), "%s/stderr", r->dir);
	saved = stderr_to(out);
	failalloc__arm(nth);
	res = once(r, err, sizeof(err));
	failalloc__disarm();
	stderr_back(saved, out, said, sizeof(said));
	if (res == RSPD_CONFIG_RUN) {
		if (memcmp(&r->got, &r->ref, sizeof(r->got)))
			fail_msg("%s: allocation %lu: read, but not as the reference",
				 r->reload ? "read" : "load", nth);
		return;
	}
	if (!failalloc__failed())
		fail_msg("load: %d with nothing failed: %s%s", res, err, said);
	if (!(res == RSPD_CONFIG_BAD && one_sentence(err)) &&
	    !(res == RSPD_CONFIG_USAGE && one_sentence(said)))
		fail_msg("%s: allocation %lu: %d, not one sentence: '%s' '%s'",
			 r->reload ? "read" : "load", nth, res, err, said);
}

static void test_config_faults(void **state)
{
	struct run *r = calloc(1, sizeof(*r));
	char err[1024] = "", cmd[160];
	unsigned long runs;
	FILE *f;

	(void)state;
	assert_non_null(r);
	snprintf(r->dir, sizeof(r->dir), "/tmp/rsp-config-faults.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/rspd.conf", r->dir);
	f = fopen(r->path, "w");
	assert_non_null(f);
	fputs(conf, f);
	fclose(f);
	r->argv[r->argc++] = "rspd";
	r->argv[r->argc++] = "--config";
	r->argv[r->argc++] = r->path;
	r->argv[r->argc++] = "--metrics-timeout";
	r->argv[r->argc++] = "5s";
	assert_int_equal(rspd_config__load(&r->ref, r->argc, r->argv, err, sizeof(err)),
			 RSPD_CONFIG_RUN);
	assert_int_equal((int)r->ref.metrics_connections, 4);	 /* the file's */
	assert_true(r->ref.metrics_timeout_ns == 5000000000ull); /* the command line's */
	runs = failalloc__each(load_once, r, MAX_RUNS);
	print_message("load: %lu runs\n", runs);
	assert_true(runs > 1);
	/* a reload's read, over the command line the last load kept */
	r->reload = true;
	runs = failalloc__each(load_once, r, MAX_RUNS);
	print_message("read: %lu runs\n", runs);
	assert_true(runs > 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r->dir);
	assert_int_equal(system(cmd), 0);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_faults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
