#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "guard/control.h"
#include "guard/guard.h"
#include "guard/log.h"
#include "guard/plane.h"
#include "policy/policy.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"

/* Pushes that may wait behind the one being checked. Each holds its whole
 * body (up to CONTROL_MAX_BODY), so this also bounds their memory. */
#define CONTROL_MAX_WAITING	8

/* A PUT /v1/policy until it is answered. */
struct push {
	struct evhttp_request	*req;
	long			 uid;	/* the caller's, read while it was connected */
};

/* Pushes are checked one at a time, in arrival order, each on a thread of
 * its own (plane_check_*): the loop only hands the body over, and installs
 * the result when the thread says it is done through done_fd. */
struct control {
	struct guard	*g;
	struct evhttp	*http;
	char		 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int		 done_fd;	/* eventfd the check's thread writes */
	struct event	*done_ev;
	struct plane_check *check;	/* in flight, or NULL */
	struct push	 current;	/* what the check in flight answers */
	struct evbuffer	*body;		/* its bytes, which the thread reads */
	struct push	 waiting[CONTROL_MAX_WAITING];	/* a ring, oldest first */
	size_t		 first;
	size_t		 nwaiting;
};

static long
peer_uid(struct evhttp_request *req)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (bev == NULL || getsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_PEERCRED,
	    &cred, &len) == -1)
		return -1;
	return (long)cred.uid;
}

/* uid, not the request: a request whose caller has gone is freed by the
 * reply, so it is read before. */
static void
log_call(struct control *c, long uid, const char *method, const char *path,
    int status, const char *result)
{
	struct log_rec r;

	log_rec_begin(&r, c->g->log, "control");
	log_rec_int(&r, "peer_uid", uid);
	log_rec_str(&r, "method", method);
	log_rec_str(&r, "path", path);
	log_rec_int(&r, "status", status);
	if (result != NULL)
		log_rec_str(&r, "result", result);
	log_emit(c->g->log, &r);
}

/* JSON string escaping for answers: the only strings we put in are
 * our own messages, digests and addresses, but keep them inert anyway. */
static void
json_str(struct evbuffer *out, const char *s)
{
	evbuffer_add(out, "\"", 1);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			evbuffer_add_printf(out, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			evbuffer_add_printf(out, "\\u%04x", ch);
		else
			evbuffer_add(out, s, 1);
	}
	evbuffer_add(out, "\"", 1);
}

static void
reply(struct evhttp_request *req, int status, const char *type, struct evbuffer *body)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", type);
	evhttp_send_reply(req, status, status == 200 ? "OK" : "Error", body);
}

static void
reply_error(struct evhttp_request *req, int status, const char *error, const char *msg)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evbuffer_add_printf(b, "{\"error\":");
	json_str(b, error);
	evbuffer_add_printf(b, ",\"message\":");
	json_str(b, msg);
	evbuffer_add_printf(b, "}\n");
	reply(req, status, "application/json", b);
	evbuffer_free(b);
}

static void
policy_json(struct evbuffer *b, const struct policy *p)
{
	if (p == NULL) {
		evbuffer_add_printf(b, "{\"epoch\":null,\"digest\":null,\"mode\":\"none\","
		    "\"entries\":0,\"loaded\":false}\n");
		return;
	}
	evbuffer_add_printf(b, "{\"epoch\":%lld,\"digest\":\"%s\",\"mode\":\"%s\","
	    "\"entries\":%zu,\"loaded\":true}\n", policy_epoch(p), policy_digest(p),
	    policy_mode_name(policy_mode(p)), policy_entries(p));
}

static void
reply_policy(struct evhttp_request *req, const struct policy *p, size_t revoked)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evbuffer_add_printf(b, "{\"epoch\":%lld,\"digest\":\"%s\",\"revoked\":%zu}\n",
	    policy_epoch(p), policy_digest(p), revoked);
	reply(req, 200, "application/json", b);
	evbuffer_free(b);
}

/* The end of every push: on PLANE_OK the new policy is installed (it is
 * already persisted), then the caller gets its answer. */
static void
answer_push(struct control *c, const struct push *p, enum plane_verdict v,
    struct policy *pol, const char *err)
{
	struct guard *g = c->g;
	int status = plane_verdict_status(v);
	size_t revoked = 0;

	if (v == PLANE_OK) {
		plane_installed(g->plane, pol);
		revoked = guard_set_policy(g, pol);
	}
	if (v != PLANE_OK && v != PLANE_SAME) {
		if (status == 503)
			evhttp_add_header(evhttp_request_get_output_headers(p->req),
			    "Retry-After", "1");
		reply_error(p->req, status, plane_verdict_name(v), err);
		log_call(c, p->uid, "PUT", "/v1/policy", status, plane_verdict_name(v));
		return;
	}
	reply_policy(p->req, g->policy, revoked);
	log_call(c, p->uid, "PUT", "/v1/policy", 200,
	    v == PLANE_OK ? "accepted" : "unchanged");
	if (v == PLANE_OK)
		guard_log_policy(g, "policy");
}

static void
drop_body(struct control *c)
{
	if (c->body != NULL)
		evbuffer_free(c->body);
	c->body = NULL;
}

/* Hands a push to a check thread. Its body moves (no copy) to a buffer
 * of our own that nothing touches until the check is finished: the
 * thread reads the pieces in place, the loop copies nothing. */
static void
start_check(struct control *c, const struct push *p)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(p->req);
	enum plane_verdict v = PLANE_UNAVAILABLE;
	char err[512] = "cannot check the bundle: out of memory";
	struct iovec *iov = NULL;
	int n;

	if ((c->body = evbuffer_new()) != NULL &&
	    evbuffer_add_buffer(c->body, in) == 0 &&
	    (n = evbuffer_peek(c->body, -1, NULL, NULL, 0)) > 0 &&
	    (iov = calloc((size_t)n, sizeof(*iov))) != NULL &&
	    evbuffer_peek(c->body, -1, NULL, iov, n) == n)
		v = plane_check_start(c->g->plane, iov, n, c->done_fd, &c->check,
		    err, sizeof(err));
	free(iov);
	if (v != PLANE_OK) {
		drop_body(c);
		answer_push(c, p, v, NULL, err);
		return;
	}
	c->current = *p;
}

/* Takes the oldest waiting push into *p; 0 when none waits. */
static int
next_waiting(struct control *c, struct push *p)
{
	if (c->nwaiting == 0)
		return 0;
	*p = c->waiting[c->first];
	c->first = (c->first + 1) % CONTROL_MAX_WAITING;
	c->nwaiting--;
	return 1;
}

static void
next_check(struct control *c)
{
	struct push p;

	while (c->check == NULL && next_waiting(c, &p))
		start_check(c, &p);
}

/* Collects the check in flight, waiting for its thread if it is not
 * done yet, and answers its push. */
static void
finish_check(struct control *c)
{
	struct push p = c->current;
	struct policy *pol = NULL;
	enum plane_verdict v;
	char err[512];

	v = plane_check_finish(c->g->plane, c->check, &pol, err, sizeof(err));
	drop_body(c);
	c->check = NULL;
	c->current.req = NULL;
	answer_push(c, &p, v, pol, err);
}

static void
check_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control *c = arg;
	uint64_t n;

	(void)what;
	/* Nothing to read when control_settle woke us instead. */
	while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR)
		;
	if (c->check != NULL && plane_check_done(c->check))
		finish_check(c);
	next_check(c);
}

void
control_settle(struct control *c)
{
	if (c == NULL || c->check == NULL)
		return;
	finish_check(c);
	if (c->nwaiting > 0)
		event_active(c->done_ev, EV_READ, 1);
}

/* Queued behind the check in flight, or refused when the queue is full:
 * pushes are answered in the order they came, as when each was checked on
 * the loop. */
static void
put_policy(struct control *c, struct evhttp_request *req, long uid)
{
	struct push p = { req, uid };
	size_t len = evbuffer_get_length(evhttp_request_get_input_buffer(req));
	char msg[128];

	if (len == 0 || len > CONTROL_MAX_BODY) {
		reply_error(req, 400, "malformed", "empty or oversized body");
		log_call(c, uid, "PUT", "/v1/policy", 400, "malformed");
		return;
	}
	if (c->nwaiting == CONTROL_MAX_WAITING) {
		snprintf(msg, sizeof(msg), "%d pushes are already waiting to be "
		    "checked", CONTROL_MAX_WAITING);
		answer_push(c, &p, PLANE_BUSY, NULL, msg);
		return;
	}
	c->waiting[(c->first + c->nwaiting) % CONTROL_MAX_WAITING] = p;
	c->nwaiting++;
	next_check(c);
}

static void
status_json(struct control *c, struct evbuffer *b)
{
	struct guard *g = c->g;
	char buf[128];
	size_t i;

	evbuffer_add_printf(b, "{\"version\":\"%s\",\"revision\":", EG_VERSION);
	json_str(b, EG_REVISION);
	evbuffer_add_printf(b, ",\"listeners\":[");
	for (i = 0; i < g->cfg->nlisten; i++) {
		(void)dest_format(&g->cfg->listen[i], buf, sizeof(buf));
		evbuffer_add_printf(b, "%s", i ? "," : "");
		json_str(b, buf);
	}
	evbuffer_add_printf(b, "],\"allow_ranges\":[");
	for (i = 0; i < g->cfg->nallow; i++) {
		(void)classify_format_cidr(&g->cfg->allow[i], buf, sizeof(buf));
		evbuffer_add_printf(b, "%s", i ? "," : "");
		json_str(b, buf);
	}
	evbuffer_add_printf(b, "],\"deny_ranges\":[");
	for (i = 0; i < g->cfg->ndeny; i++) {
		(void)classify_format_cidr(&g->cfg->deny[i], buf, sizeof(buf));
		evbuffer_add_printf(b, "%s", i ? "," : "");
		json_str(b, buf);
	}
	evbuffer_add_printf(b, "],\"dns\":");
	json_str(b, resolver_servers(g->resolver));
	evbuffer_add_printf(b, ",\"active_connections\":%llu,\"uptime_s\":%lld,"
	    "\"trusted_keys\":%zu,\"policy_signer\":",
	    (unsigned long long)g->nconns, (long long)(time(NULL) - g->started),
	    plane_trusted_keys(g->plane));
	json_str(b, plane_signer(g->plane));
	/* What the process runs as now, after any --user drop: an operator
	 * sees a guard left running as root without reading its log. */
	evbuffer_add_printf(b, ",\"uid\":%u,\"running_as_root\":%s",
	    (unsigned)geteuid(), geteuid() == 0 ? "true" : "false");
	evbuffer_add_printf(b, ",\"policy\":");
	policy_json(b, g->policy);
	evbuffer_add_printf(b, "}\n");
}

static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct control *c = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *method = cmd == EVHTTP_REQ_PUT ? "PUT" : "GET";
	long uid = peer_uid(req);
	struct evbuffer *b;

	if (path == NULL)
		path = "";
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	if (strcmp(path, "/v1/policy") == 0 && cmd == EVHTTP_REQ_PUT) {
		put_policy(c, req, uid);
	} else if (cmd != EVHTTP_REQ_GET) {
		reply_error(req, 405, "method_not_allowed", "only GET, and PUT /v1/policy");
		log_call(c, uid, method, "-", 405, NULL);
	} else if (strcmp(path, "/v1/policy") == 0) {
		policy_json(b, c->g->policy);
		reply(req, 200, "application/json", b);
		log_call(c, uid, method, path, 200, NULL);
	} else if (strcmp(path, "/v1/status") == 0) {
		status_json(c, b);
		reply(req, 200, "application/json", b);
		log_call(c, uid, method, path, 200, NULL);
	} else if (strcmp(path, "/v1/health") == 0) {
		evbuffer_add_printf(b, "{\"status\":\"ok\"}\n");
		reply(req, 200, "application/json", b);
	} else if (strcmp(path, "/metrics") == 0) {
		metrics_render(&c->g->metrics, b, c->g->nconns,
		    c->g->policy ? policy_epoch(c->g->policy) : -1);
		reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", b);
	} else {
		reply_error(req, 404, "not_found", "no such endpoint");
		log_call(c, uid, method, "-", 404, NULL);
	}
	evbuffer_free(b);
}

/* Refuses to take over a socket a live guard still serves; removes a
 * stale one. */
static int
claim_path(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, live;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--control %s: exists and is not a socket", path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	live = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	if (live) {
		snprintf(err, errlen, "--control %s: another guard is serving it", path);
		return -1;
	}
	return unlink(path);
}

/* The default path lives in /run/egress-guard, which may not exist yet. */
static int
make_parent(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "--control %s: cannot create %s: %s", path, dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

struct control *
control_new(struct guard *g, const char *path, char *err, size_t errlen)
{
	struct control *c;
	struct sockaddr_un sun;
	struct evconnlistener *l;
	mode_t old;
	int fd = -1;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "--control %s: path too long", path);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->g = g;
	c->done_fd = -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	if ((c->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (c->done_ev = event_new(g->base, c->done_fd, EV_READ | EV_PERSIST,
	    check_done_cb, c)) == NULL || event_add(c->done_ev, NULL) == -1) {
		snprintf(err, errlen, "--control %s: cannot watch policy checks: %s",
		    path, strerror(errno));
		goto fail;
	}
	if (make_parent(path, err, errlen) == -1)
		goto fail;
	if (claim_path(path, err, errlen) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "--control %s: %s", path, strerror(errno));
		goto fail;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* Created 0600 from the first instant: no window where another user
	 * could connect. */
	old = umask(0177);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		snprintf(err, errlen, "--control %s: %s", path, strerror(errno));
		goto fail;
	}
	umask(old);
	if (chmod(path, 0600) == -1 || listen(fd, 16) == -1) {
		snprintf(err, errlen, "--control %s: %s", path, strerror(errno));
		goto fail;
	}
	if ((c->http = evhttp_new(g->base)) == NULL ||
	    (l = evconnlistener_new(g->base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE, -1, fd)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	fd = -1;
	if (evhttp_bind_listener(c->http, l) == NULL) {
		evconnlistener_free(l);
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	evhttp_set_max_body_size(c->http, CONTROL_MAX_BODY);
	evhttp_set_max_headers_size(c->http, 16384);
	evhttp_set_timeout(c->http, 10);
	evhttp_set_allowed_methods(c->http, EVHTTP_REQ_GET | EVHTTP_REQ_PUT);
	evhttp_set_gencb(c->http, request_cb, c);
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
	struct push p;

	if (c == NULL)
		return;
	/* The check in flight completes (its bundle may be stored already);
	 * the waiting ones were never looked at and may simply be pushed
	 * again. */
	if (c->check != NULL)
		finish_check(c);
	while (next_waiting(c, &p))
		answer_push(c, &p, PLANE_UNAVAILABLE, NULL, "the guard is stopping");
	if (c->done_ev != NULL)
		event_free(c->done_ev);
	if (c->done_fd != -1)
		close(c->done_fd);
	if (c->http != NULL) {
		evhttp_free(c->http);
		(void)unlink(c->path);
	}
	free(c);
}
