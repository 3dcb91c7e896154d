/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_SYSCALLS_H
#define RSPD_SYSCALLS_H

/*
 * The `syscall` family: per-syscall latency profiles aggregated in the
 * kernel by bpf/syscalls.bpf.c, read by the analysis thread after each of
 * its passes (at most every RSPD_SYSCALLS_READ_NS) and added to the
 * profile store as ops syscall:NAME per system, process and thread.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rspd;
struct rsp_hist_shard;

#define RSPD_SYSCALLS_KEYS     4096	     /* default of --syscall-keys */
#define RSPD_SYSCALLS_READ_NS  250000000ull  /* read the table at most this often */
#define RSPD_SYSCALLS_SWEEP_NS 5000000000ull /* forget the keys of exited threads */

/**
 * rspd_syscalls__open() - load and attach the programs if the family is on
 * and the BPF backend runs; otherwise, or when they do not load, the
 * family is off with one sentence in status (never fatal). After
 * rsp_evset__open() and rspd_histthread__start().
 */
void rspd_syscalls__open(struct rspd *d);
/** rspd_syscalls__wanted() - the family is on and the BPF backend runs (a shard for it). */
bool rspd_syscalls__wanted(const struct rspd *d);
/** rspd_syscalls__read() - add what the kernel counted since the last read (analysis thread). */
void rspd_syscalls__read(struct rspd *d, struct rsp_hist_shard *sh, uint64_t now);
/** rspd_syscalls__close() - detach and free. */
void rspd_syscalls__close(struct rspd *d);
/** rspd_syscalls__status() - whether the family is on; its note (why off, or its counters). */
int rspd_syscalls__status(struct rspd *d, char *note, size_t n);
/** rspd_syscalls__run_time() - the family's programs' run time so far, ns (0: off). */
uint64_t rspd_syscalls__run_time(struct rspd *d);
#ifdef RSP_HAVE_BPF
struct bpf_object;
/** rspd_bpf__run_time() - @obj's loaded programs' run time (BPF_STATS_RUN_TIME held), ns. */
uint64_t rspd_bpf__run_time(struct bpf_object *obj);
#endif
struct rsp_pdwriter;
/**
 * rspd_syscalls__dump() - put the profiles of the slices covering [@from,
 * @to] into @w's syscall section (rsp/sysdump.h); nothing when the family
 * is off. Return: 0 or -ENOMEM.
 */
int rspd_syscalls__dump(struct rspd *d, struct rsp_pdwriter *w, uint64_t from, uint64_t to);

#endif
