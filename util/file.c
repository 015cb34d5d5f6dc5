#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>

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

/* Hashes what is read, bounded by max whatever fstat says: a file that
 * grows while it is hashed is refused, not hashed in part. */
int
file_sha256(const char *path, size_t max, char *hex, char *err,
    size_t errlen)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
	unsigned long long total = 0;
	EVP_MD_CTX *ctx = NULL;
	unsigned int mdlen = 0, i;
	struct stat st;
	ssize_t r;
	int fd, rc = -1;

	if (path == NULL || hex == NULL) {
		errbuf_set(err, errlen, "no path");
		return -1;
	}
	/* O_NONBLOCK: a FIFO cannot hang the open; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		errbuf_set(err, errlen, "%s: cannot start SHA-256", path);
		goto out;
	}
	/* Bounded by what is read, not by what fstat said. */
	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		total += (unsigned long long)r;
		if (total > max) {
			errbuf_set(err, errlen, "%s: larger than %zu bytes", path,
			    max);
			goto out;
		}
		if (EVP_DigestUpdate(ctx, buf, (size_t)r) != 1) {
			errbuf_set(err, errlen, "%s: SHA-256 failed", path);
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 ||
	    mdlen * 2 != FILE_SHA256_HEX) {
		errbuf_set(err, errlen, "%s: SHA-256 failed", path);
		goto out;
	}
	for (i = 0; i < mdlen; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[FILE_SHA256_HEX] = '\0';
	rc = 0;
out:
	if (rc == -1)
		ERR_clear_error();
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}
