// SPDX-License-Identifier: GPL-2.0
/*
 * Stopwatches (rspctl stopwatch): the time from a user function's entry to
 * its return (a uprobe and a uretprobe per function, the stopwatch's index
 * as the BPF cookie of both links), or from a system call's entry to its
 * exit, aggregated here in the kernel: per CPU exact sums and log2 buckets
 * (struct rsp_sw_stat), which rspd reads every second. Nothing per call
 * crosses to userspace. Matching and the statistics are bpf/stopwatch.h,
 * shared with the unit tests.
 *
 * The per-thread table (map "frames") holds only threads that are inside
 * a probed call: its entry is deleted when its last open entry returns,
 * and by the exit handler when the thread exits inside one. Its size is
 * --stopwatch-threads; an entry that finds it full is counted in overflow.
 *
 * Epochs: each stopwatch has two stat slots; rspd flips "epoch" every
 * second, waits a grace period, then reads and clears the slot it left,
 * which gives it each second's exact counts, minimum and maximum (minima
 * and maxima cannot be subtracted between cumulative readings).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bpf/stopwatch.h"

char LICENSE[] SEC("license") = "GPL";

unsigned int epoch = 0;
/* A bit per stopwatch added with --callers (rspd sets it): sw_sys_exit takes the stack once. */
__u64 callers_mask = 0;
/*
 * Per stopwatch, the caller rows rspd folded and deleted (rows of exited
 * processes, daemon/stopwatch.c): the rows it may still make are
 * callers_max - (callers_rows - callers_freed). Written by rspd only.
 */
__u32 callers_freed[RSP_SW_MAX] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096); /* --stopwatch-threads, set before load */
	__type(key, struct rsp_sw_key);
	__type(value, struct rsp_sw_frames);
} frames SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096); /* --stopwatch-threads, set before load */
	__type(key, __u32);
	__type(value, struct rsp_sw_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RSP_SW_MAX * 2);
	__type(key, __u32);
	__type(value, struct rsp_sw_stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RSP_SW_MAX);
	__type(key, __u32);
	__type(value, struct rsp_sw_filter);
} filters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RSP_SW_MAX);
	__type(key, __u32);
	__type(value, struct rsp_sw_pair);
} pairs SEC(".maps");

/*
 * Keyed pairs of tracepoints: one attachment per (tracepoint, side), its
 * cookie an index here, its value the stopwatches it starts (side 0) or
 * ends (side 1). The kernel attaches a program to a tracepoint once, so two
 * pairs that share an event share its attachment.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * RSP_SW_MAX);
	__type(key, __u32);
	__type(value, __u64);
} tp_users SEC(".maps");

/* Keyed pairs' items in flight: start time; rspd expires the old ones. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096); /* --stopwatch-threads, set before load */
	__type(key, struct rsp_sw_item);
	__type(value, __u64);
} items SEC(".maps");

/* --callers: user stacks (ids) and the calls per stack (bpf/stopwatch.h). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048); /* --stopwatch-callers, set before load */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, RSP_SW_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048); /* --stopwatch-callers, set before load */
	__type(key, struct rsp_sw_caller_key);
	__type(value, struct rsp_sw_caller_val);
} callers SEC(".maps");

/* Per system call number: a bit per stopwatch that times it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RSP_SW_NR_SYSCALLS);
	__type(key, __u32);
	__type(value, __u64);
} syscalls SEC(".maps");

static const struct rsp_sw_frames zero_frames;
static const struct rsp_sw_thread zero_thread;

static __always_inline struct rsp_sw_thread *thread_of(__u32 tid, bool create)
{
	struct rsp_sw_thread *t = bpf_map_lookup_elem(&threads, &tid);

	if (t || !create)
		return t;
	bpf_map_update_elem(&threads, &tid, &zero_thread, BPF_NOEXIST);
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline struct rsp_sw_stat *stat_of(__u32 sw)
{
	__u32 k = sw * 2 + (epoch & 1);

	return bpf_map_lookup_elem(&stats, &k);
}

static __always_inline bool wanted(__u32 sw)
{
	struct rsp_sw_filter *f = bpf_map_lookup_elem(&filters, &sw);
	char comm[16];

	if (!f || !f->active)
		return false;
	if (f->tgid && f->tgid != (__u32)(bpf_get_current_pid_tgid() >> 32))
		return false;
	if (!f->comm[0])
		return true;
	bpf_get_current_comm(comm, sizeof(comm));
	for (int i = 0; i < 16; i++) {
		if (comm[i] != f->comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

static __always_inline void enter(__u32 sw, __u64 sp)
{
	struct rsp_sw_key key = {.tid = (__u32)bpf_get_current_pid_tgid(), .sw = sw};
	__u64 now = bpf_ktime_get_ns(), unmatched = 0, overflow = 0;
	struct rsp_sw_frames *f;
	struct rsp_sw_stat *s;

	if (sw >= RSP_SW_MAX || !wanted(sw))
		return;
	f = bpf_map_lookup_elem(&frames, &key);
	if (!f) {
		if (bpf_map_update_elem(&frames, &key, &zero_frames, BPF_NOEXIST) == 0)
			f = bpf_map_lookup_elem(&frames, &key);
	}
	if (f) {
		struct rsp_sw_thread *th;

		rsp_sw__push(f, sp, now, &unmatched, &overflow);
		th = thread_of(key.tid, true);
		if (!overflow && f->depth > 0) {
			__u32 k = (f->depth - 1) & (RSP_SW_DEPTH - 1);

			/* ~0: the thread record could not be made; its off-CPU time unknown */
			f->off[k] = th ? th->off_ns : ~0ull;
			f->slp[k] = th ? th->sleep_ns : 0;
		}
	} else {
		overflow = 1;
	}
	s = stat_of(sw);
	if (s) {
		s->unmatched += unmatched;
		s->overflow += overflow;
	}
}

/*
 * --callers: add the call of @dur ns to the row of its caller stack @id
 * (bpf_get_stackid(): negative when it could not be taken). The stack is
 * the user stack at the return (the uretprobe or sys_exit), whose first
 * frame is the caller's return address: the call site itself.
 */
static __always_inline void by_caller(__u32 sw, __u64 dur, __u64 now, long id)
{
	struct rsp_sw_filter *f;
	struct rsp_sw_caller_key k = {};
	struct rsp_sw_caller_val *v, one = {.count = 1, .sum = dur, .first = now};
	struct rsp_sw_stat *s;

	if (sw >= RSP_SW_MAX)
		return;
	f = bpf_map_lookup_elem(&filters, &sw);
	s = stat_of(sw);
	if (!f || !s)
		return;
	if (id < 0) {
		s->callers_lost++;
		return;
	}
	k.sw = sw;
	k.tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	k.stack = (__u32)id;
	v = bpf_map_lookup_elem(&callers, &k);
	/* Read, then add: CPUs racing at the bound may pass it by one each (the
	 * program is built for BPF v1, where an atomic add returns nothing). */
	if (!v && f->callers_rows - *(volatile __u32 *)&callers_freed[sw & (RSP_SW_MAX - 1)] <
			  f->callers_max) {
		if (bpf_map_update_elem(&callers, &k, &one, BPF_NOEXIST) == 0) {
			__sync_fetch_and_add(&f->callers_rows, 1);
			return;
		}
		v = bpf_map_lookup_elem(&callers, &k); /* another CPU made it first? */
	}
	if (!v) {
		s->callers_overflow++;
		return;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->sum, dur);
}

/* Does @sw count its calls by caller (--callers)? */
static __always_inline bool wants_callers(__u32 sw)
{
	struct rsp_sw_filter *f = bpf_map_lookup_elem(&filters, &sw);

	return f && f->callers;
}

/*
 * A return: @stack is its caller's stack id (taken by the program, which
 * has the context) when a stopwatch wants callers, else SW_NO_STACK.
 *
 * A global function: the verifier checks it once, not once for each of the
 * RSP_SW_MAX stopwatches sw_sys_exit loops over (inline, with --callers
 * added, that loop was refused with E2BIG).
 */
#define SW_NO_STACK (-1000)

__noinline int sw_leave(__u32 sw, __u64 entry_sp, long stack)
{
	struct rsp_sw_key key = {.tid = (__u32)bpf_get_current_pid_tgid(), .sw = sw};
	__u64 now = bpf_ktime_get_ns(), unmatched = 0, dur = 0, off0 = 0, slp0 = 0;
	struct rsp_sw_thread *th;
	struct rsp_sw_frames *f;
	struct rsp_sw_stat *s;
	bool matched;

	if (sw >= RSP_SW_MAX)
		return 0;
	f = bpf_map_lookup_elem(&frames, &key);
	if (!f)
		return 0; /* no entry seen: began inside the call, or not wanted */
	matched = rsp_sw__pop(f, entry_sp, now, &dur, &unmatched);
	if (matched) {
		__u32 k = f->depth & (RSP_SW_DEPTH - 1);

		off0 = f->off[k];
		slp0 = f->slp[k];
	}
	if (!f->depth)
		bpf_map_delete_elem(&frames, &key);
	s = stat_of(sw);
	if (!s)
		return 0;
	s->unmatched += unmatched;
	if (!matched)
		return 0;
	rsp_sw__record(s, dur);
	if (stack != SW_NO_STACK && wants_callers(sw))
		by_caller(sw, dur, now, stack);
	th = thread_of(key.tid, false);
	if (th && off0 != ~0ull && th->off_ns >= off0 && th->off_ns - off0 <= dur) {
		s->offcpu += th->off_ns - off0;
		s->asleep += th->sleep_ns - slp0;
	} else {
		s->off_unknown++;
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(sw_entry)
{
	enter((__u32)bpf_get_attach_cookie(ctx), PT_REGS_SP(ctx));
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(sw_return)
{
	__u32 sw = (__u32)bpf_get_attach_cookie(ctx);
	long stack =
		wants_callers(sw) ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : SW_NO_STACK;

	sw_leave(sw, PT_REGS_SP(ctx) - RSP_SW_RET_SP, stack);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sw_sys_enter, struct pt_regs *regs, long id)
{
	__u32 nr = (__u32)id;
	__u64 *mask = bpf_map_lookup_elem(&syscalls, &nr);
	__u64 m;

	if (!mask || !(m = *mask))
		return 0;
	for (__u32 sw = 0; sw < RSP_SW_MAX; sw++)
		if (m & (1ull << sw))
			enter(sw, 0);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sw_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 nr = (__u32)BPF_CORE_READ(regs, orig_ax);
	__u64 *mask = bpf_map_lookup_elem(&syscalls, &nr);
	__u64 m;

	long stack = SW_NO_STACK;

	if (!mask || !(m = *mask))
		return 0;
	if (m & callers_mask) /* one walk of the stack for all that want it */
		stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	for (__u32 sw = 0; sw < RSP_SW_MAX; sw++)
		if (m & (1ull << sw))
			sw_leave(sw, 0, stack);
	return 0;
}

/* Field @f of the pair's @side event, read from the tracepoint's record. */
static __always_inline __u64 field(void *ctx, struct rsp_sw_pair *p, int side, int f)
{
	__u32 off = p->off[side & 1][f & 1], size = p->size[side & 1][f & 1];
	__u64 v = 0;

	if (size > 8)
		size = 8;
	if (size)
		bpf_probe_read_kernel(&v, size, (char *)ctx + (off & 0xffff));
	return v; /* little-endian: the low @size bytes */
}

static __always_inline struct rsp_sw_pair *item_of(void *ctx, __u32 sw, int side,
						   struct rsp_sw_item *it)
{
	struct rsp_sw_pair *p;

	if (sw >= RSP_SW_MAX)
		return NULL;
	p = bpf_map_lookup_elem(&pairs, &sw);
	if (!p || !p->nfields)
		return NULL;
	it->sw = sw;
	it->k[0] = field(ctx, p, side, 0);
	if (p->nfields > 1)
		it->k[1] = field(ctx, p, side, 1);
	return p;
}

/*
 * A tracepoint program's return value decides whether the tracepoint's perf
 * samples are kept, for every perf event of that tracepoint on the CPU
 * (perf_trace_run_bpf_submit()): 0 would take the records from rspd's own
 * capture (found by test_stopwatch_pair: the blk_service profile went
 * empty). Both return 1.
 */
#define KEEP_PERF_SAMPLE 1

/* An item starts: its time kept until its end (the same key started again counts unmatched). */
static __always_inline void item_start(__u32 sw, struct rsp_sw_item *it)
{
	__u64 now = bpf_ktime_get_ns();
	struct rsp_sw_stat *s = stat_of(sw);
	long ret = bpf_map_update_elem(&items, it, &now, BPF_NOEXIST);

	if (ret == -17 /* EEXIST: the same key started again; the first never ended */) {
		bpf_map_update_elem(&items, it, &now, BPF_ANY);
		if (s)
			s->unmatched++;
	} else if (ret && s) {
		s->overflow++;
	}
}

/* An item ends: timed from its start, if that was seen. */
static __always_inline void item_end(__u32 sw, struct rsp_sw_item *it)
{
	__u64 now = bpf_ktime_get_ns(), *t0, t;
	struct rsp_sw_stat *s;

	t0 = bpf_map_lookup_elem(&items, it);
	if (!t0)
		return; /* its start was not seen (or filtered out) */
	t = *t0;
	if (bpf_map_delete_elem(&items, it))
		return; /* another CPU ended it first */
	s = stat_of(sw);
	if (s) {
		rsp_sw__record(s, now > t ? now - t : 0);
		s->off_unknown++; /* an item, not a thread's call: no off-CPU time */
	}
}

/*
 * One stopwatch of an attachment's mask (a bpf_loop() callback: verified
 * once, where an unrolled or bounded loop over RSP_SW_MAX stopwatches, each
 * with its comm filter, passed the verifier's million instructions).
 */
struct tp_walk {
	void *ctx;
	__u64 m;
	int side;
};

static long tp_one(__u32 sw, void *data)
{
	struct tp_walk *w = data;
	struct rsp_sw_item it = {};
	struct rsp_sw_pair *p;

	if (!w->m)
		return 1; /* no stopwatch left: stop */
	if (sw >= RSP_SW_MAX || !(w->m & (1ull << sw)))
		return 0;
	w->m &= ~(1ull << sw);
	p = item_of(w->ctx, sw, w->side, &it);
	if (!p)
		return 0;
	if (w->side) {
		item_end(sw, &it);
		return 0;
	}
	if (!wanted(sw))
		return 0;
	if (p->has_where) {
		__u64 v = 0;
		__u32 size = p->where_size > 8 ? 8 : p->where_size;

		if (size)
			bpf_probe_read_kernel(&v, size, (char *)w->ctx + (p->where_off & 0xffff));
		if (v != p->where_value)
			return 0;
	}
	item_start(sw, &it);
	return 0;
}

/* The stopwatches of the attachment the program runs for (its cookie), each in turn. */
static __always_inline void tp_run(void *ctx, int side)
{
	__u32 t = (__u32)bpf_get_attach_cookie(ctx);
	__u64 *m = bpf_map_lookup_elem(&tp_users, &t);
	struct tp_walk w = {.ctx = ctx, .side = side};

	if (!m || !*m)
		return;
	w.m = *m;
	bpf_loop(RSP_SW_MAX, tp_one, &w, 0);
}

SEC("tracepoint")
int sw_tp_start(void *ctx)
{
	tp_run(ctx, 0);
	return KEEP_PERF_SAMPLE;
}

SEC("tracepoint")
int sw_tp_end(void *ctx)
{
	tp_run(ctx, 1);
	return KEEP_PERF_SAMPLE;
}

/*
 * Integer argument @n (1 to 6) at a function's entry, x86-64's calling
 * convention. All six are read at their fixed offsets first (the verifier
 * refuses a load from the context at a computed offset, which a switch
 * compiles to), then one is picked from the stack.
 */
static __always_inline __u64 user_arg(struct pt_regs *ctx, __u32 n)
{
	volatile __u64 a[8] = {}; /* 8: the index masked, a bound the verifier sees */

	a[0] = PT_REGS_PARM1(ctx);
	a[1] = PT_REGS_PARM2(ctx);
	a[2] = PT_REGS_PARM3(ctx);
	a[3] = PT_REGS_PARM4(ctx);
	a[4] = PT_REGS_PARM5(ctx);
	a[5] = ctx->r9;	       /* this libbpf has no PT_REGS_PARM6 */
	return a[(n - 1) & 7]; /* n is 1 to 6 (rspd checks): a[6], a[7] stay 0 */
}

/* A user pair's item at side @side's entry: its argument and the process. */
static __always_inline bool user_item(struct pt_regs *ctx, __u32 sw, int side,
				      struct rsp_sw_item *it)
{
	struct rsp_sw_pair *p;

	if (sw >= RSP_SW_MAX)
		return false;
	p = bpf_map_lookup_elem(&pairs, &sw);
	if (!p || !p->uprobe)
		return false;
	it->sw = sw;
	it->k[0] = user_arg(ctx, p->arg[side & 1]);
	it->k[1] = bpf_get_current_pid_tgid() >> 32;
	return true;
}

/* A keyed pair of user functions (e.g. enqueue(item) -> dequeue(item)): uprobes. */
SEC("uprobe")
int BPF_KPROBE(sw_up_start)
{
	__u32 sw = (__u32)bpf_get_attach_cookie(ctx);
	struct rsp_sw_item it = {};

	if (user_item(ctx, sw, 0, &it) && wanted(sw))
		item_start(sw, &it);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(sw_up_end)
{
	__u32 sw = (__u32)bpf_get_attach_cookie(ctx);
	struct rsp_sw_item it = {};

	if (user_item(ctx, sw, 1, &it))
		item_end(sw, &it);
	return 0;
}

/*
 * Off-CPU time of the threads that entered a timed call: a thread leaving
 * the CPU notes when, and whether it slept (not runnable: its own wait) or
 * was preempted; coming back it adds the interval. Two lookups per switch,
 * only while stopwatches are loaded.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct rsp_sw_thread *t = thread_of((__u32)prev->pid, false);

	if (t) {
		t->out_at = now;
		t->slept = !preempt && prev->__state != 0;
	}
	t = thread_of((__u32)next->pid, false);
	if (t && t->out_at) {
		t->off_ns += now - t->out_at;
		if (t->slept)
			t->sleep_ns += now - t->out_at;
		t->out_at = 0;
	}
	return 0;
}

/* A thread that exits inside probed calls: its open entries never return. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sw_exit, struct task_struct *p)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	for (__u32 sw = 0; sw < RSP_SW_MAX; sw++) {
		struct rsp_sw_key key = {.tid = tid, .sw = sw};
		struct rsp_sw_frames *f = bpf_map_lookup_elem(&frames, &key);
		struct rsp_sw_stat *s;

		if (!f)
			continue;
		s = stat_of(sw);
		if (s)
			s->unmatched += f->depth;
		bpf_map_delete_elem(&frames, &key);
	}
	bpf_map_delete_elem(&threads, &tid);
	return 0;
}
