// SPDX-License-Identifier: LGPL-2.1
#include <stdarg.h>
#include <stdio.h>
#include "internal/log.h"

static rsp_log_fn log_fn;
static void *log_ctx;

void rsp_log__set(rsp_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

void rsp__log(enum rsp_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}
