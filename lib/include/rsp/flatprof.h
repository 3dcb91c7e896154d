/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_FLATPROF_H
#define RSP_FLATPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/schema.h>
#include <rsp/spin.h>
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
	uint64_t key;	       /* identity of the row (rsp_flatprof__row_addrs()) */
	uint64_t spin_samples; /* of samples, in a spin loop (opts.spin) */
};

/* The samples in one spin loop (opts.spin; rsp/spin.h), busy waiting. */
struct rsp_flatprof_spin {
	const char *name; /* the table's (rsp_spin__match()) */
	uint64_t samples, period;
};

/* A whole stack as resolved frames, with how its user part was had. */
struct rsp_flatprof_stack {
	uint64_t hash;
	uint64_t samples;
	uint64_t period; /* the CPU time they stand for, ns */
	uint64_t by[3];	 /* samples per enum rsp_unwind_method */
	uint32_t nr;
	uint32_t pid, tid; /* opts.stacks_by_thread: its thread's (one stack per thread); else 0 */
	struct rsp_frame frames[RSP_FLATPROF_FRAMES];
};

struct rsp_flatprof_proc {
	uint32_t pid;
	bool hidden;	  /* another user's process: no name, no user frames */
	const char *comm; /* its name at its latest sample: after an exec, the new one */
	uint64_t samples, kernel, last;
	bool outside; /* not kept by opts.keep (--cgroup, --container): counted here only */
};

/*
 * Breakdowns of the samples counted (after every filter): by thread, by
 * command name (the process's, as the model knows it at the sample's
 * time), by image (the object the sampled ip falls in: an executable, a
 * shared library, "[kernel]", a module, "[vdso]", "[jit]"; NULL unknown).
 * Seconds are periods: a cpu-clock sample's period is the CPU time, in
 * nanoseconds, that it stands for.
 */
struct rsp_flatprof_thread {
	uint32_t tid, pid;
	bool hidden;
	const char *comm; /* the process's name at the thread's latest sample; NULL unknown */
	uint64_t samples, kernel, period, last;
};

struct rsp_flatprof_comm {
	const char *comm; /* NULL: unknown, or another user's process */
	bool hidden;
	uint64_t samples, kernel, period;
};

struct rsp_flatprof_image {
	const char *object; /* the symbolizer's (interned); NULL: unknown */
	enum rsp_sym_kind kind;
	bool hidden;
	uint64_t samples, period;
};

/* The sampled addresses of the function asked for (opts.annotate):
 * struct rsp_sampled_addr, rsp/symbols.h. */

struct rsp_flatprof_totals {
	uint64_t samples, kernel, period;   /* of the profiled process (or all) */
	uint64_t spin_samples, spin_period; /* of them, in a spin loop (opts.spin) */
	uint64_t self_samples;		    /* of opts.self_pid (rspd), among all */
	uint64_t self_period;		    /* their CPU time, ns */
	uint64_t first, last;		    /* times of the samples counted */
	uint64_t by[3];			    /* stacks: samples per enum rsp_unwind_method */
	/* the whole range, before the filters */
	uint64_t all_samples, all_kernel, idle; /* idle: samples of the idle task */
	uint64_t all_first, all_last;
	uint64_t threads, procs;	 /* distinct (non-idle) threads, processes sampled */
	uint64_t lost_records, lost;	 /* PERF_RECORD_LOST in the range, records they lost */
	uint64_t annotate_samples;	 /* samples in the function asked for */
	uint64_t annotate_other_objects; /* of them, in another object than the first */
	uint64_t lines_dropped;		 /* samples of addresses beyond opts.max_addrs */
	uint64_t annotate_dropped;	 /* of them, at addresses beyond opts.max_addrs */
	const char *annotate_object;	 /* the object of the function asked for */
	/* its first sample there: which mapping it was (the file's identity then) */
	uint32_t annotate_pid;
	uint64_t annotate_time, annotate_ip;
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
	long tid;	  /* only this thread; -1: all (tid 0 is the idle task) */
	const char *comm; /* only processes of this name (exact, 15 bytes as the kernel keeps) */
	unsigned mode;	  /* RSP_FLATPROF_KERNEL_ONLY, RSP_FLATPROF_USER_ONLY, or 0: both */
	/* the function whose sampled addresses to keep (rsp_flatprof__addrs()); NULL: none */
	const char *annotate;
	size_t max_addrs; /* distinct addresses kept for it, and for lines; 0: 65536 */
	bool lines;	  /* keep each user row's sampled addresses (rsp_flatprof__row_addrs()) */
	/* whether process @pid (at its first sample's @time) is profiled; NULL: all */
	bool (*keep)(void *ctx, uint32_t pid, uint64_t time);
	void *keep_ctx;
	/* the spin loops whose samples are busy waiting (rsp_flatprof__spins()); NULL: none */
	const struct rsp_spin *spin;
};

#define RSP_FLATPROF_KERNEL_ONLY 1u /* samples taken in the kernel, all processes */
#define RSP_FLATPROF_USER_ONLY	 2u /* samples taken in user mode */

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
RSP_API const struct rsp_flatprof_thread *rsp_flatprof__threads(const struct rsp_flatprof *p,
								size_t *n);
RSP_API const struct rsp_flatprof_comm *rsp_flatprof__comms(const struct rsp_flatprof *p,
							    size_t *n);
RSP_API const struct rsp_flatprof_image *rsp_flatprof__images(const struct rsp_flatprof *p,
							      size_t *n);
/** Sampled addresses of opts.annotate in its object, by address (ascending). */
RSP_API const struct rsp_sampled_addr *rsp_flatprof__addrs(const struct rsp_flatprof *p, size_t *n);
/**
 * rsp_flatprof__row_addrs() - the sampled link-time addresses of row @r
 * (opts.lines; user rows only), by address; NULL and *@n 0 if none kept.
 */
RSP_API const struct rsp_sampled_addr *
rsp_flatprof__row_addrs(const struct rsp_flatprof *p, const struct rsp_flatprof_row *r, size_t *n);
/** rsp_flatprof__spins() - the samples counted by spin loop (opts.spin), heaviest first. */
RSP_API const struct rsp_flatprof_spin *rsp_flatprof__spins(const struct rsp_flatprof *p,
							    size_t *n);
/** rsp_flatprof__proc() - the row of process @pid, or NULL. */
RSP_API const struct rsp_flatprof_proc *rsp_flatprof__proc(const struct rsp_flatprof *p,
							   uint32_t pid);

#endif /* RSP_FLATPROF_H */
