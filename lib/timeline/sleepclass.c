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
#include "internal/callchain.h"
#include "internal/hash.h"
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
#include "tracepoints/sleep_reasons.def"
#undef RSP_SLEEP_RULE
};

#define NR_RULES ((int)(sizeof(rules) / sizeof(rules[0])))

enum ctx_kind {
	CTX_SOFTIRQ = 1,
	CTX_SEND,
	CTX_INTERRUPT,
};

static const struct ctx_rule {
	enum ctx_kind kind;
	enum match_kind match;
	const char *name;
	size_t len;
} ctx_rules[] = {
#define RSP_WAKE_CONTEXT(K, M, N) {CTX_##K, M, N, sizeof(N) - 1},
#include "tracepoints/wake_contexts.def"
#undef RSP_WAKE_CONTEXT
};
#define NO_RULE 0xffffu

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

/*
 * The reasons of whole kernel stacks, by their words up to the user marker:
 * a thread sleeps again and again at the same few places, and the reason is
 * a function of those words alone (the rules are fixed, so are the ksyms).
 * Direct-mapped, compared word for word (no hash is trusted): MEMO_SLOTS x
 * (MEMO_WORDS + 1) words, 66 KiB a timeline, allocated at the first stack.
 */
#define MEMO_SLOTS 256
#define MEMO_WORDS 31

struct memo {
	uint32_t len; /* 0: empty (an empty chain is not remembered) */
	uint32_t reason;
	uint64_t w[MEMO_WORDS];
};

struct rsp_sleepclass {
	const struct rsp_ksyms *ks;
	struct rsp_u64map cache;     /* return address -> rule index or NO_RULE */
	struct rsp_u64map ctx_cache; /* return address -> enum ctx_kind or 0 */
	struct memo *memo;	     /* MEMO_SLOTS, or NULL (none yet, or no memory) */
	bool memo_failed;
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
	rsp_u64map__init(&sc->ctx_cache);
	return sc;
}

void rsp_sleepclass__delete(struct rsp_sleepclass *sc)
{
	if (!sc)
		return;
	rsp_u64map__exit(&sc->cache);
	rsp_u64map__exit(&sc->ctx_cache);
	free(sc->memo);
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
	struct rsp_chain_iter it;
	struct rsp_chain_frame f;
	struct memo *m = NULL;
	uint64_t n;
	enum rsp_sleep_reason reason;

	if (is_runnable(prev_state))
		return RSP_SR_PREEMPT;
	if (!sc->ks || !chain)
		return RSP_SR_UNKNOWN;
	/* The kernel frames; the user's (which follow them) say nothing of the reason. */
	n = rsp_chain__user_mark(chain, nr);
	if (!sc->memo && !sc->memo_failed) {
		sc->memo = calloc(MEMO_SLOTS, sizeof(*sc->memo));
		sc->memo_failed = !sc->memo; /* only slower */
	}
	if (sc->memo && n && n <= MEMO_WORDS) {
		m = &sc->memo[rsp_hash__stack(chain, n) % MEMO_SLOTS];
		if (m->len == n && !memcmp(m->w, chain, n * sizeof(*chain)))
			return (enum rsp_sleep_reason)m->reason;
	}
	rsp_chain__init(&it, chain, n);
	while (best && rsp_chain__next(&it, &f)) {
		uint32_t r = f.ctx == RSP_CHAIN_KERNEL ? rule_of(sc, f.addr) : NO_RULE;

		if (r < best)
			best = r;
	}
	reason = best == NO_RULE ? RSP_SR_UNKNOWN : rules[best].reason;
	if (m) {
		m->len = (uint32_t)n;
		m->reason = (uint32_t)reason;
		memcpy(m->w, chain, n * sizeof(*chain));
	}
	return reason;
}

/* The context kind of one kernel return address, cached like rule_of(). */
static uint32_t ctx_of(struct rsp_sleepclass *sc, uint64_t addr)
{
	const struct rsp_ksym *sym;
	uint32_t v = 0;

	if (!rsp_u64map__get(&sc->ctx_cache, addr, &v))
		return v;
	sym = rsp_ksyms__find(sc->ks, addr - 1, NULL);
	for (size_t i = 0; sym && i < sizeof(ctx_rules) / sizeof(ctx_rules[0]); i++) {
		const struct ctx_rule *r = &ctx_rules[i];

		if (r->match == EXACT ? !strcmp(sym->name, r->name)
				      : !strncmp(sym->name, r->name, r->len)) {
			v = r->kind;
			break;
		}
	}
	rsp_u64map__put(&sc->ctx_cache, addr, v);
	return v;
}

enum rsp_wake_context rsp_sleepclass__wake_context(struct rsp_sleepclass *sc, const uint64_t *chain,
						   uint64_t nr)
{
	bool outside = false;
	struct rsp_chain_iter it;
	struct rsp_chain_frame f;

	if (!sc->ks || !chain)
		return RSP_WCTX_UNKNOWN;
	rsp_chain__init(&it, chain, rsp_chain__user_mark(chain, nr));
	while (rsp_chain__next(&it, &f)) {
		uint32_t k;

		if (f.ctx != RSP_CHAIN_KERNEL)
			continue;
		/* ctx_of() looks a return address up at addr - 1; the first frame is an ip. */
		k = ctx_of(sc, f.lookup + 1);
		if (k == CTX_SOFTIRQ)
			outside = true;
		else if (outside && k == CTX_SEND)
			return RSP_WCTX_SEND;
		else if (outside && k == CTX_INTERRUPT)
			return RSP_WCTX_INTERRUPT;
	}
	return RSP_WCTX_UNKNOWN;
}
