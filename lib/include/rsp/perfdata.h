/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_PERFDATA_H
#define RSP_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/socktab.h>
#include <rsp/catalogue.h>
#include <rsp/ksyms.h>
#include <rsp/schema.h>
#include <rsp/window.h>

/*
 * perf.data files: the flight recorder's dumps, written so that perf's own
 * tools read them (perf script, perf sched timehist), and read back by
 * `rspctl analyze` together with what `perf record` writes.
 *
 * The layout is perf's (tools/perf/Documentation/perf.data-file-format.txt
 * in the kernel sources): a header, one attr per event with its sample ids,
 * the data section (raw records), then the feature sections. Three objects:
 *
 *   rsp_tracedata  the HEADER_TRACING_DATA blob (tracepoint formats):
 *                  built from tracefs text by rspd, parsed with libtraceevent
 *   rsp_pdwriter   streams a file: process model, window records, features
 *   rsp_perfdata   a parsed file: schema, what the file records, its window
 *
 * How rsp's event set appears to perf: evsels with the same catalogue event
 * and role that differ only in their callchain (the two sched_switch evsels
 * of `--stacks sleeps`) become one attr with a callchain, and the records of
 * the evsel without one get an empty callchain, because perf's tools key
 * their handlers on one evsel per tracepoint name. A STACK_COPY evsel
 * (`--stacks sampled:N`) is named RSP_PD_STACK_COPY_PREFIX + event, so that
 * perf's sched tools do not count its records as switches and the reader
 * restores its role.
 */

/* Feature bits (tools/perf/util/header.h, enum HEADER_*) rsp writes or reads. */
enum rsp_pd_feature {
	RSP_PD_FEAT_TRACING_DATA = 1,
	RSP_PD_FEAT_BUILD_ID = 2,
	RSP_PD_FEAT_HOSTNAME = 3,
	RSP_PD_FEAT_OSRELEASE = 4,
	RSP_PD_FEAT_VERSION = 5,
	RSP_PD_FEAT_ARCH = 6,
	RSP_PD_FEAT_NRCPUS = 7,
	RSP_PD_FEAT_CPUDESC = 8,
	RSP_PD_FEAT_CPUID = 9,
	RSP_PD_FEAT_TOTAL_MEM = 10,
	RSP_PD_FEAT_CMDLINE = 11,
	RSP_PD_FEAT_EVENT_DESC = 12,
	RSP_PD_FEAT_SAMPLE_TIME = 21,
	RSP_PD_FEAT_CLOCKID = 23,
	RSP_PD_FEAT_CLOCK_DATA = 29,
	/*
	 * rsp's own section (not perf's): the host's boot id and the socket
	 * table rspd read from /proc/net at start (sockets older than it), for
	 * rspctl merge. A bit far above perf's HEADER_LAST_FEATURE: perf skips
	 * such sections, and rsp's table entries come last (table in bit order).
	 * Layout: u32 version (1), perf string boot id, u32 socket count, u32
	 * entry size (56), then per socket u64 sk, u8 proto, u8 state, u16 0,
	 * u32 inode, local and remote as struct rsp_sockaddr (20 bytes each).
	 */
	RSP_PD_FEAT_RSP_HOST = 240,
	/* rsp's own: syscall profiles (rsp/sysdump.h); perf skips bits it does not know */
	RSP_PD_FEAT_RSP_SYSCALLS = 241,
	/*
	 * rsp's own: each process's cgroup v2 path and namespaced pid as rspd's
	 * process model knew them when it wrote the dump. Layout: u32 version
	 * (1), u32 count, then per process u32 pid, u32 nspid (0: unknown), u64
	 * a time it was alive (perf clock), perf string path ("": unknown).
	 */
	RSP_PD_FEAT_RSP_CGROUPS = 242,
	/*
	 * rsp's own: the trigger that made the dump (rspctl trigger). Layout:
	 * u32 version (1), perf strings name, condition and what tripped it
	 * ("p99 33.6ms of 210 calls over 10 s"), u64 the trip time (perf
	 * clock), u64 the post-trigger time recorded after it, ns.
	 */
	RSP_PD_FEAT_RSP_TRIGGER = 243,
};

/* perf's own record types that rsp writes or must recognise. */
#define RSP_PD_RECORD_AUXTRACE	     71
#define RSP_PD_RECORD_FINISHED_ROUND 68
#define RSP_PD_RECORD_COMPRESSED     81
#define RSP_PD_RECORD_FINISHED_INIT  82
#define RSP_PD_RECORD_USER_START     64

/* EVENT_DESC name prefix of a STACK_COPY evsel: "rsp_stack_copy:sched_switch". */
#define RSP_PD_STACK_COPY_PREFIX "rsp_stack_copy:"

/* The trigger that made a dump (RSP_PD_FEAT_RSP_TRIGGER). */
struct rsp_pd_trigger {
	const char *name, *condition, *value;
	uint64_t trip_ns, post_ns;
};

/* --- rsp_tracedata: the HEADER_TRACING_DATA blob ------------------------- */

struct tep_handle;

/** One tracepoint format file, as tracefs prints it. */
struct rsp_tracedata_event {
	const char *system; /* "sched" */
	const char *format; /* the text of events/sched/sched_switch/format */
	size_t len;
};

/**
 * rsp_tracedata__build() - the tracing-data blob perf's trace-event-read.c reads
 * @out:         the blob is appended here
 * @header_page: text of tracefs events/header_page; @header_event likewise
 * @events:      @nr format files, grouped by system in the blob in order of
 *               first appearance
 * @printk:      text of tracefs printk_formats, or NULL
 * @kallsyms_at: if not NULL, set to the offset in the blob of the u32
 *               kallsyms size (the writer puts the dump's kernel symbols
 *               there, see rsp_perfdata_meta)
 *
 * The blob has perf's version "0.6", an empty kallsyms and no saved
 * command lines. Return: 0 or -ENOMEM/-EINVAL.
 */
RSP_API int rsp_tracedata__build(struct rsp_buf *out, const char *header_page, size_t hp_len,
				 const char *header_event, size_t he_len,
				 const struct rsp_tracedata_event *events, int nr,
				 const char *printk, size_t printk_len, size_t *kallsyms_at);

/**
 * rsp_tracedata__parse() - load a tracing-data blob into libtraceevent
 * @buf:  the blob, @len bytes (untrusted: every length is checked)
 * @base: the blob's offset in its file, for error messages
 * @kallsyms, @kallsyms_len: if not NULL, set to the blob's kallsyms text
 *        (inside @buf; NULL and 0 when it has none, as perf record writes)
 * @err:  on failure, one sentence naming the offset and what was wrong
 *
 * Return: a tep handle with the blob's formats (free with tep_free()), or
 * NULL. Formats libtraceevent cannot parse are left out with a warning
 * through the log hook; the schema then reports those events unusable.
 */
RSP_API struct tep_handle *rsp_tracedata__parse(const void *buf, size_t len, uint64_t base,
						const char **kallsyms, size_t *kallsyms_len,
						struct rsp_buf *err);

/* --- rsp_pdwriter: writing a perf.data file -------------------------------- */

/** A build id of a file (or of the kernel) the records refer to. */
struct rsp_pd_build_id {
	const char *path; /* "/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]" */
	uint8_t id[20];
	uint8_t size;
	bool kernel;
};

/** What only the live system knows; the writer copies what it needs. */
struct rsp_perfdata_meta {
	const char *hostname, *os_release, *arch, *version, *cpu_desc, *cpuid;
	unsigned nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	int argc; /* CMDLINE: argv[0] is the program's full path */
	const char *const *argv;
	const void *tracing_data; /* rsp_tracedata__build() output, NULL: none */
	size_t tracing_size;
	/*
	 * Kernel symbols: the writer puts those the written records need (the
	 * kernel addresses of sample ips and callchains, rsp_ksyms__mark())
	 * into the tracing data's kallsyms slot, at @tracing_kallsyms_at (from
	 * rsp_tracedata__build()). perf skips that slot; rspctl analyze names
	 * kernel frames with it on any machine. Borrowed, not copied: it must
	 * live until rsp_pdwriter__delete(). NULL: no kernel symbols.
	 */
	const struct rsp_ksyms *ksyms;
	size_t tracing_kallsyms_at;
	int clockid;		 /* the attrs' clock, e.g. CLOCK_MONOTONIC */
	uint64_t clockid_res_ns; /* HEADER_CLOCKID */
	uint64_t wall_clock_ns;	 /* HEADER_CLOCK_DATA pair taken together; 0: none */
	uint64_t clockid_time_ns;
	/* RSP_PD_FEAT_RSP_HOST: written when boot_id is not NULL (copied) */
	const char *boot_id;
	const struct rsp_sock_info *sockets; /* copied */
	size_t nr_sockets;
	/* RSP_PD_FEAT_RSP_TRIGGER: NULL for a dump no trigger made (copied) */
	const struct rsp_pd_trigger *trigger;
};

/** A synthesized MMAP2 record (perf's layout, without the id trailer). */
struct rsp_pd_mmap2 {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;
	const char *filename;
};

/** What a writer wrote. */
struct rsp_pd_stats {
	uint64_t kernel_symbols;  /* in the kallsyms slot */
	uint64_t records;	  /* window records */
	uint64_t process_records; /* synthesized COMM/FORK/MMAP2 */
	uint64_t lost_records;	  /* PERF_RECORD_LOST among the window records */
	uint64_t padded_records;  /* records that got an empty callchain */
	uint64_t first_time, last_time;
	uint64_t bytes; /* file size once finished */
};

struct rsp_pdwriter;

/**
 * rsp_pdwriter__new() - start a perf.data file on @fd
 * @fd:   open for writing, positioned anywhere (the writer uses offsets from
 *        0 and pwrite for the header); the caller closes it
 * @s:    the schema of the records that will be added; must stay alive
 *        until rsp_pdwriter__delete()
 * @m:    host description and tracing data (copied)
 *
 * Writes the header placeholder, the ids and the attrs. Then add process
 * records (rsp_pdwriter__comm() ...), then window records, then
 * rsp_pdwriter__finish(). Return: the writer, or NULL with one sentence in
 * @err (errno set). Free with rsp_pdwriter__delete().
 */
RSP_API struct rsp_pdwriter *rsp_pdwriter__new(int fd, const struct rsp_schema *s,
					       const struct rsp_perfdata_meta *m,
					       struct rsp_buf *err);
/** rsp_pdwriter__delete() - free the writer (it does not close the fd). NULL is fine. */
RSP_API void rsp_pdwriter__delete(struct rsp_pdwriter *w);

/*
 * Process model, synthesized before the window's records like perf record
 * does for the processes alive when it starts (time 0, before a
 * PERF_RECORD_FINISHED_INIT). Return: 0 or -errno (-EINVAL once window
 * records were added).
 */
RSP_API int rsp_pdwriter__comm(struct rsp_pdwriter *w, uint32_t pid, uint32_t tid,
			       const char *comm);
RSP_API int rsp_pdwriter__fork(struct rsp_pdwriter *w, uint32_t pid, uint32_t ppid, uint32_t tid,
			       uint32_t ptid);
RSP_API int rsp_pdwriter__mmap2(struct rsp_pdwriter *w, const struct rsp_pd_mmap2 *m);
/** rsp_pdwriter__kernel_mmap() - the kernel's text map, perf's "[kernel.kallsyms]_text". */
RSP_API int rsp_pdwriter__kernel_mmap(struct rsp_pdwriter *w, uint64_t start, uint64_t len,
				      uint64_t pgoff, const char *name);
/** rsp_pdwriter__build_id() - add an entry to HEADER_BUILD_ID (copied). */
RSP_API int rsp_pdwriter__build_id(struct rsp_pdwriter *w, const struct rsp_pd_build_id *b);

/**
 * rsp_pdwriter__filter() - write only the window records and process
 * records @f keeps (rsp/tidfilter.h: rspctl dump --netns); rsp_pdwriter__window()
 * scans the window with it first. @f stays the caller's and must live until
 * the last record is written. NULL: every record.
 */
struct rsp_tidfilter;
RSP_API void rsp_pdwriter__filter(struct rsp_pdwriter *w, struct rsp_tidfilter *f);
/** rsp_pdwriter__keeps() - @tid's records are written (no filter, or the filter keeps it). */
RSP_API bool rsp_pdwriter__keeps(const struct rsp_pdwriter *w, uint32_t tid);

/**
 * rsp_pdwriter__pending() - a record the window does not hold yet, written
 * with it (before rsp_pdwriter__window()): rspd's BPF CARRY records of what
 * still waits in the kernel's maps when the dump is made (a waking whose
 * wakee has not run since, a request in flight: tracepoints/bpf_records.h),
 * their header's time the dump's. The record is copied. Return: 0 or -ENOMEM.
 */
RSP_API int rsp_pdwriter__pending(struct rsp_pdwriter *w, const struct perf_event_header *rec);

/**
 * rsp_pdwriter__window() - add every record of @win in [from, to], in time
 * order, from pinned chunks: the window's writer goes on appending.
 * Return: 0 or -errno (-ENOMEM, a write error).
 */
RSP_API int rsp_pdwriter__window(struct rsp_pdwriter *w, struct rsp_window *win, uint64_t from,
				 uint64_t to);

/**
 * rsp_pdwriter__finish() - write the feature sections and the final header
 * Return: 0 or -errno from write(2) (e.g. -ENOSPC); the caller removes the
 * partial file. The fd is not synced: that is the caller's choice.
 */
RSP_API int rsp_pdwriter__finish(struct rsp_pdwriter *w);

/**
 * rsp_pdwriter__rsp_syscalls() - the syscall profiles section (rsp/sysdump.h),
 * copied, written by rsp_pdwriter__finish() as feature RSP_PD_FEAT_RSP_SYSCALLS.
 * Return: 0 or -ENOMEM.
 */
RSP_API int rsp_pdwriter__rsp_syscalls(struct rsp_pdwriter *w, const void *buf, size_t len);
RSP_API void rsp_pdwriter__stats(const struct rsp_pdwriter *w, struct rsp_pd_stats *st);

/**
 * rsp_pdwriter__rsp_cgroup() - one process's cgroup @path ("" if unknown)
 * and namespaced pid @nspid (0 if unknown) as of @time, a time it was
 * alive; written by rsp_pdwriter__finish() as RSP_PD_FEAT_RSP_CGROUPS
 * (present, possibly empty, once this was called). @path shorter than
 * 4096 bytes. Return: 0, -EINVAL or -ENOMEM.
 */
RSP_API int rsp_pdwriter__rsp_cgroup(struct rsp_pdwriter *w, uint32_t pid, uint32_t nspid,
				     uint64_t time, const char *path);

/* --- rsp_perfdata: reading a perf.data file -------------------------------- */

/** What a file records besides its events (the features), and its shape. */
struct rsp_dump_info {
	char path[1024];
	uint64_t file_size;
	char hostname[256];
	char os_release[256];
	char arch[64];
	char version[128]; /* "rsp 0.1.0" for rsp's dumps, perf's version otherwise */
	char cpu_desc[256];
	char cpuid[128];
	char cmdline[2048]; /* the recording command, arguments joined by spaces */
	unsigned nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	bool written_by_rsp;
	bool has_tracing_data;
	uint64_t kernel_symbols; /* in the tracing data's kallsyms; 0: none */
	int clockid;		 /* -1: not recorded */
	bool clock_data;	 /* a wall-clock reference pair is present */
	uint64_t wall_clock_ns, clockid_time_ns;
	int nr_attrs;
	int nr_build_ids;
	uint64_t data_offset, data_size;
	uint64_t records;	  /* kernel records loaded into the window */
	uint64_t process_records; /* synthesized process model (not in the window) */
	uint64_t perf_records;	  /* perf's own bookkeeping records, skipped */
	uint64_t first_time, last_time;
	bool event_present[RSP_EV__NR]; /* an attr of the event, usable */
	/* rsp's syscall profiles section (rsp/sysdump.h), in the mapped file; NULL: none */
	const void *rsp_syscalls;
	uint64_t rsp_syscalls_size, rsp_syscalls_offset;
	/* RSP_PD_FEAT_RSP_HOST (rspctl merge needs it) */
	bool has_host;
	char boot_id[40];
	uint32_t nr_sockets; /* rsp_perfdata__sockets() */
	/* RSP_PD_FEAT_RSP_CGROUPS: the file knows its processes' cgroups */
	bool has_cgroups;
	uint32_t nr_cgroups; /* rsp_perfdata__cgroup() */
	/* RSP_PD_FEAT_RSP_TRIGGER: a trigger made the dump */
	bool has_trigger;
	char trigger_name[32], trigger_condition[256], trigger_value[96];
	uint64_t trigger_time, trigger_post_ns;
};

/** One entry of RSP_PD_FEAT_RSP_CGROUPS; @path in the file's memory. */
struct rsp_pd_cgroup {
	uint32_t pid, nspid;
	uint64_t time;
	const char *path; /* "" when unknown */
};

struct rsp_perfdata;

/**
 * rsp_perfdata__open() - map and check a perf.data file
 *
 * Checks the header, the attrs and their ids, and the feature sections;
 * builds the schema (events from the attrs and tracing data, names and
 * roles from EVENT_DESC). Untrusted input: every length and offset is
 * checked. Return: the file, or NULL with one sentence in @err naming the
 * file, the offset and what was wrong. Free with rsp_perfdata__delete().
 */
RSP_API struct rsp_perfdata *rsp_perfdata__open(const char *path, struct rsp_buf *err);

/**
 * rsp_perfdata__parse() - the same on @len bytes in memory
 * @buf: 8-byte aligned; must stay alive and unchanged until rsp_perfdata__delete()
 * @name: how to call the bytes in messages
 */
RSP_API struct rsp_perfdata *rsp_perfdata__parse(const void *buf, size_t len, const char *name,
						 struct rsp_buf *err);
/** rsp_perfdata__delete() - unmap and free, with the window; NULL is fine. */
RSP_API void rsp_perfdata__delete(struct rsp_perfdata *pd);

/** The schema of the file's records; owned by @pd. */
RSP_API const struct rsp_schema *rsp_perfdata__schema(const struct rsp_perfdata *pd);
/** What the file records; owned by @pd (counts are filled by the load). */
RSP_API const struct rsp_dump_info *rsp_perfdata__info(const struct rsp_perfdata *pd);

/**
 * rsp_perfdata__sockets() - the socket table of RSP_PD_FEAT_RSP_HOST
 * (info->nr_sockets entries, owned by @pd; NULL when it has none)
 */
RSP_API const struct rsp_sock_info *rsp_perfdata__sockets(const struct rsp_perfdata *pd);

/**
 * rsp_perfdata__cgroup() - entry @i (< info->nr_cgroups) of the file's
 * RSP_PD_FEAT_RSP_CGROUPS section (checked when the file was opened).
 * Return: 0, or -ENOENT when there is no such entry.
 */
RSP_API int rsp_perfdata__cgroup(const struct rsp_perfdata *pd, uint32_t i,
				 struct rsp_pd_cgroup *out);

/**
 * rsp_perfdata__load() - check every record of the data section and put
 * the kernel's records in a window sized for them, which refers to them in
 * the file's memory (once; later calls return at once). Return: 0, or -EINVAL/-ENOMEM with one
 * sentence in @err naming the offset of the bad record.
 */
RSP_API int rsp_perfdata__load(struct rsp_perfdata *pd, struct rsp_buf *err);

/* The file as a query source: rsp_perfdata__source(), rsp/query.h. */

/**
 * rsp_perfdata__process_model() - the synthesized process records (COMM,
 * FORK, MMAP2 ... written before the data's PERF_RECORD_FINISHED_INIT, or
 * with no timestamp), for resolving symbols: calls @fn for each, in file
 * order, until it returns non-zero. Return: what @fn returned, or 0.
 */
RSP_API int rsp_perfdata__process_model(const struct rsp_perfdata *pd,
					int (*fn)(const struct perf_event_header *rec, void *ctx),
					void *ctx);

#endif /* RSP_PERFDATA_H */
