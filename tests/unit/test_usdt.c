// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the USDT note reader (lib/model/usdt.c).
 *
 * Known answers:
 *   - the annotated workloads (ticket_seller, spin_fsync, built with
 *     rsp/annotate.h) hold the probes their sources place, as gcc wrote
 *     them (checked once by hand with readelf -n), and their _plain twins
 *     none; every probe's file offset holds sdt.h's nop (0x90);
 *   - tests/fixtures/usdt_fix, PIE and not, holds argument strings written
 *     by hand (STAP_PROBE_ASM): each form rsp reads, with its registers'
 *     numbers taken from the kernel's headers, the forms it refuses, a
 *     semaphore that must be the .probes section's first bytes;
 *   - a copy moved as prelink moves a file (.stapsdt.base and the PT_LOADs
 *     by the same amount) keeps its offsets; a note that lies about the
 *     base, or is truncated, is refused with a sentence;
 *   - note descriptions and argument strings fed as bytes: every corrupt
 *     shape is a sentence, not a crash.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "internal/usdt.h"

#define WL(x)	   RSP_WORKLOAD_DIR "/" x
#define FIX_PIE	   RSP_FIXTURE_DIR "/usdt_fix_pie"
#define FIX_NOPIE  RSP_FIXTURE_DIR "/usdt_fix_nopie"
#define PRELINK_BY 0x100000ull
#define NOP	   0x90

static struct rsp_usdt *read_path(const char *path, const char *provider)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int fd = open(path, O_RDONLY);
	struct rsp_usdt *u;

	assert_true(fd >= 0);
	u = rsp_usdt__read_fd(fd, path, provider, &err);
	if (!u)
		fail_msg("%s: %s", path, err.data);
	assert_null(err.data);
	close(fd);
	return u;
}

/* NULL and the sentence, for a file that must be refused. */
static char *refuse_path(const char *path, const char *provider)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int fd = open(path, O_RDONLY);
	struct rsp_usdt *u;

	assert_true(fd >= 0);
	u = rsp_usdt__read_fd(fd, path, provider, &err);
	close(fd);
	assert_null(u);
	assert_non_null(err.data);
	return err.data; /* the caller frees it */
}

static int has(const char *path, const char *provider)
{
	struct rsp_buf err = RSP_BUF_INIT;
	int fd = open(path, O_RDONLY), ret;

	assert_true(fd >= 0);
	ret = rsp_usdt__has_provider(fd, path, provider, &err);
	close(fd);
	assert_true(ret >= 0 ? !err.data : err.data && err.len);
	rsp_buf__exit(&err);
	return ret;
}

/* The @k-th probe named @name (0: the first), or fail. */
static const struct rsp_usdt_probe *probe(const struct rsp_usdt *u, const char *name, int k)
{
	for (size_t i = 0; i < u->nr; i++)
		if (!strcmp(u->probes[i].name, name) && k-- == 0)
			return &u->probes[i];
	fail_msg("no probe %s", name);
	return NULL;
}

static size_t count(const struct rsp_usdt *u, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < u->nr; i++)
		n += !strcmp(u->probes[i].name, name);
	return n;
}

/* Every probe of @u is at a nop of the file @path (what sdt.h emits at its pc). */
static void assert_nops(const char *path, const struct rsp_usdt *u)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	for (size_t i = 0; i < u->nr; i++) {
		unsigned char b = 0;

		assert_int_equal(pread(fd, &b, 1, (off_t)u->probes[i].offset), 1);
		if (b != NOP)
			fail_msg("%s:%s at offset 0x%llx is 0x%02x, not a nop",
				 u->probes[i].provider, u->probes[i].name,
				 (unsigned long long)u->probes[i].offset, b);
	}
	close(fd);
}

/* One argument of size 8, unsigned, in a register or memory: the lock's address. */
static void assert_lock_arg(const struct rsp_usdt_probe *p)
{
	assert_int_equal(p->args_err, 0);
	assert_int_equal(p->nr_args, 1);
	assert_int_equal(p->args[0].size, 8);
	assert_false(p->args[0].is_signed);
	assert_true(p->args[0].loc == RSP_USDT_REG || p->args[0].loc == RSP_USDT_MEM);
}

static void test_spin_fsync(void **state)
{
	struct rsp_usdt *u = read_path(WL("spin_fsync"), "rsp");

	(void)state;
	/* the holder's and the spinner's acquisitions: readelf -n shows 2 + 2 */
	assert_int_equal(u->nr, 4);
	assert_int_equal(count(u, "spin_begin"), 2);
	assert_int_equal(count(u, "spin_end"), 2);
	for (int k = 0; k < 2; k++) {
		const struct rsp_usdt_probe *b = probe(u, "spin_begin", k);
		const struct rsp_usdt_probe *e = probe(u, "spin_end", k);

		assert_string_equal(b->provider, "rsp");
		assert_lock_arg(b);
		assert_lock_arg(e);
		assert_int_equal(b->sema_offset, 0);
		assert_true(b->vaddr == b->pc);
	}
	assert_int_equal(u->nr_bad_args, 0);
	assert_nops(WL("spin_fsync"), u);
	assert_int_equal(has(WL("spin_fsync"), "rsp"), 1);
	rsp_usdt__delete(u);
}

static void test_ticket_seller(void **state)
{
	struct rsp_usdt *u = read_path(WL("ticket_seller"), "rsp");
	const struct rsp_usdt_probe *p;

	(void)state;
	assert_int_equal(u->nr, 1);
	p = probe(u, "false_wakeup", 0);
	assert_int_equal(p->nr_args, 0);
	assert_string_equal(p->args_str, "");
	assert_int_equal(p->args_err, 0);
	assert_nops(WL("ticket_seller"), u);
	assert_int_equal(has(WL("ticket_seller"), "rsp"), 1);
	assert_int_equal(has(WL("ticket_seller"), "rs"), 0); /* the whole provider */
	rsp_usdt__delete(u);
}

static void test_plain(void **state)
{
	const char *plain[] = {WL("ticket_seller_plain"), WL("spin_fsync_plain")};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct rsp_usdt *u = read_path(plain[i], NULL);

		assert_int_equal(u->nr, 0);
		assert_int_equal(has(plain[i], "rsp"), 0);
		rsp_usdt__delete(u);
	}
}

/* The forms rsp reads, as written in usdt_fix.c; registers per the kernel's headers. */
static void check_forms(const struct rsp_usdt_probe *p)
{
	const struct rsp_usdt_arg *a = p->args;

	assert_string_equal(p->args_str, "-4@$-9 2@%r12w 1@%sil -8@(%rsp) 4@0x10(%r15) 8@$0xff");
	assert_int_equal(p->args_err, 0);
	assert_int_equal(p->nr_args, 6);
	assert_true(a[0].loc == RSP_USDT_CONST && a[0].size == 4 && a[0].is_signed);
	assert_int_equal(a[0].value, -9);
	/* r12: pt_regs index 3, PERF_REG_X86_R12 20 */
	assert_true(a[1].loc == RSP_USDT_REG && a[1].size == 2 && !a[1].is_signed);
	assert_true(a[1].pt_reg == 3 && a[1].perf_reg == 20);
	/* si: pt_regs 13, perf 4 */
	assert_true(a[2].loc == RSP_USDT_REG && a[2].size == 1);
	assert_true(a[2].pt_reg == 13 && a[2].perf_reg == 4);
	/* sp: pt_regs 19, perf 7 */
	assert_true(a[3].loc == RSP_USDT_MEM && a[3].size == 8 && a[3].is_signed);
	assert_true(a[3].pt_reg == 19 && a[3].perf_reg == 7 && a[3].value == 0);
	/* r15: pt_regs 0, perf 23 */
	assert_true(a[4].loc == RSP_USDT_MEM && a[4].size == 4 && a[4].value == 0x10);
	assert_true(a[4].pt_reg == 0 && a[4].perf_reg == 23);
	assert_true(a[5].loc == RSP_USDT_CONST && a[5].size == 8 && a[5].value == 0xff);
}

/* Where in the ELF64 file open on @fd the header of section @name is, and it in @sh. */
static off_t shdr_at(int fd, const char *name, Elf64_Shdr *sh)
{
	Elf64_Ehdr eh;
	Elf64_Shdr str;

	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(
		pread(fd, &str, sizeof(str), (off_t)(eh.e_shoff + eh.e_shstrndx * sizeof(str))),
		sizeof(str));
	for (int i = 0; i < eh.e_shnum; i++) {
		off_t at = (off_t)(eh.e_shoff + i * sizeof(*sh));
		char s[32] = "";

		assert_int_equal(pread(fd, sh, sizeof(*sh), at), sizeof(*sh));
		assert_true(pread(fd, s, sizeof(s) - 1, (off_t)(str.sh_offset + sh->sh_name)) > 0);
		if (!strcmp(s, name))
			return at;
	}
	fail_msg("no section %s", name);
	return 0;
}

/* The first bytes of the section @name of the ELF64 file @path: its file offset. */
static uint64_t section_offset(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf64_Shdr sh;

	assert_true(fd >= 0);
	shdr_at(fd, name, &sh);
	close(fd);
	assert_true(sh.sh_offset > 0);
	return sh.sh_offset;
}

static void check_fixture(const char *path, bool pie)
{
	struct rsp_usdt *u = read_path(path, "rsp");
	const struct rsp_usdt_probe *p;

	assert_int_equal(u->nr, 3);
	p = probe(u, "spin_begin", 0);
	assert_true(p->nr_args == 1 && p->args[0].loc == RSP_USDT_REG && p->args[0].size == 8);
	assert_true(p->args[0].pt_reg == 14 && p->args[0].perf_reg == 5); /* di */
	if (!pie) /* linked at 0x400000: the address is not the offset */
		assert_true(p->vaddr >= 0x400000 && p->offset < 0x400000);
	p = probe(u, "spin_end", 0);
	assert_true(p->nr_args == 1 && p->args[0].loc == RSP_USDT_MEM);
	assert_true(p->args[0].pt_reg == 4 && p->args[0].perf_reg == 6); /* bp */
	assert_int_equal(p->args[0].value, -16);
	assert_int_equal(probe(u, "false_wakeup", 0)->nr_args, 0);
	assert_nops(path, u);
	rsp_usdt__delete(u);

	u = read_path(path, NULL); /* every provider */
	assert_int_equal(u->nr, 8);
	check_forms(probe(u, "forms", 0));
	assert_int_equal(u->nr_bad_args, 3);
	assert_int_equal(probe(u, "sib", 0)->args_err, -EOPNOTSUPP);
	assert_int_equal(probe(u, "float", 0)->args_err, -EOPNOTSUPP);
	assert_int_equal(probe(u, "rip", 0)->args_err, -EOPNOTSUPP);
	p = probe(u, "gated", 0);
	assert_int_equal(p->sema_offset, section_offset(path, ".probes"));
	assert_int_equal(probe(u, "forms", 0)->sema_offset, 0);
	assert_nops(path, u);
	rsp_usdt__delete(u);
	assert_int_equal(has(path, "rspfix"), 1);
	assert_int_equal(has(path, "nobody"), 0);
}

static void test_fixture(void **state)
{
	(void)state;
	check_fixture(FIX_PIE, true);
	check_fixture(FIX_NOPIE, false);
}

/* A copy of @from in a temporary file, named in @path (PATH_MAX). */
static int copy_file(const char *from, char *path)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	strcpy(path, "/tmp/rsp-test-usdt.XXXXXX");
	out = mkstemp(path);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	return out;
}

/* Move the copy open on @fd: .stapsdt.base by @base, each PT_LOAD by @loads. */
static void prelink(int fd, uint64_t base, uint64_t loads)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	off_t at;

	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	for (int i = 0; i < eh.e_phnum; i++) {
		off_t ph_at = (off_t)(eh.e_phoff + i * sizeof(Elf64_Phdr));
		Elf64_Phdr ph;

		assert_int_equal(pread(fd, &ph, sizeof(ph), ph_at), sizeof(ph));
		if (ph.p_type != PT_LOAD)
			continue;
		ph.p_vaddr += loads;
		ph.p_paddr += loads;
		assert_int_equal(pwrite(fd, &ph, sizeof(ph), ph_at), sizeof(ph));
	}
	at = shdr_at(fd, ".stapsdt.base", &sh);
	sh.sh_addr += base;
	assert_int_equal(pwrite(fd, &sh, sizeof(sh), at), sizeof(sh));
}

static void test_prelinked(void **state)
{
	struct rsp_usdt *orig = read_path(FIX_PIE, NULL), *moved;
	char path[64], *why;
	int fd = copy_file(FIX_PIE, path);

	(void)state;
	prelink(fd, PRELINK_BY, PRELINK_BY);
	moved = read_path(path, NULL);
	assert_int_equal(moved->nr, orig->nr);
	for (size_t i = 0; i < orig->nr; i++) {
		assert_int_equal(moved->probes[i].pc, orig->probes[i].pc);
		assert_int_equal(moved->probes[i].vaddr, orig->probes[i].pc + PRELINK_BY);
		assert_int_equal(moved->probes[i].offset, orig->probes[i].offset);
		assert_int_equal(moved->probes[i].sema_offset, orig->probes[i].sema_offset);
	}
	rsp_usdt__delete(moved);
	/* the base moved by 2 GiB, the code not: the probes are nowhere */
	prelink(fd, 0x80000000ull - PRELINK_BY, 0);
	why = refuse_path(path, "rsp");
	assert_non_null(strstr(why, "in no executable segment"));
	free(why);
	close(fd);
	unlink(path);
	rsp_usdt__delete(orig);
}

static void test_corrupt_file(void **state)
{
	uint64_t notes = section_offset(FIX_PIE, ".note.stapsdt");
	uint32_t huge = 0x7ffffff0;
	Elf64_Shdr sh;
	off_t at;
	struct rsp_buf err = RSP_BUF_INIT;
	char path[64], *why;
	int fd = copy_file(FIX_PIE, path);

	(void)state;
	/* the first note's n_descsz (after n_namesz) runs past the section */
	assert_int_equal(pwrite(fd, &huge, 4, (off_t)notes + 4), 4);
	why = refuse_path(path, "rsp");
	assert_non_null(strstr(why, "truncated"));
	free(why);
	assert_int_equal(rsp_usdt__has_provider(fd, path, "rsp", &err), -EINVAL);
	assert_non_null(strstr(err.data, "truncated"));
	rsp_buf__exit(&err);
	close(fd);
	unlink(path);
	/* the note section's bytes past the end of the file */
	fd = copy_file(FIX_PIE, path);
	at = shdr_at(fd, ".note.stapsdt", &sh);
	sh.sh_offset = 1 << 30;
	assert_int_equal(pwrite(fd, &sh, sizeof(sh), at), sizeof(sh));
	why = refuse_path(path, "rsp");
	assert_non_null(strstr(why, "cannot read its section .note.stapsdt"));
	free(why);
	/* the section headers past the end of the file */
	assert_int_equal(ftruncate(fd, at), 0);
	why = refuse_path(path, "rsp");
	assert_non_null(strstr(why, "truncated"));
	free(why);
	close(fd);
	unlink(path);
	/* not ELF at all */
	why = refuse_path(__FILE__, "rsp");
	assert_non_null(strstr(why, "not an x86-64 executable"));
	free(why);
	assert_int_equal(has(__FILE__, "rsp"), -ENOEXEC);
}

/* A note description: pc, base, semaphore, then @strings (@n bytes, NULs included). */
static size_t make_desc(unsigned char *d, const char *strings, size_t n)
{
	uint64_t addrs[3] = {0x1129, 0x2004, 0};

	memcpy(d, addrs, sizeof(addrs));
	memcpy(d + sizeof(addrs), strings, n);
	return sizeof(addrs) + n;
}

static void test_parse_note(void **state)
{
	static const struct {
		const char *s;
		size_t n;
		int ret;
	} cases[] = {
		{"rsp\0spin_begin\0"
		 "8@%rdi",
		 22, 0},
		{"rsp\0false_wakeup\0", 18, 0},
		{"rsp\0spin_begin\0"
		 "8@%rdi",
		 21, -EINVAL},			  /* args not ended */
		{"rsp\0spin_begin", 14, -EINVAL}, /* name not ended */
		{"rsp", 3, -EINVAL},		  /* too short */
		{"rsp\0\0\0", 6, -EINVAL},	  /* empty name */
		{"\0a\0\0", 4, -EINVAL},	  /* empty provider */
		{"r p\0a\0\0", 7, -EINVAL},	  /* a blank in a word */
		{"rsp\0a\x01\0\0", 8, -EINVAL},	  /* not printable */
		{"rsp\0a\0\x7f\0", 8, -EINVAL},	  /* args not printable */
	};
	unsigned char d[1024];
	struct rsp_buf err = RSP_BUF_INIT;
	char big[700];
	struct rsp_usdt_note n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t size = make_desc(d, cases[i].s, cases[i].n);
		unsigned char *copy = malloc(size); /* exactly: ASan sees a read past it */
		int ret;

		memcpy(copy, d, size);
		ret = rsp_usdt__parse_note(copy, size, &n, &err);
		if (ret != cases[i].ret)
			fail_msg("case %zu: %d, not %d (%s)", i, ret, cases[i].ret, err.data);
		assert_true(ret ? err.data && err.len : !err.data);
		if (!ret) {
			assert_int_equal(n.pc, 0x1129);
			assert_int_equal(n.base, 0x2004);
			assert_string_equal(n.provider, "rsp");
		}
		free(copy);
		rsp_buf__reset(&err);
	}
	assert_int_equal(rsp_usdt__parse_note(d, 10, &n, &err), -EINVAL);
	/* an argument string past its cap: "rsp", "x", 693 bytes */
	memset(big, 'a', sizeof(big));
	memcpy(big, "rsp\0x\0", 6);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(rsp_usdt__parse_note(d, make_desc(d, big, sizeof(big)), &n, &err),
			 -EINVAL);
	/* a name past its cap: "rsp", RSP_USDT_NAME_MAX bytes, "" */
	memset(big, 'a', sizeof(big));
	memcpy(big, "rsp", 4);
	big[4 + RSP_USDT_NAME_MAX] = '\0';
	big[5 + RSP_USDT_NAME_MAX] = '\0';
	assert_int_equal(
		rsp_usdt__parse_note(d, make_desc(d, big, 6 + RSP_USDT_NAME_MAX), &n, &err),
		-EINVAL);
	/* one byte shorter: the longest name */
	big[3 + RSP_USDT_NAME_MAX] = '\0';
	rsp_buf__reset(&err);
	assert_int_equal(
		rsp_usdt__parse_note(d, make_desc(d, big, 5 + RSP_USDT_NAME_MAX), &n, &err), 0);
	assert_int_equal(strlen(n.name), RSP_USDT_NAME_MAX - 1);
	rsp_buf__exit(&err);
}

struct arg_case {
	const char *s;
	int ret;
	uint8_t loc, size, pt_reg, perf_reg;
	bool is_signed;
	int64_t value;
};

static void check_arg_case(const struct arg_case *c)
{
	struct rsp_usdt_arg a[RSP_USDT_MAX_ARGS];
	struct rsp_buf err = RSP_BUF_INIT;
	int ret = rsp_usdt__parse_args(c->s, a, &err);

	if (ret != c->ret)
		fail_msg("\"%s\": %d, not %d (%s)", c->s, ret, c->ret, err.data);
	assert_true(ret < 0 ? err.data && err.len : !err.data);
	if (ret == 1) {
		assert_int_equal(a[0].loc, c->loc);
		assert_int_equal(a[0].size, c->size);
		assert_int_equal(a[0].is_signed, c->is_signed);
		assert_int_equal(a[0].value, c->value);
		if (c->loc != RSP_USDT_CONST) {
			assert_int_equal(a[0].pt_reg, c->pt_reg);
			assert_int_equal(a[0].perf_reg, c->perf_reg);
		}
	}
	rsp_buf__exit(&err);
}

static void test_parse_args(void **state)
{
	enum { C = RSP_USDT_CONST, R = RSP_USDT_REG, M = RSP_USDT_MEM };
	/* pt_regs indexes and PERF_REG_X86_* numbers from the kernel's uapi headers */
	static const struct arg_case cases[] = {
		{.s = "", .ret = 0},
		{.s = "   ", .ret = 0},
		{.s = "8@%rax", .ret = 1, .loc = R, .size = 8, .pt_reg = 10, .perf_reg = 0},
		{.s = "8@%rbx", .ret = 1, .loc = R, .size = 8, .pt_reg = 5, .perf_reg = 1},
		{.s = "8@%rcx", .ret = 1, .loc = R, .size = 8, .pt_reg = 11, .perf_reg = 2},
		{.s = "8@%rdx", .ret = 1, .loc = R, .size = 8, .pt_reg = 12, .perf_reg = 3},
		{.s = "8@%rsi", .ret = 1, .loc = R, .size = 8, .pt_reg = 13, .perf_reg = 4},
		{.s = "8@%rdi", .ret = 1, .loc = R, .size = 8, .pt_reg = 14, .perf_reg = 5},
		{.s = "8@%rbp", .ret = 1, .loc = R, .size = 8, .pt_reg = 4, .perf_reg = 6},
		{.s = "8@%rsp", .ret = 1, .loc = R, .size = 8, .pt_reg = 19, .perf_reg = 7},
		{.s = "8@%r8", .ret = 1, .loc = R, .size = 8, .pt_reg = 9, .perf_reg = 16},
		{.s = "8@%r9", .ret = 1, .loc = R, .size = 8, .pt_reg = 8, .perf_reg = 17},
		{.s = "8@%r10", .ret = 1, .loc = R, .size = 8, .pt_reg = 7, .perf_reg = 18},
		{.s = "8@%r11", .ret = 1, .loc = R, .size = 8, .pt_reg = 6, .perf_reg = 19},
		{.s = "8@%r12", .ret = 1, .loc = R, .size = 8, .pt_reg = 3, .perf_reg = 20},
		{.s = "8@%r13", .ret = 1, .loc = R, .size = 8, .pt_reg = 2, .perf_reg = 21},
		{.s = "8@%r14", .ret = 1, .loc = R, .size = 8, .pt_reg = 1, .perf_reg = 22},
		{.s = "8@%r15", .ret = 1, .loc = R, .size = 8, .pt_reg = 0, .perf_reg = 23},
		{.s = "-4@%eax",
		 .ret = 1,
		 .loc = R,
		 .size = 4,
		 .pt_reg = 10,
		 .perf_reg = 0,
		 .is_signed = true},
		{.s = "2@%r9w", .ret = 1, .loc = R, .size = 2, .pt_reg = 8, .perf_reg = 17},
		{.s = "-1@%dil",
		 .ret = 1,
		 .loc = R,
		 .size = 1,
		 .pt_reg = 14,
		 .perf_reg = 5,
		 .is_signed = true},
		{.s = "4@%r8d", .ret = 1, .loc = R, .size = 4, .pt_reg = 9, .perf_reg = 16},
		{.s = "-4@-20(%rbp)",
		 .ret = 1,
		 .loc = M,
		 .size = 4,
		 .pt_reg = 4,
		 .perf_reg = 6,
		 .is_signed = true,
		 .value = -20},
		{.s = "8@(%rdi)",
		 .ret = 1,
		 .loc = M,
		 .size = 8,
		 .pt_reg = 14,
		 .perf_reg = 5,
		 .is_signed = false,
		 .value = 0},
		{.s = "8@0x7fff(%r11)",
		 .ret = 1,
		 .loc = M,
		 .size = 8,
		 .pt_reg = 6,
		 .perf_reg = 19,
		 .is_signed = false,
		 .value = 0x7fff},
		{.s = "-4@$-2147483648",
		 .ret = 1,
		 .loc = C,
		 .size = 4,
		 .pt_reg = 0,
		 .perf_reg = 0,
		 .is_signed = true,
		 .value = -2147483648LL},
		{.s = "8@$18446744073709551615",
		 .ret = 1,
		 .loc = C,
		 .size = 8,
		 .pt_reg = 0,
		 .perf_reg = 0,
		 .is_signed = false,
		 .value = -1},
		{.s = "8@$-9223372036854775808",
		 .ret = 1,
		 .loc = C,
		 .size = 8,
		 .pt_reg = 0,
		 .perf_reg = 0,
		 .is_signed = false,
		 .value = INT64_MIN},
		{.s = "8@$0XFF",
		 .ret = 1,
		 .loc = C,
		 .size = 8,
		 .pt_reg = 0,
		 .perf_reg = 0,
		 .is_signed = false,
		 .value = 255},
		{.s = "8@%rdi  -4@$5 ", .ret = 2},
		{.s = "8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi "
		      "8@%rdi 8@%rdi",
		 .ret = 12},
		/* malformed */
		{.s = "8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi "
		      "8@%rdi 8@%rdi "
		      "8@%rdi",
		 .ret = -EINVAL},
		{.s = "3@%rax", .ret = -EINVAL},
		{.s = "16@%rax", .ret = -EINVAL},
		{.s = "-9223372036854775808@%rax", .ret = -EINVAL},
		{.s = "0@%rax", .ret = -EINVAL},
		{.s = "8@", .ret = -EINVAL},
		{.s = "@%rax", .ret = -EINVAL},
		{.s = "8%rax", .ret = -EINVAL},
		{.s = "-@%rax", .ret = -EINVAL},
		{.s = "8@$", .ret = -EINVAL},
		{.s = "8@$5x", .ret = -EINVAL},
		{.s = "8@$99999999999999999999", .ret = -EINVAL},
		{.s = "8@$--5", .ret = -EINVAL},
		{.s = "8@-16(%rbp", .ret = -EINVAL},
		{.s = "8@-16(%rbp)x", .ret = -EINVAL},
		{.s = "8@-16()", .ret = -EINVAL},
		{.s = "8@-16(rbp)", .ret = -EINVAL},
		{.s = "8@99999999999999999999(%rbp)", .ret = -EINVAL},
		{.s = "8@#", .ret = -EINVAL},
		{.s = "8@-", .ret = -EINVAL},
		{.s = "8@%", .ret = -EINVAL},
		/* forms rsp does not read: said, not guessed */
		{.s = "8@%ah", .ret = -EOPNOTSUPP},
		{.s = "8@%xmm0", .ret = -EOPNOTSUPP},
		{.s = "8@%rip", .ret = -EOPNOTSUPP},
		{.s = "8f@%xmm0", .ret = -EOPNOTSUPP},
		{.s = "8@(%rbp,%rax,8)", .ret = -EOPNOTSUPP},
		{.s = "8@-8(%rbp,%rax)", .ret = -EOPNOTSUPP},
		{.s = "4@counter(%rip)", .ret = -EOPNOTSUPP},
		{.s = "4@counter+8(%rip)", .ret = -EOPNOTSUPP},
		{.s = "4@8(%rip)", .ret = -EOPNOTSUPP},
		{.s = "8@%fs:8", .ret = -EOPNOTSUPP},
		{.s = "8@$sym", .ret = -EOPNOTSUPP},
		{.s = "8@4096", .ret = -EOPNOTSUPP},
	};
	char big[RSP_USDT_ARGS_MAX + 8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_arg_case(&cases[i]);
	memset(big, ' ', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	check_arg_case(&(struct arg_case){.s = big, .ret = -EINVAL});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spin_fsync), cmocka_unit_test(test_ticket_seller),
		cmocka_unit_test(test_plain),	   cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_prelinked),  cmocka_unit_test(test_corrupt_file),
		cmocka_unit_test(test_parse_note), cmocka_unit_test(test_parse_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
