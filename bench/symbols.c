// SPDX-License-Identifier: GPL-2.0
/*
 * rsp-bench-symbols [REPS]: what the symbol layer costs, on this machine.
 *
 *  - reading /proc (every process's maps and comm) into the process model;
 *  - reading /proc/kallsyms;
 *  - resolving user addresses of this process (libc, libelf, libjansson,
 *    ld.so, the executable, ...) cold (the query that reads the ELF files)
 *    and warm (the next query), and kernel addresses;
 *  - `rspctl top` over a window of 1M records (10% and 100% cpu-clock
 *    samples, each at a user address of this process), symbol cache warm;
 *  - applying 1M records, 1% of them side-band, to the process model.
 *
 * Each figure is the median of REPS runs (default 5). Prints a Markdown
 * table (bench/symbols.py puts it in BENCHMARKS.md).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <rsp/maps.h>
#include <rsp/query.h>
#include <rsp/record.h>
#include <rsp/symbols.h>
#include "internal/elfsyms.h"
#include <rsp/ksyms.h>

#define NR_ADDRS   200000
#define NR_RECORDS 1000000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Executable regions of this process, from /proc/self/maps. */
struct region {
	uint64_t start, end;
};

static int own_regions(struct region *r, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		struct rsp_map_info mi;

		if (!rsp_procfs__parse_maps_line(line, &mi) && (mi.prot & PROT_EXEC) &&
		    mi.path_len && mi.path[0] == '/') {
			r[n].start = mi.start;
			r[n++].end = mi.end;
		}
	}
	if (f)
		fclose(f);
	return n;
}

static uint64_t *random_addrs(const struct region *r, int nr, size_t n)
{
	uint64_t *a = malloc(n * sizeof(*a));

	for (size_t i = 0; i < n; i++) {
		const struct region *g = &r[next_rand() % (uint64_t)nr];

		a[i] = g->start + next_rand() % (g->end - g->start);
	}
	return a;
}

static struct rsp_symbolizer *self_symbolizer(void)
{
	struct rsp_symbolizer_config cfg = {.jit_dir = "", .live = true};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);

	rsp_procfs__load_pid(rsp_symbolizer__maps(s), "/proc", (uint32_t)getpid(), 1);
	return s;
}

static double resolve_all(struct rsp_symbolizer *s, const uint64_t *a, size_t n, size_t *named)
{
	uint32_t pid = (uint32_t)getpid();
	struct rsp_sym r;
	double t0 = now_s();

	*named = 0;
	rsp_symbolizer__begin(s);
	for (size_t i = 0; i < n; i++)
		*named += !rsp_symbolizer__resolve(s, pid, 2, a[i], 0, &r);
	return now_s() - t0;
}

/* Reading one ELF object's symbols (what a cache miss costs). */
static void elf_read_cost(const char *what, const char *path, int reps)
{
	const char *src[] = {"none", ".symtab", ".dynsym"};
	struct rsp_elfsyms *e = NULL;
	double v[64];

	for (int i = 0; i < reps; i++) {
		struct rsp_buf err = RSP_BUF_INIT;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		double t0 = now_s();

		if (fd < 0)
			return;
		rsp_elfsyms__delete(e);
		e = rsp_elfsyms__load_fd(fd, path, "/usr/lib/debug", &err);
		v[i] = now_s() - t0;
		close(fd);
		rsp_buf__exit(&err);
	}
	if (e)
		printf("| read the symbols of %s (%u functions from %s%s) | %.1f ms |\n", what,
		       e->nr_syms, e->debug_file ? "its debug file's " : "", src[e->source],
		       median(v, reps) * 1e3);
	rsp_elfsyms__delete(e);
}

/* ---- a synthetic stream in rsp's layout ------------------------------ */

#define ID_CLOCK 1
#define ID_SIDE	 2

static struct rsp_schema *make_schema(void)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE, .sample_id_all = 1};
	int idx;

	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_PERIOD;
	idx = rsp_schema__add_evsel(s, &a, RSP_EV_cpu_clock, RSP_ROLE_PRIMARY, "cpu-clock");
	rsp_schema__add_id(s, idx, ID_CLOCK);
	a.sample_type = RSP_LAYOUT_SAMPLE_TYPE;
	idx = rsp_schema__add_evsel(s, &a, RSP_EV_sideband, RSP_ROLE_PRIMARY, "dummy");
	rsp_schema__add_id(s, idx, ID_SIDE);
	return s;
}

static void put_sample(struct rsp_window *w, uint64_t t, uint32_t pid, uint64_t ip, int id)
{
	uint64_t r[7] = {0};
	struct perf_event_header *h = (void *)r;

	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = sizeof(r);
	r[1] = (uint64_t)id;
	r[2] = ip;
	r[3] = pid | (uint64_t)pid << 32;
	r[4] = t;
	r[5] = 0;
	r[6] = 10101010;
	rsp_window__append(w, (unsigned)(t % 2), t, h);
}

/* A side-band record: FORK or EXIT of a short-lived child of @pid. */
static void put_task(struct rsp_window *w, uint64_t t, uint32_t type, uint32_t pid, uint32_t ppid)
{
	uint64_t r[8] = {0};
	struct perf_event_header *h = (void *)r;

	h->type = type;
	h->size = sizeof(r);
	r[1] = pid | (uint64_t)ppid << 32;
	r[2] = pid | (uint64_t)pid << 32;
	r[3] = t;
	r[4] = pid | (uint64_t)pid << 32;
	r[5] = t;
	r[6] = 0;
	r[7] = ID_SIDE;
	rsp_window__append(w, (unsigned)(t % 2), t, h);
}

static struct rsp_window *make_window(const uint64_t *addrs, int sample_every, int side_every)
{
	struct rsp_window_config wc = {.budget = 256u << 20, .nr_cpus = 2};
	struct rsp_window *w = rsp_window__new(&wc);
	uint32_t child = 100000;

	for (uint64_t i = 0; i < NR_RECORDS; i++) {
		uint64_t t = 1000 + i * 10;

		if (side_every && i % (uint64_t)side_every == 0) {
			put_task(w, t,
				 i % (2 * (uint64_t)side_every) ? PERF_RECORD_EXIT
								: PERF_RECORD_FORK,
				 child, (uint32_t)getpid());
			if (i % (2 * (uint64_t)side_every))
				child++;
		} else if (i % (uint64_t)sample_every == 0) {
			put_sample(w, t, (uint32_t)getpid(), addrs[i % NR_ADDRS], ID_CLOCK);
		} else {
			/* other events' samples: an id no evsel of interest has */
			put_sample(w, t, 1, 0xffffffff81000000ull, ID_SIDE + 1);
		}
	}
	return w;
}

static double run_top(struct rsp_window *w, struct rsp_schema *schema, struct rsp_symbolizer *s)
{
	const char *argv[] = {"top", "--json", "--limit", "50"};
	struct rsp_source src = {.window = w, .schema = schema, .symbols = s};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_request req;
	double t0;

	rsp_request__parse(4, argv, &req, &err);
	rsp_symbolizer__begin(s);
	t0 = now_s();
	if (rsp_query__run(&req, &src, &out, &err))
		fprintf(stderr, "top: %s\n", err.data);
	t0 = now_s() - t0;
	rsp_request__exit(&req);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return t0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	double v[64], cold, warm, kres;
	struct region reg[256];
	int nreg = own_regions(reg, 256);
	uint64_t *addrs = random_addrs(reg, nreg, NR_ADDRS);
	size_t named = 0, nk = 0;
	unsigned nprocs = 0;
	struct rsp_symbolizer_stats st;
	struct rsp_schema *schema = make_schema();

	if (reps < 1 || reps > 64)
		reps = 5;
	printf("| measurement | result |\n|---|---|\n");
	for (int i = 0; i < reps; i++) {
		struct rsp_maps *m = rsp_maps__new(NULL);
		struct rsp_buf err = RSP_BUF_INIT;
		double t0 = now_s();

		rsp_procfs__load_all(m, "/proc", 1, &nprocs, &err);
		v[i] = now_s() - t0;
		rsp_maps__delete(m);
		rsp_buf__exit(&err);
	}
	printf("| read /proc into the model (%u processes) | %.1f ms |\n", nprocs,
	       median(v, reps) * 1e3);
	for (int i = 0; i < reps; i++) {
		struct rsp_buf err = RSP_BUF_INIT;
		double t0 = now_s();
		struct rsp_ksyms *k = rsp_ksyms__new_from_file("/proc/kallsyms", &err);

		v[i] = now_s() - t0;
		nk = rsp_ksyms__count(k);
		rsp_ksyms__delete(k);
		rsp_buf__exit(&err);
	}
	printf("| read /proc/kallsyms (%zu text symbols) | %.1f ms |\n", nk, median(v, reps) * 1e3);

	/* cold: a new symbolizer each time; warm: its second query */
	for (int i = 0; i < reps; i++) {
		struct rsp_symbolizer *s = self_symbolizer();

		v[i] = resolve_all(s, addrs, NR_ADDRS, &named);
		rsp_symbolizer__stats(s, &st);
		rsp_symbolizer__delete(s);
	}
	cold = median(v, reps);
	{
		struct rsp_symbolizer *s = self_symbolizer();

		resolve_all(s, addrs, NR_ADDRS, &named);
		for (int i = 0; i < reps; i++)
			v[i] = resolve_all(s, addrs, NR_ADDRS, &named);
		warm = median(v, reps);
		/* kernel addresses */
		for (size_t i = 0; i < NR_ADDRS; i++)
			addrs[i] = 0xffffffff81000000ull + next_rand() % 0x1200000ull;
		resolve_all(s, addrs, 1000, &nk);
		for (int i = 0; i < reps; i++)
			v[i] = resolve_all(s, addrs, NR_ADDRS, &nk);
		kres = median(v, reps);
		rsp_symbolizer__delete(s);
	}
	printf("| first query: 200k user addresses, reading %llu ELF objects | %.0f ms |\n",
	       (unsigned long long)st.misses, cold * 1e3);
	printf("| next query: the same 200k addresses (cache warm) | %.0f ms |\n", warm * 1e3);
	{
		Dl_info di;

		if (dladdr((void *)(uintptr_t)&printf, &di) && di.dli_fname)
			elf_read_cost("libc", di.dli_fname, reps);
		elf_read_cost("libLLVM-14", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", reps);
	}
	printf("| resolve a user address, warm (%.0f%% named) | %.0f ns |\n",
	       100.0 * (double)named / NR_ADDRS, warm / NR_ADDRS * 1e9);
	printf("| resolve a kernel address, warm | %.0f ns |\n", kres / NR_ADDRS * 1e9);
	free(addrs);

	addrs = random_addrs(reg, nreg, NR_ADDRS);
	for (int every = 10; every >= 1; every /= 10) {
		struct rsp_window *w = make_window(addrs, every, 0);
		struct rsp_symbolizer *s = self_symbolizer();

		run_top(w, schema, s); /* warm the cache */
		for (int i = 0; i < reps; i++)
			v[i] = run_top(w, schema, s);
		printf("| `top` over 1M records, %d%% cpu-clock samples, cache warm | %.0f ms |\n",
		       100 / every, median(v, reps) * 1e3);
		rsp_symbolizer__delete(s);
		rsp_window__delete(w);
	}
	{
		struct rsp_window *w = make_window(addrs, 10, 100);

		for (int i = 0; i < reps; i++) {
			struct rsp_maps *m = rsp_maps__new(NULL);
			struct rsp_maps_ingest res;
			double t0 = now_s();

			rsp_maps__ingest(m, schema, w, 0, UINT64_MAX - 1, &res);
			v[i] = now_s() - t0;
			rsp_maps__delete(m);
		}
		printf("| apply 1M records (1%% FORK/EXIT) to the model | %.0f ms |\n",
		       median(v, reps) * 1e3);
		rsp_window__delete(w);
	}
	free(addrs);
	rsp_schema__delete(schema);
	return 0;
}
