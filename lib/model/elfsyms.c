// SPDX-License-Identifier: LGPL-2.1
/*
 * Function symbols of one ELF object, through libelf (as Prospect does):
 * the program headers that turn a file offset into a link-time address,
 * the build-id, and a sorted array of function symbols searched by
 * binary search.
 *
 * Which table: .symtab if the object has one; else the .symtab of its
 * separate debug file (DEBUG_DIR/.build-id/ab/cdef....debug, Debian's
 * -dbgsym packages); else .dynsym. From .dynsym only exported functions
 * are known: an address that lies past one exported function's end and
 * before the next one is inside some static function in between; it is
 * named "a->b" (Prospect's bracket), never given a made-up name.
 *
 * Files come from disk and may be hostile: every index libelf hands back
 * is checked by libelf (gelf_getsym, elf_strptr); sizes are ours to check.
 * Every ELF reader of lib/model opens with ELF_C_READ, not ELF_C_READ_MMAP:
 * libelf reads what is asked for (pread) into memory, so a file its owner
 * truncates while rspd reads it is a short read, not a SIGBUS that kills
 * the root daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal/elfsyms.h"
#include "internal/gallop.h"

#define NOTE_GNU "GNU"

struct sym_tmp {
	uint64_t start, size;
	uint32_t name;
	uint8_t rank; /* 0 global, 1 weak, 2 local: which alias names an address */
};

struct builder {
	struct sym_tmp *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

static void builder_exit(struct builder *b)
{
	free(b->v);
	free(b->names);
	memset(b, 0, sizeof(*b));
}

/*
 * A name without its symbol version ("memcpy@@GLIBC_2.14" is memcpy). One
 * scan (strchrnul): strchr() then strlen() read each name twice, and a
 * compiler's long C++ names made that 6% of a make window's snapshot.
 */
static int add_name(struct builder *b, const char *s, uint32_t *off)
{
	const char *at = strchrnul(s, '@');
	size_t n = (*at && at == s ? strlen(s) : (size_t)(at - s)) + 1;

	if (b->names_len + n > UINT32_MAX)
		return -E2BIG;
	if (b->names_len + n > b->names_cap) {
		size_t cap = b->names_cap ? b->names_cap : 4096;
		char *p;

		while (cap < b->names_len + n)
			cap *= 2;
		p = realloc(b->names, cap);
		if (!p)
			return -ENOMEM;
		b->names = p;
		b->names_cap = cap;
	}
	memcpy(b->names + b->names_len, s, n - 1);
	b->names[b->names_len + n - 1] = '\0';
	*off = (uint32_t)b->names_len;
	b->names_len += n;
	return 0;
}

static int add_sym(struct builder *b, const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);
	struct sym_tmp *t;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct sym_tmp *v = realloc(b->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	t = &b->v[b->n];
	t->start = sym->st_value;
	t->size = sym->st_size;
	t->rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	if (add_name(b, name, &t->name))
		return -ENOMEM;
	b->n++;
	return 0;
}

static bool is_function(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_shndx < SHN_LORESERVE && sym->st_value;
}

/* The function symbols of one symbol table section. */
static int read_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct builder *b)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || !is_function(&sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (add_sym(b, &sym, name))
			return -ENOMEM;
	}
	return 0;
}

/* Find the section of type @type; 0 and *scn, *sh, or -ENOENT. */
static int find_section(Elf *elf, Elf64_Word type, Elf_Scn **scn, GElf_Shdr *sh)
{
	Elf_Scn *s = NULL;

	while ((s = elf_nextscn(elf, s)) != NULL) {
		if (gelf_getshdr(s, sh) && sh->sh_type == type) {
			*scn = s;
			return 0;
		}
	}
	return -ENOENT;
}

static int read_symbols(Elf *elf, Elf64_Word type, struct builder *b)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (find_section(elf, type, &scn, &sh))
		return -ENOENT;
	return read_table(elf, scn, &sh, b);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_tmp *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Sort @v by cmp_sym(): by start a byte at a time (an LSD radix sort,
 * stable, over the bytes in which the starts differ: three or four for a
 * program's functions), then each run of equal starts (aliases, a few; a
 * hostile file's many) by rank and name. Hand-written, not qsort(): a
 * compiler's 27.6k dynamic symbols (cc1) cost a tenth of a make window's
 * snapshot in glibc's merge sort and its indirect compares. -ENOMEM
 * leaves @v as it was.
 */
static int sort_syms(struct sym_tmp *v, size_t n)
{
	struct sym_tmp *tmp, *from = v, *to;
	uint64_t diff = 0;

	if (n < 64) {
		qsort(v, n, sizeof(*v), cmp_sym);
		return 0;
	}
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	to = tmp;
	for (size_t i = 1; i < n; i++)
		diff |= v[i].start ^ v[0].start;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = {0}, pos = 0;

		if (!((diff >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[(from[i].start >> shift) & 0xff]++;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i].start >> shift) & 0xff]++] = from[i];
		from = to;
		to = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	for (size_t i = 0, j; i < n; i = j) { /* runs of aliases, by rank and name */
		for (j = i + 1; j < n && v[j].start == v[i].start; j++)
			;
		if (j - i > 1)
			qsort(v + i, j - i, sizeof(*v), cmp_sym);
	}
	return 0;
}

/* Sort, fold aliases, and move the result into @e. */
static int finish_symbols(struct rsp_elfsyms *e, struct builder *b)
{
	size_t n = 0;

	if (b->n > 1 && sort_syms(b->v, b->n))
		return -ENOMEM;
	e->syms = calloc(b->n ? b->n : 1, sizeof(e->syms[0]));
	if (!e->syms)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		if (n && e->syms[n - 1].start == b->v[i].start) {
			if (!e->syms[n - 1].size)
				e->syms[n - 1].size = b->v[i].size;
			continue;
		}
		e->syms[n].start = b->v[i].start;
		e->syms[n].size = b->v[i].size;
		e->syms[n].name = b->v[i].name;
		n++;
	}
	e->nr_syms = (uint32_t)n;
	e->names = b->names;
	e->names_size = b->names_len;
	b->names = NULL;
	e->bytes += n * sizeof(e->syms[0]) + e->names_size;
	return 0;
}

static int read_build_id_data(Elf_Data *data, uint8_t id[20])
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(NOTE_GNU) &&
		    !memcmp((const char *)data->d_buf + name_off, NOTE_GNU, sizeof(NOTE_GNU)) &&
		    nh.n_descsz > 0) {
			size_t n = nh.n_descsz > 20 ? 20 : nh.n_descsz;

			memcpy(id, (const char *)data->d_buf + desc_off, n);
			return (int)n;
		}
	}
	return 0;
}

static int read_build_id(Elf *elf, uint8_t id[20])
{
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	GElf_Shdr sh;
	int n;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (n = read_build_id_data(data, id)) > 0)
			return n;
	}
	/* No section headers (or no note section): the PT_NOTE segments. */
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && (n = read_build_id_data(data, id)) > 0)
			return n;
	}
	return 0;
}

static int read_loads(Elf *elf, struct rsp_elfsyms *e)
{
	size_t nph = 0;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	e->loads = calloc(nph ? nph : 1, sizeof(e->loads[0]));
	if (!e->loads)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nr_loads++] = (struct rsp_elf_load){
			.offset = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
		};
	}
	e->bytes += nph * sizeof(e->loads[0]);
	return 0;
}

/* Symbols from a separate debug file, found by build-id. */
static int read_debug_file(struct rsp_elfsyms *e, const char *debug_dir, struct builder *b)
{
	char path[4096];
	size_t n;
	Elf *elf;
	int fd, ret;

	if (!debug_dir || !*debug_dir || e->build_id_size < 2)
		return -ENOENT;
	n = (size_t)snprintf(path, sizeof(path), "%s/.build-id/%02x/", debug_dir, e->build_id[0]);
	for (int i = 1; i < e->build_id_size && n + 3 < sizeof(path); i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", e->build_id[i]);
	snprintf(path + n, sizeof(path) - n, ".debug");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ret = elf ? read_symbols(elf, SHT_SYMTAB, b) : -ENOENT;
	elf_end(elf);
	close(fd);
	return ret;
}

static int load_elf(Elf *elf, struct rsp_elfsyms *e, const char *debug_dir, struct rsp_buf *err)
{
	struct builder b = {0};
	GElf_Ehdr eh;
	int ret;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		rsp_buf__printf(err, "%s is not an ELF object", e->path);
		return -ENOEXEC;
	}
	e->is_dyn = eh.e_type == ET_DYN;
	e->build_id_size = (uint8_t)read_build_id(elf, e->build_id);
	ret = read_loads(elf, e);
	if (ret)
		goto nomem;
	e->source = RSP_ELFSYMS_SYMTAB;
	ret = read_symbols(elf, SHT_SYMTAB, &b);
	if (ret == -ENOENT || (!ret && !b.n)) {
		ret = read_debug_file(e, debug_dir, &b);
		e->debug_file = !ret && b.n;
	}
	if (ret == -ENOENT || (!ret && !b.n)) {
		e->source = RSP_ELFSYMS_DYNSYM;
		ret = read_symbols(elf, SHT_DYNSYM, &b);
	}
	if (ret == -ENOMEM)
		goto nomem;
	if (!b.n)
		e->source = RSP_ELFSYMS_NONE;
	ret = finish_symbols(e, &b);
	builder_exit(&b);
	if (ret)
		goto nomem;
	return 0;
nomem:
	builder_exit(&b);
	rsp_buf__printf(err, "out of memory reading the symbols of %s", e->path);
	return -ENOMEM;
}

static struct rsp_elfsyms *alloc_syms(const char *path, struct rsp_buf *err)
{
	struct rsp_elfsyms *e = calloc(1, sizeof(*e));

	if (e)
		e->path = strdup(path);
	if (!e || !e->path) {
		free(e);
		rsp_buf__puts(err, "out of memory");
		return NULL;
	}
	e->bytes = sizeof(*e) + strlen(path) + 1;
	return e;
}

struct rsp_elfsyms *rsp_elfsyms__load_fd(int fd, const char *path, const char *debug_dir,
					 struct rsp_buf *err)
{
	struct rsp_elfsyms *e;
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	e = alloc_syms(path, err);
	if (!e)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		rsp_buf__printf(err, "cannot read %s as ELF: %s", path, elf_errmsg(-1));
		rsp_elfsyms__delete(e);
		return NULL;
	}
	ret = load_elf(elf, e, debug_dir, err);
	elf_end(elf);
	if (ret) {
		rsp_elfsyms__delete(e);
		return NULL;
	}
	return e;
}

struct rsp_elfsyms *rsp_elfsyms__load_mem(const void *image, size_t size, const char *name,
					  struct rsp_buf *err)
{
	struct rsp_elfsyms *e;
	char *copy;
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	e = alloc_syms(name, err);
	copy = malloc(size ? size : 1);
	if (!e || !copy) {
		free(copy);
		rsp_elfsyms__delete(e);
		return NULL;
	}
	/* libelf may write into the image it reads: give it a private copy. */
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		rsp_buf__printf(err, "cannot read %s as ELF: %s", name, elf_errmsg(-1));
		free(copy);
		rsp_elfsyms__delete(e);
		return NULL;
	}
	ret = load_elf(elf, e, NULL, err);
	elf_end(elf);
	free(copy);
	if (ret) {
		rsp_elfsyms__delete(e);
		return NULL;
	}
	return e;
}

void rsp_elfsyms__delete(struct rsp_elfsyms *e)
{
	if (!e)
		return;
	if (e->brackets)
		for (uint32_t i = 0; i <= e->nr_syms; i++)
			free(e->brackets[i]);
	free(e->brackets);
	free(e->syms);
	free(e->names);
	free(e->loads);
	free(e->path);
	free(e);
}

int rsp_elfsyms__build_id_fd(int fd, uint8_t id[20])
{
	Elf *elf;
	int n = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		n = read_build_id(elf, id);
	elf_end(elf);
	return n;
}

bool rsp_elfsyms__vaddr(const struct rsp_elfsyms *e, uint64_t off, uint64_t *vaddr)
{
	/* Exactly inside a segment's file bytes first, then its page-aligned start. */
	for (uint32_t i = 0; i < e->nr_loads; i++) {
		const struct rsp_elf_load *l = &e->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return true;
		}
	}
	for (uint32_t i = 0; i < e->nr_loads; i++) {
		const struct rsp_elf_load *l = &e->loads[i];
		uint64_t page = l->offset & ~0xfffull;

		if (off >= page && off < l->offset + l->memsz) {
			*vaddr = l->vaddr - l->offset +
				 off; /* modulo 2^64: off may be below offset */
			return true;
		}
	}
	return false;
}

/* Index of the last symbol starting at or below @a, or -1. */
static long sym_floor(const struct rsp_elfsyms *e, uint64_t a)
{
	return (long)rsp_gallop__above(e->syms, sizeof(e->syms[0]),
				       offsetof(struct rsp_elfsym, start), e->nr_syms, a) -
	       1;
}

/* "a->b" for the gap after symbol @i (i = -1: before the first). */
static const char *bracket(struct rsp_elfsyms *e, long i)
{
	const char *lo = i >= 0 ? e->names + e->syms[i].name : "?";
	const char *hi = i + 1 < (long)e->nr_syms ? e->names + e->syms[i + 1].name : "?";
	size_t n;

	if (!e->brackets) {
		e->brackets = calloc((size_t)e->nr_syms + 1, sizeof(char *));
		if (!e->brackets)
			return NULL;
		e->bytes += ((size_t)e->nr_syms + 1) * sizeof(char *);
	}
	if (e->brackets[i + 1])
		return e->brackets[i + 1];
	n = strlen(lo) + strlen(hi) + 3;
	e->brackets[i + 1] = malloc(n);
	if (!e->brackets[i + 1])
		return NULL;
	snprintf(e->brackets[i + 1], n, "%s->%s", lo, hi);
	e->bytes += n;
	return e->brackets[i + 1];
}

enum rsp_sym_match rsp_elfsyms__lookup(struct rsp_elfsyms *e, uint64_t vaddr, const char **name,
				       uint64_t *offset)
{
	long i = sym_floor(e, vaddr);
	const struct rsp_elfsym *s = i >= 0 ? &e->syms[i] : NULL;

	*name = NULL;
	*offset = 0;
	if (!e->nr_syms)
		return RSP_SYM_NONE;
	if (s) {
		bool inside =
			s->size ? vaddr - s->start < s->size
				: e->source == RSP_ELFSYMS_SYMTAB && (i + 1 == (long)e->nr_syms ||
								      vaddr < e->syms[i + 1].start);

		*offset = vaddr - s->start;
		if (inside) {
			*name = e->names + s->name;
			return RSP_SYM_EXACT;
		}
	}
	*name = bracket(e, i);
	return *name ? RSP_SYM_BRACKET : RSP_SYM_NONE;
}

int rsp_elfsyms__find(const struct rsp_elfsyms *e, const char *name, uint64_t *vaddr,
		      uint64_t *size)
{
	for (uint32_t i = 0; i < e->nr_syms; i++) {
		if (!strcmp(e->names + e->syms[i].name, name)) {
			*vaddr = e->syms[i].start;
			if (size)
				*size = e->syms[i].size;
			return 0;
		}
	}
	return -ENOENT;
}
