#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proto/chunked.h"
#include "proto/http.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/num.h"

long
http_head_end(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\0')
			return -1;
		if (c == '\n') {
			/* Every LF must end a CRLF: bare LF is a smuggling tool. */
			if (i == 0 || buf[i - 1] != '\r')
				return -1;
			if (i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r')
				return (long)(i + 1);
		} else if (i > 0 && buf[i - 1] == '\r') {
			return -1;	/* CR not followed by LF */
		}
	}
	return 0;
}

static int
fail(int *status, int code, char *err, size_t errlen, const char *msg)
{
	if (status != NULL)
		*status = code;
	errbuf_set(err, errlen, "%s", msg);
	return -1;
}

/* Parses "METHOD SP target SP HTTP/1.x" (line without CRLF). */
static int
parse_request_line(const char *p, size_t n, struct http_req *req, int *status,
    char *err, size_t errlen)
{
	size_t i = 0, start;

	while (i < n && ascii_is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i > HTTP_METHOD_MAX || i >= n || p[i] != ' ')
		return fail(status, 400, err, errlen, "malformed request method");
	memcpy(req->method, p, i);
	req->method[i] = '\0';
	start = ++i;
	while (i < n && ascii_is_vchar((unsigned char)p[i]))
		i++;
	if (i == start || i >= n || p[i] != ' ')
		return fail(status, 400, err, errlen, "malformed request target");
	req->target = p + start;
	req->target_len = i - start;
	i++;
	if (n - i != 8 || memcmp(p + i, "HTTP/1.", 7) != 0 ||
	    (p[i + 7] != '0' && p[i + 7] != '1'))
		return fail(status, 400, err, errlen, "unsupported HTTP version");
	req->minor = p[i + 7] - '0';
	return 0;
}

/* "HTTP/1.x SP 3DIGIT SP reason-phrase" */
static int
parse_status_line(const char *p, size_t n, struct http_resp *r, char *err,
    size_t errlen)
{
	size_t i;

	if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') ||
	    p[8] != ' ' || !ascii_is_digit((unsigned char)p[9]) ||
	    !ascii_is_digit((unsigned char)p[10]) ||
	    !ascii_is_digit((unsigned char)p[11]) || p[9] == '0' ||
	    (n > 12 && p[12] != ' '))
		return fail(NULL, 0, err, errlen, "malformed status line");
	r->minor = p[7] - '0';
	r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	r->reason = n > 12 ? p + 13 : p + 12;
	r->reason_len = n > 12 ? n - 13 : 0;
	for (i = 0; i < r->reason_len; i++) {
		unsigned char c = (unsigned char)r->reason[i];
		if (!ascii_is_vchar(c) && c != ' ' && c != '\t')
			return fail(NULL, 0, err, errlen, "malformed reason phrase");
	}
	return 0;
}

static int
parse_header_line(const char *p, size_t n, struct http_header *h, int *status,
    char *err, size_t errlen)
{
	size_t i = 0, vs, ve;

	if (n > 0 && (p[0] == ' ' || p[0] == '\t'))
		return fail(status, 400, err, errlen, "obs-fold is not allowed");
	while (i < n && ascii_is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i >= n || p[i] != ':')
		/* Covers "Name : value" (space before colon) too. */
		return fail(status, 400, err, errlen, "malformed header field name");
	h->name = p;
	h->name_len = i;
	i++;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	vs = i;
	ve = i;
	for (; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (ascii_is_vchar(c))
			ve = i + 1;
		else if (c != ' ' && c != '\t')
			return fail(status, 400, err, errlen,
			    "header value outside the field grammar");
	}
	h->value = p + vs;
	h->value_len = ve - vs;
	return 0;
}

/* Walks the lines of a complete head: the start line is returned in
 * first and first_len, the header lines are parsed into h[]. */
static int
split_head(const char *buf, size_t len, size_t max, const char **first,
    size_t *first_len, struct http_header *h, size_t *nh, int *status,
    char *err, size_t errlen)
{
	size_t pos = 0, eol;
	int seen_first = 0;

	*nh = 0;
	if (len > max)
		return fail(status, 431, err, errlen, "head too large");
	if (len < 4 || memcmp(buf + len - 4, "\r\n\r\n", 4) != 0)
		return fail(status, 400, err, errlen, "incomplete head");
	while (pos < len) {
		const char *line = buf + pos;
		const char *cr = memchr(line, '\r', len - pos);

		if (cr == NULL || (size_t)(cr - buf) + 1 >= len || cr[1] != '\n')
			return fail(status, 400, err, errlen, "bare CR or LF");
		eol = (size_t)(cr - line);
		if (memchr(line, '\n', eol) != NULL || memchr(line, '\0', eol) != NULL)
			return fail(status, 400, err, errlen, "bare LF or NUL");
		if (!seen_first) {
			*first = line;
			*first_len = eol;
			seen_first = 1;
		} else if (eol == 0) {
			pos += 2;
			break;
		} else {
			if (*nh == HTTP_MAX_HEADERS)
				return fail(status, 431, err, errlen, "too many header fields");
			if (parse_header_line(line, eol, &h[*nh], status, err, errlen) == -1)
				return -1;
			(*nh)++;
		}
		pos += eol + 2;
	}
	if (pos != len)
		return fail(status, 400, err, errlen, "bytes after the head");
	return 0;
}

int
http_parse_head(const char *buf, size_t len, struct http_req *req,
    int *status, char *err, size_t errlen)
{
	const char *line = NULL;
	size_t n = 0;

	memset(req, 0, sizeof(*req));
	if (split_head(buf, len, HTTP_HEAD_MAX, &line, &n, req->headers,
	    &req->nheaders, status, err, errlen) == -1)
		return -1;
	return parse_request_line(line, n, req, status, err, errlen);
}

int
http_parse_response_head(const char *buf, size_t len, struct http_resp *r,
    char *err, size_t errlen)
{
	const char *line = NULL;
	size_t n = 0;
	int status;

	memset(r, 0, sizeof(*r));
	if (split_head(buf, len, HTTP_RESP_HEAD_MAX, &line, &n, r->headers,
	    &r->nheaders, &status, err, errlen) == -1)
		return -1;
	return parse_status_line(line, n, r, err, errlen);
}

static int
name_eq(const char *a, size_t alen, const char *b)
{
	return alen == strlen(b) && strncasecmp(a, b, alen) == 0;
}

int
http_content_length(const struct http_header *cl, long long *len)
{
	return num_parse_n(cl->value, cl->value_len, 0, HTTP_LENGTH_MAX, len);
}

size_t
http_find_header(const struct http_header *h, size_t n, const char *name,
    const struct http_header **first)
{
	size_t i, count = 0;

	*first = NULL;
	for (i = 0; i < n; i++) {
		if (name_eq(h[i].name, h[i].name_len, name)) {
			if (count++ == 0)
				*first = &h[i];
		}
	}
	return count;
}

/* host[:port] with the default port 80; the same grammar as CONNECT. */
static int
parse_authority80(const char *s, size_t len, struct dest *d, char *err, size_t errlen)
{
	char buf[DEST_HOST_MAX + 16];
	const char *colon = NULL;
	size_t i;

	for (i = len; i > 0; i--) {
		if (s[i - 1] == ']')
			break;
		if (s[i - 1] == ':') {
			colon = s + i - 1;
			break;
		}
	}
	if (colon != NULL)
		return dest_parse_authority(s, len, d, err, errlen);
	if (len + 4 > sizeof(buf)) {
		errbuf_set(err, errlen, "authority too long");
		return -1;
	}
	memcpy(buf, s, len);
	memcpy(buf + len, ":80", 3);
	return dest_parse_authority(buf, len + 3, d, err, errlen);
}

int
http_parse_absolute(const char *t, size_t len, struct dest *d,
    const char **path, size_t *path_len, int *https, char *err, size_t errlen)
{
	size_t i, start;

	*https = 0;
	if (memchr(t, '#', len) != NULL) {
		errbuf_set(err, errlen, "fragment in request target");
		return -1;
	}
	if (len >= 8 && strncasecmp(t, "https://", 8) == 0) {
		*https = 1;
		errbuf_set(err, errlen, "https:// absolute-form: use CONNECT");
		return -1;
	}
	if (len < 7 || strncasecmp(t, "http://", 7) != 0) {
		errbuf_set(err, errlen, "request target is not http:// absolute-form");
		return -1;
	}
	start = 7;
	for (i = start; i < len && t[i] != '/' && t[i] != '?'; i++)
		;
	if (i == start) {
		errbuf_set(err, errlen, "empty authority");
		return -1;
	}
	if (parse_authority80(t + start, i - start, d, err, errlen) == -1)
		return -1;
	*path = t + i;
	*path_len = len - i;
	return 0;
}

int
http_parse_origin(const struct http_req *req, uint16_t port, struct dest *d,
    const char **path, size_t *path_len, char *err, size_t errlen)
{
	const struct http_header *host;
	size_t nhost;

	if (req->target_len == 0 || req->target[0] != '/') {
		snprintf(err, errlen, "request target is not origin-form");
		return -1;
	}
	if (memchr(req->target, '#', req->target_len) != NULL) {
		snprintf(err, errlen, "fragment in request target");
		return -1;
	}
	nhost = http_find_header(req->headers, req->nheaders, "Host", &host);
	if (nhost != 1) {
		snprintf(err, errlen, nhost == 0 ? "no Host" : "repeated Host");
		return -1;
	}
	if (host->value_len == 0 ||
	    parse_authority80(host->value, host->value_len, d, err, errlen) == -1)
		return fail(NULL, 0, err, errlen, "malformed Host");
	if (d->port != port) {
		snprintf(err, errlen, "Host port differs from the port dialled");
		return -1;
	}
	*path = req->target;
	*path_len = req->target_len;
	return 0;
}

/* Calls fn for each element of a comma-separated list value, OWS trimmed,
 * empty elements skipped. Stops and returns 1 as soon as fn does. */
static int
each_token(const char *v, size_t len, int (*fn)(const char *, size_t, void *),
    void *arg)
{
	size_t i = 0;

	while (i < len) {
		size_t s, e;

		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < len && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e > s && fn(v + s, e - s, arg))
			return 1;
	}
	return 0;
}

static int
tok_is(const char *t, size_t n, void *arg)
{
	return name_eq(t, n, arg);
}

/* The token is the name of the field arg points to. */
static int
tok_names(const char *t, size_t n, void *arg)
{
	const struct http_header *h = arg;

	return n == h->name_len && strncasecmp(t, h->name, n) == 0;
}

/* A Connection option that would strip framing or routing. */
static int
tok_is_protected(const char *t, size_t n, void *arg)
{
	(void)arg;
	return name_eq(t, n, "host") || name_eq(t, n, "content-length") ||
	    name_eq(t, n, "transfer-encoding");
}

/* Methods whose body common servers may leave unread (RFC 9110 9.3: no
 * defined semantics for content on GET, HEAD, DELETE; OPTIONS rarely
 * reads it; TRACE must not carry any). Python's http.server, among
 * others, then parses the body as the connection's next request: a
 * request the guard never decided (CL.0 desync). Compared without case:
 * some servers fold the method before dispatching. */
int
http_body_ignorable(const char *method)
{
	static const char *const m[] = {
		"GET", "HEAD", "DELETE", "OPTIONS", "TRACE", NULL
	};
	size_t i;

	for (i = 0; m[i] != NULL; i++)
		if (strcasecmp(method, m[i]) == 0)
			return 1;
	return 0;
}

/* Request fields that upstream frameworks and reverse proxies read as
 * the request's host, URL, scheme, port, prefix or client: the workload
 * is the first hop and vouches for no hop before it, so none of them
 * reaches the upstream as it wrote it. Every X-Forwarded-* (Rails,
 * Django, Express "trust proxy", Spring ForwardedHeaderFilter, Symfony,
 * Laravel, Werkzeug ProxyFix, Traefik, nginx realip) by its prefix;
 * X-Original-URL / X-Rewrite-URL (IIS URL Rewrite, Symfony, Zend);
 * X-Original-Host, X-Host, X-HTTP-Host-Override (PHP frameworks);
 * X-Real-IP and the client-address family (nginx realip, Akamai,
 * Cloudflare, Rack). */
int
http_routing_field(const char *name, size_t len)
{
	static const char *const fixed[] = {
		"Forwarded", "X-Original-URL", "X-Original-URI", "X-Rewrite-URL",
		"X-Original-Host", "X-Host", "X-HTTP-Host-Override",
		"X-Override-URL", "X-Envoy-Original-Path",
		"X-Envoy-Original-Host", "X-Url-Scheme", "Front-End-Https",
		"X-Real-IP", "X-Client-IP", "Client-IP", "True-Client-IP",
		"X-Cluster-Client-IP", "X-ProxyUser-Ip", "X-Original-Forwarded-For",
		"CF-Connecting-IP", "Fastly-Client-IP", NULL
	};
	size_t i;

	if (len >= 12 && strncasecmp(name, "X-Forwarded-", 12) == 0)
		return 1;
	for (i = 0; fixed[i] != NULL; i++)
		if (name_eq(name, len, fixed[i]))
			return 1;
	return 0;
}

int
http_request_framing(const struct http_req *req, const struct dest *d,
    struct http_framing *f, char *err, size_t errlen)
{
	const struct http_header *cl, *te, *host;
	size_t ncl, nte, nhost, i;
	struct dest hd;
	char why[128];

	memset(f, 0, sizeof(*f));
	ncl = http_find_header(req->headers, req->nheaders, "Content-Length", &cl);
	nte = http_find_header(req->headers, req->nheaders, "Transfer-Encoding", &te);
	nhost = http_find_header(req->headers, req->nheaders, "Host", &host);
	if (ncl > 0 && nte > 0)
		return fail(NULL, 0, err, errlen, "Content-Length with Transfer-Encoding");
	if (ncl > 1)
		return fail(NULL, 0, err, errlen, "repeated Content-Length");
	if (nte > 1)
		return fail(NULL, 0, err, errlen, "repeated Transfer-Encoding");
	if (ncl == 1 && http_content_length(cl, &f->length) == -1)
		return fail(NULL, 0, err, errlen, "malformed Content-Length");
	if (nte == 1) {
		if (req->minor == 0)
			return fail(NULL, 0, err, errlen, "Transfer-Encoding in HTTP/1.0");
		if (chunked_te_is_final_chunked(te->value, te->value_len) != 1)
			return fail(NULL, 0, err, errlen,
			    "Transfer-Encoding other than a final chunked");
		f->chunked = 1;
	}
	if (nhost > 1)
		return fail(NULL, 0, err, errlen, "repeated Host");
	if (nhost == 1) {
		if (parse_authority80(host->value, host->value_len, &hd, why,
		    sizeof(why)) == -1 || hd.port != d->port ||
		    strcmp(hd.host, d->host) != 0)
			return fail(NULL, 0, err, errlen,
			    "Host disagrees with the request target");
	}
	if ((f->chunked || f->length > 0) && http_body_ignorable(req->method))
		return fail(NULL, 0, err, errlen,
		    "a body on this method is refused: an upstream may ignore it "
		    "and read it as another request");
	f->close = req->minor == 0;
	for (i = 0; i < req->nheaders; i++) {
		const struct http_header *h = &req->headers[i];
		if (!name_eq(h->name, h->name_len, "Connection"))
			continue;
		if (each_token(h->value, h->value_len, tok_is_protected, NULL))
			return fail(NULL, 0, err, errlen,
			    "Connection names a framing header");
		if (each_token(h->value, h->value_len, tok_is, (void *)"close"))
			f->close = 1;
	}
	return 0;
}

/* Hop-by-hop fields (RFC 9110 7.6.1) and Proxy-*, plus whatever the
 * message's own Connection fields name. Transfer-Encoding stays: the body
 * is forwarded in its chunked framing, byte for byte. */
static int
is_hop_by_hop(const struct http_header *all, size_t n, const struct http_header *h)
{
	static const char *const fixed[] = {
		"Connection", "Keep-Alive", "TE", "Trailer", "Upgrade", "Host", NULL
	};
	size_t i;

	for (i = 0; fixed[i] != NULL; i++)
		if (name_eq(h->name, h->name_len, fixed[i]))
			return 1;
	if (h->name_len >= 6 && strncasecmp(h->name, "Proxy-", 6) == 0)
		return 1;
	/* Compared in place, whatever the name's length: a copy into a
	 * fixed buffer would have to give up on a long name and forward it. */
	for (i = 0; i < n; i++) {
		if (name_eq(all[i].name, all[i].name_len, "Connection") &&
		    each_token(all[i].value, all[i].value_len, tok_names,
		    (void *)(uintptr_t)h))
			return 1;
	}
	return 0;
}

struct outbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 overflow;
};

static void
out_add(struct outbuf *o, const char *s, size_t n)
{
	if (o->overflow || o->len + n > o->cap) {
		o->overflow = 1;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void
out_str(struct outbuf *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/* One field of all[n], unless it is hop-by-hop. */
static void
out_header(struct outbuf *o, const struct http_header *all, size_t n,
    const struct http_header *h)
{
	if (is_hop_by_hop(all, n, h))
		return;
	out_add(o, h->name, h->name_len);
	out_str(o, ": ");
	out_add(o, h->value, h->value_len);
	out_str(o, "\r\n");
}

/* A request's fields, less the hop-by-hop and the routing ones. */
static void
out_headers(struct outbuf *o, const struct http_header *h, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (http_routing_field(h[i].name, h[i].name_len))
			continue;
		out_header(o, h, n, &h[i]);
	}
}

long
http_forward_head(const struct http_req *req, const struct dest *d,
    const char *path, size_t path_len, char *out, size_t outlen)
{
	struct outbuf o = { out, 0, outlen, 0 };
	char portbuf[8];

	out_str(&o, req->method);
	out_str(&o, " ");
	if (path_len == 0 || path[0] != '/')
		out_str(&o, "/");
	out_add(&o, path, path_len);
	out_str(&o, " HTTP/1.1\r\nHost: ");
	if (d->kind == DEST_IPV6)
		out_str(&o, "[");
	out_str(&o, d->host);
	if (d->kind == DEST_IPV6)
		out_str(&o, "]");
	if (d->port != 80) {
		snprintf(portbuf, sizeof(portbuf), ":%u", d->port);
		out_str(&o, portbuf);
	}
	out_str(&o, "\r\n");
	out_headers(&o, req->headers, req->nheaders);
	out_str(&o, "Via: 1.1 egress-guard\r\n\r\n");
	return o.overflow ? -1 : (long)o.len;
}

int
http_response_framing(const struct http_resp *r, int head_request,
    enum http_body *kind, long long *length, int *close, char *err, size_t errlen)
{
	const struct http_header *cl, *te, *h;
	size_t ncl, nte, i;

	*length = 0;
	*close = r->minor == 0;
	for (i = 0; i < r->nheaders; i++) {
		h = &r->headers[i];
		if (!name_eq(h->name, h->name_len, "Connection"))
			continue;
		/* http_forward_response_head drops the fields Connection
		 * names: a framing field named there would not reach the
		 * client, which would then frame the body otherwise. */
		if (each_token(h->value, h->value_len, tok_is, (void *)"content-length") ||
		    each_token(h->value, h->value_len, tok_is, (void *)"transfer-encoding"))
			return fail(NULL, 0, err, errlen,
			    "Connection names a framing header");
		if (each_token(h->value, h->value_len, tok_is, (void *)"close"))
			*close = 1;
	}
	if (r->status == 101)
		return fail(NULL, 0, err, errlen, "protocol upgrade is not relayed");
	if ((r->status >= 100 && r->status < 200) || r->status == 204 ||
	    r->status == 304 || head_request) {
		*kind = HTTP_BODY_NONE;
		return 0;
	}
	ncl = http_find_header(r->headers, r->nheaders, "Content-Length", &cl);
	nte = http_find_header(r->headers, r->nheaders, "Transfer-Encoding", &te);
	if (ncl > 0 && nte > 0)
		return fail(NULL, 0, err, errlen, "Content-Length with Transfer-Encoding");
	if (ncl > 1 || nte > 1)
		return fail(NULL, 0, err, errlen, "repeated framing header");
	if (nte == 1) {
		int fc = chunked_te_is_final_chunked(te->value, te->value_len);
		if (fc == -1)
			return fail(NULL, 0, err, errlen, "malformed Transfer-Encoding");
		if (fc == 1) {
			*kind = HTTP_BODY_CHUNKED;
			return 0;
		}
		*kind = HTTP_BODY_CLOSE;
		*close = 1;
		return 0;
	}
	if (ncl == 1) {
		if (http_content_length(cl, length) == -1)
			return fail(NULL, 0, err, errlen, "malformed Content-Length");
		*kind = HTTP_BODY_LENGTH;
		return 0;
	}
	*kind = HTTP_BODY_CLOSE;
	*close = 1;
	return 0;
}

int
http_response_check_http10(const struct http_resp *r, enum http_body kind,
    char *err, size_t errlen)
{
	const struct http_header *te;

	if (kind == HTTP_BODY_NONE ||
	    http_find_header(r->headers, r->nheaders, "Transfer-Encoding", &te) == 0)
		return 0;
	if (kind == HTTP_BODY_CHUNKED && name_eq(te->value, te->value_len, "chunked"))
		return 0;
	return fail(NULL, 0, err, errlen,
	    "transfer coding an HTTP/1.0 client cannot receive");
}

long
http_forward_response_head(const struct http_resp *r, int flags, char *out,
    size_t outlen)
{
	struct outbuf o = { out, 0, outlen, 0 };
	char line[24];
	size_t i;

	snprintf(line, sizeof(line), "HTTP/1.1 %03d ", r->status);
	out_str(&o, line);
	out_add(&o, r->reason, r->reason_len);
	out_str(&o, "\r\n");
	for (i = 0; i < r->nheaders; i++) {
		const struct http_header *h = &r->headers[i];
		if ((flags & HTTP_FWD_HTTP10) &&
		    name_eq(h->name, h->name_len, "Transfer-Encoding"))
			continue;
		out_header(&o, r->headers, r->nheaders, h);
	}
	if (flags & HTTP_FWD_CLOSE)
		out_str(&o, "Connection: close\r\n");
	out_str(&o, "\r\n");
	return o.overflow ? -1 : (long)o.len;
}
