// SPDX-License-Identifier: GPL-2.0
/* The BPF capture programs, through their libbpf skeleton: see bpfcap.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfcap.h"
#include "rsp.skel.h"

#define BTF_PATH      "/sys/kernel/btf/vmlinux"
#define LOCKDOWN_PATH "/sys/kernel/security/lockdown"
#define LOG_TAIL      4096

struct ring_ctx {
	struct rsp_bpfcap *bc;
	unsigned cpu;
};

struct rsp_bpfcap {
	struct rsp *skel;
	bool attached;
	unsigned nr_cpus;
	int *ring_fds;		 /* per CPU: the BPF ring buffer map, -1 if none */
	struct ring_ctx *rctx;	 /* per CPU: the consumer's context */
	struct ring_buffer *rb;	 /* libbpf's consumer over every CPU's ring */
	rsp_bpfcap_record_fn fn; /* where records go */
	void *fn_ctx;
};

static int on_ring_record(void *ctx, void *data, size_t size)
{
	const struct ring_ctx *rc = ctx;

	return rc->bc->fn(rc->bc->fn_ctx, rc->cpu, data, size);
}

/*
 * libbpf's messages (the verifier's log among them) go to a buffer, not
 * stderr: rspd logs one sentence and shows the log's tail on request. The
 * last LOG_TAIL bytes are kept; opening the programs is single-threaded.
 */
static char log_buf[LOG_TAIL];
static size_t log_len;

/* The program whose load failed ("prog 'NAME': BPF program load failed"), or "". */
static char failed_name[64];

static void note_failed(const char *msg)
{
	const char *p = strstr(msg, "prog '"), *q;

	if (p && (q = strchr(p + 6, '\'')) && (size_t)(q - p - 6) < sizeof(failed_name) &&
	    strstr(q, "load failed") && !failed_name[0])
		snprintf(failed_name, sizeof(failed_name), "%.*s", (int)(q - p - 6), p + 6);
}

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	const char *p;
	size_t n;

	if (level == LIBBPF_DEBUG || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	note_failed(msg);
	/* The verifier's log comes as one message: its end says why. */
	n = strlen(msg);
	p = msg;
	if (n >= sizeof(log_buf)) {
		p += n - (sizeof(log_buf) - 1);
		n = sizeof(log_buf) - 1;
	}
	if (log_len + n >= sizeof(log_buf)) {
		size_t drop = log_len + n - sizeof(log_buf) + 1;

		drop = drop > log_len ? log_len : drop;
		memmove(log_buf, log_buf + drop, log_len - drop);
		log_len -= drop;
	}
	memcpy(log_buf + log_len, p, n);
	log_len += n;
	log_buf[log_len] = '\0';
	free(msg);
	return 0;
}

const char *rsp_bpfcap__verifier_log(void)
{
	return log_buf;
}

void rsp_bpfcap__opts_init(struct rsp_bpfcap_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->stacks = RSP_BSTACKS_CACHED;
	o->stack_refresh = 256;
	o->max_stack = 64;
	o->kernel_stacks = true;
	o->user_stacks = true;
	o->waker_stacks = true;
	o->ring_bytes = 1u << 20;
	o->block = o->irq = o->timer = true;
}

/* Programs of the families not asked for are not loaded (nor attached). */
static void choose_programs(struct rsp_bpfcap *bc, const struct rsp_bpfcap_opts *o)
{
	struct bpf_program *block[] = {bc->skel->progs.rsp_block_rq_insert,
				       bc->skel->progs.rsp_block_rq_issue,
				       bc->skel->progs.rsp_block_rq_complete};
	struct bpf_program *irq[] = {
		bc->skel->progs.rsp_irq_handler_entry, bc->skel->progs.rsp_irq_handler_exit,
		bc->skel->progs.rsp_softirq_entry, bc->skel->progs.rsp_softirq_exit};
	struct bpf_program *timer[] = {bc->skel->progs.rsp_hrtimer_start,
				       bc->skel->progs.rsp_hrtimer_expire_entry,
				       bc->skel->progs.rsp_hrtimer_expire_exit};

	for (size_t i = 0; i < sizeof(block) / sizeof(block[0]); i++)
		bpf_program__set_autoload(block[i], o->block);
	for (size_t i = 0; i < sizeof(irq) / sizeof(irq[0]); i++)
		bpf_program__set_autoload(irq[i], o->irq);
	for (size_t i = 0; i < sizeof(timer) / sizeof(timer[0]); i++)
		bpf_program__set_autoload(timer[i], o->timer);
}

/* The lockdown mode in force ("none", "integrity", "confidentiality"), or "". */
static void lockdown_mode(char *buf, size_t n)
{
	char line[128] = "";
	FILE *f = fopen(LOCKDOWN_PATH, "r");
	char *a, *b;

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (a = strchr(line, '[')) && (b = strchr(a, ']'))) {
		*b = '\0';
		snprintf(buf, n, "%s", a + 1);
	}
	fclose(f);
}

/*
 * The program the verifier refused, from libbpf's log ("prog 'NAME':
 * BPF program load failed" then the verifier's own log): false if none.
 */
static bool failed_prog(char *buf, size_t n)
{
	if (!failed_name[0])
		return false;
	snprintf(buf, n, "%s", failed_name);
	return true;
}

static void load_error(int e, char *err, size_t errlen)
{
	char mode[32], prog[64];

	lockdown_mode(mode, sizeof(mode));
	/* The verifier says EACCES or EINVAL; its log tells it from a missing privilege. */
	if (failed_prog(prog, sizeof(prog)) && e != EPERM)
		snprintf(err, errlen,
			 "the kernel's verifier refused rsp's BPF program %s (%s; the verifier's "
			 "log says why): use --capture perf",
			 prog, strerror(e));
	else if (e == EPERM && mode[0] && strcmp(mode, "none"))
		snprintf(err, errlen,
			 "the kernel is in lockdown (%s), which refuses BPF programs that read "
			 "kernel memory: use --capture perf",
			 mode);
	else if (e == EPERM || e == EACCES)
		snprintf(err, errlen,
			 "the kernel refused to load rsp's BPF programs (%s): rspd needs "
			 "CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN); run it as root or use "
			 "--capture perf",
			 strerror(e));
	else if (e == ENOMEM)
		snprintf(err, errlen,
			 "out of locked memory for rsp's BPF maps: raise RLIMIT_MEMLOCK "
			 "(LimitMEMLOCK= in the unit) or use --capture perf");
	else {
		snprintf(err, errlen, "could not load rsp's BPF programs: %s; use --capture perf",
			 strerror(e));
	}
}

static void ring_error(unsigned cpu, int ret, char *err, size_t errlen)
{
	snprintf(err, errlen,
		 ret == -ENOMEM || ret == -EPERM
			 ? "could not make CPU %u's BPF ring (%s): raise RLIMIT_MEMLOCK "
			   "(LimitMEMLOCK= in the unit), lower --ring-pages or use --capture perf"
			 : "could not make CPU %u's BPF ring (%s): use --capture perf",
		 cpu, strerror(-ret));
}

/*
 * One BPF ring buffer per CPU, made before the programs load: the first is
 * the template of the "rings" array's values (libbpf cannot resize an
 * inner map itself), the array is filled after the load.
 */
static int make_rings(struct rsp_bpfcap *bc, const struct rsp_bpfcap_opts *o, char *err,
		      size_t errlen)
{
	bc->ring_fds = malloc(bc->nr_cpus * sizeof(*bc->ring_fds));
	bc->rctx = calloc(bc->nr_cpus, sizeof(*bc->rctx));
	if (!bc->ring_fds || !bc->rctx) {
		snprintf(err, errlen, "out of memory making rsp's BPF rings");
		return -ENOMEM;
	}
	for (unsigned c = 0; c < bc->nr_cpus; c++)
		bc->ring_fds[c] = -1;
	for (unsigned c = 0; c < bc->nr_cpus; c++) {
		int fd =
			bpf_map_create(BPF_MAP_TYPE_RINGBUF, "rsp_ring", 0, 0, o->ring_bytes, NULL);

		if (fd < 0) {
			ring_error(c, -errno, err, errlen);
			return -errno;
		}
		bc->rctx[c].bc = bc;
		bc->rctx[c].cpu = c;
		bc->ring_fds[c] = fd;
	}
	return bpf_map__set_inner_map_fd(bc->skel->maps.rings, bc->ring_fds[0]);
}

/* Each CPU's ring into the programs' array, and libbpf's consumer over them all. */
static int fill_rings(struct rsp_bpfcap *bc, char *err, size_t errlen)
{
	int outer = bpf_map__fd(bc->skel->maps.rings);

	for (unsigned c = 0; c < bc->nr_cpus; c++) {
		int fd = bc->ring_fds[c], ret = 0;

		if (bpf_map_update_elem(outer, &c, &fd, BPF_ANY))
			ret = -errno;
		if (!ret && !bc->rb) {
			bc->rb = ring_buffer__new(fd, on_ring_record, &bc->rctx[c], NULL);
			if (!bc->rb)
				ret = -errno;
		} else if (!ret && ring_buffer__add(bc->rb, fd, on_ring_record, &bc->rctx[c])) {
			ret = -errno;
		}
		if (ret) {
			ring_error(c, ret, err, errlen);
			return ret;
		}
	}
	return 0;
}

struct rsp_bpfcap *rsp_bpfcap__open(const struct rsp_bpfcap_opts *o, char *err, size_t errlen)
{
	struct rsp_bpfcap *bc;
	int ret;

	log_len = 0;
	log_buf[0] = '\0';
	failed_name[0] = '\0';
	if (access(BTF_PATH, R_OK)) {
		snprintf(err, errlen,
			 "this kernel has no BTF (%s): the BPF backend needs a kernel built with "
			 "CONFIG_DEBUG_INFO_BTF; use --capture perf",
			 BTF_PATH);
		return NULL;
	}
	bc = calloc(1, sizeof(*bc));
	if (!bc) {
		snprintf(err, errlen, "out of memory opening rsp's BPF programs");
		return NULL;
	}
	libbpf_set_print(on_libbpf_print);
	bc->skel = rsp__open();
	if (!bc->skel) {
		ret = errno ? errno : EINVAL;
		snprintf(err, errlen, "could not open rsp's BPF programs: %s", strerror(ret));
		free(bc);
		return NULL;
	}
	bc->skel->rodata->stack_policy = o->stacks;
	bc->skel->rodata->max_stack =
		(int)(o->max_stack && o->max_stack <= RSP_BPF_MAX_STACK ? o->max_stack
									: RSP_BPF_MAX_STACK);
	bc->skel->rodata->kernel_stacks = o->kernel_stacks;
	bc->skel->rodata->stack_every = o->stack_every ? o->stack_every : 1;
	bc->skel->rodata->user_stacks = o->user_stacks;
	bc->skel->rodata->waker_stacks = o->waker_stacks;
	bc->skel->rodata->stack_check = o->stack_check;
	bc->skel->rodata->stack_refresh = o->stack_refresh ? o->stack_refresh : 1;
	bc->skel->rodata->know_interrupts = o->irq && o->timer;
	bc->skel->rodata->force_verifier_failure = o->force_verifier_failure;
	bc->skel->rodata->wake_bytes = o->wake_bytes;
	bc->skel->rodata->capture_cgroup_id = o->cgroup_id;
	bc->skel->rodata->capture_cgroup_level = o->cgroup_level;
	bc->skel->rodata->hrtimer_wakeup_fn = o->hrtimer_wakeup;
	choose_programs(bc, o);
	bc->nr_cpus = o->nr_cpus ? o->nr_cpus : (unsigned)libbpf_num_possible_cpus();
	ret = bpf_map__set_max_entries(bc->skel->maps.rings, bc->nr_cpus);
	if (ret) {
		snprintf(err, errlen, "could not size rsp's BPF ring array (%u CPUs): %s",
			 bc->nr_cpus, strerror(-ret));
		rsp_bpfcap__close(bc);
		return NULL;
	}
	if (make_rings(bc, o, err, errlen)) {
		rsp_bpfcap__close(bc);
		return NULL;
	}
	ret = rsp__load(bc->skel);
	if (ret) {
		load_error(-ret, err, errlen);
		rsp_bpfcap__close(bc);
		return NULL;
	}
	if (fill_rings(bc, err, errlen)) {
		rsp_bpfcap__close(bc);
		return NULL;
	}
	return bc;
}

int rsp_bpfcap__attach(struct rsp_bpfcap *bc, char *err, size_t errlen)
{
	int ret;

	ret = rsp__attach(bc->skel);
	if (ret) {
		snprintf(err, errlen,
			 "could not attach rsp's BPF programs to the scheduler's tracepoints: "
			 "%s; use --capture perf",
			 strerror(-ret));
		return ret;
	}
	bc->attached = true;
	return 0;
}

int rsp_bpfcap__poll_fd(const struct rsp_bpfcap *bc)
{
	return bc->rb ? ring_buffer__epoll_fd(bc->rb) : -1;
}

int rsp_bpfcap__consume(struct rsp_bpfcap *bc, rsp_bpfcap_record_fn fn, void *ctx)
{
	bc->fn = fn;
	bc->fn_ctx = ctx;
	return bc->rb ? ring_buffer__consume(bc->rb) : 0;
}

/* A CARRY record of @part (what: its kind), to @fn on the part's CPU. */
static int carry(uint64_t now, uint8_t what, uint32_t a, uint32_t b, const void *part, uint16_t cpu,
		 rsp_bpfcap_record_fn fn, void *ctx)
{
	struct {
		struct rsp_brec_carry c;
		uint64_t part[6];
	} r;

	_Static_assert(sizeof(r.part) == sizeof(struct rsp_brec_wake_part) &&
			       sizeof(r.part) == sizeof(struct rsp_brec_block_part),
		       "a carried part");
	memset(&r, 0, sizeof(r));
	r.c.h.type = RSP_BREC_TYPE(RSP_BREC_CARRY);
	r.c.h.cpu = cpu;
	r.c.h.size = sizeof(r);
	r.c.h.time = now;
	r.c.woken[0] = a;
	r.c.woken[1] = b;
	r.c.what = what;
	memcpy(r.part, part, sizeof(r.part));
	return fn(ctx, cpu, &r, sizeof(r));
}

/* The requests in flight: their insert and issue parts. */
static int pending_requests(const struct rsp_bpfcap *bc, uint64_t now, rsp_bpfcap_record_fn fn,
			    void *ctx)
{
	int fd = bpf_map__fd(bc->skel->maps.rq_pending), n = 0;
	uint64_t key, next, *prev = NULL;
	struct rsp_bpf_rq_parts v;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue; /* completed meanwhile */
		if ((v.has & RSP_BFOLD_BLOCK_INSERT) &&
		    !carry(now, RSP_BREC_BLOCK_INSERT, v.dev, 0, &v.ins, v.ins.cpu, fn, ctx))
			n++;
		if ((v.has & RSP_BFOLD_BLOCK_ISSUE) &&
		    !carry(now, RSP_BREC_BLOCK_ISSUE, v.dev, 0, &v.iss, v.iss.cpu, fn, ctx))
			n++;
	}
	return n;
}

/* Is thread @tid of /proc/@pid runnable (state R: running or waiting for a CPU)? */
static bool runnable(const char *pid, const char *tid)
{
	char path[600], buf[256], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	p = strrchr(buf, ')'); /* the name may hold anything: the state follows its end */
	return p && p[1] == ' ' && p[2] == 'R';
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* linux/pidfd.h, 6.9 */
#endif

/* A runnable thread's waking still in its slot (not yet carried by a switch-in). */
static int pending_waking(const struct rsp_bpfcap *bc, long pid, long tid, uint64_t now,
			  rsp_bpfcap_record_fn fn, void *ctx)
{
	int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)tid, tid == pid ? 0 : PIDFD_THREAD);
	struct rsp_bpf_wake_slot ws;
	int ret;

	if (pidfd < 0)
		return 0; /* gone, or a kernel without thread pidfds: nothing pending known */
	ret = bpf_map_lookup_elem(bpf_map__fd(bc->skel->maps.wake_task), &pidfd, &ws);
	close(pidfd);
	if (ret || !ws.valid)
		return 0;
	return !carry(now, ws.p.kind, (uint32_t)tid, (uint32_t)pid, &ws.p, ws.p.cpu, fn, ctx);
}

static int pending_wakings(const struct rsp_bpfcap *bc, uint64_t now, rsp_bpfcap_record_fn fn,
			   void *ctx)
{
	DIR *procs = opendir("/proc"), *tasks;
	struct dirent *p, *t;
	char path[300];
	int n = 0;

	if (!procs)
		return -errno;
	while ((p = readdir(procs))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks)))
			if (t->d_name[0] >= '1' && t->d_name[0] <= '9' &&
			    runnable(p->d_name, t->d_name))
				n += pending_waking(bc, strtol(p->d_name, NULL, 10),
						    strtol(t->d_name, NULL, 10), now, fn, ctx);
		if (tasks)
			closedir(tasks);
	}
	closedir(procs);
	return n;
}

int rsp_bpfcap__pending(const struct rsp_bpfcap *bc, uint64_t now, rsp_bpfcap_record_fn fn,
			void *ctx)
{
	int a = pending_requests(bc, now, fn, ctx), b = pending_wakings(bc, now, fn, ctx);

	return a < 0 ? a : b < 0 ? b : a + b;
}

int rsp_bpfcap__lost(const struct rsp_bpfcap *bc, uint64_t *per_cpu, unsigned nr)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t k = RSP_BC_OUTPUT_ERRORS;
	uint64_t *v;
	int ret;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = bpf_map__lookup_elem(bc->skel->maps.counters, &k, sizeof(k), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (unsigned c = 0; !ret && c < nr; c++)
		per_cpu[c] = c < (unsigned)ncpu ? v[c] : 0;
	free(v);
	return ret;
}

void rsp_bpfcap__detach(struct rsp_bpfcap *bc)
{
	if (bc && bc->attached) {
		rsp__detach(bc->skel);
		bc->attached = false;
	}
}

void rsp_bpfcap__close(struct rsp_bpfcap *bc)
{
	if (!bc)
		return;
	rsp_bpfcap__detach(bc);
	ring_buffer__free(bc->rb);
	for (unsigned c = 0; bc->ring_fds && c < bc->nr_cpus; c++)
		if (bc->ring_fds[c] >= 0)
			close(bc->ring_fds[c]);
	free(bc->ring_fds);
	free(bc->rctx);
	rsp__destroy(bc->skel);
	free(bc);
}

/*
 * What each ring carried is remembered with a generation (the "generation"
 * map); a new one makes every name and stack unsent, without walking the
 * maps (task storage cannot be walked from here).
 */
int rsp_bpfcap__resend_all(struct rsp_bpfcap *bc)
{
	uint32_t zero = 0, gen = 0;
	int ret = bpf_map__lookup_elem(bc->skel->maps.generation, &zero, sizeof(zero), &gen,
				       sizeof(gen), 0);

	gen++;
	return ret ? ret
		   : bpf_map__update_elem(bc->skel->maps.generation, &zero, sizeof(zero), &gen,
					  sizeof(gen), BPF_ANY);
}

int rsp_bpfcap__set_degrade(struct rsp_bpfcap *bc, unsigned level)
{
	uint32_t zero = 0, v = level < RSP_DEGRADE__NR ? level : RSP_DEGRADE__NR - 1;

	return bpf_map__update_elem(bc->skel->maps.tune, &zero, sizeof(zero), &v, sizeof(v),
				    BPF_ANY);
}

/* The programs' kernel statistics, summed. */
static int prog_totals(const struct rsp_bpfcap *bc, uint64_t *ns, uint64_t *runs, uint64_t *misses)
{
	struct bpf_program *p;

	*ns = *runs = *misses = 0;
	bpf_object__for_each_program(p, bc->skel->obj)
	{
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0)
			continue; /* not loaded (a family not asked for) */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		*ns += info.run_time_ns;
		*runs += info.run_cnt;
		*misses += info.recursion_misses;
	}
	return 0;
}

int rsp_bpfcap__run_time(const struct rsp_bpfcap *bc, uint64_t *ns, uint64_t *runs)
{
	uint64_t misses;

	return prog_totals(bc, ns, runs, &misses);
}

int rsp_bpfcap__skipped(const struct rsp_bpfcap *bc, uint64_t *n)
{
	uint64_t ns, runs;

	return prog_totals(bc, &ns, &runs, n);
}

int rsp_bpfcap__stats(const struct rsp_bpfcap *bc, struct rsp_bpfcap_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sums[RSP_BC__NR] = {0};
	uint64_t *v;

	memset(st, 0, sizeof(*st));
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	/*
	 * Last counter first: a program run counts a stack site before its walk
	 * or cache hit (and those before their checks), so reading the later
	 * counters first keeps walks + cached <= sites in every read while the
	 * programs run (one key at a time: no read sees all of them at once).
	 */
	for (uint32_t k = RSP_BC__NR; k-- > 0;) {
		int ret = bpf_map__lookup_elem(bc->skel->maps.counters, &k, sizeof(k), v,
					       (size_t)ncpu * sizeof(*v), 0);

		if (ret) {
			free(v);
			return ret;
		}
		for (int c = 0; c < ncpu; c++)
			sums[k] += v[c];
	}
	free(v);
	st->records = sums[RSP_BC_RECORDS];
	st->stacks = sums[RSP_BC_STACKS];
	st->comms = sums[RSP_BC_COMMS];
	st->output_errors = sums[RSP_BC_OUTPUT_ERRORS];
	st->stack_errors = sums[RSP_BC_STACK_ERRORS];
	st->stack_sites = sums[RSP_BC_STACK_SITES];
	st->walks = sums[RSP_BC_WALKS];
	st->cache_hits = sums[RSP_BC_HITS];
	st->cached = sums[RSP_BC_CACHED];
	st->no_key = sums[RSP_BC_NO_KEY];
	st->kchecks = sums[RSP_BC_KCHECKS];
	st->kdiffer = sums[RSP_BC_KDIFFER];
	st->uchecks = sums[RSP_BC_UCHECKS];
	st->udiffer = sums[RSP_BC_UDIFFER];
	st->carried = sums[RSP_BC_CARRIED];
	return 0;
}
