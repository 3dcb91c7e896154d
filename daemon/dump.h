/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RSPD_DUMP_H
#define RSPD_DUMP_H

/*
 * The flight recorder: dumps of the window as perf.data files.
 *
 *   dump.c       (this header) the dump thread: writes a file (temp,
 *                fsync, rename), keeps the dump directory within its
 *                limits, answers
 *   dumpmeta.c   (dumpmeta.h) what a dump needs that only the live system
 *                knows, taken at start (tracepoint formats, host, command
 *                line, kernel)
 *   dumpprocs.c  (dumpprocs.h) the processes alive at dump time, as
 *                COMM/FORK/MMAP2 records, and the build ids of the files
 *                they map
 *
 * Dumps are written by their own thread from pinned chunks: the capture
 * loop never waits for one, and the control socket's threads hand `rspctl
 * dump` requests over and answer when the dump is done (server.c).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <rsp/buf.h>
#include <rsp/perfdata.h>
#include <rsp/query.h>

#define RSPD_DEFAULT_DUMP_DIR	    "/var/lib/rspd/dumps"
#define RSPD_DEFAULT_DUMP_KEEP	    10
#define RSPD_DEFAULT_DUMP_MAX_BYTES (1ull << 30)

/* The [dump] options (config.c); all may change on SIGHUP. */
struct rspd_dump_config {
	char dir[PATH_MAX];
	unsigned keep;	    /* dumps kept in dir, newest first */
	uint64_t max_bytes; /* total size of the dumps kept in dir */
	bool on_exit;	    /* dump when stopped by SIGTERM/SIGINT */
};

/*
 * Who asked for a dump. -o FILE is created with the owner's uid and gid as
 * the file-system identity (no supplementary groups): an admin-group member
 * writes only where they could write themselves, and owns the file. NULL,
 * or uid 0: rspd's own identity.
 */
struct rspd_dump_owner {
	uint32_t uid, gid;
};

struct rspd;
struct rspd_dump_job;
struct rspd_dump_trigger;

/** rspd_dumper__start() - start the dump thread (before the control socket). */
int rspd_dumper__start(struct rspd *d, char *err, size_t errlen);
/**
 * rspd_dumper__stop() - finish the queued dumps and stop the thread; after
 * rspd_server__stop(): answers nobody reaped are freed.
 */
void rspd_dumper__stop(struct rspd *d);
/** rspd_dumper__configure() - take the [dump] options in d->cfg (start, SIGHUP). */
void rspd_dumper__configure(struct rspd *d);
/**
 * rspd_dumper__submit() - queue a dump
 * @owner:        who asked (see struct rspd_dump_owner); NULL: rspd itself
 * @client, @gen: who to answer (rspd_dumper__reap()), or client < 0 for a
 *                signal's dump, whose outcome is only logged
 * Return: 0, or -EBUSY when too many dumps are queued.
 */
int rspd_dumper__submit(struct rspd *d, const struct rsp_dump_spec *spec,
			const struct rspd_dump_owner *owner, int client, uint32_t gen);
/** rspd_dumper__fd() - readable when finished dumps wait to be reaped; -1 if none. */
int rspd_dumper__fd(struct rspd *d);
/** rspd_dumper__reap() - a finished client dump, or NULL; free with __job_free. */
struct rspd_dump_job *rspd_dumper__reap(struct rspd *d);
/** rspd_dump_job__result() - the answer of @j; false if nobody waits for it. */
bool rspd_dump_job__result(const struct rspd_dump_job *j, unsigned *client, uint32_t *gen,
			   int *status, const struct rsp_buf **answer);
void rspd_dump_job__free(struct rspd_dump_job *j);
/**
 * rspd_dump__write() - write one dump now, on the calling thread
 * @c:      the [dump] options to apply
 * @owner:  NULL: rspd itself
 * @answer: on success the answer to the client (text or JSON), on failure
 *          one sentence naming the file and the problem; also logged
 * @trig:   a trigger's dump: what tripped goes into the file's metadata,
 *          and a failure is left to the trigger to log; NULL otherwise
 * Return: 0 or -errno. A partial file is always removed.
 */
int rspd_dump__write(struct rspd *d, const struct rspd_dump_config *c,
		     const struct rsp_dump_spec *spec, const struct rspd_dump_owner *owner,
		     const struct rspd_dump_trigger *trig, struct rsp_buf *answer);
/**
 * rspd_dumper__submit_trigger() - queue a trigger's dump of the whole window
 * into the dump directory; its outcome goes to rspd_triggers__dumped().
 * Return: 0, -EBUSY (too many queued), -ENOMEM.
 */
int rspd_dumper__submit_trigger(struct rspd *d, const struct rspd_dump_trigger *t);
/**
 * rspd_dump__name() - "@dir/rsp-HOST-20250102T030405.678Z@suffix", a name
 * not yet taken, for the files retention keeps in bounds (suffixes
 * ".perf.data", ".snapshot.txt", ".snapshot.json"). 0 or -errno.
 */
int rspd_dump__name(const struct rspd *d, const char *dir, const char *suffix, char *path,
		    size_t n);
/** rspd_dump__retain() - apply dump-keep and dump-max-bytes; @newest (a name) stays. */
void rspd_dump__retain(struct rspd *d, const char *newest);

#endif
