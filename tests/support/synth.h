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
/**
 * synth__sample() - append a sample of @ev in the context of @pid/@tid
 * @chain: its callchain (@nr entries, markers included), or NULL: the evsel
 *         with a callchain (evsel_cc) or the one without (evsel)
 * @raw:   its raw data, for a tracepoint
 */
void synth__sample(struct synth *s, int ev, uint32_t cpu, uint64_t time, uint32_t pid, uint32_t tid,
		   const uint64_t *chain, uint32_t nr, const struct synth_raw *raw);

/* Tracepoints; @chain/@nr as for synth__sample(). */

/* sched_switch on @cpu: prev (@ptgid/@ptid) leaves in @state, next comes on. */
void synth__switch(struct synth *s, uint32_t cpu, uint64_t t, uint32_t ptgid, uint32_t ptid,
		   const char *pcomm, int64_t state, uint32_t ntid, const char *ncomm,
		   const uint64_t *chain, uint32_t nr);
/* sched_waking of @target (target_cpu @cpu), in the context of @tgid/@tid. */
void synth__waking(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		   uint32_t target, const char *tcomm, const uint64_t *chain, uint32_t nr);
/* sched_process_fork of @child by @parent. */
void synth__process_fork(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t parent,
			 uint32_t child, const char *comm);
void synth__wakeup_new(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		       uint32_t child, const char *comm);
/*
 * block_rq_insert, _issue or _complete (@ev) of @bytes at @sector of @dev
 * (the kernel's major << 20 | minor), in the context of @tgid/@tid; @comm
 * (insert and issue only) may be NULL.
 */
void synth__block(struct synth *s, int ev, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		  const char *comm, uint32_t dev, uint64_t sector, uint32_t bytes,
		  const char *rwbs);
/* irq_handler_entry (@entry) or _exit; the exit's name is not recorded. */
void synth__irq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, int irq, const char *name);
void synth__softirq(struct synth *s, bool entry, uint32_t cpu, uint64_t t, uint32_t tgid,
		    uint32_t tid, unsigned vec);
void synth__hrtimer(struct synth *s, bool entry, uint32_t cpu, uint64_t t);
/* sock_send_length (@recv: sock_recv_length) of @sk in the context of @tgid/@tid. */
void synth__sock_len(struct synth *s, bool recv, uint32_t cpu, uint64_t t, uint32_t tgid,
		     uint32_t tid, uint64_t sk, unsigned proto, int bytes);
/* sk_data_ready of @sk, in the context of @tgid/@tid (0: an idle CPU). */
void synth__data_ready(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		       uint64_t sk, unsigned proto);
/* inet_sock_set_state of TCP socket @sk (IPv4 addresses as 32-bit host-order numbers). */
void synth__tcp_state(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		      uint64_t sk, int oldstate, int newstate, uint32_t saddr, uint16_t sport,
		      uint32_t daddr, uint16_t dport);
/* tcp_rcv_space_adjust of TCP socket @sk: a receive that repeats its 4-tuple. */
void synth__tcp_rcv(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		    uint64_t sk, uint32_t saddr, uint16_t sport, uint32_t daddr, uint16_t dport);
/* hrtimer_start in the context of @tgid/@tid: a timer with callback @fn expiring at @expires. */
void synth__hrtimer_start(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
			  uint64_t fn, uint64_t expires);

/* cpu-clock samples (with a period, as rspd's). */

/* A user-mode sample at @ip. */
void synth__cpu_sample(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		       uint64_t ip);
/** synth__cpu_sample_mode() - the same with the record's cpumode (misc) and a period. */
void synth__cpu_sample_mode(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
			    uint64_t ip, uint16_t cpumode, uint64_t period);
/* A sample with callchain @chain (@nr entries, markers included): the ip is its innermost frame. */
void synth__cpu_clock(struct synth *s, uint32_t cpu, uint64_t t, uint32_t tgid, uint32_t tid,
		      const uint64_t *chain, uint32_t nr);

/*
 * Side-band records of the dummy event, with the sample_id_all trailer
 * {pid/tid, time, cpu, identifier}. The *_rec variants build the record
 * into @buf (at least 512 bytes; cpu 0 in the trailer) and return it; the
 * others append it.
 */
const struct perf_event_header *synth__mmap2_rec(const struct synth *s, uint64_t *buf,
						 uint64_t time, uint32_t pid, uint64_t addr,
						 uint64_t len, uint64_t pgoff, uint64_t ino,
						 uint32_t prot, const char *path);
const struct perf_event_header *synth__comm_rec(const struct synth *s, uint64_t *buf, uint64_t time,
						uint32_t pid, uint32_t tid, const char *comm,
						int exec);
/* PERF_RECORD_FORK or _EXIT (@type): any type, to build malformed records. */
const struct perf_event_header *synth__task_rec(const struct synth *s, uint64_t *buf, int type,
						uint64_t time, uint32_t pid, uint32_t ppid,
						uint32_t tid, uint32_t ptid);
void synth__mmap2(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint64_t addr,
		  uint64_t len, uint64_t pgoff, uint64_t ino, uint32_t prot, const char *path);
void synth__comm(struct synth *s, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t tid,
		 const char *comm, int exec);
void synth__task(struct synth *s, int type, uint32_t cpu, uint64_t t, uint32_t pid, uint32_t ppid,
		 uint32_t tid, uint32_t ptid);
/* @nr records lost on @cpu at @time: a PERF_RECORD_LOST (id 0) as the window synthesizes it. */
void synth__lost(struct synth *s, uint32_t cpu, uint64_t time, uint64_t nr);

#endif
