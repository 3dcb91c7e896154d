// SPDX-License-Identifier: GPL-2.0
/*
 * rspctl report [PID] [--last D | --from T --to T] -o FILE.html
 *
 * The page is assembled here, in rspctl, from the answers of the ordinary
 * queries (status, snapshot with its folded stacks, graph as DOT, hist),
 * rather than by a new query in rspd: the same code then makes the page
 * live and offline (rspctl analyze DUMP report), rspd's answers stay the
 * bounded, tested ones they are, and neither Graphviz nor the page's 300
 * KiB of JavaScript enter the daemon.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <rsp/answer.h>
#include <rsp/cgroup.h>
#include <rsp/file.h>
#include <rsp/flametree.h>
#include <rsp/parse.h>
#include "report.h"

#define DEFAULT_MAX_FRAMES 20000
#define DEFAULT_MAX_EDGES  200
#define DEFAULT_MAX_SLICES 10000
#define MAX_CHAIN_NODES	   3000

struct report_opts {
	long pid;
	const char *last, *from, *to, *output;
	const char *cgroup, *container; /* --cgroup PATH, --container ID */
	uint64_t max_frames, max_edges, max_slices;
	char max_slices_arg[24];
	char range[PATH_MAX + 320];
};

const char report_usage[] =
	"rspctl report — one HTML page about a process: where its time went\n"
	"\n"
	"usage: rspctl report [PID] [--last DURATION | --from T --to T] -o FILE.html\n"
	"                     [--max-frames N] [--max-edges N] [--max-slices N]\n"
	"                     [--cgroup PATH | --container ID]\n"
	"\n"
	"Writes one self-contained HTML file (no network needed to open it, e.g.\n"
	"from a mail): the snapshot's table of explanation and its chain, an\n"
	"interactive flame graph of PID's time (on-CPU and off-CPU, coloured by\n"
	"kind, with search and zoom), its chronological view (PID's pseudostacks\n"
	"on a time axis, zoomable), the wait-for graph of the range (laid out\n"
	"by Graphviz, knots in red), PID's latency profiles as bar charts with\n"
	"their peaks, and what the window held (losses, gaps, inferred shares,\n"
	"the capture backend). Without PID: the graph, the profiles and the window.\n"
	"\n"
	"  PID                the process (--pid PID works too)\n"
	"  --last DURATION    the last DURATION of the window (default: all of it)\n"
	"  --from T, --to T   only [T, T] of the window, in seconds as 'rspctl\n"
	"                     status' shows it\n"
	"  --cgroup PATH      only the processes in this cgroup v2 subtree: PID\n"
	"                     must be inside; the graph starts from their threads\n"
	"                     (without PID) and the profiles are theirs\n"
	"  --container ID     the same for a container (12+ hex digits of its id)\n"
	"  -o, --output FILE  the page to write (a new file, or a regular file\n"
	"                     replaced whole once the page is complete)\n"
	"  --max-frames N     the flame graph holds at most N frames, heaviest\n"
	"                     stacks first; the rest is one frame, said so (20000)\n"
	"  --max-edges N      the wait-for graph shows at most N edges, knots'\n"
	"                     first, then the heaviest (200)\n"
	"  --max-slices N     the chronological view holds at most N slices, the\n"
	"                     shallowest and longest, said so (10000)\n"
	"\n"
	"The page is assembled by rspctl from rspd's answers to status, snapshot,\n"
	"graph and hist; 'rspctl analyze DUMP report ...' makes the same page\n"
	"from a dump.\n"
	"\n"
	"EXAMPLES\n"
	"  rspctl report 1234 --last 10s -o slow.html\n"
	"  rspctl analyze slow.perf.data report 1234 -o slow.html\n";

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "rspctl: report: ");
	fprintf(stderr, msg, arg);
	fputc('\n', stderr);
	return 2;
}

static int parse_count(const char *opt, const char *v, uint64_t min, uint64_t *out)
{
	if (rsp_parse__u64(v, min, 10000000, out)) {
		fprintf(stderr,
			"rspctl: report: %s wants a number from %llu to 10000000, not '%s'\n", opt,
			(unsigned long long)min, v);
		return 2;
	}
	return 0;
}

/* One option at argv[*i] (its value consumed); 0 or 2 after saying why. */
static int parse_opt(struct report_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *eq = strchr(a, '=');
	char name[32];
	const char *v;
	uint64_t n;

	snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
	if (strcmp(name, "-o") && strcmp(name, "--output") && strcmp(name, "--last") &&
	    strcmp(name, "--from") && strcmp(name, "--to") && strcmp(name, "--pid") &&
	    strcmp(name, "--max-frames") && strcmp(name, "--max-edges") &&
	    strcmp(name, "--max-slices") && strcmp(name, "--cgroup") && strcmp(name, "--container"))
		return bad("unknown option '%s'; see 'rspctl help report'", a);
	v = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
	if (!v || !v[0])
		return bad("option %s needs a value", name);
	if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
		o->output = v;
	} else if (!strcmp(name, "--last")) {
		if (rsp_parse__duration(v, &n) || !n)
			return bad("--last wants a duration such as 10s, 500ms or 2m, not '%s'", v);
		o->last = v;
	} else if (!strcmp(name, "--from") || !strcmp(name, "--to")) {
		if (rsp_parse__seconds(v, &n) || !n)
			return bad(
				"--from and --to want a time in seconds as 'rspctl status' shows "
				"the window, such as 1687.5621, not '%s'",
				v);
		*(!strcmp(name, "--from") ? &o->from : &o->to) = v;
	} else if (!strcmp(name, "--cgroup")) {
		/* rspd checks the same rule again: this is for the sentence before asking */
		if (v[0] != '/' || strlen(v) >= PATH_MAX)
			return bad("--cgroup wants a cgroup v2 path as /proc/PID/cgroup shows it, "
				   "starting with '/', not '%s'",
				   v);
		o->cgroup = v;
	} else if (!strcmp(name, "--container")) {
		if (!rsp_cgroup__check_container_arg(v))
			return bad("--container wants a container id or its first 12 or more hex "
				   "digits (as 'docker ps' shows it), not '%s'",
				   v);
		o->container = v;
	} else if (!strcmp(name, "--pid")) {
		if (rsp_parse__u64(v, 1, 4194304, &n) || (o->pid >= 0 && o->pid != (long)n))
			return bad("--pid wants one process id, not '%s'", v);
		o->pid = (long)n;
	} else {
		if (!strcmp(name, "--max-slices"))
			return parse_count(name, v, 10, &o->max_slices);
		return parse_count(name, v, 10,
				   !strcmp(name, "--max-frames") ? &o->max_frames : &o->max_edges);
	}
	return 0;
}

static int parse_opts(struct report_opts *o, int argc, char **argv)
{
	uint64_t n;

	*o = (struct report_opts){.pid = -1,
				  .max_frames = DEFAULT_MAX_FRAMES,
				  .max_edges = DEFAULT_MAX_EDGES,
				  .max_slices = DEFAULT_MAX_SLICES};
	for (int i = 1; i < argc; i++) {
		int ret;

		if (argv[i][0] == '-') {
			if ((ret = parse_opt(o, argc, argv, &i)))
				return ret;
		} else if (o->pid >= 0 || rsp_parse__u64(argv[i], 1, 4194304, &n)) {
			return bad(o->pid >= 0 ? "one process at a time, not also '%s'"
					       : "'%s' is not a process id; usage: rspctl report "
						 "[PID] -o FILE.html",
				   argv[i]);
		} else {
			o->pid = (long)n;
		}
	}
	snprintf(o->max_slices_arg, sizeof(o->max_slices_arg), "%llu",
		 (unsigned long long)o->max_slices);
	if (!o->output)
		return bad("%swhich file? give -o FILE.html", "");
	if (o->last && (o->from || o->to))
		return bad("%sgive --last or --from/--to, not both", "");
	if (o->last)
		snprintf(o->range, sizeof(o->range), "the last %s of the window", o->last);
	else if (o->from || o->to)
		snprintf(o->range, sizeof(o->range), "from %s to %s",
			 o->from ? o->from : "the start", o->to ? o->to : "the end");
	else
		snprintf(o->range, sizeof(o->range), "the whole window");
	if (o->cgroup || o->container) {
		size_t len = strlen(o->range);

		snprintf(o->range + len, sizeof(o->range) - len, "; only the processes of %s%s%s%s",
			 o->cgroup ? "cgroup " : "", o->cgroup ? o->cgroup : "",
			 o->cgroup && o->container ? " and " : "",
			 o->container ? "container " : "");
		len = strlen(o->range);
		if (o->container)
			snprintf(o->range + len, sizeof(o->range) - len, "%s", o->container);
	}
	return 0;
}

/* Fail before asking when FILE cannot be written (the rule of rsp/file.h). */
static int check_output(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		fprintf(stderr,
			"rspctl: report: %s is %s, not a regular file: rspctl writes only a new "
			"file or replaces a regular one — choose another path\n",
			path, rsp_file__type(st.st_mode));
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if (access(path, F_OK) ? access(dirname(dir), W_OK | X_OK) : access(path, W_OK)) {
		fprintf(stderr, "rspctl: report: cannot write %s: %s — choose another path\n", path,
			strerror(errno));
		return 2;
	}
	return 0;
}

/* argv for one query: @head, then the range options. */
static int query_argv(const struct report_opts *o, const char **head, const char **v)
{
	int n = 0;

	while (*head)
		v[n++] = *head++;
	if (o->last)
		v[n++] = "--last", v[n++] = o->last;
	if (o->from)
		v[n++] = "--from", v[n++] = o->from;
	if (o->to)
		v[n++] = "--to", v[n++] = o->to;
	/* graph --pid starts from the process: its --cgroup would choose a start too */
	if (o->cgroup && !(o->pid >= 0 && !strcmp(v[0], "graph")))
		v[n++] = "--cgroup", v[n++] = o->cgroup;
	if (o->container && !(o->pid >= 0 && !strcmp(v[0], "graph")))
		v[n++] = "--container", v[n++] = o->container;
	v[n] = NULL;
	return n;
}

static json_t *ask_json(const struct report_asker *a, const struct report_opts *o,
			const char **head, bool ranged)
{
	const char *v[24];
	struct rsp_buf ans = RSP_BUF_INIT;
	json_error_t je;
	json_t *j = NULL;
	int n = ranged ? query_argv(o, head, v) : 0;

	if (!ranged)
		while ((v[n] = head[n]))
			n++;
	if (!a->ask(a->ctx, n, v, &ans)) {
		j = json_loadb(ans.data, ans.len, 0, &je);
		if (!j)
			fprintf(stderr, "rspctl: report: %s's JSON answer does not parse: %s\n",
				head[0], je.text);
	}
	rsp_buf__exit(&ans);
	return j;
}

static char *pid_str(const struct report_opts *o, char *buf, size_t n)
{
	snprintf(buf, n, "%ld", o->pid);
	return buf;
}

/*
 * The chronological view's slices (rsp_snapexport__chrono()), written
 * again with '/' escaped: the JSON sits in a <script> element.
 */
static int chrono_part(const struct report_opts *o, const struct rsp_part *p,
		       struct report_chrono *c)
{
	json_t *j = json_loadb(p->data, p->len, 0, NULL);
	char *text =
		j ? json_dumps(j, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_PRESERVE_ORDER) : NULL;
	int ret = text ? rsp_buf__puts(&c->json, text) : -EINVAL;

	if (!ret && json_is_true(json_object_get(j, "truncated")))
		rsp_buf__printf(&c->note,
				"The chronological view holds %zu slices: the shallowest and "
				"longest were kept, shorter and deeper ones left out "
				"(--max-slices %llu).",
				json_array_size(json_object_get(j, "slices")),
				(unsigned long long)o->max_slices);
	free(text);
	json_decref(j);
	return ret;
}

/* The snapshot: its JSON, its folded stacks made a flame tree, its chrono slices. */
static int ask_snapshot(const struct report_asker *a, const struct report_opts *o, json_t **snap,
			struct rsp_buf *flame, struct rsp_buf *note, struct report_chrono *chrono)
{
	char pid[24];
	const char *head[] = {"snapshot",	 pid_str(o, pid, sizeof(pid)),
			      "--json",		 "--folded",
			      "report.folded",	 "--chrono",
			      "report.chrono",	 "--max-slices",
			      o->max_slices_arg, NULL};
	const char *v[24];
	struct rsp_buf ans = RSP_BUF_INIT, err = RSP_BUF_INIT;
	struct rsp_flametree *t = NULL;
	struct rsp_flametree_stats st;
	struct rsp_part p;
	size_t pos = 0;
	int n = query_argv(o, head, v), ret = 1;
	char root[64];

	if (a->ask(a->ctx, n, v, &ans))
		goto out;
	snprintf(root, sizeof(root), "pid %ld", o->pid);
	t = rsp_flametree__new(root, o->max_frames);
	if (!t || !rsp_answer__has_parts(ans.data, ans.len)) {
		fprintf(stderr, "rspctl: report: %s\n",
			t ? "snapshot's answer lacks its folded stacks" : "out of memory");
		goto out;
	}
	while (rsp_answer__next(ans.data, ans.len, &pos, &p) > 0) {
		if (p.name_len == 6 && !memcmp(p.name, RSP_ANSWER_STDOUT, 6))
			*snap = json_loadb(p.data, p.len, 0, NULL);
		else if (p.name_len == 6 && !memcmp(p.name, "folded", 6) &&
			 rsp_flametree__add_folded(t, p.data, p.len, &err))
			goto out;
		else if (p.name_len == 6 && !memcmp(p.name, "chrono", 6) &&
			 chrono_part(o, &p, chrono))
			rsp_buf__puts(&err, "snapshot's chronological view does not parse");
	}
	if (err.len)
		goto out;
	if (!*snap || rsp_flametree__render_json(t, flame)) {
		fprintf(stderr, "rspctl: report: %s\n",
			*snap ? "out of memory" : "snapshot's JSON answer does not parse");
		goto out;
	}
	rsp_flametree__stats(t, &st);
	if (st.stacks_left_out)
		rsp_buf__printf(note,
				"The flame graph holds the %zu heaviest of %zu stacks: the %zu "
				"lighter ones (%.1f%% of the time) are one frame, '[%zu lighter "
				"stacks left out]', to keep the page under %llu frames "
				"(--max-frames).",
				st.stacks - st.stacks_left_out, st.stacks, st.stacks_left_out,
				st.total ? 100.0 * (double)st.left_out / (double)st.total : 0.0,
				st.stacks_left_out, (unsigned long long)o->max_frames);
	ret = 0;
out:
	if (err.len)
		fprintf(stderr, "rspctl: report: %s\n", err.data);
	rsp_flametree__delete(t);
	rsp_buf__exit(&ans);
	rsp_buf__exit(&err);
	return ret;
}

static int ask_graph(const struct report_asker *a, const struct report_opts *o, struct rsp_buf *svg,
		     struct rsp_buf *note)
{
	char pid[24];
	const char *head[] = {"graph", "--format", "dot", NULL, NULL, NULL};
	const char *v[24];
	struct rsp_buf ans = RSP_BUF_INIT, err = RSP_BUF_INIT;
	size_t cut = 0;
	int ret = 1;

	if (o->pid >= 0)
		head[3] = "--pid", head[4] = pid_str(o, pid, sizeof(pid));
	if (a->ask(a->ctx, query_argv(o, head, v), v, &ans))
		goto out;
	if (report_graph__svg(ans.data, o->max_edges, svg, &cut, &err)) {
		fprintf(stderr, "rspctl: report: %s\n", err.data ? err.data : "Graphviz failed");
		goto out;
	}
	if (cut)
		rsp_buf__printf(note,
				"The wait-for graph shows %llu edges, the knots' first and then "
				"the heaviest: %zu lighter edges are left out (--max-edges).",
				(unsigned long long)o->max_edges, cut);
	ret = 0;
out:
	rsp_buf__exit(&ans);
	rsp_buf__exit(&err);
	return ret;
}

static void say_note(const struct rsp_buf *note)
{
	if (note->len)
		fprintf(stderr, "rspctl: report: %s\n", note->data);
}

/* Ask everything, then render; nothing is written unless every part came. */
static int gather(const struct report_asker *a, const struct report_opts *o, struct rsp_buf *page)
{
	char pid[24];
	const char *status_argv[] = {"status", "--json", o->pid >= 0 ? "--pid" : NULL,
				     pid_str(o, pid, sizeof(pid)), NULL};
	const char *hist_argv[] = {"hist", "--json", o->pid >= 0 ? "--pid" : NULL, pid, NULL};
	struct rsp_buf flame = RSP_BUF_INIT, svg = RSP_BUF_INIT, fnote = RSP_BUF_INIT,
		       gnote = RSP_BUF_INIT;
	struct report_chrono chrono = {RSP_BUF_INIT, RSP_BUF_INIT};
	struct report_data d = {.pid = o->pid,
				.range = o->range,
				.source = a->source,
				.max_chain_nodes = MAX_CHAIN_NODES};
	int ret = 1;

	if (!(d.status = ask_json(a, o, status_argv, false)))
		goto out;
	if (o->pid >= 0 && ask_snapshot(a, o, &d.snapshot, &flame, &fnote, &chrono))
		goto out;
	if (ask_graph(a, o, &svg, &gnote))
		goto out;
	if (!(d.hist = ask_json(a, o, hist_argv, true)))
		goto out;
	d.flame_json = flame.data;
	d.flame_note = fnote.len ? fnote.data : NULL;
	d.chrono_json = chrono.json.data;
	d.chrono_note = chrono.note.len ? chrono.note.data : NULL;
	d.graph_svg = svg.data;
	d.graph_note = gnote.len ? gnote.data : NULL;
	if (report_page__render(&d, page)) {
		fprintf(stderr, "rspctl: report: out of memory rendering the page\n");
		goto out;
	}
	say_note(&fnote);
	say_note(&chrono.note);
	say_note(&gnote);
	if (report_libs_missing)
		fprintf(stderr,
			"rspctl: report: the page has no flame graph: this rspctl was built "
			"without %s\n",
			report_libs_missing);
	ret = 0;
out:
	json_decref(d.status);
	json_decref(d.snapshot);
	json_decref(d.hist);
	rsp_buf__exit(&flame);
	rsp_buf__exit(&svg);
	rsp_buf__exit(&fnote);
	rsp_buf__exit(&gnote);
	rsp_buf__exit(&chrono.json);
	rsp_buf__exit(&chrono.note);
	return ret;
}

int report__main(int argc, char **argv, const struct report_asker *a)
{
	struct report_opts o;
	struct rsp_buf page = RSP_BUF_INIT, err = RSP_BUF_INIT;
	int ret = parse_opts(&o, argc, argv);

	if (!ret)
		ret = check_output(o.output);
	if (!ret)
		ret = gather(a, &o, &page);
	if (!ret && (ret = rsp_file__write(o.output, page.data, page.len, 0, &err)))
		fprintf(stderr, "rspctl: %s\n", err.data ? err.data : strerror(-ret)), ret = 1;
	else if (!ret)
		fprintf(stderr, "rspctl: wrote %s (%zu bytes)\n", o.output, page.len);
	rsp_buf__exit(&page);
	rsp_buf__exit(&err);
	return ret;
}
