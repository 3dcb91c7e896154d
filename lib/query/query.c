// SPDX-License-Identifier: LGPL-2.1
/* The query commands: their table, their usage, and running a parsed request. */
#include <errno.h>
#include <string.h>
#include "internal/json.h"
#include "internal/query.h"

static const struct rsp_command *const commands[] = {
	&rsp_cmd_status, &rsp_cmd_top,	&rsp_cmd_graph,	    &rsp_cmd_net,     &rsp_cmd_snapshot,
	&rsp_cmd_dump,	 &rsp_cmd_hist, &rsp_cmd_stopwatch, &rsp_cmd_trigger,
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct rsp_command *rsp_query__find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

bool rsp_query__exists(const char *name)
{
	return rsp_query__find(name) != NULL;
}

int rsp_query__run(const struct rsp_request *req, const struct rsp_source *src, struct rsp_buf *out,
		   struct rsp_buf *err)
{
	int ret;

	if (!req->cmd) {
		rsp_buf__puts(err, "empty request");
		return -EINVAL;
	}
	rsp_json__watch();
	ret = req->cmd->run(req, src, out, err);
	/* A line or a JSON member the renderer could not add: not an answer to pass on. */
	if (!ret && out->error)
		ret = out->error;
	if (!ret && rsp_json__failed())
		ret = -ENOMEM;
	/* Every failure reaches the user as a sentence, whoever forgot it. */
	if (ret && !err->len)
		rsp_buf__printf(err, "%s: %s", req->cmd->name,
				ret == -ENOMEM ? "out of memory while answering" : strerror(-ret));
	return ret;
}

const struct rsp_command *rsp_query__command_at(size_t i)
{
	return i < NR_COMMANDS ? commands[i] : NULL;
}

void rsp_query__usage(struct rsp_buf *out, const char *name)
{
	const struct rsp_command *c = name ? rsp_query__find(name) : NULL;

	if (c) {
		rsp_buf__printf(out, "rspctl %s — %s\n\n%s", c->name, c->summary, c->usage);
		return;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++)
		rsp_buf__printf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
}
