// SPDX-License-Identifier: GPL-2.0
/*
 * The event set: from the catalogue and the options to perf_event_attrs,
 * opened system-wide on every online CPU with libperf, one ring per CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>
#include <rsp/net.h>
#include <rsp/record.h>
#include <rsp/unwind.h>
#include <rsp/uprobe.h>
#include "evset.h"
#ifdef RSP_HAVE_BPF
#include "bpfcap.h"
#endif
#include <sys/stat.h>
#include <rsp/cgroup.h>
#include "log.h"
#include "perf_internal.h"

/*
 * sched_switch's prev_state: the low byte holds the sleep state; 0 means
 * the task left runnable (yield), TASK_REPORT_MAX (0x100) means preempted.
 * These filters split switches into sleeps and the rest.
 */
#define FILTER_SLEEPS	  "prev_state & 255"
#define FILTER_NOT_SLEEPS "!(prev_state & 255)"
/* Sockets of other families (UNIX, netlink) say nothing about TCP and UDP. */
#define FILTER_INET "family == 2 || family == 10"

/* What every event shares: rsp's record layout, the clock, the wakeup. */
static void attr_common(struct perf_event_attr *a, const struct rsp_capture_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = RSP_LAYOUT_SAMPLE_TYPE;
	a->sample_period = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->read_format = PERF_FORMAT_ID;
	a->disabled = 1;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((uint64_t)o->ring_pages * 4096 * o->wakeup_percent / 100);
	if (!a->wakeup_watermark)
		a->wakeup_watermark = 1;
}

static void attr_callchain(struct perf_event_attr *a, const struct rsp_capture_opts *o)
{
	a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	a->exclude_callchain_kernel = !o->callchain_kernel;
	a->exclude_callchain_user = !o->callchain_user;
	a->sample_max_stack = (uint16_t)o->max_stack;
}

/* The user registers and the top of the user stack, for DWARF unwinding at query time. */
static void attr_dwarf(struct perf_event_attr *a, const struct rsp_capture_opts *o, int ev)
{
	if (!o->dwarf[ev] || !o->dwarf_stack)
		return;
	a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = RSP_UNWIND_REGS_MASK;
	a->sample_stack_user = o->dwarf_stack;
}

static int add_entry(struct rsp_evset *es, const struct perf_event_attr *a, int ev,
		     enum rsp_role role, const char *filter)
{
	const struct rsp_event_info *ei = rsp_catalogue__event(ev);
	struct rsp_evset_entry *e;
	struct perf_event_attr copy = *a;

	if (es->nr == RSP_EVSET_MAX)
		return -ENOSPC;
	e = &es->e[es->nr];
	e->evsel = perf_evsel__new(&copy);
	if (!e->evsel)
		return -ENOMEM;
	e->event = ev;
	e->role = role;
	e->filter = filter;
	if (role == RSP_ROLE_BPF)
		snprintf(e->name, sizeof(e->name), "bpf-output");
	else if (ei->kind == RSP_EVK_TRACEPOINT)
		snprintf(e->name, sizeof(e->name), "%s:%s", ei->system, ei->tp);
	else if (ei->kind == RSP_EVK_KPROBE)
		snprintf(e->name, sizeof(e->name), "kprobe:%s", ei->tp);
	else
		snprintf(e->name, sizeof(e->name), "%s", ei->tp);
	perf_evlist__add(es->evlist, e->evsel);
	es->nr++;
	return 0;
}

/* sched_switch becomes one or two evsels, per the stack policy. */
static int add_switch(struct rsp_evset *es, struct perf_event_attr *a)
{
	const struct rsp_capture_opts *o = &es->opts;
	struct perf_event_attr b = *a;
	int err;

	switch (o->stacks) {
	case RSP_STACKS_NONE:
		return add_entry(es, a, RSP_EV_sched_switch, RSP_ROLE_PRIMARY, NULL);
	case RSP_STACKS_ALL:
		attr_callchain(a, o);
		attr_dwarf(a, o, RSP_EV_sched_switch);
		return add_entry(es, a, RSP_EV_sched_switch, RSP_ROLE_PRIMARY, NULL);
	case RSP_STACKS_CACHED: /* made sleeps where perf records (rsp_evset__open) */
	case RSP_STACKS_SLEEPS:
		err = add_entry(es, a, RSP_EV_sched_switch, RSP_ROLE_PRIMARY, FILTER_NOT_SLEEPS);
		attr_callchain(&b, o);
		attr_dwarf(&b, o, RSP_EV_sched_switch);
		return err ? err
			   : add_entry(es, &b, RSP_EV_sched_switch, RSP_ROLE_PRIMARY,
				       FILTER_SLEEPS);
	case RSP_STACKS_SAMPLED:
		err = add_entry(es, a, RSP_EV_sched_switch, RSP_ROLE_PRIMARY, NULL);
		attr_callchain(&b, o);
		attr_dwarf(&b, o, RSP_EV_sched_switch);
		b.sample_period = o->stack_every;
		return err ? err
			   : add_entry(es, &b, RSP_EV_sched_switch, RSP_ROLE_STACK_COPY, NULL);
	}
	return -EINVAL;
}

static int add_tracepoint(struct rsp_evset *es, struct tep_handle *tep, int ev)
{
	struct perf_event_attr a;
	int id = rsp_schema__tp_id(es->schema, ev);

	(void)tep;
	attr_common(&a, &es->opts);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_type |= PERF_SAMPLE_RAW;
	if (ev == RSP_EV_sched_switch)
		return add_switch(es, &a);
	/* The waker's stack at the waking: the wait-for graph's waker stacks. */
	if (ev == RSP_EV_sched_waking && es->opts.waker_stacks &&
	    (es->opts.stacks == RSP_STACKS_ALL || es->opts.stacks == RSP_STACKS_SLEEPS))
		attr_callchain(&a, &es->opts);
	if (ev == RSP_EV_sock_send_length || ev == RSP_EV_sock_recv_length ||
	    ev == RSP_EV_sk_data_ready)
		return add_entry(es, &a, ev, RSP_ROLE_PRIMARY, FILTER_INET);
	return add_entry(es, &a, ev, RSP_ROLE_PRIMARY, NULL);
}

static int add_software(struct rsp_evset *es, int ev)
{
	const struct rsp_capture_opts *o = &es->opts;
	struct perf_event_attr a;

	attr_common(&a, o);
	a.type = PERF_TYPE_SOFTWARE;
	if (ev == RSP_EV_cpu_clock) {
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.freq = 1;
		a.sample_freq = o->sample_freq;
		a.sample_type |= PERF_SAMPLE_PERIOD;
		if (o->sample_stacks)
			attr_callchain(&a, o);
		attr_dwarf(&a, o, RSP_EV_cpu_clock);
	} else {
		/* The dummy event carries the side-band records, nothing else. */
		a.config = PERF_COUNT_SW_DUMMY;
		a.comm = 1;
		a.comm_exec = 1;
		a.task = 1;
		a.mmap = 1;
		a.mmap2 = 1;
	}
	return add_entry(es, &a, ev, RSP_ROLE_PRIMARY, NULL);
}

/* The type of a dynamic PMU ("kprobe", "uprobe"), or 0 when the kernel has none. */
static unsigned pmu_type(const char *pmu)
{
	char path[128];
	unsigned type = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &type) != 1)
		type = 0;
	fclose(f);
	return type;
}

/*
 * A kprobe through the kprobe PMU: config1 points to the function's name
 * (the catalogue's static string), config2 is the offset in it. The
 * arguments come as the interrupted registers (the socket in %di, a send's
 * length in %dx).
 */
static int add_kprobe(struct rsp_evset *es, int ev)
{
	const struct rsp_event_info *ei = rsp_catalogue__event(ev);
	struct perf_event_attr a;

	attr_common(&a, &es->opts);
	a.type = es->kprobe_type;
	a.config1 = (uint64_t)(uintptr_t)ei->tp;
	a.config2 = 0;
	a.sample_type |= PERF_SAMPLE_REGS_INTR;
	a.sample_regs_intr = RSP_KPROBE_REGS;
	return add_entry(es, &a, ev, RSP_ROLE_PRIMARY, NULL);
}

/*
 * Which network source this kernel gets. Returns -ENODEV with @err set when
 * the user asked for kprobes on a kernel without the kprobe PMU.
 */
static int choose_net_source(struct rsp_evset *es, char *err, size_t errlen)
{
	char *note = es->family_note[RSP_FAM_NET];
	size_t n = sizeof(es->family_note[0]);

	es->kprobe_type = pmu_type("kprobe");
	switch (es->opts.net_source) {
	case RSP_NET_SOURCE_KPROBE:
		if (!es->kprobe_type) {
			snprintf(err, errlen,
				 "--net-source kprobe: this kernel has no kprobe PMU "
				 "(/sys/bus/event_source/devices/kprobe is missing: CONFIG_KPROBES "
				 "is off) — use --net-source tracepoint or auto");
			return -ENODEV;
		}
		es->net_source = RSP_NET_SOURCE_KPROBE;
		snprintf(note, n, "kprobes, as asked (--net-source kprobe)");
		return 0;
	case RSP_NET_SOURCE_TRACEPOINT:
		es->net_source = RSP_NET_SOURCE_TRACEPOINT;
		snprintf(note, n, "sock tracepoints, as asked (--net-source tracepoint)");
		return 0;
	default:
		es->net_source =
			es->kprobe_type ? RSP_NET_SOURCE_KPROBE : RSP_NET_SOURCE_TRACEPOINT;
		snprintf(note, n, "%s",
			 es->kprobe_type ? "kprobes (this kernel has the kprobe PMU)"
					 : "sock tracepoints (no kprobe PMU on this kernel: "
					   "CONFIG_KPROBES is off)");
		return 0;
	}
}

/* Whether @ev belongs to the network source not chosen; why, in @why. */
static bool other_net_source(const struct rsp_evset *es, int ev, char *why, size_t n)
{
	bool kprobe = rsp_catalogue__event(ev)->kind == RSP_EVK_KPROBE;
	bool tp_only = ev == RSP_EV_sock_send_length || ev == RSP_EV_sock_recv_length ||
		       ev == RSP_EV_sk_data_ready;

	if (kprobe && es->net_source != RSP_NET_SOURCE_KPROBE) {
		snprintf(why, n, "not used: %s",
			 es->kprobe_type ? "--net-source tracepoint"
					 : "this kernel has no kprobe PMU (CONFIG_KPROBES is off)");
		return true;
	}
	if (tp_only && es->net_source == RSP_NET_SOURCE_KPROBE) {
		snprintf(why, n, "not used: the kprobes give sends and arrivals");
		return true;
	}
	return false;
}

/* The libraries the probes go into: this process's libc (the system's), and libpthread. */
static int uprobe_libs(struct rsp_evset *es)
{
	char *slash;

	if (rsp_uprobe__loaded_path("libc.so.6", es->uprobe_lib[0], sizeof(es->uprobe_lib[0])))
		return -ENOENT;
	snprintf(es->uprobe_lib[1], sizeof(es->uprobe_lib[1]), "%s", es->uprobe_lib[0]);
	slash = strrchr(es->uprobe_lib[1], '/');
	if (slash)
		snprintf(slash + 1,
			 sizeof(es->uprobe_lib[1]) - (size_t)(slash + 1 - es->uprobe_lib[1]),
			 "libpthread.so.0");
	return 0;
}

static int add_uprobe(struct rsp_evset *es, const struct rsp_uprobe_target *t, int lib)
{
	struct perf_event_attr a;
	int err;

	attr_common(&a, &es->opts);
	a.type = es->uprobe_type;
	a.config1 = (uint64_t)(uintptr_t)es->uprobe_lib[lib];
	a.config2 = t->offset;
	/* The user stack is the point: a uprobe's kernel stack is its trap handler. */
	attr_callchain(&a, &es->opts);
	a.exclude_callchain_kernel = 1;
	a.exclude_callchain_user = 0;
	attr_dwarf(&a, &es->opts, RSP_EV_uprobe);
	err = add_entry(es, &a, RSP_EV_uprobe, RSP_ROLE_PRIMARY, NULL);
	if (!err) {
		snprintf(es->e[es->nr - 1].name, sizeof(es->e[0].name), "libc:%.56s", t->name);
		es->e[es->nr - 1].offset = t->offset;
	}
	return err;
}

/*
 * One uprobe per function of the list that the system libc (or libpthread)
 * defines. Probes made through the uprobe PMU belong to their perf fd: the
 * kernel removes them when the fd closes, also when rspd is killed. So no
 * probe of rspd's can outlive it; tracefs uprobe_events, which would keep
 * them, is only swept at start of stale events of the group "rsp"
 * (rsp_tracefs__remove_stale_probes()).
 */
static int build_uprobes(struct rsp_evset *es)
{
	struct rsp_event_status *st = &es->status[RSP_EV_uprobe];
	char list[sizeof(es->opts.uprobes)], *save = NULL, *tok, placed[256] = "", missing[96] = "";
	size_t np = 0, nm = 0;
	int count = 0;

	snprintf(st->source, sizeof(st->source), "uprobe");
	es->uprobe_type = pmu_type("uprobe");
	if (!es->uprobe_type) {
		snprintf(st->problem, sizeof(st->problem),
			 "this kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS is off)");
		return 0;
	}
	if (!es->opts.uprobes[0]) {
		st->wanted = false;
		return 0;
	}
	if (uprobe_libs(es)) {
		snprintf(st->problem, sizeof(st->problem), "cannot find the system libc");
		return 0;
	}
	snprintf(list, sizeof(list), "%s", es->opts.uprobes);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct rsp_buf err = RSP_BUF_INIT;
		struct rsp_uprobe_target t;
		int lib = 0, ret = rsp_uprobe__resolve(es->uprobe_lib[0], tok, &t, &err);

		if (ret == -ENOENT) {
			lib = 1;
			rsp_buf__reset(&err);
			ret = rsp_uprobe__resolve(es->uprobe_lib[1], tok, &t, &err);
		}
		if (ret) {
			if (ret != -ENOENT)
				rspd_log__write(RSP_LOG_WARN, "uprobe %s: %s", tok, err.data);
			if (nm < sizeof(missing))
				nm += (size_t)snprintf(missing + nm, sizeof(missing) - nm, " %s",
						       tok);
			rsp_buf__exit(&err);
			continue;
		}
		rsp_buf__exit(&err);
		ret = add_uprobe(es, &t, lib);
		if (ret)
			return ret;
		count++;
		if (np < sizeof(placed))
			np += (size_t)snprintf(placed + np, sizeof(placed) - np, " %s", tok);
	}
	snprintf(es->family_note[RSP_FAM_LIBC], sizeof(es->family_note[0]),
		 "%d probes in %.40s:%.256s%s%.96s", count, es->uprobe_lib[0], placed,
		 nm ? "; not defined there:" : "", nm ? missing : "");
	if (!count)
		snprintf(st->problem, sizeof(st->problem),
			 "no function of --uprobes is in %.48s or libpthread:%.48s — give libc "
			 "functions, e.g. poll,read",
			 es->uprobe_lib[0], missing);
	return 0;
}

static const char *event_source(const struct rsp_event_info *ei)
{
	switch (ei->kind) {
	case RSP_EVK_TRACEPOINT:
		return "tracepoint";
	case RSP_EVK_KPROBE:
		return "kprobe";
	case RSP_EVK_UPROBE:
		return "uprobe";
	default:
		return "software";
	}
}

/*
 * perf or bpf: --capture perf, or the BPF programs loaded (verified) now;
 * auto falls back to perf and says why; bpf refused is an error.
 */
#ifdef RSP_HAVE_BPF
/* A CPU's BPF ring: --ring-pages, as a power of 2 (the kernel's rule). */
static uint32_t bpf_ring_bytes(const struct rsp_capture_opts *o)
{
	uint64_t want = (uint64_t)o->ring_pages * 4096, b = 4096;

	while (b < want && b < (1u << 30))
		b *= 2;
	return (uint32_t)b;
}
#endif

#ifdef RSP_HAVE_BPF
/* Load the BPF programs for these options: 0, or -1 with the reason in @why. */
/*
 * --capture-cgroup's subtree: the id the kernel gives its threads' cgroup
 * (the kernfs id: the inode number of its directory in the cgroup2 mount)
 * and its level (the number of components of its path).
 */
static int capture_cgroup(const char *path, struct rsp_bpfcap_opts *bo, char *why, size_t n)
{
	char mnt[256], full[1400];
	struct stat st;
	int level = 0;

	if (rsp_cgroup__find_mount(mnt, sizeof(mnt))) {
		snprintf(why, n,
			 "--capture-cgroup %.200s: no cgroup2 file system is mounted; mount one "
			 "(mount -t cgroup2 none /sys/fs/cgroup)",
			 path);
		return -1;
	}
	snprintf(full, sizeof(full), "%s%s", mnt, path);
	if (path[0] != '/' || strstr(path, "/../") || stat(full, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, n,
			 "--capture-cgroup %.100s: no such cgroup (no directory %.150s); give a "
			 "path as /proc/PID/cgroup shows it",
			 path, full);
		return -1;
	}
	for (const char *c = path; *c; c++)
		level += c[0] == '/' && c[1] && c[1] != '/';
	bo->cgroup_id = st.st_ino;
	bo->cgroup_level = level;
	return 0;
}
static int open_bpf(struct rsp_evset *es, char *why, size_t n)
{
	const struct rsp_capture_opts *o = &es->opts;
	struct rsp_bpfcap_opts bo;

	rsp_bpfcap__opts_init(&bo);
	bo.stacks = o->stacks == RSP_STACKS_NONE      ? RSP_BSTACKS_NONE
		    : o->stacks == RSP_STACKS_ALL     ? RSP_BSTACKS_ALL
		    : o->stacks == RSP_STACKS_SAMPLED ? RSP_BSTACKS_SAMPLED
		    : o->stacks == RSP_STACKS_CACHED  ? RSP_BSTACKS_CACHED
						      : RSP_BSTACKS_SLEEPS;
	bo.stack_check = o->stack_check;
	bo.waker_stacks = o->waker_stacks;
	bo.stack_refresh = o->stack_refresh;
	bo.stack_every = o->stack_every;
	bo.max_stack = o->max_stack;
	bo.kernel_stacks = o->callchain_kernel;
	bo.user_stacks = o->callchain_user;
	bo.block = o->families[RSP_FAM_BLOCK];
	bo.irq = o->families[RSP_FAM_IRQ];
	bo.timer = o->families[RSP_FAM_TIMER];
	bo.hrtimer_wakeup = o->hrtimer_wakeup;
	bo.ring_bytes = bpf_ring_bytes(o);
	bo.wake_bytes = (uint64_t)bo.ring_bytes * o->wakeup_percent / 100;
	bo.force_verifier_failure = o->bpf_refuse;
	if (o->cgroup[0] && capture_cgroup(o->cgroup, &bo, why, n))
		return -1;
	es->bpf = rsp_bpfcap__open(&bo, why, n);
	return es->bpf ? 0 : -1;
}
#endif

static int refuse_perf_cgroup(const struct rsp_evset *es, char *err, size_t errlen)
{
	if (!es->opts.cgroup[0] || strcmp(es->backend, "perf"))
		return 0;
	snprintf(
		err, errlen,
		"--capture-cgroup limits capture in rsp's BPF programs, and capture is on the perf "
		"backend%s%s (libperf opens no cgroup events); run with --capture bpf, or without "
		"--capture-cgroup",
		es->backend_note[0] ? ": " : "", es->backend_note);
	return -EPERM;
}

static int choose_backend(struct rsp_evset *es, char *err, size_t errlen)
{
	const struct rsp_capture_opts *o = &es->opts;
	char why[400] = ""; /* fits backend_note with its prefix */

	snprintf(es->backend, sizeof(es->backend), "perf");
	if (o->backend == RSP_CAPTURE_PERF || !o->families[RSP_FAM_SCHED])
		return 0;
	if (o->dwarf[RSP_EV_sched_switch] || o->dwarf[RSP_EV_sched_waking]) {
		/* DWARF unwinding needs the user registers and stack bytes perf copies */
		snprintf(why, sizeof(why),
			 "--dwarf on the scheduler's events needs the user stack copies only "
			 "the perf backend takes");
	} else {
#ifdef RSP_HAVE_BPF
		if (!open_bpf(es, why, sizeof(why))) {
			snprintf(es->backend, sizeof(es->backend), "bpf");
			return 0;
		}
#else
		snprintf(why, sizeof(why),
			 "this rspd was built without the BPF backend (clang, bpftool, libbpf or "
			 "the kernel's BTF were missing when it was built)");
#endif
	}
	if (o->backend == RSP_CAPTURE_BPF) {
		snprintf(err, errlen, "--capture bpf: %s", why);
		return -EPERM;
	}
	snprintf(es->backend_note, sizeof(es->backend_note),
		 "BPF refused, perf tracepoints instead: %s", why);
	return 0;
}

/*
 * The evsel rsp's compact records belong to: in the schema, the window's
 * records of the BPF rings decode as its samples, and a dump writes them as
 * its samples (perf reads them as bpf-output). The programs write into BPF
 * ring buffers, never into this event.
 */
static int add_bpf_output(struct rsp_evset *es)
{
	struct perf_event_attr a;

	attr_common(&a, &es->opts);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type |= PERF_SAMPLE_RAW;
	return add_entry(es, &a, RSP_EV_sched_switch, RSP_ROLE_BPF, NULL);
}

/* Decide, per catalogued event, whether it is wanted and can be had. */
static int build(struct rsp_evset *es, struct tep_handle *tep, char *errbuf, size_t errlen)
{
	int err = es->opts.families[RSP_FAM_NET] ? choose_net_source(es, errbuf, errlen) : 0;

	if (!err)
		err = choose_backend(es, errbuf, errlen);
	if (!err)
		err = refuse_perf_cgroup(es, errbuf, errlen);
	if (err)
		return err;
	if (!es->bpf && es->opts.stacks == RSP_STACKS_CACHED) {
		/* perf walks every stack it takes: the nearest policy, said in status */
		es->opts.stacks = RSP_STACKS_SLEEPS;
		snprintf(es->stacks_note, sizeof(es->stacks_note),
			 "stacks cached need the BPF backend: sleeps instead (every stack walked)");
	}
	if (es->bpf && (err = add_bpf_output(es))) {
		snprintf(errbuf, errlen, "could not build the event set: %s", strerror(-err));
		return err;
	}
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_info *ei = rsp_catalogue__event(ev);
		struct rsp_event_status *st = &es->status[ev];

		st->wanted = es->opts.families[ei->family];
		snprintf(st->source, sizeof(st->source), "%s", event_source(ei));
		if (!st->wanted)
			continue;
		if (ev == RSP_EV_cpu_clock && !es->opts.sample_freq) {
			st->wanted = false;
			continue;
		}
		if (ei->family == RSP_FAM_NET &&
		    other_net_source(es, ev, st->problem, sizeof(st->problem))) {
			st->wanted = false;
			continue;
		}
		if (es->bpf && rsp_record__bpf_event(ev)) {
			snprintf(st->source, sizeof(st->source), "bpf");
			st->open = true;
			continue;
		}
		if (ei->kind == RSP_EVK_TRACEPOINT && !rsp_schema__event_ok(es->schema, ev)) {
			snprintf(st->problem, sizeof(st->problem), "%s",
				 rsp_schema__event_problem(es->schema, ev));
			continue;
		}
		switch (ei->kind) {
		case RSP_EVK_TRACEPOINT:
			err = add_tracepoint(es, tep, ev);
			break;
		case RSP_EVK_KPROBE:
			err = add_kprobe(es, ev);
			break;
		case RSP_EVK_UPROBE:
			err = build_uprobes(es);
			break;
		default:
			err = add_software(es, ev);
			break;
		}
		if (err) {
			snprintf(errbuf, errlen, "could not build the event set: %s",
				 strerror(-err));
			return err;
		}
	}
	return 0;
}

static void open_problem(struct rsp_evset *es, struct rsp_evset_entry *e, const char *what, int err)
{
	char msg[sizeof(es->status[0].problem)];

	snprintf(msg, sizeof(msg), "%s(%s) failed: %s", what, e->name, strerror(-err));
	memcpy(es->status[e->event].problem, msg, sizeof(msg));
}

/* Drop entry @i from the set (it could not be opened). */
static void drop_entry(struct rsp_evset *es, int i)
{
	perf_evlist__remove(es->evlist, es->e[i].evsel);
	perf_evsel__close(es->e[i].evsel);
	rsp_perf_internal__release_evsel(es->e[i].evsel);
	perf_evsel__delete(es->e[i].evsel);
	memmove(&es->e[i], &es->e[i + 1], (size_t)(es->nr - i - 1) * sizeof(es->e[0]));
	es->nr--;
}

static int open_one(struct rsp_evset *es, struct rsp_evset_entry *e)
{
	int err = perf_evsel__open(e->evsel, perf_evsel__cpus(e->evsel),
				   perf_evsel__threads(e->evsel));

	if (err) {
		open_problem(es, e, "perf_event_open", err);
		return err;
	}
	if (e->filter) {
		err = rsp_perf_internal__apply_filter(e->evsel, e->filter);
		if (err) {
			err = -errno;
			open_problem(es, e, "PERF_EVENT_IOC_SET_FILTER", err);
			return err;
		}
	}
	return 0;
}

static void permission_error(char *err, size_t errlen, const char *name, int e)
{
	snprintf(err, errlen,
		 "perf_event_open(%s) failed: %s — run rspd as root, or give it CAP_PERFMON "
		 "and CAP_SYS_ADMIN (e.g. through rspd.service), or lower "
		 "/proc/sys/kernel/perf_event_paranoid to -1",
		 name, strerror(e));
}

/* Open every entry; losing sched_switch (or half of its pair) is fatal. */
static int open_all(struct rsp_evset *es, char *err, size_t errlen)
{
	for (int i = 0; i < es->nr;) {
		struct rsp_evset_entry *e = &es->e[i];
		int ret = open_one(es, e);

		if (!ret) {
			es->status[e->event].open = true;
			i++;
			continue;
		}
		if (ret == -EACCES || ret == -EPERM) {
			permission_error(err, errlen, e->name, -ret);
			return ret;
		}
		if (e->event == RSP_EV_sched_switch) {
			snprintf(err, errlen, "%s — rsp cannot work without it%s",
				 es->status[e->event].problem,
				 e->filter ? "; try --stacks all or --stacks none" : "");
			return ret;
		}
		rspd_log__write(RSP_LOG_WARN, "%s; continuing without it",
				es->status[e->event].problem);
		drop_entry(es, i); /* the event stays open if another of its evsels is */
	}
	return 0;
}

static int register_ids(struct rsp_evset *es)
{
	for (int i = 0; i < es->nr; i++) {
		struct rsp_evset_entry *e = &es->e[i];
		struct perf_cpu_map *cpus = perf_evsel__cpus(e->evsel);
		int idx = rsp_schema__add_evsel(es->schema, perf_evsel__attr(e->evsel), e->event,
						e->role, e->name);

		if (idx < 0)
			return idx;
		for (int c = 0; c < perf_cpu_map__nr(cpus); c++) {
			struct perf_counts_values v;
			int err = perf_evsel__read(e->evsel, c, 0, &v);

			if (err)
				return err;
			err = rsp_schema__add_id(es->schema, idx, v.id);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The evlist's rings, through the one file that sees struct perf_mmap. */
static int collect_rings(struct perf_evlist *evlist, struct rsp_ring *rings, int max)
{
	void *maps[1024];
	int fds[1024];
	unsigned cpus[1024];
	int n = rsp_perf_internal__collect_rings(evlist, maps, fds, cpus, max < 1024 ? max : 1024);

	for (int i = 0; i < n; i++) {
		rings[i].map = maps[i];
		rings[i].fd = fds[i];
		rings[i].cpu = cpus[i];
	}
	return n;
}

static int map_rings(struct rsp_evset *es, char *err, size_t errlen)
{
	int ret = perf_evlist__mmap(es->evlist, (int)es->opts.ring_pages);

	if (ret) {
		snprintf(err, errlen,
			 "could not map %u pages per CPU for the perf rings: %s — lower "
			 "--ring-pages or raise /proc/sys/kernel/perf_event_mlock_kb",
			 es->opts.ring_pages, strerror(errno ? errno : -ret));
		return ret ? ret : -ENOMEM;
	}
	es->mapped = true;
	es->nr_rings = collect_rings(es->evlist, es->rings,
				     (int)(sizeof(es->rings) / sizeof(es->rings[0])));
	if (es->nr_rings <= 0) {
		snprintf(err, errlen, "libperf mapped no rings (%d CPUs online?)",
			 perf_cpu_map__nr(es->cpus));
		return -ENODEV;
	}
	for (int i = 0; i < es->nr_rings; i++)
		if (es->rings[i].cpu + 1 > es->max_cpu)
			es->max_cpu = es->rings[i].cpu + 1;
	return 0;
}

static int check_layout(struct rsp_evset *es, char *err, size_t errlen)
{
	for (int i = 0; i < es->nr; i++) {
		if (rsp_layout__check(perf_evsel__attr(es->e[i].evsel))) {
			snprintf(err, errlen, "internal error: %s does not follow rsp's layout",
				 es->e[i].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* Nothing to open: libperf would map no ring ("Miscounted nr_mmaps"). */
static int no_event(const struct rsp_evset *es, char *err, size_t errlen)
{
	char why[sizeof(es->status[0].problem) + 64] = "";

	for (int ev = 0; ev < RSP_EV__NR && !why[0]; ev++)
		if (es->status[ev].wanted && es->status[ev].problem[0])
			snprintf(why, sizeof(why), " (%s: %s)", rsp_catalogue__event(ev)->name,
				 es->status[ev].problem);
	snprintf(err, errlen,
		 "none of the events of --families could be opened%s — add a family, e.g. "
		 "--families sched",
		 why);
	return -ENOENT;
}

int rsp_evset__open(struct rsp_evset *es, const struct rsp_capture_opts *opts,
		    struct tep_handle *tep, char *err, size_t errlen)
{
	int ret;

	memset(es, 0, sizeof(*es));
	es->opts = *opts;
	if (opts->ring_pages == 0 || (opts->ring_pages & (opts->ring_pages - 1))) {
		snprintf(err, errlen, "ring pages must be a power of two, not %u",
			 opts->ring_pages);
		return -EINVAL;
	}
	es->schema = rsp_schema__new();
	es->evlist = perf_evlist__new();
	es->cpus = perf_cpu_map__new(NULL);
	es->threads = perf_thread_map__new_dummy();
	if (!es->schema || !es->evlist || !es->cpus || !es->threads) {
		snprintf(err, errlen, "out of memory setting up the event set");
		return -ENOMEM;
	}
	rsp_schema__resolve_fields(es->schema, tep);
	ret = build(es, tep, err, errlen);
	if (ret)
		return ret;
	perf_evlist__set_maps(es->evlist, es->cpus, es->threads);
	ret = check_layout(es, err, errlen);
	if (!ret)
		ret = open_all(es, err, errlen);
	if (!ret && !es->nr)
		return no_event(es, err, errlen);
	if (!ret)
		ret = map_rings(es, err, errlen);
	if (!ret && (ret = register_ids(es)))
		snprintf(err, errlen, "could not read the ids of the opened events: %s",
			 strerror(-ret));
	return ret;
}

int rsp_evset__fired(struct rsp_evset *es, int i, uint64_t *fired)
{
	struct rsp_evset_entry *e = &es->e[i];
	struct perf_event_attr *a = perf_evsel__attr(e->evsel);
	struct perf_cpu_map *cpus = perf_evsel__cpus(e->evsel);
	uint64_t sum = 0;

	/* Tracepoints, kprobes and uprobes count; cpu-clock and dummy do not. */
	if (a->type == PERF_TYPE_SOFTWARE || a->freq || !a->sample_period)
		return -EINVAL;
	for (int c = 0; c < perf_cpu_map__nr(cpus); c++) {
		struct perf_counts_values v;
		int err = perf_evsel__read(e->evsel, c, 0, &v);

		if (err)
			return err;
		sum += v.val;
	}
	*fired = sum / a->sample_period;
	return 0;
}

int rsp_evset__enable(struct rsp_evset *es, char *err, size_t errlen)
{
	perf_evlist__enable(es->evlist);
#ifdef RSP_HAVE_BPF
	if (es->bpf && !es->bpf_attached) {
		int ret = rsp_bpfcap__attach(es->bpf, err, errlen);

		if (ret)
			return ret;
		es->bpf_attached = true;
	}
#else
	(void)err;
	(void)errlen;
#endif
	return 0;
}

void rsp_evset__disable(struct rsp_evset *es)
{
#ifdef RSP_HAVE_BPF
	if (es->bpf && es->bpf_attached) {
		rsp_bpfcap__detach(es->bpf);
		es->bpf_attached = false;
	}
#endif
	if (es->evlist)
		perf_evlist__disable(es->evlist);
}

int rsp_evset__resend(struct rsp_evset *es)
{
#ifdef RSP_HAVE_BPF
	if (es->bpf)
		return rsp_bpfcap__resend_all(es->bpf);
#else
	(void)es;
#endif
	return 0;
}

void rsp_evset__close(struct rsp_evset *es)
{
#ifdef RSP_HAVE_BPF
	rsp_bpfcap__close(es->bpf);
#endif
	es->bpf = NULL;
	es->bpf_attached = false;
	rsp_perf_internal__delete_evlist(es->evlist);
	perf_cpu_map__put(es->cpus);
	perf_thread_map__put(es->threads);
	rsp_schema__delete(es->schema);
	es->evlist = NULL;
	es->cpus = NULL;
	es->threads = NULL;
	es->schema = NULL;
	es->nr = 0;
}
