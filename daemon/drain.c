// SPDX-License-Identifier: GPL-2.0
/*
 * The drain: copy records from the per-CPU rings into the window.
 *
 * This is the hot path. Per record: read the header, take the time at its
 * fixed offset (rsp's layout, checked at open), count it, copy it. No
 * allocation (the window allocates per chunk, and reuses evicted chunks),
 * no string work, no event lookup.
 */
#include <stdlib.h>
#include <perf/event.h>
#include <perf/mmap.h>
#include <rsp/record.h>
#include "drain.h"
#include "sbq.h"

int rsp_drain__init(struct rsp_drain *d, struct rsp_evset *es, struct rsp_window *w)
{
	for (int i = 0; i < RSP_EVSET_MAX; i++) {
		atomic_init(&d->delivered[i], 0);
		atomic_init(&d->checked_fired[i], 0);
		atomic_init(&d->checked_delivered[i], 0);
		atomic_init(&d->checked_counted[i], false);
	}
	atomic_init(&d->drained_to, 0);
	d->es = es;
	d->window = w;
	d->cpu = calloc(es->max_cpu ? es->max_cpu : 1, sizeof(*d->cpu));
	return d->cpu ? 0 : -1;
}

void rsp_drain__exit(struct rsp_drain *d)
{
	free(d->cpu);
	d->cpu = NULL;
}

static void add(_Atomic uint64_t *c, uint64_t v)
{
	/* Single writer: a relaxed load and store, no locked instruction. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

/*
 * Samples per event, to hold against what the kernel counted: a schema id
 * lookup (a short open-addressing probe) per sample. The schema's evsel
 * index is the evset entry index: register_ids() adds them in order.
 */
static void note_delivered(struct rsp_drain *d, const struct perf_event_header *h)
{
	int idx = h->size >= 16 ? rsp_schema__evsel_by_id(d->es->schema, ((const uint64_t *)h)[1])
				: -1;

	if (idx >= 0 && idx < RSP_EVSET_MAX)
		add(&d->delivered[idx], 1);
}

static void note_record(struct rsp_drain *d, struct rsp_cpu_counters *k, unsigned cpu,
			const struct perf_event_header *h, uint64_t time)
{
	if (h->type == PERF_RECORD_SAMPLE) {
		note_delivered(d, h);
	} else if (h->type == PERF_RECORD_LOST) {
		const struct perf_record_lost *l = (const void *)h;

		add(&k->lost, l->lost);
		add(&k->lost_events, 1);
		d->resend = true;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES) {
		const struct perf_record_lost_samples *l = (const void *)h;

		add(&k->lost, l->lost);
		add(&k->lost_events, 1);
		d->resend = true;
	}
	/* Side-band records (and gaps) for the process model: a few per second. */
	if (h->type != PERF_RECORD_SAMPLE && d->sbq)
		rsp_sbq__push(d->sbq, time, h);
	if (d->window && rsp_window__append(d->window, cpu, time, h)) {
		/* Kept as a gap where it happened, like the kernel's own losses. */
		add(&k->dropped, 1);
		rsp_window__note_lost(d->window, cpu, time, 1);
		d->resend = true;
	}
}

uint64_t rsp_drain__ring(struct rsp_drain *d, int idx)
{
	struct rsp_ring *r = &d->es->rings[idx];
	struct rsp_cpu_counters *k = &d->cpu[r->cpu];
	union perf_event *ev;
	uint64_t n = 0, bytes = 0;

	if (perf_mmap__read_init(r->map) < 0)
		return 0;
	while ((ev = perf_mmap__read_event(r->map)) != NULL) {
		const struct perf_event_header *h = &ev->header;

		note_record(d, k, r->cpu, h, rsp_layout__time(h));
		n++;
		bytes += h->size;
	}
	/*
	 * One tail update per batch, not per record as libperf's example loop
	 * does: every record is already copied, and each data_tail write pulls
	 * the cache line the kernel reads on every output from the writing CPU.
	 */
	if (n)
		perf_mmap__consume(r->map);
	perf_mmap__read_done(r->map);
	add(&k->records, n);
	add(&k->bytes, bytes);
	return n;
}

uint64_t rsp_drain__all(struct rsp_drain *d)
{
	uint64_t n = 0;

	for (int i = 0; i < d->es->nr_rings; i++)
		n += rsp_drain__ring(d, i);
	/* What the lost records carried (a name, a stack sent once) comes again. */
	if (d->resend) {
		d->resend = false;
		rsp_evset__resend(d->es);
	}
	return n;
}

void rsp_drain__check(struct rsp_drain *d)
{
	rsp_drain__all(d);
	for (int i = 0; i < d->es->nr && i < RSP_EVSET_MAX; i++) {
		uint64_t fired;
		bool counted = !rsp_evset__fired(d->es, i, &fired);

		atomic_store_explicit(&d->checked_counted[i], counted, memory_order_relaxed);
		if (!counted)
			continue;
		atomic_store_explicit(&d->checked_delivered[i],
				      atomic_load_explicit(&d->delivered[i], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&d->checked_fired[i], fired, memory_order_relaxed);
	}
}

void rsp_drain__rates(struct rsp_drain *d, double dt)
{
	for (unsigned c = 0; c < d->es->max_cpu; c++) {
		struct rsp_cpu_counters *k = &d->cpu[c];
		uint64_t now = atomic_load_explicit(&k->records, memory_order_relaxed);

		atomic_store_explicit(&k->records_per_s,
				      dt > 0 ? (double)(now - k->last_records) / dt : 0.0,
				      memory_order_relaxed);
		k->last_records = now;
	}
}
