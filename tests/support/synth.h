/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TESTS_SYNTH_H
#define RSP_TESTS_SYNTH_H

/*
 * Synthetic record streams for unit tests and benchmarks: records in rsp's
 * layout (IDENTIFIER|IP|TID|TIME|CPU, + PERIOD for cpu-clock, + CALLCHAIN,
 * + RAW), with raw data laid out by the field offsets that libtraceevent
 * parses from this kernel's real formats (tests/golden), exactly as rspd
 * resolves them.
 *
 * A synth from synth__init() keeps its records in a stream of its own, to
 * hand to rsp_timeline__feed() or rsp_window__append() (synth__entry()); one
 * from synth__new() appends each record to a window as rspd would. Failed
 * checks abort, with or without cmocka.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/schema.h>
#include <rsp/window.h>

/* Evsel i of the schema has the sample id SYNTH_ID_BASE + i. */
#define SYNTH_ID_BASE 1000u

struct tep_handle;

struct synth {
	struct tep_handle *tep;
	struct rsp_schema *schema;
	struct rsp_window *window; /* synth__new(): where the records go */
	unsigned nr_cpus;
	int evsel[RSP_EV__NR];	  /* without callchain; -1: none */
	int evsel_cc[RSP_EV__NR]; /* with callchain: sched_switch, sched_waking, cpu_clock */
	uint16_t raw_fixed[RSP_EV__NR];
	/* the stream (no window) */
	unsigned char *buf;
	size_t len, cap;
	size_t *offs;
	uint32_t *cpus;
	size_t n, cap_n;
};

/** synth__init() - schema from the golden formats, an empty stream. */
void synth__init(struct synth *s);
void synth__exit(struct synth *s);
/** synth__new() - the same, records into a window of @nr_cpus and @budget. */
struct synth *synth__new(unsigned nr_cpus, size_t budget);
void synth__delete(struct synth *s);

/** synth__reset() - empty the stream (the schema stays). */
void synth__reset(struct synth *s);
/** synth__entry() - record @i of the stream, for rsp_timeline__feed() or rsp_window__append(). */
struct rsp_wentry synth__entry(const struct synth *s, size_t i);
/*
 * A record built by hand: synth__reserve() gives @size zeroed bytes at the
 * stream's end (the record of @cpu); synth__commit() hands the finished
 * record to the window, if there is one.
 */
void *synth__reserve(struct synth *s, size_t size, uint32_t cpu);
void synth__commit(struct synth *s);

/* A tracepoint's raw data under construction: fixed part, then __data_loc strings. */
struct synth_raw {
	unsigned char data[512];
	uint32_t len;
};

void synth__raw_init(struct synth *s, struct synth_raw *r, int ev);
void synth__raw_u(struct synth *s, struct synth_raw *r, enum rsp_field f, uint64_t v);
void synth__raw_str(struct synth *s, struct synth_raw *r, enum rsp_field f, const char *str);

/*
 * The record builders take their fields as a struct, named at the call site:
 *
 *	synth__switch(s, .cpu = 0, .t = 1000, .prev = 10, .prev_comm = "web",
 *		      .state = 1, .next = 0);
 *
 * Each macro below makes a compound literal of its struct from the
 * designated initializers and passes it to the function of the same name
 * with "add_" (or "build_"). Fields left out are zero, and a zero means
 * the default its comment gives: notably a context's tgid defaults to its
 * tid (a single-threaded process, or the idle task for tid 0), and a
 * NULL @chain means the evsel without a callchain.
 *
 * The structs take designated initializers only (a positional list, as the
 * builders' old arguments, is an error): a field added or moved cannot
 * shift a caller's values into the wrong fields.
 */
#define SYNTH_ARGS __attribute__((designated_init))

/* Any sample of @ev (the tracepoint builders below use it). */
struct SYNTH_ARGS synth_sample {
	int ev;
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid; /* the context: tgid 0 is tid */
	/* the callchain (@nr entries, markers included), or NULL: the evsel
	 * with a callchain (evsel_cc) or the one without (evsel) */
	const uint64_t *chain;
	uint32_t nr;
	const struct synth_raw *raw; /* its raw data, for a tracepoint */
};
void synth__add_sample(struct synth *s, const struct synth_sample *a);
#define synth__sample(s, ...) synth__add_sample((s), &(struct synth_sample){__VA_ARGS__})

/* Tracepoints. */

/* sched_switch on @cpu: @prev leaves in @state, @next comes on. */
struct SYNTH_ARGS synth_switch {
	uint32_t cpu;
	uint64_t t;
	uint32_t prev, prev_tgid; /* tids; prev_tgid 0 is prev */
	const char *prev_comm;	  /* NULL: "swapper/<cpu>" for tid 0, else "task-<tid>" */
	int64_t state;		  /* prev_state: 0 preempted, 1 TASK_INTERRUPTIBLE, ... */
	uint32_t next;
	const char *next_comm; /* NULL: as prev_comm */
	const uint64_t *chain; /* as synth_sample's */
	uint32_t nr;
};
void synth__add_switch(struct synth *s, const struct synth_switch *a);
#define synth__switch(s, ...) synth__add_switch((s), &(struct synth_switch){__VA_ARGS__})

/* sched_waking of @target (target_cpu @cpu), in the context of @tgid/@tid (0: idle). */
struct SYNTH_ARGS synth_waking {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint32_t target;
	const char *target_comm; /* NULL: as synth_switch's */
	const uint64_t *chain;
	uint32_t nr;
};
void synth__add_waking(struct synth *s, const struct synth_waking *a);
#define synth__waking(s, ...) synth__add_waking((s), &(struct synth_waking){__VA_ARGS__})

/* sched_process_fork of @child by @parent (the context), both named @comm. */
struct SYNTH_ARGS synth_process_fork {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, parent; /* tgid 0 is parent */
	uint32_t child;
	const char *comm; /* NULL: as synth_switch's, for the parent */
};
void synth__add_process_fork(struct synth *s, const struct synth_process_fork *a);
#define synth__process_fork(s, ...)                                                                \
	synth__add_process_fork((s), &(struct synth_process_fork){__VA_ARGS__})

/* sched_wakeup_new of @child, in the context of @tgid/@tid. */
struct SYNTH_ARGS synth_wakeup_new {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint32_t child;
	const char *comm; /* NULL: as synth_switch's, for the child */
};
void synth__add_wakeup_new(struct synth *s, const struct synth_wakeup_new *a);
#define synth__wakeup_new(s, ...)                                                                  \
	synth__add_wakeup_new((s), &(struct synth_wakeup_new){__VA_ARGS__})

/*
 * block_rq_insert, _issue or _complete (@ev) of @bytes at @sector of @dev
 * (the kernel's major << 20 | minor), in the context of @tgid/@tid.
 */
struct SYNTH_ARGS synth_block {
	int ev;
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	const char *comm; /* insert and issue only; NULL: none */
	uint32_t dev;
	uint64_t sector;
	uint32_t bytes;
	const char *rwbs; /* NULL: "R" */
};
void synth__add_block(struct synth *s, const struct synth_block *a);
#define synth__block(s, ...) synth__add_block((s), &(struct synth_block){__VA_ARGS__})

/* irq_handler_entry (@entry) or _exit; the exit's name is not recorded. */
void synth__irq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq, const char *name);
/* The same in the context of @tid, the task it interrupted (synth__irq: the idle task). */
void synth__irq_in(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq, const char *name,
		   uint32_t tid);

/* softirq_entry (@entry) or _exit of @vec, in the context of @tgid/@tid. */
struct SYNTH_ARGS synth_softirq {
	bool entry;
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	unsigned vec;
};
void synth__add_softirq(struct synth *s, const struct synth_softirq *a);
#define synth__softirq(s, ...) synth__add_softirq((s), &(struct synth_softirq){__VA_ARGS__})

void synth__hrtimer(struct synth *s, bool entry, uint32_t cpu, uint64_t t);

/* sock_send_length (@recv: sock_recv_length) of @sk in the context of @tgid/@tid. */
struct SYNTH_ARGS synth_sock_len {
	bool recv;
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint64_t sk;
	unsigned proto; /* 0: TCP */
	int bytes;	/* the return value: bytes, or -errno */
};
void synth__add_sock_len(struct synth *s, const struct synth_sock_len *a);
#define synth__sock_len(s, ...) synth__add_sock_len((s), &(struct synth_sock_len){__VA_ARGS__})

/* sk_data_ready of @sk, in the context of @tgid/@tid (0: an idle CPU). */
struct SYNTH_ARGS synth_data_ready {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint64_t sk;
	unsigned proto; /* 0: TCP */
};
void synth__add_data_ready(struct synth *s, const struct synth_data_ready *a);
#define synth__data_ready(s, ...)                                                                  \
	synth__add_data_ready((s), &(struct synth_data_ready){__VA_ARGS__})

/*
 * inet_sock_set_state (@oldstate -> @newstate) of TCP socket @sk, and
 * tcp_rcv_space_adjust (a receive that repeats its 4-tuple), in the
 * context of @tgid/@tid. IPv4 addresses as 32-bit host-order numbers.
 */
struct SYNTH_ARGS synth_tcp {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint64_t sk;
	int oldstate, newstate; /* inet_sock_set_state only */
	uint32_t saddr;
	uint16_t sport;
	uint32_t daddr;
	uint16_t dport;
};
void synth__add_tcp_state(struct synth *s, const struct synth_tcp *a);
#define synth__tcp_state(s, ...) synth__add_tcp_state((s), &(struct synth_tcp){__VA_ARGS__})
void synth__add_tcp_rcv(struct synth *s, const struct synth_tcp *a);
#define synth__tcp_rcv(s, ...) synth__add_tcp_rcv((s), &(struct synth_tcp){__VA_ARGS__})

/* hrtimer_start in the context of @tgid/@tid: a timer with callback @fn expiring at @expires. */
struct SYNTH_ARGS synth_hrtimer_start {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint64_t fn, expires;
};
void synth__add_hrtimer_start(struct synth *s, const struct synth_hrtimer_start *a);
#define synth__hrtimer_start(s, ...)                                                               \
	synth__add_hrtimer_start((s), &(struct synth_hrtimer_start){__VA_ARGS__})

/* cpu-clock samples (with a period, as rspd's). */

/* A sample at @ip without a callchain. */
struct SYNTH_ARGS synth_cpu_sample {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	uint64_t ip;
	uint16_t cpumode; /* the record's misc; 0: PERF_RECORD_MISC_USER */
	uint64_t period;  /* 0: 10101010 */
};
void synth__add_cpu_sample(struct synth *s, const struct synth_cpu_sample *a);
#define synth__cpu_sample(s, ...)                                                                  \
	synth__add_cpu_sample((s), &(struct synth_cpu_sample){__VA_ARGS__})

/* A sample with callchain @chain (@nr entries, markers included): the ip is its innermost frame. */
struct SYNTH_ARGS synth_cpu_clock {
	uint32_t cpu;
	uint64_t t;
	uint32_t tgid, tid;
	const uint64_t *chain;
	uint32_t nr;
};
void synth__add_cpu_clock(struct synth *s, const struct synth_cpu_clock *a);
#define synth__cpu_clock(s, ...) synth__add_cpu_clock((s), &(struct synth_cpu_clock){__VA_ARGS__})

/*
 * Side-band records of the dummy event, with the sample_id_all trailer
 * {pid/tid, time, cpu, identifier}. The *_rec variants build the record
 * into @buf (at least 512 bytes; cpu 0 in the trailer, @cpu is ignored)
 * and return it; the others append it.
 */
struct SYNTH_ARGS synth_mmap2 {
	uint32_t cpu;
	uint64_t t;
	uint32_t pid; /* also the tid */
	uint64_t addr, len, pgoff, ino;
	uint32_t prot;
	const char *path;
};
const struct perf_event_header *synth__build_mmap2(const struct synth *s, uint64_t *buf,
						   const struct synth_mmap2 *a);
void synth__add_mmap2(struct synth *s, const struct synth_mmap2 *a);
#define synth__mmap2_rec(s, buf, ...)                                                              \
	synth__build_mmap2((s), (buf), &(struct synth_mmap2){__VA_ARGS__})
#define synth__mmap2(s, ...) synth__add_mmap2((s), &(struct synth_mmap2){__VA_ARGS__})

struct SYNTH_ARGS synth_comm {
	uint32_t cpu;
	uint64_t t;
	uint32_t pid, tid; /* tid 0 is pid */
	const char *comm;
	int exec; /* PERF_RECORD_MISC_COMM_EXEC */
};
const struct perf_event_header *synth__build_comm(const struct synth *s, uint64_t *buf,
						  const struct synth_comm *a);
void synth__add_comm(struct synth *s, const struct synth_comm *a);
#define synth__comm_rec(s, buf, ...)                                                               \
	synth__build_comm((s), (buf), &(struct synth_comm){__VA_ARGS__})
#define synth__comm(s, ...) synth__add_comm((s), &(struct synth_comm){__VA_ARGS__})

/* PERF_RECORD_FORK or _EXIT (@type): any type, to build malformed records; no defaults. */
struct SYNTH_ARGS synth_task {
	int type;
	uint32_t cpu;
	uint64_t t;
	uint32_t pid, ppid, tid, ptid;
};
const struct perf_event_header *synth__build_task(const struct synth *s, uint64_t *buf,
						  const struct synth_task *a);
void synth__add_task(struct synth *s, const struct synth_task *a);
#define synth__task_rec(s, buf, ...)                                                               \
	synth__build_task((s), (buf), &(struct synth_task){__VA_ARGS__})
#define synth__task(s, ...) synth__add_task((s), &(struct synth_task){__VA_ARGS__})

/* @nr records lost on @cpu at @time: a PERF_RECORD_LOST (id 0) as the window synthesizes it. */
void synth__lost(struct synth *s, uint32_t cpu, uint64_t time, uint64_t nr);

#endif
