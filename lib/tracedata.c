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
			 size_t printk_len)
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
	if (!err)
		err = put_u32(out, 0); /* kallsyms: perf reads the running kernel's */
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

static int td_headers(struct td_cursor *c, struct tep_handle *tep)
{
	const void *p;
	uint64_t size;
	char *copy;
	int err;

	if ((err = td_expect_name(c, "header_page")) ||
	    (err = td_sized(c, &p, &size, "header_page")))
		return err;
	/* libtraceevent wants a writable buffer. */
	copy = malloc(size + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, p, size);
	copy[size] = '\0';
	if (!tep_parse_header_page(tep, copy, (unsigned long)size, tep_get_long_size(tep)))
		tep_set_long_size(tep, tep_get_header_page_size(tep));
	free(copy);
	if ((err = td_expect_name(c, "header_event")))
		return err;
	return td_sized(c, &p, &size, "header_event");
}

/* Hand one format file to libtraceevent; a format it rejects is only a warning. */
static int td_format(struct td_cursor *c, struct tep_handle *tep, const char *sys)
{
	const void *p;
	uint64_t size;
	uint64_t at = c->base + c->off;
	char *copy;
	int err = td_sized(c, &p, &size, "an event format");
	enum tep_errno ret;

	if (err)
		return err;
	copy = malloc(size + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, p, size);
	copy[size] = '\0';
	ret = tep_parse_event(tep, copy, (unsigned long)size, sys);
	free(copy);
	if (ret && ret != TEP_ERRNO__MEM_ALLOC_FAILED)
		rsp_warn("tracing data at offset 0x%llx: libtraceevent could not parse a format "
			 "of system '%s'; its events are unusable",
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

/* kallsyms, printk formats, saved cmdlines: checked and skipped. */
static int td_trailer(struct td_cursor *c, bool cmdlines)
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
		c->off += size;
	}
	return cmdlines ? td_sized(c, &p, &size64, "saved command lines") : 0;
}

struct tep_handle *rsp_tracedata__parse(const void *buf, size_t len, uint64_t base,
					struct rsp_buf *err)
{
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

		ret = td_headers(&c, tep);
		if (!ret)
			ret = td_systems(&c, tep);
		if (!ret)
			ret = td_trailer(&c, cmdlines);
	}
	if (ret == -ENOMEM && !err->len)
		rsp_buf__puts(err, "out of memory while parsing the tracing data");
	if (ret) {
		tep_free(tep);
		return NULL;
	}
	return tep;
}
