// SPDX-License-Identifier: LGPL-2.1
/*
 * The catalogue tables, generated from the tables in tracepoints/ files by the
 * preprocessor so that the data lives in one place.
 */
#include <string.h>
#include <rsp/catalogue.h>

static const struct rsp_family_info families[RSP_FAM__NR] = {
#define RSP_FAMILY(id, name, on, why) [RSP_FAM_##id] = {name, on, why},
#include "tracepoints/families.def"
#undef RSP_FAMILY
};

/* Number of fields of each event, to compute first_field. */
#define FIELD_ONE(E, f, K, N, U) +1
enum {
#define RSP_EVENT(name, fam, kind, sys, tp, flags, why)                                            \
	NR_FIELDS_##name = 0 RSP_FIELDS_##name(FIELD_ONE, name),
#include "tracepoints/events.def"
#undef RSP_EVENT
};

static const struct rsp_field_info fields[RSP_F__NR] = {
#define FIELD_INFO(E, f, K, N, U)                                                                \
	[RSP_F_##E##__##f] = {RSP_EV_##E, #f, RSP_FK_##K, RSP_NEED_##N, RSP_USES(U)},
/* "TL|ST" -> RSP_USE_TL | RSP_USE_ST */
#define TL RSP_USE_TL
#define IO RSP_USE_IO
#define IRQ RSP_USE_IRQ
#define ST RSP_USE_ST
#define NET RSP_USE_NET
#define RSP_USES(U) (U)
#define RSP_NEED_REQUIRED true
#define RSP_NEED_OPTIONAL false
#define FIELD_EVENT(E) RSP_FIELDS_##E(FIELD_INFO, E)
	RSP_TP_EVENTS(FIELD_EVENT)
#undef FIELD_EVENT
#undef FIELD_INFO
};

static const struct rsp_event_info events[RSP_EV__NR] = {
#define RSP_EVENT(nm, fam, kd, sys, tpn, fl, wh)                                                   \
	[RSP_EV_##nm] = {.name = #nm,                                                              \
			 .family = RSP_FAM_##fam,                                                  \
			 .kind = RSP_EVK_##kd,                                                     \
			 .system = sys,                                                            \
			 .tp = tpn,                                                                \
			 .flags = fl,                                                              \
			 .why = wh,                                                                \
			 .nr_fields = NR_FIELDS_##nm},
#include "tracepoints/events.def"
#undef RSP_EVENT
};

const struct rsp_family_info *rsp_catalogue__family(enum rsp_family fam)
{
	return (unsigned)fam < RSP_FAM__NR ? &families[fam] : NULL;
}

const struct rsp_event_info *rsp_catalogue__event(enum rsp_event ev)
{
	return (unsigned)ev < RSP_EV__NR ? &events[ev] : NULL;
}

int rsp_catalogue__event_fields(enum rsp_event ev, int *first)
{
	/* The field table is grouped by event; a few dozen entries, a scan is fine. */
	for (int f = 0; f < RSP_F__NR; f++) {
		if (fields[f].event == ev) {
			*first = f;
			return events[ev].nr_fields;
		}
	}
	*first = -1;
	return 0;
}

const struct rsp_field_info *rsp_catalogue__field(enum rsp_field f)
{
	return (unsigned)f < RSP_F__NR ? &fields[f] : NULL;
}

int rsp_catalogue__find_family(const char *name)
{
	for (int i = 0; i < RSP_FAM__NR; i++)
		if (!strcmp(families[i].name, name))
			return i;
	return -1;
}

int rsp_catalogue__find_tracepoint(const char *system, const char *name)
{
	for (int i = 0; i < RSP_EV__NR; i++)
		if (events[i].kind == RSP_EVK_TRACEPOINT && !strcmp(events[i].system, system) &&
		    !strcmp(events[i].tp, name))
			return i;
	return -1;
}

int rsp_catalogue__find_event(const char *name)
{
	for (int i = 0; i < RSP_EV__NR; i++)
		if (!strcmp(events[i].name, name))
			return i;
	return -1;
}
