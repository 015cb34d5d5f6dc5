/* The HTTP/1.x request-head parser. Pure: bytes in, struct out; no
 * sockets, no logging. The returned struct points into the caller's
 * buffer. */
#ifndef EG_HTTP_H
#define EG_HTTP_H

#include <stddef.h>

#define HTTP_HEAD_MAX		16384	/* whole head, request line included */
#define HTTP_MAX_HEADERS	100
#define HTTP_METHOD_MAX		32

struct http_header {
	const char	*name;
	size_t		 name_len;
	const char	*value;		/* OWS trimmed */
	size_t		 value_len;
};

struct http_req {
	char		 method[HTTP_METHOD_MAX + 1];
	const char	*target;
	size_t		 target_len;
	int		 minor;		/* HTTP/1.<minor>, 0 or 1 */
	size_t		 nheaders;
	struct http_header headers[HTTP_MAX_HEADERS];
};

/* Looks for the end of a request head in buf. Returns the head length
 * including the final CRLF CRLF; 0 when more bytes are needed; -1 when
 * the bytes seen so far can never form a valid head (NUL, bare CR or LF),
 * so the caller can answer at once instead of waiting for the timeout. */
long http_head_end(const char *buf, size_t len);

/* Parses a complete head of len bytes (as found by http_head_end).
 * Returns 0, or -1 with *status set to the HTTP status to answer (400 for
 * grammar errors, 431 for too many headers) and a reason in err. */
int http_parse_head(const char *buf, size_t len, struct http_req *req,
    int *status, char *err, size_t errlen);

/* Case-insensitive header lookup; returns the count of headers with that
 * name and sets *first to the first one (or NULL). */
size_t http_find_header(const struct http_req *req, const char *name,
    const struct http_header **first);

#endif
