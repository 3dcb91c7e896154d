// SPDX-License-Identifier: LGPL-2.1
/*
 * An annotated disassembly: see internal/annotate.h.
 *
 * Why capstone and not libopcodes: both are in Debian, but libopcodes
 * (binutils-dev) has no stable interface (its disassembler() and
 * init_disassemble_info() signatures changed between binutils releases,
 * and Debian ships it tied to the exact binutils version) and prints
 * through a callback, while capstone (libcapstone-dev) has a small stable
 * API that returns each instruction's address, size and text.
 *
 * capstone is loaded at the first annotation (dlopen), not linked: its
 * tables are relocated when it is mapped, 3.2 MiB of resident memory in
 * every process that links it, and rspd, always on, annotates only when a
 * query asks (measured: rspd's RSS 49.7 MiB with it linked, see the
 * commit). The soname is capstone's API major version, as its build sets it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <capstone/capstone.h>
#include <gelf.h>
#include "internal/annotate.h"
#include "internal/elfsyms.h"

#define ANNOTATE_MAX_BYTES 65536

#define CS_STR_(x)	#x
#define CS_STR(x)	CS_STR_(x)
#define CAPSTONE_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	char why[200]; /* "" once loaded */
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_load(void)
{
	void *h = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cs.why, sizeof(cs.why),
			 "annotate: cannot load the disassembler (%s): install libcapstone4",
			 dlerror());
		return;
	}
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.disasm = dlsym(h, "cs_disasm");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	if (!cs.open || !cs.disasm || !cs.free || !cs.close)
		snprintf(cs.why, sizeof(cs.why),
			 "annotate: %s lacks the functions rsp calls (cs_open, cs_disasm, cs_free, "
			 "cs_close): install libcapstone4",
			 CAPSTONE_SONAME); /* kept loaded: a library is not unloaded half used */
}

void rsp_annotate__delete(struct rsp_annotate *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr_files; i++)
		free(a->files[i]);
	free(a->files);
	free(a->insns);
	free(a);
}

/* The function's symbol: the file's own table, or its debug file's. */
static int find_symbol(int fd, const char *path, const char *name, const char *debug_dir,
		       struct rsp_annotate *a, struct rsp_buf *err)
{
	struct rsp_elfsyms *e = rsp_elfsyms__load_fd(fd, path, debug_dir, err);
	int ret;

	if (!e)
		return -EINVAL;
	ret = rsp_elfsyms__find(e, name, &a->start, &a->size);
	rsp_elfsyms__delete(e);
	if (ret || !a->size) {
		rsp_buf__printf(err,
				"annotate: %s has no function symbol %s with a size (stripped, or "
				"not a function); install its debug symbols or choose a named "
				"function",
				path, name);
		return -ENOENT;
	}
	return 0;
}

/* Read the function's bytes from the executable section that holds them. */
static int read_bytes(int fd, const char *path, struct rsp_annotate *a, size_t max, uint8_t **out,
		      size_t *len, struct rsp_buf *err)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int ret = -ENOENT;

	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64) {
		rsp_buf__printf(err,
				"annotate: %s is not an x86-64 ELF file: rsp disassembles "
				"x86-64 code only",
				path);
		if (elf)
			elf_end(elf);
		return -EINVAL;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || a->start < sh.sh_addr ||
		    a->start >= sh.sh_addr + sh.sh_size)
			continue;
		*len = a->size;
		if (a->start + *len > sh.sh_addr + sh.sh_size)
			*len = sh.sh_addr + sh.sh_size - a->start;
		if (*len > max) {
			*len = max;
			a->truncated = true;
		}
		*out = malloc(*len);
		ret = !*out ? -ENOMEM
		      : pread(fd, *out, *len, (off_t)(sh.sh_offset + (a->start - sh.sh_addr))) ==
				      (ssize_t)*len
			      ? 0
			      : -EIO;
		break;
	}
	elf_end(elf);
	if (ret == -ENOENT)
		rsp_buf__printf(err, "annotate: %s holds no code at 0x%llx (the symbol's address)",
				path, (unsigned long long)a->start);
	else if (ret)
		rsp_buf__printf(err, "annotate: cannot read the code of %s: %s", path,
				strerror(-ret));
	return ret;
}

/* The source file's name, kept once per annotation. */
static const char *intern_file(struct rsp_annotate *a, const char *file)
{
	char **v;

	for (size_t i = 0; i < a->nr_files; i++)
		if (!strcmp(a->files[i], file))
			return a->files[i];
	v = realloc(a->files, (a->nr_files + 1) * sizeof(*v));
	if (!v)
		return NULL;
	a->files = v;
	v[a->nr_files] = strdup(file);
	return v[a->nr_files] ? v[a->nr_files++] : NULL;
}

static int decode(struct rsp_annotate *a, const uint8_t *bytes, size_t len, struct rsp_buf *err)
{
	csh h;
	cs_insn *insn = NULL;
	size_t n;

	pthread_once(&cs_once, cs_load);
	if (cs.why[0]) {
		rsp_buf__puts(err, cs.why);
		return -ENOENT;
	}
	if (cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		rsp_buf__puts(err, "annotate: capstone cannot open its x86-64 disassembler");
		return -EINVAL;
	}
	n = cs.disasm(h, bytes, len, a->start, 0, &insn);
	a->insns = n ? calloc(n, sizeof(*a->insns)) : NULL;
	if (n && a->insns) {
		for (size_t i = 0; i < n; i++) {
			struct rsp_annotate_insn *d = &a->insns[i];

			d->addr = insn[i].address;
			d->size = insn[i].size;
			snprintf(d->text, sizeof(d->text), "%.31s%s%.62s", insn[i].mnemonic,
				 insn[i].op_str[0] ? " " : "", insn[i].op_str);
		}
		a->n = n;
	}
	if (insn)
		cs.free(insn, n);
	cs.close(&h);
	if (!n)
		rsp_buf__puts(err, "annotate: the function's bytes decode to no instruction");
	else if (!a->insns)
		rsp_buf__puts(err, "annotate: out of memory");
	return a->n ? 0 : -EINVAL;
}

/* Samples on instructions: both lists ascending; the rest is off any instruction's start. */
static void place(struct rsp_annotate *a, const struct rsp_sampled_addr *addrs, size_t nr)
{
	size_t k = 0;

	for (size_t i = 0; i < nr; i++) {
		while (k < a->n && a->insns[k].addr < addrs[i].file_addr)
			k++;
		if (k < a->n && a->insns[k].addr == addrs[i].file_addr) {
			a->insns[k].samples += addrs[i].samples;
			a->samples += addrs[i].samples;
		} else {
			a->off_insn += addrs[i].samples;
		}
	}
}

static void lines(struct rsp_annotate *a, const char *path, struct rsp_srclines *sl)
{
	char file[1024];

	for (size_t i = 0; sl && i < a->n; i++)
		if (!rsp_srclines__find(sl, path, a->insns[i].addr, file, sizeof(file),
					&a->insns[i].line))
			a->insns[i].file = intern_file(a, file);
		else
			a->insns[i].line = 0;
}

/* A regular file only, opened without blocking (see srcline.c: paths come from records). */
static int open_regular(const char *path, struct rsp_buf *err)
{
	struct stat st;
	int fd = -1;

	if (!stat(path, &st) && S_ISREG(st.st_mode))
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	else if (!stat(path, &st))
		errno = EINVAL;
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0)
		rsp_buf__printf(err,
				"annotate: cannot open %s: %s (the function's code is read "
				"from the file on disk, a regular file)",
				path, errno == EINVAL ? "not a regular file" : strerror(errno));
	return fd;
}

struct rsp_annotate *rsp_annotate__new(const char *path, const char *name, const char *debug_dir,
				       const struct rsp_sampled_addr *addrs, size_t nr,
				       struct rsp_srclines *sl, size_t max_bytes,
				       struct rsp_buf *err)
{
	struct rsp_annotate *a = calloc(1, sizeof(*a));
	int fd = a ? open_regular(path, err) : -1;
	uint8_t *bytes = NULL;
	size_t len = 0;
	int ret;

	elf_version(EV_CURRENT);
	if (!a || fd < 0) {
		if (!a)
			rsp_buf__puts(err, "annotate: out of memory");
		ret = -EINVAL;
		goto out;
	}
	ret = find_symbol(fd, path, name, debug_dir, a, err);
	if (!ret)
		ret = read_bytes(fd, path, a, max_bytes ? max_bytes : ANNOTATE_MAX_BYTES, &bytes,
				 &len, err);
	if (!ret)
		ret = decode(a, bytes, len, err);
	if (!ret) {
		place(a, addrs, nr);
		lines(a, path, sl);
	}
out:
	free(bytes);
	if (fd >= 0)
		close(fd);
	if (ret) {
		rsp_annotate__delete(a);
		return NULL;
	}
	return a;
}
