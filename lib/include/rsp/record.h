/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_RECORD_H
#define RSP_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>
#include <rsp/schema.h>

/*
 * A decoded perf record: pointers into the record's own bytes, valid as long
 * as the record is (a pinned window chunk, a mapped file). Decoding checks
 * every length against the record's size, so it is safe on untrusted input.
 */
struct rsp_sample {
	int evsel; /* schema evsel index */
	int event; /* enum rsp_event, or -1 */
	enum rsp_role role;
	/*
	 * 0, or the kind of compact BPF record raw holds (enum rsp_brec_kind):
	 * its fields are at the schema's compact offsets; COMM and STACK
	 * records are side records (event -1) for the timeline.
	 */
	unsigned compact;
	uint64_t id;
	uint64_t ip;
	uint64_t time;
	uint64_t addr;
	uint64_t period;
	uint32_t pid, tid;
	uint32_t cpu;
	uint64_t nr_callchain;
	const uint64_t *callchain; /* PERF_CONTEXT_* markers included */
	uint32_t raw_size;
	const void *raw;
	uint64_t user_regs_abi; /* PERF_SAMPLE_REGS_ABI_*, 0 if none */
	uint32_t nr_user_regs;
	/*
	 * An RSP_RECORD_ZSAMPLE's: user_stack is a zstd frame this long that
	 * inflates to user_stack_size bytes (rsp_ustackz__inflate()); 0: the
	 * bytes themselves
	 */
	uint32_t user_stack_z;
	const uint64_t *user_regs; /* in bit order of attr.sample_regs_user */
	uint64_t user_stack_size;  /* bytes valid in user_stack (dyn_size) */
	const void *user_stack;
	uint64_t intr_regs_abi; /* PERF_SAMPLE_REGS_INTR: 0 if none */
	uint32_t nr_intr_regs;
	const uint64_t *intr_regs; /* in bit order of attr.sample_regs_intr (kprobe arguments) */
};

/* Bits of rsp_sample that were present in the record. */
#define RSP_SAMPLE_HAS_TIME 0x1u
#define RSP_SAMPLE_HAS_CPU  0x2u
#define RSP_SAMPLE_HAS_TID  0x4u

/**
 * rsp_record__parse_sample() - decode a PERF_RECORD_SAMPLE
 * @s:   the stream's schema
 * @rec: the record; its header.size bytes must be readable
 * @out: filled on success
 *
 * Return: 0; -ENOENT if the sample id is not in the schema; -EINVAL if the
 * record is malformed (a length runs past its end, an unsupported layout).
 */
RSP_API int rsp_record__parse_sample(const struct rsp_schema *s,
				     const struct perf_event_header *rec, struct rsp_sample *out);

/**
 * rsp_record__parse_id() - decode the sample_id trailer of a non-sample record
 *
 * COMM, MMAP2, FORK, EXIT, LOST, ... carry tid, time, cpu and id at their end
 * when the event has sample_id_all. Fills out->time, tid, pid, cpu, id,
 * evsel, event.
 *
 * Return: a mask of RSP_SAMPLE_HAS_*, or -ENOENT/-EINVAL as above.
 */
RSP_API int rsp_record__parse_id(const struct rsp_schema *s, const struct perf_event_header *rec,
				 struct rsp_sample *out);

/**
 * rsp_record__time() - the timestamp of any record, 0 if it has none or the
 * record is malformed.
 */
RSP_API uint64_t rsp_record__time(const struct rsp_schema *s, const struct perf_event_header *rec);

/*
 * rsp's own layout. Every event rspd opens has these sample_type bits and
 * none of PERF_SAMPLE_ADDR, _ID, _STREAM_ID, and sample_id_all set. Then a
 * sample's time and cpu sit at fixed offsets, and so do a non-sample
 * record's (in its trailer), and the capture loop can timestamp a record
 * without looking up its event. rspd checks every attr against this at
 * start (rsp_layout__check).
 */
#define RSP_LAYOUT_SAMPLE_TYPE                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU)
#define RSP_LAYOUT_FORBIDDEN (PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID)

/**
 * rsp_record__bpf_event() - @ev is one of the events rsp's compact BPF
 * records stand for (tracepoints/bpf_records.h): recorded by the BPF
 * programs under rspd --capture bpf, decoded from a bpf-output evsel.
 */
RSP_API bool rsp_record__bpf_event(int ev);

/* A PERF_RECORD_FORK's or _EXIT's body: the child (pid, tid), its parent. */
struct rsp_task_rec {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/* A PERF_RECORD_COMM's body: @comm is in the record, @len bytes, no NUL. */
struct rsp_comm_rec {
	uint32_t pid, tid;
	const char *comm;
	uint32_t len; /* at most 16 */
	bool exec;    /* PERF_RECORD_MISC_COMM_EXEC: the name changed by an exec */
};

/**
 * rsp_record__task() - decode a FORK or EXIT record's body (the one place
 * that knows its layout). Return: 0, or -EINVAL for another type or a
 * record too short.
 */
RSP_API int rsp_record__task(const struct perf_event_header *rec, struct rsp_task_rec *out);

/** rsp_record__comm() - decode a COMM record's body, as rsp_record__task(). */
RSP_API int rsp_record__comm(const struct perf_event_header *rec, struct rsp_comm_rec *out);

/** rsp_layout__check() - 0 if @attr follows rsp's layout, else -EINVAL. */
RSP_API int rsp_layout__check(const struct perf_event_attr *attr);

/*
 * The records of rspd's BPF rings (tracepoints/bpf_records.h) as a window
 * holds them: perf's header with a type of rsp's own (this tag in its high
 * half), then {time, pid, tid}, misc the CPU. They decode as samples
 * (rsp_record__parse_sample()); a dump writes them as bpf-output samples.
 */
#define RSP_RECORD_BPF_TAG 0x52530000u

/*
 * A sample whose user stack rspd compressed in the window (rsp/ustackz.h):
 * a sample's layout, under a type of rsp's own; never in a file.
 */
#define RSP_RECORD_ZSAMPLE 0x525a0001u

/** rsp_record__is_sample() - a sample: perf's (compressed or not), or one of a BPF ring. */
static inline bool rsp_record__is_sample(const struct perf_event_header *h)
{
	return h->type == PERF_RECORD_SAMPLE || h->type == RSP_RECORD_ZSAMPLE ||
	       (h->type & 0xffff0000u) == RSP_RECORD_BPF_TAG;
}

/* Offsets in u64 words: sample {hdr, identifier, ip, tid, time, cpu, ...}. */
static inline uint64_t rsp_layout__time(const struct perf_event_header *h)
{
	const uint64_t *w = (const uint64_t *)h;

	if (h->type == PERF_RECORD_SAMPLE || h->type == RSP_RECORD_ZSAMPLE)
		return h->size >= 48 ? w[4] : 0;
	if ((h->type & 0xffff0000u) == RSP_RECORD_BPF_TAG)
		return h->size >= 16 ? w[1] : 0;
	/* trailer {..., tid, time, cpu, identifier} */
	return h->size >= 40 ? w[h->size / 8 - 3] : 0;
}

static inline uint32_t rsp_layout__cpu(const struct perf_event_header *h)
{
	const uint64_t *w = (const uint64_t *)h;

	if (h->type == PERF_RECORD_SAMPLE || h->type == RSP_RECORD_ZSAMPLE)
		return h->size >= 48 ? (uint32_t)w[5] : 0;
	if ((h->type & 0xffff0000u) == RSP_RECORD_BPF_TAG)
		return h->misc;
	return h->size >= 40 ? (uint32_t)w[h->size / 8 - 2] : 0;
}

#endif /* RSP_RECORD_H */
