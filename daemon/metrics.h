/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_METRICS_H
#define RSPD_METRICS_H

/*
 * Prometheus metrics: an HTTP endpoint (--metrics-listen, libmicrohttpd)
 * and a textfile for node_exporter (--metrics-textfile), both off by
 * default. Each render is a query: it counts its heap against
 * --query-memory like one, on a thread of its own, never the capture's.
 */
#include <stddef.h>
#include "metrics_addr.h"

struct rspd;

/**
 * rspd_metrics__start() - listen and start the textfile thread, as the
 * configuration asks (nothing when both are off).
 * Return: 0 or -errno with one sentence in @err; nothing is left running.
 */
int rspd_metrics__start(struct rspd *d, char *err, size_t errlen);
/** rspd_metrics__stop() - stop serving and writing; safe when not started. */
void rspd_metrics__stop(struct rspd *d);

#endif
