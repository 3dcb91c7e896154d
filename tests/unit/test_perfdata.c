// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/format/perfdata_write.c and lib/format/perfdata_read.c: a window
 * written as perf.data reads back as the same records under an equivalent
 * schema, queries give the same answers on both, and every kind of damage
 * to the file gets one error naming its offset (never a crash: this runs
 * under ASan too).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>
#include <math.h>
#include <jansson.h>
#include <rsp/query.h>
#include <rsp/tp.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include "internal/perfdata.h"
#include "internal/query.h"
#include "pd_fixture.h"

struct fx {
	struct rsp_schema *s;
	struct rsp_window *w;
	unsigned char *file;
	size_t len;
};

static void append(struct rsp_window *w, const struct perf_event_header *h)
{
	assert_int_equal(rsp_window__append(w, rsp_layout__cpu(h), rsp_layout__time(h), h), 0);
}

/*
 * Two CPUs, switches of both sched_switch evsels, a wakeup, a COMM and a
 * gap. Run times by construction: tid 100 ran 1000 ns (its second run
 * spans the gap: unknown), 200 ran 1000 + 700, 300 ran 1500, idle 1000.
 */
static struct rsp_window *scenario(enum fx_policy p)
{
	struct rsp_window_config wc = {.budget = 1 << 20, .nr_cpus = 2, .chunk_size = 8192};
	struct rsp_window *w = rsp_window__new(&wc);
	struct fx_rec r;
	int cc = p == FX_SLEEPS ? 1 : 0; /* evsel of sleeps under the sleeps policy */

	assert_non_null(w);
	append(w, fx_switch(&r, 0, 0, 1000, 0, 0, 100, false));
	append(w, fx_switch(&r, 0, 1, 1100, 0, 0, 300, false));
	append(w, fx_waking(&r, 0, 1500, 100, 200));
	append(w, fx_comm(&r, 1, 1600, 300, "renamed"));
	append(w, fx_switch(&r, cc, 0, 2000, 100, 1, 200, cc == 1));
	if (p == FX_SAMPLED)
		append(w, fx_switch(&r, 1, 0, 2000, 100, 1, 200, true)); /* the stack copy */
	append(w, fx_switch(&r, 0, 1, 2600, 300, 0x100, 0, false));
	append(w, fx_switch(&r, cc, 0, 3000, 200, 1, 100, cc == 1));
	assert_int_equal(rsp_window__note_lost(w, 0, 3500, 7), 0);
	append(w, fx_switch(&r, cc, 0, 4000, 100, 1, 0, cc == 1));
	append(w, fx_switch(&r, 0, 0, 5000, 0, 0, 200, false));
	append(w, fx_switch(&r, cc, 0, 5700, 200, 1, 0, cc == 1));
	return w;
}

static void fx_setup(struct fx *f, enum fx_policy p)
{
	f->s = fx_schema(p, 2);
	f->w = scenario(p);
	f->file = fx_write(f->s, f->w, &f->len);
}

static void fx_teardown(struct fx *f)
{
	rsp_window__delete(f->w);
	rsp_schema__delete(f->s);
	free(f->file);
}

static struct rsp_perfdata *open_ok(const struct fx *f)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_perfdata *pd = rsp_perfdata__parse(f->file, f->len, "test.data", &err);

	if (!pd)
		fail_msg("parse: %s", err.data);
	if (rsp_perfdata__load(pd, &err))
		fail_msg("load: %s", err.data);
	rsp_buf__exit(&err);
	return pd;
}

/* --- round trip ---------------------------------------------------------------- */

static void same_sample(const struct rsp_schema *ls, const struct perf_event_header *lh,
			const struct rsp_schema *os, const struct perf_event_header *oh)
{
	struct rsp_sample a, b;

	assert_int_equal(rsp_record__parse_sample(ls, lh, &a), 0);
	assert_int_equal(rsp_record__parse_sample(os, oh, &b), 0);
	assert_int_equal(a.event, b.event);
	assert_int_equal(a.role, b.role);
	assert_int_equal(a.pid, b.pid);
	assert_int_equal(a.tid, b.tid);
	assert_int_equal(a.time, b.time);
	assert_int_equal(a.cpu, b.cpu);
	assert_int_equal(a.ip, b.ip);
	assert_int_equal(a.raw_size, b.raw_size);
	assert_memory_equal(a.raw, b.raw, a.raw_size);
	assert_int_equal(a.nr_callchain, b.nr_callchain);
	if (a.nr_callchain)
		assert_memory_equal(a.callchain, b.callchain, a.nr_callchain * 8);
}

static void same_records(struct rsp_window *lw, const struct rsp_schema *ls, struct rsp_window *ow,
			 const struct rsp_schema *os)
{
	struct rsp_wsnap *lsnap = rsp_window__pin(lw, 0, UINT64_MAX);
	struct rsp_wsnap *osnap = rsp_window__pin(ow, 0, UINT64_MAX);
	struct rsp_witer *li = rsp_witer__new(lsnap, 0, UINT64_MAX);
	struct rsp_witer *oi = rsp_witer__new(osnap, 0, UINT64_MAX);
	struct rsp_wentry a, b;
	int n = 0;

	while (rsp_witer__next(li, &a)) {
		assert_int_equal(rsp_witer__next(oi, &b), 1);
		assert_int_equal(a.time, b.time);
		assert_int_equal(a.cpu, b.cpu);
		assert_int_equal(a.rec->type, b.rec->type);
		if (a.rec->type == PERF_RECORD_SAMPLE) {
			same_sample(ls, a.rec, os, b.rec);
		} else {
			assert_int_equal(a.rec->size, b.rec->size);
			assert_memory_equal(a.rec, b.rec, a.rec->size);
		}
		n++;
	}
	assert_int_equal(rsp_witer__next(oi, &b), 0);
	assert_true(n >= 11);
	rsp_witer__delete(li);
	rsp_witer__delete(oi);
	rsp_wsnap__unpin(lsnap);
	rsp_wsnap__unpin(osnap);
}

static int count_model(const struct perf_event_header *h, void *ctx)
{
	int *n = ctx;

	n[0]++;
	n[h->type < 16 ? h->type : 15]++;
	return 0;
}

/*
 * The side-band window (what the process model is ingested from) holds the
 * window's records but samples, the same ones in the same merged order.
 * Returns how many.
 */
static int same_side(const struct rsp_perfdata *pd)
{
	struct rsp_wsnap *wsnap = rsp_window__pin(pd->window, 0, UINT64_MAX);
	struct rsp_wsnap *ssnap = rsp_window__pin(pd->side, 0, UINT64_MAX);
	struct rsp_witer *wi = rsp_witer__new(wsnap, 0, UINT64_MAX);
	struct rsp_witer *si = rsp_witer__new(ssnap, 0, UINT64_MAX);
	struct rsp_wentry a, b;
	int n = 0;

	assert_non_null(si);
	while (rsp_witer__next(wi, &a)) {
		if (a.rec->type == PERF_RECORD_SAMPLE)
			continue;
		assert_int_equal(rsp_witer__next(si, &b), 1);
		assert_int_equal(a.time, b.time);
		assert_int_equal(a.cpu, b.cpu);
		assert_ptr_equal(a.rec, b.rec);
		n++;
	}
	assert_int_equal(rsp_witer__next(si, &b), 0);
	rsp_witer__delete(wi);
	rsp_witer__delete(si);
	rsp_wsnap__unpin(wsnap);
	rsp_wsnap__unpin(ssnap);
	return n;
}

static void test_roundtrip_sleeps(void **state)
{
	struct fx f;
	struct rsp_perfdata *pd;
	const struct rsp_schema *os;
	const struct rsp_dump_info *in;
	int model[16] = {0};

	fx_setup(&f, FX_SLEEPS);
	pd = open_ok(&f);
	os = rsp_perfdata__schema(pd);
	in = rsp_perfdata__info(pd);
	/* The two sched_switch evsels are one attr in the file. */
	assert_int_equal(rsp_schema__nr_evsels(os), 3);
	assert_string_equal(rsp_schema__evsel_name(os, 0), "sched:sched_switch");
	assert_true(rsp_schema__evsel_attr(os, 0)->sample_type & PERF_SAMPLE_CALLCHAIN);
	assert_string_equal(rsp_schema__evsel_name(os, 1), "sched:sched_waking");
	assert_int_equal(rsp_schema__evsel_event(os, 2), RSP_EV_sideband);
	for (unsigned c = 0; c < 2; c++) {
		assert_int_equal(rsp_schema__evsel_by_id(os, fx_id(0, c)), 0);
		assert_int_equal(rsp_schema__evsel_by_id(os, fx_id(1, c)), 0);
		assert_int_equal(rsp_schema__evsel_by_id(os, fx_id(2, c)), 1);
	}
	assert_true(rsp_schema__event_ok(os, RSP_EV_sched_switch));
	assert_int_equal(rsp_schema__tp_id(os, RSP_EV_sched_switch), FX_SWITCH_ID);
	assert_string_equal(in->hostname, "testhost");
	assert_string_equal(in->os_release, "6.18.0-test");
	assert_string_equal(in->cpu_desc, "Test CPU");
	assert_string_equal(in->cmdline, "/usr/sbin/rspd --foreground --stacks sleeps");
	assert_int_equal(in->nr_cpus_online, 2);
	assert_true(in->written_by_rsp && in->has_tracing_data && in->clock_data);
	assert_int_equal(in->nr_build_ids, 1);
	assert_int_equal(in->records, 11);
	assert_int_equal(in->first_time, 1000);
	assert_int_equal(in->last_time, 5700);
	assert_true(in->event_present[RSP_EV_sched_switch]);
	assert_true(in->event_present[RSP_EV_sched_waking]);
	assert_false(in->event_present[RSP_EV_block_rq_issue]);
	/* Process model: kernel MMAP, FORK, COMM, MMAP2, kept out of the window. */
	assert_int_equal(rsp_perfdata__process_model(pd, count_model, model), 0);
	assert_int_equal(model[0], 4);
	assert_int_equal(model[PERF_RECORD_MMAP], 1);
	assert_int_equal(model[PERF_RECORD_MMAP2], 1);
	assert_int_equal(in->process_records, 4);
	{
		struct rsp_source src;
		struct rsp_buf err = RSP_BUF_INIT;

		assert_int_equal(rsp_perfdata__source(pd, &src, &err), 0);
		same_records(f.w, f.s, src.window, os);
		assert_true(same_side(pd) >= 1);
		rsp_buf__exit(&err);
	}
	rsp_perfdata__delete(pd);
	fx_teardown(&f);
}

static void test_roundtrip_stack_copy(void **state)
{
	struct fx f;
	struct rsp_perfdata *pd;
	const struct rsp_schema *os;
	struct rsp_source src;
	struct rsp_buf err = RSP_BUF_INIT;

	fx_setup(&f, FX_SAMPLED);
	pd = open_ok(&f);
	os = rsp_perfdata__schema(pd);
	assert_int_equal(rsp_schema__nr_evsels(os), 4);
	assert_int_equal(rsp_schema__evsel_role(os, 0), RSP_ROLE_PRIMARY);
	assert_int_equal(rsp_schema__evsel_role(os, 1), RSP_ROLE_STACK_COPY);
	assert_string_equal(rsp_schema__evsel_name(os, 1), "rsp_stack_copy:sched:sched_switch");
	assert_int_equal(rsp_schema__evsel_event(os, 1), RSP_EV_sched_switch);
	assert_int_equal(rsp_schema__evsel_attr(os, 1)->sample_period, 10);
	assert_int_equal(rsp_perfdata__source(pd, &src, &err), 0);
	same_records(f.w, f.s, src.window, os);
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&err);
	fx_teardown(&f);
}

/* --- same answer live and offline ------------------------------------------------- */

static json_t *query(const struct rsp_source *src, int argc, const char *const *argv)
{
	struct rsp_request req;
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	json_t *j;

	assert_int_equal(rsp_request__parse(argc, argv, &req, &err), 0);
	if (rsp_query__run(&req, src, &out, &err))
		fail_msg("query: %s", err.data);
	j = json_loads(out.data, 0, NULL);
	assert_non_null(j);
	rsp_request__exit(&req);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return j;
}

static void same_key(json_t *a, json_t *b, const char *obj, const char *key)
{
	json_t *x = json_object_get(json_object_get(a, obj), key);
	json_t *y = json_object_get(json_object_get(b, obj), key);

	if (!json_equal(x, y))
		fail_msg("%s.%s differs live and offline", obj, key);
}

static void test_same_answer(void **state)
{
	static const char *const argv[] = {"status", "--events", "--pid", "200", "--json"};
	struct fx f;
	struct rsp_perfdata *pd;
	struct rsp_source live = {0}, off;
	struct rsp_buf err = RSP_BUF_INIT;
	json_t *a, *b, *t;

	fx_setup(&f, FX_SLEEPS);
	pd = open_ok(&f);
	live.window = f.w;
	live.schema = f.s;
	live.now = 6000;
	assert_int_equal(rsp_perfdata__source(pd, &off, &err), 0);
	a = query(&live, 5, argv);
	b = query(&off, 5, argv);
	assert_true(json_equal(json_object_get(a, "events"), json_object_get(b, "events")));
	assert_true(json_equal(json_object_get(a, "threads"), json_object_get(b, "threads")));
	same_key(a, b, "window", "records");
	same_key(a, b, "window", "oldest_s");
	same_key(a, b, "window", "newest_s");
	assert_true(json_is_true(json_object_get(b, "offline")));
	assert_non_null(json_object_get(b, "dump"));
	/* run time by construction: 1000 + 700 ns */
	t = json_array_get(json_object_get(b, "threads"), 0);
	assert_int_equal(json_integer_value(json_object_get(t, "tid")), 200);
	assert_true(fabs(json_real_value(json_object_get(t, "run_time_s")) - 1700e-9) < 1e-15);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "events"), "lost")),
			 7);
	json_decref(a);
	json_decref(b);
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&err);
	fx_teardown(&f);
}

/* Run time per thread from the switches on each CPU; unknown across a gap. */
static void test_run_time(void **state)
{
	static const long want[][2] = {{100, 1000}, {300, 1500}, {200, 1700}};
	struct fx f;
	struct rsp_source live = {0};

	fx_setup(&f, FX_SLEEPS);
	live.window = f.w;
	live.schema = f.s;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char pid[16];
		const char *argv[] = {"status", "--pid", pid, "--json"};
		json_t *j, *t;

		snprintf(pid, sizeof(pid), "%ld", want[i][0]);
		j = query(&live, 4, argv);
		t = json_array_get(json_object_get(j, "threads"), 0);
		assert_non_null(t);
		assert_true(fabs(json_real_value(json_object_get(t, "run_time_s")) -
				 (double)want[i][1] * 1e-9) < 1e-15);
		json_decref(j);
	}
	fx_teardown(&f);
}

/* --- damage ----------------------------------------------------------------------- */

/* Parsing and loading @len bytes of @buf fails with one sentence naming an offset. */
static void expect_error(const unsigned char *buf, size_t len, const char *want)
{
	struct rsp_buf err = RSP_BUF_INIT;
	unsigned char *copy = malloc(len ? len : 1);
	struct rsp_perfdata *pd;
	int ret = 0;

	memcpy(copy, buf, len); /* exact size: ASan sees any overread */
	pd = rsp_perfdata__parse(copy, len, "bad.data", &err);
	if (pd)
		ret = rsp_perfdata__load(pd, &err);
	if (pd && !ret)
		fail_msg("%zu bytes: no error (wanted '%s')", len, want ? want : "");
	assert_non_null(err.data);
	assert_non_null(strstr(err.data, "bad.data: "));
	if (!strstr(err.data, "offset 0x") && !strstr(err.data, "tracing data at offset"))
		fail_msg("no offset in '%s'", err.data);
	assert_null(strchr(err.data, '\n'));
	if (want && !strstr(err.data, want))
		fail_msg("'%s' does not say '%s'", err.data, want);
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&err);
	free(copy);
}

static uint64_t get64(const unsigned char *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, 8);
	return v;
}

static void put64(unsigned char *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

/* Cut the file at every section boundary (and around each). */
static void test_truncated(void **state)
{
	struct fx f;
	size_t cuts[64], n = 0;
	uint64_t data_off, data_end, nfeat = 0;

	fx_setup(&f, FX_SLEEPS);
	data_off = get64(f.file, 40);
	data_end = data_off + get64(f.file, 48);
	cuts[n++] = 0;
	cuts[n++] = 7;
	cuts[n++] = 8;
	cuts[n++] = 103;
	cuts[n++] = 104;
	cuts[n++] = get64(f.file, 24);			       /* attrs */
	cuts[n++] = get64(f.file, 24) + get64(f.file, 32) - 1; /* inside the last attr */
	cuts[n++] = data_off;
	cuts[n++] = data_off + 4;
	cuts[n++] = (data_off + data_end) / 2;
	cuts[n++] = data_end - 1;
	cuts[n++] = data_end;
	cuts[n++] = data_end + 8;
	for (int bit = 0; bit < 256; bit++)
		nfeat += (get64(f.file, 72 + 8 * (bit / 64)) >> (bit % 64)) & 1;
	for (uint64_t i = 0; i < nfeat && n + 2 < 64; i++) {
		uint64_t off = get64(f.file, data_end + 16 * i);

		cuts[n++] = off;
		cuts[n++] = off + get64(f.file, data_end + 16 * i + 8) - 1;
	}
	for (size_t i = 0; i < n; i++)
		if (cuts[i] < f.len)
			expect_error(f.file, cuts[i], NULL);
	/* And every length of the first 300 bytes, every 8th byte after. */
	for (size_t len = 0; len < f.len; len += len < 300 ? 1 : 8)
		expect_error(f.file, len, NULL);
	fx_teardown(&f);
}

static void test_bad_headers(void **state)
{
	struct fx f;
	unsigned char *b;
	uint64_t at;

	fx_setup(&f, FX_SLEEPS);
	b = malloc(f.len);
#define RESET() memcpy(b, f.file, f.len)
	RESET();
	memcpy(b, "NOTPERF!", 8);
	expect_error(b, f.len, "offset 0x0: not a perf.data file");
	RESET();
	memcpy(b, "2ELIFREP", 8);
	expect_error(b, f.len, "big-endian");
	RESET();
	memcpy(b, "PERFFILE", 8);
	expect_error(b, f.len, "legacy");
	RESET();
	put64(b, 8, 16);
	expect_error(b, f.len, "pipe-mode");
	RESET();
	put64(b, 8, 4096);
	expect_error(b, f.len, "offset 0x8: the header size");
	RESET();
	put64(b, 16, 0);
	expect_error(b, f.len, "offset 0x10: the attr size");
	/* Sizes that overflow: offset + size wraps around. */
	RESET();
	put64(b, 24, UINT64_MAX - 8);
	put64(b, 32, 64);
	expect_error(b, f.len, "offset 0x18: the attrs section");
	RESET();
	put64(b, 40, 1ull << 63);
	put64(b, 48, 1ull << 63);
	expect_error(b, f.len, "offset 0x28: the data section");
	RESET();
	put64(b, 32, UINT64_MAX);
	expect_error(b, f.len, "offset 0x18");
	/* Offsets past the end of the file. */
	RESET();
	put64(b, 24, f.len + 4096);
	expect_error(b, f.len, "runs past the end of the file");
	RESET();
	put64(b, get64(f.file, 40) + get64(f.file, 48), f.len + 1); /* first feature */
	expect_error(b, f.len, "feature section");
	RESET();
	put64(b, get64(f.file, 24) + 128, f.len); /* ids of attr 0 */
	put64(b, get64(f.file, 24) + 136, 8);
	expect_error(b, f.len, "ids of an attr");
	RESET();
	put64(b, get64(f.file, 24) + 136, 7);
	expect_error(b, f.len, "not a multiple of 8");
	RESET();
	put64(b, 32, get64(f.file, 32) + 1);
	expect_error(b, f.len, "whole number");
	RESET();
	memcpy(b + get64(f.file, 24) + 4, &(uint32_t){4096}, 4); /* attr.size */
	expect_error(b, f.len, "does not fit");
	RESET();
	at = get64(f.file, 24) + 24; /* attr 0's sample_type */
	put64(b, at, get64(f.file, at) & ~(uint64_t)PERF_SAMPLE_CPU);
	expect_error(b, f.len, "perf record -a");
#undef RESET
	free(b);
	fx_teardown(&f);
}

/* The offset of the @k-th record of the data section. */
static size_t record_at(const unsigned char *b, int k)
{
	size_t off = get64(b, 40);

	for (int i = 0; i < k; i++) {
		uint16_t size;

		memcpy(&size, b + off + 6, 2);
		off += size;
	}
	return off;
}

static void test_bad_records(void **state)
{
	struct fx f;
	unsigned char *b;
	char want[64];
	size_t at;
	uint16_t v;

	fx_setup(&f, FX_SLEEPS);
	b = malloc(f.len);
	/* Record 5 is the first window record (after 4 process records and FINISHED_INIT). */
	at = record_at(f.file, 5);
	memcpy(b, f.file, f.len);
	v = 0;
	memcpy(b + at + 6, &v, 2);
	snprintf(want, sizeof(want), "offset 0x%zx: a record", at);
	expect_error(b, f.len, want);
	expect_error(b, f.len, "less than its header");
	memcpy(b, f.file, f.len);
	v = 12;
	memcpy(b + at + 6, &v, 2);
	expect_error(b, f.len, "not a multiple of 8");
	memcpy(b, f.file, f.len);
	v = 65528;
	memcpy(b + at + 6, &v, 2);
	expect_error(b, f.len, "past the end of the data section");
	memcpy(b, f.file, f.len);
	put64(b, at + 8, 999); /* sample id */
	expect_error(b, f.len, "sample id 999");
	memcpy(b, f.file, f.len);
	v = 16; /* a sample too short for its fields */
	memcpy(b + at + 6, &v, 2);
	expect_error(b, f.len, "malformed");
	memcpy(b, f.file, f.len);
	v = RSP_PD_RECORD_COMPRESSED;
	memcpy(b + at, &v, 2);
	expect_error(b, f.len, "compressed");
	free(b);
	fx_teardown(&f);
}

static void test_bad_features(void **state)
{
	struct fx f;
	unsigned char *b;
	uint64_t table, flags = 0;
	int feat = 0, idx = 0;

	fx_setup(&f, FX_SLEEPS);
	b = malloc(f.len);
	table = get64(f.file, 40) + get64(f.file, 48);
	memcpy(&flags, f.file + 72, 8);
	/* Corrupt the first u32 of each feature section in turn. */
	for (feat = 0; feat < 64; feat++) {
		uint64_t off;

		if (!((flags >> feat) & 1))
			continue;
		off = get64(f.file, table + 16 * (uint64_t)idx++);
		memcpy(b, f.file, f.len);
		memcpy(b + off, &(uint32_t){0x7fffffff}, 4);
		if (feat == RSP_PD_FEAT_HOSTNAME || feat == RSP_PD_FEAT_CMDLINE ||
		    feat == RSP_PD_FEAT_EVENT_DESC || feat == RSP_PD_FEAT_CLOCK_DATA) {
			char want[48];

			snprintf(want, sizeof(want), "offset 0x%llx", (unsigned long long)off);
			expect_error(b, f.len, want);
		} else if (feat == RSP_PD_FEAT_TRACING_DATA) {
			expect_error(b, f.len, "tracing data at offset");
		}
	}
	free(b);
	fx_teardown(&f);
}

/* rsp's own section: the boot id and socket table rspctl merge needs. */
static void test_rsp_host(void **state)
{
	struct fx f;
	struct rsp_perfdata *pd;
	const struct rsp_dump_info *in;
	const struct rsp_sock_info *so;
	uint64_t table, flags[4], off;
	int idx = 0;

	(void)state;
	fx_setup(&f, FX_SLEEPS);
	pd = open_ok(&f);
	in = rsp_perfdata__info(pd);
	assert_true(in->has_host);
	assert_string_equal(in->boot_id, FX_BOOT_ID);
	assert_int_equal(in->nr_sockets, 2);
	so = rsp_perfdata__sockets(pd);
	assert_non_null(so);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(so[i].sk, fx_socks[i].sk);
		assert_int_equal(so[i].proto, fx_socks[i].proto);
		assert_int_equal(so[i].state, fx_socks[i].state);
		assert_int_equal(so[i].inode, fx_socks[i].inode);
		assert_memory_equal(&so[i].local, &fx_socks[i].local, sizeof(so[i].local));
		assert_memory_equal(&so[i].remote, &fx_socks[i].remote, sizeof(so[i].remote));
	}
	rsp_perfdata__delete(pd);
	/* The section is the table's last entry (highest bit): claim 2^30 sockets. */
	table = get64(f.file, 40) + get64(f.file, 48);
	memcpy(flags, f.file + 72, sizeof(flags));
	assert_true((flags[RSP_PD_FEAT_RSP_HOST / 64] >> (RSP_PD_FEAT_RSP_HOST % 64)) & 1);
	for (int w = 0; w < 4; w++)
		idx += __builtin_popcountll(flags[w]);
	off = get64(f.file, table + 16 * (uint64_t)(idx - 1));
	off += 4 + 4 + 64; /* version, boot id string (36 + NUL, padded to 64) */
	memcpy(f.file + off, &(uint32_t){1u << 30}, 4);
	expect_error(f.file, f.len, "RSP_HOST claims 1073741824 sockets");
	fx_teardown(&f);
}

/* rsp's own section: each process's cgroup and namespaced pid, into the file's model. */
static void test_rsp_cgroups(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_source src;
	struct rsp_pd_cgroup e;
	struct rsp_perfdata *pd;
	const struct rsp_dump_info *in;
	const struct rsp_maps *m;
	uint64_t table, flags[4], off;
	int idx = 0;
	struct fx f;

	(void)state;
	fx_setup(&f, FX_SLEEPS); /* without the section: the file knows no cgroups */
	pd = open_ok(&f);
	assert_false(rsp_perfdata__info(pd)->has_cgroups);
	assert_int_equal(rsp_perfdata__cgroup(pd, 0, &e), -ENOENT);
	rsp_perfdata__delete(pd);
	fx_teardown(&f);

	fx_cgroups = true;
	fx_setup(&f, FX_SLEEPS);
	fx_cgroups = false;
	pd = open_ok(&f);
	in = rsp_perfdata__info(pd);
	assert_true(in->has_cgroups);
	assert_int_equal(in->nr_cgroups, 2);
	assert_int_equal(rsp_perfdata__cgroup(pd, 0, &e), 0);
	assert_int_equal(e.pid, 42);
	assert_int_equal(e.nspid, 7);
	assert_int_equal(e.time, 100);
	assert_string_equal(e.path, FX_CGROUP);
	assert_int_equal(rsp_perfdata__cgroup(pd, 1, &e), 0);
	assert_int_equal(e.pid, 100);
	assert_int_equal(e.nspid, 3);
	assert_string_equal(e.path, "");
	assert_int_equal(rsp_perfdata__cgroup(pd, 2, &e), -ENOENT);
	/* the file's process model has them (pid 42 is in its synthesized processes) */
	assert_int_equal(rsp_perfdata__source(pd, &src, &err), 0);
	m = rsp_symbolizer__maps(src.symbols);
	assert_string_equal(rsp_maps__cgroup(m, 42, in->last_time), FX_CGROUP);
	assert_int_equal(rsp_maps__nspid(m, 42, in->last_time), 7);
	rsp_perfdata__delete(pd);
	rsp_buf__exit(&err);

	/* The section is the table's last entry (highest bit): damage it. */
	table = get64(f.file, 40) + get64(f.file, 48);
	memcpy(flags, f.file + 72, sizeof(flags));
	assert_true((flags[RSP_PD_FEAT_RSP_CGROUPS / 64] >> (RSP_PD_FEAT_RSP_CGROUPS % 64)) & 1);
	for (int w = 0; w < 4; w++)
		idx += __builtin_popcountll(flags[w]);
	off = get64(f.file, table + 16 * (uint64_t)(idx - 1));
	memcpy(f.file + off, &(uint32_t){2}, 4);
	expect_error(f.file, f.len, "RSP_CGROUPS version 2 is not 1");
	memcpy(f.file + off, &(uint32_t){1}, 4);
	memcpy(f.file + off + 4, &(uint32_t){1u << 30}, 4);
	expect_error(f.file, f.len, "RSP_CGROUPS claims 1073741824 processes");
	memcpy(f.file + off + 4, &(uint32_t){2}, 4);
	f.file[off + 8 + 20] = 'x'; /* the first path */
	expect_error(f.file, f.len, "does not start with '/'");
	f.file[off + 8 + 20] = '/';
	memcpy(f.file + off + 8 + 16, &(uint32_t){1u << 20}, 4); /* its length */
	expect_error(f.file, f.len, "a string of the RSP_CGROUPS feature claims");
	fx_teardown(&f);
}

/*
 * Probes through the dynamic PMUs (uprobes, kprobes) have the recording
 * machine's type numbers: the reader knows them by the names rsp's dumps
 * give them ("libc:FUNCTION", "kprobe:FUNCTION"). One attr per uprobe.
 */
static void test_probe_names(void **state)
{
	static const struct {
		uint32_t type;
		uint64_t config2;
		const char *name;
		int event;
	} probes[] = {
		{9, 0x1000, "libc:poll", RSP_EV_uprobe},
		{9, 0x2000, "libc:read", RSP_EV_uprobe},
		{8, 0, "kprobe:tcp_sendmsg", RSP_EV_kp_tcp_sendmsg},
		{8, 0, "kprobe:no_such_function", -1},
	};
	struct fx f;
	struct rsp_perfdata *pd;
	const struct rsp_schema *os;
	const struct rsp_dump_info *in;
	struct perf_event_attr a;

	f.s = fx_schema(FX_SLEEPS, 2);
	for (int i = 0; i < 4; i++) {
		int idx;

		fx_attr(&a, probes[i].type, 0, false, probes[i].type == 9);
		a.config2 = probes[i].config2;
		idx = rsp_schema__add_evsel(f.s, &a, probes[i].event < 0 ? -1 : probes[i].event,
					    RSP_ROLE_PRIMARY, probes[i].name);
		assert_int_equal(idx, 4 + i);
		for (unsigned c = 0; c < 2; c++)
			assert_int_equal(rsp_schema__add_id(f.s, idx, fx_id(idx, c)), 0);
	}
	f.w = scenario(FX_SLEEPS);
	f.file = fx_write(f.s, f.w, &f.len);
	pd = open_ok(&f);
	os = rsp_perfdata__schema(pd);
	in = rsp_perfdata__info(pd);
	/* sched_switch (merged), sched_waking, dummy, then the four probes. */
	assert_int_equal(rsp_schema__nr_evsels(os), 7);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(rsp_schema__evsel_name(os, 3 + i), probes[i].name);
		assert_int_equal(rsp_schema__evsel_event(os, 3 + i), probes[i].event);
		assert_int_equal(rsp_schema__evsel_by_id(os, fx_id(4 + i, 1)), 3 + i);
	}
	assert_true(in->event_present[RSP_EV_uprobe]);
	assert_true(in->event_present[RSP_EV_kp_tcp_sendmsg]);
	assert_false(in->event_present[RSP_EV_kp_udp_sendmsg]);
	rsp_perfdata__delete(pd);
	fx_teardown(&f);
}

/*
 * The window is sized for the CPUs the NRCPUS feature names; a file whose
 * records name more (or that does not say) is read all the same.
 */
static void test_nrcpus_hint(void **state)
{
	static const uint32_t says[] = {2, 3, 1, 0, 5000};
	static const unsigned want[] = {2, 3, 2, 2, 2};
	struct fx f, g;
	uint64_t table, flags = 0;
	int idx = 0;

	fx_setup(&f, FX_SLEEPS);
	table = get64(f.file, 40) + get64(f.file, 48);
	memcpy(&flags, f.file + 72, 8);
	assert_true((flags >> RSP_PD_FEAT_NRCPUS) & 1);
	for (int feat = 0; feat < RSP_PD_FEAT_NRCPUS; feat++)
		idx += (flags >> feat) & 1;
	g = f;
	g.file = malloc(f.len);
	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		struct rsp_buf err = RSP_BUF_INIT;
		struct rsp_perfdata *pd;
		struct rsp_source src;

		memcpy(g.file, f.file, f.len);
		memcpy(g.file + get64(f.file, table + 16 * (uint64_t)idx), &says[i], 4);
		pd = open_ok(&g);
		assert_int_equal(rsp_perfdata__source(pd, &src, &err), 0);
		assert_int_equal(rsp_window__nr_cpus(src.window), want[i]);
		assert_int_equal(rsp_perfdata__info(pd)->records, 11);
		assert_int_equal(rsp_perfdata__info(pd)->process_records, 4);
		same_records(f.w, f.s, src.window, rsp_perfdata__schema(pd));
		rsp_perfdata__delete(pd);
		rsp_buf__exit(&err);
	}
	free(g.file);
	fx_teardown(&f);
}

/* Which analyses a stream's events allow (tracepoints/analyses.def). */
static void test_check_events(void **state)
{
	static const struct rsp_command graph = {.name = "graph"};
	struct rsp_request req = {.cmd = &graph};
	struct rsp_buf notes = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_schema *s = fx_schema(FX_SLEEPS, 2);
	struct rsp_schema *only_switch = rsp_schema__new();

	/* switch and waking present: possible, with notes about disks and irqs */
	assert_int_equal(rsp_request__check_events(&req, s, &notes, &err), 0);
	assert_non_null(strstr(notes.data, "block:block_rq_issue"));
	assert_non_null(strstr(notes.data, "graph lacks"));
	rsp_buf__reset(&notes);
	rsp_schema__add_evsel(only_switch, rsp_schema__evsel_attr(s, 0), RSP_EV_sched_switch,
			      RSP_ROLE_PRIMARY, "sched:sched_switch");
	assert_int_equal(rsp_request__check_events(&req, only_switch, &notes, &err), -ENOENT);
	assert_non_null(strstr(err.data, "graph is impossible"));
	assert_non_null(strstr(err.data, "sched:sched_switch")); /* fields not resolved */
	rsp_schema__delete(s);
	rsp_schema__delete(only_switch);
	rsp_buf__exit(&notes);
	rsp_buf__exit(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_sleeps),
		cmocka_unit_test(test_roundtrip_stack_copy),
		cmocka_unit_test(test_same_answer),
		cmocka_unit_test(test_run_time),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_bad_features),
		cmocka_unit_test(test_nrcpus_hint),
		cmocka_unit_test(test_check_events),
		cmocka_unit_test(test_probe_names),
		cmocka_unit_test(test_rsp_host),
		cmocka_unit_test(test_rsp_cgroups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
