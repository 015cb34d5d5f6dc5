/* A small blocking HTTP/1.1 client over the guard's AF_UNIX control socket
 * (docs/design.md "Control API"), and the argument parsing and answer
 * printing its subcommands share (ctl/push.c, ctl/tenant.c, which sit
 * above this file: it includes neither).
 *
 * One request per connection ("Connection: close"). Everything the guard
 * sends back is bounded (head, body, each recv by SO_RCVTIMEO, the whole
 * exchange by a deadline), since a wedged or hostile socket must not hang
 * a deploy script. The response is read by proto/http.c's head parser and
 * framing rules and proto/chunked.c, as the guard reads an upstream's;
 * ctlclient_parse_response is pure and stateless: it is run again over
 * the whole buffer after each read, which is cheap at these sizes and
 * keeps it trivially testable. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "policy/policy.h"
#include "proto/chunked.h"
#include "proto/http.h"
#include "util/ascii.h"
#include "util/num.h"
#include "util/errbuf.h"
#include "util/names.h"


#define DEADLINE_S	(3 * CTLCLIENT_TIMEOUT_S)	/* the whole exchange */
/* Chunk framing costs wire bytes beyond the body: 64 KiB of it is
 * allowed (read_answer). */

/* The body of a chunked response, decoded into out (room for
 * max bytes) by proto/chunked.c's state machine, which
 * the guard uses for the same grammar. Returns 1 complete, 0 need more,
 * -1 malformed or larger than max. */
static int
dechunk(const char *p, size_t len, int eof, char *out, size_t *olen,
    size_t max, char *err, size_t errlen)
{
	struct chunked c;
	size_t off, dlen, n = 0;
	long used;
	int done = 0;

	chunked_init(&c);
	while (!done && len > 0) {
		if ((used = chunked_decode(&c, p, len, &done, &off,
		    &dlen)) == -1)
			return errbuf_fail(err, errlen, "malformed chunked body");
		/* What a chunk-size announces counts before its data comes. */
		if (dlen > max - n || chunked_pending(&c) > max - n - dlen)
			return errbuf_fail(err, errlen, "response body larger "
			    "than %zu bytes", max);
		memcpy(out + n, p + off, dlen);
		n += dlen;
		p += used;
		len -= (size_t)used;
	}
	if (!done) {
		if (eof)
			return errbuf_fail(err, errlen, "connection closed "
			    "inside a chunked body");
		return 0;
	}
	*olen = n;
	return 1;
}

/* The head through proto/http.c, the parser and the framing rules the
 * guard applies to upstream answers (RFC 9112 6.3), within this client's
 * own bounds. Returns 1 with *hlen, *kind, *length and r->status set, 0
 * when more bytes are needed, -1 with err. */
static int
parse_head(const char *buf, size_t len, int eof, struct ctlclient_response *r,
    size_t *hlen, enum http_body *kind, long long *length, size_t max,
    char *err, size_t errlen)
{
	struct http_resp h;
	long end;
	int close;

	if ((end = http_head_end(buf, len)) == -1)
		return errbuf_fail(err, errlen, "malformed response head");
	if (end == 0) {
		if (len >= CTLCLIENT_HEAD_MAX)
			return errbuf_fail(err, errlen, "response head larger "
			    "than %u bytes", CTLCLIENT_HEAD_MAX);
		if (eof)
			return errbuf_fail(err, errlen, len == 0 ?
			    "connection closed without a response" :
			    "connection closed inside the response head");
		return 0;
	}
	if ((size_t)end > CTLCLIENT_HEAD_MAX)
		return errbuf_fail(err, errlen, "response head larger than %u "
		    "bytes", CTLCLIENT_HEAD_MAX);
	if (http_parse_response_head(buf, (size_t)end, &h, err, errlen) == -1)
		return -1;
	if (h.status > 599)
		return errbuf_fail(err, errlen, "not an HTTP/1.x status line");
	if (h.status < 200)
		return errbuf_fail(err, errlen, "unexpected interim response %d",
		    h.status);
	/* This client removes chunked framing and no other coding: the
	 * rule the guard applies for an HTTP/1.0 client. */
	if (http_response_framing(&h, 0, kind, length, &close, err,
	    errlen) == -1 ||
	    http_response_check_http10(&h, *kind, err, errlen) == -1)
		return -1;
	if (*kind == HTTP_BODY_LENGTH && (unsigned long long)*length > max)
		return errbuf_fail(err, errlen, "response body larger than %zu "
		    "bytes", max);
	r->status = h.status;
	*hlen = (size_t)end;
	return 1;
}

/* ctlclient_parse_response with a body bound of max bytes. */
static int
parse_response(const char *buf, size_t len, int eof,
    struct ctlclient_response *r, size_t max, char *err, size_t errlen)
{
	struct ctlclient_response got = { 0, NULL, 0 };
	enum http_body kind;
	long long length;
	size_t hlen, rest, blen = 0;
	int rc;

	if ((rc = parse_head(buf, len, eof, &got, &hlen, &kind, &length, max,
	    err, errlen)) != 1)
		return rc;
	rest = len - hlen;
	switch (kind) {
	case HTTP_BODY_NONE:
		rest = 0;
		break;
	case HTTP_BODY_LENGTH:
		if (rest < (size_t)length) {
			if (eof)
				return errbuf_fail(err, errlen, "connection "
				    "closed after %zu of %lld body bytes", rest,
				    length);
			return 0;
		}
		rest = (size_t)length;	/* bytes past it are not ours */
		break;
	case HTTP_BODY_CLOSE:
		if (rest > max)
			return errbuf_fail(err, errlen, "response body larger "
			    "than %zu bytes", max);
		if (!eof)
			return 0;
		break;
	case HTTP_BODY_CHUNKED:
		break;
	}
	if ((got.body = malloc(rest + 1)) == NULL)
		return errbuf_fail(err, errlen, "out of memory");
	if (kind == HTTP_BODY_CHUNKED) {
		if ((rc = dechunk(buf + hlen, rest, eof, got.body, &blen, max,
		    err, errlen)) != 1) {
			free(got.body);
			return rc;
		}
	} else {
		memcpy(got.body, buf + hlen, rest);
		blen = rest;
	}
	got.body[blen] = '\0';
	got.body_len = blen;
	*r = got;
	return 1;
}

int
ctlclient_parse_response(const char *buf, size_t len, int eof,
    struct ctlclient_response *r, char *err, size_t errlen)
{
	return parse_response(buf, len, eof, r, CTLCLIENT_BODY_MAX, err, errlen);
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

/* A request body: len bytes in memory; then (if not NULL) what to do
 * while the guard works on it, after the last byte is sent. */
struct body {
	const char	*mem;
	size_t		 len;
	void		(*sent)(void *);
	void		*arg;
	size_t		 answer_max;	/* the answer's body bound; 0: CTLCLIENT_BODY_MAX */
};

static const char *
io_error(void)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return "timed out";
	return strerror(errno);
}

/* Whoever answers on the socket must be root, this process's own user,
 * or the uid the operator named: in a folder another user can rename in,
 * their socket could stand at the path. SO_PEERCRED gives the uid that
 * created the listening socket, which the kernel vouches for. */
static int
check_peer(int fd, const char *sock_path, long guard_uid, char *err,
    size_t errlen)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		errbuf_set(err, errlen, "%s: cannot tell who answers: %s", sock_path,
		    strerror(errno));
		return -1;
	}
	if (cred.uid == 0 || cred.uid == geteuid() ||
	    (guard_uid >= 0 && (long)cred.uid == guard_uid))
		return 0;
	errbuf_set(err, errlen, "%s: answered by uid %u, which is neither root, "
	    "this user (uid %u) nor --guard-uid: not the guard; refusing its answer",
	    sock_path, (unsigned)cred.uid, (unsigned)geteuid());
	return -1;
}

/* Reads the answer on fd until parse_response has all of it, within the
 * head, max body bytes, 64 KiB of framing and the deadline. 0 with r
 * filled, or -1 with err naming sock_path. */
static int
read_answer(int fd, const char *sock_path, double deadline, size_t max,
    struct ctlclient_response *r, char *err, size_t errlen)
{
	size_t wire = CTLCLIENT_HEAD_MAX + max + 64u * 1024;
	char why[256], *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t got;
	int pr, rc = -1;

	for (;;) {
		if (len == cap) {
			if (cap >= wire) {
				errbuf_set(err, errlen, "%s: response larger than %zu "
				    "bytes", sock_path, wire);
				goto out;
			}
			cap = cap == 0 ? 4096 : cap * 2;
			if (cap > wire)
				cap = wire;
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
		pr = parse_response(buf, len, got == 0, r, max, why, sizeof(why));
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
	free(buf);
	return rc;
}

static int
request(const char *sock_path, const char *method, const char *target,
    const struct body *body, long guard_uid, struct ctlclient_response *r,
    char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = CTLCLIENT_TIMEOUT_S, .tv_usec = 0 };
	struct sockaddr_un sa;
	char head[512];
	size_t body_len = body->len;
	double deadline;
	int fd = -1, n, rc = -1;

	if (sock_path == NULL || method == NULL || target == NULL ||
	    r == NULL || (body->mem == NULL && body_len > 0)) {
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
	    "User-Agent: " CLI_PROG "\r\nAccept: application/json\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n", method, target, body_len) :
	    snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: localhost\r\n"
	    "User-Agent: " CLI_PROG "\r\nAccept: application/json\r\n"
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
	/* Before a byte of the bundle goes out. */
	if (check_peer(fd, sock_path, guard_uid, err, errlen) == -1)
		goto out;
	if (send_all(fd, head, (size_t)n) == -1 ||
	    (body_len > 0 && send_all(fd, body->mem, body_len) == -1)) {
		errbuf_set(err, errlen, "%s: send: %s", sock_path, io_error());
		goto out;
	}
	if (body->sent != NULL)
		body->sent(body->arg);
	if (read_answer(fd, sock_path, deadline, body->answer_max > 0 ?
	    body->answer_max : CTLCLIENT_BODY_MAX, r, err, errlen) == -1)
		goto out;
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	return rc;
}

int
ctlclient_request(const char *sock_path, long guard_uid, const char *method,
    const char *target, const char *body, size_t body_len,
    struct ctlclient_response *r, char *err, size_t errlen)
{
	return ctlclient_request_then(sock_path, guard_uid, method, target, body,
	    body_len, NULL, NULL, r, err, errlen);
}

int
ctlclient_request_then(const char *sock_path, long guard_uid,
    const char *method, const char *target, const char *body, size_t body_len,
    void (*sent)(void *), void *arg, struct ctlclient_response *r, char *err,
    size_t errlen)
{
	struct body b = { body, body_len, sent, arg, 0 };

	return request(sock_path, method, target, &b, guard_uid, r, err, errlen);
}

int
ctlclient_get(const char *sock_path, long guard_uid, const char *target,
    size_t answer_max, struct ctlclient_response *r, char *err, size_t errlen)
{
	struct body b = { NULL, 0, NULL, NULL, answer_max };

	return request(sock_path, "GET", target, &b, guard_uid, r, err, errlen);
}

/* The answer to a push of the bundle whose digest is want: 200 must name
 * exactly that digest. Anything else answering 200 never saw this bundle
 * (or installed another): the push did not happen as asked. */
int
ctlclient_check_pushed(const struct ctlclient_response *r, const char *want,
    char *err, size_t errlen)
{
	json_t *root, *d;
	int rc = -1;

	if ((root = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES,
	    NULL)) == NULL) {
		errbuf_set(err, errlen, "the answer is not JSON, or has a duplicate "
		    "key");
		return -1;
	}
	d = json_object_get(root, "digest");
	if (!json_is_string(d))
		errbuf_set(err, errlen, "the answer names no digest");
	else if (strcmp(json_string_value(d), want) != 0)
		errbuf_set(err, errlen, "the answer's digest %.80s is not the pushed "
		    "bundle's %s", json_string_value(d), want);
	else
		rc = 0;
	json_decref(root);
	return rc;
}

int
ctlclient_binary_sha256(const char *sock_path, long guard_uid, char *hex,
    char *err, size_t errlen)
{
	struct ctlclient_response r;
	json_error_t jerr;
	json_t *root = NULL;
	const char *v;
	size_t len, i;
	int rc = -1;

	if (ctlclient_request(sock_path, guard_uid, "GET", "/v1/status", NULL,
	    0, &r, err, errlen) == -1)
		return -1;
	if (r.status != 200) {
		errbuf_set(err, errlen, "%s: GET /v1/status answered %d",
		    sock_path, r.status);
		goto out;
	}
	if ((root = json_loadb(r.body, r.body_len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL || (v = json_string_value(json_object_get(root,
	    "binary_sha256"))) == NULL) {
		errbuf_set(err, errlen, "%s: the guard's status names no "
		    "binary_sha256 (an older guard, or it could not hash itself)",
		    sock_path);
		goto out;
	}
	len = json_string_length(json_object_get(root, "binary_sha256"));
	for (i = 0; i < len && ((v[i] >= '0' && v[i] <= '9') ||
	    (v[i] >= 'a' && v[i] <= 'f')); i++)
		;
	if (len != CTLCLIENT_SHA256_HEX || i != len) {
		errbuf_set(err, errlen, "%s: binary_sha256 is not %d lowercase "
		    "hex digits", sock_path, CTLCLIENT_SHA256_HEX);
		goto out;
	}
	memcpy(hex, v, len);
	hex[len] = '\0';
	rc = 0;
out:
	json_decref(root);
	free(r.body);
	return rc;
}

int
ctlclient_fetch_policy(const char *control, long guard_uid, const char *t,
    struct policy **out, char *err, size_t errlen)
{
	struct ctlclient_response r = { 0, NULL, 0 };
	struct body b = { NULL, 0, NULL, NULL, CTLCLIENT_POLICY_MAX };
	json_t *root = NULL, *loaded, *pol, *dig;
	char why[512], *bytes = NULL;
	struct policy *p = NULL;
	int rc = -1;

	*out = NULL;
	if (request(control, "GET", t, &b, guard_uid, &r, err, errlen) == -1)
		return -1;
	if (r.status != 200) {
		errbuf_set(err, errlen, "%s: GET %s answered HTTP %d", control, t,
		    r.status);
		goto out;
	}
	root = json_loadb(r.body, r.body_len, JSON_REJECT_DUPLICATES, NULL);
	loaded = json_object_get(root, "loaded");
	if (!json_is_boolean(loaded)) {
		errbuf_set(err, errlen, "%s: GET %s: not JSON, or no "
		    "\"loaded\"", control, t);
		goto out;
	}
	if (json_is_false(loaded)) {
		rc = 0;		/* no policy: the guard denies everything */
		goto out;
	}
	pol = json_object_get(root, "policy");
	dig = json_object_get(root, "digest");
	/* Whatever the spelling, the digest of the bytes read back must be
	 * the one the guard names: else what it runs is not known. */
	if (!json_is_object(pol) || !json_is_string(dig) ||
	    (bytes = json_dumps(pol, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		errbuf_set(err, errlen, "%s: GET %s: no policy or digest "
		    "in the answer", control, t);
		goto out;
	}
	if ((p = policy_parse(bytes, strlen(bytes), why, sizeof(why))) == NULL) {
		errbuf_set(err, errlen, "%s: GET %s: the policy served: %s",
		    control, t, why);
		goto out;
	}
	if (strcmp(policy_digest(p), json_string_value(dig)) != 0) {
		errbuf_set(err, errlen, "%s: GET %s: the policy served "
		    "has digest %s, not the %.80s the guard names", control, t,
		    policy_digest(p), json_string_value(dig));
		policy_free(p);
		goto out;
	}
	*out = p;
	rc = 0;
out:
	free(bytes);
	json_decref(root);
	free(r.body);
	return rc;
}

/* ---- shared by the subcommands: the CLI layer, which prints. ---- */

int
ctlclient_parse_args(int argc, char **argv, struct cli_opts *o,
    const char *what, long *guard_uid)
{
	const char *uid;
	char msg[64];
	long long v;
	int rc, t;

	if ((rc = cli_parse_opts(argc, argv, 1, o)) != 0)
		return rc;
	if (o->want_operand && o->operand == NULL) {
		errbuf_set(msg, sizeof(msg), "missing %s", what);
		return cli_usage_error(o->cmd, o->usage, msg, NULL);
	}
	if (o->vals[0] == NULL)
		return cli_usage_error(o->cmd, o->usage, "missing --control", NULL);
	/* --tenant goes into the request's path: only the id grammar may. */
	t = names_index(o->names, CLI_MAX_OPTS, "--tenant", 8);
	if (t >= 0 && o->vals[t] != NULL &&
	    !policy_tenant_id_ok(o->vals[t], strlen(o->vals[t])))
		return cli_usage_error(o->cmd, o->usage, CLI_TENANT_ID_RULE,
		    o->vals[t]);
	if ((uid = o->vals[1]) == NULL)
		uid = getenv("EG_GUARD_UID");
	*guard_uid = -1;
	if (uid != NULL && uid[0] != '\0') {
		if (num_parse(uid, 0, 4294967294LL, &v) == -1)
			return cli_usage_error(o->cmd, o->usage, "--guard-uid (or "
			    "EG_GUARD_UID) must be a uid", uid);
		*guard_uid = (long)v;
	}
	return 0;
}

int
ctlclient_print_body(const struct ctlclient_response *r)
{
	if (cli_print_all(r->body, r->body_len) == -1)
		return -1;
	if (r->body_len == 0 || r->body[r->body_len - 1] != '\n')
		return cli_print_all("\n", 1);
	return 0;
}
