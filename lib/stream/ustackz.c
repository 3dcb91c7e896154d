// SPDX-License-Identifier: LGPL-2.1
/*
 * User stacks compressed in the window: see rsp/ustackz.h.
 *
 * zstd (libzstd, as perf record -z uses it) at level -1 (its fast mode): on
 * the 1224 stacks of a pgbench dump's cpu-clock samples (6.2 KB copied of
 * 8 KiB asked for), 4.26x at ~16 µs a 6 KiB stack on this VM, quiet;
 * level 1 gave 4.39x at 21-31 µs, and the drain compresses a poll's
 * samples in one burst, which delayed a sleeper's timer wakeups enough to
 * move e2e.test_hist_offcpu's peaks (1 run in 4 and the fresh-clone CI at
 * level 1, 0 in 6 at -1). ~200 samples a second on 2 CPUs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>
#include <rsp/ustackz.h>
#include "internal/ustack.h"

#define ZLEVEL (-1)

struct rsp_ustackz {
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
};

struct rsp_ustackz *rsp_ustackz__new(void)
{
	struct rsp_ustackz *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->c = ZSTD_createCCtx();
	z->d = ZSTD_createDCtx();
	if (!z->c || !z->d) {
		rsp_ustackz__delete(z);
		return NULL;
	}
	return z;
}

void rsp_ustackz__delete(struct rsp_ustackz *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->c);
	ZSTD_freeDCtx(z->d);
	free(z);
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * Where @rec's user stack is: the offset of its data (after the u64 size)
 * and its size field (dyn_size and the fields after the stack follow).
 * @smp is @rec decoded; its user_stack points into @rec.
 */
struct at {
	size_t data, size;
};

static int locate(const struct perf_event_header *rec, const struct rsp_sample *smp, struct at *at)
{
	const char *base = (const char *)rec;
	const char *data = (const char *)smp->user_stack - (smp->user_stack_z ? 8 : 0);

	if (!smp->user_stack || data < base + sizeof(*rec) + 8 || data > base + rec->size)
		return -EINVAL;
	at->data = (size_t)(data - base);
	memcpy(&at->size, data - 8, 8);
	if (at->size % 8 || at->size > rec->size - at->data || rec->size - at->data - at->size < 8)
		return -EINVAL;
	return 0;
}

int rsp_ustackz__pack(struct rsp_ustackz *z, const struct rsp_schema *s,
		      const struct perf_event_header *rec, void *out, size_t cap)
{
	struct rsp_sample smp;
	struct at at;
	size_t zcap, zsize, size;
	uint64_t blob_size, dyn;
	char *o = out;

	if (rec->type != PERF_RECORD_SAMPLE || rsp_record__parse_sample(s, rec, &smp))
		return -EINVAL;
	if (!smp.user_stack)
		return 0;
	if (locate(rec, &smp, &at))
		return -EINVAL;
	dyn = smp.user_stack_size;
	/* smaller or not at all: the frame and its 8-byte head within the stack's bytes */
	if (at.size <= 16)
		return 0;
	zcap = at.size - 16;
	if (at.data + 8 > cap)
		return -ENOSPC;
	if (zcap > cap - at.data - 8)
		zcap = cap - at.data - 8;
	zsize = ZSTD_compressCCtx(z->c, o + at.data + 8, zcap, smp.user_stack, dyn, ZLEVEL);
	if (ZSTD_isError(zsize))
		return ZSTD_getErrorCode(zsize) == ZSTD_error_dstSize_tooSmall ? 0 : -ENOMEM;
	blob_size = 8 + round8(zsize);
	size = at.data + blob_size + (rec->size - at.data - at.size);
	if (size >= rec->size)
		return 0;
	if (size > cap)
		return -ENOSPC;
	/* the head, then the blob's length and frame size, padding, dyn_size and the rest */
	memcpy(o, rec, at.data);
	memcpy(o + at.data - 8, &blob_size, 8);
	memset(o + at.data, 0, 8);
	memcpy(o + at.data, &(uint32_t){(uint32_t)zsize}, 4);
	memset(o + at.data + 8 + zsize, 0, blob_size - 8 - zsize);
	memcpy(o + at.data + blob_size, (const char *)rec + at.data + at.size,
	       rec->size - at.data - at.size);
	((struct perf_event_header *)o)->type = RSP_RECORD_ZSAMPLE;
	((struct perf_event_header *)o)->size = (uint16_t)size;
	return (int)size;
}

int rsp_ustackz__inflate(struct rsp_ustackz *z, const struct rsp_sample *smp, void *buf, size_t cap)
{
	size_t n;

	if (!smp->user_stack_z)
		return -EINVAL;
	if (smp->user_stack_size > cap)
		return -ENOSPC;
	n = ZSTD_decompressDCtx(z->d, buf, smp->user_stack_size, smp->user_stack,
				smp->user_stack_z);
	return ZSTD_isError(n) || n != smp->user_stack_size ? -EINVAL : 0;
}

int rsp_ustackz__expand(struct rsp_ustackz *z, const struct rsp_schema *s,
			const struct perf_event_header *rec, void *out, size_t cap)
{
	struct rsp_sample smp;
	struct at at;
	char *o = out;

	if (rec->type != RSP_RECORD_ZSAMPLE || rsp_record__parse_sample(s, rec, &smp) ||
	    !smp.user_stack_z || locate(rec, &smp, &at))
		return -EINVAL;
	if (at.data + smp.user_stack_size > cap)
		return -ENOSPC;
	/* inflated where the cut sample holds its stack, then written around it */
	if (rsp_ustackz__inflate(z, &smp, o + at.data, cap - at.data))
		return -EINVAL;
	return rsp_ustack__rewrite(rec, at.data, at.size, o + at.data, smp.user_stack_size,
				   smp.user_stack_size, out, cap);
}
