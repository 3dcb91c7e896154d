// SPDX-License-Identifier: LGPL-2.1
/*
 * Field access by resolved offset (schema.c resolved them once from the
 * format). Nothing here looks at names: this is the per-record path.
 */
#include <errno.h>
#include <string.h>
#include <rsp/tp.h>
#include "internal/schema.h"

/* The decoders name readers by field kind (read_##K): U is the shared one. */
static int read_U(const struct rsp_field_loc *l, const uint8_t *raw, uint32_t size, uint64_t *out)
{
	return rsp_floc__read_u(l, raw, size, out);
}

static int read_S(const struct rsp_field_loc *l, const uint8_t *raw, uint32_t size, int64_t *out)
{
	uint64_t v;
	int err = read_U(l, raw, size, &v);

	*out = (int64_t)v;
	return err;
}

static int read_STR(const struct rsp_field_loc *l, const uint8_t *raw, uint32_t size,
		    struct rsp_str *out)
{
	uint32_t off = l->offset, len = l->size, loc;

	out->ptr = NULL;
	out->len = 0;
	if (!(l->flags & RSP_FLOC_PRESENT))
		return 0;
	if ((uint32_t)l->offset + l->size > size)
		return -EINVAL;
	if (l->flags & RSP_FLOC_DYNAMIC) {
		/* __data_loc: the u32 holds (length << 16) | offset. */
		memcpy(&loc, raw + l->offset, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (off + len > size)
			return -EINVAL;
	}
	out->ptr = (const char *)raw + off;
	out->len = (uint32_t)strnlen(out->ptr, len);
	return 0;
}

static int read_BYTES(const struct rsp_field_loc *l, const uint8_t *raw, uint32_t size,
		      struct rsp_str *out)
{
	out->ptr = NULL;
	out->len = 0;
	if (!(l->flags & RSP_FLOC_PRESENT))
		return 0;
	if ((uint32_t)l->offset + l->size > size)
		return -EINVAL;
	out->ptr = (const char *)raw + l->offset;
	out->len = l->size;
	return 0;
}

/* A compact BPF record (smp->compact) has its fields at the schema's compact offsets. */
#define DEC_FIELD(E, f, K, N, U)                                                                   \
	if (read_##K(&locs[RSP_F_##E##__##f], raw, size, &out->f))                                 \
		return -EINVAL;
#define DEC_FN(E)                                                                                  \
	int rsp_tp__##E(const struct rsp_schema *s, const struct rsp_sample *smp,                  \
			struct rsp_tp_##E *out)                                                    \
	{                                                                                          \
		const struct rsp_field_loc *locs = rsp_schema__locs(s, smp->compact);              \
		const uint8_t *raw = smp->raw;                                                     \
		uint32_t size = smp->raw_size;                                                     \
                                                                                                   \
		if (smp->event != RSP_EV_##E || (!smp->compact && !s->ev_ok[RSP_EV_##E]) || !raw)  \
			return -ENOENT;                                                            \
		RSP_FIELDS_##E(DEC_FIELD, E) return 0;                                             \
	}
RSP_TP_EVENTS(DEC_FN)

uint64_t rsp_field__u64(const struct rsp_schema *s, enum rsp_field f, const void *raw,
			uint32_t raw_size)
{
	uint64_t v;

	if ((unsigned)f >= RSP_F__NR || rsp_catalogue__field(f)->kind >= RSP_FK_STR ||
	    rsp_floc__read_u(&s->fields[f], raw, raw_size, &v))
		return 0;
	return v;
}

struct rsp_str rsp_field__str(const struct rsp_schema *s, enum rsp_field f, const void *raw,
			      uint32_t raw_size)
{
	struct rsp_str str = {NULL, 0};

	if ((unsigned)f < RSP_F__NR && rsp_catalogue__field(f)->kind == RSP_FK_STR &&
	    read_STR(&s->fields[f], raw, raw_size, &str))
		str.ptr = NULL, str.len = 0;
	else if ((unsigned)f < RSP_F__NR && rsp_catalogue__field(f)->kind == RSP_FK_BYTES &&
		 read_BYTES(&s->fields[f], raw, raw_size, &str))
		str.ptr = NULL, str.len = 0;
	return str;
}
