// SPDX-License-Identifier: GPL-2.0
/*
 * The wait-for graph of rspctl report: the DOT text `rspctl graph --format
 * dot` answers, laid out and rendered to SVG by Graphviz's own library
 * (libgvc, dot layout), here in rspctl rather than in rspd (a layout costs
 * CPU the daemon should not spend, and the parser of a DOT text is not
 * code rspd, running as root, needs) or in the browser (no layout library
 * as good as Graphviz's runs there without a network).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <graphviz/gvc.h>
#include "report.h"

/*
 * Graphviz's dot layout and its core renderers (SVG), linked in rather
 * than loaded through Graphviz's plugin configuration: gvContext() would
 * also load the pango text layout, which brings fontconfig, and reads the
 * configuration file into memory it never frees (2.42), so that every run
 * of rspctl report would leak under the sanitizers. Text widths are then
 * Graphviz's own estimates, the same on every machine.
 */
extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;

static lt_symlist_t builtins[] = {
	{"gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library},
	{"gvplugin_core_LTX_library", &gvplugin_core_LTX_library},
	{NULL, NULL},
};

#define KNOT_EDGE   "#c0392b"
#define KNOT_FILL   "#fbe3e0"
#define BGKNOT_EDGE "#7f8c8d"

/* rspctl graph marks a knot's edges penwidth=2, a background knot's color=gray40. */
static int edge_knot(Agedge_t *e)
{
	char *pw = agget(e, "penwidth"), *color = agget(e, "color");

	if (pw && !strcmp(pw, "2"))
		return 1;
	return color && !strcmp(color, "gray40") ? 2 : 0;
}

static double edge_weight(Agedge_t *e)
{
	char *label = agget(e, "label");

	return label ? strtod(label, NULL) : 0;
}

static void highlight(Agraph_t *g)
{
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			int k = edge_knot(e);

			if (!k)
				continue;
			agsafeset(e, "color", k == 1 ? KNOT_EDGE : BGKNOT_EDGE, "");
			agsafeset(e, "fontcolor", k == 1 ? KNOT_EDGE : BGKNOT_EDGE, "");
			if (k != 1)
				continue;
			agsafeset(e, "class", "knot", "");
			agsafeset(agtail(e), "style", "filled", "");
			agsafeset(agtail(e), "fillcolor", KNOT_FILL, "");
			agsafeset(agtail(e), "color", KNOT_EDGE, "");
			agsafeset(agtail(e), "class", "knot", "");
		}
	}
}

struct wedge {
	Agedge_t *e;
	int knot;
	double w;
};

static int by_importance(const void *a, const void *b)
{
	const struct wedge *x = a, *y = b;

	if ((x->knot == 1) != (y->knot == 1))
		return x->knot == 1 ? -1 : 1;
	return (x->w < y->w) - (x->w > y->w);
}

/* Keep the knots' edges and the heaviest others, at most @max; then drop lone vertices. */
static int trim(Agraph_t *g, size_t max, size_t *cut)
{
	size_t ne = (size_t)agnedges(g), k = 0;
	struct wedge *v;

	*cut = 0;
	if (ne <= max)
		return 0;
	v = calloc(ne, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *e = agfstout(g, n); e && k < ne; e = agnxtout(g, e))
			v[k++] = (struct wedge){e, edge_knot(e), edge_weight(e)};
	qsort(v, k, sizeof(*v), by_importance);
	for (size_t i = max; i < k; i++)
		agdeledge(g, v[i].e);
	*cut = k > max ? k - max : 0;
	free(v);
	for (Agnode_t *n = agfstnode(g), *next; n; n = next) {
		next = agnxtnode(g, n);
		if (!agdegree(g, n, 1, 1))
			agdelnode(g, n);
	}
	return 0;
}

/* Graphviz's SVG from "<svg" on, without the namespace attributes (HTML needs none). */
static int inline_svg(const char *svg, size_t len, struct rsp_buf *out)
{
	const char *p = strstr(svg, "<svg"), *end = svg + len;
	static const char *const drop[] = {" xmlns=\"http://www.w3.org/2000/svg\"",
					   " xmlns:xlink=\"http://www.w3.org/1999/xlink\""};

	if (!p)
		return -EINVAL;
	while (p < end) {
		size_t i, n = 0;

		for (i = 0; i < 2; i++)
			if (!strncmp(p, drop[i], strlen(drop[i])))
				n = strlen(drop[i]);
		if (n) {
			p += n;
			continue;
		}
		if (rsp_buf__add(out, p++, 1))
			return -ENOMEM;
	}
	return 0;
}

int report_graph__svg(const char *dot, size_t max_edges, struct rsp_buf *out, size_t *cut,
		      struct rsp_buf *err)
{
	GVC_t *gvc = gvContextPlugins(builtins, 0);
	Agraph_t *g = gvc ? agmemread(dot) : NULL;
	char *svg = NULL;
	unsigned int len = 0; /* Graphviz 2.42's type; later ones take size_t */
	int ret = -EINVAL;

	if (!g) {
		rsp_buf__puts(err,
			      gvc ? "Graphviz could not read rspctl graph's DOT answer (a bug: "
				    "please report it with the answer of 'rspctl graph --format "
				    "dot')"
				  : "Graphviz could not start (gvContextPlugins failed)");
		goto out;
	}
	if ((ret = trim(g, max_edges, cut))) {
		rsp_buf__puts(err, "out of memory trimming the wait-for graph");
		goto out;
	}
	highlight(g);
	if (gvLayout(gvc, g, "dot") || gvRenderData(gvc, g, "svg", &svg, &len)) {
		rsp_buf__puts(err,
			      "Graphviz could not lay out the wait-for graph with dot: is "
			      "Debian's graphviz package (its plugins) installed? scripts/deps.sh "
			      "installs it");
		ret = -EINVAL;
	} else if ((ret = inline_svg(svg, len, out))) {
		rsp_buf__puts(err, "Graphviz's SVG has no <svg> element");
	}
	if (svg)
		gvFreeRenderData(svg);
	gvFreeLayout(gvc, g);
out:
	if (g)
		agclose(g);
	if (gvc)
		gvFreeContext(gvc);
	return ret;
}
