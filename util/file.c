#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/bigbuf.h"
#include "util/errbuf.h"
#include "util/file.h"

char *
file_read(const char *path, size_t max, size_t reserve, size_t *lenp,
    char *err, size_t errlen)
{
	char *buf;
	int fd;

	if (path == NULL) {
		errbuf_set(err, errlen, "no path");
		return NULL;
	}
	/* O_NONBLOCK so a FIFO in place of the file cannot hang the open;
	 * it is then refused as not regular. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = file_read_fd(fd, path, max, reserve, lenp, err, errlen);
	close(fd);
	return buf;
}

char *
file_read_fd(int fd, const char *path, size_t max, size_t reserve, size_t *lenp,
    char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL, *nb;
	size_t len = 0, cap;
	ssize_t r;

	if (path == NULL || lenp == NULL || max > SIZE_MAX / 2 - reserve) {
		errbuf_set(err, errlen, "no path");
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "%s: not a regular file", path);
		goto bad;
	}
	if (st.st_size < 0 || (unsigned long long)st.st_size > max) {
		errbuf_set(err, errlen, "%s: larger than %zu bytes", path, max);
		goto bad;
	}
	/* One byte more than fstat saw, so that a file that grew meanwhile
	 * is read on, and bounded, rather than cut short. */
	cap = (size_t)st.st_size + 1;
	if ((buf = bigbuf_malloc(reserve + cap + 1)) == NULL) {
		errbuf_set(err, errlen, "%s: out of memory", path);
		goto bad;
	}
	for (;;) {
		if (len == cap) {
			if (cap > max) {
				errbuf_set(err, errlen, "%s: larger than %zu bytes",
				    path, max);
				goto bad;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			if ((nb = bigbuf_realloc(buf, reserve + cap + 1)) == NULL) {
				errbuf_set(err, errlen, "%s: out of memory", path);
				goto bad;
			}
			buf = nb;
		}
		r = read(fd, buf + reserve + len, cap - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
			goto bad;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > max) {
		errbuf_set(err, errlen, "%s: larger than %zu bytes", path, max);
		goto bad;
	}
	buf[reserve + len] = '\0';
	*lenp = len;
	return buf;
bad:
	free(buf);
	return NULL;
}
