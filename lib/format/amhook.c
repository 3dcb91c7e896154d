// SPDX-License-Identifier: LGPL-2.1
/*
 * Prometheus Alertmanager's webhook payload (version "4", the body of the
 * POST a webhook_config receiver sends), for rspd's /v1/trigger:
 *
 *   {"version": "4", "status": "firing", "receiver": "rsp",
 *    "alerts": [{"status": "firing", "labels": {"alertname": "SlowFsync",
 *                "instance": "db1:9464", "rsp_trigger": "fsync"}, ...}], ...}
 *
 * Only what rspd acts on is kept: each alert's status, alertname, and the
 * instance and rsp_trigger labels. The body comes from the network, so
 * every field's type is checked and every copy bounded; anything else is
 * one sentence for the 400 answer. jansson parses (as everywhere in librsp).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include <rsp/amhook.h>

static int fail(struct rsp_buf *err, const char *msg, unsigned i)
{
	rsp_buf__printf(err, msg, i);
	return -EINVAL;
}

/* A string member of @o, or "" if absent; -1 if present and not a string or too long. */
static int member(json_t *o, const char *key, char *dst, size_t n)
{
	json_t *v = json_object_get(o, key);

	dst[0] = '\0';
	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) >= n)
		return -1;
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int one_alert(json_t *a, unsigned i, struct rsp_am_alert *out, struct rsp_buf *err)
{
	json_t *labels = json_is_object(a) ? json_object_get(a, "labels") : NULL;
	char status[16];

	if (!json_is_object(labels))
		return fail(err,
			    "alert %u has no labels object: not Alertmanager's webhook payload", i);
	if (member(a, "status", status, sizeof(status)) ||
	    (strcmp(status, "firing") && strcmp(status, "resolved")))
		return fail(err, "alert %u's status is neither \"firing\" nor \"resolved\"", i);
	out->firing = !strcmp(status, "firing");
	if (member(labels, "alertname", out->alertname, sizeof(out->alertname)) ||
	    !out->alertname[0])
		return fail(err, "alert %u has no labels.alertname string of at most 127 bytes", i);
	if (member(labels, "instance", out->instance, sizeof(out->instance)) ||
	    member(labels, "rsp_trigger", out->rsp_trigger, sizeof(out->rsp_trigger)))
		return fail(err, "alert %u's instance or rsp_trigger label is not a short string",
			    i);
	return 0;
}

static int payload(json_t *root, struct rsp_am_payload *p, struct rsp_buf *err)
{
	json_t *alerts;
	size_t i;

	if (!json_is_object(root))
		return fail(err,
			    "the body is not a JSON object: not Alertmanager's webhook payload", 0);
	if (member(root, "version", p->version, sizeof(p->version)) || strcmp(p->version, "4"))
		return fail(err,
			    "the payload's version is not \"4\" (Alertmanager's webhook "
			    "payload since 0.5)",
			    0);
	if (member(root, "receiver", p->receiver, sizeof(p->receiver)))
		return fail(err, "the payload's receiver is not a string of at most 127 bytes", 0);
	alerts = json_object_get(root, "alerts");
	if (!json_is_array(alerts))
		return fail(err, "the payload has no alerts array", 0);
	if (json_array_size(alerts) > RSP_AM_MAX_ALERTS)
		return fail(err,
			    "the payload has more than %u alerts; set max_alerts in the "
			    "webhook_config",
			    RSP_AM_MAX_ALERTS);
	json_array_foreach (alerts, i, root) {
		if (one_alert(root, (unsigned)i, &p->alerts[p->nr], err))
			return -EINVAL;
		p->nr++;
	}
	return 0;
}

int rsp_am_payload__parse(const char *text, size_t len, struct rsp_am_payload *p,
			  struct rsp_buf *err)
{
	json_error_t je;
	json_t *root;
	int ret;

	memset(p, 0, sizeof(*p));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		rsp_buf__printf(err, "the body is not JSON (line %d: %s)", je.line, je.text);
		return -EINVAL;
	}
	ret = payload(root, p, err);
	json_decref(root);
	return ret;
}
