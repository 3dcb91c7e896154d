/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSP_TESTS_SYNTH_H
#define RSP_TESTS_SYNTH_H

/*
 * Synthetic record streams for unit tests: a schema whose tracepoint
 * offsets come from this kernel's real formats (tests/golden), one evsel per
 * catalogued event (sample id = event + 1), and builders that append
 * records in rsp's layout to a window, as rspd would.
 */
#include <stdint.h>
#include <rsp/schema.h>
#include <rsp/window.h>

struct tep_handle;

struct synth {
	struct tep_handle *tep;
	struct rsp_schema *schema;
	struct rsp_window *window;
	unsigned nr_cpus;
};

/** synth__new() - schema from the golden formats and an empty window. */
struct synth *synth__new(unsigned nr_cpus, size_t budget);
void synth__delete(struct synth *s);

/** synth__tp() - append a tracepoint sample; raw is the event's data after
 *  the 8 common bytes, which are filled in (common_type, common_pid). */
void synth__tp(struct synth *s, int event, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid,
	       const void *fields, uint32_t fields_size);

void synth__switch(struct synth *s, unsigned cpu, uint64_t time, uint32_t prev_tgid,
		   uint32_t prev_tid, const char *prev_comm, int64_t prev_state, uint32_t next_tid,
		   const char *next_comm);
void synth__waking(struct synth *s, unsigned cpu, uint64_t time, uint32_t waker_tgid,
		   uint32_t waker_tid, uint32_t wakee_tid, int target_cpu);
/* irq and softirq handlers (this kernel's layouts: tests/golden). */
void synth__irq_entry(struct synth *s, unsigned cpu, uint64_t time, int irq, const char *name);
void synth__irq_exit(struct synth *s, unsigned cpu, uint64_t time, int irq);
void synth__softirq(struct synth *s, unsigned cpu, uint64_t time, unsigned vec, int entry);
/* Block requests: @event is RSP_EV_block_rq_insert, _issue or _complete;
 * dev is the kernel's (major << 20 | minor); pid/tid/comm say who ran it. */
void synth__block(struct synth *s, int event, unsigned cpu, uint64_t time, uint32_t pid,
		  uint32_t tid, const char *comm, uint32_t dev, uint64_t sector, uint32_t nr_sector);
void synth__cpu_sample(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid,
		       uint64_t ip);
/** synth__cpu_sample_mode() - the same with the record's cpumode (misc) and a period. */
void synth__cpu_sample_mode(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid,
			    uint32_t tid, uint64_t ip, uint16_t cpumode, uint64_t period);

/*
 * Side-band records of the dummy event (id RSP_EV_sideband + 1), with the
 * sample_id_all trailer {pid/tid, time, cpu, identifier}. The *_rec
 * variants build the record into @buf (at least 512 bytes) and return it;
 * the others append it to the window.
 */
struct perf_event_header;
const struct perf_event_header *synth__mmap2_rec(uint64_t *buf, uint64_t time, uint32_t pid,
						 uint64_t addr, uint64_t len, uint64_t pgoff,
						 uint64_t ino, uint32_t prot, const char *path);
const struct perf_event_header *synth__comm_rec(uint64_t *buf, uint64_t time, uint32_t pid,
						uint32_t tid, const char *comm, int exec);
const struct perf_event_header *synth__task_rec(uint64_t *buf, int type, uint64_t time,
						uint32_t pid, uint32_t ppid, uint32_t tid,
						uint32_t ptid);
void synth__mmap2(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint64_t addr,
		  uint64_t len, uint64_t pgoff, uint64_t ino, uint32_t prot, const char *path);
void synth__comm(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid,
		 const char *comm, int exec);
void synth__fork(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t ppid);
void synth__exit(struct synth *s, unsigned cpu, uint64_t time, uint32_t pid, uint32_t tid);

#endif
