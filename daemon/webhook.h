/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_WEBHOOK_H
#define RSPD_WEBHOOK_H

/* POST /v1/trigger on the metrics listener: Alertmanager's webhook (webhook.c). */
#include <stddef.h>
#include <microhttpd.h>

struct rspd;
struct rspd_webhook;

/**
 * rspd_webhook__open() - with trigger-webhook on, read trigger-secret
 * (*@out NULL when off). Return: 0, or -errno with one sentence in @err.
 */
int rspd_webhook__open(struct rspd *d, struct rspd_webhook **out, char *err, size_t errlen);
void rspd_webhook__close(struct rspd_webhook *w);
/**
 * rspd_webhook__request() - libmicrohttpd's access handler for /v1/trigger
 * (@w NULL: off, answered 404). *@con_cls is this module's per-request
 * state; free it with rspd_webhook__completed() (MHD_OPTION_NOTIFY_COMPLETED).
 */
enum MHD_Result rspd_webhook__request(struct rspd_webhook *w, struct MHD_Connection *c,
				      const char *method, const char *data, size_t *data_len,
				      void **con_cls);
void rspd_webhook__completed(void *con_cls);

#endif
