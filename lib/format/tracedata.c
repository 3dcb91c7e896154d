// SPDX-License-Identifier: LGPL-2.1
/*
 * The tracing-data blob of perf.data's HEADER_TRACING_DATA feature, as
 * tools/perf/util/trace-event-info.c writes it and trace-event-read.c reads
 * it (version "0.6"):
 *
 *   u8[3] {23, 8, 68}  "tracing"  "0.6\0"  u8 big_endian  u8 sizeof(long)
 *   u32 page_size
 *   "header_page\0"  u64 size  text      (ring-buffer page header format)
 *   "header_event\0" u64 size  text
 *   u32 nr_ftrace    { u64 size  text }  (ftrace's own events)
 *   u32 nr_systems   { "system\0"  u32 nr  { u64 size  format text } }
 *   u32 kallsyms_size    bytes
 *   u32 printk_size      bytes           (printk_formats)
 *   u64 cmdlines_size    bytes           (saved_cmdlines, version >= 0.6)
 *
 * The parser reads untrusted bytes: every count and size is checked against
 * what is left before anything is allocated or handed to libtraceevent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <traceevent/event-parse.h>
#include <rsp/perfdata.h>
#include "internal/log.h"

#define TD_VERSION    "0.6"
#define TD_MAX_STRING 256

static int put(struct rsp_buf *b, const void *p, size_t n)
{
	return rsp_buf__add(b, p, n);
}

static int put_u32(struct rsp_buf *b, uint32_t v)
{
	return put(b, &v, 4);
}

static int put_u64(struct rsp_buf *b, uint64_t v)
{
	return put(b, &v, 8);
}

/* "name\0", u64 size, text: how header_page and header_event are stored. */
static int put_named_file(struct rsp_buf *b, const char *name, const char *text, size_t len)
{
	int err = put(b, name, strlen(name) + 1);

	if (!err)
		err = put_u64(b, len);
	return err ? err : put(b, text, len);
}

static int put_prologue(struct rsp_buf *b)
{
	static const unsigned char magic[] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	unsigned char endian = 0, lsize = (unsigned char)sizeof(long);
	long page = sysconf(_SC_PAGESIZE);
	int err = put(b, magic, sizeof(magic));

	if (!err)
		err = put(b, TD_VERSION, sizeof(TD_VERSION));
	if (!err)
		err = put(b, &endian, 1);
	if (!err)
		err = put(b, &lsize, 1);
	return err ? err : put_u32(b, (uint32_t)(page > 0 ? page : 4096));
}

/* Systems in order of first appearance, each with its formats. */
static int put_systems(struct rsp_buf *b, const struct rsp_tracedata_event *ev, int nr)
{
	uint32_t nsys = 0;
	int err;

	for (int i = 0; i < nr; i++) {
		int j;

		for (j = 0; j < i && strcmp(ev[j].system, ev[i].system); j++)
			;
		nsys += j == i;
	}
	err = put_u32(b, nsys);
	for (int i = 0; !err && i < nr; i++) {
		uint32_t count = 0;
		int j;

		for (j = 0; j < i && strcmp(ev[j].system, ev[i].system); j++)
			;
		if (j < i)
			continue; /* system already written */
		for (j = i; j < nr; j++)
			count += !strcmp(ev[j].system, ev[i].system);
		err = put(b, ev[i].system, strlen(ev[i].system) + 1);
		if (!err)
			err = put_u32(b, count);
		for (j = i; !err && j < nr; j++) {
			if (strcmp(ev[j].system, ev[i].system))
				continue;
			err = put_u64(b, ev[j].len);
			if (!err)
				err = put(b, ev[j].format, ev[j].len);
		}
	}
	return err;
}

int rsp_tracedata__build(struct rsp_buf *out, const char *header_page, size_t hp_len,
			 const char *header_event, size_t he_len,
			 const struct rsp_tracedata_event *events, int nr, const char *printk,
			 size_t printk_len, size_t *kallsyms_at)
{
	size_t start = out->len;
	int err;

	if (nr < 0 || !header_page || !header_event || printk_len > UINT32_MAX)
		return -EINVAL;
	err = put_prologue(out);
	if (!err)
		err = put_named_file(out, "header_page", header_page, hp_len);
	if (!err)
		err = put_named_file(out, "header_event", header_event, he_len);
	if (!err)
		err = put_u32(out, 0); /* no ftrace formats: rsp records none of them */
	if (!err)
		err = put_systems(out, events, nr);
	if (!err && kallsyms_at)
		*kallsyms_at = out->len - start;
	if (!err)
		err = put_u32(out, 0); /* kallsyms: none here (see the writer) */
	if (!err)
		err = put_u32(out, printk ? (uint32_t)printk_len : 0);
	if (!err && printk && printk_len)
		err = put(out, printk, printk_len);
	if (!err)
		err = put_u64(out, 0); /* saved_cmdlines */
	if (err)
		out->len = start;
	return err;
}

/* --- parsing ------------------------------------------------------------- */

struct td_cursor {
	const unsigned char *p;
	size_t len, off;
	uint64_t base;
	struct rsp_buf *err;
};

static int td_fail(struct td_cursor *c, const char *what)
{
	rsp_buf__printf(c->err, "tracing data at offset 0x%llx: %s",
			(unsigned long long)(c->base + c->off), what);
	return -EINVAL;
}

static int td_take(struct td_cursor *c, size_t n, const void **p, const char *what)
{
	char msg[160];

	if (n > c->len - c->off) {
		snprintf(msg, sizeof(msg), "%s needs %zu bytes but only %zu are left", what, n,
			 c->len - c->off);
		return td_fail(c, msg);
	}
	*p = c->p + c->off;
	c->off += n;
	return 0;
}

static int td_u32(struct td_cursor *c, uint32_t *v, const char *what)
{
	const void *p;
	int err = td_take(c, 4, &p, what);

	if (!err)
		memcpy(v, p, 4);
	return err;
}

static int td_u64(struct td_cursor *c, uint64_t *v, const char *what)
{
	const void *p;
	int err = td_take(c, 8, &p, what);

	if (!err)
		memcpy(v, p, 8);
	return err;
}

/* A NUL-terminated string of at most TD_MAX_STRING bytes. */
static int td_string(struct td_cursor *c, const char **s, const char *what)
{
	size_t left = c->len - c->off, max = left < TD_MAX_STRING ? left : TD_MAX_STRING;
	const char *p = (const char *)c->p + c->off;
	const char *nul = memchr(p, '\0', max);
	char msg[160];

	if (!nul) {
		snprintf(msg, sizeof(msg), "%s is not a string of at most %d bytes", what,
			 TD_MAX_STRING);
		return td_fail(c, msg);
	}
	*s = p;
	c->off += (size_t)(nul - p) + 1;
	return 0;
}

/* u64 size then that many bytes. */
static int td_sized(struct td_cursor *c, const void **p, uint64_t *size, const char *what)
{
	size_t at = c->off, left;
	char msg[160];
	int err = td_u64(c, size, what);

	if (err)
		return err;
	left = c->len - c->off;
	if (*size > left) {
		c->off = at;
		snprintf(msg, sizeof(msg), "%s claims %llu bytes but only %zu are left", what,
			 (unsigned long long)*size, left);
		return td_fail(c, msg);
	}
	return td_take(c, (size_t)*size, p, what);
}

static int td_prologue(struct td_cursor *c, struct tep_handle *tep)
{
	static const unsigned char magic[] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	const unsigned char *p;
	const char *version;
	uint32_t page;
	int err;

	if ((err = td_take(c, sizeof(magic), (const void **)&p, "the magic")))
		return err;
	if (memcmp(p, magic, sizeof(magic))) {
		c->off -= sizeof(magic);
		return td_fail(c, "no tracing-data magic (\\027\\010Dtracing)");
	}
	if ((err = td_string(c, &version, "the version")))
		return err;
	if (strcmp(version, TD_VERSION) && strcmp(version, "0.5")) {
		char msg[128];

		snprintf(msg, sizeof(msg), "version '%.16s' is not one rsp reads (0.5, 0.6)",
			 version);
		return td_fail(c, msg);
	}
	if ((err = td_take(c, 2, (const void **)&p, "endianness and long size")))
		return err;
	if (p[0] != 0)
		return td_fail(c, "the data is big-endian; rsp reads little-endian files only");
	if (p[1] != 4 && p[1] != 8)
		return td_fail(c, "the size of long is neither 4 nor 8");
	if ((err = td_u32(c, &page, "the page size")))
		return err;
	if (page < 512 || page > (1u << 24) || (page & (page - 1)))
		return td_fail(c, "the page size is not a power of two in 512 .. 16M");
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, p[1]);
	tep_set_page_size(tep, (int)page);
	return version[2] == '6' ? 1 : 0; /* 1: has saved cmdlines */
}

static int td_expect_name(struct td_cursor *c, const char *name)
{
	const void *p;
	size_t n = strlen(name) + 1;
	char msg[96];
	int err = td_take(c, n, &p, name);

	if (err)
		return err;
	if (memcmp(p, name, n)) {
		c->off -= n;
		snprintf(msg, sizeof(msg), "'%s' expected", name);
		return td_fail(c, msg);
	}
	return 0;
}

/*
 * header_page and header_event describe the ring buffer's pages, which rsp
 * never reads: checked for size and skipped (the long size comes from the
 * prologue), so that libtraceevent never parses them.
 */
static int td_headers(struct td_cursor *c)
{
	const void *p;
	uint64_t size;
	int err;

	if ((err = td_expect_name(c, "header_page")) ||
	    (err = td_sized(c, &p, &size, "header_page")))
		return err;
	if ((err = td_expect_name(c, "header_event")))
		return err;
	return td_sized(c, &p, &size, "header_event");
}

/*
 * The format text is untrusted, and libtraceevent's parser is not written
 * for hostile input (its print-fmt parser dereferences NULL on malformed
 * expressions). rsp needs only the event's name, id and field layout, so
 * the reader rebuilds a canonical format from those, each checked against
 * a strict grammar, with an empty print format, and hands libtraceevent
 * only that. perf's tools read the original text from the file.
 */
static bool is_ident(const char *s, size_t n)
{
	if (!n || n > 64 ||
	    !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z')))
			return false;
	return true;
}

/*
 * One word of a declaration: an identifier, optionally followed by '*'s (a
 * type word) or by "[digits]" (the name), or '*'s alone. Not libtraceevent's
 * built-in macros (LOCAL_PR_FMT, STA_PR_FMT, VIF_PR_FMT), whose expansion
 * in a declaration leaks memory inside libtraceevent.
 */
static bool is_word(const char *s, size_t n, bool name)
{
	size_t id = 0, i;

	if (memmem(s, n, "_PR_FMT", 7))
		return false;
	while (id < n && s[id] != '[' && s[id] != '*')
		id++;
	if (!is_ident(s, id))
		return n > 0 && !name && strspn(s, "*") == n && n <= 4;
	if (id == n)
		return true;
	if (s[id] == '*')
		return !name && strspn(s + id, "*") == n - id && n - id <= 4;
	if (!name)
		return false;
	for (i = id + 1; i < n - 1 && s[i] >= '0' && s[i] <= '9'; i++)
		;
	return n - id >= 3 && i == n - 1 && s[n - 1] == ']' && i - id - 1 <= 6;
}

/*
 * A declaration as the kernel prints them: "TYPE WORDS NAME" (2 to 8
 * words), or "__data_loc TYPE[] NAME" / "__rel_loc TYPE[] NAME" for
 * dynamic arrays. Anything else is refused before libtraceevent sees it.
 */
static bool is_decl(const char *s, size_t n)
{
	size_t words = 0, i = 0;
	const char *w[8];
	size_t wl[8];

	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != ' ')
			j++;
		if (j == i || words == 8)
			return false;
		w[words] = s + i;
		wl[words++] = j - i;
		i = j + (j < n);
		if (j < n && i == n)
			return false; /* trailing space */
	}
	if (words < 2)
		return false;
	if ((wl[0] == 10 && !memcmp(w[0], "__data_loc", 10)) ||
	    (wl[0] == 9 && !memcmp(w[0], "__rel_loc", 9)))
		return words == 3 && wl[1] > 2 && !memcmp(w[1] + wl[1] - 2, "[]", 2) &&
		       is_ident(w[1], wl[1] - 2) && is_word(w[2], wl[2], true);
	for (size_t k = 0; k < words; k++)
		if (!is_word(w[k], wl[k], k == words - 1))
			return false;
	return true;
}

static bool parse_uint(const char **p, const char *end, unsigned long *v)
{
	const char *q = *p;

	*v = 0;
	while (q < end && *q >= '0' && *q <= '9' && q - *p < 9)
		*v = *v * 10 + (unsigned long)(*q++ - '0');
	if (q == *p)
		return false;
	*p = q;
	return true;
}

static bool expect(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n))
		return false;
	*p += n;
	return true;
}

/* "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;" -> the same, canonical. */
static bool canon_field(const char *l, const char *end, struct rsp_buf *out)
{
	const char *decl, *semi;
	unsigned long off, size, sign = 0;

	while (l < end && (*l == ' ' || *l == '\t'))
		l++;
	if (!expect(&l, end, "field:"))
		return false;
	decl = l;
	semi = memchr(l, ';', (size_t)(end - l));
	if (!semi || !is_decl(decl, (size_t)(semi - decl)))
		return false;
	l = semi + 1;
	if (!expect(&l, end, "\toffset:") || !parse_uint(&l, end, &off) || !expect(&l, end, ";") ||
	    !expect(&l, end, "\tsize:") || !parse_uint(&l, end, &size) || !expect(&l, end, ";"))
		return false;
	if (expect(&l, end, "\tsigned:") && (!parse_uint(&l, end, &sign) || sign > 1))
		return false;
	if (off > 0xffff || size > 0xffff)
		return false;
	return !rsp_buf__printf(out, "\tfield:%.*s;\toffset:%lu;\tsize:%lu;\tsigned:%lu;\n",
				(int)(semi - decl), decl, off, size, sign);
}

/* The canonical format of @in, or -EINVAL naming nothing (the caller warns). */
static int canon_format(const char *in, size_t len, struct rsp_buf *out)
{
	const char *p = in, *end = in + len;
	unsigned long id = 0;
	bool have_name = false, have_id = false, in_fields = false;
	int fields = 0, blank = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		const char *q = p;

		if (!in_fields && expect(&q, le, "name: ") && is_ident(q, (size_t)(le - q)) &&
		    !have_name) {
			rsp_buf__printf(out, "name: %.*s\n", (int)(le - q), q);
			have_name = true;
		} else if (!in_fields && expect(&q, le, "ID: ") && parse_uint(&q, le, &id) &&
			   q == le && have_name && !have_id) {
			rsp_buf__printf(out, "ID: %lu\nformat:\n", id);
			have_id = true;
		} else if (have_id && !in_fields && le - p == 7 && !memcmp(p, "format:", 7)) {
			in_fields = true;
		} else if (in_fields && canon_field(p, le, out)) {
			fields++;
		} else if (in_fields && le - p >= 10 && !memcmp(p, "print fmt:", 10)) {
			break;
		} else if (in_fields && le == p) {
			/* The blank line that ends the common fields matters to libtraceevent. */
			if (fields && !blank++)
				rsp_buf__puts(out, "\n");
		} else { /* anything else: not a format rsp trusts (or an append failed) */
			return out->error ? out->error : -EINVAL;
		}
		p = le + (nl != NULL);
	}
	if (!have_id || !in_fields || !fields || fields > 256)
		return out->error ? out->error : -EINVAL;
	rsp_buf__puts(out, "\nprint fmt: \"\"\n");
	return out->error; /* any failed append above: -ENOMEM, not a format refused */
}

/* Hand one format file to libtraceevent; a format it rejects is only a warning. */
static int td_format(struct td_cursor *c, struct tep_handle *tep, const char *sys)
{
	struct rsp_buf canon = RSP_BUF_INIT;
	const void *p;
	uint64_t size;
	uint64_t at = c->base + c->off;
	int err = td_sized(c, &p, &size, "an event format");
	enum tep_errno ret = TEP_ERRNO__MEM_ALLOC_FAILED;

	if (err)
		return err;
	err = is_ident(sys, strlen(sys)) ? canon_format(p, size, &canon) : -EINVAL;
	if (err == -ENOMEM) { /* out of memory: the load fails, not this format alone */
		rsp_buf__exit(&canon);
		return -ENOMEM;
	}
	if (err) {
		rsp_warn("tracing data at offset 0x%llx: a format of system '%.32s' is not one rsp "
			 "reads; its events are unusable",
			 (unsigned long long)at, sys);
		rsp_buf__exit(&canon);
		return 0;
	}
	if (canon.data)
		ret = tep_parse_event(tep, canon.data, canon.len, sys);
	rsp_buf__exit(&canon);
	if (ret && ret != TEP_ERRNO__MEM_ALLOC_FAILED)
		rsp_warn("tracing data at offset 0x%llx: libtraceevent could not parse a format "
			 "of system '%.32s'; its events are unusable",
			 (unsigned long long)at, sys);
	return ret == TEP_ERRNO__MEM_ALLOC_FAILED ? -ENOMEM : 0;
}

/* Counts are checked against the bytes left: each item takes at least 8. */
static int td_count(struct td_cursor *c, uint32_t *n, size_t min_item, const char *what)
{
	size_t at = c->off, left;
	char msg[160];
	int err = td_u32(c, n, what);

	left = c->len - c->off;
	if (!err && (uint64_t)*n * min_item > left) {
		c->off = at;
		snprintf(msg, sizeof(msg), "%s says %u but the rest could hold at most %zu", what,
			 *n, left / min_item);
		return td_fail(c, msg);
	}
	return err;
}

static int td_systems(struct td_cursor *c, struct tep_handle *tep)
{
	uint32_t nftrace, nsys;
	int err = td_count(c, &nftrace, 8, "the number of ftrace formats");

	for (uint32_t i = 0; !err && i < nftrace; i++)
		err = td_format(c, tep, "ftrace");
	if (!err)
		err = td_count(c, &nsys, 6, "the number of systems");
	for (uint32_t i = 0; !err && i < nsys; i++) {
		const char *sys;
		uint32_t nev;

		err = td_string(c, &sys, "a system name");
		if (!err)
			err = td_count(c, &nev, 8, "the number of events of a system");
		for (uint32_t j = 0; !err && j < nev; j++)
			err = td_format(c, tep, sys);
	}
	return err;
}

/* kallsyms (kept for the caller), printk formats, saved cmdlines: checked. */
static int td_trailer(struct td_cursor *c, bool cmdlines, const char **kallsyms, size_t *klen)
{
	const void *p;
	uint32_t size;
	uint64_t size64;
	int err;

	for (int i = 0; i < 2; i++) {
		const char *what = i ? "printk formats" : "kallsyms";

		if ((err = td_u32(c, &size, what)))
			return err;
		if (size > c->len - c->off) {
			c->off -= 4;
			return td_fail(c, i ? "printk formats run past the end"
					    : "kallsyms runs past the end");
		}
		if (!i) {
			*kallsyms = size ? (const char *)c->p + c->off : NULL;
			*klen = size;
		}
		c->off += size;
	}
	return cmdlines ? td_sized(c, &p, &size64, "saved command lines") : 0;
}

struct tep_handle *rsp_tracedata__parse(const void *buf, size_t len, uint64_t base,
					const char **kallsyms, size_t *kallsyms_len,
					struct rsp_buf *err)
{
	const char *ks = NULL;
	size_t klen = 0;
	struct td_cursor c = {.p = buf, .len = len, .off = 0, .base = base, .err = err};
	struct tep_handle *tep = tep_alloc();
	int ret;

	if (!tep) {
		rsp_buf__puts(err, "out of memory for the tracing data");
		return NULL;
	}
	/* libtraceevent prints its parse errors on stderr unless told not to. */
	tep_set_loglevel(TEP_LOG_NONE);
	ret = td_prologue(&c, tep);
	if (ret >= 0) {
		bool cmdlines = ret == 1;

		ret = td_headers(&c);
		if (!ret)
			ret = td_systems(&c, tep);
		if (!ret)
			ret = td_trailer(&c, cmdlines, &ks, &klen);
	}
	if (ret == -ENOMEM && !err->len)
		rsp_buf__puts(err, "out of memory while parsing the tracing data");
	if (ret) {
		tep_free(tep);
		return NULL;
	}
	if (kallsyms)
		*kallsyms = ks;
	if (kallsyms_len)
		*kallsyms_len = klen;
	return tep;
}
