// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs: mount it if needed, load the tracepoint formats rsp uses.
 *
 * We mount tracefs ourselves rather than let libtracefs find or mount it:
 * libtracefs quietly falls back to debugfs, and an operator should know
 * which it is and why it failed.
 */
#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tracefs.h>
#include <traceevent/event-parse.h>
#include "capture.h"
#include "log.h"

#define TRACEFS_PATH "/sys/kernel/tracing"

static bool tracefs_mounted_at(const char *path)
{
	FILE *f = setmntent("/proc/mounts", "r");
	struct mntent *m;
	bool found = false;

	if (!f)
		return false;
	while (!found && (m = getmntent(f)))
		found = !strcmp(m->mnt_type, "tracefs") && !strcmp(m->mnt_dir, path);
	endmntent(f);
	return found;
}

static int ensure_mounted(char *err, size_t errlen)
{
	if (tracefs_mounted_at(TRACEFS_PATH))
		return 0;
	if (mount("nodev", TRACEFS_PATH, "tracefs", 0, NULL)) {
		int e = errno;

		snprintf(err, errlen,
			 "tracefs is not mounted and could not be mounted at %s: %s — run "
			 "rspd as root (or with CAP_SYS_ADMIN), or mount it yourself: "
			 "mount -t tracefs nodev %s",
			 TRACEFS_PATH, strerror(e), TRACEFS_PATH);
		return -e;
	}
	rspd_log(RSP_LOG_INFO, "mounted tracefs at %s", TRACEFS_PATH);
	return 0;
}

struct tep_handle *rsp_tracefs__load(char *err, size_t errlen)
{
	static const char *const systems[] = {"sched", "block", "irq", "timer", "sock", "tcp",
					       NULL};
	struct tep_handle *tep;

	if (ensure_mounted(err, errlen))
		return NULL;
	tracefs_set_loglevel(TEP_LOG_NONE);
	if (access(TRACEFS_PATH "/events", R_OK | X_OK)) {
		snprintf(err, errlen,
			 "cannot read %s/events: %s — run rspd as root (tracepoint formats "
			 "are readable by root only)",
			 TRACEFS_PATH, strerror(errno));
		return NULL;
	}
	tep = tracefs_local_events_system(TRACEFS_PATH, systems);
	if (!tep) {
		snprintf(err, errlen,
			 "could not load tracepoint formats from %s/events — check that the "
			 "kernel has CONFIG_TRACEPOINTS and the directory is readable",
			 TRACEFS_PATH);
		return NULL;
	}
	tep_set_loglevel(TEP_LOG_NONE);
	return tep;
}
