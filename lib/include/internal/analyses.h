/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Which events each analysis needs (tracepoints/analyses.def), held
 * against the events a stream has.
 */
#ifndef RSP_INTERNAL_ANALYSES_H
#define RSP_INTERNAL_ANALYSES_H

#include <rsp/buf.h>

struct rsp_schema;

/**
 * rsp_analyses__check() - can command @cmd be answered from records with
 * @s's events? See rsp_request__check_events(). Return: 0 or -ENOENT.
 */
int rsp_analyses__check(const char *cmd, const struct rsp_schema *s, struct rsp_buf *notes,
			struct rsp_buf *err);

#endif
