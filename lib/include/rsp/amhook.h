/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_AMHOOK_H
#define RSP_AMHOOK_H

/*
 * Alertmanager's webhook payload (POST /v1/trigger), parsed
 * (lib/format/amhook.c): the format layer, below the triggers
 * (rsp/trigger.h) that an alert fires.
 */
#include <stdbool.h>
#include <stddef.h>
#include <rsp/api.h>
#include <rsp/buf.h>

#define RSP_TRIG_NAME_LEN 32 /* a trigger's name, with its NUL */

#define RSP_AM_MAX_ALERTS 64 /* more in one payload: refused */

struct rsp_am_alert {
	bool firing; /* status "firing" (else "resolved") */
	char alertname[128];
	char instance[128];		     /* labels.instance, "" if none */
	char rsp_trigger[RSP_TRIG_NAME_LEN]; /* labels.rsp_trigger, "" if none */
};

struct rsp_am_payload {
	char version[8]; /* "4" */
	char receiver[128];
	unsigned nr;
	struct rsp_am_alert alerts[RSP_AM_MAX_ALERTS];
};

/**
 * rsp_am_payload__parse() - Alertmanager's webhook JSON (version "4"):
 * every alert's status, alertname and the labels rspd uses.
 * Return: 0, or -EINVAL with one sentence in @err (not JSON, not an object,
 * not version 4, no alerts array, an alert without labels.alertname, more
 * than RSP_AM_MAX_ALERTS alerts).
 */
RSP_API int rsp_am_payload__parse(const char *text, size_t len, struct rsp_am_payload *p,
				  struct rsp_buf *err);

#endif /* RSP_AMHOOK_H */
