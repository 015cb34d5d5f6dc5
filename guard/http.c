#include <stdio.h>
#include <string.h>

#include "guard/http.h"
#include "util/ascii.h"

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
	*status = code;
	snprintf(err, errlen, "%s", msg);
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

int
http_parse_head(const char *buf, size_t len, struct http_req *req,
    int *status, char *err, size_t errlen)
{
	size_t pos = 0, eol;
	int first = 1;

	memset(req, 0, sizeof(*req));
	if (len > HTTP_HEAD_MAX)
		return fail(status, 431, err, errlen, "request head too large");
	if (len < 4 || memcmp(buf + len - 4, "\r\n\r\n", 4) != 0)
		return fail(status, 400, err, errlen, "incomplete request head");
	while (pos < len) {
		const char *line = buf + pos;
		const char *cr = memchr(line, '\r', len - pos);

		if (cr == NULL || (size_t)(cr - buf) + 1 >= len || cr[1] != '\n')
			return fail(status, 400, err, errlen, "bare CR or LF");
		eol = (size_t)(cr - line);
		if (memchr(line, '\n', eol) != NULL || memchr(line, '\0', eol) != NULL)
			return fail(status, 400, err, errlen, "bare LF or NUL");
		if (first) {
			if (parse_request_line(line, eol, req, status, err, errlen) == -1)
				return -1;
			first = 0;
		} else if (eol == 0) {
			pos += 2;
			break;
		} else {
			if (req->nheaders == HTTP_MAX_HEADERS)
				return fail(status, 431, err, errlen, "too many header fields");
			if (parse_header_line(line, eol, &req->headers[req->nheaders],
			    status, err, errlen) == -1)
				return -1;
			req->nheaders++;
		}
		pos += eol + 2;
	}
	if (pos != len)
		return fail(status, 400, err, errlen, "bytes after the request head");
	return 0;
}

static int
name_eq(const char *a, size_t alen, const char *b)
{
	size_t i;

	if (alen != strlen(b))
		return 0;
	for (i = 0; i < alen; i++)
		if (ascii_lower((unsigned char)a[i]) != ascii_lower((unsigned char)b[i]))
			return 0;
	return 1;
}

size_t
http_find_header(const struct http_req *req, const char *name,
    const struct http_header **first)
{
	size_t i, count = 0;

	*first = NULL;
	for (i = 0; i < req->nheaders; i++) {
		if (name_eq(req->headers[i].name, req->headers[i].name_len, name)) {
			if (count++ == 0)
				*first = &req->headers[i];
		}
	}
	return count;
}
