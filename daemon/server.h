/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_SERVER_H
#define RSPD_SERVER_H

/* The control socket: listens, reads requests, answers them from a pool of query threads. */
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>

struct rspd;

/**
 * rspd_server__start() - listen on the control socket, serve in a thread
 * Return: 0 or -errno with one sentence in @err.
 */
int rspd_server__start(struct rspd *d, char *err, size_t errlen);
void rspd_server__stop(struct rspd *d);
/**
 * rspd_server__configure() - apply the control options that a reload may
 * change (socket group and mode, admin group, timeouts); capture thread.
 */
void rspd_server__configure(struct rspd *d);
/**
 * rspd_server__query_stats() - queries answered since start and the time
 * they took on their query threads (any thread may ask; 0 without a server).
 */
void rspd_server__query_stats(struct rspd *d, uint64_t *queries, uint64_t *ns);
/**
 * rspd_server__query_all() - answer query @argv (top, snapshot, ...: not a
 * dump or a stopwatch) on the calling thread as an unrestricted requester
 * would be answered: what the HTTP profiles ask (metrics.c), whose access
 * rule is the address they are served on. The caller counts its memory.
 * Return: 0 and the answer in @out, or -errno with one sentence in @err.
 */
int rspd_server__query_all(struct rspd *d, int argc, const char *const argv[], struct rsp_buf *out,
			   struct rsp_buf *err);

#endif
