/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_MERGE_H
#define RSP_MERGE_H

#include <rsp/api.h>
#include <rsp/buf.h>

/**
 * rsp_merge__run() - `rspctl merge DUMP DUMP [...] net|snapshot PID@HOST|graph [--json]`
 * @argv: the arguments after "merge"
 *
 * Loads each dump (one per host), matches their TCP connections by 4-tuple
 * (rsp/xhost.h), bounds each pair of hosts' clock offset from the
 * connections' request/response pairs, and renders the answer into @out
 * (net: the connections; snapshot: PID's network wait and what the
 * answering threads on the other hosts did meanwhile, their own network
 * waits followed into further hosts up to --depth N; graph: the hosts'
 * wait-for graphs joined by edges across hosts).
 * The hidden, test-only option --test-clock-shift INDEX=NS adds NS to
 * every time of dump INDEX (and lets a dump of the same host stand for
 * another). Return: 0, or -errno with one sentence in @err.
 */
RSP_API int rsp_merge__run(int argc, char **argv, struct rsp_buf *out, struct rsp_buf *err);

#endif /* RSP_MERGE_H */
