// SPDX-License-Identifier: GPL-2.0
/*
 * The threads of one network namespace, for rspctl dump --netns PID: read
 * while they live, at dump time, from /proc/TID/ns/net (stat() follows the
 * link to the namespace's nsfs inode). A thread gone before the dump has no
 * /proc entry left: the filter keeps it only as the child of a kept thread
 * (rsp/tidfilter.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "netns.h"

static int ns_of(const char *path, uint64_t *ino)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

static bool numeric(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The threads of process @pid in namespace @ino (a thread may be gone meanwhile: skipped). */
static int add_tasks(const char *pid, uint64_t ino, struct rsp_tidfilter *f, uint32_t *n)
{
	char path[600]; /* d_name: at most 255 bytes */
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!err && (de = readdir(d))) {
		uint64_t t = 0;

		if (!numeric(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task/%s/ns/net", pid, de->d_name);
		if (ns_of(path, &t) || t != ino)
			continue;
		err = rsp_tidfilter__add(f, (uint32_t)strtoul(de->d_name, NULL, 10));
		*n += !err;
	}
	closedir(d);
	return err;
}

int rspd_netns__threads(pid_t pid, struct rsp_tidfilter *f, uint64_t *ino, uint32_t *threads,
			struct rsp_buf *why)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int err;

	*threads = 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	err = ns_of(path, ino);
	if (err) {
		rsp_buf__printf(why,
				"--netns %d: cannot read %s: %s — give the pid of a live process "
				"in the network namespace to dump",
				(int)pid, path, strerror(-err));
		return err;
	}
	d = opendir("/proc");
	if (!d) {
		err = -errno;
		rsp_buf__printf(why, "--netns: cannot list /proc: %s", strerror(-err));
		return err;
	}
	while (!err && (de = readdir(d)))
		if (numeric(de->d_name))
			err = add_tasks(de->d_name, *ino, f, threads);
	closedir(d);
	if (err)
		rsp_buf__printf(why, "--netns %d: %s", (int)pid, strerror(-err));
	return err;
}
