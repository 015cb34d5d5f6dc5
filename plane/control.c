#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "guard/config.h"
#include "guard/conn.h"
#include "guard/log.h"
#include "guard/metrics.h"
#include "plane/control.h"
#include "plane/ctlconn.h"
#include "plane/ctljson.h"
#include "plane/ctlpush.h"
#include "plane/ctlput.h"
#include "plane/ctltenant.h"
#include "plane/ctlsock.h"
#include "proto/http.h"
#include "policy/policy.h"
#include "util/errbuf.h"
#include "util/names.h"

/* Control connections open at once, whatever they are doing; with the
 * body bound this caps what callers can make the guard hold. */
#define CONTROL_MAX_CONNS	64
/* Connections taken per wake-up of the listening socket: the proxy's
 * clients share the loop. */
#define CONTROL_ACCEPT_BATCH	16

static long
peer_uid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return -1;
	return (long)cred.uid;
}

int
control_reload(struct control *c, char *err, size_t errlen)
{
	int rc = ctlpush_reload(c->pushes);

	if (rc == -1)
		errbuf_set(err, errlen, "%d policy changes are already waiting to "
		    "be checked", CTLPUSH_MAX_WAITING);
	return rc;
}

/* The path part of an origin-form target (before any query), or NULL. */
static const char *
endpoint(const struct http_req *req)
{
	static const char *const known[] = {
		"/v1/policy", "/v1/status", "/v1/health", "/metrics"
	};
	const char *q = memchr(req->target, '?', req->target_len);
	size_t n = q != NULL ? (size_t)(q - req->target) : req->target_len;
	int i = names_index(known, NAMES_N(known), req->target, n);

	return i >= 0 ? known[i] : NULL;
}

/* A complete head of end bytes at k->head. */
static void
route(struct ctlconn *k, size_t end)
{
	struct control *c = k->c;
	struct http_req req;
	const char *path;
	struct evbuffer *b;
	char why[128];
	int status;

	if (http_parse_head(k->head, end, &req, &status, why, sizeof(why)) == -1) {
		ctlconn_refuse(k, "-", "-", status, status == 431 ? "headers_too_large" :
		    "malformed", why);
		return;
	}
	if (req.target[0] != '/') {
		ctlconn_refuse(k, req.method, "-", 400, "malformed",
		    "the target must be a path");
		return;
	}
	if (ctltenant_route(k, &req, end))
		return;
	path = endpoint(&req);
	if (path != NULL && strcmp(path, "/v1/policy") == 0 &&
	    strcmp(req.method, "PUT") == 0) {
		ctlput_head(k, &req, end);
		return;
	}
	if (strcmp(req.method, "GET") != 0) {
		ctlconn_refuse(k, req.method, "-", 405, "method_not_allowed",
		    "only GET, and PUT /v1/policy");
		return;
	}
	if (path == NULL) {
		ctlconn_refuse(k, req.method, "-", 404, "not_found", "no such endpoint");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		ctlconn_fail(k);
		return;
	}
	if (strcmp(path, "/v1/policy") == 0) {
		ctlconn_log(c, k->uid, "GET", path, 200, NULL);
		ctljson_policy(b, c->env.policy(c->env.arg), 1);
		ctlconn_reply(k, 200, "application/json", b);
	} else if (strcmp(path, "/v1/status") == 0) {
		unsigned wc[CONFIG_MAX_WORKERS];
		struct ctljson_status st = {
			c->env.version, c->env.revision, c->env.binary_sha256,
			c->env.cfg,
			c->env.resolver, c->env.plane, c->env.nconns(c->env.arg),
			c->env.started, c->env.policy(c->env.arg), wc,
			c->env.worker_conns(c->env.arg, wc, CONFIG_MAX_WORKERS),
			c->env.tenants != NULL ? (long long)c->env.tenants->count(
			    c->env.tenants->arg) : -1
		};

		ctlconn_log(c, k->uid, "GET", path, 200, NULL);
		ctljson_status(b, &st);
		ctlconn_reply(k, 200, "application/json", b);
	} else if (strcmp(path, "/v1/health") == 0) {
		evbuffer_add_printf(b, "{\"status\":\"ok\"}\n");
		ctlconn_reply(k, 200, "application/json", b);
	} else {
		const struct policy *pol = c->env.policy(c->env.arg);

		metrics_render(c->env.metrics, b, c->env.nconns(c->env.arg),
		    pol != NULL ? policy_epoch(pol) : -1, log_lines_lost(c->env.log));
		if (c->env.tenants != NULL)
			c->env.tenants->metrics(c->env.tenants->arg, b);
		ctlconn_reply(k, 200, "text/plain; version=0.0.4; charset=utf-8", b);
	}
	evbuffer_free(b);
}

/* Reads into the head buffer until a whole head is there. Only the bytes
 * new since the last read are scanned (with the 3 before them, which a
 * line end spans): a head trickled a byte at a time costs linear time. */
static void
read_head(struct ctlconn *k)
{
	size_t from = k->headlen >= 3 ? k->headlen - 3 : 0;
	ssize_t n;
	long end;

	n = read(k->fd, k->head + k->headlen, sizeof(k->head) - k->headlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 0 && k->headlen > 0) {
		/* Half a head, then the caller's FIN: a call all the same,
		 * logged with its uid and answered (it may still read). */
		ctlconn_refuse(k, "-", "-", 400, "incomplete",
		    "connection closed before the head was whole");
		return;
	}
	if (n <= 0) {
		ctlconn_close(k);	/* gone, or connected and closed: nothing asked */
		return;
	}
	k->headlen += (size_t)n;
	/* http_head_end refuses a head that starts with LF; a scan that
	 * starts on the LF of a CRLF starts on its CR instead. */
	if (from > 0 && k->head[from] == '\n')
		from--;
	end = http_head_end(k->head + from, k->headlen - from);
	if (end == -1) {
		ctlconn_refuse(k, "-", "-", 400, "malformed", "bare CR, bare LF or NUL in the head");
		return;
	}
	if (end == 0) {
		if (k->headlen == sizeof(k->head))
			ctlconn_refuse(k, "-", "-", 431, "headers_too_large", "head too large");
		return;
	}
	route(k, from + (size_t)end);
}

/* While its push waits, a caller's further bytes are ignored; only its
 * hang-up matters, so the connection stops counting against the bound.
 * A half-close (it shut down its sending side) is not a hang-up: it can
 * still read the answer. Either way reading stops; a hang-up missed then
 * shows when the answer is written. */
static void
read_waiting(struct ctlconn *k)
{
	struct pollfd pfd = { .fd = k->fd, .events = 0, .revents = 0 };
	char junk[256];
	ssize_t n = read(k->fd, junk, sizeof(junk));

	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1 || (n == 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))) {
		ctlconn_close(k);
		return;
	}
	event_del(k->rev);
}

static void
conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctlconn *k = arg;

	(void)fd;
	(void)what;
	switch (k->state) {
	case CTLCONN_HEAD:
		read_head(k);
		break;
	case CTLCONN_BODY:
		ctlput_read(k);
		break;
	case CTLCONN_WAIT:
		read_waiting(k);
		break;
	case CTLCONN_REPLY:
		event_del(k->rev);
		break;
	}
}

static void
conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)ctlconn_flush(arg);
}

/* A request not whole within the bound is a call refused, logged with
 * the caller's uid (a slow caller holding slots leaves a trace) and
 * answered 408; an answer not taken within the bound ends the
 * connection. */
static void
conn_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctlconn *k = arg;

	(void)fd;
	(void)what;
	if (k->state == CTLCONN_HEAD)
		ctlconn_refuse(k, "-", "-", 408, "timeout",
		    "request head not whole within 10 s");
	else if (k->state == CTLCONN_BODY)
		ctlconn_refuse(k, "PUT", k->path, 408, "timeout",
		    "request body not whole within 10 s");
	else
		ctlconn_close(k);
}

static void
conn_new(struct control *c, int fd)
{
	struct event_base *base = c->env.base;
	struct timeval tv = { CONTROL_TIMEOUT_S, 0 };
	struct ctlconn *k;

	if ((k = calloc(1, sizeof(*k))) == NULL) {
		close(fd);
		return;
	}
	k->c = c;
	k->fd = fd;
	k->uid = peer_uid(fd);
	k->state = CTLCONN_HEAD;
	LIST_INSERT_HEAD(&c->conns, k, entry);
	c->nconns++;
	if ((k->rev = event_new(base, fd, EV_READ | EV_PERSIST, conn_read_cb, k)) == NULL ||
	    (k->wev = event_new(base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, k)) == NULL ||
	    (k->timer = evtimer_new(base, conn_timeout_cb, k)) == NULL ||
	    (k->out = evbuffer_new()) == NULL || event_add(k->rev, NULL) == -1 ||
	    evtimer_add(k->timer, &tv) == -1)
		ctlconn_close(k);
}

/* A control_refused line: count connections refused since the last,
 * the newest by peer uid (they are closed by the time a timer writes
 * the line). */
static void
refused_line(struct log *lg, unsigned long count, void *arg)
{
	const struct control *c = arg;
	struct log_rec r;

	log_rec_begin(&r, lg, "control_refused");
	log_rec_int(&r, "peer_uid", c->refused_uid);
	log_rec_int(&r, "status", 503);
	log_rec_str(&r, "result", "too_many_connections");
	log_rec_int(&r, "refused", (long long)count);
	log_rec_int(&r, "max_conns", CONTROL_MAX_CONNS);
	log_emit(lg, &r);
}

/* Over the connection bound: a fixed 503 with its reason, written if
 * the socket takes it now (it is empty: it is new), then closed. What the
 * caller sent already is read first (bounded), so the close does not turn
 * into a reset that discards the answer. Logged at most once a second,
 * with the count since the last line (log_every: the last ones of a
 * burst get their line a second later): a runaway client cannot flood
 * the log. */
static void
refuse_over_bound(struct control *c, int fd)
{
	char body[128], resp[512], junk[4096];
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
	c->refused_uid = peer_uid(fd);
	log_every_fn(c->env.log, &c->refused, 1, refused_line, c);
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
			if (conn_accept_starved(errno)) {
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
	if ((c->pushes = ctlpush_new(env->base, env->plane, ctlput_answer, c, why,
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
		ctlconn_close(LIST_FIRST(&c->conns));
	if (c->listen_ev != NULL)
		event_free(c->listen_ev);
	if (c->resume_ev != NULL)
		event_free(c->resume_ev);
	log_every_free(&c->paused);
	log_every_free(&c->refused);
	if (c->listen_fd != -1) {
		close(c->listen_fd);
		(void)unlink(c->path);
	}
	free(c);
}
