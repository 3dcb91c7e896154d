// SPDX-License-Identifier: LGPL-2.1
/*
 * The offline record source: a perf.data file's data section checked
 * record by record and placed in a window sized for it, which refers to the
 * records in the file's memory (rsp_perfdata__load()). The synthesized
 * process records are kept aside for the process model. Every offset is
 * checked (the file is untrusted); each failure is one sentence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/record.h>
#include <rsp/window.h>
#include "internal/perfdata.h"
#include "internal/schema.h"

enum rec_class {
	REC_DATA,  /* a kernel record for the window */
	REC_MODEL, /* a synthesized process record */
	REC_SKIP,  /* perf's own bookkeeping */
};

struct rec_place {
	enum rec_class cls;
	uint32_t cpu;
	uint64_t time;
	uint64_t next; /* offset of the next record */
};

/* The sample id in a non-sample record's trailer (which schema.c also reads). */
static uint64_t trailer_id(const struct rsp_perfdata *pd, uint64_t off,
			   const struct perf_event_header *h)
{
	const struct rsp_schema *s = pd->schema;
	uint64_t st = s->evsels[0].attr.sample_type;
	uint32_t words = h->size / 8, after;

	if (s->all_identifier)
		return words >= 2 ? rd64(pd, off + h->size - 8) : ~0ull;
	after = !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);
	return words >= after + 2 ? rd64(pd, off + 8ull * (words - 1 - after)) : ~0ull;
}

/* Decode a trailer with attr 0's layout: records with id 0 name no attr. */
static void id0_trailer(const struct rsp_perfdata *pd, uint64_t off,
			const struct perf_event_header *h, struct rsp_sample *smp)
{
	const struct rsp_evsel_desc *d = &pd->schema->evsels[0];
	uint64_t st = d->attr.sample_type, at = off + h->size - d->id_trailer;

	if (st & PERF_SAMPLE_TID)
		at += 8;
	smp->time = rd64(pd, at); /* every attr has TIME (check_attr) */
	at += 8 + 8 * (uint64_t)(!!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID));
	smp->cpu = (uint32_t)rd64(pd, at);
}

/* Time and CPU from a non-sample record's sample_id trailer. */
static int trailer_place(struct rsp_perfdata *pd, uint64_t off, const struct perf_event_header *h,
			 struct rec_place *pl)
{
	const struct rsp_evsel_desc *d0 = &pd->schema->evsels[0];
	struct rsp_sample smp;
	int have = rsp_record__parse_id(pd->schema, h, &smp);

	if (have == -ENOENT) {
		uint64_t id = trailer_id(pd, off, h);

		if (id)
			return rsp_perfdata__fail(
				pd, off,
				"a record of type %u carries sample id %llu, which no attr "
				"declares",
				h->type, (unsigned long long)id);
		/* A gap the window noted, or a record perf synthesized: id 0. */
		if (d0->id_trailer > h->size - sizeof(*h))
			return rsp_perfdata__fail(
				pd, off,
				"a record of %u bytes is too short for its sample_id "
				"trailer",
				h->size);
		id0_trailer(pd, off, h, &smp);
		have = RSP_SAMPLE_HAS_TIME | RSP_SAMPLE_HAS_CPU;
	}
	if (have < 0)
		return rsp_perfdata__fail(
			pd, off, "a record of type %u is too short for its sample_id trailer",
			h->type);
	pl->time = smp.time;
	pl->cpu = smp.cpu;
	return 0;
}

static int sample_place(struct rsp_perfdata *pd, uint64_t off, const struct perf_event_header *h,
			struct rec_place *pl)
{
	struct rsp_sample smp;
	int err;

	/* the checks of the parse below, without filling smp (the timeline parses it again) */
	if (!rsp_record__place_sample(pd->schema, h, &pl->time, &pl->cpu))
		return 0;
	err = rsp_record__parse_sample(pd->schema, h, &smp);
	if (err == -ENOENT)
		return rsp_perfdata__fail(
			pd, off, "a sample carries sample id %llu, which no attr declares",
			(unsigned long long)(pd->schema->all_identifier ? rd64(pd, off + 8)
									: smp.id));
	if (err)
		return rsp_perfdata__fail(pd, off, "a sample of %u bytes is malformed for event %s",
					  h->size,
					  rsp_schema__evsel_name(pd->schema, smp.evsel) ?: "?");
	pl->time = smp.time;
	pl->cpu = smp.cpu;
	return 0;
}

/*
 * Where the record at @off goes. @init: no FINISHED_INIT seen yet and the
 * file has one (records before it are the synthesized process model).
 */
static int place(struct rsp_perfdata *pd, uint64_t off, bool init, struct rec_place *pl)
{
	struct perf_event_header h;
	uint64_t end = pd->data_end;
	int err;

	if (end - off < sizeof(h))
		return rsp_perfdata__fail(pd, off, "the data section ends inside a record header");
	memcpy(&h, pd->p + off, sizeof(h));
	if (h.size < sizeof(h) || h.size > end - off)
		return rsp_perfdata__fail(pd, off, "a record of type %u claims %u bytes, %s",
					  h.type, h.size,
					  h.size < sizeof(h) ? "less than its header"
							     : "past the end of the data section");
	pl->next = off + h.size;
	pl->cls = REC_SKIP;
	/* Records are read in place: each must start on an 8-byte boundary. */
	if (h.size % 8)
		return rsp_perfdata__fail(pd, off,
					  "a record of type %u has %u bytes, not a multiple of 8",
					  h.type, h.size);
	if (h.type == RSP_PD_RECORD_COMPRESSED)
		return rsp_perfdata__fail(pd, off,
					  "the file holds compressed records (perf record -z); "
					  "decompress it with 'perf inject -i IN -o OUT'");
	if (h.type == RSP_PD_RECORD_AUXTRACE) {
		uint64_t aux = h.size >= 16 ? rd64(pd, off + 8) : ~0ull;

		if (aux > end - pl->next)
			return rsp_perfdata__fail(
				pd, off, "AUX trace data runs past the end of the data section");
		pl->next += aux;
		return 0;
	}
	if (h.type >= RSP_PD_RECORD_USER_START)
		return 0;
	if (h.type == PERF_RECORD_SAMPLE) {
		pl->cls = REC_DATA;
		err = sample_place(pd, off, (const void *)(pd->p + off), pl);
	} else if (init) {
		pl->cls = REC_MODEL;
		return 0;
	} else {
		err = trailer_place(pd, off, (const void *)(pd->p + off), pl);
		pl->cls = !err && pl->time == 0 ? REC_MODEL : REC_DATA;
	}
	if (!err && pl->cls == REC_DATA && pl->cpu >= PD_MAX_CPUS)
		return rsp_perfdata__fail(pd, off,
					  "a record says it ran on CPU %u; rsp reads up to %d CPUs",
					  pl->cpu, PD_MAX_CPUS);
	return err;
}

/* Whether the data section holds a FINISHED_INIT (records before it are the model). */
static int find_init(struct rsp_perfdata *pd, bool *has)
{
	*has = false;
	for (uint64_t off = pd->data_off; off < pd->data_end;) {
		struct perf_event_header h;
		uint64_t next;

		if (pd->data_end - off < sizeof(h))
			return rsp_perfdata__fail(pd, off,
						  "the data section ends inside a record header");
		memcpy(&h, pd->p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > pd->data_end - off)
			return rsp_perfdata__fail(
				pd, off, "a record of type %u claims %u bytes, %s", h.type, h.size,
				h.size < sizeof(h) ? "less than its header"
						   : "past the end of the data section");
		if (h.type == RSP_PD_RECORD_FINISHED_INIT) {
			*has = true;
			return 0;
		}
		next = off + h.size;
		if (h.type == RSP_PD_RECORD_AUXTRACE && h.size >= 16) {
			uint64_t aux = rd64(pd, off + 8);

			if (aux > pd->data_end - next)
				return rsp_perfdata__fail(
					pd, off,
					"AUX trace data runs past the end of the data section");
			next += aux;
		}
		off = next;
	}
	return 0;
}

/*
 * The window the checking pass fills as it goes: sized for @nr_cpus and a
 * budget it cannot exceed (no record is evicted). Every record the window
 * gets is at least 16 bytes of the data section and takes a 16-byte
 * entry; each CPU may leave one chunk part empty.
 */
static struct rsp_window *make_window(const struct rsp_perfdata *pd, uint32_t nr_cpus)
{
	struct rsp_window_config wc = {.nr_cpus = nr_cpus, .chunk_size = PD_CHUNK};
	uint64_t size = pd->data_end - pd->data_off;

	wc.budget = ((size_t)(size / 16 / (PD_CHUNK / 16)) + 2 * (size_t)nr_cpus + 2) * PD_CHUNK;
	return rsp_window__new(&wc);
}

/*
 * The side-band window (pd->side): the same bound as the window's, in
 * smaller chunks (side-band records are few; chunks are allocated as they
 * fill, so the bound is never reached).
 */
static struct rsp_window *make_side(const struct rsp_perfdata *pd, uint32_t nr_cpus)
{
	struct rsp_window_config wc = {.nr_cpus = nr_cpus, .chunk_size = PD_SIDE_CHUNK};
	uint64_t size = pd->data_end - pd->data_off;

	wc.budget = ((size_t)(size / 16 / (PD_SIDE_CHUNK / 16)) + 2 * (size_t)nr_cpus + 2) *
		    PD_SIDE_CHUNK;
	return rsp_window__new(&wc);
}

static void drop_windows(struct rsp_perfdata *pd)
{
	rsp_window__delete(pd->side);
	rsp_window__delete(pd->window);
	pd->side = pd->window = NULL;
}

static int make_windows(struct rsp_perfdata *pd, uint32_t nr_cpus)
{
	pd->window = make_window(pd, nr_cpus);
	pd->side = pd->window ? make_side(pd, nr_cpus) : NULL;
	if (pd->side)
		return 0;
	drop_windows(pd);
	return rsp_perfdata__fail(pd, pd->data_off, "no memory for a window of the file's records");
}

static int note_model(struct rsp_perfdata *pd, uint64_t off)
{
	if (pd->nr_model % 1024 == 0) {
		uint64_t *m = realloc(pd->model, (pd->nr_model + 1024) * sizeof(*m));

		if (!m)
			return -ENOMEM;
		pd->model = m;
	}
	pd->model[pd->nr_model++] = off;
	return 0;
}

/*
 * The window's references, gathered per CPU and given to it a batch at a
 * time (rsp_window__append_refs()): a chunk's counters are then updated
 * once per batch, not once per record.
 */
#define REF_BATCH 32

struct ref_batch {
	struct rsp_wref v[REF_BATCH];
	uint32_t n;
};

static int store_fail(struct rsp_perfdata *pd, const struct perf_event_header *rec, int err)
{
	return rsp_perfdata__fail(pd, (uint64_t)((const unsigned char *)rec - pd->p),
				  "the record could not be stored: %s", strerror(-err));
}

/* Give CPU @cpu's gathered references to the window. */
static int flush_refs(struct rsp_perfdata *pd, struct ref_batch *b, uint32_t cpu)
{
	int err;
	size_t done = rsp_window__append_refs(pd->window, cpu, b->v, b->n, &err);

	b->n = 0;
	return err ? store_fail(pd, b->v[done].rec, err) : 0;
}

static int flush_all(struct rsp_perfdata *pd, struct ref_batch *bs, uint32_t nr_cpus)
{
	int err = 0;

	for (uint32_t i = 0; bs && !err && i < nr_cpus; i++)
		if (bs[i].n)
			err = flush_refs(pd, &bs[i], i);
	return err;
}

/*
 * A kernel record for the window. It refers to the record where it is (the
 * mapped file or the caller's buffer, both alive and unchanged until
 * rsp_perfdata__delete(), which deletes the window first): copying would
 * only duplicate the file's pages. Records go in per CPU in file order
 * (through @bs, the window's batches; side-band records also go to the
 * side window, at once).
 */
static inline int note_data(struct rsp_perfdata *pd, uint64_t off, const struct rec_place *pl,
			    uint32_t *nr_cpus, struct ref_batch *bs)
{
	if (pl->cpu >= *nr_cpus) {
		if (pd->window)
			return -ERANGE;
		*nr_cpus = pl->cpu + 1;
	}
	if (pd->window) {
		const struct perf_event_header *rec = (const void *)(pd->p + off);
		struct ref_batch *b = &bs[pl->cpu];
		int err = 0;

		b->v[b->n].time = pl->time;
		b->v[b->n].rec = rec;
		if (++b->n == REF_BATCH && (err = flush_refs(pd, b, pl->cpu)))
			return err;
		if (rec->type != PERF_RECORD_SAMPLE &&
		    (err = rsp_window__append_ref(pd->side, pl->cpu, pl->time, rec)))
			return store_fail(pd, rec, err);
	}
	pd->info.records++;
	if (!pd->info.first_time || pl->time < pd->info.first_time)
		pd->info.first_time = pl->time;
	if (pl->time > pd->info.last_time)
		pd->info.last_time = pl->time;
	return 0;
}

/*
 * The common record, placed without place()'s classification: a sample
 * that rsp_record__place_fast() accepts, on a CPU rsp reads. Anything else
 * (and any refusal) goes through place(), which decides and words the error.
 */
static inline bool place_fast(const struct rsp_perfdata *pd, uint64_t off, struct rec_place *pl)
{
	const struct perf_event_header *h = (const void *)(pd->p + off);

	if (pd->data_end - off < sizeof(*h) || h->size > pd->data_end - off ||
	    !rsp_record__place_fast(pd->schema, h, &pl->time, &pl->cpu) || pl->cpu >= PD_MAX_CPUS)
		return false;
	pl->cls = REC_DATA;
	pl->next = off + h->size;
	return true;
}

/* How far ahead of the record it reads scan() asks for the file's lines. */
#define SCAN_AHEAD 1024

/*
 * Check every record and classify it; with pd->window, give it the
 * kernel's records. *nr_cpus: the window's CPUs (-ERANGE for a record past
 * them), or without a window, set to what the records need.
 */
static int scan(struct rsp_perfdata *pd, uint32_t *nr_cpus)
{
	struct ref_batch *bs = NULL;
	bool init;
	int err = find_init(pd, &init);

	pd->info.records = pd->info.perf_records = pd->info.process_records = 0;
	pd->info.first_time = pd->info.last_time = 0;
	pd->nr_model = 0;
	if (!err && pd->window && !(bs = calloc(*nr_cpus, sizeof(*bs))))
		return rsp_perfdata__fail(pd, pd->data_off,
					  "no memory for a window of the file's records");
	for (uint64_t off = pd->data_off; !err && off < pd->data_end;) {
		struct rec_place pl = {0};
		uint16_t type;

		/*
		 * The file is read front to back, but only each record's header,
		 * the word after its sample id and the raw data's size: the
		 * hardware's prefetcher did not keep up with the skips (three
		 * loads were 70% of this loop on a pgbench dump). Past the data's
		 * end a prefetch is only wasted, never a fault.
		 */
		__builtin_prefetch(pd->p + off + SCAN_AHEAD);
		__builtin_prefetch(pd->p + off + SCAN_AHEAD + 64);
		if (place_fast(pd, off, &pl)) { /* a sample: data wherever it is (place()) */
			err = note_data(pd, off, &pl, nr_cpus, bs);
			off = pl.next;
			continue;
		}
		memcpy(&type, pd->p + off, 2);
		if ((err = place(pd, off, init, &pl)))
			break;
		if (type == RSP_PD_RECORD_FINISHED_INIT)
			init = false;
		if (pl.cls == REC_SKIP)
			pd->info.perf_records++;
		else if (pl.cls == REC_MODEL)
			pd->info.process_records++, err = note_model(pd, off);
		else
			err = note_data(pd, off, &pl, nr_cpus, bs);
		off = pl.next;
	}
	if (!err)
		err = flush_all(pd, bs, *nr_cpus);
	free(bs);
	return err;
}

/*
 * One checking pass that fills the window, sized for the CPUs the file
 * says the machine had. Without that number, or when a record names a CPU
 * past it, a first pass finds the CPUs the records need.
 */
static int fill(struct rsp_perfdata *pd)
{
	uint32_t nr_cpus = pd->info.nr_cpus_avail <= PD_MAX_CPUS ? pd->info.nr_cpus_avail : 0;
	int ret = -ERANGE;

	if (nr_cpus) {
		ret = make_windows(pd, nr_cpus);
		if (ret)
			return ret;
		ret = scan(pd, &nr_cpus);
	}
	if (ret != -ERANGE)
		return ret;
	drop_windows(pd);
	nr_cpus = 0;
	ret = scan(pd, &nr_cpus);
	if (ret)
		return ret;
	ret = make_windows(pd, nr_cpus ? nr_cpus : 1);
	if (ret)
		return ret;
	return scan(pd, &nr_cpus);
}

/* The budget holds every record (make_window()): a check that it did. */
static int check_kept(struct rsp_perfdata *pd)
{
	struct rsp_window_stats ws;

	rsp_window__stats(pd->window, &ws);
	if (ws.records != pd->info.records || ws.evicted_records || ws.dropped)
		return rsp_perfdata__fail(
			pd, pd->data_off,
			"the window kept %llu of the file's %llu records (a bug in rsp)",
			(unsigned long long)ws.records, (unsigned long long)pd->info.records);
	return 0;
}

int rsp_perfdata__load(struct rsp_perfdata *pd, struct rsp_buf *err)
{
	int ret;

	if (pd->loaded)
		return 0;
	pd->err = err;
	if (pd->data_off % 8)
		return rsp_perfdata__fail(
			pd, 40, "the data section starts at 0x%llx, not on an 8-byte boundary",
			(unsigned long long)pd->data_off);
	ret = fill(pd);
	if (!ret)
		ret = check_kept(pd);
	if (ret == -ENOMEM && !err->len)
		rsp_buf__printf(err, "%s: out of memory while loading it", pd->info.path);
	if (ret)
		drop_windows(pd);
	pd->loaded = !ret;
	return ret;
}
