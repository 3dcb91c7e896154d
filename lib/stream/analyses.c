// SPDX-License-Identifier: LGPL-2.1
/*
 * Which events each query needs (tracepoints/analyses.def), held against
 * the events a stream actually has: a dump, or a file perf record wrote.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <rsp/record.h>
#include "internal/analyses.h"
#include "internal/schema.h"

struct analysis {
	const char *cmd, *required, *useful, *adds;
};

static const struct analysis analyses[] = {
#define RSP_ANALYSIS(cmd, req, use, adds) {#cmd, req, use, adds},
#include "tracepoints/analyses.def"
#undef RSP_ANALYSIS
};

/* Side-band records come with any event that asks for them. */
static bool has_sideband(const struct rsp_schema *s)
{
	for (int i = 0; i < s->nr_evsels; i++) {
		const struct perf_event_attr *a = &s->evsels[i].attr;

		if (a->mmap || a->mmap2 || a->comm || a->task)
			return true;
	}
	return false;
}

/* The stream has records of @ev that rsp can decode. */
static bool present(const struct rsp_schema *s, int ev)
{
	if (ev == RSP_EV_sideband)
		return has_sideband(s);
	for (int i = 0; i < s->nr_evsels; i++) {
		/* rsp's BPF records carry the scheduler's events (lib/stream/bpfrec.c) */
		if (s->evsels[i].role == RSP_ROLE_BPF && rsp_record__bpf_event(ev))
			return true;
		if (s->evsels[i].event == ev && s->evsels[i].role == RSP_ROLE_PRIMARY)
			return rsp_catalogue__event(ev)->kind != RSP_EVK_TRACEPOINT ||
			       rsp_schema__event_ok(s, ev);
	}
	return false;
}

/* Append the events of the space-separated @list that @s lacks; their count. */
static int missing(const struct rsp_schema *s, const char *list, struct rsp_buf *b)
{
	char name[64];
	int n = 0;

	while (*list) {
		size_t len = strcspn(list, " ");
		int ev;

		snprintf(name, sizeof(name), "%.*s", (int)len, list);
		list += len + (list[len] == ' ');
		ev = rsp_catalogue__find_event(name);
		if (ev < 0 || present(s, ev))
			continue;
		if (rsp_catalogue__event(ev)->kind == RSP_EVK_TRACEPOINT)
			rsp_buf__printf(b, "%s%s:%s", n ? ", " : "",
					rsp_catalogue__event(ev)->system,
					rsp_catalogue__event(ev)->tp);
		else
			rsp_buf__printf(b, "%s%s", n ? ", " : "", name);
		n++;
	}
	return n;
}

int rsp_analyses__check(const char *cmd, const struct rsp_schema *s, struct rsp_buf *notes,
			struct rsp_buf *err)
{
	struct rsp_buf m = RSP_BUF_INIT;

	for (size_t i = 0; i < sizeof(analyses) / sizeof(analyses[0]); i++) {
		const struct analysis *a = &analyses[i];

		if (strcmp(a->cmd, cmd))
			continue;
		if (missing(s, a->required, &m)) {
			rsp_buf__printf(
				err,
				"%s is impossible on this file: it has no usable records of "
				"%s; record them too (see 'rspctl help analyze')",
				cmd, m.data);
			rsp_buf__exit(&m);
			return -ENOENT;
		}
		if (missing(s, a->useful, &m))
			rsp_buf__printf(notes, "note: no records of %s: %s lacks %s\n", m.data, cmd,
					a->adds);
	}
	rsp_buf__exit(&m);
	return 0;
}
