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
 *   - by the DWARF unwinder (lib/model/unwind.c): its .eh_frame_hdr and
 *     .eh_frame, for a sample whose IP is in the file, with a stack of the
 *     input's bytes;
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
#include <linux/perf_event.h>
#include <rsp/maps.h>
#include <rsp/record.h>
#include <rsp/schema.h>
#include <rsp/symbols.h>
#include <rsp/unwind.h>
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
		uint64_t at[] = {s->start - 1, s->start, s->start + s->size / 2,
				 s->start + s->size};

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

#define SAMPLE_ID    77
#define NR_REGS	     17
#define SAMPLE_STACK 512

static struct rsp_schema *sample_schema(void)
{
	struct rsp_schema *s = rsp_schema__new();
	struct perf_event_attr a = {.size = sizeof(a),
				    .sample_type = RSP_LAYOUT_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER |
						   PERF_SAMPLE_STACK_USER,
				    .sample_regs_user = RSP_UNWIND_REGS_MASK,
				    .sample_stack_user = SAMPLE_STACK,
				    .sample_id_all = 1};

	if (!s || rsp_schema__add_evsel(s, &a, RSP_EV_cpu_clock, RSP_ROLE_PRIMARY, "c") ||
	    rsp_schema__add_id(s, 0, SAMPLE_ID))
		abort();
	return s;
}

/*
 * A user-stack sample of pid 7 at @ip (as the kernel lays it out: id, ip,
 * pid/tid, time, cpu, regs ABI and registers, then the stack), the stack's
 * words taken from @data: the unwinder reads CFI of the file at @ip.
 */
static void unwind_at(struct rsp_unwinder *u, const struct rsp_schema *s, uint64_t ip,
		      const uint8_t *data, size_t size)
{
	uint64_t rec[6 + 1 + NR_REGS + 1 + SAMPLE_STACK / 8 + 1] = {0}, *w = rec + 1, ips[32];
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct rsp_sample smp;

	*w++ = SAMPLE_ID;
	*w++ = ip;
	*w++ = 7ull | 7ull << 32;
	*w++ = 2;
	*w++ = 0;
	*w++ = PERF_SAMPLE_REGS_ABI_64;
	w[6] = 0x7ffd00000100ull; /* BP */
	w[7] = 0x7ffd00000000ull; /* SP */
	w[8] = ip;
	w += NR_REGS;
	*w++ = SAMPLE_STACK;
	memcpy(w, data, size < SAMPLE_STACK ? size : SAMPLE_STACK);
	w += SAMPLE_STACK / 8;
	*w++ = SAMPLE_STACK;
	h->type = PERF_RECORD_SAMPLE;
	h->size = (uint16_t)((char *)w - (char *)rec);
	if (!rsp_record__parse_sample(s, h, &smp))
		rsp_unwinder__unwind(u, s, &smp, ips, 32);
}

/* The file mapped at each of its PT_LOADs in pid 7, then resolved as top does. */
static void symbolize(const char *path, const struct rsp_elfsyms *e, const struct stat *st,
		      const uint8_t *data, size_t size)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = "", .debug_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	uint64_t base = 0x7f0000000000ull;
	struct rsp_schema *schema = sample_schema();
	struct rsp_sym r;
	char buf[256];

	if (!s || !rsp_symbolizer__unwinder(s))
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
		for (uint32_t i = 0; !q && i < e->nr_syms && i < 8; i++)
			unwind_at(rsp_symbolizer__unwinder(s), schema, base + e->syms[i].start,
				  data, size);
		if (!q) /* rewritten in place: the next query reads it again */
			utimensat(AT_FDCWD, path,
				  (struct timespec[2]){{.tv_sec = 1}, {.tv_sec = 1}}, 0);
	}
	rsp_symbolizer__delete(s);
	rsp_schema__delete(schema);
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
		symbolize(path, e, &st, data, size);
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
