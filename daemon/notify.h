/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_NOTIFY_H
#define RSPD_NOTIFY_H

#include <stdint.h>

struct rspd;

/** rspd_notify__send() - send one notify message ("READY=1"); no-op without systemd. */
void rspd_notify__send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** rspd_notify__status() - STATUS= with records/s, the window's span and losses. */
void rspd_notify__status(struct rspd *d);
/** rspd_notify__watchdog_usec() - the unit's WatchdogSec in us, 0 if none. */
uint64_t rspd_notify__watchdog_usec(void);

#endif
