// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-hist-bench: the cost of one histogram update (target <= 20 ns).
 *
 * Cases, each a loop of updates timed with CLOCK_MONOTONIC, median of
 * several repetitions:
 *   one     rsp_hist_shard__add_one(): one profile (the system's), the
 *           cumulative table and the time slice; the unit of the target
 *   three   rsp_hist_shard__add() with a process and thread: three
 *           profiles per call (what the feed does for a block request)
 *   spread  three profiles per call, over 1000 threads of 100 processes
 *           (a cache-unfriendly mix; the table holds them all)
 *   churn   three profiles per call, every call a new thread (a fork
 *           bomb): each update evicts the least recently updated profile
 * Latencies vary over 4096 precomputed values spanning 30 buckets; time
 * advances 1 us per update, so slices roll as in real use.
 *
 * usage: rsp-hist-bench [--updates N] [--reps R] [--resolution 1|2]
 * Prints one JSON line per case: {"case", "resolution", "updates",
 * "ns_per_call", "ns_per_profile"}.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rsp/hist.h>

#define NVALUES 4096

static uint64_t values[NVALUES];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct rsp_hist_store *make_store(unsigned r)
{
	struct rsp_hist_config c;
	struct rsp_hist_store *st;

	rsp_hist_config__init(&c);
	c.resolution = r;
	st = rsp_hist_store__new(&c);
	if (!st) {
		perror("rsp_hist_store__new");
		exit(1);
	}
	return st;
}

enum kind { ONE, THREE, SPREAD, CHURN };

/* Nanoseconds per call of one run of @n updates. */
static double run(enum kind k, unsigned r, uint64_t n)
{
	struct rsp_hist_store *st = make_store(r);
	struct rsp_hist_shard *sh = rsp_hist_store__shard(st, 0);
	struct rsp_hist_subject sys = {.kind = RSP_HSUBJ_SYSTEM};
	struct rsp_hist_who w = {.tgid = 100, .tid = 101, .comm = "bench", .comm_len = 5};
	uint64_t op = RSP_HIST_OP(RSP_HOP_RUNQ, 0), t = 1000000000000ull, t0, t1;

	/* Warm up: create the profiles the case keeps updating. */
	for (uint32_t i = 0; i < 1000; i++) {
		w.tid = 1000 + i;
		w.tgid = 1000 + i % 100;
		rsp_hist_shard__add(sh, op, t, values[i % NVALUES], k == ONE ? NULL : &w);
	}
	w.tgid = 100;
	w.tid = 101;
	t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = values[i % NVALUES];

		t += 1000;
		switch (k) {
		case ONE:
			rsp_hist_shard__add_one(sh, &sys, op, t, v);
			break;
		case THREE:
			rsp_hist_shard__add(sh, op, t, v, &w);
			break;
		case SPREAD:
			w.tid = 1000 + (uint32_t)(i % 1000);
			w.tgid = 1000 + (uint32_t)(i % 100);
			rsp_hist_shard__add(sh, op, t, v, &w);
			break;
		case CHURN:
			w.tid = w.tgid = 100000 + (uint32_t)i;
			rsp_hist_shard__add(sh, op, t, v, &w);
			break;
		}
	}
	t1 = now_ns();
	rsp_hist_store__delete(st);
	return (double)(t1 - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"updates", required_argument, NULL, 'n'},
		{"reps", required_argument, NULL, 'r'},
		{"resolution", required_argument, NULL, 'R'},
		{NULL, 0, NULL, 0},
	};
	static const char *const names[] = {"one", "three", "spread", "churn"};
	uint64_t n = 5000000, x = 88172645463325252ull;
	unsigned reps = 7, r = 1;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (c == 'r')
			reps = (unsigned)atoi(optarg);
		else if (c == 'R')
			r = (unsigned)atoi(optarg);
		else
			return 2;
	}
	if (!n || !reps || reps > 101 || (r != 1 && r != 2)) {
		fprintf(stderr, "usage: rsp-hist-bench [--updates N] [--reps R] [--resolution 1|2]\n");
		return 2;
	}
	for (unsigned i = 0; i < NVALUES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		values[i] = (x % (1ull << (10 + x % 30))) + 1; /* 1 ns .. ~1 s */
	}
	for (int k = ONE; k <= CHURN; k++) {
		double t[101];
		uint64_t m = k == CHURN ? n / 5 : n;

		for (unsigned i = 0; i < reps; i++)
			t[i] = run((enum kind)k, r, m);
		qsort(t, reps, sizeof(t[0]), cmp_double);
		printf("{\"case\": \"%s\", \"resolution\": %u, \"updates\": %llu, "
		       "\"ns_per_call\": %.2f, \"ns_per_profile\": %.2f}\n",
		       names[k], r, (unsigned long long)m, t[reps / 2],
		       t[reps / 2] / (k == ONE ? 1 : 3));
		fflush(stdout);
	}
	return 0;
}
