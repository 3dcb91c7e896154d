/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPCTL_REPORT_H
#define RSPCTL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <rsp/buf.h>

/*
 * rspctl report: one self-contained HTML page about a process and a range
 * of the window, assembled here from the JSON (and DOT, and folded stacks)
 * answers of the ordinary queries, asked of rspd or run on a dump file.
 */

/*
 * How the report gets one query's answer: rspd's (live) or librsp's on a
 * file (rspctl analyze). Returns 0 and the answer in @answer, or non-zero
 * after printing one sentence on stderr.
 */
struct report_asker {
	int (*ask)(void *ctx, int argc, const char **argv, struct rsp_buf *answer);
	void *ctx;
	const char *source; /* "rspd at PATH" or "FILE" */
};

/* What the page is made of; NULL members are sections the report lacks. */
struct report_data {
	long pid;	    /* -1: none */
	const char *range;  /* the range as the user gave it ("the whole window", "--last 5s") */
	const char *source; /* report_asker.source */
	json_t *status, *snapshot, *hist;
	const char *flame_json;	 /* rsp_flametree__render_json() */
	const char *flame_note;	 /* the frame budget's sentence, or NULL */
	const char *chrono_json; /* rsp_snapexport__chrono(), '/' escaped; NULL: none */
	const char *chrono_note; /* the slice budget's sentence, or NULL */
	const char *graph_svg;	 /* Graphviz's rendering */
	const char *graph_note;	 /* the edge budget's sentence, or NULL */
	size_t max_chain_nodes;
};

/* The chronological view's data and what its budget left out. */
struct report_chrono {
	struct rsp_buf json, note;
};

/* rspctl report's usage text. */
extern const char report_usage[];

/**
 * report__main() - run `report ARGS...` (@argv[0] is "report") with @a.
 * Return: the exit status (0, 1 on a failure said on stderr, 2 on a bad
 * command line).
 */
int report__main(int argc, char **argv, const struct report_asker *a);

/** report_page__render() - the HTML page of @d into @out; 0 or -ENOMEM. */
int report_page__render(const struct report_data *d, struct rsp_buf *out);

/**
 * report_graph__svg() - lay out DOT text @dot with Graphviz (dot) and render
 * it as inline SVG (no XML prolog, no namespace URLs) into @out: knots'
 * edges and vertices highlighted, at most @max_edges edges (knot edges
 * first, then the heaviest; *@cut says how many were left out).
 * Return: 0, or -EINVAL with one sentence in @err.
 */
int report_graph__svg(const char *dot, size_t max_edges, struct rsp_buf *out, size_t *cut,
		      struct rsp_buf *err);

/* The embedded libraries and the page's own script and style (report_assets.c). */
extern const char report_d3_js[], report_flamegraph_js[], report_flamegraph_css[];
extern const char report_page_js[], report_page_css[];
/* NULL, or what the build could not embed (scripts/report-assets.sh). */
extern const char *const report_libs_missing;

#endif /* RSPCTL_REPORT_H */
