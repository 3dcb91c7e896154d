// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-graph-bench [RECORDS [raw]]: how long `rspctl graph` takes over a
 * window of RECORDS records (default 1,000,000) on one core; with raw, as
 * `rspctl graph --no-annotations` (no false wakeups inferred: their cost is
 * the difference).
 *
 * It synthesizes a scheduler-heavy stream in rsp's layout (tests/support/
 * synth.h: this kernel's tracepoint formats): 2 CPUs, 200 threads in 20
 * processes, sleeps with kernel stacks, wakings by threads and in irq and
 * softirq handlers, preemptions, block requests with completions in irqs.
 * The records go into a real window; then the graph query runs as rspd
 * runs it (rsp_query__run: pin, timeline, store, graph, text), timed, and
 * its phases separately. Prints one JSON line.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rsp/query.h>
#include <rsp/tlstore.h>
#include <rsp/waitgraph.h>
#include "kallsyms_fake.h"
#include "support/synth.h"

#define RUNS 7

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const uint64_t stacks[3][12] = {
	{PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_FUTEX_WAIT + 0x10, K_KSYS_READ + 4,
	 PERF_CONTEXT_USER, 0x7f0000001000ull, 0x7f0000002000ull, 0x400100ull, 0x400200ull,
	 0x400300ull, 0x400400ull, 0x400500ull},
	{PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_PIPE_READ + 0x10, K_KSYS_READ + 4,
	 PERF_CONTEXT_USER, 0x7f0000003000ull, 0x7f0000004000ull, 0x400100ull, 0x400600ull,
	 0x400300ull, 0x400400ull, 0x400500ull},
	{PERF_CONTEXT_KERNEL, K_SCHEDULE + 0x20, K_IO_SCHEDULE + 0x10, K_FOLIO_WAIT + 8,
	 K_EXT4_SYNC + 4, PERF_CONTEXT_USER, 0x7f0000005000ull, 0x400100ull, 0x400700ull,
	 0x400300ull, 0x400400ull, 0x400500ull},
};

#include "stream.h"

static void generate(struct synth *s, size_t n)
{
	int curr[NCPU] = {-1, -1};
	uint64_t t = 1000000000ull, sector = 0, done[2] = {0, 0};

	for (int i = 0; i < NTHR; i++) {
		thr[i].tid = 10000 + (uint32_t)i;
		thr[i].tgid = 10000 + (uint32_t)(i / PER_PROC * PER_PROC);
		snprintf(thr[i].comm, sizeof(thr[i].comm), "app%d-w%d", i / PER_PROC, i % PER_PROC);
		thr[i].state = RUNNABLE;
		runq[nrunq++] = (uint32_t)i;
	}
	while (s->n < n) {
		uint32_t cpu = (uint32_t)(rnd() % NCPU);
		int r = (int)(rnd() % 100);

		t += 1000 + rnd() % 20000;
		done[1] = sector;
		if (r < 45)
			do_switch(s, curr, cpu, t, &sector);
		else if (r < 85)
			wake(s, curr, cpu, t, done);
		else {
			uint32_t tid = curr[cpu] >= 0 ? thr[curr[cpu]].tid : 0;
			uint32_t tgid = curr[cpu] >= 0 ? thr[curr[cpu]].tgid : 0;

			synth__softirq(s, .entry = true, .cpu = cpu, .t = t, .tgid = tgid,
				       .tid = tid, .vec = RSP_SOFTIRQ_RCU);
			synth__softirq(s, .entry = false, .cpu = cpu, .t = t + 2000, .tgid = tgid,
				       .tid = tid, .vec = RSP_SOFTIRQ_RCU);
		}
	}
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
	struct rsp_window_config wc = {.budget = 1024ull << 20, .nr_cpus = NCPU};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	bool raw = argc > 2 && !strcmp(argv[2], "raw");
	const char *args[] = {"graph", "--all", "--no-annotations"};
	struct rsp_timeline_stats st;
	struct rsp_request req;
	struct rsp_source src;
	struct rsp_window_stats ws;
	struct rsp_ksyms *ks;
	struct rsp_window *w;
	struct rsp_wsnap *snap;
	struct rsp_tlstore *store;
	struct rsp_waitgraph *g;
	struct synth s;
	double t0, t1, t2, t3, t4, read_ms, feed_ms, runs[RUNS];
	int ret;

	synth__init(&s);
	generate(&s, n);
	w = rsp_window__new(&wc);
	ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	if (!w || !ks) {
		fprintf(stderr, "rsp-graph-bench: setup failed\n");
		return 1;
	}
	for (size_t i = 0; i < s.n; i++) {
		struct rsp_wentry e = synth__entry(&s, i);

		if (rsp_window__append(w, e.cpu, e.time, e.rec)) {
			fprintf(stderr, "rsp-graph-bench: the window is too small\n");
			return 1;
		}
	}
	rsp_window__stats(w, &ws);
	memset(&src, 0, sizeof(src));
	src.window = w;
	src.schema = s.schema;
	src.ksyms = ks;
	src.now = ws.newest;

	/*
	 * The whole query, as rspd answers it, RUNS times: the machine is shared,
	 * so the minimum says what the code costs and the median what to expect.
	 */
	if (rsp_request__parse(raw ? 3 : 2, args, &req, &err))
		return 1;
	for (int r = 0; r < RUNS; r++) {
		rsp_buf__reset(&out);
		t0 = now_s();
		ret = rsp_query__run(&req, &src, &out, &err);
		t1 = now_s();
		if (ret) {
			fprintf(stderr, "rsp-graph-bench: %s\n", err.data);
			return 1;
		}
		runs[r] = (t1 - t0) * 1e3;
	}
	rsp_request__exit(&req);
	qsort(runs, RUNS, sizeof(runs[0]), cmp_double);
	/* Its phases: reading the window alone, the timeline alone, the store, the graph. */
	snap = rsp_window__pin(w, ws.oldest, ws.newest);
	{
		struct rsp_witer *it = rsp_witer__new(snap, ws.oldest, ws.newest);
		struct rsp_timeline *tl = rsp_timeline__new(s.schema, NULL, NULL);
		struct rsp_wentry e;
		size_t k = 0;
		double a = now_s(), b, c;

		while (rsp_witer__next(it, &e))
			k++;
		b = now_s();
		rsp_witer__delete(it);
		it = rsp_witer__new(snap, ws.oldest, ws.newest);
		rsp_timeline__set_flags(tl, RSP_TL_RECORDS_STABLE);
		rsp_timeline__set_ksyms(tl, ks);
		while (rsp_witer__next(it, &e))
			rsp_timeline__feed(tl, &e);
		rsp_timeline__finish(tl, ws.newest);
		c = now_s();
		read_ms = (b - a) * 1e3;
		feed_ms = (c - b) * 1e3;
		rsp_witer__delete(it);
		rsp_timeline__delete(tl);
		(void)k;
	}
	t2 = now_s();
	store = rsp_tlstore__from_window(
		RSP_TLSTORE_WAITS_ONLY, s.schema, snap,
		&(struct rsp_tlstore_opts){.from = ws.oldest,
					   .to = ws.newest,
					   .ksyms = ks,
					   .fwake_ns = raw ? 0 : RSP_FWAKE_DEFAULT_NS},
		&st, &err);
	t3 = now_s();
	g = store ? rsp_waitgraph__new(store, NULL, &err) : NULL;
	t4 = now_s();
	if (!g)
		return 1;
	printf("{\"raw\": %s, \"records\": %llu, \"window_s\": %.3f, \"query_ms_min\": %.1f, "
	       "\"query_ms_median\": %.1f, \"read_ms\": %.1f, "
	       "\"timeline_only_ms\": %.1f, \"timeline_ms\": %.1f, "
	       "\"graph_ms\": %.1f, \"segments\": %llu, \"threads\": %llu, \"vertices\": %zu, "
	       "\"edges\": %zu, \"knots\": %zu, \"answer_bytes\": %zu}\n",
	       raw ? "true" : "false", (unsigned long long)ws.records,
	       (double)(ws.newest - ws.oldest) / 1e9, runs[0], runs[RUNS / 2], read_ms, feed_ms,
	       (t3 - t2) * 1e3, (t4 - t3) * 1e3, (unsigned long long)st.segments,
	       (unsigned long long)st.threads, rsp_waitgraph__nr_vertices(g),
	       rsp_waitgraph__nr_edges(g), rsp_waitgraph__nr_knots(g), out.len);
	rsp_waitgraph__delete(g);
	rsp_tlstore__delete(store);
	rsp_wsnap__unpin(snap);
	rsp_window__delete(w);
	rsp_ksyms__delete(ks);
	synth__exit(&s);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return 0;
}
