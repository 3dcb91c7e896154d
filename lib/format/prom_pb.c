// SPDX-License-Identifier: LGPL-2.1
/*
 * Prometheus' protobuf exposition (rsp/prom_pb.h): the text exposition's
 * families translated to MetricFamily messages, and the profiles as native
 * histograms in nanoseconds.
 *
 * Why the classic families are translated from the text rather than
 * rendered a second time: one renderer (prom.c) decides every number and
 * every label, so a protobuf scrape and a text scrape cannot disagree, and
 * the protobuf side needs no second copy of the cardinality cut or of the
 * health sources. The text is rsp's own, so the translator reads exactly
 * what prom.c writes and refuses anything else with a sentence (it is
 * fuzzed all the same: fuzz/fuzz_prom.c).
 *
 * Why the native histograms are families of their own instead of native
 * spans added to rsp_latency_seconds (client_golang allows both in one
 * histogram): a native histogram's bounds are powers of two of its unit,
 * and in seconds none falls on a power of two of nanoseconds, where the
 * profiles' bounds are; so the native families are in nanoseconds, and a
 * family's name carries its unit. rsp_latency_seconds keeps its classic
 * buckets only (Prometheus 2.42 keeps only the native buckets of a
 * histogram that has both), so Prometheus stores it as from a text scrape:
 * the same counts; only the spelling of le differs (Prometheus writes a
 * protobuf bound as its shortest float, "1.023e-06" for the text's
 * "0.000001023").
 *
 * Memory: one series' messages at a time (built with malloc, freed with
 * protobuf_c_message_free_unpacked() once packed), one family's packed
 * bytes, and the output.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/prom.h>
#include <rsp/prom_pb.h>
#include "io/prometheus/client/metrics.pb-c.h"
#include "internal/prom.h"

typedef Io__Prometheus__Client__MetricFamily pb_family;
typedef Io__Prometheus__Client__Metric pb_metric;
typedef Io__Prometheus__Client__LabelPair pb_label;
typedef Io__Prometheus__Client__Histogram pb_hist;
typedef Io__Prometheus__Client__Bucket pb_bucket;
typedef Io__Prometheus__Client__BucketSpan pb_span;

/*
 * The profile bucket b >= 1 is native index b at schema r - 1 (rsp/prom_pb.h
 * works it out): at r=1 [2^(b-1), 2^b) -> (2^(b-1), 2^b]; at r=2 the half
 * octave [2^((b-1)/2), 2^(b/2)) -> (2^((b-1)/2), 2^(b/2)].
 */
static int32_t native_index(unsigned b)
{
	return (int32_t)b;
}

int32_t rsp_prom_pb__index(uint64_t ns, unsigned r)
{
	unsigned b = rsp_hist__bucket(ns, r == 2 ? 2 : 1);

	return b ? native_index(b) : RSP_PROM_PB_ZERO_BUCKET;
}

/* ---- building and writing messages ----------------------------------------- */

/* Room for element @n of *@arr (capacity: the power of two at or above n). */
static int grow(void *arr, size_t n, size_t elem)
{
	void **a = arr, *p;

	if (n & (n - 1))
		return 0;
	p = realloc(*a, (n ? 2 * n : 1) * elem);
	if (!p)
		return -ENOMEM;
	*a = p;
	return 0;
}

/* A family; its type is set (has_type) by the caller once known. */
static pb_family *family_new(const char *name, size_t len, const char *help,
			     Io__Prometheus__Client__MetricType type)
{
	pb_family *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	io__prometheus__client__metric_family__init(f);
	f->name = strndup(name, len);
	f->help = help ? strdup(help) : NULL;
	f->type = type;
	if (!f->name || (help && !f->help)) {
		protobuf_c_message_free_unpacked(&f->base, NULL);
		return NULL;
	}
	return f;
}

/* Add the label @name = @value; @value is the metric's from now on, even on failure. */
static int label_add(pb_metric *m, const char *name, size_t nl, char *value)
{
	pb_label *l = NULL;

	if (!value) /* its copy or escape failed: no label without a value */
		return -ENOMEM;
	if (!grow(&m->label, m->n_label, sizeof(*m->label)))
		l = malloc(sizeof(*l));
	if (!l) {
		free(value);
		return -ENOMEM;
	}
	io__prometheus__client__label_pair__init(l);
	m->label[m->n_label++] = l;
	l->value = value;
	l->name = strndup(name, nl);
	return l->name ? 0 : -ENOMEM;
}

static pb_hist *hist_new(pb_metric *m)
{
	m->histogram = malloc(sizeof(*m->histogram));
	if (m->histogram)
		io__prometheus__client__histogram__init(m->histogram);
	return m->histogram;
}

/*
 * A family being written. Its series are packed one by one as they are
 * complete (a MetricFamily holding only that series: protobuf-c writes the
 * repeated field's element, and serialized messages concatenate into one),
 * so a family of 10^4 series never holds 10^4 series' messages at once,
 * only their packed bytes.
 */
struct fam {
	pb_family *f;	     /* name, help, type; no series */
	pb_metric *m;	     /* the series being filled */
	struct rsp_buf body; /* the series before it, packed */
};

static void fam_free(struct fam *w)
{
	if (w->f)
		protobuf_c_message_free_unpacked(&w->f->base, NULL);
	if (w->m)
		protobuf_c_message_free_unpacked(&w->m->base, NULL);
	rsp_buf__exit(&w->body);
	*w = (struct fam){.body = RSP_BUF_INIT};
}

/* Pack the series being filled into the body. */
static int fam_flush(struct fam *w)
{
	pb_family one = IO__PROMETHEUS__CLIENT__METRIC_FAMILY__INIT;
	size_t n;
	int ret;

	if (!w->m)
		return 0;
	one.n_metric = 1;
	one.metric = &w->m;
	n = io__prometheus__client__metric_family__get_packed_size(&one);
	ret = rsp_buf__reserve(&w->body, n);
	if (!ret)
		w->body.len += io__prometheus__client__metric_family__pack(
			&one, (uint8_t *)w->body.data + w->body.len);
	protobuf_c_message_free_unpacked(&w->m->base, NULL);
	w->m = NULL;
	return ret;
}

/* A new series of the family (the one before it packed), or NULL on ENOMEM. */
static pb_metric *fam_metric(struct fam *w)
{
	if (fam_flush(w) || !(w->m = malloc(sizeof(*w->m))))
		return NULL;
	io__prometheus__client__metric__init(w->m);
	return w->m;
}

/*
 * Append the family length-delimited to @out (a family without series:
 * nothing, as client_golang writes none), then free it.
 */
static int fam_emit(struct fam *w, struct rsp_buf *out)
{
	int ret = fam_flush(w);

	if (!ret && w->f && w->body.len) {
		size_t hn = io__prometheus__client__metric_family__get_packed_size(w->f);
		size_t n = hn + w->body.len;
		uint8_t hdr[10];
		size_t hl = 0;

		for (size_t v = n; hl == 0 || v; v >>= 7) /* the varint length prefix */
			hdr[hl++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		ret = rsp_buf__reserve(out, hl + n);
		if (!ret) {
			rsp_buf__add(out, hdr, hl);
			out->len += io__prometheus__client__metric_family__pack(
				w->f, (uint8_t *)out->data + out->len);
			rsp_buf__add(out, w->body.data, w->body.len);
		}
	}
	fam_free(w);
	return ret;
}

/* ---- native histograms ------------------------------------------------------- */

/* @p's buckets as native spans and deltas: one span per run of non-empty buckets. */
static int native_buckets(pb_hist *h, const struct rsp_hist_profile *p)
{
	unsigned nb = rsp_hist__nr_buckets(p->resolution);
	size_t spans = 0, deltas = 0;
	uint64_t prev = 0;
	int32_t end = 0; /* one past the last index of the previous span */

	for (unsigned b = 1; b < nb; b++)
		if (p->buckets[b]) {
			deltas++;
			spans += b == 1 || !p->buckets[b - 1];
		}
	if (!deltas)
		return 0;
	h->positive_span = calloc(spans, sizeof(*h->positive_span));
	h->positive_delta = calloc(deltas, sizeof(*h->positive_delta));
	if (!h->positive_span || !h->positive_delta)
		return -ENOMEM;
	for (unsigned b = 1; b < nb; b++) {
		pb_span *s;

		if (!p->buckets[b])
			continue;
		if (b == 1 || !p->buckets[b - 1]) {
			s = malloc(sizeof(*s));
			if (!s)
				return -ENOMEM;
			io__prometheus__client__bucket_span__init(s);
			s->has_offset = s->has_length = 1;
			/* the first span starts at its index, the others after a gap */
			s->offset = h->n_positive_span ? native_index(b) - end : native_index(b);
			h->positive_span[h->n_positive_span++] = s;
		}
		s = h->positive_span[h->n_positive_span - 1];
		s->length++;
		end = native_index(b) + 1;
		h->positive_delta[h->n_positive_delta++] = (int64_t)(p->buckets[b] - prev);
		prev = p->buckets[b];
	}
	return 0;
}

static int native_hist(pb_metric *m, const struct rsp_hist_profile *p)
{
	pb_hist *h = hist_new(m);

	if (!h)
		return -ENOMEM;
	h->has_sample_count = h->has_sample_sum = 1;
	h->sample_count = p->count;
	h->sample_sum = (double)p->sum; /* ns; exact below 2^53 ns (104 days) */
	h->has_schema = h->has_zero_threshold = h->has_zero_count = 1;
	h->schema = p->resolution == 2 ? 1 : 0;
	h->zero_threshold = ldexp(1.0, -128);
	h->zero_count = p->buckets[0];
	return native_buckets(h, p);
}

static int unescape(const char *s, size_t n, char **out);

/* @s as a protobuf label value: valid UTF-8 (rsp_prom__escape's rule), unescaped. */
static char *label_value(const char *s, size_t n)
{
	struct rsp_buf b = RSP_BUF_INIT;
	char *v = NULL;

	rsp_prom__escape(&b, s, n);
	if (!b.error && unescape(b.data ? b.data : "", b.len, &v))
		v = NULL;
	rsp_buf__exit(&b);
	return v;
}

static int native_labels(pb_metric *m, const struct rsp_hist_profile *p, bool proc)
{
	const char *comm;
	size_t len;
	char pid[16];
	int ret = label_add(m, "op", 2, label_value(p->op_name, strlen(p->op_name)));

	if (ret || !proc)
		return ret;
	rsp_prom__subject(p, &comm, &len, pid);
	return label_add(m, "comm", 4, label_value(comm, len))
		       ?: label_add(m, "pid", 3, strdup(pid));
}

static int by_op_subject(const void *a, const void *b)
{
	return rsp_prom__cmp_op_subject(*(const struct rsp_hist_profile *const *)a,
					*(const struct rsp_hist_profile *const *)b);
}

static int native_family(const struct rsp_hist_profile **v, size_t n, bool proc,
			 struct rsp_buf *out)
{
	struct fam w = {.body = RSP_BUF_INIT};
	int ret = 0;

	w.f = family_new(
		proc ? "rsp_process_latency_nanoseconds" : "rsp_latency_nanoseconds",
		strlen(proc ? "rsp_process_latency_nanoseconds" : "rsp_latency_nanoseconds"),
		proc ? RSP_PROM_PROC_HELP
			", native histogram in "
			"NANOSECONDS (schema 0: log2 buckets; 1 at --hist-resolution 2): the "
			"profile's buckets [2^k, 2^(k+1)) ns counted unchanged as (2^k, 2^(k+1)], "
			"so "
			"only a latency of exactly 2^k ns sits one bucket above Prometheus' own"
		     : "Latency of each operation, whole system (rspctl hist), native histogram in "
		       "NANOSECONDS (schema 0: log2 buckets; 1 at --hist-resolution 2): the "
		       "profile's buckets [2^k, 2^(k+1)) ns counted unchanged as (2^k, 2^(k+1)], "
		       "so "
		       "only a latency of exactly 2^k ns sits one bucket above Prometheus' own",
		IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	if (!w.f)
		return -ENOMEM;
	w.f->has_type = 1;
	for (size_t i = 0; i < n && !ret; i++) {
		pb_metric *m;

		if ((v[i]->subject.kind != RSP_HSUBJ_SYSTEM) != proc)
			continue;
		m = fam_metric(&w);
		ret = m ? native_labels(m, v[i], proc) : -ENOMEM;
		if (!ret)
			ret = native_hist(m, v[i]);
	}
	if (ret) {
		fam_free(&w);
		return ret;
	}
	return fam_emit(&w, out);
}

int rsp_prom_pb__native(const struct rsp_hist_set *s, struct rsp_buf *out)
{
	const struct rsp_hist_profile **v = calloc(s->n ? s->n : 1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		v[i] = &s->v[i];
	qsort(v, s->n, sizeof(*v), by_op_subject);
	ret = native_family(v, s->n, false, out);
	if (!ret)
		ret = native_family(v, s->n, true, out);
	free(v);
	return ret ? ret : out->error;
}

/* ---- the text exposition, translated ------------------------------------------ */

#define MAX_LABELS 16 /* rsp writes at most 4 */

struct sample {
	const char *name;
	size_t nl;
	struct {
		const char *name;
		size_t nl;
		char *value; /* ours until a metric takes it */
	} l[MAX_LABELS];
	unsigned n;
	char value[64];
};

struct tx {
	struct fam w; /* the family being filled: # HELP opened it */
	unsigned line;
	struct rsp_buf *out, *err;
};

static int fail(struct tx *t, const char *what)
{
	rsp_buf__printf(t->err,
			"line %u of the metrics' text %s; the protobuf exposition translates only "
			"what rsp writes, so this is a bug of rsp's: scrape the text format "
			"(Accept: text/plain) meanwhile",
			t->line, what);
	return -EINVAL;
}

/* @n bytes of an escaped label value or help (\\, \" and \n) into a new string. */
static int unescape(const char *s, size_t n, char **out)
{
	char *v = malloc(n + 1), *d = v;

	*out = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			*d++ = s[i];
			continue;
		}
		if (++i == n || (s[i] != '\\' && s[i] != '"' && s[i] != 'n')) {
			free(v);
			return -EINVAL;
		}
		*d++ = s[i] == 'n' ? '\n' : s[i];
	}
	*d = '\0';
	*out = v;
	return 0;
}

static void sample_free(struct sample *s)
{
	for (unsigned i = 0; i < s->n; i++)
		free(s->l[i].value);
	s->n = 0;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == ':';
}

/* One label of a sample at p[*i] (name="value"), into @s. */
static int parse_label(struct tx *t, const char *p, size_t n, size_t *i, struct sample *s)
{
	size_t k = *i, v;
	int ret;

	while (*i < n && name_char(p[*i]) && p[*i] != ':')
		(*i)++;
	if (*i == k || *i + 1 >= n || p[*i] != '=' || p[*i + 1] != '"')
		return fail(t, "has a label that is not name=\"value\"");
	if (s->n == MAX_LABELS)
		return fail(t, "has more than 16 labels");
	s->l[s->n].name = p + k;
	s->l[s->n].nl = *i - k;
	v = *i += 2;
	while (*i < n && p[*i] != '"')
		*i += p[*i] == '\\' ? 2 : 1;
	if (*i >= n)
		return fail(t, "has a label value without its closing quote");
	ret = unescape(p + v, *i - v, &s->l[s->n].value);
	if (ret)
		return ret == -EINVAL ? fail(t, "has an escape other than \\\\, \\\" or \\n") : ret;
	s->n++;
	(*i)++;
	if (*i < n && p[*i] == ',')
		(*i)++;
	else if (*i < n && p[*i] != '}')
		return fail(t, "has labels not separated by commas");
	return 0;
}

static int parse_sample(struct tx *t, const char *p, size_t n, struct sample *s)
{
	size_t i = 0;
	int ret;

	while (i < n && name_char(p[i]))
		i++;
	if (!i)
		return fail(t, "does not start with a metric name");
	s->name = p;
	s->nl = i;
	if (i < n && p[i] == '{') {
		for (i++; i < n && p[i] != '}';)
			if ((ret = parse_label(t, p, n, &i, s)))
				return ret;
		if (i++ >= n)
			return fail(t, "has no closing brace");
	}
	if (i >= n || p[i] != ' ')
		return fail(t, "has no space before its value");
	i++;
	if (i == n || n - i >= sizeof(s->value) || memchr(p + i, ' ', n - i))
		return fail(t, "has not one value alone (rsp writes no timestamps)");
	memcpy(s->value, p + i, n - i);
	s->value[n - i] = '\0';
	return 0;
}

static int number(struct tx *t, const char *v, double *d)
{
	char *end;

	*d = strtod(v, &end);
	return end == v || *end ? fail(t, "has a value that is not a number") : 0;
}

static int whole(struct tx *t, const char *v, uint64_t *c)
{
	char *end;

	errno = 0;
	*c = strtoull(v, &end, 10);
	return *v < '0' || *v > '9' || *end || errno
		       ? fail(t, "has a count that is not a whole number below 2^64")
		       : 0;
}

/* Give the labels of @s (less the one at @skip, if any) to @m. */
static int take_labels(pb_metric *m, struct sample *s, int skip)
{
	for (unsigned i = 0; i < s->n; i++) {
		char *v = s->l[i].value;
		int ret;

		if ((int)i == skip)
			continue;
		s->l[i].value = NULL;
		ret = label_add(m, s->l[i].name, s->l[i].nl, v);
		if (ret)
			return ret;
	}
	return 0;
}

/* Whether the series being filled has the labels of @s, less the one at @skip. */
static bool same_series(const pb_metric *m, const struct sample *s, int skip)
{
	size_t j = 0;

	if (!m || !m->histogram || m->n_label != s->n - (skip >= 0))
		return false;
	for (unsigned i = 0; i < s->n; i++) {
		const pb_label *l;

		if ((int)i == skip)
			continue;
		l = m->label[j++];
		if (strlen(l->name) != s->l[i].nl || memcmp(l->name, s->l[i].name, s->l[i].nl) ||
		    strcmp(l->value, s->l[i].value))
			return false;
	}
	return true;
}

static int bucket_add(struct tx *t, pb_hist *h, const char *le, const char *value)
{
	pb_bucket *b;
	double ub;
	uint64_t c;
	int ret = whole(t, value, &c);

	if (ret || !strcmp(le, "+Inf"))
		return ret; /* +Inf: optional in protobuf, Prometheus takes the count */
	if ((ret = number(t, le, &ub)))
		return ret;
	if (grow(&h->bucket, h->n_bucket, sizeof(*h->bucket)) || !(b = malloc(sizeof(*b))))
		return -ENOMEM;
	io__prometheus__client__bucket__init(b);
	b->has_cumulative_count = b->has_upper_bound = 1;
	b->cumulative_count = c;
	b->upper_bound = ub;
	h->bucket[h->n_bucket++] = b;
	return 0;
}

static int histogram_sample(struct tx *t, struct sample *s, const char *suffix, size_t sl)
{
	int kind = sl == 7 && !memcmp(suffix, "_bucket", 7)  ? 0
		   : sl == 4 && !memcmp(suffix, "_sum", 4)   ? 1
		   : sl == 6 && !memcmp(suffix, "_count", 6) ? 2
							     : -1;
	int le = -1, ret;
	pb_metric *m;

	if (kind < 0)
		return fail(t, "is a sample of a histogram that is not _bucket, _sum or _count");
	for (unsigned i = 0; i < s->n && !kind; i++)
		if (s->l[i].nl == 2 && !memcmp(s->l[i].name, "le", 2))
			le = (int)i;
	if (!kind && le < 0)
		return fail(t, "is a _bucket without an le label");
	if (same_series(t->w.m, s, le)) {
		m = t->w.m;
	} else {
		if (!(m = fam_metric(&t->w)) || !hist_new(m))
			return -ENOMEM;
		if ((ret = take_labels(m, s, le)))
			return ret;
	}
	if (!kind)
		return bucket_add(t, m->histogram, s->l[le].value, s->value);
	if (kind == 1) {
		m->histogram->has_sample_sum = 1;
		return number(t, s->value, &m->histogram->sample_sum);
	}
	m->histogram->has_sample_count = 1;
	return whole(t, s->value, &m->histogram->sample_count);
}

static int scalar_sample(struct tx *t, struct sample *s)
{
	pb_metric *m = fam_metric(&t->w);
	double v;
	int ret = m ? take_labels(m, s, -1) : -ENOMEM;

	if (ret || (ret = number(t, s->value, &v)))
		return ret;
	switch (t->w.f->type) {
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER:
		m->counter = malloc(sizeof(*m->counter));
		if (!m->counter)
			return -ENOMEM;
		io__prometheus__client__counter__init(m->counter);
		m->counter->has_value = 1;
		m->counter->value = v;
		return 0;
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE:
		m->gauge = malloc(sizeof(*m->gauge));
		if (!m->gauge)
			return -ENOMEM;
		io__prometheus__client__gauge__init(m->gauge);
		m->gauge->has_value = 1;
		m->gauge->value = v;
		return 0;
	default:
		m->untyped = malloc(sizeof(*m->untyped));
		if (!m->untyped)
			return -ENOMEM;
		io__prometheus__client__untyped__init(m->untyped);
		m->untyped->has_value = 1;
		m->untyped->value = v;
		return 0;
	}
}

static int on_sample(struct tx *t, const char *p, size_t n)
{
	struct sample s = {0};
	size_t fl;
	int ret = parse_sample(t, p, n, &s);

	if (!ret && (!t->w.f || !t->w.f->has_type))
		ret = fail(t, "is a sample before its family's # HELP and # TYPE");
	if (!ret) {
		fl = strlen(t->w.f->name);
		if (s.nl < fl || memcmp(s.name, t->w.f->name, fl))
			ret = fail(t, "is a sample of another family than the # TYPE before it");
		else if (t->w.f->type == IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM)
			ret = histogram_sample(t, &s, s.name + fl, s.nl - fl);
		else if (s.nl != fl)
			ret = fail(t, "is a sample of another family than the # TYPE before it");
		else
			ret = scalar_sample(t, &s);
	}
	sample_free(&s);
	return ret;
}

static int on_help(struct tx *t, const char *p, size_t n)
{
	const char *sp = memchr(p, ' ', n);
	size_t nl = sp ? (size_t)(sp - p) : n;
	char *help = NULL;
	int ret = fam_emit(&t->w, t->out);

	if (ret)
		return ret;
	for (size_t i = 0; i < nl; i++)
		if (!name_char(p[i]))
			return fail(t, "is a # HELP whose name is not a metric name");
	if (!nl)
		return fail(t, "is a # HELP without a name");
	ret = unescape(sp ? sp + 1 : "", sp ? n - nl - 1 : 0, &help);
	if (ret)
		return ret == -EINVAL ? fail(t, "has an escape other than \\\\, \\\" or \\n") : ret;
	t->w.f = family_new(p, nl, help, IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED);
	free(help);
	return t->w.f ? 0 : -ENOMEM;
}

static int on_type(struct tx *t, const char *p, size_t n)
{
	static const struct {
		const char *name;
		Io__Prometheus__Client__MetricType type;
	} types[] = {
		{"counter", IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER},
		{"gauge", IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE},
		{"histogram", IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM},
		{"untyped", IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED},
	};
	const char *sp = memchr(p, ' ', n);
	size_t fl = t->w.f ? strlen(t->w.f->name) : 0;

	if (!t->w.f || t->w.f->has_type || !sp || (size_t)(sp - p) != fl ||
	    memcmp(p, t->w.f->name, fl))
		return fail(t, "is a # TYPE that does not follow the # HELP of its family");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n - fl - 1 &&
		    !memcmp(sp + 1, types[i].name, n - fl - 1)) {
			t->w.f->type = types[i].type;
			t->w.f->has_type = 1;
			return 0;
		}
	return fail(t, "is a # TYPE that is not counter, gauge, histogram or untyped");
}

static int on_line(struct tx *t, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (n >= 7 && !memcmp(p, "# HELP ", 7))
		return on_help(t, p + 7, n - 7);
	if (n >= 7 && !memcmp(p, "# TYPE ", 7))
		return on_type(t, p + 7, n - 7);
	if (p[0] == '#')
		return 0; /* a comment */
	return on_sample(t, p, n);
}

int rsp_prom_pb__from_text(const char *text, size_t len, struct rsp_buf *out, struct rsp_buf *err)
{
	struct tx t = {.w = {.body = RSP_BUF_INIT}, .out = out, .err = err};
	const char *p = text, *end = text + len;
	int ret = 0;

	while (p < end && !ret) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		t.line++;
		ret = on_line(&t, p, n);
		p = nl ? nl + 1 : end;
	}
	if (ret) {
		fam_free(&t.w);
		return ret;
	}
	ret = fam_emit(&t.w, out);
	return ret ? ret : out->error;
}
