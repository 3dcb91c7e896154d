/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_CGROUPQ_H
#define RSP_INTERNAL_CGROUPQ_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <rsp/buf.h>
#include <rsp/hist.h>
#include <rsp/maps.h>

/*
 * A process's cgroup, container and namespaced pid in answers
 * (lib/format/cgroupq.c), as the process model knows them (rsp/cgroup.h).
 */

/** rsp_cgroupq__json() - add "cgroup", "container", "nspid" to @o where known. */
void rsp_cgroupq__json(json_t *o, const struct rsp_maps *m, uint32_t pid, uint64_t time);

/**
 * rsp_cgroupq__text() - the text column: the cgroup shortened to @width, and
 * "ns:N" when the namespaced pid differs from @pid; "" if nothing is known.
 * Return: @buf.
 */
const char *rsp_cgroupq__text(const struct rsp_maps *m, uint32_t pid, uint64_t time, unsigned width,
			      char *buf, size_t size);

/**
 * rsp_cgroupq__line() - "cgroup PATH, docker container ID12, pid N in its
 * pid namespace" (the parts known; no newline) into @out.
 * Return: whether anything is known.
 */
bool rsp_cgroupq__line(const struct rsp_maps *m, uint32_t pid, uint64_t time, struct rsp_buf *out);

/* Rows grouped by cgroup (--by cgroup): bounded by the rows grouped. */
struct rsp_cgroupq_row {
	const char *cgroup; /* owned by the model, or "(other user)", "(unknown)" */
	uint64_t samples, kernel, period, threads;
};
struct rsp_cgroupq_by {
	struct rsp_cgroupq_row *rows;
	size_t n, cap;
};

/** rsp_cgroupq_by__add() - count into @cgroup's row. Return: 0 or -ENOMEM. */
int rsp_cgroupq_by__add(struct rsp_cgroupq_by *b, const char *cgroup, uint64_t samples,
			uint64_t kernel, uint64_t period, bool new_thread);
/** rsp_cgroupq_by__sort() - heaviest first (samples, then period). */
void rsp_cgroupq_by__sort(struct rsp_cgroupq_by *b);
void rsp_cgroupq_by__exit(struct rsp_cgroupq_by *b);

/*
 * hist --by cgroup: one profile per (op, cgroup) merged from @in's process
 * profiles (RSP_HSUBJ_CGROUP subjects). @group_of names a process's group:
 * its cgroup path, "(unknown)" or "(other user)" (strings that outlive the
 * call); the evicted processes' profiles are "(other processes)"; other
 * subjects are left out. The @top cgroups with the most total latency keep
 * their own profiles, the others merge into "(other cgroups)": at most
 * @top + 4 profiles per op. @out: a new set with @in's range (free with
 * rsp_hist_set__delete()). Return: 0 or -ENOMEM.
 */
#define RSP_CGROUPQ_OTHER_CGROUPS   "(other cgroups)"
#define RSP_CGROUPQ_OTHER_PROCESSES "(other processes)"
int rsp_cgroupq__hist(const struct rsp_hist_set *in, unsigned top,
		      const char *(*group_of)(void *ctx, uint32_t pid), void *ctx,
		      struct rsp_hist_set **out);

/**
 * rsp_cgroupq__cut() - two sides of a diff by cgroup (rsp_cgroupq__hist()
 * with no cut: @top UINT_MAX), cut to the same @top cgroups: ranked by both
 * sides' latency together, the rest merged into "(other cgroups)" on each
 * side. Cut apart, a cgroup 21st in the baseline and 20th now was "(other
 * cgroups)" on one side and new on the other. Return: 0 or -ENOMEM.
 */
int rsp_cgroupq__cut(struct rsp_hist_set **a, struct rsp_hist_set **b, unsigned top);

/* A group of profiles and its total latency (rsp_cgroupq__rank()). */
struct rsp_cgroupq_rank {
	const char *name;
	uint64_t sum;
};

/**
 * rsp_cgroupq__rank() - the groups that @name_of gives @in's profiles (NULL:
 * in none), each with the sum of its profiles' latency, heaviest first (ties:
 * by name), as hist --by cgroup and the metrics' cgroup series both rank
 * them. @out: a new array (free() it). Return: the number of groups, or
 * -ENOMEM.
 */
long rsp_cgroupq__rank(const struct rsp_hist_set *in,
		       const char *(*name_of)(void *ctx, const struct rsp_hist_profile *p),
		       void *ctx, struct rsp_cgroupq_rank **out);

/** rsp_cgroupq__rank_index() - @name's rank among the first @top of @v, or @top. */
unsigned rsp_cgroupq__rank_index(const struct rsp_cgroupq_rank *v, size_t n, unsigned top,
				 const char *name);

#endif
