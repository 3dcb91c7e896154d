// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the symbol layer: ELF symbols (lib/model/elfsyms.c) of the
 * fixtures built with the tests (tests/fixtures: libsymfix.so, its stripped
 * copy, PIE and non-PIE executables), kallsyms and JIT map parsing, the
 * symbolizer's resolution through the process model, its cache (hits,
 * build-id copies, LRU, files changed in place), callchains, and
 * `rspctl top` on a synthetic stream.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <jansson.h>
#include <rsp/query.h>
#include <rsp/symbols.h>
#include "internal/elfsyms.h"
#include "internal/jitmap.h"
#include <rsp/ksyms.h>
#include "support/synth.h"

#define LIB	     RSP_FIXTURE_DIR "/libsymfix.so"
#define LIB_STRIPPED RSP_FIXTURE_DIR "/libsymfix.stripped.so"
#define EXE_PIE	     RSP_FIXTURE_DIR "/exe_fix_pie"
#define EXE_NOPIE    RSP_FIXTURE_DIR "/exe_fix_nopie"

static struct rsp_elfsyms *load(const char *path)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct rsp_elfsyms *e;

	assert_true(fd >= 0);
	e = rsp_elfsyms__load_fd(fd, path, "", &err);
	close(fd);
	if (!e)
		fail_msg("%s: %s", path, err.data);
	rsp_buf__exit(&err);
	return e;
}

/* Link-time address of a function of an unstripped fixture. */
static uint64_t sym_addr(const char *path, const char *name)
{
	struct rsp_elfsyms *e = load(path);
	uint64_t v = 0;

	assert_int_equal(rsp_elfsyms__find(e, name, &v, NULL), 0);
	rsp_elfsyms__delete(e);
	return v;
}

/* Map @path into @pid at @base as ld.so would: each PT_LOAD, page-aligned. */
static void map_file(struct rsp_maps *m, uint32_t pid, uint64_t t, const char *path, uint64_t base)
{
	struct rsp_elfsyms *e = load(path);
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	for (uint32_t i = 0; i < e->nr_loads; i++) {
		const struct rsp_elf_load *l = &e->loads[i];
		struct rsp_map_info mi = {
			.start = base + (l->vaddr & ~0xfffull),
			.end = base + ((l->vaddr + l->memsz + 0xfff) & ~0xfffull),
			.pgoff = l->offset & ~0xfffull,
			.maj = major(st.st_dev),
			.min = minor(st.st_dev),
			.ino = st.st_ino,
			.prot = PROT_READ | PROT_EXEC,
			.path = path,
			.path_len = strlen(path),
		};

		assert_int_equal(rsp_maps__mmap(m, pid, t, &mi), 0);
	}
	rsp_elfsyms__delete(e);
}

static void test_elf_tables(void **state)
{
	struct rsp_elfsyms *u = load(LIB), *s = load(LIB_STRIPPED);
	uint64_t a, b, hidden, size;
	const char *name;
	uint64_t off;

	assert_int_equal(u->source, RSP_ELFSYMS_SYMTAB);
	assert_int_equal(s->source, RSP_ELFSYMS_DYNSYM);
	assert_true(u->is_dyn && s->is_dyn);
	assert_int_equal(u->build_id_size, 20);
	assert_memory_equal(u->build_id, s->build_id, 20); /* strip keeps it */
	assert_int_equal(rsp_elfsyms__find(u, "fix_a", &a, &size), 0);
	assert_true(size > 0);
	assert_int_equal(rsp_elfsyms__find(u, "fix_hidden", &hidden, NULL), 0);
	assert_int_equal(rsp_elfsyms__find(u, "fix_b", &b, NULL), 0);
	assert_true(a < hidden && hidden < b); /* source order, as built */
	assert_int_equal(rsp_elfsyms__find(s, "fix_hidden", &off, NULL), -ENOENT);
	/* unstripped: exact names */
	assert_int_equal(rsp_elfsyms__lookup(u, hidden + 3, &name, &off), RSP_SYM_EXACT);
	assert_string_equal(name, "fix_hidden");
	assert_int_equal((int)off, 3);
	assert_int_equal(rsp_elfsyms__lookup(u, a, &name, &off), RSP_SYM_EXACT);
	assert_string_equal(name, "fix_a");
	/* stripped: exported functions exact, the static one bracketed */
	assert_int_equal(rsp_elfsyms__lookup(s, a + 1, &name, &off), RSP_SYM_EXACT);
	assert_string_equal(name, "fix_a");
	assert_int_equal(rsp_elfsyms__lookup(s, hidden + 3, &name, &off), RSP_SYM_BRACKET);
	assert_string_equal(name, "fix_a->fix_b");
	assert_int_equal(off, hidden + 3 - a);
	{
		const char *again;

		/* the same bracket is the same string */
		assert_int_equal(rsp_elfsyms__lookup(s, hidden + 7, &again, &off), RSP_SYM_BRACKET);
		assert_ptr_equal(again, name);
	}
	/* before the first exported function, after the last */
	assert_int_equal(rsp_elfsyms__lookup(s, 0x10, &name, &off), RSP_SYM_BRACKET);
	assert_true(!strncmp(name, "?->", 3));
	assert_int_equal(rsp_elfsyms__lookup(s, 0x10000000, &name, &off), RSP_SYM_BRACKET);
	assert_non_null(strstr(name, "->?"));
	rsp_elfsyms__delete(u);
	rsp_elfsyms__delete(s);
	/*
	 * Past 64 symbols the table is sorted a byte at a time (elfsyms.c):
	 * libc's exported functions, aliases among them, come out strictly
	 * ascending, and each name looked up by address is a name of that
	 * address.
	 */
	if (access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) == 0) {
		struct rsp_elfsyms *c = load("/lib/x86_64-linux-gnu/libc.so.6");
		uint64_t m, m2;

		assert_true(c->nr_syms > 1000);
		for (uint32_t i = 1; i < c->nr_syms; i++)
			assert_true(c->syms[i - 1].start < c->syms[i].start);
		assert_int_equal(rsp_elfsyms__find(c, "malloc", &m, NULL), 0);
		assert_int_equal(rsp_elfsyms__lookup(c, m, &name, &off), RSP_SYM_EXACT);
		assert_int_equal(off, 0);
		assert_int_equal(rsp_elfsyms__find(c, name, &m2, NULL), 0);
		assert_int_equal(m2, m);
		rsp_elfsyms__delete(c);
	}
	/* a stripped executable exports no functions: nothing to name */
	s = load(RSP_WORKLOAD_DIR "/sym_burn.stripped");
	assert_int_equal(s->source, RSP_ELFSYMS_NONE);
	assert_int_equal(rsp_elfsyms__lookup(s, 0x1100, &name, &off), RSP_SYM_NONE);
	assert_null(name);
	rsp_elfsyms__delete(s);
	/* not an ELF file */
	{
		struct rsp_buf err = RSP_BUF_INIT;
		int fd = open("/proc/self/status", O_RDONLY);

		assert_null(rsp_elfsyms__load_fd(fd, "/proc/self/status", "", &err));
		assert_non_null(strstr(err.data, "not an ELF"));
		close(fd);
		rsp_buf__exit(&err);
	}
}

/* PIE and non-PIE: the runtime address goes through PT_LOAD to the symbol. */
static void test_pie_nopie(void **state)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = "", .debug_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	struct rsp_maps *m = rsp_symbolizer__maps(s);
	uint64_t pie = sym_addr(EXE_PIE, "exe_beta"), nopie = sym_addr(EXE_NOPIE, "exe_beta");
	const uint64_t base = 0x555555554000ull;
	struct rsp_sym r;
	struct rsp_elfsyms *e = load(EXE_NOPIE);

	assert_false(e->is_dyn);
	assert_true(nopie >= 0x400000); /* linked at its run-time address */
	rsp_elfsyms__delete(e);
	map_file(m, 10, 1, EXE_PIE, base);
	map_file(m, 11, 1, EXE_NOPIE, 0);
	assert_int_equal(rsp_symbolizer__resolve(s, 10, 2, base + pie + 2, 0, &r), 0);
	assert_string_equal(r.name, "exe_beta");
	assert_int_equal(r.match, RSP_SYM_EXACT);
	assert_int_equal(r.kind, RSP_SYM_USER);
	assert_int_equal((int)r.offset, 2);
	assert_string_equal(r.object, EXE_PIE);
	assert_int_equal(r.file_addr, pie + 2);
	assert_int_equal(rsp_symbolizer__resolve(s, 11, 2, nopie + 2, 0, &r), 0);
	assert_string_equal(r.name, "exe_beta");
	assert_int_equal(r.file_addr, nopie + 2);
	/* no mapping, unknown process */
	assert_int_equal(rsp_symbolizer__resolve(s, 11, 2, 0x10, 0, &r), -ENOENT);
	assert_string_equal(r.why, "no mapping at this address");
	assert_int_equal(rsp_symbolizer__resolve(s, 12, 2, nopie, 0, &r), -ENOENT);
	assert_string_equal(r.why, "unknown process");
	/* the user frames of another user's process stay hidden */
	assert_int_equal(rsp_symbolizer__resolve(s, 11, 2, nopie + 2, RSP_SYM_HIDE_USER, &r),
			 -ENOENT);
	assert_true(r.hidden && !r.name && !r.object);
	/* kernel frames hidden from a requester perf_event_paranoid keeps out: one frame, no
	 * address */
	{
		const uint64_t ips[] = {PERF_CONTEXT_KERNEL,
					0xffffffff81000010ull,
					0xffffffff81000020ull,
					PERF_CONTEXT_USER,
					nopie + 2,
					nopie + 3};
		struct rsp_frame f[8];
		int n = rsp_symbolizer__callchain(s, 11, 2, ips, 6, RSP_SYM_HIDE_KERNEL, f, 8);

		assert_int_equal(n, 3);
		assert_true(f[0].sym.hidden && f[0].sym.kind == RSP_SYM_KERNEL && !f[0].sym.name &&
			    !f[0].sym.object && !f[0].sym.file_addr);
		assert_string_equal(f[1].sym.name, "exe_beta");
		n = rsp_symbolizer__callchain(s, 11, 2, ips, 6,
					      RSP_SYM_HIDE_KERNEL | RSP_SYM_HIDE_USER, f, 8);
		assert_int_equal(n, 2);
		assert_true(f[0].sym.hidden && f[0].sym.kind == RSP_SYM_KERNEL);
		assert_true(f[1].sym.hidden && f[1].sym.kind == RSP_SYM_USER);
	}
	rsp_symbolizer__delete(s);
}

typedef uint64_t (*fix_fn)(uint64_t);
typedef uintptr_t (*addr_fn)(void);

/* The real thing: this process, its /proc maps, the libraries it loaded. */
static void test_live_process(void **state)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = "", .live = true};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	void *hu = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
	void *hs = dlopen(LIB_STRIPPED, RTLD_NOW | RTLD_LOCAL);
	uint32_t pid = (uint32_t)getpid();
	struct rsp_symbolizer_stats st;
	uintptr_t a, hidden_u, hidden_s;
	struct rsp_sym r;

	assert_non_null(hu);
	assert_non_null(hs);
	assert_ptr_not_equal(dlsym(hu, "fix_a"), dlsym(hs, "fix_a")); /* two copies */
	assert_int_equal(rsp_procfs__load_pid(rsp_symbolizer__maps(s), "/proc", pid, 100), 0);
	a = (uintptr_t)dlsym(hu, "fix_a");
	hidden_u = ((addr_fn)(uintptr_t)dlsym(hu, "fix_hidden_addr"))();
	hidden_s = ((addr_fn)(uintptr_t)dlsym(hs, "fix_hidden_addr"))();
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, pid, 200, a + 1, 0, &r), 0);
	assert_string_equal(r.name, "fix_a");
	assert_string_equal(r.object, LIB);
	assert_int_equal(rsp_symbolizer__resolve(s, pid, 200, hidden_u + 2, 0, &r), 0);
	assert_string_equal(r.name, "fix_hidden");
	assert_int_equal(r.match, RSP_SYM_EXACT);
	assert_int_equal(rsp_symbolizer__resolve(s, pid, 200, hidden_s + 2, 0, &r), 0);
	assert_string_equal(r.name, "fix_a->fix_b");
	assert_int_equal(r.match, RSP_SYM_BRACKET);
	assert_string_equal(r.object, LIB_STRIPPED);
	assert_int_equal(rsp_symbolizer__resolve(s, pid, 200, (uintptr_t)dlsym(hs, "fix_c"), 0, &r),
			 0);
	assert_string_equal(r.name, "fix_c");
	/* this test's own function, from the executable's .symtab */
	assert_int_equal(
		rsp_symbolizer__resolve(s, pid, 200, (uintptr_t)&test_live_process + 1, 0, &r), 0);
	assert_string_equal(r.name, "test_live_process");
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.misses, 3);
	assert_int_equal((int)st.hits, 2);
	/* a second query reads nothing again */
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, pid, 200, a, 0, &r), 0);
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.misses, 3);
	assert_int_equal((int)st.hits, 3);
	assert_int_equal((int)st.objects, 3);
	dlclose(hu);
	dlclose(hs);
	rsp_symbolizer__delete(s);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	assert_int_equal(system(cmd), 0);
}

/* The cache: keys, build-id copies, LRU bound, files changed or gone. */
static void test_cache(void **state)
{
	struct rsp_symbolizer_config cfg = {.max_objects = 2, .kallsyms = "", .jit_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	struct rsp_maps *m = rsp_symbolizer__maps(s);
	char dir[] = "/tmp/rsp_sym_test.XXXXXX", copy[256], copy2[256], cmd[300];
	uint64_t a = sym_addr(LIB, "fix_a"), base = 0x7f0000000000ull;
	struct rsp_symbolizer_stats st;
	struct rsp_sym r;
	const char *kept;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/copy.so", dir);
	snprintf(copy2, sizeof(copy2), "%s/copy2.so", dir);
	copy_file(LIB, copy);
	copy_file(LIB, copy2);
	map_file(m, 1, 1, LIB, base);
	map_file(m, 2, 1, LIB, base);	       /* same file in another process */
	map_file(m, 3, 1, copy, base);	       /* a copy: another inode, same build-id and size */
	map_file(m, 4, 1, LIB_STRIPPED, base); /* same build-id, not the same symbols */
	map_file(m, 5, 1, EXE_PIE, base);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 2, base + a, 0, &r), 0);
	kept = r.name;
	assert_int_equal(rsp_symbolizer__resolve(s, 2, 2, base + a, 0, &r), 0);
	assert_ptr_equal(r.name, kept); /* one table */
	assert_int_equal(rsp_symbolizer__resolve(s, 3, 2, base + a, 0, &r), 0);
	assert_ptr_equal(r.name, kept); /* found by build-id and size */
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.misses, 1);
	assert_int_equal((int)st.hits, 1);
	assert_int_equal((int)st.build_id_hits, 1);
	/* the stripped copy is its own object: its names do not depend on history */
	assert_int_equal(
		rsp_symbolizer__resolve(s, 4, 2, base + sym_addr(LIB, "fix_hidden"), 0, &r), 0);
	assert_string_equal(r.name, "fix_a->fix_b");
	/* a third object in the same query: over the bound, nothing freed under us */
	assert_int_equal(
		rsp_symbolizer__resolve(s, 5, 2, base + sym_addr(EXE_PIE, "exe_alpha"), 0, &r), 0);
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.objects, 3);
	assert_string_equal(kept, "fix_a");
	/* the next query trims to the bound, least recently used first */
	rsp_symbolizer__begin(s);
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.objects, 2);
	assert_int_equal((int)st.evictions, 1);
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 2, base + a, 0, &r), 0); /* read again */
	assert_string_equal(r.name, "fix_a");
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.misses, 4);
	/* a file rewritten in place (same inode) is read again by the next query */
	snprintf(copy, sizeof(copy), "%s/copy3.so", dir);
	copy_file(LIB, copy);
	f = fopen(copy, "a");
	assert_non_null(f);
	fputs("a size of its own", f);
	fclose(f);
	map_file(m, 7, 1, copy, base);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 7, 2, base + a, 0, &r), 0);
	f = fopen(copy, "a");
	assert_non_null(f);
	fputs("trailing bytes", f);
	fclose(f);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 7, 2, base + a, 0, &r), 0);
	assert_string_equal(r.name, "fix_a");
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.reloads, 1);
	/*
	 * A file replaced by another (a package upgrade renames the new file over
	 * the old one), and one deleted, before we ever read them. (A deleted
	 * file's inode number can be reused at once by a new file: (dev, ino)
	 * cannot tell them apart; a build-id from the mapping can.)
	 */
	map_file(m, 6, 1, copy2, base);
	snprintf(copy, sizeof(copy), "%s/new.so", dir);
	copy_file(EXE_PIE, copy);
	assert_int_equal(rename(copy, copy2), 0);
	assert_int_equal(rsp_symbolizer__resolve(s, 6, 2, base + a, 0, &r), -ENOENT);
	assert_string_equal(r.why, "the file was replaced since it was mapped");
	rsp_symbolizer__begin(s); /* failures are tried again by the next query */
	assert_int_equal(rsp_symbolizer__resolve(s, 6, 2, base + a, 0, &r), -ENOENT);
	unlink(copy2);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 6, 3, base + a, 0, &r), -ENOENT);
	assert_string_equal(r.why, "the file is gone");
	rsp_symbolizer__delete(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A file rewritten in place while a copy of it (same build-id and size) is
 * served from its object: the query that finds the change has already
 * handed out that object's names for the copy, so the old table must outlive
 * the query (issue 40: the reload freed it under `top`'s sort).
 */
static void test_cache_reload_in_query(void **state)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	struct rsp_maps *m = rsp_symbolizer__maps(s);
	char dir[] = "/tmp/rsp_sym_test.XXXXXX", prog[256], copy[256], cmd[300];
	uint64_t a = sym_addr(LIB, "fix_a"), base = 0x7f0000000000ull;
	struct timespec later[2] = {{.tv_sec = 1}, {.tv_sec = 1}};
	struct rsp_symbolizer_stats st;
	struct rsp_sym r;
	const char *kept;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog.so", dir);
	snprintf(copy, sizeof(copy), "%s/prog_copy.so", dir);
	copy_file(LIB, prog);
	copy_file(LIB, copy);
	map_file(m, 1, 1, prog, base);
	map_file(m, 2, 1, copy, base);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 2, base + a, 0, &r), 0);
	assert_int_equal(utimensat(AT_FDCWD, prog, later, 0), 0); /* `touch` */
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 2, 2, base + a, 0, &r), 0);
	kept = r.name; /* the copy, served by prog's object (build-id and size) */
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 2, base + a, 0, &r), 0);
	assert_string_equal(r.name, "fix_a");
	assert_string_equal(kept, "fix_a"); /* still valid until the next begin */
	rsp_symbolizer__stats(s, &st);
	assert_int_equal((int)st.reloads, 1);
	assert_int_equal((int)st.build_id_hits, 1);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 2, 3, base + a, 0, &r), 0);
	assert_string_equal(r.name, "fix_a");
	rsp_symbolizer__delete(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A mapping that carries the build-id (MMAP2 in build-id mode). */
static void test_build_id_key(void **state)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	struct rsp_maps *m = rsp_symbolizer__maps(s);
	struct rsp_elfsyms *e = load(LIB);
	uint64_t a = sym_addr(LIB, "fix_a");
	uint8_t wrong[20] = {1, 2, 3};
	struct rsp_map_info mi = {.start = 0x10000,
				  .end = 0x20000,
				  .prot = PROT_EXEC,
				  .path = LIB,
				  .path_len = strlen(LIB)};
	struct rsp_symbolizer_stats st;
	struct rsp_sym r;

	/* the file's own layout: map the text segment where its offset says */
	for (uint32_t i = 0; i < e->nr_loads; i++)
		if (a >= e->loads[i].vaddr && a - e->loads[i].vaddr < e->loads[i].memsz)
			mi.pgoff = e->loads[i].offset & ~0xfffull;
	mi.build_id = e->build_id;
	mi.build_id_size = e->build_id_size;
	assert_int_equal(rsp_maps__mmap(m, 1, 1, &mi), 0);
	assert_int_equal(rsp_maps__mmap(m, 2, 1, &mi), 0);
	mi.build_id = wrong;
	assert_int_equal(rsp_maps__mmap(m, 3, 1, &mi), 0);
	{
		uint64_t addr = 0;

		assert_true(rsp_elfsyms__vaddr(e, mi.pgoff, &addr));
		addr = 0x10000 + (a - addr);
		assert_int_equal(rsp_symbolizer__resolve(s, 1, 2, addr, 0, &r), 0);
		assert_string_equal(r.name, "fix_a");
		assert_int_equal(rsp_symbolizer__resolve(s, 2, 2, addr, 0, &r), 0);
		rsp_symbolizer__stats(s, &st);
		assert_int_equal((int)st.misses, 1);
		assert_int_equal((int)st.hits, 1);
		assert_int_equal(rsp_symbolizer__resolve(s, 3, 2, addr, 0, &r), -ENOENT);
		assert_string_equal(r.why, "the file's build-id differs from the mapped one");
	}
	rsp_elfsyms__delete(e);
	rsp_symbolizer__delete(s);
}

static const char kallsyms_text[] = "ffffffff81000000 T _text\n"
				    "ffffffff81000000 T _stext\n"
				    "ffffffff81000100 t do_one\n"
				    "ffffffff81000200 T do_two\n"
				    "ffffffff81000300 W weak_fn\n"
				    "ffffffff81000400 d some_data\n"
				    "ffffffff81000500 T _etext\n"
				    "this is not a symbol line\n"
				    "ffffffffc0001000 t mod_fn\t[ext4]\n"
				    "ffffffffc0001100 t mod_fn2\t[ext4]\n"
				    "ffffffffc0002000 t other_fn\t[xfs]\n";

static void test_kallsyms(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_ksyms *k = rsp_ksyms__new_from_text(kallsyms_text, strlen(kallsyms_text), &err);
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	struct rsp_sym sym;

	assert_non_null(k);
	assert_int_equal((int)rsp_ksyms__count(k), 8); /* text only, aliases folded */
	rsp_symbolizer__use_ksyms(s, k);
	rsp_symbolizer__begin(s);
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffff81000010ull, 0, &sym), 0);
	assert_string_equal(sym.name, "_text");
	assert_string_equal(sym.object, "[kernel]");
	assert_int_equal(sym.kind, RSP_SYM_KERNEL);
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffff81000150ull, 0, &sym), 0);
	assert_string_equal(sym.name, "do_one");
	assert_int_equal((int)sym.offset, 0x50);
	/* data symbols are not functions: weak_fn runs on to _etext */
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffff81000450ull, 0, &sym), 0);
	assert_string_equal(sym.name, "weak_fn");
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffffc0001050ull, 0, &sym), 0);
	assert_string_equal(sym.name, "mod_fn");
	assert_string_equal(sym.object, "[ext4]");
	assert_int_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffffc0002010ull, 0, &sym), 0);
	assert_string_equal(sym.object, "[xfs]");
	/* below the first; far past _etext (the next symbol is in a module);
	 * far beyond the last */
	assert_int_not_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffff80000000ull, 0, &sym), 0);
	assert_int_not_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffff90000000ull, 0, &sym), 0);
	assert_int_not_equal(rsp_symbolizer__resolve(s, 1, 0, 0xffffffffc1000000ull, 0, &sym), 0);
	rsp_symbolizer__delete(s);
	rsp_ksyms__delete(k);
	/* what an unprivileged reader sees */
	assert_null(rsp_ksyms__new_from_text("0000000000000000 T _text\n0000000000000000 t x\n", 44,
					     &err));
	assert_non_null(strstr(err.data, "kptr_restrict"));
	rsp_buf__reset(&err);
	assert_null(rsp_ksyms__new_from_text("garbage\n\0\n", 10, &err));
	assert_null(rsp_ksyms__new_from_file("/nonexistent/kallsyms", &err));
	rsp_buf__exit(&err);
}

static void test_jitmap(void **state)
{
	char dir[] = "/tmp/rsp_jit_test.XXXXXX", path[256], cmd[300];
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = dir};
	static const char text[] = "7f0000001000 100 jit_one\n"
				   "0x7f0000002000 0x80 LazyCompile:*foo bar.js:12\n"
				   "not a line\n"
				   "7f0000003000 0 zero_size\n"
				   "7f0000001000 100 jit_one_v2\n"
				   "7f1000000000 10 unmapped_jit\n";
	struct rsp_map_info anon = {.start = 0x7f0000000000ull,
				    .end = 0x7f0000100000ull,
				    .prot = PROT_EXEC,
				    .path = "//anon",
				    .path_len = 6};
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_symbolizer *s;
	struct rsp_jitmap *j;
	struct rsp_sym r;
	FILE *f;
	int e;

	assert_non_null(mkdtemp(dir));
	s = rsp_symbolizer__new(&cfg);
	snprintf(path, sizeof(path), "%s/perf-4242.map", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(rsp_maps__mmap(rsp_symbolizer__maps(s), 4242, 1, &anon), 0);
	assert_int_equal(rsp_symbolizer__resolve(s, 4242, 2, 0x7f0000001010ull, 0, &r), 0);
	assert_string_equal(r.name, "jit_one_v2"); /* the later line wins */
	assert_int_equal(r.kind, RSP_SYM_JIT);
	assert_int_equal((int)r.offset, 0x10);
	assert_int_equal(rsp_symbolizer__resolve(s, 4242, 2, 0x7f0000002040ull, 0, &r), 0);
	assert_string_equal(r.name, "LazyCompile:*foo bar.js:12");
	assert_int_equal(rsp_symbolizer__resolve(s, 4242, 2, 0x7f0000004000ull, 0, &r), -ENOENT);
	assert_string_equal(r.why, "anonymous code, not in the JIT map");
	assert_int_equal(rsp_symbolizer__resolve(s, 4242, 2, 0x7f1000000001ull, 0, &r), 0);
	assert_string_equal(r.name, "unmapped_jit");
	/* no map file for this process */
	assert_int_equal(rsp_maps__mmap(rsp_symbolizer__maps(s), 4343, 1, &anon), 0);
	assert_int_equal(rsp_symbolizer__resolve(s, 4343, 2, 0x7f0000001010ull, 0, &r), -ENOENT);
	assert_string_equal(r.why, "anonymous code, no JIT map");
	rsp_symbolizer__delete(s);
	/* the parser alone */
	j = rsp_jitmap__parse(text, sizeof(text) - 1, &err);
	assert_non_null(j);
	assert_int_equal((int)rsp_jitmap__count(j), 3);
	rsp_jitmap__delete(j);
	j = rsp_jitmap__parse("", 0, &err);
	assert_non_null(j);
	assert_int_equal((int)rsp_jitmap__count(j), 0);
	rsp_jitmap__delete(j);
	/* another user's file naming this process's code is refused */
	if (geteuid() == 0 && !chown(path, 1234, 1234)) {
		assert_null(rsp_jitmap__load(path, 4321, &e, &err));
		assert_int_equal(e, EPERM);
		j = rsp_jitmap__load(path, 1234, &e, &err);
		assert_non_null(j);
		rsp_jitmap__delete(j);
	}
	assert_null(rsp_jitmap__load("/nonexistent.map", 0, &e, &err));
	assert_int_equal(e, ENOENT);
	rsp_buf__exit(&err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Parsers of text that others write (a JIT's map, the kallsyms copy in a
 * dump): random mutations of valid text never crash or read out of bounds
 * (ASan checks the reads: each input sits in a buffer of its exact size).
 */
static void test_parsers_garbage(void **state)
{
	static const char seed[] = "7f0000001000 100 jit_one\n0x7f0000002000 0x80 two\n"
				   "ffffffff81000000 T _text\nffffffffc0001000 t m\t[ext4]\n"
				   "5600-5700 r-xp 00001000 08:01 99 /usr/bin/fx\n";
	struct rsp_buf err = RSP_BUF_INIT;
	uint64_t rnd = 42;

	for (int i = 0; i < 20000; i++) {
		size_t n = xorshift(&rnd) % sizeof(seed);
		char *buf = malloc(n + 1);
		struct rsp_jitmap *j;
		struct rsp_ksyms *k;
		struct rsp_map_info mi;

		memcpy(buf, seed, n);
		for (int m = (int)(xorshift(&rnd) % 8); m > 0 && n; m--)
			buf[xorshift(&rnd) % n] = (char)xorshift(&rnd);
		j = rsp_jitmap__parse(buf, n, &err);
		assert_non_null(j);
		rsp_jitmap__delete(j);
		k = rsp_ksyms__new_from_text(buf, n, &err);
		rsp_ksyms__delete(k);
		buf[n] = '\0';
		rsp_procfs__parse_maps_line(buf, &mi);
		rsp_buf__reset(&err);
		free(buf);
	}
	rsp_buf__exit(&err);
}

static struct rsp_symbolizer *fixture_symbolizer(void)
{
	struct rsp_symbolizer_config cfg = {.kallsyms = "", .jit_dir = "", .debug_dir = ""};
	struct rsp_symbolizer *s = rsp_symbolizer__new(&cfg);
	struct rsp_buf err = RSP_BUF_INIT;

	assert_non_null(s);
	assert_int_equal(
		rsp_symbolizer__set_kallsyms(s, kallsyms_text, strlen(kallsyms_text), &err), 0);
	rsp_buf__exit(&err);
	return s;
}

static void test_callchain(void **state)
{
	struct rsp_symbolizer *s = fixture_symbolizer();
	const uint64_t base = 0x7f0000000000ull;
	uint64_t a = base + sym_addr(LIB, "fix_a"), hid = base + sym_addr(LIB, "fix_hidden");
	uint64_t b = base + sym_addr(LIB, "fix_b");
	uint64_t ips[] = {
		(uint64_t)PERF_CONTEXT_KERNEL,
		0xffffffff81000150ull, /* the sampled kernel IP */
		0xffffffff81000201ull, /* a return address just inside do_two */
		(uint64_t)PERF_CONTEXT_USER,
		a + 4,	 /* the user IP */
		hid + 5, /* return addresses */
		b,	 /* b - 1 is before fix_b: whatever it is, it is not fix_b */
	};
	struct rsp_frame fr[8];
	int n;

	map_file(rsp_symbolizer__maps(s), 77, 1, LIB, base);
	n = rsp_symbolizer__callchain(s, 77, 2, ips, 7, 0, fr, 8);
	assert_int_equal(n, 5);
	assert_string_equal(fr[0].sym.name, "do_one");
	assert_int_equal(fr[0].sym.kind, RSP_SYM_KERNEL);
	assert_string_equal(fr[1].sym.name, "do_two");
	assert_int_equal((int)fr[1].sym.offset, 0); /* looked up at addr - 1 */
	assert_string_equal(fr[2].sym.name, "fix_a");
	assert_int_equal((int)fr[2].sym.offset, 4);
	assert_string_equal(fr[3].sym.name, "fix_hidden");
	assert_int_equal(fr[3].addr, hid + 5);
	assert_non_null(fr[4].sym.name);
	assert_string_not_equal(fr[4].sym.name, "fix_b");
	/* the frame budget */
	assert_int_equal(rsp_symbolizer__callchain(s, 77, 2, ips, 7, 0, fr, 2), 2);
	/* another user's process: kernel frames, then one hidden frame */
	n = rsp_symbolizer__callchain(s, 77, 2, ips, 7, RSP_SYM_HIDE_USER, fr, 8);
	assert_int_equal(n, 3);
	assert_true(fr[2].sym.hidden && !fr[2].sym.object);
	{
		char buf[64];

		assert_string_equal(rsp_sym__format(&fr[2].sym, true, buf, sizeof(buf)),
				    "[hidden]");
		assert_string_equal(rsp_sym__format(&fr[0].sym, true, buf, sizeof(buf)),
				    "do_one+0x50");
	}
	rsp_symbolizer__delete(s);
}

static uint64_t top_now;

static json_t *top_json(struct synth *syn, struct rsp_symbolizer *s, const char *const *argv,
			int argc)
{
	struct rsp_source src = {
		.window = syn->window, .schema = syn->schema, .symbols = s, .now = top_now};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_request req;
	json_error_t je;
	json_t *j;

	assert_int_equal(rsp_request__parse(argc, argv, &req, &err), 0);
	rsp_symbolizer__begin(s);
	if (rsp_query__run(&req, &src, &out, &err))
		fail_msg("top: %s", err.data);
	j = json_loads(out.data, 0, &je);
	assert_non_null(j);
	rsp_request__exit(&req);
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
	return j;
}

static json_t *row_named(json_t *rows, const char *name)
{
	size_t i;
	json_t *r;

	json_array_foreach (rows, i, r) {
		json_t *n = json_object_get(r, "name");

		if ((!name && json_is_null(n)) ||
		    (name && json_is_string(n) && !strcmp(json_string_value(n), name)))
			return r;
	}
	return NULL;
}

static int samples_of(json_t *rows, const char *name)
{
	json_t *r = row_named(rows, name);

	return r ? (int)json_integer_value(json_object_get(r, "samples")) : -1;
}

/* `rspctl top` on a synthetic stream whose answer is known. */
static void test_top(void **state)
{
	struct synth *syn = synth__new(2, 1 << 20);
	struct rsp_symbolizer *s = fixture_symbolizer();
	struct rsp_maps *m = rsp_symbolizer__maps(s);
	const uint64_t base = 0x7f0000000000ull;
	uint64_t a = base + sym_addr(LIB, "fix_a"), hid = base + sym_addr(LIB, "fix_hidden");
	json_t *j, *rows;
	uint64_t t = 1000;

	map_file(m, 900, 1, LIB, base);
	map_file(m, 901, 1, LIB_STRIPPED, base);
	assert_int_equal(rsp_maps__comm(m, 900, 900, 1, "unstripped", 10, false), 0);
	/* an empty window first */
	j = top_json(syn, s, (const char *const[]){"top", "--json"}, 2);
	assert_int_equal((int)json_integer_value(json_object_get(j, "samples")), 0);
	assert_int_equal((int)json_array_size(json_object_get(j, "symbols")), 0);
	json_decref(j);
	for (int i = 0; i < 6; i++)
		synth__cpu_sample(syn, .cpu = i % 2, .t = t++, .tid = 900, .ip = a + (uint64_t)i);
	for (int i = 0; i < 3; i++)
		synth__cpu_sample(syn, .cpu = 0, .t = t++, .tid = 900, .ip = hid + 1);
	for (int i = 0; i < 4; i++)
		synth__cpu_sample(syn, .cpu = 1, .t = t++, .tid = 901, .ip = hid + 2);
	synth__cpu_sample(syn, .cpu = 0, .t = t++, .tid = 901, .ip = 0xffffffff81000150ull,
			  .cpumode = PERF_RECORD_MISC_KERNEL, .period = 10101010);
	synth__cpu_sample(syn, .cpu = 0, .t = t++, .tid = 901,
			  .ip = 0x1234); /* nothing mapped there */
	synth__switch(syn, .cpu = 0, .t = t++, .prev = 1, .prev_comm = "noise", .state = 1,
		      .next = 2, .next_comm = "noise"); /* not a sample */
	/* exit of both before the query: they are still named */
	assert_int_equal(rsp_maps__exit(m, 900, 900, t), 0);
	assert_int_equal(rsp_maps__exit(m, 901, 901, t), 0);

	j = top_json(syn, s, (const char *const[]){"top", "--json", "--limit", "0"}, 4);
	rows = json_object_get(j, "symbols");
	assert_int_equal((int)json_integer_value(json_object_get(j, "samples")), 15);
	assert_int_equal((int)json_integer_value(json_object_get(j, "samples_kernel")), 1);
	assert_int_equal(samples_of(rows, "fix_a"), 6);
	assert_int_equal(samples_of(rows, "fix_hidden"), 3);
	assert_int_equal(samples_of(rows, "fix_a->fix_b"), 4);
	assert_string_equal(
		json_string_value(json_object_get(row_named(rows, "fix_a->fix_b"), "match")),
		"bracket");
	assert_int_equal(samples_of(rows, "do_one"), 1);
	assert_int_equal(samples_of(rows, NULL), 1);
	assert_string_equal(json_string_value(json_object_get(row_named(rows, NULL), "why")),
			    "no mapping at this address");
	/* the first row is the biggest */
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "name")),
			    "fix_a");
	assert_int_equal((int)json_array_size(json_object_get(j, "processes")), 2);
	json_decref(j);

	/* the last 5 ns: the samples at 1011 .. 1014 */
	top_now = 1016;
	j = top_json(syn, s, (const char *const[]){"top", "--last", "5ns", "--json"}, 4);
	assert_int_equal((int)json_integer_value(json_object_get(j, "samples")), 4);
	json_decref(j);
	top_now = 0;

	j = top_json(syn, s, (const char *const[]){"top", "--pid", "901", "--json"}, 4);
	rows = json_object_get(j, "symbols");
	assert_int_equal((int)json_integer_value(json_object_get(j, "samples")), 6);
	assert_int_equal(samples_of(rows, "fix_a->fix_b"), 4);
	assert_int_equal(samples_of(rows, "fix_a"), -1);
	json_decref(j);
	/* text */
	{
		struct rsp_source src = {
			.window = syn->window, .schema = syn->schema, .symbols = s};
		const char *argv[] = {"top", "--pid", "900"};
		struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
		struct rsp_request req;

		assert_int_equal(rsp_request__parse(3, argv, &req, &err), 0);
		assert_int_equal(rsp_query__run(&req, &src, &out, &err), 0);
		assert_non_null(strstr(out.data, "process 900 (unstripped): 9 cpu-clock samples"));
		assert_non_null(strstr(out.data, "fix_hidden"));
		assert_non_null(strstr(out.data, "libsymfix.so"));
		assert_non_null(strstr(out.data, "statistics of run"));
		for (const char *p = out.data; *p;) {
			const char *nl = strchr(p, '\n');

			assert_true((nl ? (size_t)(nl - p) : strlen(p)) < 80);
			p = nl ? nl + 1 : p + strlen(p);
		}
		rsp_request__exit(&req);
		/* bad options */
		rsp_buf__reset(&err);
		assert_int_equal(rsp_request__parse(3, (const char *const[]){"top", "--limit", "x"},
						    &req, &err),
				 -EINVAL);
		assert_non_null(strstr(err.data, "--limit"));
		/* no symbolizer: one sentence, no crash */
		src.symbols = NULL;
		assert_int_equal(rsp_request__parse(1, (const char *const[]){"top"}, &req, &err),
				 0);
		rsp_buf__reset(&err);
		assert_int_equal(rsp_query__run(&req, &src, &out, &err), -EOPNOTSUPP);
		assert_non_null(strstr(err.data, "process model"));
		rsp_request__exit(&req);
		rsp_buf__exit(&out);
		rsp_buf__exit(&err);
	}
	rsp_symbolizer__delete(s);
	synth__delete(syn);
}

static json_t *first_with(json_t *arr, const char *key, json_int_t v)
{
	size_t i;
	json_t *r;

	json_array_foreach (arr, i, r)
		if (json_integer_value(json_object_get(r, key)) == v)
			return r;
	return NULL;
}

static int ival(json_t *o, const char *key)
{
	return (int)json_integer_value(json_object_get(o, key));
}

/*
 * `rspctl top`'s breakdowns on a synthetic stream: threads, commands,
 * images (a sample's object: the library, "[kernel]", unknown), the
 * filters --tid, --comm, --kernel, --user, and the statistics of run
 * (a gap of 7 lost records, the idle task, threads and processes seen).
 */
static void test_top_breakdowns(void **state)
{
	struct synth *syn = synth__new(2, 1 << 20);
	struct rsp_symbolizer *s = fixture_symbolizer();
	struct rsp_maps *m = rsp_symbolizer__maps(s);
	const uint64_t base = 0x7f0000000000ull, kip = 0xffffffff81000150ull;
	uint64_t a = base + sym_addr(LIB, "fix_a");
	json_t *j, *arr, *r;
	uint64_t t = 1000;

	(void)state;
	map_file(m, 700, 1, LIB, base);
	map_file(m, 710, 1, LIB, base);
	assert_int_equal(rsp_maps__comm(m, 700, 700, 1, "alpha", 5, false), 0);
	assert_int_equal(rsp_maps__comm(m, 710, 710, 1, "beta", 4, false), 0);
	/* alpha: thread 700 5 user samples, thread 701 3 user + 2 kernel; beta: 4 user */
	for (int i = 0; i < 5; i++)
		synth__cpu_sample(syn, .cpu = 0, .t = t++, .tgid = 700, .tid = 700, .ip = a + 1,
				  .period = 1000000);
	for (int i = 0; i < 3; i++)
		synth__cpu_sample(syn, .cpu = 1, .t = t++, .tgid = 700, .tid = 701, .ip = a + 2,
				  .period = 1000000);
	synth__lost(syn, 0, t++, 7);
	for (int i = 0; i < 2; i++)
		synth__cpu_sample(syn, .cpu = 1, .t = t++, .tgid = 700, .tid = 701, .ip = kip,
				  .cpumode = PERF_RECORD_MISC_KERNEL, .period = 1000000);
	for (int i = 0; i < 4; i++)
		synth__cpu_sample(syn, .cpu = 0, .t = t++, .tgid = 710, .tid = 710, .ip = 0x1234,
				  .period = 1000000);
	synth__cpu_sample(syn, .cpu = 0, .t = t++, .tgid = 0, .tid = 0, .ip = kip,
			  .cpumode = PERF_RECORD_MISC_KERNEL, .period = 1000000);

	j = top_json(syn, s, (const char *const[]){"top", "--json", "--limit", "0"}, 4);
	assert_int_equal(ival(j, "samples"), 15);
	arr = json_object_get(j, "threads");
	assert_int_equal((int)json_array_size(arr), 4);
	r = first_with(arr, "tid", 701);
	assert_int_equal(ival(r, "samples"), 5);
	assert_int_equal(ival(r, "kernel"), 2);
	assert_int_equal(ival(r, "pid"), 700);
	assert_string_equal(json_string_value(json_object_get(r, "comm")), "alpha");
	assert_true(fabs(json_real_value(json_object_get(r, "cpu_s")) - 0.005) < 1e-9);
	arr = json_object_get(j, "comms");
	assert_int_equal((int)json_array_size(arr), 3); /* alpha, beta, [idle] */
	r = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(r, "comm")), "alpha");
	assert_int_equal(ival(r, "samples"), 10);
	arr = json_object_get(j, "images");
	assert_int_equal((int)json_array_size(arr), 3); /* the library, [kernel], unknown */
	r = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(r, "object")), LIB);
	assert_int_equal(ival(r, "samples"), 8);
	r = json_array_get(arr, 1);
	assert_true(json_is_null(json_object_get(r, "object")));
	assert_int_equal(ival(r, "samples"), 4);
	r = json_array_get(arr, 2);
	assert_string_equal(json_string_value(json_object_get(r, "object")), "[kernel]");
	assert_int_equal(ival(r, "samples"), 3);
	r = json_object_get(j, "statistics");
	assert_int_equal(ival(r, "range_samples"), 15);
	assert_int_equal(ival(r, "range_samples_idle"), 1);
	assert_int_equal(ival(r, "range_samples_kernel"), 3);
	assert_int_equal(ival(r, "lost_records_in_range"), 1);
	assert_int_equal(ival(r, "lost_in_range"), 7);
	assert_int_equal(ival(r, "threads_seen"), 3);
	assert_int_equal(ival(r, "processes_seen"), 2);
	/* a source with no capture information (a dump): rspd's cost is unknown */
	assert_true(json_is_null(json_object_get(r, "rspd_cpu_s_in_range")));
	assert_true(json_is_null(json_object_get(r, "rspd_samples")));
	json_decref(j);

	j = top_json(syn, s, (const char *const[]){"top", "--tid", "701", "--json"}, 4);
	assert_int_equal(ival(j, "samples"), 5);
	assert_int_equal((int)json_array_size(json_object_get(j, "threads")), 1);
	json_decref(j);
	j = top_json(syn, s, (const char *const[]){"top", "--comm", "beta", "--json"}, 4);
	assert_int_equal(ival(j, "samples"), 4);
	json_decref(j);
	j = top_json(syn, s, (const char *const[]){"top", "--kernel", "--json"}, 3);
	assert_int_equal(ival(j, "samples"), 3);
	assert_int_equal(ival(j, "samples_kernel"), 3);
	assert_int_equal((int)json_array_size(json_object_get(j, "images")), 1);
	json_decref(j);
	j = top_json(syn, s, (const char *const[]){"top", "--user", "--pid", "700", "--json"}, 5);
	assert_int_equal(ival(j, "samples"), 8);
	assert_int_equal(ival(j, "samples_kernel"), 0);
	json_decref(j);
	/* --annotate: fix_a's 8 samples (at a+1, a+2), its instructions from the file */
	j = top_json(syn, s, (const char *const[]){"top", "--annotate", "fix_a", "--json"}, 4);
	r = json_object_get(j, "annotate");
	assert_int_equal(ival(r, "samples"), 8);
	assert_string_equal(json_string_value(json_object_get(r, "object")), LIB);
	assert_int_equal(ival(r, "start"), (int)sym_addr(LIB, "fix_a"));
	arr = json_object_get(r, "instructions");
	assert_true(json_array_size(arr) >= 4);
	assert_int_equal(ival(json_array_get(arr, 0), "address"), (int)sym_addr(LIB, "fix_a"));
	assert_int_equal(ival(r, "samples_on_instructions") + ival(r, "samples_off_instruction"),
			 8);
	json_decref(j);
	/* --lines: the row's line is in the fixture's source */
	j = top_json(syn, s, (const char *const[]){"top", "--lines", "--json"}, 3);
	r = json_object_get(row_named(json_object_get(j, "symbols"), "fix_a"), "source");
	assert_true(json_is_object(r));
	assert_non_null(strstr(json_string_value(json_object_get(r, "file")), "symfix.c"));
	assert_int_equal(ival(r, "samples"), 8);
	json_decref(j);
	/* a kernel function is refused in one sentence */
	{
		struct rsp_source src = {
			.window = syn->window, .schema = syn->schema, .symbols = s};
		const char *argv[] = {"top", "--annotate", "do_one"};
		struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
		struct rsp_request req;

		assert_int_equal(rsp_request__parse(3, argv, &req, &err), 0);
		assert_int_equal(rsp_query__run(&req, &src, &out, &err), -EINVAL);
		assert_non_null(strstr(err.data, "not the kernel's"));
		rsp_request__exit(&req);
		rsp_buf__exit(&out);
		rsp_buf__exit(&err);
	}
	/* bad filters: one sentence each */
	{
		struct rsp_buf err = RSP_BUF_INIT;
		struct rsp_request req;

		assert_int_equal(
			rsp_request__parse(3, (const char *const[]){"top", "--kernel", "--user"},
					   &req, &err),
			-EINVAL);
		assert_non_null(strstr(err.data, "exclude each other"));
		rsp_buf__reset(&err);
		assert_int_equal(rsp_request__parse(3, (const char *const[]){"top", "--tid", "x"},
						    &req, &err),
				 -EINVAL);
		assert_non_null(strstr(err.data, "--tid"));
		rsp_buf__reset(&err);
		assert_int_equal(rsp_request__parse(
					 3,
					 (const char *const[]){"top", "--comm", "sixteen_bytes_xx"},
					 &req, &err),
				 -EINVAL);
		assert_non_null(strstr(err.data, "15 bytes"));
		rsp_buf__exit(&err);
	}
	rsp_symbolizer__delete(s);
	synth__delete(syn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_tables),
		cmocka_unit_test(test_pie_nopie),
		cmocka_unit_test(test_live_process),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_cache_reload_in_query),
		cmocka_unit_test(test_build_id_key),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_jitmap),
		cmocka_unit_test(test_callchain),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_top_breakdowns),
		cmocka_unit_test(test_parsers_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
