/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_TP_H
#define RSP_TP_H

#include <stdint.h>
#include <rsp/api.h>
#include <rsp/catalogue.h>
#include <rsp/record.h>
#include <rsp/schema.h>

/*
 * Typed accessors for catalogued tracepoints: one struct rsp_tp_<event> and
 * one rsp_tp__<event>() per event in tracepoints/fields.def, generated from
 * that table. Integer fields are widened to 64 bits (signed ones
 * sign-extended) whatever their size in this kernel's format; strings point
 * into the record and are not NUL-terminated (len stops at the first NUL);
 * byte arrays (BYTES) point into the record with len the array's size.
 */
struct rsp_str {
	const char *ptr;
	uint32_t len;
};

#define RSP_KTYPE_U		     uint64_t
#define RSP_KTYPE_S		     int64_t
#define RSP_KTYPE_STR		     struct rsp_str
#define RSP_KTYPE_BYTES		     struct rsp_str
#define RSP_TP_MEMBER(E, f, K, N, U) RSP_KTYPE_##K f;
#define RSP_TP_STRUCT(E)                                                                           \
	struct rsp_tp_##E {                                                                        \
		RSP_FIELDS_##E(RSP_TP_MEMBER, E)                                                   \
	};
RSP_TP_EVENTS(RSP_TP_STRUCT)
#undef RSP_TP_STRUCT

/*
 * rsp_tp__<event>() - decode the raw data of a sample of <event>
 * Return: 0; -ENOENT if @smp is not that event or the event is unusable in
 * @s; -EINVAL if a field lies outside the raw data.
 */
#define RSP_TP_DECL(E)                                                                             \
	RSP_API int rsp_tp__##E(const struct rsp_schema *s, const struct rsp_sample *smp,          \
				struct rsp_tp_##E *out);
RSP_TP_EVENTS(RSP_TP_DECL)
#undef RSP_TP_DECL

/** rsp_field__u64() - one integer field of a raw record, 0 if absent or out of bounds. */
RSP_API uint64_t rsp_field__u64(const struct rsp_schema *s, enum rsp_field f, const void *raw,
				uint32_t raw_size);
/** rsp_field__str() - one string field; {NULL, 0} if absent or out of bounds. */
RSP_API struct rsp_str rsp_field__str(const struct rsp_schema *s, enum rsp_field f, const void *raw,
				      uint32_t raw_size);

/* prev_state of sched_switch: the low byte is the sleep state (S, D, T, ...);
 * a preempted task reports TASK_REPORT_MAX (0x100) and a task that left
 * while runnable reports 0. Masks as in the tracepoint's print format. */
#define RSP_TASK_STATE_MASK	 0xffu
#define RSP_TASK_INTERRUPTIBLE	 0x1u
#define RSP_TASK_UNINTERRUPTIBLE 0x2u
#define RSP_TASK_REPORT_MAX	 0x100u

#endif /* RSP_TP_H */
