// SPDX-License-Identifier: LGPL-2.1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include "internal/log.h"
#include "internal/schema.h"

struct rsp_schema *rsp_schema__new(void)
{
	struct rsp_schema *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->all_identifier = true;
	s->bpf_evsel = -1;
	rsp_u64map__init(&s->ids);
	for (int i = 0; i < RSP_EV__NR; i++)
		s->tp_id[i] = -1;
	rsp_bpfrec__fields(s->cfields);
	return s;
}

void rsp_schema__delete(struct rsp_schema *s)
{
	if (!s)
		return;
	for (int i = 0; i < RSP_EV__NR; i++)
		free(s->ev_problem[i]);
	rsp_u64map__exit(&s->ids);
	for (int r = 0; r < s->nr_dense; r++)
		free(s->dense[r].t);
	free(s);
}

/* Bytes of the sample_id_all trailer of non-sample records. */
static uint16_t id_trailer_size(uint64_t st)
{
	uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

	return (uint16_t)(8 * __builtin_popcountll(st & bits));
}

/* The word index of each head field of a sample of @d (rsp_evsel_desc). */
static void head_layout(struct rsp_evsel_desc *d)
{
	const uint64_t tail_bits =
		PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
		PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |
		PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR;
	uint64_t st = d->attr.sample_type;
	int8_t w = 0;

	w += !!(st & PERF_SAMPLE_IDENTIFIER);
	d->at_ip = st & PERF_SAMPLE_IP ? w++ : -1;
	d->at_tid = st & PERF_SAMPLE_TID ? w++ : -1;
	d->at_time = st & PERF_SAMPLE_TIME ? w++ : -1;
	d->at_addr = st & PERF_SAMPLE_ADDR ? w++ : -1;
	w += !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID);
	d->at_cpu = st & PERF_SAMPLE_CPU ? w++ : -1;
	d->at_period = st & PERF_SAMPLE_PERIOD ? w++ : -1;
	d->head_words = (uint8_t)w;
	d->tail_simple = !(st & tail_bits);
}

int rsp_schema__add_evsel(struct rsp_schema *s, const struct perf_event_attr *attr, int event,
			  enum rsp_role role, const char *name)
{
	struct rsp_evsel_desc *d;

	if (s->nr_evsels >= RSP_SCHEMA_MAX_EVSELS)
		return -ENOSPC;
	if (event >= RSP_EV__NR)
		return -EINVAL;
	d = &s->evsels[s->nr_evsels];
	memset(d, 0, sizeof(*d));
	memcpy(&d->attr, attr, sizeof(d->attr));
	d->event = event < 0 ? -1 : event;
	d->role = role;
	snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
	d->nr_user_regs = (uint32_t)__builtin_popcountll(attr->sample_regs_user);
	d->nr_intr_regs = (uint32_t)__builtin_popcountll(attr->sample_regs_intr);
	d->id_trailer = attr->sample_id_all ? id_trailer_size(attr->sample_type) : 0;
	head_layout(d);
	if (!(attr->sample_type & PERF_SAMPLE_IDENTIFIER))
		s->all_identifier = false;
	if (role == RSP_ROLE_BPF && s->bpf_evsel < 0)
		s->bpf_evsel = s->nr_evsels;
	return s->nr_evsels++;
}

/*
 * Grow range @r (rsp_schema.dense) to cover @id, doubling: false if it
 * would pass RSP_SCHEMA_DENSE_MAX entries or there is no memory for it.
 */
static bool dense_grow(struct rsp_id_range *r, uint64_t id)
{
	uint64_t lo = id, hi = id + 1, cap = 64;
	uint8_t *t;

	if (r->t) {
		lo = id < r->base ? id : r->base;
		hi = id >= r->base + r->cap ? id + 1 : r->base + r->cap;
	}
	if (hi - lo > RSP_SCHEMA_DENSE_MAX)
		return false;
	while (cap < hi - lo)
		cap *= 2;
	if (cap > RSP_SCHEMA_DENSE_MAX)
		cap = RSP_SCHEMA_DENSE_MAX;
	if (lo > UINT64_MAX - cap) /* the table ends at UINT64_MAX at most */
		lo = UINT64_MAX - cap;
	t = calloc(cap, 1);
	if (!t)
		return false;
	if (r->t)
		memcpy(t + (r->base - lo), r->t, r->cap);
	free(r->t);
	r->t = t;
	r->base = lo;
	r->cap = (uint32_t)cap;
	return true;
}

/*
 * Also note @id in a direct table: the one that holds it, or one that can
 * grow to hold it, or a new one. An id none can take (or no memory to
 * grow) is left to the map alone, which every lookup falls back to.
 */
static void dense_put(struct rsp_schema *s, uint64_t id, int evsel)
{
	struct rsp_id_range *r = NULL;

	for (int i = 0; i < s->nr_dense && !r; i++)
		if (id - s->dense[i].base < s->dense[i].cap)
			r = &s->dense[i];
	for (int i = 0; i < s->nr_dense && !r; i++)
		if (dense_grow(&s->dense[i], id))
			r = &s->dense[i];
	if (!r && s->nr_dense < RSP_SCHEMA_DENSE_RANGES && dense_grow(&s->dense[s->nr_dense], id))
		r = &s->dense[s->nr_dense++];
	if (!r)
		return;
	r->t[id - r->base] = (uint8_t)(evsel + 1);
	/*
	 * Ranges by decreasing base: rsp_schema__evsel_fast() tries them in
	 * order, and in a dump of BPF capture the ids the writer gives the
	 * tracepoints of the records it converts (RSP_BPFCONV_ID_BASE on,
	 * above any the kernel numbers) carry nearly every sample, where the
	 * kernel's carry the few of perf's own events (cpu-clock, uprobes).
	 */
	for (; r > s->dense && r->base > r[-1].base; r--) {
		struct rsp_id_range tmp = r[-1];

		r[-1] = *r;
		*r = tmp;
	}
}

int rsp_schema__add_id(struct rsp_schema *s, int evsel, uint64_t id)
{
	int err;

	if (evsel < 0 || evsel >= s->nr_evsels || id == 0 || id == UINT64_MAX)
		return -EINVAL;
	err = rsp_u64map__put(&s->ids, id, (uint32_t)evsel);
	if (!err)
		dense_put(s, id, evsel);
	return err;
}

int rsp_schema__evsel_by_id(const struct rsp_schema *s, uint64_t id)
{
	uint32_t idx;

	/* UINT64_MAX is the map's empty key: no evsel has it (add_id refuses it) */
	return id && id != UINT64_MAX && !rsp_u64map__get(&s->ids, id, &idx) ? (int)idx : -1;
}

static void set_problem(struct rsp_schema *s, int ev, const char *fmt, const char *a, const char *b)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, a, b);
	free(s->ev_problem[ev]);
	s->ev_problem[ev] = strdup(msg);
	s->ev_ok[ev] = false;
}

/* Record where one catalogued field lies; false if a required one is missing. */
static bool resolve_field(struct rsp_schema *s, struct tep_event *te, int f)
{
	const struct rsp_field_info *fi = rsp_catalogue__field(f);
	struct tep_format_field *tf = tep_find_field(te, fi->name);
	struct rsp_field_loc *loc = &s->fields[f];

	memset(loc, 0, sizeof(*loc));
	if (!tf || tf->offset < 0 || tf->size <= 0 || tf->offset + tf->size > 0xffff)
		return !fi->required;
	loc->offset = (uint16_t)tf->offset;
	loc->size = (uint16_t)tf->size;
	loc->flags = RSP_FLOC_PRESENT;
	if (tf->flags & TEP_FIELD_IS_SIGNED)
		loc->flags |= RSP_FLOC_SIGNED;
	if (tf->flags & TEP_FIELD_IS_DYNAMIC)
		loc->flags |= RSP_FLOC_DYNAMIC;
	else if (tf->flags & TEP_FIELD_IS_ARRAY)
		loc->flags |= RSP_FLOC_ARRAY;
	/* A byte array (an address) is a fixed array, read whole. */
	if (fi->kind == RSP_FK_BYTES) {
		if (loc->flags & RSP_FLOC_ARRAY)
			return true;
		loc->flags = 0;
		return !fi->required;
	}
	/* An integer wider than 8 bytes cannot be what we expect. */
	if (fi->kind != RSP_FK_STR && (loc->flags & (RSP_FLOC_DYNAMIC | RSP_FLOC_ARRAY) ||
				       loc->size > 8 || (loc->size & (loc->size - 1)))) {
		loc->flags = 0;
		return !fi->required;
	}
	if (fi->kind == RSP_FK_STR && !(loc->flags & (RSP_FLOC_DYNAMIC | RSP_FLOC_ARRAY))) {
		loc->flags = 0;
		return !fi->required;
	}
	return true;
}

/* The record's fixed size (common fields and all) and its __data_loc fields. */
static void layout(struct rsp_schema *s, struct tep_event *te, int ev)
{
	struct tep_format_field *lists[2] = {te->format.common_fields, te->format.fields};
	int end = 0;

	s->nr_tp_dyn[ev] = 0;
	for (int l = 0; l < 2; l++)
		for (struct tep_format_field *f = lists[l]; f; f = f->next) {
			if (f->offset >= 0 && f->size >= 0 && f->offset + f->size > end)
				end = f->offset + f->size;
			if ((f->flags & TEP_FIELD_IS_DYNAMIC) && f->size == 4 &&
			    s->nr_tp_dyn[ev] < RSP_SCHEMA_MAX_DYN)
				s->tp_dyn[ev][s->nr_tp_dyn[ev]++] = (uint16_t)f->offset;
		}
	s->tp_size[ev] = end > 0 && end < 0x8000 ? (uint16_t)end : 0;
}

static void resolve_event(struct rsp_schema *s, struct tep_handle *tep, int ev)
{
	const struct rsp_event_info *ei = rsp_catalogue__event(ev);
	struct tep_event *te = tep_find_event_by_name(tep, ei->system, ei->tp);
	int first, n = rsp_catalogue__event_fields(ev, &first);

	s->ev_ok[ev] = false;
	if (!te) {
		set_problem(s, ev, "tracepoint %s:%s is not available on this kernel", ei->system,
			    ei->tp);
		return;
	}
	s->tp_id[ev] = te->id;
	layout(s, te, ev);
	for (int f = first; f < first + n; f++) {
		if (!resolve_field(s, te, f)) {
			set_problem(s, ev, "tracepoint %s lacks the field %s rsp needs", ei->tp,
				    rsp_catalogue__field(f)->name);
			return;
		}
	}
	free(s->ev_problem[ev]);
	s->ev_problem[ev] = NULL;
	s->ev_ok[ev] = true;
}

int rsp_schema__resolve_fields(struct rsp_schema *s, struct tep_handle *tep)
{
	int usable = 0;

	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		if (rsp_catalogue__event(ev)->kind != RSP_EVK_TRACEPOINT)
			continue;
		resolve_event(s, tep, ev);
		usable += s->ev_ok[ev];
	}
	return usable;
}

bool rsp_schema__event_ok(const struct rsp_schema *s, enum rsp_event ev)
{
	return (unsigned)ev < RSP_EV__NR && s->ev_ok[ev];
}

const char *rsp_schema__event_problem(const struct rsp_schema *s, enum rsp_event ev)
{
	return (unsigned)ev < RSP_EV__NR ? s->ev_problem[ev] : NULL;
}

int rsp_schema__tp_id(const struct rsp_schema *s, enum rsp_event ev)
{
	return (unsigned)ev < RSP_EV__NR ? s->tp_id[ev] : -1;
}

int rsp_schema__event_by_tp_id(const struct rsp_schema *s, uint64_t tp_id)
{
	for (int ev = 0; ev < RSP_EV__NR; ev++)
		if (s->tp_id[ev] >= 0 && (uint64_t)s->tp_id[ev] == tp_id)
			return ev;
	return -1;
}

int rsp_schema__nr_evsels(const struct rsp_schema *s)
{
	return s->nr_evsels;
}

const struct perf_event_attr *rsp_schema__evsel_attr(const struct rsp_schema *s, int idx)
{
	return idx >= 0 && idx < s->nr_evsels ? &s->evsels[idx].attr : NULL;
}

const char *rsp_schema__evsel_name(const struct rsp_schema *s, int idx)
{
	return idx >= 0 && idx < s->nr_evsels ? s->evsels[idx].name : NULL;
}

int rsp_schema__evsel_event(const struct rsp_schema *s, int idx)
{
	return idx >= 0 && idx < s->nr_evsels ? s->evsels[idx].event : -1;
}

enum rsp_role rsp_schema__evsel_role(const struct rsp_schema *s, int idx)
{
	return idx >= 0 && idx < s->nr_evsels ? s->evsels[idx].role : RSP_ROLE_PRIMARY;
}
