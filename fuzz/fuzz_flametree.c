// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: folded stacks to a flame tree (rspctl report). The
 * lines come from a snapshot's answer, whose names come from a dump that
 * may be anyone's: rsp_flametree__add_folded() must refuse a line without
 * a weight with a sentence, never crash or leak; what it accepts renders
 * as JSON that parses, with no "</" (it sits in an HTML <script>), within
 * the frame budget, the total kept (the left-out frame included).
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_flametree CORPUS
 * Seeds: fuzz/corpus/fuzz_flametree/, folded stacks of real snapshots.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/flametree.h>

#define BUDGET 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT, out = RSP_BUF_INIT;
	struct rsp_flametree *t = rsp_flametree__new("root", BUDGET);
	struct rsp_flametree_stats st;
	json_t *j;

	if (!t)
		return 0;
	if (rsp_flametree__add_folded(t, (const char *)data, size, &err)) {
		if (!err.len) /* a refusal always says why */
			abort();
		goto out;
	}
	if (rsp_flametree__render_json(t, &out) || strstr(out.data, "</"))
		abort();
	rsp_flametree__stats(t, &st);
	j = json_loads(out.data, JSON_ALLOW_NUL, NULL); /* a comm may hold a NUL byte */
	if (!j || st.frames > BUDGET ||
	    (json_int_t)st.total != json_integer_value(json_object_get(j, "value")))
		abort();
	json_decref(j);
out:
	rsp_flametree__delete(t);
	rsp_buf__exit(&err);
	rsp_buf__exit(&out);
	return 0;
}
