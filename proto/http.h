/* HTTP/1.x heads: the request parser, the checks and rewriting that
 * absolute-form forwarding needs, and the response parser that frames
 * what comes back. Pure: bytes in, struct out; no sockets, no logging.
 * Parsed structs point into the caller's buffer. */
#ifndef EG_HTTP_H
#define EG_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "policy/dest.h"

#define HTTP_HEAD_MAX		16384	/* whole request head, request line included */
#define HTTP_RESP_HEAD_MAX	65536	/* whole response head from an upstream */
#define HTTP_MAX_HEADERS	100
#define HTTP_METHOD_MAX		32
#define HTTP_LENGTH_MAX		(1LL << 62)	/* a Content-Length value */

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

struct http_resp {
	int		 status;	/* 100-999 */
	int		 minor;
	const char	*reason;
	size_t		 reason_len;
	size_t		 nheaders;
	struct http_header headers[HTTP_MAX_HEADERS];
};

/* Looks for the end of a head in buf. Returns the head length including
 * the final CRLF CRLF; 0 when more bytes are needed; -1 when the bytes
 * seen so far can never form a valid head (NUL, bare CR or LF), so the
 * caller can answer at once instead of waiting for the timeout. */
long http_head_end(const char *buf, size_t len);

/* Parses a complete request head of len bytes (as found by
 * http_head_end). Returns 0, or -1 with *status set to the HTTP status to
 * answer (400 for grammar errors, 431 for too many headers or too long). */
int http_parse_head(const char *buf, size_t len, struct http_req *req,
    int *status, char *err, size_t errlen);

/* Case-insensitive header lookup; returns the count of headers with that
 * name and sets *first to the first one (or NULL). */
size_t http_find_header(const struct http_header *h, size_t n, const char *name,
    const struct http_header **first);

/* The one reader of a Content-Length value (requests and responses, the
 * guard and egress-guardctl): 1*DIGIT without sign, leading zero or
 * whitespace, at most HTTP_LENGTH_MAX. Returns 0 with *len, or -1. A
 * repeated field is the caller's to refuse (it counts them). */
int http_content_length(const struct http_header *cl, long long *len);

/* Absolute-form target "http://host[:port][/path][?query]" (scheme
 * case-insensitive, port 80 by default). On success fills d and points
 * *path into t (length 0 means "/"). Sets *https for an https:// target
 * (the caller answers 405) and returns -1. Returns -1 with err on any
 * other refusal (userinfo, fragment, bad authority, other schemes). */
int http_parse_absolute(const char *t, size_t len, struct dest *d,
    const char **path, size_t *path_len, int *https, char *err, size_t errlen);

/* Transparent mode (guard/transp.c): an origin-form request ("/path",
 * nothing else) names its destination by its one Host field, whose port
 * (80 when absent, RFC 9110 7.2) must equal port, the port the client
 * dialled. On success fills d and points *path at the target. Returns -1
 * with err on any refusal: another target form, no Host or several, a bad
 * authority, another port. */
int http_parse_origin(const struct http_req *req, uint16_t port, struct dest *d,
    const char **path, size_t *path_len, char *err, size_t errlen);

/* How a forwarded request's body is framed. */
struct http_framing {
	int		 chunked;	/* Transfer-Encoding ends in chunked */
	long long	 length;	/* Content-Length, or 0 without body */
	int		 close;		/* the client will not keep the connection */
};

/* 1 for a method whose body common servers may leave unread (GET, HEAD,
 * DELETE, OPTIONS, TRACE, in any case): http_request_framing refuses a
 * body on it. */
int http_body_ignorable(const char *method);

/* 1 for a request field upstream frameworks route by (Forwarded, every
 * X-Forwarded-*, X-Original-URL, X-Rewrite-URL, X-Real-IP, ...):
 * http_forward_head drops it. */
int http_routing_field(const char *name, size_t len);

/* The request checks for absolute-form forwarding: Content-Length with
 * Transfer-Encoding, repeated or malformed Content-Length, a coding other
 * than a final chunked, Host disagreeing with the target, Connection
 * naming a framing header, a body on a method http_body_ignorable names:
 * all refused (-1, answer 400). */
int http_request_framing(const struct http_req *req, const struct dest *d,
    struct http_framing *f, char *err, size_t errlen);

/* Writes the origin-form head for the upstream: request line with path,
 * Host set to the admitted authority, hop-by-hop headers (and those named
 * in Connection), Proxy-* and routing fields (http_routing_field)
 * removed, Via added. Returns the length, or -1
 * if it does not fit. */
long http_forward_head(const struct http_req *req, const struct dest *d,
    const char *path, size_t path_len, char *out, size_t outlen);

/* Parses a complete response head. Returns 0 or -1 with err. */
int http_parse_response_head(const char *buf, size_t len, struct http_resp *r,
    char *err, size_t errlen);

enum http_body {
	HTTP_BODY_NONE = 0,	/* 1xx, 204, 304, or the answer to HEAD */
	HTTP_BODY_LENGTH,	/* Content-Length bytes */
	HTTP_BODY_CHUNKED,	/* chunked, framed by chunked_feed */
	HTTP_BODY_CLOSE		/* until the upstream closes: no keep-alive */
};

/* RFC 9112 6.3 message length for a response. Returns 0, or -1 when the
 * framing is ambiguous or malformed (the caller answers 502). *close is
 * set when the upstream connection ends with this response (Connection:
 * close, HTTP/1.0, or a close-delimited body): it is not reused. Whether
 * the client's connection must close too is the caller's call: only a
 * close-delimited body forces it, since Connection is hop-by-hop. */
int http_response_framing(const struct http_resp *r, int head_request,
    enum http_body *kind, long long *length, int *close, char *err, size_t errlen);

/* For an HTTP/1.0 client, which must never be sent Transfer-Encoding
 * (RFC 9112 6.1): 0 when a response whose body is framed as kind can
 * reach it (no transfer coding, or exactly "chunked", which the caller
 * removes), -1 with err when another coding would remain (answer 502). */
int http_response_check_http10(const struct http_resp *r, enum http_body kind,
    char *err, size_t errlen);

#define HTTP_FWD_CLOSE	1	/* add "Connection: close" */
#define HTTP_FWD_HTTP10	2	/* drop Transfer-Encoding: the caller de-chunks */

/* Writes the response head for the client: status line as received,
 * hop-by-hop headers removed, changed as flags (HTTP_FWD_*) say. Returns
 * the length or -1 if it does not fit. */
long http_forward_response_head(const struct http_resp *r, int flags,
    char *out, size_t outlen);

#endif
