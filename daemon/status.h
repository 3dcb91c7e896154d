/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_STATUS_H
#define RSPD_STATUS_H

/* The capture's state for `rspctl status`, read from the drain's counters. */
#include <rsp/status.h>

struct rspd;

/** rspd_status__fill() - a snapshot of the capture's state; free with rspd_status__free(). */
int rspd_status__fill(struct rspd *d, struct rsp_capture_info *ci);
/** rspd_status__free() - what rspd_status__fill() allocated. */
void rspd_status__free(struct rsp_capture_info *ci);

#endif
