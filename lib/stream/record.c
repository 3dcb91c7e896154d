// SPDX-License-Identifier: LGPL-2.1
/*
 * Decoding of perf records, after the layout in
 * include/uapi/linux/perf_event.h (enum perf_event_type, PERF_RECORD_SAMPLE).
 * Every read is checked against the record's size: records come from dump
 * files as well as from the kernel.
 */
#include <errno.h>
#include <string.h>
#include <rsp/record.h>
#include "internal/schema.h"
#include "tracepoints/bpf_records.h"

_Static_assert(RSP_BREC_TYPE_TAG == RSP_RECORD_BPF_TAG, "one tag for rsp's BPF records");

struct cursor {
	const uint64_t *w;
	uint32_t n; /* words left */
	bool z;	    /* an RSP_RECORD_ZSAMPLE: its user stack is compressed */
};

static int take(struct cursor *c, uint32_t words, const uint64_t **out)
{
	if (words > c->n)
		return -EINVAL;
	*out = c->w;
	c->w += words;
	c->n -= words;
	return 0;
}

static int take1(struct cursor *c, uint64_t *v)
{
	const uint64_t *p;

	if (take(c, 1, &p))
		return -EINVAL;
	*v = *p;
	return 0;
}

/* The words of a PERF_SAMPLE_READ value, from attr.read_format. */
static int skip_read(struct cursor *c, uint64_t rf)
{
	uint32_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint32_t head =
		!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	const uint64_t *p;
	uint64_t nr;

	if (!(rf & PERF_FORMAT_GROUP))
		return take(c, per + head, &p);
	if (take1(c, &nr) || nr > c->n)
		return -EINVAL;
	return take(c, head + (uint32_t)nr * per, &p);
}

/* The evsel of a record, from its id or the stream's single evsel. */
static int find_evsel(const struct rsp_schema *s, uint64_t id, bool have_id)
{
	if (have_id)
		return rsp_schema__evsel_fast(s, id);
	return s->nr_evsels == 1 ? 0 : -1;
}

/* Where PERF_SAMPLE_ID sits in a sample of @st (words after the header). */
static int id_word(uint64_t st)
{
	int pos = 0;

	if (!(st & PERF_SAMPLE_ID))
		return -1;
	pos += !!(st & PERF_SAMPLE_IP);
	pos += !!(st & PERF_SAMPLE_TID);
	pos += !!(st & PERF_SAMPLE_TIME);
	pos += !!(st & PERF_SAMPLE_ADDR);
	return pos;
}

/* The evsel whose sample id is word @pos of @w (@words long). */
static int evsel_at(const struct rsp_schema *s, const uint64_t *w, uint32_t words, long pos,
		    uint64_t *id)
{
	if (pos < 0 || (uint64_t)pos >= words)
		return -EINVAL;
	*id = w[pos];
	return find_evsel(s, *id, true);
}

/*
 * Resolve which evsel a sample belongs to. Inline (the compiler left it a
 * call), with rsp's own layout (PERF_SAMPLE_IDENTIFIER: the id is the first
 * word) read first: every sample of a dump comes here twice (placed in
 * time order, then parsed).
 */
static inline __attribute__((always_inline)) int
sample_evsel(const struct rsp_schema *s, const struct perf_event_header *rec, uint64_t *id)
{
	const uint64_t *w = (const uint64_t *)(rec + 1);
	uint32_t words = (rec->size - sizeof(*rec)) / 8;

	*id = 0;
	if (s->nr_evsels == 0)
		return -ENOENT;
	if (s->all_identifier) {
		if (!words)
			return -EINVAL;
		*id = w[0];
		return rsp_schema__evsel_fast(s, *id);
	}
	if (s->nr_evsels == 1)
		return 0;
	return evsel_at(s, w, words, id_word(s->evsels[0].attr.sample_type), id);
}

static int parse_regs(struct cursor *c, const struct rsp_evsel_desc *d, struct rsp_sample *out)
{
	const uint64_t *p;

	if (take1(c, &out->user_regs_abi))
		return -EINVAL;
	if (!out->user_regs_abi)
		return 0;
	if (take(c, d->nr_user_regs, &p))
		return -EINVAL;
	out->user_regs = p;
	out->nr_user_regs = d->nr_user_regs;
	return 0;
}

static int parse_stack(struct cursor *c, struct rsp_sample *out)
{
	const uint64_t *p;
	uint64_t size, dyn;

	if (take1(c, &size))
		return -EINVAL;
	if (!size)
		return 0;
	if (size % 8 || size / 8 > c->n || take(c, (uint32_t)(size / 8), &p) || take1(c, &dyn))
		return -EINVAL;
	if (c->z) {
		/* {u32 zsize, u32 0, zsize bytes of zstd}: inflates to dyn bytes */
		uint32_t zsize = (uint32_t)p[0];

		if (size < 8 || zsize > size - 8 || (p[0] >> 32) || dyn > UINT16_MAX)
			return -EINVAL;
		out->user_stack = p + 1;
		out->user_stack_z = zsize;
		out->user_stack_size = dyn;
		return 0;
	}
	out->user_stack = p;
	out->user_stack_size = dyn < size ? dyn : size;
	return 0;
}

static int parse_intr_regs(struct cursor *c, const struct rsp_evsel_desc *d, struct rsp_sample *out)
{
	const uint64_t *p;

	if (take1(c, &out->intr_regs_abi))
		return -EINVAL;
	if (!out->intr_regs_abi)
		return 0;
	if (take(c, d->nr_intr_regs, &p))
		return -EINVAL;
	out->intr_regs = p;
	out->nr_intr_regs = d->nr_intr_regs;
	return 0;
}

/* RAW: u32 size, then size bytes, padded so that size + 4 is 8-aligned. */
static inline int take_raw(const struct cursor *c, struct rsp_sample *out)
{
	const uint8_t *b = (const uint8_t *)c->w;
	uint32_t size;

	if (c->n < 1)
		return -EINVAL;
	memcpy(&size, b, 4);
	if ((uint64_t)size + 4 > (uint64_t)c->n * 8)
		return -EINVAL;
	out->raw_size = size;
	out->raw = b + 4;
	return 0;
}

/*
 * Fields after the fixed head: READ, CALLCHAIN, RAW, BRANCH_STACK,
 * REGS_USER, STACK_USER, WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR.
 */
static int parse_tail(struct cursor *c, const struct rsp_evsel_desc *d, struct rsp_sample *out)
{
	uint64_t st = d->attr.sample_type, v;
	const uint64_t *p;

	if (st & PERF_SAMPLE_READ && skip_read(c, d->attr.read_format))
		return -EINVAL;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (take1(c, &v) || v > c->n || take(c, (uint32_t)v, &p))
			return -EINVAL;
		out->nr_callchain = v;
		out->callchain = p;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (take_raw(c, out))
			return -EINVAL;
		v = ((uint64_t)out->raw_size + 4 + 7) / 8;
		c->w += v;
		c->n -= (uint32_t)v;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint32_t hw = !!(d->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX);

		if (take1(c, &v) || v > c->n || take(c, hw + (uint32_t)v * 3, &p))
			return -EINVAL;
	}
	if (st & PERF_SAMPLE_REGS_USER && parse_regs(c, d, out))
		return -EINVAL;
	if (st & PERF_SAMPLE_STACK_USER && parse_stack(c, out))
		return -EINVAL;
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT) && take1(c, &v))
		return -EINVAL;
	if (st & PERF_SAMPLE_DATA_SRC && take1(c, &v))
		return -EINVAL;
	if (st & PERF_SAMPLE_TRANSACTION && take1(c, &v))
		return -EINVAL;
	if (st & PERF_SAMPLE_REGS_INTR && parse_intr_regs(c, d, out))
		return -EINVAL;
	return 0;
}

/* The tail when it holds no field but CALLCHAIN and RAW (as parse_tail() reads them). */
static inline int simple_tail(struct cursor *c, uint64_t st, struct rsp_sample *out)
{
	uint64_t v;

	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (!c->n || (v = c->w[0]) >= c->n)
			return -EINVAL;
		out->nr_callchain = v;
		out->callchain = c->w + 1;
		c->w += v + 1;
		c->n -= (uint32_t)v + 1;
	}
	return st & PERF_SAMPLE_RAW ? take_raw(c, out) : 0;
}

/*
 * Field by field: a memset of the struct compiles to rep stos, whose start
 * costs more than the stores (twice per record when analysing a dump).
 */
static void clear_sample(struct rsp_sample *out)
{
	_Static_assert(sizeof(struct rsp_sample) == 168, "clear_sample() must zero every field");
	out->evsel = out->event = 0;
	out->role = 0;
	out->compact = 0;
	out->id = out->ip = out->time = out->addr = out->period = 0;
	out->pid = out->tid = out->cpu = 0;
	out->nr_callchain = 0;
	out->callchain = NULL;
	out->raw_size = 0;
	out->raw = NULL;
	out->user_regs_abi = 0;
	out->nr_user_regs = 0;
	out->user_stack_z = 0;
	out->user_regs = NULL;
	out->user_stack_size = 0;
	out->user_stack = NULL;
	out->intr_regs_abi = 0;
	out->nr_intr_regs = 0;
	out->intr_regs = NULL;
}

/*
 * A record of a BPF ring as rspd's window holds it (tracepoints/
 * bpf_records.h): a sample of the schema's bpf-output evsel whose raw data
 * is the record itself, with the time, CPU and task of its header.
 */
static int parse_brec(const struct rsp_schema *s, const struct perf_event_header *rec,
		      struct rsp_sample *out)
{
	struct rsp_brec_hdr b;
	int kind;

	if (rec->size < sizeof(b) || rec->size % 8)
		return -EINVAL;
	if (!s || s->bpf_evsel < 0)
		return -ENOENT;
	memcpy(&b, rec, sizeof(b));
	kind = rsp_bpfrec__classify(rec, rec->size, &out->event);
	if (kind < 0)
		return -EINVAL;
	out->evsel = s->bpf_evsel;
	out->role = RSP_ROLE_PRIMARY;
	out->compact = (unsigned)kind;
	out->time = b.time;
	out->cpu = b.cpu;
	out->pid = b.pid;
	out->tid = b.tid;
	out->raw = rec;
	out->raw_size = rec->size;
	return 0;
}

int rsp_record__parse_sample(const struct rsp_schema *s, const struct perf_event_header *rec,
			     struct rsp_sample *out)
{
	return rsp_record__parse_fast(s, rec, out) ? 0 : rsp_record__parse_other(s, rec, out);
}

int rsp_record__parse_other(const struct rsp_schema *s, const struct perf_event_header *rec,
			    struct rsp_sample *out)
{
	const struct rsp_evsel_desc *d;
	struct cursor c;
	uint64_t st, v, id;
	int evsel;

	clear_sample(out);
	if (RSP_BREC_IS_TYPE(rec->type))
		return parse_brec(s, rec, out);
	if ((rec->type != PERF_RECORD_SAMPLE && rec->type != RSP_RECORD_ZSAMPLE) ||
	    rec->size < sizeof(*rec) || rec->size % 8)
		return -EINVAL;
	evsel = sample_evsel(s, rec, &id);
	if (evsel < 0)
		return evsel == -EINVAL ? -EINVAL : -ENOENT;
	d = &s->evsels[evsel];
	st = d->attr.sample_type;
	out->evsel = evsel;
	out->event = d->event;
	out->role = d->role;
	out->id = id;
	c.w = (const uint64_t *)(rec + 1);
	c.n = (rec->size - sizeof(*rec)) / 8;
	c.z = rec->type == RSP_RECORD_ZSAMPLE;
	if (c.z && d->tail_simple)
		return -EINVAL; /* no user stack to hold */

	/*
	 * The head, IDENTIFIER .. PERIOD, one word per field: read at the
	 * indexes add_evsel computed (schema.c: head_layout()) instead of
	 * field by field, as every sample is parsed at least twice when a
	 * dump is analysed (placed in time order, then interpreted).
	 */
	if (d->head_words > c.n)
		return -EINVAL;
	if (d->at_ip >= 0)
		out->ip = c.w[d->at_ip];
	if (d->at_tid >= 0) {
		v = c.w[d->at_tid];
		out->pid = (uint32_t)v;
		out->tid = (uint32_t)(v >> 32);
	}
	if (d->at_time >= 0)
		out->time = c.w[d->at_time];
	if (d->at_addr >= 0)
		out->addr = c.w[d->at_addr];
	if (d->at_cpu >= 0)
		out->cpu = (uint32_t)c.w[d->at_cpu];
	if (d->at_period >= 0)
		out->period = c.w[d->at_period];
	c.w += d->head_words;
	c.n -= d->head_words;
	if (d->tail_simple ? simple_tail(&c, st, out) : parse_tail(&c, d, out))
		return -EINVAL;
	if (d->role == RSP_ROLE_BPF) {
		/* a compact record: decoded as the event it stands for */
		int kind = rsp_bpfrec__classify(out->raw, out->raw_size, &out->event);

		if (kind < 0)
			return -EINVAL;
		out->compact = (unsigned)kind;
		out->role = RSP_ROLE_PRIMARY;
	}
	return 0;
}

int rsp_record__place_sample(const struct rsp_schema *s, const struct perf_event_header *rec,
			     uint64_t *time, uint32_t *cpu)
{
	const struct rsp_evsel_desc *d;
	struct rsp_sample smp;
	struct cursor c;
	uint64_t id;
	int evsel;

	if (rec->type != PERF_RECORD_SAMPLE || rec->size < sizeof(*rec) || rec->size % 8)
		goto full;
	evsel = sample_evsel(s, rec, &id);
	if (evsel < 0)
		goto full;
	d = &s->evsels[evsel];
	if (!d->tail_simple || d->role == RSP_ROLE_BPF)
		goto full;
	/* the checks of rsp_record__parse_sample(), without its stores */
	c.w = (const uint64_t *)(rec + 1);
	c.z = false;
	c.n = (rec->size - sizeof(*rec)) / 8;
	if (d->head_words > c.n)
		goto full;
	*time = d->at_time >= 0 ? c.w[d->at_time] : 0;
	*cpu = d->at_cpu >= 0 ? (uint32_t)c.w[d->at_cpu] : 0;
	c.w += d->head_words;
	c.n -= d->head_words;
	if (simple_tail(&c, d->attr.sample_type, &smp))
		goto full;
	return 0;
full:
	if (rsp_record__parse_sample(s, rec, &smp))
		return -1;
	*time = smp.time;
	*cpu = smp.cpu;
	return 0;
}

/* Which evsel a non-sample record's trailer belongs to. */
static int trailer_evsel(const struct rsp_schema *s, const struct perf_event_header *rec,
			 uint64_t *id)
{
	const uint64_t *w = (const uint64_t *)rec;
	uint32_t words = rec->size / 8;
	uint64_t st = s->nr_evsels ? s->evsels[0].attr.sample_type : 0;
	/* Without IDENTIFIER, ID comes before STREAM_ID and CPU (a shared type). */
	long after = !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);

	*id = 0;
	if (s->nr_evsels == 0)
		return -ENOENT;
	if (s->all_identifier)
		return words < 2 ? -EINVAL : evsel_at(s, w, words, (long)words - 1, id);
	if (s->nr_evsels == 1)
		return 0;
	if (!(st & PERF_SAMPLE_ID) || words < after + 2)
		return -EINVAL;
	return evsel_at(s, w, words, (long)words - 1 - after, id);
}

int rsp_record__parse_id(const struct rsp_schema *s, const struct perf_event_header *rec,
			 struct rsp_sample *out)
{
	const struct rsp_evsel_desc *d;
	const uint64_t *w;
	uint64_t st, id;
	int evsel, have = 0;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	if (rec->size < sizeof(*rec) || rec->size % 8 || rsp_record__is_sample(rec))
		return -EINVAL;
	evsel = trailer_evsel(s, rec, &id);
	if (evsel < 0)
		return evsel == -EINVAL ? -EINVAL : -ENOENT;
	d = &s->evsels[evsel];
	st = d->attr.sample_type;
	out->evsel = evsel;
	out->event = d->event;
	out->role = d->role;
	out->id = id;
	if (!d->id_trailer || d->id_trailer > rec->size - sizeof(*rec))
		return d->id_trailer ? -EINVAL : 0;
	w = (const uint64_t *)((const char *)rec + rec->size - d->id_trailer);
	i = 0;
	if (st & PERF_SAMPLE_TID) {
		out->pid = (uint32_t)w[i];
		out->tid = (uint32_t)(w[i++] >> 32);
		have |= RSP_SAMPLE_HAS_TID;
	}
	if (st & PERF_SAMPLE_TIME) {
		out->time = w[i++];
		have |= RSP_SAMPLE_HAS_TIME;
	}
	i += !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID);
	if (st & PERF_SAMPLE_CPU) {
		out->cpu = (uint32_t)w[i];
		have |= RSP_SAMPLE_HAS_CPU;
	}
	return have;
}

uint64_t rsp_record__time(const struct rsp_schema *s, const struct perf_event_header *rec)
{
	struct rsp_sample smp;

	if (rsp_record__is_sample(rec))
		return rsp_record__parse_sample(s, rec, &smp) ? 0 : smp.time;
	return rsp_record__parse_id(s, rec, &smp) > 0 ? smp.time : 0;
}

int rsp_record__task(const struct perf_event_header *rec, struct rsp_task_rec *out)
{
	if ((rec->type != PERF_RECORD_FORK && rec->type != PERF_RECORD_EXIT) ||
	    rec->size < sizeof(*rec) + sizeof(*out))
		return -EINVAL;
	memcpy(out, rec + 1, sizeof(*out));
	return 0;
}

int rsp_record__comm(const struct perf_event_header *rec, struct rsp_comm_rec *out)
{
	/* {u32 pid, tid; char comm[] (NUL-terminated, padded to 8)} + the sample_id trailer */
	const char *body = (const char *)(rec + 1);
	size_t max;

	if (rec->type != PERF_RECORD_COMM || rec->size < sizeof(*rec) + 8)
		return -EINVAL;
	max = rec->size - sizeof(*rec) - 8;
	memcpy(&out->pid, body, 4);
	memcpy(&out->tid, body + 4, 4);
	out->comm = body + 8;
	out->len = (uint32_t)strnlen(out->comm, max < 16 ? max : 16);
	out->exec = rec->misc & PERF_RECORD_MISC_COMM_EXEC;
	return 0;
}

int rsp_layout__check(const struct perf_event_attr *attr)
{
	if ((attr->sample_type & RSP_LAYOUT_SAMPLE_TYPE) != RSP_LAYOUT_SAMPLE_TYPE)
		return -EINVAL;
	if (attr->sample_type & RSP_LAYOUT_FORBIDDEN)
		return -EINVAL;
	return attr->sample_id_all ? 0 : -EINVAL;
}
