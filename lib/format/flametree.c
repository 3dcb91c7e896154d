// SPDX-License-Identifier: LGPL-2.1
/*
 * Folded stacks to a flame tree (rsp/flametree.h): the tree a flame graph
 * renderer draws, bounded by a frame budget, each frame with the kind of
 * the time under it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/flametree.h>

#define NONE UINT32_MAX
/* A weight JavaScript reads exactly (2^53): the tree is drawn by a browser. */
#define MAX_WEIGHT (1ull << 53)

struct fnode {
	size_t name; /* offset in names */
	size_t name_len;
	uint64_t total;
	uint64_t kinds[RSP_FK__NR];
	uint32_t first_child, last_child, next_sibling;
};

struct rsp_flametree {
	struct fnode *nodes;
	size_t nr, max;
	struct rsp_buf names;
	struct rsp_flametree_stats st;
};

struct line {
	const char *frames;
	size_t len;
	uint64_t w;
};

static const char *const kind_names[RSP_FK__NR] = {
	[RSP_FK_RUNNING] = "running",	[RSP_FK_RUNNABLE] = "runnable",
	[RSP_FK_BLOCK_IO] = "block_io", [RSP_FK_NETWORK] = "network",
	[RSP_FK_LOCK] = "lock",		[RSP_FK_TIMER] = "timer",
	[RSP_FK_OTHER] = "other",	[RSP_FK_UNKNOWN] = "unknown",
	[RSP_FK_LEFT_OUT] = "left_out", [RSP_FK_MIXED] = "mixed",
};

const char *rsp_flame_kind__name(enum rsp_flame_kind k)
{
	return (unsigned)k < RSP_FK__NR ? kind_names[k] : "unknown";
}

static uint32_t add_node(struct rsp_flametree *t, const char *name, size_t len)
{
	struct fnode *n = &t->nodes[t->nr];

	memset(n, 0, sizeof(*n));
	n->name = t->names.len;
	n->name_len = len;
	n->first_child = n->last_child = n->next_sibling = NONE;
	if (rsp_buf__add(&t->names, name, len))
		return NONE;
	return (uint32_t)t->nr++;
}

struct rsp_flametree *rsp_flametree__new(const char *root_name, size_t max_frames)
{
	struct rsp_flametree *t = calloc(1, sizeof(*t));

	if (max_frames < 2)
		max_frames = 2;
	if (!t || !(t->nodes = calloc(max_frames, sizeof(*t->nodes))) ||
	    add_node(t, root_name, strlen(root_name)) == NONE) {
		rsp_flametree__delete(t);
		return NULL;
	}
	t->max = max_frames;
	return t;
}

void rsp_flametree__delete(struct rsp_flametree *t)
{
	if (!t)
		return;
	free(t->nodes);
	rsp_buf__exit(&t->names);
	free(t);
}

static bool frame_is(const char *f, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(f, s, len);
}

static bool frame_starts(const char *f, size_t len, const char *s)
{
	return len >= strlen(s) && !memcmp(f, s, strlen(s));
}

/* A sleep's reason (rsp_sleep_reason__name()) as a kind of time. */
static enum rsp_flame_kind reason_kind(const char *r, size_t len)
{
	if (frame_is(r, len, "block_io"))
		return RSP_FK_BLOCK_IO;
	if (frame_is(r, len, "network"))
		return RSP_FK_NETWORK;
	if (frame_is(r, len, "lock"))
		return RSP_FK_LOCK;
	if (frame_is(r, len, "timeout") || frame_is(r, len, "sleep"))
		return RSP_FK_TIMER;
	if (frame_is(r, len, "preemption"))
		return RSP_FK_RUNNABLE;
	if (frame_is(r, len, "unknown"))
		return RSP_FK_UNKNOWN;
	return RSP_FK_OTHER; /* poll, pipe, page_fault */
}

/*
 * The innermost frame says what the time was: a function (a sample's stack:
 * running), a marker of the snapshot's own ([running], [runnable],
 * [unknown]), or a marker under a sleep ([other path: ...], a queue, a
 * waker), whose kind is the innermost sleep's reason. A sample without a
 * stack is "[unknown]" in the folded text, like time the window does not
 * know: both are unknown here.
 */
enum rsp_flame_kind rsp_flametree__kind_of(const char *frames, size_t len)
{
	const char *last = frames, *sleep = NULL, *end = frames + len;
	size_t last_len = 0, sleep_len = 0;

	for (const char *p = frames; p <= end;) {
		const char *q = memchr(p, ';', (size_t)(end - p));

		if (!q)
			q = end;
		last = p, last_len = (size_t)(q - p);
		if (frame_starts(last, last_len, "[sleep:") && last[last_len - 1] == ']')
			sleep = last + 7, sleep_len = last_len - 8;
		p = q + 1;
	}
	if (!last_len || last[0] != '[')
		return RSP_FK_RUNNING;
	if (frame_is(last, last_len, "[running]") || frame_starts(last, last_len, "[running,"))
		return RSP_FK_RUNNING;
	if (frame_is(last, last_len, "[runnable]") || frame_is(last, last_len, "[preempted]"))
		return RSP_FK_RUNNABLE;
	if (frame_is(last, last_len, "[unknown]"))
		return RSP_FK_UNKNOWN;
	return sleep ? reason_kind(sleep, sleep_len) : RSP_FK_OTHER;
}

static uint32_t find_child(const struct rsp_flametree *t, uint32_t parent, const char *f,
			   size_t len)
{
	for (uint32_t c = t->nodes[parent].first_child; c != NONE; c = t->nodes[c].next_sibling) {
		const struct fnode *n = &t->nodes[c];

		if (n->name_len == len && !memcmp(t->names.data + n->name, f, len))
			return c;
	}
	return NONE;
}

static uint32_t add_child(struct rsp_flametree *t, uint32_t parent, const char *f, size_t len)
{
	uint32_t c = add_node(t, f, len);
	struct fnode *p = &t->nodes[parent];

	if (c == NONE)
		return NONE;
	if (p->last_child == NONE)
		p->first_child = c;
	else
		t->nodes[p->last_child].next_sibling = c;
	p->last_child = c;
	return c;
}

/* Frames the line needs that the tree does not have yet. */
static size_t new_frames(const struct rsp_flametree *t, const struct line *l)
{
	const char *p = l->frames, *end = l->frames + l->len;
	uint32_t at = 0;
	size_t need = 0;

	while (l->len && p <= end) {
		const char *q = memchr(p, ';', (size_t)(end - p));

		if (!q)
			q = end;
		if (at != NONE)
			at = find_child(t, at, p, (size_t)(q - p));
		need += at == NONE;
		p = q + 1;
	}
	return need;
}

/* Sums saturate at JSON's largest integer: no input wraps a total around. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	const uint64_t max = (uint64_t)INT64_MAX;

	return a > max || b > max - a ? max : a + b;
}

static void credit(struct fnode *n, enum rsp_flame_kind k, uint64_t w)
{
	n->total = add_sat(n->total, w);
	n->kinds[k] = add_sat(n->kinds[k], w);
}

static int insert(struct rsp_flametree *t, const struct line *l)
{
	const char *p = l->frames, *end = l->frames + l->len;
	enum rsp_flame_kind k = rsp_flametree__kind_of(l->frames, l->len);
	uint32_t at = 0;

	/* one frame stays free for what the budget leaves out */
	if (t->nr + new_frames(t, l) >= t->max) {
		t->st.stacks_left_out++;
		t->st.left_out = add_sat(t->st.left_out, l->w);
		return 0;
	}
	credit(&t->nodes[0], k, l->w);
	while (l->len && p <= end) {
		const char *q = memchr(p, ';', (size_t)(end - p));
		uint32_t c;

		if (!q)
			q = end;
		c = find_child(t, at, p, (size_t)(q - p));
		if (c == NONE && (c = add_child(t, at, p, (size_t)(q - p))) == NONE)
			return -ENOMEM;
		credit(&t->nodes[c], k, l->w);
		at = c;
		p = q + 1;
	}
	return 0;
}

/* "frames weight": 0 and the line, or -EINVAL. */
static int parse_line(const char *s, size_t len, struct line *l)
{
	size_t sp = len;
	uint64_t w = 0;

	while (sp && s[sp - 1] != ' ')
		sp--;
	if (!sp || sp == len)
		return -EINVAL;
	for (size_t i = sp; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || w > MAX_WEIGHT / 10)
			return -EINVAL;
		w = w * 10 + (uint64_t)(s[i] - '0');
	}
	if (w > MAX_WEIGHT)
		return -EINVAL;
	*l = (struct line){s, sp - 1, w};
	return 0;
}

/* Heaviest first; equal weights in text order, so the same input gives the same tree. */
static int by_weight(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	c = memcmp(x->frames, y->frames, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int read_lines(const char *text, size_t len, struct line **out, size_t *nr,
		      struct rsp_buf *err)
{
	struct line *v = NULL;
	size_t n = 0, cap = 0, lineno = 0;

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		lineno++;
		if (end > pos) {
			if (n == cap) {
				struct line *g =
					realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

				if (!g) {
					free(v);
					return -ENOMEM;
				}
				v = g;
			}
			if (parse_line(text + pos, end - pos, &v[n])) {
				rsp_buf__printf(err,
						"folded stacks: line %zu has no weight at its "
						"end ('frame;frame COUNT' expected, COUNT up to "
						"2^53)",
						lineno);
				free(v);
				return -EINVAL;
			}
			n++;
		}
		pos = end + 1;
	}
	*out = v;
	*nr = n;
	return 0;
}

int rsp_flametree__add_folded(struct rsp_flametree *t, const char *text, size_t len,
			      struct rsp_buf *err)
{
	struct line *v = NULL;
	size_t n = 0;
	int ret = read_lines(text, len, &v, &n, err);

	if (ret)
		return ret;
	if (n)
		qsort(v, n, sizeof(*v), by_weight);
	for (size_t i = 0; i < n && !ret; i++) {
		t->st.stacks++;
		t->st.total = add_sat(t->st.total, v[i].w);
		ret = insert(t, &v[i]);
	}
	free(v);
	return ret;
}

/* A name as a JSON string; bytes that are not UTF-8 become '?' (a comm may hold any). */
static json_t *jname(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	char *copy;

	if (j)
		return j;
	copy = malloc(len + 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < len; i++)
		copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	j = json_stringn(copy, len);
	free(copy);
	return j;
}

/* The kind of two thirds of a frame's time or more; "mixed" when none holds that much. */
static enum rsp_flame_kind main_kind(const uint64_t *kinds, uint64_t total)
{
	int best = RSP_FK_UNKNOWN;

	for (int k = 0; k < RSP_FK__NR; k++)
		if (kinds[k] > kinds[best])
			best = k;
	if (total && kinds[best] < total - total / 3)
		return RSP_FK_MIXED;
	return (enum rsp_flame_kind)best;
}

static json_t *jframe(json_t *name, uint64_t value, enum rsp_flame_kind k)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", name);
	json_object_set_new(o, "value", json_integer((json_int_t)value));
	json_object_set_new(o, "kind", json_string(rsp_flame_kind__name(k)));
	return o;
}

static json_t *jnode(const struct rsp_flametree *t, uint32_t i)
{
	const struct fnode *n = &t->nodes[i];
	json_t *o = jframe(jname(t->names.data + n->name, n->name_len), n->total,
			   main_kind(n->kinds, n->total)),
	       *kids = json_array();

	for (uint32_t c = n->first_child; c != NONE; c = t->nodes[c].next_sibling)
		json_array_append_new(kids, jnode(t, c));
	json_object_set_new(o, "children", kids);
	return o;
}

int rsp_flametree__render_json(const struct rsp_flametree *t, struct rsp_buf *out)
{
	json_t *root = jnode(t, 0);
	char *text;
	int ret = -ENOMEM;

	if (root && t->st.left_out) {
		char name[96];
		json_t *kids = json_object_get(root, "children");

		snprintf(name, sizeof(name), "[%zu lighter stacks left out]",
			 t->st.stacks_left_out);
		json_array_append_new(kids,
				      jframe(json_string(name), t->st.left_out, RSP_FK_LEFT_OUT));
		json_object_set_new(
			root, "value",
			json_integer((json_int_t)add_sat(t->nodes[0].total, t->st.left_out)));
	}
	text = root ? json_dumps(root, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_PRESERVE_ORDER)
		    : NULL;
	if (text)
		ret = rsp_buf__puts(out, text);
	free(text);
	json_decref(root);
	return ret;
}

void rsp_flametree__stats(const struct rsp_flametree *t, struct rsp_flametree_stats *st)
{
	*st = t->st;
	st->frames = t->nr + (t->st.left_out ? 1 : 0);
}
