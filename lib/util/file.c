// SPDX-License-Identifier: LGPL-2.1
/*
 * Files at user-named paths: the rule is in rsp/file.h.
 *
 * Why not open(path, O_CREAT|O_TRUNC): it follows a link planted at the
 * path, truncates whatever is there (as root, -o /dev/sda would write the
 * disk) and blocks on a FIFO with no reader. Why not mkstemp + rename: a
 * rename replaces whatever is at the path, /dev/null included.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <rsp/file.h>

#define TMP_TRIES 100

const char *rsp_file__type(mode_t m)
{
	return S_ISREG(m)    ? "a regular file"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISLNK(m)  ? "a symbolic link"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "a special file";
}

/* The directory of @path, opened to create and rename in; @f->name its last component. */
static int open_dir(struct rsp_outfile *f, const char *path, struct rsp_buf *err)
{
	const char *slash = strrchr(path, '/');
	char dir[sizeof(f->path)];
	const char *name = slash ? slash + 1 : path;

	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) >= sizeof(f->name) || strlen(path) >= sizeof(f->path)) {
		rsp_buf__printf(err, "%s does not name a file", path);
		return -EINVAL;
	}
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->path, sizeof(f->path), "%s", path);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0 && errno == EACCES) /* write-only directory: no fsync of it then */
		f->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0) {
		int e = errno;

		rsp_buf__printf(err, "cannot create a file in %s: %s", dir, strerror(e));
		return -e;
	}
	return 0;
}

/* What is at the path now: nothing, or a regular file we may replace. */
static int check_target(struct rsp_outfile *f, const char *path, unsigned flags,
			struct rsp_buf *err)
{
	struct stat st;

	if (fstatat(f->dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		rsp_buf__printf(err, "cannot check %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		rsp_buf__printf(err,
				"%s is %s, not a regular file: rsp writes only a new file or "
				"replaces a regular one — choose another path",
				path, rsp_file__type(st.st_mode));
		return -EEXIST;
	}
	if (flags & RSP_FILE_NOREPLACE) {
		rsp_buf__printf(err, "%s already exists", path);
		return -EEXIST;
	}
	f->replace = true;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

/*
 * ".NAME.rsp-tmp.XXXXXX", created exclusively (never through a link), 0600,
 * locked: a name rsp recognises, to remove it where a killed writer left it.
 */
static int create_tmp(struct rsp_outfile *f, const char *path, struct rsp_buf *err)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	for (int k = 0; k < TMP_TRIES; k++) {
		unsigned char rnd[6];
		char sfx[7];

		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			for (size_t i = 0; i < sizeof(rnd); i++)
				rnd[i] = (unsigned char)rand();
		for (size_t i = 0; i < sizeof(rnd); i++)
			sfx[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		sfx[6] = '\0';
		snprintf(f->tmp, sizeof(f->tmp), ".%.200s" RSP_FILE_TMP_MARK "%s", f->name, sfx);
		f->fd = openat(f->dirfd, f->tmp,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f->fd >= 0) {
			flock(f->fd, LOCK_EX); /* new and ours: cannot block */
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	rsp_buf__printf(err, "cannot create a file next to %s: %s", path, strerror(errno));
	return -errno;
}

int rsp_outfile__open(struct rsp_outfile *f, const char *path, unsigned flags, struct rsp_buf *err)
{
	int ret;

	memset(f, 0, sizeof(*f));
	f->fd = f->dirfd = -1;
	ret = open_dir(f, path, err);
	if (!ret)
		ret = check_target(f, path, flags, err);
	if (!ret)
		ret = create_tmp(f, path, err);
	if (ret && f->dirfd >= 0) {
		close(f->dirfd);
		f->dirfd = -1;
	}
	return ret;
}

void rsp_outfile__abort(struct rsp_outfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->dirfd >= 0) {
		unlinkat(f->dirfd, f->tmp, 0);
		close(f->dirfd);
	}
	f->fd = f->dirfd = -1;
}

static bool is_checked(const struct rsp_outfile *f, const char *name)
{
	struct stat st;

	return !fstatat(f->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
	       st.st_dev == f->dev && st.st_ino == f->ino;
}

/*
 * Replace the regular file checked at open: exchange, then look at what
 * came out. Anything but that file (someone swapped the path meanwhile)
 * goes back where it was.
 */
static int swap_in(struct rsp_outfile *f)
{
	if (renameat2(f->dirfd, f->tmp, f->dirfd, f->name, RENAME_EXCHANGE)) {
		if (errno != EINVAL)
			return -errno;
		/* A file system without exchange: check again, just before. */
		if (!is_checked(f, f->name))
			return -EEXIST;
		return renameat(f->dirfd, f->tmp, f->dirfd, f->name) ? -errno : 0;
	}
	if (is_checked(f, f->tmp))
		return 0; /* the old file, now at the temp name: abort removes it */
	if (renameat2(f->dirfd, f->tmp, f->dirfd, f->name, RENAME_EXCHANGE))
		return -errno;
	return -EEXIST;
}

/* The temp file becomes the new file; never over one that appeared meanwhile. */
static int move_new(struct rsp_outfile *f)
{
	if (!renameat2(f->dirfd, f->tmp, f->dirfd, f->name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL) /* EINVAL: no RENAME_NOREPLACE here; a link fails the same way */
		return -errno;
	if (linkat(f->dirfd, f->tmp, f->dirfd, f->name, 0))
		return -errno;
	return 0; /* abort unlinks the temp name */
}

int rsp_outfile__commit(struct rsp_outfile *f, struct rsp_buf *err)
{
	int ret = 0;

	if (fsync(f->fd))
		ret = -errno;
	if (close(f->fd) && !ret)
		ret = -errno;
	f->fd = -1;
	if (!ret && f->replace)
		ret = swap_in(f);
	else if (!ret)
		ret = move_new(f);
	if (ret == -EEXIST)
		rsp_buf__printf(err,
				"%s was replaced by something else while rsp wrote it; it is "
				"left as it is — choose another path",
				f->path);
	else if (ret)
		rsp_buf__printf(err, "cannot write %s: %s", f->path, strerror(-ret));
	if (!ret) /* best effort: the file is whole; only its new name may not survive a crash */
		(void)fsync(f->dirfd);
	rsp_outfile__abort(f); /* the temp name: nothing, or the replaced file */
	return ret;
}

int rsp_file__write(const char *path, const void *data, size_t len, unsigned flags,
		    struct rsp_buf *err)
{
	struct rsp_outfile f;
	const char *p = data;
	int ret = rsp_outfile__open(&f, path, flags, err);

	if (ret)
		return ret;
	while (len) {
		ssize_t w = write(f.fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			ret = -errno;
			rsp_buf__printf(err, "cannot write %s: %s", path, strerror(errno));
			rsp_outfile__abort(&f);
			return ret;
		}
		p += w;
		len -= (size_t)w;
	}
	return rsp_outfile__commit(&f, err);
}

int rsp_file__open_regular(const char *path, struct rsp_buf *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), e;

	if (fd < 0 || fstat(fd, &st)) {
		e = errno;
		rsp_buf__printf(err, "cannot read %s: %s", path, strerror(e));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		e = EINVAL;
		rsp_buf__printf(err, "%s is %s, not a regular file — give a file", path,
				rsp_file__type(st.st_mode));
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) == 0) /* regular files do not block; clear it anyway */
		return fd;
	e = errno;
	rsp_buf__printf(err, "cannot read %s: %s", path, strerror(e));
fail:
	if (fd >= 0)
		close(fd);
	return -e;
}

/* Whether the last 6 bytes of @name, of length @len, are a temp file's random suffix. */
static bool random_suffix(const char *name, size_t len)
{
	for (size_t i = len - 6; i < len; i++)
		if (!isalnum((unsigned char)name[i]))
			return false;
	return true;
}

/*
 * ".TARGET.rsp-tmp.XXXXXX" (@is_target NULL: for any TARGET); with
 * @is_target, also ".TARGET.XXXXXX", the name before the mark (what an
 * older rspd left in its dump directory).
 */
bool rsp_file__is_temp(const char *name, bool (*is_target)(const char *name))
{
	size_t len = strlen(name), mark = strlen(RSP_FILE_TMP_MARK), tlen;
	char target[256];

	if (len < 9 || name[0] != '.' || !random_suffix(name, len))
		return false;
	if (len >= 2 + mark + 6 && !memcmp(name + len - 6 - mark, RSP_FILE_TMP_MARK, mark))
		tlen = len - 7 - mark;
	else if (name[len - 7] == '.' && is_target)
		tlen = len - 8;
	else
		return false;
	if (tlen >= sizeof(target))
		return false;
	memcpy(target, name + 1, tlen);
	target[tlen] = '\0';
	return !is_target || is_target(target);
}
