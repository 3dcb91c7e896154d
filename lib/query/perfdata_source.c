// SPDX-License-Identifier: LGPL-2.1
/*
 * A perf.data file as a query source (rspctl analyze): its window, its own
 * kernel symbols, and the process model and symbolizer of its processes,
 * built only for the commands that read them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rsp/maps.h>
#include <rsp/query.h>
#include <rsp/symbols.h>
#include "internal/log.h"
#include "internal/perfdata.h"

/* The file's kernel symbols (its own copy, never this machine's). */
static int load_ksyms(struct rsp_perfdata *pd, struct rsp_buf *err)
{
	struct rsp_buf why = RSP_BUF_INIT;

	if (pd->ksyms || !pd->kallsyms)
		return 0;
	pd->ksyms = rsp_ksyms__new_from_text(pd->kallsyms, pd->kallsyms_len, &why);
	if (!pd->ksyms && errno == ENOMEM) {
		rsp_buf__exit(&why);
		rsp_buf__printf(err, "%s: out of memory loading its kernel symbols", pd->info.path);
		return -ENOMEM;
	}
	/* Unusable symbols are not fatal: kernel frames stay unnamed, and say so. */
	if (!pd->ksyms)
		rsp_warn("%s: its kernel symbols are unusable: %s", pd->info.path,
			 why.data ? why.data : "?");
	rsp_buf__exit(&why);
	pd->info.kernel_symbols = rsp_ksyms__count(pd->ksyms);
	return 0;
}

/*
 * The synthesized process records describe the processes alive when the
 * file was written, as of before its first record. A FORK among them only
 * names the parent: the child's own MMAP2 records follow, so the model
 * must not copy the parent's regions into it (rsp_maps__fork() would).
 */
static int feed_model(const struct perf_event_header *rec, void *ctx)
{
	const struct rsp_perfdata *pd = ctx;
	struct rsp_task_rec k;

	if (rec->type == PERF_RECORD_FORK && !rsp_record__task(rec, &k) && k.pid != k.ppid)
		return 0;
	return rsp_maps__feed(rsp_symbolizer__maps(pd->symbols), pd->schema, rec) == -ENOMEM
		       ? -ENOMEM
		       : 0;
}

/*
 * The cgroups rspd's process model knew when it wrote the file
 * (RSP_PD_FEAT_RSP_CGROUPS), each on the incarnation alive at the time
 * written beside it. One the file's records never name is left out.
 */
static int apply_cgroups(struct rsp_perfdata *pd)
{
	struct rsp_maps *m = rsp_symbolizer__maps(pd->symbols);
	struct rsp_pd_cgroup e;

	for (uint32_t i = 0; !rsp_perfdata__cgroup(pd, i, &e); i++)
		if (rsp_maps__set_cgroup(m, e.pid, e.time, e.path, e.nspid) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

/*
 * The process model and symbolizer of the file: its synthesized processes,
 * then the side-band records of its window, the same model rspd keeps
 * live. User symbols come from the files at the recorded paths when they
 * are still the same files (inode); JIT maps (/tmp/perf-PID.map) only when
 * the file was written on this host.
 */
static int make_symbols(struct rsp_perfdata *pd, struct rsp_buf *err)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .live = false};
	struct rsp_maps_ingest res;
	char host[256] = "";
	int ret;

	if (pd->symbols)
		return 0;
	if (gethostname(host, sizeof(host)) || strcmp(host, pd->info.hostname))
		cfg.jit_dir = "";
	pd->symbols = rsp_symbolizer__new(&cfg);
	if (!pd->symbols)
		goto nomem;
	if (pd->ksyms)
		rsp_symbolizer__use_ksyms(pd->symbols, pd->ksyms);
	ret = rsp_perfdata__process_model(pd, feed_model, pd);
	if (!ret)
		ret = rsp_maps__ingest(rsp_symbolizer__maps(pd->symbols), pd->schema, pd->side, 0,
				       UINT64_MAX, &res);
	if (!ret)
		ret = apply_cgroups(pd);
	if (ret)
		goto nomem;
	rsp_symbolizer__begin(pd->symbols);
	return 0;
nomem:
	rsp_buf__printf(err, "%s: out of memory building its process model", pd->info.path);
	return -ENOMEM;
}

static int make_source(struct rsp_perfdata *pd, bool symbols, struct rsp_source *src,
		       struct rsp_buf *err)
{
	int ret = rsp_perfdata__load(pd, err);

	if (!ret)
		ret = load_ksyms(pd, err);
	if (!ret && symbols)
		ret = make_symbols(pd, err);
	if (ret)
		return ret;
	memset(src, 0, sizeof(*src));
	src->window = pd->window;
	src->schema = pd->schema;
	src->capture = NULL;
	src->now = pd->info.last_time;
	src->offline = true;
	src->path = pd->info.path;
	src->dump = &pd->info;
	src->ksyms = pd->ksyms;
	src->symbols = symbols ? pd->symbols : NULL;
	return 0;
}

int rsp_perfdata__source(struct rsp_perfdata *pd, struct rsp_source *src, struct rsp_buf *err)
{
	return make_source(pd, true, src, err);
}

int rsp_perfdata__source_for(struct rsp_perfdata *pd, const struct rsp_request *req,
			     struct rsp_source *src, struct rsp_buf *err)
{
	return make_source(pd, rsp_request__uses_symbols(req), src, err);
}
