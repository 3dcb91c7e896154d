// SPDX-License-Identifier: LGPL-2.1
/*
 * `rspctl net`: the network operations of the window (struct rsp_net_op:
 * from a socket's last send to the last arrival of its answer), per socket:
 * its 4-tuple when known, how many operations, how long they took, and who
 * answered: a local thread over loopback, or the NIC.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <rsp/pass.h>
#include <rsp/net.h>
#include <rsp/netsum.h>
#include <rsp/parse.h>
#include <rsp/perfdata.h>
#include <rsp/symbols.h>
#include <rsp/tlstore.h>
#include "internal/fmt.h"
#include "internal/cgroupq.h"
#include "internal/json.h"
#include "internal/query.h"
#include "internal/redact.h"

#define NET_DEFAULT_LIMIT 20

struct net_opts {
	unsigned limit; /* sockets; 0: all */
};

enum {
	OPT_LIMIT = 1,
};

static const struct rsp_option net_opts[] = {
	{"limit", true, OPT_LIMIT},
	{NULL, false, 0},
};

static void net_init(void *opts)
{
	((struct net_opts *)opts)->limit = NET_DEFAULT_LIMIT;
}

static int net_opt(struct rsp_request *req, int id, const char *arg, struct rsp_buf *err)
{
	struct net_opts *o = req->opts;
	uint64_t n;

	if (id == OPT_LIMIT) {
		if (rsp_parse__u64(arg, 0, 1000000, &n)) {
			rsp_buf__printf(err,
					"net: --limit wants a number of sockets (0: all), not '%s'",
					arg);
			return -EINVAL;
		}
		o->limit = (unsigned)n;
		return 0;
	}
	rsp_buf__printf(err, "net: unexpected argument '%s'; see 'rspctl help net'", arg);
	return -EINVAL;
}

struct ctx {
	const struct rsp_request *req;
	const struct rsp_source *src;
	const struct rsp_tlstore *store;
	struct rsp_netsum *t;
	struct rsp_redact *red; /* the access rule */
	uint64_t from, to;
	const struct rsp_maps *model; /* cgroups, namespaced pids; NULL: none */
};

static const char *comm_of(const struct ctx *c, uint32_t tid)
{
	const struct rsp_tlthread *t = rsp_tlstore__find_thread(c->store, tid);

	return t && t->comm[0] ? t->comm : "?";
}

/* "comm[tid]", or "pid N (other user)". */
static char *thread_label(const struct ctx *c, uint32_t tid, uint32_t tgid, char *buf, size_t n)
{
	char comm[RSP_FMT_NAME_MAX];

	if (!rsp_redact__label(c->red, tid, tgid, buf, n))
		snprintf(buf, n, "%s[%u]", rsp_fmt__name(comm, sizeof(comm), comm_of(c, tid)), tid);
	return buf;
}

static const char *addr_source(const struct rsp_net_op *op)
{
	return op->flags & RSP_NETF_TUPLE	  ? "state"
	       : op->flags & RSP_NETF_REMOTE_PEER ? "peer"
						  : "unknown";
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* ---- text ---------------------------------------------------------------- */

/* One answerer: "net_rr[5675] over loopback (199)". */
static void peer_item(const struct ctx *c, const struct rsp_netsum_row *r,
		      const struct rsp_netsum_peer *p, char *buf, size_t size)
{
	char label[64];
	int n;

	if (p->tid)
		n = snprintf(buf, size, "%s over loopback",
			     thread_label(c, p->tid, p->tgid, label, sizeof(label)));
	else
		n = snprintf(buf, size, "%s",
			     p->local ? "a local thread rsp did not see" : "the NIC");
	if (r->nr_peers > 1 && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (%" PRIu64 ")", p->ops);
}

#define TEXT_WIDTH  79 /* text answers fit in 80 columns */
#define PEER_INDENT "        "

/* The answerers after "      answered by ", wrapped under it at the width. */
static void text_peers(const struct ctx *c, const struct rsp_netsum_row *r, struct rsp_buf *out)
{
	size_t col = strlen("      answered by ");
	char item[160];

	for (uint32_t i = 0; i <= r->nr_peers; i++) {
		size_t len;

		if (i < r->nr_peers)
			peer_item(c, r, &r->peers[i], item, sizeof(item));
		else if (r->other_peers)
			snprintf(item, sizeof(item), "others (%" PRIu64 ")", r->other_peers);
		else
			break;
		len = strlen(item);
		if (i && col + 2 + len > TEXT_WIDTH) {
			rsp_buf__puts(out, ",\n" PEER_INDENT);
			col = strlen(PEER_INDENT);
		} else if (i) {
			rsp_buf__puts(out, ", ");
			col += 2;
		}
		rsp_buf__puts(out, item);
		col += len;
	}
	rsp_buf__puts(out, "\n");
}

static void text_row(const struct ctx *c, const struct rsp_netsum_row *r, struct rsp_buf *out)
{
	char l[64], rem[64], label[64];

	char cg[300];

	if (rsp_redact__hidden(c->red, r->tid, r->tgid)) {
		rsp_buf__printf(out, "  %s %s\n", rsp_net__proto_name(r->op->proto),
				thread_label(c, r->tid, r->tgid, label, sizeof(label)));
	} else {
		rsp_sockaddr__format(&r->op->local, l, sizeof(l));
		rsp_sockaddr__format(&r->op->remote, rem, sizeof(rem));
		rsp_buf__printf(out, "  %s %s -> %s  %s\n", rsp_net__proto_name(r->op->proto), l,
				rem, thread_label(c, r->tid, r->tgid, label, sizeof(label)));
		/* the sender's cgroup on a line of its own: the first stays in 80 columns */
		if (*rsp_cgroupq__text(c->model, r->tgid, c->to, 50, cg, sizeof(cg)))
			rsp_buf__printf(out, "      cgroup %s\n", cg);
	}
	rsp_buf__printf(out, "      %" PRIu64 " ops, %.3f s, mean %.2f ms, max %.2f ms\n", r->ops,
			(double)r->total_ns / 1e9, ms(r->total_ns / (r->ops ? r->ops : 1)),
			ms(r->max_ns));
	rsp_buf__puts(out, "      answered by ");
	text_peers(c, r, out);
}

static void render_text(const struct ctx *c, struct rsp_buf *out)
{
	const struct net_opts *o = c->req->opts;
	const struct rsp_netsum *t = c->t;

	rsp_buf__printf(out, "network operations in %.3f s: %" PRIu64 " on %zu socket%s\n",
			(double)(c->to - c->from) / 1e9, t->ops, t->nr, t->nr == 1 ? "" : "s");
	rsp_buf__puts(out,
		      "(one runs from a socket's last send to the last arrival of its answer)\n");
	if (c->req->cgroup)
		rsp_buf__printf(out, "only the sockets of processes in cgroup %s\n",
				c->req->cgroup);
	if (c->req->container)
		rsp_buf__printf(out, "only the sockets of processes in container %s\n",
				c->req->container);
	for (size_t i = 0; i < t->nr && (!o->limit || i < o->limit); i++)
		text_row(c, &t->rows[i], out);
	if (o->limit && t->nr > o->limit)
		rsp_buf__printf(out, "(%zu more; --limit 0 shows all)\n", t->nr - o->limit);
	if (!t->nr && c->src->capture && !c->src->capture->families_on[RSP_FAM_NET])
		rsp_buf__puts(out, "the net family is off (rspd --families)\n");
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_thread(const struct ctx *c, json_t *o, uint32_t tid, uint32_t tgid)
{
	json_object_set_new(o, "pid", json_integer(tgid));
	if (rsp_redact__hidden(c->red, tid, tgid)) {
		json_object_set_new(o, "other_user", json_true());
		return;
	}
	json_object_set_new(o, "tid", json_integer(tid));
	json_object_set_new(o, "comm", rsp_json__name(comm_of(c, tid)));
	rsp_cgroupq__json(o, c->model, tgid, c->to);
}

static void json_endpoint(json_t *o, const char *name, const struct rsp_sockaddr *a)
{
	char buf[64], key[32];

	json_object_set_new(o, name, json_string(rsp_sockaddr__format(a, buf, sizeof(buf))));
	if (!a->family)
		return;
	snprintf(key, sizeof(key), "%s_addr", name);
	json_object_set_new(o, key, json_string(rsp_sockaddr__addr(a, buf, sizeof(buf))));
	snprintf(key, sizeof(key), "%s_port", name);
	json_object_set_new(o, key, json_integer(a->port));
}

static json_t *json_peers(const struct ctx *c, const struct rsp_netsum_row *r)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < r->nr_peers; i++) {
		const struct rsp_netsum_peer *p = &r->peers[i];
		json_t *o = json_object();

		if (p->tid) {
			json_thread(c, o, p->tid, p->tgid);
			json_object_set_new(o, "loopback", json_true());
		} else if (p->local) {
			json_object_set_new(o, "local", json_true());
		} else {
			json_object_set_new(o, "nic", json_true());
		}
		json_object_set_new(o, "ops", json_integer((json_int_t)p->ops));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *json_row(const struct ctx *c, const struct rsp_netsum_row *r)
{
	json_t *o = json_object();
	char sk[32];

	json_object_set_new(o, "proto", json_string(rsp_net__proto_name(r->op->proto)));
	if (!rsp_redact__hidden(c->red, r->tid, r->tgid)) {
		snprintf(sk, sizeof(sk), "0x%" PRIx64, r->op->sk);
		json_object_set_new(o, "sk", json_string(sk));
		json_endpoint(o, "local", &r->op->local);
		json_endpoint(o, "remote", &r->op->remote);
		json_object_set_new(o, "addresses", json_string(addr_source(r->op)));
	}
	json_thread(c, o, r->tid, r->tgid);
	json_object_set_new(o, "ops", json_integer((json_int_t)r->ops));
	json_object_set_new(o, "total_s", json_real((double)r->total_ns / 1e9));
	json_object_set_new(o, "mean_ms", json_real(ms(r->total_ns / (r->ops ? r->ops : 1))));
	json_object_set_new(o, "max_ms", json_real(ms(r->max_ns)));
	json_object_set_new(o, "arrivals", json_integer((json_int_t)r->arrivals));
	json_object_set_new(o, "wakeups", json_integer((json_int_t)r->wakeups));
	json_object_set_new(o, "bytes_sent", json_integer((json_int_t)r->bytes_sent));
	json_object_set_new(o, "peers", json_peers(c, r));
	return o;
}

static int render_json(const struct ctx *c, const struct rsp_timeline_stats *st,
		       struct rsp_buf *out)
{
	const struct net_opts *o = c->req->opts;
	json_t *root = json_object(), *rows = json_array();

	for (size_t i = 0; i < c->t->nr && (!o->limit || i < o->limit); i++)
		json_array_append_new(rows, json_row(c, &c->t->rows[i]));
	json_object_set_new(root, "window",
			    json_pack("{s:f, s:f, s:f, s:I, s:I, s:I}", "start",
				      (double)c->from / 1e9, "end", (double)c->to / 1e9, "seconds",
				      (double)(c->to - c->from) / 1e9, "ops", (json_int_t)c->t->ops,
				      "sockets", (json_int_t)c->t->nr, "loopback_wakings",
				      (json_int_t)st->net_loopback));
	json_object_set_new(root, "sockets", rows);
	if (c->req->cgroup)
		json_object_set_new(root, "query_cgroup", json_string(c->req->cgroup));
	if (c->req->container)
		json_object_set_new(root, "query_container", json_string(c->req->container));
	return rsp_json__emit(root, out);
}

/* ---- run ----------------------------------------------------------------- */

/*
 * --cgroup, --container: the sockets whose sender (the thread the row is
 * of) is a process inside, by its cgroup at the range's end; who answered
 * is shown wherever it runs. The totals are those of the sockets kept.
 */
static void keep_inside(const struct ctx *c, struct rsp_netsum *t)
{
	size_t n = 0;

	if (!c->req->cgroup && !c->req->container)
		return;
	t->ops = 0;
	for (size_t i = 0; i < t->nr; i++) {
		if (!rsp_request__cgroup_keeps(c->req, c->model, t->rows[i].tgid, c->to))
			continue;
		t->rows[n++] = t->rows[i];
		t->ops += t->rows[i].ops;
	}
	t->nr = n;
}

static int check_cgroups(const struct rsp_request *req, const struct rsp_source *src,
			 struct rsp_buf *err)
{
	if (!req->cgroup && !req->container)
		return 0;
	if (!src->symbols || (src->offline && !(src->dump && src->dump->has_cgroups))) {
		rsp_buf__puts(err, "net: --cgroup and --container need the cgroup of each process, "
				   "which this file does not carry (perf or an older rspd wrote "
				   "it); ask rspd, or dump again");
		return -EOPNOTSUPP;
	}
	return 0;
}

static int net_run(const struct rsp_request *req, const struct rsp_source *src, struct rsp_buf *out,
		   struct rsp_buf *err)
{
	struct rsp_tlstore_opts so = {.ksyms = src->ksyms, .socks = src->socks};
	struct rsp_netsum t = {0};
	struct rsp_redact red;
	struct ctx c = {.req = req, .src = src, .t = &t, .red = &red};
	struct rsp_timeline_stats st;
	struct rsp_tlstore *store = NULL;
	struct rsp_wsnap *snap;
	int ret = -ENOMEM;

	if (req->pid >= 0 && (ret = rsp_source__check_pid(src, "net", req->pid, err)))
		return ret;
	if ((ret = check_cgroups(req, src, err)))
		return ret;
	c.model = src->symbols ? rsp_symbolizer__maps(src->symbols) : NULL;
	rsp_request__window_range(req, src, &c.from, &c.to);
	if (req->pid >= 0 &&
	    (ret = rsp_source__check_seen(src, "net", req->pid, c.from, c.to, err)))
		return ret;
	ret = -ENOMEM; /* what a failure below without a sentence of its own means */
	snap = rsp_pass__pin(src->window, c.from, c.to);
	if (!snap) {
		rsp_buf__puts(err, "net: out of memory pinning the window");
		return -ENOMEM;
	}
	rsp_redact__init(&red, &src->access);
	so.from = c.from;
	so.to = c.to;
	store = rsp_tlstore__from_window(RSP_TLSTORE_WAITS_ONLY, src->schema, snap, &so, &st, err);
	if (!store)
		goto out;
	c.store = store;
	rsp_redact__use_store(&red, store);
	ret = rsp_netsum__collect(&t, store, req->pid);
	if (ret) {
		rsp_buf__puts(err, "net: out of memory");
		goto out;
	}
	keep_inside(&c, &t);
	if (req->format == RSP_FMT_JSON) {
		ret = render_json(&c, &st, out);
		if (ret)
			rsp_buf__puts(err, "net: out of memory rendering the answer");
	} else {
		render_text(&c, out);
	}
out:
	rsp_netsum__exit(&t);
	rsp_redact__exit(&red);
	rsp_tlstore__delete(store);
	rsp_wsnap__unpin(snap);
	return ret;
}

const struct rsp_command rsp_cmd_net = {
	.name = "net",
	.summary = "network operations per socket: addresses, latency, who answered",
	.usage = "usage: rspctl net [--pid PID] [--last DURATION | --from T --to T]\n"
		 "                  [--cgroup PATH] [--container ID] [--limit N] [--json]\n"
		 "\n"
		 "A network operation runs from a socket's last send to the last arrival\n"
		 "of its answer (TCP and UDP). Per socket: its addresses when rsp knows\n"
		 "them, how many operations and how long, and who answered: a local\n"
		 "thread over loopback, or the NIC (a remote peer).\n"
		 "\n"
		 "  --pid PID        only the sockets PID's threads sent on\n"
		 "  --cgroup PATH    only the sockets of processes in this cgroup v2\n"
		 "                   subtree (who answered is shown wherever it runs)\n"
		 "  --container ID   the same for a container (12+ hex digits of its id)\n"
		 "  --last DURATION  the last DURATION of the window (default: all of it)\n"
		 "  --from T, --to T only [T, T] of the window, in seconds as 'rspctl\n"
		 "                   status' shows it\n"
		 "  --limit N        sockets to show, the slowest first (20; 0: all)\n"
		 "  --json           JSON output (same as --format json)\n"
		 "\n"
		 "EXAMPLES\n"
		 "  rspctl net --last 10s\n"
		 "  rspctl net --pid 1234 --json\n"
		 "  rspctl net --container 3b2d3fc3f3c0 --last 1m\n",
	.common = RSP_COPT_FORMAT | RSP_COPT_PID | RSP_COPT_LAST | RSP_COPT_RANGE | RSP_COPT_CGROUP,
	.opts = net_opts,
	.opts_size = sizeof(struct net_opts),
	.init = net_init,
	.opt = net_opt,
	.run = net_run,
};
