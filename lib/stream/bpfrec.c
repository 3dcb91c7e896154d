// SPDX-License-Identifier: LGPL-2.1
/*
 * rsp's compact BPF records (tracepoints/bpf_records.h) as the catalogue's
 * events: where each tracepoint field sits in its compact record, so that
 * one decoder (tp.c, the timeline's field reads) serves both capture
 * backends, and which event a record stands for. Strings (comms, exec's
 * filename) are not in compact records: their fields are absent, and the
 * names come once as COMM side records.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <rsp/catalogue.h>
#include <rsp/record.h>
#include "internal/schema.h"
#include "tracepoints/bpf_records.h"

static void loc(struct rsp_field_loc *f, enum rsp_field id, size_t offset, size_t size)
{
	f[id].offset = (uint16_t)offset;
	f[id].size = (uint16_t)size;
	f[id].flags = RSP_FLOC_PRESENT;
}

#define LOC(f, id, T, m) loc(f, id, offsetof(T, m), sizeof(((T *)0)->m))

void rsp_bpfrec__fields(struct rsp_field_loc *f)
{
	memset(f, 0, sizeof(*f) * RSP_F__NR);
	/* the current task is in the header: prev of a switch, parent of a fork... */
	LOC(f, RSP_F_sched_switch__prev_pid, struct rsp_brec_hdr, tid);
	LOC(f, RSP_F_sched_switch__prev_prio, struct rsp_brec_switch, prev_prio);
	LOC(f, RSP_F_sched_switch__prev_state, struct rsp_brec_switch, prev_state);
	LOC(f, RSP_F_sched_switch__next_pid, struct rsp_brec_switch, next_tid);
	LOC(f, RSP_F_sched_switch__next_prio, struct rsp_brec_switch, next_prio);
	LOC(f, RSP_F_sched_waking__pid, struct rsp_brec_waking, tid);
	LOC(f, RSP_F_sched_waking__prio, struct rsp_brec_waking, prio);
	LOC(f, RSP_F_sched_waking__target_cpu, struct rsp_brec_waking, target_cpu);
	LOC(f, RSP_F_sched_wakeup_new__pid, struct rsp_brec_waking, tid);
	LOC(f, RSP_F_sched_wakeup_new__prio, struct rsp_brec_waking, prio);
	LOC(f, RSP_F_sched_wakeup_new__target_cpu, struct rsp_brec_waking, target_cpu);
	LOC(f, RSP_F_sched_process_fork__parent_pid, struct rsp_brec_hdr, tid);
	LOC(f, RSP_F_sched_process_fork__child_pid, struct rsp_brec_fork, child_tid);
	LOC(f, RSP_F_sched_process_exec__pid, struct rsp_brec_hdr, tid);
	LOC(f, RSP_F_sched_process_exec__old_pid, struct rsp_brec_exec, old_pid);
	LOC(f, RSP_F_sched_process_exit__pid, struct rsp_brec_hdr, tid);
#define BLOCK_LOCS(E)                                                                              \
	LOC(f, RSP_F_##E##__dev, struct rsp_brec_block, dev);                                      \
	LOC(f, RSP_F_##E##__sector, struct rsp_brec_block, sector);                                \
	LOC(f, RSP_F_##E##__nr_sector, struct rsp_brec_block, nr_sector);                          \
	LOC(f, RSP_F_##E##__rwbs, struct rsp_brec_block, rwbs)
	BLOCK_LOCS(block_rq_insert);
	BLOCK_LOCS(block_rq_issue);
	BLOCK_LOCS(block_rq_complete);
#undef BLOCK_LOCS
	LOC(f, RSP_F_block_rq_insert__bytes, struct rsp_brec_block, bytes);
	LOC(f, RSP_F_block_rq_issue__bytes, struct rsp_brec_block, bytes);
	LOC(f, RSP_F_irq_handler_entry__irq, struct rsp_brec_irq_entry, irq);
	LOC(f, RSP_F_irq_handler_entry__name, struct rsp_brec_irq_entry, name);
	LOC(f, RSP_F_irq_handler_exit__irq, struct rsp_brec_irq_exit, irq);
	LOC(f, RSP_F_irq_handler_exit__ret, struct rsp_brec_irq_exit, ret);
	LOC(f, RSP_F_softirq_entry__vec, struct rsp_brec_softirq, vec);
	LOC(f, RSP_F_softirq_exit__vec, struct rsp_brec_softirq, vec);
	LOC(f, RSP_F_hrtimer_start__hrtimer, struct rsp_brec_hrtimer, hrtimer);
	LOC(f, RSP_F_hrtimer_start__function, struct rsp_brec_hrtimer, function);
	LOC(f, RSP_F_hrtimer_start__expires, struct rsp_brec_hrtimer, time);
	LOC(f, RSP_F_hrtimer_expire_entry__hrtimer, struct rsp_brec_hrtimer, hrtimer);
	LOC(f, RSP_F_hrtimer_expire_entry__function, struct rsp_brec_hrtimer, function);
	LOC(f, RSP_F_hrtimer_expire_entry__now, struct rsp_brec_hrtimer, time);
	LOC(f, RSP_F_hrtimer_expire_exit__hrtimer, struct rsp_brec_hrtimer_exit, hrtimer);
	/* signed where the tracepoint's are: irq, ret, expires, now */
	f[RSP_F_irq_handler_entry__irq].flags |= RSP_FLOC_SIGNED;
	f[RSP_F_irq_handler_exit__irq].flags |= RSP_FLOC_SIGNED;
	f[RSP_F_irq_handler_exit__ret].flags |= RSP_FLOC_SIGNED;
	f[RSP_F_hrtimer_start__expires].flags |= RSP_FLOC_SIGNED;
	f[RSP_F_hrtimer_expire_entry__now].flags |= RSP_FLOC_SIGNED;
	f[RSP_F_block_rq_insert__rwbs].flags |= RSP_FLOC_ARRAY;
	f[RSP_F_block_rq_issue__rwbs].flags |= RSP_FLOC_ARRAY;
	f[RSP_F_block_rq_complete__rwbs].flags |= RSP_FLOC_ARRAY;
	f[RSP_F_irq_handler_entry__name].flags |= RSP_FLOC_ARRAY;
}

/* Each kind: its event (-1: a side record) and the least size it can have. */
static const struct {
	int event;
	uint16_t size;
} kinds[] = {
	[RSP_BREC_COMM] = {-1, sizeof(struct rsp_brec_comm)},
	[RSP_BREC_STACK] = {-1, sizeof(struct rsp_brec_stack)},
	[RSP_BREC_SWITCH] = {RSP_EV_sched_switch, sizeof(struct rsp_brec_switch)},
	[RSP_BREC_SWITCH_STACK] = {RSP_EV_sched_switch, sizeof(struct rsp_brec_switch_stack)},
	[RSP_BREC_WAKING] = {RSP_EV_sched_waking, sizeof(struct rsp_brec_waking)},
	[RSP_BREC_WAKING_STACK] = {RSP_EV_sched_waking, sizeof(struct rsp_brec_waking_stack)},
	[RSP_BREC_WAKEUP_NEW] = {RSP_EV_sched_wakeup_new, sizeof(struct rsp_brec_waking)},
	[RSP_BREC_FORK] = {RSP_EV_sched_process_fork, sizeof(struct rsp_brec_fork)},
	[RSP_BREC_EXEC] = {RSP_EV_sched_process_exec, sizeof(struct rsp_brec_exec)},
	[RSP_BREC_EXIT] = {RSP_EV_sched_process_exit, sizeof(struct rsp_brec_exit)},
	[RSP_BREC_BLOCK_INSERT] = {RSP_EV_block_rq_insert, sizeof(struct rsp_brec_block)},
	[RSP_BREC_BLOCK_ISSUE] = {RSP_EV_block_rq_issue, sizeof(struct rsp_brec_block)},
	[RSP_BREC_BLOCK_COMPLETE] = {RSP_EV_block_rq_complete, sizeof(struct rsp_brec_block)},
	[RSP_BREC_IRQ_ENTRY] = {RSP_EV_irq_handler_entry, sizeof(struct rsp_brec_irq_entry)},
	[RSP_BREC_IRQ_EXIT] = {RSP_EV_irq_handler_exit, sizeof(struct rsp_brec_irq_exit)},
	[RSP_BREC_SOFTIRQ_ENTRY] = {RSP_EV_softirq_entry, sizeof(struct rsp_brec_softirq)},
	[RSP_BREC_SOFTIRQ_EXIT] = {RSP_EV_softirq_exit, sizeof(struct rsp_brec_softirq)},
	[RSP_BREC_HRTIMER_START] = {RSP_EV_hrtimer_start, sizeof(struct rsp_brec_hrtimer)},
	[RSP_BREC_HRTIMER_EXPIRE_ENTRY] = {RSP_EV_hrtimer_expire_entry,
					   sizeof(struct rsp_brec_hrtimer)},
	[RSP_BREC_HRTIMER_EXPIRE_EXIT] = {RSP_EV_hrtimer_expire_exit,
					  sizeof(struct rsp_brec_hrtimer_exit)},
	[RSP_BREC_SWITCH_CHECK] = {RSP_EV_sched_switch, sizeof(struct rsp_brec_switch_check)},
	[RSP_BREC_CARRY] = {-1, sizeof(struct rsp_brec_carry)},
	[RSP_BREC_IRQ] = {RSP_EV_irq_handler_exit, sizeof(struct rsp_brec_irq)},
	[RSP_BREC_SOFTIRQ] = {RSP_EV_softirq_exit, sizeof(struct rsp_brec_softirq_span)},
	[RSP_BREC_HRTIMER] = {RSP_EV_hrtimer_expire_exit, sizeof(struct rsp_brec_hrtimer_span)},
};
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == RSP_BREC__NR, "a size for every kind");

static uint32_t folded_size(const void *raw, unsigned kind);

bool rsp_record__bpf_event(int ev)
{
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (kinds[k].size && kinds[k].event >= 0 && kinds[k].event == ev)
			return true;
	return false;
}

int rsp_bpfrec__classify(const void *raw, uint32_t size, int *event)
{
	struct rsp_brec_hdr h;
	unsigned kind;

	*event = -1;
	if (!raw || size < sizeof(h))
		return -EINVAL;
	memcpy(&h, raw, sizeof(h));
	kind = RSP_BREC_TYPE_KIND(h.type);
	if (!RSP_BREC_IS_TYPE(h.type) || RSP_BREC_TYPE_VERSION(h.type) != RSP_BPF_LAYOUT_VERSION ||
	    kind >= sizeof(kinds) / sizeof(kinds[0]) || !kinds[kind].size ||
	    h.size < kinds[kind].size || h.size > size || h.size % 8)
		return -EINVAL;
	if (kind == RSP_BREC_STACK) {
		struct rsp_brec_stack st;

		memcpy(&st, raw, sizeof(st));
		if (sizeof(st) + (uint32_t)st.nr * 8 > h.size)
			return -EINVAL;
	}
	if (folded_size(raw, kind) > h.size)
		return -EINVAL;
	*event = kinds[kind].event;
	return (int)kind;
}

/* ---- folded records (tracepoints/bpf_records.h, layout 3) ---------------- */

static uint8_t u8_at(const void *raw, size_t off)
{
	return ((const uint8_t *)raw)[off];
}

static uint32_t u32_at(const void *raw, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)raw + off, sizeof(v));
	return v;
}

static bool is_switch(unsigned kind)
{
	return kind == RSP_BREC_SWITCH || kind == RSP_BREC_SWITCH_STACK ||
	       kind == RSP_BREC_SWITCH_CHECK;
}

/* The least size @raw of @kind has with what its fold says it carries. */
static uint32_t folded_size(const void *raw, unsigned kind)
{
	uint32_t f;

	if (is_switch(kind)) {
		f = u8_at(raw, offsetof(struct rsp_brec_switch, fold));
		return kinds[kind].size +
		       (f & RSP_BFOLD_WAKING ? (uint32_t)sizeof(struct rsp_brec_wake_part) : 0);
	}
	if (kind == RSP_BREC_BLOCK_COMPLETE) {
		f = u32_at(raw, offsetof(struct rsp_brec_block, fold));
		return kinds[kind].size +
		       (uint32_t)sizeof(struct rsp_brec_block_part) *
			       (!!(f & RSP_BFOLD_BLOCK_INSERT) + !!(f & RSP_BFOLD_BLOCK_ISSUE));
	}
	if (kind == RSP_BREC_CARRY) {
		f = u8_at(raw, offsetof(struct rsp_brec_carry, what));
		if (f == RSP_BREC_WAKING || f == RSP_BREC_WAKING_STACK || f == RSP_BREC_WAKEUP_NEW)
			return kinds[kind].size + (uint32_t)sizeof(struct rsp_brec_wake_part);
		if (f == RSP_BREC_BLOCK_INSERT || f == RSP_BREC_BLOCK_ISSUE)
			return kinds[kind].size + (uint32_t)sizeof(struct rsp_brec_block_part);
		return UINT32_MAX; /* a part of no kind rsp writes */
	}
	return 0;
}

/* A header for a record of @kind and @size that a part stands for. */
static void part_hdr(struct rsp_brec_hdr *h, unsigned kind, uint16_t size, uint64_t time,
		     uint16_t cpu, uint32_t pid, uint32_t tid)
{
	h->type = RSP_BREC_TYPE(kind);
	h->cpu = cpu;
	h->size = size;
	h->time = time;
	h->pid = pid;
	h->tid = tid;
}

/* The waking a wake part stands for, of @woken (tid, pid). */
static void unfold_wake(const void *part, const uint32_t woken[2], uint64_t *out)
{
	struct rsp_brec_wake_part p;
	struct rsp_brec_waking_stack r;
	unsigned kind;

	memcpy(&p, part, sizeof(p));
	kind = p.kind == RSP_BREC_WAKEUP_NEW || p.kind == RSP_BREC_WAKING_STACK ? p.kind
										: RSP_BREC_WAKING;
	memset(&r, 0, sizeof(r));
	part_hdr(&r.wk.h, kind,
		 kind == RSP_BREC_WAKING_STACK ? sizeof(r) : sizeof(struct rsp_brec_waking), p.time,
		 p.cpu, p.pid, p.tid);
	r.wk.tid = woken[0];
	r.wk.pid = woken[1];
	r.wk.target_cpu = p.target_cpu;
	r.wk.prio = p.prio;
	r.wk.stack_flags = p.stack_flags;
	r.kstack = p.kstack;
	r.ustack = p.ustack;
	memcpy(out, &r, sizeof(r));
}

/* The insert or issue a block part stands for, of the request on @dev. */
static void unfold_block(const void *part, uint32_t dev, uint64_t *out)
{
	struct rsp_brec_block_part p;
	struct rsp_brec_block r;

	memcpy(&p, part, sizeof(p));
	memset(&r, 0, sizeof(r));
	part_hdr(&r.h,
		 p.kind == RSP_BREC_BLOCK_INSERT ? RSP_BREC_BLOCK_INSERT : RSP_BREC_BLOCK_ISSUE,
		 sizeof(r), p.time, p.cpu, p.pid, p.tid);
	r.sector = p.sector;
	r.dev = dev;
	r.nr_sector = p.nr_sector;
	r.bytes = p.bytes;
	memcpy(r.rwbs, p.rwbs, sizeof(r.rwbs));
	memcpy(out, &r, sizeof(r));
}

/* The entry of a handler span that ran from @start, on the span's CPU and task. */
static int unfold_span(const void *raw, unsigned kind, uint64_t out[][RSP_BPFREC_UNFOLD_WORDS])
{
	struct rsp_brec_hdr h;

	memcpy(&h, raw, sizeof(h));
	if (kind == RSP_BREC_IRQ) {
		struct rsp_brec_irq s;
		struct rsp_brec_irq_entry e;

		memcpy(&s, raw, sizeof(s));
		if (!s.start)
			return 0;
		memset(&e, 0, sizeof(e));
		part_hdr(&e.h, RSP_BREC_IRQ_ENTRY, sizeof(e), s.start, h.cpu, h.pid, h.tid);
		e.irq = s.irq;
		memcpy(e.name, s.name, sizeof(e.name));
		memcpy(out[0], &e, sizeof(e));
	} else if (kind == RSP_BREC_SOFTIRQ) {
		struct rsp_brec_softirq_span s;
		struct rsp_brec_softirq e;

		memcpy(&s, raw, sizeof(s));
		if (!s.start)
			return 0;
		memset(&e, 0, sizeof(e));
		part_hdr(&e.h, RSP_BREC_SOFTIRQ_ENTRY, sizeof(e), s.start, h.cpu, h.pid, h.tid);
		e.vec = s.vec;
		memcpy(out[0], &e, sizeof(e));
	} else {
		struct rsp_brec_hrtimer_span s;
		struct rsp_brec_hrtimer e;

		memcpy(&s, raw, sizeof(s));
		if (!s.start)
			return 0;
		memset(&e, 0, sizeof(e));
		part_hdr(&e.h, RSP_BREC_HRTIMER_EXPIRE_ENTRY, sizeof(e), s.start, h.cpu, h.pid,
			 h.tid);
		e.hrtimer = s.hrtimer;
		e.function = s.function;
		e.time = s.now;
		memcpy(out[0], &e, sizeof(e));
	}
	return 1;
}

int rsp_bpfrec__unfold(const void *raw, uint32_t size,
		       uint64_t out[RSP_BPFREC_UNFOLD_MAX][RSP_BPFREC_UNFOLD_WORDS])
{
	struct rsp_brec_hdr h;
	unsigned kind;
	uint32_t f, woken[2];
	int n = 0;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, raw, sizeof(h));
	kind = RSP_BREC_TYPE_KIND(h.type);
	if (is_switch(kind)) {
		if (!(u8_at(raw, offsetof(struct rsp_brec_switch, fold)) & RSP_BFOLD_WAKING))
			return 0;
		woken[0] = u32_at(raw, offsetof(struct rsp_brec_switch, next_tid));
		woken[1] = u32_at(raw, offsetof(struct rsp_brec_switch, next_pid));
		unfold_wake((const char *)raw + h.size - sizeof(struct rsp_brec_wake_part), woken,
			    out[0]);
		return 1;
	}
	if (kind == RSP_BREC_BLOCK_COMPLETE) {
		const char *p = (const char *)raw + sizeof(struct rsp_brec_block);

		f = u32_at(raw, offsetof(struct rsp_brec_block, fold));
		for (uint32_t bit = RSP_BFOLD_BLOCK_INSERT; bit <= RSP_BFOLD_BLOCK_ISSUE;
		     bit <<= 1) {
			if (!(f & bit))
				continue;
			unfold_block(p, u32_at(raw, offsetof(struct rsp_brec_block, dev)),
				     out[n++]);
			p += sizeof(struct rsp_brec_block_part);
		}
		return n;
	}
	if (kind == RSP_BREC_CARRY) {
		const char *p = (const char *)raw + sizeof(struct rsp_brec_carry);

		memcpy(woken, (const char *)raw + offsetof(struct rsp_brec_carry, woken),
		       sizeof(woken));
		f = u8_at(raw, offsetof(struct rsp_brec_carry, what));
		if (f == RSP_BREC_BLOCK_INSERT || f == RSP_BREC_BLOCK_ISSUE)
			unfold_block(p, woken[0], out[0]);
		else
			unfold_wake(p, woken, out[0]);
		return 1;
	}
	if (kind == RSP_BREC_IRQ || kind == RSP_BREC_SOFTIRQ || kind == RSP_BREC_HRTIMER)
		return unfold_span(raw, kind, out);
	return 0;
}
