#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plane/pstore.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/safepath.h"

int
pstore_write(int dfd, const char *path, const char *name, const char *tmp,
    const char *buf, size_t len, char *err, size_t errlen)
{
	char why[128];
	int fd = -1, rc = -1;
	size_t off = 0;

	if (dfd == -1)
		return 0;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (fd == -1)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) == -1 || fsync(dfd) == -1)
		goto fail;
	rc = 0;
	goto out;
fail:
	errbuf_set(err, errlen, "%s: cannot store %s: %s", path, name,
	    strerror_r(errno, why, sizeof(why)));
	(void)unlinkat(dfd, tmp, 0);
out:
	if (fd != -1)
		close(fd);
	return rc;
}

char *
pstore_read(int dfd, const char *path, const char *name, uid_t owner,
    size_t max, size_t *len, char *err, size_t errlen)
{
	char full[4096];
	char *buf;
	int fd;

	*len = 0;
	err[0] = '\0';
	/* Only "no such file" means none: any other error must not
	 * silently drop what the file holds (an epoch floor). */
	if ((fd = safepath_open_file(dfd, path, name, owner, err, errlen)) < 0)
		return NULL;
	snprintf(full, sizeof(full), "%s/%s", path, name);
	buf = file_read_fd(fd, full, max, 0, len, err, errlen);
	close(fd);
	return buf;
}

int
pstore_subdir(int dfd, const char *path, const char *name, uid_t owner,
    char *err, size_t errlen)
{
	char full[4096];
	int fd;

	snprintf(full, sizeof(full), "%s/%s", path, name);
	if (mkdirat(dfd, name, 0700) == -1 && errno != EEXIST) {
		errbuf_set(err, errlen, "%s: cannot create it: %s", full, strerror(errno));
		return -1;
	}
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		errbuf_set(err, errlen, "%s: %s", full, strerror(errno));
		return -1;
	}
	if (safepath_check_dir(fd, full, owner, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
is_ours(const char *name, const char *const *ours)
{
	for (; *ours != NULL; ours++)
		if (strcmp(name, *ours) == 0)
			return 1;
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

int
pstore_only(int dfd, const char *path, const char *const *ours, const char *who,
    char *err, size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	struct dirent *de;
	DIR *d;
	int fd, rc = -1;

	/* A descriptor of its own: closedir closes it, and the listing
	 * must not move dfd's offset. */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		errbuf_set(err, errlen, "--state-dir %s: cannot list it: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		if (is_ours(de->d_name, ours))
			continue;
		errbuf_set(err, errlen, "--state-dir %s: holds \"%s\", not the "
		    "guard's: refusing to hand the folder to %s (give the guard a "
		    "folder of its own)", path, errbuf_show(de->d_name,
		    strlen(de->d_name), shown), who);
		goto out;
	}
	if (errno != 0) {
		errbuf_set(err, errlen, "--state-dir %s: cannot list it: %s", path,
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	closedir(d);
	return rc;
}

int
pstore_give(int dfd, const char *name, uid_t uid, gid_t gid)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 || st.st_uid != 0)
		return 0;
	if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && st.st_nlink == 1))
		return 0;
	return fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW);
}

char *
pstore_read_path(const char *path, const char *what, uid_t owner, size_t max,
    size_t *len, char *err, size_t errlen)
{
	char why[512], *buf;
	int fd;

	if ((fd = safepath_open_path(path, owner, why, sizeof(why))) == -1) {
		errbuf_set(err, errlen, "%s: %s", what, why);
		return NULL;
	}
	buf = file_read_fd(fd, path, max, 0, len, err, errlen);
	close(fd);
	return buf;
}
