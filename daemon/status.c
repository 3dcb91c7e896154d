// SPDX-License-Identifier: GPL-2.0
/* The capture's state for `rspctl status`, read from the drain's counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "clock.h"
#include "rspd.h"
#include "status.h"
#include "syscalls.h"
#include "trigger.h"
#include "histthread.h"
#include <rsp/histfeed.h>
#ifdef RSP_HAVE_BPF
#include "bpfcap.h"
#endif

static uint64_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, rss = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static void fill_cpus(struct rspd *d, struct rsp_capture_info *ci)
{
	for (int i = 0; i < d->es.nr_rings; i++) {
		unsigned cpu = d->es.rings[i].cpu;
		struct rsp_cpu_counters *k = &d->drain.cpu[cpu];
		struct rsp_cpu_status *c = &ci->cpus[ci->nr_cpus++];

		c->cpu = cpu;
		c->records = atomic_load_explicit(&k->records, memory_order_relaxed);
		c->bytes = atomic_load_explicit(&k->bytes, memory_order_relaxed);
		c->lost = atomic_load_explicit(&k->lost, memory_order_relaxed) +
			  atomic_load_explicit(&k->dropped, memory_order_relaxed);
		c->lost_events = atomic_load_explicit(&k->lost_events, memory_order_relaxed);
		c->records_per_s = atomic_load_explicit(&k->records_per_s, memory_order_relaxed);
		ci->records_total += c->records;
		ci->lost_total += c->lost;
		ci->records_per_s += c->records_per_s;
	}
}

/* Events the kernel ran no BPF program for (the program was running already). */
static void fill_skipped(struct rspd *d, struct rsp_capture_info *ci)
{
#ifdef RSP_HAVE_BPF
	struct rsp_bpfcap_stats st;

	if (d->es.bpf && rsp_bpfcap__skipped(d->es.bpf, &ci->skipped_nested))
		ci->skipped_nested = 0;
	if (d->es.bpf && !rsp_bpfcap__stats(d->es.bpf, &st)) {
		ci->folded = atomic_load_explicit(&d->drain.folded, memory_order_relaxed);
		ci->carried = st.carried;
	}
#else
	(void)d;
	(void)ci;
#endif
}

/* Kernel counts against delivered samples, per catalogue event. */
static void fill_delivery(struct rspd *d, struct rsp_capture_info *ci)
{
	for (int i = 0; i < d->es.nr && i < RSP_EVSET_MAX; i++) {
		struct rsp_event_status *st = &ci->events[d->es.e[i].event];

		if (!atomic_load_explicit(&d->drain.checked_counted[i], memory_order_relaxed))
			continue;
		st->counted = true;
		st->fired += atomic_load_explicit(&d->drain.checked_fired[i], memory_order_relaxed);
		st->delivered +=
			atomic_load_explicit(&d->drain.checked_delivered[i], memory_order_relaxed);
	}
}

/* The BPF programs' stack counters (none under perf). */
static void fill_stack(struct rspd *d, struct rsp_stack_status *s)
{
#ifdef RSP_HAVE_BPF
	struct rsp_bpfcap_stats st;
	struct rsp_histfeed_stats fs;

	if (!d->es.bpf || rsp_bpfcap__stats(d->es.bpf, &st))
		return;
	s->valid = true;
	s->check = d->es.opts.stack_check;
	s->refresh = d->es.opts.stack_refresh;
	s->sites = st.stack_sites;
	s->walked = st.walks;
	s->cached = st.cached;
	s->no_key = st.no_key;
	s->kchecks = st.kchecks;
	s->kdiffer = st.kdiffer;
	s->uchecks = st.uchecks;
	s->udiffer = st.udiffer;
	s->walk_errors = st.stack_errors;
	if (!rspd_histthread__feed_stats(d, &fs)) {
		s->have_time = true;
		s->sleep_s = (double)fs.sleep_ns / 1e9;
		s->cached_s = (double)fs.cached_ns / 1e9;
		s->checked_s = (double)fs.checked_ns / 1e9;
		s->stack_differ_s = (double)fs.stack_differ_ns / 1e9;
		s->reason_differ_s = (double)fs.reason_differ_ns / 1e9;
	}
#else
	(void)d;
	(void)s;
#endif
}

/* What the histograms' timeline infers was not delivered (either backend). */
static void fill_inferred(struct rspd *d, struct rsp_delivery_status *dl)
{
	struct rsp_histfeed_stats fs;

	if (rspd_histthread__feed_stats(d, &fs))
		return;
	dl->valid = true;
	dl->switches = fs.tl_switches;
	dl->switch_outs_not_seen = fs.tl_switch_outs_not_seen;
	dl->switch_ins_not_seen = fs.tl_switch_ins_not_seen;
	dl->wakings_not_seen = fs.tl_wakings_not_seen;
}

int rspd_status__fill(struct rspd *d, struct rsp_capture_info *ci)
{
	const struct rsp_capture_opts *o = &d->cfg.capture;
	char buf[32];

	memset(ci, 0, sizeof(*ci));
	ci->cpus = calloc((size_t)d->es.nr_rings + 1, sizeof(*ci->cpus));
	if (!ci->cpus)
		return -1;
	snprintf(ci->version, sizeof(ci->version), "%s", RSP_VERSION);
	ci->pid = getpid();
	ci->now_ns = rspd_clock__now_ns();
	ci->uptime_s = (double)(ci->now_ns - d->start_ns) / 1e9;
	ci->rss_bytes = rss_bytes();
	ci->cpu_seconds = cpu_seconds();
	snprintf(ci->backend, sizeof(ci->backend), "%s", d->es.backend);
	snprintf(ci->backend_note, sizeof(ci->backend_note), "%s", d->es.backend_note);
	snprintf(ci->capture_cgroup, sizeof(ci->capture_cgroup), "%s", d->es.opts.cgroup);
	snprintf(ci->stacks, sizeof(ci->stacks), "%s",
		 rsp_capture_opts__stacks_name(&d->es.opts, buf, sizeof(buf)));
	snprintf(ci->stacks_note, sizeof(ci->stacks_note), "%s", d->es.stacks_note);
	fill_stack(d, &ci->stack);
	fill_inferred(d, &ci->delivery);
	rspd_budget__status(&d->budget, &ci->budget);
	snprintf(ci->callchain, sizeof(ci->callchain), "%s",
		 o->callchain_kernel && o->callchain_user ? "kernel+user"
		 : o->callchain_kernel			  ? "kernel"
							  : "user");
	ci->sample_freq = o->families[RSP_FAM_SAMPLE] ? o->sample_freq : 0;
	ci->ring_pages = o->ring_pages;
	memcpy(ci->families_on, o->families, sizeof(ci->families_on));
	memcpy(ci->family_note, d->es.family_note, sizeof(ci->family_note));
	/* the syscall family: on only where its BPF programs run (syscalls.h) */
	ci->families_on[RSP_FAM_SYSCALL] = rspd_syscalls__status(
		d, ci->family_note[RSP_FAM_SYSCALL], sizeof(ci->family_note[RSP_FAM_SYSCALL]));
	rsp_capture_opts__dwarf_name(o, ci->dwarf, sizeof(ci->dwarf));
	ci->dwarf_stack = o->dwarf_stack;
	memcpy(ci->events, d->es.status, sizeof(ci->events));
	fill_cpus(d, ci);
	fill_delivery(d, ci);
	fill_skipped(d, ci);
	if (rspd_triggers__views(d, &ci->triggers, &ci->nr_triggers, &ci->trigger_totals)) {
		free(ci->cpus);
		return -1;
	}
	if (atomic_load_explicit(&d->silent_ns, memory_order_relaxed))
		snprintf(ci->capture_problem, sizeof(ci->capture_problem),
			 "no record reached the rings in the %.1f s after start: rspd records "
			 "nothing (the log says more)",
			 (double)atomic_load_explicit(&d->silent_ns, memory_order_relaxed) / 1e9);
	return 0;
}

void rspd_status__free(struct rsp_capture_info *ci)
{
	free(ci->cpus);
	free(ci->triggers);
	ci->cpus = NULL;
	ci->triggers = NULL;
}
