// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <perf/core.h>
#include "log.h"

static _Atomic int max_level = RSP_LOG_INFO; /* SIGHUP changes it while others log */
static int journal;

static const char *const names[] = {"error", "warning", "info", "debug"};
static const int prio[] = {3, 4, 6, 7}; /* syslog: err, warning, info, debug */

static void emit(enum rsp_log_level level, const char *msg)
{
	struct timespec ts;

	if ((int)level > atomic_load_explicit(&max_level, memory_order_relaxed))
		return;
	if (journal) {
		fprintf(stderr, "<%d>%s\n", prio[level], msg);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "rspd[%ld.%03ld] %s: %s\n", (long)ts.tv_sec, ts.tv_nsec / 1000000,
		names[level], msg);
}

static void lib_hook(enum rsp_log_level level, const char *msg, void *ctx)
{
	emit(level, msg);
}

static int libperf_hook(enum libperf_print_level level, const char *fmt, va_list ap)
{
	char msg[512];
	enum rsp_log_level l = level == LIBPERF_ERR    ? RSP_LOG_ERR
			       : level == LIBPERF_WARN ? RSP_LOG_WARN
						       : RSP_LOG_DEBUG;
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	emit(l, msg);
	return (int)n;
}

/*
 * stderr is the journal when JOURNAL_STREAM names its device and inode (as
 * systemd sets it for a service): then "<N>" prefixes give journald the
 * level, and journald adds the time. A JOURNAL_STREAM inherited by a
 * process whose stderr was redirected elsewhere does not count.
 */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st))
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void rspd_log__init(enum rsp_log_level level)
{
	rspd_log__set_level(level);
	journal = stderr_is_journal();
	setvbuf(stderr, NULL, _IOLBF, 0);
	rsp_log__set(lib_hook, NULL);
	libperf_init(libperf_hook);
}

void rspd_log__set_level(enum rsp_log_level level)
{
	atomic_store_explicit(&max_level, (int)level, memory_order_relaxed);
}

bool rspd_log__to_journal(void)
{
	return journal;
}

void rspd_log__write(enum rsp_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, msg);
}

void rspd_log__errno(enum rsp_log_level level, const char *fmt, ...)
{
	char msg[1024];
	int e = errno;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(e));
	emit(level, msg);
}
