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
};
_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == RSP_BREC__NR, "a size for every kind");

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
	*event = kinds[kind].event;
	return (int)kind;
}
