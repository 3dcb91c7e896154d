// SPDX-License-Identifier: GPL-2.0
/*
 * The processes of a dump (not the live process model: that is
 * livemodel.c): every process alive at dump time written as the
 * COMM/FORK/MMAP2 records perf record synthesizes when it starts, so that
 * perf's tools (and rsp offline) can name threads and resolve user
 * addresses. The window itself holds the COMM/FORK/EXIT/MMAP2 records of
 * what changed while it was recorded (the side-band dummy event).
 *
 * Everything here reads /proc of processes that may exit at any moment: a
 * file that cannot be read means the process is gone, and it is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "dumpmeta.h"
#include "dumpprocs.h"

#define NT_GNU_BUILD_ID 3
#define MAX_NOTES	(64u * 1024)

bool rspd_dumpprocs__note_build_id(const void *buf, size_t len, uint8_t id[20], uint8_t *size)
{
	const unsigned char *p = buf;
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_end, desc_end;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_end = off + 12 + ((namesz + 3ull) & ~3ull);
		desc_end = name_end + ((descsz + 3ull) & ~3ull);
		if (namesz > len || descsz > len || name_end > len || desc_end > len)
			return false;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + off + 12, "GNU", 4) &&
		    descsz > 0 && descsz <= 20) {
			memcpy(id, p + name_end, descsz);
			*size = (uint8_t)descsz;
			return true;
		}
		off = desc_end;
	}
	return false;
}

/* The build id of an ELF file, from its PT_NOTE segments (64-bit ELF only). */
static bool file_build_id(const char *path, uint8_t id[20], uint8_t *size)
{
	unsigned char eh[64], ph[56];
	unsigned char *notes = NULL;
	uint64_t phoff;
	uint16_t phentsize, phnum;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh, "\177ELF", 4) ||
	    eh[4] != 2 /* ELFCLASS64 */ || eh[5] != 1 /* little-endian */)
		goto out;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&phentsize, eh + 54, 2);
	memcpy(&phnum, eh + 56, 2);
	if (phentsize != sizeof(ph) || phnum > 128)
		goto out;
	for (uint16_t i = 0; i < phnum && !found; i++) {
		uint32_t type;
		uint64_t off, fsz;

		if (pread(fd, ph, sizeof(ph), (off_t)(phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&fsz, ph + 32, 8);
		if (type != 4 /* PT_NOTE */ || fsz == 0 || fsz > MAX_NOTES)
			continue;
		notes = realloc(notes, fsz);
		if (!notes || pread(fd, notes, fsz, (off_t)off) != (ssize_t)fsz)
			break;
		found = rspd_dumpprocs__note_build_id(notes, fsz, id, size);
	}
out:
	free(notes);
	close(fd);
	return found;
}

/* "Name:", "Tgid:" and "PPid:" of /proc/PID/status. */
static int read_status(int pid, char comm[16], int *tgid, int *ppid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	*tgid = *ppid = -1;
	comm[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:", 5))
			sscanf(line + 5, " %15[^\n]", comm);
		else if (!strncmp(line, "Tgid:", 5))
			*tgid = atoi(line + 5);
		else if (!strncmp(line, "PPid:", 5))
			*ppid = atoi(line + 5);
	}
	fclose(f);
	return *tgid < 0 ? -ENOENT : 0;
}

static void thread_comm(int pid, int tid, char comm[16])
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, 16, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* Files already looked at for a build id, by device and inode. */
struct seen {
	uint64_t *keys;
	size_t n, cap;
};

static bool seen_add(struct seen *s, uint64_t key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->keys[i] == key)
			return false;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		uint64_t *k = realloc(s->keys, cap * sizeof(*k));

		if (!k)
			return false;
		s->keys = k;
		s->cap = cap;
	}
	s->keys[s->n++] = key;
	return true;
}

static int add_build_id(struct rsp_pdwriter *w, int pid, const struct rsp_pd_mmap2 *m,
			struct seen *seen, struct rspd_dumpprocs_stats *st)
{
	struct rsp_pd_build_id b = {.path = m->filename};
	char path[PATH_MAX + 32];

	if (m->filename[0] != '/' || !m->ino ||
	    !seen_add(seen, m->ino * 1000003 ^ ((uint64_t)m->maj << 20 | m->min)))
		return 0;
	/* Through the process's root: the path is in its mount namespace. */
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->filename);
	if (!file_build_id(path, b.id, &b.size))
		return 0;
	st->build_ids++;
	return rsp_pdwriter__build_id(w, &b);
}

/* One line of /proc/PID/maps; 1 if it is an executable mapping. */
static int parse_map(char *line, int pid, struct rsp_pd_mmap2 *m)
{
	unsigned long long start, end, pgoff, ino;
	unsigned maj, min;
	char perms[8];
	int name = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &ino, &name) < 7 ||
	    strlen(perms) < 4 || perms[2] != 'x' || end <= start)
		return 0;
	line[strcspn(line, "\n")] = '\0';
	memset(m, 0, sizeof(*m));
	m->pid = m->tid = (uint32_t)pid;
	m->start = start;
	m->len = end - start;
	m->pgoff = pgoff;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot =
		(perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	m->filename = name && line[name] ? line + name : "//anon";
	return 1;
}

static int write_maps(struct rsp_pdwriter *w, int pid, struct seen *seen,
		      struct rspd_dumpprocs_stats *st)
{
	char path[64], line[PATH_MAX + 256];
	struct rsp_pd_mmap2 m;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		if (!parse_map(line, pid, &m))
			continue;
		err = rsp_pdwriter__mmap2(w, &m);
		if (!err)
			err = add_build_id(w, pid, &m, seen, st);
		st->maps++;
	}
	fclose(f);
	return err == -E2BIG ? 0 : err;
}

static int write_threads(struct rsp_pdwriter *w, int pid, struct rspd_dumpprocs_stats *st)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!err && (de = readdir(dir))) {
		int tid = atoi(de->d_name);
		char comm[16] = "";

		if (tid <= 0 || tid == pid)
			continue;
		thread_comm(pid, tid, comm);
		err = rsp_pdwriter__fork(w, (uint32_t)pid, (uint32_t)pid, (uint32_t)tid,
					 (uint32_t)pid);
		if (!err)
			err = rsp_pdwriter__comm(w, (uint32_t)pid, (uint32_t)tid, comm);
		st->threads++;
	}
	closedir(dir);
	return err;
}

static int write_process(struct rsp_pdwriter *w, int pid, struct seen *seen,
			 struct rspd_dumpprocs_stats *st)
{
	char comm[16];
	int tgid, ppid, err;

	if (read_status(pid, comm, &tgid, &ppid) || tgid != pid)
		return 0; /* gone, or not a process */
	if (!rsp_pdwriter__keeps(w, (uint32_t)pid))
		return 0; /* dump --netns: another namespace's (by its main thread) */
	err = rsp_pdwriter__fork(w, (uint32_t)pid, (uint32_t)(ppid > 0 ? ppid : 0), (uint32_t)pid,
				 (uint32_t)(ppid > 0 ? ppid : 0));
	if (!err)
		err = rsp_pdwriter__comm(w, (uint32_t)pid, (uint32_t)pid, comm);
	if (!err)
		err = write_threads(w, pid, st);
	if (!err)
		err = write_maps(w, pid, seen, st);
	st->processes++;
	return err;
}

static int write_kernel(struct rsp_pdwriter *w, const struct rspd_dumpmeta *m,
			struct rspd_dumpprocs_stats *st)
{
	int err = 0;

	if (m->ktext)
		err = rsp_pdwriter__kernel_mmap(w, m->ktext, m->ketext - m->ktext, m->ktext,
						"[kernel.kallsyms]_text");
	if (!err && m->has_kernel_bid) {
		err = rsp_pdwriter__build_id(w, &m->kernel_bid);
		st->build_ids += !err;
	}
	return err;
}

int rspd_dumpprocs__write(struct rsp_pdwriter *w, const struct rspd_dumpmeta *m,
			  struct rspd_dumpprocs_stats *st)
{
	struct seen seen = {0};
	struct dirent *de;
	DIR *proc;
	int err;

	memset(st, 0, sizeof(*st));
	err = write_kernel(w, m, st);
	proc = opendir("/proc");
	if (!proc)
		return err;
	while (!err && (de = readdir(proc))) {
		int pid = atoi(de->d_name);

		if (pid > 0)
			err = write_process(w, pid, &seen, st);
	}
	closedir(proc);
	free(seen.keys);
	return err;
}
