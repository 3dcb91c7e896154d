/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_LOG_H
#define RSPD_LOG_H

#include <stdbool.h>
#include <rsp/log.h>

/*
 * rspd's log: stderr, with `<N>` syslog priority prefixes when stderr is
 * the journal (JOURNAL_STREAM matches stderr) so journald keeps the levels;
 * otherwise a time stamp and the level name. Levels: error, warning, info,
 * debug (--log-level). librsp and libperf report through the same function.
 */
void rspd_log__init(enum rsp_log_level max_level);
/** rspd_log__set_level() - change the level at run time (reload); thread-safe. */
void rspd_log__set_level(enum rsp_log_level max_level);
/** rspd_log__to_journal() - stderr is the journal (messages carry <N> prefixes). */
bool rspd_log__to_journal(void);
void rspd_log__write(enum rsp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/** rspd_log__errno() - like rspd_log__write, with ": strerror(errno)" appended. */
void rspd_log__errno(enum rsp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
