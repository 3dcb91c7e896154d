/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_BUF_H
#define RSP_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <rsp/api.h>

/*
 * A growable byte buffer: where renderers write text and JSON, where the
 * control protocol frames messages. The buffer owns its memory; the bytes
 * are always NUL-terminated (not counted in len) so text can be printed.
 * A buffer may have a size limit; appending past it fails with -E2BIG and
 * leaves the buffer as it was.
 *
 * Like a FILE's error indicator, the buffer remembers its first failed
 * append (until reset): a renderer may write line after line and whoever
 * hands the text on checks @error once, so that an answer missing a line
 * for want of memory is never passed off as whole.
 */
struct rsp_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t limit; /* 0: no limit */
	int error;    /* the first failed append's -errno since init or reset; 0: none */
};

#define RSP_BUF_INIT                                                                               \
	{                                                                                          \
		0                                                                                  \
	}

/** rsp_buf__exit() - free the buffer's memory; safe on a zeroed buffer. */
RSP_API void rsp_buf__exit(struct rsp_buf *b);
/** rsp_buf__reset() - forget the contents and the error, keep the memory. */
RSP_API void rsp_buf__reset(struct rsp_buf *b);
/** rsp_buf__reserve() - make room for @n more bytes. 0 or -ENOMEM/-E2BIG. */
RSP_API int rsp_buf__reserve(struct rsp_buf *b, size_t n);
/** rsp_buf__add() - append @n bytes. 0 or -ENOMEM/-E2BIG. */
RSP_API int rsp_buf__add(struct rsp_buf *b, const void *p, size_t n);
/** rsp_buf__puts() - append a C string. */
RSP_API int rsp_buf__puts(struct rsp_buf *b, const char *s);
/** rsp_buf__printf() - append formatted text. 0 or -ENOMEM/-E2BIG. */
RSP_API int rsp_buf__printf(struct rsp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
RSP_API int rsp_buf__vprintf(struct rsp_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif /* RSP_BUF_H */
