/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_LOG_H
#define RSPD_LOG_H

#include <rsp/log.h>

/*
 * rspd's log: stderr, with `<N>` syslog priority prefixes when stderr is
 * the journal (JOURNAL_STREAM set) so journald keeps the levels. librsp
 * and libperf report through the same function.
 */
void rspd_log_init(enum rsp_log_level max_level);
void rspd_log(enum rsp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** rspd_log_errno() - like rspd_log, with ": strerror(errno)" appended. */
void rspd_log_errno(enum rsp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
