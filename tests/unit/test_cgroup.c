// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/model/cgroup.c: the container id in every runtime's
 * cgroup form and in paths that look close but are not one, the /proc
 * parsers, subtree and prefix matching, and the text shortening; and the
 * process model's cgroup and namespaced pid (lib/model/maps.c).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <rsp/cgroup.h>
#include <rsp/hist.h>
#include <rsp/hist_render.h>
#include <rsp/maps.h>
#include <rsp/merge.h>
#include <rsp/prom.h>
#include <rsp/query.h>
#include "internal/cgroupq.h"
#include "internal/hist.h"
#include "internal/query.h"

#define ID  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static void expect_id(const char *path, const char *id, const char *runtime)
{
	char out[RSP_CONTAINER_ID_LEN + 1];
	const char *rt = NULL;

	if (!rsp_cgroup__container_id(path, out, &rt))
		fail_msg("no container id found in %s", path);
	assert_string_equal(out, id);
	assert_string_equal(rt, runtime);
}

static void test_runtime_forms(void **state)
{
	(void)state;
	expect_id("/system.slice/docker-" ID ".scope", ID, "docker");
	expect_id("/docker/" ID, ID, "docker");
	expect_id("/system.slice/containerd.service/cri-containerd-" ID ".scope", ID, "containerd");
	expect_id("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/"
		  "cri-containerd-" ID ".scope",
		  ID, "containerd");
	expect_id("/kubepods.slice/kubepods-pod99.slice/crio-" ID ".scope", ID, "crio");
	expect_id("/machine.slice/libpod-" ID ".scope", ID, "podman");
	expect_id("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
		  ".scope/container",
		  ID, "podman");
	expect_id("/kubepods/burstable/pod0c1f5b0e-1111-2222-3333-444455556666/" ID, ID,
		  "kubepods");
	expect_id("/kubepods/besteffort/podabc/" ID "/", ID, "kubepods");
	/* upper-case hex is reported in lower case */
	expect_id("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", ID,
		  "docker");
	/* docker in docker: the innermost container */
	expect_id("/docker/" ID "/docker/" ID2, ID2, "docker");
}

static void test_not_containers(void **state)
{
	static const char *const paths[] = {
		"/",
		"",
		"/user.slice/user-1000.slice/session-3.scope",
		"/system.slice/docker.service",
		"/system.slice/docker-" ID ".service",	       /* not a scope */
		"/system.slice/docker-" ID "0.scope",	       /* 65 digits */
		"/system.slice/docker-0123456789abcdef.scope", /* short */
		"/system.slice/docker-"
		"0123456789abcdefg123456789abcdef0123456789abcdef0123456789abcdef"
		".scope",				     /* not hex */
		"/machine.slice/libpod-conmon-" ID ".scope", /* podman's monitor */
		"/kubepods.slice/crio-conmon-" ID ".scope",  /* CRI-O's monitor */
		"/" ID,					     /* a bare id, no runtime parent */
		"/mydocker/" ID,			     /* not docker's parent */
		"/docker/" ID "x",
		"/system.slice/xdocker-" ID ".scope",
	};
	char out[RSP_CONTAINER_ID_LEN + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (rsp_cgroup__container_id(paths[i], out, NULL))
			fail_msg("'%s' taken for a container (%s)", paths[i], out);
	assert_false(rsp_cgroup__container_id(NULL, out, NULL));
}

static void test_parse_proc(void **state)
{
	char path[64];
	uint32_t ns = 0;

	(void)state;
	assert_int_equal(rsp_cgroup__parse_proc("0::/a/b\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/a/b");
	/* hybrid hierarchy: v1 lines first */
	assert_int_equal(rsp_cgroup__parse_proc("12:cpu,cpuacct:/x\n1:name=systemd:/y\n0::/z", path,
						sizeof(path)),
			 0);
	assert_string_equal(path, "/z");
	assert_int_equal(rsp_cgroup__parse_proc("12:cpu:/x\n", path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "");
	assert_int_equal(rsp_cgroup__parse_proc("", path, sizeof(path)), -ENOENT);
	assert_int_equal(rsp_cgroup__parse_proc("0::/0123456789\n", path, 8), -ENAMETOOLONG);

	assert_int_equal(rsp_cgroup__parse_nspid("Name:\tx\nNSpid:\t4242\t7\t1\nPPid:\t1\n", &ns),
			 0);
	assert_int_equal(ns, 1);
	assert_int_equal(rsp_cgroup__parse_nspid("NSpid:\t4242\n", &ns), 0);
	assert_int_equal(ns, 4242);
	assert_int_equal(rsp_cgroup__parse_nspid("Name:\tx\nPid:\t3\n", &ns), -ENOENT);
	assert_int_equal(rsp_cgroup__parse_nspid("NSpid:\t\n", &ns), -ENOENT);
	assert_int_equal(rsp_cgroup__parse_nspid("NSpid:\t99999999999\n", &ns), -ENOENT);
}

static void test_read_proc(void **state)
{
	char dir[] = "/tmp/rsp-cgroup-XXXXXX", name[128], path[64];
	uint32_t ns;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(name, sizeof(name), "%s/77", dir);
	assert_int_equal(mkdir(name, 0700), 0);
	snprintf(name, sizeof(name), "%s/77/cgroup", dir);
	f = fopen(name, "w");
	fputs("0::/docker/" ID "\n", f);
	fclose(f);
	snprintf(name, sizeof(name), "%s/77/status", dir);
	f = fopen(name, "w");
	fputs("Name:\tw\nNSpid:\t77\t3\n", f);
	fclose(f);
	assert_int_equal(rsp_cgroup__read_proc(dir, 77, path, sizeof(path), &ns), 0);
	/* the path does not fit 64 bytes: unknown, the pid still read */
	assert_string_equal(path, "");
	assert_int_equal(ns, 3);
	{
		char big[256];

		assert_int_equal(rsp_cgroup__read_proc(dir, 77, big, sizeof(big), &ns), 0);
		assert_string_equal(big, "/docker/" ID);
	}
	assert_int_equal(rsp_cgroup__read_proc(dir, 78, path, sizeof(path), &ns), -ENOENT);
	assert_int_equal(ns, 0);
	unlink(name);
	snprintf(name, sizeof(name), "%s/77/cgroup", dir);
	unlink(name);
	snprintf(name, sizeof(name), "%s/77", dir);
	rmdir(name);
	rmdir(dir);
}

/* The owner of a cgroup's directory, under a mount (a temp dir stands in for it). */
static void test_owner(void **state)
{
	char dir[] = "/tmp/rsp-cgown-XXXXXX", sub[64], mnt[256];
	uint32_t uid = 12345;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/svc", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chown(sub, 4242, 4242) == 0 || geteuid() != 0, 1);
	assert_int_equal(rsp_cgroup__owner(dir, "/svc", &uid), 0);
	assert_int_equal(uid, geteuid() == 0 ? 4242 : geteuid());
	assert_int_equal(rsp_cgroup__owner(dir, "/nope", &uid), -ENOENT);
	assert_int_equal(rsp_cgroup__owner(dir, "svc", &uid), -EINVAL);
	assert_int_equal(rsp_cgroup__owner(dir, "/svc/../svc/", &uid), -EINVAL);
	rmdir(sub);
	rmdir(dir);
	/* this machine's cgroup2 mount, when there is one */
	if (rsp_cgroup__find_mount(mnt, sizeof(mnt)) == 0)
		assert_int_equal(rsp_cgroup__owner(mnt, "/", &uid), 0);
	assert_int_equal(rsp_cgroup__find_mount(mnt, 1) == -ENAMETOOLONG ||
				 rsp_cgroup__find_mount(mnt, 1) == -ENOENT,
			 1);
}

static void test_subtree_and_prefix(void **state)
{
	(void)state;
	assert_true(rsp_cgroup__in_subtree("/a/b", "/a"));
	assert_true(rsp_cgroup__in_subtree("/a", "/a"));
	assert_true(rsp_cgroup__in_subtree("/a", "/a/"));
	assert_true(rsp_cgroup__in_subtree("/a/b/c", "/a/b"));
	assert_true(rsp_cgroup__in_subtree("/a/b", "/"));
	assert_false(rsp_cgroup__in_subtree("/a/bc", "/a/b"));
	assert_false(rsp_cgroup__in_subtree("/a", "/a/b"));
	assert_false(rsp_cgroup__in_subtree("", "/"));
	assert_false(rsp_cgroup__in_subtree(NULL, "/"));

	assert_true(rsp_cgroup__check_container_arg("0123456789ab"));
	assert_true(rsp_cgroup__check_container_arg(ID));
	assert_false(rsp_cgroup__check_container_arg("0123456789a"));
	assert_false(rsp_cgroup__check_container_arg(ID "0"));
	assert_false(rsp_cgroup__check_container_arg("0123456789ax"));
	assert_false(rsp_cgroup__check_container_arg(""));

	assert_true(rsp_cgroup__container_matches("/docker/" ID, "0123456789AB"));
	assert_true(rsp_cgroup__container_matches("/docker/" ID, ID));
	assert_false(rsp_cgroup__container_matches("/docker/" ID, "0123456789ac"));
	assert_false(rsp_cgroup__container_matches("/system.slice", "0123456789ab"));
}

static void test_short(void **state)
{
	char out[32];

	(void)state;
	assert_string_equal(rsp_cgroup__short("/a/b", 24, out, sizeof(out)), "/a/b");
	assert_string_equal(
		rsp_cgroup__short("/system.slice/docker-" ID ".scope", 24, out, sizeof(out)),
		"docker:0123456789ab");
	assert_string_equal(rsp_cgroup__short("/user.slice/user-1000.slice/session-3.scope", 20,
					      out, sizeof(out)),
			    "...e/session-3.scope");
	assert_int_equal(strlen(out), 20);
	/* a width beyond the buffer is cut to it */
	rsp_cgroup__short("/user.slice/user-1000.slice/user@1000.service/app.slice", 100, out,
			  sizeof(out));
	assert_int_equal(strlen(out), sizeof(out) - 1);
}

struct each_seen {
	int n;
	unsigned mask;
	bool stop;
};

static int each_cb(uint32_t pid, uint64_t t_birth, uint64_t t_exit, const char *cgroup,
		   uint32_t nspid, void *ctx)
{
	struct each_seen *s = ctx;

	if (s->stop)
		return 7;
	s->n++;
	if (pid == 10 && !strcmp(cgroup, "/x/y") && nspid == 1 && t_exit == UINT64_MAX)
		s->mask |= 1;
	if (pid == 11 && !strcmp(cgroup, "/x/z") && nspid == 2 && t_birth == 200 && t_exit == 300)
		s->mask |= 2;
	return 0;
}

/* The process model keeps each incarnation's cgroup; a fork inherits it. */
static void test_maps_cgroup(void **state)
{
	struct rsp_maps *m = rsp_maps__new(NULL);

	(void)state;
	assert_non_null(m);
	assert_int_equal(rsp_maps__snapshot_begin(m, 10, 100, "a", 0), 0);
	rsp_maps__snapshot_end(m, 10);
	assert_null(rsp_maps__cgroup(m, 10, 100));
	assert_int_equal(rsp_maps__nspid(m, 10, 100), 0);
	assert_int_equal(rsp_maps__set_cgroup(m, 10, 100, "/x/y", 1), 0);
	assert_string_equal(rsp_maps__cgroup(m, 10, 150), "/x/y");
	assert_int_equal(rsp_maps__nspid(m, 10, 150), 1);
	assert_int_equal(rsp_maps__fork(m, 11, 10, 200), 0);
	assert_string_equal(rsp_maps__cgroup(m, 11, 250), "/x/y");
	assert_int_equal(rsp_maps__nspid(m, 11, 250), 0); /* its own: not known yet */
	assert_int_equal(rsp_maps__set_cgroup(m, 11, 210, "/x/z", 2), 0);
	assert_string_equal(rsp_maps__cgroup(m, 11, 250), "/x/z");
	assert_string_equal(rsp_maps__cgroup(m, 10, 250), "/x/y");
	/* an unknown process, and "" for an unreadable path */
	assert_int_equal(rsp_maps__set_cgroup(m, 99, 210, "/q", 2), -ESRCH);
	assert_int_equal(rsp_maps__set_cgroup(m, 11, 220, "", 0), 0);
	assert_string_equal(rsp_maps__cgroup(m, 11, 250), "/x/z");
	/* pid reuse: the new incarnation starts unknown */
	assert_int_equal(rsp_maps__exit(m, 11, 11, 300), 0);
	assert_int_equal(rsp_maps__snapshot_begin(m, 11, 400, "b", 0), 0);
	rsp_maps__snapshot_end(m, 11);
	assert_null(rsp_maps__cgroup(m, 11, 450));
	assert_string_equal(rsp_maps__cgroup(m, 11, 250), "/x/z");
	/* every known incarnation, with its times (what a dump writes) */
	{
		struct each_seen seen = {0};

		assert_int_equal(rsp_maps__each_cgroup(m, each_cb, &seen), 0);
		assert_int_equal(seen.n, 2); /* 10, and 11's first life; not 11's second */
		assert_int_equal(seen.mask, 3);
		seen.stop = true;
		assert_int_equal(rsp_maps__each_cgroup(m, each_cb, &seen), 7);
	}
	rsp_maps__delete(m);
}

static int parse(struct rsp_request *req, const char *a1, const char *a2, const char *a3,
		 const char *a4, struct rsp_buf *err)
{
	const char *argv[] = {"top", a1, a2, a3, a4};
	int argc = 1 + !!a1 + !!a2 + !!a3 + !!a4;

	rsp_buf__reset(err);
	return rsp_request__parse(argc, argv, req, err);
}

/* --cgroup and --container: parsed, checked, and which processes they keep. */
static void test_request_filters(void **state)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct rsp_request req;
	struct rsp_maps *m = rsp_maps__new(NULL);

	(void)state;
	assert_non_null(m);
	for (uint32_t pid = 10; pid <= 13; pid++) {
		assert_int_equal(rsp_maps__snapshot_begin(m, pid, 100, "w", 0), 0);
		rsp_maps__snapshot_end(m, pid);
	}
	assert_int_equal(rsp_maps__set_cgroup(m, 10, 100, "/svc/a", 0), 0);
	assert_int_equal(rsp_maps__set_cgroup(m, 11, 100, "/svc/ab", 0), 0);
	assert_int_equal(rsp_maps__set_cgroup(m, 12, 100, "/svc/a/docker/" ID, 3), 0);
	/* 13: unknown cgroup */

	assert_int_equal(parse(&req, NULL, NULL, NULL, NULL, &err), 0);
	assert_true(rsp_request__cgroup_keeps(&req, m, 13, 100)); /* no filter: all */
	rsp_request__exit(&req);

	assert_int_equal(parse(&req, "--cgroup", "/svc/a/", NULL, NULL, &err), 0);
	assert_true(rsp_request__cgroup_keeps(&req, m, 10, 100));
	assert_false(rsp_request__cgroup_keeps(&req, m, 11, 100));
	assert_true(rsp_request__cgroup_keeps(&req, m, 12, 100));
	assert_false(rsp_request__cgroup_keeps(&req, m, 13, 100));
	assert_false(rsp_request__cgroup_keeps(&req, m, 99, 100));
	rsp_request__exit(&req);

	assert_int_equal(parse(&req, "--container", "0123456789AB", NULL, NULL, &err), 0);
	assert_false(rsp_request__cgroup_keeps(&req, m, 10, 100));
	assert_true(rsp_request__cgroup_keeps(&req, m, 12, 100));
	rsp_request__exit(&req);

	/* both: the container must be inside the subtree */
	assert_int_equal(parse(&req, "--container", ID, "--cgroup", "/svc/ab", &err), 0);
	assert_false(rsp_request__cgroup_keeps(&req, m, 12, 100));
	rsp_request__exit(&req);
	/* composable with --pid; given twice, the last one counts */
	assert_int_equal(parse(&req, "--pid", "12", "--cgroup", "/svc", &err), 0);
	assert_int_equal(req.pid, 12);
	assert_string_equal(req.cgroup, "/svc");
	rsp_request__exit(&req);

	assert_int_equal(parse(&req, "--cgroup", "svc/a", NULL, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.data, "--cgroup wants a cgroup v2 path"));
	rsp_request__exit(&req);
	assert_int_equal(parse(&req, "--container", "0123456789a", NULL, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.data, "12 or more hex digits"));
	rsp_request__exit(&req);
	/* a command without the option refuses it in one sentence that says why */
	for (int i = 0; i < 3; i++) {
		const char *cmds[] = {"dump", "status", "stopwatch"};
		const char *argv[] = {cmds[i], i == 1 ? "--container" : "--cgroup",
				      i == 1 ? "0123456789ab" : "/svc"};

		rsp_buf__reset(&err);
		assert_int_equal(rsp_request__parse(3, argv, &req, &err), -EINVAL);
		assert_non_null(strstr(err.data, "--cgroup and --container do not apply: "));
		assert_non_null(strstr(err.data, cmds[i]));
		assert_null(strchr(err.data, '\n'));
		rsp_request__exit(&req);
	}
	/* merge: a cgroup names one host's directory (refused before any file is read) */
	{
		char *argv[] = {"a.perf.data", "b.perf.data", "net", "--cgroup", "/svc"};
		struct rsp_buf out = RSP_BUF_INIT;

		rsp_buf__reset(&err);
		assert_int_equal(rsp_merge__run(5, argv, &out, &err), -EINVAL);
		assert_non_null(strstr(err.data, "do not apply across hosts"));
		assert_null(strchr(err.data, '\n'));
		rsp_buf__exit(&out);
	}
	/* and net now takes it */
	{
		const char *argv[] = {"net", "--cgroup", "/svc"};

		assert_int_equal(rsp_request__parse(3, argv, &req, &err), 0);
		assert_string_equal(req.cgroup, "/svc");
		rsp_request__exit(&req);
	}
	rsp_buf__exit(&err);
	rsp_maps__delete(m);
}

static const char *fake_cgroup(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 1 || pid == 2 ? "/big" : pid == 3 ? "/small" : pid == 4 ? "/tiny" : NULL;
}

static void add_profile(struct rsp_hist_set *s, enum rsp_hist_subject_kind kind, uint32_t pid,
			uint64_t count, unsigned bucket)
{
	struct rsp_hist_subject subj = {.kind = kind, .pid = pid};
	struct rsp_hist_profile *p = rsp_hist_set__get(s, &subj, "offcpu:sleep");

	assert_non_null(p);
	p->resolution = 1;
	p->count = count;
	p->buckets[bucket] = count;
	p->sum = count * rsp_hist__bucket_low(bucket, 1);
	p->min = p->max = rsp_hist__bucket_low(bucket, 1);
}

/* Prometheus by cgroup: merged per cgroup, the top N by total latency, the rest "other". */
static void test_prom_cgroups(void **state)
{
	struct rsp_hist_set *s = rsp_hist_set__new(1);
	struct rsp_buf out = RSP_BUF_INIT;

	(void)state;
	assert_non_null(s);
	add_profile(s, RSP_HSUBJ_SYSTEM, 0, 100, 20);
	add_profile(s, RSP_HSUBJ_PROCESS, 1, 10, 20); /* /big: 10 + 5 at 2^20 ns */
	add_profile(s, RSP_HSUBJ_PROCESS, 2, 5, 20);
	add_profile(s, RSP_HSUBJ_PROCESS, 3, 7, 10);	   /* /small: less latency */
	add_profile(s, RSP_HSUBJ_PROCESS, 4, 1, 11);	   /* /tiny */
	add_profile(s, RSP_HSUBJ_PROCESS, 5, 2, 12);	   /* unknown */
	add_profile(s, RSP_HSUBJ_OTHER_PROCESS, 0, 3, 12); /* evicted */
	assert_int_equal(rsp_prom__render_cgroups(s, 2, fake_cgroup, NULL, RSP_PROM_TEXT, &out), 0);
	assert_non_null(strstr(out.data, "# TYPE rsp_cgroup_latency_seconds histogram\n"));
	assert_non_null(strstr(out.data, "rsp_cgroup_latency_seconds_count{op=\"offcpu:sleep\","
					 "cgroup=\"/big\"} 15\n"));
	/* the second by latency: unknown (2 x 2^12 ns) beats /small (7 x 2^10) and /tiny */
	assert_non_null(strstr(out.data, "rsp_cgroup_latency_seconds_count{op=\"offcpu:sleep\","
					 "cgroup=\"unknown\"} 2\n"));
	assert_non_null(strstr(out.data, "rsp_cgroup_latency_seconds_count{op=\"offcpu:sleep\","
					 "cgroup=\"other\"} 11\n"));
	assert_null(strstr(out.data, "cgroup=\"/small\""));
	assert_null(strstr(out.data, "cgroup=\"/tiny\""));
	/* every operation of the cgroup under le=+Inf */
	assert_non_null(strstr(out.data, "rsp_cgroup_latency_seconds_bucket{op=\"offcpu:sleep\","
					 "cgroup=\"/big\",le=\"+Inf\"} 15\n"));
	rsp_buf__reset(&out);
	/* top 0: everything is other */
	assert_int_equal(rsp_prom__render_cgroups(s, 0, fake_cgroup, NULL, RSP_PROM_TEXT, &out), 0);
	assert_null(strstr(out.data, "cgroup=\"/big\""));
	assert_non_null(strstr(out.data, "rsp_cgroup_latency_seconds_count{op=\"offcpu:sleep\","
					 "cgroup=\"other\"} 28\n"));
	rsp_buf__exit(&out);
	rsp_hist_set__delete(s);
}

static const char *fake_group(void *ctx, uint32_t pid)
{
	const char *cg = fake_cgroup(ctx, pid);

	return pid == 6 ? "(other user)" : cg ? cg : "(unknown)";
}

static const struct rsp_hist_profile *cg_profile(const struct rsp_hist_set *s, const char *cg)
{
	const struct rsp_hist_subject subj = {.kind = RSP_HSUBJ_CGROUP, .cgroup = cg};

	return rsp_hist_set__find(s, &subj, "offcpu:sleep");
}

/*
 * hist --by cgroup: the process profiles merged per (op, cgroup), the top N
 * cgroups by total latency, the rest "(other cgroups)"; unknown, another
 * user's and evicted processes in groups of their own; the system's left out.
 */
static void test_hist_by_cgroup(void **state)
{
	struct rsp_hist_set *s = rsp_hist_set__new(1), *cg = NULL;
	const struct rsp_hist_profile *p;

	(void)state;
	assert_non_null(s);
	s->ranged = true;
	s->from = 5000000000ull;
	s->to = 6000000000ull;
	add_profile(s, RSP_HSUBJ_SYSTEM, 0, 100, 20);
	add_profile(s, RSP_HSUBJ_PROCESS, 1, 10, 20); /* /big: 10 + 5 at 2^20 ns */
	add_profile(s, RSP_HSUBJ_PROCESS, 2, 5, 21);
	add_profile(s, RSP_HSUBJ_PROCESS, 3, 7, 10);	   /* /small: second */
	add_profile(s, RSP_HSUBJ_PROCESS, 4, 1, 9);	   /* /tiny: third, cut */
	add_profile(s, RSP_HSUBJ_PROCESS, 5, 2, 12);	   /* unknown */
	add_profile(s, RSP_HSUBJ_PROCESS, 6, 4, 12);	   /* another user's */
	add_profile(s, RSP_HSUBJ_OTHER_PROCESS, 0, 3, 12); /* evicted */
	assert_int_equal(rsp_cgroupq__hist(s, 2, fake_group, NULL, &cg), 0);
	assert_int_equal(cg->n, 6);
	assert_true(cg->ranged && cg->from == s->from && cg->to == s->to);
	p = cg_profile(cg, "/big");
	assert_non_null(p);
	assert_int_equal(p->count, 15);
	assert_int_equal(p->buckets[20], 10);
	assert_int_equal(p->buckets[21], 5);
	assert_int_equal(p->min, rsp_hist__bucket_low(20, 1));
	assert_int_equal(p->max, rsp_hist__bucket_low(21, 1));
	assert_int_equal(cg_profile(cg, "/small")->count, 7);
	assert_null(cg_profile(cg, "/tiny"));
	assert_int_equal(cg_profile(cg, RSP_CGROUPQ_OTHER_CGROUPS)->count, 1);
	assert_int_equal(cg_profile(cg, "(unknown)")->count, 2);
	assert_int_equal(cg_profile(cg, "(other user)")->count, 4);
	assert_int_equal(cg_profile(cg, RSP_CGROUPQ_OTHER_PROCESSES)->count, 3);
	for (size_t i = 0; i < cg->n; i++)
		assert_int_equal(cg->v[i].subject.kind, RSP_HSUBJ_CGROUP);
	rsp_hist_set__delete(cg);
	/* the set owns its names: the caller's strings may go */
	rsp_hist_set__delete(s);
}

static bool not_big(const struct rsp_hist_profile *p, void *ctx)
{
	(void)ctx;
	return strcmp(p->subject.cgroup, "/big");
}

/* A set by cgroup in the rsp-hist JSON and back (rspd's answer, --save, --diff). */
static void test_hist_cgroup_json(void **state)
{
	struct rsp_hist_set *s = rsp_hist_set__new(1), *cg = NULL, *back = NULL;
	struct rsp_buf json = RSP_BUF_INIT, err = RSP_BUF_INIT;
	char name[64] = "/docker/x";
	const char *bad = "{\"format\": \"rsp-hist\", \"version\": 1, \"resolution\": 1, "
			  "\"profiles\": [{\"subject\": {\"kind\": \"cgroup\"}, "
			  "\"op\": \"runq\", \"count\": 0, \"sum_ns\": 0, \"min_ns\": 0, "
			  "\"max_ns\": 0, \"buckets\": []}]}";

	(void)state;
	add_profile(s, RSP_HSUBJ_PROCESS, 1, 10, 20);
	add_profile(s, RSP_HSUBJ_PROCESS, 3, 7, 10);
	assert_int_equal(rsp_cgroupq__hist(s, 1, fake_group, NULL, &cg), 0);
	assert_int_equal(rsp_hist_set__render_json(cg, 0, &json), 0);
	assert_non_null(strstr(json.data, "\"cgroup\": \"/big\""));
	assert_int_equal(rsp_hist_set__load_json(json.data, json.len, "answer", &back, &err), 0);
	assert_int_equal(back->n, 2);
	assert_int_equal(cg_profile(back, "/big")->count, 10);
	assert_int_equal(cg_profile(back, RSP_CGROUPQ_OTHER_CGROUPS)->count, 7);
	/* a subject names its cgroup whatever the caller's buffer holds later */
	{
		struct rsp_hist_subject subj = {.kind = RSP_HSUBJ_CGROUP, .cgroup = name};

		assert_non_null(rsp_hist_set__get(back, &subj, "runq"));
		strcpy(name, "/changed");
		assert_non_null(cg_profile(back, "/big"));
		subj.cgroup = "/docker/x";
		assert_non_null(rsp_hist_set__find(back, &subj, "runq"));
	}
	rsp_hist_set__keep_if(back, not_big, NULL); /* frees the names it drops */
	assert_int_equal(back->n, 2);
	assert_null(cg_profile(back, "/big"));
	assert_int_equal(cg_profile(back, RSP_CGROUPQ_OTHER_CGROUPS)->count, 7);
	rsp_hist_set__sort(back, 1); /* the cut too */
	assert_int_equal(back->n, 1);
	rsp_hist_set__delete(back);
	back = NULL;
	/* a cgroup subject without its cgroup: one sentence */
	assert_int_equal(rsp_hist_set__load_json(bad, strlen(bad), "f.json", &back, &err), -EINVAL);
	assert_null(back);
	assert_non_null(strstr(err.data, "has no 'cgroup'"));
	assert_null(strchr(err.data, '\n'));
	rsp_buf__exit(&json);
	rsp_buf__exit(&err);
	rsp_hist_set__delete(cg);
	rsp_hist_set__delete(s);
}

/* The ranking hist --by cgroup and the metrics share: name is the process's cgroup, or none. */
static const char *rank_name(void *ctx, const struct rsp_hist_profile *p)
{
	return p->subject.kind == RSP_HSUBJ_PROCESS ? fake_cgroup(ctx, p->subject.pid) : NULL;
}

/*
 * rsp_cgroupq__rank(): sums per name, heaviest first, ties by name; profiles
 * with no name left out; rsp_cgroupq__rank_index(): the rank within the top
 * N, else N.
 */
static void test_rank(void **state)
{
	struct rsp_hist_set *s = rsp_hist_set__new(1);
	struct rsp_cgroupq_rank *v = NULL;
	long n;

	(void)state;
	assert_non_null(s);
	add_profile(s, RSP_HSUBJ_SYSTEM, 0, 1000, 20); /* no name: not ranked */
	add_profile(s, RSP_HSUBJ_PROCESS, 1, 2, 10);   /* /big: 2 + 2 at 2^10 */
	add_profile(s, RSP_HSUBJ_PROCESS, 2, 2, 10);
	add_profile(s, RSP_HSUBJ_PROCESS, 3, 4, 10); /* /small: 4 at 2^10, a tie with /big */
	add_profile(s, RSP_HSUBJ_PROCESS, 4, 5, 11); /* /tiny: the heaviest */
	add_profile(s, RSP_HSUBJ_PROCESS, 5, 9, 20); /* no cgroup: not ranked */
	n = rsp_cgroupq__rank(s, rank_name, NULL, &v);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].name, "/tiny");
	assert_int_equal(v[0].sum, 5 * rsp_hist__bucket_low(11, 1));
	assert_string_equal(v[1].name, "/big");
	assert_string_equal(v[2].name, "/small");
	assert_int_equal(v[1].sum, v[2].sum);
	assert_int_equal(rsp_cgroupq__rank_index(v, (size_t)n, 2, "/big"), 1);
	assert_int_equal(rsp_cgroupq__rank_index(v, (size_t)n, 2, "/small"), 2);
	assert_int_equal(rsp_cgroupq__rank_index(v, (size_t)n, 9, "/small"), 2);
	assert_int_equal(rsp_cgroupq__rank_index(v, (size_t)n, 0, "/tiny"), 0);
	assert_int_equal(rsp_cgroupq__rank_index(v, (size_t)n, 5, "/none"), 5);
	free(v);
	rsp_hist_set__delete(s);
}

/* pid 1: /a, 2: /b, 3: /c (two sides of a diff) */
static const char *abc_group(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 1 ? "/a" : pid == 2 ? "/b" : pid == 3 ? "/c" : NULL;
}

/*
 * A diff by cgroup, top 2: /a and /b lead the baseline, /a and /c the
 * current side; together /a, then /c (70 at 2^10 in all) before /b (60).
 * Cut apart, /c was "(other cgroups)" in the baseline and new now, /b the
 * reverse, and the diff cannot tell (unsure: --diff FILE, whose file was
 * cut when saved); cut together, both sides name /a and /c, and /b is
 * other on both.
 */
static void test_cut_pair(void **state)
{
	struct rsp_hist_set *a = rsp_hist_set__new(1), *b = rsp_hist_set__new(1), *ca, *cb;
	struct rsp_hist_diff *d;
	size_t unsure = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	add_profile(a, RSP_HSUBJ_PROCESS, 1, 100, 10);
	add_profile(a, RSP_HSUBJ_PROCESS, 2, 50, 10);
	add_profile(a, RSP_HSUBJ_PROCESS, 3, 10, 10);
	add_profile(b, RSP_HSUBJ_PROCESS, 1, 100, 10);
	add_profile(b, RSP_HSUBJ_PROCESS, 2, 10, 10);
	add_profile(b, RSP_HSUBJ_PROCESS, 3, 60, 10);
	/* apart: each side's own top 2 */
	assert_int_equal(rsp_cgroupq__hist(a, 2, abc_group, NULL, &ca), 0);
	assert_int_equal(rsp_cgroupq__hist(b, 2, abc_group, NULL, &cb), 0);
	assert_int_equal(ca->cut, 1);
	assert_int_equal(cb->cut, 1);
	assert_int_equal(rsp_hist__compare(ca, cb, NULL, &d), 0);
	for (size_t i = 0; i < d->n; i++) {
		const struct rsp_hist_pair *p = &d->v[i];
		const char *g = (p->base ? p->base : p->cur)->subject.cgroup;

		assert_true(p->unsure == (!strcmp(g, "/b") || !strcmp(g, "/c")));
		unsure += p->unsure;
	}
	assert_int_equal(unsure, 2);
	rsp_hist_diff__delete(d);
	rsp_hist_set__delete(ca);
	rsp_hist_set__delete(cb);
	/* together */
	assert_int_equal(rsp_cgroupq__hist(a, UINT_MAX, abc_group, NULL, &ca), 0);
	assert_int_equal(rsp_cgroupq__hist(b, UINT_MAX, abc_group, NULL, &cb), 0);
	assert_int_equal(rsp_cgroupq__cut(&ca, &cb, 2), 0);
	assert_int_equal(ca->cut + cb->cut, 0); /* the same cgroups named on both sides */
	assert_int_equal(rsp_hist__compare(ca, cb, NULL, &d), 0);
	for (size_t i = 0; i < d->n; i++)
		assert_false(d->v[i].unsure);
	rsp_hist_diff__delete(d);
	assert_int_equal(cg_profile(ca, "/a")->count, 100);
	assert_int_equal(cg_profile(ca, "/c")->count, 10);
	assert_null(cg_profile(ca, "/b"));
	assert_int_equal(cg_profile(ca, RSP_CGROUPQ_OTHER_CGROUPS)->count, 50);
	assert_int_equal(cg_profile(cb, "/a")->count, 100);
	assert_int_equal(cg_profile(cb, "/c")->count, 60);
	assert_null(cg_profile(cb, "/b"));
	assert_int_equal(cg_profile(cb, RSP_CGROUPQ_OTHER_CGROUPS)->count, 10);
	rsp_hist_set__delete(ca);
	rsp_hist_set__delete(cb);
	rsp_hist_set__delete(a);
	rsp_hist_set__delete(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_pair),
		cmocka_unit_test(test_runtime_forms),
		cmocka_unit_test(test_not_containers),
		cmocka_unit_test(test_parse_proc),
		cmocka_unit_test(test_read_proc),
		cmocka_unit_test(test_subtree_and_prefix),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_maps_cgroup),
		cmocka_unit_test(test_request_filters),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_prom_cgroups),
		cmocka_unit_test(test_hist_by_cgroup),
		cmocka_unit_test(test_hist_cgroup_json),
		cmocka_unit_test(test_rank),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
