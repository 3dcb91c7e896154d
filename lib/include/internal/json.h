/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_JSON_H
#define RSP_INTERNAL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <rsp/buf.h>

/*
 * JSON out, the same for every command: two-space indent, keys in the
 * order they were set, reals with 17 significant digits (a double read
 * back is the double written: saved baselines compare exactly), a newline
 * at the end. Builders are jansson's; these helpers only shorten the
 * common "set a number" lines and do the one dump.
 */
#define RSP_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/**
 * rsp_json__emit() - append @o as text to @out, then release @o (it is
 * released also on failure). Return: 0, -ENOMEM or -E2BIG.
 */
int rsp_json__emit(json_t *o, struct rsp_buf *out);

/*
 * Builders ignore failures: json_object_set_new(o, key, json_integer(v))
 * with no memory for the integer leaves the key out and says nothing, and
 * the answer would lack it. So jansson allocates through librsp's malloc,
 * which notes a failure on the calling thread: rsp_json__watch() before
 * building, rsp_json__failed() after it tells whether anything was lost.
 */
/** rsp_json__watch() - start noting this thread's jansson allocation failures. */
void rsp_json__watch(void);
/** rsp_json__failed() - whether one failed on this thread since rsp_json__watch(). */
bool rsp_json__failed(void);

/**
 * rsp_json__name() - a JSON string of @name (a thread's, a file's or a
 * symbol's, chosen by anyone): as it is when it is UTF-8, else escaped by
 * rsp_fmt__name() (jansson refuses what is not UTF-8, and the key would be
 * left out without a word). NULL @name: JSON null.
 */
json_t *rsp_json__name(const char *name);

/*
 * rsp_json__str() - @s as a JSON string, quoted and escaped, appended to
 * @out (errors stay in out->error): for the writers that stream JSON
 * without building it (the Chrome trace, speedscope files).
 */
void rsp_json__str(struct rsp_buf *out, const char *s);

/* json_object_set_new() of a number; @o's key takes the new value. */
static inline void rsp_json__set_u64(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

static inline void rsp_json__set_real(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, json_real(v));
}

/* A time in ns as seconds (the unit of every *_s key). */
static inline void rsp_json__set_secs(json_t *o, const char *key, uint64_t ns)
{
	json_object_set_new(o, key, json_real((double)ns / 1e9));
}

static inline void rsp_json__set_str(json_t *o, const char *key, const char *s)
{
	json_object_set_new(o, key, json_string(s ? s : ""));
}

#endif /* RSP_INTERNAL_JSON_H */
