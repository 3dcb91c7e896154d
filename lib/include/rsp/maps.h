/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_MAPS_H
#define RSP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/schema.h>
#include <rsp/window.h>

/*
 * The process model: for every process, the executable regions of its
 * address space and its command name, versioned by time, so that "which
 * file was mapped at this address of pid P at time T" has an answer after
 * P exec'd, unmapped, remapped, or exited.
 *
 * Sources, applied in time order:
 *  - a /proc snapshot of every process (rsp_procfs__load_all(), at rspd
 *    start and after a gap in the side-band records);
 *  - the side-band records of the window: PERF_RECORD_MMAP2 (and MMAP),
 *    COMM (exec when misc has PERF_RECORD_MISC_COMM_EXEC), FORK, EXIT.
 *
 * Only executable mappings are kept (rspd asks the kernel for those only).
 * The kernel reports no munmap: a region ends when a new mapping overlaps
 * it, when the process execs, or when it exits.
 *
 * Bounded memory: rsp_maps__prune(horizon) drops what no record at or
 * after @horizon can refer to: processes that exited before it, regions
 * replaced before it, superseded names. rspd prunes with the window's
 * oldest record time, so the model holds what the window may still ask
 * about and nothing more. A cap on exited processes (max_exited) bounds a
 * fork storm inside one window.
 *
 * Not thread-safe: the owner serialises updates and lookups.
 */
struct rsp_maps;

/** One mapping as a source describes it (a /proc line, an MMAP2 record). */
struct rsp_map_info {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start, bytes */
	uint32_t maj, min;   /* device of the file */
	uint64_t ino, ino_generation;
	uint32_t prot, flags; /* PROT_*, MAP_* */
	const uint8_t *build_id;
	uint8_t build_id_size; /* 0: unknown */
	const char *path;      /* "" or NULL: anonymous */
	size_t path_len;
};

/** What a lookup finds: valid until the next update or prune of the model. */
struct rsp_map_view {
	uint64_t start, end, pgoff;
	uint64_t valid_from, valid_to; /* the region's span of time; valid_to UINT64_MAX if live */
	uint32_t prot;
	const char *path;    /* as mapped, without " (deleted)"; "" if anonymous */
	bool deleted;	     /* the path said "(deleted)" */
	bool anon;	     /* no file: JIT code, or an unnamed region */
	const char *special; /* "[vdso]", "[vsyscall]", ... or NULL */
	uint32_t maj, min;
	uint64_t ino;
	const uint8_t *build_id;
	uint8_t build_id_size;
	const void *dso; /* identity of the mapped object within this model */
};

struct rsp_maps_config {
	size_t max_exited; /* exited processes kept at most; 0: 32768 */
};

struct rsp_maps_stats {
	uint64_t procs;	 /* incarnations held (live and exited) */
	uint64_t exited; /* of which exited */
	uint64_t maps_live;
	uint64_t maps_dead; /* replaced regions kept for older records */
	uint64_t dsos;	    /* distinct mapped objects */
	uint64_t bytes;	    /* approximate memory held */
	uint64_t records;   /* side-band records applied */
	uint64_t mmaps, comms, execs, forks, exits;
	uint64_t snapshots; /* /proc snapshots of a process */
	uint64_t pruned_procs, pruned_maps;
	uint64_t dropped_exited; /* exited processes dropped early by max_exited */
	uint64_t bad_records;	 /* malformed side-band records ignored */
};

/** rsp_maps__new() - an empty model; NULL on ENOMEM. Free with __delete. */
RSP_API struct rsp_maps *rsp_maps__new(const struct rsp_maps_config *cfg);
/** rsp_maps__delete() - free the model; NULL is fine. */
RSP_API void rsp_maps__delete(struct rsp_maps *m);

/**
 * rsp_maps__feed() - apply one side-band record (MMAP, MMAP2, COMM, FORK,
 * EXIT); other record types are ignored.
 * @s: the schema of the stream, to read the record's time from its trailer
 *
 * Records must come in time order. Return: 1 if applied, 0 if ignored,
 * -EINVAL (malformed, counted) or -ENOMEM.
 */
RSP_API int rsp_maps__feed(struct rsp_maps *m, const struct rsp_schema *s,
			   const struct perf_event_header *rec);

/* The same updates, for sources that are not records. All return 0 or -ENOMEM. */
RSP_API int rsp_maps__mmap(struct rsp_maps *m, uint32_t pid, uint64_t time,
			   const struct rsp_map_info *mi);
/** rsp_maps__comm() - @pid's thread @tid is now called @comm; @exec: it exec'd. */
RSP_API int rsp_maps__comm(struct rsp_maps *m, uint32_t pid, uint32_t tid, uint64_t time,
			   const char *comm, size_t len, bool exec);
/** rsp_maps__fork() - @pid was created by @ppid (a new thread when they are equal). */
RSP_API int rsp_maps__fork(struct rsp_maps *m, uint32_t pid, uint32_t ppid, uint64_t time);
/** rsp_maps__exit() - thread @tid of @pid exited; the process when tid == pid. */
RSP_API int rsp_maps__exit(struct rsp_maps *m, uint32_t pid, uint32_t tid, uint64_t time);

/*
 * A /proc snapshot of one process taken at @time: begin, one call per
 * executable region, end. A process the model did not know gets the
 * regions from the start of time (they were there before anything was
 * recorded); for a known one the snapshot is applied as updates at @time
 * (regions it does not list are closed). Records older than a process's
 * snapshot that arrive later do not undo it (see the rules in maps.c).
 *
 * rsp_maps__sweep() after a full /proc pass: a live process the pass did
 * not see has exited, at @time at the latest.
 */
RSP_API int rsp_maps__snapshot_begin(struct rsp_maps *m, uint32_t pid, uint64_t time,
				     const char *comm, uint32_t uid);
RSP_API int rsp_maps__snapshot_map(struct rsp_maps *m, uint32_t pid, const struct rsp_map_info *mi);
RSP_API void rsp_maps__snapshot_end(struct rsp_maps *m, uint32_t pid);
RSP_API void rsp_maps__pass_begin(struct rsp_maps *m);
RSP_API void rsp_maps__sweep(struct rsp_maps *m, uint64_t time);

/**
 * rsp_maps__find() - the region of @pid that held @addr at @time
 * Return: 0 and *out, or -ESRCH (no such process at that time) / -ENOENT
 * (the process had nothing mapped there).
 */
RSP_API int rsp_maps__find(const struct rsp_maps *m, uint32_t pid, uint64_t time, uint64_t addr,
			   struct rsp_map_view *out);

/** rsp_maps__comm_at() - @pid's name at @time, or NULL. Owned by @m. */
RSP_API const char *rsp_maps__comm_at(const struct rsp_maps *m, uint32_t pid, uint64_t time);

/**
 * rsp_maps__set_cgroup() - @pid's cgroup v2 @path and namespaced pid @nspid
 * as read from /proc (rsp_cgroup__read_proc()) at @time; "" or NULL and 0
 * leave what is known. A fork gives the child its parent's cgroup (the
 * kernel does the same); the namespaced pid is each process's own.
 * Return: 0, -ESRCH (no such process at @time) or -ENOMEM.
 */
RSP_API int rsp_maps__set_cgroup(struct rsp_maps *m, uint32_t pid, uint64_t time, const char *path,
				 uint32_t nspid);
/** rsp_maps__cgroup() - @pid's cgroup path at @time as last read, or NULL (unknown). Owned by @m.
 */
RSP_API const char *rsp_maps__cgroup(const struct rsp_maps *m, uint32_t pid, uint64_t time);
/** rsp_maps__nspid() - @pid's pid in its innermost pid namespace, or 0 (unknown). */
RSP_API uint32_t rsp_maps__nspid(const struct rsp_maps *m, uint32_t pid, uint64_t time);

/**
 * rsp_maps__each_cgroup() - call @fn for every incarnation whose cgroup or
 * namespaced pid is known (rsp_maps__set_cgroup()), with the times it
 * lived (@t_exit UINT64_MAX while alive), until @fn returns non-zero.
 * Return: what @fn returned, or 0.
 */
RSP_API int rsp_maps__each_cgroup(const struct rsp_maps *m,
				  int (*fn)(uint32_t pid, uint64_t t_birth, uint64_t t_exit,
					    const char *cgroup, uint32_t nspid, void *ctx),
				  void *ctx);

/** rsp_maps__uid() - the owner of @pid at @time as last known, or UINT32_MAX. */
RSP_API uint32_t rsp_maps__uid(const struct rsp_maps *m, uint32_t pid, uint64_t time);

/**
 * rsp_maps__alive() - @pid exists now as far as the model knows, and its
 * current incarnation was born at or before @time (so /proc/@pid is the
 * process that ran then).
 */
RSP_API bool rsp_maps__alive(const struct rsp_maps *m, uint32_t pid, uint64_t time);

/**
 * rsp_maps__birth() - the birth time of @pid's incarnation at @time (0 when
 * it predates the model), or UINT64_MAX if there is none.
 */
RSP_API uint64_t rsp_maps__birth(const struct rsp_maps *m, uint32_t pid, uint64_t time);

/** rsp_maps__prune() - drop what no record at or after @horizon can refer to. */
RSP_API void rsp_maps__prune(struct rsp_maps *m, uint64_t horizon);

RSP_API void rsp_maps__stats(const struct rsp_maps *m, struct rsp_maps_stats *st);

/** What rsp_maps__ingest() saw. */
struct rsp_maps_ingest {
	uint64_t records; /* side-band records applied */
	uint64_t scanned; /* records looked at */
	uint64_t lost;	  /* PERF_RECORD_LOST records: side-band may be missing */
	bool evicted_gap; /* records after @from were evicted before being read */
	uint64_t until;	  /* the time to pass as @from next time */
};

/**
 * rsp_maps__ingest() - apply the window's side-band records with time in
 * (@from, @to], in time order
 *
 * @to must be a time up to which every CPU's records are in the window
 * (rspd: the drain's watermark), so that the next call, from @to, misses
 * nothing and applies nothing twice. Return: 0 or -ENOMEM.
 */
RSP_API int rsp_maps__ingest(struct rsp_maps *m, const struct rsp_schema *s, struct rsp_window *w,
			     uint64_t from, uint64_t to, struct rsp_maps_ingest *res);

/*
 * /proc: the snapshot reader. @proc_dir is "/proc" on a live system, a
 * fixture directory in tests (holding PID/maps, PID/comm).
 */

/**
 * rsp_procfs__parse_maps_line() - one line of /proc/PID/maps
 * @line: the line, NUL-terminated, without or with its newline
 * @mi:   filled; mi->path points into @line
 *
 * Return: 0, or -EINVAL for a malformed line.
 */
RSP_API int rsp_procfs__parse_maps_line(const char *line, struct rsp_map_info *mi);

/**
 * rsp_procfs__load_pid() - snapshot one process from @proc_dir/@pid
 * Return: 0; -ENOENT/-ESRCH if it is gone (a race, not an error); -ENOMEM.
 */
RSP_API int rsp_procfs__load_pid(struct rsp_maps *m, const char *proc_dir, uint32_t pid,
				 uint64_t time);

/**
 * rsp_procfs__load_cgroup() - read @pid's cgroup and namespaced pid from
 * @proc_dir now and give them to its incarnation at @time
 * (rsp_maps__set_cgroup()). Return: 0, -ENOENT (gone), -ESRCH, -ENOMEM.
 */
RSP_API int rsp_procfs__load_cgroup(struct rsp_maps *m, const char *proc_dir, uint32_t pid,
				    uint64_t time);

/**
 * rsp_procfs__load_all() - snapshot every process in @proc_dir, then sweep
 * @nr_loaded: processes loaded (may be NULL)
 *
 * Processes that exit while they are read are skipped. Return: 0, or
 * -errno when @proc_dir cannot be read (one sentence in @err).
 */
RSP_API int rsp_procfs__load_all(struct rsp_maps *m, const char *proc_dir, uint64_t time,
				 unsigned *nr_loaded, struct rsp_buf *err);

#endif /* RSP_MAPS_H */
