// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the hist baseline reader. `rspctl hist --diff FILE`
 * reads a file from anywhere: rsp_hist_set__load_json() must refuse what
 * it cannot read with a sentence, never crash or leak. What it accepts
 * must render (text and JSON) and read back: a saved baseline round-trips.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_hist_baseline CORPUS
 * Seeds: fuzz/corpus/fuzz_hist_baseline/, answers of `rspctl analyze DUMP
 * hist --json` (system, processes, irq/softirq, slices) and an empty set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT, text = RSP_BUF_INIT, json = RSP_BUF_INIT;
	struct rsp_hist_set *set = NULL, *again = NULL;

	if (rsp_hist_set__load_json((const char *)data, size, "fuzz", &set, &err)) {
		if (!err.len) /* a refusal always says why */
			abort();
		rsp_buf__exit(&err);
		return 0;
	}
	rsp_hist_set__render_text(set, 0, &text);
	if (rsp_hist_set__render_json(set, 0, &json) ||
	    rsp_hist_set__load_json(json.data, json.len, "fuzz (rendered)", &again, &err))
		abort(); /* what was read must read back after writing */
	rsp_hist_set__delete(again);
	rsp_hist_set__delete(set);
	rsp_buf__exit(&err);
	rsp_buf__exit(&text);
	rsp_buf__exit(&json);
	return 0;
}
