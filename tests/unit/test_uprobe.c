// SPDX-License-Identifier: GPL-2.0
/*
 * Uprobe targets: the file offset rsp_uprobe__resolve() computes with
 * libelf must be where the function's code is in the file.
 *
 * Known answer: the bytes at that offset in the file are the bytes this
 * process runs at the function's address, for a weak function of this
 * test's own executable (perf probe refuses weak symbols; we must not) and
 * for poll in the libc this process loaded (weak in glibc). Absent
 * functions are -ENOENT without a message (the caller leaves the probe
 * out); a file that is not ELF is -EINVAL with one sentence.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <rsp/uprobe.h>

#define CODE 16

/* A weak function with a body worth comparing. */
__attribute__((weak, noinline)) int rsp_test_weak_fn(int x);
__attribute__((weak, noinline)) int rsp_test_weak_fn(int x)
{
	return x * 3 + 7;
}

/* The @name function's code at its file offset equals the code at @addr. */
static void check_code(const char *path, const char *name, const void *addr)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_uprobe_target t;
	unsigned char file[CODE];
	int fd;

	assert_int_equal(rsp_uprobe__resolve(path, name, &t, &err), 0);
	assert_null(err.data);
	assert_string_equal(t.name, name);
	assert_string_equal(t.path, path);
	assert_true(t.size > 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, file, CODE, (off_t)t.offset), CODE);
	close(fd);
	assert_memory_equal(file, addr, CODE);
	rsp_buf__exit(&err);
}

static void test_weak_in_self(void **state)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(rsp_test_weak_fn(1), 10);
	check_code(exe, "rsp_test_weak_fn", (const void *)(uintptr_t)rsp_test_weak_fn);
}

static void test_poll_in_libc(void **state)
{
	char libc[PATH_MAX];
	/* libc's own poll: under ASan, the default lookup finds its interceptor. */
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *poll_addr = h ? dlsym(h, "poll") : NULL;

	(void)state;
	assert_int_equal(rsp_uprobe__loaded_path("libc.so.6", libc, sizeof(libc)), 0);
	assert_true(libc[0] == '/');
	assert_non_null(poll_addr);
	check_code(libc, "poll", poll_addr);
	dlclose(h);
}

static void test_absent(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_uprobe_target t;
	char libc[PATH_MAX], path[] = "/tmp/rsp-uprobe-XXXXXX";
	int fd;

	(void)state;
	assert_int_equal(rsp_uprobe__loaded_path("libc.so.6", libc, sizeof(libc)), 0);
	/* No such function, and a name that is only a prefix of one. */
	assert_int_equal(rsp_uprobe__resolve(libc, "rsp_no_such_function", &t, &err), -ENOENT);
	assert_int_equal(rsp_uprobe__resolve(libc, "pol", &t, &err), -ENOENT);
	assert_null(err.data);
	assert_int_equal(rsp_uprobe__loaded_path("libnosuch.so.9", libc, sizeof(libc)), -ENOENT);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_int_equal(rsp_uprobe__resolve(path, "poll", &t, &err), -EINVAL);
	assert_non_null(err.data);
	assert_non_null(strstr(err.data, "not an ELF object"));
	unlink(path);
	/* a FIFO where a library should be: refused at once, not waited on */
	assert_int_equal(mkfifo(path, 0600), 0);
	rsp_buf__reset(&err);
	assert_int_equal(rsp_uprobe__resolve(path, "poll", &t, &err), -EINVAL);
	assert_non_null(strstr(err.data, "a FIFO"));
	unlink(path);
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weak_in_self),
		cmocka_unit_test(test_poll_in_libc),
		cmocka_unit_test(test_absent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
