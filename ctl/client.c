/* A small blocking HTTP/1.1 client over the guard's AF_UNIX control socket,
 * and the push and status subcommands (docs/design.md "Control API").
 *
 * One request per connection ("Connection: close"). Everything the guard
 * sends back is bounded (head, body, each recv by SO_RCVTIMEO, the whole
 * exchange by a deadline), since a wedged or hostile socket must not hang
 * a deploy script. The response parser is pure and stateless: it is run
 * again over the whole buffer after each read, which is cheap at these
 * sizes and keeps it trivially testable. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "policy/bundle.h"
#include "util/ascii.h"
#include "util/num.h"
#include "util/errbuf.h"

#define PROG		"egress-guardctl"

#define DEADLINE_S	(3 * CTLCLIENT_TIMEOUT_S)	/* the whole exchange */
#define CHUNK_LINE_MAX	256	/* chunk-size line with extensions */
/* Chunk framing costs wire bytes beyond the body; allow some of it. */
#define WIRE_MAX	(CTLCLIENT_HEAD_MAX + CTLCLIENT_BODY_MAX + 64u * 1024)

/* Case-insensitive ASCII comparison of s[0..len) with a lowercase literal. */
static int
ieq(const char *s, size_t len, const char *lit)
{
	size_t i;

	if (strlen(lit) != len)
		return 0;
	for (i = 0; i < len; i++)
		if (ascii_lower((unsigned char)s[i]) != (unsigned char)lit[i])
			return 0;
	return 1;
}

static int
hex_val(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return ascii_lower(c) - 'a' + 10;
}

/* Decodes a chunked body starting at p. Returns 1 complete, 0 need more,
 * -1 malformed. out has room for end - p bytes. */
static int
dechunk(const char *p, const char *end, int eof, char *out, size_t *olen,
    char *err, size_t errlen)
{
	const char *nl, *q;
	size_t size, n = 0;

	for (;;) {
		nl = memmem(p, (size_t)(end - p), "\r\n", 2);
		if (nl == NULL) {
			if ((size_t)(end - p) > CHUNK_LINE_MAX) {
				errbuf_set(err, errlen, "chunk size line too long");
				return -1;
			}
			goto more;
		}
		if ((size_t)(nl - p) > CHUNK_LINE_MAX) {
			errbuf_set(err, errlen, "chunk size line too long");
			return -1;
		}
		size = 0;
		/* Seven hex digits already exceed the body bound. */
		for (q = p; q < nl && ascii_is_xdigit((unsigned char)*q) &&
		    q - p < 7; q++)
			size = size * 16 + (size_t)hex_val((unsigned char)*q);
		if (q == p || (q < nl && *q != ';')) {
			errbuf_set(err, errlen, "bad chunk size");
			return -1;
		}
		if (size > CTLCLIENT_BODY_MAX - n) {
			errbuf_set(err, errlen, "response body larger than %u bytes",
			    CTLCLIENT_BODY_MAX);
			return -1;
		}
		p = nl + 2;
		if (size == 0)
			break;
		if ((size_t)(end - p) < size + 2)
			goto more;
		if (p[size] != '\r' || p[size + 1] != '\n') {
			errbuf_set(err, errlen, "chunk not followed by CRLF");
			return -1;
		}
		memcpy(out + n, p, size);
		n += size;
		p += size + 2;
	}
	/* Trailer fields, ignored, up to the empty line. */
	for (;;) {
		nl = memmem(p, (size_t)(end - p), "\r\n", 2);
		if (nl == NULL) {
			if ((size_t)(end - p) > CTLCLIENT_HEAD_MAX) {
				errbuf_set(err, errlen, "trailer too long");
				return -1;
			}
			goto more;
		}
		if (nl == p)
			break;
		p = nl + 2;
	}
	*olen = n;
	return 1;
more:
	if (eof) {
		errbuf_set(err, errlen, "connection closed inside a chunked body");
		return -1;
	}
	return 0;
}

int
ctlclient_parse_response(const char *buf, size_t len, int eof,
    struct ctlclient_response *r, char *err, size_t errlen)
{
	const char *he, *line, *nl, *colon, *v, *ve, *body;
	long long status, cl = -1, n;
	size_t rest, blen = 0;
	int chunked = 0, done;
	char *out = NULL;

	he = memmem(buf, len, "\r\n\r\n", 4);
	if (he == NULL || (size_t)(he - buf) + 4 > CTLCLIENT_HEAD_MAX) {
		if (he != NULL || len >= CTLCLIENT_HEAD_MAX) {
			errbuf_set(err, errlen, "response head larger than %u bytes",
			    CTLCLIENT_HEAD_MAX);
			return -1;
		}
		if (eof) {
			errbuf_set(err, errlen, len == 0 ? "connection closed "
			    "without a response" : "connection closed inside "
			    "the response head");
			return -1;
		}
		return 0;
	}
	/* "HTTP/1.x SSS[ reason]" */
	nl = memmem(buf, (size_t)(he + 2 - buf), "\r\n", 2);
	if ((size_t)(nl - buf) < 12 || memcmp(buf, "HTTP/1.", 7) != 0 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
	    num_parse_n(buf + 9, 3, 100, 599, &status) == -1 ||
	    (nl - buf > 12 && buf[12] != ' ')) {
		errbuf_set(err, errlen, "not an HTTP/1.x status line");
		return -1;
	}
	if (status < 200) {
		errbuf_set(err, errlen, "unexpected interim response %lld", status);
		return -1;
	}
	for (line = nl + 2; line < he + 2; line = nl + 2) {
		nl = memmem(line, (size_t)(he + 2 - line), "\r\n", 2);
		colon = memchr(line, ':', (size_t)(nl - line));
		if (colon == NULL || colon == line) {
			errbuf_set(err, errlen, "malformed header line");
			return -1;
		}
		for (v = line; v < colon; v++) {
			if (!ascii_is_tchar((unsigned char)*v)) {
				errbuf_set(err, errlen, "malformed header name");
				return -1;
			}
		}
		for (v = colon + 1; v < nl && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = nl; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		if (ieq(line, (size_t)(colon - line), "content-length")) {
			if (num_parse_n(v, (unsigned long)(ve - v), 0,
			    CTLCLIENT_BODY_MAX, &n) == -1) {
				errbuf_set(err, errlen, "bad Content-Length or body "
				    "larger than %u bytes", CTLCLIENT_BODY_MAX);
				return -1;
			}
			if (cl != -1 && cl != n) {
				errbuf_set(err, errlen, "conflicting Content-Length");
				return -1;
			}
			cl = n;
		} else if (ieq(line, (size_t)(colon - line),
		    "transfer-encoding")) {
			if (!ieq(v, (size_t)(ve - v), "chunked")) {
				errbuf_set(err, errlen, "unsupported Transfer-Encoding");
				return -1;
			}
			chunked = 1;
		}
	}
	if (chunked && cl != -1) {
		errbuf_set(err, errlen, "both Content-Length and Transfer-Encoding");
		return -1;
	}
	body = he + 4;
	rest = len - (size_t)(body - buf);
	if (status == 204 || status == 304) {
		rest = 0;
		done = 1;
	} else if (chunked) {
		done = -2;	/* decoded below, into out */
	} else if (cl != -1) {
		if (rest < (size_t)cl) {
			if (eof) {
				errbuf_set(err, errlen, "connection closed after %zu "
				    "of %lld body bytes", rest, cl);
				return -1;
			}
			return 0;
		}
		rest = (size_t)cl;	/* bytes past it are not ours */
		done = 1;
	} else {
		if (rest > CTLCLIENT_BODY_MAX) {
			errbuf_set(err, errlen, "response body larger than %u bytes",
			    CTLCLIENT_BODY_MAX);
			return -1;
		}
		if (!eof)
			return 0;
		done = 1;
	}
	if ((out = malloc(rest + 1)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	if (done == -2) {
		done = dechunk(body, buf + len, eof, out, &blen, err, errlen);
		if (done != 1) {
			free(out);
			return done;
		}
	} else {
		memcpy(out, body, rest);
		blen = rest;
	}
	out[blen] = '\0';
	r->status = (int)status;
	r->body = out;
	r->body_len = blen;
	return 1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
send_all(int fd, const char *p, size_t len)
{
	ssize_t w;

	while (len > 0) {
		w = send(fd, p, len, MSG_NOSIGNAL);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Sends len bytes of fd from its start: sendfile, so a bundle of
 * megabytes is never copied into this process. */
static int
send_file(int sock, int fd, size_t len)
{
	off_t off = 0;
	ssize_t w;

	while ((size_t)off < len) {
		w = sendfile(sock, fd, &off, len - (size_t)off);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;	/* the file shrank meanwhile */
			return -1;
		}
	}
	return 0;
}

/* A request body: body_len bytes in memory, or of the file fd when fd is
 * not -1. */
struct body {
	const char	*mem;
	int		 fd;
	size_t		 len;
};

static int
send_body(int sock, const struct body *b)
{
	if (b->len == 0)
		return 0;
	return b->fd != -1 ? send_file(sock, b->fd, b->len) :
	    send_all(sock, b->mem, b->len);
}

static const char *
io_error(void)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return "timed out";
	return strerror(errno);
}

static int
request(const char *sock_path, const char *method, const char *target,
    const struct body *body, struct ctlclient_response *r, char *err,
    size_t errlen)
{
	struct timeval tv = { .tv_sec = CTLCLIENT_TIMEOUT_S, .tv_usec = 0 };
	struct sockaddr_un sa;
	char head[512], why[256], *buf = NULL, *nb;
	size_t len = 0, cap = 0, body_len = body->len;
	double deadline;
	ssize_t got;
	int fd = -1, n, pr, rc = -1;

	if (sock_path == NULL || method == NULL || target == NULL ||
	    r == NULL || (body->mem == NULL && body->fd == -1 && body_len > 0)) {
		errbuf_set(err, errlen, "bad request arguments");
		return -1;
	}
	memset(r, 0, sizeof(*r));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (sock_path[0] == '\0' || strlen(sock_path) >= sizeof(sa.sun_path)) {
		errbuf_set(err, errlen, "%s: not a usable socket path (1-%zu bytes)",
		    sock_path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	n = body_len > 0 ?
	    snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: localhost\r\n"
	    "User-Agent: " PROG "\r\nAccept: application/json\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n", method, target, body_len) :
	    snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: localhost\r\n"
	    "User-Agent: " PROG "\r\nAccept: application/json\r\n"
	    "Connection: close\r\n\r\n", method, target);
	if (n < 0 || (size_t)n >= sizeof(head)) {
		errbuf_set(err, errlen, "request line too long");
		return -1;
	}

	deadline = now_s() + DEADLINE_S;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		errbuf_set(err, errlen, "%s: socket: %s", sock_path, strerror(errno));
		goto out;
	}
	/* Set before connect: a Unix connect waits on a full backlog for
	 * up to SO_SNDTIMEO. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1) {
		errbuf_set(err, errlen, "%s: setsockopt: %s", sock_path,
		    strerror(errno));
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		errbuf_set(err, errlen, "%s: connect: %s", sock_path, io_error());
		goto out;
	}
	if (send_all(fd, head, (size_t)n) == -1 || send_body(fd, body) == -1) {
		errbuf_set(err, errlen, "%s: send: %s", sock_path, io_error());
		goto out;
	}
	for (;;) {
		if (len == cap) {
			if (cap >= WIRE_MAX) {
				errbuf_set(err, errlen, "%s: response larger than %u "
				    "bytes", sock_path, WIRE_MAX);
				goto out;
			}
			cap = cap == 0 ? 4096 : cap * 2;
			if (cap > WIRE_MAX)
				cap = WIRE_MAX;
			if ((nb = realloc(buf, cap)) == NULL) {
				errbuf_set(err, errlen, "%s: out of memory", sock_path);
				goto out;
			}
			buf = nb;
		}
		got = recv(fd, buf + len, cap - len, 0);
		if (got == -1 && errno == EINTR)
			continue;
		if (got == -1) {
			errbuf_set(err, errlen, "%s: receive: %s", sock_path,
			    io_error());
			goto out;
		}
		len += (size_t)got;
		pr = ctlclient_parse_response(buf, len, got == 0, r, why,
		    sizeof(why));
		if (pr == 1)
			break;
		if (pr == -1) {
			errbuf_set(err, errlen, "%s: bad response: %s", sock_path, why);
			goto out;
		}
		if (now_s() > deadline) {
			errbuf_set(err, errlen, "%s: no complete response within %d "
			    "s", sock_path, DEADLINE_S);
			goto out;
		}
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(buf);
	return rc;
}

int
ctlclient_request(const char *sock_path, const char *method,
    const char *target, const char *body, size_t body_len,
    struct ctlclient_response *r, char *err, size_t errlen)
{
	struct body b = { body, -1, body_len };

	return request(sock_path, method, target, &b, r, err, errlen);
}

int
ctlclient_request_file(const char *sock_path, const char *method,
    const char *target, const char *path, size_t max,
    struct ctlclient_response *r, char *err, size_t errlen)
{
	struct body b = { NULL, -1, 0 };
	struct stat st;
	int rc = -1;

	/* O_NONBLOCK so a FIFO in place of the file cannot hang the open;
	 * it is then refused as not regular. */
	if (path == NULL ||
	    (b.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) == -1) {
		errbuf_set(err, errlen, "%s: %s", path != NULL ? path : "",
		    path != NULL ? strerror(errno) : "no path");
		return -1;
	}
	if (fstat(b.fd, &st) == -1) {
		errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		errbuf_set(err, errlen, "%s: not a regular file", path);
	} else if (st.st_size < 0 || (unsigned long long)st.st_size > max) {
		errbuf_set(err, errlen, "%s: larger than %zu bytes", path, max);
	} else {
		b.len = (size_t)st.st_size;
		rc = request(sock_path, method, target, &b, r, err, errlen);
	}
	close(b.fd);
	return rc;
}

/* ---- subcommands: the CLI layer, which prints. ---- */

/* Parses [POSITIONAL] --control PATH; want_pos says whether the one
 * positional argument is expected. Returns 0 or an exit status. */
static int
parse_args(int argc, char **argv, const char *usage, int want_pos,
    const char **pos, const char **control)
{
	const char *cmd = argv[0], *a;
	size_t n = strlen("--control");
	int i, opts = 1;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (opts && strcmp(a, "--") == 0) {
			opts = 0;
		} else if (opts && strncmp(a, "--control", n) == 0 &&
		    (a[n] == '\0' || a[n] == '=')) {
			if (a[n] == '=')
				*control = a + n + 1;
			else if (i + 1 < argc)
				*control = argv[++i];
			else
				*control = "";
			if ((*control)[0] == '\0')
				return cli_usage_error(cmd, usage,
				    "--control needs a socket path", NULL);
		} else if (opts && a[0] == '-' && a[1] != '\0') {
			return cli_usage_error(cmd, usage, "unknown option", a);
		} else if (!want_pos || *pos != NULL) {
			return cli_usage_error(cmd, usage, "unexpected argument", a);
		} else {
			*pos = a;
		}
	}
	if (want_pos && *pos == NULL)
		return cli_usage_error(cmd, usage, "missing BUNDLE", NULL);
	if (*control == NULL)
		return cli_usage_error(cmd, usage, "missing --control", NULL);
	return 0;
}

/* The body on stdout, newline-terminated. */
static int
print_body(const struct ctlclient_response *r)
{
	if (fwrite(r->body, 1, r->body_len, stdout) != r->body_len ||
	    ((r->body_len == 0 || r->body[r->body_len - 1] != '\n') &&
	    fputc('\n', stdout) == EOF) || fflush(stdout) == EOF) {
		fprintf(stderr, "%s: cannot write to standard output\n", PROG);
		return -1;
	}
	return 0;
}

int
ctlclient_cmd_push(int argc, char **argv)
{
	const char *path = NULL, *control = NULL;
	struct ctlclient_response r = { 0, NULL, 0 };
	char err[1024];
	int rc;

	if ((rc = parse_args(argc, argv, CTLCLIENT_PUSH_USAGE, 1, &path,
	    &control)) != 0)
		return rc;
	rc = CLI_EXIT_USAGE;
	/* The guard refuses more than BUNDLE_MAX_BYTES anyway: say so here
	 * rather than send it. */
	if (ctlclient_request_file(control, "PUT", "/v1/policy", path,
	    BUNDLE_MAX_BYTES, &r, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: push: %s\n", PROG, err);
		goto out;
	}
	if (print_body(&r) == -1) {
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (r.status == 200) {
		rc = 0;
	} else if (r.status == 403 || r.status == 409) {
		fprintf(stderr, "%s: push: %s: refused by %s (HTTP %d)\n",
		    PROG, path, control, r.status);
		rc = CLI_EXIT_FAIL;
	} else {
		fprintf(stderr, "%s: push: %s: %s answered HTTP %d\n", PROG,
		    path, control, r.status);
	}
out:
	free(r.body);
	return rc;
}

int
ctlclient_cmd_status(int argc, char **argv)
{
	const char *pos = NULL, *control = NULL;
	struct ctlclient_response r = { 0, NULL, 0 };
	char err[1024];
	int rc;

	if ((rc = parse_args(argc, argv, CTLCLIENT_STATUS_USAGE, 0, &pos,
	    &control)) != 0)
		return rc;
	rc = CLI_EXIT_USAGE;
	if (ctlclient_request(control, "GET", "/v1/status", NULL, 0, &r, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s: status: %s\n", PROG, err);
		goto out;
	}
	if (print_body(&r) == -1) {
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (r.status == 200)
		rc = 0;
	else
		fprintf(stderr, "%s: status: %s answered HTTP %d\n", PROG,
		    control, r.status);
out:
	free(r.body);
	return rc;
}
