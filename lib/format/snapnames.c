// SPDX-License-Identifier: LGPL-2.1
/* Names for the snapshot's renderers: see internal/snapnames.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>
#include <rsp/ksyms.h>
#include <rsp/symbols.h>
#include "internal/snapnames.h"
#include "internal/fmt.h"

#define MAX_RAW_FRAMES 128

int rsp_snapnames__init(struct snapnames *n, const struct rsp_access *access,
			struct rsp_symbolizer *symbols, const struct rsp_ksyms *ksyms,
			const struct rsp_snapshot *snap)
{
	memset(n, 0, sizeof(*n));
	n->access = access;
	n->symbols = symbols;
	n->ksyms = ksyms;
	n->snap = snap;
	n->store = rsp_snapshot__store(snap);
	rsp_redact__init(&n->red, access);
	rsp_redact__use_store(&n->red, n->store);
	return 0;
}

void rsp_snapnames__exit(struct snapnames *n)
{
	rsp_redact__exit(&n->red);
}

bool rsp_snapnames__hidden(struct snapnames *n, uint32_t tid, uint32_t tgid)
{
	return rsp_redact__hidden(&n->red, tid, tgid);
}

const char *rsp_snapnames__comm(const struct snapnames *n, uint32_t tid)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(n->store, tid);

	return t ? t->comm : "";
}

char *rsp_snapnames__thread(struct snapnames *n, uint32_t tid, uint32_t tgid, char *buf,
			    size_t size)
{
	uint32_t p = rsp_redact__owner(&n->red, tid, tgid);
	char comm[RSP_FMT_NAME_MAX];

	if (rsp_redact__label(&n->red, tid, tgid, buf, size))
		return buf;
	/* a label for people and for line-based files: the name escaped */
	rsp_fmt__name(comm, sizeof(comm), rsp_snapnames__comm(n, tid));
	if (!comm[0])
		snprintf(buf, size, tid == p ? "pid %u" : "tid %u (pid %u)", tid == p ? p : tid, p);
	else if (tid == p)
		snprintf(buf, size, "%s (pid %u)", comm, p);
	else
		snprintf(buf, size, "%s %u (pid %u)", comm, tid, p);
	return buf;
}

const char *rsp_snapnames__runnable(uint8_t reason)
{
	return reason == RSP_SR_PREEMPT ? "preempted (runnable)" : "runnable (woken -> running)";
}

char *rsp_snapnames__waker(struct snapnames *n, const struct rsp_snode *sl, char *buf, size_t size)
{
	switch (sl->waker_kind) {
	case RSP_WAKER_THREAD:
		return rsp_snapnames__thread(n, sl->waker_id, 0, buf, size);
	case RSP_WAKER_DEVICE:
		snprintf(buf, size, "disk %u:%u", sl->waker_id >> 20, sl->waker_id & 0xfffff);
		break;
	case RSP_WAKER_IRQ:
		snprintf(buf, size, "irq %u %s", sl->waker_id, sl->name ? sl->name : "");
		break;
	case RSP_WAKER_SOFTIRQ:
		snprintf(buf, size, "%s softirq",
			 sl->waker_id == RSP_SOFTIRQ_NET_RX || sl->waker_id == RSP_SOFTIRQ_NET_TX
				 ? "network"
				 : rsp_softirq__name(sl->waker_id));
		break;
	case RSP_WAKER_TIMER:
		snprintf(buf, size, "timer");
		break;
	default:
		snprintf(buf, size, "?");
		break;
	}
	return buf;
}

/* Scheduler frames say nothing about why: skip them at the top of a stack. */
static bool boring(const char *name)
{
	static const char *const skip[] = {
		"__schedule",	    "schedule",	    "schedule_preempt_disabled",
		"preempt_schedule", "__traceiter_", "perf_"};

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++) {
		size_t l = strlen(skip[i]);

		if (!strncmp(name, skip[i], l) && (skip[i][l - 1] == '_' || !name[l]))
			return true;
	}
	return false;
}

/* Without a symbolizer: kernel names from the kernel symbols, user frames as addresses. */
static int raw_frames(struct snapnames *n, const uint64_t *ips, uint32_t nr, struct snap_frame *out,
		      int max)
{
	bool kernel = false, top = true, ksyms = rsp_access__kernel_symbols(n->access);
	int k = 0;

	for (uint32_t i = 0; i < nr && k < max; i++) {
		const struct rsp_ksym *sym;
		uint64_t a = ips[i];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = a == (uint64_t)PERF_CONTEXT_KERNEL;
			if (kernel && !ksyms) {
				snprintf(out[k].name, SNAP_FRAME_LEN, "[kernel]");
				out[k].addr = 0, out[k].object = NULL;
				out[k++].kernel = true;
			}
			continue;
		}
		if (kernel && !ksyms)
			continue;
		if (kernel) {
			sym = n->ksyms ? rsp_ksyms__find(n->ksyms, a - 1, NULL) : NULL;
			if (sym && top && boring(sym->name))
				continue;
			top = false;
			if (sym)
				snprintf(out[k].name, SNAP_FRAME_LEN, "%s", sym->name);
			else
				snprintf(out[k].name, SNAP_FRAME_LEN, "0x%llx",
					 (unsigned long long)a);
		} else {
			snprintf(out[k].name, SNAP_FRAME_LEN, "0x%llx", (unsigned long long)a);
		}
		out[k].addr = a;
		out[k].object = kernel ? "[kernel]" : NULL;
		out[k++].kernel = kernel;
	}
	return k;
}

int rsp_snapnames__frames(struct snapnames *n, uint32_t tid, uint32_t tgid, uint64_t time,
			  const uint64_t *ips, uint32_t nr, struct snap_frame *out, int max)
{
	struct rsp_frame raw[MAX_RAW_FRAMES];
	bool top = true;
	int got, k = 0;

	if (!ips || !nr || rsp_snapnames__hidden(n, tid, tgid))
		return 0;
	if (!n->symbols)
		return raw_frames(n, ips, nr, out, max);
	got = rsp_symbolizer__callchain(
		n->symbols, rsp_redact__owner(&n->red, tid, tgid), time, ips, nr,
		rsp_access__kernel_symbols(n->access) ? 0 : RSP_SYM_HIDE_KERNEL, raw,
		MAX_RAW_FRAMES);
	for (int i = 0; i < got && k < max; i++) {
		const struct rsp_sym *s = &raw[i].sym;
		bool kernel = s->kind == RSP_SYM_KERNEL;

		if (kernel && top && s->name && boring(s->name))
			continue;
		top = top && kernel;
		out[k].kernel = kernel;
		out[k].addr = s->hidden ? 0 : raw[i].addr;
		out[k].object = s->hidden ? NULL : s->object;
		if (s->hidden)
			snprintf(out[k].name, SNAP_FRAME_LEN, kernel ? "[kernel]" : "[hidden]");
		else if (s->name) /* from a file anyone may have written */
			rsp_fmt__name(out[k].name, SNAP_FRAME_LEN, s->name);
		else
			snprintf(out[k].name, SNAP_FRAME_LEN, "[unknown]");
		k++;
	}
	return k;
}

char *rsp_snapnames__user_fn(struct snapnames *n, uint32_t tid, uint32_t tgid, uint64_t time,
			     const uint64_t *ips, uint32_t nr, char *buf, size_t size)
{
	uint32_t pid = rsp_redact__owner(&n->red, tid, tgid);
	bool user = false;

	buf[0] = '\0';
	if (!ips || rsp_snapnames__hidden(n, tid, tgid))
		return buf;
	for (uint32_t i = 0; i < nr; i++) {
		struct rsp_sym s;

		if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			user = ips[i] == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		if (!n->symbols)
			snprintf(buf, size, "0x%llx", (unsigned long long)ips[i]);
		else if (!rsp_symbolizer__resolve(n->symbols, pid, time, ips[i], 0, &s))
			rsp_fmt__name(buf, size, s.name);
		else
			snprintf(buf, size, "[unknown]");
		break;
	}
	return buf;
}
