// SPDX-License-Identifier: LGPL-2.1
/*
 * pprof's profile.proto: see internal/pprof.h. The tables (strings,
 * mappings, functions, locations, samples) are kept compact while the
 * caller adds to them; rsp_pprof__finish() points protobuf-c's messages at
 * them (no copy of the samples' locations or values), packs, and gzips.
 * protobuf-c does the encoding from the vendored profile.proto
 * (lib/format/proto/pprof/), zlib the gzip the format asks for.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "internal/hash.h"
#include "internal/pprof.h"
#include "internal/vec.h"
#include "pprof/profile.pb-c.h"

/* Room for @need items of *@arr: 0, or w->err (-ENOMEM, or an earlier failure). */
static int grow(struct rsp_pprof *w, void **arr, size_t *cap, size_t need, size_t size)
{
	if (!w->err && rsp_vec__reserve(arr, cap, need, size))
		w->err = -ENOMEM;
	return w->err;
}

/* Record an allocation failure; 0, the "none" of indexes and ids. */
static int nomem(struct rsp_pprof *w)
{
	w->err = -ENOMEM;
	return 0;
}

#define GROW(w, arr, cap, need) grow((w), (void **)&(w)->arr, &(w)->cap, (need), sizeof(*(w)->arr))

/* Index of string @s in the table (added on first use); 0 ("") on failure. */
static int64_t str(struct rsp_pprof *w, const char *s)
{
	uint64_t h = rsp_hash__key(rsp_hash__bytes(RSP_HASH_INIT, s, strlen(s)));
	bool mapped = true;
	uint32_t i;
	char *copy;

	if (w->err)
		return 0;
	if (!rsp_u64map__get(&w->str_of, h, &i)) {
		if (!strcmp(w->strs[i], s))
			return i;
		mapped = false; /* a hash collision: a string of its own, found by the first only */
	}
	copy = strdup(s);
	if (!copy || w->nr_strs >= INT32_MAX || GROW(w, strs, cap_strs, w->nr_strs + 1)) {
		free(copy);
		return nomem(w);
	}
	i = (uint32_t)w->nr_strs++;
	w->strs[i] = copy;
	if (mapped && rsp_u64map__put(&w->str_of, h, i))
		return nomem(w);
	return i;
}

void rsp_pprof__init(struct rsp_pprof *w, const struct rsp_pprof_type *types, size_t n)
{
	memset(w, 0, sizeof(*w));
	rsp_u64map__init(&w->str_of);
	rsp_u64map__init(&w->map_of);
	rsp_u64map__init(&w->func_of);
	rsp_u64map__init(&w->loc_of);
	rsp_u64map__init(&w->sample_of);
	str(w, ""); /* string_table[0] must be "" */
	w->ntypes = n < RSP_PPROF_VALUES ? n : RSP_PPROF_VALUES;
	for (size_t i = 0; i < w->ntypes; i++) {
		w->types[i][0] = str(w, types[i].type);
		w->types[i][1] = str(w, types[i].unit);
	}
}

void rsp_pprof__exit(struct rsp_pprof *w)
{
	for (size_t i = 0; i < w->nr_strs; i++)
		free(w->strs[i]);
	free(w->strs);
	free(w->maps);
	free(w->funcs);
	free(w->locs_tab);
	free(w->samples);
	free(w->locs);
	free(w->labs);
	rsp_u64map__exit(&w->str_of);
	rsp_u64map__exit(&w->map_of);
	rsp_u64map__exit(&w->func_of);
	rsp_u64map__exit(&w->loc_of);
	rsp_u64map__exit(&w->sample_of);
	memset(w, 0, sizeof(*w));
}

/* The build-id as the hex string pprof's readers show and match. */
static int64_t build_id(struct rsp_pprof *w, const uint8_t *id, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char s[2 * 64 + 1];
	size_t k = 0;

	for (size_t i = 0; i < n && i < 64; i++) {
		s[k++] = hex[id[i] >> 4];
		s[k++] = hex[id[i] & 15];
	}
	s[k] = '\0';
	return str(w, s);
}

/*
 * The mapping id of @f's object: one per file, spanning the addresses seen
 * in it (processes map a library at different places; the functions are
 * named here, so readers need the mapping only to tell objects apart).
 */
static uint64_t mapping(struct rsp_pprof *w, const struct rsp_pprof_frame *f)
{
	int64_t file = str(w, f->object);
	struct rsp_pprof_mapping *m;
	uint32_t i;

	if (w->err)
		return 0;
	if (rsp_u64map__get(&w->map_of, (uint64_t)file, &i)) {
		if (GROW(w, maps, cap_maps, w->nr_maps + 1))
			return 0;
		i = (uint32_t)w->nr_maps++;
		w->maps[i] = (struct rsp_pprof_mapping){
			.start = f->addr, .limit = f->addr + 1, .file = file};
		if (rsp_u64map__put(&w->map_of, (uint64_t)file, i))
			return nomem(w);
	}
	m = &w->maps[i];
	if (f->addr && (f->addr < m->start || !m->start))
		m->start = f->addr;
	if (f->addr >= m->limit)
		m->limit = f->addr + 1;
	if (!m->build_id && f->build_id_size)
		m->build_id = build_id(w, f->build_id, f->build_id_size);
	return w->err ? 0 : i + 1;
}

static uint64_t function(struct rsp_pprof *w, const struct rsp_pprof_frame *f)
{
	struct rsp_pprof_func fn = {.name = str(w, f->function ? f->function : "[unknown]"),
				    .file = f->object ? str(w, f->object) : 0};
	/* exact: string indexes are below 2^31, so name << 32 | file is the pair itself */
	uint64_t h = (uint64_t)fn.name << 32 | (uint64_t)fn.file;
	uint32_t i;

	if (w->err)
		return 0;
	if (!rsp_u64map__get(&w->func_of, h, &i))
		return i + 1;
	if (GROW(w, funcs, cap_funcs, w->nr_funcs + 1))
		return 0;
	i = (uint32_t)w->nr_funcs++;
	w->funcs[i] = fn;
	if (rsp_u64map__put(&w->func_of, h, i))
		return nomem(w);
	return i + 1;
}

uint64_t rsp_pprof__location(struct rsp_pprof *w, const struct rsp_pprof_frame *f)
{
	struct rsp_pprof_loc l = {.mapping = f->object ? mapping(w, f) : 0,
				  .addr = f->addr,
				  .function = function(w, f)};
	uint64_t h = rsp_hash__key(rsp_hash__mix(rsp_hash__u64(
		rsp_hash__u64(rsp_hash__u64(RSP_HASH_INIT, l.mapping), l.addr), l.function)));
	bool mapped = true;
	uint32_t i;

	if (w->err)
		return 0;
	if (!rsp_u64map__get(&w->loc_of, h, &i)) {
		if (!memcmp(&w->locs_tab[i], &l, sizeof(l)))
			return i + 1;
		mapped = false; /* a collision: its own location, found by the first only */
	}
	if (GROW(w, locs_tab, cap_locs_tab, w->nr_locs_tab + 1))
		return 0;
	i = (uint32_t)w->nr_locs_tab++;
	w->locs_tab[i] = l;
	if (mapped && rsp_u64map__put(&w->loc_of, h, i))
		return nomem(w);
	return i + 1;
}

/* Whether sample @s has exactly these locations and labels. */
static bool same_sample(const struct rsp_pprof *w, const struct rsp_pprof_sample *s,
			const uint64_t *locs, size_t n, const struct rsp_pprof_lab *labs, size_t nl)
{
	return s->nloc == n && s->nlab == nl &&
	       (!n || !memcmp(&w->locs[s->loc], locs, n * sizeof(*locs))) &&
	       (!nl || !memcmp(&w->labs[s->lab], labs, nl * sizeof(*labs)));
}

/* The sample's labels as string indexes, into @out (room for @n). */
static void intern_labels(struct rsp_pprof *w, const struct rsp_pprof_label *in, size_t n,
			  struct rsp_pprof_lab *out)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct rsp_pprof_lab){.key = str(w, in[i].key)};
		if (in[i].str) {
			out[i].str = str(w, in[i].str);
		} else {
			out[i].num = in[i].num;
			out[i].unit = in[i].unit && in[i].unit[0] ? str(w, in[i].unit) : 0;
		}
	}
}

static void new_sample(struct rsp_pprof *w, uint64_t h, bool mapped, const uint64_t *locs, size_t n,
		       const struct rsp_pprof_lab *labs, size_t nl, const int64_t *values)
{
	struct rsp_pprof_sample *s;

	if (n > UINT32_MAX - w->nr_locs || nl > UINT32_MAX - w->nr_labs ||
	    GROW(w, samples, cap_samples, w->nr_samples + 1) ||
	    GROW(w, locs, cap_locs, w->nr_locs + n) || GROW(w, labs, cap_labs, w->nr_labs + nl)) {
		w->err = -ENOMEM;
		return;
	}
	s = &w->samples[w->nr_samples];
	*s = (struct rsp_pprof_sample){.loc = (uint32_t)w->nr_locs,
				       .nloc = (uint32_t)n,
				       .lab = (uint32_t)w->nr_labs,
				       .nlab = (uint32_t)nl};
	if (n) /* the arrays are NULL until a sample has locations, labels */
		memcpy(&w->locs[w->nr_locs], locs, n * sizeof(*locs));
	if (nl)
		memcpy(&w->labs[w->nr_labs], labs, nl * sizeof(*labs));
	memcpy(s->v, values, w->ntypes * sizeof(*values));
	w->nr_locs += n;
	w->nr_labs += nl;
	if (mapped && rsp_u64map__put(&w->sample_of, h, (uint32_t)w->nr_samples))
		w->err = -ENOMEM;
	w->nr_samples++;
}

#define MAX_LABELS 16

void rsp_pprof__sample(struct rsp_pprof *w, const uint64_t *locs, size_t n, const int64_t *values,
		       const struct rsp_pprof_label *labels, size_t nlabels)
{
	struct rsp_pprof_lab labs[MAX_LABELS];
	uint64_t h = RSP_HASH_INIT;
	bool mapped = true;
	uint32_t i;

	nlabels = nlabels < MAX_LABELS ? nlabels : MAX_LABELS;
	intern_labels(w, labels, nlabels, labs);
	for (size_t k = 0; k < n; k++) {
		if (!locs[k])
			return; /* a location that failed: w->err says so */
		h = rsp_hash__u64(h, locs[k]);
	}
	h = rsp_hash__key(rsp_hash__mix(rsp_hash__bytes(h, labs, nlabels * sizeof(*labs))));
	if (w->err)
		return;
	if (!rsp_u64map__get(&w->sample_of, h, &i)) {
		if (same_sample(w, &w->samples[i], locs, n, labs, nlabels)) {
			for (size_t k = 0; k < w->ntypes; k++)
				w->samples[i].v[k] += values[k];
			return;
		}
		mapped = false;
	}
	new_sample(w, h, mapped, locs, n, labs, nlabels, values);
}

/* ---- the message ---------------------------------------------------------- */

/*
 * protobuf-c's messages over the tables: arrays of messages and of
 * pointers to them, in one block per kind, freed by free_msg().
 */
struct msg {
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType vt[RSP_PPROF_VALUES], *vtp[RSP_PPROF_VALUES], period_type;
	Perftools__Profiles__Sample *s, **sp;
	Perftools__Profiles__Label *l, **lp;
	Perftools__Profiles__Mapping *m, **mp;
	Perftools__Profiles__Location *loc, **locp;
	Perftools__Profiles__Line *line, **linep;
	Perftools__Profiles__Function *f, **fp;
	int64_t comment;
};

static void free_msg(struct msg *m)
{
	free(m->s), free(m->sp), free(m->l), free(m->lp), free(m->m), free(m->mp);
	free(m->loc), free(m->locp), free(m->line), free(m->linep), free(m->f), free(m->fp);
}

/* calloc of @n items of @a and of @n pointers to them (1 at least: malloc(0) may be NULL). */
static bool alloc2(void **a, void **p, size_t n, size_t size)
{
	*a = calloc(n ? n : 1, size);
	*p = calloc(n ? n : 1, sizeof(void *));
	return *a && *p;
}

static void build_samples(struct rsp_pprof *w, struct msg *m)
{
	for (size_t i = 0; i < w->nr_labs; i++) {
		perftools__profiles__label__init(&m->l[i]);
		m->l[i].key = w->labs[i].key;
		m->l[i].str = w->labs[i].str;
		m->l[i].num = w->labs[i].num;
		m->l[i].num_unit = w->labs[i].unit;
		m->lp[i] = &m->l[i];
	}
	for (size_t i = 0; i < w->nr_samples; i++) {
		struct rsp_pprof_sample *s = &w->samples[i];

		perftools__profiles__sample__init(&m->s[i]);
		m->s[i].n_location_id = s->nloc;
		m->s[i].location_id = s->nloc ? &w->locs[s->loc] : NULL;
		m->s[i].n_value = w->ntypes;
		m->s[i].value = s->v;
		m->s[i].n_label = s->nlab;
		m->s[i].label = &m->lp[s->lab];
		m->sp[i] = &m->s[i];
	}
}

static void build_tables(struct rsp_pprof *w, struct msg *m)
{
	for (size_t i = 0; i < w->nr_maps; i++) {
		perftools__profiles__mapping__init(&m->m[i]);
		m->m[i].id = i + 1;
		m->m[i].memory_start = w->maps[i].start;
		m->m[i].memory_limit = w->maps[i].limit;
		m->m[i].filename = w->maps[i].file;
		m->m[i].build_id = w->maps[i].build_id;
		m->m[i].has_functions = true; /* named here: readers must not look them up */
		m->mp[i] = &m->m[i];
	}
	for (size_t i = 0; i < w->nr_funcs; i++) {
		perftools__profiles__function__init(&m->f[i]);
		m->f[i].id = i + 1;
		m->f[i].name = m->f[i].system_name = w->funcs[i].name;
		m->f[i].filename = w->funcs[i].file;
		m->fp[i] = &m->f[i];
	}
	for (size_t i = 0; i < w->nr_locs_tab; i++) {
		perftools__profiles__location__init(&m->loc[i]);
		perftools__profiles__line__init(&m->line[i]);
		m->line[i].function_id = w->locs_tab[i].function;
		m->linep[i] = &m->line[i];
		m->loc[i].id = i + 1;
		m->loc[i].mapping_id = w->locs_tab[i].mapping;
		m->loc[i].address = w->locs_tab[i].addr;
		m->loc[i].n_line = 1;
		m->loc[i].line = &m->linep[i];
		m->locp[i] = &m->loc[i];
	}
}

static void build_head(struct rsp_pprof *w, const struct rsp_pprof_meta *meta, struct msg *m)
{
	Perftools__Profiles__Profile *p = &m->p;

	for (size_t i = 0; i < w->ntypes; i++) {
		perftools__profiles__value_type__init(&m->vt[i]);
		m->vt[i].type = w->types[i][0];
		m->vt[i].unit = w->types[i][1];
		m->vtp[i] = &m->vt[i];
	}
	p->n_sample_type = w->ntypes;
	p->sample_type = m->vtp;
	if (meta->period_type.type) {
		perftools__profiles__value_type__init(&m->period_type);
		m->period_type.type = str(w, meta->period_type.type);
		m->period_type.unit = str(w, meta->period_type.unit);
		p->period_type = &m->period_type;
		p->period = meta->period;
	}
	if (meta->comment) {
		m->comment = str(w, meta->comment);
		p->n_comment = 1;
		p->comment = &m->comment;
	}
	p->time_nanos = meta->time_nanos;
	p->duration_nanos = meta->duration_nanos;
	if (meta->default_type)
		p->default_sample_type = str(w, meta->default_type);
}

static int build(struct rsp_pprof *w, const struct rsp_pprof_meta *meta, struct msg *m)
{
	Perftools__Profiles__Profile *p = &m->p;

	perftools__profiles__profile__init(p);
	build_head(w, meta, m); /* first: it may add strings */
	if (w->err)
		return w->err;
	if (!alloc2((void **)&m->s, (void **)&m->sp, w->nr_samples, sizeof(*m->s)) ||
	    !alloc2((void **)&m->l, (void **)&m->lp, w->nr_labs, sizeof(*m->l)) ||
	    !alloc2((void **)&m->m, (void **)&m->mp, w->nr_maps, sizeof(*m->m)) ||
	    !alloc2((void **)&m->loc, (void **)&m->locp, w->nr_locs_tab, sizeof(*m->loc)) ||
	    !alloc2((void **)&m->line, (void **)&m->linep, w->nr_locs_tab, sizeof(*m->line)) ||
	    !alloc2((void **)&m->f, (void **)&m->fp, w->nr_funcs, sizeof(*m->f)))
		return -ENOMEM;
	build_samples(w, m);
	build_tables(w, m);
	p->n_sample = w->nr_samples, p->sample = m->sp;
	p->n_mapping = w->nr_maps, p->mapping = m->mp;
	p->n_location = w->nr_locs_tab, p->location = m->locp;
	p->n_function = w->nr_funcs, p->function = m->fp;
	p->n_string_table = w->nr_strs, p->string_table = w->strs;
	return 0;
}

/* @in as a gzip member (what pprof's readers expect on disk and on the wire), onto @out. */
static int gzip(const uint8_t *in, size_t n, struct rsp_buf *out)
{
	z_stream z = {0};
	uLong bound;
	int ret;

	/* 15 + 16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)n);
	if (n > UINT32_MAX || rsp_buf__reserve(out, bound + 1)) {
		deflateEnd(&z);
		return n > UINT32_MAX ? -E2BIG : -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out->data + out->len;
	z.avail_out = (uInt)bound;
	ret = deflate(&z, Z_FINISH);
	if (ret == Z_STREAM_END)
		out->len += z.total_out;
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -ENOMEM;
}

int rsp_pprof__finish(struct rsp_pprof *w, const struct rsp_pprof_meta *meta, struct rsp_buf *out)
{
	struct msg m = {0};
	uint8_t *packed = NULL;
	size_t n = 0;
	int ret = build(w, meta, &m);

	if (!ret) {
		n = perftools__profiles__profile__get_packed_size(&m.p);
		packed = malloc(n ? n : 1);
		ret = packed ? 0 : -ENOMEM;
	}
	if (!ret && perftools__profiles__profile__pack(&m.p, packed) != n)
		ret = -EIO; /* protobuf-c disagreeing with itself */
	if (!ret)
		ret = gzip(packed, n, out);
	free(packed);
	free_msg(&m);
	rsp_pprof__exit(w);
	return ret;
}
