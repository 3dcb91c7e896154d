/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_KSYMS_H
#define RSP_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>

/*
 * Kernel symbols: the text of /proc/kallsyms ("ADDR TYPE NAME [MODULE]"
 * lines) as one array sorted by address, looked up by binary search. Live,
 * rspd loads it once at start; offline, a dump carries the same text.
 *
 * Only code symbols (types t, T, w, W) are kept: stacks hold return
 * addresses. A lookup returns the symbol with the greatest address <= the
 * one asked for; addresses below the first symbol find nothing. Names are
 * owned by the object and live as long as it does. The object is read-only
 * after construction, so any number of threads may look up concurrently.
 */
struct rsp_ksyms;

struct rsp_ksym {
	uint64_t addr;
	const char *name;   /* NUL-terminated, owned by the rsp_ksyms */
	const char *module; /* "[ext4]" for a module, "" for the core kernel */
};

/**
 * rsp_ksyms__new_from_file() - load a kallsyms-format file
 * @path: usually "/proc/kallsyms"
 * @err:  on failure, one sentence naming the problem and the fix
 *
 * Addresses that read as all zero (kptr_restrict hides them from
 * unprivileged readers) make the load fail with -EPERM, since such a table
 * would symbolise nothing. Return: the table (free with rsp_ksyms__delete())
 * or NULL with errno set.
 */
RSP_API struct rsp_ksyms *rsp_ksyms__new_from_file(const char *path, struct rsp_buf *err);

/**
 * rsp_ksyms__new_from_text() - parse kallsyms text held in memory
 * @text: @len bytes, need not be NUL-terminated; copied, the caller keeps it
 *
 * Same rules as rsp_ksyms__new_from_file(). Return: the table or NULL.
 */
RSP_API struct rsp_ksyms *rsp_ksyms__new_from_text(const char *text, size_t len,
						   struct rsp_buf *err);

/** rsp_ksyms__delete() - free the table; NULL is fine. */
RSP_API void rsp_ksyms__delete(struct rsp_ksyms *ks);

/**
 * rsp_ksyms__find() - the symbol containing @addr
 * @off: if not NULL, set to @addr - symbol address
 *
 * Return: the symbol (owned by @ks) or NULL when @addr lies below every
 * symbol, or more than 1 MiB past the last symbol of the kernel or of a
 * module (where the next symbol belongs to another module, or there is
 * none). Aliases (names at one address) are folded into the first listed.
 */
RSP_API const struct rsp_ksym *rsp_ksyms__find(const struct rsp_ksyms *ks, uint64_t addr,
					       uint64_t *off);

/**
 * rsp_ksyms__addr() - the address of the core kernel's symbol @name; 0 if
 * there is none (or addresses are hidden). A scan: for start-up, not per
 * record. @ks may be NULL.
 */
RSP_API uint64_t rsp_ksyms__addr(const struct rsp_ksyms *ks, const char *name);

/** rsp_ksyms__count() - number of symbols held. */
RSP_API size_t rsp_ksyms__count(const struct rsp_ksyms *ks);

/** rsp_ksyms__bytes() - memory the table holds. */
RSP_API size_t rsp_ksyms__bytes(const struct rsp_ksyms *ks);

/** rsp_ksyms__index() - the position of @sym in address order (for per-symbol tables). */
RSP_API size_t rsp_ksyms__index(const struct rsp_ksyms *ks, const struct rsp_ksym *sym);

/*
 * Subsets, for dumps: a dump carries only the symbols its records need,
 * not the whole table (5 MB on a distribution kernel). Mark every address
 * the records hold, then write the marked symbols as kallsyms text: a table
 * loaded from that text answers rsp_ksyms__find() for a marked address
 * exactly as @ks does (the symbol at or below it and the one after it are
 * both kept, so a symbol's end is where it was).
 */

/**
 * rsp_ksyms__mark() - note that lookups of @addr must survive the subset
 * @marks: a zeroed bitmap of rsp_ksyms__count() bits, owned by the caller
 */
RSP_API void rsp_ksyms__mark(const struct rsp_ksyms *ks, uint64_t addr, uint8_t *marks);

/**
 * rsp_ksyms__write_marked() - the marked symbols as kallsyms text
 * ("ADDR T NAME[\t[MODULE]]" lines, in address order), appended to @out.
 * Return: 0 or -ENOMEM.
 */
RSP_API int rsp_ksyms__write_marked(const struct rsp_ksyms *ks, const uint8_t *marks,
				    struct rsp_buf *out);

#endif /* RSP_KSYMS_H */
