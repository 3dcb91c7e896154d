// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: ELF files as the symbol readers see them. rspd reads
 * the executables and libraries of every process it profiles, and any local
 * user writes those: their symbol tables, program headers and build-id
 * notes must never crash rspd or make it read out of bounds. The input is
 * one ELF file, read
 *   - by rsp_elfsyms (lib/model/elfsyms.c): the build-id note, the symbol
 *     tables from the file and from memory (as the vdso is read), lookups at
 *     and between every symbol (the "a->b" brackets), file offsets to
 *     addresses;
 *   - by the symbolizer (lib/model/symbols.c): mapped into a process of a
 *     synthetic model at each PT_LOAD, resolved through its cache, then read
 *     again as a file rewritten in place;
 *   - by the uprobe resolver (lib/model/uprobe.c): `stopwatch add` places a
 *     probe by a symbol's name.
 * Each either answers or refuses with a sentence.
 *
 * Build: scripts/build.sh fuzz; run: build/fuzz/fuzz/fuzz_elf CORPUS
 * Seeds: fuzz/corpus/fuzz_elf/, small executables and libraries
 * (fuzz/mkseeds_elf.sh): with and without .symtab, PIE and not, a build-id,
 * a separate-code layout.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include <rsp/uprobe.h>
#include "internal/elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every symbol, the addresses around it, and a name search: what queries ask of a table. */
static void walk(struct rsp_elfsyms *e)
{
	uint64_t off, v, vaddr;
	const char *name;

	for (uint32_t i = 0; i < e->nr_syms && i < 512; i++) {
		const struct rsp_elfsym *s = &e->syms[i];
		uint64_t at[] = {s->start - 1, s->start, s->start + s->size / 2, s->start + s->size};

		for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
			if (rsp_elfsyms__lookup(e, at[k], &name, &off) != RSP_SYM_NONE &&
			    (!name || strlen(name) > (1u << 20)))
				abort(); /* a match has a name, inside the table */
	}
	if (e->nr_syms)
		rsp_elfsyms__find(e, e->names + e->syms[0].name, &vaddr, NULL);
	for (uint32_t i = 0; i < e->nr_loads && i < 64; i++)
		rsp_elfsyms__vaddr(e, e->loads[i].offset + e->loads[i].filesz / 2, &v);
}

/* The file mapped at each of its PT_LOADs in pid 7, then resolved as top does. */
static void symbolize(const char *path, const struct rsp_elfsyms *e, const struct stat *st)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = "", .debug_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	uint64_t base = 0x7f0000000000ull;
	struct rsp_sym r;
	char buf[256];

	if (!s)
		abort();
	for (uint32_t i = 0; i < e->nr_loads && i < 16; i++) {
		const struct rsp_elf_load *l = &e->loads[i];
		struct rsp_map_info mi = {
			.start = base + (l->vaddr & ~0xfffull),
			.end = base + ((l->vaddr + (l->memsz & 0xffffffffull) + 0xfff) & ~0xfffull),
			.pgoff = l->offset & ~0xfffull,
			.ino = st->st_ino,
			.prot = PROT_READ | PROT_EXEC,
			.path = path,
			.path_len = strlen(path),
		};

		if (mi.end > mi.start)
			rsp_maps__mmap(rsp_symbolizer__maps(s), 7, 1, &mi);
	}
	for (int q = 0; q < 2; q++) {
		rsp_symbolizer__begin(s);
		for (uint32_t i = 0; i < e->nr_syms && i < 64; i++) {
			rsp_symbolizer__resolve(s, 7, 2, base + e->syms[i].start, 0, &r);
			rsp_sym__format(&r, true, buf, sizeof(buf));
		}
		if (!q) /* rewritten in place: the next query reads it again */
			utimensat(AT_FDCWD, path, (struct timespec[2]){{.tv_sec = 1}, {.tv_sec = 1}},
				  0);
	}
	rsp_symbolizer__delete(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_uprobe_target ut;
	struct rsp_elfsyms *e;
	char path[] = "/tmp/rsp-fuzz-elf.XXXXXX";
	uint8_t id[20];
	struct stat st;
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || fstat(fd, &st))
		abort();
	if (rsp_elfsyms__build_id_fd(fd, id) > 20)
		abort();
	e = rsp_elfsyms__load_fd(fd, path, NULL, &err);
	if (!e && !err.len)
		abort(); /* a refusal says why */
	if (e) {
		walk(e);
		symbolize(path, e, &st);
		rsp_elfsyms__delete(e);
	}
	rsp_buf__reset(&err);
	e = rsp_elfsyms__load_mem(data, size, "[vdso]", &err);
	if (e) {
		walk(e);
		rsp_elfsyms__delete(e);
	}
	rsp_buf__reset(&err);
	rsp_uprobe__resolve(path, "main", &ut, &err);
	rsp_buf__exit(&err);
	close(fd);
	unlink(path);
	return 0;
}
