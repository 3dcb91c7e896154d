// SPDX-License-Identifier: LGPL-2.1
/*
 * Compact BPF records written back as the kernel's tracepoint samples: see
 * internal/bpfconv.h. The schema says both layouts: where each catalogued
 * field lies in the compact record (cfields) and in this kernel's
 * tracepoint record (fields, tp_size, tp_dyn), so one loop over the
 * event's catalogued fields copies every value; comm fields are filled
 * from the names the COMM records carried, __data_loc fields point at an
 * empty string, fields rsp does not catalogue stay zero.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/catalogue.h>
#include <rsp/record.h>
#include "internal/bpfconv.h"
#include "internal/hash.h"
#include "internal/schema.h"
#include "internal/vec.h"
#include "tracepoints/bpf_records.h"

#define NAME_FROM_HEADER -1 /* the current task's name (a block request's comm) */
#define NOT_A_NAME	 -2

struct name {
	char comm[RSP_BPF_COMM_LEN];
};

struct stack {
	uint64_t *ips;
	uint16_t nr;
};

struct rsp_bpfconv {
	const struct rsp_schema *s;
	struct rsp_kvec names;	/* tid -> struct name */
	struct rsp_kvec stacks; /* hash -> struct stack */
	struct rsp_bpfconv_stats st;
	/* per comm field: the field of the same event holding the tid it names */
	int name_of[RSP_F__NR];
	char idle[RSP_BPF_COMM_LEN];
};

/* The field of @ev named @name, or -1. */
static int field_named(int ev, const char *name)
{
	int first, n = rsp_catalogue__event_fields(ev, &first);

	for (int f = first; f < first + n; f++)
		if (!strcmp(rsp_catalogue__field(f)->name, name))
			return f;
	return -1;
}

/*
 * "X_comm" names the thread of "X_pid" (prev_comm, next_comm, parent_comm),
 * "comm" the one of "pid"; a child is named as its parent at fork; without
 * such a field (a block request) the current task.
 */
static int name_source(int ev, const char *field)
{
	char want[64];
	size_t len = strlen(field);
	int f;

	if (len < 4 || strcmp(field + len - 4, "comm") || len >= sizeof(want))
		return NOT_A_NAME;
	if (!strcmp(field, "child_comm"))
		return field_named(ev, "parent_pid") >= 0 ? field_named(ev, "parent_pid")
							  : NAME_FROM_HEADER;
	memcpy(want, field, len - 4);
	memcpy(want + len - 4, "pid", 4);
	f = field_named(ev, want);
	return f >= 0 ? f : NAME_FROM_HEADER;
}

struct rsp_bpfconv *rsp_bpfconv__new(const struct rsp_schema *s)
{
	struct rsp_bpfconv *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = s;
	rsp_kvec__init(&c->names, sizeof(struct name));
	rsp_kvec__init(&c->stacks, sizeof(struct stack));
	for (int f = 0; f < RSP_F__NR; f++) {
		const struct rsp_field_info *fi = rsp_catalogue__field(f);

		c->name_of[f] =
			fi->kind == RSP_FK_STR ? name_source((int)fi->event, fi->name) : NOT_A_NAME;
	}
	return c;
}

void rsp_bpfconv__delete(struct rsp_bpfconv *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < rsp_kvec__len(&c->stacks); i++)
		free(((struct stack *)rsp_kvec__at(&c->stacks, i))->ips);
	rsp_kvec__exit(&c->stacks);
	rsp_kvec__exit(&c->names);
	free(c);
}

bool rsp_bpfconv__event(const struct rsp_bpfconv *c, int ev)
{
	return ev >= 0 && ev < RSP_EV__NR && rsp_record__bpf_event(ev) && c->s->tp_id[ev] >= 0 &&
	       c->s->ev_ok[ev] && c->s->tp_size[ev] >= 8;
}

void rsp_bpfconv__attr(const struct rsp_bpfconv *c, int ev, const struct perf_event_attr *like,
		       struct perf_event_attr *a)
{
	*a = *like;
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = (uint64_t)c->s->tp_id[ev];
	a->sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	a->sample_period = 1;
}

static int learn_stack(struct rsp_bpfconv *c, const struct perf_event_header *rec)
{
	struct rsp_brec_stack r;
	struct stack *st;
	bool added;

	memcpy(&r, rec, sizeof(r));
	st = rsp_kvec__get(&c->stacks, rsp_hash__key(r.hash), &added);
	if (!st)
		return -ENOMEM;
	if (!added)
		return 1; /* sent again: the same frames */
	st->ips = malloc((r.nr ? r.nr : 1) * sizeof(uint64_t));
	if (!st->ips)
		return -ENOMEM;
	memcpy(st->ips, (const char *)rec + sizeof(r), r.nr * sizeof(uint64_t));
	st->nr = r.nr;
	return 1;
}

int rsp_bpfconv__learn(struct rsp_bpfconv *c, const struct perf_event_header *rec)
{
	int ev;
	int kind = rsp_bpfrec__classify(rec, rec->size, &ev);

	if (kind == RSP_BREC_COMM) {
		struct rsp_brec_comm r;
		struct name *n;

		memcpy(&r, rec, sizeof(r));
		n = rsp_kvec__get(&c->names, r.tid, NULL);
		if (!n)
			return -ENOMEM;
		memcpy(n->comm, r.comm, sizeof(n->comm));
		n->comm[sizeof(n->comm) - 1] = '\0';
		return 1;
	}
	return kind == RSP_BREC_STACK ? learn_stack(c, rec) : 0;
}

/* An integer field of a compact record (checked against its size by the caller). */
static uint64_t get_int(const struct rsp_field_loc *l, const unsigned char *p, uint32_t size)
{
	uint64_t v;

	return rsp_floc__read_u(l, p, size, &v) ? 0 : v;
}

/* Little-endian: the low @size bytes of @v. */
static void put_int(unsigned char *dst, uint16_t size, uint64_t v)
{
	memcpy(dst, &v, size < 8 ? size : 8);
}

/* The name of the thread a comm field names, or NULL (counted). */
static const char *name_for(struct rsp_bpfconv *c, int f, const unsigned char *rec,
			    uint32_t rec_size)
{
	uint32_t tid;
	const struct name *n;

	if (c->name_of[f] == NAME_FROM_HEADER) {
		memcpy(&tid, rec + offsetof(struct rsp_brec_hdr, tid), 4);
	} else {
		const struct rsp_field_loc *l = &c->s->cfields[c->name_of[f]];

		if (!(l->flags & RSP_FLOC_PRESENT))
			return NULL;
		tid = (uint32_t)get_int(l, rec, rec_size);
	}
	if (!tid) { /* the idle task, as the kernel names it */
		uint16_t cpu;

		memcpy(&cpu, rec + offsetof(struct rsp_brec_hdr, cpu), 2);
		snprintf(c->idle, sizeof(c->idle), "swapper/%u", cpu);
		return c->idle;
	}
	n = rsp_kvec__find(&c->names, tid);
	if (!n)
		c->st.unnamed++;
	return n ? n->comm : NULL;
}

/* The tracepoint's raw record for @rec of @ev, at @raw (tp_size + 1 bytes, zeroed). */
static void fill_raw(struct rsp_bpfconv *c, int ev, const unsigned char *rec, uint32_t rec_size,
		     unsigned char *raw)
{
	const struct rsp_schema *s = c->s;
	uint16_t type = (uint16_t)s->tp_id[ev], size = s->tp_size[ev];
	int first, n = rsp_catalogue__event_fields(ev, &first);
	uint32_t tid;

	/* struct trace_entry: type, flags, preempt_count, pid */
	memcpy(raw, &type, 2);
	memcpy(&tid, rec + offsetof(struct rsp_brec_hdr, tid), 4);
	memcpy(raw + 4, &tid, 4);
	/* __data_loc fields: an empty string after the fixed part */
	for (unsigned i = 0; i < s->nr_tp_dyn[ev]; i++) {
		uint32_t loc = 1u << 16 | size;

		memcpy(raw + s->tp_dyn[ev][i], &loc, 4);
	}
	for (int f = first; f < first + n; f++) {
		const struct rsp_field_loc *src = &s->cfields[f], *dst = &s->fields[f];
		const char *name;

		if (!(dst->flags & RSP_FLOC_PRESENT) || (dst->flags & RSP_FLOC_DYNAMIC) ||
		    dst->offset + dst->size > size)
			continue;
		if ((src->flags & RSP_FLOC_PRESENT) && src->offset + src->size <= rec_size) {
			if (rsp_catalogue__field(f)->kind == RSP_FK_STR)
				memcpy(raw + dst->offset, rec + src->offset,
				       src->size < dst->size ? src->size : dst->size);
			else
				put_int(raw + dst->offset, dst->size, get_int(src, rec, rec_size));
		} else if (c->name_of[f] != NOT_A_NAME && (name = name_for(c, f, rec, rec_size))) {
			size_t len = strnlen(name, RSP_BPF_COMM_LEN);

			memcpy(raw + dst->offset, name, len < dst->size ? len : dst->size);
		}
	}
}

/* The callchain of a record with stacks: kernel then user, as perf writes them. */
static size_t chain(struct rsp_bpfconv *c, int kind, const unsigned char *rec, uint64_t *out,
		    size_t room)
{
	static const uint64_t ctx[2] = {PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER};
	uint64_t h[2];
	size_t n = 0;

	if (kind == RSP_BREC_SWITCH_STACK || kind == RSP_BREC_SWITCH_CHECK) {
		memcpy(&h[0], rec + offsetof(struct rsp_brec_switch_stack, kstack), 8);
		memcpy(&h[1], rec + offsetof(struct rsp_brec_switch_stack, ustack), 8);
	} else if (kind == RSP_BREC_WAKING_STACK) {
		memcpy(&h[0], rec + offsetof(struct rsp_brec_waking_stack, kstack), 8);
		memcpy(&h[1], rec + offsetof(struct rsp_brec_waking_stack, ustack), 8);
	} else {
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		const struct stack *st =
			h[i] ? rsp_kvec__find(&c->stacks, rsp_hash__key(h[i])) : NULL;

		if (h[i] && !st)
			c->st.stacks_missing++;
		if (!st || n + 1 + st->nr > room)
			continue;
		out[n++] = ctx[i];
		memcpy(out + n, st->ips, st->nr * sizeof(uint64_t));
		n += st->nr;
	}
	return n;
}

int rsp_bpfconv__sample(struct rsp_bpfconv *c, const struct perf_event_header *rec, uint64_t id,
			void *buf, size_t cap, int *ev)
{
	const unsigned char *r = (const unsigned char *)rec;
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_KERNEL};
	struct rsp_brec_hdr b;
	uint64_t *w = buf;
	size_t words, nr, raw_len, raw_block;
	int kind = rsp_bpfrec__classify(rec, rec->size, ev);

	if (kind < 0)
		return -EINVAL;
	if (!rsp_bpfconv__event(c, *ev))
		return -ENOENT;
	memcpy(&b, rec, sizeof(b));
	raw_len = c->s->tp_size[*ev] + (c->s->nr_tp_dyn[*ev] ? 1u : 0u);
	raw_block = (4 + raw_len + 7) / 8 * 8;
	if (cap < 7 * 8 + raw_block)
		return -E2BIG;
	/* {identifier, ip, pid tid, time, cpu, callchain nr + ips, raw size + raw} */
	w[1] = id;
	w[2] = 0;
	w[3] = (uint64_t)b.tid << 32 | b.pid;
	w[4] = b.time;
	w[5] = b.cpu;
	nr = chain(c, kind, r, w + 7, (cap - 7 * 8 - raw_block) / 8);
	w[6] = nr;
	words = 7 + nr;
	if ((words * 8 + raw_block) > 65535)
		return -E2BIG;
	memset(w + words, 0, raw_block);
	{
		uint32_t rs = (uint32_t)(raw_block - 4);

		memcpy(w + words, &rs, 4);
	}
	fill_raw(c, *ev, r, rec->size, (unsigned char *)(w + words) + 4);
	words += raw_block / 8;
	h.size = (uint16_t)(words * 8);
	memcpy(w, &h, sizeof(h));
	c->st.converted++;
	return (int)(words * 8);
}

void rsp_bpfconv__stats(const struct rsp_bpfconv *c, struct rsp_bpfconv_stats *st)
{
	*st = c->st;
}
