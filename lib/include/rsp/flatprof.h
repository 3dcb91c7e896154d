/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_FLATPROF_H
#define RSP_FLATPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/schema.h>
#include <rsp/symbols.h>
#include <rsp/unwind.h>
#include <rsp/window.h>

/*
 * A flat profile of the cpu-clock samples of a window range (Prospect's
 * flat IP-sampling profile): samples by function, user and kernel
 * together, per process, and optionally by whole stack. Functions are
 * named at build time through a symbolizer: its process model knows which
 * file each process had mapped at the sample's time, so processes that
 * have exited are named too. One pass (rsp/pass.h, samples only).
 */
#define RSP_FLATPROF_FRAMES 64

/* A function (or an unnamed place) in an object. Names are the symbolizer's. */
struct rsp_flatprof_row {
	const char *name;   /* NULL: unknown */
	const char *object; /* NULL: unknown */
	const char *why;    /* why unnamed */
	enum rsp_sym_kind kind;
	enum rsp_sym_match match;
	bool hidden; /* another user's process (user frames not named) */
	uint64_t samples, period;
};

/* A whole stack as resolved frames, with how its user part was had. */
struct rsp_flatprof_stack {
	uint64_t hash;
	uint64_t samples;
	uint64_t by[3]; /* samples per enum rsp_unwind_method */
	uint32_t nr;
	uint32_t pid, tid; /* opts.stacks_by_thread: its thread's (one stack per thread); else 0 */
	struct rsp_frame frames[RSP_FLATPROF_FRAMES];
};

struct rsp_flatprof_proc {
	uint32_t pid;
	bool hidden;	  /* another user's process: no name, no user frames */
	const char *comm; /* its name at its latest sample: after an exec, the new one */
	uint64_t samples, kernel, last;
};

struct rsp_flatprof_totals {
	uint64_t samples, kernel, period; /* of the profiled process (or all) */
	uint64_t self_samples;		  /* of opts.self_pid (rspd), among all */
	uint64_t first, last;		  /* times of the samples counted */
	uint64_t by[3];			  /* stacks: samples per enum rsp_unwind_method */
};

struct rsp_flatprof_opts {
	uint64_t from, to;	    /* the range; to 0: to the end */
	long pid;		    /* the process profiled; -1: all */
	uint32_t self_pid;	    /* a process to count apart (rspd itself); 0: none */
	bool stacks;		    /* also by whole stack */
	bool stacks_by_thread;	    /* ... and by thread: a stack per (thread, frames) */
	struct rsp_symbolizer *sym; /* names; required */
	/* whether a process is another user's (its user frames are then hidden) */
	bool (*hidden)(void *ctx, uint32_t pid);
	void *hidden_ctx;
	bool own_only;	  /* leave out the samples of hidden processes and the idle task */
	bool hide_kernel; /* kernel frames counted, not named (RSP_SYM_HIDE_KERNEL) */
};

struct rsp_flatprof;

/**
 * rsp_flatprof__new() - profile the samples of @snap (pinned by the caller)
 *
 * Rows, processes and stacks come sorted, heaviest first (ties by name, so
 * that the order is the same live and offline). Return: the profile (free
 * with rsp_flatprof__delete()), or NULL (ENOMEM).
 */
RSP_API struct rsp_flatprof *rsp_flatprof__new(const struct rsp_schema *schema,
					       const struct rsp_wsnap *snap,
					       const struct rsp_flatprof_opts *o);
RSP_API void rsp_flatprof__delete(struct rsp_flatprof *p);

RSP_API const struct rsp_flatprof_totals *rsp_flatprof__totals(const struct rsp_flatprof *p);
/** The arrays below are owned by @p, sorted heaviest first. */
RSP_API const struct rsp_flatprof_row *rsp_flatprof__rows(const struct rsp_flatprof *p, size_t *n);
RSP_API const struct rsp_flatprof_proc *rsp_flatprof__procs(const struct rsp_flatprof *p,
							    size_t *n);
RSP_API const struct rsp_flatprof_stack *rsp_flatprof__stacks(const struct rsp_flatprof *p,
							      size_t *n);
/** rsp_flatprof__proc() - the row of process @pid, or NULL. */
RSP_API const struct rsp_flatprof_proc *rsp_flatprof__proc(const struct rsp_flatprof *p,
							   uint32_t pid);

#endif /* RSP_FLATPROF_H */
