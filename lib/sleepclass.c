// SPDX-License-Identifier: LGPL-2.1
/*
 * Sleep reasons from switch-out stacks. The rules are data
 * (tracepoints/sleep_reasons.def); string matching happens once per
 * distinct return address, then the per-address result is cached.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <rsp/sleepclass.h>
#include <rsp/tp.h>
#include "internal/u64map.h"

enum match_kind {
	EXACT,
	PREFIX,
};

struct rule {
	enum rsp_sleep_reason reason;
	enum match_kind kind;
	const char *name;
	size_t len;
};

static const struct rule rules[] = {
#define RSP_SLEEP_RULE(R, K, N) {RSP_SR_##R, K, N, sizeof(N) - 1},
#include "../tracepoints/sleep_reasons.def"
#undef RSP_SLEEP_RULE
};

#define NR_RULES ((int)(sizeof(rules) / sizeof(rules[0])))
#define NO_RULE	 0xffffu

static const char *const reason_names[RSP_SR__NR] = {
	[RSP_SR_UNKNOWN] = "unknown",	 [RSP_SR_BLOCK_IO] = "block_io",
	[RSP_SR_NETWORK] = "network",	 [RSP_SR_LOCK] = "lock",
	[RSP_SR_POLL] = "poll",		 [RSP_SR_PIPE] = "pipe",
	[RSP_SR_TIMER] = "timeout",	 [RSP_SR_SLEEP] = "sleep",
	[RSP_SR_PREEMPT] = "preemption", [RSP_SR_PAGE_FAULT] = "page_fault",
};

const char *rsp_sleep_reason__name(enum rsp_sleep_reason r)
{
	return (unsigned)r < RSP_SR__NR ? reason_names[r] : "unknown";
}

struct rsp_sleepclass {
	const struct rsp_ksyms *ks;
	struct rsp_u64map cache; /* return address -> rule index or NO_RULE */
};

static int match_rule(const char *name)
{
	for (int i = 0; i < NR_RULES; i++) {
		const struct rule *r = &rules[i];

		if (r->kind == EXACT ? !strcmp(name, r->name) : !strncmp(name, r->name, r->len))
			return i;
	}
	return -1;
}

enum rsp_sleep_reason rsp_sleepclass__match_name(const char *name, int *prio)
{
	int i = match_rule(name);

	if (prio)
		*prio = i;
	return i < 0 ? RSP_SR_UNKNOWN : rules[i].reason;
}

struct rsp_sleepclass *rsp_sleepclass__new(const struct rsp_ksyms *ks)
{
	struct rsp_sleepclass *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->ks = ks;
	rsp_u64map__init(&sc->cache);
	return sc;
}

void rsp_sleepclass__delete(struct rsp_sleepclass *sc)
{
	if (!sc)
		return;
	rsp_u64map__exit(&sc->cache);
	free(sc);
}

/* The rule of one return address, cached. An allocation failure only loses the cache. */
static uint32_t rule_of(struct rsp_sleepclass *sc, uint64_t addr)
{
	const struct rsp_ksym *sym;
	uint32_t v;
	int i;

	if (!rsp_u64map__get(&sc->cache, addr, &v))
		return v;
	/* A return address points after the call: look up addr - 1. */
	sym = rsp_ksyms__find(sc->ks, addr - 1, NULL);
	i = sym ? match_rule(sym->name) : -1;
	v = i < 0 ? NO_RULE : (uint32_t)i;
	rsp_u64map__put(&sc->cache, addr, v);
	return v;
}

static bool is_runnable(int64_t prev_state)
{
	return !(prev_state & RSP_TASK_STATE_MASK);
}

enum rsp_sleep_reason rsp_sleepclass__classify(struct rsp_sleepclass *sc, int64_t prev_state,
					       const uint64_t *chain, uint64_t nr)
{
	uint32_t best = NO_RULE;
	bool kernel = false;

	if (is_runnable(prev_state))
		return RSP_SR_PREEMPT;
	if (!sc->ks || !chain)
		return RSP_SR_UNKNOWN;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t a = chain[i];
		uint32_t r;

		if (a >= PERF_CONTEXT_MAX) {
			kernel = a == PERF_CONTEXT_KERNEL;
			if (a == PERF_CONTEXT_USER)
				break;
			continue;
		}
		if (!kernel)
			continue;
		r = rule_of(sc, a);
		if (r < best)
			best = r;
		if (best == 0)
			break;
	}
	return best == NO_RULE ? RSP_SR_UNKNOWN : rules[best].reason;
}
