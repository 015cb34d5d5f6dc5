/* proto/http: the request path as guard/proxy.c drives it (http_head_end,
 * http_parse_head, http_parse_absolute or the CONNECT authority,
 * http_request_framing, http_forward_head) and the response path
 * (http_parse_response_head, http_response_framing,
 * http_forward_response_head), on the same bytes.
 *
 * Beyond "no crash":
 *  - http_head_end: a prefix answers "need more" or the same verdict, and
 *    the head it finds ends in CRLF CRLF;
 *  - a parsed head points only inside the buffer it was given (an exact
 *    malloc'd copy, so ASan sees any read past it);
 *  - the head forwarded upstream is itself a valid head that frames the
 *    body the same way and names the admitted destination in Host, with
 *    no Proxy-* or Connection field left;
 *  - the response head forwarded to the client parses again, with the
 *    same status and the same body framing; rewritten for an HTTP/1.0
 *    client, it has no Transfer-Encoding and frames a chunked body by
 *    the close. */
#include <string.h>
#include <strings.h>

#include "proto/chunked.h"
#include "proto/http.h"
#include "tests/fuzz/fuzz.h"

#define FWD_MAX	(HTTP_HEAD_MAX + 256)	/* as guard/proxy.c */

static int
inside(const char *p, size_t n, const char *buf, size_t len)
{
	return p >= buf && p <= buf + len && n <= (size_t)(buf + len - p);
}

static void
check_headers(const struct http_header *h, size_t n, const char *buf, size_t len)
{
	size_t i;

	FUZZ_CHECK(n <= HTTP_MAX_HEADERS);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(h[i].name_len > 0 && inside(h[i].name, h[i].name_len, buf, len));
		FUZZ_CHECK(inside(h[i].value, h[i].value_len, buf, len));
		FUZZ_CHECK(h[i].value_len == 0 || (h[i].value[0] != ' ' &&
		    h[i].value[0] != '\t' && h[i].value[h[i].value_len - 1] != ' ' &&
		    h[i].value[h[i].value_len - 1] != '\t'));
	}
}

static void
check_head_end(const char *s, size_t size, long e)
{
	size_t cuts[3] = { size / 2, size > 0 ? size - 1 : 0, 0 }, i;

	FUZZ_CHECK(e >= -1 && e <= (long)size);
	if (e > 0) {
		FUZZ_CHECK(e >= 4 && memcmp(s + e - 4, "\r\n\r\n", 4) == 0);
		FUZZ_CHECK(http_head_end(s, (size_t)e) == e);
		FUZZ_CHECK(http_head_end(s, (size_t)e - 1) == 0);
	}
	for (i = 0; i < 3; i++) {
		long p = http_head_end(s, cuts[i]);
		FUZZ_CHECK(p == 0 || p == e);
	}
}

/* The forwarded request must read back as a head the upstream frames
 * the way the guard does. */
static void
check_forwarded(const struct http_req *req, const struct dest *d,
    const struct http_framing *f, const char *out, size_t n)
{
	const struct http_header *h;
	struct http_framing f2;
	struct http_req *r2;
	struct dest hd;
	char err[128], url[DEST_HOST_MAX + 32];
	const char *path;
	size_t plen, i;
	int status = 0, https, ul;

	FUZZ_CHECK(http_head_end(out, n) == (long)n);
	if (n > HTTP_HEAD_MAX || req->nheaders >= HTTP_MAX_HEADERS - 1)
		return;		/* the guard may send more than it accepts */
	r2 = malloc(sizeof(*r2));
	FUZZ_CHECK(r2 != NULL);
	FUZZ_CHECK(http_parse_head(out, n, r2, &status, err, sizeof(err)) == 0);
	FUZZ_CHECK(strcmp(r2->method, req->method) == 0 && r2->minor == 1);
	FUZZ_CHECK(r2->target_len > 0 && r2->target[0] == '/');
	FUZZ_CHECK(http_find_header(r2->headers, r2->nheaders, "Host", &h) == 1);
	/* Host names exactly the admitted destination. */
	ul = snprintf(url, sizeof(url), "http://%.*s/", (int)h->value_len, h->value);
	FUZZ_CHECK(ul > 0 && (size_t)ul < sizeof(url));
	FUZZ_CHECK(http_parse_absolute(url, (size_t)ul, &hd, &path, &plen, &https,
	    err, sizeof(err)) == 0);
	FUZZ_CHECK(hd.kind == d->kind && hd.port == d->port &&
	    strcmp(hd.host, d->host) == 0);
	for (i = 0; i < r2->nheaders; i++) {
		FUZZ_CHECK(!(r2->headers[i].name_len >= 6 &&
		    strncasecmp(r2->headers[i].name, "Proxy-", 6) == 0));
		FUZZ_CHECK(!(r2->headers[i].name_len == 10 &&
		    strncasecmp(r2->headers[i].name, "Connection", 10) == 0));
	}
	FUZZ_CHECK(http_request_framing(r2, d, &f2, err, sizeof(err)) == 0);
	FUZZ_CHECK(f2.chunked == f->chunked && f2.length == f->length);
	free(r2);
}

static void
request_path(const char *buf, size_t len)
{
	struct http_req *req = malloc(sizeof(*req));
	struct http_framing f;
	struct dest d;
	const char *path;
	size_t plen;
	char err[128], *out;
	int status = 0, https = 0;
	long n;

	FUZZ_CHECK(req != NULL);
	err[0] = '\0';
	if (http_parse_head(buf, len, req, &status, err, sizeof(err)) == -1) {
		FUZZ_CHECK(status == 400 || status == 431);
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
		goto out;
	}
	FUZZ_CHECK(req->method[0] != '\0' && strlen(req->method) <= HTTP_METHOD_MAX);
	FUZZ_CHECK(req->minor == 0 || req->minor == 1);
	FUZZ_CHECK(req->target_len > 0 && inside(req->target, req->target_len, buf, len));
	check_headers(req->headers, req->nheaders, buf, len);

	if (strcmp(req->method, "CONNECT") == 0) {
		(void)dest_parse_authority(req->target, req->target_len, &d,
		    err, sizeof(err));
		goto out;
	}
	if (http_parse_absolute(req->target, req->target_len, &d, &path, &plen,
	    &https, err, sizeof(err)) == -1)
		goto out;
	FUZZ_CHECK(!https && d.port != 0);
	FUZZ_CHECK(inside(path, plen, req->target, req->target_len));
	FUZZ_CHECK(plen == 0 || path[0] == '/' || path[0] == '?');
	if (http_request_framing(req, &d, &f, err, sizeof(err)) == -1)
		goto out;
	FUZZ_CHECK(f.length >= 0 && !(f.chunked && f.length != 0));
	out = malloc(FWD_MAX);
	FUZZ_CHECK(out != NULL);
	n = http_forward_head(req, &d, path, plen, out, FWD_MAX);
	if (n >= 0) {
		FUZZ_CHECK(n <= FWD_MAX);
		check_forwarded(req, &d, &f, out, (size_t)n);
	}
	free(out);
out:
	free(req);
}

static void
response_path(const char *buf, size_t len)
{
	struct http_resp *r = malloc(sizeof(*r)), *r2 = malloc(sizeof(*r2));
	enum http_body kind, kind2;
	long long length, length2;
	int close, close2, head_req;
	const struct http_header *te;
	char err[128], *out;
	size_t outlen = len + 256;
	long n;

	FUZZ_CHECK(r != NULL && r2 != NULL);
	if (http_parse_response_head(buf, len, r, err, sizeof(err)) == -1) {
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
		goto out;
	}
	FUZZ_CHECK(r->status >= 100 && r->status <= 999);
	FUZZ_CHECK(r->minor == 0 || r->minor == 1);
	FUZZ_CHECK(inside(r->reason, r->reason_len, buf, len));
	check_headers(r->headers, r->nheaders, buf, len);
	out = malloc(outlen);
	FUZZ_CHECK(out != NULL);
	for (head_req = 0; head_req <= 1; head_req++) {
		if (http_response_framing(r, head_req, &kind, &length, &close,
		    err, sizeof(err)) == -1)
			continue;
		FUZZ_CHECK(length >= 0 && (kind == HTTP_BODY_LENGTH || length == 0));
		FUZZ_CHECK(kind != HTTP_BODY_CLOSE || close);
		n = http_forward_response_head(r, close, out, outlen);
		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(http_head_end(out, (size_t)n) == n);
		if (r->nheaders >= HTTP_MAX_HEADERS)
			continue;	/* "Connection: close" may be one more */
		/* What the client reads frames the body as the guard does. */
		FUZZ_CHECK(http_parse_response_head(out, (size_t)n, r2, err,
		    sizeof(err)) == 0);
		FUZZ_CHECK(r2->status == r->status && r2->minor == 1);
		FUZZ_CHECK(http_response_framing(r2, head_req, &kind2, &length2,
		    &close2, err, sizeof(err)) == 0);
		FUZZ_CHECK(kind2 == kind && length2 == length && close2 == close);
		/* For an HTTP/1.0 client: no Transfer-Encoding at all, and
		 * what it reads frames the (de-chunked) body as the guard
		 * sends it: by length, or by the close. */
		if (http_response_check_http10(r, kind, err, sizeof(err)) == -1)
			continue;
		n = http_forward_response_head(r, HTTP_FWD_CLOSE | HTTP_FWD_HTTP10,
		    out, outlen);
		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(http_parse_response_head(out, (size_t)n, r2, err,
		    sizeof(err)) == 0);
		FUZZ_CHECK(http_find_header(r2->headers, r2->nheaders,
		    "Transfer-Encoding", &te) == 0);
		FUZZ_CHECK(http_response_framing(r2, head_req, &kind2, &length2,
		    &close2, err, sizeof(err)) == 0);
		FUZZ_CHECK(close2 == 1 && (kind == HTTP_BODY_CHUNKED ?
		    kind2 == HTTP_BODY_CLOSE : kind2 == kind && length2 == length));
	}
	free(out);
out:
	free(r);
	free(r2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_dup(data, size), *head;
	long e = http_head_end(s, size);

	check_head_end(s, size, e);
	/* What the proxy does: parse exactly the head that was found. */
	if (e > 0) {
		head = fuzz_dup(s, (size_t)e);
		request_path(head, (size_t)e);
		response_path(head, (size_t)e);
		free(head);
	}
	/* And the parsers alone on any bytes, terminated or not. */
	request_path(s, size);
	response_path(s, size);
	free(s);
	return 0;
}
