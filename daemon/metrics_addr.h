/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_METRICS_ADDR_H
#define RSPD_METRICS_ADDR_H

/*
 * The metrics address parsed (metrics_addr.c): its own interface, so that
 * the configuration reader, which checks it, does not include the metrics
 * server (metrics.h), which reads the configuration (a circle of files).
 */
#include <sys/socket.h>

/**
 * rspd_metrics__parse_addr() - "127.0.0.1:9464" or "[::1]:9464" (numeric
 * address, port 1..65535) into @ss. Return: 0 or -1.
 */
int rspd_metrics__parse_addr(const char *s, struct sockaddr_storage *ss);

#endif
