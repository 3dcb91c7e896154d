/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_PROM_H
#define RSP_INTERNAL_PROM_H

#include <stddef.h>
#include <rsp/hist.h>

/*
 * What the text exposition (lib/format/prom.c) and the protobuf one
 * (lib/format/prom_pb.c) both decide about the latency series, kept in one
 * place so that the two cannot drift apart.
 */

/* The start of both process families' HELP (rsp_process_latency_*). */
#define RSP_PROM_PROC_HELP                                                                         \
	"Latency of each operation of the processes with the most latency "                        \
	"(--metrics-top-processes; comm other: the rest)"

/**
 * rsp_prom__cmp_op_subject() - the order of the series: by op name, then
 * subject kind, then pid (<0, 0, >0 as for qsort()).
 */
int rsp_prom__cmp_op_subject(const struct rsp_hist_profile *x, const struct rsp_hist_profile *y);

/**
 * rsp_prom__subject() - the comm and pid labels of a process series: the
 * process's own, or comm "other" and an empty pid for the rest. @comm,
 * @len: not NUL-terminated, in @p or static; @pid: at least 16 bytes.
 */
void rsp_prom__subject(const struct rsp_hist_profile *p, const char **comm, size_t *len, char *pid);

#endif
