// SPDX-License-Identifier: LGPL-2.1
/*
 * The process model: per pid, incarnations (a pid is reused after exit),
 * each with its executable regions over time and its names over time.
 *
 * A region is valid in [t_from, t_to). An incarnation holds its live
 * regions (t_to = UINT64_MAX) sorted by address and disjoint, and the
 * regions that were replaced ("dead") for the records that still refer to
 * them. A lookup (pid, addr, time) picks the latest incarnation born at or
 * before the time, then the live region holding the address if it was
 * already there at that time, else a dead one valid then.
 *
 * Rules for the order of sources. rspd enables the events, then reads
 * /proc, then applies the window's records, some of which are older than
 * the /proc snapshot. So:
 *  - a region from a snapshot of a process the model did not know is valid
 *    from the start of time (t_from 0): it was there before anything we
 *    recorded;
 *  - a record that maps exactly what is already live (same range, offset,
 *    object, protection) changes nothing: replays are harmless;
 *  - a FORK older than the child's snapshot is the same incarnation: its
 *    birth time is set, the snapshot's regions are kept;
 *  - an exec (COMM with PERF_RECORD_MISC_COMM_EXEC) closes every live
 *    region at its time; the new image's MMAP2 records follow it (the kernel
 *    emits the exec COMM in begin_new_exec(), before mapping the image).
 *  - EXIT of a thread whose tid is its pid ends the incarnation (kept for
 *    lookups until pruned); other threads' exits change nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <rsp/record.h>
#include "internal/maps.h"
#include "internal/u64map.h"
#include "internal/hash.h"
#include "internal/gallop.h"

#define T_NEVER		   UINT64_MAX
#define DEFAULT_MAX_EXITED 32768

struct rsp_map {
	uint64_t start, end, pgoff;
	uint64_t t_from, t_to;
	struct rsp_dso *dso;
	uint32_t prot, flags;
	bool seen; /* by the snapshot being applied */
};

struct map_vec {
	struct rsp_map *v;
	uint32_t n, cap;
};

struct comm_ent {
	uint64_t t;
	char comm[16];
};

struct rsp_proc {
	uint32_t pid;
	uint32_t uid;
	uint64_t t_birth;		/* 0: before the model knew it */
	uint64_t t_exit;		/* T_NEVER while alive */
	uint64_t t_snap;		/* time of its last /proc snapshot, 0 if none */
	uint64_t t_exec;		/* time of its last exec, 0 if none */
	uint64_t pass;			/* last /proc pass that saw it */
	bool fresh;			/* created by the snapshot being applied */
	struct rsp_proc *older;		/* previous incarnation of the pid */
	struct rsp_proc *xprev, *xnext; /* the list of exited incarnations */
	bool on_xlist;
	struct map_vec live, dead;
	struct comm_ent *comms;
	uint32_t nr_comms, cap_comms;
	char *cgroup; /* v2 path as last read from /proc (rsp_maps__set_cgroup()); NULL: unknown */
	uint32_t nspid; /* pid in its innermost pid namespace; 0: unknown */
};

struct rsp_maps {
	struct rsp_u64map pids; /* pid -> index in slots of its latest incarnation */
	struct rsp_proc **slots;
	uint32_t nr_slots, cap_slots;
	uint32_t *free_slots;
	uint32_t nr_free;
	struct rsp_dso **buckets;
	size_t nr_buckets, nr_dsos, dso_bytes;
	struct rsp_proc *xhead, *xtail; /* exited, oldest first */
	size_t nr_exited, max_exited;
	uint64_t pass;
	struct rsp_maps_stats st;
};

/* ---- objects -------------------------------------------------------- */

static bool has_prefix(const char *s, size_t n, const char *pfx)
{
	size_t k = strlen(pfx);

	return n >= k && !memcmp(s, pfx, k);
}

static enum rsp_dso_type classify(const char *path, size_t n)
{
	if (!n || has_prefix(path, n, "//anon") || has_prefix(path, n, "[anon") ||
	    has_prefix(path, n, "memfd:") || has_prefix(path, n, "/memfd:") ||
	    has_prefix(path, n, "/dev/zero") || has_prefix(path, n, "/anon_hugepage"))
		return RSP_DSO_ANON;
	if (n == 6 && !memcmp(path, "[vdso]", 6))
		return RSP_DSO_VDSO;
	if (path[0] == '[')
		return RSP_DSO_SPECIAL;
	return RSP_DSO_FILE;
}

#define DELETED " (deleted)"

static uint64_t dso_hash(const struct rsp_dso *d)
{
	uint64_t h = RSP_HASH_INIT;

	h = rsp_hash__bytes(h, d->path, d->path_len);
	h = rsp_hash__bytes(h, &d->maj, sizeof(d->maj));
	h = rsp_hash__bytes(h, &d->min, sizeof(d->min));
	h = rsp_hash__bytes(h, &d->ino, sizeof(d->ino));
	h = rsp_hash__bytes(h, &d->ino_generation, sizeof(d->ino_generation));
	h = rsp_hash__bytes(h, d->build_id, d->build_id_size);
	return h ^ d->deleted;
}

static bool dso_equal(const struct rsp_dso *a, const struct rsp_dso *b)
{
	return a->hash == b->hash && a->path_len == b->path_len && a->maj == b->maj &&
	       a->min == b->min && a->ino == b->ino && a->ino_generation == b->ino_generation &&
	       a->deleted == b->deleted && a->build_id_size == b->build_id_size &&
	       !memcmp(a->build_id, b->build_id, a->build_id_size) &&
	       !memcmp(a->path, b->path, a->path_len);
}

static int dso_rehash(struct rsp_maps *m)
{
	size_t nb = m->nr_buckets ? m->nr_buckets * 2 : 256;
	struct rsp_dso **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_buckets; i++) {
		struct rsp_dso *d = m->buckets[i], *next;

		for (; d; d = next) {
			next = d->hnext;
			d->hnext = b[d->hash & (nb - 1)];
			b[d->hash & (nb - 1)] = d;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nr_buckets = nb;
	return 0;
}

/* The interned object of @mi, with one more reference; NULL on ENOMEM. */
static struct rsp_dso *dso_get(struct rsp_maps *m, const struct rsp_map_info *mi)
{
	const char *path = mi->path ? mi->path : "";
	size_t n = mi->path ? mi->path_len : 0;
	size_t dl = sizeof(DELETED) - 1;
	struct rsp_dso *d, *key;

	n = strnlen(path, n);
	key = calloc(1, sizeof(*key) + n + 1);
	if (!key)
		return NULL;
	if (n > dl && !memcmp(path + n - dl, DELETED, dl)) {
		key->deleted = true;
		n -= dl;
	}
	memcpy(key->path, path, n);
	key->path_len = n;
	key->type = (uint8_t)classify(key->path, n);
	key->maj = mi->maj;
	key->min = mi->min;
	key->ino = mi->ino;
	key->ino_generation = mi->ino_generation;
	if (mi->build_id && mi->build_id_size) {
		key->build_id_size = mi->build_id_size > 20 ? 20 : mi->build_id_size;
		memcpy(key->build_id, mi->build_id, key->build_id_size);
	}
	key->hash = dso_hash(key);
	if (m->nr_dsos >= m->nr_buckets && dso_rehash(m)) {
		free(key);
		return NULL;
	}
	for (d = m->buckets[key->hash & (m->nr_buckets - 1)]; d; d = d->hnext) {
		if (dso_equal(d, key)) {
			free(key);
			d->refs++;
			return d;
		}
	}
	key->refs = 1;
	key->hnext = m->buckets[key->hash & (m->nr_buckets - 1)];
	m->buckets[key->hash & (m->nr_buckets - 1)] = key;
	m->nr_dsos++;
	m->dso_bytes += sizeof(*key) + n + 1;
	return key;
}

static void dso_put(struct rsp_maps *m, struct rsp_dso *d)
{
	struct rsp_dso **pp;

	if (!d || --d->refs)
		return;
	for (pp = &m->buckets[d->hash & (m->nr_buckets - 1)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == d) {
			*pp = d->hnext;
			break;
		}
	}
	m->nr_dsos--;
	m->dso_bytes -= sizeof(*d) + d->path_len + 1;
	free(d);
}

/* ---- region vectors ------------------------------------------------- */

static int vec_reserve(struct map_vec *v, uint32_t more)
{
	uint32_t cap;
	struct rsp_map *p;

	if (v->n + more <= v->cap)
		return 0;
	cap = v->cap ? v->cap : 8;
	while (cap < v->n + more)
		cap *= 2;
	p = realloc(v->v, (size_t)cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	v->v = p;
	v->cap = cap;
	return 0;
}

static void vec_free(struct rsp_maps *m, struct map_vec *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		dso_put(m, v->v[i].dso);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

/* First live region whose end is above @addr (regions are sorted and disjoint). */
static uint32_t live_lower(const struct map_vec *v, uint64_t addr)
{
	return (uint32_t)rsp_gallop__above(v->v, sizeof(v->v[0]), offsetof(struct rsp_map, end),
					   v->n, addr);
}

/* Replace live[i, j) with @nrep regions (capacity reserved by the caller). */
static void live_splice(struct map_vec *v, uint32_t i, uint32_t j, const struct rsp_map *rep,
			uint32_t nrep)
{
	memmove(&v->v[i + nrep], &v->v[j], (size_t)(v->n - j) * sizeof(v->v[0]));
	memcpy(&v->v[i], rep, (size_t)nrep * sizeof(rep[0]));
	v->n = v->n - (j - i) + nrep;
}

static int dead_add(struct map_vec *dead, const struct rsp_map *r, uint64_t t_to)
{
	if (r->t_from >= t_to)
		return 0; /* never valid: replaced at the instant it appeared */
	if (vec_reserve(dead, 1))
		return -ENOMEM;
	dead->v[dead->n] = *r;
	dead->v[dead->n].t_to = t_to;
	dead->v[dead->n].dso->refs++;
	dead->n++;
	return 0;
}

/*
 * Map @mi over live regions at @t: the parts of older regions it covers
 * become dead at @t, what sticks out on either side stays live.
 */
static int map_region(struct rsp_maps *m, struct rsp_proc *p, uint64_t t, uint64_t t_from,
		      const struct rsp_map_info *mi)
{
	struct map_vec *v = &p->live;
	struct rsp_map rep[3], nm = {0};
	uint32_t i, j, nrep = 0;
	struct rsp_dso *d;

	if (mi->end <= mi->start)
		return 0;
	d = dso_get(m, mi);
	if (!d)
		return -ENOMEM;
	i = live_lower(v, mi->start);
	if (i < v->n && v->v[i].start == mi->start && v->v[i].end == mi->end &&
	    v->v[i].pgoff == mi->pgoff && v->v[i].dso == d && v->v[i].prot == mi->prot) {
		v->v[i].seen = true;
		dso_put(m, d);
		return 0;
	}
	for (j = i; j < v->n && v->v[j].start < mi->end; j++)
		;
	if (vec_reserve(v, 3) || vec_reserve(&p->dead, j - i)) {
		dso_put(m, d);
		return -ENOMEM;
	}
	if (i < j && v->v[i].start < mi->start) {
		rep[nrep] = v->v[i];
		rep[nrep].end = mi->start;
		rep[nrep++].dso->refs++;
	}
	nm = (struct rsp_map){.start = mi->start,
			      .end = mi->end,
			      .pgoff = mi->pgoff,
			      .t_from = t_from,
			      .t_to = T_NEVER,
			      .dso = d,
			      .prot = mi->prot,
			      .flags = mi->flags,
			      .seen = true};
	rep[nrep++] = nm;
	if (i < j && v->v[j - 1].end > mi->end) {
		rep[nrep] = v->v[j - 1];
		rep[nrep].pgoff += mi->end - v->v[j - 1].start;
		rep[nrep].start = mi->end;
		rep[nrep++].dso->refs++;
	}
	for (uint32_t k = i; k < j; k++) {
		struct rsp_map piece = v->v[k];

		if (piece.start < mi->start) {
			piece.pgoff += mi->start - piece.start;
			piece.start = mi->start;
		}
		if (piece.end > mi->end)
			piece.end = mi->end;
		dead_add(&p->dead, &piece, t); /* capacity reserved above */
		dso_put(m, v->v[k].dso);
	}
	live_splice(v, i, j, rep, nrep);
	return 0;
}

/* Every live region ends at @t (exec, or a snapshot that no longer lists it). */
static void close_live(struct rsp_maps *m, struct rsp_proc *p, uint64_t t, bool only_unseen)
{
	uint32_t keep = 0;

	for (uint32_t k = 0; k < p->live.n; k++) {
		struct rsp_map *r = &p->live.v[k];

		if (only_unseen && r->seen) {
			p->live.v[keep++] = *r;
			continue;
		}
		if (dead_add(&p->dead, r, t))
			m->st.bad_records++; /* ENOMEM: the history is lost, not the model */
		dso_put(m, r->dso);
	}
	p->live.n = keep;
}

/* ---- processes ------------------------------------------------------ */

static struct rsp_proc *latest(const struct rsp_maps *m, uint32_t pid)
{
	uint32_t idx;

	if (rsp_u64map__get(&m->pids, pid, &idx))
		return NULL;
	return m->slots[idx];
}

static struct rsp_proc *incarnation(const struct rsp_maps *m, uint32_t pid, uint64_t t)
{
	struct rsp_proc *p = latest(m, pid);

	while (p && p->t_birth > t)
		p = p->older;
	return p;
}

static int set_latest(struct rsp_maps *m, uint32_t pid, struct rsp_proc *p)
{
	uint32_t idx;

	if (!rsp_u64map__get(&m->pids, pid, &idx)) {
		m->slots[idx] = p;
		return 0;
	}
	if (m->nr_free) {
		idx = m->free_slots[--m->nr_free];
	} else {
		if (m->nr_slots == m->cap_slots) {
			uint32_t cap = m->cap_slots ? m->cap_slots * 2 : 256;
			struct rsp_proc **s = realloc(m->slots, (size_t)cap * sizeof(*s));
			uint32_t *f;

			if (!s)
				return -ENOMEM;
			m->slots = s;
			f = realloc(m->free_slots, (size_t)cap * sizeof(*f));
			if (!f)
				return -ENOMEM;
			m->free_slots = f;
			m->cap_slots = cap;
		}
		idx = m->nr_slots++;
	}
	if (rsp_u64map__put(&m->pids, pid, idx)) {
		m->free_slots[m->nr_free++] = idx;
		return -ENOMEM;
	}
	m->slots[idx] = p;
	return 0;
}

static void forget_pid(struct rsp_maps *m, uint32_t pid)
{
	uint32_t idx;

	if (rsp_u64map__get(&m->pids, pid, &idx))
		return;
	rsp_u64map__del(&m->pids, pid);
	m->slots[idx] = NULL;
	m->free_slots[m->nr_free++] = idx;
}

/* A new incarnation of @pid, the latest one. */
static struct rsp_proc *proc_new(struct rsp_maps *m, uint32_t pid, uint64_t t_birth)
{
	struct rsp_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->uid = UINT32_MAX;
	p->t_birth = t_birth;
	p->t_exit = T_NEVER;
	p->older = latest(m, pid);
	if (set_latest(m, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static void proc_free(struct rsp_maps *m, struct rsp_proc *p)
{
	vec_free(m, &p->live);
	vec_free(m, &p->dead);
	free(p->comms);
	free(p->cgroup);
	free(p);
}

static void xlist_unlink(struct rsp_maps *m, struct rsp_proc *p)
{
	if (!p->on_xlist)
		return;
	if (p->xprev)
		p->xprev->xnext = p->xnext;
	else
		m->xhead = p->xnext;
	if (p->xnext)
		p->xnext->xprev = p->xprev;
	else
		m->xtail = p->xprev;
	p->xprev = p->xnext = NULL;
	p->on_xlist = false;
	m->nr_exited--;
}

/* Remove one incarnation from its pid's chain and free it. */
static void proc_drop(struct rsp_maps *m, struct rsp_proc *p)
{
	struct rsp_proc *head = latest(m, p->pid), *q;

	xlist_unlink(m, p);
	if (head == p) {
		if (p->older)
			set_latest(m, p->pid, p->older);
		else
			forget_pid(m, p->pid);
	} else {
		for (q = head; q && q->older != p; q = q->older)
			;
		if (q)
			q->older = p->older;
	}
	proc_free(m, p);
}

static void mark_exited(struct rsp_maps *m, struct rsp_proc *p, uint64_t t)
{
	if (p->t_exit != T_NEVER) {
		if (t < p->t_exit)
			p->t_exit = t; /* a later sweep guessed; the record knows */
		return;
	}
	p->t_exit = t;
	p->xprev = m->xtail;
	p->xnext = NULL;
	if (m->xtail)
		m->xtail->xnext = p;
	else
		m->xhead = p;
	m->xtail = p;
	p->on_xlist = true;
	m->nr_exited++;
	while (m->nr_exited > m->max_exited && m->xhead) {
		m->st.dropped_exited++;
		proc_drop(m, m->xhead);
	}
}

/* The process @pid now (at @t): the latest incarnation, created if unknown. */
static struct rsp_proc *proc_get(struct rsp_maps *m, uint32_t pid, uint64_t t)
{
	struct rsp_proc *p = latest(m, pid);

	if (p && p->t_exit == T_NEVER)
		return p;
	/* Unknown, or a reused pid whose fork we did not see. */
	return proc_new(m, pid, p ? (p->t_exit < t ? p->t_exit + 1 : t) : 0);
}

static int comm_set(struct rsp_proc *p, uint64_t t, const char *comm, size_t len)
{
	uint32_t pos = p->nr_comms;
	struct comm_ent e = {.t = t};

	memcpy(e.comm, comm, len < 15 ? len : 15);
	e.comm[15] = '\0';
	while (pos && p->comms[pos - 1].t > t)
		pos--;
	if (pos && !strcmp(p->comms[pos - 1].comm, e.comm))
		return 0;
	if (p->nr_comms == p->cap_comms) {
		uint32_t cap = p->cap_comms ? p->cap_comms * 2 : 2;
		struct comm_ent *c = realloc(p->comms, (size_t)cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->comms = c;
		p->cap_comms = cap;
	}
	memmove(&p->comms[pos + 1], &p->comms[pos], (size_t)(p->nr_comms - pos) * sizeof(e));
	p->comms[pos] = e;
	p->nr_comms++;
	return 0;
}

static const char *comm_at(const struct rsp_proc *p, uint64_t t)
{
	const char *c = NULL;

	for (uint32_t i = 0; i < p->nr_comms; i++) {
		if (p->comms[i].t > t && c)
			break;
		c = p->comms[i].comm;
	}
	return c;
}

/* ---- updates -------------------------------------------------------- */

int rsp_maps__mmap(struct rsp_maps *m, uint32_t pid, uint64_t time, const struct rsp_map_info *mi)
{
	struct rsp_proc *p = proc_get(m, pid, time);

	if (!p)
		return -ENOMEM;
	m->st.mmaps++;
	return map_region(m, p, time, time, mi);
}

int rsp_maps__comm(struct rsp_maps *m, uint32_t pid, uint32_t tid, uint64_t time, const char *comm,
		   size_t len, bool exec)
{
	struct rsp_proc *p;

	m->st.comms++;
	if (tid != pid && !exec)
		return 0; /* a thread's own name: the process keeps its name */
	p = proc_get(m, pid, time);
	if (!p)
		return -ENOMEM;
	if (exec && p->t_exec != time) {
		m->st.execs++;
		p->t_exec = time;
		close_live(m, p, time, false);
	}
	return comm_set(p, time, comm, strnlen(comm, len));
}

/* Copy @parent's regions valid at @t into @child, from @t on. */
static int copy_maps(struct rsp_maps *m, struct rsp_proc *child, const struct rsp_proc *parent,
		     uint64_t t)
{
	const struct map_vec *src[2] = {&parent->live, &parent->dead};
	struct map_vec *v = &child->live;

	for (int s = 0; s < 2; s++) {
		for (uint32_t k = 0; k < src[s]->n; k++) {
			const struct rsp_map *r = &src[s]->v[k];

			if (r->t_from > t || r->t_to <= t)
				continue;
			if (vec_reserve(v, 1))
				return -ENOMEM;
			v->v[v->n] = *r;
			v->v[v->n].t_from = t;
			v->v[v->n].t_to = T_NEVER;
			r->dso->refs++;
			v->n++;
		}
	}
	/* Live and dead regions valid at one time are disjoint: sort by address. */
	for (uint32_t a = 1; a < v->n; a++) {
		struct rsp_map x = v->v[a];
		uint32_t b = a;

		for (; b && v->v[b - 1].start > x.start; b--)
			v->v[b] = v->v[b - 1];
		v->v[b] = x;
	}
	return 0;
}

int rsp_maps__fork(struct rsp_maps *m, uint32_t pid, uint32_t ppid, uint64_t time)
{
	struct rsp_proc *cur = latest(m, pid), *child;
	const struct rsp_proc *parent;
	const char *comm;

	m->st.forks++;
	if (pid == ppid)
		return proc_get(m, pid, time) ? 0 : -ENOMEM; /* a new thread */
	if (cur && cur->t_birth == time)
		return 0; /* replayed */
	if (cur && cur->t_exit == T_NEVER && cur->t_snap > time) {
		cur->t_birth = time; /* the snapshot already holds this process */
		return 0;
	}
	if (cur && cur->t_exit == T_NEVER)
		mark_exited(m, cur, time); /* its exit was not seen */
	child = proc_new(m, pid, time);
	if (!child)
		return -ENOMEM;
	parent = incarnation(m, ppid, time);
	if (!parent)
		return 0;
	child->uid = parent->uid;
	if (parent->cgroup && !(child->cgroup = strdup(parent->cgroup)))
		return -ENOMEM; /* a child starts in its parent's cgroup */
	comm = comm_at(parent, time);
	if (comm && comm_set(child, time, comm, strlen(comm)))
		return -ENOMEM;
	return copy_maps(m, child, parent, time);
}

int rsp_maps__exit(struct rsp_maps *m, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct rsp_proc *p;

	m->st.exits++;
	if (tid != pid)
		return 0;
	p = incarnation(m, pid, time);
	if (p)
		mark_exited(m, p, time);
	return 0;
}

/* ---- snapshots ------------------------------------------------------ */

void rsp_maps__pass_begin(struct rsp_maps *m)
{
	m->pass++;
}

int rsp_maps__snapshot_begin(struct rsp_maps *m, uint32_t pid, uint64_t time, const char *comm,
			     uint32_t uid)
{
	struct rsp_proc *p = latest(m, pid);

	m->st.snapshots++;
	bool fresh = !p || p->t_exit != T_NEVER;

	if (fresh) {
		p = proc_new(m, pid, p ? p->t_exit + 1 : 0);
		if (!p)
			return -ENOMEM;
	}
	p->fresh = fresh;
	p->t_snap = time;
	p->pass = m->pass;
	if (uid != UINT32_MAX)
		p->uid = uid;
	for (uint32_t k = 0; k < p->live.n; k++)
		p->live.v[k].seen = false;
	if (comm && comm_set(p, p->nr_comms ? time : p->t_birth, comm, strlen(comm)))
		return -ENOMEM;
	return 0;
}

int rsp_maps__snapshot_map(struct rsp_maps *m, uint32_t pid, const struct rsp_map_info *mi)
{
	struct rsp_proc *p = latest(m, pid);

	if (!p)
		return -ESRCH;
	/* What a first snapshot shows was there before anything we recorded. */
	return map_region(m, p, p->t_snap, p->fresh ? p->t_birth : p->t_snap, mi);
}

void rsp_maps__snapshot_end(struct rsp_maps *m, uint32_t pid)
{
	struct rsp_proc *p = latest(m, pid);

	if (p) {
		close_live(m, p, p->t_snap, true);
		p->fresh = false;
	}
}

void rsp_maps__sweep(struct rsp_maps *m, uint64_t time)
{
	for (uint32_t i = 0; i < m->nr_slots; i++) {
		struct rsp_proc *p = m->slots[i];

		if (p && p->t_exit == T_NEVER && p->pass != m->pass && p->t_birth < time)
			mark_exited(m, p, time);
	}
}

/* ---- lookups -------------------------------------------------------- */

static void fill_view(const struct rsp_map *r, struct rsp_map_view *out)
{
	const struct rsp_dso *d = r->dso;

	out->start = r->start;
	out->end = r->end;
	out->pgoff = r->pgoff;
	out->valid_from = r->t_from;
	out->valid_to = r->t_to;
	out->prot = r->prot;
	out->path = d->path;
	out->deleted = d->deleted;
	out->anon = d->type == RSP_DSO_ANON;
	out->special = d->type == RSP_DSO_VDSO || d->type == RSP_DSO_SPECIAL ? d->path : NULL;
	out->maj = d->maj;
	out->min = d->min;
	out->ino = d->ino;
	out->build_id = d->build_id_size ? d->build_id : NULL;
	out->build_id_size = d->build_id_size;
	out->dso = d;
}

int rsp_maps__find(const struct rsp_maps *m, uint32_t pid, uint64_t time, uint64_t addr,
		   struct rsp_map_view *out)
{
	const struct rsp_proc *p = incarnation(m, pid, time);
	uint32_t i;

	if (!p)
		return -ESRCH;
	i = live_lower(&p->live, addr);
	if (i < p->live.n && p->live.v[i].start <= addr && p->live.v[i].t_from <= time) {
		fill_view(&p->live.v[i], out);
		return 0;
	}
	/* Newest first: the dead list grows in time order. */
	for (i = p->dead.n; i-- > 0;) {
		const struct rsp_map *r = &p->dead.v[i];

		if (r->start <= addr && addr < r->end && r->t_from <= time && time < r->t_to) {
			fill_view(r, out);
			return 0;
		}
	}
	return -ENOENT;
}

const char *rsp_maps__comm_at(const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const struct rsp_proc *p = incarnation(m, pid, time);

	return p ? comm_at(p, time) : NULL;
}

uint32_t rsp_maps__uid(const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const struct rsp_proc *p = incarnation(m, pid, time);

	return p ? p->uid : UINT32_MAX;
}

int rsp_maps__set_cgroup(struct rsp_maps *m, uint32_t pid, uint64_t time, const char *path,
			 uint32_t nspid)
{
	struct rsp_proc *p = incarnation(m, pid, time);
	char *dup;

	if (!p)
		return -ESRCH;
	if (nspid)
		p->nspid = nspid;
	if (!path || !*path || (p->cgroup && !strcmp(p->cgroup, path)))
		return 0;
	dup = strdup(path);
	if (!dup)
		return -ENOMEM;
	free(p->cgroup);
	p->cgroup = dup;
	return 0;
}

const char *rsp_maps__cgroup(const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const struct rsp_proc *p = incarnation(m, pid, time);

	return p ? p->cgroup : NULL;
}

uint32_t rsp_maps__nspid(const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const struct rsp_proc *p = incarnation(m, pid, time);

	return p ? p->nspid : 0;
}

int rsp_maps__each_cgroup(const struct rsp_maps *m,
			  int (*fn)(uint32_t pid, uint64_t t_birth, uint64_t t_exit,
				    const char *cgroup, uint32_t nspid, void *ctx),
			  void *ctx)
{
	for (uint32_t i = 0; i < m->nr_slots; i++) {
		for (const struct rsp_proc *p = m->slots[i]; p; p = p->older) {
			int r;

			if (!p->cgroup && !p->nspid)
				continue;
			r = fn(p->pid, p->t_birth, p->t_exit, p->cgroup ? p->cgroup : "", p->nspid,
			       ctx);
			if (r)
				return r;
		}
	}
	return 0;
}

bool rsp_maps__alive(const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const struct rsp_proc *p = latest(m, pid);

	return p && p->t_exit == T_NEVER && p->t_birth <= time;
}

uint64_t rsp_maps__birth(const struct rsp_maps *m, uint32_t pid, uint64_t time)
{
	const struct rsp_proc *p = incarnation(m, pid, time);

	return p ? p->t_birth : UINT64_MAX;
}

/* ---- memory --------------------------------------------------------- */

static void prune_proc(struct rsp_maps *m, struct rsp_proc *p, uint64_t horizon)
{
	uint32_t keep = 0, first = 0;

	for (uint32_t k = 0; k < p->dead.n; k++) {
		if (p->dead.v[k].t_to <= horizon) {
			dso_put(m, p->dead.v[k].dso);
			m->st.pruned_maps++;
		} else {
			p->dead.v[keep++] = p->dead.v[k];
		}
	}
	p->dead.n = keep;
	/* Names: keep the one in force at @horizon and the later ones. */
	while (first + 1 < p->nr_comms && p->comms[first + 1].t <= horizon)
		first++;
	if (first) {
		memmove(p->comms, p->comms + first,
			(size_t)(p->nr_comms - first) * sizeof(p->comms[0]));
		p->nr_comms -= first;
	}
	if (p->dead.cap > 16 && p->dead.n < p->dead.cap / 4) {
		struct rsp_map *v = realloc(p->dead.v, (size_t)(p->dead.cap / 2) * sizeof(*v));

		if (v) {
			p->dead.v = v;
			p->dead.cap /= 2;
		}
	}
}

void rsp_maps__prune(struct rsp_maps *m, uint64_t horizon)
{
	struct rsp_proc *p, *next;

	for (p = m->xhead; p; p = next) {
		next = p->xnext;
		if (p->t_exit < horizon) {
			m->st.pruned_procs++;
			proc_drop(m, p);
		}
	}
	for (uint32_t i = 0; i < m->nr_slots; i++)
		for (p = m->slots[i]; p; p = p->older)
			prune_proc(m, p, horizon);
}

void rsp_maps__stats(const struct rsp_maps *m, struct rsp_maps_stats *st)
{
	*st = m->st;
	st->procs = st->maps_live = st->maps_dead = 0;
	st->bytes = m->dso_bytes + m->nr_buckets * sizeof(void *) +
		    m->cap_slots * (sizeof(void *) + 4) + m->pids.cap * 12;
	for (uint32_t i = 0; i < m->nr_slots; i++) {
		for (const struct rsp_proc *p = m->slots[i]; p; p = p->older) {
			st->procs++;
			st->maps_live += p->live.n;
			st->maps_dead += p->dead.n;
			st->bytes += sizeof(*p) +
				     (p->live.cap + p->dead.cap) * sizeof(struct rsp_map) +
				     p->cap_comms * sizeof(struct comm_ent);
		}
	}
	st->exited = m->nr_exited;
	st->dsos = m->nr_dsos;
}

struct rsp_maps *rsp_maps__new(const struct rsp_maps_config *cfg)
{
	struct rsp_maps *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	rsp_u64map__init(&m->pids);
	m->max_exited = cfg && cfg->max_exited ? cfg->max_exited : DEFAULT_MAX_EXITED;
	m->pass = 1;
	return m;
}

void rsp_maps__delete(struct rsp_maps *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nr_slots; i++) {
		struct rsp_proc *p = m->slots[i], *older;

		for (; p; p = older) {
			older = p->older;
			proc_free(m, p);
		}
	}
	rsp_u64map__exit(&m->pids);
	free(m->slots);
	free(m->free_slots);
	free(m->buckets);
	free(m);
}

/* ---- records -------------------------------------------------------- */

/* Record bodies, as documented in enum perf_event_type (linux/perf_event.h). */
struct rec_mmap {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	char filename[];
};

struct rec_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

static bool kernel_map(const struct perf_event_header *h, uint32_t pid)
{
	return pid == UINT32_MAX ||
	       (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

static int feed_mmap2(struct rsp_maps *m, const struct perf_event_header *h, uint64_t t)
{
	const struct rec_mmap2 *r = (const void *)h;
	struct rsp_map_info mi = {0};

	if (h->size < sizeof(*r))
		return -EINVAL;
	if (kernel_map(h, r->pid) || !(r->prot & PROT_EXEC))
		return 0;
	mi.start = r->addr;
	mi.end = r->addr + r->len;
	mi.pgoff = r->pgoff;
	mi.prot = r->prot;
	mi.flags = r->flags;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		mi.build_id = r->build_id;
		mi.build_id_size = r->build_id_size > 20 ? 20 : r->build_id_size;
	} else {
		mi.maj = r->maj;
		mi.min = r->min;
		mi.ino = r->ino;
		mi.ino_generation = r->ino_generation;
	}
	mi.path = r->filename;
	mi.path_len = strnlen(r->filename, h->size - sizeof(*r));
	return rsp_maps__mmap(m, r->pid, t, &mi) ? -ENOMEM : 1;
}

static int feed_mmap(struct rsp_maps *m, const struct perf_event_header *h, uint64_t t)
{
	const struct rec_mmap *r = (const void *)h;
	struct rsp_map_info mi = {0};

	if (h->size < sizeof(*r))
		return -EINVAL;
	if (kernel_map(h, r->pid) || (h->misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	mi.start = r->addr;
	mi.end = r->addr + r->len;
	mi.pgoff = r->pgoff;
	mi.prot = PROT_READ | PROT_EXEC;
	mi.path = r->filename;
	mi.path_len = strnlen(r->filename, h->size - sizeof(*r));
	return rsp_maps__mmap(m, r->pid, t, &mi) ? -ENOMEM : 1;
}

int rsp_maps__feed(struct rsp_maps *m, const struct rsp_schema *s,
		   const struct perf_event_header *rec)
{
	struct rsp_sample id;
	uint64_t t = 0;
	int ret;

	if (rec->size < sizeof(*rec) || rec->size % 8)
		goto bad;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	default:
		return 0;
	}
	if (rsp_record__parse_id(s, rec, &id) & RSP_SAMPLE_HAS_TIME)
		t = id.time;
	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		ret = feed_mmap2(m, rec, t);
		break;
	case PERF_RECORD_MMAP:
		ret = feed_mmap(m, rec, t);
		break;
	case PERF_RECORD_COMM: {
		struct rsp_comm_rec c;

		if (rsp_record__comm(rec, &c))
			goto bad;
		ret = rsp_maps__comm(m, c.pid, c.tid, t, c.comm, c.len, c.exec) ? -ENOMEM : 1;
		break;
	}
	default: {
		struct rsp_task_rec k;

		if (rsp_record__task(rec, &k))
			goto bad;
		ret = rec->type == PERF_RECORD_FORK ? rsp_maps__fork(m, k.pid, k.ppid, k.time)
						    : rsp_maps__exit(m, k.pid, k.tid, k.time);
		ret = ret ? -ENOMEM : 1;
		break;
	}
	}
	if (ret == -EINVAL)
		goto bad;
	if (ret > 0)
		m->st.records++;
	return ret;
bad:
	m->st.bad_records++;
	return -EINVAL;
}

int rsp_maps__ingest(struct rsp_maps *m, const struct rsp_schema *s, struct rsp_window *w,
		     uint64_t from, uint64_t to, struct rsp_maps_ingest *res)
{
	struct rsp_window_stats ws;
	struct rsp_wsnap *snap;
	struct rsp_witer *it;
	struct rsp_wentry e;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->until = from;
	if (to <= from)
		return 0;
	rsp_window__stats(w, &ws);
	/* complete_from: records up to here may have been evicted. */
	res->evicted_gap = ws.evicted_records && ws.complete_from > from;
	snap = rsp_window__pin(w, from + 1, to);
	it = snap ? rsp_witer__new(snap, from + 1, to) : NULL;
	if (!it) {
		rsp_wsnap__unpin(snap);
		return -ENOMEM;
	}
	while (rsp_witer__next(it, &e)) {
		if (e.time <= from || e.time > to)
			continue;
		res->scanned++;
		if (rsp_record__is_sample(e.rec))
			continue;
		if (e.rec->type == PERF_RECORD_LOST) {
			res->lost++;
			continue;
		}
		ret = rsp_maps__feed(m, s, e.rec);
		if (ret == -ENOMEM)
			break;
		res->records += ret > 0;
		ret = 0;
	}
	rsp_witer__delete(it);
	rsp_wsnap__unpin(snap);
	if (!ret)
		res->until = to;
	return ret;
}
