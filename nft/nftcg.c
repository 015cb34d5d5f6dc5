/* cgroup v2 lookups for the exemption. The id the kernel matches is the
 * cgroup's kernfs node id, which is the inode number of its folder (what
 * nft(8) uses too); the level is counted by walking up to the mount's root,
 * so it is relative to the root this process sees. Run from the host's
 * cgroup namespace: kernels before the nft_socket cgroup-namespace fix
 * count levels from the real root. */
#include <sys/stat.h>
#include <sys/statfs.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/magic.h>

#include "nft/nftcg.h"
#include "util/errbuf.h"
#include "util/num.h"

#define PID_MAX		4194304LL
#define LEVEL_MAX	64
#define LINES_MAX	4096

int
nftcg_resolve_path(const char *path, uint64_t *id, uint32_t *level,
    char *err, size_t errlen)
{
	struct statfs sf;
	struct stat st, up;
	uint32_t n = 0;
	int fd, next, rc = -1;

	if (path == NULL || path[0] != '/')
		return errbuf_fail(err, errlen, "not an absolute path");
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errbuf_fail(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
	if (fstatfs(fd, &sf) == -1 || fstat(fd, &st) == -1) {
		errbuf_fail(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if (sf.f_type != CGROUP2_SUPER_MAGIC) {
		errbuf_fail(err, errlen, "%s is not on a cgroup2 file system (cgroup "
		    "v1 or none)", path);
		goto out;
	}
	*id = (uint64_t)st.st_ino;
	/* Up until ".." leaves the file system: that folder is the root. */
	for (;;) {
		if (fstatat(fd, "..", &up, 0) == -1) {
			errbuf_fail(err, errlen, "cannot walk up from %s: %s", path,
			    strerror(errno));
			goto out;
		}
		if (up.st_dev != st.st_dev || up.st_ino == st.st_ino)
			break;
		if (++n > LEVEL_MAX) {
			errbuf_fail(err, errlen, "%s is more than %d levels deep",
			    path, LEVEL_MAX);
			goto out;
		}
		if ((next = openat(fd, "..", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC)) == -1) {
			errbuf_fail(err, errlen, "cannot walk up from %s: %s", path,
			    strerror(errno));
			goto out;
		}
		close(fd);
		fd = next;
		st = up;
	}
	*level = n;
	rc = 0;
out:
	close(fd);
	return rc;
}

/* The mount point of the first cgroup2 mount in /proc/self/mountinfo
 * whose root is the hierarchy's root ("/"). */
/* Field idx (0-based, single-space separated, as the kernel writes
 * mountinfo) of line into out. -1 when the line is shorter or the field
 * does not fit: the caller skips that line. */
static int
mountinfo_field(const char *line, int idx, char *out, size_t outlen)
{
	const char *p = line, *e;
	size_t n;

	for (; idx > 0; idx--) {
		if ((p = strchr(p, ' ')) == NULL)
			return -1;
		p++;
	}
	e = p + strcspn(p, " \n");
	n = (size_t)(e - p);
	if (n == 0 || n >= outlen)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static int
cgroup2_mount(char *mnt, size_t len, char *err, size_t errlen)
{
	char line[4096], root[PATH_MAX], point[PATH_MAX], *sep;
	FILE *f;
	int n = 0, found = 0;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return errbuf_fail(err, errlen, "cannot read /proc/self/mountinfo: %s",
		    strerror(errno));
	while (!found && n++ < LINES_MAX && fgets(line, sizeof(line), f)) {
		/* id parent major:minor root point options ... - type ... */
		if ((sep = strstr(line, " - ")) == NULL ||
		    strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		if (mountinfo_field(line, 3, root, sizeof(root)) == -1 ||
		    mountinfo_field(line, 4, point, sizeof(point)) == -1)
			continue;
		/* Octal escapes (\040) are not worth decoding: skip those. */
		if (strcmp(root, "/") != 0 || strchr(point, '\\') != NULL)
			continue;
		if (strlen(point) >= len)
			continue;
		snprintf(mnt, len, "%s", point);
		found = 1;
	}
	fclose(f);
	if (!found)
		return errbuf_fail(err, errlen, "no cgroup2 file system is mounted "
		    "(cgroup v1 only)");
	return 0;
}

int
nftcg_path_of_pid(const char *pid, char *path, size_t len, char *err,
    size_t errlen)
{
	char file[64], line[4096], mnt[NFTCG_PATH_MAX], *cg;
	long long v;
	FILE *f;
	int n = 0, found = 0;
	size_t l;

	if (pid == NULL || num_parse(pid, 1, PID_MAX, &v) == -1)
		return errbuf_fail(err, errlen, "bad process id");
	if (cgroup2_mount(mnt, sizeof(mnt), err, errlen) == -1)
		return -1;
	snprintf(file, sizeof(file), "/proc/%lld/cgroup", v);
	if ((f = fopen(file, "re")) == NULL)
		return errbuf_fail(err, errlen, "cannot read %s: %s", file,
		    strerror(errno));
	while (!found && n++ < LINES_MAX && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		cg = line + 3;
		l = strcspn(cg, "\n");
		cg[l] = '\0';
		found = 1;
	}
	fclose(f);
	if (!found)
		return errbuf_fail(err, errlen, "process %lld has no cgroup v2 entry",
		    v);
	if (cg[0] != '/' || strstr(cg, "/..") != NULL)
		return errbuf_fail(err, errlen, "process %lld's cgroup lies outside "
		    "this cgroup namespace", v);
	if (strcmp(cg, "/") == 0)
		cg = "";
	if (snprintf(path, len, "%s%s", mnt, cg) >= (int)len)
		return errbuf_fail(err, errlen, "cgroup path too long");
	return 0;
}
