/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_CENSUS_H
#define RSP_CENSUS_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/timeline.h>
#include <rsp/window.h>

/*
 * What a window holds (rspctl status --events, --pid): its records by
 * event, its gaps, how much sleep time carried a stack; and for one
 * process, each thread's switches, wakeups, samples and run time, and who
 * woke it. One pass through the timeline (rsp/pass.h), whose callbacks
 * give the switches and wakings as recorded: the counts follow perf sched
 * timehist's rules (a thread's run time is what its CPU ran between the
 * previous switch there and the one that takes it off), so they can be
 * checked against it.
 */
struct rsp_census;

struct rsp_census_thread {
	uint32_t tid;
	uint32_t pid; /* UINT32_MAX: not known */
	char comm[16];
	uint64_t switches_out, switches_in, wakeups, samples;
	uint64_t run_ns;
};

/* Who woke the process's threads: per waker process (pid 0: the idle task). */
struct rsp_census_waker {
	uint32_t pid;
	char comm[16];
	uint64_t wakings;
};

struct rsp_census_sleeps {
	uint64_t sleeps, with_stack; /* sleeps that ended in the range */
	uint64_t sleep_ns, stack_ns; /* their time, and that of those with a stack */
};

/**
 * rsp_census__new() - count [@from, @to] of @snap (pinned by the caller)
 * @pid: the process whose threads are counted, or -1 for none
 *
 * Return: the census (free with rsp_census__delete()), or NULL (ENOMEM).
 */
RSP_API struct rsp_census *rsp_census__new(const struct rsp_schema *schema,
					   const struct rsp_wsnap *snap, uint64_t from, uint64_t to,
					   long pid);
RSP_API void rsp_census__delete(struct rsp_census *c);

/** rsp_census__stats() - the timeline's counters: records by event, gaps, lost records. */
RSP_API const struct rsp_timeline_stats *rsp_census__stats(const struct rsp_census *c);
RSP_API const struct rsp_census_sleeps *rsp_census__sleeps(const struct rsp_census *c);

/** rsp_census__threads() - @pid's threads in order of first sight; owned by @c. */
RSP_API const struct rsp_census_thread *rsp_census__threads(const struct rsp_census *c, size_t *n);
/** rsp_census__wakers() - the processes that woke @pid's threads, most wakings first. */
RSP_API const struct rsp_census_waker *rsp_census__wakers(const struct rsp_census *c, size_t *n);

#endif /* RSP_CENSUS_H */
