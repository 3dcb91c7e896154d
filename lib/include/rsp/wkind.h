/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_WKIND_H
#define RSP_WKIND_H

#include <stddef.h>
#include <rsp/api.h>
#include <rsp/window.h>

struct rsp_schema;

/**
 * rsp_wkind__name() - the name of a kind of window record (RSP_WKIND_*)
 * @s:    the schema whose evsel indexes the sample kinds are (may be NULL)
 * @kind: below RSP_WINDOW_KINDS
 * @buf:  where the name is written (truncated to @len - 1)
 *
 * Perf records by their type ("perf:COMM", "perf:LOST"), samples by their
 * event's name in @s ("sched:sched_switch", "cpu-clock"; "perf:SAMPLE"
 * for an event the writer did not name), compact BPF records by their
 * kind ("bpf:switch"), anything else "other". Return: @buf.
 */
RSP_API const char *rsp_wkind__name(const struct rsp_schema *s, unsigned kind, char *buf,
				    size_t len);

#endif /* RSP_WKIND_H */
