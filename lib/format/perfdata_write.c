// SPDX-License-Identifier: LGPL-2.1
/*
 * Writing perf.data (tools/perf/Documentation/perf.data-file-format.txt):
 *
 *   0      struct perf_file_header (104 bytes), written last with pwrite
 *   104    the sample ids of each attr (u64 arrays)
 *          the attrs section: { attr (128 bytes), {ids offset, ids size} }
 *          the data section: process model, FINISHED_INIT, window records
 *          with a FINISHED_ROUND every RSP_PD_ROUND records
 *          the feature table { offset, size } per feature bit, in bit order
 *          the feature sections
 *
 * perf locates the feature table at data.offset + data.size, so the data
 * section ends exactly where the table begins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rsp/perfdata.h>
#include <rsp/record.h>
#include <rsp/tidfilter.h>
#include <rsp/timeline.h>
#include <rsp/tp.h>
#include <rsp/ustackz.h>
#include "internal/bpfconv.h"
#include "internal/unfold.h"
#include "internal/schema.h"
#include "tracepoints/bpf_records.h"

#define PD_HEADER_SIZE	   104
#define PD_ATTR_SIZE	   PERF_ATTR_SIZE_VER7 /* what perf 6.1 reads */
#define PD_BUF_SIZE	   (1u << 20)
#define PD_ROUND	   16384
#define PD_NAME_ALIGN	   64
#define MISC_BUILD_ID_SIZE (1u << 15)
#define KCACHE_SIZE	   4096 /* kernel addresses already marked, direct-mapped */

_Static_assert(sizeof(struct perf_event_attr) >= PD_ATTR_SIZE, "perf_event_attr too small");

/* The words of a sample before PERF_SAMPLE_CALLCHAIN (without READ). */
#define HEAD_BITS                                                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD)

struct fevsel {
	struct perf_event_attr attr;
	char name[96];
	uint64_t *ids;
	uint32_t nr_ids, cap_ids;
};

#define ZREC_SIZE (UINT16_MAX + 1) /* a perf record's largest */

struct rsp_pdwriter {
	int fd;
	const struct rsp_schema *s;
	uint64_t off; /* file offset of buf[0] */
	unsigned char *buf;
	size_t len;
	int error; /* sticky write error */
	struct fevsel fe[RSP_SCHEMA_MAX_EVSELS + RSP_EV__NR];
	int nr_fe;
	int fe_of[RSP_SCHEMA_MAX_EVSELS];	/* schema evsel -> file evsel */
	uint16_t pad_at[RSP_SCHEMA_MAX_EVSELS]; /* byte offset of the empty callchain, 0: none */
	int synth_fe;		/* file evsel the process records are attributed to */
	struct rsp_buf pending; /* rsp_pdwriter__pending()'s records, one after another */
	uint64_t synth_id;
	uint64_t bpf_id; /* the bpf-output evsel's id: BPF ring records become its samples */
	/* BPF ring records written back as tracepoint samples: the converter and,
	 * per event, the file evsel it added (-1: none, a bpf-output sample) */
	struct rsp_bpfconv *conv;
	int conv_fe[RSP_EV__NR];
	uint64_t attrs_off, data_off;
	bool in_data; /* FINISHED_INIT written: window records now */
	uint64_t since_round;
	struct rsp_pd_stats st;
	/* copied metadata */
	char *hostname, *os_release, *arch, *version, *cpu_desc, *cpuid;
	char **argv;
	int argc;
	void *tracing;
	size_t tracing_size;
	char *boot_id; /* NULL: no RSP_PD_FEAT_RSP_HOST */
	struct rsp_sock_info *sockets;
	/* a window's compressed user stacks, written back as perf's samples */
	struct rsp_ustackz *z;
	void *zrec; /* ZREC_SIZE bytes */
	struct rsp_perfdata_meta m;
	struct rsp_buf build_ids;    /* HEADER_BUILD_ID records, ready to write */
	struct rsp_buf rsp_syscalls; /* RSP_PD_FEAT_RSP_SYSCALLS, ready to write */
	struct rsp_buf rsp_cgroups;  /* RSP_PD_FEAT_RSP_CGROUPS entries, after the header */
	struct rsp_buf rsp_trigger;  /* RSP_PD_FEAT_RSP_TRIGGER, ready to write */
	uint32_t nr_cgroups;
	bool has_cgroups;
	int nr_build_ids;
	/* Kernel symbols the records need (meta.ksyms), marked as they go. */
	uint8_t *kmarks;
	uint64_t *kcache;
	struct rsp_tidfilter *filter; /* NULL: every record; not owned */
};

/* --- output -------------------------------------------------------------- */

static int flush(struct rsp_pdwriter *w)
{
	size_t done = 0;

	while (!w->error && done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->error = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	w->off += w->len;
	w->len = 0;
	return w->error;
}

static int out(struct rsp_pdwriter *w, const void *p, size_t n)
{
	while (n && !w->error) {
		size_t room = PD_BUF_SIZE - w->len, k = n < room ? n : room;

		memcpy(w->buf + w->len, p, k);
		w->len += k;
		p = (const char *)p + k;
		n -= k;
		if (w->len == PD_BUF_SIZE)
			flush(w);
	}
	return w->error;
}

static uint64_t pos(const struct rsp_pdwriter *w)
{
	return w->off + w->len;
}

static int pwrite_all(int fd, const void *p, size_t n, uint64_t at)
{
	while (n) {
		ssize_t k = pwrite(fd, p, n, (off_t)at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p = (const char *)p + k;
		n -= (size_t)k;
		at += (uint64_t)k;
	}
	return 0;
}

/* --- file evsels ------------------------------------------------------------ */

static int add_id(struct fevsel *f, uint64_t id)
{
	if (f->nr_ids == f->cap_ids) {
		uint32_t cap = f->cap_ids ? f->cap_ids * 2 : 16;
		uint64_t *ids = realloc(f->ids, cap * sizeof(*ids));

		if (!ids)
			return -ENOMEM;
		f->ids = ids;
		f->cap_ids = cap;
	}
	f->ids[f->nr_ids++] = id;
	return 0;
}

/*
 * Two evsels of the same event and role that differ only in their
 * callchain become one attr: perf's tools bind one handler per tracepoint
 * name, and perf sched timehist measures runs between consecutive switches
 * of one evsel.
 */
static bool mergeable(const struct rsp_evsel_desc *a, const struct rsp_evsel_desc *b)
{
	struct perf_event_attr x = a->attr, y = b->attr;
	uint64_t cc = PERF_SAMPLE_CALLCHAIN;

	if (a->event < 0 || a->event != b->event || a->role != b->role)
		return false;
	if ((x.sample_type | y.sample_type) & PERF_SAMPLE_READ)
		return false;
	x.sample_type &= ~cc;
	y.sample_type &= ~cc;
	x.exclude_callchain_kernel = y.exclude_callchain_kernel = 0;
	x.exclude_callchain_user = y.exclude_callchain_user = 0;
	x.sample_max_stack = y.sample_max_stack = 0;
	return !memcmp(&x, &y, sizeof(x));
}

static void fe_name(struct fevsel *f, const struct rsp_evsel_desc *d)
{
	const struct rsp_event_info *ei = d->event >= 0 ? rsp_catalogue__event(d->event) : NULL;
	const char *base = d->name[0] ? d->name : "unknown";

	if (d->role == RSP_ROLE_BPF)
		snprintf(f->name, sizeof(f->name), "bpf-output");
	else if (ei && ei->kind == RSP_EVK_TRACEPOINT)
		snprintf(f->name, sizeof(f->name), "%s%s:%s",
			 d->role == RSP_ROLE_STACK_COPY ? RSP_PD_STACK_COPY_PREFIX : "", ei->system,
			 ei->tp);
	else if (d->role == RSP_ROLE_STACK_COPY)
		snprintf(f->name, sizeof(f->name), "%s%s", RSP_PD_STACK_COPY_PREFIX, base);
	else
		snprintf(f->name, sizeof(f->name), "%s", base);
	/* A STACK_COPY tracepoint name reads "rsp_stack_copy:sched:sched_switch". */
}

static uint16_t callchain_offset(uint64_t st)
{
	return (uint16_t)(sizeof(struct perf_event_header) +
			  8 * __builtin_popcountll(st & HEAD_BITS));
}

static int build_fevsels(struct rsp_pdwriter *w)
{
	const struct rsp_schema *s = w->s;

	for (int i = 0; i < s->nr_evsels; i++) {
		const struct rsp_evsel_desc *d = &s->evsels[i];
		int j;

		for (j = 0; j < i && !mergeable(&s->evsels[j], d); j++)
			;
		if (j < i) {
			int f = w->fe_of[j];
			uint64_t cc = PERF_SAMPLE_CALLCHAIN;

			w->fe_of[i] = f;
			if ((d->attr.sample_type & cc) && !(w->fe[f].attr.sample_type & cc)) {
				/* The new member has the callchain: its attr wins. */
				for (int k = 0; k < i; k++)
					if (w->fe_of[k] == f)
						w->pad_at[k] =
							callchain_offset(d->attr.sample_type);
				w->fe[f].attr = d->attr;
			} else if (!(d->attr.sample_type & cc) &&
				   (w->fe[f].attr.sample_type & cc)) {
				w->pad_at[i] = callchain_offset(d->attr.sample_type);
			}
			continue;
		}
		w->fe_of[i] = w->nr_fe;
		w->fe[w->nr_fe].attr = d->attr;
		fe_name(&w->fe[w->nr_fe], d);
		w->nr_fe++;
	}
	for (int i = 0; i < w->nr_fe; i++)
		w->fe[i].attr.size = PD_ATTR_SIZE;
	/* Ids, from the schema's id table. */
	for (size_t h = 0; h < s->ids.cap; h++) {
		int err;

		if (s->ids.keys[h] == UINT64_MAX || !s->ids.keys[h])
			continue; /* an empty slot (rsp_u64map), or no id */
		err = add_id(&w->fe[w->fe_of[s->ids.vals[h]]], s->ids.keys[h]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The tracepoints of the BPF records, as file evsels of their own (ids
 * RSP_BPFCONV_ID_BASE + event) unless the schema has the tracepoint already:
 * perf's tools then read the records as they read perf record's.
 */
static int add_conv_fevsels(struct rsp_pdwriter *w)
{
	const struct rsp_schema *s = w->s;

	for (int ev = 0; ev < RSP_EV__NR; ev++)
		w->conv_fe[ev] = -1;
	if (s->bpf_evsel < 0)
		return 0;
	w->conv = rsp_bpfconv__new(s);
	if (!w->conv)
		return -ENOMEM;
	for (int ev = 0; ev < RSP_EV__NR; ev++) {
		const struct rsp_event_info *ei = rsp_catalogue__event(ev);
		struct fevsel *f;
		bool have = false;
		int err;

		if (!rsp_bpfconv__event(w->conv, ev))
			continue;
		for (int i = 0; i < s->nr_evsels; i++)
			have |= s->evsels[i].event == ev && s->evsels[i].role == RSP_ROLE_PRIMARY &&
				s->evsels[i].attr.type == PERF_TYPE_TRACEPOINT;
		if (have)
			continue;
		f = &w->fe[w->nr_fe];
		memset(f, 0, sizeof(*f));
		rsp_bpfconv__attr(w->conv, ev, &s->evsels[s->bpf_evsel].attr, &f->attr);
		f->attr.size = PD_ATTR_SIZE;
		snprintf(f->name, sizeof(f->name), "%s:%s", ei->system, ei->tp);
		err = add_id(f, RSP_BPFCONV_ID_BASE + (uint64_t)ev);
		if (err)
			return err;
		w->conv_fe[ev] = w->nr_fe++;
	}
	return 0;
}

/* The process records go to the side-band evsel when there is one. */
static void pick_synth(struct rsp_pdwriter *w)
{
	w->synth_fe = 0;
	for (int i = 0; i < w->s->nr_evsels; i++)
		if (w->s->evsels[i].event == RSP_EV_sideband)
			w->synth_fe = w->fe_of[i];
	w->synth_id = w->fe[w->synth_fe].nr_ids ? w->fe[w->synth_fe].ids[0] : 0;
	if (w->s->bpf_evsel >= 0) {
		const struct fevsel *f = &w->fe[w->fe_of[w->s->bpf_evsel]];

		w->bpf_id = f->nr_ids ? f->ids[0] : 0;
	}
}

/* --- header, ids, attrs ------------------------------------------------------ */

static int write_ids_and_attrs(struct rsp_pdwriter *w)
{
	uint64_t *ids_off = calloc((size_t)w->nr_fe, sizeof(*ids_off));
	unsigned char zero[PD_HEADER_SIZE] = {0};

	if (!ids_off)
		return -ENOMEM;
	out(w, zero, sizeof(zero));
	for (int i = 0; i < w->nr_fe; i++) {
		ids_off[i] = pos(w);
		out(w, w->fe[i].ids, w->fe[i].nr_ids * sizeof(uint64_t));
	}
	w->attrs_off = pos(w);
	for (int i = 0; i < w->nr_fe; i++) {
		uint64_t sec[2] = {ids_off[i], w->fe[i].nr_ids * sizeof(uint64_t)};

		out(w, &w->fe[i].attr, PD_ATTR_SIZE);
		out(w, sec, sizeof(sec));
	}
	free(ids_off);
	w->data_off = pos(w);
	return w->error;
}

/* --- metadata copies ---------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int f_rsp_trigger(struct rsp_buf *b, const struct rsp_pd_trigger *t);

static int copy_meta(struct rsp_pdwriter *w, const struct rsp_perfdata_meta *m)
{
	w->m = *m;
	w->hostname = dup_or_empty(m->hostname);
	w->os_release = dup_or_empty(m->os_release);
	w->arch = dup_or_empty(m->arch);
	w->version = dup_or_empty(m->version);
	w->cpu_desc = dup_or_empty(m->cpu_desc);
	w->cpuid = dup_or_empty(m->cpuid);
	if (!w->hostname || !w->os_release || !w->arch || !w->version || !w->cpu_desc || !w->cpuid)
		return -ENOMEM;
	if (m->argc > 0) {
		w->argv = calloc((size_t)m->argc, sizeof(*w->argv));
		if (!w->argv)
			return -ENOMEM;
		for (w->argc = 0; w->argc < m->argc; w->argc++)
			if (!(w->argv[w->argc] = dup_or_empty(m->argv[w->argc])))
				return -ENOMEM;
	}
	if (m->boot_id && !(w->boot_id = strdup(m->boot_id)))
		return -ENOMEM;
	if (m->trigger && f_rsp_trigger(&w->rsp_trigger, m->trigger))
		return -ENOMEM;
	if (m->nr_sockets) {
		w->sockets = calloc(m->nr_sockets, sizeof(*w->sockets));
		if (!w->sockets)
			return -ENOMEM;
		memcpy(w->sockets, m->sockets, m->nr_sockets * sizeof(*w->sockets));
	}
	if (m->tracing_data && m->tracing_size) {
		w->tracing = malloc(m->tracing_size);
		if (!w->tracing)
			return -ENOMEM;
		memcpy(w->tracing, m->tracing_data, m->tracing_size);
		w->tracing_size = m->tracing_size;
	}
	if (w->tracing && m->ksyms && rsp_ksyms__count(m->ksyms) &&
	    m->tracing_kallsyms_at + 4 <= w->tracing_size) {
		w->kmarks = calloc(rsp_ksyms__count(m->ksyms) / 8 + 1, 1);
		w->kcache = calloc(KCACHE_SIZE, sizeof(*w->kcache));
		if (!w->kmarks || !w->kcache)
			return -ENOMEM;
	}
	return 0;
}

struct rsp_pdwriter *rsp_pdwriter__new(int fd, const struct rsp_schema *s,
				       const struct rsp_perfdata_meta *m, struct rsp_buf *err)
{
	struct rsp_pdwriter *w;
	int ret;

	if (!s->nr_evsels || !s->ids.count) {
		rsp_buf__puts(err, "no events to write: the schema has no evsels with ids");
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(PD_BUF_SIZE))) {
		free(w);
		rsp_buf__puts(err, "out of memory for the perf.data writer");
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	w->s = s;
	ret = copy_meta(w, m);
	if (!ret)
		ret = build_fevsels(w);
	if (!ret)
		ret = add_conv_fevsels(w);
	if (!ret) {
		pick_synth(w);
		ret = write_ids_and_attrs(w);
	}
	if (ret) {
		rsp_buf__printf(err, "cannot start the perf.data file: %s", strerror(-ret));
		rsp_pdwriter__delete(w);
		errno = -ret;
		return NULL;
	}
	return w;
}

void rsp_pdwriter__delete(struct rsp_pdwriter *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nr_fe; i++)
		free(w->fe[i].ids);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	free(w->hostname);
	free(w->os_release);
	free(w->arch);
	free(w->version);
	free(w->cpu_desc);
	free(w->cpuid);
	free(w->tracing);
	free(w->boot_id);
	free(w->sockets);
	rsp_bpfconv__delete(w->conv);
	rsp_ustackz__delete(w->z);
	free(w->zrec);
	free(w->kmarks);
	free(w->kcache);
	rsp_buf__exit(&w->build_ids);
	rsp_buf__exit(&w->rsp_syscalls);
	rsp_buf__exit(&w->rsp_cgroups);
	rsp_buf__exit(&w->rsp_trigger);
	rsp_buf__exit(&w->pending);
	free(w->buf);
	free(w);
}

void rsp_pdwriter__stats(const struct rsp_pdwriter *w, struct rsp_pd_stats *st)
{
	*st = w->st;
}

/* --- process model -------------------------------------------------------------- */

/* The sample_id trailer of the synthesis evsel: its tid, time, cpu and ids. */
static int trailer_at(struct rsp_pdwriter *w, uint32_t pid, uint32_t tid, uint64_t time,
		      uint32_t cpu)
{
	uint64_t st = w->fe[w->synth_fe].attr.sample_type, t[6];
	int n = 0;

	if (!w->fe[w->synth_fe].attr.sample_id_all)
		return 0;
	if (st & PERF_SAMPLE_TID)
		t[n++] = (uint64_t)tid << 32 | pid;
	if (st & PERF_SAMPLE_TIME)
		t[n++] = time;
	if (st & PERF_SAMPLE_ID)
		t[n++] = w->synth_id;
	if (st & PERF_SAMPLE_STREAM_ID)
		t[n++] = w->synth_id;
	if (st & PERF_SAMPLE_CPU)
		t[n++] = cpu;
	if (st & PERF_SAMPLE_IDENTIFIER)
		t[n++] = w->synth_id;
	return out(w, t, (size_t)n * 8);
}

/* Process records before the data: no time, no CPU. */
static int synth_trailer(struct rsp_pdwriter *w, uint32_t pid, uint32_t tid)
{
	return trailer_at(w, pid, tid, 0, 0);
}

static uint16_t trailer_size(const struct rsp_pdwriter *w)
{
	const struct perf_event_attr *a = &w->fe[w->synth_fe].attr;
	uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

	return a->sample_id_all ? (uint16_t)(8 * __builtin_popcountll(a->sample_type & bits)) : 0;
}

/* A process record: header, fixed body, a string padded to 8, the trailer. */
static int synth(struct rsp_pdwriter *w, uint32_t type, uint16_t misc, const void *body,
		 size_t body_len, const char *str, uint32_t pid, uint32_t tid)
{
	static const unsigned char zeros[8];
	size_t slen = str ? strlen(str) + 1 : 0, spad = (slen + 7) & ~(size_t)7;
	size_t size = sizeof(struct perf_event_header) + body_len + spad + trailer_size(w);
	struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)size};

	if (w->in_data)
		return -EINVAL;
	if (size > 65535 - 8)
		return -E2BIG;
	out(w, &h, sizeof(h));
	out(w, body, body_len);
	if (str) {
		out(w, str, slen);
		out(w, zeros, spad - slen);
	}
	synth_trailer(w, pid, tid);
	w->st.process_records++;
	return w->error;
}

/* A process record of threads the filter leaves out is not written (0). */
static bool filtered_out(const struct rsp_pdwriter *w, uint32_t pid, uint32_t tid)
{
	return w->filter && !rsp_tidfilter__has(w->filter, pid) &&
	       !rsp_tidfilter__has(w->filter, tid);
}

int rsp_pdwriter__comm(struct rsp_pdwriter *w, uint32_t pid, uint32_t tid, const char *comm)
{
	uint32_t body[2] = {pid, tid};
	char c[16];

	if (filtered_out(w, pid, tid))
		return 0;

	snprintf(c, sizeof(c), "%s", comm ? comm : "");
	return synth(w, PERF_RECORD_COMM, 0, body, sizeof(body), c, pid, tid);
}

int rsp_pdwriter__fork(struct rsp_pdwriter *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		       uint32_t ptid)
{
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} body = {pid, ppid, tid, ptid, 0};

	if (filtered_out(w, pid, tid))
		return 0;
	return synth(w, PERF_RECORD_FORK, 0, &body, sizeof(body), NULL, pid, tid);
}

int rsp_pdwriter__mmap2(struct rsp_pdwriter *w, const struct rsp_pd_mmap2 *m)
{
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
	} body = {m->pid, m->tid, m->start, m->len,  m->pgoff, m->maj,
		  m->min, m->ino, 0,	    m->prot, m->flags};

	if (filtered_out(w, m->pid, m->tid))
		return 0;
	return synth(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &body, sizeof(body),
		     m->filename ? m->filename : "//anon", m->pid, m->tid);
}

int rsp_pdwriter__kernel_mmap(struct rsp_pdwriter *w, uint64_t start, uint64_t len, uint64_t pgoff,
			      const char *name)
{
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} body = {UINT32_MAX, 0, start, len, pgoff};

	return synth(w, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &body, sizeof(body), name,
		     UINT32_MAX, 0);
}

int rsp_pdwriter__build_id(struct rsp_pdwriter *w, const struct rsp_pd_build_id *b)
{
	struct {
		struct perf_event_header h;
		int32_t pid;
		uint8_t data[20];
		uint8_t size, res1;
		uint16_t res2;
	} __attribute__((packed)) rec;
	size_t nlen = strlen(b->path) + 1;
	size_t padded = (nlen + PD_NAME_ALIGN - 1) / PD_NAME_ALIGN * PD_NAME_ALIGN;
	static const unsigned char zeros[PD_NAME_ALIGN];
	int err;

	if (b->size > 20 || padded + sizeof(rec) > 65535)
		return -EINVAL;
	memset(&rec, 0, sizeof(rec));
	rec.h.misc = (uint16_t)((b->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) |
				MISC_BUILD_ID_SIZE);
	rec.h.size = (uint16_t)(sizeof(rec) + padded);
	rec.pid = -1; /* perf's HOST_KERNEL_ID: the host machine */
	memcpy(rec.data, b->id, b->size);
	rec.size = b->size;
	err = rsp_buf__add(&w->build_ids, &rec, sizeof(rec));
	if (!err)
		err = rsp_buf__add(&w->build_ids, b->path, nlen);
	if (!err)
		err = rsp_buf__add(&w->build_ids, zeros, padded - nlen);
	w->nr_build_ids += !err;
	return err;
}

/* --- window records ------------------------------------------------------------------ */

static int marker(struct rsp_pdwriter *w, uint32_t type)
{
	struct perf_event_header h = {.type = type, .misc = 0, .size = sizeof(h)};

	return out(w, &h, sizeof(h));
}

static int enter_data(struct rsp_pdwriter *w)
{
	if (w->in_data)
		return 0;
	w->in_data = true;
	return marker(w, RSP_PD_RECORD_FINISHED_INIT);
}

/* Which schema evsel a record belongs to; -1 for an id-0 record (a gap). */
static int record_evsel(const struct rsp_schema *s, const struct perf_event_header *rec)
{
	struct rsp_sample smp;
	const uint64_t *wd = (const uint64_t *)rec;

	if (rec->type == PERF_RECORD_SAMPLE) {
		if (s->all_identifier && rec->size >= 16)
			return rsp_schema__evsel_by_id(s, wd[1]);
		return rsp_record__parse_sample(s, rec, &smp) ? -1 : smp.evsel;
	}
	return -1;
}

/* --- kernel symbols ------------------------------------------------------------------ */

/* Kernel addresses are the upper half; PERF_CONTEXT_* markers are not addresses. */
static void mark_kernel(struct rsp_pdwriter *w, uint64_t a)
{
	uint64_t *slot = &w->kcache[(a ^ a >> 12) % KCACHE_SIZE];

	if (!(a >> 63) || a >= PERF_CONTEXT_MAX || *slot == a)
		return;
	*slot = a;
	/* Return addresses are looked up at a - 1 (the call), sample ips at a. */
	rsp_ksyms__mark(w->m.ksyms, a, w->kmarks);
	rsp_ksyms__mark(w->m.ksyms, a - 1, w->kmarks);
}

static void mark_sample(struct rsp_pdwriter *w, const struct perf_event_header *rec)
{
	struct rsp_sample smp;

	if (!w->kmarks || !rsp_record__is_sample(rec) || rsp_record__parse_sample(w->s, rec, &smp))
		return;
	mark_kernel(w, smp.ip);
	for (uint64_t i = 0; i < smp.nr_callchain; i++)
		mark_kernel(w, smp.callchain[i]);
	if (smp.compact == RSP_BREC_STACK) {
		struct rsp_brec_stack st;
		uint64_t ip;

		memcpy(&st, smp.raw, sizeof(st));
		for (uint16_t i = 0; st.which == RSP_BSTACK_KERNEL && i < st.nr; i++) {
			memcpy(&ip, (const char *)smp.raw + sizeof(st) + i * 8u, 8);
			mark_kernel(w, ip);
		}
	}
	/*
	 * Kernel addresses in fields: the timeline tells a sleeper's timeout
	 * (callback hrtimer_wakeup) by the symbol of hrtimer_start's function;
	 * without it in the file, an offline timeline would not know the timer.
	 */
	if (smp.event == RSP_EV_hrtimer_start) {
		struct rsp_tp_hrtimer_start h;

		if (!rsp_tp__hrtimer_start(w->s, &smp, &h))
			mark_kernel(w, (uint64_t)h.function);
	} else if (smp.event == RSP_EV_hrtimer_expire_entry) {
		struct rsp_tp_hrtimer_expire_entry h;

		if (!rsp_tp__hrtimer_expire_entry(w->s, &smp, &h))
			mark_kernel(w, (uint64_t)h.function);
	}
}

/* The tracing data with the marked kernel symbols in its kallsyms slot. */
static int f_tracing(struct rsp_pdwriter *w, struct rsp_buf *b)
{
	size_t at = w->m.tracing_kallsyms_at, start;
	uint32_t len;
	int err;

	if (!w->kmarks)
		return rsp_buf__add(b, w->tracing, w->tracing_size);
	err = rsp_buf__add(b, w->tracing, at + 4);
	start = b->len;
	if (!err)
		err = rsp_ksyms__write_marked(w->m.ksyms, w->kmarks, b);
	if (err || b->len - start > UINT32_MAX)
		return err ? err : -E2BIG;
	len = (uint32_t)(b->len - start);
	memcpy(b->data + start - 4, &len, 4);
	for (size_t i = start; i < b->len; i++)
		w->st.kernel_symbols += b->data[i] == '\n';
	return rsp_buf__add(b, (const char *)w->tracing + at + 4, w->tracing_size - at - 4);
}

/* A record is in the file: its time, the counts, a round every PD_ROUND records. */
static int counted(struct rsp_pdwriter *w, const struct perf_event_header *rec, uint64_t t)
{
	if (t && (!w->st.first_time || t < w->st.first_time))
		w->st.first_time = t;
	if (t > w->st.last_time)
		w->st.last_time = t;
	w->st.records++;
	w->st.lost_records += rec->type == PERF_RECORD_LOST;
	if (++w->since_round == PD_ROUND) {
		w->since_round = 0;
		marker(w, RSP_PD_RECORD_FINISHED_ROUND);
	}
	return w->error;
}

/*
 * A BPF COMM record as perf's PERF_RECORD_COMM at its time: a thread's
 * name where the record gave it, for perf's tools and rsp's reader alike.
 */
static int add_comm(struct rsp_pdwriter *w, const struct perf_event_header *rec)
{
	static const unsigned char zeros[8];
	struct rsp_brec_comm r;
	uint32_t body[2];
	size_t slen, size;
	struct perf_event_header h = {.type = PERF_RECORD_COMM};

	memcpy(&r, rec, sizeof(r));
	r.comm[sizeof(r.comm) - 1] = '\0';
	slen = strlen(r.comm) + 1;
	size = sizeof(h) + sizeof(body) + ((slen + 7) & ~(size_t)7) + trailer_size(w);
	h.size = (uint16_t)size;
	body[0] = r.pid;
	body[1] = r.tid;
	out(w, &h, sizeof(h));
	out(w, body, sizeof(body));
	out(w, r.comm, slen);
	out(w, zeros, ((slen + 7) & ~(size_t)7) - slen);
	trailer_at(w, r.pid, r.tid, r.h.time, r.h.cpu);
	return counted(w, &h, r.h.time);
}

/*
 * A BPF ring's record as its tracepoint's sample (internal/bpfconv.h):
 * -ENOENT if its event is not converted (then it goes as bpf-output).
 */
static int add_converted(struct rsp_pdwriter *w, const struct perf_event_header *rec, uint64_t t)
{
	uint64_t buf[8192 / 8];
	int ev, n = rsp_bpfconv__sample(w->conv, rec, 0, buf, sizeof(buf), &ev);

	if (n < 0)
		return n;
	if (w->conv_fe[ev] < 0)
		return -ENOENT;
	buf[1] = w->fe[w->conv_fe[ev]].ids[0];
	out(w, buf, (size_t)n);
	if (w->kmarks) {
		for (uint64_t i = 0; i < buf[6]; i++)
			mark_kernel(w, buf[7 + i]);
		mark_sample(w, rec); /* a timer's function */
	}
	return counted(w, (const struct perf_event_header *)buf, t);
}

/*
 * A BPF ring's record (tracepoints/bpf_records.h) as perf.data holds it: a
 * sample of the bpf-output evsel whose raw data is the record, {identifier,
 * ip, pid tid, time, cpu, raw}: perf script shows it as bpf-output, rsp
 * decodes the raw data as the record it is.
 */
static int bpf_as_sample(struct rsp_pdwriter *w, const struct perf_event_header *rec, uint64_t *buf,
			 size_t cap)
{
	struct rsp_brec_hdr b;
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_KERNEL};
	uint32_t raw = rec->size;
	size_t n = 6 + (4 + raw + 7) / 8; /* words */

	if (!w->bpf_id)
		return -ENOENT;
	if (rec->size < sizeof(b) || n * 8 > cap || n * 8 > 65535)
		return -E2BIG;
	memcpy(&b, rec, sizeof(b));
	memset(buf, 0, n * 8);
	h.size = (uint16_t)(n * 8);
	memcpy(buf, &h, sizeof(h));
	buf[1] = w->bpf_id;
	buf[3] = (uint64_t)b.tid << 32 | b.pid;
	buf[4] = b.time;
	buf[5] = b.cpu;
	memcpy(&buf[6], &raw, 4);
	memcpy((char *)&buf[6] + 4, rec, raw);
	return 0;
}

/* One record whose time the caller knows (0: unknown). */
static int add_record(struct rsp_pdwriter *w, const struct perf_event_header *rec, uint64_t t)
{
	static const uint64_t zero;
	uint64_t conv[(8 + 48 + 4 + sizeof(struct rsp_brec_stack) + RSP_BPF_MAX_STACK * 8) / 8 + 1];
	int ev;

	if (rec->size < sizeof(*rec) || rec->size % 8)
		return -EINVAL;
	if (enter_data(w))
		return w->error;
	if (rec->type == RSP_RECORD_ZSAMPLE) {
		/* the sample the kernel wrote, its stack cut to what it copied */
		int n;

		if (!w->zrec) {
			w->z = w->z ? w->z : rsp_ustackz__new();
			w->zrec = w->z ? malloc(ZREC_SIZE) : NULL;
			if (!w->zrec)
				return -ENOMEM;
		}
		n = rsp_ustackz__expand(w->z, w->s, rec, w->zrec, ZREC_SIZE);
		if (n < 0)
			return n;
		rec = w->zrec;
	}
	if (RSP_BREC_IS_TYPE(rec->type)) {
		int err = w->conv ? rsp_bpfconv__learn(w->conv, rec) : 0;

		if (err < 0)
			return err;
		/*
		 * A name: as perf's COMM. A stack: in the samples it serves, and
		 * as itself (a bpf-output sample), so that a query of the file
		 * reads the records the window held.
		 */
		if (err && RSP_BREC_TYPE_KIND(rec->type) == RSP_BREC_COMM)
			return add_comm(w, rec);
		err = err ? -ENOENT : w->conv ? add_converted(w, rec, t) : -ENOENT;
		if (err != -ENOENT)
			return err;
		err = bpf_as_sample(w, rec, conv, sizeof(conv));
		if (err)
			return err;
		rec = (const struct perf_event_header *)conv;
	}
	if (enter_data(w))
		return w->error;
	ev = record_evsel(w->s, rec);
	if (rec->type == PERF_RECORD_SAMPLE && ev < 0)
		return -ENOENT;
	if (ev >= 0 && w->pad_at[ev] && (w->pad_at[ev] > rec->size || rec->size > 65535 - 8))
		return -E2BIG; /* no room for the empty callchain: perf would misread it */
	if (ev >= 0 && w->pad_at[ev]) {
		struct perf_event_header h = *rec;

		h.size = (uint16_t)(h.size + 8);
		out(w, &h, sizeof(h));
		out(w, rec + 1, w->pad_at[ev] - sizeof(h));
		out(w, &zero, 8);
		out(w, (const char *)rec + w->pad_at[ev], rec->size - w->pad_at[ev]);
		w->st.padded_records++;
	} else {
		out(w, rec, rec->size);
	}
	mark_sample(w, rec);
	return counted(w, rec, t);
}

void rsp_pdwriter__filter(struct rsp_pdwriter *w, struct rsp_tidfilter *f)
{
	w->filter = f;
}

bool rsp_pdwriter__keeps(const struct rsp_pdwriter *w, uint32_t tid)
{
	return !w->filter || rsp_tidfilter__has(w->filter, tid);
}

/* One record of the window's, in time order: written, or only learnt from (before @from). */
static int window_record(struct rsp_pdwriter *w, const struct rsp_wentry *e, uint64_t from)
{
	int err;

	if (e->time < from || (w->filter && !rsp_tidfilter__keep(w->filter, e->rec))) {
		if (RSP_BREC_IS_TYPE(e->rec->type) && rsp_bpfconv__learn(w->conv, e->rec) < 0)
			return -ENOMEM;
		return 0;
	}
	err = add_record(w, e->rec, e->time);
	if (err == -ENOENT || err == -EINVAL || err == -E2BIG)
		err = 0; /* not one of the schema's, or unwritable: left out */
	return err;
}

int rsp_pdwriter__pending(struct rsp_pdwriter *w, const struct perf_event_header *rec)
{
	if (rec->size < sizeof(*rec) || rec->size % 8)
		return -EINVAL;
	return rsp_buf__add(&w->pending, rec, rec->size);
}

/* The pending records after the window's, into the unfolder: their events in place. */
/* One record into the unfolder, and out of it what is ready: written. */
static int through(struct rsp_pdwriter *w, struct rsp_unfold *u, const struct rsp_wentry *e,
		   uint64_t from)
{
	struct rsp_wentry o;
	int err = rsp_unfold__push(u, e);

	while (!err && rsp_unfold__pop(u, &o, false))
		err = window_record(w, &o, from);
	return err;
}

static int push_pending(struct rsp_pdwriter *w, struct rsp_unfold *u, uint64_t from)
{
	struct rsp_wentry e;
	size_t at = 0;
	int err = 0;

	while (!err && u && at + sizeof(struct perf_event_header) <= w->pending.len) {
		e.rec = (const void *)(w->pending.data + at);
		at += e.rec->size;
		if (!RSP_BREC_IS_TYPE(e.rec->type))
			continue;
		e.time = ((const struct rsp_brec_hdr *)e.rec)->time;
		e.cpu = ((const struct rsp_brec_hdr *)e.rec)->cpu;
		err = through(w, u, &e, from);
	}
	return err;
}

int rsp_pdwriter__window(struct rsp_pdwriter *w, struct rsp_window *win, uint64_t from, uint64_t to)
{
	/* From the window's start when BPF records name threads and stacks once */
	uint64_t start = w->conv ? 0 : from;
	/* and past @to, for the events BPF records after it carry from before it */
	uint64_t ahead = w->conv && to < UINT64_MAX - RSP_TIMELINE_READ_AHEAD_NS
				 ? to + RSP_TIMELINE_READ_AHEAD_NS
				 : to;
	/*
	 * Each record is copied out as it comes: a compressed window's chunks
	 * are decompressed one at a time (rsp_window__pin_stream()), not all at
	 * once. Not with a filter: it remembers records by address, from its
	 * scan to the keep()s, which needs them where they are for both passes.
	 */
	struct rsp_wsnap *snap = w->filter ? rsp_window__pin(win, start, ahead)
					   : rsp_window__pin_stream(win, start, ahead);
	struct rsp_witer *it = snap ? rsp_witer__new(snap, start, ahead) : NULL;
	/* folded BPF records' events written at their own times, as the kernel's */
	struct rsp_unfold *u = w->conv ? rsp_unfold__new(!w->filter) : NULL;
	struct rsp_wentry e, o;
	int err = it && (u || !w->conv) ? enter_data(w) : -ENOMEM;

	if (u) {
		rsp_unfold__set_range(u, 0, to);
		/* perf flags a record older than its last round: a second for late events */
		rsp_unfold__set_delay(u, RSP_TIMELINE_READ_AHEAD_NS);
	}
	/* The whole window: children forked before @from, sockets used before it. */
	if (!err && w->filter)
		err = rsp_tidfilter__scan(w->filter, snap, 0, to);
	while (!err && rsp_witer__next(it, &e)) {
		if (!u) {
			err = e.time <= to ? window_record(w, &e, from) : 0;
			continue;
		}
		err = through(w, u, &e, from);
	}
	if (!err)
		err = push_pending(w, u, from);
	while (!err && u && rsp_unfold__pop(u, &o, true))
		err = window_record(w, &o, from);
	if (!err && it && rsp_witer__error(it))
		err = -rsp_witer__error(it);
	rsp_unfold__delete(u);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	return err;
}

/* --- features ----------------------------------------------------------------------------- */

static int f_string(struct rsp_buf *b, const char *s)
{
	static const unsigned char zeros[PD_NAME_ALIGN];
	uint32_t olen = (uint32_t)strlen(s) + 1;
	uint32_t len = (olen + PD_NAME_ALIGN - 1) / PD_NAME_ALIGN * PD_NAME_ALIGN;
	int err = rsp_buf__add(b, &len, 4);

	if (!err)
		err = rsp_buf__add(b, s, olen);
	return err ? err : rsp_buf__add(b, zeros, len - olen);
}

static int f_u32s(struct rsp_buf *b, uint32_t a, uint32_t c)
{
	uint32_t v[2] = {a, c};

	return rsp_buf__add(b, v, sizeof(v));
}

static int f_u64s(struct rsp_buf *b, uint64_t a, uint64_t c, int n)
{
	uint64_t v[2] = {a, c};

	return rsp_buf__add(b, v, (size_t)n * 8);
}

static int f_cmdline(struct rsp_pdwriter *w, struct rsp_buf *b)
{
	uint32_t n = (uint32_t)w->argc;
	int err = rsp_buf__add(b, &n, 4);

	for (int i = 0; !err && i < w->argc; i++)
		err = f_string(b, w->argv[i]);
	return err;
}

static int f_event_desc(struct rsp_pdwriter *w, struct rsp_buf *b)
{
	int err = f_u32s(b, (uint32_t)w->nr_fe, PD_ATTR_SIZE);

	for (int i = 0; !err && i < w->nr_fe; i++) {
		const struct fevsel *f = &w->fe[i];

		err = rsp_buf__add(b, &f->attr, PD_ATTR_SIZE);
		if (!err)
			err = rsp_buf__add(b, &f->nr_ids, 4);
		if (!err)
			err = f_string(b, f->name);
		if (!err)
			err = rsp_buf__add(b, f->ids, f->nr_ids * sizeof(uint64_t));
	}
	return err;
}

static int f_clock_data(struct rsp_pdwriter *w, struct rsp_buf *b)
{
	int err = f_u32s(b, 1, (uint32_t)w->m.clockid);

	return err ? err : f_u64s(b, w->m.wall_clock_ns, w->m.clockid_time_ns, 2);
}

/* RSP_PD_FEAT_RSP_TRIGGER (layout in rsp/perfdata.h), rendered when the writer is made. */
static int f_rsp_trigger(struct rsp_buf *b, const struct rsp_pd_trigger *t)
{
	uint32_t version = 1;
	int err = rsp_buf__add(b, &version, 4);

	if (!err)
		err = f_string(b, t->name ? t->name : "");
	if (!err)
		err = f_string(b, t->condition ? t->condition : "");
	if (!err)
		err = f_string(b, t->value ? t->value : "");
	return err ? err : f_u64s(b, t->trip_ns, t->post_ns, 2);
}

/* RSP_PD_FEAT_RSP_HOST (layout in rsp/perfdata.h). */
static int f_rsp_host(struct rsp_pdwriter *w, struct rsp_buf *b)
{
	uint32_t version = 1;
	int err = rsp_buf__add(b, &version, 4);

	if (!err)
		err = f_string(b, w->boot_id);
	if (!err)
		err = f_u32s(b, (uint32_t)w->m.nr_sockets, 56);
	for (size_t i = 0; !err && i < w->m.nr_sockets; i++) {
		const struct rsp_sock_info *si = &w->sockets[i];
		uint8_t e[56] = {0};

		memcpy(e, &si->sk, 8);
		e[8] = si->proto;
		e[9] = si->state;
		memcpy(e + 12, &si->inode, 4);
		memcpy(e + 16, &si->local, 20);
		memcpy(e + 36, &si->remote, 20);
		err = rsp_buf__add(b, e, sizeof(e));
	}
	return err;
}

/* RSP_PD_FEAT_RSP_CGROUPS (layout in rsp/perfdata.h). */
static int f_rsp_cgroups(struct rsp_pdwriter *w, struct rsp_buf *b)
{
	int err = f_u32s(b, 1, w->nr_cgroups);

	return err ? err : rsp_buf__add(b, w->rsp_cgroups.data, w->rsp_cgroups.len);
}

/* Render feature @feat into @b; 1 if the file has nothing for it. */
static int feature(struct rsp_pdwriter *w, int feat, struct rsp_buf *b)
{
	switch (feat) {
	case RSP_PD_FEAT_TRACING_DATA:
		return w->tracing ? f_tracing(w, b) : 1;
	case RSP_PD_FEAT_BUILD_ID:
		return w->nr_build_ids ? rsp_buf__add(b, w->build_ids.data, w->build_ids.len) : 1;
	case RSP_PD_FEAT_HOSTNAME:
		return f_string(b, w->hostname);
	case RSP_PD_FEAT_OSRELEASE:
		return f_string(b, w->os_release);
	case RSP_PD_FEAT_VERSION:
		return f_string(b, w->version);
	case RSP_PD_FEAT_ARCH:
		return f_string(b, w->arch);
	case RSP_PD_FEAT_NRCPUS:
		return f_u32s(b, w->m.nr_cpus_avail, w->m.nr_cpus_online);
	case RSP_PD_FEAT_CPUDESC:
		return w->cpu_desc[0] ? f_string(b, w->cpu_desc) : 1;
	case RSP_PD_FEAT_CPUID:
		return w->cpuid[0] ? f_string(b, w->cpuid) : 1;
	case RSP_PD_FEAT_TOTAL_MEM:
		return w->m.total_mem_kb ? f_u64s(b, w->m.total_mem_kb, 0, 1) : 1;
	case RSP_PD_FEAT_CMDLINE:
		return w->argc ? f_cmdline(w, b) : 1;
	case RSP_PD_FEAT_EVENT_DESC:
		return f_event_desc(w, b);
	case RSP_PD_FEAT_SAMPLE_TIME:
		return f_u64s(b, w->st.first_time, w->st.last_time, 2);
	case RSP_PD_FEAT_CLOCKID:
		return w->m.clockid_res_ns ? f_u64s(b, w->m.clockid_res_ns, 0, 1) : 1;
	case RSP_PD_FEAT_CLOCK_DATA:
		return w->m.wall_clock_ns ? f_clock_data(w, b) : 1;
	case RSP_PD_FEAT_RSP_HOST:
		return w->boot_id ? f_rsp_host(w, b) : 1;
	case RSP_PD_FEAT_RSP_SYSCALLS:
		return w->rsp_syscalls.len
			       ? rsp_buf__add(b, w->rsp_syscalls.data, w->rsp_syscalls.len)
			       : 1;
	case RSP_PD_FEAT_RSP_CGROUPS:
		return w->has_cgroups ? f_rsp_cgroups(w, b) : 1;
	case RSP_PD_FEAT_RSP_TRIGGER:
		return w->rsp_trigger.len ? rsp_buf__add(b, w->rsp_trigger.data, w->rsp_trigger.len)
					  : 1;
	default:
		return 1;
	}
}

static const int features[] = {
	RSP_PD_FEAT_TRACING_DATA, RSP_PD_FEAT_BUILD_ID,	    RSP_PD_FEAT_HOSTNAME,
	RSP_PD_FEAT_OSRELEASE,	  RSP_PD_FEAT_VERSION,	    RSP_PD_FEAT_ARCH,
	RSP_PD_FEAT_NRCPUS,	  RSP_PD_FEAT_CPUDESC,	    RSP_PD_FEAT_CPUID,
	RSP_PD_FEAT_TOTAL_MEM,	  RSP_PD_FEAT_CMDLINE,	    RSP_PD_FEAT_EVENT_DESC,
	RSP_PD_FEAT_SAMPLE_TIME,  RSP_PD_FEAT_CLOCKID,	    RSP_PD_FEAT_CLOCK_DATA,
	RSP_PD_FEAT_RSP_HOST,	  RSP_PD_FEAT_RSP_SYSCALLS, RSP_PD_FEAT_RSP_CGROUPS,
	RSP_PD_FEAT_RSP_TRIGGER,
};
#define NR_FEATURES (int)(sizeof(features) / sizeof(features[0]))

/* Feature sections after the table; fills the table and the flag bits. */
static int write_features(struct rsp_pdwriter *w, uint64_t flags[4])
{
	struct rsp_buf bodies[NR_FEATURES];
	uint64_t table[2 * NR_FEATURES], at;
	int n = 0, err = 0;

	memset(bodies, 0, sizeof(bodies));
	for (int i = 0; !err && i < NR_FEATURES; i++) {
		int r = feature(w, features[i], &bodies[n]);

		if (r < 0)
			err = r;
		else if (r == 0) {
			flags[features[i] / 64] |= 1ull << (features[i] % 64);
			n++;
		} else {
			rsp_buf__reset(&bodies[n]);
		}
	}
	at = pos(w) + (uint64_t)n * 16;
	for (int i = 0; !err && i < n; i++) {
		table[2 * i] = at;
		table[2 * i + 1] = bodies[i].len;
		at += bodies[i].len;
	}
	if (!err)
		out(w, table, (size_t)n * 16);
	for (int i = 0; !err && i < n; i++)
		out(w, bodies[i].data, bodies[i].len);
	for (int i = 0; i < NR_FEATURES; i++)
		rsp_buf__exit(&bodies[i]);
	return err ? err : w->error;
}

int rsp_pdwriter__rsp_syscalls(struct rsp_pdwriter *w, const void *buf, size_t len)
{
	rsp_buf__reset(&w->rsp_syscalls);
	return rsp_buf__add(&w->rsp_syscalls, buf, len);
}

int rsp_pdwriter__rsp_cgroup(struct rsp_pdwriter *w, uint32_t pid, uint32_t nspid, uint64_t time,
			     const char *path)
{
	uint32_t v[2] = {pid, nspid};
	int err;

	if (!path || strlen(path) >= 4096 || w->nr_cgroups == UINT32_MAX)
		return -EINVAL;
	w->has_cgroups = true;
	err = rsp_buf__add(&w->rsp_cgroups, v, sizeof(v));
	if (!err)
		err = rsp_buf__add(&w->rsp_cgroups, &time, 8);
	if (!err)
		err = f_string(&w->rsp_cgroups, path);
	if (!err)
		w->nr_cgroups++;
	return err;
}

int rsp_pdwriter__finish(struct rsp_pdwriter *w)
{
	struct {
		char magic[8];
		uint64_t size, attr_size;
		uint64_t attrs[2], data[2], event_types[2];
		uint64_t flags[4];
	} hdr;
	int err;

	if (enter_data(w))
		return w->error;
	if (w->since_round)
		marker(w, RSP_PD_RECORD_FINISHED_ROUND);
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, "PERFILE2", 8);
	hdr.size = PD_HEADER_SIZE;
	hdr.attr_size = PD_ATTR_SIZE + 16;
	hdr.attrs[0] = w->attrs_off;
	hdr.attrs[1] = (uint64_t)w->nr_fe * hdr.attr_size;
	hdr.data[0] = w->data_off;
	hdr.data[1] = pos(w) - w->data_off;
	err = write_features(w, hdr.flags);
	if (!err)
		err = flush(w);
	if (!err)
		err = pwrite_all(w->fd, &hdr, sizeof(hdr), 0);
	w->st.bytes = w->off;
	return err;
}
