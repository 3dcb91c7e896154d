// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl hist`: latency profiles (OSprof). The histograms live in rspd's
 * store (rsp_source.hist), not in the window: cumulative since rspd
 * started, or per time slice for a range. Options that name files
 * (--save, --diff FILE) run in rspctl (rsp_request__finish): rspd answers
 * with JSON, rspctl writes the file or compares with it. Run in-process
 * (offline), the same code does everything itself.
 *
 * On a file (`rspctl analyze FILE hist`) there is no store: the profiles
 * are recomputed from the file's records by the same feed rspd runs
 * (lib/analysis/histfeed.c, with its timeline), into a store whose slices cover the
 * file and whose bounds are wide (65536 profiles, 8192 subjects per slice:
 * a one-off query can afford them, and they bind only on huge files). "Cumulative"
 * then means "over the file"; a range inside it gives what rspd gave live
 * for the operations that began and ended inside the file (when rspd's own
 * bounds, hist-profiles and hist-slice-cap, did not bind either).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <rsp/file.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include <rsp/perfdata.h>
#include <rsp/sysdump.h>
#include <rsp/histfeed.h>
#include <rsp/parse.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include "internal/cgroupq.h"
#include "internal/hist.h"
#include "internal/query.h"
#include "internal/redact.h"

#define MAX_OPSEL	    16
#define MAX_RESOLVED	    64
#define MAX_HEATMAPS	    32
#define DEFAULT_SHOW	    3
#define MAX_BASELINE	    (256u << 20)
#define DEFAULT_TOP_CGROUPS 20

struct timearg {
	bool set;
	bool relative; /* now - value */
	uint64_t ns;
};

struct hist_opts {
	int subject; /* OPT_SYSTEM... or 0 */
	bool threads;
	long tid;
	char comm[RSP_HIST_COMM_LEN];
	char ops[MAX_OPSEL][96];
	size_t nr_ops;
	struct timearg from, to, base_from, base_to;
	uint64_t top;
	double min_share; /* percent: phase 1's "too small" (OSprof's three phases) */
	bool min_share_set;
	bool slices;
	char diff[PATH_MAX];
	char save[PATH_MAX];
	unsigned resolution;  /* 0: the store's */
	bool by_cgroup;	      /* --by cgroup */
	uint64_t top_cgroups; /* --top-cgroups N: the rest "(other cgroups)" */
};

enum {
	OPT_SYSTEM = 1,
	OPT_TID,
	OPT_COMM,
	OPT_THREADS,
	OPT_PROCESSES,
	OPT_ALL,
	OPT_OP,
	OPT_FROM,
	OPT_TO,
	OPT_TOP,
	OPT_SLICES,
	OPT_DIFF,
	OPT_BASE_FROM,
	OPT_BASE_TO,
	OPT_SAVE,
	OPT_RESOLUTION,
	OPT_MIN_SHARE,
	OPT_BY,
	OPT_TOP_CGROUPS,
	OPT_PID_SUBJECT = 100, /* --pid, a common option, seen in check() */
};

static const struct rsp_option hist_opts[] = {
	{"system", false, OPT_SYSTEM},
	{"tid", true, OPT_TID},
	{"comm", true, OPT_COMM},
	{"threads", false, OPT_THREADS},
	{"processes", false, OPT_PROCESSES},
	{"all", false, OPT_ALL},
	{"op", true, OPT_OP},
	{"from", true, OPT_FROM},
	{"to", true, OPT_TO},
	{"top", true, OPT_TOP},
	{"slices", false, OPT_SLICES},
	{"diff", true, OPT_DIFF},
	{"base-from", true, OPT_BASE_FROM},
	{"base-to", true, OPT_BASE_TO},
	{"save", true, OPT_SAVE},
	{"resolution", true, OPT_RESOLUTION},
	{"min-share", true, OPT_MIN_SHARE},
	{"by", true, OPT_BY},
	{"top-cgroups", true, OPT_TOP_CGROUPS},
	{NULL, false, 0},
};

static void hist_init(void *p)
{
	struct hist_opts *o = p;

	o->tid = -1;
	o->min_share = 1.0;
	o->top_cgroups = 0;
}

/* ---- parsing ----------------------------------------------------------------- */

/* "1687.5" (CLOCK_MONOTONIC seconds), "-30s" (before now), or "now". */
static int parse_time(const char *opt, const char *v, struct timearg *t, struct rsp_buf *err)
{
	t->set = true;
	if (!strcmp(v, "now")) {
		t->relative = true;
		t->ns = 0;
		return 0;
	}
	if (v[0] == '-' && !rsp_parse__duration(v + 1, &t->ns)) {
		t->relative = true;
		return 0;
	}
	if (!rsp_parse__seconds(v, &t->ns)) {
		t->relative = false;
		return 0;
	}
	rsp_buf__printf(err,
			"hist: %s wants a time: seconds of CLOCK_MONOTONIC as 'rspctl status' "
			"prints them (1687.5), a time before now (-30s, -2m) or 'now', not '%s'",
			opt, v);
	return -EINVAL;
}

static int set_subject(struct hist_opts *o, int which, struct rsp_buf *err)
{
	if (o->subject && o->subject != which) {
		rsp_buf__puts(err, "hist: choose one subject: --system, --pid, --tid, --comm, "
				   "--processes or --all");
		return -EINVAL;
	}
	o->subject = which;
	return 0;
}

static int copy_path(char *dst, const char *opt, const char *v, struct rsp_buf *err)
{
	if (!*v || strlen(v) >= PATH_MAX) {
		rsp_buf__printf(err, "hist: %s wants a file name", opt);
		return -EINVAL;
	}
	strcpy(dst, v);
	return 0;
}

static int add_op(struct hist_opts *o, const char *v, struct rsp_buf *err)
{
	const char *arg;
	unsigned kind;
	uint32_t num;
	bool has_num;
	struct rsp_buf e = RSP_BUF_INIT;

	if (o->nr_ops == MAX_OPSEL || strlen(v) >= sizeof(o->ops[0])) {
		rsp_buf__printf(err, "hist: at most %d --op options of up to 95 bytes", MAX_OPSEL);
		return -EINVAL;
	}
	if (rsp_hist__parse_op(v, &kind, &arg, &num, &has_num, &e)) {
		rsp_buf__printf(err, "hist: %s", e.data);
		rsp_buf__exit(&e);
		return -EINVAL;
	}
	strcpy(o->ops[o->nr_ops++], v);
	return 0;
}

/* --min-share PCT: a decimal percentage, 0 to 100 ("0.5", "2%"). */
static int parse_share(struct hist_opts *o, const char *v, struct rsp_buf *err)
{
	size_t n = strlen(v);
	char num[32], *end;
	double d;

	if (n && v[n - 1] == '%')
		n--;
	/* digits and a point only: strtod() would also take hex, "inf" and "nan" */
	if (!n || n >= sizeof(num) || strspn(v, "0123456789.") != n)
		goto bad;
	memcpy(num, v, n);
	num[n] = 0;
	errno = 0;
	d = strtod(num, &end);
	if (*end || errno || d < 0 || d > 100)
		goto bad;
	o->min_share = d;
	o->min_share_set = true;
	return 0;
bad:
	rsp_buf__printf(err, "hist: --min-share wants a percentage from 0 to 100, not '%s'", v);
	return -EINVAL;
}

static int hist_opt(struct rsp_request *req, int id, const char *v, struct rsp_buf *err)
{
	struct hist_opts *o = req->opts;
	uint64_t n;

	switch (id) {
	case OPT_SYSTEM:
	case OPT_PROCESSES:
	case OPT_ALL:
		return set_subject(o, id, err);
	case OPT_TID:
		if (rsp_parse__u64(v, 1, 4194304, &n)) {
			rsp_buf__printf(err, "hist: --tid wants a thread id, not '%s'", v);
			return -EINVAL;
		}
		o->tid = (long)n;
		return set_subject(o, id, err);
	case OPT_COMM:
		if (!*v || strlen(v) >= RSP_HIST_COMM_LEN) {
			rsp_buf__printf(err, "hist: --comm wants a command name of 1 to 15 bytes, "
					     "as /proc/PID/comm shows it");
			return -EINVAL;
		}
		strcpy(o->comm, v);
		return set_subject(o, id, err);
	case OPT_THREADS:
		o->threads = true;
		return 0;
	case OPT_OP:
		return add_op(o, v, err);
	case OPT_FROM:
		return parse_time("--from", v, &o->from, err);
	case OPT_TO:
		return parse_time("--to", v, &o->to, err);
	case OPT_BASE_FROM:
		return parse_time("--base-from", v, &o->base_from, err);
	case OPT_BASE_TO:
		return parse_time("--base-to", v, &o->base_to, err);
	case OPT_TOP:
		if (rsp_parse__u64(v, 1, 100000, &o->top)) {
			rsp_buf__printf(err, "hist: --top wants a number of profiles, not '%s'", v);
			return -EINVAL;
		}
		return 0;
	case OPT_SLICES:
		o->slices = true;
		return 0;
	case OPT_MIN_SHARE:
		return parse_share(o, v, err);
	case OPT_DIFF:
		return copy_path(o->diff, "--diff", v, err);
	case OPT_SAVE:
		return copy_path(o->save, "--save", v, err);
	case OPT_RESOLUTION:
		if (strcmp(v, "1") && strcmp(v, "2")) {
			rsp_buf__printf(err, "hist: --resolution wants 1 or 2, not '%s'", v);
			return -EINVAL;
		}
		o->resolution = (unsigned)(v[0] - '0');
		return 0;
	case OPT_BY:
		if (strcmp(v, "cgroup")) {
			rsp_buf__printf(err, "hist: --by groups by 'cgroup' only, not '%.40s'", v);
			return -EINVAL;
		}
		o->by_cgroup = true;
		return 0;
	case OPT_TOP_CGROUPS:
		if (rsp_parse__u64(v, 1, 10000, &o->top_cgroups)) {
			rsp_buf__printf(err,
					"hist: --top-cgroups wants a number of cgroups from 1 to "
					"10000, not '%s'",
					v);
			return -EINVAL;
		}
		return 0;
	default:
		rsp_buf__printf(err, "hist: unexpected argument '%s'; see 'rspctl help hist'", v);
		return -EINVAL;
	}
}

static int hist_check(struct rsp_request *req, struct rsp_buf *err)
{
	struct hist_opts *o = req->opts;
	const char *msg = NULL;

	if (req->pid >= 0 && set_subject(o, OPT_PID_SUBJECT, err))
		return -EINVAL;
	if (req->last_ns && (o->from.set || o->to.set))
		msg = "--last and --from/--to both give the range; use one";
	else if (o->to.set && !o->from.set)
		msg = "--to needs --from";
	else if (o->base_to.set && !o->base_from.set)
		msg = "--base-to needs --base-from";
	else if (o->diff[0] && o->base_from.set)
		msg = "--diff FILE and --base-from both give the baseline; use one";
	else if (o->slices && (o->diff[0] || o->base_from.set))
		msg = "--slices does not combine with a diff";
	else if (o->min_share_set && !o->diff[0] && !o->base_from.set)
		msg = "--min-share goes with a diff (--diff FILE or --base-from)";
	else if (o->threads && o->subject && o->subject != OPT_PID_SUBJECT)
		msg = "--threads goes with --pid PID (its threads) or alone (every thread)";
	else if (o->by_cgroup && (o->subject || o->threads))
		msg = "--by cgroup merges every process's profiles by cgroup; it takes no subject "
		      "(--system, --pid, --tid, --comm, --threads, --processes, --all): narrow "
		      "it with --cgroup PATH or --container ID";
	else if (o->by_cgroup && o->slices)
		msg = "--slices does not combine with --by cgroup (the heat maps are kept per "
		      "process); use --slices with --cgroup PATH";
	else if (o->top_cgroups && !o->by_cgroup)
		msg = "--top-cgroups goes with --by cgroup";
	if (msg) {
		rsp_buf__printf(err, "hist: %s", msg);
		return -EINVAL;
	}
	return 0;
}

/* ---- building the query ---------------------------------------------------------- */

static uint64_t resolve_time(const struct timearg *t, uint64_t now)
{
	if (!t->relative)
		return t->ns;
	return t->ns < now ? now - t->ns : 0;
}

static void query_subjects(const struct rsp_request *req, const struct hist_opts *o,
			   struct rsp_hist_query *q)
{
	q->pid = -1;
	q->tid = -1;
	switch (o->subject) {
	case OPT_PID_SUBJECT:
		q->pid = req->pid;
		q->subjects = 1u << (o->threads ? RSP_HSUBJ_THREAD : RSP_HSUBJ_PROCESS);
		break;
	case OPT_TID:
		q->tid = o->tid;
		q->subjects = 1u << RSP_HSUBJ_THREAD;
		break;
	case OPT_COMM:
		q->comm = o->comm;
		q->subjects = 1u << RSP_HSUBJ_COMM;
		break;
	case OPT_PROCESSES:
		q->subjects = 1u << RSP_HSUBJ_PROCESS | 1u << RSP_HSUBJ_OTHER_PROCESS;
		break;
	case OPT_ALL:
		q->subjects = 1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_PROCESS |
			      1u << RSP_HSUBJ_THREAD | 1u << RSP_HSUBJ_OTHER_PROCESS |
			      1u << RSP_HSUBJ_OTHER_THREAD;
		break;
	default:
		q->subjects = o->threads ? (1u << RSP_HSUBJ_THREAD | 1u << RSP_HSUBJ_OTHER_THREAD)
					 : 1u << RSP_HSUBJ_SYSTEM;
		break;
	}
}

static int irq_names_seen(const struct rsp_hist_store *st, struct rsp_buf *err)
{
	char name[64];
	int shown = 0;

	for (uint32_t id = 1; !rsp_hist_store__irq_name(st, id, name, sizeof(name)); id++) {
		rsp_buf__printf(err, "%s%s", shown++ ? ", " : "", name);
		if (shown == 8) {
			rsp_buf__puts(err, ", ...");
			break;
		}
	}
	return shown;
}

/* One --op into selectors: devices by name or number, irq handlers by name or irq. */
static int resolve_op(struct rsp_hist_store *st, const char *text, struct rsp_hist_opsel *sel,
		      size_t *n, struct rsp_buf *err)
{
	struct rsp_buf e = RSP_BUF_INIT;
	uint32_t num, dev, ids[16];
	const char *arg;
	unsigned kind;
	bool has_num;
	int k;

	if (rsp_hist__parse_op(text, &kind, &arg, &num, &has_num, &e)) {
		rsp_buf__printf(err, "hist: %s", e.data);
		rsp_buf__exit(&e);
		return -EINVAL;
	}
	if (*n + 16 > MAX_RESOLVED) {
		rsp_buf__puts(err, "hist: too many operations selected");
		return -EINVAL;
	}
	if (!arg || has_num) {
		sel[(*n)++] = (struct rsp_hist_opsel){.kind = kind, .any = !arg, .arg = num};
		return 0;
	}
	if (kind == RSP_HOP_BLK_QUEUE || kind == RSP_HOP_BLK_SERVICE) {
		if (rsp_hist__dev_parse(arg, &dev)) {
			rsp_buf__printf(err,
					"hist: --op %s: no block device '%s' on this machine (see "
					"/sys/class/block); give it as MAJOR:MINOR",
					text, arg);
			return -EINVAL;
		}
		sel[(*n)++] = (struct rsp_hist_opsel){.kind = kind, .arg = dev};
		return 0;
	}
	k = rsp_hist_store__irq_find(st, arg, ids, 16);
	if (k <= 0) {
		rsp_buf__printf(err,
				"hist: --op %s: no irq handler '%s' has run since rspd started "
				"(names as in /proc/interrupts; seen: ",
				text, arg);
		if (!irq_names_seen(st, err))
			rsp_buf__puts(err, "none");
		rsp_buf__puts(err, ")");
		return -EINVAL;
	}
	for (int i = 0; i < k; i++)
		sel[(*n)++] = (struct rsp_hist_opsel){.kind = RSP_HOP_IRQ, .arg = ids[i]};
	return 0;
}

struct plan {
	struct rsp_hist_query q;
	struct rsp_hist_opsel sel[MAX_RESOLVED];
	bool implicit_range;   /* --slices without a range: every slice kept */
	uint32_t *exclude;     /* q.exclude's memory */
	struct rsp_redact red; /* the access rule */
};

static int make_plan(const struct rsp_request *req, const struct rsp_source *src, struct plan *p,
		     struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	rsp_redact__init(&p->red, &src->access);
	query_subjects(req, o, &p->q);
	if (o->by_cgroup) /* merged by cgroup after collection: by_cgroup() */
		p->q.subjects = 1u << RSP_HSUBJ_PROCESS | 1u << RSP_HSUBJ_OTHER_PROCESS;
	if ((req->cgroup || req->container || o->by_cgroup) &&
	    (!src->symbols || (src->offline && !(src->dump && src->dump->has_cgroups)))) {
		rsp_buf__printf(err,
				"hist: %s need%s the cgroup of each process, which this file "
				"does not carry (perf or an older rspd wrote it); ask rspd, or "
				"dump again",
				o->by_cgroup ? "--by cgroup" : "--cgroup and --container",
				o->by_cgroup ? "s" : "");
		return -EOPNOTSUPP;
	}
	if (req->cgroup || req->container) {
		/* the whole system's and evicted profiles belong to no one cgroup */
		p->q.subjects &= ~(1u << RSP_HSUBJ_SYSTEM | 1u << RSP_HSUBJ_OTHER_PROCESS |
				   1u << RSP_HSUBJ_OTHER_THREAD);
		if (!p->q.subjects)
			p->q.subjects = 1u << RSP_HSUBJ_PROCESS;
	}
	for (size_t i = 0; i < o->nr_ops; i++)
		if (resolve_op(src->hist, o->ops[i], p->sel, &n, err))
			return -EINVAL;
	if (n) {
		p->q.ops = p->sel;
		p->q.nr_ops = n;
	}
	if (req->last_ns) {
		p->q.ranged = true;
		p->q.from = req->last_ns < src->now ? src->now - req->last_ns : 0;
		p->q.to = src->now;
	} else if (o->from.set) {
		p->q.ranged = true;
		p->q.from = resolve_time(&o->from, src->now);
		p->q.to = o->to.set ? resolve_time(&o->to, src->now) : src->now;
	} else if (o->slices) {
		p->q.ranged = true;
		p->implicit_range = true;
		p->q.from = 0;
		p->q.to = src->now;
	}
	return 0;
}

/* ---- running ------------------------------------------------------------------------ */

static void label_ops(struct rsp_hist_set *s, const struct rsp_source *src)
{
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_hist_profile *p = &s->v[i];
		unsigned kind = RSP_HIST_OP_KIND(p->op);
		char dev[40];

		if (src->offline || (kind != RSP_HOP_BLK_QUEUE && kind != RSP_HOP_BLK_SERVICE))
			continue;
		if (!rsp_hist__dev_name(RSP_HIST_OP_ARG(p->op), dev, sizeof(dev)))
			snprintf(p->op_label, sizeof(p->op_label), "%s:%s",
				 rsp_hist__op_kind_name(kind), dev);
	}
}

static int fit_resolution(const struct hist_opts *o, struct rsp_hist_set *s, struct rsp_buf *err)
{
	if (!o->resolution || o->resolution == s->resolution)
		return 0;
	if (o->resolution == 2) {
		rsp_buf__puts(err, "hist: rspd records at resolution 1; restart it with "
				   "--hist-resolution 2 for half-octave buckets");
		return -EINVAL;
	}
	rsp_hist_set__fold(s);
	return 0;
}

/* ---- access control (the rule: rsp/query.h) ------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * --comm NAME merges processes: for a restricted requester, only those it
 * may see. --cgroup, --container: only the processes in them (by the
 * process model's cgroup of each). Which those are is read first, by
 * process (@q's range, no rows), then the collection leaves the others
 * out. May read /proc once per process.
 */
static int exclude_others(const struct rsp_request *req, const struct rsp_source *src,
			  struct rsp_redact *red, struct rsp_hist_query *q, uint32_t **list,
			  struct rsp_buf *err)
{
	bool access = src->access.restricted && (q->subjects & (1u << RSP_HSUBJ_COMM));
	bool cgroup = req->cgroup || req->container;
	const struct rsp_maps *maps = src->symbols ? rsp_symbolizer__maps(src->symbols) : NULL;
	struct rsp_hist_query pq = *q;
	struct rsp_hist_set *s;
	size_t n = 0;
	int ret;

	free(*list);
	*list = NULL;
	q->exclude = NULL;
	q->nr_exclude = 0;
	if (!access && !cgroup)
		return 0;
	pq.subjects = 1u << RSP_HSUBJ_PROCESS;
	pq.rows = false;
	pq.only = NULL;
	ret = rsp_hist_store__collect(src->hist, &pq, &s, err);
	if (ret)
		return ret;
	*list = calloc(s->n ? s->n : 1, sizeof(**list));
	if (!*list) {
		rsp_hist_set__delete(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		uint32_t pid = s->v[i].subject.pid;

		if ((!n || (*list)[n - 1] != pid) &&
		    ((access && rsp_redact__hidden(red, pid, pid)) ||
		     (cgroup && !rsp_request__cgroup_keeps(req, maps, pid, src->now))))
			(*list)[n++] = pid;
	}
	rsp_hist_set__delete(s);
	qsort(*list, n, sizeof(**list), cmp_u32);
	q->exclude = *list;
	q->nr_exclude = n;
	return 0;
}

/* Other users' processes and threads: "pid N (other user)", no comm. */
static void redact(struct rsp_hist_set *s, struct rsp_redact *red)
{
	for (size_t i = 0; i < s->n; i++) {
		struct rsp_hist_subject *subj = &s->v[i].subject;

		if ((subj->kind != RSP_HSUBJ_PROCESS && subj->kind != RSP_HSUBJ_THREAD) ||
		    !rsp_redact__hidden(red, subj->tid, subj->pid))
			continue;
		subj->other_user = true;
		memset(subj->comm, 0, sizeof(subj->comm));
	}
}

/*
 * A named process or thread of which nothing matches: an error, as for
 * every command that takes --pid (rsp_source__check_seen()), so that a
 * mistyped pid fails instead of answering "no profiles match".
 */
static int check_any(const struct rsp_request *req, struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;

	if (o->subject == OPT_PID_SUBJECT)
		rsp_buf__printf(err,
				"hist: rspd holds no profile of process %ld%s; check the pid, or "
				"widen the range",
				req->pid, o->nr_ops ? " for the operations asked" : "");
	else if (o->subject == OPT_TID)
		rsp_buf__printf(err,
				"hist: rspd holds no profile of thread %ld%s; check the tid, or "
				"widen the range",
				o->tid, o->nr_ops ? " for the operations asked" : "");
	else
		return 0;
	return -ESRCH;
}

/* A named process or thread: only one's own, for a restricted requester. */
static int check_named(const struct rsp_request *req, const struct rsp_source *src,
		       struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;

	if (o->subject == OPT_PID_SUBJECT)
		return rsp_source__check_pid(src, "hist", req->pid, err);
	if (o->subject == OPT_TID && !rsp_source__may_see(src, o->tid)) {
		rsp_buf__printf(err,
				"hist: thread %ld belongs to another user, or has exited so that "
				"rspd cannot tell whose it was; you may query only your own "
				"threads (root and rspd's admin group may query any)",
				o->tid);
		return -EACCES;
	}
	return 0;
}

/* ---- --cgroup, --container, --by cgroup -------------------------------------------- */

struct inside_ctx {
	const struct rsp_request *req;
	const struct rsp_maps *maps;
	uint64_t time;
};

static bool profile_inside(const struct rsp_hist_profile *p, void *ctx)
{
	const struct inside_ctx *c = ctx;

	if (p->subject.kind != RSP_HSUBJ_PROCESS && p->subject.kind != RSP_HSUBJ_THREAD)
		return true;
	return rsp_request__cgroup_keeps(c->req, c->maps, p->subject.pid, c->time);
}

/*
 * --cgroup, --container: the profiles of the processes inside, judged again
 * after collection: live, a process whose first profile came after
 * exclude_others() read the list is in the set and not in the list.
 */
static void keep_inside(const struct rsp_request *req, const struct rsp_source *src,
			struct rsp_hist_set *s)
{
	struct inside_ctx c = {
		.req = req,
		.maps = src->symbols ? rsp_symbolizer__maps(src->symbols) : NULL,
		.time = src->now,
	};

	if (req->cgroup || req->container)
		rsp_hist_set__keep_if(s, profile_inside, &c);
}

struct group_ctx {
	const struct rsp_maps *maps;
	struct rsp_redact *red;
	uint64_t time;
};

/* A process's group: as --cgroup judges it (the model's cgroup at the query's "now"). */
static const char *group_of(void *ctx, uint32_t pid)
{
	struct group_ctx *g = ctx;
	const char *path;

	if (rsp_redact__hidden(g->red, pid, pid))
		return "(other user)";
	path = g->maps ? rsp_maps__cgroup(g->maps, pid, g->time) : NULL;
	return path ? path : "(unknown)";
}

static unsigned top_cgroups(const struct hist_opts *o)
{
	return o->top_cgroups ? (unsigned)o->top_cgroups : DEFAULT_TOP_CGROUPS;
}

/* --by cgroup: @s's process profiles merged by cgroup, in place of @s. */
static int by_cgroup(const struct rsp_request *req, const struct rsp_source *src, struct plan *p,
		     struct rsp_hist_set **s, struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	struct group_ctx g = {
		.maps = src->symbols ? rsp_symbolizer__maps(src->symbols) : NULL,
		.red = &p->red,
		.time = src->now,
	};
	struct rsp_hist_set *cg;
	int ret;

	if (!o->by_cgroup)
		return 0;
	/* a diff's sides are cut together, after both are merged (hist_answer) */
	ret = rsp_cgroupq__hist(*s, o->base_from.set ? UINT_MAX : top_cgroups(o), group_of, &g,
				&cg);
	if (ret) {
		rsp_buf__puts(err, "hist: out of memory merging the profiles by cgroup");
		return ret;
	}
	rsp_hist_set__delete(*s);
	*s = cg;
	return 0;
}

/* Collect, rank, keep --top; with --slices, collect again with rows for those. */
static int collect(const struct rsp_request *req, const struct rsp_source *src, struct plan *p,
		   struct rsp_hist_set **out, struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	struct rsp_hist_set *s, *rows;
	uint64_t keep = o->top;
	int ret = exclude_others(req, src, &p->red, &p->q, &p->exclude, err);

	if (ret)
		return ret;
	ret = rsp_hist_store__collect(src->hist, &p->q, &s, err);

	if (ret)
		return ret;
	keep_inside(req, src, s);
	ret = by_cgroup(req, src, p, &s, err);
	if (ret) {
		rsp_hist_set__delete(s);
		return ret;
	}
	if (p->implicit_range)
		s->clipped = false;
	if (o->base_from.set)
		keep = 0; /* a diff pairs the whole selection, then shows its top N pairs */
	else if (o->slices && (!o->top || o->top > MAX_HEATMAPS))
		keep = MAX_HEATMAPS;
	rsp_hist_set__sort(s, keep);
	if (o->slices && s->n) {
		struct rsp_hist_query q = p->q;

		q.rows = true;
		q.only = s;
		ret = rsp_hist_store__collect(src->hist, &q, &rows, err);
		if (ret) {
			rsp_hist_set__delete(s);
			return ret;
		}
		rows->clipped = s->clipped;
		rsp_hist_set__delete(s);
		s = rows;
		rsp_hist_set__sort(s, 0);
	}
	label_ops(s, src);
	redact(s, &p->red);
	ret = fit_resolution(o, s, err);
	if (ret) {
		rsp_hist_set__delete(s);
		return ret;
	}
	*out = s;
	return 0;
}

static void range_text(const struct rsp_hist_set *s, const char *name, char *buf, size_t n)
{
	if (s->ranged)
		snprintf(buf, n, "%s%s%.3f .. %.3f%s", name, *name ? " (" : "",
			 (double)s->from / 1e9, (double)s->to / 1e9, *name ? ")" : "");
	else
		snprintf(buf, n, "%s%scumulative since %.3f%s", name, *name ? " (" : "",
			 (double)s->since / 1e9, *name ? ")" : "");
}

static int render_diff(const struct rsp_request *req, struct rsp_hist_set *base,
		       struct rsp_hist_set *cur, const char *base_name, struct rsp_buf *out,
		       struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	struct rsp_hist_cmp_config cfg;
	struct rsp_hist_diff *d;
	char bw[PATH_MAX + 64], cw[96];
	int ret;

	if (base->resolution != cur->resolution) {
		rsp_hist_set__fold(base);
		rsp_hist_set__fold(cur);
	}
	rsp_hist_cmp_config__init(&cfg);
	cfg.min_latency_share = o->min_share / 100.0;
	ret = rsp_hist__compare(base, cur, &cfg, &d);
	if (ret) {
		rsp_buf__puts(err, "hist: out of memory comparing profiles");
		return ret;
	}
	range_text(base, base_name, bw, sizeof(bw));
	range_text(cur, "", cw, sizeof(cw));
	if (req->format == RSP_FMT_JSON)
		ret = rsp_hist_diff__render_json(d, bw, cw, out);
	else
		ret = rsp_hist_diff__render_text(d, bw, cw, o->top ? o->top : DEFAULT_SHOW, out);
	rsp_hist_diff__delete(d);
	return ret;
}

static int render_set(const struct rsp_request *req, const struct rsp_hist_set *s,
		      struct rsp_buf *out)
{
	const struct hist_opts *o = req->opts;
	unsigned flags = o->slices ? RSP_HIST_R_ROWS : 0;

	if (req->format == RSP_FMT_JSON)
		return rsp_hist_set__render_json(s, flags, out);
	return rsp_hist_set__render_text(s, flags, out);
}

/* The file, whole; one sentence on failure. Never blocks: a regular file only. */
static int read_file(const char *path, const char *what, struct rsp_buf *data, struct rsp_buf *err)
{
	char chunk[65536];
	ssize_t n;
	struct rsp_buf why = RSP_BUF_INIT;
	int fd = rsp_file__open_regular(path, &why), ret = 0;

	if (fd < 0) {
		if (fd == -EINVAL) /* not a regular file: its own sentence */
			rsp_buf__printf(err, "hist: %s %s", what, why.data ? why.data : path);
		else
			rsp_buf__printf(err, "hist: cannot read %s %s: %s", what, path,
					strerror(-fd));
		rsp_buf__exit(&why);
		return fd;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (data->len + (size_t)n > MAX_BASELINE) {
			rsp_buf__printf(err, "hist: %s %s is larger than %u MiB", what, path,
					MAX_BASELINE >> 20);
			ret = -EFBIG;
			break;
		}
		if (rsp_buf__add(data, chunk, (size_t)n)) {
			ret = -ENOMEM;
			break;
		}
	}
	if (n < 0 && !ret) {
		rsp_buf__printf(err, "hist: cannot read %s %s: %s", what, path, strerror(errno));
		ret = -EIO;
	}
	close(fd);
	return ret;
}

/* Write @len bytes to @path whole (rsp/file.h: 0600, a new or a regular file). */
static int write_file(const char *path, const char *data, size_t len, struct rsp_buf *err)
{
	struct rsp_buf why = RSP_BUF_INIT;
	int ret = rsp_file__write(path, data, len, 0, &why);

	if (ret)
		rsp_buf__printf(err, "hist: --save: %s", why.data ? why.data : strerror(-ret));
	rsp_buf__exit(&why);
	return ret;
}

static int diff_with_file(const struct rsp_request *req, struct rsp_hist_set *cur,
			  struct rsp_buf *out, struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	struct rsp_buf data = RSP_BUF_INIT;
	struct rsp_hist_set *base = NULL;
	char what[PATH_MAX + 16];
	int ret = read_file(o->diff, "baseline", &data, err);

	snprintf(what, sizeof(what), "baseline %s", o->diff);
	if (!ret)
		ret = rsp_hist_set__load_json(data.data ? data.data : "", data.len, what, &base,
					      err);
	if (!ret)
		ret = render_diff(req, base, cur, o->diff, out, err);
	rsp_hist_set__delete(base);
	rsp_buf__exit(&data);
	return ret;
}

/* What --save and --diff FILE do with a set, wherever it came from. */
static int finish_set(const struct rsp_request *req, struct rsp_hist_set *s, struct rsp_buf *out,
		      struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	struct rsp_buf json = RSP_BUF_INIT;
	int ret = 0;

	if (o->save[0]) {
		ret = rsp_hist_set__render_json(s, o->slices ? RSP_HIST_R_ROWS : 0, &json);
		if (!ret)
			ret = write_file(o->save, json.data, json.len, err);
		rsp_buf__exit(&json);
		if (ret)
			return ret;
	}
	if (o->diff[0])
		return diff_with_file(req, s, out, err);
	if (o->top)
		rsp_hist_set__sort(s, o->top);
	return render_set(req, s, out);
}

static int hist_answer(const struct rsp_request *req, const struct rsp_source *src,
		       struct rsp_buf *out, struct rsp_buf *err);

/*
 * Syscall profiles are counted in the kernel (the syscall family): a dump
 * holds no record of each call, but rspd writes the profiles of the dumped
 * slices into a section of its own (rsp/sysdump.h), added here to the
 * file's store. A file without it (perf record's, or rspd's without the
 * family) cannot give them back.
 */
static bool syscall_ops_asked(const struct hist_opts *o, const char **which)
{
	for (size_t i = 0; i < o->nr_ops; i++)
		if (!strncmp(o->ops[i], "syscall", 7) && (!o->ops[i][7] || o->ops[i][7] == ':')) {
			*which = o->ops[i];
			return true;
		}
	return false;
}

static int syscall_ops_offline(const struct rsp_source *src, const struct hist_opts *o,
			       struct rsp_hist_store *st, struct rsp_buf *err)
{
	const struct rsp_dump_info *di = src->dump;
	const char *which = NULL;
	bool asked = syscall_ops_asked(o, &which);

	if (!di || !di->rsp_syscalls) {
		if (!asked)
			return 0;
		rsp_buf__printf(
			err,
			"hist: --op %s: this file has no syscall profiles (they are counted "
			"in the kernel, and only rspd's dumps with the syscall family on the "
			"BPF backend carry them); ask rspd (rspctl hist --op %s)",
			which, which);
		return -EINVAL;
	}
	/* a corrupt section fails every hist of the file: no silent gap */
	return rsp_sysdump__load(di->rsp_syscalls, di->rsp_syscalls_size, di->rsp_syscalls_offset,
				 st, NULL, err);
}

static int hist_run(const struct rsp_request *req, const struct rsp_source *src,
		    struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_source file;
	int ret;

	if (src->hist || !src->offline)
		return hist_answer(req, src, out, err);
	file = *src;
	ret = rsp_histfeed__window_store(src->window, src->schema, src->ksyms, &file.hist, err);
	if (!ret)
		ret = syscall_ops_offline(src, req->opts, file.hist, err);
	if (!ret)
		ret = hist_answer(req, &file, out, err);
	rsp_hist_store__delete(file.hist);
	return ret;
}

static bool store_reached(const struct rsp_source *src, uint64_t until)
{
	struct rsp_hist_stats st;

	rsp_hist_store__stats(src->hist, &st);
	return st.progress >= until;
}

/*
 * Nothing of the named subject: live, wait until the profiles hold what was
 * recorded before the query began (a process that just began or ended),
 * collect again, and only then call it absent.
 */
static int recollect(const struct rsp_request *req, const struct rsp_source *src, struct plan *p,
		     struct rsp_hist_set **cur, struct rsp_buf *err)
{
	int ret;

	if (!src->capture)
		return check_any(req, err);
	rsp_source__settle(src, store_reached);
	rsp_hist_set__delete(*cur);
	*cur = NULL;
	ret = collect(req, src, p, cur, err);
	if (!ret && !(*cur)->n)
		ret = check_any(req, err);
	return ret;
}

static int hist_answer(const struct rsp_request *req, const struct rsp_source *src,
		       struct rsp_buf *out, struct rsp_buf *err)
{
	const struct hist_opts *o = req->opts;
	struct rsp_hist_set *cur = NULL, *base = NULL;
	struct plan p;
	int ret;

	if (!src->hist) {
		rsp_buf__puts(err, "hist: rspd keeps no latency histograms (it runs with "
				   "--no-hist); restart it without --no-hist");
		return -ENODATA;
	}
	if (!src->offline && (o->save[0] || o->diff[0])) {
		rsp_buf__puts(err,
			      "hist: --save and --diff FILE are done by rspctl, which reads "
			      "and writes the files itself; rspd opens no file a client names");
		return -EPERM;
	}
	ret = check_named(req, src, err);
	if (ret)
		return ret;
	ret = make_plan(req, src, &p, err);
	if (!ret)
		ret = collect(req, src, &p, &cur, err);
	if (!ret && !cur->n && (o->subject == OPT_PID_SUBJECT || o->subject == OPT_TID))
		ret = recollect(req, src, &p, &cur, err);
	if (ret) {
		rsp_hist_set__delete(cur);
		free(p.exclude);
		rsp_redact__exit(&p.red);
		return ret;
	}
	if (o->base_from.set) {
		p.q.from = resolve_time(&o->base_from, src->now);
		p.q.to = o->base_to.set ? resolve_time(&o->base_to, src->now) : src->now;
		p.q.ranged = true;
		p.implicit_range = false;
		ret = exclude_others(req, src, &p.red, &p.q, &p.exclude, err);
		if (!ret)
			ret = rsp_hist_store__collect(src->hist, &p.q, &base, err);
		if (!ret) {
			keep_inside(req, src, base);
			ret = by_cgroup(req, src, &p, &base, err);
		}
		if (!ret && o->by_cgroup && rsp_cgroupq__cut(&base, &cur, top_cgroups(o))) {
			rsp_buf__puts(err, "hist: out of memory merging the profiles by cgroup");
			ret = -ENOMEM;
		}
		if (!ret) {
			label_ops(base, src);
			redact(base, &p.red);
			ret = fit_resolution(o, base, err);
		}
		if (!ret)
			ret = render_diff(req, base, cur, "", out, err);
	} else {
		ret = finish_set(req, cur, out, err);
	}
	rsp_hist_set__delete(cur);
	rsp_hist_set__delete(base);
	free(p.exclude);
	rsp_redact__exit(&p.red);
	return ret;
}

/* ---- the rspctl side ------------------------------------------------------------------ */

static bool hist_local(const struct rsp_request *req)
{
	const struct hist_opts *o = req->opts;

	return o->save[0] || o->diff[0];
}

/*
 * rspd gets the selection; rspctl keeps the files, and applies --top
 * itself: a saved baseline holds the whole selection, a diff ranks pairs.
 */
/*
 * What rspd is asked when rspctl finishes the query (--save, --diff): not
 * the files, not --top, and not --min-share, which belongs to the diff made
 * here (rspd, asked without --diff, would refuse it).
 */
static bool hist_keep(const struct rsp_request *req, int id)
{
	return id != OPT_SAVE && id != OPT_DIFF && id != OPT_TOP && id != OPT_MIN_SHARE;
}

static int hist_finish(const struct rsp_request *req, const char *answer, size_t len,
		       struct rsp_buf *out, struct rsp_buf *err)
{
	struct rsp_hist_set *s;
	int ret = rsp_hist_set__load_json(answer, len, "rspd's answer", &s, err);

	if (ret)
		return ret;
	ret = finish_set(req, s, out, err);
	rsp_hist_set__delete(s);
	return ret;
}

/* --by cgroup reads each process's cgroup in the process model. */
static bool hist_uses_model(const struct rsp_request *req)
{
	const struct hist_opts *o = req->opts;

	return o->by_cgroup;
}

const struct rsp_command rsp_cmd_hist = {
	.name = "hist",
	.summary = "latency profiles: log2 histograms per operation and subject",
	.usage = "usage: rspctl hist [SUBJECT | --by cgroup] [--op OP]... [RANGE] [--top N]\n"
		 "                   [--slices] [--top-cgroups N]\n"
		 "                   [--diff FILE | --base-from T [--base-to T]]\n"
		 "                   [--min-share PCT] [--save FILE] [--resolution 1|2] [--json]\n"
		 "\n"
		 "Latency histograms rspd keeps from its start (OSprof): a log2 bucket\n"
		 "table per operation and subject, with count, mean, p50, p99, max,\n"
		 "total and peaks.\n"
		 "\n"
		 "SUBJECT (default --system)\n"
		 "  --system         the whole system\n"
		 "  --pid PID        process PID; with --threads, each of its threads\n"
		 "  --tid TID        thread TID\n"
		 "  --comm NAME      processes named NAME, merged\n"
		 "  --threads        every thread (or those of --pid PID)\n"
		 "  --processes      every process, and 'other processes' (evicted)\n"
		 "  --all            every subject\n"
		 "  --cgroup PATH    with any of these: only processes in this cgroup v2\n"
		 "                   subtree (their own profiles; the whole system's\n"
		 "                   and evicted ones belong to no cgroup)\n"
		 "  --container ID   the same for a container (12+ hex digits of its id)\n"
		 "  --by cgroup      instead of a subject: the process profiles merged\n"
		 "                   per (op, cgroup); evicted processes are '(other\n"
		 "                   processes)', another user's '(other user)'\n"
		 "  --top-cgroups N  with --by cgroup: the N cgroups (default 20) with\n"
		 "                   the most latency, the rest '(other cgroups)'\n"
		 "OP (repeatable; default every operation)\n"
		 "  offcpu[:REASON]  off-CPU time: switch-out -> wakeup; REASON is\n"
		 "                   block_io, network, lock, poll, pipe, timeout, sleep,\n"
		 "                   page_fault, unknown, or preemption (switched out\n"
		 "                   runnable -> back on a CPU)\n"
		 "  runq             run-queue latency: woken -> on a CPU\n"
		 "  blk_queue[:DEV]  block request insert -> issue; DEV is vda or 254:0\n"
		 "  blk_service[:DEV] block request issue -> complete\n"
		 "  irq[:NAME]       irq handler time; NAME as in /proc/interrupts, or\n"
		 "                   an irq number\n"
		 "  softirq[:VEC]    HI TIMER NET_TX NET_RX BLOCK IRQ_POLL TASKLET SCHED\n"
		 "                   HRTIMER RCU\n"
		 "  syscall[:NAME]   system call entry -> exit and its off-CPU part;\n"
		 "                   NAME is read, write, fsync, nanosleep, futex, ...\n"
		 "                   (this architecture's names) or a number; counted\n"
		 "                   in the kernel (BPF backend): live only\n"
		 "RANGE (default: cumulative, everything since rspd started)\n"
		 "  --last D         the last D (30s, 5m), from per-second slices\n"
		 "  --from T [--to T] T is CLOCK_MONOTONIC seconds as 'rspctl status'\n"
		 "                   prints them (1687.5), -D for D before now (-30s),\n"
		 "                   or 'now'\n"
		 "ANALYSES\n"
		 "  --top N          the N profiles with the most total latency\n"
		 "  --slices         a heat map per profile, a row per time slice\n"
		 "  --save FILE      also write the profiles to FILE, a baseline\n"
		 "  --diff FILE      compare with a baseline: OSprof's three phases\n"
		 "  --base-from T [--base-to T]  compare with another range; a diff pairs\n"
		 "                   every profile first, then shows the --top N pairs\n"
		 "  --min-share PCT  in a diff, a pair under PCT% (default 1) of its\n"
		 "                   subject's total latency is set aside as tiny\n"
		 "  --resolution R   1 (log2) or 2 (half octaves, rspd\n"
		 "                   --hist-resolution 2)\n"
		 "  --json           JSON output (the --save format)\n"
		 "  --format text|json  the output format (default text)\n"
		 "\n"
		 "Off-CPU time is by the reason a thread slept; a sleep whose wakeup this\n"
		 "kernel did not deliver (an interrupt on an idle CPU) is measured to the\n"
		 "thread's next run and counted as inferred. Waits for a CPU whose\n"
		 "switch-in was not seen are counted, not measured. Other users'\n"
		 "processes show as 'pid N (other user)'; --pid, --tid name your own.\n"
		 "rspctl reads and writes --save and --diff files itself, as you.\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl hist --op blk_service:vda\n"
		 "  rspctl hist --all --top 10 --last 30s\n"
		 "  rspctl hist --pid 1234 --threads --op offcpu --last 1m\n"
		 "  rspctl hist --op softirq:NET_RX --last 2m --slices\n"
		 "  rspctl hist --op syscall:read --pid 1234 --last 1m\n"
		 "  rspctl hist --by cgroup --op offcpu --last 1m --top 10\n"
		 "  rspctl hist --save before.json; ...; rspctl hist --diff before.json\n"
		 "  rspctl hist --last 30s --base-from -60s --base-to -30s\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_CGROUP,
	.opts = hist_opts,
	.opts_size = sizeof(struct hist_opts),
	.init = hist_init,
	.opt = hist_opt,
	.check = hist_check,
	.run = hist_run,
	/* Live, the profiles are rspd's store; only a dump is read into one (hist_run). */
	.reads_window = rsp_query__never_reads_window,
	.no_symbols = true,
	.local = hist_local,
	.keep = hist_keep,
	.finish = hist_finish,
	.uses_model = hist_uses_model,
};
