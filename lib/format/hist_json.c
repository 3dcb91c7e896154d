// SPDX-License-Identifier: LGPL-2.1
/*
 * The "rsp-hist" JSON format of a set of latency profiles: what
 * `rspctl hist --json` answers and `--save` keeps as a baseline, written
 * by rsp_hist_set__render_json() and read back, from untrusted files, by
 * rsp_hist_set__load_json() (one sentence for what is wrong; fuzzed by
 * fuzz/fuzz_hist_baseline.c). Reals keep 17 digits (rsp_json__emit): a
 * baseline read back compares exactly.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include "internal/hist.h"
#include "internal/hist_json.h"
#include "internal/json.h"

#define MAX_PEAKS 16

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* ---- writing ---------------------------------------------------------------------- */

/* JSON integers are signed 64-bit: larger values (2^63 and up) go as reals. */
json_t *rsp_hist_json__u64(uint64_t v)
{
	return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static json_t *json_buckets(const uint64_t *b, unsigned r)
{
	json_t *arr = json_array();
	unsigned nb = rsp_hist__nr_buckets(r);

	for (unsigned i = 0; i < nb; i++) {
		if (!b[i])
			continue;
		json_array_append_new(
			arr, json_pack("{s:i, s:o, s:o, s:o}", "bucket", (int)i, "low_ns",
				       rsp_hist_json__u64(rsp_hist__bucket_low(i, r)), "high_ns",
				       rsp_hist_json__u64(rsp_hist__bucket_high(i, r)), "count",
				       rsp_hist_json__u64(b[i])));
	}
	return arr;
}

static json_t *json_peaks(const struct rsp_hist_profile *p)
{
	struct rsp_hist_peak pk[MAX_PEAKS];
	int n = rsp_hist__peaks(p->buckets, p->resolution, NULL, pk, MAX_PEAKS);
	json_t *arr = json_array();

	for (int i = 0; i < n && i < MAX_PEAKS; i++)
		json_array_append_new(
			arr,
			json_pack(
				"{s:o, s:o, s:o, s:f, s:f}", "low_ns",
				rsp_hist_json__u64(rsp_hist__bucket_low(pk[i].lo, p->resolution)),
				"high_ns",
				rsp_hist_json__u64(rsp_hist__bucket_high(pk[i].hi, p->resolution)),
				"count", rsp_hist_json__u64(pk[i].count), "share", pk[i].share,
				"mean_ns", pk[i].mean_ns));
	return arr;
}

json_t *rsp_hist_json__subject(const struct rsp_hist_subject *s)
{
	json_t *o = json_pack("{s:s}", "kind", rsp_hist__subject_kind_name(s->kind));

	if (s->kind == RSP_HSUBJ_PROCESS || s->kind == RSP_HSUBJ_THREAD)
		json_object_set_new(o, "pid", json_integer(s->pid));
	if (s->kind == RSP_HSUBJ_THREAD)
		json_object_set_new(o, "tid", json_integer(s->tid));
	if (s->other_user)
		json_object_set_new(o, "other_user", json_true());
	else if (s->kind == RSP_HSUBJ_PROCESS || s->kind == RSP_HSUBJ_THREAD ||
		 s->kind == RSP_HSUBJ_COMM)
		json_object_set_new(o, "comm", rsp_json__name(s->comm));
	if (s->kind == RSP_HSUBJ_CGROUP)
		json_object_set_new(o, "cgroup", json_string(s->cgroup ? s->cgroup : ""));
	return o;
}

static json_t *json_rows(const struct rsp_hist_profile *p)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < p->nr_rows; i++) {
		const struct rsp_hist_row *row = &p->rows[i];

		json_array_append_new(arr,
				      json_pack("{s:f, s:o, s:o, s:o}", "start_s", secs(row->start),
						"count", rsp_hist_json__u64(row->count), "sum_ns",
						rsp_hist_json__u64(row->sum), "buckets",
						json_buckets(row->buckets, p->resolution)));
	}
	return arr;
}

static json_t *json_profile(const struct rsp_hist_profile *p, unsigned flags)
{
	char subj[64];
	unsigned r = p->resolution;
	json_t *o = json_object();

	json_object_set_new(o, "subject", rsp_hist_json__subject(&p->subject));
	json_object_set_new(
		o, "subject_name",
		json_string(rsp_hist_subject__format(&p->subject, 0, subj, sizeof(subj))));
	json_object_set_new(o, "op", json_string(p->op_name));
	json_object_set_new(o, "op_label", json_string(p->op_label));
	json_object_set_new(o, "count", rsp_hist_json__u64(p->count));
	json_object_set_new(o, "sum_ns", rsp_hist_json__u64(p->sum));
	json_object_set_new(o, "min_ns", rsp_hist_json__u64(p->count ? p->min : 0));
	json_object_set_new(o, "max_ns", rsp_hist_json__u64(p->max));
	json_object_set_new(o, "mean_ns",
			    json_real(p->count ? (double)p->sum / (double)p->count : 0.0));
	json_object_set_new(o, "stddev_ns", json_real(rsp_hist_profile__stddev(p)));
	if (RSP_HIST_OP_KIND(p->op) == RSP_HOP_SYSCALL) {
		/* the part of the latency spent switched out (asleep or runnable) */
		json_object_set_new(o, "offcpu_ns", rsp_hist_json__u64(p->offcpu));
		json_object_set_new(o, "offcpu_share",
				    json_real(p->sum ? (double)p->offcpu / (double)p->sum : 0.0));
	}
	json_object_set_new(o, "p50_ns",
			    rsp_hist_json__u64(rsp_hist__percentile(p->buckets, r, p->count, p->min,
								    p->max, 0.5)));
	json_object_set_new(o, "p99_ns",
			    rsp_hist_json__u64(rsp_hist__percentile(p->buckets, r, p->count, p->min,
								    p->max, 0.99)));
	json_object_set_new(o, "buckets", json_buckets(p->buckets, r));
	json_object_set_new(o, "peaks", json_peaks(p));
	json_object_set_new(o, "incomplete", rsp_hist_json__u64(p->incomplete));
	json_object_set_new(o, "open", rsp_hist_json__u64(p->open));
	json_object_set_new(o, "inferred", rsp_hist_json__u64(p->inferred));
	if ((flags & RSP_HIST_R_ROWS) && p->rows)
		json_object_set_new(o, "slices", json_rows(p));
	return o;
}

int rsp_hist_set__render_json(const struct rsp_hist_set *s, unsigned flags, struct rsp_buf *out)
{
	json_t *o = json_object(), *arr = json_array();

	json_object_set_new(o, "format", json_string("rsp-hist"));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "resolution", json_integer(s->resolution));
	json_object_set_new(o, "range",
			    json_pack("{s:b, s:f, s:f, s:f, s:b}", "cumulative", !s->ranged,
				      "from_s", secs(s->ranged ? s->from : s->since), "to_s",
				      secs(s->ranged ? s->to : s->progress), "slice_s",
				      secs(s->slice_ns), "clipped", s->clipped));
	json_object_set_new(o, "since_s", json_real(secs(s->since)));
	json_object_set_new(o, "progress_s", json_real(secs(s->progress)));
	json_object_set_new(o, "gaps",
			    json_pack("{s:o, s:f}", "count", rsp_hist_json__u64(s->gaps), "seconds",
				      secs(s->gap_ns)));
	json_object_set_new(o, "slice_overflow", rsp_hist_json__u64(s->overflow));
	json_object_set_new(o, "evictions", rsp_hist_json__u64(s->evictions));
	json_object_set_new(o, "cut", rsp_hist_json__u64(s->cut));
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(arr, json_profile(&s->v[i], flags));
	json_object_set_new(o, "profiles", arr);
	return rsp_json__emit(o, out);
}

/* ---- reading a baseline ----------------------------------------------------------- */

struct loader {
	const char *what;
	struct rsp_buf *err;
	unsigned r;
	size_t idx; /* profile being read, 1-based in messages */
};

static int bad(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	rsp_buf__printf(l->err, "%s: ", l->what);
	if (l->idx)
		rsp_buf__printf(l->err, "profile %zu: ", l->idx);
	va_start(ap, fmt);
	rsp_buf__vprintf(l->err, fmt, ap);
	va_end(ap);
	rsp_buf__puts(l->err, " — the file is damaged or was not written by 'rspctl hist --save'");
	return -EINVAL;
}

/* Seconds (a JSON number, absent: 0) as ns, rounded; -EINVAL out of [0, 1.8e10 s]. */
static int secs_ns(json_t *v, uint64_t *out)
{
	double d = v ? json_number_value(v) : 0;

	*out = 0;
	if (v && !json_is_number(v))
		return -EINVAL;
	if (!(d >= 0) || d * 1e9 + 0.5 >= 1.8446744073709552e19)
		return -EINVAL;
	*out = (uint64_t)(d * 1e9 + 0.5);
	return 0;
}

/* A non-negative integer (or a real for values past 2^63). */
static int get_u64(json_t *v, uint64_t *out)
{
	double d;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -EINVAL;
	d = json_real_value(v);
	if (!(d >= 0) || d > 1.8446744073709552e19)
		return -EINVAL;
	*out = d >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)d;
	return 0;
}

static int field_u64(struct loader *l, json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return bad(l, "'%s' is missing", key);
	if (get_u64(v, out))
		return bad(l, "'%s' is not a non-negative integer", key);
	return 0;
}

/*
 * "stddev_ns" (optional: files saved before it existed have none, and
 * their stddev reads 0): the sum of squares it stands for, which must be
 * a finite number no smaller than the mean's part of it.
 */
static int load_stddev(struct loader *l, json_t *o, struct rsp_hist_profile *p)
{
	json_t *v = json_object_get(o, "stddev_ns");
	double sd, n = (double)p->count, mean;

	if (!v)
		return 0;
	if (!json_is_number(v) || !isfinite(sd = json_number_value(v)) || sd < 0)
		return bad(l, "'stddev_ns' is not a non-negative number");
	if (p->count && sd > (double)(p->max - p->min))
		return bad(l, "'stddev_ns' is larger than max_ns - min_ns");
	mean = p->count ? (double)p->sum / n : 0;
	p->sumsq = n * (sd * sd + mean * mean);
	return 0;
}

/* A bound read back: exact for integers, to double precision for reals. */
static bool bound_is(json_t *v, uint64_t want)
{
	uint64_t got;

	if (get_u64(v, &got))
		return false;
	if (json_is_integer(v))
		return got == want;
	return fabs(json_real_value(v) - (double)want) <= 1e-15 * (double)want;
}

/* A cgroup subject's name, borrowed from @o: a path, or a "(group)". */
static int load_cgroup(struct loader *l, json_t *o, struct rsp_hist_subject *s)
{
	const char *cg = NULL;

	if (json_unpack(o, "{s:s}", "cgroup", &cg) || !cg[0])
		return bad(l, "a 'cgroup' subject has no 'cgroup'");
	if (strlen(cg) >= 4096 || (cg[0] != '/' && cg[0] != '('))
		return bad(l, "'cgroup' is neither a cgroup path nor a group");
	s->cgroup = cg;
	return 0;
}

static int load_subject(struct loader *l, json_t *o, struct rsp_hist_subject *s)
{
	const char *kind;
	const char *comm = NULL;
	int other = 0;
	uint64_t v;
	int k = -1;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o) || json_unpack(o, "{s:s}", "kind", &kind))
		return bad(l, "'subject' has no 'kind'");
	for (unsigned i = 0; i < RSP_HSUBJ__NR; i++)
		if (!strcmp(kind, rsp_hist__subject_kind_name(i)))
			k = (int)i;
	if (k < 0)
		return bad(l, "unknown subject kind '%s'", kind);
	s->kind = (enum rsp_hist_subject_kind)k;
	if (k == RSP_HSUBJ_PROCESS || k == RSP_HSUBJ_THREAD) {
		if (field_u64(l, o, "pid", &v))
			return -EINVAL;
		if (v > UINT32_MAX)
			return bad(l, "'pid' %llu is not a pid", (unsigned long long)v);
		s->pid = (uint32_t)v;
	}
	if (k == RSP_HSUBJ_THREAD) {
		if (field_u64(l, o, "tid", &v))
			return -EINVAL;
		if (v > UINT32_MAX)
			return bad(l, "'tid' %llu is not a tid", (unsigned long long)v);
		s->tid = (uint32_t)v;
	}
	if (json_unpack(o, "{s?s}", "comm", &comm))
		return bad(l, "'comm' is not a string");
	if (json_unpack(o, "{s?b}", "other_user", &other))
		return bad(l, "'other_user' is not true or false");
	if (other && k != RSP_HSUBJ_PROCESS && k != RSP_HSUBJ_THREAD)
		return bad(l, "only a process or a thread can be another user's");
	s->other_user = other;
	if (comm && strlen(comm) >= RSP_HIST_COMM_LEN)
		return bad(l, "comm '%s' is longer than 15 bytes", comm);
	if (comm)
		snprintf(s->comm, sizeof(s->comm), "%s", comm);
	if (k == RSP_HSUBJ_COMM && !comm)
		return bad(l, "a 'comm' subject has no 'comm'");
	if (k == RSP_HSUBJ_CGROUP)
		return load_cgroup(l, o, s);
	return 0;
}

/* The op's kind (and arg where the name alone says it). */
static int load_op(struct loader *l, const char *name, uint64_t *op)
{
	struct rsp_buf e = RSP_BUF_INIT;
	const char *arg;
	unsigned kind;
	uint32_t num = 0, dev;
	bool has_num;
	int ret = rsp_hist__parse_op(name, &kind, &arg, &num, &has_num, &e);

	rsp_buf__exit(&e);
	if (ret || (!arg && kind != RSP_HOP_RUNQ))
		return bad(l, "'%s' is not an operation", name);
	if (kind == RSP_HOP_BLK_QUEUE || kind == RSP_HOP_BLK_SERVICE) {
		if (!strchr(arg, ':') || rsp_hist__dev_parse(arg, &dev))
			return bad(l, "'%s' does not name a device as MAJOR:MINOR", name);
		num = dev;
	}
	*op = RSP_HIST_OP(kind, num);
	return 0;
}

static int load_buckets(struct loader *l, json_t *arr, struct rsp_hist_profile *p)
{
	unsigned nb = rsp_hist__nr_buckets(l->r);
	uint64_t total = 0;
	size_t i;
	json_t *b;

	if (!json_is_array(arr))
		return bad(l, "'buckets' is not a list");
	json_array_foreach (arr, i, b) {
		uint64_t idx, count;

		if (!json_is_object(b))
			return bad(l, "bucket entry %zu is not an object", i + 1);
		if (field_u64(l, b, "bucket", &idx) || field_u64(l, b, "count", &count))
			return -EINVAL;
		if (idx >= nb)
			return bad(l, "bucket %llu does not exist at resolution %u",
				   (unsigned long long)idx, l->r);
		if (!bound_is(json_object_get(b, "low_ns"),
			      rsp_hist__bucket_low((unsigned)idx, l->r)) ||
		    !bound_is(json_object_get(b, "high_ns"),
			      rsp_hist__bucket_high((unsigned)idx, l->r)))
			return bad(l, "bucket %llu's bounds are not those of resolution %u",
				   (unsigned long long)idx, l->r);
		if (p->buckets[idx])
			return bad(l, "bucket %llu appears twice", (unsigned long long)idx);
		p->buckets[idx] = count;
		if (total + count < total)
			return bad(l, "bucket counts overflow");
		total += count;
	}
	if (total != p->count)
		return bad(l, "'count' is %llu but its buckets hold %llu",
			   (unsigned long long)p->count, (unsigned long long)total);
	return 0;
}

/* Optional per-slice rows ("slices", written with --slices). */
static int load_rows(struct loader *l, json_t *arr, struct rsp_hist_profile *p)
{
	unsigned nb = rsp_hist__nr_buckets(l->r);
	uint64_t *mem;
	size_t i;
	json_t *o;

	if (!arr)
		return 0;
	if (!json_is_array(arr) || !json_array_size(arr))
		return bad(l, "'slices' is not a list of slices");
	p->rows = calloc(json_array_size(arr), sizeof(*p->rows));
	mem = calloc(json_array_size(arr) * nb, sizeof(uint64_t));
	if (!p->rows || !mem) {
		free(p->rows);
		free(mem);
		p->rows = NULL;
		rsp_buf__printf(l->err, "%s: out of memory reading its slices", l->what);
		return -ENOMEM;
	}
	p->nr_rows = json_array_size(arr);
	for (i = 0; i < p->nr_rows; i++)
		p->rows[i].buckets = mem + i * nb;
	json_array_foreach (arr, i, o) {
		struct rsp_hist_profile row;
		json_t *start = json_object_get(o, "start_s");

		memset(&row, 0, sizeof(row));
		if (!start || secs_ns(start, &p->rows[i].start))
			return bad(l, "slice %zu has no 'start_s' (seconds from 0 to 1.8e10)",
				   i + 1);
		if (field_u64(l, o, "count", &row.count) || field_u64(l, o, "sum_ns", &row.sum) ||
		    load_buckets(l, json_object_get(o, "buckets"), &row))
			return -EINVAL;
		p->rows[i].count = row.count;
		p->rows[i].sum = row.sum;
		memcpy(p->rows[i].buckets, row.buckets, nb * sizeof(uint64_t));
	}
	return 0;
}

static void free_rows(struct rsp_hist_profile *p)
{
	if (p->rows)
		free(p->rows[0].buckets);
	free(p->rows);
	p->rows = NULL;
	p->nr_rows = 0;
}

static int load_profile(struct loader *l, json_t *o, struct rsp_hist_set *set)
{
	struct rsp_hist_subject subj;
	struct rsp_hist_profile tmp, *p;
	const char *op, *label = NULL;
	uint64_t opkey = 0;
	int ret;

	if (!json_is_object(o))
		return bad(l, "not an object");
	if (load_subject(l, json_object_get(o, "subject"), &subj))
		return -EINVAL;
	if (json_unpack(o, "{s:s, s?s}", "op", &op, "op_label", &label))
		return bad(l, "'op' is missing or not a string");
	if (load_op(l, op, &opkey))
		return -EINVAL;
	if (rsp_hist_set__find(set, &subj, op))
		return bad(l, "a second profile of %s for the same subject", op);
	rsp_hist_profile__init(&tmp, &subj, op, l->r);
	tmp.op = opkey;
	if (label && strlen(label) < sizeof(tmp.op_label))
		snprintf(tmp.op_label, sizeof(tmp.op_label), "%s", label);
	if (field_u64(l, o, "count", &tmp.count) || field_u64(l, o, "sum_ns", &tmp.sum) ||
	    field_u64(l, o, "min_ns", &tmp.min) || field_u64(l, o, "max_ns", &tmp.max) ||
	    load_buckets(l, json_object_get(o, "buckets"), &tmp))
		return -EINVAL;
	if (tmp.count && (tmp.min > tmp.max ||
			  rsp_hist__bucket(tmp.min, l->r) > rsp_hist__bucket(tmp.max, l->r) ||
			  !tmp.buckets[rsp_hist__bucket(tmp.min, l->r)] ||
			  !tmp.buckets[rsp_hist__bucket(tmp.max, l->r)]))
		return bad(l, "min_ns and max_ns do not fall in its first and last buckets");
	if (load_stddev(l, o, &tmp))
		return -EINVAL;
	if (json_object_get(o, "incomplete") && field_u64(l, o, "incomplete", &tmp.incomplete))
		return -EINVAL;
	if (json_object_get(o, "open") && field_u64(l, o, "open", &tmp.open))
		return -EINVAL;
	if (json_object_get(o, "inferred") && field_u64(l, o, "inferred", &tmp.inferred))
		return -EINVAL;
	if (json_object_get(o, "offcpu_ns") && field_u64(l, o, "offcpu_ns", &tmp.offcpu))
		return -EINVAL;
	if (tmp.offcpu > tmp.sum)
		return bad(l, "'offcpu_ns' is larger than sum_ns");

	ret = load_rows(l, json_object_get(o, "slices"), &tmp);
	if (ret) {
		free_rows(&tmp);
		return ret;
	}
	p = rsp_hist_set__get(set, &subj, op);
	if (!p) {
		free_rows(&tmp);
		rsp_buf__printf(l->err, "%s: out of memory reading it", l->what);
		return -ENOMEM;
	}
	tmp.subject.cgroup = p->subject.cgroup; /* the set's copy, not the JSON's */
	*p = tmp;
	return 0;
}

static int load_root(struct loader *l, json_t *root, struct rsp_hist_set **out)
{
	const char *fmt = NULL;
	json_int_t version = 0, r = 0;
	json_t *profiles, *range, *o;
	struct rsp_hist_set *set;
	size_t i;
	int ret = 0;

	if (!json_is_object(root) || json_unpack(root, "{s:s}", "format", &fmt) ||
	    strcmp(fmt, "rsp-hist"))
		return bad(l, "not a latency profile file ('format' is not \"rsp-hist\")");
	if (json_unpack(root, "{s:I}", "version", &version) || version < 1)
		return bad(l, "no valid 'version'");
	if (version > 1) {
		rsp_buf__printf(l->err,
				"%s: written by a newer rspctl (format version %lld); this one "
				"reads version 1 — save the baseline again with this rspctl",
				l->what, (long long)version);
		return -EINVAL;
	}
	if (json_unpack(root, "{s:I}", "resolution", &r) || (r != 1 && r != 2))
		return bad(l, "'resolution' is not 1 or 2");
	l->r = (unsigned)r;
	profiles = json_object_get(root, "profiles");
	if (!json_is_array(profiles))
		return bad(l, "'profiles' is missing or not a list");
	set = rsp_hist_set__new(l->r);
	if (!set) {
		rsp_buf__printf(l->err, "%s: out of memory reading it", l->what);
		return -ENOMEM;
	}
	range = json_object_get(root, "range");
	if (json_is_object(range)) {
		json_t *cum = json_object_get(range, "cumulative");

		set->ranged = cum && json_is_false(cum);
		if (secs_ns(json_object_get(range, "from_s"), &set->from) ||
		    secs_ns(json_object_get(range, "to_s"), &set->to)) {
			rsp_hist_set__delete(set);
			return bad(l, "'range' holds a time that is not a number of seconds "
				      "from 0 to 1.8e10");
		}
		set->since = set->from;
		set->progress = set->to;
	}
	/* what went to "other" (optional: older files have neither) */
	if ((json_object_get(root, "evictions") &&
	     field_u64(l, root, "evictions", &set->evictions)) ||
	    (json_object_get(root, "slice_overflow") &&
	     field_u64(l, root, "slice_overflow", &set->overflow)) ||
	    (json_object_get(root, "cut") && field_u64(l, root, "cut", &set->cut))) {
		rsp_hist_set__delete(set);
		return -EINVAL;
	}
	json_array_foreach (profiles, i, o) {
		l->idx = i + 1;
		ret = load_profile(l, o, set);
		if (ret)
			break;
	}
	if (ret) {
		rsp_hist_set__delete(set);
		return ret;
	}
	*out = set;
	return 0;
}

int rsp_hist_set__load_json(const char *text, size_t len, const char *what,
			    struct rsp_hist_set **out, struct rsp_buf *err)
{
	struct loader l = {.what = what, .err = err};
	json_error_t je;
	json_t *root;
	int ret;

	*out = NULL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		rsp_buf__printf(err,
				"%s: not valid JSON (line %d: %s) — the file is damaged or was "
				"not written by 'rspctl hist --save'",
				what, je.line, je.text);
		return -EINVAL;
	}
	ret = load_root(&l, root, out);
	json_decref(root);
	return ret;
}
