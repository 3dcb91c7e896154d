// SPDX-License-Identifier: GPL-2.0
/*
 * Every rspctl command and every option it accepts (its own and the common
 * ones it allows) appears in the command's help text ('rspctl help CMD')
 * and in the man page man/rspctl.8. The option tables are the truth; the
 * help and the man page are written by hand, so this keeps them honest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "internal/query.h"

static char *man;

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* In roff a '-' is written '\-': "--pid" is "\-\-pid". */
static void roff(const char *s, char *out, size_t n)
{
	size_t k = 0;

	for (; *s && k + 3 < n; s++) {
		if (*s == '-')
			out[k++] = '\\';
		out[k++] = *s;
	}
	out[k] = '\0';
}

static void test_every_option_in_help_and_man(void **state)
{
	const struct rsp_command *c;
	char want[128], r[256];
	int checked = 0;

	for (size_t i = 0; (c = rsp_query__command_at(i)); i++) {
		const char *name;

		snprintf(want, sizeof(want), ".SS %s\n", c->name);
		if (!strstr(man, want))
			fail_msg("man/rspctl.8 has no '.SS %s' section", c->name);
		for (size_t j = 0; (name = rsp_request__option_at(c, j)); j++) {
			snprintf(want, sizeof(want), "--%s", name);
			if (!strstr(c->usage, want))
				fail_msg("'rspctl help %s' does not mention %s", c->name, want);
			roff(want, r, sizeof(r));
			if (!strstr(man, r))
				fail_msg("man/rspctl.8 does not mention %s (of %s)", want, c->name);
			checked++;
		}
	}
	assert_true(checked > 0);
}

static void test_usage_is_under_80_columns(void **state)
{
	const struct rsp_command *c;

	for (size_t i = 0; (c = rsp_query__command_at(i)); i++) {
		const char *p = c->usage;

		while (*p) {
			size_t len = strcspn(p, "\n");

			if (len >= 80)
				fail_msg("'rspctl help %s' has a line of %zu columns", c->name,
					 len);
			p += len + (p[len] == '\n');
		}
	}
}

int main(void)
{
	const char *src = getenv("RSP_SOURCE");
	char path[4096];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_in_help_and_man),
		cmocka_unit_test(test_usage_is_under_80_columns),
	};
	int ret;

	snprintf(path, sizeof(path), "%s/man/rspctl.8", src ? src : "../..");
	man = read_file(path);
	if (!man) {
		fprintf(stderr, "cannot read %s (set RSP_SOURCE)\n", path);
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	free(man);
	return ret;
}
