/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SYMBOLS_H
#define RSP_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/maps.h>

/*
 * The symbolizer: (pid, time, address) -> function name, at query time.
 *
 *  - user addresses go through the process model (rsp/maps.h) to the
 *    region mapped there at that time, then to the object's ELF symbols
 *    (.symtab, else its debug file's, else .dynsym with "a->b" brackets
 *    for what lies between exported functions, as Prospect shows stripped
 *    libraries);
 *  - anonymous executable regions (and addresses no region holds) go to
 *    the JIT map /tmp/perf-PID.map when the process wrote one;
 *  - kernel addresses (the upper half) go to /proc/kallsyms, modules
 *    included.
 *
 * Nothing here runs in the capture path. Objects are read lazily, on first
 * use, and kept in a bounded cache (LRU, max_objects): an ELF file is never
 * read twice while it stays cached. Its key is the mapped file's device and
 * inode (checked against the file's mtime and size once per query), or the
 * build-id an MMAP2 record carried; a copy of a cached file (same build-id
 * and size) under another path or inode is found without reading it.
 *
 * Lifetimes: strings in results (names, paths) are owned by the symbolizer
 * and stay valid until the next rsp_symbolizer__begin(), which starts a
 * query; within a query, the same symbol always yields the same pointer (so
 * callers may aggregate by pointer). The cache may exceed max_objects within
 * one query rather than free what the query holds.
 *
 * Not thread-safe: the owner serialises queries and model updates (rspd
 * holds one lock around both; the capture thread never touches this).
 */
struct rsp_symbolizer;

struct rsp_symbolizer_config {
	size_t max_objects;    /* ELF files and JIT maps cached; 0: 256 */
	size_t max_exited;     /* the process model's cap (rsp_maps_config) */
	const char *kallsyms;  /* NULL: /proc/kallsyms; "": no kernel symbols */
	const char *debug_dir; /* NULL: /usr/lib/debug; "": none */
	const char *jit_dir;   /* NULL: /tmp; "": no JIT maps */
	const char *proc_dir;  /* NULL: /proc */
	/*
	 * The processes are live on this machine: a file that was deleted or
	 * replaced since it was mapped may be read through
	 * /proc/PID/map_files while its process lives. Off for dumps.
	 */
	bool live;
};

enum rsp_sym_kind {
	RSP_SYM_UNKNOWN,
	RSP_SYM_KERNEL,
	RSP_SYM_USER,
	RSP_SYM_JIT,
};

enum rsp_sym_match {
	RSP_SYM_NONE,	 /* no name: see why */
	RSP_SYM_EXACT,	 /* inside a symbol */
	RSP_SYM_BRACKET, /* between two symbols of a stripped object: "a->b" */
};

/* Flags of resolve and callchain. */
#define RSP_SYM_HIDE_USER 0x1u /* user frames: no name, no path (another user's process) */
#define RSP_SYM_RETADDR	  0x2u /* @addr is a return address: look up addr - 1 */
/* kernel frames: no name, no address (a requester perf_event_paranoid denies kernel profiling) */
#define RSP_SYM_HIDE_KERNEL 0x4u

struct rsp_sym {
	enum rsp_sym_kind kind;
	enum rsp_sym_match match;
	const char *name;   /* NULL when match is NONE */
	uint64_t offset;    /* from the symbol, or from the lower symbol of a bracket */
	const char *object; /* file path, "[kernel]", "[MODULE]", "[vdso]", "[jit]"; NULL if unknown
			       or hidden */
	const char *why;    /* when NONE: a short reason ("no mapping", "stripped", ...) */
	uint64_t file_addr; /* the address in the object's own terms (link-time address) */
	bool hidden;
};

struct rsp_frame {
	uint64_t addr;
	struct rsp_sym sym;
};

struct rsp_symbolizer_stats {
	uint64_t objects, max_objects; /* cached now, bound */
	uint64_t object_bytes;
	uint64_t hits, misses;	/* object lookups found cached / read from disk */
	uint64_t build_id_hits; /* files not read: a copy with that build-id and size was cached */
	uint64_t evictions, load_failures, reloads;
	uint64_t resolves;
	uint64_t kernel_symbols; /* 0 if not loaded */
	uint64_t generation;
	struct rsp_maps_stats maps;
};

/**
 * rsp_symbolizer__new() - a symbolizer with an empty process model
 * @cfg: NULL for the defaults
 *
 * Return: the symbolizer (free with rsp_symbolizer__delete()) or NULL on ENOMEM.
 */
RSP_API struct rsp_symbolizer *rsp_symbolizer__new(const struct rsp_symbolizer_config *cfg);
/** rsp_symbolizer__delete() - free it, its model and its cache; NULL is fine. */
RSP_API void rsp_symbolizer__delete(struct rsp_symbolizer *s);

/** rsp_symbolizer__maps() - the process model it reads, to feed. Owned by @s. */
RSP_API struct rsp_maps *rsp_symbolizer__maps(struct rsp_symbolizer *s);

struct rsp_unwinder;
/**
 * rsp_symbolizer__unwinder() - the DWARF unwinder over this symbolizer's
 * process model (rsp/unwind.h), made on first use; owned by @s. NULL on ENOMEM.
 */
RSP_API struct rsp_unwinder *rsp_symbolizer__unwinder(struct rsp_symbolizer *s);

/**
 * rsp_symbolizer__use_ksyms() - resolve kernel addresses with @ks, which
 * the caller owns and keeps alive as long as @s uses it (rspd loads
 * /proc/kallsyms once and shares it with the timeline). Replaces any table
 * loaded by __load_kallsyms()/__set_kallsyms().
 */
struct rsp_ksyms;
RSP_API void rsp_symbolizer__use_ksyms(struct rsp_symbolizer *s, const struct rsp_ksyms *ks);
/** rsp_symbolizer__set_kallsyms() - the same from text in memory (a dump's copy). */
RSP_API int rsp_symbolizer__set_kallsyms(struct rsp_symbolizer *s, const char *text, size_t len,
					 struct rsp_buf *err);

/**
 * rsp_symbolizer__begin() - start a query: results of earlier queries may
 * now be freed, the cache is trimmed to its bound, each object's file is
 * checked once more for changes.
 */
RSP_API void rsp_symbolizer__begin(struct rsp_symbolizer *s);

/**
 * rsp_symbolizer__resolve() - the function at @addr in @pid at @time
 * @flags: RSP_SYM_HIDE_USER, RSP_SYM_HIDE_KERNEL, RSP_SYM_RETADDR
 * @out:   always filled; strings owned by @s (see Lifetimes above)
 *
 * Kernel or user is decided by the address (the kernel owns the upper
 * half). Return: 0 when named (EXACT or BRACKET), -ENOENT when not (out->why
 * says why).
 */
RSP_API int rsp_symbolizer__resolve(struct rsp_symbolizer *s, uint32_t pid, uint64_t time,
				    uint64_t addr, unsigned flags, struct rsp_sym *out);

/**
 * rsp_symbolizer__callchain() - resolve a perf callchain into frames
 * @ips: PERF_SAMPLE_CALLCHAIN entries; PERF_CONTEXT_* markers are skipped
 *       (they only say whether the frames after them are kernel or user)
 * @out: up to @max frames, innermost first
 *
 * Every frame but the first of each context is a return address, looked up
 * at addr - 1 so that a call at the end of a function names that function.
 * With RSP_SYM_HIDE_USER the user frames collapse into one hidden frame,
 * with RSP_SYM_HIDE_KERNEL the kernel frames into another.
 * Return: the number of frames written.
 */
RSP_API int rsp_symbolizer__callchain(struct rsp_symbolizer *s, uint32_t pid, uint64_t time,
				      const uint64_t *ips, uint64_t nr, unsigned flags,
				      struct rsp_frame *out, int max);

/**
 * rsp_sym__format() - "name+0x1f", "a->b", "[unknown]" or "[hidden]" into
 * @buf (@with_offset: add the offset to exact names), the name escaped as
 * rsp_fmt__name() does (control bytes, bytes not UTF-8). Returns @buf.
 */
RSP_API char *rsp_sym__format(const struct rsp_sym *sym, bool with_offset, char *buf, size_t size);

RSP_API void rsp_symbolizer__stats(const struct rsp_symbolizer *s, struct rsp_symbolizer_stats *st);

/*
 * One sampled address in an object and its count: what a profile (the
 * analysis layer's flatprof) hands to the annotation of a function (this
 * layer's annotate), so that annotate need not look up to the profile.
 */
struct rsp_sampled_addr {
	uint64_t file_addr; /* link-time address in the object */
	uint64_t samples;
};

#endif /* RSP_SYMBOLS_H */
