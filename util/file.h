/* Whole small files: policies, bundles, keys, receipts. */
#ifndef EG_FILE_H
#define EG_FILE_H

#include <stddef.h>

/* Reads the regular file at path, at most max bytes, into a new block
 * after reserve free bytes, NUL-terminated (*lenp excludes reserve and
 * the NUL); free() takes the block. A FIFO or a device in place of the
 * file is refused without blocking on its open, and a file that grows
 * while it is read is still bounded by max. NULL with err ("PATH:
 * reason") on any failure. Blocking reads: for start-up, SIGHUP and the
 * CLI, never the event loop's turn. */
char *file_read(const char *path, size_t max, size_t reserve, size_t *lenp,
    char *err, size_t errlen);

/* The same from fd, already open (and left open): path only names it in
 * messages. */
char *file_read_fd(int fd, const char *path, size_t max, size_t reserve,
    size_t *lenp, char *err, size_t errlen);

#define FILE_SHA256_HEX	64

/* The SHA-256 of the regular file at path (at most max bytes) as lowercase
 * hex: FILE_SHA256_HEX digits and a NUL into hex. Returns 0, or -1 with err
 * starting with the path. Blocking: for start-up and the CLI. */
int file_sha256(const char *path, size_t max, char *hex, char *err,
    size_t errlen);

#endif
