/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_TRIGGER_H
#define RSPD_TRIGGER_H

/*
 * Triggers (trigger.c): conditions evaluated where their data already is,
 * and the actions they fire. Who calls what:
 *   the histogram thread (histthread.c)  rspd_triggers__hist() after each pass
 *   the stopwatch poller (stopwatch.c) rspd_triggers__stopwatch() each second
 *   the metrics listener (metrics.c)   rspd_triggers__webhook() per POST
 *   the control socket (server.c)      rspd_triggers__request()
 *   the dump thread (dump.c)           rspd_triggers__dumped()
 * The trigger thread checks capture health (lost, shed) each second and
 * carries out the actions (a dump after its post-trigger time, a snapshot).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>
#include <rsp/trig_request.h>
#include <rsp/trigger.h>

struct rspd;

/** rspd_triggers__start() - the triggers of the configuration, and the thread. */
int rspd_triggers__start(struct rspd *d, char *err, size_t errlen);
/** rspd_triggers__stop() - stop the thread (pending dumps are dropped, logged). */
void rspd_triggers__stop(struct rspd *d);
/** rspd_triggers__delete() - free the triggers, once no thread reports to them. */
void rspd_triggers__delete(struct rspd *d);
/**
 * rspd_triggers__request() - `rspctl trigger add|list|rm`; @admin may add
 * and remove. Return: 0 with the answer in @out, or -errno with @err.
 */
int rspd_triggers__request(struct rspd *d, const struct rsp_trig_request *r, bool admin,
			   struct rsp_buf *out, struct rsp_buf *err);
/** rspd_triggers__hist() - the histogram thread fed every record up to @until. */
void rspd_triggers__hist(struct rspd *d, uint64_t until);
/** rspd_triggers__stopwatch() - one second of stopwatch @name: its slowest call, @max_ns. */
void rspd_triggers__stopwatch(struct rspd *d, const char *name, uint64_t count, uint64_t max_ns);
/**
 * rspd_triggers__webhook() - an Alertmanager payload: fires the alert
 * triggers its firing alerts name. Return: 0 with a line in @out, or
 * -EINVAL (a malformed payload: one sentence in @out, nothing fired).
 */
int rspd_triggers__webhook(struct rspd *d, const char *body, size_t len, struct rsp_buf *out);
/** rspd_triggers__refused() - the listener refused a POST (secret, size): counted. */
void rspd_triggers__refused(struct rspd *d);
/**
 * rspd_triggers__views() - a copy of every trigger (free *@v) and the
 * totals, for status and metrics. 0 or -ENOMEM.
 */
int rspd_triggers__views(struct rspd *d, struct rsp_trig_view **v, unsigned *n,
			 struct rsp_trig_totals *t);

/* What a trigger's dump carries into its metadata (RSP_PD_FEAT_RSP_TRIGGER). */
struct rspd_dump_trigger {
	char name[RSP_TRIG_NAME_LEN];
	char cond[RSP_TRIG_COND_LEN];
	char value[96];
	uint64_t trip_ns, post_ns;
	uint64_t id; /* which trigger's use (rspd_triggers__dumped()) */
};

/**
 * rspd_triggers__dumped() - the action of @t ended: @status 0, @path
 * written; -errno, not written (@why says why, logged once a streak); 1,
 * @path one file of several, the action goes on (a snapshot's text file).
 */
void rspd_triggers__dumped(struct rspd *d, const struct rspd_dump_trigger *t, int status,
			   const char *path, const char *why);

#endif
