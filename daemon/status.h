/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_STATUS_H
#define RSPD_STATUS_H

/* The capture's state for `rspctl status`, read from the drain's counters. */
#include <rsp/status.h>

struct rspd;

/** rspd_status__fill() - a snapshot of the capture's state; free ci->cpus. */
int rspd_status__fill(struct rspd *d, struct rsp_capture_info *ci);

#endif
