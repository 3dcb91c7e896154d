// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-snapshot-bench [RECORDS]: how long `rspctl snapshot PID` takes over a
 * window of RECORDS records (default 1,000,000) on one core, with the
 * symbol cache warm.
 *
 * The stream is graph_bench's (tests/support/synth.h, this kernel's formats):
 * 2 CPUs, 200 threads in 20 processes, sleeps with kernel and user stacks,
 * wakings by threads and in irq and softirq handlers, preemptions, block
 * requests with completions in irqs; plus cpu-clock samples (10% of the
 * records) with callchains. The first process is this benchmark itself:
 * its user addresses are real addresses of this program and libc, so the
 * symbolizer (fed from /proc) names them as it would live. The query runs
 * as rspd runs it (rsp_query__run: pin, timeline + store + samples,
 * recursive snapshot, text with symbols), once to warm the symbol cache,
 * then RUNS times; then its phases once. Prints one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rsp/maps.h>
#include <rsp/query.h>
#include <rsp/snapshot.h>
#include <rsp/symbols.h>
#include "kallsyms_fake.h"
#include "support/synth.h"

#define RUNS 7

static uint64_t ustack[4]; /* real return addresses of this process */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall and CPU time of one step, in ms. */
struct tick {
	double wall, cpu;
};

static struct tick tick(void)
{
	return (struct tick){clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID)};
}

static struct tick since(struct tick t0)
{
	struct tick t = tick();

	return (struct tick){(t.wall - t0.wall) * 1e3, (t.cpu - t0.cpu) * 1e3};
}

static double min_of(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static uint64_t stacks[3][12];
static uint64_t sample_stacks[4][8];

#include "stream.h"

/* Stacks whose user part is real code of this process (main, libc's functions). */
static void make_stacks(void)
{
	static const uint64_t k[3][4] = {
		{K_SCHEDULE + 0x20, K_FUTEX_WAIT + 0x10, K_KSYS_READ + 4, 0},
		{K_SCHEDULE + 0x20, K_PIPE_READ + 0x10, K_KSYS_READ + 4, 0},
		{K_SCHEDULE + 0x20, K_IO_SCHEDULE + 0x10, K_FOLIO_WAIT + 8, K_EXT4_SYNC + 4},
	};

	ustack[0] = (uint64_t)(uintptr_t)&rnd + 8;
	ustack[1] = (uint64_t)(uintptr_t)&make_stacks + 8;
	ustack[2] = (uint64_t)(uintptr_t)&memcpy + 8;
	ustack[3] = (uint64_t)(uintptr_t)&qsort + 8;
	for (int s = 0; s < 3; s++) {
		int n = 0;

		stacks[s][n++] = PERF_CONTEXT_KERNEL;
		for (int i = 0; i < 4 && k[s][i]; i++)
			stacks[s][n++] = k[s][i];
		stacks[s][n++] = PERF_CONTEXT_USER;
		for (; n < 12; n++)
			stacks[s][n] = ustack[(n + s) % 4];
	}
	for (int s = 0; s < 4; s++) {
		sample_stacks[s][0] = PERF_CONTEXT_USER;
		for (int i = 1; i < 8; i++)
			sample_stacks[s][i] = ustack[(i + s) % 4];
	}
}

static void generate(struct synth *s, size_t n, uint32_t self)
{
	int curr[NCPU] = {-1, -1};
	uint64_t t = 1000000000ull, sector = 0, done[2] = {0, 0};

	for (int i = 0; i < NTHR; i++) {
		thr[i].tid = 10000 + (uint32_t)i;
		thr[i].tgid = i < PER_PROC ? self : 10000 + (uint32_t)(i / PER_PROC * PER_PROC);
		if (i == 0)
			thr[i].tid = self;
		snprintf(thr[i].comm, sizeof(thr[i].comm), "app%d-w%d", i / PER_PROC, i % PER_PROC);
		thr[i].state = RUNNABLE;
		runq[nrunq++] = (uint32_t)i;
	}
	while (s->n < n) {
		uint32_t cpu = (uint32_t)(rnd() % NCPU);
		int r = (int)(rnd() % 100);

		t += 1000 + rnd() % 20000;
		done[1] = sector;
		if (r < 40)
			do_switch(s, curr, cpu, t, &sector);
		else if (r < 76)
			wake(s, curr, cpu, t, done);
		else if (r < 90) {
			uint32_t tid = curr[cpu] >= 0 ? thr[curr[cpu]].tid : 0;
			uint32_t tgid = curr[cpu] >= 0 ? thr[curr[cpu]].tgid : 0;

			synth__softirq(s, .entry = true, .cpu = cpu, .t = t, .tgid = tgid,
				       .tid = tid, .vec = RSP_SOFTIRQ_RCU);
			synth__softirq(s, .entry = false, .cpu = cpu, .t = t + 2000, .tgid = tgid,
				       .tid = tid, .vec = RSP_SOFTIRQ_RCU);
		} else if (curr[cpu] >= 0) {
			struct bthr *b = &thr[curr[cpu]];

			synth__cpu_clock(s, .cpu = cpu, .t = t, .tgid = b->tgid, .tid = b->tid,
					 .chain = sample_stacks[rnd() % 4], .nr = 8);
		}
	}
}

static struct rsp_symbolizer *self_symbolizer(const struct rsp_ksyms *ks)
{
	struct rsp_symbolizer_config cfg = {.jit_dir = "", .live = true};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);

	if (!s)
		return NULL;
	rsp_symbolizer__use_ksyms(s, ks);
	rsp_procfs__load_pid(rsp_symbolizer__maps(s), "/proc", (uint32_t)getpid(), 1);
	return s;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
	struct rsp_window_config wc = {.budget = 1024ull << 20, .nr_cpus = NCPU};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	char pid[16];
	const char *args[] = {"snapshot", pid};
	struct rsp_timeline_stats st;
	struct rsp_snapshot_opts so;
	struct rsp_request req;
	struct rsp_source src;
	struct rsp_window_stats ws;
	const struct rsp_snapshot_totals *tot;
	struct rsp_ksyms *ks;
	struct rsp_window *w;
	struct rsp_wsnap *snap;
	struct rsp_snapshot *s;
	struct synth sy;
	double runs[RUNS], cpu[RUNS], both[RUNS], chain[RUNS];
	struct tick dt;
	int ret;

	make_stacks();
	synth__init(&sy);
	generate(&sy, n, (uint32_t)getpid());
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	w = rsp_window__new(&wc);
	ks = rsp_ksyms__new_from_text(fake_kallsyms, strlen(fake_kallsyms), &err);
	if (!w || !ks) {
		fprintf(stderr, "rsp-snapshot-bench: setup failed\n");
		return 1;
	}
	for (size_t i = 0; i < sy.n; i++) {
		struct rsp_wentry e = synth__entry(&sy, i);

		if (rsp_window__append(w, e.cpu, e.time, e.rec)) {
			fprintf(stderr, "rsp-snapshot-bench: the window is too small\n");
			return 1;
		}
	}
	rsp_window__stats(w, &ws);
	memset(&src, 0, sizeof(src));
	src.window = w;
	src.schema = sy.schema;
	src.ksyms = ks;
	src.symbols = self_symbolizer(ks);
	src.now = ws.newest;
	if (!src.symbols || rsp_request__parse(2, args, &req, &err))
		return 1;
	/* once to warm the symbol cache, then timed */
	for (int r = -1; r < RUNS; r++) {
		struct tick t0;

		rsp_buf__reset(&out);
		rsp_symbolizer__begin(src.symbols);
		t0 = tick();
		ret = rsp_query__run(&req, &src, &out, &err);
		dt = since(t0);
		if (ret) {
			fprintf(stderr, "rsp-snapshot-bench: %s\n", err.data);
			return 1;
		}
		if (r >= 0)
			runs[r] = dt.wall, cpu[r] = dt.cpu;
	}
	rsp_request__exit(&req);
	qsort(runs, RUNS, sizeof(runs[0]), cmp_double);
	qsort(cpu, RUNS, sizeof(cpu[0]), cmp_double);
	/*
	 * Its phases, CPU time, best of RUNS: load (timeline, store, samples)
	 * and the chain (__load() does both; __new() the chain alone on the
	 * store __load() built); rendering is the rest of the query.
	 */
	snap = rsp_window__pin(w, ws.oldest, ws.newest);
	rsp_snapshot_opts__init(&so);
	so.pid = getpid();
	so.from = ws.oldest;
	so.to = ws.newest;
	s = NULL;
	for (int r = 0; r < RUNS; r++) {
		struct rsp_snapshot *again;
		struct tick t0 = tick();

		rsp_snapshot__delete(s);
		s = rsp_snapshot__from_window(sy.schema, snap, ks, &so, &st, &err);
		dt = since(t0);
		if (!s) {
			fprintf(stderr, "rsp-snapshot-bench: %s\n", err.data);
			return 1;
		}
		both[r] = dt.cpu;
		t0 = tick();
		again = rsp_snapshot__new(rsp_snapshot__store(s), rsp_snapshot__samples(s), &so,
					  &err);
		chain[r] = since(t0).cpu;
		rsp_snapshot__delete(again);
	}
	tot = rsp_snapshot__totals(s);
	printf("{\"records\": %llu, \"window_s\": %.3f, \"query_ms_min\": %.1f, "
	       "\"query_ms_median\": %.1f, \"query_cpu_ms_min\": %.1f, "
	       "\"query_cpu_ms_median\": %.1f, \"load_cpu_ms\": %.1f, \"chain_cpu_ms\": %.1f, "
	       "\"render_cpu_ms\": %.1f, \"segments\": %llu, \"samples\": %zu, \"nodes\": %zu, "
	       "\"threads_in_chain\": %zu, \"sleeps_followed\": %llu, \"percent_accounted\": %.1f, "
	       "\"answer_bytes\": %zu}\n",
	       (unsigned long long)ws.records, (double)(ws.newest - ws.oldest) / 1e9, runs[0],
	       runs[RUNS / 2], cpu[0], cpu[RUNS / 2], min_of(both, RUNS) - min_of(chain, RUNS),
	       min_of(chain, RUNS), cpu[0] - min_of(both, RUNS), (unsigned long long)st.segments,
	       rsp_samples__count(rsp_snapshot__samples(s)), rsp_snapshot__nr_nodes(s),
	       tot->nr_involved, (unsigned long long)tot->sleeps_followed,
	       tot->total_ns ? 100.0 * (double)tot->accounted_ns / (double)tot->total_ns : 0.0,
	       out.len);
	rsp_snapshot__delete(s);
	rsp_wsnap__unpin(snap);
	rsp_symbolizer__delete(src.symbols);
	rsp_window__delete(w);
	rsp_ksyms__delete(ks);
	synth__exit(&sy);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return 0;
}
