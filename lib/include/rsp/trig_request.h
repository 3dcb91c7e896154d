/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_TRIG_REQUEST_H
#define RSP_TRIG_REQUEST_H

/*
 * `rspctl trigger add|list|rm` as a request, and `trigger list` as text or
 * JSON (lib/query/cmd_trigger.c): the query layer, above the triggers'
 * grammar and views (rsp/trigger.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/trigger.h>

struct rsp_request;

enum rsp_trig_op { RSP_TRIG_ADD, RSP_TRIG_LIST, RSP_TRIG_RM };

struct rsp_trig_request {
	enum rsp_trig_op op;
	struct rsp_trig_spec spec; /* ADD */
	const char *name;	   /* RM */
	bool json;
};

/** rsp_request__trigger() - @req's trigger request; -EINVAL if @req is not one. */
RSP_API int rsp_request__trigger(const struct rsp_request *req, struct rsp_trig_request *out);

/**
 * rsp_trig__render_list() - `trigger list`: @n views as text or JSON into
 * @out, with @now (CLOCK_MONOTONIC) for "last fire 12 s ago".
 */
RSP_API int rsp_trig__render_list(const struct rsp_trig_view *v, size_t n,
				  const struct rsp_trig_totals *t, uint64_t now, bool json,
				  struct rsp_buf *out);

#endif /* RSP_TRIG_REQUEST_H */
