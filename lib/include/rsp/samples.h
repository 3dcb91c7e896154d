/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SAMPLES_H
#define RSP_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>

/*
 * The cpu-clock samples of a window, indexed for the recursive snapshot:
 * per thread in time order (which run a sample falls in), and the idle
 * task's samples per CPU (evidence that a CPU ran nothing at that time).
 *
 * Lifetimes: callchains are not copied; they point into the records, like
 * the timeline store's stacks (rsp/tlstore.h), so they stay valid while
 * the snapshot of the window they came from stays pinned.
 */
struct rsp_samples;

struct rsp_csample {
	uint64_t time;
	uint64_t ip;
	uint32_t tid, pid, cpu; /* tid 0: the idle task */
	uint32_t nr_chain;
	const uint64_t *chain; /* PERF_CONTEXT_* markers included; NULL when not recorded */
};

/** rsp_samples__new() - an empty set. NULL on ENOMEM; free with rsp_samples__delete(). */
RSP_API struct rsp_samples *rsp_samples__new(void);
RSP_API void rsp_samples__delete(struct rsp_samples *s);

/**
 * rsp_samples__add() - add one sample (copied; its chain is not)
 *
 * Samples may come in any order. Return: 0 or -ENOMEM.
 */
RSP_API int rsp_samples__add(struct rsp_samples *s, const struct rsp_csample *smp);

/** rsp_samples__seal() - index what was added; no more adds. 0 or -ENOMEM. */
RSP_API int rsp_samples__seal(struct rsp_samples *s);

/**
 * rsp_samples__range() - the samples of thread @tid with @from <= time <= @to
 * @n: set to how many (consecutive, in time order from the one returned)
 *
 * Return: the first, or NULL when there is none. Valid until __delete().
 */
RSP_API const struct rsp_csample *rsp_samples__range(const struct rsp_samples *s, uint32_t tid,
						     uint64_t from, uint64_t to, size_t *n);

/**
 * rsp_samples__idle_before() - the time of the idle task's last sample on
 * @cpu before @t, or 0 if there is none after @after.
 */
RSP_API uint64_t rsp_samples__idle_before(const struct rsp_samples *s, uint32_t cpu, uint64_t t,
					  uint64_t after);

/** rsp_samples__count() - samples held, idle ones included. */
RSP_API size_t rsp_samples__count(const struct rsp_samples *s);

#endif /* RSP_SAMPLES_H */
