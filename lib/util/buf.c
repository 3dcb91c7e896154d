// SPDX-License-Identifier: LGPL-2.1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/buf.h>

void rsp_buf__exit(struct rsp_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->error = 0;
}

void rsp_buf__reset(struct rsp_buf *b)
{
	b->len = 0;
	b->error = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* The error indicator keeps the first failure. */
static int failed(struct rsp_buf *b, int err)
{
	if (!b->error)
		b->error = err;
	return err;
}

int rsp_buf__reserve(struct rsp_buf *b, size_t n)
{
	size_t need = b->len + n + 1, cap;
	char *p;

	if (need < n)
		return failed(b, -E2BIG);
	if (b->limit && need - 1 > b->limit)
		return failed(b, -E2BIG);
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return failed(b, -ENOMEM);
	b->data = p;
	b->cap = cap;
	return 0;
}

int rsp_buf__add(struct rsp_buf *b, const void *p, size_t n)
{
	int err = rsp_buf__reserve(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int rsp_buf__puts(struct rsp_buf *b, const char *s)
{
	return rsp_buf__add(b, s, strlen(s));
}

int rsp_buf__vprintf(struct rsp_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, err;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return failed(b, -EINVAL);
	err = rsp_buf__reserve(b, (size_t)n);
	if (err)
		return err;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int rsp_buf__printf(struct rsp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = rsp_buf__vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}
