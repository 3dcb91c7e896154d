// SPDX-License-Identifier: LGPL-2.1
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/parse.h>

/*
 * Decimal only: strtoull's base 0 would read "010" as 8 and refuse "08", and
 * strtod would take "0x10", "1e3" and leading blanks. Returns the length of
 * the decimal number at @s ("12", "1.5"; a fraction only if @frac), 0 if none.
 */
static size_t decimal_len(const char *s, bool frac)
{
	size_t n = strspn(s, "0123456789");

	if (n && frac && s[n] == '.' && isdigit((unsigned char)s[n + 1]))
		n += 1 + strspn(s + n + 1, "0123456789");
	return n;
}

int rsp_parse__u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || s[decimal_len(s, false)])
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int rsp_parse__decimal(const char *s, double min, double max, double *out)
{
	double v;

	if (!s || !*s || s[decimal_len(s, true)])
		return -EINVAL;
	errno = 0;
	v = strtod(s, NULL);
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static const struct {
	const char *suffix;
	double ns;
} units[] = {
	{"ns", 1},   {"us", 1e3},   {"ms", 1e6},   {"s", 1e9},
	{"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {"", 1e9},
};

int rsp_parse__duration(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	if (!s || !decimal_len(s, true))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end != s + decimal_len(s, true) || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].ns;
		if (v >= 1.8e19)
			return -ERANGE;
		*ns = (uint64_t)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}

/* Digits by hand, not strtod: a double has too few digits for ns since boot. */
int rsp_parse__seconds(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000ull;
	const char *p = s;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > (UINT64_MAX / 1000000000ull - 9) / 10)
			return -ERANGE;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (scale == 1)
				return -EINVAL; /* more than 9 decimals */
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p)
		return -EINVAL;
	*ns = sec * 1000000000ull + frac;
	return 0;
}

int rsp_parse__size(const char *s, uint64_t *bytes)
{
	char buf[32];
	size_t n;
	uint64_t v, mul = 1;
	int err;

	if (!s || (n = strlen(s)) == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n + 1);
	switch (buf[n - 1]) {
	case 'K':
	case 'k':
		mul = 1ull << 10;
		break;
	case 'M':
	case 'm':
		mul = 1ull << 20;
		break;
	case 'G':
	case 'g':
		mul = 1ull << 30;
		break;
	default:
		break;
	}
	if (mul > 1)
		buf[n - 1] = '\0';
	err = rsp_parse__u64(buf, 0, UINT64_MAX / mul, &v);
	if (!err)
		*bytes = v * mul;
	return err;
}
