/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SCHEMA_H
#define RSP_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>
#include <rsp/catalogue.h>

/*
 * A schema says what the records of one stream mean: which perf events
 * (attrs) it holds, which sample id belongs to which, and where each
 * catalogued tracepoint field lies in the raw data. rspd builds one from
 * the events it opened and the kernel's tracefs formats; a dump reader
 * builds one from the file's attrs and tracing data. Everything is resolved
 * once here so that decoding a record is a few loads, with no lookup by
 * name and no allocation.
 */
struct rsp_schema;
struct tep_handle;

/* What an evsel contributes beyond its catalogue event. */
enum rsp_role {
	/* The event's records are the event's occurrences. */
	RSP_ROLE_PRIMARY = 0,
	/*
	 * A second, sampled copy of a tracepoint that only exists to carry a
	 * callchain for one occurrence in N (stack policy sampled:N). Its
	 * records duplicate a PRIMARY record with the same cpu and time.
	 */
	RSP_ROLE_STACK_COPY = 1,
	/*
	 * A PERF_COUNT_SW_BPF_OUTPUT event carrying rsp's compact BPF records
	 * (tracepoints/bpf_records.h): each sample decodes as the event its
	 * record stands for (rsp_sample.compact says which record it was).
	 */
	RSP_ROLE_BPF = 2,
};

#define RSP_SCHEMA_MAX_EVSELS 128

/** rsp_schema__new() - an empty schema; NULL on ENOMEM. Free with __delete. */
RSP_API struct rsp_schema *rsp_schema__new(void);
/** rsp_schema__delete() - free a schema; NULL is fine. */
RSP_API void rsp_schema__delete(struct rsp_schema *s);

/**
 * rsp_schema__add_evsel() - describe one opened event
 * @attr:  its perf_event_attr (copied)
 * @event: its enum rsp_event, or -1 for an event outside the catalogue
 * @role:  enum rsp_role
 * @name:  display name, e.g. "sched:sched_switch" (copied, truncated to 63)
 *
 * Return: the evsel index (>= 0) or -ENOSPC/-EINVAL.
 */
RSP_API int rsp_schema__add_evsel(struct rsp_schema *s, const struct perf_event_attr *attr,
				  int event, enum rsp_role role, const char *name);

/** rsp_schema__add_id() - map a kernel sample id to an evsel. 0 or -errno. */
RSP_API int rsp_schema__add_id(struct rsp_schema *s, int evsel, uint64_t id);

/**
 * rsp_schema__resolve_fields() - find the catalogued fields in @tep
 *
 * For every catalogued tracepoint, look up its format in @tep and record
 * each field's offset, size and signedness, and the tracepoint's id. An
 * event whose format is absent, or lacks a required field, is marked
 * unavailable with a reason (rsp_schema__event_problem()). The schema keeps
 * no reference to @tep.
 *
 * Return: the number of catalogued tracepoints that are usable.
 */
RSP_API int rsp_schema__resolve_fields(struct rsp_schema *s, struct tep_handle *tep);

/** rsp_schema__event_ok() - the event's fields are resolved and usable. */
RSP_API bool rsp_schema__event_ok(const struct rsp_schema *s, enum rsp_event ev);
/** rsp_schema__event_problem() - why it is not, or NULL. Owned by @s. */
RSP_API const char *rsp_schema__event_problem(const struct rsp_schema *s, enum rsp_event ev);
/** rsp_schema__tp_id() - tracefs id of a catalogued tracepoint, or -1. */
RSP_API int rsp_schema__tp_id(const struct rsp_schema *s, enum rsp_event ev);
/** rsp_schema__event_by_tp_id() - catalogue event with that tracefs id, or -1. */
RSP_API int rsp_schema__event_by_tp_id(const struct rsp_schema *s, uint64_t tp_id);

RSP_API int rsp_schema__nr_evsels(const struct rsp_schema *s);
/** rsp_schema__evsel_attr() - the attr of evsel @idx (owned by @s) or NULL. */
RSP_API const struct perf_event_attr *rsp_schema__evsel_attr(const struct rsp_schema *s, int idx);
RSP_API const char *rsp_schema__evsel_name(const struct rsp_schema *s, int idx);
RSP_API int rsp_schema__evsel_event(const struct rsp_schema *s, int idx);
RSP_API enum rsp_role rsp_schema__evsel_role(const struct rsp_schema *s, int idx);
/** rsp_schema__evsel_by_id() - evsel index of a sample id, or -1. */
RSP_API int rsp_schema__evsel_by_id(const struct rsp_schema *s, uint64_t id);

#endif /* RSP_SCHEMA_H */
