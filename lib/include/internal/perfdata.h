/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_PERFDATA_H
#define RSP_INTERNAL_PERFDATA_H

/*
 * A perf.data file being read, shared by its parser (lib/format/
 * perfdata_read.c), the offline record source that places its records in a
 * window (lib/format/perfdata_load.c) and the query source made of it
 * (lib/query/perfdata_source.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <rsp/perfdata.h>
#include <rsp/symbols.h>
#include "internal/schema.h"

#define PD_HEADER_SIZE 104
#define PD_MAX_IDS     (1u << 20)
#define PD_MAX_CPUS    4096
#define PD_CHUNK       (256u * 1024)
#define PD_SIDE_CHUNK  (16u * 1024)
#define PD_FEAT_BITS   256

struct fattr {
	struct perf_event_attr attr;
	uint64_t ids_off, ids_size;
	uint64_t at; /* offset of the entry, for messages */
	char name[96];
};

struct rsp_perfdata {
	const unsigned char *p;
	size_t len;
	void *map;
	size_t map_len;
	struct rsp_buf *err;
	struct rsp_schema *schema;
	struct rsp_dump_info info;
	struct fattr attrs[RSP_SCHEMA_MAX_EVSELS];
	int nr_attrs;
	uint64_t feat_off[PD_FEAT_BITS], feat_size[PD_FEAT_BITS];
	bool has_feat[PD_FEAT_BITS];
	uint64_t data_off, data_end;
	struct rsp_window *window;
	/*
	 * The window's side-band records (every record but samples) referred
	 * to again, in the same per-CPU order: the process model is built from
	 * them without merging the samples (most of the records) in time order.
	 */
	struct rsp_window *side;
	bool loaded;
	uint64_t *model; /* offsets of the process-model records */
	size_t nr_model;
	const char *kallsyms; /* in the tracing data, NULL: none */
	size_t kallsyms_len;
	struct rsp_ksyms *ksyms;	/* from kallsyms, made by __source() */
	struct rsp_symbolizer *symbols; /* likewise */
	struct rsp_sock_info *socks;	/* RSP_PD_FEAT_RSP_HOST, info.nr_sockets */
	uint64_t *cgroups; /* RSP_PD_FEAT_RSP_CGROUPS: offsets of its entries, info.nr_cgroups */
};

/* One sentence "PATH: offset 0xOFF: ..." in pd->err. Return: -EINVAL. */
int rsp_perfdata__fail(struct rsp_perfdata *pd, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline uint64_t rd64(const struct rsp_perfdata *pd, uint64_t off)
{
	uint64_t v;

	memcpy(&v, pd->p + off, 8);
	return v;
}

static inline uint32_t rd32(const struct rsp_perfdata *pd, uint64_t off)
{
	uint32_t v;

	memcpy(&v, pd->p + off, 4);
	return v;
}

/* [off, off + size) lies inside the file (no overflow). */
static inline bool inside(const struct rsp_perfdata *pd, uint64_t off, uint64_t size)
{
	return off <= pd->len && size <= pd->len - off;
}

#endif /* RSP_INTERNAL_PERFDATA_H */
