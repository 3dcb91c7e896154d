// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the perf.data reader (lib/perfdata_read.c and
 * lib/tracedata.c): parse arbitrary bytes, load the records into a window,
 * run a query over them and walk the process model. Built with
 * -DRSP_FUZZ=ON (clang, -fsanitize=fuzzer,address,undefined); bench/fuzz.sh
 * runs it from the seed corpus in tests/fuzz/corpus (real dumps).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/perfdata.h>
#include <rsp/query.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int walk(const struct perf_event_header *h, void *ctx)
{
	*(uint64_t *)ctx += h->type;
	return 0;
}

static void query(const struct rsp_source *src)
{
	static const char *const argv[] = {"status", "--events", "--pid", "1", "--json"};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_request req;

	if (!rsp_query__parse(5, argv, &req, &err)) {
		rsp_query__run(&req, src, &out, &err);
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_perfdata *pd;
	struct rsp_source src;
	uint64_t sum = 0;
	void *copy = malloc(size ? size : 1); /* aligned, exactly sized */

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pd = rsp_perfdata__parse(copy, size, "fuzz", &err);
	if (pd && !rsp_perfdata__source(pd, &src, &err)) {
		query(&src);
		rsp_perfdata__process_model(pd, walk, &sum);
	}
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&err);
	free(copy);
	return 0;
}
