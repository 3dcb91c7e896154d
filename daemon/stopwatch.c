// SPDX-License-Identifier: GPL-2.0
/*
 * Stopwatches (`rspctl stopwatch`): the BPF programs of bpf/stopwatch.bpf.c,
 * their probes added and removed live, and their counts read every second.
 *
 * Why BPF and not perf uprobe events into the rings matched here: on this
 * kernel BPF programs attach to uprobes and uretprobes (checked with
 * bpf_program__attach_uprobe_opts()), so each call is timed and added to
 * per-CPU buckets in the kernel, and nothing per call is written, copied
 * or decoded (a perf uprobe record with its sample header would be, twice
 * per call). bench/stopwatch.py measures the cost per probed call.
 *
 * Each stopwatch owns one of RSP_SW_MAX kernel slots (its index, the BPF
 * cookie of its links, its filter and its two stat slots). Once a second
 * the poller flips the kernel's epoch, waits a grace period for programs
 * still writing the old slot, then adds that slot into the stopwatch's
 * total and its ring of one-second totals (300 kept: --last) and clears
 * it. `show` adds the live slot to those.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <tracefs.h>
#include <traceevent/event-parse.h>
#include <rsp/parse.h>
#include <rsp/symbols.h>
#include <rsp/sw_render.h>
#include <rsp/sw_request.h>
#include <rsp/sysprof.h>
#include <rsp/uprobe.h>
#include "bpf/stopwatch.h"
#include "clock.h"
#include "livemodel.h"
#include "log.h"
#include "rsp_tracefs.h"
#include "rspd.h"
#include "stopwatch.h"
#include "stopwatch.skel.h"
#include "syscalls.h"
#include "trigger.h"

#define SECONDS_KEPT 300
/* A keyed pair's item with no end after this long is expired, unmatched. */
#define ITEM_TIMEOUT_NS 10000000000ull
#define GRACE_NS	5000000 /* a program runs for microseconds; it is not preempted for 5 ms */

struct sw {
	bool used;
	struct rsp_sw_view v; /* name, spec, where, scope, added_ns */
	int sys_nr;	      /* -1: a function */
	struct bpf_link *entry, *ret;
	struct rsp_sw_total total; /* completed seconds since added */
	struct rsp_sw_total *secs; /* ring of SECONDS_KEPT */
	unsigned head, nsecs;	   /* next slot to write, slots filled */
	/* --callers: the rows of exited processes, folded here (fold_exited()) */
	struct rsp_sw_callers *folded;
	uint64_t folded_lost; /* their calls whose stack was gone: unknown caller */
};

/*
 * A tracepoint's attachment for keyed pairs, on one side (start or end):
 * the kernel attaches a program to a tracepoint once, so the pairs that
 * share an event share this, each a bit of its mask (bpf map tp_users).
 */
struct tp_attach {
	char tp[192]; /* "sys:name" */
	struct bpf_link *link;
	uint64_t mask;
};

struct gone_row {
	struct rsp_sw_caller_key key;
	uint64_t since_ns;
};

struct rspd_stopwatches {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t poller;
	bool poller_on, stopping;
	unsigned max, threads, callers;
	struct rspd *d; /* its process model symbolizes show --callers */
	struct rsp_sw *skel;
	struct bpf_link *sys_enter, *sys_exit, *exit_link, *switch_link;
	int ncpus;
	struct rsp_sw_stat *cpus; /* one lookup's values: ncpus */
	unsigned next_id;
	unsigned next_slot; /* where the search for a free index begins */
	struct sw sw[RSP_SW_MAX];
	uint64_t run_ns; /* the last rspd_stopwatches__run_time() (capture loop only) */
	/* caller rows whose process was found gone, and when (fold_exited()) */
	struct gone_row *gone;
	size_t ngone;
	/* stack ids no caller row used at the last drop_unused_stacks() pass */
	uint32_t *unused;
	size_t nunused;
	struct tp_attach tps[2][RSP_SW_MAX]; /* [side][j]: the cookie is side * RSP_SW_MAX + j */
	bool no_pairs; /* the kernel lacks bpf_loop(): the pair programs are not loaded */
};

struct rspd_stopwatches *rspd_stopwatches__new(struct rspd *d)
{
	struct rspd_stopwatches *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	s->max = d->cfg.stopwatch.max;
	s->threads = d->cfg.stopwatch.threads;
	s->callers = d->cfg.stopwatch.callers;
	s->d = d;
	return s;
}

static void sw_free(struct sw *w)
{
	bpf_link__destroy(w->entry);
	bpf_link__destroy(w->ret);
	free(w->secs);
	rsp_sw_callers__delete(w->folded);
	memset(w, 0, sizeof(*w));
}

void rspd_stopwatches__delete(struct rspd_stopwatches *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->poller_on)
		pthread_join(s->poller, NULL);
	for (int i = 0; i < RSP_SW_MAX; i++)
		sw_free(&s->sw[i]);
	for (int side = 0; side < 2; side++)
		for (int j = 0; j < RSP_SW_MAX; j++)
			bpf_link__destroy(s->tps[side][j].link);
	bpf_link__destroy(s->sys_enter);
	bpf_link__destroy(s->sys_exit);
	bpf_link__destroy(s->exit_link);
	bpf_link__destroy(s->switch_link);
	rsp_sw__destroy(s->skel);
	free(s->cpus);
	free(s->gone);
	free(s->unused);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

uint64_t rspd_stopwatches__run_time(struct rspd_stopwatches *s)
{
	/* The capture loop asks: it never waits for an add or a show. */
	if (pthread_mutex_trylock(&s->lock))
		return s->run_ns;
	s->run_ns = s->skel ? rspd_bpf__run_time(s->skel->obj) : 0;
	pthread_mutex_unlock(&s->lock);
	return s->run_ns;
}

/* Stat slot @key summed over the CPUs into @t; cleared after when @clear. */
static int read_slot(struct rspd_stopwatches *s, unsigned key, struct rsp_sw_total *t, bool clear)
{
	int fd = bpf_map__fd(s->skel->maps.stats);

	if (bpf_map_lookup_elem(fd, &key, s->cpus))
		return -errno;
	for (int c = 0; c < s->ncpus; c++)
		rsp_sw_total__add_stat(t, &s->cpus[c]);
	if (!clear)
		return 0;
	memset(s->cpus, 0, sizeof(*s->cpus) * (size_t)s->ncpus);
	return bpf_map_update_elem(fd, &key, s->cpus, BPF_ANY) ? -errno : 0;
}

static void expire_items(struct rspd_stopwatches *s, unsigned only, uint64_t before,
			 uint64_t *expired);
static void fold_exited(struct rspd_stopwatches *s);

/* One second: flip the epoch, let the old slot settle, harvest it. Lock held. */
static void harvest(struct rspd_stopwatches *s)
{
	unsigned old = s->skel->bss->epoch & 1;
	struct timespec grace = {0, GRACE_NS};

	uint64_t expired[RSP_SW_MAX] = {0}, now;

	__atomic_store_n(&s->skel->bss->epoch, old ^ 1, __ATOMIC_SEQ_CST);
	nanosleep(&grace, NULL);
	now = rspd_clock__now_ns();
	if (now > ITEM_TIMEOUT_NS)
		expire_items(s, RSP_SW_MAX, now - ITEM_TIMEOUT_NS, expired);
	for (unsigned i = 0; i < RSP_SW_MAX; i++) {
		struct sw *w = &s->sw[i];
		struct rsp_sw_total sec = {0};

		if (!w->used)
			continue;
		if (read_slot(s, i * 2 + old, &sec, true)) {
			rspd_log__errno(RSP_LOG_WARN, "stopwatch %s: cannot read its counts",
					w->v.name);
			continue;
		}
		sec.unmatched += expired[i];
		/* its slowest call of the second: the stopwatch triggers */
		rspd_triggers__stopwatch(s->d, w->v.name, sec.count, sec.max);
		rsp_sw_total__merge(&w->total, &sec);
		w->secs[w->head] = sec;
		w->head = (w->head + 1) % SECONDS_KEPT;
		if (w->nsecs < SECONDS_KEPT)
			w->nsecs++;
	}
	fold_exited(s);
}

static void *poll_main(void *arg)
{
	struct rspd_stopwatches *s = arg;
	struct timespec ts;

	pthread_setname_np(pthread_self(), "rspd-stopwatch");

	pthread_mutex_lock(&s->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	while (!s->stopping) {
		ts.tv_sec++;
		while (!s->stopping && pthread_cond_timedwait(&s->wake, &s->lock, &ts) != ETIMEDOUT)
			;
		if (!s->stopping)
			harvest(s);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The programs, loaded at the first add. Lock held. */
static int load(struct rspd_stopwatches *s, struct rsp_buf *err)
{
	int ret;

	if (s->skel)
		return 0;
	s->ncpus = libbpf_num_possible_cpus();
	s->cpus = s->ncpus > 0 ? calloc((size_t)s->ncpus, sizeof(*s->cpus)) : NULL;
	s->skel = s->cpus ? rsp_sw__open() : NULL;
	if (!s->skel) {
		rsp_buf__puts(err, "stopwatch add: out of memory loading the BPF programs");
		return -ENOMEM;
	}
	bpf_map__set_max_entries(s->skel->maps.frames, s->threads);
	bpf_map__set_max_entries(s->skel->maps.threads, s->threads);
	bpf_map__set_max_entries(s->skel->maps.items, s->threads);
	bpf_map__set_max_entries(s->skel->maps.stacks, s->callers);
	bpf_map__set_max_entries(s->skel->maps.callers, s->callers);
	bpf_program__set_autoattach(s->skel->progs.sw_entry, false);
	/*
	 * The keyed pairs' programs run their pairs in bpf_loop() (Linux 5.17):
	 * without it they are left out, so that functions and syscalls can
	 * still be timed, and a pair is refused with a sentence (attach_pair).
	 */
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_loop, NULL) != 1) {
		bpf_program__set_autoload(s->skel->progs.sw_tp_start, false);
		bpf_program__set_autoload(s->skel->progs.sw_tp_end, false);
		s->no_pairs = true;
	}
	ret = rsp_sw__load(s->skel);
	if (!ret) {
		s->exit_link = bpf_program__attach(s->skel->progs.sw_exit);
		s->switch_link =
			s->exit_link ? bpf_program__attach(s->skel->progs.sw_switch) : NULL;
		ret = s->switch_link ? 0 : -errno;
	}
	if (!ret)
		ret = -pthread_create(&s->poller, NULL, poll_main, s);
	if (ret) {
		rsp_buf__printf(err,
				"stopwatch add: rspd cannot load its stopwatch BPF programs: %s; "
				"stopwatches need a kernel with BTF and BPF, and rspd run as "
				"root (rspd's log has the verifier's words)",
				strerror(-ret));
		bpf_link__destroy(s->exit_link);
		bpf_link__destroy(s->switch_link);
		s->exit_link = s->switch_link = NULL;
		rsp_sw__destroy(s->skel);
		s->skel = NULL;
		return ret;
	}
	s->poller_on = true;
	return 0;
}

static struct sw *find(struct rspd_stopwatches *s, const char *name)
{
	for (int i = 0; i < RSP_SW_MAX; i++)
		if (s->sw[i].used && !strcmp(s->sw[i].v.name, name))
			return &s->sw[i];
	return NULL;
}

static unsigned count(const struct rspd_stopwatches *s)
{
	unsigned n = 0;

	for (int i = 0; i < RSP_SW_MAX; i++)
		n += s->sw[i].used;
	return n;
}

/*
 * Delete the keyed pairs' items that started before @before (0: all of
 * stopwatch @only's; @only RSP_SW_MAX: every stopwatch's), counting them
 * per stopwatch into @expired (may be NULL).
 */
static void expire_items(struct rspd_stopwatches *s, unsigned only, uint64_t before,
			 uint64_t *expired)
{
	int fd = bpf_map__fd(s->skel->maps.items);
	struct rsp_sw_item k, next, *prev = NULL;
	uint64_t t0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool drop = only < RSP_SW_MAX ? next.sw == only
					      : !bpf_map_lookup_elem(fd, &next, &t0) && t0 < before;

		if (drop && !bpf_map_delete_elem(fd, &next)) {
			if (expired && next.sw < RSP_SW_MAX)
				expired[next.sw]++;
			prev = NULL; /* the walk restarts: deleting moved it */
			continue;
		}
		k = next;
		prev = &k;
	}
}

/* Is stack id @id in @ids (@n, unsorted)? */
static bool has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t k = 0; k < n; k++)
		if (ids[k] == id)
			return true;
	return false;
}

/*
 * Delete the stacks no caller row uses (the stack table is shared: two
 * stopwatches may have one caller). A program takes a stack's id before
 * it makes the row that uses it, and a row made while the walk below runs
 * may be missed by it: so a stack goes only when it was unused at two
 * passes in a row (a second apart; a row follows its stack within
 * microseconds). Deleted at once, such a stack could be taken again by
 * another caller's addresses and the row shown under that caller's name.
 */
static void drop_unused_stacks(struct rspd_stopwatches *s)
{
	int fd = bpf_map__fd(s->skel->maps.callers), sfd = bpf_map__fd(s->skel->maps.stacks);
	struct rsp_sw_caller_key k, next, *prev = NULL;
	uint32_t *ids = calloc(s->callers, sizeof(*ids)), id, nid, *pid = NULL;
	uint32_t *unused = calloc(s->callers, sizeof(*unused));
	size_t n = 0, nu = 0;

	if (!ids || !unused) { /* out of memory: the stacks stay, bounded by the table */
		free(ids);
		free(unused);
		return;
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (n < s->callers && !has_id(ids, n, next.stack))
			ids[n++] = next.stack;
		k = next;
		prev = &k;
	}
	while (!bpf_map_get_next_key(sfd, pid, &nid)) {
		if (!has_id(ids, n, nid)) {
			if (has_id(s->unused, s->nunused, nid) && !bpf_map_delete_elem(sfd, &nid)) {
				pid = NULL;
				continue;
			}
			if (nu < s->callers && !has_id(unused, nu, nid))
				unused[nu++] = nid;
		}
		id = nid;
		pid = &id;
	}
	free(ids);
	free(s->unused);
	s->unused = unused;
	s->nunused = nu;
}

/* Delete the keys of hash @fd (@size bytes, the stopwatch's index at @sw_off) of index @i. */
static void delete_keys_of(int fd, size_t size, size_t sw_off, unsigned i)
{
	unsigned char k[32], next[32];
	void *prev = NULL;
	uint32_t sw;

	if (size > sizeof(k) || sw_off + sizeof(sw) > size)
		return;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(&sw, next + sw_off, sizeof(sw));
		if (sw == i) {
			bpf_map_delete_elem(fd, next);
			prev = NULL; /* the walk restarts: deleting moved it */
			continue;
		}
		memcpy(k, next, size);
		prev = k;
	}
}

/* Delete stopwatch @i's caller rows, then the stacks no other row uses. */
static void clear_callers(struct rspd_stopwatches *s, unsigned i)
{
	delete_keys_of(bpf_map__fd(s->skel->maps.callers), sizeof(struct rsp_sw_caller_key),
		       offsetof(struct rsp_sw_caller_key, sw), i);
	drop_unused_stacks(s);
}

/* Clear slot @i's counts and any thread entries left under its index. */
static void clear_index(struct rspd_stopwatches *s, unsigned i)
{
	struct rsp_sw_total ignore = {0};

	struct rsp_sw_pair nopair = {0};

	read_slot(s, i * 2, &ignore, true);
	read_slot(s, i * 2 + 1, &ignore, true);
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.pairs), &i, &nopair, BPF_ANY);
	expire_items(s, i, 0, NULL);
	clear_callers(s, i);
	delete_keys_of(bpf_map__fd(s->skel->maps.frames), sizeof(struct rsp_sw_key),
		       offsetof(struct rsp_sw_key, sw), i);
}

static int set_syscall_bit(struct rspd_stopwatches *s, int nr, unsigned i, bool on)
{
	int fd = bpf_map__fd(s->skel->maps.syscalls);
	__u32 key = (__u32)nr;
	__u64 mask = 0;

	if (bpf_map_lookup_elem(fd, &key, &mask))
		return -errno;
	mask = on ? mask | (1ull << i) : mask & ~(1ull << i);
	return bpf_map_update_elem(fd, &key, &mask, BPF_ANY) ? -errno : 0;
}

static int attach_syscall(struct rspd_stopwatches *s, struct sw *w, unsigned i,
			  const struct rsp_sw_target *t, struct rsp_buf *err)
{
	uint32_t nr;

	if (rsp_syscall__parse(t->symbol, &nr) || nr >= RSP_SW_NR_SYSCALLS) {
		rsp_buf__printf(err,
				"stopwatch add: '%s' is not a system call of this machine "
				"(names as in man 2 syscalls, e.g. read, nanosleep, fsync)",
				t->symbol);
		return -ENOENT;
	}
	if (!s->sys_enter) {
		s->sys_enter = bpf_program__attach(s->skel->progs.sw_sys_enter);
		s->sys_exit = s->sys_enter ? bpf_program__attach(s->skel->progs.sw_sys_exit) : NULL;
		if (!s->sys_exit) {
			int ret = -errno;

			bpf_link__destroy(s->sys_enter);
			s->sys_enter = NULL;
			rsp_buf__printf(err,
					"stopwatch add: cannot attach to sys_enter/sys_exit: %s",
					strerror(-ret));
			return ret;
		}
	}
	w->sys_nr = nr;
	snprintf(w->v.where, sizeof(w->v.where), "system call %s (number %d)", t->symbol, nr);
	return set_syscall_bit(s, nr, i, true);
}

/*
 * Whether @path is rspd's executable, under any name (/proc/self/exe, a
 * link to it): uprobes in rspd itself would time rspd's functions for
 * whoever asked, and /proc/self/exe meant the caller's program anyway.
 */
static bool is_rspd(const char *path)
{
	struct stat a, b;

	if (!strncmp(path, "/proc/self/", 11) || !strncmp(path, "/proc/thread-self/", 18))
		return true;
	return !stat(path, &a) && !stat("/proc/self/exe", &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* @t's binary and function: its path (a path, or a loaded library's soname) and offset. */
static int resolve_func(const struct rsp_sw_target *t, char *path, size_t n,
			struct rsp_uprobe_target *ut, struct rsp_buf *err)
{
	int ret;

	if (t->object[0] != '/' && strchr(t->object, '/')) {
		/* rspd's working directory is not the caller's: it would find another file */
		rsp_buf__printf(err,
				"stopwatch add: '%s' is a relative path, which rspd would look up "
				"in its own working directory; give an absolute path (rspctl makes "
				"one of a relative path)",
				t->object);
		return -EINVAL;
	}
	if (t->object[0] == '/')
		snprintf(path, n, "%s", t->object);
	else if (rsp_uprobe__loaded_path(t->object, path, n)) {
		rsp_buf__printf(err,
				"stopwatch add: no such binary '%s': give a path, or the soname "
				"of a library rspd has loaded (e.g. libc.so.6)",
				t->object);
		return -ENOENT;
	}
	if (access(path, F_OK)) {
		rsp_buf__printf(err, "stopwatch add: no such binary '%s' (%s)", path,
				strerror(errno));
		return -ENOENT;
	}
	if (is_rspd(path)) {
		rsp_buf__printf(err,
				"stopwatch add: '%s' is rspd's own executable (/proc/self is "
				"rspd's, not yours): give the path of your program",
				path);
		return -EPERM;
	}
	ret = rsp_uprobe__resolve(path, t->symbol, ut, err);
	if (ret == -ENOENT) {
		rsp_buf__printf(err,
				"stopwatch add: %s defines no function '%s' (nm -D or nm "
				"lists its symbols)",
				path, t->symbol);
		return ret;
	}
	if (ret && !err->len)
		rsp_buf__printf(err, "stopwatch add: cannot read %s", path);
	return ret;
}

static int attach_func(struct rspd_stopwatches *s, struct sw *w, unsigned i,
		       const struct rsp_sw_target *t, long pid, struct rsp_buf *err)
{
	struct rsp_uprobe_target ut;
	char path[4096];
	int ret;

	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = i);
	ret = resolve_func(t, path, sizeof(path), &ut, err);
	if (ret)
		return ret;
	w->entry = bpf_program__attach_uprobe_opts(s->skel->progs.sw_entry, pid > 0 ? (int)pid : -1,
						   path, ut.offset, &o);
	o.retprobe = true;
	w->ret = w->entry ? bpf_program__attach_uprobe_opts(s->skel->progs.sw_return,
							    pid > 0 ? (int)pid : -1, path,
							    ut.offset, &o)
			  : NULL;
	if (!w->ret) {
		ret = -errno;
		rsp_buf__printf(err, "stopwatch add: cannot place a uprobe on %s:%s: %s", path,
				t->symbol, strerror(-ret));
		return ret;
	}
	snprintf(w->v.where, sizeof(w->v.where), "%s:%s at file offset 0x%llx", path, t->symbol,
		 (unsigned long long)ut.offset);
	return 0;
}

/*
 * A keyed pair of user functions: a uprobe at each one's entry, the key
 * their --key argN (systemtap's "timing items through queues": enqueue(item)
 * -> dequeue(item), on any threads of one process).
 */
static int attach_user_pair(struct rspd_stopwatches *s, struct sw *w, unsigned i,
			    const struct rsp_sw_request *r, struct rsp_buf *err)
{
	struct rsp_sw_pair p = {.nfields = 1, .uprobe = 1};
	struct rsp_sw_target t[2];
	struct rsp_uprobe_target ut[2];
	char path[2][4096];
	int pid = r->pid > 0 ? (int)r->pid : -1, ret = 0;

	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = i);
	p.arg[0] = p.arg[1] = (uint32_t)atoi(r->key + 3); /* "argN", checked by rspctl's parser */
	for (int k = 0; k < 2 && !ret; k++) {
		ret = rsp_sw_target__parse(k ? r->end : r->start, &t[k], err);
		if (!ret)
			ret = resolve_func(&t[k], path[k], sizeof(path[k]), &ut[k], err);
	}
	if (!ret && bpf_map_update_elem(bpf_map__fd(s->skel->maps.pairs), &i, &p, BPF_ANY))
		ret = -errno;
	if (ret)
		return ret;
	w->entry = bpf_program__attach_uprobe_opts(s->skel->progs.sw_up_start, pid, path[0],
						   ut[0].offset, &o);
	w->ret = w->entry ? bpf_program__attach_uprobe_opts(s->skel->progs.sw_up_end, pid, path[1],
							    ut[1].offset, &o)
			  : NULL;
	if (!w->ret) {
		ret = -errno;
		rsp_buf__printf(err, "stopwatch add: cannot place uprobes on %s and %s: %s",
				r->start, r->end, strerror(-ret));
		return ret;
	}
	snprintf(
		w->v.where, sizeof(w->v.where),
		"%.1900s:%.200s (offset 0x%llx) -> %.1900s:%.200s (offset 0x%llx) by %.8s, in each "
		"process",
		path[0], t[0].symbol, (unsigned long long)ut[0].offset, path[1], t[1].symbol,
		(unsigned long long)ut[1].offset, r->key);
	return 0;
}

/* Event "sys:name" of this kernel, its formats read with libtracefs. */
struct tp {
	char sys[64], name[128];
	struct tep_handle *tep;
	struct tep_event *ev;
};

static int tp_open(const char *spec, const char *opt, struct tp *t, struct rsp_buf *err)
{
	const char *colon = strchr(spec, ':');
	const char *systems[2] = {t->sys, NULL};

	memset(t, 0, sizeof(*t));
	if (!colon || (size_t)(colon - spec) >= sizeof(t->sys) ||
	    strlen(colon + 1) >= sizeof(t->name)) {
		rsp_buf__printf(err, "stopwatch add: %s wants SYSTEM:EVENT, not '%s'", opt, spec);
		return -EINVAL;
	}
	memcpy(t->sys, spec, (size_t)(colon - spec));
	snprintf(t->name, sizeof(t->name), "%s", colon + 1);
	t->tep = rsp_tracefs__formats(systems, t->name);
	t->ev = t->tep ? tep_find_event_by_name(t->tep, t->sys, t->name) : NULL;
	if (!t->ev) {
		rsp_buf__printf(err,
				"stopwatch add: %s: no tracepoint %s:%s on this kernel (see %s "
				"under /sys/kernel/tracing/events)",
				opt, t->sys, t->name, t->sys);
		return -ENOENT;
	}
	return 0;
}

static void tp_close(struct tp *t)
{
	if (t->tep)
		tep_free(t->tep);
	t->tep = NULL;
}

/* Field @name of @t: a number of 1 to 8 bytes. */
static int tp_field(const struct tp *t, const char *name, uint32_t *off, uint32_t *size,
		    struct rsp_buf *err)
{
	struct tep_format_field *f = tep_find_field(t->ev, name);

	if (!f) {
		rsp_buf__printf(err,
				"stopwatch add: %s:%s has no field '%s' (its fields are in "
				"/sys/kernel/tracing/events/%s/%s/format)",
				t->sys, t->name, name, t->sys, t->name);
		return -ENOENT;
	}
	if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING)) ||
	    f->size < 1 || f->size > 8) {
		rsp_buf__printf(err,
				"stopwatch add: field '%s' of %s:%s is not a number of 1 to 8 "
				"bytes; a key field must be",
				name, t->sys, t->name);
		return -EINVAL;
	}
	*off = (uint32_t)f->offset;
	*size = (uint32_t)f->size;
	return 0;
}

/* --key FIELD[,FIELD] in both events, same sizes; --where FIELD=N of the start. */
static int pair_fields(const struct tp *tp, const struct rsp_sw_request *r, struct rsp_sw_pair *p,
		       struct rsp_buf *err)
{
	char keys[128], *save = NULL;
	int ret;

	snprintf(keys, sizeof(keys), "%s", r->key);
	for (char *k = strtok_r(keys, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		if (p->nfields == 2) {
			rsp_buf__puts(err, "stopwatch add: --key takes one or two fields");
			return -EINVAL;
		}
		for (int side = 0; side < 2; side++) {
			ret = tp_field(&tp[side], k, &p->off[side][p->nfields],
				       &p->size[side][p->nfields], err);
			if (ret)
				return ret;
		}
		if (p->size[0][p->nfields] != p->size[1][p->nfields]) {
			rsp_buf__printf(err,
					"stopwatch add: key field '%s' has different sizes "
					"in the two events",
					k);
			return -EINVAL;
		}
		p->nfields++;
	}
	if (!p->nfields) {
		rsp_buf__puts(err, "stopwatch add: --key names no field");
		return -EINVAL;
	}
	if (r->where) {
		const char *eq = strchr(r->where, '=');
		char name[64];
		uint64_t v;

		snprintf(name, sizeof(name), "%.*s", (int)(eq - r->where), r->where);
		if (rsp_parse__u64(eq + 1, 0, UINT64_MAX, &v)) {
			rsp_buf__printf(err, "stopwatch add: --where wants FIELD=NUMBER, not '%s'",
					r->where);
			return -EINVAL;
		}
		ret = tp_field(&tp[0], name, &p->where_off, &p->where_size, err);
		if (ret)
			return ret;
		p->has_where = 1;
		p->where_value = v;
	}
	return 0;
}

/* Stopwatch @i leaves the attachment of @side, @j: detached when no pair uses it. */
static void tp_drop(struct rspd_stopwatches *s, int side, unsigned j, unsigned i)
{
	struct tp_attach *a = &s->tps[side][j];
	__u32 key = (__u32)(side * RSP_SW_MAX + j);

	a->mask &= ~(1ull << i);
	bpf_map_update_elem(bpf_map__fd(s->skel->maps.tp_users), &key, &a->mask, BPF_ANY);
	if (!a->mask) {
		bpf_link__destroy(a->link);
		memset(a, 0, sizeof(*a));
	}
}

/* Stopwatch @i leaves every tracepoint it starts or ends at. */
static void tp_unuse(struct rspd_stopwatches *s, unsigned i)
{
	for (int side = 0; side < 2; side++)
		for (unsigned j = 0; j < RSP_SW_MAX; j++)
			if (s->tps[side][j].mask & (1ull << i))
				tp_drop(s, side, j, i);
}

/*
 * Stopwatch @i starts (@side 0) or ends (1) at tracepoint @t: a bit in its
 * attachment's mask, the attachment made if it is the first pair there
 * (the mask written before the attach, so its first event finds it).
 */
static int tp_use(struct rspd_stopwatches *s, int side, const struct tp *t, unsigned i,
		  struct rsp_buf *err)
{
	struct tp_attach *a = NULL;
	char name[sizeof(a->tp)];
	unsigned j, free_j = RSP_SW_MAX;
	__u32 key;

	snprintf(name, sizeof(name), "%s:%s", t->sys, t->name);
	for (j = 0; j < RSP_SW_MAX; j++) {
		if (s->tps[side][j].link && !strcmp(s->tps[side][j].tp, name))
			break;
		if (!s->tps[side][j].link && free_j == RSP_SW_MAX)
			free_j = j;
	}
	if (j == RSP_SW_MAX)
		j = free_j;
	if (j == RSP_SW_MAX) /* RSP_SW_MAX pairs, each on its own events: not reached */
		return -ENOSPC;
	a = &s->tps[side][j];
	key = (__u32)(side * RSP_SW_MAX + j);
	a->mask |= 1ull << i;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.tp_users), &key, &a->mask, BPF_ANY)) {
		a->mask &= ~(1ull << i);
		return -errno;
	}
	if (!a->link) {
		LIBBPF_OPTS(bpf_tracepoint_opts, o, .bpf_cookie = key);

		a->link = bpf_program__attach_tracepoint_opts(side ? s->skel->progs.sw_tp_end
								   : s->skel->progs.sw_tp_start,
							      t->sys, t->name, &o);
		if (!a->link) {
			int ret = -errno;

			rsp_buf__printf(err, "stopwatch add: cannot attach to %s: %s", name,
					strerror(-ret));
			a->mask = 0;
			bpf_map_update_elem(bpf_map__fd(s->skel->maps.tp_users), &key, &a->mask,
					    BPF_ANY);
			return ret;
		}
		snprintf(a->tp, sizeof(a->tp), "%s", name);
	}
	return 0;
}

static int attach_pair(struct rspd_stopwatches *s, struct sw *w, unsigned i,
		       const struct rsp_sw_request *r, struct rsp_buf *err)
{
	struct rsp_sw_pair p = {0};
	struct tp tp[2];
	int ret;

	if (s->no_pairs) {
		rsp_buf__puts(err,
			      "stopwatch add: keyed pairs (--start/--end) need the kernel's "
			      "bpf_loop() helper (Linux 5.17 or later), which this kernel lacks; "
			      "time a function or a syscall instead");
		return -EOPNOTSUPP;
	}
	memset(tp, 0, sizeof(tp));
	ret = tp_open(r->start, "--start", &tp[0], err);
	if (!ret)
		ret = tp_open(r->end, "--end", &tp[1], err);
	if (!ret)
		ret = pair_fields(tp, r, &p, err);
	if (!ret && bpf_map_update_elem(bpf_map__fd(s->skel->maps.pairs), &i, &p, BPF_ANY))
		ret = -errno;
	if (!ret)
		ret = tp_use(s, 0, &tp[0], i, err);
	if (!ret)
		ret = tp_use(s, 1, &tp[1], i, err);
	if (ret)
		tp_unuse(s, i);
	if (!ret)
		snprintf(w->v.where, sizeof(w->v.where),
			 "%s -> %s by %s%s%s (offsets %u, %u in each record)", r->start, r->end,
			 r->key, r->where ? " where " : "", r->where ? r->where : "", p.off[0][0],
			 p.off[1][0]);
	tp_close(&tp[0]);
	tp_close(&tp[1]);
	return ret;
}

static int set_filter(struct rspd_stopwatches *s, unsigned i, const struct rsp_sw_request *r)
{
	struct rsp_sw_filter f = {.active = 1, .tgid = r->pid > 0 ? (__u32)r->pid : 0};

	if (r->callers) {
		f.callers = 1;
		f.callers_max = r->callers_max ? r->callers_max : RSP_SW_CALLERS_MAX;
	}

	if (r->comm)
		snprintf(f.comm, sizeof(f.comm), "%s", r->comm);
	return bpf_map_update_elem(bpf_map__fd(s->skel->maps.filters), &i, &f, BPF_ANY) ? -errno
											: 0;
}

static void describe_scope(struct sw *w, const struct rsp_sw_request *r)
{
	w->v.pid = r->pid > 0 ? r->pid : -1;
	if (r->comm) {
		w->v.by_comm = true;
		snprintf(w->v.comm, sizeof(w->v.comm), "%s", r->comm);
	} else if (r->pid > 0) {
		char p[64];
		FILE *f;

		snprintf(p, sizeof(p), "/proc/%ld/comm", r->pid);
		f = fopen(p, "re");
		if (f && fgets(w->v.comm, sizeof(w->v.comm), f))
			w->v.comm[strcspn(w->v.comm, "\n")] = '\0';
		if (f)
			fclose(f);
	}
}

static void remove_sw(struct rspd_stopwatches *s, struct sw *w)
{
	unsigned i = (unsigned)(w - s->sw);
	struct rsp_sw_filter off = {0};

	bpf_map_update_elem(bpf_map__fd(s->skel->maps.filters), &i, &off, BPF_ANY);
	__atomic_and_fetch(&s->skel->bss->callers_mask, ~(1ull << i), __ATOMIC_SEQ_CST);
	if (w->sys_nr >= 0)
		set_syscall_bit(s, w->sys_nr, i, false);
	tp_unuse(s, i);
	sw_free(w);
	clear_index(s, i);
}

static int check_add(struct rspd_stopwatches *s, const struct rsp_sw_request *r, char *name,
		     struct rsp_buf *err)
{
	if (count(s) >= s->max) {
		rsp_buf__printf(err,
				"stopwatch add: %u stopwatches are running, the most rspd's "
				"--stopwatch-max allows; remove one (rspctl stopwatch rm NAME) "
				"or raise stopwatch-max in rspd's configuration",
				s->max);
		return -ENOSPC;
	}
	if (r->name)
		snprintf(name, RSP_SW_NAME_LEN, "%s", r->name);
	else
		do
			snprintf(name, RSP_SW_NAME_LEN, "sw%u", ++s->next_id);
		while (find(s, name));
	if (find(s, name)) {
		rsp_buf__printf(err,
				"stopwatch add: a stopwatch named '%s' exists; give another "
				"--name or remove it first",
				name);
		return -EEXIST;
	}
	if (r->callers && r->callers_max > s->callers) {
		rsp_buf__printf(err,
				"stopwatch add: --callers-max %u is more than the %u caller stacks "
				"rspd keeps for all stopwatches; give at most %u or raise "
				"stopwatch-callers in rspd's configuration",
				r->callers_max, s->callers, s->callers);
		return -EINVAL;
	}
	if (r->pid > 0 && kill((pid_t)r->pid, 0) && errno == ESRCH) {
		rsp_buf__printf(err, "stopwatch add: no process %ld", r->pid);
		return -ESRCH;
	}
	return 0;
}

static int add(struct rspd_stopwatches *s, const struct rsp_sw_request *r, struct rsp_buf *out,
	       struct rsp_buf *err)
{
	struct rsp_sw_target t;
	char name[RSP_SW_NAME_LEN];
	unsigned i;
	struct sw *w;
	int ret;

	if (!r->start && rsp_sw_target__parse(r->spec, &t, err))
		return -EINVAL;
	ret = check_add(s, r, name, err);
	if (ret || (ret = load(s, err)))
		return ret;
	/*
	 * Round robin: a removed stopwatch's index is reused last, so that a
	 * program that was still running when it was removed has long finished.
	 */
	for (unsigned k = 0; k < RSP_SW_MAX; k++) {
		i = (s->next_slot + k) % RSP_SW_MAX;
		if (!s->sw[i].used)
			break;
	}
	s->next_slot = (i + 1) % RSP_SW_MAX;
	w = &s->sw[i];
	memset(w, 0, sizeof(*w));
	w->sys_nr = -1;
	w->secs = calloc(SECONDS_KEPT, sizeof(*w->secs));
	if (!w->secs) {
		rsp_buf__puts(err, "stopwatch add: rspd is out of memory");
		return -ENOMEM;
	}
	clear_index(s, i);
	__atomic_store_n(&s->skel->bss->callers_freed[i], 0, __ATOMIC_SEQ_CST);
	if (r->callers && !(w->folded = rsp_sw_callers__new(r->callers_max ? r->callers_max
									   : RSP_SW_CALLERS_MAX))) {
		free(w->secs);
		w->secs = NULL;
		rsp_buf__puts(err, "stopwatch add: rspd is out of memory");
		return -ENOMEM;
	}
	ret = set_filter(s, i, r);
	if (!ret)
		ret = r->start && rsp_sw__user_key(r->key) ? attach_user_pair(s, w, i, r, err)
		      : r->start			   ? attach_pair(s, w, i, r, err)
		      : t.kind == RSP_SW_SYSCALL	   ? attach_syscall(s, w, i, &t, err)
							   : attach_func(s, w, i, &t, r->pid, err);
	if (ret) {
		if (!err->len)
			rsp_buf__printf(err, "stopwatch add: %s", strerror(-ret));
		w->used = true;
		remove_sw(s, w);
		return ret;
	}
	w->used = true;
	snprintf(w->v.name, sizeof(w->v.name), "%s", name);
	if (r->start)
		snprintf(w->v.spec, sizeof(w->v.spec), "%s -> %s by %s", r->start, r->end, r->key);
	else
		snprintf(w->v.spec, sizeof(w->v.spec), "%s", r->spec);
	describe_scope(w, r);
	w->v.callers_on = r->callers;
	if (r->callers) /* sw_sys_exit: take the stack for this one */
		__atomic_or_fetch(&s->skel->bss->callers_mask, 1ull << i, __ATOMIC_SEQ_CST);
	w->v.callers_max = r->callers ? (r->callers_max ? r->callers_max : RSP_SW_CALLERS_MAX) : 0;
	w->v.added_ns = rspd_clock__now_ns();
	rspd_log__write(RSP_LOG_INFO, "stopwatch %s added: %s", name, w->v.where);
	if (r->json)
		rsp_buf__printf(out, "{\"added\": \"%s\"}\n", name);
	else if (w->v.callers_on)
		rsp_buf__printf(out, "stopwatch %s: %s; callers: up to %u stacks\n", name,
				w->v.where, w->v.callers_max);
	else
		rsp_buf__printf(out, "stopwatch %s: %s\n", name, w->v.where);
	return out->error;
}

/* @w's view now: the total since added, or its last @last_ns, plus the live slot. */
static void view_of(struct rspd_stopwatches *s, struct sw *w, uint64_t last_ns,
		    struct rsp_sw_view *v)
{
	unsigned i = (unsigned)(w - s->sw), secs;
	uint64_t now = rspd_clock__now_ns();

	*v = w->v;
	memset(&v->total, 0, sizeof(v->total));
	v->span_ns = now - w->v.added_ns;
	if (!last_ns) {
		v->total = w->total;
		v->since_added = true;
	} else {
		secs = (unsigned)((last_ns + 999999999ull) / 1000000000ull);
		if (secs > w->nsecs) {
			/* all its life, unless more has been forgotten */
			v->clipped = w->nsecs == SECONDS_KEPT;
			v->since_added = !v->clipped;
			secs = w->nsecs;
		} else {
			v->span_ns = last_ns;
		}
		for (unsigned k = 1; k <= secs; k++)
			rsp_sw_total__merge(&v->total,
					    &w->secs[(w->head + SECONDS_KEPT - k) % SECONDS_KEPT]);
	}
	read_slot(s, i * 2 + (s->skel->bss->epoch & 1), &v->total, false);
}

/* A row of the kernel's callers table, read for show --callers. */
struct raw_caller {
	size_t view; /* index in the views shown */
	uint32_t tgid;
	struct rsp_sw_caller_val val;
	uint64_t ips[RSP_SW_STACK_DEPTH];
};

/* The rows of the stopwatches shown (@slot[j]: view j's index), at most s->callers. */
static size_t read_callers(struct rspd_stopwatches *s, const unsigned *slot, struct rsp_sw_view *v,
			   size_t n, struct raw_caller *raw)
{
	int fd = bpf_map__fd(s->skel->maps.callers), sfd = bpf_map__fd(s->skel->maps.stacks);
	struct rsp_sw_caller_key k, *prev = NULL;
	size_t nraw = 0;

	while (nraw < s->callers && !bpf_map_get_next_key(fd, prev, &k)) {
		struct raw_caller *rc = &raw[nraw];
		size_t j;

		prev = &k;
		for (j = 0; j < n && slot[j] != k.sw; j++)
			;
		if (j == n || !v[j].callers_on || bpf_map_lookup_elem(fd, &k, &rc->val))
			continue;
		memset(rc->ips, 0, sizeof(rc->ips));
		if (bpf_map_lookup_elem(sfd, &k.stack, rc->ips)) {
			/* its stack was dropped by a stopwatch's removal: unknown caller */
			v[j].total.callers_lost += rc->val.count;
			continue;
		}
		rc->view = j;
		rc->tgid = k.tgid;
		nraw++;
	}
	return nraw;
}

/*
 * Name the frames of @rc with the live process model, at the time of its
 * first call (its process was alive then, even if it has exited since), and
 * add it to @c. Each frame is a return address (at the return, the first
 * is the caller's). Livemodel lock held: the names live until its release.
 */
static int add_caller(struct rsp_symbolizer *sym, const struct raw_caller *rc,
		      struct rsp_sw_callers *c)
{
	const char *names[RSP_SW_STACK_DEPTH], *objects[RSP_SW_STACK_DEPTH];
	char buf[RSP_SW_STACK_DEPTH][160];
	unsigned n = 0;

	for (; n < RSP_SW_STACK_DEPTH && rc->ips[n]; n++) {
		struct rsp_sym sy = {0};

		if (sym)
			rsp_symbolizer__resolve(sym, rc->tgid, rc->val.first, rc->ips[n],
						RSP_SYM_RETADDR, &sy);
		names[n] = rsp_sym__format(&sy, false, buf[n], sizeof(buf[n]));
		objects[n] = sy.object;
	}
	return rsp_sw_callers__add(c, names, objects, n, rc->val.count, rc->val.sum);
}

/*
 * --callers: the rows of processes that exited are symbolized (the model
 * keeps an exited process's maps for the time of its calls), folded into
 * their stopwatch's rows here, and deleted from the kernel's table, whose
 * --callers-max rows per stopwatch then hold live processes only. Without
 * this, a system-wide stopwatch's rows filled with short-lived processes
 * (every shell calls getppid at start) and a busy program that came later
 * was counted as overflow: 64 of 200,000 getppid calls were credited to
 * callers in bench/stopwatch.py on a machine running builds.
 *
 * A row is folded FOLD_AFTER_NS after its process was first found gone:
 * the model learns a process's mappings from the capture a moment after
 * they happen, and a stack symbolized before that would stay [unknown].
 * Each second, lock held.
 */
#define FOLD_AFTER_NS 2000000000ull

static bool gone_since(const struct rspd_stopwatches *s, const struct rsp_sw_caller_key *k,
		       uint64_t *since)
{
	for (size_t i = 0; i < s->ngone; i++)
		if (!memcmp(&s->gone[i].key, k, sizeof(*k))) {
			*since = s->gone[i].since_ns;
			return true;
		}
	return false;
}

/*
 * Fold one row of an exited process. -EAGAIN (the row stays, for a later
 * pass) when its stack needs the process model and a query holds it: the
 * poller never waits for a query (its epochs would stretch, and stopwatch
 * commands wait on its lock).
 */
static int fold_row(struct rspd_stopwatches *s, const struct rsp_sw_caller_key *k,
		    struct rsp_symbolizer **sym, bool *acquired)
{
	int fd = bpf_map__fd(s->skel->maps.callers), sfd = bpf_map__fd(s->skel->maps.stacks);
	struct sw *w = &s->sw[k->sw];
	struct raw_caller rc;
	bool stack, busy;

	if (bpf_map_lookup_elem(fd, k, &rc.val))
		return 0;
	memset(rc.ips, 0, sizeof(rc.ips));
	rc.tgid = k->tgid;
	stack = !bpf_map_lookup_elem(sfd, &k->stack, rc.ips);
	if (stack && !*acquired) {
		*sym = rspd_livemodel__acquire_nowait(s->d, &busy); /* NULL: [unknown] frames */
		if (busy)
			return -EAGAIN;
		*acquired = true;
	}
	/* deleted first: a row is never both folded and still counted in the kernel */
	if (bpf_map_delete_elem(fd, k))
		return 0;
	__atomic_add_fetch(&s->skel->bss->callers_freed[k->sw], 1, __ATOMIC_SEQ_CST);
	if (!stack || add_caller(*sym, &rc, w->folded))
		w->folded_lost += rc.val.count; /* its stack is gone, or out of memory */
	return 0;
}

static void fold_exited(struct rspd_stopwatches *s)
{
	struct rsp_sw_caller_key *keys, *prev = NULL;
	struct rsp_symbolizer *sym = NULL;
	struct gone_row *now_gone;
	uint64_t now = rspd_clock__now_ns(), since;
	size_t nkeys = 0, n = 0;
	bool acquired = false, folded = false;
	int fd;

	if (!s->skel || !s->skel->bss->callers_mask)
		return;
	fd = bpf_map__fd(s->skel->maps.callers);
	keys = calloc(s->callers, sizeof(*keys));
	now_gone = calloc(s->callers, sizeof(*now_gone));
	if (!keys || !now_gone) { /* out of memory: the rows stay, bounded by --callers-max */
		free(keys);
		free(now_gone);
		return;
	}
	/* the keys first: deleting inside the walk would restart it */
	while (nkeys < s->callers && !bpf_map_get_next_key(fd, prev, &keys[nkeys])) {
		prev = &keys[nkeys];
		nkeys++;
	}
	for (size_t i = 0; i < nkeys; i++) {
		const struct rsp_sw_caller_key *k = &keys[i];

		if (k->sw >= RSP_SW_MAX || !s->sw[k->sw].used || !s->sw[k->sw].folded ||
		    !kill((pid_t)k->tgid, 0) || errno != ESRCH)
			continue;
		if (!gone_since(s, k, &since))
			since = now;
		if (now - since < FOLD_AFTER_NS) { /* folded at a later pass */
			now_gone[n].key = *k;
			now_gone[n++].since_ns = since;
			continue;
		}
		if (fold_row(s, k, &sym, &acquired) == -EAGAIN) { /* a query holds the model */
			now_gone[n].key = *k;
			now_gone[n++].since_ns = since;
			continue;
		}
		folded = true;
	}
	if (sym)
		rspd_livemodel__release(s->d);
	if (folded)
		drop_unused_stacks(s);
	free(keys);
	free(s->gone);
	s->gone = now_gone;
	s->ngone = n;
}

/* show --callers: each view's callers (a new object in @cs[j]) from the kernel's tables. */
static int show_callers(struct rspd_stopwatches *s, const unsigned *slot, struct rsp_sw_view *v,
			size_t n, unsigned top, struct rsp_sw_callers **cs)
{
	struct raw_caller *raw = calloc(s->callers, sizeof(*raw));
	struct rsp_symbolizer *sym;
	size_t nraw;

	for (size_t j = 0; j < n; j++) {
		cs[j] = rsp_sw_callers__new(s->callers);
		if (!cs[j]) {
			free(raw);
			return -ENOMEM;
		}
		v[j].callers = cs[j];
		v[j].callers_top = top ? top : RSP_SW_CALLERS_TOP;
	}
	if (!raw)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++) { /* the rows of exited processes, folded */
		const struct sw *w = &s->sw[slot[j]];

		for (size_t i = 0; w->folded && i < rsp_sw_callers__rows(w->folded); i++) {
			const struct rsp_sw_caller_row *row = rsp_sw_callers__row(w->folded, i);

			rsp_sw_callers__add(cs[j], row->names, row->objects, row->nframes,
					    row->count, row->sum);
		}
		if (w->folded) {
			v[j].total.callers_lost += w->folded_lost;
			v[j].total.callers_overflow += rsp_sw_callers__dropped(w->folded);
		}
	}
	nraw = read_callers(s, slot, v, n, raw);
	sym = rspd_livemodel__acquire(s->d); /* NULL: no model, every frame [unknown] */
	for (size_t i = 0; i < nraw; i++)
		add_caller(sym, &raw[i], cs[raw[i].view]);
	if (sym)
		rspd_livemodel__release(s->d);
	for (size_t j = 0; j < n; j++)
		rsp_sw_callers__sort(cs[j]);
	free(raw);
	return 0;
}

static int list_or_show(struct rspd_stopwatches *s, const struct rsp_sw_request *r,
			struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_sw_view *v = calloc(RSP_SW_MAX, sizeof(*v));
	struct rsp_sw_callers *cs[RSP_SW_MAX] = {0};
	unsigned slot[RSP_SW_MAX];
	size_t n = 0;
	int ret = 0;

	if (!v) {
		rsp_buf__puts(err, "stopwatch: rspd is out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < RSP_SW_MAX; i++) {
		struct sw *w = &s->sw[i];

		if (!w->used || (r->op == RSP_SW_SHOW && r->name && strcmp(r->name, w->v.name)))
			continue;
		slot[n] = (unsigned)i;
		view_of(s, w, r->op == RSP_SW_SHOW ? r->last_ns : 0, &v[n++]);
	}
	if (r->op == RSP_SW_SHOW && r->name && !n) {
		rsp_buf__printf(err,
				"stopwatch show: no stopwatch named '%s' (rspctl stopwatch list)",
				r->name);
		free(v);
		return -ENOENT;
	}
	if (r->op == RSP_SW_SHOW && r->callers &&
	    (ret = show_callers(s, slot, v, n, r->top, cs)) < 0)
		rsp_buf__puts(err, "stopwatch show: rspd is out of memory reading the callers");
	if (!ret)
		ret = r->op == RSP_SW_LIST ? rsp_sw__render_list(v, n, s->max, r->json, out)
					   : rsp_sw__render_show(v, n, r->json, out);
	for (size_t j = 0; j < n; j++)
		rsp_sw_callers__delete(cs[j]);
	free(v);
	return ret;
}

static int rm(struct rspd_stopwatches *s, const struct rsp_sw_request *r, struct rsp_buf *out,
	      struct rsp_buf *err)
{
	struct sw *w = find(s, r->name);

	if (!w) {
		rsp_buf__printf(err,
				"stopwatch rm: no stopwatch named '%s' (rspctl stopwatch list)",
				r->name);
		return -ENOENT;
	}
	remove_sw(s, w);
	rspd_log__write(RSP_LOG_INFO, "stopwatch %s removed", r->name);
	if (r->json)
		rsp_buf__printf(out, "{\"removed\": \"%s\"}\n", r->name);
	else
		rsp_buf__printf(out, "stopwatch %s removed\n", r->name);
	return out->error;
}

int rspd_stopwatches__request(struct rspd_stopwatches *s, const struct rsp_sw_request *r,
			      bool admin, struct rsp_buf *out, struct rsp_buf *err)
{
	int ret;

	if (!admin) {
		rsp_buf__puts(err, "stopwatch: only root and members of rspd's admin group may use "
				   "stopwatches: a probe times every process's calls");
		return -EACCES;
	}
	pthread_mutex_lock(&s->lock);
	switch (r->op) {
	case RSP_SW_ADD:
		ret = add(s, r, out, err);
		break;
	case RSP_SW_RM:
		ret = rm(s, r, out, err);
		break;
	default:
		if (!s->skel && r->op == RSP_SW_SHOW && r->name) {
			rsp_buf__printf(err, "stopwatch show: no stopwatch named '%s'", r->name);
			ret = -ENOENT;
		} else if (!s->skel) {
			ret = r->op == RSP_SW_LIST
				      ? rsp_sw__render_list(NULL, 0, s->max, r->json, out)
				      : rsp_sw__render_show(NULL, 0, r->json, out);
		} else {
			ret = list_or_show(s, r, out, err);
		}
		break;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}
