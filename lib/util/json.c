// SPDX-License-Identifier: LGPL-2.1
/* JSON out: see internal/json.h. */
#include <errno.h>
#include <stdlib.h>
#include "internal/json.h"

int rsp_json__emit(json_t *o, struct rsp_buf *out)
{
	char *text = o ? json_dumps(o, RSP_JSON_FLAGS) : NULL;
	int err;

	json_decref(o);
	if (!text)
		return -ENOMEM;
	err = rsp_buf__puts(out, text);
	free(text);
	return err ? err : rsp_buf__puts(out, "\n");
}
