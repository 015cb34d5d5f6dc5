#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "guard/config.h"
#include "guard/log.h"
#include "guard/metrics.h"
#include "plane/control.h"
#include "plane/ctljson.h"
#include "plane/ctlpush.h"
#include "plane/ctlsock.h"
#include "proto/http.h"
#include "policy/policy.h"
#include "util/bigbuf.h"
#include "util/errbuf.h"

/* Control connections open at once, whatever they are doing; with the
 * body bound this caps what callers can make the guard hold. */
#define CONTROL_MAX_CONNS	64
/* A whole request must arrive within this, and later the whole answer
 * must be taken: a stalled caller cannot hold a connection. */
#define CONTROL_TIMEOUT_S	10
/* Connections taken per wake-up of the listening socket: the proxy's
 * clients share the loop. */
#define CONTROL_ACCEPT_BATCH	16
/* A body's bytes read in one loop pass, at most: ~64 page faults, a few
 * hundred microseconds on a VM (see read_body). */
#define CONTROL_READ_SLICE	(256 * 1024)

/* Where a connection is. One request per connection, then it closes. */
enum conn_state {
	CONN_HEAD,	/* reading the request head */
	CONN_BODY,	/* reading a push's body */
	CONN_WAIT,	/* its push waits or is being checked */
	CONN_REPLY	/* writing the answer; closed once it is written */
};

/* One caller, from accept until its answer is written. */
struct conn {
	LIST_ENTRY(conn) entry;
	struct control	*c;
	int		 fd;
	long		 uid;		/* SO_PEERCRED at accept; -1 if unknown */
	enum conn_state	 state;
	struct event	*rev;
	struct event	*wev;
	struct event	*timer;
	struct evbuffer	*out;		/* what is still to be written */
	char		*body;		/* a push's body, exactly len bytes */
	size_t		 len;
	size_t		 got;
	size_t		 headlen;
	char		 head[HTTP_HEAD_MAX];
};

/* The server: accepts callers, reads one request each, answers it.
 * Pushes go through the queue (guard/ctlpush.h). */
struct control {
	struct control_env env;
	char		 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int		 listen_fd;	/* -1 until path is bound: then ours to unlink */
	struct event	*listen_ev;
	struct event	*resume_ev;	/* accepting again after EMFILE */
	struct log_every paused;	/* "accept paused" lines */
	LIST_HEAD(conn_list, conn) conns;
	size_t		 nconns;
	struct ctlpush	*pushes;
	/* Connections refused over CONTROL_MAX_CONNS: logged at most once
	 * a second, with how many since the last line. */
	unsigned long long refused;
	time_t		 refused_logged;
};

static long
peer_uid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return -1;
	return (long)cred.uid;
}

/* uid, not the connection: a caller may be gone by the time its push is
 * answered. */
static void
log_call(struct control *c, long uid, const char *method, const char *path,
    int status, const char *result)
{
	struct log_rec r;

	log_rec_begin(&r, c->env.log, "control");
	log_rec_int(&r, "peer_uid", uid);
	log_rec_str(&r, "method", method);
	log_rec_str(&r, "path", path);
	log_rec_int(&r, "status", status);
	if (result != NULL)
		log_rec_str(&r, "result", result);
	log_emit(c->env.log, &r);
}

static const char *
reason_phrase(int status)
{
	switch (status) {
	case 200:	return "OK";
	case 400:	return "Bad Request";
	case 403:	return "Forbidden";
	case 404:	return "Not Found";
	case 405:	return "Method Not Allowed";
	case 409:	return "Conflict";
	case 411:	return "Length Required";
	case 413:	return "Content Too Large";
	case 417:	return "Expectation Failed";
	case 431:	return "Request Header Fields Too Large";
	case 500:	return "Internal Server Error";
	case 501:	return "Not Implemented";
	case 503:	return "Service Unavailable";
	}
	return "Error";
}

/* Frees everything the connection holds. A push it was waiting for goes
 * on without it. */
static void
conn_close(struct conn *k)
{
	struct control *c = k->c;

	if (k->state == CONN_WAIT)
		ctlpush_forget(c->pushes, k);
	LIST_REMOVE(k, entry);
	c->nconns--;
	if (k->rev != NULL)
		event_free(k->rev);
	if (k->wev != NULL)
		event_free(k->wev);
	if (k->timer != NULL)
		event_free(k->timer);
	if (k->out != NULL)
		evbuffer_free(k->out);
	free(k->body);
	close(k->fd);
	free(k);
}

/* Writes what the socket takes now and waits for EV_WRITE for the rest;
 * closes the connection once its answer is out, or when the caller is
 * gone. Returns -1 when k was freed. */
static int
conn_flush(struct conn *k)
{
	while (evbuffer_get_length(k->out) > 0) {
		int n = evbuffer_write(k->out, k->fd);

		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == -1 && errno == EAGAIN && event_add(k->wev, NULL) == 0)
			return 0;
		conn_close(k);
		return -1;
	}
	event_del(k->wev);
	if (k->state != CONN_REPLY)
		return 0;
	conn_close(k);
	return -1;
}

/* No memory to build an answer: a fixed one, best effort, then close. */
static void
conn_fail(struct conn *k)
{
	static const char resp[] = "HTTP/1.1 500 Internal Server Error\r\n"
	    "Content-Type: application/json\r\nContent-Length: 53\r\n"
	    "Connection: close\r\n\r\n"
	    "{\"error\":\"internal_error\",\"message\":\"out of memory\"}\n";

	(void)send(k->fd, resp, sizeof(resp) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	conn_close(k);
}

/* The answer, then the connection closes: reading stops, and the caller
 * has CONTROL_TIMEOUT_S to take it. NULL-safe: a caller that hung up
 * gets nothing. The body is moved out of body, not copied. */
static void
reply(struct conn *k, int status, const char *type, struct evbuffer *body)
{
	struct timeval tv = { CONTROL_TIMEOUT_S, 0 };

	if (k == NULL)
		return;
	k->state = CONN_REPLY;
	event_del(k->rev);
	if (evbuffer_add_printf(k->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n", status,
	    reason_phrase(status), type, evbuffer_get_length(body),
	    status == 503 ? "Retry-After: 1\r\n" : "") < 0 ||
	    evbuffer_add_buffer(k->out, body) == -1) {
		conn_fail(k);
		return;
	}
	if (evtimer_add(k->timer, &tv) == -1) {
		conn_close(k);
		return;
	}
	(void)conn_flush(k);
}

/* A JSON answer: {"error":…} when error is set, else a push's 200 for
 * p. NULL-safe like reply. */
static void
reply_json(struct conn *k, int status, const char *error, const char *msg,
    const struct policy *p, size_t revoked)
{
	struct evbuffer *b;

	if (k == NULL)
		return;
	if ((b = evbuffer_new()) == NULL) {
		conn_fail(k);
		return;
	}
	if (error != NULL)
		ctljson_error(b, error, msg);
	else
		ctljson_accepted(b, p, revoked);
	reply(k, status, "application/json", b);
	evbuffer_free(b);
}

static void
reply_error(struct conn *k, int status, const char *error, const char *msg)
{
	reply_json(k, status, error, msg, NULL, 0);
}

/* A request refused from its head alone: logged, answered, closed. */
static void
refuse(struct conn *k, const char *method, const char *path, int status,
    const char *error, const char *msg)
{
	log_call(k->c, k->uid, method, path, status, error);
	reply_error(k, status, error, msg);
}

static void
reply_policy(struct conn *k, const struct policy *p, size_t revoked)
{
	reply_json(k, 200, NULL, NULL, p, revoked);
}

/* The end of every push: on PLANE_OK the new policy is installed (it is
 * already persisted), then the caller, if still there, gets its answer. */
static void
answer_push(void *arg, const struct ctlpush_item *p, enum plane_verdict v,
    struct policy *pol, const char *err)
{
	struct control *c = arg;
	const struct control_env *env = &c->env;
	int status = plane_verdict_status(v);
	size_t revoked = 0;

	if (v == PLANE_OK) {
		plane_installed(env->plane, pol);
		revoked = env->set_policy(env->arg, pol);
	}
	if (v != PLANE_OK && v != PLANE_SAME) {
		log_call(c, p->uid, "PUT", "/v1/policy", status, plane_verdict_name(v));
		reply_error(p->who, status, plane_verdict_name(v), err);
		return;
	}
	log_call(c, p->uid, "PUT", "/v1/policy", 200,
	    v == PLANE_OK ? "accepted" : "unchanged");
	reply_policy(p->who, env->policy(env->arg), revoked);
}

void
control_settle(struct control *c)
{
	if (c != NULL)
		ctlpush_settle(c->pushes);
}

/* A whole body has arrived: queued behind the check in flight, or
 * refused when the queue is full. Pushes are answered in the order their
 * bodies were complete, as when each was checked on the loop. */
static void
put_policy(struct conn *k)
{
	struct control *c = k->c;
	struct ctlpush_item p = { k, k->uid, k->body, k->len };
	char msg[128];

	k->body = NULL;
	/* Waiting its turn is not the caller's stall: no deadline until the
	 * answer. Reading goes on only to see the caller hang up. */
	k->state = CONN_WAIT;
	evtimer_del(k->timer);
	if (ctlpush_add(c->pushes, &p) == -1) {
		free(p.body);
		snprintf(msg, sizeof(msg), "%d pushes are already waiting to be "
		    "checked", CTLPUSH_MAX_WAITING);
		answer_push(c, &p, PLANE_BUSY, NULL, msg);
	}
}

/* The path part of an origin-form target (before any query), or NULL. */
static const char *
endpoint(const struct http_req *req)
{
	static const char *const known[] = {
		"/v1/policy", "/v1/status", "/v1/health", "/metrics"
	};
	const char *q = memchr(req->target, '?', req->target_len);
	size_t n = q != NULL ? (size_t)(q - req->target) : req->target_len, i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strlen(known[i]) == n && memcmp(known[i], req->target, n) == 0)
			return known[i];
	}
	return NULL;
}

/* Writes "100 Continue" ahead of the answer. Returns -1 when k was
 * freed. */
static int
send_continue(struct conn *k)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	if (evbuffer_add(k->out, cont, sizeof(cont) - 1) == -1) {
		conn_fail(k);
		return -1;
	}
	return conn_flush(k);
}

static void read_body(struct conn *);

/* PUT /v1/policy, from its head: everything that can be refused without
 * the body is refused before it is read; otherwise one buffer of exactly
 * Content-Length bytes receives it, starting with what came with the
 * head. */
static void
put_head(struct conn *k, const struct http_req *req, size_t end)
{
	const struct http_header *te, *cl, *ex;
	size_t ncl, nex, have;
	long long len;
	char msg[128];

	if (http_find_header(req->headers, req->nheaders, "Transfer-Encoding", &te) > 0) {
		refuse(k, "PUT", "/v1/policy", 501, "not_implemented",
		    "Transfer-Encoding is not supported: send Content-Length");
		return;
	}
	ncl = http_find_header(req->headers, req->nheaders, "Content-Length", &cl);
	if (ncl == 0) {
		refuse(k, "PUT", "/v1/policy", 411, "length_required",
		    "a push needs Content-Length");
		return;
	}
	if (ncl > 1 || http_content_length(cl, &len) == -1) {
		refuse(k, "PUT", "/v1/policy", 400, "malformed", "malformed Content-Length");
		return;
	}
	nex = http_find_header(req->headers, req->nheaders, "Expect", &ex);
	if (nex > 1 || (nex == 1 && (ex->value_len != 12 ||
	    strncasecmp(ex->value, "100-continue", 12) != 0))) {
		refuse(k, "PUT", "/v1/policy", 417, "expectation_failed",
		    "only Expect: 100-continue is supported");
		return;
	}
	if (len == 0) {
		refuse(k, "PUT", "/v1/policy", 400, "malformed", "empty or oversized body");
		return;
	}
	if ((unsigned long long)len > CONTROL_MAX_BODY) {
		snprintf(msg, sizeof(msg), "a bundle is at most %u bytes",
		    (unsigned)CONTROL_MAX_BODY);
		refuse(k, "PUT", "/v1/policy", 413, "content_too_large", msg);
		return;
	}
	/* The loop fills it: small pages (util/bigbuf.h), a slice a pass. */
	if ((k->body = bigbuf_malloc_small((size_t)len)) == NULL) {
		refuse(k, "PUT", "/v1/policy", 503, "unavailable",
		    "cannot receive the bundle: out of memory");
		return;
	}
	k->len = (size_t)len;
	have = k->headlen - end;
	k->got = have < k->len ? have : k->len;
	memcpy(k->body, k->head + end, k->got);
	k->state = CONN_BODY;
	/* HTTP/1.0 has no 100 (RFC 9110 10.1.1); a body already here needs
	 * none. */
	if (nex == 1 && req->minor == 1 && k->got < k->len && send_continue(k) == -1)
		return;
	read_body(k);
}

/* A complete head of end bytes at k->head. */
static void
route(struct conn *k, size_t end)
{
	struct control *c = k->c;
	struct http_req req;
	const char *path;
	struct evbuffer *b;
	char why[128];
	int status;

	if (http_parse_head(k->head, end, &req, &status, why, sizeof(why)) == -1) {
		refuse(k, "-", "-", status, status == 431 ? "headers_too_large" :
		    "malformed", why);
		return;
	}
	if (req.target[0] != '/') {
		refuse(k, req.method, "-", 400, "malformed",
		    "the target must be a path");
		return;
	}
	path = endpoint(&req);
	if (path != NULL && strcmp(path, "/v1/policy") == 0 &&
	    strcmp(req.method, "PUT") == 0) {
		put_head(k, &req, end);
		return;
	}
	if (strcmp(req.method, "GET") != 0) {
		refuse(k, req.method, "-", 405, "method_not_allowed",
		    "only GET, and PUT /v1/policy");
		return;
	}
	if (path == NULL) {
		refuse(k, req.method, "-", 404, "not_found", "no such endpoint");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		conn_fail(k);
		return;
	}
	if (strcmp(path, "/v1/policy") == 0) {
		log_call(c, k->uid, "GET", path, 200, NULL);
		ctljson_policy(b, c->env.policy(c->env.arg));
		reply(k, 200, "application/json", b);
	} else if (strcmp(path, "/v1/status") == 0) {
		unsigned wc[CONFIG_MAX_WORKERS];
		struct ctljson_status st = {
			c->env.version, c->env.revision, c->env.cfg,
			c->env.resolver, c->env.plane, c->env.nconns(c->env.arg),
			c->env.started, c->env.policy(c->env.arg), wc,
			c->env.worker_conns(c->env.arg, wc, CONFIG_MAX_WORKERS)
		};

		log_call(c, k->uid, "GET", path, 200, NULL);
		ctljson_status(b, &st);
		reply(k, 200, "application/json", b);
	} else if (strcmp(path, "/v1/health") == 0) {
		evbuffer_add_printf(b, "{\"status\":\"ok\"}\n");
		reply(k, 200, "application/json", b);
	} else {
		const struct policy *pol = c->env.policy(c->env.arg);

		metrics_render(c->env.metrics, b, c->env.nconns(c->env.arg),
		    pol != NULL ? policy_epoch(pol) : -1);
		reply(k, 200, "text/plain; version=0.0.4; charset=utf-8", b);
	}
	evbuffer_free(b);
}

/* Reads into the head buffer until a whole head is there. Only the bytes
 * new since the last read are scanned (with the 3 before them, which a
 * line end spans): a head trickled a byte at a time costs linear time. */
static void
read_head(struct conn *k)
{
	size_t from = k->headlen >= 3 ? k->headlen - 3 : 0;
	ssize_t n;
	long end;

	n = read(k->fd, k->head + k->headlen, sizeof(k->head) - k->headlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(k);	/* gone before a whole head: nothing to answer */
		return;
	}
	k->headlen += (size_t)n;
	/* http_head_end refuses a head that starts with LF; a scan that
	 * starts on the LF of a CRLF starts on its CR instead. */
	if (from > 0 && k->head[from] == '\n')
		from--;
	end = http_head_end(k->head + from, k->headlen - from);
	if (end == -1) {
		refuse(k, "-", "-", 400, "malformed", "bare CR, bare LF or NUL in the head");
		return;
	}
	if (end == 0) {
		if (k->headlen == sizeof(k->head))
			refuse(k, "-", "-", 431, "headers_too_large", "head too large");
		return;
	}
	route(k, from + (size_t)end);
}

/* Straight into the body buffer, at most CONTROL_READ_SLICE bytes a
 * loop pass: the loop serves tunnels too (worker 0), and a 5.8 MB bundle
 * read in one go held it ~8 ms. The event is level-triggered: the rest
 * comes on the next pass. */
static void
read_body(struct conn *k)
{
	size_t slice = 0, want;
	ssize_t n;

	while (k->got < k->len) {
		if (slice >= CONTROL_READ_SLICE)
			return;
		want = k->len - k->got;
		if (want > CONTROL_READ_SLICE - slice)
			want = CONTROL_READ_SLICE - slice;
		n = read(k->fd, k->body + k->got, want);
		if (n > 0) {
			k->got += (size_t)n;
			slice += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		conn_close(k);	/* gone before the whole body: nothing to answer */
		return;
	}
	put_policy(k);
}

/* While its push waits, a caller's further bytes are ignored; only its
 * hang-up matters, so the connection stops counting against the bound.
 * A half-close (it shut down its sending side) is not a hang-up: it can
 * still read the answer. Either way reading stops; a hang-up missed then
 * shows when the answer is written. */
static void
read_waiting(struct conn *k)
{
	struct pollfd pfd = { .fd = k->fd, .events = 0, .revents = 0 };
	char junk[256];
	ssize_t n = read(k->fd, junk, sizeof(junk));

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1 || (n == 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))) {
		conn_close(k);
		return;
	}
	event_del(k->rev);
}

static void
conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *k = arg;

	(void)fd;
	(void)what;
	switch (k->state) {
	case CONN_HEAD:
		read_head(k);
		break;
	case CONN_BODY:
		read_body(k);
		break;
	case CONN_WAIT:
		read_waiting(k);
		break;
	case CONN_REPLY:
		event_del(k->rev);
		break;
	}
}

static void
conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)conn_flush(arg);
}

/* A request not whole, or an answer not taken, within the bound. */
static void
conn_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_close(arg);
}

static void
conn_new(struct control *c, int fd)
{
	struct event_base *base = c->env.base;
	struct timeval tv = { CONTROL_TIMEOUT_S, 0 };
	struct conn *k;

	if ((k = calloc(1, sizeof(*k))) == NULL) {
		close(fd);
		return;
	}
	k->c = c;
	k->fd = fd;
	k->uid = peer_uid(fd);
	k->state = CONN_HEAD;
	LIST_INSERT_HEAD(&c->conns, k, entry);
	c->nconns++;
	if ((k->rev = event_new(base, fd, EV_READ | EV_PERSIST, conn_read_cb, k)) == NULL ||
	    (k->wev = event_new(base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, k)) == NULL ||
	    (k->timer = evtimer_new(base, conn_timeout_cb, k)) == NULL ||
	    (k->out = evbuffer_new()) == NULL || event_add(k->rev, NULL) == -1 ||
	    evtimer_add(k->timer, &tv) == -1)
		conn_close(k);
}

/* Over the connection bound: a fixed 503 with its reason, written if
 * the socket takes it now (it is empty: it is new), then closed. What the
 * caller sent already is read first (bounded), so the close does not turn
 * into a reset that discards the answer. Logged at most once a second,
 * with the count since the last line: a runaway client cannot flood the
 * log. */
static void
refuse_over_bound(struct control *c, int fd)
{
	char body[128], resp[512], junk[4096];
	time_t now = time(NULL);
	int n, i;

	n = snprintf(body, sizeof(body), "{\"error\":\"too_many_connections\","
	    "\"message\":\"%d control connections are open: try again\"}\n",
	    CONTROL_MAX_CONNS);
	n = snprintf(resp, sizeof(resp), "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n"
	    "Retry-After: 1\r\nConnection: close\r\n\r\n%s", n, body);
	if (n > 0 && (size_t)n < sizeof(resp))
		(void)send(fd, resp, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)shutdown(fd, SHUT_WR);
	for (i = 0; i < 4 && read(fd, junk, sizeof(junk)) > 0; i++)
		;
	c->refused++;
	if (now != c->refused_logged) {
		struct log_rec r;

		log_rec_begin(&r, c->env.log, "control_refused");
		log_rec_int(&r, "peer_uid", peer_uid(fd));
		log_rec_int(&r, "status", 503);
		log_rec_str(&r, "result", "too_many_connections");
		log_rec_int(&r, "refused", (long long)c->refused);
		log_rec_int(&r, "max_conns", CONTROL_MAX_CONNS);
		log_emit(c->env.log, &r);
		c->refused = 0;
		c->refused_logged = now;
	}
	close(fd);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control *c = arg;

	(void)fd;
	(void)what;
	(void)event_add(c->listen_ev, NULL);
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct control *c = arg;
	struct timeval tv = { 0, 100000 };
	int i, fd;

	(void)what;
	for (i = 0; i < CONTROL_ACCEPT_BATCH; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			/* Out of descriptors: accepting again at once would
			 * spin. Callers wait in the backlog meanwhile. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				event_del(c->listen_ev);
				log_every(c->env.log, &c->paused,
				    "control: accept paused: out of file descriptors");
				evtimer_add(c->resume_ev, &tv);
			}
			return;
		}
		if (c->nconns >= CONTROL_MAX_CONNS) {
			refuse_over_bound(c, fd);
			continue;
		}
		conn_new(c, fd);
	}
}

struct control *
control_new(const struct control_env *env, const char *path, uid_t owner,
    char *err, size_t errlen)
{
	struct control *c;
	struct sockaddr_un sun;
	char why[256];
	mode_t old;
	int fd = -1;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		errbuf_set(err, errlen, "--control %s: path too long", path);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	c->env = *env;
	c->listen_fd = -1;
	LIST_INIT(&c->conns);
	snprintf(c->path, sizeof(c->path), "%s", path);
	if ((c->pushes = ctlpush_new(env->base, env->plane, answer_push, c, why,
	    sizeof(why))) == NULL) {
		errbuf_set(err, errlen, "--control %s: %s", path, why);
		goto fail;
	}
	if (ctlsock_make_parent(path, owner, err, errlen) == -1)
		goto fail;
	if (ctlsock_claim(path, err, errlen) == -1) {
		if (err[0] == '\0')
			errbuf_set(err, errlen, "--control %s: %s", path, strerror(errno));
		goto fail;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* Created 0600 from the first instant: no window where another user
	 * could connect, and no chmod by path after it (which would follow
	 * whatever stood at the path by then). */
	old = umask(0177);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		errbuf_set(err, errlen, "--control %s: %s", path, strerror(errno));
		goto fail;
	}
	umask(old);
	c->listen_fd = fd;
	fd = -1;
	if (listen(c->listen_fd, 16) == -1) {
		errbuf_set(err, errlen, "--control %s: %s", path, strerror(errno));
		goto fail;
	}
	if ((c->listen_ev = event_new(env->base, c->listen_fd, EV_READ | EV_PERSIST,
	    accept_cb, c)) == NULL ||
	    (c->resume_ev = evtimer_new(env->base, accept_resume_cb, c)) == NULL ||
	    event_add(c->listen_ev, NULL) == -1) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	return c;
fail:
	if (fd != -1)
		close(fd);
	control_free(c);
	return NULL;
}

void
control_free(struct control *c)
{
	if (c == NULL)
		return;
	/* The check in flight completes (its bundle may be stored already);
	 * the waiting ones are answered 503. Their answers get one try at
	 * the socket before it closes. */
	ctlpush_free(c->pushes);
	c->pushes = NULL;
	while (!LIST_EMPTY(&c->conns))
		conn_close(LIST_FIRST(&c->conns));
	if (c->listen_ev != NULL)
		event_free(c->listen_ev);
	if (c->resume_ev != NULL)
		event_free(c->resume_ev);
	if (c->listen_fd != -1) {
		close(c->listen_fd);
		(void)unlink(c->path);
	}
	free(c);
}
