// SPDX-License-Identifier: LGPL-2.1
/* The names of the window's kinds of records: see rsp/wkind.h. */
#include <stdio.h>
#include <rsp/schema.h>
#include <rsp/wkind.h>
#include "tracepoints/bpf_records.h"

/* perf's record types (include/uapi/linux/perf_event.h), by number. */
static const char *const perf_types[32] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
};

/* rsp's compact records (tracepoints/bpf_records.h), by kind. */
static const char *const bpf_kinds[32] = {
	[RSP_BREC_COMM] = "comm",
	[RSP_BREC_STACK] = "stack",
	[RSP_BREC_SWITCH] = "switch",
	[RSP_BREC_SWITCH_STACK] = "switch_stack",
	[RSP_BREC_WAKING] = "waking",
	[RSP_BREC_WAKING_STACK] = "waking_stack",
	[RSP_BREC_WAKEUP_NEW] = "wakeup_new",
	[RSP_BREC_FORK] = "fork",
	[RSP_BREC_EXEC] = "exec",
	[RSP_BREC_EXIT] = "exit",
	[RSP_BREC_BLOCK_INSERT] = "block_insert",
	[RSP_BREC_BLOCK_ISSUE] = "block_issue",
	[RSP_BREC_BLOCK_COMPLETE] = "block_complete",
	[RSP_BREC_IRQ_ENTRY] = "irq_entry",
	[RSP_BREC_IRQ_EXIT] = "irq_exit",
	[RSP_BREC_SOFTIRQ_ENTRY] = "softirq_entry",
	[RSP_BREC_SOFTIRQ_EXIT] = "softirq_exit",
	[RSP_BREC_HRTIMER_START] = "hrtimer_start",
	[RSP_BREC_HRTIMER_EXPIRE_ENTRY] = "hrtimer_expire_entry",
	[RSP_BREC_HRTIMER_EXPIRE_EXIT] = "hrtimer_expire_exit",
	[RSP_BREC_SWITCH_CHECK] = "switch_check",
	[RSP_BREC_CARRY] = "carry",
	[RSP_BREC_IRQ] = "irq",
	[RSP_BREC_SOFTIRQ] = "softirq",
	[RSP_BREC_HRTIMER] = "hrtimer",
};

_Static_assert(RSP_BREC__NR <= 32, "BPF record kinds must fit RSP_WKIND_BPF()");

const char *rsp_wkind__name(const struct rsp_schema *s, unsigned kind, char *buf, size_t len)
{
	const char *name = NULL;

	if (!len)
		return buf;
	if (kind >= 64 && kind < RSP_WINDOW_KINDS) {
		name = s ? rsp_schema__evsel_name(s, (int)(kind - 64)) : NULL;
		if (name && name[0])
			snprintf(buf, len, "%s", name);
		else
			snprintf(buf, len, "sample of evsel %u", kind - 64);
	} else if (kind >= 32 && kind < 64 && bpf_kinds[kind - 32]) {
		snprintf(buf, len, "bpf:%s", bpf_kinds[kind - 32]);
	} else if (kind >= 32 && kind < 64) {
		snprintf(buf, len, "bpf:kind %u", kind - 32);
	} else if (kind > 0 && kind < 32 && perf_types[kind]) {
		snprintf(buf, len, "perf:%s", perf_types[kind]);
	} else if (kind > 0 && kind < 32) {
		snprintf(buf, len, "perf:type %u", kind);
	} else {
		snprintf(buf, len, "other");
	}
	return buf;
}
