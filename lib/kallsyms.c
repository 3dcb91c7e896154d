// SPDX-License-Identifier: LGPL-2.1
/*
 * Kernel symbols from kallsyms text. Parsed once into a sorted array with
 * the names in one arena; lookups are a binary search.
 *
 * Several names often share an address (_text, _stext, ...): the one kept
 * is the global one, then the one with fewer leading underscores, then the
 * first listed.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal/kallsyms.h"

/* A symbol's extent when the next symbol is in another module, or far. */
#define KALLSYMS_MAX_SPAN (1ull << 20)
#define KALLSYMS_MAX_FILE (256u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset in names */
	uint16_t module; /* index in modules; 0 = the kernel itself */
	uint8_t rank;
};

struct rsp_kallsyms {
	struct ksym *syms;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
	char **modules; /* "[kernel]", "[ext4]", ... */
	size_t nr_modules;
};

static int names_add(struct rsp_kallsyms *k, const char *s, size_t n, uint32_t *off)
{
	if (k->names_len + n + 1 > UINT32_MAX)
		return -E2BIG;
	if (k->names_len + n + 1 > k->names_cap) {
		size_t cap = k->names_cap ? k->names_cap : 65536;
		char *p;

		while (cap < k->names_len + n + 1)
			cap *= 2;
		p = realloc(k->names, cap);
		if (!p)
			return -ENOMEM;
		k->names = p;
		k->names_cap = cap;
	}
	memcpy(k->names + k->names_len, s, n);
	k->names[k->names_len + n] = '\0';
	*off = (uint32_t)k->names_len;
	k->names_len += n + 1;
	return 0;
}

static int module_index(struct rsp_kallsyms *k, const char *s, size_t n, uint16_t *idx)
{
	char **m;

	for (size_t i = 1; i < k->nr_modules; i++) {
		if (strlen(k->modules[i]) == n + 2 && !memcmp(k->modules[i] + 1, s, n)) {
			*idx = (uint16_t)i;
			return 0;
		}
	}
	if (k->nr_modules >= UINT16_MAX)
		return -E2BIG;
	m = realloc(k->modules, (k->nr_modules + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	k->modules = m;
	m[k->nr_modules] = malloc(n + 3);
	if (!m[k->nr_modules])
		return -ENOMEM;
	m[k->nr_modules][0] = '[';
	memcpy(m[k->nr_modules] + 1, s, n);
	memcpy(m[k->nr_modules] + 1 + n, "]", 2);
	*idx = (uint16_t)k->nr_modules++;
	return 0;
}

static uint8_t rank_of(char type, const char *name, size_t n)
{
	uint8_t r = isupper((unsigned char)type) ? 0 : 8;

	for (size_t i = 0; i < n && name[i] == '_' && r < 7 + 8; i++)
		r++;
	return r;
}

/* One line, NUL-free, without its newline. 1 if kept, 0 if skipped, -errno. */
static int parse_line(struct rsp_kallsyms *k, const char *p, const char *end)
{
	const char *name, *name_end, *mod = NULL, *mod_end = NULL;
	uint64_t addr = 0;
	struct ksym *s;
	char type;
	int digits = 0;

	for (; p < end && isxdigit((unsigned char)*p); p++, digits++)
		addr = addr << 4 | (uint64_t)(isdigit((unsigned char)*p)
						      ? *p - '0'
						      : (tolower((unsigned char)*p) - 'a' + 10));
	if (!digits || digits > 16 || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return -EINVAL;
	type = p[1];
	name = p + 3;
	for (name_end = name; name_end < end && *name_end != '\t' && *name_end != ' '; name_end++)
		;
	if (name_end == name)
		return -EINVAL;
	if (name_end < end) {
		const char *q = name_end;

		while (q < end && (*q == '\t' || *q == ' '))
			q++;
		if (q < end && *q == '[' && end[-1] == ']') {
			mod = q + 1;
			mod_end = end - 1;
		}
	}
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (k->nr == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 65536;

		s = realloc(k->syms, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		k->syms = s;
		k->cap = cap;
	}
	s = &k->syms[k->nr];
	s->addr = addr;
	s->module = 0;
	s->rank = rank_of(type, name, (size_t)(name_end - name));
	if (names_add(k, name, (size_t)(name_end - name), &s->name))
		return -ENOMEM;
	if (mod && mod_end > mod && module_index(k, mod, (size_t)(mod_end - mod), &s->module))
		return -ENOMEM;
	k->nr++;
	return 1;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void fold(struct rsp_kallsyms *k)
{
	size_t n = 0;

	qsort(k->syms, k->nr, sizeof(k->syms[0]), cmp_ksym);
	for (size_t i = 0; i < k->nr; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr)
			continue;
		k->syms[n++] = k->syms[i];
	}
	k->nr = n;
}

struct rsp_kallsyms *rsp_kallsyms__parse(const char *text, size_t len, struct rsp_buf *err)
{
	struct rsp_kallsyms *k = calloc(1, sizeof(*k));
	const char *p = text, *end = text + len;
	size_t line = 0, bad = 0, nonzero = 0;
	int ret = 0;

	if (!k || module_index(k, "kernel", 6, &(uint16_t){0})) {
		rsp_kallsyms__delete(k);
		rsp_buf__puts(err, "out of memory reading kernel symbols");
		return NULL;
	}
	while (p < end && ret >= 0) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		line++;
		if (eol > p && memchr(p, '\0', (size_t)(eol - p)))
			ret = -EINVAL;
		else if (eol > p)
			ret = parse_line(k, p, eol);
		if (ret == -EINVAL) {
			bad++;
			ret = 0;
		} else if (ret > 0) {
			nonzero += k->syms[k->nr - 1].addr != 0;
		}
		p = eol + 1;
	}
	if (ret < 0) {
		rsp_buf__puts(err, "out of memory reading kernel symbols");
		rsp_kallsyms__delete(k);
		return NULL;
	}
	if (!k->nr || !nonzero) {
		rsp_buf__puts(err, !k->nr ? "no kernel text symbols in the kallsyms text"
					  : "kernel symbol addresses read as zero (kptr_restrict): "
					    "read /proc/kallsyms as root, or lower "
					    "/proc/sys/kernel/kptr_restrict");
		rsp_kallsyms__delete(k);
		return NULL;
	}
	(void)bad;
	fold(k);
	return k;
}

struct rsp_kallsyms *rsp_kallsyms__load(const char *path, struct rsp_buf *err)
{
	struct rsp_kallsyms *k;
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		rsp_buf__printf(err, "cannot read %s: %s", path,
				fd < 0 ? strerror(errno) : "out of memory");
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *p = cap < KALLSYMS_MAX_FILE ? realloc(buf, cap * 2) : NULL;

			if (!p) {
				rsp_buf__printf(err, "%s is too large to read", path);
				close(fd);
				free(buf);
				return NULL;
			}
			buf = p;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	k = rsp_kallsyms__parse(buf, len, err);
	free(buf);
	return k;
}

void rsp_kallsyms__delete(struct rsp_kallsyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nr_modules; i++)
		free(k->modules[i]);
	free(k->modules);
	free(k->syms);
	free(k->names);
	free(k);
}

int rsp_kallsyms__lookup(const struct rsp_kallsyms *k, uint64_t addr, const char **name,
			 const char **module, uint64_t *offset)
{
	size_t lo = 0, hi = k->nr;
	const struct ksym *s, *next;
	uint64_t span;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	s = &k->syms[lo - 1];
	next = lo < k->nr ? &k->syms[lo] : NULL;
	span = next && next->module == s->module ? next->addr - s->addr : KALLSYMS_MAX_SPAN;
	if (span > KALLSYMS_MAX_SPAN)
		span = KALLSYMS_MAX_SPAN;
	if (addr - s->addr >= span)
		return -ENOENT;
	*name = k->names + s->name;
	*module = k->modules[s->module];
	*offset = addr - s->addr;
	return 0;
}

size_t rsp_kallsyms__count(const struct rsp_kallsyms *k)
{
	return k ? k->nr : 0;
}

size_t rsp_kallsyms__bytes(const struct rsp_kallsyms *k)
{
	return k ? sizeof(*k) + k->cap * sizeof(k->syms[0]) + k->names_cap : 0;
}
