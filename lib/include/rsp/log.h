/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_LOG_H
#define RSP_LOG_H

#include <rsp/api.h>

/*
 * librsp never prints and never exits. It reports through one hook that the
 * program installs: rspd sends messages to stderr or the journal, rspctl to
 * stderr, tests capture them. With no hook, messages are dropped.
 */
enum rsp_log_level {
	RSP_LOG_ERR,
	RSP_LOG_WARN,
	RSP_LOG_INFO,
	RSP_LOG_DEBUG,
};

typedef void (*rsp_log_fn)(enum rsp_log_level level, const char *msg, void *ctx);

/**
 * rsp_log__set() - install the library's message hook
 * @fn:  called with a formatted message (no trailing newline); NULL drops
 * @ctx: passed back to @fn
 *
 * Not thread-safe against concurrent logging: set it once at start.
 */
RSP_API void rsp_log__set(rsp_log_fn fn, void *ctx);

#endif /* RSP_LOG_H */
