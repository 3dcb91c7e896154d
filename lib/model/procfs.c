// SPDX-License-Identifier: LGPL-2.1
/*
 * The /proc reader of the process model: PID/maps, PID/comm and the owner
 * of PID, for one process or all of them. The directory is a parameter so
 * that tests can point it at fixture files.
 *
 * Processes come and go while we read: a process that is gone by the time
 * we open its files is skipped, never reported as an error.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <rsp/cgroup.h>
#include <rsp/maps.h>

static int parse_hex(const char **p, uint64_t *out)
{
	char *end;

	if (!isxdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtoull(*p, &end, 16);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static void skip_spaces(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

static int parse_perms(const char **p, struct rsp_map_info *mi)
{
	const char *s = *p;

	if (strlen(s) < 4 || (s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
	    (s[2] != 'x' && s[2] != '-') || (s[3] != 'p' && s[3] != 's'))
		return -EINVAL;
	mi->prot = (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) |
		   (s[2] == 'x' ? PROT_EXEC : 0);
	mi->flags = s[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	*p = s + 4;
	return 0;
}

/* "start-end perms offset maj:min inode   path" */
int rsp_procfs__parse_maps_line(const char *line, struct rsp_map_info *mi)
{
	const char *p = line;
	uint64_t maj, min;
	size_t n;

	memset(mi, 0, sizeof(*mi));
	if (parse_hex(&p, &mi->start) || expect(&p, '-') || parse_hex(&p, &mi->end) ||
	    expect(&p, ' ') || parse_perms(&p, mi) || expect(&p, ' ') ||
	    parse_hex(&p, &mi->pgoff) || expect(&p, ' ') || parse_hex(&p, &maj) ||
	    expect(&p, ':') || parse_hex(&p, &min) || expect(&p, ' '))
		return -EINVAL;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	mi->ino = strtoull(p, (char **)&p, 10);
	if (errno || mi->end < mi->start || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	mi->maj = (uint32_t)maj;
	mi->min = (uint32_t)min;
	skip_spaces(&p);
	n = strcspn(p, "\n");
	mi->path = p;
	mi->path_len = n;
	return 0;
}

static void read_comm(const char *proc_dir, uint32_t pid, char *comm, size_t size)
{
	char path[256];
	FILE *f;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "%s/%u/comm", proc_dir, pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, (int)size, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

static uint32_t read_uid(const char *proc_dir, uint32_t pid)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%u", proc_dir, pid);
	return stat(path, &st) ? UINT32_MAX : (uint32_t)st.st_uid;
}

int rsp_procfs__load_cgroup(struct rsp_maps *m, const char *proc_dir, uint32_t pid, uint64_t time)
{
	char path[4096];
	uint32_t nspid;

	if (rsp_cgroup__read_proc(proc_dir, pid, path, sizeof(path), &nspid))
		return -ENOENT;
	return rsp_maps__set_cgroup(m, pid, time, path, nspid);
}

int rsp_procfs__load_pid(struct rsp_maps *m, const char *proc_dir, uint32_t pid, uint64_t time)
{
	char path[256], comm[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_dir, pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	read_comm(proc_dir, pid, comm, sizeof(comm));
	ret = rsp_maps__snapshot_begin(m, pid, time, comm[0] ? comm : NULL,
				       read_uid(proc_dir, pid));
	while (!ret && getline(&line, &cap, f) > 0) {
		struct rsp_map_info mi;

		if (rsp_procfs__parse_maps_line(line, &mi) || !(mi.prot & PROT_EXEC))
			continue;
		ret = rsp_maps__snapshot_map(m, pid, &mi);
	}
	if (!ret && rsp_procfs__load_cgroup(m, proc_dir, pid, time) == -ENOMEM)
		ret = -ENOMEM;
	free(line);
	fclose(f);
	rsp_maps__snapshot_end(m, pid);
	return ret;
}

static bool pid_name(const char *s, uint32_t *pid)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*pid = (uint32_t)v;
	return true;
}

int rsp_procfs__load_all(struct rsp_maps *m, const char *proc_dir, uint64_t time,
			 unsigned *nr_loaded, struct rsp_buf *err)
{
	DIR *d = opendir(proc_dir);
	struct dirent *de;
	unsigned n = 0;
	int ret = 0;

	if (nr_loaded)
		*nr_loaded = 0;
	if (!d) {
		ret = -errno;
		rsp_buf__printf(err, "cannot read %s: %s — mount procfs there", proc_dir,
				strerror(errno));
		return ret;
	}
	rsp_maps__pass_begin(m);
	while ((de = readdir(d)) != NULL) {
		uint32_t pid;
		int r;

		if (!pid_name(de->d_name, &pid))
			continue;
		r = rsp_procfs__load_pid(m, proc_dir, pid, time);
		if (r == -ENOMEM) {
			ret = r;
			rsp_buf__puts(err, "out of memory reading the process table");
			break;
		}
		n += r == 0;
	}
	closedir(d);
	if (!ret)
		rsp_maps__sweep(m, time);
	if (nr_loaded)
		*nr_loaded = n;
	return ret;
}
