// SPDX-License-Identifier: GPL-2.0
/*
 * rsp's BPF capture: one small tp_btf program per scheduler tracepoint,
 * each writing a compact record (tracepoints/bpf_records.h) into the BPF
 * ring buffer of the CPU it runs on (map "rings", one ring per CPU that
 * userspace creates). rspd's drain copies each CPU's records into a stream
 * of the window of their own, which its merge orders by time with the
 * perf rings' cpu-clock samples, side-band records and uprobes.
 *
 * Why a BPF ring buffer and not bpf_perf_event_output() into the perf
 * rings: on this machine (2 vCPUs) bpf_perf_event_output() costs ~550-650
 * ns per record, bpf_ringbuf_output() ~140 ns (BENCHMARKS.md); the perf
 * path also prepends a 44-byte sample header to every record. One ring per
 * CPU keeps each CPU's records in order and the programs off each other's
 * cache lines. Records are submitted without a wakeup; the writer wakes the
 * drain only when its ring holds wake_bytes (the drain also runs every
 * --flush-interval), so a busy CPU does not pay a wakeup per record.
 *
 * The tracepoints' arguments are BTF pointers: their fields are read with
 * plain loads (CO-RE relocated), not a bpf_probe_read_kernel() call each.
 *
 * Strings and stacks travel once per CPU ring: a COMM record when a thread
 * is first seen on a CPU (or renamed), a STACK record the first time a stack
 * is seen on a CPU; later records carry the stack's hash. The "sent" maps
 * are LRUs: an evicted entry only means the COMM or STACK is sent again.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tracepoints/bpf_records.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load (rsp_bpfcap__open()). */
const volatile int stack_policy = RSP_BSTACKS_NONE;
const volatile int max_stack = 64;	     /* frames per stack, <= RSP_BPF_MAX_STACK */
const volatile unsigned int stack_every = 1; /* RSP_BSTACKS_SAMPLED */
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile bool waker_stacks = true; /* stacks on wakings too (sleeps, all, cached) */
/* RSP_BSTACKS_CACHED: walk every stack and compare with the cache (--stack-check) */
const volatile bool stack_check = false;
/* RSP_BSTACKS_CACHED: a cache hit is walked anyway (checked) once in this many, at random */
const volatile unsigned int stack_refresh = 256;
/* the irq, softirq and hrtimer programs are loaded: they keep irq_depth */
const volatile bool know_interrupts = false;
/* Wake the drain when a ring holds this many bytes (0: never; it polls). */
const volatile unsigned long long wake_bytes = 0;
/* Tests: make one program invalid, to check the refusal's sentence and log. */
const volatile bool force_verifier_failure = false;
/*
 * --capture-cgroup: the cgroup v2 subtree whose threads' scheduler events
 * are kept: its id (the kernfs id, its directory's inode number) and its
 * level (0: the root). 0: every thread.
 */
const volatile unsigned long long capture_cgroup_id = 0;
/*
 * hrtimer_wakeup's address (rspd reads kallsyms): hrtimer_start is sent only
 * for the timers that end a task's sleep (a timeout), the one start the
 * timeline reads; the kernel's own timers (the tick, perf's, the
 * scheduler's) were a fifth of a database's records. 0: every start.
 */
const volatile unsigned long long hrtimer_wakeup_fn = 0;
const volatile int capture_cgroup_level = 0;

#define TASK_RUNNING_STATE   0x0000
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_REPORT	     0x007f
#define TASK_REPORT_IDLE     0x0080
#define TASK_REPORT_MAX	     0x0100
#define TASK_IDLE_STATE	     0x0402
#define TASK_RTLOCK_WAIT     0x1000
#define HASH_PRIME	     0x100000001b3ull
#define HASH_INIT	     0xcbf29ce484222325ull

/* Each CPU's ring: the loader sets the size, the number of CPUs, and fills it. */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RSP_BC__NR);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

struct sent_key {
	u64 id; /* a stack's hash, or a tid */
	u32 cpu;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sent_key);
	__type(value, u32); /* the generation it was sent in */
} stacks_sent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sent_key);
	__type(value, u64); /* the comm's first 8 bytes ^ its last 8 */
} comms_sent SEC(".maps");

/*
 * Names sent, per task (task-local storage: one lookup in the task, no hash
 * table): the name's signature and the CPUs (below 64) whose ring carried
 * it, as of generation @gen. A new generation (rsp_bpfcap__resend_all()) makes
 * every name unsent. Tasks on CPUs from 64 up use comms_sent instead.
 */
struct comm_state {
	u64 sig;
	u64 cpus;
	u32 gen;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct comm_state);
} comm_task SEC(".maps");

/*
 * In front of comm_task, per CPU: the names this CPU's ring carried, a
 * direct-mapped table by tid, each entry naming its task exactly (tid and
 * start time) with the name's signature and generation. A hit costs an
 * inlined per-CPU array load and three compares; task storage is a helper
 * call (~25 ns a lookup here), two per switch. A miss (a new task, a
 * collision, a rename, a new generation) asks comm_task, which stays the
 * authority; the entry is only ever a copy of what it said.
 */
#define COMM_SEEN_BITS 8

struct comm_seen_entry {
	u32 tid;
	u32 gen;
	u64 sig;
	u64 start; /* the task's start_time: a reused tid is another task */
};

struct comm_seen {
	struct comm_seen_entry e[1 << COMM_SEEN_BITS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct comm_seen);
} comm_seen SEC(".maps");

/* [0]: the degradation level (enum rsp_degrade), which rspd sets at run time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} tune SEC(".maps");

/* [0]: the generation of what was sent (names and stacks); the loader bumps it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} generation SEC(".maps");

/* The value of a one-entry u32 array the loader writes (tune, generation). */
static __always_inline u32 first_u32(void *map)
{
	u32 zero = 0, *v = bpf_map_lookup_elem(map, &zero);

	return v ? *v : 0;
}

static __always_inline u32 current_gen(void)
{
	return first_u32(&generation);
}

static __always_inline u32 degrade_level(void)
{
	return first_u32(&tune);
}

struct stack_buf {
	struct rsp_brec_stack rec;
	u64 ips[RSP_BPF_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct stack_buf);
} scratch SEC(".maps");

static __always_inline void count(u32 c)
{
	u64 *v = bpf_map_lookup_elem(&counters, &c);

	if (v)
		*v += 1;
}

/*
 * A record's header at @time. A record and the side records it needs (its
 * task's COMM, its STACKs, written just before it) share the time the
 * program started at: a stack walk takes microseconds, which would shift
 * every switch and waking late and shorten each sleep by as much.
 */
static __always_inline void hdr_at(struct rsp_brec_hdr *h, u8 kind, u16 size, u64 time)
{
	u64 id = bpf_get_current_pid_tgid();

	h->type = RSP_BREC_TYPE(kind);
	h->cpu = (u16)bpf_get_smp_processor_id();
	h->size = size;
	h->time = time;
	h->pid = (u32)(id >> 32);
	h->tid = (u32)id;
}

static __always_inline void hdr(struct rsp_brec_hdr *h, u8 kind, u16 size)
{
	hdr_at(h, kind, size, bpf_ktime_get_ns());
}

/*
 * Into this CPU's ring; a full ring (or none) is counted: userspace makes it a gap.
 * Records written are counted per CPU here, and that count paces the ring's
 * fill check (WAKE_CHECK_EVERY).
 */
#define WAKE_CHECK_EVERY 16

static __always_inline void emit(void *ctx, void *rec, u64 size)
{
	u32 cpu = bpf_get_smp_processor_id(), c = RSP_BC_RECORDS;
	void *rb = bpf_map_lookup_elem(&rings, &cpu);
	u64 *n = bpf_map_lookup_elem(&counters, &c);
	u64 flags = BPF_RB_NO_WAKEUP, avail;

	if (!rb || !n) {
		count(RSP_BC_OUTPUT_ERRORS);
		return;
	}
	/*
	 * Above the mark, every WAKE_CHECK_EVERY-th record asks for the wakeup
	 * until the drain has caught up (a wakeup already pending costs one
	 * atomic test): asking only on crossing it misses the crossing when a
	 * record's ring header makes it jump past, and then nothing wakes the
	 * drain until its timer. Not every record: bpf_ringbuf_query() is a
	 * helper call, and the mark is a quarter of a ring of megabytes, which
	 * sixteen records do not overshoot by much.
	 */
	if (wake_bytes && !(*n % WAKE_CHECK_EVERY)) {
		avail = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA);
		if (avail + size >= wake_bytes)
			flags = BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_output(rb, rec, size, flags))
		count(RSP_BC_OUTPUT_ERRORS);
	else
		*n += 1;
}

/* A thread's name, the first time this CPU's ring carries the thread, or renamed. */
static __always_inline void send_comm(void *ctx, struct task_struct *t, u64 now)
{
	struct sent_key k = {.id = t->pid, .cpu = bpf_get_smp_processor_id()};
	struct comm_seen_entry *seen = NULL;
	struct rsp_brec_comm rec;
	u64 w[2], sig, *old, start;
	struct comm_state *cs = NULL;
	struct comm_seen *tab;
	u32 gen, zero = 0;

	if (!k.id) /* the idle task: named by the consumer */
		return;
	/* direct loads from the task (a BTF pointer): no helper call per switch */
	w[0] = *(u64 *)&t->comm[0];
	w[1] = *(u64 *)&t->comm[8];
	sig = w[0] ^ (w[1] * HASH_PRIME) ^ 1;
	start = t->start_time;
	gen = current_gen();
	tab = bpf_map_lookup_elem(&comm_seen, &zero);
	if (tab) {
		seen = &tab->e[k.id & ((1u << COMM_SEEN_BITS) - 1)];
		if (seen->tid == (u32)k.id && seen->start == start && seen->sig == sig &&
		    seen->gen == gen)
			return;
	}
	if (k.cpu < 64)
		cs = bpf_task_storage_get(&comm_task, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (cs) {
		if (cs->sig == sig && cs->gen == gen && (cs->cpus & (1ull << k.cpu)))
			goto seen;
		if (cs->sig != sig || cs->gen != gen) {
			cs->sig = sig;
			cs->gen = gen;
			cs->cpus = 0;
		}
	} else {
		old = bpf_map_lookup_elem(&comms_sent, &k);
		if (old && *old == (sig ^ gen))
			goto seen;
	}
	__builtin_memset(&rec, 0, sizeof(rec));
	__builtin_memcpy(rec.comm, w, sizeof(w));
	rec.comm[RSP_BPF_COMM_LEN - 1] = '\0';
	hdr_at(&rec.h, RSP_BREC_COMM, sizeof(rec), now);
	rec.tid = (u32)k.id;
	rec.pid = t->tgid;
	emit(ctx, &rec, sizeof(rec));
	if (cs) {
		cs->cpus |= 1ull << k.cpu;
	} else {
		u64 v = sig ^ gen;

		bpf_map_update_elem(&comms_sent, &k, &v, BPF_ANY);
	}
	count(RSP_BC_COMMS);
seen:
	if (seen) {
		seen->tid = (u32)k.id;
		seen->start = start;
		seen->sig = sig;
		seen->gen = gen;
	}
}

/*
 * The current task's kernel or user stack: its hash (0: none), and a STACK
 * record the first time this CPU's ring carries it.
 */
static __always_inline u64 take_stack(void *ctx, u8 which, u32 skip, u64 now)
{
	u32 zero = 0;
	struct stack_buf *b = bpf_map_lookup_elem(&scratch, &zero);
	u64 flags = which == RSP_BSTACK_USER ? BPF_F_USER_STACK : (skip & BPF_F_SKIP_FIELD_MASK),
	    h = HASH_INIT ^ which;
	struct sent_key k = {.cpu = bpf_get_smp_processor_id()};
	u32 max = max_stack > RSP_BPF_MAX_STACK ? RSP_BPF_MAX_STACK : max_stack;
	long bytes;
	u64 size;
	u32 gen, *sent;
	int nr;

	if (!b)
		return 0;
	bytes = bpf_get_stack(ctx, b->ips, max * sizeof(u64), flags);
	if (bytes <= 0) {
		count(RSP_BC_STACK_ERRORS);
		return 0;
	}
	nr = bytes / 8;
	for (int i = 0; i < RSP_BPF_MAX_STACK; i++) {
		if (i >= nr)
			break;
		h = (h ^ b->ips[i]) * HASH_PRIME;
	}
	if (!h)
		h = 1;
	k.id = h;
	gen = current_gen();
	sent = bpf_map_lookup_elem(&stacks_sent, &k);
	if (sent && *sent == gen)
		return h;
	hdr_at(&b->rec.h, RSP_BREC_STACK, 0, now);
	b->rec.hash = h;
	b->rec.nr = (u16)nr;
	b->rec.which = which;
	__builtin_memset(b->rec.pad, 0, sizeof(b->rec.pad));
	size = sizeof(b->rec) + (u64)nr * 8;
	if (size > sizeof(*b))
		size = sizeof(*b);
	b->rec.h.size = (u16)size;
	emit(ctx, b, size);
	bpf_map_update_elem(&stacks_sent, &k, &gen, BPF_ANY);
	count(RSP_BC_STACKS);
	return h;
}

/*
 * The stack cache (RSP_BSTACKS_CACHED). A thread's user stack cannot change
 * while it is in the kernel, and a cheap key read at the switch or waking
 * predicts it: the process, the user IP and SP where it entered the kernel,
 * the syscall. Measured (issue 13) with the return address at [BP+8] too,
 * it named the walked user stack for 99.99% of sleeps; without it as well
 * (2026-11-26: 5 disagreements in 296k checks, pgbench and sched pipe).
 * The same key with the sleep state, in_iowait and the kind of file the
 * syscall's first argument is (if an fd: one call site that reads a pipe
 * or a socket) names the kernel stack less well (85% under pgbench, less
 * where one call site waits in several places): a hit is walked anyway
 * once in stack_refresh (and whenever this CPU's ring has not carried the
 * cached stacks in this generation), and every walk of a key the cache had
 * compares and counts the disagreement (RSP_BC_?DIFFER); --stack-check
 * walks every time. Kernel threads have no user context: kworkers are
 * keyed by the thread and the work function it runs (KEY_KTHREAD), other
 * kernel threads walked; wakings in interrupts by their handler (KEY_IRQ);
 * the idle task's, and wakings where the interrupt is not known, walked.
 */
struct skey {
	u64 ip, sp; /* user IP, SP at kernel entry */
	u64 fops;   /* the file operations of the fd in the first argument: pipe, socket.. */
	u32 tgid;
	s32 sysnr; /* the syscall (orig_ax), -1 outside one */
	u32 state; /* the reported prev_state of a switch; 0 for a waking */
	u8 site;   /* 0 switch, 1 waking */
	u8 iowait;
	u16 pad;
};

struct sval {
	u64 kstack, ustack;
	u64 cpus; /* CPUs (below 64) whose ring carried both in generation gen */
	u32 gen;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct skey);
	__type(value, struct sval);
} stack_cache SEC(".maps");

/*
 * Per CPU: how deep in irq handlers, softirqs and hrtimer callbacks the CPU
 * is, and which handler each level runs, kept by their programs. A waking
 * there is the interrupt's, not the current task's: the task's context says
 * nothing of the stack, and its user stack is not the waker's. The
 * handler's identity keys the kernel stack instead (an irq number, a
 * softirq vector, an hrtimer callback), and no user stack is taken. The
 * kernel's preempt_count would say "in an interrupt" without bookkeeping,
 * but its per-CPU variable is not in kallsyms here (the verifier cannot
 * resolve it). Wakings from other interrupts (IPIs, irq_work) are keyed by
 * the task they interrupted: the checks count where that served a wrong
 * stack.
 */
#define IRQ_LEVELS   4
#define HANDLER_IRQ  (1ull << 62)
#define HANDLER_SIRQ (2ull << 62)

/*
 * Each level also keeps when its handler began and, for an hrtimer, the
 * expiry's "now": the exit writes the handler's one record (an irq, a
 * softirq, an hrtimer expiry: RSP_BREC_IRQ, _SOFTIRQ, _HRTIMER) with them.
 */
struct irqctx {
	s32 depth;
	u32 pad;
	u64 what[IRQ_LEVELS]; /* the handler at each level */
	u64 start[IRQ_LEVELS];
	u64 aux[IRQ_LEVELS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct irqctx);
} irq_depth SEC(".maps");

static __always_inline void handler_enter(u64 what, u64 start, u64 aux)
{
	u32 zero = 0;
	struct irqctx *v = bpf_map_lookup_elem(&irq_depth, &zero);
	s32 i;

	if (!v)
		return;
	i = v->depth;
	if (i >= 0 && i < IRQ_LEVELS) { /* masked too: the verifier wants the bound it sees */
		v->what[i & (IRQ_LEVELS - 1)] = what;
		v->start[i & (IRQ_LEVELS - 1)] = start;
		v->aux[i & (IRQ_LEVELS - 1)] = aux;
	}
	v->depth++;
}

/*
 * Leave the innermost handler: when it began (0: its entry was not seen,
 * or it nests too deep to be kept) and its aux. An exit whose entry was
 * missed leaves the depth at 0.
 */
static __always_inline u64 handler_exit(u64 *aux)
{
	u32 zero = 0;
	struct irqctx *v = bpf_map_lookup_elem(&irq_depth, &zero);
	u32 i;

	*aux = 0;
	if (!v || v->depth <= 0)
		return 0;
	i = (u32)--v->depth;
	if (i >= IRQ_LEVELS)
		return 0;
	/* hidden from the compiler, or it drops the mask the verifier needs */
	asm volatile("" : "+r"(i));
	i &= IRQ_LEVELS - 1;
	*aux = v->aux[i];
	return v->start[i];
}

/* 0: task context; else the innermost handler (~0: unknown, too deep). */
static __always_inline u64 interrupt_handler(void)
{
	u32 zero = 0;
	struct irqctx *v;
	s32 i;

	if (!know_interrupts)
		return ~0ull; /* unknown: walk */
	v = bpf_map_lookup_elem(&irq_depth, &zero);
	if (!v)
		return ~0ull;
	i = v->depth;
	if (i <= 0)
		return 0;
	if (i > IRQ_LEVELS)
		return ~0ull;
	return v->what[(i - 1) & (IRQ_LEVELS - 1)];
}

/*
 * Loads through a pointer the verifier does not know as typed: the kfunc
 * with type id 0 makes it an untyped, untrusted read-only pointer whose
 * loads are plain loads of numbers (a fault reads 0), where
 * bpf_probe_read_kernel() is a helper call each (~35 ns a switch and ~70 a
 * waking for fd_ops()'s two, sched pipe). Numbers, not typed pointers: the
 * key is hashed and compared as words.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

static __always_inline u64 load_u64(u64 addr)
{
	return *(const u64 *)bpf_rdonly_cast((const void *)addr, 0);
}

/*
 * The file operations of @t's (current's) fd @fd, 0 if it is not one: what
 * kind of file a read or a write on it waits in. Plain loads, no walk.
 */
static __always_inline u64 fd_ops(struct task_struct *t, u64 fd)
{
	struct files_struct *files = t->files;
	struct fdtable *fdt;
	u64 base, f;

	if (!files)
		return 0;
	fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return 0;
	base = (u64)fdt->fd; /* a pointer to pointers: a plain number to the verifier */
	if (!base)
		return 0;
	f = load_u64(base + fd * sizeof(u64));
	if (!f)
		return 0;
	return load_u64(f + bpf_core_field_offset(struct file, f_op));
}

#define KEY_NONE    0
#define KEY_TASK    1
#define KEY_IRQ	    2 /* a waking in an interrupt: keyed by its handler, no user stack */
#define KEY_KTHREAD 3 /* a kworker: keyed by itself and its work function */

#define PF_WQ_WORKER 0x00000020

/*
 * The work function workqueue worker (kworker) @t runs now, 0 if none:
 * task->worker_private is its struct kthread, whose data is its struct
 * worker. Plain loads (load_u64()); a kernel without
 * worker_private (before 5.17) keys its kworkers by thread alone.
 */
static __always_inline u64 kworker_func(struct task_struct *t)
{
	u64 kt, worker;

	if (!bpf_core_field_exists(t->worker_private))
		return 0;
	kt = (u64)t->worker_private;
	if (!kt)
		return 0;
	worker = load_u64(kt + bpf_core_field_offset(struct kthread, data));
	if (!worker)
		return 0;
	return load_u64(worker + bpf_core_field_offset(struct worker, current_func));
}

/* The context of @t (current) at @site as a key: KEY_*. */
static __always_inline int make_key(struct task_struct *t, u8 site, u32 state, struct skey *k)
{
	struct pt_regs *regs;
	u64 h = site ? interrupt_handler() : 0;

	if (h == ~0ull)
		return KEY_NONE;
	if (h) {
		__builtin_memset(k, 0, sizeof(*k));
		k->ip = h;
		k->sysnr = -2;
		k->site = 2;
		return KEY_IRQ;
	}
	if (!t->tgid) /* the idle task */
		return KEY_NONE;
	/*
	 * A kernel thread has no user context, and its sleeps and wakings were
	 * walked every time: under pgbench 89% of all walks, ~4k a second at
	 * several microseconds each, nearly all of them kworkers'. A kworker's
	 * kernel stack follows the work item it runs: keyed by the thread and
	 * the item's function (it wakes from many). Other kernel threads stay
	 * walked: one of them sleeps in several places in one state (rcu's
	 * grace-period thread, with and without a timeout), and keying them all
	 * made 6.7% of the checked sleep time under pgbench disagree on the
	 * sleep reason, kworkers alone 0.003%.
	 */
	if (!t->mm) {
		if (!(t->flags & PF_WQ_WORKER))
			return KEY_NONE;
		__builtin_memset(k, 0, sizeof(*k));
		k->ip = kworker_func(t);
		k->tgid = t->pid;
		k->sysnr = -3;
		k->state = state;
		k->site = site;
		k->iowait = (u8)BPF_CORE_READ_BITFIELD(t, in_iowait);
		return KEY_KTHREAD;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return KEY_NONE;
	k->ip = regs->ip;
	k->sp = regs->sp;
	/*
	 * No return address from [BP+8]: a user memory read cost ~170 ns per
	 * switch and ~400 per waking here, a third of the cached path, and under
	 * pgbench and sched pipe with --stack-check the user stacks disagreed
	 * as rarely without it (5 in 296k checks) as with it (5 in 255k):
	 * Debian's programs keep no frame pointer in BP. The checks keep
	 * counting where IP+SP name several user stacks.
	 */
	k->tgid = t->tgid;
	k->sysnr = (s32)regs->orig_ax;
	k->fops = k->sysnr >= 0 ? fd_ops(t, regs->di) : 0;
	k->state = state;
	k->site = site;
	k->iowait = (u8)BPF_CORE_READ_BITFIELD(t, in_iowait);
	k->pad = 0;
	return KEY_TASK;
}

/* This CPU's ring carried stack @h in this generation (0, no stack, always). */
static __always_inline bool sent_here(u64 h, u32 gen)
{
	struct sent_key k = {.id = h, .cpu = bpf_get_smp_processor_id()};
	u32 *sent;

	if (!h)
		return true;
	sent = bpf_map_lookup_elem(&stacks_sent, &k);
	return sent && *sent == gen;
}

/* This CPU's ring carries @v's stacks in generation @gen (walked or found sent here). */
static __always_inline void mark_sent(struct sval *v, u32 gen)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (v->gen != gen) {
		v->cpus = 0;
		v->gen = gen;
	}
	if (cpu < 64)
		v->cpus |= 1ull << cpu;
}

/*
 * Did this CPU's ring carry @v's stacks in generation @gen? The entry's
 * own mark (no lookup), else the sent map (a ring that carried them for
 * another key), which then marks the entry.
 */
static __always_inline bool sent_by(struct sval *v, u32 gen)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (cpu < 64 && v->gen == gen && (v->cpus & (1ull << cpu)))
		return true;
	if (!sent_here(v->kstack, gen) || !sent_here(v->ustack, gen))
		return false;
	mark_sent(v, gen);
	return true;
}

/*
 * In front of stack_cache, per CPU: the keys this CPU served lately, a
 * direct-mapped table by a hash of the key, each entry the whole key and
 * the stacks this CPU's ring carried for it in generation gen. A hit is an
 * inlined array load and five compares, where the LRU map's lookup hashes
 * the 40-byte key and walks a bucket (~20 ns a switch, ~50 a waking, sched
 * pipe). The entry is filled only after a walk here or after sent_by() said
 * this ring carried the LRU's stacks, so what it serves was sent here. A
 * hit is walked anyway once in stack_refresh as an LRU hit is, compared
 * with what this entry would have served, and the walk updates both. A
 * key whose stacks change is served this CPU's last walk of it, where
 * before it was any CPU's: either is a recent walk of the same key.
 */
#define FRONT_BITS 7

struct front_entry {
	struct skey key;
	u64 kstack, ustack;
	u32 gen;
	u32 pad;
};

struct front {
	struct front_entry e[1 << FRONT_BITS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct front);
} stack_front SEC(".maps");

/* @k's entry in this CPU's front table (NULL: none). */
static __always_inline struct front_entry *front_slot(const struct skey *k)
{
	u32 zero = 0;
	struct front *f = bpf_map_lookup_elem(&stack_front, &zero);
	const u64 *w = (const u64 *)k;
	u64 h;

	if (!f)
		return NULL;
	h = (w[0] ^ (w[1] << 7) ^ w[2] ^ w[3] ^ (w[4] << 13)) * 0x9e3779b97f4a7c15ull;
	return &f->e[(h >> (64 - FRONT_BITS)) & ((1u << FRONT_BITS) - 1)];
}

static __always_inline bool same_key(const struct skey *a, const struct skey *b)
{
	const u64 *x = (const u64 *)a, *y = (const u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

static __always_inline void front_fill(struct front_entry *e, const struct skey *k, u64 kh, u64 uh,
				       u32 gen)
{
	if (!e)
		return;
	__builtin_memcpy(&e->key, k, sizeof(*k));
	e->kstack = kh;
	e->ustack = uh;
	e->gen = gen;
}

/*
 * The current task's stacks for a record at @site: walked or from the
 * cache. True when walked although the cache had the key: then *kc and
 * *uc are what it had (a check).
 */
static __always_inline bool get_stacks(void *ctx, struct task_struct *t, u8 site, u32 state,
				       u64 now, u64 *kh, u64 *uh, u8 *flags, u64 *kc, u64 *uc)
{
	struct front_entry *fe = NULL;
	struct sval *v = NULL, nv;
	u32 gen = current_gen();
	struct skey key;
	int kind = KEY_NONE;
	bool user, had = false, front_hit = false;
	u64 ck = 0, cu = 0; /* what the cache had for the key */

	*kh = *uh = 0;
	*flags = 0;
	count(RSP_BC_STACK_SITES);
	if (stack_policy == RSP_BSTACKS_CACHED) {
		kind = make_key(t, site, state, &key);
		if (kind != KEY_NONE) {
			fe = front_slot(&key);
			front_hit = fe && fe->gen == gen && same_key(&fe->key, &key);
			if (front_hit) {
				ck = fe->kstack;
				cu = fe->ustack;
			} else {
				v = bpf_map_lookup_elem(&stack_cache, &key);
				if (v) {
					ck = v->kstack;
					cu = v->ustack;
				}
			}
			had = front_hit || v;
		} else {
			count(RSP_BC_NO_KEY);
		}
	}
	if (had && !stack_check) {
		u32 every = degrade_level() >= RSP_DEGRADE_FEWER_CHECKS ? stack_refresh * 8
									: stack_refresh;

		count(RSP_BC_HITS);
		/* at random: checks in step with a periodic pattern would see one phase */
		if (bpf_get_prandom_u32() % every && (front_hit || sent_by(v, gen))) {
			*kh = ck;
			*uh = cu;
			*flags = RSP_BSTACKF_KCACHED | RSP_BSTACKF_UCACHED;
			if (!front_hit)
				front_fill(fe, &key, ck, cu, gen);
			count(RSP_BC_CACHED);
			return false;
		}
	}
	count(RSP_BC_WALKS);
	if (kernel_stacks)
		*kh = take_stack(ctx, RSP_BSTACK_KERNEL, 2, now);
	/* kernel threads have none; an interrupt's is not the interrupted task's */
	user = user_stacks && t->mm && kind != KEY_IRQ;
	if (user)
		*uh = take_stack(ctx, RSP_BSTACK_USER, 0, now);
	if (kind == KEY_NONE)
		return false;
	front_fill(fe, &key, *kh, *uh, gen);
	if (had) {
		*kc = ck;
		*uc = cu;
		if (kernel_stacks) {
			count(RSP_BC_KCHECKS);
			if (ck != *kh)
				count(RSP_BC_KDIFFER);
		}
		if (user) {
			count(RSP_BC_UCHECKS);
			if (cu != *uh)
				count(RSP_BC_UDIFFER);
		}
		if (front_hit) /* the LRU's entry is updated too (or made again) */
			v = bpf_map_lookup_elem(&stack_cache, &key);
	}
	if (v) {
		if (v->kstack != *kh || v->ustack != *uh)
			v->cpus = 0; /* other stacks: no ring carried them yet */
		v->kstack = *kh;
		v->ustack = *uh;
		mark_sent(v, gen);
		return had;
	}
	__builtin_memset(&nv, 0, sizeof(nv));
	nv.kstack = *kh;
	nv.ustack = *uh;
	nv.gen = gen;
	mark_sent(&nv, gen);
	bpf_map_update_elem(&stack_cache, &key, &nv, BPF_ANY);
	return had;
}

/* prev_state as the sched_switch tracepoint reports it (__trace_sched_switch_state()). */
static __always_inline u32 report_state(bool preempt, unsigned int prev_state,
					struct task_struct *prev)
{
	unsigned int state;

	if (preempt)
		return TASK_REPORT_MAX;
	state = (prev_state | prev->exit_state) & TASK_REPORT;
	if ((prev_state & TASK_IDLE_STATE) == TASK_IDLE_STATE)
		state = TASK_REPORT_IDLE;
	if (prev_state & TASK_RTLOCK_WAIT)
		state = TASK_UNINTERRUPTIBLE;
	/* fls(state) as a bit: the highest set bit */
	for (int i = 8; i >= 0; i--)
		if (state & (1u << i))
			return 1u << i;
	return 0;
}

/*
 * Whether @t is inside the --capture-cgroup subtree: its default-hierarchy
 * cgroup's ancestor at the subtree's level is the subtree (the kernel's
 * cgroup_is_descendant(), read through CO-RE).
 */
static __always_inline bool inside(struct task_struct *t)
{
	struct cgroup *cg, *anc = NULL;
	int lvl = capture_cgroup_level;
	u64 off;

	if (!capture_cgroup_id)
		return true;
	cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	if (!cg || lvl < 0 || lvl > 1024 || BPF_CORE_READ(cg, level) < lvl)
		return false;
	off = bpf_core_field_offset(struct cgroup, ancestors) + (u64)lvl * sizeof(anc);
	if (bpf_probe_read_kernel(&anc, sizeof(anc), (void *)cg + off) || !anc)
		return false;
	return BPF_CORE_READ(anc, kn, id) == capture_cgroup_id;
}

/*
 * A waking waits here, in the wakee's task storage, for the wakee's next
 * switch-in, which carries it (RSP_BFOLD_WAKING, as Meta's wprof does):
 * one record for two events, and the waking's program writes no record.
 * A wakee still on its CPU gets no slot: its waking goes alone then, as
 * layout 2 wrote it. A waking that finds its slot taken (the one before
 * rode on no switch-in) sends that one alone first, in a CARRY record.
 */
#define wake_slot rsp_bpf_wake_slot

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wake_slot);
} wake_task SEC(".maps");

/* A part written alone: a CARRY record of @what, the part after it. */
struct carry_buf {
	struct rsp_brec_carry c;
	union {
		struct rsp_brec_wake_part w;
		struct rsp_brec_block_part b;
	};
};

static __always_inline void carry(void *ctx, u8 what, u32 a, u32 b, const void *part, u64 now)
{
	struct carry_buf r;

	__builtin_memset(&r, 0, sizeof(r));
	hdr_at(&r.c.h, RSP_BREC_CARRY, sizeof(r), now);
	r.c.woken[0] = a;
	r.c.woken[1] = b;
	r.c.what = what;
	__builtin_memcpy(&r.w, part, sizeof(r.w));
	emit(ctx, &r, sizeof(r));
	count(RSP_BC_CARRIED);
}

/* A switch record, the biggest: a check's, and a wake part after it. */
struct switch_buf {
	struct rsp_brec_switch_check r;
	struct rsp_brec_wake_part spare;
};

/*
 * @n's pending waking into @b at @off (the switch record's size), taken
 * from its slot: the bytes it adds, 0 if none.
 */
static __always_inline u32 fold_waking(struct task_struct *n, struct switch_buf *b, u32 off)
{
	struct wake_slot *ws;

	if (!n->pid) /* the idle task is never woken */
		return 0;
	ws = bpf_task_storage_get(&wake_task, n, 0, 0);
	if (!ws || !ws->valid)
		return 0;
	ws->valid = 0;
	b->r.ss.sw.fold = RSP_BFOLD_WAKING;
	if (off == sizeof(struct rsp_brec_switch))
		__builtin_memcpy((char *)b + sizeof(struct rsp_brec_switch), &ws->p, sizeof(ws->p));
	else if (off == sizeof(struct rsp_brec_switch_stack))
		__builtin_memcpy((char *)b + sizeof(struct rsp_brec_switch_stack), &ws->p,
				 sizeof(ws->p));
	else
		__builtin_memcpy((char *)b + sizeof(struct rsp_brec_switch_check), &ws->p,
				 sizeof(ws->p));
	return sizeof(ws->p);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(rsp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	u64 now = bpf_ktime_get_ns();
	struct switch_buf b;
	u32 state = report_state(preempt, prev_state, prev), size;
	u8 kind;
	bool stacks = stack_policy == RSP_BSTACKS_ALL ||
		      ((stack_policy == RSP_BSTACKS_SLEEPS || stack_policy == RSP_BSTACKS_CACHED) &&
		       state && state != TASK_REPORT_MAX);

	/* a switch is kept when either side is inside: next's run starts, prev's sleep does */
	if (!inside(prev) && !inside(next))
		return 0;
	if (stack_policy == RSP_BSTACKS_SAMPLED) {
		u32 c = RSP_BC_SWITCHES;
		u64 *n = bpf_map_lookup_elem(&counters, &c);

		if (n)
			stacks = (*n)++ % stack_every == 0;
	}
	if (stacks) { /* the overhead budget's */
		u32 lvl = degrade_level();

		if (lvl >= RSP_DEGRADE_NO_STACKS ||
		    (lvl >= RSP_DEGRADE_SOME_SLEEPS && bpf_get_prandom_u32() % 8))
			stacks = false;
	}
	if (force_verifier_failure)
		return *(volatile int *)0; /* rejected by the verifier: a test's wish */
	send_comm(ctx, prev, now);
	send_comm(ctx, next, now);
	__builtin_memset(&b, 0, sizeof(b));
	/* tp_btf arguments are BTF pointers: fields are read with plain loads */
	b.r.ss.sw.next_tid = next->pid;
	b.r.ss.sw.next_pid = next->tgid;
	b.r.ss.sw.prev_state = state;
	b.r.ss.sw.prev_prio = (u8)prev->prio;
	b.r.ss.sw.next_prio = (u8)next->prio;
	if (!stacks) {
		kind = RSP_BREC_SWITCH;
		size = sizeof(struct rsp_brec_switch);
	} else if (get_stacks(ctx, prev, 0, state, now, &b.r.ss.kstack, &b.r.ss.ustack,
			      &b.r.ss.sw.stack_flags, &b.r.kcached, &b.r.ucached)) {
		/*
		 * The switch runs in prev's context: these are the stacks of its
		 * sleep. This program and bpf_trace_run4 are skipped; the
		 * kernel's then starts at __schedule, where a perf tracepoint
		 * sample's does, or, when the tracepoint has other probes too,
		 * at __traceiter_sched_switch above it. Walked although the
		 * cache had the key: a check (what the cache had is kept too).
		 */
		kind = RSP_BREC_SWITCH_CHECK;
		size = sizeof(struct rsp_brec_switch_check);
	} else {
		kind = RSP_BREC_SWITCH_STACK;
		size = sizeof(struct rsp_brec_switch_stack);
	}
	size += fold_waking(next, &b, size);
	if (size > sizeof(b))
		return 0; /* never: for the verifier */
	hdr_at(&b.r.ss.sw.h, kind, (u16)size, now);
	emit(ctx, &b, size);
	return 0;
}

/*
 * A waking as its record (layout 2) would have been written: alone, when
 * the wakee has no slot (task storage refused one).
 */
static __always_inline void waking_alone(void *ctx, struct task_struct *p,
					 const struct rsp_brec_wake_part *w)
{
	struct rsp_brec_waking_stack r;

	__builtin_memset(&r, 0, sizeof(r));
	r.wk.tid = p->pid;
	r.wk.pid = p->tgid;
	r.wk.target_cpu = w->target_cpu;
	r.wk.prio = w->prio;
	r.wk.stack_flags = w->stack_flags;
	r.kstack = w->kstack;
	r.ustack = w->ustack;
	if (w->kind == RSP_BREC_WAKING_STACK) {
		hdr_at(&r.wk.h, RSP_BREC_WAKING_STACK, sizeof(r), w->time);
		emit(ctx, &r, sizeof(r));
	} else {
		hdr_at(&r.wk.h, w->kind, sizeof(r.wk), w->time);
		emit(ctx, &r, sizeof(r.wk));
	}
}

static __always_inline void waking(void *ctx, struct task_struct *p, u8 kind, bool stacks)
{
	u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	/*
	 * A wakee still on its CPU (woken as it was switching out, or while
	 * it ran on): its next switch-in comes after a switch-out that may
	 * still come, so the waking goes now, alone, in its place in the ring.
	 * Read with the clock, before the stack walk: by the walk's end the
	 * wakee may be off its CPU, its switch-out stamped after this waking.
	 */
	bool on_cpu = bpf_core_field_exists(p->on_cpu) && p->on_cpu;
	struct rsp_brec_wake_part w;
	struct wake_slot *ws;
	u64 kc, uc; /* a check's: counted, not sent (a waker's stack names no sleep) */

	/* kept when the woken or the waker is inside: the wait-for edge has an end there */
	if (!inside(p) && !inside(bpf_get_current_task_btf()))
		return;
	send_comm(ctx, p, now); /* before the waking, at its time: the name is known then */
	__builtin_memset(&w, 0, sizeof(w));
	w.time = now;
	w.pid = (u32)(id >> 32);
	w.tid = (u32)id;
	w.cpu = (u16)bpf_get_smp_processor_id();
	w.target_cpu = p->thread_info.cpu;
	w.prio = (u8)p->prio;
	w.kind = kind;
	/* from try_to_wake_up, as perf's (this program and bpf_trace_run1 skipped; see above) */
	if (stacks) {
		w.kind = RSP_BREC_WAKING_STACK;
		get_stacks(ctx, bpf_get_current_task_btf(), 1, 0, now, &w.kstack, &w.ustack,
			   &w.stack_flags, &kc, &uc);
	}
	if (on_cpu) {
		waking_alone(ctx, p, &w);
		return;
	}
	ws = bpf_task_storage_get(&wake_task, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ws) {
		waking_alone(ctx, p, &w);
		return;
	}
	if (ws->valid) /* the last one rode on no switch-in: it goes alone */
		carry(ctx, ws->p.kind, p->pid, p->tgid, &ws->p, now);
	__builtin_memcpy(&ws->p, &w, sizeof(w));
	ws->valid = 1;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(rsp_sched_waking, struct task_struct *p)
{
	waking(ctx, p, RSP_BREC_WAKING,
	       waker_stacks &&
		       (stack_policy == RSP_BSTACKS_SLEEPS || stack_policy == RSP_BSTACKS_ALL ||
			stack_policy == RSP_BSTACKS_CACHED) &&
		       degrade_level() < RSP_DEGRADE_NO_WAKER);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(rsp_sched_wakeup_new, struct task_struct *p)
{
	waking(ctx, p, RSP_BREC_WAKEUP_NEW, false);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(rsp_sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	struct rsp_brec_fork r;

	if (!inside(parent) && !inside(child))
		return 0;
	hdr(&r.h, RSP_BREC_FORK, sizeof(r)); /* the parent is current */
	r.child_tid = child->pid;
	r.child_pid = child->tgid;
	emit(ctx, &r, sizeof(r));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(rsp_sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct rsp_brec_exec r;

	if (!inside(p))
		return 0;
	hdr(&r.h, RSP_BREC_EXEC, sizeof(r)); /* p is current */
	r.old_pid = (u32)old_pid;
	r.pad = 0;
	emit(ctx, &r, sizeof(r));
	send_comm(ctx, p, r.h.time); /* the new image's name */
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(rsp_sched_process_exit, struct task_struct *p)
{
	struct rsp_brec_exit r;

	hdr(&r.h, RSP_BREC_EXIT, sizeof(r)); /* p is current */
	emit(ctx, &r, sizeof(r));
	return 0;
}

/* ---- block requests ------------------------------------------------------ */

#define REQ_OP_MASK_BITS 0xff /* REQ_OP_BITS = 8 */

/* The flag bits of a request, from this kernel's enum req_flag_bits (CO-RE). */
static __always_inline u64 req_flag(int bit)
{
	return 1ull << bit;
}

/*
 * rwbs as the kernel's blk_fill_rwbs() writes it (Flush, Write, Read,
 * Discard, ...): at most 7 letters and a NUL, built in a register (the
 * verifier refuses the pointer arithmetic a stack index compiles to).
 */
static __always_inline u64 put_letter(u64 v, int *n, char c)
{
	v |= (u64)(u8)c << (8 * (*n & 7));
	*n += 1;
	return v;
}

static __always_inline void fill_rwbs(char *rwbs, u32 opf)
{
	u32 op = opf & REQ_OP_MASK_BITS;
	u64 v = 0;
	int n = 0;

	if (opf & req_flag(bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH)))
		v = put_letter(v, &n, 'F');
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE)) {
		v = put_letter(v, &n, 'W');
	} else if (op == bpf_core_enum_value(enum req_op, REQ_OP_DISCARD)) {
		v = put_letter(v, &n, 'D');
	} else if (op == bpf_core_enum_value(enum req_op, REQ_OP_SECURE_ERASE)) {
		v = put_letter(v, &n, 'D');
		v = put_letter(v, &n, 'E');
	} else if (op == bpf_core_enum_value(enum req_op, REQ_OP_FLUSH)) {
		v = put_letter(v, &n, 'F');
	} else if (op == bpf_core_enum_value(enum req_op, REQ_OP_READ)) {
		v = put_letter(v, &n, 'R');
	} else {
		v = put_letter(v, &n, 'N');
	}
	if (opf & req_flag(bpf_core_enum_value(enum req_flag_bits, __REQ_FUA)))
		v = put_letter(v, &n, 'F');
	if (opf & req_flag(bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD)))
		v = put_letter(v, &n, 'A');
	if (opf & req_flag(bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC)))
		v = put_letter(v, &n, 'S');
	if (opf & req_flag(bpf_core_enum_value(enum req_flag_bits, __REQ_META)))
		v = put_letter(v, &n, 'M');
	__builtin_memcpy(rwbs, &v, sizeof(v));
}

/*
 * A request's insert and issue wait here, keyed by the request, for its
 * completion, which carries them (RSP_BFOLD_BLOCK_*): one record for
 * three events. A part whose place is taken again before the completion
 * (a requeued request issued twice) goes alone, in a CARRY record; one
 * that finds the map full goes alone as its layout-2 record. Requests in
 * flight are here until they complete (rspd reads them for a dump).
 */
#define rq_parts rsp_bpf_rq_parts

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, u64);
	__type(value, struct rq_parts);
} rq_pending SEC(".maps");

/*
 * A request as the block_rq_* tracepoints show it: dev is
 * disk_devt(rq->q->disk) (kernel dev_t: major << 20 | minor); at insert and
 * issue, sector and sectors are 0 for a passthrough request (REQ_OP_DRV_*)
 * and the sector 0 where it was never set, as blk_rq_trace_sector() and
 * blk_rq_trace_nr_sectors() say; at completion the sector is blk_rq_pos()
 * and the sectors those completed (@done_bytes).
 */
static __always_inline u32 block_fields(struct request *rq, s64 done_bytes, u64 *sector,
					u32 *nr_sector, u32 *bytes, char *rwbs)
{
	struct gendisk *disk = rq->q->disk;
	u32 opf = rq->cmd_flags, op = opf & REQ_OP_MASK_BITS;
	bool pt = op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_IN) ||
		  op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_OUT);

	*sector = rq->__sector;
	if (done_bytes >= 0) {
		*bytes = (u32)done_bytes;
		*nr_sector = *bytes >> 9;
	} else {
		*bytes = rq->__data_len;
		*nr_sector = pt ? 0 : *bytes >> 9;
		if (pt || *sector == (u64)-1)
			*sector = 0;
	}
	fill_rwbs(rwbs, opf);
	return disk ? (u32)disk->major << 20 | (u32)disk->first_minor : 0;
}

/* An insert or an issue: kept for the completion, or written alone. */
static __always_inline void block_part(void *ctx, struct request *rq, u8 kind)
{
	u64 key = (u64)rq, id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	u32 bit = kind == RSP_BREC_BLOCK_INSERT ? RSP_BFOLD_BLOCK_INSERT : RSP_BFOLD_BLOCK_ISSUE;
	struct rsp_brec_block_part p;
	struct rq_parts *v, nv;
	u32 dev;

	__builtin_memset(&p, 0, sizeof(p));
	p.time = now;
	p.pid = (u32)(id >> 32);
	p.tid = (u32)id;
	p.cpu = (u16)bpf_get_smp_processor_id();
	p.kind = kind;
	dev = block_fields(rq, -1, &p.sector, &p.nr_sector, &p.bytes, p.rwbs);
	v = bpf_map_lookup_elem(&rq_pending, &key);
	if (!v) {
		__builtin_memset(&nv, 0, sizeof(nv));
		v = &nv;
	} else if (v->has & bit) { /* issued (or inserted) again: the last one goes alone */
		carry(ctx, kind, dev, 0, bit == RSP_BFOLD_BLOCK_INSERT ? &v->ins : &v->iss, now);
	}
	if (bit == RSP_BFOLD_BLOCK_INSERT)
		__builtin_memcpy(&v->ins, &p, sizeof(p));
	else
		__builtin_memcpy(&v->iss, &p, sizeof(p));
	v->has |= bit;
	v->dev = dev;
	if (v == &nv && bpf_map_update_elem(&rq_pending, &key, &nv, BPF_NOEXIST)) {
		struct rsp_brec_block r; /* no room: as layout 2 wrote it */

		__builtin_memset(&r, 0, sizeof(r));
		hdr_at(&r.h, kind, sizeof(r), now);
		r.dev = dev;
		r.sector = p.sector;
		r.nr_sector = p.nr_sector;
		r.bytes = p.bytes;
		__builtin_memcpy(r.rwbs, p.rwbs, sizeof(r.rwbs));
		emit(ctx, &r, sizeof(r));
	}
}

/* A completion, with the request's insert and issue when they waited for it. */
struct complete_buf {
	struct rsp_brec_block r;
	struct rsp_brec_block_part parts[2];
};

SEC("tp_btf/block_rq_insert")
int BPF_PROG(rsp_block_rq_insert, struct request *rq)
{
	block_part(ctx, rq, RSP_BREC_BLOCK_INSERT);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(rsp_block_rq_issue, struct request *rq)
{
	block_part(ctx, rq, RSP_BREC_BLOCK_ISSUE);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(rsp_block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	u64 key = (u64)rq;
	struct complete_buf b;
	struct rq_parts *v = bpf_map_lookup_elem(&rq_pending, &key);
	u32 size = sizeof(b.r);

	__builtin_memset(&b, 0, sizeof(b));
	b.r.dev = block_fields(rq, nr_bytes, &b.r.sector, &b.r.nr_sector, &b.r.bytes, b.r.rwbs);
	if (v) {
		if (v->has & RSP_BFOLD_BLOCK_INSERT) {
			__builtin_memcpy(&b.parts[0], &v->ins, sizeof(v->ins));
			size += sizeof(v->ins);
			b.r.fold |= RSP_BFOLD_BLOCK_INSERT;
		}
		if (v->has & RSP_BFOLD_BLOCK_ISSUE) {
			if (size == sizeof(b.r))
				__builtin_memcpy(&b.parts[0], &v->iss, sizeof(v->iss));
			else
				__builtin_memcpy(&b.parts[1], &v->iss, sizeof(v->iss));
			size += sizeof(v->iss);
			b.r.fold |= RSP_BFOLD_BLOCK_ISSUE;
		}
		bpf_map_delete_elem(&rq_pending, &key);
	}
	if (size > sizeof(b))
		return 0; /* never: for the verifier */
	hdr(&b.r.h, RSP_BREC_BLOCK_COMPLETE, (u16)size);
	emit(ctx, &b, size);
	return 0;
}

/* ---- interrupts -------------------------------------------------------------- */

/*
 * The first 15 bytes of the string at @s and a NUL in @out[16], zeros after
 * its end, as bpf_probe_read_kernel_str() would put them, with two plain
 * loads (load_u64()): that helper call was most of this program's ~450 ns
 * per irq. The word after a short name's NUL is read and dropped (a fault
 * there reads 0; a handler's name is a kernel string, not the end of a
 * mapping).
 */
static __always_inline void name16(char *out, const char *s)
{
	u64 w[2], zero;

	w[0] = load_u64((u64)s);
	w[1] = load_u64((u64)s + 8);
	/* the lowest byte that is 0 (the first in memory), in each word */
	zero = (w[0] - 0x0101010101010101ull) & ~w[0] & 0x8080808080808080ull;
	if (zero) {
		w[0] &= (zero & -zero) / 0x80 - 1; /* the bytes below it */
		w[1] = 0;
	} else {
		w[1] &= 0x00ffffffffffffffull; /* the 16th byte: the NUL */
		zero = (w[1] - 0x0101010101010101ull) & ~w[1] & 0x8080808080808080ull;
		if (zero)
			w[1] &= (zero & -zero) / 0x80 - 1;
	}
	__builtin_memcpy(out, w, sizeof(w));
}

/*
 * An irq, a softirq and an hrtimer expiry are one record each, at their
 * exit, with when they began (the entries keep it in irq_depth): half the
 * records of two events each. What the handler did in between (a request
 * completed, a waking) is written before it in this CPU's ring; readers
 * put the entry back before them (rsp_bpfrec__unfold()).
 */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(rsp_irq_handler_entry, int irq, struct irqaction *action)
{
	handler_enter(HANDLER_IRQ | (u32)irq, bpf_ktime_get_ns(), 0);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(rsp_irq_handler_exit, int irq, struct irqaction *action, int ret)
{
	struct rsp_brec_irq r;
	u64 aux;

	__builtin_memset(&r, 0, sizeof(r));
	r.start = handler_exit(&aux);
	if (r.start)
		hdr(&r.h, RSP_BREC_IRQ, sizeof(r));
	r.irq = (u32)irq;
	r.ret = (u32)ret;
	name16(r.name, action->name);
	emit(ctx, &r, sizeof(r));
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(rsp_softirq_entry, unsigned int vec)
{
	handler_enter(HANDLER_SIRQ | vec, bpf_ktime_get_ns(), 0);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(rsp_softirq_exit, unsigned int vec)
{
	struct rsp_brec_softirq_span r;
	u64 aux;

	r.start = handler_exit(&aux);
	if (r.start)
		hdr(&r.h, RSP_BREC_SOFTIRQ, sizeof(r));
	r.vec = vec;
	r.pad = 0;
	emit(ctx, &r, sizeof(r));
	return 0;
}

/* ---- timers ------------------------------------------------------------------ */

/* A timer, its callback and a time: its expiry when started, now when it fires. */
static __always_inline void hrtimer(void *ctx, u8 kind, struct hrtimer *t, u64 time)
{
	struct rsp_brec_hrtimer r;

	hdr(&r.h, kind, sizeof(r));
	r.hrtimer = (u64)t;
	r.function = (u64)t->function;
	r.time = time;
	emit(ctx, &r, sizeof(r));
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(rsp_hrtimer_start, struct hrtimer *t)
{
	if (hrtimer_wakeup_fn && (u64)t->function != hrtimer_wakeup_fn)
		return 0;
	hrtimer(ctx, RSP_BREC_HRTIMER_START, t, (u64)t->node.expires);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(rsp_hrtimer_expire_entry, struct hrtimer *t, ktime_t *now)
{
	u64 time = 0;

	bpf_probe_read_kernel(&time, sizeof(time), now);
	/* the callback now: the timer may be gone by the exit (a sleeper's, on its stack) */
	handler_enter((u64)t->function, bpf_ktime_get_ns(), time);
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(rsp_hrtimer_expire_exit, struct hrtimer *t)
{
	struct rsp_brec_hrtimer_span r;
	u32 zero = 0;
	struct irqctx *v = bpf_map_lookup_elem(&irq_depth, &zero);
	s32 i = v ? v->depth - 1 : -1;

	r.function = i >= 0 && i < IRQ_LEVELS ? v->what[i & (IRQ_LEVELS - 1)] : 0;
	r.start = handler_exit(&r.now);
	if (r.start)
		hdr(&r.h, RSP_BREC_HRTIMER, sizeof(r));
	r.hrtimer = (u64)t;
	emit(ctx, &r, sizeof(r));
	return 0;
}
