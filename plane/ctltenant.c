#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "plane/ctlconn.h"
#include "plane/ctljson.h"
#include "plane/ctlpush.h"
#include "plane/ctlput.h"
#include "plane/ctltenant.h"

#define PREFIX		"/v1/tenants"
#define PREFIX_LEN	(sizeof(PREFIX) - 1)

/* The target's path (before any query): len bytes at req->target. */
static size_t
path_len(const struct http_req *req)
{
	const char *q = memchr(req->target, '?', req->target_len);

	return q != NULL ? (size_t)(q - req->target) : req->target_len;
}

/* "/v1/tenants", "/v1/tenants/ID" or "/v1/tenants/ID/REST": the id and
 * what follows it ("" for none). 0, or -1 when the path is none of
 * these. The id itself is judged by the tenant registry. */
static int
split(const char *p, size_t n, const char **id, size_t *idlen, const char **rest,
    size_t *restlen)
{
	const char *slash;

	*id = NULL;
	*idlen = *restlen = 0;
	*rest = "";
	if (n < PREFIX_LEN || memcmp(p, PREFIX, PREFIX_LEN) != 0)
		return -1;
	if (n == PREFIX_LEN)
		return 0;
	if (p[PREFIX_LEN] != '/' || n == PREFIX_LEN + 1)
		return -1;
	*id = p + PREFIX_LEN + 1;
	n -= PREFIX_LEN + 1;
	if ((slash = memchr(*id, '/', n)) == NULL) {
		*idlen = n;
		return 0;
	}
	*idlen = (size_t)(slash - *id);
	*rest = slash + 1;
	*restlen = n - *idlen - 1;
	return *idlen > 0 ? 0 : -1;
}

static void
reply_with(struct ctlconn *k, const char *method, void (*fill)(void *, struct evbuffer *),
    void *arg)
{
	struct evbuffer *b;

	if ((b = evbuffer_new()) == NULL) {
		ctlconn_fail(k);
		return;
	}
	fill(arg, b);
	ctlconn_log(k->c, k->uid, method, k->path, 200, NULL);
	ctlconn_reply(k, 200, "application/json", b);
	evbuffer_free(b);
}

/* GET …/policy: what GET /v1/policy shows, for that tenant. */
static void
reply_policy(struct ctlconn *k, const struct policy *p)
{
	struct evbuffer *b;

	if ((b = evbuffer_new()) == NULL) {
		ctlconn_fail(k);
		return;
	}
	ctljson_policy(b, p, 1);
	ctlconn_log(k->c, k->uid, "GET", k->path, 200, NULL);
	ctlconn_reply(k, 200, "application/json", b);
	evbuffer_free(b);
}

/* DELETE /v1/tenants/ID: closed at once, answered once the list
 * without it is stored (plane/ctlput.h). */
static void
delete_tenant(struct ctlconn *k, const char *id, size_t idlen)
{
	const struct control_tenants *tn = k->c->env.tenants;
	const char *error = NULL;
	char msg[256];
	size_t closed = 0;
	void *t = NULL;
	int status;

	if (!ctlpush_room(k->c->pushes)) {
		ctlconn_refuse(k, "DELETE", k->path, 503, "busy", "8 changes already "
		    "wait to be checked or stored");
		return;
	}
	status = tn->remove(tn->arg, id, idlen, &t, &closed, &error, msg,
	    sizeof(msg));
	if (status >= 300)
		ctlconn_refuse(k, "DELETE", k->path, status, error, msg);
	else
		ctlput_list(k, CTLPUSH_LIST_REMOVE, t, closed);
}

int
ctltenant_route(struct ctlconn *k, const struct http_req *req, size_t end)
{
	const struct control_tenants *tn = k->c->env.tenants;
	const char *p = req->target, *id, *rest;
	size_t n = path_len(req), idlen, restlen;
	int get = strcmp(req->method, "GET") == 0;
	int put = strcmp(req->method, "PUT") == 0;
	void *t;

	if (tn != NULL && n == sizeof("/v1/policy") - 1 &&
	    memcmp(p, "/v1/policy", n) == 0) {
		ctlconn_refuse(k, req->method, "/v1/policy", 409, "tenant_mode",
		    "this guard serves tenants: use /v1/tenants/ID/policy");
		return 1;
	}
	if (split(p, n, &id, &idlen, &rest, &restlen) == -1)
		return 0;
	snprintf(k->path, sizeof(k->path), "%.*s", (int)(n < 63 ? n : 63), p);
	if (tn == NULL) {
		ctlconn_refuse(k, req->method, k->path, 404, "not_tenant_mode",
		    "this guard serves no tenants (run --tenants)");
		return 1;
	}
	if (id == NULL) {
		if (!get)
			ctlconn_refuse(k, req->method, k->path, 405, "method_not_allowed",
			    "only GET /v1/tenants");
		else
			reply_with(k, "GET", tn->list, tn->arg);
		return 1;
	}
	if (restlen == 0 && put) {
		if (idlen >= sizeof(k->tid)) {
			ctlconn_refuse(k, "PUT", k->path, 400, "malformed",
			    "a tenant id is at most 32 bytes");
			return 1;
		}
		memcpy(k->tid, id, idlen);
		k->tidlen = idlen;
		k->spec = 1;
		k->max = CTLTENANT_SPEC_MAX;
		ctlput_head(k, req, end);
		return 1;
	}
	if (restlen == 0 && strcmp(req->method, "DELETE") == 0) {
		delete_tenant(k, id, idlen);
		return 1;
	}
	if ((t = tn->find(tn->arg, id, idlen)) == NULL) {
		ctlconn_refuse(k, req->method, k->path, 404, "no_such_tenant",
		    "no tenant of that id");
		return 1;
	}
	if (restlen == 6 && memcmp(rest, "policy", 6) == 0 && put) {
		/* Held from here: removing the tenant while its body is read
		 * or checked leaves the handle valid (ctlconn_close, or the
		 * push's answer, lets go). */
		k->tenant = t;
		tn->hold(t, 1);
		ctlput_head(k, req, end);
	} else if (restlen == 6 && memcmp(rest, "policy", 6) == 0 && get) {
		reply_policy(k, tn->policy(t));
	} else if (restlen == 6 && memcmp(rest, "status", 6) == 0 && get) {
		reply_with(k, "GET", tn->status, t);
	} else if (restlen == 0 || (restlen == 6 && (memcmp(rest, "policy", 6) == 0 ||
	    memcmp(rest, "status", 6) == 0))) {
		ctlconn_refuse(k, req->method, k->path, 405, "method_not_allowed",
		    "GET, PUT or DELETE /v1/tenants/ID; GET or PUT …/policy; GET "
		    "…/status");
	} else {
		ctlconn_refuse(k, req->method, k->path, 404, "not_found",
		    "no such endpoint");
	}
	return 1;
}
