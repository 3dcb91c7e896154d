/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_DUMPMETA_H
#define RSPD_DUMPMETA_H

/*
 * What a dump needs that only the live system knows, taken at start
 * (tracepoint formats, host, command line, kernel).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>
#include <rsp/perfdata.h>

struct rsp_evset;

struct rspd_dumpmeta {
	char hostname[256], os_release[256], arch[64], version[64];
	char cpu_desc[256], cpuid[128];
	unsigned nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	uint64_t clock_res_ns;
	int argc;
	char **argv;
	struct rsp_buf tracing; /* HEADER_TRACING_DATA */
	size_t kallsyms_at;	/* where in it the kernel symbols go */
	uint64_t ktext, ketext; /* kernel text, 0 when hidden */
	struct rsp_pd_build_id kernel_bid;
	bool has_kernel_bid;
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id, "" if unreadable */
};

int rspd_dumpmeta__init(struct rspd_dumpmeta *m, const struct rsp_evset *es, int argc, char **argv,
			char *err, size_t errlen);
void rspd_dumpmeta__exit(struct rspd_dumpmeta *m);
/** rspd_dumpmeta__describe() - @m as the writer's meta, with a clock pair taken now. */
void rspd_dumpmeta__describe(const struct rspd_dumpmeta *m, struct rsp_perfdata_meta *out);

#endif
