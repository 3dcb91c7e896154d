// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any BPF syscall profiler on this kernel (bench only): empty
 * programs on tp_btf/sys_enter and tp_btf/sys_exit. Attaching them turns on
 * the syscall tracepoints' slow path for every task and runs a BPF program
 * twice per call; what rsp's syscall family (syscalls.bpf.c) costs above
 * this is its own work (bench/syscalls.py measures both side by side).
 * The switch program is the floor of the off-CPU split: an empty program on
 * tp_btf/sched_switch.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(rsp_floor_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(rsp_floor_exit, struct pt_regs *regs, long ret)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(rsp_floor_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}
