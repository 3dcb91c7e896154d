// SPDX-License-Identifier: LGPL-2.1
/* JSON out: see internal/json.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "internal/fmt.h"
#include "internal/json.h"

static _Thread_local bool json_oom;
static pthread_once_t json_alloc_once = PTHREAD_ONCE_INIT;

static void *json_alloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		json_oom = true;
	return p;
}

static void json_release(void *p)
{
	free(p);
}

static void json_use_alloc(void)
{
	json_set_alloc_funcs(json_alloc, json_release);
}

void rsp_json__watch(void)
{
	pthread_once(&json_alloc_once, json_use_alloc);
	json_oom = false;
}

bool rsp_json__failed(void)
{
	return json_oom;
}

json_t *rsp_json__name(const char *name)
{
	char buf[1024];
	json_t *j;

	if (!name)
		return json_null();
	j = json_string(name);
	return j ? j : json_string(rsp_fmt__name(buf, sizeof(buf), name));
}

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

void rsp_json__str(struct rsp_buf *out, const char *s)
{
	rsp_buf__add(out, "\"", 1);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			rsp_buf__printf(out, "\\%c", ch);
		else if (ch < 0x20)
			rsp_buf__printf(out, "\\u%04x", ch);
		else
			rsp_buf__add(out, s, 1);
	}
	rsp_buf__add(out, "\"", 1);
}
