/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_STATUS_H
#define RSP_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <rsp/api.h>
#include <rsp/catalogue.h>
#include <rsp/trigger.h>

/*
 * What the capture side knows about itself, for `rspctl status`: rspd fills
 * it from its counters on each request; a dump reader fills what the file
 * records. librsp only renders it.
 */
struct rsp_event_status {
	bool wanted;	   /* its family is on */
	bool open;	   /* opened and delivering */
	char source[16];   /* "tracepoint", "software", "uprobe", "kprobe" */
	char problem[200]; /* why it is not open, "" if it is */
	/*
	 * Occurrences the kernel counted (perf_evsel__read, divided by the
	 * sample period) against the records that reached rspd. Losses in
	 * full rings are reported per CPU; a shortfall beyond them means the
	 * kernel counted occurrences without emitting their samples.
	 */
	uint64_t fired;
	uint64_t delivered;
	bool counted; /* fired is meaningful (not for cpu-clock, dummy) */
};

struct rsp_cpu_status {
	unsigned cpu;
	uint64_t records; /* since start */
	uint64_t bytes;
	uint64_t lost;	      /* records the kernel reported lost */
	uint64_t lost_events; /* PERF_RECORD_LOST records (gaps) */
	double records_per_s; /* over the last stats interval */
};

/*
 * Where the stacks of switches into a sleep and of wakings came from (the
 * BPF backend; all zero under perf, which walks every one). A check walks a
 * stack the cache had and compares: a disagreement is a stack the cache
 * would have served wrong (or did, between checks).
 */
struct rsp_stack_status {
	bool valid;		 /* the BPF backend counts these */
	bool check;		 /* --stack-check: every stack walked and compared */
	unsigned refresh;	 /* a hit is walked anyway once in this many */
	uint64_t sites;		 /* switches and wakings that wanted stacks */
	uint64_t walked, cached; /* of those: walked, served from the cache */
	uint64_t no_key;	 /* walked, no user context to key (kernel threads, interrupts) */
	uint64_t kchecks, kdiffer, uchecks, udiffer;
	uint64_t walk_errors; /* walks that failed */
	/* sleep time profiled live (the histograms' feed), by where its stack came from */
	bool have_time;
	double sleep_s, cached_s, checked_s, stack_differ_s, reason_differ_s;
};

/*
 * The overhead budget (rspd --overhead-budget): what capture costs, as a
 * share of one CPU (rspd's own CPU time and the BPF programs' run time),
 * the degradation level it keeps the BPF programs at (tracepoints/
 * bpf_records.h, enum rsp_degrade: 0 none ... 4 no stacks), and its last
 * changes, oldest first, at CLOCK_MONOTONIC times (the records' clock).
 */
#define RSP_BUDGET_HISTORY 32

struct rsp_budget_change {
	uint64_t time_ns;
	unsigned from, to;
	double cost_pct; /* the cost that moved it: what a level can shed */
	/* of the second before it: rspd's CPU, BPF run time, and what was left
	 * out of cost_pct (queries, the syscall and stopwatch programs) */
	double rspd_pct, bpf_pct, query_pct, unshed_bpf_pct;
};

struct rsp_budget_status {
	bool enabled;		  /* enforced (BPF backend, a budget above 0) */
	char note[160];		  /* why not, "" if it is */
	double budget_pct;	  /* of one CPU */
	double cost_pct;	  /* over the last second */
	double rspd_pct, bpf_pct; /* of it: rspd's CPU time, the BPF programs' run time */
	double cost_max_pct;	  /* the highest second since start */
	unsigned level;
	uint64_t since_ns; /* of the current level */
	unsigned nr_changes;
	uint64_t changes_total; /* ever (the list keeps the last RSP_BUDGET_HISTORY) */
	struct rsp_budget_change changes[RSP_BUDGET_HISTORY];
	/* of bpf_pct: the syscall family's and the stopwatches' programs (the
	 * rest is capture's; not enforced: no level sheds them); their run time
	 * since rspd started, ns, estimated from the samples (daemon/budget.c) */
	double syscall_pct, stopwatch_pct;
	uint64_t syscall_ns, stopwatch_ns;
	/* of rspd_pct: the queries it answered (asked for, not capture's; not enforced) */
	double query_pct;
};

/** rsp_degrade__name() - what a degradation level drops, in a few words. */
RSP_API const char *rsp_degrade__name(unsigned level);

/*
 * What capture did not deliver, as the live timeline (rspd's histograms'
 * feed) infers it from the records around it: either backend can miss
 * events (the perf backend: tracepoints hit in an interrupt on an idle CPU;
 * the BPF backend: a program already running on that CPU), and neither's
 * counters see it. Of the switch records fed: runs that another task's
 * record ended (their switch-out not delivered), threads seen running with
 * no switch-in, sleeps that ended with no waking seen.
 */
struct rsp_delivery_status {
	bool valid; /* the feed runs (not --no-hist, not a dump) */
	uint64_t switches, switch_outs_not_seen, switch_ins_not_seen, wakings_not_seen;
};

struct rsp_capture_info {
	char version[32];
	pid_t pid;
	double uptime_s;
	uint64_t rss_bytes;
	uint64_t now_ns;	   /* CLOCK_MONOTONIC at the time of the report */
	char backend[8];	   /* the capture backend in use: "perf" or "bpf" ("" unknown) */
	char backend_note[512];	   /* why BPF was refused for perf (--capture auto), "" if not */
	char stacks[32];	   /* stack policy in effect */
	char stacks_note[128];	   /* why it is not the one asked for, "" if it is */
	char capture_problem[160]; /* capture is broken (no record reached the rings), "" if not */
	struct rsp_stack_status stack;
	struct rsp_budget_status budget;
	char callchain[16];   /* "kernel+user", "kernel", "user" */
	unsigned sample_freq; /* cpu-clock Hz, 0 if off */
	unsigned ring_pages;  /* per CPU */
	bool families_on[RSP_FAM__NR];
	/* per family: "tracepoint", "kprobe", "uprobe", "software", "missing", "off", or ""
	 * (derive it from the events); and a line on how it was chosen */
	char family_source[RSP_FAM__NR][16];
	char family_note[RSP_FAM__NR][512];
	char dwarf[64];	      /* events capturing user stacks for DWARF, "none" */
	unsigned dwarf_stack; /* bytes per such sample */
	struct rsp_event_status events[RSP_EV__NR];
	unsigned nr_cpus;
	struct rsp_cpu_status *cpus; /* nr_cpus entries, owned by the filler */
	uint64_t records_total;
	uint64_t lost_total;
	/*
	 * BPF backend: events whose program the kernel skipped because it was
	 * already running on that CPU (an interrupt's event inside it): records
	 * never written, not in lost_total (no CPU is known for them).
	 */
	uint64_t skipped_nested;
	/*
	 * BPF backend: events folded into the record they wait for (a waking
	 * into its switch-in, a request's insert and issue into its completion,
	 * a handler's entry into its exit: tracepoints/bpf_records.h), and
	 * those that went alone in a CARRY record. A dump writes each as its
	 * own record: its records are the window's plus the folded.
	 */
	uint64_t folded, carried;
	struct rsp_delivery_status delivery;
	double records_per_s;
	double cpu_seconds; /* rspd's own user+sys CPU time */
	/* --capture-cgroup: the subtree recorded (BPF backend); "": all */
	char capture_cgroup[1024];
	/* rspctl trigger: each trigger (owned by the filler) and the totals */
	struct rsp_trig_view *triggers;
	unsigned nr_triggers;
	struct rsp_trig_totals trigger_totals;
};

#endif /* RSP_STATUS_H */
