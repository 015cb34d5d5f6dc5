/* Network namespace switching for the nft commands. The netlink socket is
 * opened inside the workload's namespace and keeps working there after
 * the thread has come back, so the process spends no longer in a foreign
 * namespace than the socket() call takes. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nft/netns.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/num.h"

/* The kernel's PID_MAX_LIMIT on 64-bit machines. */
#define PID_MAX		4194304LL

/* The file that stands for the namespace spec names. */
static int
ns_path(const char *spec, char *path, size_t len, char *err, size_t errlen)
{
	size_t n, i;
	long long pid;
	int digits = 1, w;

	if (spec == NULL || (n = strlen(spec)) == 0)
		return errbuf_fail(err, errlen, "empty --netns");
	if (n > PATH_MAX - 32)
		return errbuf_fail(err, errlen, "--netns too long");
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)spec[i];

		if (c < 0x21 || c > 0x7e)
			return errbuf_fail(err, errlen, "--netns holds a control, "
			    "space or non-ASCII byte");
		if (!ascii_is_digit(c))
			digits = 0;
	}
	if (digits) {
		if (num_parse(spec, 1, PID_MAX, &pid) == -1)
			return errbuf_fail(err, errlen, "--netns: bad process id");
		w = snprintf(path, len, "/proc/%lld/ns/net", pid);
	} else if (strchr(spec, '/') != NULL) {
		w = snprintf(path, len, "%s", spec);
	} else {
		if (strcmp(spec, ".") == 0 || strcmp(spec, "..") == 0 ||
		    n > NAME_MAX)
			return errbuf_fail(err, errlen, "--netns: bad namespace name");
		w = snprintf(path, len, "/run/netns/%s", spec);
	}
	if (w < 0 || (size_t)w >= len)
		return errbuf_fail(err, errlen, "--netns too long");
	return 0;
}

/* Whether two namespace descriptors name the same namespace. */
static int
same_ns(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int
netns_enter(const char *spec, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, saved;

	if (ns_path(spec, path, sizeof(path), err, errlen) == -1)
		return -1;
	/* O_NONBLOCK: a FIFO named by mistake must not hang the command. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		if (errno == ENOENT)
			return errbuf_fail(err, errlen, "no network namespace %s "
			    "(%s does not exist)", spec, path);
		return errbuf_fail(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
	}
	saved = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved == -1)
		saved = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved == -1) {
		errbuf_fail(err, errlen, "cannot open the current network namespace: "
		    "%s", strerror(errno));
		close(fd);
		return -1;
	}
	/* Already there (an init container in the workload's namespace):
	 * no setns, so CAP_NET_ADMIN alone is enough. */
	if (same_ns(fd, saved)) {
		close(fd);
		return saved;
	}
	if (setns(fd, CLONE_NEWNET) == -1) {
		if (errno == EINVAL)
			errbuf_fail(err, errlen, "%s is not a network namespace", path);
		else if (errno == EPERM)
			errbuf_fail(err, errlen, "cannot enter network namespace %s: "
			    "%s (needs CAP_SYS_ADMIN and CAP_NET_ADMIN)", path,
			    strerror(errno));
		else
			errbuf_fail(err, errlen, "cannot enter network namespace %s: "
			    "%s", path, strerror(errno));
		close(fd);
		close(saved);
		return -1;
	}
	close(fd);
	return saved;
}

int
netns_return(int saved, char *err, size_t errlen)
{
	int rc = 0, cur;

	if (saved < 0)
		return errbuf_fail(err, errlen, "no namespace to return to");
	cur = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cur != -1 && same_ns(cur, saved)) {
		close(cur);
		close(saved);
		return 0;
	}
	if (cur != -1)
		close(cur);
	if (setns(saved, CLONE_NEWNET) == -1)
		rc = errbuf_fail(err, errlen, "cannot return to the original network "
		    "namespace: %s", strerror(errno));
	close(saved);
	return rc;
}

/* One sysctl flag ("0\n" / "1\n") of the calling thread's namespace:
 * 1 on, 0 off, -1 unreadable. */
static int
flag(const char *path)
{
	char buf[8];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return buf[0] == '0' ? 0 : 1;
}

void
netns_forwarding(int *v4, int *v6)
{
	*v4 = flag("/proc/sys/net/ipv4/ip_forward");
	*v6 = flag("/proc/sys/net/ipv6/conf/all/forwarding");
}
