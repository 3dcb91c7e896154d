// SPDX-License-Identifier: LGPL-2.1
/*
 * The symbolizer: the process model, a bounded cache of symbol tables
 * (ELF files, JIT maps, the vdso) and the kernel's symbols.
 *
 * Cache. An object is found by key: the mapped file's (maj, min, ino,
 * generation) as the model saw it, or the build-id when the mapping carried
 * one; once read, an ELF file is also reachable by its build-id and size,
 * so a copy of the same file under another path or inode (a container's
 * layer) is not read again. The size is part of that key because `strip`
 * keeps the build-id: a stripped copy is the same build but not the same
 * symbols, and its names must not depend on which copy was read first. Objects
 * sit on an LRU list; loading one past max_objects evicts the least
 * recently used objects that the current query has not touched (so that
 * pointers handed out during a query stay valid; see rsp/symbols.h). Each
 * region's object keeps a memo of its symbol table (valid for one eviction
 * epoch), so a lookup is: model (binary search), memo, PT_LOAD arithmetic,
 * symbol binary search.
 *
 * Change checks. Once per query (generation) a file object's path is
 * stat()ed: the same inode with another mtime or size was rewritten in
 * place and is read again (the old table lives until the next query, for
 * the names this one took from it); a file that is gone keeps its cached symbols
 * (they are the only record of what ran).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <elf.h>
#include <rsp/symbols.h>
#include "internal/elfsyms.h"
#include "internal/jitmap.h"
#include <rsp/ksyms.h>
#include "internal/log.h"
#include "internal/maps.h"
#include "internal/symbolizer.h"
#include "internal/hash.h"
#include "internal/fmt.h"
#include <rsp/unwind.h>

#define DEFAULT_MAX_OBJECTS 256
#define KERNEL_HALF	    (1ull << 63)

enum key_type {
	KEY_DEVINO = 1,
	KEY_BUILD_ID, /* from the mapping (an MMAP2 record in build-id mode) */
	KEY_FILE_ID,  /* build-id and size of a file read */
	KEY_JIT,
	KEY_VDSO,
};

struct okey {
	uint8_t type;
	uint8_t len;
	uint8_t b[32];
};

struct obj;

struct knode {
	struct knode *hnext;
	uint64_t hash;
	struct okey key;
	struct obj *obj;
	bool used;
};

enum obj_kind {
	OBJ_ELF,
	OBJ_JIT,
};

struct obj {
	struct obj *prev, *next; /* LRU: head is the most recently used */
	struct knode keys[2];
	enum obj_kind kind;
	uint64_t gen;	      /* last query that used it */
	uint64_t checked_gen; /* last query that checked its file */
	char *path;	      /* what results call it */
	char *file;	      /* the file it was read from, for change checks; NULL: none */
	struct rsp_elfsyms *elf;
	struct rsp_jitmap *jit;
	const char *why; /* why it has no symbols (static text), or NULL */
	ino_t ino;
	struct timespec mtime;
	off_t size;
	size_t bytes;
};

struct rsp_symbolizer {
	struct rsp_maps *maps;
	const struct rsp_ksyms *kallsyms;
	struct rsp_ksyms *kallsyms_owned; /* loaded by us, or NULL (borrowed) */
	bool kallsyms_tried;
	char *kallsyms_path; /* NULL: none */
	char *debug_dir, *jit_dir, *proc_dir;
	bool live;
	struct knode **buckets;
	size_t nr_buckets;
	struct obj *head, *tail;
	struct obj *retired; /* dropped during this query, freed by the next */
	size_t nr_objs, max_objs, obj_bytes;
	uint64_t gen, epoch;
	struct rsp_symbolizer_stats st;
	struct rsp_unwinder *unwinder; /* made on first use */
};

/* ---- keys and the table ---------------------------------------------- */

static uint64_t key_hash(const struct okey *k)
{
	return rsp_hash__bytes(RSP_HASH_INIT ^ k->type, k->b, (size_t)k->len);
}

static bool key_eq(const struct okey *a, const struct okey *b)
{
	return a->type == b->type && a->len == b->len && !memcmp(a->b, b->b, a->len);
}

static void key_devino(struct okey *k, const struct rsp_dso *d)
{
	memset(k, 0, sizeof(*k));
	k->type = KEY_DEVINO;
	k->len = 24;
	memcpy(k->b, &d->maj, 4);
	memcpy(k->b + 4, &d->min, 4);
	memcpy(k->b + 8, &d->ino, 8);
	memcpy(k->b + 16, &d->ino_generation, 8);
}

static void key_build_id(struct okey *k, const uint8_t *id, uint8_t n)
{
	memset(k, 0, sizeof(*k));
	k->type = KEY_BUILD_ID;
	k->len = n > 20 ? 20 : n;
	memcpy(k->b, id, k->len);
}

static void key_file_id(struct okey *k, const uint8_t *id, uint8_t n, uint64_t size)
{
	key_build_id(k, id, n);
	k->type = KEY_FILE_ID;
	memcpy(k->b + k->len, &size, 8);
	k->len += 8;
}

static void key_jit(struct okey *k, uint32_t pid, uint64_t birth)
{
	memset(k, 0, sizeof(*k));
	k->type = KEY_JIT;
	k->len = 12;
	memcpy(k->b, &pid, 4);
	memcpy(k->b + 4, &birth, 8);
}

static struct obj *find(struct rsp_symbolizer *s, const struct okey *k)
{
	uint64_t h = key_hash(k);

	for (struct knode *n = s->buckets[h & (s->nr_buckets - 1)]; n; n = n->hnext)
		if (n->hash == h && key_eq(&n->key, k))
			return n->obj;
	return NULL;
}

static void key_add(struct rsp_symbolizer *s, struct obj *o, const struct okey *k)
{
	struct knode *n = NULL;

	for (int i = 0; i < 2; i++) {
		if (!o->keys[i].used) {
			n = &o->keys[i];
			break;
		}
	}
	if (!n || find(s, k))
		return;
	n->used = true;
	n->key = *k;
	n->hash = key_hash(k);
	n->obj = o;
	n->hnext = s->buckets[n->hash & (s->nr_buckets - 1)];
	s->buckets[n->hash & (s->nr_buckets - 1)] = n;
}

static void key_del(struct rsp_symbolizer *s, struct knode *n)
{
	struct knode **pp = &s->buckets[n->hash & (s->nr_buckets - 1)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == n) {
			*pp = n->hnext;
			break;
		}
	}
	n->used = false;
}

/* ---- objects and the LRU -------------------------------------------- */

static void lru_unlink(struct rsp_symbolizer *s, struct obj *o)
{
	if (o->prev)
		o->prev->next = o->next;
	else
		s->head = o->next;
	if (o->next)
		o->next->prev = o->prev;
	else
		s->tail = o->prev;
	o->prev = o->next = NULL;
}

static void lru_push(struct rsp_symbolizer *s, struct obj *o)
{
	o->prev = NULL;
	o->next = s->head;
	if (s->head)
		s->head->prev = o;
	else
		s->tail = o;
	s->head = o;
}

static void touch(struct rsp_symbolizer *s, struct obj *o)
{
	o->gen = s->gen;
	if (s->head != o) {
		lru_unlink(s, o);
		lru_push(s, o);
	}
}

static void obj_free(struct obj *o)
{
	rsp_elfsyms__delete(o->elf);
	rsp_jitmap__delete(o->jit);
	free(o->path);
	free(o->file);
	free(o);
}

/*
 * Take @o out of the cache. An object this query has used may still be read
 * through the names and paths it handed out (valid until the next
 * rsp_symbolizer__begin()): it waits on the retired list until then.
 */
static void obj_drop(struct rsp_symbolizer *s, struct obj *o)
{
	for (int i = 0; i < 2; i++)
		if (o->keys[i].used)
			key_del(s, &o->keys[i]);
	lru_unlink(s, o);
	s->nr_objs--;
	s->epoch++; /* every region's memo may point at it */
	if (o->gen == s->gen) {
		o->next = s->retired;
		s->retired = o;
		return;
	}
	s->obj_bytes -= o->bytes;
	obj_free(o);
}

static void free_retired(struct rsp_symbolizer *s)
{
	while (s->retired) {
		struct obj *o = s->retired;

		s->retired = o->next;
		s->obj_bytes -= o->bytes;
		obj_free(o);
	}
}

/* Make room for one more object among those this query has not used. */
static void make_room(struct rsp_symbolizer *s, size_t room)
{
	while (s->nr_objs + room > s->max_objs && s->tail && s->tail->gen < s->gen) {
		s->st.evictions++;
		obj_drop(s, s->tail);
	}
}

static struct obj *obj_new(struct rsp_symbolizer *s, enum obj_kind kind, const char *path,
			   const struct okey *k)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->kind = kind;
	o->path = strdup(path);
	if (!o->path) {
		free(o);
		return NULL;
	}
	make_room(s, 1);
	key_add(s, o, k);
	o->gen = o->checked_gen = s->gen;
	o->bytes = sizeof(*o) + strlen(path) + 1 + (o->elf ? o->elf->bytes : 0);
	lru_push(s, o);
	s->nr_objs++;
	s->obj_bytes += o->bytes;
	return o;
}

static void obj_account(struct rsp_symbolizer *s, struct obj *o)
{
	size_t b = sizeof(*o) + strlen(o->path) + 1 + (o->elf ? o->elf->bytes : 0) +
		   rsp_jitmap__bytes(o->jit);

	s->obj_bytes = s->obj_bytes - o->bytes + b;
	o->bytes = b;
}

/* ---- finding the mapped file ---------------------------------------- */

static bool same_file(const struct rsp_dso *d, const struct stat *st)
{
	return S_ISREG(st->st_mode) && (!d->ino || (uint64_t)st->st_ino == d->ino);
}

/*
 * Paths come from records, and offline from a file anyone may have written:
 * only regular files are opened (opening a device or a FIFO can block, or
 * do something: /dev/watchdog), without blocking, and checked again on the
 * open file (same_file()).
 */
static int open_regular(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

/*
 * Open what @pid had mapped: the path if it still holds the same inode;
 * else, while the process lives, /proc/PID/map_files/START-END (the mapped
 * file itself, even deleted) or the path inside the process's root.
 */
static int open_mapped(struct rsp_symbolizer *s, const struct rsp_dso *d, uint32_t pid,
		       const struct rsp_map_view *mv, uint64_t time, struct stat *st,
		       const char **why)
{
	char alt[4096 + 64];
	int fd = open_regular(d->path);

	*why = "the file is gone";
	if (fd >= 0) {
		if (!fstat(fd, st) && same_file(d, st))
			return fd;
		*why = "the file was replaced since it was mapped";
		close(fd);
	}
	if (!s->live || !rsp_maps__alive(s->maps, pid, time))
		return -1;
	snprintf(alt, sizeof(alt), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, s->proc_dir, pid,
		 mv->start, mv->end);
	fd = open_regular(alt);
	if (fd >= 0 && !fstat(fd, st) && same_file(d, st))
		return fd;
	if (fd >= 0)
		close(fd);
	snprintf(alt, sizeof(alt), "%s/%u/root%s", s->proc_dir, pid, d->path);
	fd = open_regular(alt);
	if (fd >= 0 && !fstat(fd, st) && same_file(d, st))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

int rsp_symbolizer__open_mapped(struct rsp_symbolizer *s, uint32_t pid, uint64_t time,
				const struct rsp_map_view *mv, struct stat *st, const char **why)
{
	if (!mv->dso || mv->anon || mv->special) {
		*why = "not a file";
		return -1;
	}
	return open_mapped(s, mv->dso, pid, mv, time, st, why);
}

static struct obj *failed_obj(struct rsp_symbolizer *s, const char *path, const struct okey *k,
			      const char *why)
{
	struct obj *o = obj_new(s, OBJ_ELF, path, k);

	s->st.load_failures++;
	if (o)
		o->why = why;
	return o;
}

/* Read the ELF file of @d (a cache miss). */
static struct obj *load_file(struct rsp_symbolizer *s, struct rsp_dso *d, uint32_t pid,
			     const struct rsp_map_view *mv, uint64_t time, const struct okey *k)
{
	struct rsp_buf err = RSP_BUF_INIT;
	struct okey bk;
	struct stat st;
	const char *why;
	uint8_t id[20];
	struct obj *o;
	int n, fd = open_mapped(s, d, pid, mv, time, &st, &why);

	if (fd < 0)
		return failed_obj(s, d->path, k, why);
	n = rsp_elfsyms__build_id_fd(fd, id);
	if (n > 0 && d->build_id_size &&
	    (n != d->build_id_size || memcmp(id, d->build_id, (size_t)n))) {
		close(fd);
		return failed_obj(s, d->path, k, "the file's build-id differs from the mapped one");
	}
	if (n > 0) {
		key_file_id(&bk, id, (uint8_t)n, (uint64_t)st.st_size);
		o = find(s, &bk);
		if (o) {
			/* The same build under another path or inode. */
			close(fd);
			s->st.build_id_hits++;
			key_add(s, o, k);
			return o;
		}
	}
	s->st.misses++;
	o = obj_new(s, OBJ_ELF, d->path, k);
	if (o) {
		o->elf = rsp_elfsyms__load_fd(fd, d->path, s->debug_dir, &err);
		if (!o->elf) {
			rsp_debug("symbols: %s", err.data ? err.data : d->path);
			o->why = "not a readable ELF object";
			s->st.load_failures++;
		} else {
			if (n > 0)
				key_add(s, o, &bk);
			o->file = strdup(d->path);
			o->ino = st.st_ino;
			o->mtime = st.st_mtim;
			o->size = st.st_size;
		}
		obj_account(s, o);
	}
	rsp_buf__exit(&err);
	close(fd);
	return o;
}

/* Once per query: a file rewritten in place (same inode) is read again. */
static bool file_changed(struct rsp_symbolizer *s, struct obj *o)
{
	struct stat st;

	if (o->checked_gen == s->gen || !o->file)
		return false;
	o->checked_gen = s->gen;
	if (stat(o->file, &st) || st.st_ino != o->ino)
		return false; /* gone or replaced: what we read is what was mapped */
	return st.st_size != o->size || st.st_mtim.tv_sec != o->mtime.tv_sec ||
	       st.st_mtim.tv_nsec != o->mtime.tv_nsec;
}

static struct obj *obj_for_dso(struct rsp_symbolizer *s, struct rsp_dso *d, uint32_t pid,
			       const struct rsp_map_view *mv, uint64_t time)
{
	struct obj *o = d->sym_epoch == s->epoch ? d->sym_obj : NULL;
	struct okey k;

	if (d->build_id_size)
		key_build_id(&k, d->build_id, d->build_id_size);
	else
		key_devino(&k, d);
	if (!o)
		o = find(s, &k);
	if (o && (file_changed(s, o) || (!o->elf && o->checked_gen != s->gen))) {
		/* Rewritten in place; or it failed in an earlier query: try again. */
		s->st.reloads++;
		obj_drop(s, o);
		o = NULL;
	}
	if (o) {
		s->st.hits++;
		touch(s, o);
	} else {
		o = load_file(s, d, pid, mv, time, &k);
		if (o)
			touch(s, o);
	}
	d->sym_obj = o;
	d->sym_epoch = s->epoch;
	return o;
}

/* The vdso is the same image in every process of our ABI: read ours. */
static struct obj *obj_vdso(struct rsp_symbolizer *s)
{
	struct okey k = {.type = KEY_VDSO};
	struct rsp_buf err = RSP_BUF_INIT;
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct obj *o = find(s, &k);
	size_t size;

	if (o) {
		s->st.hits++;
		touch(s, o);
		return o;
	}
	s->st.misses++;
	o = obj_new(s, OBJ_ELF, "[vdso]", &k);
	if (!o)
		return NULL;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64) {
		o->why = "no vdso image to read";
		return o;
	}
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	o->elf = rsp_elfsyms__load_mem(eh, size, "[vdso]", &err);
	if (!o->elf)
		o->why = "the vdso image is unreadable";
	rsp_buf__exit(&err);
	obj_account(s, o);
	return o;
}

static struct obj *obj_jit(struct rsp_symbolizer *s, uint32_t pid, uint64_t time)
{
	struct rsp_buf err = RSP_BUF_INIT;
	char path[4096];
	struct stat st;
	struct okey k;
	struct obj *o;
	uint32_t uid;
	int e;

	if (!s->jit_dir)
		return NULL;
	key_jit(&k, pid, rsp_maps__birth(s->maps, pid, time));
	o = find(s, &k);
	snprintf(path, sizeof(path), "%s/perf-%u.map", s->jit_dir, pid);
	if (o && o->checked_gen != s->gen) {
		/* A JIT appends as it compiles: read the file again when it grew. */
		o->checked_gen = s->gen;
		if (!stat(path, &st) &&
		    (st.st_size != o->size || st.st_mtim.tv_sec != o->mtime.tv_sec ||
		     st.st_mtim.tv_nsec != o->mtime.tv_nsec)) {
			s->st.reloads++;
			obj_drop(s, o);
			o = NULL;
		}
	}
	if (o) {
		s->st.hits++;
		touch(s, o);
		return o->jit ? o : NULL;
	}
	s->st.misses++;
	o = obj_new(s, OBJ_JIT, "[jit]", &k);
	if (!o)
		return NULL;
	uid = rsp_maps__uid(s->maps, pid, time);
	if (uid == UINT32_MAX && s->live) {
		char pdir[256];

		snprintf(pdir, sizeof(pdir), "%s/%u", s->proc_dir, pid);
		uid = stat(pdir, &st) ? 0 : (uint32_t)st.st_uid;
	}
	if (!stat(path, &st)) {
		o->mtime = st.st_mtim;
		o->size = st.st_size;
	}
	o->jit = rsp_jitmap__load(path, uid == UINT32_MAX ? 0 : (uid_t)uid, &e, &err);
	if (!o->jit && e != ENOENT) {
		rsp_warn("%s", err.data ? err.data : path);
		s->st.load_failures++;
	}
	rsp_buf__exit(&err);
	obj_account(s, o);
	touch(s, o);
	return o->jit ? o : NULL;
}

/* ---- resolving ------------------------------------------------------ */

static int load_kernel(struct rsp_symbolizer *s)
{
	struct rsp_buf err = RSP_BUF_INIT;

	s->kallsyms_tried = true;
	if (!s->kallsyms_path)
		return -ENOENT;
	s->kallsyms = s->kallsyms_owned = rsp_ksyms__new_from_file(s->kallsyms_path, &err);
	if (!s->kallsyms)
		rsp_warn("kernel symbols: %s", err.data ? err.data : "unreadable");
	rsp_buf__exit(&err);
	return s->kallsyms ? 0 : -ENOENT;
}

static int resolve_kernel(struct rsp_symbolizer *s, uint64_t a, struct rsp_sym *out)
{
	const struct rsp_ksym *ks;

	out->kind = RSP_SYM_KERNEL;
	out->object = "[kernel]";
	out->file_addr = a;
	if (!s->kallsyms && (s->kallsyms_tried || load_kernel(s))) {
		out->why = "no kernel symbols (kallsyms unreadable)";
		return -ENOENT;
	}
	ks = rsp_ksyms__find(s->kallsyms, a, &out->offset);
	if (!ks) {
		out->why = "not a kernel text symbol";
		return -ENOENT;
	}
	out->name = ks->name;
	if (ks->module[0])
		out->object = ks->module;
	out->match = RSP_SYM_EXACT;
	return 0;
}

static int resolve_jit(struct rsp_symbolizer *s, uint32_t pid, uint64_t time, uint64_t a,
		       struct rsp_sym *out, const char *why, bool anon)
{
	struct obj *o = obj_jit(s, pid, time);

	out->file_addr = a;
	if (o && !rsp_jitmap__lookup(o->jit, a, &out->name, &out->offset)) {
		out->kind = RSP_SYM_JIT;
		out->match = RSP_SYM_EXACT;
		out->object = o->path;
		return 0;
	}
	out->why = o && anon ? "anonymous code, not in the JIT map" : why;
	return -ENOENT;
}

static int resolve_elf(struct obj *o, const struct rsp_map_view *mv, uint64_t a,
		       struct rsp_sym *out)
{
	uint64_t off = a - mv->start + mv->pgoff, v;

	out->object = o->path;
	if (!o->elf) {
		out->why = o->why;
		return -ENOENT;
	}
	if (!rsp_elfsyms__vaddr(o->elf, off, &v))
		v = o->elf->is_dyn ? off : a;
	out->file_addr = v;
	out->match = rsp_elfsyms__lookup(o->elf, v, &out->name, &out->offset);
	if (out->match == RSP_SYM_NONE) {
		out->why = o->elf->source == RSP_ELFSYMS_NONE ? "stripped: no symbols"
							      : "out of memory";
		return -ENOENT;
	}
	return 0;
}

static int resolve_user(struct rsp_symbolizer *s, uint32_t pid, uint64_t time, uint64_t a,
			struct rsp_sym *out)
{
	struct rsp_map_view mv;
	struct obj *o;
	int r = rsp_maps__find(s->maps, pid, time, a, &mv);

	out->kind = RSP_SYM_USER;
	out->file_addr = a;
	if (r)
		return resolve_jit(s, pid, time, a, out,
				   r == -ESRCH ? "unknown process" : "no mapping at this address",
				   false);
	if (mv.anon)
		return resolve_jit(s, pid, time, a, out, "anonymous code, no JIT map", true);
	if (mv.special && strcmp(mv.special, "[vdso]")) {
		out->object = mv.special;
		out->why = "special mapping";
		return -ENOENT;
	}
	o = mv.special ? obj_vdso(s) : obj_for_dso(s, (struct rsp_dso *)mv.dso, pid, &mv, time);
	if (!o) {
		out->object = mv.path;
		out->why = "out of memory";
		return -ENOENT;
	}
	return resolve_elf(o, &mv, a, out);
}

int rsp_symbolizer__resolve(struct rsp_symbolizer *s, uint32_t pid, uint64_t time, uint64_t addr,
			    unsigned flags, struct rsp_sym *out)
{
	uint64_t a = (flags & RSP_SYM_RETADDR) && addr ? addr - 1 : addr;

	memset(out, 0, sizeof(*out));
	s->st.resolves++;
	if (a >= KERNEL_HALF && (flags & RSP_SYM_HIDE_KERNEL)) {
		out->kind = RSP_SYM_KERNEL;
		out->hidden = true;
		out->why = "kernel symbols are not shown to this user";
		return -ENOENT;
	}
	if (a >= KERNEL_HALF)
		return resolve_kernel(s, a, out);
	if (flags & RSP_SYM_HIDE_USER) {
		out->kind = RSP_SYM_USER;
		out->hidden = true;
		out->why = "another user's process";
		return -ENOENT;
	}
	return resolve_user(s, pid, time, a, out);
}

#define CONTEXT_NONE   0
#define CONTEXT_KERNEL 1
#define CONTEXT_USER   2

/* One hidden frame stands for all the frames of its kind (kernel or user) that follow it. */
static bool collapsed(const struct rsp_frame *prev, uint64_t ip, int ctx, unsigned flags)
{
	if (!prev || !prev->sym.hidden)
		return false;
	if (ip >= KERNEL_HALF)
		return (flags & RSP_SYM_HIDE_KERNEL) && prev->sym.kind == RSP_SYM_KERNEL;
	return ctx != CONTEXT_KERNEL && (flags & RSP_SYM_HIDE_USER) &&
	       prev->sym.kind != RSP_SYM_KERNEL;
}

int rsp_symbolizer__callchain(struct rsp_symbolizer *s, uint32_t pid, uint64_t time,
			      const uint64_t *ips, uint64_t nr, unsigned flags,
			      struct rsp_frame *out, int max)
{
	int n = 0, ctx = CONTEXT_NONE;
	bool first = true;

	for (uint64_t i = 0; i < nr && n < max; i++) {
		uint64_t ip = ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ||
					      ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL
				      ? CONTEXT_KERNEL
				      : CONTEXT_USER;
			first = true;
			continue;
		}
		if (collapsed(n ? &out[n - 1] : NULL, ip, ctx, flags))
			continue;
		out[n].addr = ip;
		rsp_symbolizer__resolve(s, pid, time, ip, flags | (first ? 0 : RSP_SYM_RETADDR),
					&out[n].sym);
		first = false;
		n++;
	}
	return n;
}

/* A symbol's name comes from a file anyone may have written: escaped for people. */
char *rsp_sym__format(const struct rsp_sym *sym, bool with_offset, char *buf, size_t size)
{
	size_t n;

	if (sym->hidden || !sym->name) {
		snprintf(buf, size, sym->hidden ? "[hidden]" : "[unknown]");
		return buf;
	}
	n = strlen(rsp_fmt__name(buf, size, sym->name));
	if (with_offset && sym->match == RSP_SYM_EXACT && sym->offset)
		snprintf(buf + n, size - n, "+0x%" PRIx64, sym->offset);
	return buf;
}

/* ---- life ----------------------------------------------------------- */

static char *dup_or(const char *v, const char *dflt)
{
	const char *s = v ? v : dflt;

	return *s ? strdup(s) : NULL;
}

struct rsp_symbolizer *rsp_symbolizer__new(const struct rsp_symbolizer_config *cfg)
{
	struct rsp_symbolizer_config none = {0};
	struct rsp_maps_config mc = {0};
	struct rsp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (!cfg)
		cfg = &none;
	mc.max_exited = cfg->max_exited;
	s->max_objs = cfg->max_objects ? cfg->max_objects : DEFAULT_MAX_OBJECTS;
	s->nr_buckets = 64;
	while (s->nr_buckets < s->max_objs * 4)
		s->nr_buckets *= 2;
	s->buckets = calloc(s->nr_buckets, sizeof(*s->buckets));
	s->maps = rsp_maps__new(&mc);
	s->kallsyms_path = dup_or(cfg->kallsyms, "/proc/kallsyms");
	s->debug_dir = dup_or(cfg->debug_dir, "/usr/lib/debug");
	s->jit_dir = dup_or(cfg->jit_dir, "/tmp");
	s->proc_dir = dup_or(cfg->proc_dir, "/proc");
	s->live = cfg->live;
	s->gen = 1;
	s->epoch = 1;
	if (!s->buckets || !s->maps || !s->proc_dir ||
	    (!s->kallsyms_path && (!cfg->kallsyms || *cfg->kallsyms)) ||
	    (!s->debug_dir && (!cfg->debug_dir || *cfg->debug_dir)) ||
	    (!s->jit_dir && (!cfg->jit_dir || *cfg->jit_dir))) {
		rsp_symbolizer__delete(s);
		return NULL;
	}
	return s;
}

void rsp_symbolizer__delete(struct rsp_symbolizer *s)
{
	if (!s)
		return;
	rsp_unwinder__delete(s->unwinder);
	free_retired(s);
	while (s->head) {
		struct obj *o = s->head;

		s->head = o->next;
		obj_free(o);
	}
	free(s->buckets);
	rsp_maps__delete(s->maps);
	rsp_ksyms__delete(s->kallsyms_owned);
	free(s->kallsyms_path);
	free(s->debug_dir);
	free(s->jit_dir);
	free(s->proc_dir);
	free(s);
}

struct rsp_maps *rsp_symbolizer__maps(struct rsp_symbolizer *s)
{
	return s->maps;
}

struct rsp_unwinder *rsp_symbolizer__unwinder(struct rsp_symbolizer *s)
{
	if (!s->unwinder)
		s->unwinder = rsp_unwinder__new(s, 0);
	return s->unwinder;
}

static void own_kallsyms(struct rsp_symbolizer *s, struct rsp_ksyms *k)
{
	rsp_ksyms__delete(s->kallsyms_owned);
	s->kallsyms = s->kallsyms_owned = k;
}

int rsp_symbolizer__set_kallsyms(struct rsp_symbolizer *s, const char *text, size_t len,
				 struct rsp_buf *err)
{
	struct rsp_ksyms *k = rsp_ksyms__new_from_text(text, len, err);

	s->kallsyms_tried = true;
	if (!k)
		return -EINVAL;
	own_kallsyms(s, k);
	return 0;
}

void rsp_symbolizer__use_ksyms(struct rsp_symbolizer *s, const struct rsp_ksyms *ks)
{
	own_kallsyms(s, NULL);
	s->kallsyms = ks;
	s->kallsyms_tried = true;
}

void rsp_symbolizer__begin(struct rsp_symbolizer *s)
{
	free_retired(s);
	s->gen++;
	make_room(s, 0);
}

void rsp_symbolizer__stats(const struct rsp_symbolizer *s, struct rsp_symbolizer_stats *st)
{
	*st = s->st;
	st->objects = s->nr_objs;
	st->max_objects = s->max_objs;
	st->object_bytes = s->obj_bytes + rsp_ksyms__bytes(s->kallsyms_owned);
	st->kernel_symbols = rsp_ksyms__count(s->kallsyms);
	st->generation = s->gen;
	rsp_maps__stats(s->maps, &st->maps);
}
