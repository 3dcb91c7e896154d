/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_UNWIND_H
#define RSP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/record.h>

/*
 * DWARF user stacks. Events that rspd configures for it (rspd --dwarf)
 * carry the user registers (PERF_SAMPLE_REGS_USER, the mask below) and a
 * copy of the top of the user stack (PERF_SAMPLE_STACK_USER, rspd
 * --dwarf-stack bytes). Nothing is unwound at capture time: a query unwinds
 * lazily with libunwind's remote API, its accessors reading the captured
 * registers and stack bytes, and the CFI (.eh_frame_hdr, .eh_frame) of each
 * mapped object found with libelf through the process model, cached per
 * object. Where unwinding fails, the frame-pointer callchain is used, and
 * the caller is told which it got.
 */

/*
 * x86-64 registers captured (bits of arch/x86/include/uapi/asm/perf_regs.h):
 * AX BX CX DX SI DI BP SP IP and R8-R15. The sample holds them in bit order.
 */
#define RSP_UNWIND_REGS_MASK 0xff01ffull

struct rsp_symbolizer;
struct rsp_unwinder;

enum rsp_unwind_method {
	RSP_UNWIND_NONE, /* no user frames */
	RSP_UNWIND_FP,	 /* the frame-pointer callchain */
	RSP_UNWIND_DWARF,
};

/** rsp_unwind_method__name() - "none", "fp", "dwarf". Static. */
RSP_API const char *rsp_unwind_method__name(enum rsp_unwind_method m);

/**
 * rsp_unwinder__new() - an unwinder over @sym's process model
 * @sym: maps addresses to mapped files; must outlive the unwinder
 * @max_objects: CFI tables cached (0: 64)
 *
 * Return: the unwinder or NULL (ENOMEM). Free with rsp_unwinder__delete().
 * Not thread-safe (like the symbolizer, whose lock covers it).
 */
RSP_API struct rsp_unwinder *rsp_unwinder__new(struct rsp_symbolizer *sym, size_t max_objects);
RSP_API void rsp_unwinder__delete(struct rsp_unwinder *u);

/**
 * rsp_unwinder__unwind() - the user frames of @smp by DWARF CFI
 * @smp: a sample with PERF_SAMPLE_REGS_USER (RSP_UNWIND_REGS_MASK) and
 *       PERF_SAMPLE_STACK_USER; its pid and time select the mappings
 * @ips: out, innermost first: the sampled IP, then return addresses
 *
 * Return: the number of frames (>= 1 when the sample has user registers),
 * or -ENOENT when the sample has no user registers or stack, -EINVAL when
 * its register mask is not RSP_UNWIND_REGS_MASK.
 */
RSP_API int rsp_unwinder__unwind(struct rsp_unwinder *u, const struct rsp_schema *schema,
				 const struct rsp_sample *smp, uint64_t *ips, int max);

struct rsp_unwinder_stats {
	uint64_t unwinds, frames, failures;
	uint64_t objects, object_hits, object_misses; /* CFI tables */
};

RSP_API void rsp_unwinder__stats(const struct rsp_unwinder *u, struct rsp_unwinder_stats *st);

/**
 * rsp_unwind__user_chain() - the best user stack of @smp
 * @u:   NULL: frame pointers only
 * @ips: out, innermost first, user frames only (no PERF_CONTEXT_* markers)
 * @method: set to what was used
 *
 * DWARF when the sample captured the user stack and unwinding yields more
 * frames than the frame-pointer callchain; else the callchain's user part.
 * Return: the number of frames.
 */
RSP_API int rsp_unwind__user_chain(struct rsp_unwinder *u, const struct rsp_schema *schema,
				   const struct rsp_sample *smp, uint64_t *ips, int max,
				   enum rsp_unwind_method *method);

#endif /* RSP_UNWIND_H */
