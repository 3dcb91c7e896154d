// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O wrappers of failio.h. __real_* are the libc functions; the
 * linker sends every wrapped call of the test's objects and of librsp.a
 * here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/types.h>
#include "support/failio.h"

int __real_openat(int dfd, const char *path, int flags, ...);
ssize_t __real_write(int fd, const void *p, size_t n);
ssize_t __real_pwrite(int fd, const void *p, size_t n, off_t at);
int __real_fsync(int fd);
int __real_close(int fd);
int __real_renameat2(int ofd, const char *o, int nfd, const char *n, unsigned int flags);
int __real_linkat(int ofd, const char *o, int nfd, const char *n, int flags);
int __wrap_openat(int dfd, const char *path, int flags, ...);
ssize_t __wrap_write(int fd, const void *p, size_t n);
ssize_t __wrap_pwrite(int fd, const void *p, size_t n, off_t at);
int __wrap_fsync(int fd);
int __wrap_close(int fd);
int __wrap_renameat2(int ofd, const char *o, int nfd, const char *n, unsigned int flags);
int __wrap_linkat(int ofd, const char *o, int nfd, const char *n, int flags);

static unsigned long armed_nth, count;
static bool failed;
static const char *what = "";

void failio__arm(unsigned long nth)
{
	armed_nth = nth;
	if (!nth)
		return; /* disarmed: failio__failed() still tells */
	count = 0;
	failed = false;
	what = "";
}

bool failio__failed(void)
{
	return failed;
}

const char *failio__what(void)
{
	return what;
}

/* Is this call the one to fail? Only one per arming. */
static bool fail_now(const char *name)
{
	if (!armed_nth || failed || ++count != armed_nth)
		return false;
	failed = true;
	what = name;
	errno = EIO;
	return true;
}

int __wrap_openat(int dfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return fail_now("openat") ? -1 : __real_openat(dfd, path, flags, mode);
}

ssize_t __wrap_write(int fd, const void *p, size_t n)
{
	return fail_now("write") ? -1 : __real_write(fd, p, n);
}

ssize_t __wrap_pwrite(int fd, const void *p, size_t n, off_t at)
{
	return fail_now("pwrite") ? -1 : __real_pwrite(fd, p, n, at);
}

int __wrap_fsync(int fd)
{
	return fail_now("fsync") ? -1 : __real_fsync(fd);
}

int __wrap_close(int fd)
{
	if (fail_now("close")) {
		__real_close(fd);
		errno = EIO;
		return -1;
	}
	return __real_close(fd);
}

int __wrap_renameat2(int ofd, const char *o, int nfd, const char *n, unsigned int flags)
{
	return fail_now("renameat2") ? -1 : __real_renameat2(ofd, o, nfd, n, flags);
}

int __wrap_linkat(int ofd, const char *o, int nfd, const char *n, int flags)
{
	return fail_now("linkat") ? -1 : __real_linkat(ofd, o, nfd, n, flags);
}
