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
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <rsp/record.h>
#include <rsp/ustack.h>
#include <rsp/ustackz.h>
#include "drain.h"
#include "sbq.h"
#ifdef RSP_HAVE_BPF
#include "bpfcap.h"
#endif
#include "tracepoints/bpf_records.h"

/* a sample's kind in the window is its evset entry (its evsel in the schema) */
_Static_assert(RSP_EVSET_MAX <= RSP_WKIND_EVSELS, "every evset entry has a window kind");

/*
 * Which entries copy the user stack (--dwarf): their samples go into the
 * window compressed, or cut to the bytes the kernel copied (stored()), from
 * one buffer of the largest record (header.size is 16 bits). Other records
 * pay one test of ustack[].
 */
static int init_ustack(struct rsp_drain *d, struct rsp_evset *es)
{
	bool any = false;

	d->trim = NULL;
	d->z = NULL;
	for (int i = 0; i < RSP_EVSET_MAX; i++) {
		d->ustack[i] =
			i < es->nr && es->e[i].evsel &&
			(perf_evsel__attr(es->e[i].evsel)->sample_type & PERF_SAMPLE_STACK_USER);
		any = any || d->ustack[i];
	}
	if (!any)
		return 0;
	d->trim = malloc(RSP_DRAIN_TRIM_MAX);
	d->z = rsp_ustackz__new();
	return d->trim && d->z ? 0 : -1;
}

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
	d->bpf_entry = -1;
	for (int i = 0; i < es->nr; i++)
		if (es->e[i].role == RSP_ROLE_BPF)
			d->bpf_entry = i;
	d->cpu = calloc(es->max_cpu ? es->max_cpu : 1, sizeof(*d->cpu));
	d->bpf_lost = calloc(es->max_cpu ? es->max_cpu : 1, sizeof(*d->bpf_lost));
	d->bpf_last = calloc(es->max_cpu ? es->max_cpu : 1, sizeof(*d->bpf_last));
	return d->cpu && d->bpf_lost && d->bpf_last && !init_ustack(d, es) ? 0 : -1;
}

void rsp_drain__exit(struct rsp_drain *d)
{
	free(d->trim);
	d->trim = NULL;
	free(d->cpu);
	free(d->bpf_lost);
	free(d->bpf_last);
	rsp_ustackz__delete(d->z);
	d->z = NULL;
	d->cpu = NULL;
	d->bpf_lost = d->bpf_last = NULL;
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
static int note_delivered(struct rsp_drain *d, const struct perf_event_header *h)
{
	int idx = h->size >= 16 ? rsp_schema__evsel_by_id(d->es->schema, ((const uint64_t *)h)[1])
				: -1;

	if (idx >= 0 && idx < RSP_EVSET_MAX)
		add(&d->delivered[idx], 1);
	return idx;
}

/*
 * A sample whose event copies the user stack, as the window stores it: its
 * stack compressed (rsp_ustackz__pack(): a quarter of the copied bytes, a
 * few µs, ~200 samples a second), else cut to the bytes the kernel copied
 * (rsp_ustack__trim(): what does not compress), else itself when there is
 * nothing to cut or it does not parse (the record interpreter counts a
 * malformed one when it reads it, as any other).
 */
static const struct perf_event_header *stored(struct rsp_drain *d,
					      const struct perf_event_header *h)
{
	int n = rsp_ustackz__pack(d->z, d->es->schema, h, d->trim, RSP_DRAIN_TRIM_MAX);

	if (n <= 0)
		n = rsp_ustack__trim(d->es->schema, h, d->trim, RSP_DRAIN_TRIM_MAX);
	return n > 0 ? (const struct perf_event_header *)d->trim : h;
}

static void note_record(struct rsp_drain *d, struct rsp_cpu_counters *k, unsigned cpu,
			const struct perf_event_header *h, uint64_t time)
{
	/* the window counts its bytes by kind: a sample's is its event (status) */
	unsigned kind = RSP_WKIND_PERF(h->type);

	if (h->type == PERF_RECORD_SAMPLE) {
		int idx = note_delivered(d, h);

		if (idx >= 0)
			kind = RSP_WKIND_EVSEL((unsigned)idx);
		if (idx >= 0 && idx < RSP_EVSET_MAX && d->ustack[idx] && d->window)
			h = stored(d, h);
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
	if (!rsp_record__is_sample(h) && d->sbq)
		rsp_sbq__push(d->sbq, time, h);
	if (d->window && rsp_window__append_kind(d->window, cpu, time, h, kind)) {
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

/*
 * A record of CPU @cpu's BPF ring: stored as it is, in the CPU's second
 * stream of the window (the perf ring's records are in its first), which
 * the window's merge orders with the first by time. A record that does not
 * look like one of rsp's (a size or type the programs never write) is
 * counted as dropped, not stored.
 */
static int on_bpf_record(void *ctx, unsigned cpu, const void *data, size_t size)
{
	struct rsp_drain *d = ctx;
	const struct rsp_brec_hdr *b = data;
	struct rsp_cpu_counters *k;

	if (cpu >= d->es->max_cpu)
		return 0;
	k = &d->cpu[cpu];
	if (size < sizeof(*b) || size % 8 || b->size != size || !RSP_BREC_IS_TYPE(b->type)) {
		add(&k->dropped, 1);
		return 0;
	}
	add(&k->records, 1);
	add(&k->bytes, size);
	if (d->bpf_entry >= 0)
		add(&d->delivered[d->bpf_entry], 1);
	d->bpf_last[cpu] = b->time;
	d->bpf_n++;
	add(&d->folded, rsp_brec__folded(b));
	if (d->window &&
	    rsp_window__append(d->window, d->es->max_cpu + cpu, b->time, (const void *)b)) {
		add(&k->dropped, 1);
		rsp_window__note_lost(d->window, d->es->max_cpu + cpu, b->time, 1);
		d->resend = true;
	}
	return 0;
}

uint64_t rsp_drain__bpf(struct rsp_drain *d)
{
#ifdef RSP_HAVE_BPF
	if (!d->es->bpf)
		return 0;
	d->bpf_n = 0;
	rsp_bpfcap__consume(d->es->bpf, on_bpf_record, d);
	return d->bpf_n;
#else
	(void)on_bpf_record;
	(void)d;
	return 0;
#endif
}

/*
 * What the BPF programs could not write (their CPU's ring was full): a gap
 * in that CPU's BPF stream after the last record drained from it, as the
 * kernel's PERF_RECORD_LOST is in a perf ring. Read once per timed drain
 * (a map read is a system call).
 */
static void note_bpf_lost(struct rsp_drain *d)
{
#ifdef RSP_HAVE_BPF
	unsigned n = d->es->max_cpu;
	uint64_t lost[1024];

	if (!d->es->bpf || n > 1024 || rsp_bpfcap__lost(d->es->bpf, lost, n))
		return;
	for (unsigned c = 0; c < n; c++) {
		uint64_t delta = lost[c] - d->bpf_lost[c];

		if (!delta)
			continue;
		d->bpf_lost[c] = lost[c];
		add(&d->cpu[c].lost, delta);
		add(&d->cpu[c].lost_events, 1);
		if (d->window)
			rsp_window__note_lost(d->window, n + c, d->bpf_last[c], delta);
		d->resend = true;
	}
#else
	(void)d;
#endif
}

uint64_t rsp_drain__all(struct rsp_drain *d)
{
	uint64_t n = 0;

	for (int i = 0; i < d->es->nr_rings; i++)
		n += rsp_drain__ring(d, i);
	n += rsp_drain__bpf(d);
	note_bpf_lost(d);
	/* What the lost records carried (a name, a stack sent once) comes again. */
	if (d->resend) {
		d->resend = false;
		rsp_evset__resend(d->es);
	}
	return n;
}

/*
 * The BPF programs send a name or a stack once: as the window evicts its
 * oldest records, those that carried the names and stacks of still-used
 * threads and stacks go too. Every quarter of the window's span (2 s at
 * least) the programs send them again, so every record but those of the
 * oldest quarter finds its names and stacks in the window (a query learns
 * them from the window's start).
 */
void rsp_drain__refresh(struct rsp_drain *d, uint64_t now)
{
	struct rsp_window_stats ws;
	uint64_t every = 2000000000ull;

	if (!d->es->bpf || !d->window)
		return;
	rsp_window__stats(d->window, &ws);
	if (ws.newest > ws.oldest && (ws.newest - ws.oldest) / 4 > every)
		every = (ws.newest - ws.oldest) / 4;
	if (now - d->last_refresh < every)
		return;
	d->last_refresh = now;
	d->resend = true; /* the next rsp_drain__all() asks for it */
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
