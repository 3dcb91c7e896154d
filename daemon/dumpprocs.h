/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_DUMPPROCS_H
#define RSPD_DUMPPROCS_H

/*
 * The processes alive at dump time, written as the COMM/FORK/MMAP2 records
 * perf record synthesizes, with the build ids of the files they map.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rsp_pdwriter;
struct rspd_dumpmeta;

struct rspd_dumpprocs_stats {
	unsigned processes, threads, maps, build_ids;
};
/**
 * rspd_dumpprocs__write() - synthesize the processes alive now into @w:
 * the kernel's map, then per process FORK + COMM for each thread and MMAP2
 * for each executable mapping, like perf record does at its start; and the
 * build ids of the kernel and of the files mapped. Processes that vanish
 * while being read are skipped. Return: 0 or the writer's -errno.
 */
int rspd_dumpprocs__write(struct rsp_pdwriter *w, const struct rspd_dumpmeta *m,
			  struct rspd_dumpprocs_stats *st);
/** rspd_dumpprocs__note_build_id() - the GNU build id in ELF notes @buf (/sys/kernel/notes). */
bool rspd_dumpprocs__note_build_id(const void *buf, size_t len, uint8_t id[20], uint8_t *size);

#endif
