// SPDX-License-Identifier: LGPL-2.1
/*
 * Uprobe targets: a function's file offset from its ELF symbol and the
 * program headers, read with libelf. Nothing here talks to the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rsp/file.h>
#include <rsp/uprobe.h>

/* A defined function named @name ("read", or "read@@GLIBC_2.2.5") in one table. */
static int find_in(Elf *elf, Elf64_Word type, const char *name, GElf_Sym *out)
{
	size_t len = strlen(name);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Sym sym;
			const char *s;
			int t;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			t = GELF_ST_TYPE(sym.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strncmp(s, name, len) && (s[len] == '\0' || s[len] == '@')) {
				*out = sym;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* File offset of link-time address @vaddr through the PT_LOAD that maps it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int rsp_uprobe__resolve(const char *path, const char *name, struct rsp_uprobe_target *out,
			struct rsp_buf *err)
{
	struct rsp_buf why = RSP_BUF_INIT;
	/* a regular file, opened without blocking: a FIFO named in the config must not hang */
	int fd = rsp_file__open_regular(path, &why), ret;
	GElf_Sym sym;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	if (fd < 0) {
		rsp_buf__printf(err, "uprobes: %s", why.data ? why.data : strerror(-fd));
		rsp_buf__exit(&why);
		return fd;
	}
	rsp_buf__exit(&why);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rsp_buf__printf(err, "%s is not an ELF object: cannot place uprobes in it", path);
		ret = -EINVAL;
		goto out;
	}
	ret = find_in(elf, SHT_SYMTAB, name, &sym);
	if (ret)
		ret = find_in(elf, SHT_DYNSYM, name, &sym);
	if (ret)
		goto out;
	ret = vaddr_to_offset(elf, sym.st_value, &out->offset);
	if (ret) {
		rsp_buf__printf(err, "%s: no loadable segment holds %s at 0x%llx", path, name,
				(unsigned long long)sym.st_value);
		ret = -EINVAL;
		goto out;
	}
	snprintf(out->path, sizeof(out->path), "%s", path);
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->vaddr = sym.st_value;
	out->size = sym.st_size;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

struct find_ctx {
	const char *soname;
	char *buf;
	size_t n;
	int found;
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_ctx *c = arg;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	if (!base || strcmp(base + 1, c->soname))
		return 0;
	snprintf(c->buf, c->n, "%s", info->dlpi_name);
	c->found = 1;
	return 1;
}

int rsp_uprobe__loaded_path(const char *soname, char *buf, size_t n)
{
	struct find_ctx c = {soname, buf, n, 0};
	char real[PATH_MAX];

	dl_iterate_phdr(each_object, &c);
	if (!c.found)
		return -ENOENT;
	/* The file itself: a probe on a symlink's target is the same inode anyway. */
	if (realpath(buf, real))
		snprintf(buf, n, "%s", real);
	return 0;
}
