// SPDX-License-Identifier: LGPL-2.1
/* JIT symbol maps (/tmp/perf-PID.map): parsed once, sorted, binary search. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "internal/jitmap.h"
#include "internal/gallop.h"

#define JITMAP_MAX_FILE (64u << 20)

struct jsym {
	uint64_t start, size;
	uint32_t name;
	uint32_t line; /* later lines win at equal start */
};

struct rsp_jitmap {
	struct jsym *syms;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
};

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (end - *p > 2 && (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X'))
		*p += 2;
	for (; *p < end && isxdigit((unsigned char)**p); (*p)++, digits++) {
		int c = tolower((unsigned char)**p);

		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	if (!digits || digits > 16)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "START SIZE NAME": 0 with *p at NAME, or -EINVAL. */
static int parse_line(const char **p, const char *eol, uint64_t *start, uint64_t *size)
{
	if (parse_hex(p, eol, start) || *p >= eol || **p != ' ')
		return -EINVAL;
	(*p)++;
	if (parse_hex(p, eol, size) || *p >= eol || **p != ' ' || !*size)
		return -EINVAL;
	(*p)++;
	if (*p >= eol || memchr(*p, '\0', (size_t)(eol - *p)))
		return -EINVAL;
	return 0;
}

static int add(struct rsp_jitmap *j, uint64_t start, uint64_t size, const char *name, size_t n,
	       uint32_t line)
{
	if (j->nr == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 256;
		struct jsym *s = realloc(j->syms, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		j->syms = s;
		j->cap = cap;
	}
	if (j->names_len + n + 1 > j->names_cap) {
		size_t cap = j->names_cap ? j->names_cap : 4096;
		char *p;

		while (cap < j->names_len + n + 1)
			cap *= 2;
		p = realloc(j->names, cap);
		if (!p)
			return -ENOMEM;
		j->names = p;
		j->names_cap = cap;
	}
	memcpy(j->names + j->names_len, name, n);
	j->names[j->names_len + n] = '\0';
	j->syms[j->nr++] = (struct jsym){start, size, (uint32_t)j->names_len, line};
	j->names_len += n + 1;
	return 0;
}

static int cmp_jsym(const void *a, const void *b)
{
	const struct jsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

struct rsp_jitmap *rsp_jitmap__parse(const char *text, size_t len, struct rsp_buf *err)
{
	struct rsp_jitmap *j = calloc(1, sizeof(*j));
	const char *p = text, *end = text + len;
	uint32_t line = 0;
	size_t n = 0;

	if (!j)
		goto nomem;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
		uint64_t start, size;

		if (!eol)
			eol = end;
		line++;
		/* Malformed lines are skipped: the JIT owns this file, not us. */
		if (!parse_line(&q, eol, &start, &size) &&
		    add(j, start, size, q, (size_t)(eol - q), line))
			goto nomem;
		p = eol + 1;
	}
	if (j->nr > 1)
		qsort(j->syms, j->nr, sizeof(j->syms[0]), cmp_jsym);
	for (size_t i = 0; i < j->nr; i++) {
		if (n && j->syms[n - 1].start == j->syms[i].start)
			n--; /* the later line replaces the earlier one */
		j->syms[n++] = j->syms[i];
	}
	j->nr = n;
	return j;
nomem:
	rsp_jitmap__delete(j);
	rsp_buf__puts(err, "out of memory reading a JIT map");
	return NULL;
}

struct rsp_jitmap *rsp_jitmap__load(const char *path, uid_t uid, int *errp, struct rsp_buf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct rsp_jitmap *j = NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	*errp = 0;
	if (fd < 0) {
		*errp = errno;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > JITMAP_MAX_FILE ||
	    (uid != (uid_t)-1 && st.st_uid != 0 && st.st_uid != uid)) {
		rsp_buf__printf(err,
				"%s is not a regular file of at most 64 MiB owned by the "
				"process's user; ignored",
				path);
		*errp = EPERM;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		*errp = ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	j = rsp_jitmap__parse(buf, len, err);
	if (!j)
		*errp = ENOMEM;
out:
	free(buf);
	close(fd);
	return j;
}

void rsp_jitmap__delete(struct rsp_jitmap *j)
{
	if (!j)
		return;
	free(j->syms);
	free(j->names);
	free(j);
}

int rsp_jitmap__lookup(const struct rsp_jitmap *j, uint64_t addr, const char **name,
		       uint64_t *offset)
{
	size_t lo = rsp_gallop__above(j->syms, sizeof(j->syms[0]), offsetof(struct jsym, start),
				      j->nr, addr);

	if (!lo || addr - j->syms[lo - 1].start >= j->syms[lo - 1].size)
		return -ENOENT;
	*name = j->names + j->syms[lo - 1].name;
	*offset = addr - j->syms[lo - 1].start;
	return 0;
}

size_t rsp_jitmap__count(const struct rsp_jitmap *j)
{
	return j ? j->nr : 0;
}

size_t rsp_jitmap__bytes(const struct rsp_jitmap *j)
{
	return j ? sizeof(*j) + j->cap * sizeof(j->syms[0]) + j->names_cap : 0;
}
