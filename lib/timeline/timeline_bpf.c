// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline's part of rsp's compact BPF records (tracepoints/
 * bpf_records.h): the side records that carry what a compact record leaves
 * out. A COMM record names a thread (once per CPU ring, and again when it
 * changes); a STACK record carries a stack once, later records name it by
 * hash. A switch into a sleep or a waking with stack hashes gets the
 * callchain a perf tracepoint sample would carry (kernel frames, then user
 * frames, after their PERF_CONTEXT markers), built once per pair and kept
 * as long as the timeline (a store that keeps the timeline keeps them).
 */
#include <stddef.h>
#include <linux/perf_event.h>
#include <rsp/record.h>
#include <rsp/sleepclass.h>
#include "internal/timeline.h"
#include "tracepoints/bpf_records.h"

static int on_comm(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_brec_comm r;
	struct thr *t;

	memcpy(&r, smp->raw, sizeof(r));
	tl->st.bpf_comms++;
	if (!r.tid)
		return 0;
	t = tl__get_thr(tl, r.tid);
	if (!t)
		return tl->refused ? 0 : -ENOMEM;
	tl__learn_tgid(tl, t, r.pid, smp->time);
	tl__rename(tl, t, (struct rsp_str){r.comm, (uint32_t)strnlen(r.comm, sizeof(r.comm))},
		   smp->time);
	return 0;
}

/*
 * A timeline that copies (not RSP_TL_RECORDS_STABLE: the live hist feed,
 * which runs for as long as rspd) keeps at most this many stacks; then it
 * forgets them all, which is safe there (its subscribers copy what they
 * keep) and costs the stacks referenced before they are sent again
 * (counted in bpf_stacks_missing). A query's timeline is bounded by the
 * window it reads.
 */
#define MAX_COPIED_STACKS 16384

/* Free every (kernel, user) callchain; the vector stays usable (empty). */
static void free_chains(struct rsp_timeline *tl)
{
	for (size_t i = 0; i < rsp_kvec__len(&tl->bchains); i++)
		free(((struct bchain *)rsp_kvec__at(&tl->bchains, i))->chain);
	rsp_kvec__exit(&tl->bchains);
}

static int on_stack(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_brec_stack r;
	struct bstack *b;
	bool added;

	memcpy(&r, smp->raw, sizeof(r));
	tl->st.bpf_stacks++;
	if (!(tl->flags & RSP_TL_RECORDS_STABLE) &&
	    rsp_kvec__len(&tl->bstacks) + rsp_kvec__len(&tl->bchains) >= MAX_COPIED_STACKS)
		tl__bpf_exit(tl); /* rsp_kvec__exit() leaves the vectors usable */
	b = rsp_kvec__get(&tl->bstacks, rsp_hash__key(r.hash), &added);
	if (!b)
		return -ENOMEM;
	if (!added)
		return 0; /* sent again (another CPU's ring, or after losses) */
	b->nr = r.nr;
	if (tl->flags & RSP_TL_RECORDS_STABLE) {
		b->ips = (const char *)smp->raw + sizeof(r); /* unaligned: memcpy only */
		return 0;
	}
	b->own = malloc((r.nr ? r.nr : 1) * sizeof(uint64_t));
	if (!b->own) {
		b->nr = 0;
		return -ENOMEM;
	}
	memcpy(b->own, (const char *)smp->raw + sizeof(r), r.nr * sizeof(uint64_t));
	b->ips = b->own;
	return 0;
}

int tl__on_bpf_side(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	if (smp->compact == RSP_BREC_COMM)
		return on_comm(tl, smp);
	if (smp->compact == RSP_BREC_STACK)
		return on_stack(tl, smp);
	return 1;
}

/* The stack of @hash, NULL (counted) if the stream never carried it. */
static const struct bstack *find_stack(struct rsp_timeline *tl, uint64_t hash)
{
	const struct bstack *b;

	if (!hash)
		return NULL;
	b = rsp_kvec__find(&tl->bstacks, rsp_hash__key(hash));
	if (!b || !b->ips)
		tl->st.bpf_stacks_missing++;
	return b && b->ips ? b : NULL;
}

static const struct bchain *make_chain(struct rsp_timeline *tl, uint64_t kh, uint64_t uh)
{
	uint64_t key = rsp_hash__key(rsp_hash__u64(rsp_hash__u64(RSP_HASH_INIT, kh), uh));
	const struct bstack *k, *u;
	struct bchain *c;
	bool added;
	uint32_t n;

	c = rsp_kvec__find(&tl->bchains, key);
	if (c)
		return c;
	if (!(tl->flags & RSP_TL_RECORDS_STABLE) &&
	    rsp_kvec__len(&tl->bchains) >= MAX_COPIED_STACKS) {
		free_chains(tl); /* the pairs only: each is made again from its stacks */
	}
	k = find_stack(tl, kh);
	u = find_stack(tl, uh);
	if (!k && !u)
		return NULL;
	c = rsp_kvec__get(&tl->bchains, key, &added);
	if (!c)
		return NULL;
	n = (k ? 1u + k->nr : 0) + (u ? 1u + u->nr : 0);
	c->chain = malloc(n * sizeof(uint64_t));
	if (!c->chain)
		return NULL;
	c->nr = 0;
	if (k) {
		c->chain[c->nr++] = PERF_CONTEXT_KERNEL;
		memcpy(c->chain + c->nr, k->ips, k->nr * sizeof(uint64_t));
		c->nr += k->nr;
	}
	if (u) {
		c->chain[c->nr++] = PERF_CONTEXT_USER;
		memcpy(c->chain + c->nr, u->ips, u->nr * sizeof(uint64_t));
		c->nr += u->nr;
	}
	return c;
}

/*
 * A check (SWITCH_CHECK): whether the cached stacks differed from the
 * walked @kh and @uh, and where the kernel one did, the sleep reason it
 * gives (tl->bcheck_reason: switch_out() compares it with the walked
 * stack's). Not CHECKED when the cached stack is not known here.
 */
static uint16_t check_flags(struct rsp_timeline *tl, const char *raw, uint64_t kh, uint64_t uh)
{
	uint64_t kc, uc, missing = tl->st.bpf_stacks_missing;
	const struct bchain *c;
	uint16_t f = RSP_SEGF_STACK_CHECKED;
	uint32_t st;

	memcpy(&kc, raw + offsetof(struct rsp_brec_switch_check, kcached), 8);
	memcpy(&uc, raw + offsetof(struct rsp_brec_switch_check, ucached), 8);
	memcpy(&st, raw + offsetof(struct rsp_brec_switch, prev_state), 4);
	if (kc != kh || uc != uh)
		f |= RSP_SEGF_STACK_DIFFERS;
	if (kc == kh)
		return f;
	/* classified before the record's own chain is made (make_chain may free the pairs) */
	c = kc ? make_chain(tl, kc, 0) : NULL;
	tl->st.bpf_stacks_missing = missing; /* the cache's stack: not the record's own */
	if (!c || !c->chain)
		return 0;
	tl->bcheck_reason = (int)rsp_sleepclass__classify(tl->sc, (int64_t)st, c->chain, c->nr);
	return f;
}

void tl__bpf_chain(struct rsp_timeline *tl, struct rsp_sample *smp)
{
	uint64_t kh, uh;
	const struct bchain *c;
	uint8_t sf;

	/* A sample's raw data is 4 bytes off 8-byte alignment: fields are copied out. */
	const char *raw = smp->raw;

	if (smp->compact == RSP_BREC_SWITCH_STACK || smp->compact == RSP_BREC_SWITCH_CHECK) {
		memcpy(&kh, raw + offsetof(struct rsp_brec_switch_stack, kstack), 8);
		memcpy(&uh, raw + offsetof(struct rsp_brec_switch_stack, ustack), 8);
		memcpy(&sf, raw + offsetof(struct rsp_brec_switch, stack_flags), 1);
		if (sf & (RSP_BSTACKF_KCACHED | RSP_BSTACKF_UCACHED))
			tl->bstack_flags = RSP_SEGF_STACK_CACHED;
		if (smp->compact == RSP_BREC_SWITCH_CHECK && tl->sc)
			tl->bstack_flags = check_flags(tl, raw, kh, uh);
	} else if (smp->compact == RSP_BREC_WAKING_STACK && !(tl->flags & RSP_TL_NO_STACKS)) {
		memcpy(&kh, raw + offsetof(struct rsp_brec_waking_stack, kstack), 8);
		memcpy(&uh, raw + offsetof(struct rsp_brec_waking_stack, ustack), 8);
	} else {
		return;
	}
	/*
	 * A timeline without stacks (the histograms' feed) needs a sleep's
	 * kernel frames only, for its reason: no user part, no waker's stack.
	 */
	if (tl->flags & RSP_TL_NO_STACKS)
		uh = 0;
	c = make_chain(tl, kh, uh);
	if (c && c->chain) {
		smp->callchain = c->chain;
		smp->nr_callchain = c->nr;
	}
}

/* A thread first seen: its name and process, if a COMM record before the range gave them. */
void tl__prename(struct rsp_timeline *tl, struct thr *t)
{
	const struct prename *p = rsp_kvec__find(&tl->prenames, t->tid);

	if (!p)
		return;
	t->tgid = p->tgid;
	memcpy(t->comm, p->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
}

int rsp_timeline__learn(struct rsp_timeline *tl, const struct rsp_wentry *e)
{
	struct rsp_sample smp;
	unsigned flags = tl->flags;
	int ret;

	if (!rsp_record__is_sample(e->rec) || rsp_record__parse_sample(tl->schema, e->rec, &smp))
		return 0;
	if (smp.compact == RSP_BREC_COMM) {
		struct rsp_brec_comm r;
		struct prename *p;

		memcpy(&r, smp.raw, sizeof(r));
		if (!r.tid)
			return 0;
		p = rsp_kvec__get(&tl->prenames, r.tid, NULL);
		if (!p)
			return -ENOMEM;
		p->tgid = r.pid;
		memcpy(p->comm, r.comm, sizeof(p->comm));
		return 0;
	}
	if (smp.compact != RSP_BREC_STACK)
		return 0;
	/* copied: the records before the range need not stay pinned */
	tl->flags &= ~RSP_TL_RECORDS_STABLE;
	ret = on_stack(tl, &smp);
	tl->flags = flags;
	tl->st.bpf_stacks--; /* counted as the range's own when sent in it */
	return ret < 0 ? ret : 0;
}

void tl__bpf_exit(struct rsp_timeline *tl)
{
	for (size_t i = 0; i < rsp_kvec__len(&tl->bstacks); i++)
		free(((struct bstack *)rsp_kvec__at(&tl->bstacks, i))->own);
	rsp_kvec__exit(&tl->bstacks);
	rsp_kvec__exit(&tl->prenames);
	free_chains(tl);
}
