// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of rsp/file.h: what is at a user-named path is never destroyed
 * unless it is a regular file, a link planted there is not followed, a FIFO
 * never blocks a reader or a writer, and a failed write leaves nothing.
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
#include <sys/file.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <rsp/file.h>
#include <rsp/perfdata.h>

static char dir[] = "/tmp/rsp-test-file.XXXXXX";

static const char *at(const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

/* Entries of the directory besides . and .. (no temp file left behind). */
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

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_new_and_regular(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct stat st;

	assert_int_equal(rsp_file__write(at("a"), "one", 3, 0, &err), 0);
	assert_string_equal(slurp(at("a")), "one");
	assert_int_equal(stat(at("a"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* A regular file is replaced whole. */
	assert_int_equal(rsp_file__write(at("a"), "two!", 4, 0, &err), 0);
	assert_string_equal(slurp(at("a")), "two!");
	/* ... unless the caller chose a name of its own. */
	assert_int_equal(rsp_file__write(at("a"), "x", 1, RSP_FILE_NOREPLACE, &err), -EEXIST);
	assert_non_null(strstr(err.data, "already exists"));
	assert_string_equal(slurp(at("a")), "two!");
	assert_int_equal(entries(), 1);
	unlink(at("a"));
	rsp_buf__exit(&err);
}

/* A FIFO, a directory, a symbolic link: refused, left as they were. */
static void test_refuse_special(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct stat st;

	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(mkdir(at("dir"), 0700), 0);
	assert_int_equal(rsp_file__write(at("victim"), "keep", 4, 0, &err), 0);
	assert_int_equal(symlink(at("victim"), at("link")), 0);

	assert_int_equal(rsp_file__write(at("fifo"), "x", 1, 0, &err), -EEXIST);
	assert_non_null(strstr(err.data, "is a FIFO, not a regular file"));
	assert_non_null(strstr(err.data, at("fifo")));
	rsp_buf__reset(&err);
	assert_int_equal(rsp_file__write(at("dir"), "x", 1, 0, &err), -EEXIST);
	assert_non_null(strstr(err.data, "is a directory"));
	rsp_buf__reset(&err);
	assert_int_equal(rsp_file__write(at("link"), "x", 1, 0, &err), -EEXIST);
	assert_non_null(strstr(err.data, "is a symbolic link"));

	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(lstat(at("dir"), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(lstat(at("link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(slurp(at("victim")), "keep");
	assert_int_equal(entries(), 4); /* no temp file left */
	unlink(at("fifo"));
	rmdir(at("dir"));
	unlink(at("link"));
	unlink(at("victim"));
	rsp_buf__exit(&err);
}

/* Something put at the path while the file is written is not replaced. */
static void test_swapped_meanwhile(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_outfile f;
	struct stat st;

	/* A new file, and a FIFO appears at its name. */
	assert_int_equal(rsp_outfile__open(&f, at("new"), 0, &err), 0);
	assert_int_equal(write(f.fd, "x", 1), 1);
	assert_int_equal(mkfifo(at("new"), 0600), 0);
	assert_int_equal(rsp_outfile__commit(&f, &err), -EEXIST);
	assert_int_equal(lstat(at("new"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(at("new"));
	/* A regular file, replaced by a FIFO before the rename. */
	assert_int_equal(rsp_file__write(at("reg"), "old", 3, 0, &err), 0);
	assert_int_equal(rsp_outfile__open(&f, at("reg"), 0, &err), 0);
	assert_int_equal(write(f.fd, "new", 3), 3);
	unlink(at("reg"));
	assert_int_equal(mkfifo(at("reg"), 0600), 0);
	rsp_buf__reset(&err);
	assert_int_equal(rsp_outfile__commit(&f, &err), -EEXIST);
	assert_non_null(strstr(err.data, "replaced by something else"));
	assert_int_equal(lstat(at("reg"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(at("reg"));
	assert_int_equal(entries(), 0);
	rsp_buf__exit(&err);
}

/* The temp file is locked while written; abort leaves nothing. */
static void test_abort_and_lock(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_outfile f;
	char tmp[300];
	int fd;

	assert_int_equal(rsp_outfile__open(&f, at("x.perf.data"), 0, &err), 0);
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, f.tmp);
	fd = open(tmp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(fd);
	rsp_outfile__abort(&f);
	assert_int_equal(entries(), 0);
	rsp_buf__exit(&err);
}

static bool is_x(const char *name)
{
	return !strcmp(name, "x.perf.data");
}

static void test_is_temp(void **state)
{
	assert_true(rsp_file__is_temp(".x.perf.data.Ab12Cd", is_x));
	assert_false(rsp_file__is_temp("x.perf.data", is_x));
	assert_false(rsp_file__is_temp(".x.perf.data.Ab12C", is_x));
	assert_false(rsp_file__is_temp(".x.perf.data.Ab12C-", is_x));
	assert_false(rsp_file__is_temp(".y.perf.data.Ab12Cd", is_x));
	assert_false(rsp_file__is_temp(".", is_x));
	/* the marked names rsp writes now: for that target, or for any (NULL) */
	assert_true(rsp_file__is_temp(".x.perf.data.rsp-tmp.Ab12Cd", is_x));
	assert_false(rsp_file__is_temp(".y.perf.data.rsp-tmp.Ab12Cd", is_x));
	assert_true(rsp_file__is_temp(".y.perf.data.rsp-tmp.Ab12Cd", NULL));
	assert_true(rsp_file__is_temp(".a.rsp-tmp.Ab12Cd", NULL));
	assert_false(rsp_file__is_temp("..rsp-tmp.Ab12Cd", NULL));
	assert_false(rsp_file__is_temp(".x.perf.data.Ab12Cd", NULL)); /* unmarked: not for any */
	assert_false(rsp_file__is_temp(".x.rsp-tmp.Ab12C", NULL));
	assert_false(rsp_file__is_temp(".rsp-tmp.Ab12Cd", NULL));
}

/* Reading a FIFO (no writer) or a directory fails at once, with a sentence. */
static void test_open_regular(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int fd;

	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(rsp_file__open_regular(at("fifo"), &err), -EINVAL);
	assert_non_null(strstr(err.data, "is a FIFO, not a regular file"));
	rsp_buf__reset(&err);
	assert_int_equal(rsp_file__open_regular(dir, &err), -EINVAL);
	assert_non_null(strstr(err.data, "is a directory"));
	rsp_buf__reset(&err);
	assert_int_equal(rsp_file__open_regular(at("none"), &err), -ENOENT);
	assert_non_null(strstr(err.data, "cannot read"));
	assert_int_equal(rsp_file__write(at("r"), "r", 1, 0, &err), 0);
	fd = rsp_file__open_regular(at("r"), &err);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	/* The perf.data reader refuses the FIFO the same way (it used to block in open). */
	rsp_buf__reset(&err);
	assert_null(rsp_perfdata__open(at("fifo"), &err));
	assert_non_null(strstr(err.data, "is a FIFO"));
	unlink(at("fifo"));
	unlink(at("r"));
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_and_regular),	  cmocka_unit_test(test_refuse_special),
		cmocka_unit_test(test_swapped_meanwhile), cmocka_unit_test(test_abort_and_lock),
		cmocka_unit_test(test_is_temp),		  cmocka_unit_test(test_open_regular),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
