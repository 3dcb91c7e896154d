// SPDX-License-Identifier: GPL-2.0
/*
 * The capture options: which families, which stacks, how often, how big the
 * rings; their defaults and their parsers (the config file and the command
 * line of rspd, and the null consumer's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/parse.h>
#include "capture_opts.h"

void rsp_capture_opts__init(struct rsp_capture_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int f = 0; f < RSP_FAM__NR; f++)
		o->families[f] = rsp_catalogue__family(f)->default_on;
	/* walks rarely, checked (issue 13; BENCHMARKS.md "Stack cache") */
	o->stacks = RSP_STACKS_CACHED;
	o->stack_every = 10;
	o->stack_refresh = 256;
	o->callchain_kernel = true;
	o->callchain_user = true;
	o->sample_stacks = true;
	o->waker_stacks = true;
	o->sample_freq = 99;
	o->ring_pages = 256;
	o->wakeup_percent = 25;
	o->max_stack = 64;
	o->net_source = RSP_NET_SOURCE_AUTO;
	o->backend =
		RSP_CAPTURE_AUTO; /* BPF where allowed: a quarter of perf's cost (BENCHMARKS.md) */
	snprintf(o->uprobes, sizeof(o->uprobes), "%s", RSP_UPROBES_DEFAULT);
	o->dwarf[RSP_EV_cpu_clock] = true;
	o->dwarf[RSP_EV_uprobe] = true;
	o->dwarf_stack = 8192;
}

int rsp_capture_opts__set_net_source(struct rsp_capture_opts *o, const char *s)
{
	if (!strcmp(s, "auto"))
		o->net_source = RSP_NET_SOURCE_AUTO;
	else if (!strcmp(s, "tracepoint"))
		o->net_source = RSP_NET_SOURCE_TRACEPOINT;
	else if (!strcmp(s, "kprobe"))
		o->net_source = RSP_NET_SOURCE_KPROBE;
	else
		return -EINVAL;
	return 0;
}

const char *rsp_capture_opts__net_source_name(const struct rsp_capture_opts *o)
{
	return o->net_source == RSP_NET_SOURCE_KPROBE	    ? "kprobe"
	       : o->net_source == RSP_NET_SOURCE_TRACEPOINT ? "tracepoint"
							    : "auto";
}

int rsp_capture_opts__set_backend(struct rsp_capture_opts *o, const char *s)
{
	if (!strcmp(s, "perf"))
		o->backend = RSP_CAPTURE_PERF;
	else if (!strcmp(s, "bpf"))
		o->backend = RSP_CAPTURE_BPF;
	else if (!strcmp(s, "auto"))
		o->backend = RSP_CAPTURE_AUTO;
	else
		return -EINVAL;
	return 0;
}

const char *rsp_capture_opts__backend_name(const struct rsp_capture_opts *o)
{
	return o->backend == RSP_CAPTURE_BPF	? "bpf"
	       : o->backend == RSP_CAPTURE_AUTO ? "auto"
						: "perf";
}

/* Events that can carry a user stack: those that may carry a callchain. */
int rsp_capture_opts__set_dwarf(struct rsp_capture_opts *o, const char *list, char *err,
				size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	bool on[RSP_EV__NR] = {false}, any = false;

	if (strcmp(list, "none")) {
		snprintf(buf, sizeof(buf), "%s", list);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int ev = rsp_catalogue__find_event(tok);

			if (ev < 0 || !(rsp_catalogue__event(ev)->flags & RSP_EVF_STACK) ||
			    ev == RSP_EV_sched_waking) {
				snprintf(err, errlen,
					 "none, or some of cpu_clock, uprobe, sched_switch ('%s' "
					 "cannot capture user stacks)",
					 tok);
				return -EINVAL;
			}
			on[ev] = true;
			any = true;
		}
		if (!any) {
			/* "" and "," meant none without a word: say none */
			snprintf(err, errlen, "none, or some of cpu_clock, uprobe, sched_switch");
			return -EINVAL;
		}
	}
	memcpy(o->dwarf, on, sizeof(on));
	return 0;
}

void rsp_capture_opts__dwarf_name(const struct rsp_capture_opts *o, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int ev = 0; ev < RSP_EV__NR && len < n; ev++)
		if (o->dwarf[ev])
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "",
						rsp_catalogue__event(ev)->name);
	if (!len)
		snprintf(buf, n, "none");
}

int rsp_capture_opts__set_uprobes(struct rsp_capture_opts *o, const char *list, char *err,
				  size_t errlen)
{
	size_t n = strlen(list);

	if (!strcmp(list, "none")) {
		o->uprobes[0] = '\0';
		return 0;
	}
	if (!n || n >= sizeof(o->uprobes) || list[0] == ',' || list[n - 1] == ',' ||
	    strstr(list, ",,") ||
	    strspn(list, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_,") != n) {
		snprintf(err, errlen,
			 "none, or a comma-separated list of function names of at most %zu bytes",
			 sizeof(o->uprobes) - 1);
		return -EINVAL;
	}
	memcpy(o->uprobes, list, n + 1);
	return 0;
}

int rsp_capture_opts__set_stacks(struct rsp_capture_opts *o, const char *s)
{
	uint64_t n;

	if (!strcmp(s, "cached"))
		o->stacks = RSP_STACKS_CACHED;
	else if (!strcmp(s, "all"))
		o->stacks = RSP_STACKS_ALL;
	else if (!strcmp(s, "sleeps"))
		o->stacks = RSP_STACKS_SLEEPS;
	else if (!strcmp(s, "none"))
		o->stacks = RSP_STACKS_NONE;
	else if (!strncmp(s, "sampled:", 8)) {
		if (rsp_parse__u64(s + 8, 2, 1000000, &n))
			return -EINVAL;
		o->stacks = RSP_STACKS_SAMPLED;
		o->stack_every = (unsigned)n;
	} else
		return -EINVAL;
	return 0;
}

const char *rsp_capture_opts__stacks_name(const struct rsp_capture_opts *o, char *buf, size_t n)
{
	switch (o->stacks) {
	case RSP_STACKS_CACHED:
		return "cached";
	case RSP_STACKS_ALL:
		return "all";
	case RSP_STACKS_SLEEPS:
		return "sleeps";
	case RSP_STACKS_NONE:
		return "none";
	case RSP_STACKS_SAMPLED:
		snprintf(buf, n, "sampled:%u", o->stack_every);
		return buf;
	}
	return "?";
}

int rsp_capture_opts__set_families(struct rsp_capture_opts *o, const char *list, char *err,
				   size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	bool on[RSP_FAM__NR] = {false}, any = false;
	int mods = 0, names = 0;

	if (!strcmp(list, "all")) {
		for (int f = 0; f < RSP_FAM__NR; f++)
			o->families[f] = true;
		return 0;
	}
	/* "+syscall,-net": changes to the defaults; "sched,block": the whole set */
	memcpy(on, o->families, sizeof(on));
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool mod = *tok == '+' || *tok == '-';
		int f = rsp_catalogue__find_family(tok + mod);

		if (f < 0) {
			size_t n = (size_t)snprintf(err, errlen,
						    "unknown family '%s'; known:", tok + mod);

			for (int i = 0; i < RSP_FAM__NR && n < errlen; i++)
				n += (size_t)snprintf(err + n, errlen - n, " %s",
						      rsp_catalogue__family(i)->name);
			return -EINVAL;
		}
		if (mod)
			mods++;
		else if (!names++ && !mods)
			memset(on, 0, sizeof(on)); /* a plain list starts from nothing */
		if (mods && names) {
			snprintf(err, errlen,
				 "'%s' mixes family names with +/- changes; write the whole list "
				 "(sched,block) or only changes to the defaults (+syscall,-net)",
				 list);
			return -EINVAL;
		}
		on[f] = *tok != '-';
	}
	for (int f = 0; f < RSP_FAM__NR; f++)
		any = any || on[f];
	if (!any || !(mods + names)) {
		/* no event: libperf would map no ring, and rspd die at start */
		snprintf(err, errlen, "%s",
			 mods + names ? "the list leaves no family on"
				      : "the list names no family");
		return -EINVAL;
	}
	memcpy(o->families, on, sizeof(on));
	return 0;
}

size_t rsp_capture_opts__dwarf_bytes(const struct rsp_capture_opts *o)
{
	/* The stack copy, the registers, a callchain, the fixed words. */
	return o->dwarf_stack + 17 * 8 + ((size_t)o->max_stack + 3) * 8 + 128;
}

bool rsp_capture_opts__may_dwarf(const struct rsp_capture_opts *o)
{
	bool on = false;

	if (!o->dwarf_stack)
		return false;
	for (int ev = 0; ev < RSP_EV__NR; ev++)
		on = on || (o->dwarf[ev] && o->families[rsp_catalogue__event(ev)->family] &&
			    !(ev == RSP_EV_cpu_clock && !o->sample_freq) &&
			    !(ev == RSP_EV_uprobe && !o->uprobes[0]));
	return on;
}
