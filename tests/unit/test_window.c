// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/stream/window.c: append, budget, pinning, merge, ranges, gaps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <rsp/record.h>
#include <rsp/window.h>
#include "tracepoints/bpf_records.h"

/* A record in rsp's layout: header, identifier, ip, tid, time, cpu, payload. */
struct fake {
	struct perf_event_header h;
	uint64_t identifier, ip, tid, time, cpu;
	uint64_t payload[3];
};

static struct fake make(uint64_t time, unsigned cpu, uint64_t tag)
{
	struct fake f;

	memset(&f, 0, sizeof(f));
	f.h.type = PERF_RECORD_SAMPLE;
	f.h.size = sizeof(f);
	f.identifier = 1;
	f.time = time;
	f.cpu = cpu;
	f.payload[0] = tag;
	return f;
}

static struct rsp_window *window(size_t budget, unsigned cpus, size_t chunk)
{
	struct rsp_window_config c = {.budget = budget, .nr_cpus = cpus, .chunk_size = chunk};
	struct rsp_window *w = rsp_window__new(&c);

	assert_non_null(w);
	return w;
}

static uint64_t tag_of(const struct rsp_wentry *e)
{
	return ((const struct fake *)e->rec)->payload[0];
}

/* Collect (time, tag) of every entry in [from, to]. */
static size_t collect(struct rsp_window *w, uint64_t from, uint64_t to, uint64_t *times,
		      uint64_t *tags, size_t max)
{
	struct rsp_wsnap *s = rsp_window__pin(w, from, to);
	struct rsp_witer *it = rsp_witer__new(s, from, to);
	struct rsp_wentry e;
	size_t n = 0;

	assert_non_null(it);
	while (rsp_witer__next(it, &e)) {
		assert_true(n < max);
		times[n] = e.time;
		tags[n] = tag_of(&e);
		assert_int_equal(rsp_layout__time(e.rec), e.time);
		n++;
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	return n;
}

static void test_append_and_read(void **state)
{
	struct rsp_window *w = window(1 << 20, 1, 4096);
	struct rsp_window_stats st;
	uint64_t times[16], tags[16];

	for (uint64_t i = 0; i < 10; i++) {
		struct fake f = make(100 + i, 0, i);

		assert_int_equal(rsp_window__append(w, 0, f.time, &f.h), 0);
	}
	assert_int_equal(collect(w, 0, UINT64_MAX, times, tags, 16), 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(times[i], 100 + i);
		assert_int_equal(tags[i], i);
	}
	rsp_window__stats(w, &st);
	assert_int_equal(st.records, 10);
	assert_int_equal(st.appended, 10);
	assert_int_equal(st.oldest, 100);
	assert_int_equal(st.newest, 109);
	assert_int_equal(st.bytes_used, 10 * (8 + sizeof(struct fake)));
	rsp_window__delete(w);
}

static void test_rejects_bad_records(void **state)
{
	struct rsp_window *w = window(1 << 20, 2, 4096);
	struct fake f = make(1, 0, 0);
	static uint64_t big[1024];
	struct perf_event_header *h = (void *)big;
	struct rsp_window_stats st;

	assert_int_equal(rsp_window__append(w, 2, 1, &f.h), -EINVAL);
	f.h.size = 12;
	assert_int_equal(rsp_window__append(w, 0, 1, &f.h), -EINVAL);
	h->type = PERF_RECORD_SAMPLE;
	h->size = 8000; /* larger than a 4 KiB chunk */
	assert_int_equal(rsp_window__append(w, 0, 1, h), -E2BIG);
	rsp_window__stats(w, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.records, 0);
	rsp_window__delete(w);
}

static void test_evicts_oldest_within_budget(void **state)
{
	/* 4 KiB chunks, 16 KiB budget, 1 CPU: at most 4 chunks. */
	struct rsp_window *w = window(16384, 1, 4096);
	struct rsp_window_stats st;
	uint64_t times[2048], tags[2048];
	size_t per_chunk = 4096 / (8 + sizeof(struct fake)), n;

	for (uint64_t i = 0; i < 1000; i++) {
		struct fake f = make(i, 0, i);

		assert_int_equal(rsp_window__append(w, 0, i, &f.h), 0);
	}
	rsp_window__stats(w, &st);
	assert_true(st.chunks <= 4);
	assert_true(st.bytes_allocated <= 16384);
	assert_true(st.evicted_chunks > 0);
	assert_int_equal(st.records + st.evicted_records, 1000);
	assert_int_equal(st.newest, 999);
	/* What is left is the newest records, contiguous, in order. */
	n = collect(w, 0, UINT64_MAX, times, tags, 2048);
	assert_int_equal(n, st.records);
	assert_true(n >= 3 * per_chunk);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(times[i], 1000 - n + i);
	assert_int_equal(st.complete_from, 1000 - n - 1);
	rsp_window__delete(w);
}

/* A quiet CPU's only chunk is still being written: the busy CPU's sealed
 * chunks go first, so the quiet CPU keeps its (recent) records. */
static void test_quiet_cpu_keeps_open_chunk(void **state)
{
	struct rsp_window *w = window(4 * 4096, 2, 4096);
	struct rsp_window_stats st;
	uint64_t times[1024], tags[1024];
	size_t n, quiet = 0;
	struct fake q = make(1, 1, 7777);

	assert_int_equal(rsp_window__append(w, 1, 1, &q.h), 0);
	for (uint64_t i = 0; i < 600; i++) {
		struct fake f = make(10 + i, 0, i);

		assert_int_equal(rsp_window__append(w, 0, 10 + i, &f.h), 0);
	}
	q = make(5000, 1, 8888); /* the quiet CPU speaks again, later */
	assert_int_equal(rsp_window__append(w, 1, 5000, &q.h), 0);
	rsp_window__stats(w, &st);
	assert_true(st.evicted_chunks > 0);
	n = collect(w, 0, UINT64_MAX, times, tags, 1024);
	for (size_t i = 0; i < n; i++)
		quiet += tags[i] == 7777 || tags[i] == 8888;
	assert_int_equal(quiet, 2);
	rsp_window__delete(w);
}

static void test_pin_survives_eviction(void **state)
{
	struct rsp_window *w = window(16384, 1, 4096);
	struct rsp_window_stats st;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t expect = 0;

	for (uint64_t i = 0; i < 50; i++) {
		struct fake f = make(i, 0, i);

		rsp_window__append(w, 0, i, &f.h);
	}
	s = rsp_window__pin(w, 0, UINT64_MAX);
	/* Push everything pinned out of the window. */
	for (uint64_t i = 50; i < 2000; i++) {
		struct fake f = make(i, 0, i);

		assert_int_equal(rsp_window__append(w, 0, i, &f.h), 0);
	}
	rsp_window__stats(w, &st);
	assert_true(st.oldest > 50);
	/* The pinned chunks are still readable and unchanged. */
	it = rsp_witer__new(s, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e)) {
		assert_int_equal(e.time, expect);
		assert_int_equal(tag_of(&e), expect);
		expect++;
	}
	assert_int_equal(expect, 50);
	rsp_witer__delete(it);
	/* Pinned evicted chunks may exceed the budget, but only until unpinned. */
	rsp_wsnap__unpin(s);
	for (uint64_t i = 2000; i < 3000; i++) {
		struct fake f = make(i, 0, i);

		rsp_window__append(w, 0, i, &f.h);
	}
	rsp_window__stats(w, &st);
	assert_true(st.bytes_allocated <= 16384);
	rsp_window__delete(w);
}

static void test_merge_across_cpus(void **state)
{
	struct rsp_window *w = window(1 << 20, 3, 4096);
	uint64_t times[64], tags[64];
	size_t n;

	/* CPU c holds times c, c+3, c+6, ...: the merge interleaves them. */
	for (uint64_t t = 0; t < 30; t++) {
		struct fake f = make(t, (unsigned)(t % 3), t);

		assert_int_equal(rsp_window__append(w, (unsigned)(t % 3), t, &f.h), 0);
	}
	n = collect(w, 0, UINT64_MAX, times, tags, 64);
	assert_int_equal(n, 30);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(times[i], i);
	rsp_window__delete(w);
}

static void test_ties_ordered_by_cpu(void **state)
{
	struct rsp_window *w = window(1 << 20, 2, 4096);
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	unsigned cpus[4], n = 0;

	for (unsigned c = 2; c-- > 0;) {
		struct fake f = make(5, c, c);

		rsp_window__append(w, c, 5, &f.h);
		rsp_window__append(w, c, 5, &f.h);
	}
	s = rsp_window__pin(w, 0, UINT64_MAX);
	it = rsp_witer__new(s, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e))
		cpus[n++] = e.cpu;
	assert_int_equal(n, 4);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[1], 0);
	assert_int_equal(cpus[2], 1);
	assert_int_equal(cpus[3], 1);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	rsp_window__delete(w);
}

static void test_time_range(void **state)
{
	struct rsp_window *w = window(1 << 20, 2, 4096);
	uint64_t times[256], tags[256];
	size_t n;

	for (uint64_t t = 0; t < 200; t++) {
		struct fake f = make(t * 10, (unsigned)(t & 1), t);

		rsp_window__append(w, (unsigned)(t & 1), t * 10, &f.h);
	}
	n = collect(w, 500, 999, times, tags, 256);
	assert_int_equal(n, 50);
	assert_int_equal(times[0], 500);
	assert_int_equal(times[n - 1], 990);
	n = collect(w, 5000, 6000, times, tags, 256);
	assert_int_equal(n, 0);
	n = collect(w, 1990, 1990, times, tags, 256);
	assert_int_equal(n, 1);
	rsp_window__delete(w);
}

static void test_gap_marker(void **state)
{
	struct rsp_window *w = window(1 << 20, 2, 4096);
	struct rsp_window_stats st;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	struct fake a = make(10, 1, 1), b = make(30, 1, 2);
	int seen = 0;

	rsp_window__append(w, 1, 10, &a.h);
	assert_int_equal(rsp_window__note_lost(w, 1, 20, 7), 0);
	rsp_window__append(w, 1, 30, &b.h);
	s = rsp_window__pin(w, 0, UINT64_MAX);
	it = rsp_witer__new(s, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e)) {
		if (e.rec->type != PERF_RECORD_LOST)
			continue;
		const uint64_t *words = (const uint64_t *)(e.rec + 1);

		assert_int_equal(e.time, 20);
		assert_int_equal(e.cpu, 1);
		assert_int_equal(words[1], 7); /* lost */
		assert_int_equal(rsp_layout__time(e.rec), 20);
		assert_int_equal(rsp_layout__cpu(e.rec), 1);
		seen++;
	}
	assert_int_equal(seen, 1);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	rsp_window__stats(w, &st);
	assert_int_equal(st.lost_marked, 7);
	rsp_window__delete(w);
}

static void test_budget_too_small(void **state)
{
	struct rsp_window_config c = {.budget = 1000, .nr_cpus = 4};

	assert_null(rsp_window__new(&c));
	assert_int_equal(errno, EINVAL);
	rsp_window__delete(NULL);
	rsp_wsnap__unpin(NULL);
	rsp_witer__delete(NULL);
}

static void test_chunk_size_derived(void **state)
{
	struct rsp_window *w = window(64u << 20, 2, 0);
	struct rsp_window_stats st;

	rsp_window__stats(w, &st);
	assert_int_equal(st.chunk_size, 1u << 20);
	assert_int_equal(rsp_window__nr_cpus(w), 2);
	rsp_window__delete(w);
	w = window(1u << 20, 64, 0);
	rsp_window__stats(w, &st);
	assert_true(st.chunk_size * 2 * 64 <= (1u << 20));
	rsp_window__delete(w);
}

/* References: records stay where they are; copies and references mix per CPU. */
static void test_append_ref(void **state)
{
	struct rsp_window *w = window(1 << 20, 2, 256);
	struct fake recs[40];
	struct rsp_window_stats st;
	uint64_t times[64], tags[64];
	size_t n;

	for (unsigned i = 0; i < 40; i++) {
		recs[i] = make(1000 + 2 * i + i % 2, i % 2, i);
		assert_int_equal(rsp_window__append_ref(w, i % 2, recs[i].time, &recs[i].h), 0);
	}
	/* Copies after references on CPU 0, then references again. */
	for (unsigned i = 0; i < 3; i++) {
		struct fake f = make(2000 + i, 0, 100 + i);

		assert_int_equal(rsp_window__append(w, 0, f.time, &f.h), 0);
	}
	struct fake last = make(3000, 0, 200);

	assert_int_equal(rsp_window__append_ref(w, 0, last.time, &last.h), 0);
	assert_int_equal(rsp_window__append_ref(w, 2, last.time, &last.h), -EINVAL);
	n = collect(w, 0, UINT64_MAX, times, tags, 64);
	assert_int_equal(n, 44);
	for (unsigned i = 0; i < 40; i++) {
		assert_int_equal(times[i], recs[i].time);
		assert_int_equal(tags[i], i);
	}
	assert_int_equal(tags[40], 100);
	assert_int_equal(tags[42], 102);
	assert_int_equal(tags[43], 200);
	/* A range inside the references. */
	n = collect(w, 1010, 1020, times, tags, 64);
	assert_int_equal(n, 6);
	assert_int_equal(times[0], 1011);
	rsp_window__stats(w, &st);
	assert_int_equal(st.records, 44);
	assert_int_equal(st.bytes_used, 41 * 16 + 3 * (8 + sizeof(struct fake)));
	assert_int_equal(st.oldest, 1000);
	assert_int_equal(st.newest, 3000);
	rsp_window__delete(w);
}

/* Batches of references leave the window as one reference at a time does. */
static void test_append_refs(void **state)
{
	struct rsp_window *one = window(1 << 20, 2, 256), *many = window(1 << 20, 2, 256);
	struct rsp_window_stats a, b;
	struct fake recs[40], copy = make(1500, 0, 99);
	struct rsp_wref v[40];
	uint64_t ta[64], ga[64], tb[64], gb[64];
	size_t n;
	int err;

	for (unsigned i = 0; i < 40; i++) {
		/* out of order inside a chunk: its time span is min and max, not ends */
		recs[i] = make(1000 + 2 * i + (i % 3 == 1 ? 5 : 0), 0, i);
		v[i] = (struct rsp_wref){recs[i].time, &recs[i].h};
		assert_int_equal(rsp_window__append_ref(one, 0, recs[i].time, &recs[i].h), 0);
		if (i == 20)
			assert_int_equal(rsp_window__append(one, 0, copy.time, &copy.h), 0);
	}
	/* batches of 7 cross the 16-entry chunks; a copy between two batches */
	for (unsigned i = 0; i < 21; i += 7)
		assert_int_equal(rsp_window__append_refs(many, 0, v + i, 7, &err), 7);
	assert_int_equal(err, 0);
	assert_int_equal(rsp_window__append(many, 0, copy.time, &copy.h), 0);
	assert_int_equal(rsp_window__append_refs(many, 0, v + 21, 19, &err), 19);
	assert_int_equal(err, 0);
	n = collect(one, 0, UINT64_MAX, ta, ga, 64);
	assert_int_equal(collect(many, 0, UINT64_MAX, tb, gb, 64), n);
	assert_int_equal(n, 41);
	assert_memory_equal(ta, tb, n * sizeof(*ta));
	assert_memory_equal(ga, gb, n * sizeof(*ga));
	rsp_window__stats(one, &a);
	rsp_window__stats(many, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	/* a bad CPU, a misaligned record: nothing stored, as rsp_window__append_ref() */
	assert_int_equal(rsp_window__append_refs(many, 2, v, 1, &err), 0);
	assert_int_equal(err, -EINVAL);
	v[1].rec = (const void *)((const char *)v[1].rec + 4);
	assert_int_equal(rsp_window__append_refs(many, 1, v, 3, &err), 1);
	assert_int_equal(err, -EINVAL);
	rsp_window__delete(one);
	rsp_window__delete(many);
}

/*
 * Self-timed streams (time_offset): records of rsp's BPF layout, which
 * carry their time at offsetof(struct rsp_brec_hdr, time), are stored
 * without the 8-byte prefix.
 */
struct brec {
	struct rsp_brec_hdr h;
	uint64_t tag;
}; /* 32 bytes */

static struct brec make_b(uint64_t time, unsigned cpu, uint64_t tag)
{
	struct brec b;

	memset(&b, 0, sizeof(b));
	b.h.type = RSP_BREC_TYPE(RSP_BREC_SWITCH);
	b.h.cpu = cpu;
	b.h.size = sizeof(b);
	b.h.time = time;
	b.tag = tag;
	return b;
}

/* @cpus CPUs, two streams each: perf records (prefixed), then BPF records (self-timed). */
static struct rsp_window *timed_window(size_t budget, unsigned cpus, size_t chunk)
{
	struct rsp_window_config c = {.budget = budget,
				      .nr_cpus = cpus,
				      .chunk_size = chunk,
				      .streams_per_cpu = 2,
				      .time_offset = {0, offsetof(struct rsp_brec_hdr, time)}};
	struct rsp_window *w = rsp_window__new(&c);

	assert_non_null(w);
	return w;
}

static uint64_t entry_tag(const struct rsp_wentry *e)
{
	if (RSP_BREC_IS_TYPE(e->rec->type))
		return ((const struct brec *)e->rec)->tag;
	return tag_of(e);
}

static void test_self_timed_merge(void **state)
{
	struct rsp_window *w = timed_window(1 << 20, 2, 4096);
	struct rsp_window_stats st;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t n = 0;

	/* time t = 10 * i (i from 10) + cpu + 5 * bpf: the four streams interleave. */
	for (uint64_t i = 10; i < 110; i++) {
		for (unsigned cpu = 0; cpu < 2; cpu++) {
			struct fake f = make(10 * i + cpu, cpu, 10 * i + cpu);
			struct brec b = make_b(10 * i + cpu + 5, cpu, 10 * i + cpu + 5);

			assert_int_equal(rsp_window__append(w, cpu, f.time, &f.h), 0);
			assert_int_equal(rsp_window__append(w, 2 + cpu, b.h.time, (void *)&b), 0);
		}
	}
	s = rsp_window__pin(w, 0, UINT64_MAX);
	it = rsp_witer__new(s, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e)) {
		uint64_t i = 10 + n / 4, k = n % 4;
		uint64_t want = 10 * i + (k == 0 ? 0 : k == 1 ? 1 : k == 2 ? 5 : 6);

		assert_int_equal(e.time, want);
		assert_int_equal(entry_tag(&e), want);
		assert_int_equal(e.cpu, want % 5);
		assert_int_equal(RSP_BREC_IS_TYPE(e.rec->type), k >= 2);
		n++;
	}
	assert_int_equal(n, 400);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	rsp_window__stats(w, &st);
	assert_int_equal(st.records, 400);
	assert_int_equal(st.oldest, 100);
	assert_int_equal(st.newest, 1096);
	/* the perf records with their prefix, the BPF records as they are */
	assert_int_equal(st.bytes_used,
			 200 * (8 + sizeof(struct fake)) + 200 * sizeof(struct brec));
	rsp_window__delete(w);
}

/* A record that does not carry its time at the offset keeps the time it was appended with. */
static void test_self_timed_foreign_records(void **state)
{
	struct rsp_window *w = timed_window(1 << 20, 1, 4096);
	struct rsp_window_stats st;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	struct brec a = make_b(10, 0, 1), odd = make_b(40, 0, 3), b = make_b(50, 0, 4);
	struct perf_event_header bare = {.type = PERF_RECORD_SAMPLE, .size = 8};
	uint64_t times[5], n = 0;

	assert_int_equal(rsp_window__append(w, 1, 10, (void *)&a), 0);
	assert_int_equal(rsp_window__note_lost(w, 1, 20, 7), 0);
	assert_int_equal(rsp_window__append(w, 1, 30, &bare), 0); /* too short to hold a time */
	assert_int_equal(rsp_window__append(w, 1, 45, (void *)&odd), 0); /* says 40 */
	assert_int_equal(rsp_window__append(w, 1, 50, (void *)&b), 0);
	s = rsp_window__pin(w, 0, UINT64_MAX);
	it = rsp_witer__new(s, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e)) {
		assert_true(n < 5);
		times[n++] = e.time;
		if (e.rec->type == PERF_RECORD_LOST) {
			const uint64_t *words = (const uint64_t *)(e.rec + 1);

			assert_int_equal(words[1], 7);
			assert_int_equal(rsp_layout__time(e.rec), 20);
			assert_int_equal(rsp_layout__cpu(e.rec), 0);
		}
		if (e.rec->type == PERF_RECORD_SAMPLE)
			assert_int_equal(e.rec->size, 8);
	}
	assert_int_equal(n, 5);
	assert_int_equal(times[0], 10);
	assert_int_equal(times[1], 20);
	assert_int_equal(times[2], 30);
	assert_int_equal(times[3], 45);
	assert_int_equal(times[4], 50);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	rsp_window__stats(w, &st);
	assert_int_equal(st.lost_marked, 7);
	/* two records as they are; the gap (56 bytes), the bare header and the odd one wrapped */
	assert_int_equal(st.bytes_used, 2 * 32 + (16 + 56) + (16 + 8) + (16 + 32));
	rsp_window__delete(w);
}

/*
 * The same budget holds more self-timed records: 16 KiB, 4 chunks of 4096
 * bytes, 32-byte records: 128 per chunk as they are, 102 with the prefix.
 */
static size_t fill_stream(unsigned stream, uint64_t n, struct rsp_window_stats *st)
{
	struct rsp_window *w = timed_window(16384, 1, 4096);

	/* ten chunks' worth: the window ends with its four newest, full */
	for (uint64_t i = 0; i < n; i++) {
		struct brec b = make_b(i, 0, i);

		assert_int_equal(rsp_window__append(w, stream, i, (void *)&b), 0);
	}
	rsp_window__stats(w, st);
	rsp_window__delete(w);
	return st->records;
}

static void test_self_timed_budget(void **state)
{
	struct rsp_window_stats st;

	assert_int_equal(fill_stream(1, 10 * 128, &st), 4 * 128);
	assert_int_equal(st.chunks, 4);
	assert_int_equal(st.bytes_used, 4 * 128 * 32);
	assert_int_equal(st.oldest, 6 * 128);
	assert_int_equal(fill_stream(0, 10 * 102, &st), 4 * 102);
	assert_int_equal(st.chunks, 4);
	assert_int_equal(st.bytes_used, 4 * 102 * 40);
}

static void test_self_timed_pin_survives_eviction(void **state)
{
	struct rsp_window *w = timed_window(16384, 1, 4096);
	struct rsp_window_stats st;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t expect = 0;

	for (uint64_t i = 0; i < 50; i++) {
		struct brec b = make_b(i, 0, i);

		rsp_window__append(w, 1, i, (void *)&b);
	}
	s = rsp_window__pin(w, 0, UINT64_MAX);
	for (uint64_t i = 50; i < 2000; i++) {
		struct brec b = make_b(i, 0, i);

		assert_int_equal(rsp_window__append(w, 1, i, (void *)&b), 0);
	}
	rsp_window__stats(w, &st);
	assert_true(st.oldest > 50);
	it = rsp_witer__new(s, 10, 39);
	expect = 10;
	while (rsp_witer__next(it, &e)) {
		assert_int_equal(e.time, expect);
		assert_int_equal(entry_tag(&e), expect);
		expect++;
	}
	assert_int_equal(expect, 40);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	rsp_window__delete(w);
}

static void test_self_timed_bad_offset(void **state)
{
	struct rsp_window_config c = {.budget = 1 << 20, .nr_cpus = 1, .streams_per_cpu = 2};

	c.time_offset[1] = 12; /* not a multiple of 8 */
	assert_null(rsp_window__new(&c));
	assert_int_equal(errno, EINVAL);
	c.time_offset[1] = 0;
	c.time_offset[2] = 8; /* a source the window does not have */
	assert_null(rsp_window__new(&c));
	assert_int_equal(errno, EINVAL);
}

/* Records and bytes by kind: counted at append, gone with an evicted chunk. */
static void test_kinds(void **state)
{
	struct rsp_window *w = timed_window(16384, 1, 4096);
	struct rsp_window_stats st;
	struct fake odd = make(12, 0, 0);
	uint64_t recs = 0, bytes = 0;

	for (uint64_t i = 1; i <= 10; i++) {
		struct fake f = make(i, 0, i);
		struct brec b = make_b(i, 0, i);

		assert_int_equal(rsp_window__append(w, 0, i, &f.h), 0);
		assert_int_equal(rsp_window__append_kind(w, 0, i, &f.h, RSP_WKIND_EVSEL(3)), 0);
		assert_int_equal(rsp_window__append(w, 1, i, (void *)&b), 0);
	}
	assert_int_equal(rsp_window__note_lost(w, 1, 11, 2), 0);
	assert_int_equal(rsp_window__append_kind(w, 0, 12, &odd.h, RSP_WINDOW_KINDS), -EINVAL);
	rsp_window__stats(w, &st);
	assert_int_equal(st.kinds[RSP_WKIND_PERF(PERF_RECORD_SAMPLE)].records, 10);
	assert_int_equal(st.kinds[RSP_WKIND_PERF(PERF_RECORD_SAMPLE)].bytes,
			 10 * (8 + sizeof(struct fake)));
	assert_int_equal(st.kinds[RSP_WKIND_EVSEL(3)].records, 10);
	assert_int_equal(st.kinds[RSP_WKIND_EVSEL(3)].bytes, 10 * (8 + sizeof(struct fake)));
	assert_int_equal(st.kinds[RSP_WKIND_BPF(RSP_BREC_SWITCH)].records, 10);
	assert_int_equal(st.kinds[RSP_WKIND_BPF(RSP_BREC_SWITCH)].bytes, 10 * 32);
	assert_int_equal(st.kinds[RSP_WKIND_PERF(PERF_RECORD_LOST)].records, 1);
	assert_int_equal(st.kinds[RSP_WKIND_PERF(PERF_RECORD_LOST)].bytes, 16 + 56);
	for (unsigned k = 0; k < RSP_WINDOW_KINDS; k++) {
		recs += st.kinds[k].records;
		bytes += st.kinds[k].bytes;
	}
	assert_int_equal(recs, 31);
	assert_int_equal(st.records, 31);
	assert_int_equal(bytes, st.bytes_used);
	/* fill both streams with BPF records: the first chunks are evicted, their counts go */
	for (uint64_t i = 100; i < 2100; i++) {
		struct brec b = make_b(i, 0, i);

		assert_int_equal(rsp_window__append(w, 0, i, (void *)&b), 0);
		assert_int_equal(rsp_window__append(w, 1, i, (void *)&b), 0);
	}
	rsp_window__stats(w, &st);
	assert_int_equal(st.kinds[RSP_WKIND_EVSEL(3)].records, 0);
	assert_int_equal(st.kinds[RSP_WKIND_PERF(PERF_RECORD_SAMPLE)].records, 0);
	assert_int_equal(st.kinds[RSP_WKIND_PERF(PERF_RECORD_LOST)].records, 0);
	assert_int_equal(st.kinds[RSP_WKIND_BPF(RSP_BREC_SWITCH)].records, st.records);
	assert_int_equal(st.kinds[RSP_WKIND_BPF(RSP_BREC_SWITCH)].bytes, st.bytes_used);
	/* 4 chunks: the prefixed stream's hold 102 records (40 bytes), the other's 128 (32) */
	assert_true(st.records >= 3 * 102 && st.records <= 4 * 128);
	assert_true(st.bytes_used % 8 == 0 && st.bytes_used <= 4 * 4096);
	rsp_window__delete(w);
}

/* Records held by reference count as other, 16 bytes each. */
static void test_kinds_of_refs(void **state)
{
	struct rsp_window *w = window(1 << 20, 1, 4096);
	static struct fake recs[5];
	struct rsp_window_stats st;

	for (int i = 0; i < 5; i++) {
		recs[i] = make(i + 1, 0, i);
		assert_int_equal(rsp_window__append_ref(w, 0, i + 1, &recs[i].h), 0);
	}
	rsp_window__stats(w, &st);
	assert_int_equal(st.kinds[RSP_WKIND_OTHER].records, 5);
	assert_int_equal(st.kinds[RSP_WKIND_OTHER].bytes, 5 * 16);
	assert_int_equal(st.bytes_used, 5 * 16);
	rsp_window__delete(w);
}

/*
 * A reader that follows the window pass by pass and resumes each stream where
 * the last pass stopped (rspd's analysis thread) reads what a fresh
 * iteration of each pass's range reads: records after a pass's end (some
 * out of order in their stream) are read by the next pass, chunks evicted
 * meanwhile (a mark whose chunk is gone) make it scan that stream from its
 * first chunk, and a mark does move forward.
 */
static void test_resume_marks(void **state)
{
	struct rsp_window *w = timed_window(64 << 10, 2, 4096);
	struct rsp_wmark marks[4] = {{0, 0}};
	uint64_t done = 0, t = 1000, seen = 0, fresh_seen = 0;
	bool moved = false;

	for (int batch = 0; batch < 200; batch++) {
		/* 40 records a batch over the four streams; every 7th BPF one 3 ns early */
		for (int i = 0; i < 10; i++, t += 10) {
			for (unsigned cpu = 0; cpu < 2; cpu++) {
				struct fake f = make(t + cpu, cpu, t + cpu);
				uint64_t bt = t + cpu + 5 - (i % 7 == 3 ? 8 : 0);
				struct brec b = make_b(bt, cpu, bt);

				assert_int_equal(rsp_window__append(w, cpu, f.time, &f.h), 0);
				assert_int_equal(
					rsp_window__append(w, 2 + cpu, b.h.time, (void *)&b), 0);
			}
		}
		/* this pass ends inside the batch: its last records are the next pass's */
		uint64_t until = t - 35, from = done + 1, complete = rsp_window__complete_from(w);
		struct rsp_wsnap *s;
		struct rsp_witer *it, *fresh;
		struct rsp_wentry e, f;

		if (complete >= from)
			from = complete + 1;
		s = rsp_window__pin(w, from, until);
		assert_non_null(s);
		assert_int_equal(rsp_wsnap__streams(s), 4);
		it = rsp_witer__resume(s, from, until, marks);
		fresh = rsp_witer__new(s, from, until);
		assert_non_null(it);
		assert_non_null(fresh);
		while (rsp_witer__next(it, &e)) {
			assert_int_equal(rsp_witer__next(fresh, &f), 1);
			assert_int_equal(e.time, f.time);
			assert_ptr_equal(e.rec, f.rec);
			assert_true(e.time >= from && e.time <= until);
			seen++;
		}
		assert_int_equal(rsp_witer__next(fresh, &f), 0);
		struct rsp_wmark old[4];

		memcpy(old, marks, sizeof(old));
		rsp_witer__marks(it, marks);
		for (unsigned i = 0; i < 4; i++)
			moved = moved || (marks[i].seq == old[i].seq && marks[i].off > old[i].off);
		rsp_witer__delete(fresh);
		rsp_witer__delete(it);
		rsp_wsnap__unpin(s);
		done = until;
	}
	/* the whole, read once: what the passes read, less what was evicted before its pass */
	{
		struct rsp_wsnap *s = rsp_window__pin(w, 0, done);
		struct rsp_witer *it = rsp_witer__new(s, 0, done);
		struct rsp_wentry e;

		while (rsp_witer__next(it, &e))
			fresh_seen++;
		rsp_witer__delete(it);
		rsp_wsnap__unpin(s);
	}
	assert_true(moved);
	assert_true(seen >= fresh_seen);       /* the window kept less than the passes read */
	assert_true(seen > 200 * 40 * 9 / 10); /* evictions ate no pass's records */
	rsp_window__delete(w);
}

/*
 * Compression of cold chunks: two CPUs, perf records (prefixed) and BPF
 * records (self-timed), @n of each kind per CPU, tag = time.
 */
static void fill_mixed(struct rsp_window *w, uint64_t from, uint64_t n)
{
	for (uint64_t t = from; t < from + n; t++) {
		unsigned cpu = (unsigned)(t % 2);
		struct fake f = make(t, cpu, t);
		struct brec b = make_b(t, cpu, t);

		assert_int_equal(rsp_window__append(w, cpu, t, &f.h), 0);
		assert_int_equal(rsp_window__append(w, 2 + cpu, t, (void *)&b), 0);
	}
}

/* Every entry of [from, to] as (time, tag, kind of record) sums: order and content. */
static uint64_t digest_of(struct rsp_window *w, uint64_t from, uint64_t to, uint64_t *n,
			  bool stream)
{
	struct rsp_wsnap *s =
		stream ? rsp_window__pin_stream(w, from, to) : rsp_window__pin(w, from, to);
	struct rsp_witer *it = s ? rsp_witer__new(s, from, to) : NULL;
	struct rsp_wentry e;
	uint64_t h = 1469598103934665603ull, last = 0;

	assert_non_null(it);
	*n = 0;
	while (rsp_witer__next(it, &e)) {
		assert_true(e.time >= last);
		last = e.time;
		assert_int_equal(entry_tag(&e), e.time);
		h = (h ^ e.time) * 1099511628211ull;
		h = (h ^ e.rec->type) * 1099511628211ull;
		h = (h ^ e.cpu) * 1099511628211ull;
		(*n)++;
	}
	assert_int_equal(rsp_witer__error(it), 0);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	return h;
}

static uint64_t digest(struct rsp_window *w, uint64_t from, uint64_t to, uint64_t *n)
{
	uint64_t ns, h = digest_of(w, from, to, n, false);

	/* a streaming pin reads the same */
	assert_int_equal(digest_of(w, from, to, &ns, true), h);
	assert_int_equal(ns, *n);
	return h;
}

static void test_compress_round_trip(void **state)
{
	struct rsp_window *w = timed_window(1 << 20, 2, 4096);
	struct rsp_window_stats a, b;
	uint64_t n1, n2, h1, h2;
	int got;

	fill_mixed(w, 1, 2000);
	rsp_window__stats(w, &a);
	h1 = digest(w, 0, UINT64_MAX, &n1);
	assert_int_equal(n1, 4000);
	assert_int_equal(a.compressed_chunks, 0);
	assert_int_equal(a.bytes_stored, a.bytes_used);
	/* only chunks whose newest record is before 1000 */
	got = rsp_window__compress(w, 1000, 0);
	assert_true(got > 0);
	rsp_window__stats(w, &b);
	assert_int_equal(b.compressed_chunks, (uint64_t)got);
	assert_int_equal(b.zchunks, (uint64_t)got);
	assert_int_equal(b.chunks, a.chunks);
	assert_int_equal(b.records, a.records);
	assert_int_equal(b.bytes_used, a.bytes_used);
	assert_int_equal(rsp_window__bytes_used(w), b.bytes_used);
	assert_memory_equal(b.kinds, a.kinds, sizeof(a.kinds));
	assert_true(b.bytes_stored < a.bytes_stored);
	assert_true(b.compressed_bytes * 2 < b.compressed_raw);
	h2 = digest(w, 0, UINT64_MAX, &n2);
	assert_int_equal(n2, n1);
	assert_int_equal(h2, h1);
	/* a range inside compressed chunks, and one across both kinds */
	h1 = digest(w, 100, 400, &n1);
	assert_int_equal(n1, 2 * 301);
	h1 = digest(w, 900, 1200, &n1);
	assert_int_equal(n1, 2 * 301);
	/* the rest, but never a stream's tail (being written) */
	got = rsp_window__compress(w, UINT64_MAX, 0);
	assert_true(got > 0);
	rsp_window__stats(w, &b);
	assert_int_equal(b.compressed_chunks, b.chunks - 4);
	assert_int_equal(rsp_window__compress(w, UINT64_MAX, 0), 0);
	h2 = digest(w, 0, UINT64_MAX, &n2);
	assert_int_equal(n2, 4000);
	/* the writer goes on after them */
	fill_mixed(w, 2001, 100);
	digest(w, 0, UINT64_MAX, &n2);
	assert_int_equal(n2, 4200);
	rsp_window__delete(w);
}

/* A snapshot taken before keeps reading the raw chunks; evicting compressed ones keeps count. */
static void test_compress_pinned_and_evicted(void **state)
{
	struct rsp_window *w = timed_window(64 * 4096, 2, 4096);
	struct rsp_window_stats st, plain;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t n = 0, t = 1;

	fill_mixed(w, t, 500);
	t += 500;
	s = rsp_window__pin(w, 0, UINT64_MAX);
	assert_true(rsp_window__compress(w, UINT64_MAX, 0) > 0);
	/* fill far past the budget, compressing as rspd does */
	for (int round = 0; round < 200; round++) {
		fill_mixed(w, t, 100);
		t += 100;
		assert_true(rsp_window__compress(w, t - 50, 3) >= 0);
	}
	it = rsp_witer__new(s, 0, UINT64_MAX);
	while (rsp_witer__next(it, &e)) {
		assert_int_equal(entry_tag(&e), e.time);
		n++;
	}
	assert_int_equal(n, 1000);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	rsp_window__stats(w, &st);
	assert_true(st.evicted_chunks > 0);
	assert_int_equal(st.appended, st.records + st.evicted_records);
	assert_true(st.bytes_allocated <= st.budget + 8 * 4096);
	/* the same appends, never compressed, keep far less */
	{
		struct rsp_window *p = timed_window(64 * 4096, 2, 4096);

		fill_mixed(p, 1, t - 1);
		rsp_window__stats(p, &plain);
		rsp_window__delete(p);
	}
	assert_true(st.records > 2 * plain.records);
	digest(w, 0, UINT64_MAX, &n);
	assert_int_equal(n, st.records);
	rsp_window__delete(w);
}

/* Records of zeros compress ~100x: a compressed chunk still counts a quarter of its raw bytes. */
static void test_compress_ratio_capped(void **state)
{
	struct rsp_window *w = timed_window(32 * 4096, 1, 4096);
	struct rsp_window_stats st;

	for (uint64_t t = 1; t < 200000; t++) {
		struct brec b = make_b(7, 0, 0);

		b.h.time = 7;
		assert_int_equal(rsp_window__append(w, 1, 7, (void *)&b), 0);
		if (t % 128 == 0)
			assert_true(rsp_window__compress(w, 8, 0) >= 0);
	}
	rsp_window__stats(w, &st);
	assert_true(st.compressed_chunks > 0);
	assert_true(st.bytes_used <= 4 * st.budget);
	assert_true(st.bytes_used > 3 * st.budget);
	rsp_window__delete(w);
}

/* What does not shrink is kept raw, and not tried again. */
static void test_compress_incompressible(void **state)
{
	struct rsp_window *w = timed_window(1 << 20, 1, 4096);
	struct rsp_window_stats st;
	uint64_t x = 88172645463325252ull, n;

	for (uint64_t t = 1; t < 1000; t++) {
		struct {
			struct rsp_brec_hdr h;
			uint64_t r[30];
		} b;

		memset(&b, 0, sizeof(b));
		b.h.type = RSP_BREC_TYPE(RSP_BREC_SWITCH);
		b.h.size = sizeof(b);
		b.h.time = t;
		b.h.pid = (uint32_t)(x >> 7);
		for (int k = 0; k < 30; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b.r[k] = x;
		}
		b.h.tid = (uint32_t)x;
		assert_int_equal(rsp_window__append(w, 1, t, (void *)&b.h), 0);
	}
	assert_int_equal(rsp_window__compress(w, UINT64_MAX, 0), 0);
	rsp_window__stats(w, &st);
	assert_true(st.zkept_raw > 0);
	assert_int_equal(st.compressed_chunks, 0);
	n = st.zkept_raw;
	assert_int_equal(rsp_window__compress(w, UINT64_MAX, 0), 0);
	rsp_window__stats(w, &st);
	assert_int_equal(st.zkept_raw, n);
	rsp_window__delete(w);
}

/* A reader that follows the window pass by pass resumes across chunks compressed behind it. */
static void test_compress_resume_marks(void **state)
{
	struct rsp_window *w = timed_window(1 << 20, 2, 4096);
	struct rsp_wmark marks[4] = {{0}};
	uint64_t done = 0, seen = 0;

	for (int pass = 0; pass < 40; pass++) {
		struct rsp_wsnap *s;
		struct rsp_witer *it;
		struct rsp_wentry e;
		uint64_t until = done + 100;

		fill_mixed(w, done + 1, 100);
		s = rsp_window__pin(w, done + 1, until);
		it = rsp_witer__resume(s, done + 1, until, marks);
		while (rsp_witer__next(it, &e)) {
			assert_true(e.time > done && e.time <= until);
			seen++;
		}
		rsp_witer__marks(it, marks);
		rsp_witer__delete(it);
		rsp_wsnap__unpin(s);
		assert_true(rsp_window__compress(w, until, 0) >= 0);
		done = until;
	}
	assert_int_equal(seen, 40 * 100 * 2);
	rsp_window__delete(w);
}

/*
 * Side kinds: a compressed chunk keeps its records of those kinds raw beside
 * the frame; rsp_window__pin_side() reads those (and every record of the
 * chunks left raw) without decompressing, in time order.
 */
static void test_compress_side(void **state)
{
	struct rsp_window_config c = {.budget = 1 << 20,
				      .nr_cpus = 2,
				      .chunk_size = 4096,
				      .streams_per_cpu = 2,
				      .time_offset = {0, offsetof(struct rsp_brec_hdr, time)},
				      .side_bpf_kinds = 1u << RSP_BREC_COMM};
	struct rsp_window *w = rsp_window__new(&c);
	struct rsp_window_stats a, b;
	struct rsp_wsnap *s;
	struct rsp_witer *it;
	struct rsp_wentry e;
	uint64_t comms = 0, others = 0, last = 0, n;

	assert_non_null(w);
	assert_int_equal(rsp_window__side_kinds(w), 1u << RSP_BREC_COMM);
	fill_mixed(w, 1, 1000);
	for (uint64_t t = 1000; t < 3000; t++) { /* a COMM every 100: in every chunk */
		struct brec r = make_b(t, (unsigned)(t % 2), t);

		if (t % 100 == 0)
			r.h.type = RSP_BREC_TYPE(RSP_BREC_COMM);
		assert_int_equal(rsp_window__append(w, 2 + t % 2, t, (void *)&r), 0);
	}
	rsp_window__note_lost(w, 3, 3000, 1); /* a wrapped entry among them */
	rsp_window__stats(w, &a);
	assert_true(rsp_window__compress(w, UINT64_MAX, 0) > 0);
	rsp_window__stats(w, &b);
	assert_true(b.compressed_chunks > 4);
	assert_true(b.bytes_stored < a.bytes_stored);
	/* every record, decompressed */
	s = rsp_window__pin_stream(w, 0, UINT64_MAX);
	it = s ? rsp_witer__new(s, 0, UINT64_MAX) : NULL;
	assert_non_null(it);
	for (n = 0; rsp_witer__next(it, &e); n++)
		;
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	assert_int_equal(n, 2 * 1000 + 2000 + 1);
	s = rsp_window__pin_side(w, 0, UINT64_MAX);
	it = s ? rsp_witer__new(s, 0, UINT64_MAX) : NULL;
	assert_non_null(it);
	while (rsp_witer__next(it, &e)) {
		assert_true(e.time >= last);
		last = e.time;
		if (e.rec->type == RSP_BREC_TYPE(RSP_BREC_COMM)) {
			assert_int_equal(e.time % 100, 0);
			assert_int_equal(entry_tag(&e), e.time);
			comms++;
		} else {
			others++;
		}
	}
	assert_int_equal(rsp_witer__error(it), 0);
	rsp_witer__delete(it);
	rsp_wsnap__unpin(s);
	assert_int_equal(comms, 20);
	/* the others: only those of the chunks left raw (each stream's newest) */
	assert_true(others > 0 && others < 1000);
	rsp_window__delete(w);
}

/*
 * Pins while the writer publishes: a stream's newest chunk may get its first
 * record (or one in the pinned range) between a pin's count of chunks and
 * its taking them. Under ASan an undersized array of chunks is an error.
 */
struct pin_race {
	struct rsp_window *w;
	_Atomic uint64_t now;
	_Atomic bool stop;
};

static void *race_writer(void *arg)
{
	struct pin_race *r = arg;

	for (uint64_t t = 1; t < 400000; t++) {
		unsigned cpu = (unsigned)(t % 4);
		struct fake f = make(t, cpu, t);

		assert_int_equal(rsp_window__append(r->w, cpu, t, &f.h), 0);
		atomic_store_explicit(&r->now, t, memory_order_release);
	}
	atomic_store_explicit(&r->stop, true, memory_order_release);
	return NULL;
}

static void test_pin_while_writing(void **state)
{
	struct pin_race r = {.w = window(64 * 1024, 4, 1024)};
	pthread_t th;
	uint64_t pins = 0;

	assert_int_equal(pthread_create(&th, NULL, race_writer, &r), 0);
	while (!atomic_load_explicit(&r.stop, memory_order_acquire)) {
		uint64_t now = atomic_load_explicit(&r.now, memory_order_acquire);
		struct rsp_wsnap *s = rsp_window__pin(r.w, now + 1, UINT64_MAX);
		uint64_t lo, hi;

		assert_non_null(s);
		rsp_wsnap__span(s, &lo, &hi);
		assert_true(!lo || hi > now);
		rsp_wsnap__unpin(s);
		pins++;
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(pins > 0);
	rsp_window__delete(r.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_and_read),
		cmocka_unit_test(test_rejects_bad_records),
		cmocka_unit_test(test_evicts_oldest_within_budget),
		cmocka_unit_test(test_pin_survives_eviction),
		cmocka_unit_test(test_quiet_cpu_keeps_open_chunk),
		cmocka_unit_test(test_merge_across_cpus),
		cmocka_unit_test(test_ties_ordered_by_cpu),
		cmocka_unit_test(test_time_range),
		cmocka_unit_test(test_gap_marker),
		cmocka_unit_test(test_budget_too_small),
		cmocka_unit_test(test_chunk_size_derived),
		cmocka_unit_test(test_append_ref),
		cmocka_unit_test(test_append_refs),
		cmocka_unit_test(test_self_timed_merge),
		cmocka_unit_test(test_self_timed_foreign_records),
		cmocka_unit_test(test_self_timed_budget),
		cmocka_unit_test(test_self_timed_pin_survives_eviction),
		cmocka_unit_test(test_self_timed_bad_offset),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_kinds_of_refs),
		cmocka_unit_test(test_resume_marks),
		cmocka_unit_test(test_compress_round_trip),
		cmocka_unit_test(test_compress_pinned_and_evicted),
		cmocka_unit_test(test_compress_ratio_capped),
		cmocka_unit_test(test_compress_incompressible),
		cmocka_unit_test(test_compress_resume_marks),
		cmocka_unit_test(test_compress_side),
		cmocka_unit_test(test_pin_while_writing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
