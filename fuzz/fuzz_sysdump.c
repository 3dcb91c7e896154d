// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the syscall profiles section of a dump
 * (rsp_sysdump__load(), rsp/sysdump.h). `rspctl analyze` reads files from
 * anywhere: a section it cannot read is refused with a sentence and adds
 * nothing; one it reads gives profiles that collect and render.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_sysdump CORPUS
 * Seeds: fuzz/corpus/fuzz_sysdump/, sections as rspd writes them (r=1 and
 * r=2, thread and system entries).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include <rsp/sysdump.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_hist_query q = {.subjects = 1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS |
					       1u << RSP_HSUBJ_THREAD,
				   .pid = -1,
				   .tid = -1};
	struct rsp_buf err = RSP_BUF_INIT, json = RSP_BUF_INIT;
	struct rsp_hist_set *set = NULL;
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	struct rsp_hist_stats s;
	uint64_t n = 0;
	/* the section's place in the file is 8-byte aligned; so is this copy */
	uint64_t *copy = malloc(size + 8);

	rsp_hist_config__init(&c);
	c.max_profiles = 1024;
	st = rsp_hist_store__new(&c);
	if (!st || !copy)
		abort();
	memcpy(copy, data, size);
	if (rsp_sysdump__load(copy, size, 0, st, &n, &err)) {
		rsp_hist_store__stats(st, &s);
		if (!err.len || (s.updates && !strstr(err.data, "do not fit")))
			abort(); /* a refusal says why and, but for a full store, adds nothing */
	} else if (!rsp_hist_store__collect(st, &q, &set, &err)) {
		rsp_hist_set__render_json(set, 0, &json);
	}
	rsp_hist_set__delete(set);
	rsp_hist_store__delete(st);
	rsp_buf__exit(&err);
	rsp_buf__exit(&json);
	free(copy);
	return 0;
}
