// SPDX-License-Identifier: LGPL-2.1
/*
 * Latency profiles: bucket math, the names of operations and subjects,
 * block device names. The store is hist_store.c, sets and analyses
 * hist_set.c and hist_compare.c, output lib/format/hist_render.c.
 */
#include <errno.h>
#include <math.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rsp/cgroup.h>
#include <rsp/hist.h>
#include <rsp/syscall.h>
#include <rsp/timeline.h>
#include <rsp/parse.h>
#include "internal/fmt.h"
#include "internal/hist.h"

unsigned rsp_hist__nr_buckets(unsigned r)
{
	return RSP_HIST_NR_BUCKETS(r == 2 ? 2 : 1);
}

uint64_t rsp_hist__bucket_low(unsigned b, unsigned r)
{
	unsigned k;

	if (!b)
		return 0;
	if (r != 2)
		return b > 64 ? UINT64_MAX : 1ull << (b - 1);
	if (b > 128)
		return UINT64_MAX;
	k = (b - 1) / 2;
	if (b & 1)
		return 1ull << k;
	/* ceil(2^k sqrt2): 2^k sqrt2 is irrational, so floor + 1. */
	return (RSP_HIST_SQRT2_Q63 >> (63 - k)) + 1;
}

uint64_t rsp_hist__bucket_high(unsigned b, unsigned r)
{
	unsigned last = RSP_HIST_NR_BUCKETS(r == 2 ? 2 : 1) - 1;

	if (b >= last)
		return UINT64_MAX;
	return rsp_hist__bucket_low(b + 1, r) - 1;
}

static const char *const op_kinds[RSP_HOP__NR] = {
	"offcpu", "runq", "blk_queue", "blk_service", "irq", "softirq", "syscall",
};

/* softirq vectors are named by the timeline's table (rsp_softirq__name()) */
_Static_assert(RSP_HIST_NR_SOFTIRQS == RSP_SOFTIRQ__NR, "softirq vectors");

static const char *const subject_kinds[RSP_HSUBJ__NR] = {
	"system", "process", "thread", "other_processes", "other_threads", "comm", "cgroup",
};

const char *rsp_hist__op_kind_name(unsigned kind)
{
	return kind < RSP_HOP__NR ? op_kinds[kind] : NULL;
}

const char *rsp_hist__sleep_reason_name(unsigned reason)
{
	return reason < RSP_SR__NR ? rsp_sleep_reason__name((enum rsp_sleep_reason)reason) : NULL;
}

const char *rsp_hist__subject_kind_name(unsigned kind)
{
	return kind < RSP_HSUBJ__NR ? subject_kinds[kind] : NULL;
}

/* A cgroup's path, or a group that is none ("(unknown)", "(other user)", ...). */
static void cgroup_label(const char *cg, unsigned column, char *buf, size_t n)
{
	if (!cg || cg[0] != '/')
		snprintf(buf, n, "%s", cg ? cg : "(unknown)");
	else if (column) /* "docker:<12 hex>", or the path's tail: a heading names it whole */
		rsp_cgroup__short(cg, column, buf, n);
	else
		snprintf(buf, n, "cgroup %s", cg);
}

/* The one place a subject is worded: headings and JSON whole, tables short. */
const char *rsp_hist_subject__format(const struct rsp_hist_subject *s, unsigned column, char *buf,
				     size_t n)
{
	char comm[RSP_FMT_NAME_MAX];
	bool hidden = s->other_user;

	rsp_fmt__name(comm, sizeof(comm), hidden ? "(other user)" : s->comm);
	switch (s->kind) {
	case RSP_HSUBJ_PROCESS:
		if (column || hidden)
			snprintf(buf, n, "pid %u %s", s->pid, comm);
		else
			snprintf(buf, n, "process %u (%s)", s->pid, comm);
		break;
	case RSP_HSUBJ_THREAD:
		if (column)
			snprintf(buf, n, "tid %u %s", s->tid, comm);
		else if (hidden)
			snprintf(buf, n, "thread %u of pid %u %s", s->tid, s->pid, comm);
		else
			snprintf(buf, n, "thread %u (%s) of %u", s->tid, comm, s->pid);
		break;
	case RSP_HSUBJ_OTHER_PROCESS:
		snprintf(buf, n, "%s", column ? "other procs" : "other processes");
		break;
	case RSP_HSUBJ_OTHER_THREAD:
		snprintf(buf, n, "other threads");
		break;
	case RSP_HSUBJ_COMM:
		snprintf(buf, n, "comm %s", comm);
		break;
	case RSP_HSUBJ_CGROUP:
		cgroup_label(s->cgroup, column, buf, n);
		break;
	default:
		snprintf(buf, n, "system");
		break;
	}
	return buf;
}

/* Kernel dev_t: 12 bits of major, 20 of minor. */
#define KDEV_MAJOR(d) ((d) >> 20)
#define KDEV_MINOR(d) ((d) & ((1u << 20) - 1))

int rsp_hist__dev_name(uint32_t dev, char *buf, size_t n)
{
	char path[96], line[128];
	FILE *f;
	int ret = -ENOENT;

	snprintf(buf, n, "%u:%u", KDEV_MAJOR(dev), KDEV_MINOR(dev));
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", KDEV_MAJOR(dev),
		 KDEV_MINOR(dev));
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, n, "%s", line + 8);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static int parse_majmin(const char *s, uint32_t *dev)
{
	char buf[32];
	const char *colon = strchr(s, ':');
	uint64_t maj, min;

	if (!colon || (size_t)(colon - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(colon - s));
	buf[colon - s] = '\0';
	if (rsp_parse__u64(buf, 0, 4095, &maj) ||
	    rsp_parse__u64(colon + 1, 0, (1u << 20) - 1, &min))
		return -EINVAL;
	*dev = (uint32_t)(maj << 20 | min);
	return 0;
}

int rsp_hist__dev_parse(const char *s, uint32_t *dev)
{
	char path[96], line[32];
	FILE *f;
	int ret;

	if (!s || !*s)
		return -EINVAL;
	if (strchr(s, ':'))
		return parse_majmin(s, dev);
	if (strchr(s, '/') || strlen(s) > 32)
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", s);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	ret = fgets(line, sizeof(line), f) ? 0 : -ENOENT;
	fclose(f);
	if (ret)
		return ret;
	line[strcspn(line, "\n")] = '\0';
	return parse_majmin(line, dev);
}

const char *rsp_hist__fmt_ns(double ns, char *buf, size_t n)
{
	if (ns < 1e3)
		snprintf(buf, n, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, n, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, n, "%.3g ms", ns / 1e6);
	else if (ns < 1e12)
		snprintf(buf, n, "%.3g s", ns / 1e9);
	else if (ns < 1e14)
		snprintf(buf, n, "%.0f s", ns / 1e9);
	else
		snprintf(buf, n, "%.2e s", ns / 1e9); /* at most 10 columns */
	return buf;
}

void rsp_hist__op_name(unsigned kind, uint32_t arg, const char *irq_name, char *buf, size_t n)
{
	switch (kind) {
	case RSP_HOP_OFFCPU:
		snprintf(buf, n, "offcpu:%s", rsp_sleep_reason__name((enum rsp_sleep_reason)arg));
		break;
	case RSP_HOP_RUNQ:
		snprintf(buf, n, "runq");
		break;
	case RSP_HOP_BLK_QUEUE:
	case RSP_HOP_BLK_SERVICE:
		snprintf(buf, n, "%s:%u:%u", op_kinds[kind], KDEV_MAJOR(arg), KDEV_MINOR(arg));
		break;
	case RSP_HOP_IRQ:
		snprintf(buf, n, "irq:%s", irq_name ? irq_name : "(other)");
		break;
	case RSP_HOP_SOFTIRQ:
		if (arg < RSP_HIST_NR_SOFTIRQS)
			snprintf(buf, n, "softirq:%s", rsp_softirq__name(arg));
		else
			snprintf(buf, n, "softirq:%u", arg);
		break;
	case RSP_HOP_SYSCALL:
		rsp_syscall__op_name(arg, buf, n);
		break;
	default:
		snprintf(buf, n, "op%u:%u", kind, arg);
		break;
	}
}

/* A softirq vector by its name in any case, -1 if none. */
static int softirq_of(const char *s)
{
	for (unsigned i = 0; i < RSP_SOFTIRQ__NR; i++)
		if (!strcasecmp(rsp_softirq__name(i), s))
			return (int)i;
	return -1;
}

static int bad_op(const char *s, struct rsp_buf *err)
{
	rsp_buf__printf(
		err,
		"unknown operation '%s'; use offcpu[:REASON], runq, blk_queue[:DEV], "
		"blk_service[:DEV], irq[:NAME], softirq[:VECTOR] or syscall[:NAME] (see 'rspctl "
		"help hist')",
		s);
	return -EINVAL;
}

static int parse_op_arg(unsigned kind, const char *s, const char *arg, uint32_t *num, bool *has_num,
			struct rsp_buf *err)
{
	uint64_t v;
	int i;

	switch (kind) {
	case RSP_HOP_RUNQ:
		rsp_buf__printf(err, "operation '%s': runq takes no argument", s);
		return -EINVAL;
	case RSP_HOP_OFFCPU:
		for (i = RSP_SR__NR - 1; i >= 0; i--)
			if (!strcmp(rsp_sleep_reason__name((enum rsp_sleep_reason)i), arg))
				break;
		if (i < 0) {
			rsp_buf__printf(err,
					"operation '%s': unknown sleep reason '%s'; use block_io, "
					"network, lock, poll, pipe, timeout, sleep, preemption, "
					"page_fault or unknown",
					s, arg);
			return -EINVAL;
		}
		*num = (uint32_t)i;
		*has_num = true;
		return 0;
	case RSP_HOP_SOFTIRQ:
		i = softirq_of(arg);
		if (i < 0 && !rsp_parse__u64(arg, 0, RSP_HIST_NR_SOFTIRQS - 1, &v))
			i = (int)v;
		if (i < 0) {
			rsp_buf__printf(
				err,
				"operation '%s': unknown softirq '%s'; use HI, TIMER, NET_TX, "
				"NET_RX, BLOCK, IRQ_POLL, TASKLET, SCHED, HRTIMER, RCU or 0..9",
				s, arg);
			return -EINVAL;
		}
		*num = (uint32_t)i;
		*has_num = true;
		return 0;
	case RSP_HOP_SYSCALL:
		if (rsp_syscall__parse(arg, num)) {
			rsp_buf__printf(err,
					"operation '%s': '%s' is not a system call of this "
					"architecture; give its name (read, fsync) or number",
					s, arg);
			return -EINVAL;
		}
		*has_num = true;
		return 0;
	default:
		if (!*arg) {
			rsp_buf__printf(err, "operation '%s': empty argument after ':'", s);
			return -EINVAL;
		}
		return 0; /* devices and irq names: the caller resolves them */
	}
}

int rsp_hist__parse_op(const char *s, unsigned *kind, const char **arg, uint32_t *num,
		       bool *has_num, struct rsp_buf *err)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	int k = -1;

	*arg = NULL;
	*num = 0;
	*has_num = false;
	for (unsigned i = 0; i < RSP_HOP__NR; i++)
		if (strlen(op_kinds[i]) == len && !strncmp(op_kinds[i], s, len))
			k = (int)i;
	if (k < 0)
		return bad_op(s, err);
	*kind = (unsigned)k;
	if (!colon)
		return 0;
	*arg = colon + 1;
	return parse_op_arg(*kind, s, *arg, num, has_num, err);
}

double rsp_hist__bucket_mid(unsigned b, unsigned r)
{
	uint64_t lo = rsp_hist__bucket_low(b, r), hi = rsp_hist__bucket_high(b, r);

	if (!lo)
		return 0;
	if (hi <= lo)
		return (double)lo;
	return sqrt((double)lo * ((double)hi + 1.0));
}
