// SPDX-License-Identifier: LGPL-2.1
/*
 * A trigger's condition and its spec (rsp/trigger.h): the grammar shared by
 * `rspctl trigger add`, rspd's configuration file and the fuzzer. The text
 * comes from anyone who may write the file or talk to the control socket
 * as admin, so every word is checked, every copy bounded, and an error
 * names the word and what is allowed there.
 *
 * Hand-written rather than a generated parser: the grammar is a handful of
 * fixed sentences of at most 9 words, split on blanks; a word table and a
 * switch read it in fewer lines than a grammar file would take.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/hist.h>
#include <rsp/parse.h>
#include <rsp/sleepclass.h>
#include <rsp/trigger.h>
#include "internal/hist.h"

#define MAX_WORDS 12
#define WORD_LEN  64

struct words {
	int n, at;
	char w[MAX_WORDS][WORD_LEN];
};

static int split(const char *text, struct words *ws, struct rsp_buf *err)
{
	const char *p = text;

	memset(ws, 0, sizeof(*ws));
	while (*p) {
		size_t len;

		p += strspn(p, " \t");
		if (!*p)
			break;
		len = strcspn(p, " \t");
		if (ws->n == MAX_WORDS || len >= WORD_LEN) {
			rsp_buf__printf(err,
					"trigger: the condition has %s; see 'rspctl help trigger' "
					"for its forms",
					ws->n == MAX_WORDS ? "too many words" : "a word too long");
			return -EINVAL;
		}
		memcpy(ws->w[ws->n], p, len);
		ws->w[ws->n++][len] = '\0';
		p += len;
	}
	return 0;
}

static const char *next(struct words *ws)
{
	return ws->at < ws->n ? ws->w[ws->at++] : NULL;
}

static int want(struct words *ws, const char *what, const char *after, const char **out,
		struct rsp_buf *err)
{
	*out = next(ws);
	if (*out)
		return 0;
	rsp_buf__printf(err, "trigger: the condition ends after '%s'; %s comes next", after, what);
	return -EINVAL;
}

static int expect_gt(struct words *ws, const char *after, struct rsp_buf *err)
{
	const char *w;

	if (want(ws, "'>'", after, &w, err))
		return -EINVAL;
	if (strcmp(w, ">")) {
		rsp_buf__printf(err, "trigger: '%s' where '>' belongs (after '%s')", w, after);
		return -EINVAL;
	}
	return 0;
}

static int duration(struct words *ws, const char *after, uint64_t *ns, struct rsp_buf *err)
{
	const char *w;

	if (want(ws, "a duration such as 20ms", after, &w, err))
		return -EINVAL;
	if (rsp_parse__duration(w, ns) || !*ns) {
		rsp_buf__printf(err, "trigger: '%s' is not a duration above 0 (such as 20ms, 1s)",
				w);
		return -EINVAL;
	}
	return 0;
}

static int end(struct words *ws, struct rsp_buf *err)
{
	if (ws->at == ws->n)
		return 0;
	rsp_buf__printf(err, "trigger: unexpected '%s' at the end of the condition", ws->w[ws->at]);
	return -EINVAL;
}

/* [over DURATION] and the end. */
static int over(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	c->over_ns = RSP_TRIG_OVER_DEFAULT_NS;
	if (ws->at < ws->n && !strcmp(ws->w[ws->at], "over")) {
		ws->at++;
		if (duration(ws, "over", &c->over_ns, err))
			return -EINVAL;
		if (c->over_ns < 1000000000ull || c->over_ns > RSP_TRIG_OVER_MAX_NS) {
			rsp_buf__printf(err,
					"trigger: 'over' wants from 1s to 300s (the profiles' "
					"slices are 1 s), not '%s'",
					ws->w[ws->at - 1]);
			return -EINVAL;
		}
	}
	return end(ws, err);
}

static int number_id(const char *w, const char *what, uint32_t *id, struct rsp_buf *err)
{
	uint64_t v;

	if (rsp_parse__u64(w, 1, 0x7fffffff, &v)) {
		rsp_buf__printf(err, "trigger: %s wants a number, not '%s'", what, w);
		return -EINVAL;
	}
	*id = (uint32_t)v;
	return 0;
}

/* hist OP: the operation, checked as rspctl hist --op checks it. */
static int hist_op(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	struct rsp_buf e = RSP_BUF_INIT;
	const char *w, *arg;
	bool has_num;
	int ret;

	if (want(ws, "an operation such as syscall:fsync", "hist", &w, err))
		return -EINVAL;
	ret = rsp_hist__parse_op(w, &c->op_kind, &arg, &c->op_arg, &has_num, &e);
	if (ret) {
		rsp_buf__printf(err, "trigger: %s", e.data ? e.data : "bad operation");
		rsp_buf__exit(&e);
		return ret;
	}
	if (c->op_kind == RSP_HOP_IRQ && arg) {
		rsp_buf__printf(err,
				"trigger: '%s': an irq handler is named only once it ran; use "
				"'irq' (every handler) in a trigger",
				w);
		return -EINVAL;
	}
	c->op_any = !arg;
	c->op_dev_name = arg && !has_num;
	snprintf(c->op, sizeof(c->op), "%s", w);
	return 0;
}

/* hist OP [pid N | tid N | comm NAME] */
static int hist_subject(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	const char *w = ws->at < ws->n ? ws->w[ws->at] : "";
	const char *v;

	if (strcmp(w, "pid") && strcmp(w, "tid") && strcmp(w, "comm"))
		return 0;
	ws->at++;
	if (want(ws, "its value", w, &v, err))
		return -EINVAL;
	if (!strcmp(w, "comm")) {
		if (strlen(v) > 15) {
			rsp_buf__printf(err, "trigger: comm '%s' is longer than 15 characters", v);
			return -EINVAL;
		}
		c->subject = RSP_TRIG_COMM;
		snprintf(c->comm, sizeof(c->comm), "%s", v);
		return 0;
	}
	c->subject = w[0] == 'p' ? RSP_TRIG_PID : RSP_TRIG_TID;
	return number_id(v, w, &c->id, err);
}

static int rate(const char *w, double *out, struct rsp_buf *err)
{
	char num[WORD_LEN];
	size_t len = strlen(w);

	if (len < 3 || strcmp(w + len - 2, "/s")) {
		rsp_buf__printf(err,
				"trigger: count wants calls per second such as 100/s, not '%s'", w);
		return -EINVAL;
	}
	memcpy(num, w, len - 2);
	num[len - 2] = '\0';
	if (rsp_parse__decimal(num, 0, 1e12, out)) {
		rsp_buf__printf(err, "trigger: '%s' is not a rate such as 100/s", w);
		return -EINVAL;
	}
	return 0;
}

static int parse_hist(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	static const char *const stats[] = {"p99", "p999", "max", "count"};
	const char *w;
	int s;

	if (hist_op(ws, c, err) || hist_subject(ws, c, err))
		return -EINVAL;
	if (want(ws, "p99, p999, max or count", c->op, &w, err))
		return -EINVAL;
	for (s = 0; s < 4 && strcmp(w, stats[s]); s++)
		;
	if (s == 4) {
		rsp_buf__printf(err, "trigger: '%s' where p99, p999, max or count belongs", w);
		return -EINVAL;
	}
	c->stat = (enum rsp_trig_stat)s;
	if (expect_gt(ws, w, err))
		return -EINVAL;
	if (c->stat != RSP_TRIG_COUNT) {
		if (duration(ws, ">", &c->above_ns, err))
			return -EINVAL;
	} else {
		if (want(ws, "a rate such as 100/s", ">", &w, err) || rate(w, &c->above, err))
			return -EINVAL;
	}
	return over(ws, c, err);
}

static int parse_stopwatch(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	const char *w;

	if (want(ws, "a stopwatch's name", "stopwatch", &w, err))
		return -EINVAL;
	if (strlen(w) >= 32) {
		rsp_buf__printf(err, "trigger: '%s' is longer than a stopwatch's name", w);
		return -EINVAL;
	}
	snprintf(c->name, sizeof(c->name), "%s", w);
	if (expect_gt(ws, w, err) || duration(ws, ">", &c->above_ns, err))
		return -EINVAL;
	return end(ws, err);
}

static int parse_offcpu(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	const char *w;
	char num[WORD_LEN];
	size_t len;
	int r;

	if (want(ws, "a PID", "offcpu", &w, err) || number_id(w, "offcpu", &c->id, err))
		return -EINVAL;
	if (want(ws, "a sleep reason such as block_io", w, &w, err))
		return -EINVAL;
	for (r = RSP_SR__NR - 1; r >= 0; r--)
		if (!strcmp(rsp_sleep_reason__name((enum rsp_sleep_reason)r), w))
			break;
	if (r < 0) {
		rsp_buf__printf(err,
				"trigger: unknown sleep reason '%s'; use block_io, network, lock, "
				"poll, pipe, timeout, sleep, preemption, page_fault or unknown",
				w);
		return -EINVAL;
	}
	c->reason = (unsigned)r;
	if (expect_gt(ws, w, err) || want(ws, "a percentage such as 50%", ">", &w, err))
		return -EINVAL;
	len = strlen(w);
	if (len >= 2 && w[len - 1] == '%') {
		memcpy(num, w, len - 1);
		num[len - 1] = '\0';
	}
	if (len < 2 || w[len - 1] != '%' || rsp_parse__decimal(num, 0, 100, &c->above)) {
		rsp_buf__printf(
			err, "trigger: offcpu wants a percentage from 0%% to 100%%, not '%s'", w);
		return -EINVAL;
	}
	return over(ws, c, err);
}

/* lost > N, shed > LEVEL */
static int parse_count(struct words *ws, struct rsp_trig_cond *c, const char *kw,
		       struct rsp_buf *err)
{
	const char *w;
	uint64_t v;

	if (expect_gt(ws, kw, err) || want(ws, "a number", ">", &w, err))
		return -EINVAL;
	if (rsp_parse__u64(w, 0, c->kind == RSP_TRIG_SHED ? 8 : 1ull << 40, &v)) {
		rsp_buf__printf(err, "trigger: %s > wants %s, not '%s'", kw,
				c->kind == RSP_TRIG_SHED ? "a level from 0 to 8" : "a number", w);
		return -EINVAL;
	}
	c->above = (double)v;
	return end(ws, err);
}

static int parse_alert(struct words *ws, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	const char *w = next(ws);

	if (w && strlen(w) >= sizeof(c->name)) {
		rsp_buf__printf(err, "trigger: the alert name '%s' is too long", w);
		return -EINVAL;
	}
	snprintf(c->name, sizeof(c->name), "%s", w ? w : "");
	return end(ws, err);
}

int rsp_trig_cond__parse(const char *text, struct rsp_trig_cond *c, struct rsp_buf *err)
{
	static const char *const kinds[] = {"hist", "stopwatch", "runnable", "offcpu",
					    "lost", "shed",	 "alert"};
	struct words ws;
	const char *w;
	int k;

	memset(c, 0, sizeof(*c));
	if (split(text, &ws, err))
		return -EINVAL;
	w = next(&ws);
	for (k = 0; w && k < RSP_TRIG__NR && strcmp(w, kinds[k]); k++)
		;
	if (!w || k == RSP_TRIG__NR) {
		rsp_buf__printf(err,
				"trigger: the condition %s%s%s; it begins with hist, stopwatch, "
				"runnable, offcpu, lost, shed or alert",
				w ? "begins with '" : "is empty", w ? w : "", w ? "'" : "");
		return -EINVAL;
	}
	c->kind = (enum rsp_trig_kind)k;
	switch (c->kind) {
	case RSP_TRIG_HIST:
		return parse_hist(&ws, c, err);
	case RSP_TRIG_STOPWATCH:
		return parse_stopwatch(&ws, c, err);
	case RSP_TRIG_RUNNABLE:
		c->stat = RSP_TRIG_MAX; /* one wait longer than the duration */
		if (hist_subject(&ws, c, err) || expect_gt(&ws, ws.w[ws.at - 1], err) ||
		    duration(&ws, ">", &c->above_ns, err))
			return -EINVAL;
		return end(&ws, err);
	case RSP_TRIG_OFFCPU:
		return parse_offcpu(&ws, c, err);
	case RSP_TRIG_LOST:
	case RSP_TRIG_SHED:
		return parse_count(&ws, c, w, err);
	default:
		return parse_alert(&ws, c, err);
	}
}

static void fmt_dur(uint64_t ns, char *buf, size_t n)
{
	if (ns % 1000000000ull == 0)
		snprintf(buf, n, "%llus", (unsigned long long)(ns / 1000000000ull));
	else if (ns % 1000000 == 0)
		snprintf(buf, n, "%llums", (unsigned long long)(ns / 1000000));
	else if (ns % 1000 == 0)
		snprintf(buf, n, "%lluus", (unsigned long long)(ns / 1000));
	else
		snprintf(buf, n, "%lluns", (unsigned long long)ns);
}

/*
 * The shortest plain decimal (the parser takes no exponent) that strtod()
 * reads back as @v exactly, so that the canonical form parses back.
 */
static void fmt_num(double v, char *buf, size_t n)
{
	for (int prec = 0; prec <= 40; prec++) {
		snprintf(buf, n, "%.*f", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* " pid N", " tid N", " comm C" or "" (the whole system). */
static void fmt_subject(const struct rsp_trig_cond *c, char *subj, size_t n)
{
	subj[0] = '\0';
	if (c->subject == RSP_TRIG_COMM)
		snprintf(subj, n, " comm %s", c->comm);
	else if (c->subject != RSP_TRIG_SYSTEM)
		snprintf(subj, n, " %s %u", c->subject == RSP_TRIG_PID ? "pid" : "tid", c->id);
}

static void fmt_hist(const struct rsp_trig_cond *c, char *buf, size_t n)
{
	static const char *const stats[] = {"p99", "p999", "max", "count"};
	char subj[48], above[32], over_s[32];

	fmt_subject(c, subj, sizeof(subj));
	if (c->stat == RSP_TRIG_COUNT) {
		fmt_num(c->above, above, sizeof(above) - 2);
		strcat(above, "/s");
	} else
		fmt_dur(c->above_ns, above, sizeof(above));
	fmt_dur(c->over_ns, over_s, sizeof(over_s));
	snprintf(buf, n, "hist %s%s %s > %s over %s", c->op, subj, stats[c->stat], above, over_s);
}

const char *rsp_trig_cond__format(const struct rsp_trig_cond *c, char *buf, size_t n)
{
	char d[32], o[32], pct[32], subj[48];

	fmt_subject(c, subj, sizeof(subj));
	fmt_num(c->above, pct, sizeof(pct));
	fmt_dur(c->above_ns, d, sizeof(d));
	fmt_dur(c->over_ns, o, sizeof(o));
	switch (c->kind) {
	case RSP_TRIG_HIST:
		fmt_hist(c, buf, n);
		break;
	case RSP_TRIG_STOPWATCH:
		snprintf(buf, n, "stopwatch %s > %s", c->name, d);
		break;
	case RSP_TRIG_RUNNABLE:
		snprintf(buf, n, "runnable%s > %s", subj, d);
		break;
	case RSP_TRIG_OFFCPU:
		snprintf(buf, n, "offcpu %u %s > %s%% over %s", c->id,
			 rsp_sleep_reason__name((enum rsp_sleep_reason)c->reason), pct, o);
		break;
	case RSP_TRIG_LOST:
	case RSP_TRIG_SHED:
		snprintf(buf, n, "%s > %.0f", c->kind == RSP_TRIG_LOST ? "lost" : "shed", c->above);
		break;
	default:
		snprintf(buf, n, "alert%s%s", c->name[0] ? " " : "", c->name);
		break;
	}
	return buf;
}

/* --- the spec ------------------------------------------------------------------ */

bool rsp_trig__valid_name(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= RSP_TRIG_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
			return false;
	}
	return true;
}

int rsp_trig_spec__set_action(struct rsp_trig_spec *s, const char *v, struct rsp_buf *err)
{
	uint32_t pid;

	if (!strcmp(v, "dump")) {
		s->action = RSP_TRIG_DUMP;
		return 0;
	}
	if (!strcmp(v, "log")) {
		s->action = RSP_TRIG_LOG;
		return 0;
	}
	if (!strncmp(v, "snapshot:", 9) && !number_id(v + 9, "--action snapshot:", &pid, err)) {
		s->action = RSP_TRIG_SNAPSHOT;
		s->snapshot_pid = pid;
		return 0;
	}
	rsp_buf__reset(err);
	rsp_buf__printf(err, "trigger: --action wants dump, snapshot:PID or log, not '%s'", v);
	return -EINVAL;
}

int rsp_trig_spec__check(const struct rsp_trig_spec *s, struct rsp_buf *err)
{
	if (!rsp_trig__valid_name(s->name)) {
		rsp_buf__printf(err,
				"trigger: a name is 1 to %d letters, digits, '_', '-' or '.', not "
				"'%.40s'",
				RSP_TRIG_NAME_LEN - 1, s->name);
		return -EINVAL;
	}
	if (s->post_ns && s->action != RSP_TRIG_DUMP) {
		rsp_buf__puts(err, "trigger: --post goes with --action dump (the time recorded "
				   "after the trip before the dump is written)");
		return -EINVAL;
	}
	if (s->post_ns > RSP_TRIG_POST_MAX_NS) {
		rsp_buf__puts(err, "trigger: --post is at most 300s (the window must still hold "
				   "the trip when the dump is written)");
		return -EINVAL;
	}
	return 0;
}

/* NAME, then a quoted or bare condition (bare: up to the first " --"). */
static int line_head(const char **p, struct rsp_trig_spec *s, char *cond, struct rsp_buf *err)
{
	size_t len, quoted = 0;

	*p += strspn(*p, " \t");
	len = strcspn(*p, " \t");
	if (!len || len >= sizeof(s->name)) {
		rsp_buf__puts(err, "trigger: the line begins with the trigger's name (at most 31 "
				   "characters), then its condition");
		return -EINVAL;
	}
	memcpy(s->name, *p, len);
	*p += len;
	*p += strspn(*p, " \t");
	if (**p == '\'' || **p == '"') {
		const char *close = strchr(*p + 1, **p);

		if (!close) {
			rsp_buf__printf(err, "trigger %s: the condition's quote %c is not closed",
					s->name, **p);
			return -EINVAL;
		}
		len = (size_t)(close - *p - 1);
		(*p)++;
		quoted = 1;
	} else {
		const char *opt = strstr(*p, " --");

		len = opt ? (size_t)(opt - *p) : strlen(*p);
	}
	if (len >= RSP_TRIG_COND_LEN) {
		rsp_buf__printf(err, "trigger %s: the condition is longer than %d characters",
				s->name, RSP_TRIG_COND_LEN - 1);
		return -EINVAL;
	}
	memcpy(cond, *p, len);
	cond[len] = '\0';
	*p += len + quoted;
	return 0;
}

/* --action A, --post D, --holdoff D (also --name=value). */
static int line_option(struct rsp_trig_spec *s, const char *opt, const char *val,
		       struct rsp_buf *err)
{
	uint64_t ns;

	if (!strcmp(opt, "--action"))
		return rsp_trig_spec__set_action(s, val, err);
	if (strcmp(opt, "--post") && strcmp(opt, "--holdoff")) {
		rsp_buf__printf(
			err, "trigger %s: unknown option '%s'; use --action, --post or --holdoff",
			s->name, opt);
		return -EINVAL;
	}
	if (rsp_parse__duration(val, &ns)) {
		rsp_buf__printf(err, "trigger %s: %s wants a duration such as 5s, not '%s'",
				s->name, opt, val);
		return -EINVAL;
	}
	*(opt[2] == 'p' ? &s->post_ns : &s->holdoff_ns) = ns;
	return 0;
}

static int line_options(const char *p, struct rsp_trig_spec *s, struct rsp_buf *err)
{
	struct words ws;

	if (split(p, &ws, err))
		return -EINVAL;
	while (ws.at < ws.n) {
		char opt[WORD_LEN];
		const char *val, *eq;

		snprintf(opt, sizeof(opt), "%s", next(&ws));
		eq = strchr(opt, '=');
		if (eq) {
			opt[eq - opt] = '\0';
			val = eq + 1;
		} else if (!(val = next(&ws))) {
			rsp_buf__printf(err, "trigger %s: %s wants a value", s->name, opt);
			return -EINVAL;
		}
		if (line_option(s, opt, val, err))
			return -EINVAL;
	}
	return 0;
}

int rsp_trig_spec__parse_line(const char *line, struct rsp_trig_spec *s, struct rsp_buf *err)
{
	char cond[RSP_TRIG_COND_LEN];
	const char *p = line;

	memset(s, 0, sizeof(*s));
	s->holdoff_ns = RSP_TRIG_HOLDOFF_DEFAULT_NS;
	if (line_head(&p, s, cond, err) || line_options(p, s, err))
		return -EINVAL;
	if (rsp_trig_cond__parse(cond, &s->cond, err))
		return -EINVAL;
	rsp_trig_cond__format(&s->cond, s->cond_text, sizeof(s->cond_text));
	return rsp_trig_spec__check(s, err);
}
