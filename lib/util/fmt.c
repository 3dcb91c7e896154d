// SPDX-License-Identifier: LGPL-2.1
/*
 * Values formatted for people: sizes, and names that others chose (thread
 * and process names, paths) made safe to print.
 */
#include <stdio.h>
#include <string.h>
#include "internal/fmt.h"

char *rsp_fmt__bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, unit[u]);
	return buf;
}

/*
 * Length of the UTF-8 sequence at @s if it is a well-formed printable
 * character (no C1 control, no overlong form, no surrogate, at most
 * U+10FFFF), else 0.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned cp;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < 0xa0 || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* The escape of one byte that is not printed as itself, as C writes it. */
static void escape_byte(unsigned char c, char out[5])
{
	static const char named[] = {['\a'] = 'a', ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n',
				     ['\v'] = 'v', ['\f'] = 'f', ['\r'] = 'r', ['\\'] = '\\'};

	if (c < sizeof(named) && named[c])
		snprintf(out, 5, "\\%c", named[c]);
	else
		snprintf(out, 5, "\\x%02x", c);
}

/*
 * Escaped as systemd's cescape() and ps do: a name printed raw could carry
 * terminal escapes (retitle or reprogram the terminal of the root user who
 * reads it) or newlines (forge lines of an answer or of a folded stack).
 */
char *rsp_fmt__name(char *buf, size_t size, const char *name)
{
	const unsigned char *s = (const unsigned char *)(name ? name : "");
	size_t at = 0;

	if (!size)
		return buf;
	while (*s) {
		char esc[5];
		size_t n = *s >= 0x20 && *s < 0x7f && *s != '\\' ? 1 : utf8_len(s);
		const char *piece = (const char *)s;

		if (!n) {
			escape_byte(*s, esc);
			piece = esc;
			n = strlen(esc);
		}
		if (at + n >= size)
			break; /* cut at a whole character or escape */
		memcpy(buf + at, piece, n);
		at += n;
		s += piece == esc ? 1 : n;
	}
	buf[at] = '\0';
	return buf;
}
