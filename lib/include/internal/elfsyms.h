/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_ELFSYMS_H
#define RSP_INTERNAL_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/buf.h>
#include <rsp/symbols.h>

/*
 * The function symbols of one ELF object, read once with libelf: .symtab
 * when the object has one (or its separate debug file under
 * DEBUG_DIR/.build-id/xx/rest.debug does), else .dynsym. Sorted by address,
 * aliases folded (global over weak over local), names in one arena.
 */
struct rsp_elfsym {
	uint64_t start, size;
	uint32_t name; /* offset in names */
};

struct rsp_elf_load {
	uint64_t offset, vaddr, filesz, memsz;
};

enum rsp_elfsyms_source {
	RSP_ELFSYMS_NONE, /* no function symbols at all */
	RSP_ELFSYMS_SYMTAB,
	RSP_ELFSYMS_DYNSYM, /* stripped: exported functions only, brackets between them */
};

struct rsp_elfsyms {
	char *path;
	uint8_t build_id[20];
	uint8_t build_id_size;
	bool is_dyn;	 /* ET_DYN: PIE executable or shared library */
	bool debug_file; /* the symbols came from a separate debug file */
	enum rsp_elfsyms_source source;
	uint32_t nr_loads;
	struct rsp_elf_load *loads;
	uint32_t nr_syms;
	struct rsp_elfsym *syms;
	char *names;
	size_t names_size;
	char **brackets; /* "a->b" per gap, built on first use; nr_syms + 1 */
	size_t bytes;	 /* memory held */
};

/**
 * rsp_elfsyms__load_fd() - read the symbols of the ELF file open on @fd
 * @path:      what to call it (copied)
 * @debug_dir: where to look for a separate debug file; NULL: nowhere
 *
 * @fd is only read during the call; the caller closes it. Return: the
 * table (free with rsp_elfsyms__delete()) or NULL with a sentence in @err.
 */
struct rsp_elfsyms *rsp_elfsyms__load_fd(int fd, const char *path, const char *debug_dir,
					 struct rsp_buf *err);
/** rsp_elfsyms__load_mem() - the same from an image in memory (the vdso); copied. */
struct rsp_elfsyms *rsp_elfsyms__load_mem(const void *image, size_t size, const char *name,
					  struct rsp_buf *err);
void rsp_elfsyms__delete(struct rsp_elfsyms *e);

/** rsp_elfsyms__build_id_fd() - read only the GNU build-id note. Its size, or 0. */
int rsp_elfsyms__build_id_fd(int fd, uint8_t id[20]);

/**
 * rsp_elfsyms__vaddr() - the link-time address of file offset @off (through
 * the PT_LOAD program headers). Return: true if a segment holds it.
 */
bool rsp_elfsyms__vaddr(const struct rsp_elfsyms *e, uint64_t off, uint64_t *vaddr);

/**
 * rsp_elfsyms__lookup() - the symbol at link-time address @vaddr
 * @name:   the symbol, or "a->b" between two symbols; owned by @e
 * @offset: from the symbol (EXACT) or from the lower symbol (BRACKET)
 *
 * Return: RSP_SYM_EXACT, RSP_SYM_BRACKET or RSP_SYM_NONE (no symbols,
 * or ENOMEM building a bracket name).
 */
enum rsp_sym_match rsp_elfsyms__lookup(struct rsp_elfsyms *e, uint64_t vaddr, const char **name,
				       uint64_t *offset);

/** rsp_elfsyms__find() - a symbol's address by name (linear). 0 or -ENOENT. */
int rsp_elfsyms__find(const struct rsp_elfsyms *e, const char *name, uint64_t *vaddr,
		      uint64_t *size);

#endif
