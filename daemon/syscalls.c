// SPDX-License-Identifier: GPL-2.0
/*
 * The `syscall` family (see syscalls.h): loader of bpf/syscalls.bpf.c and
 * reader of its per-CPU tables.
 *
 * Reading. Each read walks the kernel's (thread, syscall) table, sums each
 * key's per-CPU values (rsp_sysprof__merge_cpus()), takes what it gained
 * since the last read (rsp_sysprof__delta()) and adds that as one batch to
 * the store, in the slice of the read's time: a call is therefore placed
 * in time to within a read interval (RSPD_SYSCALLS_READ_NS, or the
 * analysis thread's pass interval when longer). Only this thread writes
 * the store's shard, so the store keeps its one writer.
 *
 * Exited threads. Their keys would fill the table (a build starts
 * hundreds of processes a second, each with tens of syscall numbers). The
 * programs queue the tid of each thread that exits after a syscall
 * (sc_exited); a read pops the queue first, then reads those threads' keys
 * one last time in its walk and deletes them: a thread at its exit has
 * made its last call. Should the queue overflow (counted), every
 * RSPD_SYSCALLS_SWEEP_NS a key that gained nothing and whose thread is gone
 * (no /proc/TGID/task/TID) is deleted too.
 *
 * Cost: a read is one bpf() call per BATCH keys (a batch lookup; two per
 * key where the kernel refuses batches) and ~600 bytes copied per key and
 * CPU; the kernel side costs a
 * task-storage lookup at each entry and exit and a hash lookup and ~10
 * adds at exit (bench/syscalls.py measures it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rsp/catalogue.h>
#include <rsp/hist.h>
#include <rsp/perfdata.h>
#include <rsp/sysdump.h>
#include <rsp/sysprof.h>
#include "histthread.h"
#include "log.h"
#include "rspd.h"
#include "syscalls.h"
#include "tracepoints/bpf_syscalls.h"

#ifdef RSP_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "syscalls.skel.h"
#endif

/* A thread that exec'd, and its name since (sc_renamed); the tid first: cmp_u32 sorts them. */
struct renamed {
	uint32_t tid;
	struct rsp_sc_name name;
};

struct rspd_syscalls {
	_Atomic bool on;
	char why_off[400]; /* set before the analysis thread starts reading */
#ifdef RSP_HAVE_BPF
	struct rsp_syscalls *skel;
	struct rsp_sysprof *sp;
	unsigned nr_cpus, max_keys; /* --syscall-keys */
	bool per_thread;	    /* the family is on; else the system's profiles alone */
	size_t stride;		    /* one CPU's value in a per-CPU lookup */
	unsigned char *vals;
	struct rsp_sc_key *bkeys; /* a batch: BATCH keys and their per-CPU values */
	unsigned char *bvals;
	bool no_batch;		 /* the kernel refused a batch lookup: key by key */
	struct rsp_sc_key *gone; /* keys to delete after a walk */
	unsigned nr_gone;
	uint32_t *exited; /* tids popped from sc_exited, sorted */
	unsigned nr_exited;
	/* sc_renamed as of this read, sorted by tid: the names of threads that exec'd */
	struct renamed *rn;
	unsigned nr_rn;
	uint64_t last_read, last_sweep;
	/* analysis thread writes, status reads */
	_Atomic uint64_t reads, keys, swept, refused, errors;
#endif
};

#ifdef RSP_HAVE_BPF
#define BATCH 256 /* keys per batch lookup */

static void off(struct rspd_syscalls *s, const char *why)
{
	snprintf(s->why_off, sizeof(s->why_off), "%s", why);
	atomic_store(&s->on, false);
}

static int load(struct rspd_syscalls *s, char *why, size_t n)
{
	int ret, nr = libbpf_num_possible_cpus();

	if (nr <= 0) {
		snprintf(why, n, "cannot count the possible CPUs: %s", strerror(-nr));
		return -1;
	}
	s->nr_cpus = (unsigned)nr;
	s->stride = (sizeof(struct rsp_sc_val) + 7) & ~(size_t)7;
	s->vals = calloc(s->nr_cpus, s->stride);
	s->bkeys = calloc(BATCH, sizeof(*s->bkeys));
	s->bvals = calloc((size_t)BATCH * s->nr_cpus, s->stride);
	s->gone = calloc(s->max_keys, sizeof(*s->gone));
	s->exited = calloc(RSP_SC_EXIT_QUEUE, sizeof(*s->exited));
	s->rn = calloc(RSP_SC_RENAMED, sizeof(*s->rn));
	/* the threads' keys and the per-number overflow keys */
	s->sp = rsp_sysprof__new(s->max_keys + RSP_SC_MAX_NR);
	s->skel = rsp_syscalls__open();
	if (!s->vals || !s->bkeys || !s->bvals || !s->gone || !s->exited || !s->rn || !s->sp ||
	    !s->skel) {
		snprintf(why, n, "cannot open the syscall programs: %s", strerror(errno));
		return -1;
	}
	s->skel->rodata->self_tgid = (uint32_t)getpid();
	s->skel->rodata->per_thread = s->per_thread;
	bpf_map__set_max_entries(s->skel->maps.sc_hist, s->max_keys);
	if (!s->per_thread) { /* no key per thread: no exits or execs to follow */
		bpf_program__set_autoload(s->skel->progs.rsp_sc_exec, false);
		bpf_program__set_autoload(s->skel->progs.rsp_sc_task_exit, false);
	}
	ret = rsp_syscalls__load(s->skel);
	if (!ret)
		ret = rsp_syscalls__attach(s->skel);
	if (ret) {
		snprintf(
			why, n,
			"the kernel refused the syscall programs (raw_syscalls sys_enter/sys_exit, "
			"task storage): %s — rspd's log has libbpf's message",
			strerror(-ret));
		return -1;
	}
	return 0;
}
#endif

bool rspd_syscalls__wanted(const struct rspd *d)
{
	return (d->cfg.capture.families[RSP_FAM_SYSCALL] || d->cfg.syscall_system) &&
	       !strcmp(d->es.backend, "bpf");
}

void rspd_syscalls__open(struct rspd *d)
{
	struct rspd_syscalls *s = calloc(1, sizeof(*s));

	if (!s) {
		rspd_log__write(RSP_LOG_WARN, "syscall profiles: out of memory; the family is off");
		return;
	}
	d->syscalls = s;
	s->per_thread = d->cfg.capture.families[RSP_FAM_SYSCALL];
	if (!s->per_thread && !d->cfg.syscall_system) {
		/*
		 * Off by default: even the system's profiles alone (a per-CPU
		 * array, no key) cost pgbench ~40 us of CPU a transaction at
		 * 1000 a second, as much as the rest of BPF capture
		 * (BENCHMARKS.md, "Capture's cost near the floor").
		 */
		snprintf(s->why_off, sizeof(s->why_off),
			 "off (the default: BPF programs on every system call cost a "
			 "syscall-heavy server as much as the rest of capture); --syscall-system "
			 "turns on the system's profile per syscall, --families +syscall "
			 "per-thread profiles");
		return;
	}
#ifdef RSP_HAVE_BPF
	if (strcmp(d->es.backend, "bpf")) {
		off(s, "off: syscall profiles need the BPF backend (the perf backend would cost a "
		       "ring record per syscall); run rspd with --capture bpf where BPF loads");
		return;
	}
	if (!d->cfg.hist_on) {
		off(s, "off: syscall profiles go into the latency histograms, which --no-hist "
		       "turns off");
		return;
	}
	/* the system's profiles alone: a table of one key (the programs never use it) */
	s->max_keys = !s->per_thread	    ? 1
		      : d->cfg.syscall_keys ? d->cfg.syscall_keys
					    : RSPD_SYSCALLS_KEYS;
	if (load(s, s->why_off, sizeof(s->why_off))) {
		rspd_log__write(RSP_LOG_WARN, "syscall profiles are off: %s", s->why_off);
		rsp_syscalls__destroy(s->skel);
		s->skel = NULL;
		return;
	}
	atomic_store(&s->on, true);
	if (s->per_thread)
		rspd_log__write(RSP_LOG_INFO, "syscall profiles: on (%u keys)", s->max_keys);
	else
		rspd_log__write(RSP_LOG_INFO,
				"syscall profiles: the system's (per syscall number)");
#else
	snprintf(s->why_off, sizeof(s->why_off),
		 "off: this rspd was built without BPF, and syscall profiles need it (the perf "
		 "backend would cost a ring record per syscall)");
#endif
}

#ifdef RSP_HAVE_BPF
static bool thread_gone(uint32_t tgid, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", tgid, tid);
	return access(path, F_OK) && errno == ENOENT;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The threads that exited since the last read: their keys go after this walk. */
static void pop_exited(struct rspd_syscalls *s)
{
	int fd = bpf_map__fd(s->skel->maps.sc_exited);
	uint32_t tid;

	s->nr_exited = 0;
	while (s->nr_exited < RSP_SC_EXIT_QUEUE && !bpf_map_lookup_and_delete_elem(fd, NULL, &tid))
		s->exited[s->nr_exited++] = tid;
	qsort(s->exited, s->nr_exited, sizeof(*s->exited), cmp_u32);
}

static bool renamed_tid(const struct rspd_syscalls *s, uint32_t tid)
{
	return bsearch(&tid, s->rn, s->nr_rn, sizeof(*s->rn), cmp_u32) != NULL;
}

/*
 * The names of threads that exec'd (sc_renamed); drop_renamed() takes out
 * those of threads that exited, after the walk that reads their keys. A key keeps the name its
 * thread had when the key was made: without this, a fork's calls before its exec, and the same
 * calls after it, would be shown under the parent's name.
 */
static void read_renamed(struct rspd_syscalls *s)
{
	int fd = bpf_map__fd(s->skel->maps.sc_renamed);
	uint32_t k, next, *prev = NULL;
	unsigned n = 0;

	while (n < RSP_SC_RENAMED && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(fd, &k, &s->rn[n].name))
			s->rn[n++].tid = k;
	}
	qsort(s->rn, n, sizeof(*s->rn), cmp_u32); /* by tid, the first member */
	s->nr_rn = n;
}

/* After a walk: the exited threads' names go (most have none: ENOENT). */
static void drop_renamed(struct rspd_syscalls *s)
{
	int fd = bpf_map__fd(s->skel->maps.sc_renamed);

	for (unsigned i = 0; i < s->nr_exited; i++)
		if (renamed_tid(s, s->exited[i]))
			bpf_map_delete_elem(fd, &s->exited[i]);
}

/* The name of thread (@tgid, @tid) since its exec, or NULL. */
static const struct rsp_sc_name *renamed(const struct rspd_syscalls *s, uint32_t tgid, uint32_t tid)
{
	const struct renamed *r = bsearch(&tid, s->rn, s->nr_rn, sizeof(*s->rn), cmp_u32);
	const struct rsp_sc_name *n = r ? &r->name : NULL;

	return n && n->tgid == tgid ? n : NULL;
}

static bool exited(const struct rspd_syscalls *s, uint32_t tid)
{
	return bsearch(&tid, s->exited, s->nr_exited, sizeof(tid), cmp_u32) != NULL;
}

/* One key: its delta into the store. */
static void read_key(struct rspd_syscalls *s, struct rsp_hist_shard *sh, unsigned r, uint64_t now,
		     const struct rsp_sc_key *k, const void *vals, bool other, bool sweep)
{
	struct rsp_sysprof_sum cur;
	struct rsp_sysprof_delta dl;
	struct rsp_hist_batch bt;
	uint64_t b[RSP_HIST_MAX_BUCKETS];
	struct rsp_hist_who who;
	int ret;

	rsp_sysprof__merge_cpus(vals, s->nr_cpus, s->stride, &cur);
	cur.tgid = other ? RSP_SYSPROF_OTHER_ID : k->tgid;
	cur.tid = other ? RSP_SYSPROF_OTHER_ID : k->tid;
	cur.nr = k->nr;
	if (!other) {
		const struct rsp_sc_name *n = renamed(s, k->tgid, k->tid);

		_Static_assert(sizeof(cur.comm) == sizeof(n->comm), "one name length");
		if (n)
			memcpy(cur.comm, n->comm, sizeof(cur.comm));
	}
	ret = rsp_sysprof__delta(s->sp, &cur, &dl);
	if (ret < 0)
		atomic_fetch_add(&s->refused, 1);
	/* read for the last time (or unreadable): deleted after the walk */
	if (!other && s->nr_gone < s->max_keys &&
	    (exited(s, k->tid) || (ret <= 0 && sweep && thread_gone(k->tgid, k->tid))))
		s->gone[s->nr_gone++] = *k;
	if (ret <= 0)
		return;
	rsp_sysprof_delta__batch(&dl, r, b, &bt);
	who = (struct rsp_hist_who){
		.tgid = cur.tgid, .tid = cur.tid, .comm = cur.comm, .comm_len = sizeof(cur.comm)};
	/* Threads past the table's bound: the system profile only (counted in status). */
	rsp_hist_shard__add_batch(sh, RSP_HIST_OP(RSP_HOP_SYSCALL, k->nr), now, &bt,
				  other ? NULL : &who);
}

/* Key by key: where batch lookups fail (two bpf() calls per key). */
static uint64_t walk_keys(struct rspd_syscalls *s, struct rsp_hist_shard *sh, unsigned r,
			  uint64_t now, bool sweep)
{
	int fd = bpf_map__fd(s->skel->maps.sc_hist);
	struct rsp_sc_key k, next;
	void *prev = NULL;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, s->vals)) {
			atomic_fetch_add(&s->errors, 1);
			continue;
		}
		read_key(s, sh, r, now, &k, s->vals, false, sweep);
		n++;
	}
	return n;
}

/*
 * In batches of BATCH keys (one bpf() call each, the kernel copies keys and
 * per-CPU values out); -1 when the kernel refuses batches, to walk key by key.
 */
static int64_t walk_batches(struct rspd_syscalls *s, struct rsp_hist_shard *sh, unsigned r,
			    uint64_t now, bool sweep)
{
	int fd = bpf_map__fd(s->skel->maps.sc_hist);
	uint64_t in[2], out[2], n = 0; /* the batch token: a u32 for hash maps */
	bool first = true;

	for (;;) {
		uint32_t count = BATCH;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : in, out, s->bkeys, s->bvals,
					       &count, NULL);

		if (ret && ret != -ENOENT)
			return n ? (int64_t)n : -1; /* after a partial walk: the next read */
		for (uint32_t i = 0; i < count; i++)
			read_key(s, sh, r, now, &s->bkeys[i],
				 s->bvals + (size_t)i * s->nr_cpus * s->stride, false, sweep);
		n += count;
		if (ret == -ENOENT)
			return (int64_t)n;
		memcpy(in, out, sizeof(in));
		first = false;
	}
}

static void walk_threads(struct rspd_syscalls *s, struct rsp_hist_shard *sh, unsigned r,
			 uint64_t now, bool sweep)
{
	int64_t n = s->no_batch ? -1 : walk_batches(s, sh, r, now, sweep);

	if (n < 0) {
		s->no_batch = true;
		n = (int64_t)walk_keys(s, sh, r, now, sweep);
	}
	atomic_store(&s->keys, (uint64_t)n);
}

static void walk_other(struct rspd_syscalls *s, struct rsp_hist_shard *sh, unsigned r, uint64_t now)
{
	int fd = bpf_map__fd(s->skel->maps.sc_other);
	uint32_t nr, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct rsp_sc_key k = {.nr = next};

		nr = next;
		prev = &nr;
		if (bpf_map_lookup_elem(fd, &nr, s->vals)) {
			atomic_fetch_add(&s->errors, 1);
			continue;
		}
		read_key(s, sh, r, now, &k, s->vals, true, false);
	}
}

/*
 * The system's profile of each number (per_thread off): the per-CPU array
 * in batches of BATCH numbers, key by key where the kernel refuses batches.
 */
static void walk_system(struct rspd_syscalls *s, struct rsp_hist_shard *sh, unsigned r,
			uint64_t now)
{
	int fd = bpf_map__fd(s->skel->maps.sc_sys);
	uint32_t *keys = (uint32_t *)s->bkeys; /* room for BATCH keys of 16 bytes */

	for (uint32_t at = 0; at < RSP_SC_MAX_NR;) {
		uint32_t in = at, out, count = BATCH;
		int ret = s->no_batch ? -1
				      : bpf_map_lookup_batch(fd, at ? &in : NULL, &out, keys,
							     s->bvals, &count, NULL);

		if (ret && ret != -ENOENT) { /* key by key */
			struct rsp_sc_key k = {.nr = at};

			s->no_batch = true;
			if (!bpf_map_lookup_elem(fd, &at, s->vals))
				read_key(s, sh, r, now, &k, s->vals, true, false);
			at++;
			continue;
		}
		for (uint32_t i = 0; i < count; i++) {
			struct rsp_sc_key k = {.nr = keys[i]};

			read_key(s, sh, r, now, &k, s->bvals + (size_t)i * s->nr_cpus * s->stride,
				 true, false);
		}
		if (ret == -ENOENT || !count)
			break;
		at = out;
	}
}

static void sweep_gone(struct rspd_syscalls *s)
{
	int fd = bpf_map__fd(s->skel->maps.sc_hist);

	for (unsigned i = 0; i < s->nr_gone; i++) {
		if (!bpf_map_delete_elem(fd, &s->gone[i]))
			rsp_sysprof__forget(s->sp, s->gone[i].tgid, s->gone[i].tid, s->gone[i].nr);
	}
	atomic_fetch_add(&s->swept, s->nr_gone);
	s->nr_gone = 0;
}
#endif

void rspd_syscalls__read(struct rspd *d, struct rsp_hist_shard *sh, uint64_t now)
{
#ifdef RSP_HAVE_BPF
	struct rspd_syscalls *s = d->syscalls;
	unsigned r;
	bool sweep;

	if (!s || !atomic_load(&s->on) || now - s->last_read < RSPD_SYSCALLS_READ_NS)
		return;
	r = rsp_hist_store__config(rspd_histthread__store(d))->resolution;
	sweep = now - s->last_sweep >= RSPD_SYSCALLS_SWEEP_NS;
	s->last_read = now;
	if (!s->per_thread) {
		walk_system(s, sh, r, now);
		atomic_fetch_add(&s->reads, 1);
		return;
	}
	pop_exited(s);
	read_renamed(s);
	walk_threads(s, sh, r, now, sweep);
	walk_other(s, sh, r, now);
	sweep_gone(s);
	drop_renamed(s);
	if (sweep)
		s->last_sweep = now;
	atomic_fetch_add(&s->reads, 1);
#else
	(void)d;
	(void)sh;
	(void)now;
#endif
}

void rspd_syscalls__close(struct rspd *d)
{
	struct rspd_syscalls *s = d->syscalls;

	if (!s)
		return;
#ifdef RSP_HAVE_BPF
	rsp_syscalls__destroy(s->skel);
	rsp_sysprof__delete(s->sp);
	free(s->vals);
	free(s->bkeys);
	free(s->bvals);
	free(s->gone);
	free(s->exited);
	free(s->rn);
#endif
	free(s);
	d->syscalls = NULL;
}

#ifdef RSP_HAVE_BPF
/* The run time of @obj's loaded programs (BPF_STATS_RUN_TIME held), ns. */
uint64_t rspd_bpf__run_time(struct bpf_object *obj)
{
	struct bpf_program *p;
	uint64_t ns = 0;

	bpf_object__for_each_program(p, obj)
	{
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			ns += info.run_time_ns;
	}
	return ns;
}
#endif

uint64_t rspd_syscalls__run_time(struct rspd *d)
{
#ifdef RSP_HAVE_BPF
	struct rspd_syscalls *s = d->syscalls;

	return s && atomic_load(&s->on) && s->skel ? rspd_bpf__run_time(s->skel->obj) : 0;
#else
	(void)d;
	return 0;
#endif
}

/*
 * Into a dump: the profiles of the slices covering its records (read from
 * the store, as a query would; the dump thread may do this while the
 * analysis thread writes). Nothing when the family is off.
 */
int rspd_syscalls__dump(struct rspd *d, struct rsp_pdwriter *w, uint64_t from, uint64_t to)
{
	struct rspd_syscalls *s = d->syscalls;
	struct rsp_buf b = RSP_BUF_INIT;
	int err;

	if (!s || !atomic_load(&s->on) || !d->histthread || from > to)
		return 0;
	err = rsp_sysdump__write(rspd_histthread__store(d), from, to, &b, NULL);
	if (!err && b.len)
		err = rsp_pdwriter__rsp_syscalls(w, b.data, b.len);
	rsp_buf__exit(&b);
	return err;
}

#ifdef RSP_HAVE_BPF
static uint64_t counter(struct rspd_syscalls *s, uint32_t idx)
{
	uint64_t v[s->nr_cpus], sum = 0;

	if (bpf_map__lookup_elem(s->skel->maps.sc_counters, &idx, sizeof(idx), v,
				 sizeof(uint64_t) * s->nr_cpus, 0))
		return 0;
	for (unsigned i = 0; i < s->nr_cpus; i++)
		sum += v[i];
	return sum;
}
#endif

int rspd_syscalls__status(struct rspd *d, char *note, size_t n)
{
	struct rspd_syscalls *s = d->syscalls;

	if (!s || !atomic_load(&s->on)) {
		snprintf(note, n, "%s", s ? s->why_off : "");
		return 0;
	}
#ifdef RSP_HAVE_BPF
	if (!s->per_thread) {
		snprintf(note, n,
			 "the system's profile per syscall number (raw_syscalls sys_enter/sys_exit "
			 "counted in a per-CPU array in the kernel); --families +syscall for "
			 "per-thread and per-process profiles; %llu reads; not timed: %llu "
			 "unmatched exits, %llu of the ia32/x32 ABIs",
			 (unsigned long long)atomic_load(&s->reads),
			 (unsigned long long)counter(s, RSP_SC_UNMATCHED),
			 (unsigned long long)counter(s, RSP_SC_OTHER_ABI));
		return 1;
	}
	snprintf(note, n,
		 "raw_syscalls sys_enter/sys_exit aggregated in the kernel: %llu of %u "
		 "(thread, syscall) keys, %llu reads; %llu calls of threads past the keys "
		 "(system profile only); not timed: %llu unmatched exits, %llu of the ia32/x32 "
		 "ABIs, %llu without state; %llu found at exit in the task's storage (switch-in "
		 "missed "
		 "them; off-CPU an upper bound); %llu keys of exited threads freed (%llu exits not "
		 "queued), %llu refused, %llu read errors",
		 (unsigned long long)atomic_load(&s->keys), s->max_keys,
		 (unsigned long long)atomic_load(&s->reads),
		 (unsigned long long)counter(s, RSP_SC_OVERFLOW),
		 (unsigned long long)counter(s, RSP_SC_UNMATCHED),
		 (unsigned long long)counter(s, RSP_SC_OTHER_ABI),
		 (unsigned long long)counter(s, RSP_SC_NO_STATE),
		 (unsigned long long)counter(s, RSP_SC_LATE),
		 (unsigned long long)atomic_load(&s->swept),
		 (unsigned long long)counter(s, RSP_SC_EXIT_LOST),
		 (unsigned long long)atomic_load(&s->refused),
		 (unsigned long long)atomic_load(&s->errors));
	return 1;
#else
	return 0;
#endif
}
