// SPDX-License-Identifier: LGPL-2.1
/*
 * Content negotiation of a metrics scrape (rsp/prom.h, rsp_prom__negotiate):
 * the Accept header, untrusted bytes from the network, read in place in one
 * pass with no allocation (fuzz/fuzz_prom.c).
 *
 * Why hand-written: libmicrohttpd parses no Accept header, and the rule is
 * client_golang's expfmt.Negotiate (over goautoneg's ParseAccept), which is
 * Go; the header's grammar is a few lines of comma and semicolon lists.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <rsp/prom.h>

struct span {
	const char *p;
	size_t n;
};

static struct span trim(const char *p, size_t n)
{
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	return (struct span){p, n};
}

static bool eq(struct span s, const char *lit)
{
	return s.n == strlen(lit) && !strncasecmp(s.p, lit, s.n);
}

/* A protobuf message name is case-sensitive. */
static bool eq_exact(struct span s, const char *lit)
{
	return s.n == strlen(lit) && !memcmp(s.p, lit, s.n);
}

/* A parameter value, without the quotes of a quoted-string. */
static struct span unquote(struct span v)
{
	if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"')
		return (struct span){v.p + 1, v.n - 2};
	return v;
}

/* q as RFC 9110 writes it: "0", "1", or "0." / "1." with up to 3 digits; -1 if not. */
static int qvalue(struct span v)
{
	int q = 0, scale = 1000;

	if (!v.n || (v.p[0] != '0' && v.p[0] != '1'))
		return -1;
	q = (v.p[0] - '0') * 1000;
	if (v.n == 1)
		return q;
	if (v.p[1] != '.' || v.n > 5)
		return -1;
	for (size_t i = 2; i < v.n; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
		scale /= 10;
		q += (v.p[i] - '0') * scale;
	}
	return q <= 1000 ? q : -1;
}

struct range {
	struct span type, version, proto, encoding;
	int q; /* thousandths; -1: not a valid q */
};

/* One media range: "type/subtype; k=v; ...". False if it is not one. */
static bool parse_range(const char *p, size_t n, struct range *r)
{
	const char *semi = memchr(p, ';', n);
	size_t tn = semi ? (size_t)(semi - p) : n;

	*r = (struct range){.type = trim(p, tn), .q = 1000};
	if (!memchr(r->type.p, '/', r->type.n))
		return false;
	while (semi) {
		const char *s = semi + 1, *end = p + n, *eqs;
		size_t pn;

		semi = memchr(s, ';', (size_t)(end - s));
		pn = semi ? (size_t)(semi - s) : (size_t)(end - s);
		eqs = memchr(s, '=', pn);
		if (!eqs)
			continue; /* a parameter without a value: ignored, as goautoneg does */
		struct span k = trim(s, (size_t)(eqs - s));
		struct span v = unquote(trim(eqs + 1, pn - (size_t)(eqs - s) - 1));

		if (eq(k, "q"))
			r->q = qvalue(v);
		else if (eq(k, "version"))
			r->version = v;
		else if (eq(k, "proto"))
			r->proto = v;
		else if (eq(k, "encoding"))
			r->encoding = v;
	}
	return true;
}

/* The format @r names, or -1 if rsp does not speak it (expfmt.Negotiate's rules). */
static int format_of(const struct range *r)
{
	if (eq(r->type, "application/vnd.google.protobuf"))
		/* text and compact-text encodings exist too; rsp writes only delimited */
		return eq_exact(r->proto, "io.prometheus.client.MetricFamily") &&
				       eq(r->encoding, "delimited")
			       ? RSP_PROM_PROTOBUF
			       : -1;
	if (eq(r->type, "text/plain"))
		return !r->version.n || eq(r->version, "0.0.4") ? RSP_PROM_TEXT : -1;
	if (eq(r->type, "application/openmetrics-text"))
		return !r->version.n || eq(r->version, "1.0.0") || eq(r->version, "0.0.1")
			       ? RSP_PROM_OPENMETRICS
			       : -1;
	return -1;
}

enum rsp_prom_format rsp_prom__negotiate(const char *accept)
{
	int best = -1, best_q = 0;
	const char *p = accept;

	if (!p)
		return RSP_PROM_TEXT;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		struct range r;
		int f;

		if (parse_range(p, n, &r) && r.q > best_q && (f = format_of(&r)) >= 0) {
			best = f;
			best_q = r.q;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return best < 0 ? RSP_PROM_TEXT : (enum rsp_prom_format)best;
}
