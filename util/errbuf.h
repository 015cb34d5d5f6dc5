/* The one error convention of library code: a function that fails returns
 * -1 (or NULL) and writes one line to the caller's buffer. */
#ifndef EG_ERRBUF_H
#define EG_ERRBUF_H

#include <stddef.h>

#define ERRBUF_SHOW_MAX	64			/* input bytes quoted at most */
#define ERRBUF_SHOW_BUF	(ERRBUF_SHOW_MAX * 4 + 4)

/* printf into err (NULL or errlen 0: nothing). */
void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* errbuf_set, then -1: `return errbuf_fail(err, errlen, ...);`. */
int errbuf_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Quotes untrusted bytes for a message: printable ASCII as is, '"' and
 * '\\' escaped, anything else \xNN, at most ERRBUF_SHOW_MAX input bytes
 * ("..." marks a cut). out holds ERRBUF_SHOW_BUF bytes; returns out. */
const char *errbuf_show(const char *s, size_t len, char *out);

#endif
