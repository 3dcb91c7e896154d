// SPDX-License-Identifier: GPL-2.0
/*
 * The overhead budget: measure what capture costs each second, and move
 * the BPF programs' degradation level (see budget.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "budget.h"
#include "log.h"
#include "rspd.h"
#include "stopwatch.h"
#include "syscalls.h"
#ifdef RSP_HAVE_BPF
#include <bpf/bpf.h>
#include "bpfcap.h"
#endif

#define OVER_S	1 /* seconds over the budget before a degradation */
#define UNDER_S 5 /* seconds under half of it before a recovery */
#define HOLD_S	1 /* after a change: its effect shows in the next full second */

/* rspd's CPU time, all threads, ns. */
static uint64_t self_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t bpf_ns(struct rspd_budget *b)
{
	uint64_t ns = 0, runs;

#ifdef RSP_HAVE_BPF
	if (b->bpf && b->stats_fd >= 0 && rsp_bpfcap__run_time(b->bpf, &ns, &runs))
		ns = 0;
#else
	(void)b;
	(void)runs;
#endif
	return ns;
}

void rspd_budget__init(struct rspd_budget *b, double pct, struct rsp_bpfcap *bpf, uint64_t now_ns)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->inited = true;
	b->stats_fd = -1;
	b->st.budget_pct = pct;
	b->st.since_ns = now_ns;
	b->bpf = bpf;
	if (pct <= 0) {
		snprintf(b->st.note, sizeof(b->st.note), "off (--overhead-budget 0)");
		b->bpf = NULL;
	} else if (!bpf) {
		snprintf(b->st.note, sizeof(b->st.note),
			 "measured, not enforced: the perf backend cannot be degraded at run time");
	}
#ifdef RSP_HAVE_BPF
	if (b->bpf) {
		b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (b->stats_fd < 0) {
			snprintf(
				b->st.note, sizeof(b->st.note),
				"enforced on rspd's CPU time only: the kernel refused BPF run-time "
				"statistics (%s)",
				strerror(errno));
			rspd_log__write(RSP_LOG_WARN, "overhead budget: %s", b->st.note);
		}
	}
#endif
	b->st.enabled = b->bpf != NULL;
	b->hold = HOLD_S + 1; /* the first seconds measure rspd's own start */
	b->last_ns = now_ns;
	b->last_cpu_ns = self_cpu_ns();
	b->last_bpf_ns = bpf_ns(b);
}

static void tick(struct rspd_budget *b, uint64_t now_ns);

/* Move to @to (under the lock): set the programs, log, keep the change. */
static void change(struct rspd_budget *b, unsigned to, uint64_t now_ns)
{
	struct rsp_budget_status *st = &b->st;
	struct rsp_budget_change c = {now_ns, st->level, to, st->cost_pct};
	int err = 0;

#ifdef RSP_HAVE_BPF
	err = rsp_bpfcap__set_degrade(b->bpf, to);
#endif
	if (err) {
		rspd_log__write(RSP_LOG_WARN, "overhead budget: could not set level %u: %s", to,
				strerror(-err));
		return;
	}
	rspd_log__write(RSP_LOG_INFO,
			"overhead budget: capture cost %.1f%% of a CPU against %.1f%%: level %u -> "
			"%u (%s)",
			st->cost_pct, st->budget_pct, st->level, to, rsp_degrade__name(to));
	if (st->nr_changes == RSP_BUDGET_HISTORY) {
		memmove(st->changes, st->changes + 1, sizeof(c) * (RSP_BUDGET_HISTORY - 1));
		st->nr_changes--;
	}
	st->changes[st->nr_changes++] = c;
	st->changes_total++;
	st->level = to;
	st->since_ns = now_ns;
	b->over = b->under = 0;
	b->hold = HOLD_S;
}

void rspd_budget__tick(struct rspd_budget *b, uint64_t now_ns)
{
	if (!b->inited)
		return;
	tick(b, now_ns);
}

void rspd_budget__status(struct rspd_budget *b, struct rsp_budget_status *out)
{
	if (!b->inited) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&b->lock);
	*out = b->st;
	pthread_mutex_unlock(&b->lock);
}

/* The syscall family's and the stopwatches' programs: run time so far, ns. */
static void more_ns(struct rspd_budget *b, uint64_t *sc, uint64_t *sw)
{
	*sc = *sw = 0;
	if (!b->d || b->stats_fd < 0)
		return;
	*sc = rspd_syscalls__run_time(b->d);
#ifdef RSP_HAVE_BPF
	*sw = b->d->stopwatches ? rspd_stopwatches__run_time(b->d->stopwatches) : 0;
#endif
}

void rspd_budget__watch(struct rspd_budget *b, struct rspd *d)
{
	if (!b->inited || b->st.budget_pct <= 0)
		return;
#ifdef RSP_HAVE_BPF
	if (b->stats_fd < 0 && !b->bpf) /* the perf backend: stopwatches may still run */
		b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
#endif
	b->d = d;
	more_ns(b, &b->last_sc_ns, &b->last_sw_ns);
}

/* The programs' run time between two reads: a program unloaded in between
 * (a stopwatch removed) takes its time with it, counted as none. */
static uint64_t gained(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

static void tick(struct rspd_budget *b, uint64_t now_ns)
{
	uint64_t cpu = self_cpu_ns(), bns = bpf_ns(b), dt = now_ns - b->last_ns, sc, sw, dsc, dsw;
	double cost, rspd, prog, scp, swp;

	if (now_ns <= b->last_ns || dt < 500000000ull)
		return;
	more_ns(b, &sc, &sw);
	dsc = gained(sc, b->last_sc_ns);
	dsw = gained(sw, b->last_sw_ns);
	rspd = 100.0 * (double)(cpu - b->last_cpu_ns) / (double)dt;
	scp = 100.0 * (double)dsc / (double)dt;
	swp = 100.0 * (double)dsw / (double)dt;
	prog = 100.0 * (double)(bns - b->last_bpf_ns) / (double)dt + scp + swp;
	cost = rspd + prog;
	b->last_ns = now_ns;
	b->last_cpu_ns = cpu;
	b->last_bpf_ns = bns;
	b->last_sc_ns = sc;
	b->last_sw_ns = sw;
	pthread_mutex_lock(&b->lock);
	b->st.cost_pct = cost;
	b->st.rspd_pct = rspd;
	b->st.bpf_pct = prog;
	b->st.syscall_pct = scp;
	b->st.stopwatch_pct = swp;
	b->st.syscall_ns += dsc;
	b->st.stopwatch_ns += dsw;
	if (cost > b->st.cost_max_pct)
		b->st.cost_max_pct = cost;
	if (b->st.enabled) {
		if (b->hold) {
			b->hold--;
		} else if (cost > b->st.budget_pct) {
			b->under = 0;
			if (++b->over >= OVER_S && b->st.level + 1 < RSP_DEGRADE__NR)
				change(b, b->st.level + 1, now_ns);
		} else if (cost < b->st.budget_pct / 2) {
			b->over = 0;
			if (++b->under >= UNDER_S && b->st.level > 0)
				change(b, b->st.level - 1, now_ns);
		} else {
			b->over = b->under = 0;
		}
	}
	pthread_mutex_unlock(&b->lock);
}

void rspd_budget__exit(struct rspd_budget *b)
{
	if (!b->inited)
		return;
	b->inited = false;
	if (b->stats_fd >= 0)
		close(b->stats_fd);
	b->stats_fd = -1;
	pthread_mutex_destroy(&b->lock);
}
