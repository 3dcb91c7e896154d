// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: what rspd does with the bytes a client sends. The
 * request header (magic, length, checked before anything is allocated),
 * the payload split into argv (rsp_proto__decode_request), the command
 * line parsed by the query parser (rsp_request__parse), and a parsed request
 * run against an empty window by a restricted requester, so that option
 * values reach the commands and the access checks.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_request CORPUS
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/proto.h>
#include <rsp/query.h>
#include <rsp/window.h>

static struct rsp_window *window;

/* A requester who owns the even pids only. */
static int uid_of(void *ctx, long pid, uint32_t *uid)
{
	if (pid > 100000)
		return -ESRCH;
	*uid = pid % 2 ? 0 : 1000;
	return 0;
}

static void run(const struct rsp_proto_args *args)
{
	struct rsp_request req;
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_source src = {0};

	if (!rsp_request__parse(args->argc, args->argv, &req, &err)) {
		src.window = window;
		src.access.restricted = true;
		src.access.uid = 1000;
		src.access.uid_of = uid_of;
		rsp_query__run(&req, &src, &out, &err);
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_proto_args args;
	char *payload;
	long len;

	if (!window) {
		struct rsp_window_config wc = {.budget = 1u << 20, .nr_cpus = 1};

		window = rsp_window__new(&wc);
	}
	if (size < RSP_PROTO_REQ_HEADER)
		return 0;
	len = rsp_proto__request_length(data);
	if (len <= 0 || (size_t)len > size - RSP_PROTO_REQ_HEADER)
		return 0;
	/* An exact-size copy, as the server allocates it: overreads show. */
	payload = malloc((size_t)len);
	if (!payload)
		return 0;
	memcpy(payload, data + RSP_PROTO_REQ_HEADER, (size_t)len);
	if (!rsp_proto__decode_request(payload, (size_t)len, &args))
		run(&args);
	free(payload);
	return 0;
}
