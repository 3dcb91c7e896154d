/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_PPROF_H
#define RSP_INTERNAL_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>
#include "internal/u64map.h"

/*
 * A writer of pprof's profile.proto (lib/format/pprof.c): the format
 * go tool pprof, Pyroscope and Parca read. The caller turns its frames
 * into locations (each frame's function, object and address: functions,
 * mappings and locations are shared by value), then adds samples (their
 * locations leaf first, one value per sample type, labels); samples with
 * the same locations and labels are one sample whose values are summed.
 * The file is the Profile message packed by protobuf-c and gzip-compressed
 * (zlib). Bounded by what the caller adds. Every call after an allocation
 * failure does nothing; rsp_pprof__finish() returns that failure.
 *
 *	struct rsp_pprof w;
 *	rsp_pprof__init(&w, types, 2);     {"wait","nanoseconds"}, {"cpu",...}
 *	loc[0] = rsp_pprof__location(&w, &frame); ...
 *	rsp_pprof__sample(&w, loc, n, values, labels, nl); ...
 *	rsp_pprof__finish(&w, &meta, out);  (also frees)
 */
#define RSP_PPROF_VALUES 2 /* sample types at most */

struct rsp_pprof_type {
	const char *type, *unit; /* "cpu", "nanoseconds" */
};

/* A frame as the caller knows it. */
struct rsp_pprof_frame {
	const char *function; /* its name; NULL: "[unknown]" */
	const char *object;   /* the file, "[kernel.kallsyms]", ...; NULL: none (a marker) */
	uint64_t addr;	      /* the address in the process; 0: none */
	const uint8_t *build_id;
	size_t build_id_size; /* 0: not known */
};

/* A label: a string (@str) or a number (@num in @unit, "" for none). */
struct rsp_pprof_label {
	const char *key;
	const char *str; /* NULL: the label is @num */
	int64_t num;
	const char *unit;
};

/* What the Profile says of itself. */
struct rsp_pprof_meta {
	int64_t time_nanos, duration_nanos; /* 0: not known */
	struct rsp_pprof_type period_type;  /* NULL type: none */
	int64_t period;
	const char *comment;	  /* NULL: none */
	const char *default_type; /* the sample type readers show first; NULL: the last */
};

struct rsp_pprof_sample {
	uint32_t loc, nloc; /* into locs */
	uint32_t lab, nlab; /* into labs */
	int64_t v[RSP_PPROF_VALUES];
};

struct rsp_pprof_lab {
	int64_t key, str, num, unit; /* string indexes, or num */
};

struct rsp_pprof_mapping {
	uint64_t start, limit; /* the addresses seen in it */
	int64_t file, build_id;
};

struct rsp_pprof_loc {
	uint64_t mapping, addr, function; /* ids: index + 1; mapping 0: none */
};

struct rsp_pprof_func {
	int64_t name, file;
};

struct rsp_pprof {
	size_t ntypes;
	int64_t types[RSP_PPROF_VALUES][2];
	char **strs;
	size_t nr_strs, cap_strs;
	struct rsp_u64map str_of; /* string hash -> index */
	struct rsp_pprof_mapping *maps;
	size_t nr_maps, cap_maps;
	struct rsp_u64map map_of; /* filename index -> index */
	struct rsp_pprof_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct rsp_u64map func_of; /* hash -> index */
	struct rsp_pprof_loc *locs_tab;
	size_t nr_locs_tab, cap_locs_tab;
	struct rsp_u64map loc_of; /* hash -> index */
	struct rsp_pprof_sample *samples;
	size_t nr_samples, cap_samples;
	struct rsp_u64map sample_of; /* hash -> index */
	uint64_t *locs;		     /* the samples' location ids */
	size_t nr_locs, cap_locs;
	struct rsp_pprof_lab *labs; /* the samples' labels */
	size_t nr_labs, cap_labs;
	int err;
};

/** Begin a profile of @n (1 or 2) sample types (the strings must outlive the call only). */
void rsp_pprof__init(struct rsp_pprof *w, const struct rsp_pprof_type *types, size_t n);
/** The location id (nonzero) of @f, added on first use; 0 after a failure. */
uint64_t rsp_pprof__location(struct rsp_pprof *w, const struct rsp_pprof_frame *f);
/**
 * A sample: @locs leaf first (ids from rsp_pprof__location(); a 0 among
 * them drops the sample, as the failure it stands for is recorded), one
 * value per sample type, @nlabels labels (keys distinct). Added to an
 * equal sample (same locations, same labels in the same order) if any.
 */
void rsp_pprof__sample(struct rsp_pprof *w, const uint64_t *locs, size_t n, const int64_t *values,
		       const struct rsp_pprof_label *labels, size_t nlabels);
/** Append the gzip-compressed Profile to @out and free the writer: 0 or -errno. */
int rsp_pprof__finish(struct rsp_pprof *w, const struct rsp_pprof_meta *meta, struct rsp_buf *out);
/** Free without writing (an error path). */
void rsp_pprof__exit(struct rsp_pprof *w);

/*
 * rsp_top__pprof() - @p's stacks (built with stacks_by_thread) as an on-CPU
 * profile (lib/format/top_pprof.c): samples/count and cpu/nanoseconds, one
 * sample per stack and thread, labels thread, process, cgroup; build-ids
 * from @maps (NULL: none). Sets @meta's period. 0 or -ENOMEM.
 */
struct rsp_flatprof;
struct rsp_maps;
struct rsp_source;

/*
 * The build-ids of the user objects in a profile (lib/format/pprof_bids.c),
 * looked up once per object: the process model's for the mapping, else
 * the ELF note of the file the symbols were read from.
 */
struct rsp_pprof_bid {
	uint8_t id[20];
	uint8_t n; /* 0: not known */
};
struct rsp_pprof_bids {
	const struct rsp_maps *maps; /* NULL: files only */
	struct rsp_u64map of;	     /* object (interned by the symbolizer) -> index */
	struct rsp_pprof_bid *ids;
	size_t n, cap;
	int err; /* -ENOMEM: the profile must fail */
};
void rsp_pprof_bids__init(struct rsp_pprof_bids *b, const struct rsp_maps *maps);
void rsp_pprof_bids__exit(struct rsp_pprof_bids *b);
/* Set @f's build-id, when it is a @user frame of @pid at @time in a known object (b->err: ENOMEM).
 */
void rsp_pprof_bids__frame(struct rsp_pprof_bids *b, uint32_t pid, uint64_t time, bool user,
			   struct rsp_pprof_frame *f);
/*
 * rsp_pprof_meta__range() - the duration of [@from, @to] of a window, and
 * when @live (rspd: @now is CLOCK_MONOTONIC's now) its start as wall-clock
 * time (offline: not known, 0).
 */
void rsp_pprof_meta__range(struct rsp_pprof_meta *m, bool live, uint64_t now, uint64_t from,
			   uint64_t to);
int rsp_top__pprof(const struct rsp_flatprof *p, const struct rsp_maps *maps,
		   struct rsp_pprof_meta *meta, struct rsp_buf *out);

#endif
