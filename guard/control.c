#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
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

struct control {
	struct guard	*g;
	struct evhttp	*http;
	char		 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
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

static void
log_call(struct control *c, struct evhttp_request *req, const char *method,
    const char *path, int status, const char *result)
{
	struct log_rec r;

	log_rec_begin(&r, c->g->log, "control");
	log_rec_int(&r, "peer_uid", peer_uid(req));
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
put_policy(struct control *c, struct evhttp_request *req, struct evbuffer *b)
{
	struct guard *g = c->g;
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct policy *p = NULL;
	enum plane_verdict v;
	char err[512];
	const char *body;
	size_t revoked;

	if (len == 0 || len > CONTROL_MAX_BODY ||
	    (body = (const char *)evbuffer_pullup(in, (ssize_t)len)) == NULL) {
		reply_error(req, 400, "malformed", "empty or oversized body");
		log_call(c, req, "PUT", "/v1/policy", 400, "malformed");
		return;
	}
	v = plane_push(g->plane, body, len, &p, err, sizeof(err));
	if (v == PLANE_SAME) {
		evbuffer_add_printf(b, "{\"epoch\":%lld,\"digest\":\"%s\",\"revoked\":0}\n",
		    policy_epoch(g->policy), policy_digest(g->policy));
		reply(req, 200, "application/json", b);
		log_call(c, req, "PUT", "/v1/policy", 200, "unchanged");
		return;
	}
	if (v != PLANE_OK) {
		reply_error(req, plane_verdict_status(v), plane_verdict_name(v), err);
		log_call(c, req, "PUT", "/v1/policy", plane_verdict_status(v),
		    plane_verdict_name(v));
		return;
	}
	plane_installed(g->plane, p);
	revoked = guard_set_policy(g, p);
	evbuffer_add_printf(b, "{\"epoch\":%lld,\"digest\":\"%s\",\"revoked\":%zu}\n",
	    policy_epoch(p), policy_digest(p), revoked);
	reply(req, 200, "application/json", b);
	log_call(c, req, "PUT", "/v1/policy", 200, "accepted");
	guard_log_policy(g, "policy");
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
	struct evbuffer *b;

	if (path == NULL)
		path = "";
	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	if (strcmp(path, "/v1/policy") == 0 && cmd == EVHTTP_REQ_PUT) {
		put_policy(c, req, b);
	} else if (cmd != EVHTTP_REQ_GET) {
		reply_error(req, 405, "method_not_allowed", "only GET, and PUT /v1/policy");
		log_call(c, req, method, "-", 405, NULL);
	} else if (strcmp(path, "/v1/policy") == 0) {
		policy_json(b, c->g->policy);
		reply(req, 200, "application/json", b);
		log_call(c, req, method, path, 200, NULL);
	} else if (strcmp(path, "/v1/status") == 0) {
		status_json(c, b);
		reply(req, 200, "application/json", b);
		log_call(c, req, method, path, 200, NULL);
	} else if (strcmp(path, "/v1/health") == 0) {
		evbuffer_add_printf(b, "{\"status\":\"ok\"}\n");
		reply(req, 200, "application/json", b);
	} else if (strcmp(path, "/metrics") == 0) {
		metrics_render(&c->g->metrics, b, c->g->nconns,
		    c->g->policy ? policy_epoch(c->g->policy) : -1);
		reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", b);
	} else {
		reply_error(req, 404, "not_found", "no such endpoint");
		log_call(c, req, method, "-", 404, NULL);
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
	snprintf(c->path, sizeof(c->path), "%s", path);
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
	if (c == NULL)
		return;
	if (c->http != NULL) {
		evhttp_free(c->http);
		(void)unlink(c->path);
	}
	free(c);
}
