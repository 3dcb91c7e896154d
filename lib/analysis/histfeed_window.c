// SPDX-License-Identifier: LGPL-2.1
/*
 * The profiles of a window's records computed at once (rspctl analyze FILE
 * hist): every record fed in time order, as rspd's analysis thread does
 * live, into a store with slices over the whole window and no eviction.
 */
#include <errno.h>
#include <rsp/hist.h>
#include <rsp/histfeed.h>
#include <rsp/window.h>

#define OFFLINE_MAX_SLICES 3600

/* Feed every record of @w, in time order, as rspd's analysis thread does. */
static int feed_all(struct rsp_window *w, const struct rsp_schema *schema,
		    const struct rsp_ksyms *ksyms, struct rsp_hist_store *st, uint64_t oldest,
		    uint64_t newest)
{
	struct rsp_histfeed_config fc = {
		.nr_cpus = rsp_window__nr_cpus(w),
		.schema = schema,
		.ksyms = ksyms,
	};
	struct rsp_histfeed *f = rsp_histfeed__new(st, &fc);
	struct rsp_wsnap *snap = f ? rsp_window__pin(w, oldest, newest) : NULL;
	struct rsp_witer *it = snap ? rsp_witer__new(snap, oldest, newest) : NULL;
	struct rsp_wentry e;
	int ret = it ? 0 : -ENOMEM;

	while (it && rsp_witer__next(it, &e))
		rsp_histfeed__record(f, schema, &e);
	if (f) {
		/* The end of the file: what is still open is counted, held sleeps emitted. */
		rsp_histfeed__advance(f, UINT64_MAX);
		rsp_histfeed__expire(f, UINT64_MAX);
		rsp_hist_store__set_progress(st, newest);
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	rsp_histfeed__delete(f);
	return ret;
}

int rsp_histfeed__window_store(struct rsp_window *w, const struct rsp_schema *schema,
			       const struct rsp_ksyms *ksyms, struct rsp_hist_store **out,
			       struct rsp_buf *err)
{
	struct rsp_window_stats ws;
	struct rsp_hist_config c;
	struct rsp_hist_store *st;
	uint64_t span;

	*out = NULL;
	if (!w || !schema) {
		rsp_buf__puts(err, "hist: this source has neither histograms nor records");
		return -ENODATA;
	}
	rsp_window__stats(w, &ws);
	rsp_hist_config__init(&c);
	span = ws.newest > ws.oldest ? ws.newest - ws.oldest : 0;
	/* Slices of 1 s as rspd's; a file longer than an hour gets longer ones. */
	if (span / c.slice_ns + 2 > OFFLINE_MAX_SLICES)
		c.slice_ns = (span / (OFFLINE_MAX_SLICES - 2) / c.slice_ns + 1) * c.slice_ns;
	c.nr_slices = (unsigned)(span / c.slice_ns + 2);
	c.max_profiles = 65536;
	c.slice_cap = 8192;
	st = rsp_hist_store__new(&c);
	if (!st || feed_all(w, schema, ksyms, st, ws.oldest, ws.newest)) {
		rsp_hist_store__delete(st);
		rsp_buf__puts(err, "hist: out of memory computing the profiles of the file");
		return -ENOMEM;
	}
	*out = st;
	return 0;
}
