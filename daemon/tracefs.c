// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs: mount it if needed, load the tracepoint formats rsp uses.
 *
 * We mount tracefs ourselves rather than let libtracefs find or mount it:
 * libtracefs quietly falls back to debugfs, and an operator should know
 * which it is and why it failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tracefs.h>
#include <traceevent/event-parse.h>
#include <rsp/buf.h>
#include "log.h"
#include "rsp_tracefs.h"

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
	rspd_log__write(RSP_LOG_INFO, "mounted tracefs at %s", TRACEFS_PATH);
	return 0;
}

#define MAX_SMALL_FILE (4u << 20)

/* A whole small file (tracefs and procfs files report no size). */
int rsp_tracefs__read(const char *path, struct rsp_buf *out)
{
	char buf[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (out->len + (size_t)n > MAX_SMALL_FILE) {
			err = -EFBIG;
			break;
		}
		if ((err = rsp_buf__add(out, buf, (size_t)n)))
			break;
	}
	close(fd);
	return err;
}

static bool plain(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/');
}

/*
 * The formats of @systems' events (or only of @event, if not NULL) under
 * tracefs, parsed with libtraceevent. Hand-written rather than
 * tracefs_local_events_system(): that one also parses /proc/kallsyms and
 * the printk formats into the handle, which rsp never asks it for (it
 * reads fields by offset and resolves kernel addresses itself); that was
 * 0.19 s of rspd's 0.73 s start here, and 4.7 s under AddressSanitizer.
 * NULL if no event's format could be parsed.
 */
struct tep_handle *rsp_tracefs__formats(const char *const *systems, const char *event)
{
	struct tep_handle *tep = tep_alloc();
	struct rsp_buf buf = RSP_BUF_INIT;
	char path[PATH_MAX];
	int parsed = 0;

	if (!tep)
		return NULL;
	tep_set_file_bigendian(tep,
			       tep_is_local_bigendian(tep) ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (!rsp_tracefs__read(TRACEFS_PATH "/events/header_page", &buf) && buf.len)
		tep_parse_header_page(tep, buf.data, (unsigned long)buf.len, sizeof(long));
	for (const char *const *sys = systems; *sys; sys++) {
		const char *one[2] = {event, NULL};
		const char *const *names;
		char **events;

		/* names, not paths: a stopwatch's event comes from its request */
		if (!plain(*sys) || (event && !plain(event)))
			continue;
		events = event ? NULL : tracefs_system_events(TRACEFS_PATH, *sys);
		names = event ? one : (const char *const *)events;

		for (int i = 0; names && names[i]; i++) {
			snprintf(path, sizeof(path), TRACEFS_PATH "/events/%s/%s/format", *sys,
				 names[i]);
			rsp_buf__reset(&buf);
			if (!rsp_tracefs__read(path, &buf) && buf.len)
				parsed += tep_parse_event(tep, buf.data, buf.len, *sys) == 0;
		}
		tracefs_list_free(events);
	}
	rsp_buf__exit(&buf);
	if (!parsed) {
		tep_free(tep);
		return NULL;
	}
	return tep;
}

struct tep_handle *rsp_tracefs__load(char *err, size_t errlen)
{
	static const char *const systems[] = {"sched", "block", "irq", "timer",
					      "sock",  "tcp",	NULL};
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
	tep = rsp_tracefs__formats(systems, NULL);
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

/*
 * Remove the dynamic events of the tracefs group "rsp" from @file
 * (uprobe_events, kprobe_events). Returns how many were removed.
 */
static int sweep_group(const char *file)
{
	char path[128], line[1024], del[256];
	int removed = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", TRACEFS_PATH, file);
	f = fopen(path, "re");
	if (!f)
		return 0; /* the kernel has no such probes */
	while (fgets(line, sizeof(line), f)) {
		/* "p:rsp/NAME /path:0x1234", "r:rsp/NAME ..." */
		const char *ev = strchr(line, ':');
		size_t n;
		int fd;

		if (!ev || strncmp(ev + 1, "rsp/", 4))
			continue;
		n = strcspn(ev + 1, " \n");
		snprintf(del, sizeof(del), "-:%.*s", (int)n, ev + 1);
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0 || write(fd, del, strlen(del)) < 0)
			rspd_log__write(
				RSP_LOG_WARN,
				"cannot remove the stale probe %s from %s: %s — remove it with: "
				"echo '%s' >> %s",
				del + 2, path, strerror(errno), del, path);
		else
			removed++;
		if (fd >= 0)
			close(fd);
	}
	fclose(f);
	return removed;
}

/*
 * rspd's own probes cannot go stale: it makes them through the uprobe and
 * kprobe PMUs, so they belong to its perf fds and the kernel removes them
 * when those close, also when rspd is killed. A probe that does survive a
 * process is a tracefs dynamic event; the group "rsp" is rsp's, and any
 * event left there (by a tool run as "perf probe -g rsp", or an rsp that
 * kept probes in tracefs) is stale: remove it before capturing.
 */
void rsp_tracefs__remove_stale_probes(void)
{
	static const char *const files[] = {"uprobe_events", "kprobe_events"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int n = sweep_group(files[i]);

		if (n)
			rspd_log__write(RSP_LOG_INFO,
					"removed %d stale probe%s of group rsp from %s/%s", n,
					n == 1 ? "" : "s", TRACEFS_PATH, files[i]);
	}
}
