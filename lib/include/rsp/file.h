/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_FILE_H
#define RSP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <rsp/api.h>
#include <rsp/buf.h>

/*
 * Files at paths a user names (dump -o, hist --save and --diff, snapshot
 * --folded, analyze FILE), read and written by rspd as root or by rspctl.
 *
 * One rule for every file rsp writes: a new file, or an existing regular
 * file replaced whole; anything else at the path (a device node, a FIFO, a
 * directory, a socket, a symbolic link) is refused and left untouched. The
 * data goes to a temp file (mode 0600, ".NAME.rsp-tmp.XXXXXX") in the target's
 * directory, which is fsynced and renamed over the target without following
 * a link planted at the path: renameat2(RENAME_NOREPLACE) for a new file,
 * RENAME_EXCHANGE for a regular one, checked afterwards to have swapped out
 * the very file that was checked (else swapped back). A reader of the path
 * sees the old file or the new one, never a part.
 *
 * Every file rsp reads is opened without blocking (a FIFO with no writer
 * would hang open(2)) and must be a regular file.
 */

/** Refuse to replace an existing file (the caller chose a name of its own). */
#define RSP_FILE_NOREPLACE 1u

struct rsp_outfile {
	int fd;	   /* the temp file: write here */
	int dirfd; /* the target's directory */
	bool replace;
	dev_t dev; /* the regular file being replaced */
	ino_t ino;
	char path[4096];
	char name[256]; /* the target's last component */
	char tmp[256];
};

/**
 * rsp_outfile__open() - check @path and create its temp file.
 * Returns 0 and @f->fd to write to, or -errno with one sentence in @err
 * (naming @path and what is wrong); on failure nothing is left to undo.
 * The temp file holds an exclusive flock(2) until commit or abort, so that a
 * cleaner can tell a file being written from one a killed writer left.
 */
RSP_API int rsp_outfile__open(struct rsp_outfile *f, const char *path, unsigned flags,
			      struct rsp_buf *err);
/**
 * rsp_outfile__commit() - fsync, close, rename over the target, fsync the
 * directory. On failure the temp file is removed and the target is as it
 * was. Either way @f is released.
 */
RSP_API int rsp_outfile__commit(struct rsp_outfile *f, struct rsp_buf *err);
/** rsp_outfile__abort() - remove the temp file and release @f. */
RSP_API void rsp_outfile__abort(struct rsp_outfile *f);

/** rsp_file__write() - write @len bytes as @path by the rule above. */
RSP_API int rsp_file__write(const char *path, const void *data, size_t len, unsigned flags,
			    struct rsp_buf *err);

/**
 * rsp_file__open_regular() - open @path read-only without blocking; the fd
 * (blocking again, the caller closes it) when it is a regular file, else
 * -errno with one sentence in @err.
 */
RSP_API int rsp_file__open_regular(const char *path, struct rsp_buf *err);

/** rsp_file__type() - "a directory", "a FIFO", ...: for messages. */
RSP_API const char *rsp_file__type(mode_t mode);

/* What marks rsp's temp files (".NAME" RSP_FILE_TMP_MARK "XXXXXX"): rspd finds them again. */
#define RSP_FILE_TMP_MARK ".rsp-tmp."

/**
 * rsp_file__is_temp() - is @name one of rsp_outfile__open()'s temp names
 * (".TARGET.rsp-tmp.XXXXXX") for a TARGET that @is_target accepts (NULL:
 * any)? With @is_target, the unmarked ".TARGET.XXXXXX" of older rspd too.
 */
RSP_API bool rsp_file__is_temp(const char *name, bool (*is_target)(const char *name));

#endif /* RSP_FILE_H */
