// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any BPF scheduler tracer on this kernel (bench only:
 * bench/sched_floor.c, run by bench/bpf_floor.py): programs on
 * tp_btf/sched_switch and tp_btf/sched_waking that do, by @level, nothing
 * (0), read the clock (1), or write a 40-byte record of the fields rsp's
 * switch and waking records carry into one BPF ring buffer (2), the
 * smallest useful tracer. What rsp's own programs (rsp.bpf.c) cost above
 * level 2 is their own work: names sent once, per-CPU rings, counters.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile int level = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} floor_ring SEC(".maps");

/* As rsp's switch and waking records: perf-like header, time, task, 16 bytes of fields. */
struct floor_rec {
	u32 type;
	u16 cpu, size;
	u64 time;
	u32 pid, tid;
	u32 a, b, c, d;
};

static __always_inline int record(u32 type, u32 a, u32 b, u32 c, u32 d)
{
	struct floor_rec r;
	u64 id;

	if (level == 0)
		return 0;
	r.time = bpf_ktime_get_ns();
	if (level == 1)
		return r.time == 0;
	id = bpf_get_current_pid_tgid();
	r.type = type;
	r.cpu = (u16)bpf_get_smp_processor_id();
	r.size = sizeof(r);
	r.pid = (u32)(id >> 32);
	r.tid = (u32)id;
	r.a = a;
	r.b = b;
	r.c = c;
	r.d = d;
	bpf_ringbuf_output(&floor_ring, &r, sizeof(r), BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(rsp_floor_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	return record(1, next->pid, next->tgid, prev_state, (u32)next->prio);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(rsp_floor_sched_waking, struct task_struct *p)
{
	return record(2, p->pid, p->tgid, p->thread_info.cpu, (u32)p->prio);
}
