/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_STATUS_H
#define RSP_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <rsp/catalogue.h>

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

struct rsp_capture_info {
	char version[32];
	pid_t pid;
	double uptime_s;
	uint64_t rss_bytes;
	uint64_t now_ns;	/* CLOCK_MONOTONIC at the time of the report */
	char backend[8];	/* the capture backend in use: "perf" or "bpf" ("" unknown) */
	char backend_note[512]; /* why BPF was refused for perf (--capture auto), "" if not */
	char stacks[32];	/* stack policy, as given */
	char callchain[16];	/* "kernel+user", "kernel", "user" */
	unsigned sample_freq;	/* cpu-clock Hz, 0 if off */
	unsigned ring_pages;	/* per CPU */
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
	double records_per_s;
	double cpu_seconds; /* rspd's own user+sys CPU time */
};

#endif /* RSP_STATUS_H */
