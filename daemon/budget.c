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
	if (b->bpf && rsp_bpfcap__run_time(b->bpf, &ns, &runs))
		ns = 0;
#else
	(void)b;
	(void)runs;
#endif
	return ns;
}

/* The syscall family's and the stopwatches' programs: run time so far, ns. */
static void more_ns(struct rspd_budget *b, uint64_t *sc, uint64_t *sw)
{
	*sc = *sw = 0;
	if (!b->d)
		return;
	*sc = rspd_syscalls__run_time(b->d);
#ifdef RSP_HAVE_BPF
	*sw = b->d->stopwatches ? rspd_stopwatches__run_time(b->d->stopwatches) : 0;
#endif
}

/* The programs' run time between two reads: a program unloaded in between
 * (a stopwatch removed) takes its time with it, counted as none. */
static uint64_t gained(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/*
 * The BPF programs' run time, sampled: the kernel counts it only while
 * somebody holds BPF_STATS_RUN_TIME, and counting costs two clock reads
 * around every program run, so rspd holds it for SAMPLE_NS of each
 * SAMPLE_EVERY_NS (at the next flush after; a flush interval longer than
 * that makes the sample as long as the interval) and takes the share of the
 * sample for the share of the second.
 */
#define SAMPLE_NS	100000000ull
#define SAMPLE_EVERY_NS 1000000000ull

static void sample(struct rspd_budget *b, uint64_t now_ns)
{
#ifdef RSP_HAVE_BPF
	uint64_t ns, sc, sw, dur;

	if ((!b->bpf && !b->d) || b->stats_refused)
		return;
	if (b->stats_fd < 0) {
		if (now_ns < b->next_sample_ns)
			return;
		b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (b->stats_fd < 0) {
			b->stats_refused = true;
			pthread_mutex_lock(&b->lock);
			snprintf(b->st.note, sizeof(b->st.note),
				 "enforced on rspd's CPU time only: the kernel refused BPF "
				 "run-time statistics (%s)",
				 strerror(errno));
			pthread_mutex_unlock(&b->lock);
			rspd_log__write(RSP_LOG_WARN, "overhead budget: %s", b->st.note);
			return;
		}
		b->sample_from_ns = now_ns;
		b->sample_bpf_ns = bpf_ns(b);
		more_ns(b, &b->sample_sc_ns, &b->sample_sw_ns);
		b->next_sample_ns = now_ns + SAMPLE_EVERY_NS;
		return;
	}
	if (now_ns - b->sample_from_ns < SAMPLE_NS)
		return;
	dur = now_ns - b->sample_from_ns;
	ns = gained(bpf_ns(b), b->sample_bpf_ns);
	more_ns(b, &sc, &sw);
	sc = gained(sc, b->sample_sc_ns);
	sw = gained(sw, b->sample_sw_ns);
	close(b->stats_fd);
	b->stats_fd = -1;
	pthread_mutex_lock(&b->lock);
	b->st.syscall_pct = 100.0 * (double)sc / (double)dur;
	b->st.stopwatch_pct = 100.0 * (double)sw / (double)dur;
	b->st.bpf_pct = 100.0 * (double)ns / (double)dur + b->st.syscall_pct + b->st.stopwatch_pct;
	/* estimated: the sample's run time stands for the stretch until the next one */
	b->st.syscall_ns += (uint64_t)((double)sc * (double)SAMPLE_EVERY_NS / (double)dur);
	b->st.stopwatch_ns += (uint64_t)((double)sw * (double)SAMPLE_EVERY_NS / (double)dur);
	pthread_mutex_unlock(&b->lock);
	b->bpf_fresh = true;
#else
	(void)b;
	(void)now_ns;
#endif
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
	b->bpf_fresh = !bpf;
	if (pct <= 0) {
		snprintf(b->st.note, sizeof(b->st.note), "off (--overhead-budget 0)");
		b->bpf = NULL;
	} else if (!bpf) {
		snprintf(b->st.note, sizeof(b->st.note),
			 "measured, not enforced: the perf backend cannot be degraded at run time");
	}
	b->st.enabled = b->bpf != NULL;
	b->hold = HOLD_S + 1; /* the first seconds measure rspd's own start */
	b->last_ns = now_ns;
	b->last_cpu_ns = self_cpu_ns();
	b->next_sample_ns = now_ns;
}

static void tick(struct rspd_budget *b, uint64_t now_ns);

void rspd_budget__watch(struct rspd_budget *b, struct rspd *d)
{
	if (!b->inited || b->st.budget_pct <= 0)
		return;
	b->d = d; /* the perf backend too: stopwatches may run there */
}

/* Move to @to (under the lock): set the programs, log, keep the change. */
static void change(struct rspd_budget *b, unsigned to, double cost, uint64_t now_ns)
{
	struct rsp_budget_status *st = &b->st;
	struct rsp_budget_change c = {.time_ns = now_ns,
				      .from = st->level,
				      .to = to,
				      .cost_pct = cost,
				      .rspd_pct = st->rspd_pct,
				      .bpf_pct = st->bpf_pct,
				      .query_pct = st->query_pct,
				      .unshed_bpf_pct = st->syscall_pct + st->stopwatch_pct};
	int err = 0;

#ifdef RSP_HAVE_BPF
	err = rsp_bpfcap__set_degrade(b->bpf, to);
#endif
	if (err) {
		rspd_log__write(RSP_LOG_WARN, "overhead budget: could not set level %u: %s", to,
				strerror(-err));
		return;
	}
	rspd_log__write(
		RSP_LOG_INFO,
		"overhead budget: capture cost %.1f%% of a CPU against %.1f%% (rspd %.1f%%, "
		"BPF %.1f%%; queries %.1f%% and syscall/stopwatch programs %.1f%% left "
		"out): level %u -> %u (%s)",
		cost, st->budget_pct, c.rspd_pct, c.bpf_pct, c.query_pct, c.unshed_bpf_pct,
		st->level, to, rsp_degrade__name(to));
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
	b->bpf_fresh = !b->bpf || b->stats_refused; /* wait for a sample at the new level */
}

void rspd_budget__tick(struct rspd_budget *b, uint64_t now_ns)
{
	if (!b->inited)
		return;
	sample(b, now_ns);
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

int rspd_budget__asked(struct rspd *d, int slot, bool on)
{
	clockid_t id;

	if (!on) {
		if (slot >= 0)
			atomic_store_explicit(&d->asked_clocks[slot], 0, memory_order_relaxed);
		return -1;
	}
	if (pthread_getcpuclockid(pthread_self(), &id))
		return -1;
	for (int i = 0; i < RSPD_ASKED_CLOCKS; i++) {
		uint64_t free_slot = 0;

		if (atomic_compare_exchange_strong(&d->asked_clocks[i], &free_slot,
						   1ull << 32 | (uint32_t)id))
			return i;
	}
	return -1;
}

/* The CPU time of the threads that answer what is asked, ns, summed now. */
static uint64_t asked_cpu_ns(struct rspd *d)
{
	uint64_t sum = 0;

	for (int i = 0; i < RSPD_ASKED_CLOCKS; i++) {
		uint64_t v = atomic_load_explicit(&d->asked_clocks[i], memory_order_relaxed);
		struct timespec ts;

		/* a thread gone since its slot was read: EINVAL, nothing */
		if (v && !clock_gettime((clockid_t)(int32_t)(uint32_t)v, &ts))
			sum += (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	return sum;
}

static void tick(struct rspd_budget *b, uint64_t now_ns)
{
	uint64_t cpu, qcpu, dt = now_ns - b->last_ns;
	double cost, rspd, query;

	if (now_ns <= b->last_ns || dt < 1000000000ull)
		return;
	cpu = self_cpu_ns();
	qcpu = b->d ? asked_cpu_ns(b->d) : 0;
	rspd = 100.0 * (double)(cpu - b->last_cpu_ns) / (double)dt;
	/* a thread that stopped answering takes its time with it: none, then */
	query = qcpu > b->last_asked_ns ? 100.0 * (double)(qcpu - b->last_asked_ns) / (double)dt
					: 0.0;
	if (query > rspd)
		query = rspd;
	b->last_ns = now_ns;
	b->last_cpu_ns = cpu;
	b->last_asked_ns = qcpu;
	pthread_mutex_lock(&b->lock);
	b->st.cost_pct = rspd + b->st.bpf_pct;
	b->st.rspd_pct = rspd;
	b->st.query_pct = query;
	if (b->st.cost_pct > b->st.cost_max_pct)
		b->st.cost_max_pct = b->st.cost_pct;
	/*
	 * What a level can shed: not the syscall family's or the stopwatches'
	 * programs, nor the queries asked of rspd (under ASan each status a
	 * test polled cost rspd 2-4% of a CPU, and kept it from recovering)
	 */
	cost = b->st.cost_pct - b->st.syscall_pct - b->st.stopwatch_pct - b->st.query_pct;
	if (b->st.enabled && b->bpf_fresh) {
		if (b->hold) {
			b->hold--;
		} else if (cost > b->st.budget_pct) {
			b->under = 0;
			if (++b->over >= OVER_S && b->st.level + 1 < RSP_DEGRADE__NR)
				change(b, b->st.level + 1, cost, now_ns);
		} else if (cost < b->st.budget_pct / 2) {
			b->over = 0;
			if (++b->under >= UNDER_S && b->st.level > 0)
				change(b, b->st.level - 1, cost, now_ns);
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
