// SPDX-License-Identifier: LGPL-2.1
/*
 * Kernel symbols from kallsyms text: parse once, keep code symbols in an
 * array sorted by address, binary search per lookup. The names live in one
 * string pool so that the table is two allocations however large.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/ksyms.h>
#include "internal/gallop.h"

/*
 * kallsyms has no sizes: a symbol runs to the next one. Past the last
 * symbol of the kernel or of a module (the next one is in another module,
 * or there is none) it is taken to run at most this far; beyond, the
 * address is in no known function.
 */
#define MAX_SYMBOL_SPAN (1u << 20)

struct rsp_ksyms {
	struct rsp_ksym *syms;
	size_t nr;
	char *pool; /* names and module names, NUL-separated */
	size_t bytes;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct rsp_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Aliases: keep the one listed first (kallsyms lists _text before _stext). */
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Several names at one address (aliases): keep the first, by cmp_addr. */
static void fold_aliases(struct rsp_ksyms *ks)
{
	size_t keep = 0;

	for (size_t i = 0; i < ks->nr; i++)
		if (!keep || ks->syms[i].addr != ks->syms[keep - 1].addr)
			ks->syms[keep++] = ks->syms[i];
	ks->nr = keep;
}

static bool is_code(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * Parse one line "ADDR TYPE NAME[\t[MODULE]]" in place (the pool copy):
 * NUL-terminates name and module. False if the line is not a code symbol.
 */
static bool parse_line(char *line, struct rsp_ksym *out, bool *nonzero)
{
	char *end, *name, *mod;
	unsigned long long addr;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ' || !end[1] || end[2] != ' ')
		return false;
	if (addr)
		*nonzero = true;
	if (!is_code(end[1]))
		return false;
	name = end + 3;
	mod = strchr(name, '\t');
	if (mod) {
		/* "[ext4]" is kept with its brackets: that is how it is shown. */
		*mod++ = '\0';
		if (*mod == '[') {
			size_t n = strcspn(mod, "]");

			if (mod[n] == ']')
				mod[n + 1] = '\0';
		}
	} else {
		mod = name + strlen(name);
	}
	if (!*name)
		return false;
	out->addr = addr;
	out->name = name;
	out->module = mod;
	return true;
}

static size_t count_lines(const char *p, size_t len)
{
	size_t n = 1;

	for (size_t i = 0; i < len; i++)
		n += p[i] == '\n';
	return n;
}

static int parse_all(struct rsp_ksyms *ks, size_t len, bool *nonzero)
{
	size_t cap = count_lines(ks->pool, len);
	char *p = ks->pool, *end = ks->pool + len;

	ks->syms = malloc(cap * sizeof(*ks->syms));
	if (!ks->syms)
		return -ENOMEM;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl)
			*nl = '\0';
		if (ks->nr < cap && parse_line(p, &ks->syms[ks->nr], nonzero))
			ks->nr++;
		p = nl ? nl + 1 : end;
	}
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_addr);
	fold_aliases(ks);
	ks->bytes = len + 1 + cap * sizeof(*ks->syms);
	return 0;
}

struct rsp_ksyms *rsp_ksyms__new_from_text(const char *text, size_t len, struct rsp_buf *err)
{
	struct rsp_ksyms *ks = calloc(1, sizeof(*ks));
	bool nonzero = false;
	int ret;

	if (!ks || !(ks->pool = malloc(len + 1))) {
		free(ks);
		rsp_buf__puts(err, "out of memory loading kernel symbols");
		errno = ENOMEM;
		return NULL;
	}
	memcpy(ks->pool, text, len);
	ks->pool[len] = '\0';
	ret = parse_all(ks, len, &nonzero);
	if (!ret && (!ks->nr || !nonzero)) {
		rsp_buf__puts(err, ks->nr ? "kernel symbol addresses read as zero (kptr_restrict); "
					    "run as root or set /proc/sys/kernel/kptr_restrict to 0"
					  : "no kernel code symbols in the kallsyms text");
		ret = ks->nr ? -EPERM : -EINVAL;
	} else if (ret) {
		rsp_buf__puts(err, "out of memory loading kernel symbols");
	}
	if (ret) {
		rsp_ksyms__delete(ks);
		errno = -ret;
		return NULL;
	}
	return ks;
}

/* Read a whole file whose size stat cannot tell (procfs reports 0). */
static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap), *nb;

	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (n < cap) {
			if (ferror(f))
				break;
			*len = n;
			return buf;
		}
		nb = realloc(buf, cap * 2);
		if (!nb)
			break;
		buf = nb;
		cap *= 2;
	}
	free(buf);
	return NULL;
}

struct rsp_ksyms *rsp_ksyms__new_from_file(const char *path, struct rsp_buf *err)
{
	FILE *f = fopen(path, "re");
	struct rsp_ksyms *ks;
	size_t len = 0;
	char *text;
	int e;

	if (!f) {
		e = errno;
		rsp_buf__printf(err, "cannot open %s: %s — kernel stacks will not be classified",
				path, strerror(e));
		errno = e;
		return NULL;
	}
	text = slurp(f, &len);
	e = errno;
	fclose(f);
	if (!text) {
		rsp_buf__printf(err, "cannot read %s: %s", path, strerror(e ? e : ENOMEM));
		errno = e ? e : ENOMEM;
		return NULL;
	}
	ks = rsp_ksyms__new_from_text(text, len, err);
	free(text);
	return ks;
}

void rsp_ksyms__delete(struct rsp_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks);
}

/* The index of the last symbol at or below @addr; ks->nr if there is none. */
static size_t floor_index(const struct rsp_ksyms *ks, uint64_t addr)
{
	if (!ks || !ks->nr || addr < ks->syms[0].addr)
		return ks ? ks->nr : 0;
	return rsp_gallop__above(ks->syms, sizeof(ks->syms[0]), offsetof(struct rsp_ksym, addr),
				 ks->nr, addr) -
	       1;
}

const struct rsp_ksym *rsp_ksyms__find(const struct rsp_ksyms *ks, uint64_t addr, uint64_t *off)
{
	size_t lo = floor_index(ks, addr);

	if (!ks || lo >= ks->nr)
		return NULL;
	/* Inside the kernel or a module, a symbol runs to the next; at its end
	 * (the next is elsewhere, or there is none) only MAX_SYMBOL_SPAN far. */
	if (addr - ks->syms[lo].addr > MAX_SYMBOL_SPAN &&
	    (lo == ks->nr - 1 || strcmp(ks->syms[lo].module, ks->syms[lo + 1].module)))
		return NULL;
	if (off)
		*off = addr - ks->syms[lo].addr;
	return &ks->syms[lo];
}

uint64_t rsp_ksyms__addr(const struct rsp_ksyms *ks, const char *name)
{
	for (size_t i = 0; ks && i < ks->nr; i++)
		if (!ks->syms[i].module[0] && !strcmp(ks->syms[i].name, name))
			return ks->syms[i].addr;
	return 0;
}

size_t rsp_ksyms__count(const struct rsp_ksyms *ks)
{
	return ks ? ks->nr : 0;
}

size_t rsp_ksyms__bytes(const struct rsp_ksyms *ks)
{
	return ks ? ks->bytes : 0;
}

size_t rsp_ksyms__index(const struct rsp_ksyms *ks, const struct rsp_ksym *sym)
{
	return (size_t)(sym - ks->syms);
}

void rsp_ksyms__mark(const struct rsp_ksyms *ks, uint64_t addr, uint8_t *marks)
{
	size_t i = floor_index(ks, addr);

	if (!ks || i >= ks->nr)
		return; /* below every symbol: found in no subset either */
	marks[i / 8] |= (uint8_t)(1u << (i % 8));
	/* The next one bounds it (a symbol runs to the next, see find). */
	if (i + 1 < ks->nr)
		marks[(i + 1) / 8] |= (uint8_t)(1u << ((i + 1) % 8));
}

int rsp_ksyms__write_marked(const struct rsp_ksyms *ks, const uint8_t *marks, struct rsp_buf *out)
{
	for (size_t i = 0; ks && i < ks->nr; i++) {
		const struct rsp_ksym *k = &ks->syms[i];
		int err;

		if (!(marks[i / 8] & (1u << (i % 8))))
			continue;
		if (k->module[0])
			err = rsp_buf__printf(out, "%016llx t %s\t%s\n",
					      (unsigned long long)k->addr, k->name, k->module);
		else
			err = rsp_buf__printf(out, "%016llx T %s\n", (unsigned long long)k->addr,
					      k->name);
		if (err)
			return err;
	}
	return 0;
}
