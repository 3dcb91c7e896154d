/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_SCHEMA_H
#define RSP_INTERNAL_SCHEMA_H

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
};

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

/* The field locations of a sample: the tracepoint's, or its compact record's. */
static inline const struct rsp_field_loc *rsp_schema__locs(const struct rsp_schema *s,
							   unsigned compact)
{
	return compact ? s->cfields : s->fields;
}

/* bpfrec.c: the compact records' field table, and a record's kind and event. */
void rsp_bpfrec__fields(struct rsp_field_loc *f);
int rsp_bpfrec__classify(const void *raw, uint32_t size, int *event);

#endif
