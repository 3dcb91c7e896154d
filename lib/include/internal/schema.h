/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SCHEMA_H
#define RSP_INTERNAL_SCHEMA_H

#include <errno.h>
#include <string.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include "internal/u64map.h"

#define RSP_FLOC_PRESENT 0x1u
#define RSP_FLOC_SIGNED	 0x2u
#define RSP_FLOC_DYNAMIC 0x4u /* __data_loc: u32 (len << 16 | offset) */
#define RSP_FLOC_ARRAY	 0x8u /* fixed char array */

struct rsp_field_loc {
	uint16_t offset;
	uint16_t size;
	uint8_t flags;
};

#define RSP_SCHEMA_MAX_DYN 4 /* __data_loc fields remembered per tracepoint */

struct rsp_evsel_desc {
	struct perf_event_attr attr;
	int event;
	enum rsp_role role;
	char name[64];
	uint32_t nr_user_regs; /* popcount of attr.sample_regs_user */
	uint32_t nr_intr_regs; /* popcount of attr.sample_regs_intr */
	uint16_t id_trailer;   /* bytes of the sample_id_all trailer */
	/*
	 * Where a sample's fixed head puts each field (rsp_record__parse_sample()
	 * reads them at these word indexes after the header, -1 when absent):
	 * the head (IDENTIFIER .. PERIOD) is one word per field, so its layout
	 * is known from sample_type alone and computed once, at add_evsel.
	 */
	uint8_t head_words;
	int8_t at_ip, at_tid, at_time, at_addr, at_cpu, at_period;
	/* the tail has no field but CALLCHAIN and RAW (read inline) */
	bool tail_simple;
};

#define RSP_SCHEMA_DENSE_MAX	65536u
#define RSP_SCHEMA_DENSE_RANGES 4

struct rsp_schema {
	struct rsp_evsel_desc evsels[RSP_SCHEMA_MAX_EVSELS];
	int nr_evsels;
	/*
	 * Every evsel has PERF_SAMPLE_IDENTIFIER: a sample's id is its first
	 * word and a trailer's its last. Otherwise a stream must have a single
	 * evsel (perf record with one event), or evsels whose sample_type puts
	 * PERF_SAMPLE_ID at the same place.
	 */
	bool all_identifier;
	/* the first RSP_ROLE_BPF evsel: the BPF rings' records (rsp_brec_*) are its samples */
	int bpf_evsel;
	struct rsp_u64map ids; /* sample id -> evsel index */
	/*
	 * The same ids in direct tables while they lie close together (the
	 * kernel numbers ids in order, and so do rsp's dumps for what they
	 * synthesize, so a stream's fill a few small ranges): entry id - base
	 * holds evsel + 1, or 0 when the id is not in it (the map answers for
	 * it). At most RSP_SCHEMA_DENSE_RANGES tables of RSP_SCHEMA_DENSE_MAX
	 * entries; other ids are in the map only. Read by
	 * rsp_schema__evsel_fast().
	 */
	struct rsp_id_range {
		uint64_t base;
		uint32_t cap;
		uint8_t *t;
	} dense[RSP_SCHEMA_DENSE_RANGES];
	int nr_dense;
	/* catalogued tracepoints */
	struct rsp_field_loc fields[RSP_F__NR];
	/* the same fields in rsp's compact BPF records (lib/stream/bpfrec.c) */
	struct rsp_field_loc cfields[RSP_F__NR];
	int tp_id[RSP_EV__NR];
	/* each tracepoint's fixed record size, and where its __data_loc fields are
	 * (what a BPF record written back as the tracepoint's sample needs) */
	uint16_t tp_size[RSP_EV__NR];
	uint16_t tp_dyn[RSP_EV__NR][RSP_SCHEMA_MAX_DYN];
	uint8_t nr_tp_dyn[RSP_EV__NR];
	bool ev_ok[RSP_EV__NR];
	char *ev_problem[RSP_EV__NR];
};

_Static_assert(RSP_SCHEMA_MAX_EVSELS < 255, "evsel + 1 fits the dense id table's entries");

/* rsp_schema__evsel_by_id() with the direct table tried first (per sample). */
static inline int rsp_schema__evsel_fast(const struct rsp_schema *s, uint64_t id)
{
	for (int r = 0; r < s->nr_dense; r++) {
		uint64_t i = id - s->dense[r].base;

		if (i < s->dense[r].cap)
			return s->dense[r].t[i] ? s->dense[r].t[i] - 1
						: rsp_schema__evsel_by_id(s, id);
	}
	return rsp_schema__evsel_by_id(s, id);
}

/*
 * The inline paths of rsp_record__place_sample() and
 * rsp_record__parse_sample() for the common sample: rsp's layout (the id
 * first), an evsel whose tail holds no field but CALLCHAIN and RAW, not a
 * BPF evsel. They make the checks rsp_record__parse_sample() makes of such
 * a sample and read the head at the evsel's indexes; anything else, and
 * any refusal, is left to the functions (which decide, and say why). Inline
 * because a dump's load places every record and its pass parses each.
 */

/* The simple tail of @n words at @w, checked as the parse checks it; false if refused. */
static inline bool rsp_record__simple_tail(uint64_t st, const uint64_t *w, uint32_t n,
					   const uint64_t **chain, uint64_t *nr, const void **raw,
					   uint32_t *raw_size)
{
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (!n || w[0] >= n)
			return false;
		*nr = w[0];
		*chain = w + 1;
		n -= (uint32_t)w[0] + 1;
		w += w[0] + 1;
	}
	if (!(st & PERF_SAMPLE_RAW))
		return true;
	if (!n)
		return false;
	memcpy(raw_size, w, 4);
	*raw = (const unsigned char *)w + 4;
	return (uint64_t)*raw_size + 4 <= (uint64_t)n * 8;
}

/*
 * @rec's evsel (*@evsel its index) if the inline paths take it, its tail
 * checked and read into the rest; else NULL.
 */
static inline const struct rsp_evsel_desc *
rsp_record__simple(const struct rsp_schema *s, const struct perf_event_header *rec, int *evsel,
		   const uint64_t **chain, uint64_t *nr, const void **raw, uint32_t *raw_size)
{
	const uint64_t *w = (const uint64_t *)(const void *)(rec + 1);
	const struct rsp_evsel_desc *d;
	uint32_t words = (rec->size - (uint32_t)sizeof(*rec)) / 8;

	if (rec->type != PERF_RECORD_SAMPLE || rec->size <= sizeof(*rec) || rec->size % 8 ||
	    !s->all_identifier)
		return NULL;
	*evsel = rsp_schema__evsel_fast(s, w[0]);
	if (*evsel < 0)
		return NULL;
	d = &s->evsels[*evsel];
	if (!d->tail_simple || d->role == RSP_ROLE_BPF || d->head_words > words ||
	    !rsp_record__simple_tail(d->attr.sample_type, w + d->head_words, words - d->head_words,
				     chain, nr, raw, raw_size))
		return NULL;
	return d;
}

/**
 * rsp_record__place_fast() - rsp_record__place_sample() of the common
 * sample, inline. Return: true with *@time and *@cpu set; false when the
 * sample is not of that kind or is refused (rsp_record__place_sample()
 * then decides).
 */
static inline bool rsp_record__place_fast(const struct rsp_schema *s,
					  const struct perf_event_header *rec, uint64_t *time,
					  uint32_t *cpu)
{
	const uint64_t *w = (const uint64_t *)(const void *)(rec + 1), *chain;
	const struct rsp_evsel_desc *d;
	const void *raw;
	uint32_t raw_size;
	uint64_t nr;
	int evsel;

	d = rsp_record__simple(s, rec, &evsel, &chain, &nr, &raw, &raw_size);
	if (!d)
		return false;
	*time = d->at_time >= 0 ? w[d->at_time] : 0;
	*cpu = d->at_cpu >= 0 ? (uint32_t)w[d->at_cpu] : 0;
	return true;
}

_Static_assert(sizeof(struct rsp_sample) == 168, "rsp_record__parse_fast() must set every field");

/**
 * rsp_record__parse_fast() - rsp_record__parse_sample() of the common
 * sample, inline: *@out as it would fill it. Return: true; false when the
 * sample is not of that kind or is refused (@out is then undefined:
 * rsp_record__parse_sample() decides).
 */
static inline bool rsp_record__parse_fast(const struct rsp_schema *s,
					  const struct perf_event_header *rec,
					  struct rsp_sample *out)
{
	const uint64_t *w = (const uint64_t *)(const void *)(rec + 1), *chain = NULL;
	const struct rsp_evsel_desc *d;
	const void *raw = NULL;
	uint32_t raw_size = 0;
	uint64_t nr = 0, tid;
	int evsel;

	d = rsp_record__simple(s, rec, &evsel, &chain, &nr, &raw, &raw_size);
	if (!d)
		return false;
	/* field by field, as clear_sample() (record.c): a struct literal went through a copy */
	tid = d->at_tid >= 0 ? w[d->at_tid] : 0;
	out->evsel = evsel;
	out->event = d->event;
	out->role = d->role;
	out->compact = 0;
	out->id = w[0];
	out->ip = d->at_ip >= 0 ? w[d->at_ip] : 0;
	out->time = d->at_time >= 0 ? w[d->at_time] : 0;
	out->addr = d->at_addr >= 0 ? w[d->at_addr] : 0;
	out->period = d->at_period >= 0 ? w[d->at_period] : 0;
	out->pid = (uint32_t)tid;
	out->tid = (uint32_t)(tid >> 32);
	out->cpu = d->at_cpu >= 0 ? (uint32_t)w[d->at_cpu] : 0;
	out->nr_callchain = nr;
	out->callchain = chain;
	out->raw_size = raw_size;
	out->raw = raw;
	out->user_regs_abi = 0;
	out->nr_user_regs = 0;
	out->user_stack_z = 0;
	out->user_regs = NULL;
	out->user_stack_size = 0;
	out->user_stack = NULL;
	out->intr_regs_abi = 0;
	out->nr_intr_regs = 0;
	out->intr_regs = NULL;
	return true;
}

/*
 * rsp_record__parse_other() - rsp_record__parse_sample() of what
 * rsp_record__parse_fast() did not take: for a caller that tried that
 * inline first (rsp_record__parse_sample() is the two in turn).
 */
int rsp_record__parse_other(const struct rsp_schema *s, const struct perf_event_header *rec,
			    struct rsp_sample *out);

/**
 * rsp_record__place_sample() - a sample's time and CPU, and whether
 * rsp_record__parse_sample() accepts it, without filling a struct
 * rsp_sample: for placing a dump's samples in time order, which the
 * timeline then parses in full. Samples whose tail holds more than a
 * callchain and raw data, of BPF evsels, or refused, take the full parse.
 *
 * Return: 0, or -1 where rsp_record__parse_sample() refuses the record
 * (call it for the reason).
 */
int rsp_record__place_sample(const struct rsp_schema *s, const struct perf_event_header *rec,
			     uint64_t *time, uint32_t *cpu);

/*
 * An integer field at @l of a record of @size bytes at @raw, sign-extended
 * when the field is signed; 0 if absent. Return: 0, or -EINVAL if it runs
 * past the record.
 */
static inline int rsp_floc__read_u(const struct rsp_field_loc *l, const uint8_t *raw, uint32_t size,
				   uint64_t *out)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;

	*out = 0;
	if (!(l->flags & RSP_FLOC_PRESENT))
		return 0;
	if ((uint32_t)l->offset + l->size > size)
		return -EINVAL;
	switch (l->size) {
	case 1:
		u8 = raw[l->offset];
		*out = (l->flags & RSP_FLOC_SIGNED) ? (uint64_t)(int64_t)(int8_t)u8 : u8;
		break;
	case 2:
		memcpy(&u16, raw + l->offset, 2);
		*out = (l->flags & RSP_FLOC_SIGNED) ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		break;
	case 4:
		memcpy(&u32, raw + l->offset, 4);
		*out = (l->flags & RSP_FLOC_SIGNED) ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		break;
	default:
		memcpy(out, raw + l->offset, 8);
		break;
	}
	return 0;
}

/* The field locations of a sample: the tracepoint's, or its compact record's. */
static inline const struct rsp_field_loc *rsp_schema__locs(const struct rsp_schema *s,
							   unsigned compact)
{
	return compact ? s->cfields : s->fields;
}

/* bpfrec.c: the compact records' field table, and a record's kind and event. */
void rsp_bpfrec__fields(struct rsp_field_loc *f);
int rsp_bpfrec__classify(const void *raw, uint32_t size, int *event);
/* The most records one folded record stands for besides itself, and their size in words. */
#define RSP_BPFREC_UNFOLD_MAX	2
#define RSP_BPFREC_UNFOLD_WORDS 8
/*
 * rsp_bpfrec__unfold() - the records of layout 2's kinds that a folded BPF
 * record (one rsp_bpfrec__classify() accepted) stands for besides itself: a
 * switch's waking, a completion's insert and issue, a handler span's entry,
 * a carry's part. Each is a whole compact record with its own header (its
 * time, CPU and task), written into @out. Return: how many (0: none).
 */
int rsp_bpfrec__unfold(const void *raw, uint32_t size,
		       uint64_t out[RSP_BPFREC_UNFOLD_MAX][RSP_BPFREC_UNFOLD_WORDS]);

#endif
