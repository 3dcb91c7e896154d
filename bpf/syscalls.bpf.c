// SPDX-License-Identifier: GPL-2.0
/*
 * Always-on per-syscall latency profiles (OSprof's operations at the
 * system-call layer), aggregated in the kernel: no record per syscall.
 *
 * sys_enter keeps the entry time and number in a per-CPU slot (sc_cpu: an
 * array lookup, which the verifier inlines); sched_switch moves the slot of
 * a thread switched out inside a syscall into its task local storage
 * (freed with the task, so bounded by the tasks that exist) and back into
 * the slot of the CPU it runs on next, adding the time it was out;
 * sys_exit adds the call's latency and its off-CPU part into the per-CPU
 * value of the key (tgid, tid, nr) in a bounded PERCPU_HASH, as
 * libbpf-tools' funclatency and runqlat do with their log2 slots. rspd
 * reads the map periodically and takes deltas (daemon/syscalls.c).
 *
 * Why a per-CPU slot and not the task's local storage at entry and exit:
 * a thread's syscall runs on one CPU until it is switched out, and most
 * syscalls are not; the slot costs an inlined array lookup where
 * bpf_task_storage_get() costs a helper call, an RCU section and a cache
 * lookup, twice per call (~40 ns a syscall on the project's VM, of ~420).
 *
 * Why switch-out accounting and not the task's se.sum_exec_runtime at
 * entry and exit: sum_exec_runtime is brought up to date only at ticks
 * and at scheduling points, so it lags by up to a tick (4 ms at HZ=250)
 * when read on entry, an error larger than the calls it would split. A
 * switch-out/switch-in pair inside the call is exact: off-CPU is the time
 * from switch-out to switch-in (asleep or waiting in a run queue).
 *
 * Exits: sched_process_exit queues the tid of every user thread that exits
 * (sc_exited); rspd reads that thread's keys one last time and deletes them,
 * so the table holds the keys of live threads (a full queue is counted and
 * left to rspd's slower sweep of /proc).
 *
 * Bounds: the key table has max_entries set by rspd; the calls of a new
 * key that does not fit go to sc_other (one key per syscall number, so the
 * system's profile stays exact) and are counted (RSP_SC_OVERFLOW). Numbers
 * at or above RSP_SC_MAX_NR are not timed (counted as another ABI's).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tracepoints/bpf_syscalls.h"

char LICENSE[] SEC("license") = "GPL";

#define TS_COMPAT_BIT  0x0002 /* arch/x86/include/asm/thread_info.h */
#define X32_BIT	       0x40000000
#define PF_KTHREAD_BIT 0x00200000 /* include/linux/sched.h PF_KTHREAD */

/* Set by the loader: rspd's own process is not profiled (its reads would be). */
const volatile unsigned int self_tgid = 0;
/*
 * Set by the loader: false keeps only the system's profile of each syscall
 * number, in a per-CPU array indexed by it (sc_sys: an inlined array lookup
 * at exit, no key, no hash); true a profile per (thread, syscall) in sc_hist.
 */
const volatile bool per_thread = true;

struct sc_state {
	u64 entry;  /* entry time, 0: not in a syscall we timed */
	u64 out_at; /* switched out at (task storage only) */
	u64 offcpu; /* ns switched out since entry */
	u32 nr;
	u32 tid; /* whose call (the per-CPU slot) */
};

/* The call under way on this CPU, of thread tid. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct sc_state);
} sc_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sc_state);
} sc_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096); /* rspd sets it */
	__type(key, struct rsp_sc_key);
	__type(value, struct rsp_sc_val);
} sc_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RSP_SC__NR);
	__type(key, u32);
	__type(value, u64);
} sc_counters SEC(".maps");

/* Per syscall number: the calls of threads that found sc_hist full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RSP_SC_MAX_NR);
	__type(key, u32);
	__type(value, struct rsp_sc_val);
} sc_other SEC(".maps");

/* The system's profile of each syscall number (per_thread false). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RSP_SC_MAX_NR);
	__type(key, u32);
	__type(value, struct rsp_sc_val);
} sc_sys SEC(".maps");

/* Threads that exited after a syscall: rspd deletes their keys (after reading them). */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, RSP_SC_EXIT_QUEUE);
	__type(value, u32);
} sc_exited SEC(".maps");

/* Threads that exec'd, and their name since (tracepoints/bpf_syscalls.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RSP_SC_RENAMED);
	__type(key, u32);
	__type(value, struct rsp_sc_name);
} sc_renamed SEC(".maps");

/* A fresh value to insert: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct rsp_sc_val);
} sc_zero SEC(".maps");

static __always_inline void count(u32 c)
{
	u64 *n = bpf_map_lookup_elem(&sc_counters, &c);

	if (n)
		(*n)++;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(rsp_sc_enter, struct pt_regs *regs, long id)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct sc_state *s;
	u32 zero = 0;

	if (t->tgid == self_tgid)
		return 0;
	if ((t->thread_info.status & TS_COMPAT_BIT) || (id & X32_BIT) || id < 0 ||
	    id >= RSP_SC_MAX_NR) {
		count(RSP_SC_OTHER_ABI);
		return 0;
	}
	s = bpf_map_lookup_elem(&sc_cpu, &zero);
	if (!s)
		return 0;
	s->nr = (u32)id;
	s->tid = (u32)t->pid;
	s->offcpu = 0;
	s->entry = bpf_ktime_get_ns();
	return 0;
}

/* A thread inside a syscall leaves this CPU: its call goes with it (task storage). */
SEC("tp_btf/sched_switch")
int BPF_PROG(rsp_sc_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u64 now = bpf_ktime_get_ns();
	struct sc_state *c, *s;
	u32 zero = 0;

	c = bpf_map_lookup_elem(&sc_cpu, &zero);
	if (!c)
		return 0;
	if (c->entry && c->tid == (u32)prev->pid) {
		s = bpf_task_storage_get(&sc_task, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (s) {
			s->entry = c->entry;
			s->nr = c->nr;
			s->offcpu = c->offcpu;
			s->out_at = now;
		} else {
			count(RSP_SC_NO_STATE);
		}
	}
	c->entry = 0;
	s = bpf_task_storage_get(&sc_task, next, 0, 0);
	if (s && s->entry) {
		c->entry = s->entry;
		c->nr = s->nr;
		c->tid = (u32)next->pid;
		c->offcpu = s->offcpu + (now - s->out_at);
		s->entry = 0;
	}
	return 0;
}

static __always_inline struct rsp_sc_val *value_of(struct rsp_sc_key *k)
{
	struct rsp_sc_val *v = bpf_map_lookup_elem(&sc_hist, k);
	u32 zero = 0, nr = k->nr;

	if (v)
		return v;
	v = bpf_map_lookup_elem(&sc_zero, &zero);
	if (!v)
		return NULL;
	bpf_get_current_comm(v->comm, sizeof(v->comm));
	if (!bpf_map_update_elem(&sc_hist, k, v, BPF_NOEXIST))
		return bpf_map_lookup_elem(&sc_hist, k);
	v = bpf_map_lookup_elem(&sc_hist, k); /* another CPU inserted it meanwhile */
	if (v)
		return v;
	/* The thread table is full: the system's profile of this number stays exact. */
	count(RSP_SC_OVERFLOW);
	v = bpf_map_lookup_elem(&sc_other, &nr);
	if (v)
		return v;
	v = bpf_map_lookup_elem(&sc_zero, &zero);
	if (v && !bpf_map_update_elem(&sc_other, &nr, v, BPF_NOEXIST))
		return bpf_map_lookup_elem(&sc_other, &nr);
	return bpf_map_lookup_elem(&sc_other, &nr);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(rsp_sc_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rsp_sc_key k = {};
	struct rsp_sc_val *v;
	struct sc_state *s;
	u64 now, lat, off, q;
	u32 b, zero = 0;

	if (t->tgid == self_tgid)
		return 0;
	s = bpf_map_lookup_elem(&sc_cpu, &zero);
	if (!s)
		return 0;
	now = bpf_ktime_get_ns();
	if (!s->entry || s->tid != (u32)t->pid) {
		/*
		 * The call may be in the task's storage: the switch-in that
		 * should have brought it back found the storage busy
		 * (bpf_task_storage_get() returns NULL while another storage
		 * operation holds this CPU's lock). Its off-CPU part is then
		 * known only up to the time since its switch-out: counted as
		 * off CPU (an upper bound; the call itself is exact).
		 */
		struct sc_state *ts = bpf_task_storage_get(&sc_task, t, 0, 0);

		/*
		 * And it must be this call: an entry left there by an older call
		 * whose exit found the storage busy too must not time another
		 * call (one whose entry was not seen), so the numbers must agree.
		 */
		if (!ts || !ts->entry || ts->entry > now || (long)ts->nr != regs->orig_ax) {
			count(RSP_SC_UNMATCHED);
			return 0;
		}
		count(RSP_SC_LATE);
		s->entry = ts->entry;
		s->nr = ts->nr;
		s->tid = (u32)t->pid;
		s->offcpu = ts->offcpu + (now - ts->out_at);
		ts->entry = 0;
	}
	lat = now - s->entry;
	off = s->offcpu < lat ? s->offcpu : lat;
	k.tgid = t->tgid;
	k.tid = t->pid;
	k.nr = s->nr;
	s->entry = 0;
	v = per_thread ? value_of(&k) : bpf_map_lookup_elem(&sc_sys, &k.nr);
	if (!v) {
		count(RSP_SC_NO_STATE);
		return 0;
	}
	b = rsp_sc__bucket(lat);
	q = (lat + 8) >> RSP_SC_SQ_SHIFT;
	if (q > 0xffffffffull)
		q = 0xffffffffull; /* calls over 68 s: their square is capped */
	if (!v->count || lat < v->min)
		v->min = lat;
	if (lat > v->max)
		v->max = lat;
	v->sum += lat;
	v->offcpu += off;
	v->sq += q * q;
	if (b < RSP_SC_NR_BUCKETS)
		v->b[b]++;
	/*
	 * The count last, after a compiler barrier (x86 keeps stores in order):
	 * rspd copies the value while this runs, count first, and takes a delta
	 * only when the count moved, so a copy that sees the new count sees the
	 * whole call; one that sees the old count waits for the next read. With
	 * the count first, a torn copy took the count without the call's sum and
	 * bucket, and lost them for good when the thread made no further call.
	 */
	asm volatile("" ::: "memory");
	v->count++;
	return 0;
}

/* A thread exec'd: its keys take its new name (rspd reads sc_renamed). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(rsp_sc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct rsp_sc_name n = {.tgid = (u32)p->tgid};
	u32 tid = (u32)p->pid;

	if (p->tgid == self_tgid)
		return 0;
	bpf_get_current_comm(n.comm, sizeof(n.comm)); /* set by exec before this tracepoint */
	bpf_map_update_elem(&sc_renamed, &tid, &n, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(rsp_sc_task_exit, struct task_struct *p)
{
	u32 tid = p->pid;

	/* Kernel threads make no syscalls; any user thread may have keys. */
	if (p->flags & PF_KTHREAD_BIT)
		return 0;
	if (bpf_map_push_elem(&sc_exited, &tid, 0))
		count(RSP_SC_EXIT_LOST);
	return 0;
}
