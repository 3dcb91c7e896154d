// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the pprof writer (lib/format/pprof.c), read back with the
 * protobuf-c decoder generated from the same profile.proto after zlib's
 * gunzip: samples with their values, locations leaf first and labels;
 * equal samples summed; functions, locations and mappings shared; the
 * build-id as hex; string_table[0] ""; an empty profile.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>
#include "internal/pprof.h"
#include "pprof/profile.pb-c.h"

static const struct rsp_pprof_type types[2] = {{"wait", "nanoseconds"}, {"cpu", "nanoseconds"}};

/* gunzip and decode (the caller frees with perftools__profiles__profile__free_unpacked). */
static Perftools__Profiles__Profile *decode(const struct rsp_buf *b)
{
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	z_stream z = {0};
	Perftools__Profiles__Profile *p;

	assert_non_null(raw);
	assert_true(b->len > 18);
	assert_int_equal((uint8_t)b->data[0], 0x1f); /* gzip's magic, not zlib's */
	assert_int_equal((uint8_t)b->data[1], 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)b->data;
	z.avail_in = (uInt)b->len;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	assert_non_null(p);
	return p;
}

static const char *s(const Perftools__Profiles__Profile *p, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Perftools__Profiles__Profile *p, uint64_t id)
{
	assert_true(id >= 1 && id <= p->n_location);
	assert_int_equal(p->location[id - 1]->id, id);
	return p->location[id - 1];
}

static const char *fn_name(const Perftools__Profiles__Profile *p, uint64_t loc_id)
{
	const Perftools__Profiles__Location *l = loc(p, loc_id);
	uint64_t f;

	assert_int_equal(l->n_line, 1);
	f = l->line[0]->function_id;
	assert_true(f >= 1 && f <= p->n_function);
	return s(p, p->function[f - 1]->name);
}

static const char *label(const Perftools__Profiles__Sample *smp,
			 const Perftools__Profiles__Profile *p, const char *key, int64_t *num)
{
	for (size_t i = 0; i < smp->n_label; i++) {
		if (strcmp(s(p, smp->label[i]->key), key))
			continue;
		if (num)
			*num = smp->label[i]->num;
		return s(p, smp->label[i]->str);
	}
	fail_msg("no label %s", key);
	return NULL;
}

static void test_round_trip(void **state)
{
	static const uint8_t bid[4] = {0xde, 0xad, 0x01, 0x2f};
	struct rsp_pprof w;
	struct rsp_buf out = RSP_BUF_INIT;
	struct rsp_pprof_frame leaf = {"fsync", "/usr/lib/libc.so.6", 0x7f0000001234, bid, 4},
			       mid = {"main", "/usr/bin/app", 0x401000, NULL, 0},
			       kern = {"ext4_sync_file", "[kernel.kallsyms]", 0xffffffff81000000,
				       NULL, 0},
			       mark = {"[sleep:block_io]", NULL, 0, NULL, 0};
	struct rsp_pprof_label l1[3] = {{"reason", "block_io", 0, NULL},
					{"thread", "app (pid 7)", 0, NULL},
					{"depth", NULL, 0, "threads"}},
			       l2[3] = {{"reason", "lock", 0, NULL},
					{"thread", "app (pid 7)", 0, NULL},
					{"depth", NULL, 1, "threads"}};
	struct rsp_pprof_meta meta = {.time_nanos = 5,
				      .duration_nanos = 2000000000,
				      .comment = "rsp snapshot of pid 7",
				      .default_type = "wait"};
	uint64_t st[4];
	int64_t v1[2] = {100, 0}, v2[2] = {50, 7}, v3[2] = {1, 2};
	Perftools__Profiles__Profile *p;
	int64_t depth;

	rsp_pprof__init(&w, types, 2);
	st[0] = rsp_pprof__location(&w, &mark);
	st[1] = rsp_pprof__location(&w, &kern);
	st[2] = rsp_pprof__location(&w, &leaf);
	st[3] = rsp_pprof__location(&w, &mid);
	assert_int_equal(rsp_pprof__location(&w, &leaf), st[2]); /* shared by value */
	rsp_pprof__sample(&w, st, 4, v1, l1, 3);
	rsp_pprof__sample(&w, st, 4, v2, l1, 3); /* the same: summed */
	rsp_pprof__sample(&w, st, 4, v3, l2, 3); /* other labels: its own */
	rsp_pprof__sample(&w, st + 2, 2, v3, NULL, 0);
	assert_int_equal(rsp_pprof__finish(&w, &meta, &out), 0);

	p = decode(&out);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(s(p, p->sample_type[0]->type), "wait");
	assert_string_equal(s(p, p->sample_type[1]->type), "cpu");
	assert_string_equal(s(p, p->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(s(p, p->default_sample_type), "wait");
	assert_int_equal(p->duration_nanos, 2000000000);
	assert_int_equal(p->n_comment, 1);
	assert_string_equal(s(p, p->comment[0]), "rsp snapshot of pid 7");
	assert_int_equal(p->n_sample, 3);
	assert_int_equal(p->sample[0]->n_value, 2);
	assert_int_equal(p->sample[0]->value[0], 150);
	assert_int_equal(p->sample[0]->value[1], 7);
	assert_int_equal(p->sample[0]->n_location_id, 4);
	assert_string_equal(fn_name(p, p->sample[0]->location_id[0]), "[sleep:block_io]");
	assert_string_equal(fn_name(p, p->sample[0]->location_id[1]), "ext4_sync_file");
	assert_string_equal(fn_name(p, p->sample[0]->location_id[3]), "main");
	assert_string_equal(label(p->sample[0], p, "reason", NULL), "block_io");
	assert_string_equal(label(p->sample[1], p, "reason", NULL), "lock");
	label(p->sample[1], p, "depth", &depth);
	assert_int_equal(depth, 1);
	assert_int_equal(p->sample[1]->value[0], 1);
	assert_int_equal(p->sample[2]->n_label, 0);
	assert_string_equal(fn_name(p, p->sample[2]->location_id[0]), "fsync");
	/* locations: addresses and mappings (a marker has none) */
	assert_int_equal(p->n_location, 4);
	assert_int_equal(loc(p, st[0])->mapping_id, 0);
	assert_int_equal(loc(p, st[2])->address, 0x7f0000001234);
	assert_int_equal(p->n_mapping, 3);
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];

		assert_int_equal(m->id, i + 1);
		assert_true(m->has_functions);
		if (!strcmp(s(p, m->filename), "/usr/lib/libc.so.6")) {
			assert_string_equal(s(p, m->build_id), "dead012f");
			assert_true(m->memory_start <= 0x7f0000001234 &&
				    0x7f0000001234 < m->memory_limit);
		} else {
			assert_string_equal(s(p, m->build_id), "");
		}
	}
	assert_int_equal(loc(p, st[2])->mapping_id != loc(p, st[3])->mapping_id, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	rsp_buf__exit(&out);
}

static void test_empty(void **state)
{
	struct rsp_pprof w;
	struct rsp_buf out = RSP_BUF_INIT;
	struct rsp_pprof_meta meta = {.period_type = {"cpu", "nanoseconds"}, .period = 1000000};
	Perftools__Profiles__Profile *p;

	rsp_pprof__init(&w, types + 1, 1);
	assert_int_equal(rsp_pprof__finish(&w, &meta, &out), 0);
	p = decode(&out);
	assert_int_equal(p->n_sample, 0);
	assert_int_equal(p->n_sample_type, 1);
	assert_non_null(p->period_type);
	assert_string_equal(s(p, p->period_type->type), "cpu");
	assert_int_equal(p->period, 1000000);
	assert_int_equal(p->default_sample_type, 0); /* unset: readers take the last */
	perftools__profiles__profile__free_unpacked(p, NULL);
	rsp_buf__exit(&out);
}

/* Many distinct samples and strings: the tables grow, ids stay dense. */
static void test_many(void **state)
{
	struct rsp_pprof w;
	struct rsp_buf out = RSP_BUF_INIT;
	Perftools__Profiles__Profile *p;
	int64_t total = 0;

	rsp_pprof__init(&w, types, 2);
	for (int i = 0; i < 5000; i++) {
		char name[32];
		struct rsp_pprof_frame f = {name, "/bin/x", 0x1000 + (uint64_t)i % 700, NULL, 0};
		uint64_t id;
		int64_t v[2] = {i, 1};

		snprintf(name, sizeof(name), "fn%d", i % 700);
		id = rsp_pprof__location(&w, &f);
		rsp_pprof__sample(&w, &id, 1, v, NULL, 0);
	}
	assert_int_equal(rsp_pprof__finish(&w, &(struct rsp_pprof_meta){0}, &out), 0);
	p = decode(&out);
	assert_int_equal(p->n_sample, 700);
	assert_int_equal(p->n_location, 700);
	assert_int_equal(p->n_function, 700);
	assert_int_equal(p->n_mapping, 1);
	assert_int_equal(p->mapping[0]->memory_start, 0x1000);
	assert_int_equal(p->mapping[0]->memory_limit, 0x1000 + 700);
	for (size_t i = 0; i < p->n_sample; i++)
		total += p->sample[i]->value[0];
	assert_int_equal(total, 4999LL * 5000 / 2);
	perftools__profiles__profile__free_unpacked(p, NULL);
	rsp_buf__exit(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
