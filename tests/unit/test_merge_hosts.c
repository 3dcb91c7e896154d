// SPDX-License-Identifier: GPL-2.0
/*
 * rspctl merge over synthetic hosts' dumps (tests/support/xhosts.h) with
 * known answers by construction: host K's clock is K s ahead of host 0's;
 * in a ring every host's clients ask the next host; in a chain host 0's
 * clients ask host 1, whose servers (proxies) ask host 2 first, and so on.
 * net: every connection matched, every offset within its bound; snapshot:
 * the recursion follows the proxies to the last host (and stops at
 * --depth); graph: one edge across hosts each way per pair of threads, the
 * chain of the heaviest way on from the client's edge to the last host.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <rsp/buf.h>
#include <rsp/merge.h>
#include "support/failalloc.h"
#include "support/xhosts.h"

#define SLOTS 120
/* exchanges handed to a worker each: over a hop's 50000 timed pieces */
#define MANY_SLOTS 12000

struct dumps {
	char dir[64];
	unsigned hosts;
	char paths[8][96];
};

static void dumps_write_x(struct dumps *d, const struct xhosts *x)
{
	unsigned hosts = x->hosts;

	assert_true(hosts <= 8);
	snprintf(d->dir, sizeof(d->dir), "/tmp/rsp-test-merge.XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	assert_int_equal(xhosts__write(x, d->dir, NULL, NULL), 0);
	d->hosts = hosts;
	for (unsigned k = 0; k < hosts; k++)
		snprintf(d->paths[k], sizeof(d->paths[k]), "%s/host-%u.perf.data", d->dir, k);
}

static void dumps_write(struct dumps *d, unsigned hosts, unsigned conns, bool chain, bool loop)
{
	struct xhosts x = {
		.hosts = hosts, .conns = conns, .slots = SLOTS, .chain = chain, .loop = loop};

	dumps_write_x(d, &x);
}

static void dumps_remove(struct dumps *d)
{
	for (unsigned k = 0; k < d->hosts; k++)
		unlink(d->paths[k]);
	rmdir(d->dir);
}

/* rspctl merge DUMPS... ARGS... (NULL-terminated): the answer's JSON, or NULL and @err. */
static json_t *merge(struct dumps *d, struct rsp_buf *err, ...)
{
	char *argv[32];
	int argc = 0;
	struct rsp_buf out = RSP_BUF_INIT;
	json_t *j = NULL;
	va_list ap;
	const char *a;

	for (unsigned k = 0; k < d->hosts; k++)
		argv[argc++] = d->paths[k];
	va_start(ap, err);
	while ((a = va_arg(ap, const char *)) && argc < 31)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	if (!rsp_merge__run(argc, argv, &out, err)) {
		j = json_loads(out.data ? out.data : "", 0, NULL);
		assert_non_null(j);
	}
	rsp_buf__exit(&out);
	return j;
}

static json_int_t iget(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	assert_non_null(v);
	return json_integer_value(v);
}

/* Every pair of hosts joined by a connection: the known offset, inside the bound found. */
static void check_offsets(const json_t *net, size_t expect)
{
	const json_t *offs = json_object_get(net, "clock_offsets"), *o;
	size_t i;

	assert_int_equal(json_array_size(offs), expect);
	json_array_foreach (offs, i, o) {
		json_int_t want = (iget(o, "host_b") - iget(o, "host_a")) * 1000000000ll;
		json_int_t got = iget(o, "offset_ns"), unc = iget(o, "uncertainty_ns");

		assert_true(llabs(got - want) <= unc);
		assert_true(unc < 100000); /* 100 us: the exchanges' own scale */
		assert_true(iget(o, "pairs") >= SLOTS / 2);
	}
}

static void test_ring(void **state)
{
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	json_t *j;

	(void)state;
	dumps_write(&d, 3, 2, false, false);
	j = merge(&d, &err, "net", "--json", NULL);
	if (!j)
		fail_msg("merge net: %s", err.data);
	/* 3 pairs of neighbours (a ring of 3: every pair), 2 connections each */
	assert_int_equal(json_array_size(json_object_get(j, "connections")), 6);
	check_offsets(j, 3);
	assert_int_equal(iget(json_object_get(j, "unmatched"), "no_peer"), 0);
	json_decref(j);

	/* graph: client c of host K -> server c of host K+1, and back (it waits for requests) */
	j = merge(&d, &err, "graph", "--json", NULL);
	if (!j)
		fail_msg("merge graph: %s", err.data);
	{
		const json_t *es = json_object_get(j, "edges"), *e;
		size_t i, across = 0;

		json_array_foreach (es, i, e) {
			if (!json_is_true(json_object_get(e, "across_hosts")))
				continue;
			across++;
			assert_true(iget(e, "count") >= SLOTS / 2 - 2);
		}
		assert_int_equal(across, 12);
	}
	json_decref(j);
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/* The answering thread at @depth under @hop: one, on host @host. */
static const json_t *only_answer(const json_t *hop, json_int_t host, json_int_t depth)
{
	const json_t *a = json_object_get(hop, "answered_by"), *h;

	assert_int_equal(json_array_size(a), 1);
	h = json_array_get(a, 0);
	assert_int_equal(iget(h, "host"), host);
	assert_int_equal(iget(h, "depth"), depth);
	assert_int_equal(iget(h, "pid"), XHOSTS_TID_SERVER);
	return h;
}

static void test_chain(void **state)
{
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *h1, *h2, *h3;
	json_t *j;
	char target[32];

	(void)state;
	dumps_write(&d, 4, 1, true, false);
	j = merge(&d, &err, "net", "--json", NULL);
	if (!j)
		fail_msg("merge net: %s", err.data);
	assert_int_equal(json_array_size(json_object_get(j, "connections")), 3);
	check_offsets(j, 3); /* neighbours only: 0-1, 1-2, 2-3 */
	json_decref(j);

	/* The client's waits, followed through the proxies on hosts 1 and 2 to host 3 */
	snprintf(target, sizeof(target), "%u@0", XHOSTS_TID_CLIENT);
	j = merge(&d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot: %s", err.data);
	/* every exchange but the first (no server operation before it) */
	assert_true(iget(j, "matched_operations") >= SLOTS - 2);
	assert_int_equal(iget(j, "deepest"), 3);
	assert_int_equal(iget(j, "cycles_not_followed"), 0);
	assert_int_equal(iget(j, "beyond_depth"), 0);
	h1 = only_answer(j, 1, 1);
	h2 = only_answer(h1, 2, 2);
	h3 = only_answer(h2, 3, 3);
	assert_int_equal(json_array_size(json_object_get(h3, "answered_by")), 0);
	/* each level answers about as many requests, each in less time than the one above */
	assert_true(iget(h3, "answers") >= SLOTS - 4);
	assert_true(json_real_value(json_object_get(h3, "service_s")) <
		    json_real_value(json_object_get(h2, "service_s")));
	assert_true(json_real_value(json_object_get(h2, "service_s")) <
		    json_real_value(json_object_get(h1, "service_s")));
	json_decref(j);

	/* --depth 2: the proxy on host 2 is shown, its own waits counted, not followed */
	j = merge(&d, &err, "snapshot", target, "--depth", "2", "--json", NULL);
	if (!j)
		fail_msg("merge snapshot --depth 2: %s", err.data);
	assert_int_equal(iget(j, "deepest"), 2);
	h2 = only_answer(only_answer(j, 1, 1), 2, 2);
	assert_int_equal(json_array_size(json_object_get(h2, "answered_by")), 0);
	assert_true(iget(j, "beyond_depth") >= SLOTS - 4);
	json_decref(j);

	/* graph: from the client's edge to host 1 on, the way to host 3 */
	j = merge(&d, &err, "graph", "--json", NULL);
	if (!j)
		fail_msg("merge graph: %s", err.data);
	{
		const json_t *vs = json_object_get(j, "vertices"),
			     *es = json_object_get(j, "edges");
		const json_t *e, *chain = NULL;
		size_t i;

		json_array_foreach (es, i, e) {
			const json_t *from = json_array_get(vs, (size_t)iget(e, "from_id"));

			if (json_is_true(json_object_get(e, "across_hosts")) &&
			    iget(from, "host") == 0 && iget(from, "tid") == XHOSTS_TID_CLIENT)
				chain = json_object_get(e, "chain");
		}
		assert_non_null(chain);
		assert_true(json_array_size(chain) >= 2);
		/* the sinks name vertices by id ("I": a json_int_t, not an int) */
		json_array_foreach (json_object_get(j, "sinks"), i, e)
			assert_true(iget(e, "id") >= 0 &&
				    (size_t)iget(e, "id") < json_array_size(vs));
		for (size_t k = 0; k < 2; k++) {
			e = json_array_get(chain, k);
			assert_true(json_is_true(json_object_get(e, "across_hosts")));
			assert_int_equal(iget(json_array_get(vs, (size_t)iget(e, "to_id")), "host"),
					 (json_int_t)k + 2);
		}
	}
	json_decref(j);

	/* refusals: one sentence each */
	assert_null(merge(&d, &err, "snapshot", target, "--depth", "0", NULL));
	assert_non_null(strstr(err.data, "--depth wants"));
	assert_null(strchr(err.data, '\n'));
	rsp_buf__reset(&err);
	assert_null(merge(&d, &err, "snapshot", "4242@0", NULL));
	assert_non_null(strstr(err.data, "process 4242 has no thread"));
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/*
 * The cycle guard: host 0's client asks host 1, whose server asks host 0
 * back, where the client thread itself answers (an event loop): the
 * recursion stops at host 1 and counts the answers by a thread already
 * on the path, instead of following PID into itself.
 */
/*
 * The answering thread of hop @h handed each request to its worker on its
 * host: its local waits (the recursive snapshot) hold a sleep the worker
 * ended, followed into the worker, under which are the hops across hosts
 * the worker's own network waits led to. Return: the worker's node.
 */
static const json_t *worker_of(const json_t *h)
{
	const json_t *lw = json_object_get(h, "local_waits"), *n, *w = NULL, *k;
	size_t i, x;

	assert_int_equal(json_array_size(json_object_get(h, "answered_by")), 0);
	assert_non_null(lw);
	json_array_foreach (lw, i, n) {
		if (strcmp(json_string_value(json_object_get(n, "kind")), "sleep") ||
		    !json_object_get(n, "waker_tid") || iget(n, "waker_tid") != XHOSTS_TID_WORKER)
			continue;
		/* the hand-off is most of the server thread's time */
		assert_true(json_real_value(json_object_get(n, "total_s")) >=
			    0.9 * json_real_value(json_object_get(h, "service_s")));
		json_array_foreach (json_object_get(n, "children"), x, k)
			if (!strcmp(json_string_value(json_object_get(k, "kind")), "thread") &&
			    iget(k, "tid") == XHOSTS_TID_WORKER)
				w = k;
	}
	assert_non_null(w);
	assert_int_equal(iget(w, "pid"), XHOSTS_TID_SERVER);
	return w;
}

/* chain + handoff: each proxy's wait for its upstream is a local wait for its worker. */
static void test_chain_handoff(void **state)
{
	struct xhosts x = {.hosts = 4, .conns = 1, .slots = SLOTS, .chain = true, .handoff = true};
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *h1, *h2, *h3;
	json_t *j;
	char target[32];

	(void)state;
	dumps_write_x(&d, &x);
	snprintf(target, sizeof(target), "%u@0", XHOSTS_TID_CLIENT);
	j = merge(&d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot: %s", err.data);
	assert_true(iget(j, "matched_operations") >= SLOTS - 2);
	/* client@0 -> server@1 (worker) -> server@2 (worker) -> server@3 */
	h1 = only_answer(j, 1, 1);
	h2 = only_answer(worker_of(h1), 2, 2);
	h3 = only_answer(worker_of(h2), 3, 3);
	assert_int_equal(json_array_size(json_object_get(h3, "answered_by")), 0);
	assert_true(iget(h3, "answers") >= SLOTS - 4);
	assert_int_equal(iget(j, "deepest"), 3);
	assert_int_equal(iget(j, "cycles_not_followed"), 0);
	assert_int_equal(iget(j, "beyond_depth"), 0);
	json_decref(j);

	/* --depth 2: the worker on host 2 is shown, its network waits counted, not followed */
	j = merge(&d, &err, "snapshot", target, "--depth", "2", "--json", NULL);
	if (!j)
		fail_msg("merge snapshot --depth 2: %s", err.data);
	assert_int_equal(iget(j, "deepest"), 2);
	h2 = only_answer(worker_of(only_answer(j, 1, 1)), 2, 2);
	assert_null(json_object_get(worker_of(h2), "answered_by"));
	assert_true(iget(j, "beyond_depth") >= SLOTS - 4);
	json_decref(j);
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/*
 * A hop whose snapshot holds more than its 50000 timed pieces (thousands
 * of answers handed to a worker): the wakers past them are not followed
 * across hosts, and the answer says so.
 */
static void test_pieces_cut(void **state)
{
	struct xhosts x = {
		.hosts = 3, .conns = 1, .slots = MANY_SLOTS, .chain = true, .handoff = true};
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *h1;
	json_t *j;
	char target[32];

	(void)state;
	dumps_write_x(&d, &x);
	snprintf(target, sizeof(target), "%u@0", XHOSTS_TID_CLIENT);
	j = merge(&d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot: %s", err.data);
	h1 = only_answer(j, 1, 1);
	assert_true(iget(h1, "answers") >= MANY_SLOTS - 4);
	assert_true(json_is_true(json_object_get(h1, "local_pieces_truncated")));
	json_decref(j);
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

static void test_loop(void **state)
{
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *h1;
	json_t *j;
	char target[32];
	double wait;

	(void)state;
	dumps_write(&d, 2, 1, false, true);
	snprintf(target, sizeof(target), "%u@0", XHOSTS_TID_CLIENT);
	j = merge(&d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot: %s", err.data);
	assert_int_equal(iget(j, "deepest"), 1);
	h1 = only_answer(j, 1, 1);
	assert_int_equal(json_array_size(json_object_get(h1, "answered_by")), 0);
	assert_true(iget(j, "cycles_not_followed") >= SLOTS - 4);
	assert_int_equal(iget(j, "beyond_depth"), 0);
	wait = json_real_value(json_object_get(j, "network_wait_s"));
	json_decref(j);

	/*
	 * The client thread's operations on its two sockets overlap (it waits
	 * for its answer while it answers the server's request): waits are
	 * their union, within the window, not their sum (which exceeds it).
	 */
	j = merge(&d, &err, "graph", "--json", NULL);
	if (!j)
		fail_msg("merge graph: %s", err.data);
	{
		const json_t *e;
		double window = json_real_value(json_object_get(j, "reference_s"));
		size_t i;

		assert_true(wait > 0.5 * window && wait <= window);
		json_array_foreach (json_object_get(j, "edges"), i, e) {
			if (!json_is_true(json_object_get(e, "across_hosts")))
				continue;
			assert_true(json_real_value(json_object_get(e, "weight_pct")) <= 100.0);
			assert_true(iget(e, "count") >= SLOTS - 2);
		}
	}
	json_decref(j);
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/*
 * More answering threads than a snapshot shows (MAX_HOPS, 64): the client
 * process of host 0 asks host 1 over 70 connections, each answered by its
 * own server thread. The answers of the threads not shown are not the
 * network's time: outside (the network) is what no answering thread's
 * service covers, as with every thread shown.
 */
static void test_many_threads(void **state)
{
	struct xhosts x = {.hosts = 2, .conns = 70, .slots = 70 * 4, .one_process = true};
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *h;
	json_t *j;
	char target[32];
	double first = 0, matched, other, out;
	json_int_t ops;
	size_t i;

	(void)state;
	dumps_write_x(&d, &x);
	snprintf(target, sizeof(target), "%u@0", XHOSTS_TID_CLIENT);
	j = merge(&d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot: %s", err.data);
	json_array_foreach (json_object_get(j, "answered_by"), i, h)
		first += json_real_value(json_object_get(h, "service_s"));
	assert_int_equal(json_array_size(json_object_get(j, "answered_by")), 64);
	assert_true(iget(j, "other_operations") >= 6 * 2);
	assert_non_null(json_object_get(j, "other_service_s"));
	matched = json_real_value(json_object_get(j, "matched_wait_s"));
	other = json_real_value(json_object_get(j, "other_service_s"));
	out = json_real_value(json_object_get(j, "outside_s"));
	ops = iget(j, "matched_operations");
	assert_true(other > 0);
	assert_true(fabs(matched - first - other - out) < 1e-5);
	/* the network's time by construction: 10 us each way, +1 us to the data's arrival */
	assert_true(out / (double)ops > 20e-6 && out / (double)ops < 22e-6);
	json_decref(j);
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/*
 * snapshot's PID@HOST refusals: a pid past PID_MAX_LIMIT (it wrapped to
 * another pid), and a host name two dumps bear, wherever they are in the
 * list (not only side by side).
 */
static void test_target(void **state)
{
	struct dumps d, three;
	struct rsp_buf err = RSP_BUF_INIT;
	char target[32];

	(void)state;
	dumps_write(&d, 2, 1, false, false);
	/* host 0 and its shifted copy (the tests' stand-in for another host) */
	three = d;
	three.hosts = 3;
	memcpy(three.paths[2], d.paths[0], sizeof(three.paths[2]));
	snprintf(target, sizeof(target), "%u@synth-0", XHOSTS_TID_CLIENT);
	assert_null(merge(&three, &err, "snapshot", target, "--test-clock-shift", "2=1000",
			  "--json", NULL));
	assert_non_null(err.data);
	if (!strstr(err.data, "several dumps are of host synth-0"))
		fail_msg("want the duplicate host refused, got: %s", err.data);
	rsp_buf__reset(&err);

	/* 2^32 + 1000: pid 1000 once cast to 32 bits */
	assert_null(merge(&d, &err, "snapshot", "4294968296@0", "--json", NULL));
	assert_non_null(err.data);
	assert_non_null(strstr(err.data, "4294968296 is not a pid"));
	assert_null(strchr(err.data, '\n'));
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/*
 * An answering thread whose local snapshot fails (its socket records name
 * a process its other records do not): the JSON says why, as the text
 * does, instead of leaving local_waits out unexplained.
 */
static void test_local_error(void **state)
{
	struct xhosts x = {.hosts = 2, .conns = 1, .slots = SLOTS, .stray_tgid = true};
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *h;
	json_t *j;
	char target[32];

	(void)state;
	dumps_write_x(&d, &x);
	snprintf(target, sizeof(target), "%u@0", XHOSTS_TID_CLIENT);
	j = merge(&d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot: %s", err.data);
	h = json_array_get(json_object_get(j, "answered_by"), 0);
	assert_non_null(h);
	assert_null(json_object_get(h, "local_waits"));
	assert_string_equal(json_string_value(json_object_get(h, "local_waits_error")),
			    "no records of it in its intervals");
	json_decref(j);
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/* PID@0's snapshot: its operations and those answered across hosts. */
static void ops_of(struct dumps *d, unsigned pid, json_int_t *ops, json_int_t *matched)
{
	struct rsp_buf err = RSP_BUF_INIT;
	char target[32];
	json_t *j;

	snprintf(target, sizeof(target), "%u@0", pid);
	j = merge(d, &err, "snapshot", target, "--json", NULL);
	if (!j)
		fail_msg("merge snapshot %s: %s", target, err.data);
	*ops = iget(j, "operations");
	*matched = iget(j, "matched_operations");
	json_decref(j);
	rsp_buf__exit(&err);
}

/*
 * A connection handed from one process to another halfway: each process's
 * snapshot has its own operations on it, not the other's (the end was
 * indexed under its first operation's process only, and depth 0 did not
 * filter by process).
 */
static void test_handover(void **state)
{
	struct xhosts x = {.hosts = 2, .conns = 1, .slots = SLOTS, .handover = true};
	struct dumps d;
	json_int_t ops, matched;

	(void)state;
	dumps_write_x(&d, &x);
	ops_of(&d, XHOSTS_TID_CLIENT, &ops, &matched);
	assert_int_equal(ops, SLOTS / 2);
	assert_true(matched >= SLOTS / 2 - 2 && matched <= ops);
	ops_of(&d, XHOSTS_TID_CLIENT + XHOSTS_HANDOVER, &ops, &matched);
	assert_int_equal(ops, SLOTS / 2);
	assert_true(matched >= SLOTS / 2 - 2 && matched <= ops);
	dumps_remove(&d);
}

struct failrun {
	struct dumps d;
	json_int_t pairs, rejected; /* the reference answer's */
	unsigned long failed_runs;
};

/* merge net with allocation @nth failing: an error, or the reference's pairs. */
static void net_failing(void *ctx, unsigned long nth)
{
	struct failrun *f = ctx;
	char *argv[] = {f->d.paths[0], f->d.paths[1], "net", "--json", NULL};
	struct rsp_buf out = RSP_BUF_INIT, err = RSP_BUF_INIT;
	const json_t *o;
	json_t *j;
	int ret;

	failalloc__arm(nth);
	ret = rsp_merge__run(4, argv, &out, &err);
	failalloc__disarm();
	if (ret) {
		assert_true(ret < 0);
		f->failed_runs++;
	} else {
		/*
		 * A run that succeeds loaded and matched everything: a failed
		 * allocation swallowed shows as pairs lost (the clock offset's
		 * pairs) or gained (a tracing-data format dropped while loading
		 * a dump, lib/format/tracedata.c, changed what was loaded).
		 */
		j = json_loads(out.data ? out.data : "", 0, NULL);
		assert_non_null(j);
		o = json_array_get(json_object_get(j, "clock_offsets"), 0);
		assert_non_null(o);
		if (iget(o, "pairs") != f->pairs || iget(o, "pairs_rejected") != f->rejected)
			fail_msg(
				"allocation %lu failed: %lld pairs, %lld rejected (not %lld, %lld)",
				nth, (long long)iget(o, "pairs"),
				(long long)iget(o, "pairs_rejected"), (long long)f->pairs,
				(long long)f->rejected);
		json_decref(j);
	}
	rsp_buf__exit(&out);
	rsp_buf__exit(&err);
}

/* Each allocation of merge net failing in turn: never a clock offset from fewer pairs. */
static void test_alloc_failure(void **state)
{
	struct xhosts x = {.hosts = 2, .conns = 1, .slots = 12};
	struct failrun f = {0};
	struct rsp_buf err = RSP_BUF_INIT;
	const json_t *o;
	json_t *j;

	(void)state;
	dumps_write_x(&f.d, &x);
	j = merge(&f.d, &err, "net", "--json", NULL);
	if (!j)
		fail_msg("merge net: %s", err.data);
	o = json_array_get(json_object_get(j, "clock_offsets"), 0);
	f.pairs = iget(o, "pairs");
	f.rejected = iget(o, "pairs_rejected");
	json_decref(j);
	assert_true(failalloc__each(net_failing, &f, 100000) > 1);
	assert_true(f.failed_runs > 0);
	rsp_buf__exit(&err);
	dumps_remove(&f.d);
}

/* A 2-host ring of @x's shape: merge net refuses it in one sentence naming host @bad's dump. */
static void refused(struct xhosts *x, unsigned bad, const char *why)
{
	struct dumps d;
	struct rsp_buf err = RSP_BUF_INIT;

	x->hosts = 2;
	x->conns = 1;
	x->slots = SLOTS;
	dumps_write_x(&d, x);
	assert_null(merge(&d, &err, "net", "--json", NULL));
	assert_non_null(err.data);
	if (!strstr(err.data, why) || !strstr(err.data, d.paths[bad]))
		fail_msg("want '%s' about %s, got: %s", why, d.paths[bad], err.data);
	assert_null(strchr(err.data, '\n'));
	rsp_buf__exit(&err);
	dumps_remove(&d);
}

/* A host name that is not UTF-8: --json refuses it, naming the dump (it vanished before). */
static void test_bad_hostname(void **state)
{
	struct xhosts x = {.bad_hostname = true};

	(void)state;
	refused(&x, 1, "its host name is not valid UTF-8, which --json cannot carry");
}

/* A crafted clock pair near INT64_MAX: refused, not overflowed (UBSan) or misaligned. */
static void test_bad_clock(void **state)
{
	struct xhosts x = {.bad_clock = true};

	(void)state;
	refused(&x, 1, "is corrupt: its clock pair or record times are beyond any clock");
}

/* An answer stamped before its request's send: refused, not a wrapped length. */
static void test_early_arrival(void **state)
{
	struct xhosts x = {.early_arrival = true};

	(void)state;
	refused(&x, 0, "is corrupt: a TCP operation ends before it starts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* clang-format off */
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_chain_handoff),
		cmocka_unit_test(test_bad_clock),
		cmocka_unit_test(test_early_arrival),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_handover),
		cmocka_unit_test(test_alloc_failure),
		cmocka_unit_test(test_pieces_cut),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_local_error),
		cmocka_unit_test(test_bad_hostname),
		/* clang-format on */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
