/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_LOG_H
#define RSP_INTERNAL_LOG_H

#include <rsp/log.h>

void rsp__log(enum rsp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define rsp_err(...) rsp__log(RSP_LOG_ERR, __VA_ARGS__)
#define rsp_warn(...) rsp__log(RSP_LOG_WARN, __VA_ARGS__)
#define rsp_info(...) rsp__log(RSP_LOG_INFO, __VA_ARGS__)
#define rsp_debug(...) rsp__log(RSP_LOG_DEBUG, __VA_ARGS__)

#endif
