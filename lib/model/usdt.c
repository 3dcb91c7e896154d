// SPDX-License-Identifier: LGPL-2.1
/*
 * USDT probes of one ELF file: see internal/usdt.h.
 *
 * Written after libbpf's src/usdt.c (collect_usdt_targets(),
 * parse_usdt_note(), parse_usdt_arg(); github.com/libbpf/libbpf), which
 * does the same for bpf_program__attach_usdt(), and not linked from it:
 * that code is static inside libbpf, and rsp reads notes on the perf
 * backend too. It differs where the input is hostile: every string must end
 * inside its note (libbpf reads the argument string to its NUL wherever
 * that is), a truncated note is an error rather than the end of the notes,
 * and an argument is parsed by hand with its every form named, not by
 * sscanf() patterns that accept what they do not recognise up to a point.
 *
 * Placement, as libbpf and SystemTap's spec do: the pc in the note is a
 * link-time address; if the file's .stapsdt.base section is not where the
 * note says it was (prelink moved the file), the pc moves by the same
 * amount, and so does the semaphore (the spec says so; libbpf does not
 * move the semaphore). The address becomes a file offset through the
 * executable PT_LOAD that holds it, as the uprobe PMU wants.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <asm/perf_regs.h>
#include <asm/ptrace.h>
#include "internal/usdt.h"

#define NOTE_SECTION ".note.stapsdt"
#define BASE_SECTION ".stapsdt.base"
#define NOTE_OWNER   "stapsdt"
#define NOTE_TYPE    3
#define NOTE_ADDRS   (3 * sizeof(uint64_t))

/* A note's word: printable, no blank. */
static bool is_word(const char *s, size_t n)
{
	if (!n || n >= RSP_USDT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

static bool is_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < ' ' || s[i] > '~')
			return false;
	return true;
}

/* The NUL-terminated string at *@p inside [*@p, @end): its length, and *@p past it; -1 if none. */
static long take_string(const char **p, const char *end)
{
	const char *nul = *p < end ? memchr(*p, '\0', (size_t)(end - *p)) : NULL;
	long n;

	if (!nul)
		return -1;
	n = nul - *p;
	*p = nul + 1;
	return n;
}

int rsp_usdt__parse_note(const void *desc, size_t size, struct rsp_usdt_note *n,
			 struct rsp_buf *err)
{
	const char *p = (const char *)desc + NOTE_ADDRS, *end = (const char *)desc + size;
	long lp, ln, la;

	if (size < NOTE_ADDRS + 3) {
		rsp_buf__printf(err,
				"a stapsdt note of %zu bytes is too short for its three "
				"addresses and three strings",
				size);
		return -EINVAL;
	}
	memcpy(&n->pc, desc, sizeof(uint64_t)); /* x86-64: the file's byte order is ours */
	memcpy(&n->base, (const char *)desc + 8, sizeof(uint64_t));
	memcpy(&n->semaphore, (const char *)desc + 16, sizeof(uint64_t));
	n->provider = p;
	lp = take_string(&p, end);
	n->name = p;
	ln = lp < 0 ? -1 : take_string(&p, end);
	n->args = p;
	la = ln < 0 ? -1 : take_string(&p, end);
	if (la < 0) {
		rsp_buf__puts(err, "a stapsdt note's strings do not end inside the note");
		return -EINVAL;
	}
	if (!is_word(n->provider, (size_t)lp) || !is_word(n->name, (size_t)ln)) {
		rsp_buf__printf(err,
				"a stapsdt note's provider or name is empty, longer than %d "
				"bytes or not printable",
				RSP_USDT_NAME_MAX - 1);
		return -EINVAL;
	}
	if (la >= RSP_USDT_ARGS_MAX || !is_text(n->args, (size_t)la)) {
		rsp_buf__printf(err,
				"the argument string of USDT probe %s:%s is longer than %d bytes "
				"or not printable",
				n->provider, n->name, RSP_USDT_ARGS_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

/*
 * x86-64's integer registers by their names in AT&T syntax (64, 32, 16 and
 * low 8 bits), as an index in struct pt_regs and a perf register number.
 * The high bytes (%ah...) are no register's low bytes: not here.
 */
#define PT(r) (uint8_t)(offsetof(struct pt_regs, r) / sizeof(unsigned long))
static const struct {
	const char *names[4];
	uint8_t pt_reg, perf_reg;
} regs[] = {
	{{"rax", "eax", "ax", "al"}, PT(rax), PERF_REG_X86_AX},
	{{"rbx", "ebx", "bx", "bl"}, PT(rbx), PERF_REG_X86_BX},
	{{"rcx", "ecx", "cx", "cl"}, PT(rcx), PERF_REG_X86_CX},
	{{"rdx", "edx", "dx", "dl"}, PT(rdx), PERF_REG_X86_DX},
	{{"rsi", "esi", "si", "sil"}, PT(rsi), PERF_REG_X86_SI},
	{{"rdi", "edi", "di", "dil"}, PT(rdi), PERF_REG_X86_DI},
	{{"rbp", "ebp", "bp", "bpl"}, PT(rbp), PERF_REG_X86_BP},
	{{"rsp", "esp", "sp", "spl"}, PT(rsp), PERF_REG_X86_SP},
	{{"r8", "r8d", "r8w", "r8b"}, PT(r8), PERF_REG_X86_R8},
	{{"r9", "r9d", "r9w", "r9b"}, PT(r9), PERF_REG_X86_R9},
	{{"r10", "r10d", "r10w", "r10b"}, PT(r10), PERF_REG_X86_R10},
	{{"r11", "r11d", "r11w", "r11b"}, PT(r11), PERF_REG_X86_R11},
	{{"r12", "r12d", "r12w", "r12b"}, PT(r12), PERF_REG_X86_R12},
	{{"r13", "r13d", "r13w", "r13b"}, PT(r13), PERF_REG_X86_R13},
	{{"r14", "r14d", "r14w", "r14b"}, PT(r14), PERF_REG_X86_R14},
	{{"r15", "r15d", "r15w", "r15b"}, PT(r15), PERF_REG_X86_R15},
};
#undef PT

/* The register named by [@s, @s + @n) (no '%') into @a; false if none. */
static bool find_reg(const char *s, size_t n, struct rsp_usdt_arg *a)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (size_t k = 0; k < 4; k++)
			if (strlen(regs[i].names[k]) == n && !memcmp(regs[i].names[k], s, n)) {
				a->pt_reg = regs[i].pt_reg;
				a->perf_reg = regs[i].perf_reg;
				return true;
			}
	return false;
}

/* One argument being parsed: [p, end) of token number @no, for messages. */
struct tok {
	const char *p, *end, *start;
	int no;
	struct rsp_buf *err;
};

static int tok_fail(const struct tok *t, int ret, const char *why)
{
	rsp_buf__printf(t->err, "USDT argument %d \"%.*s\": %s", t->no, (int)(t->end - t->start),
			t->start, why);
	return ret;
}

/* A decimal integer (or 0x hex) with an optional '-' at t->p; false if none or out of range. */
static bool take_int(struct tok *t, int64_t *v)
{
	bool neg = *t->p == '-';
	const char *q = t->p + neg;
	int base = q + 1 < t->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X') ? 16 : 10;
	uint64_t x = 0;
	int digits = 0;

	q += base == 16 ? 2 : 0;
	for (; q < t->end; q++, digits++) {
		unsigned d = *q >= '0' && *q <= '9'		    ? (unsigned)(*q - '0')
			     : base == 16 && *q >= 'a' && *q <= 'f' ? (unsigned)(*q - 'a' + 10)
			     : base == 16 && *q >= 'A' && *q <= 'F' ? (unsigned)(*q - 'A' + 10)
								    : 99;

		if (d >= (unsigned)base)
			break;
		if (x > (UINT64_MAX - d) / (unsigned)base)
			return false;
		x = x * (unsigned)base + d;
	}
	if (!digits || (neg && x > (uint64_t)INT64_MAX + 1))
		return false;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x; /* an unsigned constant keeps its bits */
	t->p = q;
	return true;
}

/* An assembler symbol's first character: a letter, '_' or '.'. */
static bool is_symbol_start(char c)
{
	return c == '_' || c == '.' || (unsigned)((c | 0x20) - 'a') < 26u;
}

/* "-4@" or "8@": the size and signedness. */
static int take_size(struct tok *t, struct rsp_usdt_arg *a)
{
	int64_t v;
	uint64_t m;

	if (!take_int(t, &v))
		return tok_fail(t, -EINVAL, "no size before '@'");
	if (t->p < t->end && *t->p == 'f')
		return tok_fail(t, -EOPNOTSUPP, "a floating-point value, which rsp does not read");
	if (t->p >= t->end || *t->p != '@')
		return tok_fail(t, -EINVAL, "no '@' after the size");
	t->p++;
	a->is_signed = v < 0;
	m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v; /* INT64_MIN too */
	if (m != 1 && m != 2 && m != 4 && m != 8)
		return tok_fail(t, -EINVAL, "the size is not 1, 2, 4 or 8 bytes");
	a->size = (uint8_t)m;
	return 0;
}

/* "%reg" up to @stop (the token's end, or ')'). */
static int take_reg(struct tok *t, const char *stop, struct rsp_usdt_arg *a)
{
	if (t->p >= stop || *t->p != '%')
		return tok_fail(t, -EINVAL, "no register after '('");
	if (stop - t->p < 2)
		return tok_fail(t, -EINVAL, "no register name after '%'");
	if (memchr(t->p, ',', (size_t)(stop - t->p)))
		return tok_fail(t, -EOPNOTSUPP,
				"an indexed memory operand, which rsp does not read");
	if (!find_reg(t->p + 1, (size_t)(stop - t->p - 1), a))
		return tok_fail(t, -EOPNOTSUPP,
				"not an x86-64 integer register rsp reads (rip, the high bytes "
				"%ah..., vector and segment registers are not)");
	t->p = stop;
	return 0;
}

/* "N(%reg)" or "(%reg)". */
static int take_mem(struct tok *t, struct rsp_usdt_arg *a)
{
	const char *close;
	int ret;

	a->loc = RSP_USDT_MEM;
	a->value = 0;
	if (is_symbol_start(*t->p))
		return tok_fail(t, -EOPNOTSUPP,
				"a symbol's address (%rip-relative or absolute), which rsp does "
				"not read");
	if (*t->p != '(' && !take_int(t, &a->value))
		return tok_fail(t, -EINVAL, "not a constant, register or memory operand");
	if (t->p >= t->end || *t->p != '(')
		return tok_fail(t, -EOPNOTSUPP, "an absolute address, which rsp does not read");
	t->p++;
	close = memchr(t->p, ')', (size_t)(t->end - t->p));
	if (!close || close + 1 != t->end)
		return tok_fail(t, -EINVAL, "no ')' at the end of the memory operand");
	ret = take_reg(t, close, a);
	t->p = t->end;
	return ret;
}

static int parse_arg(struct tok *t, struct rsp_usdt_arg *a)
{
	int ret = take_size(t, a);

	if (ret)
		return ret;
	if (t->p >= t->end)
		return tok_fail(t, -EINVAL, "no operand after '@'");
	if (*t->p == '$') {
		a->loc = RSP_USDT_CONST;
		t->p++;
		if (is_symbol_start(*t->p))
			return tok_fail(
				t, -EOPNOTSUPP,
				"a symbol's address as a constant, which rsp does not read");
		if (!take_int(t, &a->value))
			return tok_fail(t, -EINVAL, "not a number after '$'");
		return t->p == t->end ? 0 : tok_fail(t, -EINVAL, "junk after the constant");
	}
	if (*t->p == '%') {
		a->loc = RSP_USDT_REG;
		a->value = 0;
		if (memchr(t->p, ':', (size_t)(t->end - t->p)))
			return tok_fail(t, -EOPNOTSUPP,
					"a segment-relative operand, which rsp does not read");
		return take_reg(t, t->end, a);
	}
	return take_mem(t, a);
}

int rsp_usdt__parse_args(const char *s, struct rsp_usdt_arg *args, struct rsp_buf *err)
{
	size_t len = strnlen(s, RSP_USDT_ARGS_MAX);
	const char *p = s, *end = s + len;
	int n = 0;

	if (len == RSP_USDT_ARGS_MAX) {
		rsp_buf__printf(err, "a USDT argument string longer than %d bytes",
				RSP_USDT_ARGS_MAX - 1);
		return -EINVAL;
	}
	for (;;) {
		struct tok t = {.err = err, .no = n + 1};
		int ret;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			return n;
		if (n == RSP_USDT_MAX_ARGS) {
			rsp_buf__printf(err, "more than %d USDT arguments in \"%s\"",
					RSP_USDT_MAX_ARGS, s);
			return -EINVAL;
		}
		t.start = t.p = p;
		t.end = memchr(p, ' ', (size_t)(end - p));
		t.end = t.end ? t.end : end;
		memset(&args[n], 0, sizeof(args[n]));
		ret = parse_arg(&t, &args[n]);
		if (ret)
			return ret;
		n++;
		p = t.end;
	}
}

/* ---- the file ---- */

/*
 * ELF_C_READ, not ELF_C_READ_MMAP: libelf then reads the section headers,
 * the section names and the notes only (pread, on demand), and a file
 * truncated while rsp reads it is a short read, not a SIGBUS in rspd.
 * *@size: the file's size then.
 */
static int open_elf(int fd, const char *path, Elf **out, size_t *size, struct rsp_buf *err)
{
	struct stat st;
	Elf *elf;
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		rsp_buf__printf(err, "cannot read %s as ELF: %s", path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		rsp_buf__printf(err,
				"%s is not an x86-64 executable or shared library: rsp reads "
				"the USDT notes of those only",
				path);
		elf_end(elf);
		return -ENOEXEC;
	}
	if (fstat(fd, &st) || eh.e_shoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_shnum * eh.e_shentsize > (uint64_t)st.st_size - eh.e_shoff) {
		/* libelf would see no sections: the notes must not vanish unsaid */
		rsp_buf__printf(err, "%s is truncated: its section headers lie past its end", path);
		elf_end(elf);
		return -EINVAL;
	}
	*out = elf;
	*size = (size_t)st.st_size;
	return 0;
}

/* The section named @name; NULL if none. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t strndx;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *s;

		if (!gelf_getshdr(scn, sh))
			return NULL;
		s = elf_strptr(elf, strndx, sh->sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

typedef int (*note_fn)(void *ctx, const struct rsp_usdt_note *n, struct rsp_buf *err);

/*
 * Each stapsdt note of @provider (NULL: all) in .note.stapsdt to @fn,
 * which returns 0 to go on, 1 to stop, or -errno. Notes of other owners or
 * types are skipped but counted against RSP_USDT_MAX_NOTES.
 */
static int scan_notes(Elf *elf, const char *path, const char *provider, note_fn fn, void *ctx,
		      struct rsp_buf *err)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, NOTE_SECTION, &sh);
	Elf_Data *data = scn && sh.sh_type == SHT_NOTE ? elf_getdata(scn, NULL) : NULL;
	size_t off = 0, nr = 0;

	if (scn && (!data || !data->d_buf) && sh.sh_type != SHT_NOBITS && sh.sh_size) {
		rsp_buf__printf(err, "%s: cannot read its section %s: %s", path, NOTE_SECTION,
				sh.sh_type != SHT_NOTE ? "not a note section" : elf_errmsg(-1));
		return -EINVAL;
	}
	while (data && off < data->d_size) {
		size_t name_off, desc_off, next;
		struct rsp_buf why = RSP_BUF_INIT;
		struct rsp_usdt_note n;
		GElf_Nhdr nh;
		int ret;

		next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
		if (!next) {
			rsp_buf__printf(err, "%s: the USDT note at byte %zu of %s is truncated",
					path, off, NOTE_SECTION);
			return -EINVAL;
		}
		if (++nr > RSP_USDT_MAX_NOTES) {
			rsp_buf__printf(err, "%s has more than %d USDT notes: rsp reads no more",
					path, RSP_USDT_MAX_NOTES);
			return -E2BIG;
		}
		off = next;
		if (nh.n_type != NOTE_TYPE || nh.n_namesz != sizeof(NOTE_OWNER) ||
		    memcmp((const char *)data->d_buf + name_off, NOTE_OWNER, sizeof(NOTE_OWNER)))
			continue;
		if (rsp_usdt__parse_note((const char *)data->d_buf + desc_off, nh.n_descsz, &n,
					 &why)) {
			rsp_buf__printf(err, "%s: %s", path, why.data ? why.data : "out of memory");
			rsp_buf__exit(&why);
			return -EINVAL;
		}
		if (provider && strcmp(n.provider, provider))
			continue;
		ret = fn(ctx, &n, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int found(void *ctx, const struct rsp_usdt_note *n, struct rsp_buf *err)
{
	(void)ctx;
	(void)n;
	(void)err;
	return 1;
}

int rsp_usdt__has_provider(int fd, const char *path, const char *provider, struct rsp_buf *err)
{
	size_t size;
	Elf *elf;
	int ret = open_elf(fd, path, &elf, &size, err);

	if (ret)
		return ret;
	ret = scan_notes(elf, path, provider, found, NULL, err);
	elf_end(elf);
	return ret;
}

/* What placing a file's probes needs: its PT_LOADs and where .stapsdt.base is now. */
struct reader {
	struct rsp_usdt *u;
	const char *path;
	size_t cap;
	GElf_Phdr *loads;
	size_t nr_loads;
	size_t file_size; /* a hostile PT_LOAD may claim bytes past it */
	uint64_t base;	  /* 0: no .stapsdt.base section */
};

static int read_loads(Elf *elf, struct reader *r)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	r->loads = calloc(n ? n : 1, sizeof(*r->loads));
	if (!r->loads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &r->loads[r->nr_loads]) &&
		    r->loads[r->nr_loads].p_type == PT_LOAD)
			r->nr_loads++;
	return 0;
}

/*
 * The file offset of [@vaddr, @vaddr + @len) inside the file bytes of a
 * PT_LOAD whose flags include @want and exclude @refuse; false if none.
 */
static bool to_offset(const struct reader *r, uint64_t vaddr, uint64_t len, uint32_t want,
		      uint32_t refuse, uint64_t *off)
{
	for (size_t i = 0; i < r->nr_loads; i++) {
		const GElf_Phdr *ph = &r->loads[i];

		if ((ph->p_flags & want) != want || (ph->p_flags & refuse))
			continue;
		if (vaddr >= ph->p_vaddr && ph->p_filesz >= len &&
		    vaddr - ph->p_vaddr <= ph->p_filesz - len) {
			*off = vaddr - ph->p_vaddr + ph->p_offset;
			return *off >= ph->p_offset && *off < r->file_size &&
			       r->file_size - *off >= len;
		}
	}
	return false;
}

static int place(const struct reader *r, const struct rsp_usdt_note *n, struct rsp_usdt_probe *p,
		 struct rsp_buf *err)
{
	/* prelink moved the file by this much (modulo 2^64) */
	uint64_t shift = r->base && n->base ? r->base - n->base : 0;

	p->pc = n->pc;
	p->vaddr = n->pc + shift;
	if (!to_offset(r, p->vaddr, 1, PF_X, 0, &p->offset)) {
		rsp_buf__printf(err,
				"USDT probe %s:%s of %s is at 0x%llx, in no executable segment "
				"of the file: a corrupt note",
				n->provider, n->name, r->path, (unsigned long long)p->vaddr);
		return -EINVAL;
	}
	/* The semaphore is a 2-byte counter in writable data (.probes). */
	if (n->semaphore && !to_offset(r, n->semaphore + shift, 2, PF_W, PF_X, &p->sema_offset)) {
		rsp_buf__printf(err,
				"the semaphore of USDT probe %s:%s of %s, at 0x%llx, is in no "
				"writable segment of the file: a corrupt note",
				n->provider, n->name, r->path,
				(unsigned long long)(n->semaphore + shift));
		return -EINVAL;
	}
	return 0;
}

static int add_probe(void *ctx, const struct rsp_usdt_note *n, struct rsp_buf *err)
{
	struct reader *r = ctx;
	struct rsp_usdt_probe *p;
	struct rsp_buf ignore = RSP_BUF_INIT;

	if (r->u->nr == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;

		p = realloc(r->u->probes, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->u->probes = p;
		r->cap = cap;
	}
	p = &r->u->probes[r->u->nr];
	memset(p, 0, sizeof(*p));
	if (place(r, n, p, err))
		return -EINVAL;
	p->args_str = strdup(n->args);
	if (!p->args_str)
		return -ENOMEM;
	r->u->nr++; /* owns args_str from here */
	snprintf(p->provider, sizeof(p->provider), "%s", n->provider);
	snprintf(p->name, sizeof(p->name), "%s", n->name);
	/* A bad argument string spoils this probe's arguments only: its sentence on demand. */
	p->args_err = rsp_usdt__parse_args(n->args, p->args, &ignore);
	rsp_buf__exit(&ignore);
	if (p->args_err >= 0) {
		p->nr_args = (uint8_t)p->args_err;
		p->args_err = 0;
	} else {
		r->u->nr_bad_args++;
	}
	return 0;
}

static int read_probes(Elf *elf, struct reader *r, const char *provider, struct rsp_buf *err)
{
	GElf_Shdr sh;
	int ret;

	if (find_section(elf, BASE_SECTION, &sh))
		r->base = sh.sh_addr;
	ret = read_loads(elf, r);
	if (!ret)
		ret = scan_notes(elf, r->path, provider, add_probe, r, err);
	if (ret == -ENOMEM) {
		rsp_buf__reset(err);
		rsp_buf__printf(err, "out of memory reading the USDT notes of %s", r->path);
	}
	return ret;
}

struct rsp_usdt *rsp_usdt__read_fd(int fd, const char *path, const char *provider,
				   struct rsp_buf *err)
{
	struct reader r = {.path = path};
	Elf *elf;
	int ret = open_elf(fd, path, &elf, &r.file_size, err);

	if (ret)
		return NULL;
	r.u = calloc(1, sizeof(*r.u));
	ret = r.u ? read_probes(elf, &r, provider, err) : -ENOMEM;
	if (!r.u)
		rsp_buf__printf(err, "out of memory reading the USDT notes of %s", path);
	free(r.loads);
	elf_end(elf);
	if (ret) {
		rsp_usdt__delete(r.u);
		return NULL;
	}
	return r.u;
}

void rsp_usdt__delete(struct rsp_usdt *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr; i++)
		free(u->probes[i].args_str);
	free(u->probes);
	free(u);
}
