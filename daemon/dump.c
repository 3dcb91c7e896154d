// SPDX-License-Identifier: GPL-2.0
/*
 * The dump thread and the writing of one dump.
 *
 * A dump pins the window's chunks of its range and writes them while the
 * capture loop keeps appending (pinned chunks that get evicted are freed
 * when the dump unpins them). It runs on its own thread so that neither
 * the capture loop (SIGUSR1) nor the control socket (`rspctl dump`) waits
 * for the disk: a query thread queues the request and is free again, the
 * I/O thread keeps serving other clients and answers when the dump thread
 * reports back through a pipe (server.c).
 *
 * A file is written whole or not at all: a temp file (mode 0600) in the
 * target directory, fsynced, renamed, the directory fsynced. On any error
 * the temp file is removed and the error is logged and answered; rspd goes
 * on capturing.
 *
 * A killed rspd leaves its temp file (".NAME.rsp-tmp.XXXXXX", rsp/file.h),
 * so rspd finds them again: in the dump directory at start; next to a -o
 * FILE at the next dump to that directory, and at start through a note in
 * the dump directory (PENDING_NOTE: who wrote where) kept while a -o dump
 * is being written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <jansson.h>
#include <rsp/file.h>
#include <rsp/maps.h>
#include <rsp/perfdata.h>
#include <rsp/symbols.h>
#include "clock.h"
#include "dump.h"
#include "dumpmeta.h"
#include "dumpprocs.h"
#include "livemodel.h"
#include "log.h"
#include "netns.h"
#include "rspd.h"
#include "syscalls.h"
#include "trigger.h"
#ifdef RSP_HAVE_BPF
#include "bpfcap.h"
#endif

#define MAX_QUEUED   4
#define DUMP_PREFIX  "rsp-"
#define DUMP_SUFFIX  ".perf.data"
#define PENDING_NOTE ".rsp-output-pending"

struct rspd_dump_job {
	struct rspd_dump_job *next;
	char output[PATH_MAX];
	bool has_output;
	uint64_t last_ns;
	bool json;
	int netns_pid;
	bool has_owner;
	struct rspd_dump_owner owner;
	int client;
	uint32_t gen;
	int status;
	struct rsp_buf answer;
	bool has_trigger; /* a trigger's dump: its metadata, and the trigger told */
	struct rspd_dump_trigger trigger;
};

struct rspd_dumper {
	struct rspd *d;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rspd_dump_job *queue, *done;
	unsigned queued;
	bool stop;
	int pipe[2];
	struct rspd_dump_config cfg; /* a copy: SIGHUP changes d->cfg meanwhile */
};

/* --- one dump ------------------------------------------------------------------ */

static void fmt_size(char *buf, size_t n, uint64_t bytes)
{
	if (bytes >= (1u << 20))
		snprintf(buf, n, "%.1f MiB", (double)bytes / (1u << 20));
	else
		snprintf(buf, n, "%.1f KiB", (double)bytes / 1024);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* mkdir -p; the last component 0700 (dumps hold other users' command lines). */
static int ensure_dir(const char *dir)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* What retention may remove: the files rspd names (rspd_dump__name()). */
static const char *const suffixes[] = {DUMP_SUFFIX, ".snapshot.txt", ".snapshot.json"};

int rspd_dump__name(const struct rspd *d, const char *dir, const char *suffix, char *path, size_t n)
{
	char host[64], stamp[40];
	struct timespec ts;
	struct tm tm;

	snprintf(host, sizeof(host), "%.63s", d->meta.hostname[0] ? d->meta.hostname : "host");
	for (char *c = host; *c; c++)
		if (*c == '/' || *c == ' ')
			*c = '_';
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	for (int k = 0; k < 1000; k++) {
		int len = snprintf(path, n, "%s/" DUMP_PREFIX "%s-%s.%03ldZ%s%.0d%s", dir, host,
				   stamp, ts.tv_nsec / 1000000, k ? "-" : "", k, suffix);

		if (len < 0 || (size_t)len >= n)
			return -ENAMETOOLONG;
		if (access(path, F_OK))
			return 0;
	}
	return -EEXIST;
}

struct dump_result {
	struct rsp_pd_stats st;
	struct rspd_dumpprocs_stats ps;
	uint64_t from, to;
	double ms;
	/* --netns: the namespace's threads (NULL: every record) */
	struct rsp_tidfilter *filter;
	uint64_t netns;
	uint32_t netns_threads;
	const struct rspd_dump_trigger *trigger; /* NULL: not a trigger's dump */
};

/*
 * The socket table rspd read from /proc/net at start (read-only since), for
 * rspctl merge: sockets older than rspd whose 4-tuple no record of the
 * window may repeat. Freed by the caller.
 */
static int dump_sockets(const struct rspd *d, struct rsp_perfdata_meta *meta)
{
	struct rsp_sock_info si, *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; !rsp_socktab__version(d->socks, i, &si, NULL); i++) {
		if (n == cap) {
			struct rsp_sock_info *nv;

			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = si;
	}
	meta->sockets = v;
	meta->nr_sockets = n;
	return 0;
}

/*
 * RSP_PD_FEAT_RSP_CGROUPS: each process's cgroup and namespaced pid as the
 * live model knows them, for the processes alive at some time in [from,
 * to] (the written records' span), each with a time it was alive then.
 */
struct cg_dump {
	struct rsp_pdwriter *w;
	uint64_t from, to;
};

static int dump_cgroup(uint32_t pid, uint64_t t_birth, uint64_t t_exit, const char *cgroup,
		       uint32_t nspid, void *ctx)
{
	struct cg_dump *c = ctx;
	uint64_t t = t_exit == UINT64_MAX ? c->to : t_exit - 1;

	if (t_birth > c->to || (t_exit != UINT64_MAX && t_exit < c->from))
		return 0;
	if (t < t_birth)
		t = t_birth;
	/* the model holds what /proc gave (< PATH_MAX); a longer one is unknown */
	return rsp_pdwriter__rsp_cgroup(c->w, pid, nspid, t, strlen(cgroup) < 4096 ? cgroup : "");
}

static int dump_cgroups(struct rspd *d, struct rsp_pdwriter *w, uint64_t from, uint64_t to)
{
	struct cg_dump c = {w, from, to};
	struct rsp_symbolizer *sym = rspd_livemodel__acquire(d);
	int err;

	if (!sym)
		return 0; /* no live model: the file says nothing of cgroups */
	err = rsp_maps__each_cgroup(rsp_symbolizer__maps(sym), dump_cgroup, &c);
	rspd_livemodel__release(d);
	return err;
}

#ifdef RSP_HAVE_BPF
static int add_pending(void *ctx, unsigned cpu, const void *data, size_t size)
{
	(void)cpu;
	(void)size;
	return rsp_pdwriter__pending(ctx, data);
}
#endif

/*
 * BPF backend: what still waits in the programs' maps for the record that
 * will carry it (a waking of a thread that has not run since, a request in
 * flight), written with the window's records: the dump's last moments as
 * the tracepoints would have shown them.
 */
static int pending(struct rspd *d, struct rsp_pdwriter *w, uint64_t to)
{
#ifdef RSP_HAVE_BPF
	int n;

	if (!d->es.bpf)
		return 0;
	n = rsp_bpfcap__pending(d->es.bpf, to, add_pending, w);
	if (n == -ENOMEM)
		return n;
	if (n < 0) /* /proc unreadable: the dump is right, only less complete at its end */
		rspd_log__write(RSP_LOG_WARN,
				"dump: the wakings still pending in the kernel could not be read "
				"(%s); the dump's last moments may lack some",
				strerror(-n));
	return 0;
#else
	(void)d;
	(void)w;
	(void)to;
	return 0;
#endif
}

/* The records: process model, then the window's [from, to]. */
static int write_records(struct rspd *d, int fd, uint64_t from, uint64_t to, struct dump_result *r,
			 struct rsp_buf *why)
{
	struct rsp_perfdata_meta meta;
	struct rsp_pd_trigger trig;
	struct rsp_pdwriter *w;
	int err;

	char host[320];

	rspd_dumpmeta__describe(&d->meta, &meta);
	meta.ksyms = d->ksyms; /* loaded at start, read-only: shared safely */
	if (r->trigger) {      /* what tripped, for rspctl analyze DUMP status */
		trig = (struct rsp_pd_trigger){r->trigger->name, r->trigger->cond,
					       r->trigger->value, r->trigger->trip_ns,
					       r->trigger->post_ns};
		meta.trigger = &trig;
	}
	err = r->filter ? 0 : dump_sockets(d, &meta);
	if (err)
		return err;
	if (r->filter) {
		/*
		 * One namespace stands for a host of its own: rspctl merge tells
		 * hosts apart by name (the boot id is the machine's). The socket
		 * table rspd read at start is its own namespace's: left out.
		 */
		snprintf(host, sizeof(host), "%s/netns:%llu", meta.hostname ? meta.hostname : "",
			 (unsigned long long)r->netns);
		meta.hostname = host;
	}
	w = rsp_pdwriter__new(fd, d->es.schema, &meta, why);
	free((void *)meta.sockets);
	if (!w)
		return -errno;
	rsp_pdwriter__filter(w, r->filter);
	err = rspd_dumpprocs__write(w, &d->meta, &r->ps);
	if (!err)
		err = pending(d, w, rspd_clock__now_ns());
	if (!err)
		err = rsp_pdwriter__window(w, d->window, from, to);
	if (!err) {
		rsp_pdwriter__stats(w, &r->st);
		if (r->st.records)
			err = rspd_syscalls__dump(d, w, r->st.first_time, r->st.last_time);
		if (!err && r->st.records)
			err = dump_cgroups(d, w, r->st.first_time, r->st.last_time);
	}
	if (!err)
		err = rsp_pdwriter__finish(w);
	rsp_pdwriter__stats(w, &r->st);
	rsp_pdwriter__delete(w);
	return err;
}

/*
 * The owner's file-system identity, on this thread only: setfsuid() and
 * setfsgid() change the calling thread's credentials, and so does the raw
 * setgroups system call (glibc's setgroups() would change every thread's).
 * With a non-zero fsuid the kernel also drops the thread's file-system
 * capabilities, so permissions are checked as for the owner.
 */
struct ident {
	bool changed;
	int nr_groups;
	gid_t groups[256];
};

static int become(const struct rspd_dump_owner *o, struct ident *sv)
{
	sv->changed = false;
	if (!o || !o->uid)
		return 0;
	sv->nr_groups = getgroups(256, sv->groups);
	if (sv->nr_groups < 0 || syscall(SYS_setgroups, 0, NULL))
		return -EPERM;
	sv->changed = true;
	setfsgid(o->gid);
	setfsuid(o->uid);
	if ((uid_t)setfsuid((uid_t)-1) != o->uid || (gid_t)setfsgid((gid_t)-1) != o->gid)
		return -EPERM;
	return 0;
}

static void restore(struct ident *sv)
{
	if (!sv->changed)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	if (syscall(SYS_setgroups, sv->nr_groups, sv->groups))
		rspd_log__errno(RSP_LOG_ERR, "dump: cannot restore the dump thread's groups");
	sv->changed = false;
}

/*
 * Temp file, records, fsync, rename (rsp/file.h: only a new file or a
 * regular one is ever replaced). On failure nothing is left behind.
 */
static int write_file(struct rspd *d, const char *path, unsigned flags, uint64_t from, uint64_t to,
		      struct dump_result *r, struct rsp_buf *why)
{
	struct rsp_outfile f;
	int err = rsp_outfile__open(&f, path, flags, why);

	if (err)
		return err;
	err = write_records(d, f.fd, from, to, r, why);
	if (err) {
		rsp_outfile__abort(&f);
		if (!why->len)
			rsp_buf__printf(why, "writing %s: %s", path, strerror(-err));
		return err;
	}
	return rsp_outfile__commit(&f, why);
}

/* --- retention ----------------------------------------------------------------- */

struct kept {
	char name[256];
	time_t mtime;
	uint64_t size;
};

static int cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1; /* newest first */
	return strcmp(y->name, x->name);
}

static bool is_dump_name(const char *n)
{
	size_t len = strlen(n);

	if (strncmp(n, DUMP_PREFIX, strlen(DUMP_PREFIX)))
		return false;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i]);

		if (len > sl && !strcmp(n + len - sl, suffixes[i]))
			return true;
	}
	return false;
}

static int list_dumps(const char *dir, struct kept **out, size_t *nr)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	size_t cap = 0;

	*out = NULL;
	*nr = 0;
	if (!dh)
		return -errno;
	while ((de = readdir(dh))) {
		char p[PATH_MAX + 256];
		struct stat st;

		if (!is_dump_name(de->d_name) || strlen(de->d_name) >= sizeof((*out)->name))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue; /* only rspd's own dumps are ever removed */
		if (*nr == cap) {
			struct kept *k = realloc(*out, (cap ? 2 * cap : 32) * sizeof(*k));

			if (!k)
				break;
			*out = k;
			cap = cap ? 2 * cap : 32;
		}
		snprintf((*out)[*nr].name, sizeof((*out)[*nr].name), "%s", de->d_name);
		(*out)[*nr].mtime = st.st_mtime;
		(*out)[*nr].size = (uint64_t)st.st_size;
		(*nr)++;
	}
	closedir(dh);
	qsort(*out, *nr, sizeof(**out), cmp_kept);
	return 0;
}

/*
 * One temp file of a dump: a dump being written holds its flock (rsp/file.h),
 * one whose writer was killed does not. 1: removed; 0: in progress (its
 * size added to @busy); -1: not ours to touch.
 */
static int stale_temp(int dfd, const char *dir, const char *name, uid_t uid, uint64_t *busy)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), ret = -1;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid)
		goto out;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		*busy += (uint64_t)st.st_size;
		ret = 0;
		goto out;
	}
	if (unlinkat(dfd, name, 0)) {
		rspd_log__errno(RSP_LOG_WARN,
				"dump: cannot remove %s/%s, left by a dump that "
				"did not finish",
				dir, name);
		goto out;
	}
	rspd_log__write(RSP_LOG_INFO,
			"dump: removed %s/%s (%llu bytes), left by a dump that did not finish", dir,
			name, (unsigned long long)st.st_size);
	ret = 1;
out:
	close(fd);
	return ret;
}

/*
 * Remove what killed dumps left in @dir (temp names of targets @is_target
 * accepts, NULL: any; regular files of @uid that no writer holds); the
 * bytes of dumps still being written, which retention counts.
 */
static uint64_t clean_temps(const char *dir, bool (*is_target)(const char *), uid_t uid)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	uint64_t busy = 0;

	if (!dh) {
		if (errno != ENOENT)
			rspd_log__errno(RSP_LOG_WARN, "dump: cannot read the dump directory %s",
					dir);
		return 0;
	}
	while ((de = readdir(dh)))
		if (rsp_file__is_temp(de->d_name, is_target))
			stale_temp(dirfd(dh), dir, de->d_name, uid, &busy);
	closedir(dh);
	return busy;
}

/* --- -o FILE: its temp file found again --------------------------------------- */

static uid_t owner_uid(const struct rspd_dump_owner *o)
{
	return o && o->uid ? (uid_t)o->uid : geteuid();
}

static void note_path(const struct rspd_dump_config *c, char path[PATH_MAX + 32])
{
	snprintf(path, PATH_MAX + 32, "%s/" PENDING_NOTE, c->dir);
}

/*
 * While a -o dump is written, a note in the dump directory says who writes
 * where ("UID GID\nDIR\n"), so that the next rspd can clean DIR if this one
 * is killed meanwhile. Best effort: without it, the next dump to DIR cleans.
 */
static void note_pending(const struct rspd_dump_config *c, const struct rspd_dump_owner *o,
			 const char *dir)
{
	struct rsp_buf note = RSP_BUF_INIT, err = RSP_BUF_INIT;
	char path[PATH_MAX + 32];

	note_path(c, path);
	if (ensure_dir(c->dir) ||
	    rsp_buf__printf(&note, "%u %u\n%s\n", (unsigned)owner_uid(o),
			    o && o->uid ? (unsigned)o->gid : (unsigned)getegid(), dir) ||
	    rsp_file__write(path, note.data, note.len, 0, &err))
		rspd_log__write(RSP_LOG_DEBUG, "dump: no note of the -o dump in %s: %s", c->dir,
				err.data ? err.data : "out of memory");
	rsp_buf__exit(&note);
	rsp_buf__exit(&err);
}

static void clear_pending(const struct rspd_dump_config *c)
{
	char path[PATH_MAX + 32];

	note_path(c, path);
	unlink(path);
}

/* At start: the temp files of a -o dump that a killed rspd was writing. */
static void clean_pending(const struct rspd_dump_config *c)
{
	struct rspd_dump_owner o;
	char path[PATH_MAX + 32], text[PATH_MAX + 64], dir[PATH_MAX];
	struct rsp_buf err = RSP_BUF_INIT;
	struct ident id = {0};
	ssize_t n;
	int fd;

	note_path(c, path);
	fd = rsp_file__open_regular(path, &err);
	rsp_buf__exit(&err);
	if (fd < 0)
		return;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (sscanf(text, "%u %u\n%4095[^\n]", &o.uid, &o.gid, dir) == 3 && dir[0] == '/' &&
	    !become(&o, &id))
		clean_temps(dir, NULL, owner_uid(&o));
	restore(&id);
	clear_pending(c);
}

/* The directory of the -o FILE @path (absolute: rspctl made it so). */
static void dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');

	snprintf(dir, n, "%.*s", slash && slash != path ? (int)(slash - path) : 1,
		 slash ? path : "/");
}

/*
 * Remove the oldest dumps beyond the limits; the newest one always stays.
 * Dumps still being written (by another rspd on the same directory) count
 * towards --dump-max-bytes.
 */
static void retain(const struct rspd_dump_config *c, const char *newest, json_t *removed,
		   struct rsp_buf *text)
{
	struct kept *k;
	size_t n;
	uint64_t total = clean_temps(c->dir, is_dump_name, geteuid());

	if (list_dumps(c->dir, &k, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX + 256];
		bool keep = !strcmp(k[i].name, newest) ||
			    (i < c->keep && total + k[i].size <= c->max_bytes);

		if (keep) {
			total += k[i].size;
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", c->dir, k[i].name);
		if (unlink(p)) {
			rspd_log__errno(RSP_LOG_WARN, "dump retention: cannot remove %s", p);
			continue;
		}
		rspd_log__write(RSP_LOG_INFO, "dump retention: removed %s", p);
		json_array_append_new(removed, json_string(p));
		rsp_buf__printf(text, "removed %s (retention)\n", p);
	}
	free(k);
}

void rspd_dump__retain(struct rspd *d, const char *newest)
{
	struct rspd_dumper *dm = d->dumper;
	struct rsp_buf text = RSP_BUF_INIT;
	struct rspd_dump_config c;
	json_t *removed = json_array();

	if (!dm)
		return;
	pthread_mutex_lock(&dm->lock);
	c = dm->cfg;
	pthread_mutex_unlock(&dm->lock);
	retain(&c, newest, removed, &text);
	json_decref(removed);
	rsp_buf__exit(&text);
}

/* --- the answer ---------------------------------------------------------------- */

/* --netns: which namespace, how many of its threads, what was left out. */
static json_t *netns_json(const struct dump_result *r)
{
	struct rsp_tidfilter_stats fs;

	rsp_tidfilter__stats(r->filter, &fs);
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "inode", (json_int_t)r->netns,
			 "threads_alive", (json_int_t)r->netns_threads, "threads_inherited",
			 (json_int_t)fs.inherited, "sockets", (json_int_t)fs.sockets,
			 "records_left_out", (json_int_t)fs.left_out);
}

static void netns_text(struct rsp_buf *out, const struct dump_result *r)
{
	struct rsp_tidfilter_stats fs;

	rsp_tidfilter__stats(r->filter, &fs);
	rsp_buf__printf(out,
			"  network namespace %llu only: %u threads alive, %u forked by them, "
			"%u sockets;\n  %llu records of other threads left out\n",
			(unsigned long long)r->netns, r->netns_threads, fs.inherited, fs.sockets,
			(unsigned long long)fs.left_out);
}

static void answer(struct rsp_buf *out, bool json, const char *path, const struct dump_result *r,
		   json_t *removed, const char *removed_text)
{
	char size[32];

	if (json) {
		json_t *o = json_pack(
			"{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "path",
			path, "bytes", (json_int_t)r->st.bytes, "records",
			(json_int_t)r->st.records, "process_records",
			(json_int_t)r->st.process_records, "lost_records",
			(json_int_t)r->st.lost_records, "processes", (json_int_t)r->ps.processes,
			"build_ids", (json_int_t)r->ps.build_ids, "kernel_symbols",
			(json_int_t)r->st.kernel_symbols, "first_s", (double)r->st.first_time / 1e9,
			"last_s", (double)r->st.last_time / 1e9, "span_s",
			r->st.last_time > r->st.first_time
				? (double)(r->st.last_time - r->st.first_time) / 1e9
				: 0.0,
			"write_s", r->ms / 1e3);
		char *s;

		json_object_set(o, "removed", removed);
		if (r->filter)
			json_object_set_new(o, "netns", netns_json(r));
		s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
		if (s) {
			rsp_buf__puts(out, s);
			rsp_buf__puts(out, "\n");
		}
		free(s);
		json_decref(o);
		return;
	}
	fmt_size(size, sizeof(size), r->st.bytes);
	rsp_buf__printf(out, "wrote %s\n", path);
	rsp_buf__printf(out, "  %s, %llu records over %.3f s, %llu processes, in %.0f ms\n", size,
			(unsigned long long)r->st.records,
			r->st.last_time > r->st.first_time
				? (double)(r->st.last_time - r->st.first_time) / 1e9
				: 0.0,
			(unsigned long long)r->ps.processes, r->ms);
	rsp_buf__printf(out, "  %llu kernel symbols, %llu build ids\n",
			(unsigned long long)r->st.kernel_symbols,
			(unsigned long long)r->ps.build_ids);
	if (r->filter)
		netns_text(out, r);
	rsp_buf__puts(out, removed_text);
}

int rspd_dump__write(struct rspd *d, const struct rspd_dump_config *c,
		     const struct rsp_dump_spec *spec, const struct rspd_dump_owner *owner,
		     const struct rspd_dump_trigger *trig, struct rsp_buf *out)
{
	struct ident id = {0};
	struct dump_result r = {0};
	struct rsp_buf why = RSP_BUF_INIT, rm_text = RSP_BUF_INIT;
	char path[PATH_MAX];
	struct timespec t0;
	json_t *removed = json_array();
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r.trigger = trig;
	if (spec->netns_pid) {
		/* Before become(): reading other users' /proc/TID/ns needs rspd's rights. */
		r.filter = rsp_tidfilter__new(d->es.schema);
		if (!r.filter)
			return rsp_buf__printf(out, "dump failed: out of memory"), -ENOMEM;
		err = rspd_netns__threads(spec->netns_pid, r.filter, &r.netns, &r.netns_threads,
					  &why);
		if (err) {
			rsp_buf__printf(out, "dump failed: %s", why.data);
			rsp_tidfilter__delete(r.filter);
			rsp_buf__exit(&why);
			json_decref(removed);
			return err;
		}
	}
	r.to = UINT64_MAX;
	r.from = spec->last_ns && rspd_clock__now_ns() > spec->last_ns
			 ? rspd_clock__now_ns() - spec->last_ns
			 : 0;
	if (spec->output) {
		char dir[PATH_MAX];

		snprintf(path, sizeof(path), "%s", spec->output);
		dir_of(path, dir, sizeof(dir));
		note_pending(c, owner, dir);
		err = become(owner, &id);
		if (err)
			rsp_buf__printf(&why, "cannot take the file permissions of uid %u",
					owner ? (unsigned)owner->uid : 0u);
		else
			clean_temps(dir, NULL, owner_uid(owner)); /* what a killed dump left */
	} else {
		err = ensure_dir(c->dir);
		if (err)
			rsp_buf__printf(&why, "cannot create the dump directory %s: %s", c->dir,
					strerror(-err));
		else if ((err = rspd_dump__name(d, c->dir, DUMP_SUFFIX, path, sizeof(path))))
			rsp_buf__printf(&why, "no file name for a dump in %s: %s", c->dir,
					strerror(-err));
	}
	if (!err)
		err = write_file(d, path, spec->output ? 0 : RSP_FILE_NOREPLACE, r.from, r.to, &r,
				 &why);
	restore(&id);
	if (spec->output)
		clear_pending(c);
	r.ms = ms_since(&t0);
	if (err) {
		/* -EEXIST: the path's own sentence says what to do. */
		rsp_buf__printf(out,
				"dump failed: %s — the dump was not written (rspd keeps "
				"capturing)%s",
				why.data ? why.data : strerror(-err),
				err == -EEXIST ? ""
					       : "; free space or choose another dump-dir or -o");
		if (!trig) /* a trigger logs its own failures, once (trigger.c) */
			rspd_log__write(RSP_LOG_ERR, "%s", out->data);
	} else {
		if (!spec->output)
			retain(c, strrchr(path, '/') + 1, removed, &rm_text);
		answer(out, spec->json, path, &r, removed, rm_text.data ? rm_text.data : "");
		rspd_log__write(
			RSP_LOG_INFO, "dump: wrote %s (%llu records, %llu bytes) in %.0f ms", path,
			(unsigned long long)r.st.records, (unsigned long long)r.st.bytes, r.ms);
	}
	json_decref(removed);
	rsp_tidfilter__delete(r.filter);
	rsp_buf__exit(&why);
	rsp_buf__exit(&rm_text);
	return err;
}

/* --- the thread ---------------------------------------------------------------- */

static void job_run(struct rspd_dumper *dm, struct rspd_dump_job *j)
{
	struct rsp_dump_spec spec = {
		.output = j->has_output ? j->output : NULL,
		.last_ns = j->last_ns,
		.json = j->json,
		.netns_pid = j->netns_pid,
	};
	struct rspd_dump_config c;

	pthread_mutex_lock(&dm->lock);
	c = dm->cfg;
	pthread_mutex_unlock(&dm->lock);
	j->status = rspd_dump__write(dm->d, &c, &spec, j->has_owner ? &j->owner : NULL,
				     j->has_trigger ? &j->trigger : NULL, &j->answer);
	if (j->has_trigger) /* the answer's first line: "wrote PATH", or why not */
		rspd_triggers__dumped(dm->d, &j->trigger, j->status,
				      j->status ? NULL : strchr(j->answer.data, '/'),
				      j->answer.data ? j->answer.data : "");
}

static void *dumper_main(void *arg)
{
	struct rspd_dumper *dm = arg;
	/* asked for, as queries are: its CPU time is not capture's (the overhead budget) */
	int slot = rspd_budget__asked(dm->d, -1, true);

	pthread_setname_np(pthread_self(), "rspd-dump");

	pthread_mutex_lock(&dm->lock);
	for (;;) {
		struct rspd_dump_job *j;

		while (!dm->queue && !dm->stop)
			pthread_cond_wait(&dm->cond, &dm->lock);
		j = dm->queue;
		if (!j)
			break; /* stopping, nothing queued */
		dm->queue = j->next;
		pthread_mutex_unlock(&dm->lock);
		job_run(dm, j);
		pthread_mutex_lock(&dm->lock);
		dm->queued--;
		if (j->client < 0) {
			rspd_dump_job__free(j);
			continue;
		}
		j->next = dm->done;
		dm->done = j;
		if (write(dm->pipe[1], "d", 1) < 0 && errno != EAGAIN)
			rspd_log__errno(RSP_LOG_WARN, "dump: waking the control thread");
	}
	pthread_mutex_unlock(&dm->lock);
	rspd_budget__asked(dm->d, slot, false);
	return NULL;
}

int rspd_dumper__start(struct rspd *d, char *err, size_t errlen)
{
	struct rspd_dumper *dm = calloc(1, sizeof(*dm));
	int ret;

	if (!dm) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	dm->d = d;
	pthread_mutex_init(&dm->lock, NULL);
	pthread_cond_init(&dm->cond, NULL);
	if (pipe2(dm->pipe, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		free(dm);
		return ret;
	}
	ret = pthread_create(&dm->thread, NULL, dumper_main, dm);
	if (ret) {
		snprintf(err, errlen, "cannot start the dump thread: %s", strerror(ret));
		close(dm->pipe[0]);
		close(dm->pipe[1]);
		free(dm);
		return -ret;
	}
	d->dumper = dm;
	rspd_dumper__configure(d);
	clean_temps(d->cfg.dump.dir, is_dump_name, geteuid()); /* what a killed rspd's dump left */
	clean_pending(&d->cfg.dump);
	return 0;
}

void rspd_dumper__configure(struct rspd *d)
{
	struct rspd_dumper *dm = d->dumper;

	if (!dm)
		return;
	pthread_mutex_lock(&dm->lock);
	dm->cfg = d->cfg.dump;
	pthread_mutex_unlock(&dm->lock);
}

void rspd_dumper__stop(struct rspd *d)
{
	struct rspd_dumper *dm = d->dumper;

	if (!dm)
		return;
	pthread_mutex_lock(&dm->lock);
	dm->stop = true;
	pthread_cond_signal(&dm->cond);
	pthread_mutex_unlock(&dm->lock);
	pthread_join(dm->thread, NULL);
	while (dm->done) {
		struct rspd_dump_job *j = dm->done;

		dm->done = j->next;
		rspd_dump_job__free(j);
	}
	close(dm->pipe[0]);
	close(dm->pipe[1]);
	pthread_cond_destroy(&dm->cond);
	pthread_mutex_destroy(&dm->lock);
	free(dm);
	d->dumper = NULL;
}

/* Queue @j (taken: freed on failure). */
static int enqueue(struct rspd_dumper *dm, struct rspd_dump_job *j)
{
	struct rspd_dump_job **tail;

	pthread_mutex_lock(&dm->lock);
	if (dm->queued >= MAX_QUEUED || dm->stop) {
		pthread_mutex_unlock(&dm->lock);
		free(j);
		return -EBUSY;
	}
	for (tail = &dm->queue; *tail; tail = &(*tail)->next)
		;
	*tail = j;
	dm->queued++;
	pthread_cond_signal(&dm->cond);
	pthread_mutex_unlock(&dm->lock);
	return 0;
}

int rspd_dumper__submit_trigger(struct rspd *d, const struct rspd_dump_trigger *t)
{
	struct rspd_dump_job *j;

	if (!d->dumper)
		return -ENODEV;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->client = -1;
	j->has_trigger = true;
	j->trigger = *t;
	return enqueue(d->dumper, j);
}

int rspd_dumper__submit(struct rspd *d, const struct rsp_dump_spec *spec,
			const struct rspd_dump_owner *owner, int client, uint32_t gen)
{
	struct rspd_dumper *dm = d->dumper;
	struct rspd_dump_job *j;

	if (!dm)
		return -ENODEV;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	if (spec->output) {
		snprintf(j->output, sizeof(j->output), "%s", spec->output);
		j->has_output = true;
	}
	j->last_ns = spec->last_ns;
	j->json = spec->json;
	j->netns_pid = spec->netns_pid;
	if (owner) {
		j->owner = *owner;
		j->has_owner = true;
	}
	j->client = client;
	j->gen = gen;
	return enqueue(dm, j);
}

int rspd_dumper__fd(struct rspd *d)
{
	return d->dumper ? d->dumper->pipe[0] : -1;
}

struct rspd_dump_job *rspd_dumper__reap(struct rspd *d)
{
	struct rspd_dumper *dm = d->dumper;
	struct rspd_dump_job *j;
	char buf[16];

	if (!dm)
		return NULL;
	while (read(dm->pipe[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&dm->lock);
	j = dm->done;
	if (j)
		dm->done = j->next;
	pthread_mutex_unlock(&dm->lock);
	return j;
}

bool rspd_dump_job__result(const struct rspd_dump_job *j, unsigned *client, uint32_t *gen,
			   int *status, const struct rsp_buf **ans)
{
	*client = j->client < 0 ? 0 : (unsigned)j->client;
	*gen = j->gen;
	*status = j->status;
	*ans = &j->answer;
	return j->client >= 0;
}

void rspd_dump_job__free(struct rspd_dump_job *j)
{
	if (!j)
		return;
	rsp_buf__exit(&j->answer);
	free(j);
}
