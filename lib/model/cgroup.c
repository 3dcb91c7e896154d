// SPDX-License-Identifier: LGPL-2.1
/*
 * Cgroup v2 paths and the container ids in them (rsp/cgroup.h).
 *
 * Hand-written: no Debian library parses runtimes' cgroup names (libcgroup
 * manages hierarchies; docker and containerd do it in Go), and the forms
 * are few and fixed by the runtimes' cgroup drivers.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <rsp/cgroup.h>

struct scope_form {
	const char *prefix, *runtime;
};

/* "<prefix><64hex>.scope" (the systemd cgroup driver's names). */
static const struct scope_form scope_forms[] = {
	{"docker-", "docker"},
	{"cri-containerd-", "containerd"},
	{"crio-", "crio"},
	{"libpod-", "podman"},
};

static bool hex64(const char *s, size_t n)
{
	if (n != RSP_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static void copy_id(const char *s, char *out)
{
	for (size_t i = 0; i < RSP_CONTAINER_ID_LEN; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[RSP_CONTAINER_ID_LEN] = '\0';
}

/* One path component @c (@n bytes): its container id, if it is a scope form. */
static const char *scope_id(const char *c, size_t n, const char **id)
{
	static const char suffix[] = ".scope";
	size_t sl = sizeof(suffix) - 1;

	if (n <= sl || memcmp(c + n - sl, suffix, sl))
		return NULL;
	for (size_t k = 0; k < sizeof(scope_forms) / sizeof(scope_forms[0]); k++) {
		size_t pl = strlen(scope_forms[k].prefix);

		if (n > pl + sl && !memcmp(c, scope_forms[k].prefix, pl) &&
		    hex64(c + pl, n - pl - sl)) {
			*id = c + pl;
			return scope_forms[k].runtime;
		}
	}
	return NULL;
}

bool rsp_cgroup__container_id(const char *path, char *out, const char **runtime)
{
	const char *prev = NULL, *found = NULL, *rt = NULL;
	size_t prev_n = 0;
	bool kube = false;

	if (!path)
		return false;
	for (const char *c = path; *c;) {
		size_t n = strcspn(c, "/");
		const char *id = NULL, *r = n ? scope_id(c, n, &id) : NULL;

		if (!r && hex64(c, n) && prev && prev_n == 6 && !memcmp(prev, "docker", 6))
			r = "docker", id = c;
		else if (!r && hex64(c, n) && kube)
			r = "kubepods", id = c;
		if (r)
			found = id, rt = r;
		if (n >= 8 && !memcmp(c, "kubepods", 8))
			kube = true;
		if (n)
			prev = c, prev_n = n;
		c += n;
		c += *c == '/';
	}
	if (!found)
		return false;
	if (out)
		copy_id(found, out);
	if (runtime)
		*runtime = rt;
	return true;
}

int rsp_cgroup__parse_proc(const char *text, char *out, size_t size)
{
	const char *l = text;
	size_t n;

	out[0] = '\0';
	while (l && strncmp(l, "0::", 3)) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (!l)
		return -ENOENT;
	l += 3;
	n = strcspn(l, "\n");
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(out, l, n);
	out[n] = '\0';
	return 0;
}

int rsp_cgroup__parse_nspid(const char *text, uint32_t *nspid)
{
	const char *l = text;

	while (l && strncmp(l, "NSpid:", 6)) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (!l)
		return -ENOENT;
	l += 6;
	for (bool any = false;;) {
		char *end;
		unsigned long v;

		while (*l == ' ' || *l == '\t')
			l++;
		if (!isdigit((unsigned char)*l))
			return any ? 0 : -ENOENT;
		v = strtoul(l, &end, 10);
		if (v > UINT32_MAX)
			return -ENOENT;
		*nspid = (uint32_t)v;
		any = true;
		l = end;
	}
}

/* A small /proc file, whole; "" if it cannot be read. */
static int read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

int rsp_cgroup__read_proc(const char *proc_dir, uint32_t pid, char *path, size_t size,
			  uint32_t *nspid)
{
	char name[256], text[4096];

	path[0] = '\0';
	*nspid = 0;
	snprintf(name, sizeof(name), "%s/%u/cgroup", proc_dir, pid);
	if (read_small(name, text, sizeof(text)))
		return -ENOENT;
	if (rsp_cgroup__parse_proc(text, path, size))
		path[0] = '\0';
	snprintf(name, sizeof(name), "%s/%u/status", proc_dir, pid);
	if (read_small(name, text, sizeof(text)) == 0 && rsp_cgroup__parse_nspid(text, nspid))
		*nspid = 0;
	return 0;
}

bool rsp_cgroup__in_subtree(const char *path, const char *subtree)
{
	size_t n = strlen(subtree);

	while (n && subtree[n - 1] == '/')
		n--;
	if (!path || path[0] != '/')
		return false;
	return !strncmp(path, subtree, n) && (path[n] == '\0' || path[n] == '/');
}

bool rsp_cgroup__check_container_arg(const char *arg)
{
	size_t n = strlen(arg);

	if (n < 12 || n > RSP_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)arg[i]))
			return false;
	return true;
}

bool rsp_cgroup__container_matches(const char *path, const char *prefix)
{
	char id[RSP_CONTAINER_ID_LEN + 1];

	if (!rsp_cgroup__container_id(path, id, NULL))
		return false;
	return !strncasecmp(id, prefix, strlen(prefix));
}

const char *rsp_cgroup__short(const char *path, unsigned width, char *out, size_t size)
{
	char id[RSP_CONTAINER_ID_LEN + 1];
	const char *rt;
	size_t n = strlen(path);

	if (width >= size)
		width = (unsigned)size - 1;
	if (n <= width) {
		memcpy(out, path, n + 1);
	} else if (rsp_cgroup__container_id(path, id, &rt) && strlen(rt) + 13 <= width) {
		snprintf(out, size, "%s:%.12s", rt, id);
	} else if (width > 3) {
		snprintf(out, size, "...%s", path + n - (width - 3));
	} else {
		snprintf(out, size, "%.*s", (int)width, path + n - width);
	}
	return out;
}

int rsp_cgroup__find_mount(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret == -ENOENT && getline(&line, &cap, f) > 0) {
		char *dev = strtok(line, " "), *mnt = strtok(NULL, " "), *type = strtok(NULL, " ");

		if (!dev || !mnt || !type || strcmp(type, "cgroup2"))
			continue;
		/* mount points with spaces are octal-escaped (\040): not ours to undo */
		ret = strlen(mnt) < size ? 0 : -ENAMETOOLONG;
		if (!ret)
			memcpy(out, mnt, strlen(mnt) + 1);
	}
	free(line);
	fclose(f);
	return ret;
}

int rsp_cgroup__owner(const char *mount, const char *path, uint32_t *uid)
{
	char full[4096 + 256];
	struct stat st;

	if (path[0] != '/' || strstr(path, "/../") ||
	    snprintf(full, sizeof(full), "%s%s", mount, path) >= (int)sizeof(full))
		return -EINVAL;
	if (stat(full, &st))
		return -errno;
	*uid = (uint32_t)st.st_uid;
	return 0;
}
