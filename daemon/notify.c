// SPDX-License-Identifier: GPL-2.0
/*
 * systemd's notify protocol (Type=notify), through libsystemd's sd_notify:
 * READY=1 once the rings are open and the socket listens, STATUS= with the
 * record rate and the window's span, WATCHDOG=1 when the unit has
 * WatchdogSec, RELOADING=1/READY=1 around a reload, STOPPING=1. Without
 * NOTIFY_SOCKET, sd_notify does nothing and rspd behaves exactly the same.
 */
#include <stdarg.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include "log.h"
#include "notify.h"
#include "rspd.h"

void rspd_notify__send(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ret = sd_notify(0, msg);
	if (ret < 0)
		rspd_log__write(RSP_LOG_DEBUG, "sd_notify(%s): error %d", msg, ret);
}

void rspd_notify__status(struct rspd *d)
{
	struct rsp_window_stats ws;
	double rate = 0, span;
	uint64_t lost = 0;

	for (int i = 0; i < d->es.nr_rings; i++) {
		struct rsp_cpu_counters *k = &d->drain.cpu[d->es.rings[i].cpu];

		rate += atomic_load_explicit(&k->records_per_s, memory_order_relaxed);
		lost += atomic_load_explicit(&k->lost, memory_order_relaxed) +
			atomic_load_explicit(&k->dropped, memory_order_relaxed);
	}
	rsp_window__stats(d->window, &ws);
	span = ws.newest > ws.oldest ? (double)(ws.newest - ws.oldest) / 1e9 : 0;
	rspd_notify__send("STATUS=%.0f records/s, window %.1f s (%.1f MiB), %llu lost", rate, span,
			  (double)ws.bytes_used / (1 << 20), (unsigned long long)lost);
}

uint64_t rspd_notify__watchdog_usec(void)
{
	uint64_t usec = 0;

	/* >0 only when WATCHDOG_USEC is set (and WATCHDOG_PID, if set, is us). */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}
