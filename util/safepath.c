#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/errbuf.h"
#include "util/safepath.h"

/* Deeper than any real tree; the walk up ends at / long before. */
#define SAFEPATH_MAX_DEPTH	256

/* The folder level levels above real (a canonical path), for messages:
 * "/" once the components run out. */
static void
ancestor(const char *real, int level, char *out, size_t outlen)
{
	char *slash;

	errbuf_set(out, outlen, "%s", real);
	while (level-- > 0) {
		if ((slash = strrchr(out, '/')) == NULL || slash == out) {
			errbuf_set(out, outlen, "/");
			return;
		}
		*slash = '\0';
	}
}

/* 0 when st may be trusted at level (0: the folder itself). */
static int
check_one(const struct stat *st, int level, uid_t uid, const char *name,
    char *err, size_t errlen)
{
	if (st->st_uid != 0 && st->st_uid != uid) {
		errbuf_set(err, errlen, "%s: owned by uid %u, neither root nor uid %u",
		    name, (unsigned)st->st_uid, (unsigned)uid);
		return -1;
	}
	if ((st->st_mode & 022) == 0)
		return 0;
	if (level > 0 && (st->st_mode & S_ISVTX))
		return 0;
	errbuf_set(err, errlen, "%s: writable by %s (mode %04o)%s", name,
	    (st->st_mode & 002) ? "anyone" : "its group",
	    (unsigned)(st->st_mode & 07777),
	    level > 0 ? ": a folder above must not be, unless sticky" :
	    ": only its owner may write it (chmod go-w)");
	return -1;
}

int
safepath_check_dir(int dirfd, const char *path, uid_t uid, char *err,
    size_t errlen)
{
	struct stat st, up;
	char *real, name[PATH_MAX];
	int cur = -1, next, level, rc = -1;

	real = realpath(path, NULL);
	if (fstat(dirfd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		errbuf_set(err, errlen, "%s: not a directory", path);
		goto out;
	}
	if (check_one(&st, 0, uid, path, err, errlen) == -1)
		goto out;
	if ((cur = dup(dirfd)) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	for (level = 1; level <= SAFEPATH_MAX_DEPTH; level++) {
		if (real != NULL)
			ancestor(real, level, name, sizeof(name));
		else
			errbuf_set(name, sizeof(name), "%s: the folder %d above it",
			    path, level);
		if ((next = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
		    fstat(next, &up) == -1) {
			errbuf_set(err, errlen, "%s: %s", name, strerror(errno));
			if (next != -1)
				close(next);
			goto out;
		}
		/* ".." of / is / itself. */
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino) {
			close(next);
			rc = 0;
			goto out;
		}
		close(cur);
		cur = next;
		st = up;
		if (check_one(&st, level, uid, name, err, errlen) == -1)
			goto out;
	}
	errbuf_set(err, errlen, "%s: more than %d folders deep", path,
	    SAFEPATH_MAX_DEPTH);
out:
	if (cur != -1)
		close(cur);
	free(real);
	return rc;
}

int
safepath_open_dir(const char *path, uid_t uid, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1) {
		int e = errno;
		/* O_NOFOLLOW says ELOOP (or ENOTDIR with O_DIRECTORY) for a
		 * link: name the cause. */
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			errbuf_set(err, errlen, "%s: is a symbolic link: give the "
			    "folder itself", path);
		else
			errbuf_set(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (safepath_check_dir(fd, path, uid, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

int
safepath_open_file(int dirfd, const char *path, const char *name, uid_t uid,
    char *err, size_t errlen)
{
	struct stat st;
	char label[PATH_MAX];
	int fd;

	err[0] = '\0';
	errbuf_set(label, sizeof(label), "%s/%s", path, name);
	/* O_NONBLOCK: a FIFO in its place cannot hang the open. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK);
	if (fd == -1) {
		if (errno == ENOENT)
			return -2;
		errbuf_set(err, errlen, "%s: %s", label, errno == ELOOP ?
		    "is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", label, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		errbuf_set(err, errlen, "%s: not a regular file with one link", label);
		goto bad;
	}
	if (check_one(&st, 0, uid, label, err, errlen) == -1)
		goto bad;
	return fd;
bad:
	close(fd);
	return -1;
}

int
safepath_open_path(const char *path, uid_t uid, char *err, size_t errlen)
{
	char *real, *slash;
	int dfd = -1, fd = -1;

	if ((real = realpath(path, NULL)) == NULL) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	slash = strrchr(real, '/');
	*slash = '\0';
	if ((dfd = safepath_open_dir(slash == real ? "/" : real, uid, err,
	    errlen)) != -1) {
		fd = safepath_open_file(dfd, real, slash + 1, uid, err, errlen);
		if (fd == -2) {
			errbuf_set(err, errlen, "%s: %s", path, strerror(ENOENT));
			fd = -1;
		}
		close(dfd);
	}
	free(real);
	return fd;
}
