// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of librsp's internal toolkit: vectors and keyed vectors, the
 * hash, the callchain iterator, the JSON emitter, the redaction.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <rsp/buf.h>
#include <rsp/query.h>
#include "internal/callchain.h"
#include "internal/hash.h"
#include "internal/json.h"
#include "internal/redact.h"
#include "internal/vec.h"

static void test_vec_reserve(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	assert_int_equal(rsp_vec__reserve((void **)&v, &cap, 1, sizeof(*v)), 0);
	assert_int_equal(cap, 64);
	assert_int_equal(rsp_vec__reserve((void **)&v, &cap, 64, sizeof(*v)), 0);
	assert_int_equal(cap, 64); /* enough: no growth */
	assert_int_equal(rsp_vec__reserve((void **)&v, &cap, 65, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	assert_int_equal(rsp_vec__reserve((void **)&v, &cap, 1000, sizeof(*v)), 0);
	assert_int_equal(cap, 1024);
	v[999] = 7;
	/* overflowing sizes fail and leave the vector as it was */
	assert_int_equal(rsp_vec__reserve((void **)&v, &cap, SIZE_MAX / 2, sizeof(*v)), -ENOMEM);
	assert_int_equal(cap, 1024);
	assert_int_equal(v[999], 7);
	free(v);
}

struct item {
	uint64_t key;
	uint32_t n;
};

static int sort_calls;

static int cmp_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	sort_calls++;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* rsp_vec__sort(): in order already, one pass and nothing moved; else sorted. */
static void test_vec_sort(void **state)
{
	struct item v[6] = {{1, 0}, {2, 1}, {2, 2}, {5, 3}, {9, 4}, {9, 5}};

	sort_calls = 0;
	rsp_vec__sort(v, 6, sizeof(v[0]), cmp_key);
	assert_int_equal(sort_calls, 5);
	for (uint32_t i = 0; i < 6; i++)
		assert_int_equal(v[i].n, i);
	v[0].key = 7; /* 7 2 2 5 9 9 */
	rsp_vec__sort(v, 6, sizeof(v[0]), cmp_key);
	for (int i = 1; i < 6; i++)
		assert_true(v[i - 1].key <= v[i].key);
	assert_int_equal(v[3].key, 7);
	assert_int_equal(v[3].n, 0);
	rsp_vec__sort(v, 0, sizeof(v[0]), cmp_key); /* empty and one: nothing to do */
	rsp_vec__sort(v, 1, sizeof(v[0]), cmp_key);
}

static void test_kvec(void **state)
{
	struct rsp_kvec kv;
	struct item *it;
	bool added;
	size_t n;

	rsp_kvec__init(&kv, sizeof(struct item));
	assert_null(rsp_kvec__find(&kv, 5));
	for (uint64_t k = 0; k < 1000; k++) {
		it = rsp_kvec__get(&kv, k * 7, &added);
		assert_non_null(it);
		assert_true(added);
		assert_int_equal(it->n, 0); /* zeroed */
		it->key = k * 7;
	}
	for (uint64_t k = 0; k < 1000; k++) {
		it = rsp_kvec__get(&kv, k * 7, &added);
		assert_false(added);
		it->n++;
	}
	assert_int_equal(rsp_kvec__len(&kv), 1000);
	/* insertion order, stable indexes */
	for (size_t i = 0; i < 1000; i++) {
		it = rsp_kvec__at(&kv, i);
		assert_int_equal(it->key, i * 7);
		assert_int_equal(it->n, 1);
		assert_int_equal(rsp_kvec__index(&kv, i * 7), (long)i);
	}
	assert_int_equal(rsp_kvec__index(&kv, 3), -1);
	it = rsp_kvec__take(&kv, &n);
	assert_int_equal(n, 1000);
	assert_int_equal(rsp_kvec__len(&kv), 0);
	assert_null(rsp_kvec__find(&kv, 7));
	free(it);
	rsp_kvec__exit(&kv);
	rsp_kvec__exit(&kv); /* twice is fine */
}

static void test_hash(void **state)
{
	/* FNV-1a's published value for "a" */
	assert_int_equal(rsp_hash__bytes(RSP_HASH_INIT, "a", 1), 0xaf63dc4c8601ec8cull);
	assert_int_equal(rsp_hash__bytes(RSP_HASH_INIT, "", 0), RSP_HASH_INIT);
	assert_int_not_equal(rsp_hash__mix(1), rsp_hash__mix(2));
	assert_int_equal(rsp_hash__mix(0), 0);
	assert_int_equal(rsp_hash__key(UINT64_MAX), 0);
	assert_int_equal(rsp_hash__key(42), 42);
	/* a word at a time is FNV-1a's step over the word */
	assert_int_equal(rsp_hash__u64(RSP_HASH_INIT, 0x61),
			 rsp_hash__bytes(RSP_HASH_INIT, "a", 1));
	/* a stack's hash: four chains, each mixed into the next with the length */
	{
		uint64_t w[11], lane[4];

		for (size_t i = 0; i < 11; i++)
			w[i] = 0xffffffff81000000ull + i * 0x1234567ull;
		for (size_t n = 0; n <= 11; n++) {
			for (size_t l = 0; l < 4; l++)
				lane[l] = RSP_HASH_INIT ^ l;
			for (size_t i = 0; i < n; i++)
				lane[i < n / 4 * 4 ? i % 4 : 0] =
					rsp_hash__u64(lane[i < n / 4 * 4 ? i % 4 : 0], w[i]);
			assert_int_equal(
				rsp_hash__stack(w, n),
				rsp_hash__mix(
					lane[0] ^
					rsp_hash__mix(lane[1] ^
						      rsp_hash__mix(lane[2] ^
								    rsp_hash__mix(lane[3] ^ n)))));
			/* a prefix is another stack; so is one word changed */
			if (n)
				assert_int_not_equal(rsp_hash__stack(w, n),
						     rsp_hash__stack(w, n - 1));
		}
		lane[0] = rsp_hash__stack(w, 11);
		w[5] ^= 1;
		assert_int_not_equal(rsp_hash__stack(w, 11), lane[0]);
	}
	/* the stored form: never 0, its low bit says whether a user part follows a marker */
	{
		uint64_t c[9] = {PERF_CONTEXT_KERNEL,
				 0xffffffff81000010ull,
				 0xffffffff81000020ull,
				 0xffffffff81000030ull,
				 0xffffffff81000040ull,
				 PERF_CONTEXT_USER,
				 0x401000,
				 0x402000,
				 0x403000};

		for (size_t n = 0; n <= 9; n++) {
			uint32_t h = rsp_hash__stack32(c, n);
			uint64_t h64 = rsp_hash__stack(c, n);
			uint32_t want = (uint32_t)(h64 ^ h64 >> 32) & ~RSP_STACK_HASH_USER;

			assert_int_not_equal(h, 0);
			/* the marker at 5 with a word after it: from n = 7 on */
			assert_int_equal(h & RSP_STACK_HASH_USER, n >= 7);
			assert_int_equal(h & ~RSP_STACK_HASH_USER, want ? want : 2);
		}
		c[5] = 0xffffffff81000050ull; /* a user-only chain, its marker in the first four */
		c[1] = PERF_CONTEXT_USER;
		assert_true(rsp_hash__stack32(c + 1, 8) & RSP_STACK_HASH_USER);
	}
}

static void test_callchain(void **state)
{
	const uint64_t chain[] = {0x111, /* before any marker: no context */
				  PERF_CONTEXT_KERNEL,
				  0xffffffff81000010ull,
				  0xffffffff81000020ull,
				  PERF_CONTEXT_USER,
				  0x401000,
				  0x402000};
	const uint64_t n = sizeof(chain) / sizeof(chain[0]);
	struct rsp_chain_iter it;
	struct rsp_chain_frame f;
	static const struct {
		uint64_t addr, lookup;
		uint8_t ctx;
		bool first;
		uint32_t index;
	} want[] = {
		{0x111, 0x111, RSP_CHAIN_NONE, true, 0},
		{0xffffffff81000010ull, 0xffffffff81000010ull, RSP_CHAIN_KERNEL, true, 2},
		{0xffffffff81000020ull, 0xffffffff8100001full, RSP_CHAIN_KERNEL, false, 3},
		{0x401000, 0x401000, RSP_CHAIN_USER, true, 5},
		{0x402000, 0x401fff, RSP_CHAIN_USER, false, 6},
	};
	size_t k = 0;

	rsp_chain__init(&it, chain, n);
	while (rsp_chain__next(&it, &f)) {
		assert_true(k < sizeof(want) / sizeof(want[0]));
		assert_int_equal(f.addr, want[k].addr);
		assert_int_equal(f.lookup, want[k].lookup);
		assert_int_equal(f.ctx, want[k].ctx);
		assert_int_equal(f.first, want[k].first);
		assert_int_equal(f.index, want[k].index);
		k++;
	}
	assert_int_equal(k, 5);
	assert_int_equal(rsp_chain__user_mark(chain, n), 4);
	assert_int_equal(rsp_chain__user_mark(chain, 3), 3);
	assert_true(rsp_chain__is_marker(PERF_CONTEXT_GUEST_USER));
	rsp_chain__init(&it, NULL, 5);
	assert_false(rsp_chain__next(&it, &f));
}

static void test_json(void **state)
{
	struct rsp_buf out = RSP_BUF_INIT;
	json_t *o = json_object();

	rsp_json__set_u64(o, "n", 3);
	rsp_json__set_secs(o, "t_s", 1500000000);
	rsp_json__set_str(o, "s", NULL);
	rsp_json__set_real(o, "x", 0.1);
	assert_int_equal(rsp_json__emit(o, &out), 0);
	/* keys in order, reals that read back exactly, a newline at the end */
	assert_string_equal(out.data, "{\n  \"n\": 3,\n  \"t_s\": 1.5,\n  \"s\": \"\",\n"
				      "  \"x\": 0.10000000000000001\n}\n");
	assert_int_equal(rsp_json__emit(NULL, &out), -ENOMEM);
	rsp_buf__exit(&out);
}

/* Processes 100 and 101 are uid 1000's, 200 is root's, 300 and 400 are gone. */
static int uid_of(void *ctx, long pid, uint32_t *uid)
{
	int *calls = ctx;

	(*calls)++;
	if (pid >= 300)
		return -ESRCH;
	*uid = pid < 200 ? 1000 : 0;
	return 0;
}

static void test_redact(void **state)
{
	int calls = 0;
	struct rsp_source src = {
		.access = {.restricted = true, .uid = 1000, .uid_of = uid_of, .ctx = &calls}};
	struct rsp_redact r;
	char buf[64];

	rsp_redact__init(&r, &src.access);
	assert_false(rsp_redact__hidden(&r, 100, 100));
	assert_true(rsp_redact__hidden(&r, 200, 200));
	assert_true(rsp_redact__hidden(&r, 300, 300)); /* unknown owner: hidden */
	assert_false(rsp_redact__hidden(&r, 0, 0));    /* the idle task, the kernel */
	assert_true(rsp_redact__hidden(&r, 200, 200));
	assert_int_equal(calls, 3); /* once per process */
	/* A thread's details are its process's: 101's thread 201 is visible. */
	assert_false(rsp_redact__hidden(&r, 201, 101));
	/* A thread whose process was never learnt is decided by itself, not as the idle task. */
	assert_true(rsp_redact__hidden(&r, 400, 0));
	assert_false(rsp_redact__hidden(&r, 150, 0));
	assert_true(rsp_redact__hidden(&r, 250, 0));
	assert_string_equal(rsp_redact__label(&r, 400, 0, buf, sizeof(buf)),
			    "pid 400 (other user)");
	assert_null(rsp_redact__label(&r, 101, 101, buf, sizeof(buf)));
	assert_string_equal(rsp_redact__label(&r, 200, 200, buf, sizeof(buf)),
			    "pid 200 (other user)");
	assert_string_equal(rsp_redact__comm(&r, 200, 200, "secret"), RSP_OTHER_USER);
	assert_string_equal(rsp_redact__comm(&r, 100, 100, "mine"), "mine");
	assert_int_not_equal(rsp_redact__sym_flags(&r, 200, 200), 0);
	assert_int_equal(rsp_redact__sym_flags(&r, 100, 100), 0);
	assert_int_equal(rsp_redact__owner(&r, 400, 0), 400);
	rsp_redact__exit(&r);
	/* unrestricted: nothing hidden, nothing asked */
	src.access.restricted = false;
	rsp_redact__init(&r, &src.access);
	calls = 0;
	assert_false(rsp_redact__hidden(&r, 200, 200));
	assert_false(rsp_redact__hidden(&r, 400, 0));
	assert_int_equal(calls, 0);
	rsp_redact__exit(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vec_reserve), cmocka_unit_test(test_vec_sort),
		cmocka_unit_test(test_kvec),	    cmocka_unit_test(test_hash),
		cmocka_unit_test(test_callchain),   cmocka_unit_test(test_json),
		cmocka_unit_test(test_redact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
