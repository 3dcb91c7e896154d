// SPDX-License-Identifier: LGPL-2.1
/*
 * Source lines through libdw: see internal/srcline.h. libdw is elfutils'
 * DWARF reader, packaged by Debian (libdw-dev) and used by perf, systemtap
 * and others: rsp does not hand-parse DWARF.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include "internal/elfsyms.h"
#include "internal/srcline.h"

struct srcfile {
	char *path; /* as asked */
	int fd;	    /* of the file whose DWARF is read (the file, or its debug file) */
	Elf *elf;
	Dwarf *dw;     /* NULL: no DWARF in either: remembered, not retried */
	uint64_t used; /* LRU clock */
};

struct rsp_srclines {
	char *debug_dir;
	size_t max;
	struct srcfile *files;
	size_t n;
	uint64_t clock;
};

struct rsp_srclines *rsp_srclines__new(const char *debug_dir, size_t max_objects)
{
	struct rsp_srclines *sl = calloc(1, sizeof(*sl));

	if (!sl)
		return NULL;
	elf_version(EV_CURRENT); /* libelf wants it once before any elf_begin() */
	sl->max = max_objects ? max_objects : 16;
	sl->debug_dir = strdup(debug_dir ? debug_dir : "/usr/lib/debug");
	sl->files = calloc(sl->max, sizeof(*sl->files));
	if (!sl->debug_dir || !sl->files) {
		rsp_srclines__delete(sl);
		return NULL;
	}
	return sl;
}

static void file_close(struct srcfile *f)
{
	if (f->dw)
		dwarf_end(f->dw);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

void rsp_srclines__delete(struct rsp_srclines *sl)
{
	if (!sl)
		return;
	for (size_t i = 0; sl->files && i < sl->n; i++)
		file_close(&sl->files[i]);
	free(sl->files);
	free(sl->debug_dir);
	free(sl);
}

/*
 * Paths come from records (offline, from a file anyone may have written):
 * only regular files are opened (opening a device or a FIFO can block, or
 * do something), without blocking, and checked again once open.
 */
static int open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* DWARF of the ELF file open on @fd; on success @f owns @fd. */
static int try_dwarf(struct srcfile *f, int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;

	if (!dw) {
		if (elf)
			elf_end(elf);
		return -ENOENT;
	}
	f->fd = fd;
	f->elf = elf;
	f->dw = dw;
	return 0;
}

/* The separate debug file of the file open on @fd: DEBUG_DIR/.build-id/ab/cdef....debug. */
static int debug_fd(const struct rsp_srclines *sl, int fd)
{
	uint8_t id[20];
	int n = rsp_elfsyms__build_id_fd(fd, id);
	char path[4096];
	size_t len;

	if (n < 2 || !*sl->debug_dir)
		return -1;
	len = (size_t)snprintf(path, sizeof(path), "%s/.build-id/%02x/", sl->debug_dir, id[0]);
	for (int i = 1; i < n && len + 3 < sizeof(path); i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
	if (len + 7 >= sizeof(path))
		return -1;
	strcat(path, ".debug");
	return open_regular(path);
}

static int file_open(struct rsp_srclines *sl, struct srcfile *f, const char *path)
{
	int fd = open_regular(path), dfd;

	f->fd = -1;
	f->path = strdup(path);
	if (!f->path) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	if (fd < 0)
		return 0; /* remembered as having no lines */
	if (!try_dwarf(f, fd))
		return 0;
	dfd = debug_fd(sl, fd);
	close(fd);
	if (dfd >= 0 && try_dwarf(f, dfd))
		close(dfd);
	return 0;
}

/* The cached entry of @path, opened (and the least recently used closed) if needed. */
static struct srcfile *file_get(struct rsp_srclines *sl, const char *path)
{
	struct srcfile *f = NULL;

	for (size_t i = 0; i < sl->n; i++)
		if (!strcmp(sl->files[i].path, path)) {
			f = &sl->files[i];
			break;
		}
	if (!f) {
		if (sl->n < sl->max) {
			f = &sl->files[sl->n++];
		} else {
			f = &sl->files[0];
			for (size_t i = 1; i < sl->n; i++)
				if (sl->files[i].used < f->used)
					f = &sl->files[i];
			file_close(f);
		}
		if (file_open(sl, f, path)) {
			file_close(f);
			*f = sl->files[--sl->n];
			return NULL;
		}
	}
	f->used = ++sl->clock;
	return f;
}

int rsp_srclines__find(struct rsp_srclines *sl, const char *path, uint64_t addr, char *buf,
		       size_t size, int *line)
{
	struct srcfile *f = file_get(sl, path);
	Dwarf_Die cu;
	Dwarf_Line *l;
	const char *src;

	if (!f)
		return -ENOMEM;
	if (!f->dw || !dwarf_addrdie(f->dw, addr, &cu))
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, addr);
	if (!l || dwarf_lineno(l, line) || !(src = dwarf_linesrc(l, NULL, NULL)))
		return -ENOENT;
	snprintf(buf, size, "%s", src);
	return 0;
}
