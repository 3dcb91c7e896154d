// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the perf.data reader (lib/format/perfdata_read.c,
 * lib/format/tracedata.c), which `rspctl analyze FILE` runs on files from
 * anywhere. Parse arbitrary bytes, load the records into a window, build
 * the offline source (kernel symbols from the file, the process model from
 * its synthesized and side-band records), then run every query command
 * that reads a file over it, as `rspctl analyze` would.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_perfdata CORPUS
 * (seeds: fuzz/corpus/fuzz_perfdata, made by fuzz/mkseeds_perfdata.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/log.h>
#include <rsp/perfdata.h>
#include <rsp/query.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum rsp_log_level level, const char *msg, void *ctx)
{
}

static void query(const struct rsp_source *src, int argc, const char *const *argv)
{
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_request req;

	if (!rsp_request__parse(argc, argv, &req, &err)) {
		rsp_query__run(&req, src, &out, &err);
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

static void queries(const struct rsp_source *src)
{
	static const char *const status[] = {"status", "--events", "--pid", "1", "--json"};
	static const char *const top[] = {"top", "--limit", "0", "--json"};
	static const char *const graph[] = {"graph", "--json"};
	static const char *const graph_text[] = {"graph", "--no-merge"};
	static const char *const hist[] = {"hist", "--all", "--json"};
	static const char *const hist_slices[] = {"hist", "--threads", "--slices", "--top", "3"};

	query(src, 5, status);
	query(src, 4, top);
	query(src, 2, graph);
	query(src, 2, graph_text);
	query(src, 3, hist);
	query(src, 5, hist_slices);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_perfdata *pd;
	struct rsp_source src;
	void *copy = malloc(size ? size : 1); /* aligned, exactly sized */

	if (!copy)
		return 0;
	rsp_log__set(quiet, NULL);
	memcpy(copy, data, size);
	pd = rsp_perfdata__parse(copy, size, "fuzz", &err);
	if (pd && !rsp_perfdata__source(pd, &src, &err))
		queries(&src);
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&err);
	free(copy);
	return 0;
}
