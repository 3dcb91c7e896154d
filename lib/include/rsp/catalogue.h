/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_CATALOGUE_H
#define RSP_CATALOGUE_H

#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>

/*
 * The event catalogue (the tables in tracepoints/ files) as C enums and tables. The tables
 * are static data: nothing here allocates or needs freeing.
 */

enum rsp_family {
#define RSP_FAMILY(id, name, on, why) RSP_FAM_##id,
#include "../../../tracepoints/families.def"
#undef RSP_FAMILY
	RSP_FAM__NR
};

enum rsp_event {
#define RSP_EVENT(name, fam, kind, sys, tp, flags, why) RSP_EV_##name,
#include "../../../tracepoints/events.def"
#undef RSP_EVENT
	RSP_EV__NR
};

#include "../../../tracepoints/fields.def"

enum rsp_field {
#define RSP_FIELD_ENUM(E, f, K, N, U) RSP_F_##E##__##f,
#define RSP_FIELD_EVENT(E)	      RSP_FIELDS_##E(RSP_FIELD_ENUM, E)
	RSP_TP_EVENTS(RSP_FIELD_EVENT)
#undef RSP_FIELD_EVENT
#undef RSP_FIELD_ENUM
		RSP_F__NR
};

enum rsp_event_kind {
	RSP_EVK_TRACEPOINT,
	RSP_EVK_CPU_CLOCK,
	RSP_EVK_DUMMY,
	RSP_EVK_UPROBE,
	RSP_EVK_KPROBE,
};

/* Event flags in events.def. */
#define RSP_EVF_STACK	 0x1u
#define RSP_EVF_SIDEBAND 0x2u
#define RSP_EVF_OPTIONAL 0x4u

enum rsp_field_kind {
	RSP_FK_U,
	RSP_FK_S,
	RSP_FK_STR,
	RSP_FK_BYTES, /* a fixed array of bytes, read whole (addresses) */
};

struct rsp_family_info {
	const char *name;
	bool default_on;
	const char *why;
};

struct rsp_event_info {
	const char *name; /* catalogue name, e.g. "sched_switch" */
	enum rsp_family family;
	enum rsp_event_kind kind;
	const char *system; /* tracefs system, "" if not a tracepoint */
	const char *tp;	    /* tracefs event name, or the software event's name */
	unsigned int flags;
	const char *why;
	int nr_fields; /* fields rsp decodes (fields.def) */
};

/* Analyses that read a field (the USES column of fields.def). */
#define RSP_USE_TL  0x1u  /* timeline: runs, sleeps, wakeups, links */
#define RSP_USE_IO  0x2u  /* block requests */
#define RSP_USE_IRQ 0x4u  /* irq, softirq and timer spans */
#define RSP_USE_ST  0x8u  /* rspctl status */
#define RSP_USE_NET 0x10u /* network operations, socket addresses */

struct rsp_field_info {
	enum rsp_event event;
	const char *name;
	enum rsp_field_kind kind;
	bool required;
	unsigned int uses; /* RSP_USE_* */
};

/** The static descriptions; NULL for an out-of-range index. */
RSP_API const struct rsp_family_info *rsp_catalogue__family(enum rsp_family fam);
RSP_API const struct rsp_event_info *rsp_catalogue__event(enum rsp_event ev);
RSP_API const struct rsp_field_info *rsp_catalogue__field(enum rsp_field f);

/**
 * rsp_catalogue__event_fields() - the fields of an event
 * @first: set to the event's first enum rsp_field, or -1 when it has none
 *
 * Return: the number of fields; they are consecutive from @first.
 */
RSP_API int rsp_catalogue__event_fields(enum rsp_event ev, int *first);
/** rsp_catalogue__find_family() - family by name, or -1. */
RSP_API int rsp_catalogue__find_family(const char *name);
/** rsp_catalogue__find_tracepoint() - event by tracefs "system", "name", or -1. */
RSP_API int rsp_catalogue__find_tracepoint(const char *system, const char *name);
/** rsp_catalogue__find_event() - event by catalogue name, or -1. */
RSP_API int rsp_catalogue__find_event(const char *name);

#endif /* RSP_CATALOGUE_H */
