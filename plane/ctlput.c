#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "plane/ctlconn.h"
#include "plane/ctlpush.h"
#include "plane/ctlput.h"
#include "policy/policy.h"
#include "util/bigbuf.h"

/* A body's bytes read in one loop pass, at most: ~64 page faults, a few
 * hundred microseconds on a VM (see ctlput_read). */
#define CONTROL_READ_SLICE	(256 * 1024)

static void
reply_policy(struct ctlconn *k, const struct policy *p, size_t revoked)
{
	ctlconn_reply_json(k, 200, NULL, NULL, p, revoked);
}

/* A tenant's add or remove, once the list is stored (or not): the
 * tenant stays or goes, and the caller gets its answer. */
static void
answer_list(struct control *c, const struct ctlpush_item *p,
    enum plane_verdict v, const char *err)
{
	const struct control_tenants *tn = c->env.tenants;
	const char *method = p->list == CTLPUSH_LIST_ADD ? "PUT" : "DELETE";
	const char *id = tn->name(p->tenant);
	struct ctlconn *who = p->who;
	const char *path = who != NULL ? who->path : "/v1/tenants/-";
	struct evbuffer *b;
	int status = p->list == CTLPUSH_LIST_ADD ? 201 : 200;

	if (p->list == CTLPUSH_LIST_ADD)
		tn->added(p->tenant, v == PLANE_OK);
	if (v != PLANE_OK) {
		/* A removed tenant is gone from the running guard; a restart
		 * would bring it back, and the error says so. */
		ctlconn_log(c, p->uid, method, path, plane_verdict_status(v),
		    plane_verdict_name(v));
		ctlconn_error(who, plane_verdict_status(v), plane_verdict_name(v), err);
	} else {
		ctlconn_log(c, p->uid, method, path, status, p->list ==
		    CTLPUSH_LIST_ADD ? "added" : "removed");
		if (who != NULL && (b = evbuffer_new()) != NULL) {
			if (p->list == CTLPUSH_LIST_ADD)
				evbuffer_add_printf(b, "{\"status\":\"added\","
				    "\"tenant\":\"%s\"}\n", id);
			else
				evbuffer_add_printf(b, "{\"closed\":%zu,\"status\":"
				    "\"removed\",\"tenant\":\"%s\"}\n", p->closed, id);
			ctlconn_reply(who, status, "application/json", b);
			evbuffer_free(b);
		} else if (who != NULL) {
			ctlconn_fail(who);
		}
	}
	tn->hold(p->tenant, -1);
}

/* The end of every push and reload: on PLANE_OK the new policy is
 * installed (it is already persisted), then the caller, if still there,
 * gets its answer; a reload's goes to the daemon. */
void
ctlput_answer(void *arg, const struct ctlpush_item *p, enum plane_verdict v,
    struct policy *pol, const char *err)
{
	struct control *c = arg;
	const struct control_env *env = &c->env;
	const struct control_tenants *tn = env->tenants;
	int status = plane_verdict_status(v);
	const struct ctlconn *who = p->who;
	const char *path = who != NULL ? who->path : p->tenant != NULL ?
	    "/v1/tenants/-/policy" : "/v1/policy";
	size_t revoked = 0;

	if (p->list) {
		answer_list(c, p, v, err);
		return;
	}
	if (v == PLANE_OK && p->tenant != NULL) {
		plane_installed(p->plane, pol);
		revoked = tn->set_policy(p->tenant, pol);
	} else if (v == PLANE_OK) {
		plane_installed(env->plane, pol);
		revoked = env->set_policy(env->arg, pol);
	}
	if (p->reload) {
		env->reloaded(env->arg, v, err);
		return;
	}
	if (v != PLANE_OK && v != PLANE_SAME) {
		ctlconn_log(c, p->uid, "PUT", path, status, plane_verdict_name(v));
		ctlconn_error(p->who, status, plane_verdict_name(v), err);
	} else {
		ctlconn_log(c, p->uid, "PUT", path, 200,
		    v == PLANE_OK ? "accepted" : "unchanged");
		reply_policy(p->who, p->tenant != NULL ? tn->policy(p->tenant) :
		    env->policy(env->arg), revoked);
	}
	if (p->tenant != NULL)
		tn->hold(p->tenant, -1);
}

void
ctlput_list(struct ctlconn *k, int list, void *t, size_t closed)
{
	const struct control_tenants *tn = k->c->env.tenants;
	struct ctlpush_item p = {
		.who = k, .uid = k->uid, .tenant = t, .list = list,
		.snapshot = tn->list_bytes, .snap_arg = tn->arg, .closed = closed,
	};

	tn->hold(t, 1);
	k->state = CTLCONN_WAIT;
	evtimer_del(k->timer);
	/* The caller checked ctlpush_room: one thread runs at a time and
	 * nothing else queues in between. */
	if (ctlpush_add(k->c->pushes, &p) == -1)
		ctlput_answer(k->c, &p, PLANE_BUSY, NULL, "the queue is full");
}

/* PUT /v1/tenants/ID: a spec is small and checked on the loop; its
 * listeners open here, and the list is stored on a check's thread. */
static void
put_spec(struct ctlconn *k)
{
	const struct control_tenants *tn = k->c->env.tenants;
	const char *error = NULL;
	struct evbuffer *b;
	char msg[512];
	void *t = NULL;
	int status;

	if (!ctlpush_room(k->c->pushes)) {
		free(k->body);
		k->body = NULL;
		ctlconn_refuse(k, "PUT", k->path, 503, "busy", "8 changes already "
		    "wait to be checked or stored");
		return;
	}
	status = tn->add(tn->arg, k->tid, k->tidlen, k->body, k->len, &t, &error,
	    msg, sizeof(msg));
	free(k->body);
	k->body = NULL;
	if (status == 201) {
		ctlput_list(k, CTLPUSH_LIST_ADD, t, 0);
		return;
	}
	if (status >= 300) {
		ctlconn_refuse(k, "PUT", k->path, status, error, msg);
		return;
	}
	ctlconn_log(k->c, k->uid, "PUT", k->path, status, "unchanged");
	if ((b = evbuffer_new()) == NULL) {
		ctlconn_fail(k);
		return;
	}
	evbuffer_add_printf(b, "{\"status\":\"unchanged\",\"tenant\":\"%.*s\"}\n",
	    (int)k->tidlen, k->tid);
	ctlconn_reply(k, status, "application/json", b);
	evbuffer_free(b);
}

/* A whole body has arrived: queued behind the check in flight, or
 * refused when the queue is full. Pushes are answered in the order their
 * bodies were complete, as when each was checked on the loop. */
static void
put_policy(struct ctlconn *k)
{
	struct control *c = k->c;
	struct ctlpush_item p = {
		.who = k, .uid = k->uid, .body = k->body, .len = k->len,
		.tenant = k->tenant,
	};
	char msg[128];

	if (k->spec) {
		put_spec(k);
		return;
	}
	k->body = NULL;
	/* The hold taken at the head moves to the push with the body. */
	k->tenant = NULL;
	if (p.tenant != NULL)
		p.plane = c->env.tenants->plane(p.tenant);
	/* Waiting its turn is not the caller's stall: no deadline until the
	 * answer. Reading goes on only to see the caller hang up. */
	k->state = CTLCONN_WAIT;
	evtimer_del(k->timer);
	if (ctlpush_add(c->pushes, &p) == -1) {
		free(p.body);
		snprintf(msg, sizeof(msg), "%d pushes are already waiting to be "
		    "checked", CTLPUSH_MAX_WAITING);
		ctlput_answer(c, &p, PLANE_BUSY, NULL, msg);
	}
}

/* Writes "100 Continue" ahead of the answer. Returns -1 when k was
 * freed. */
static int
send_continue(struct ctlconn *k)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

	if (evbuffer_add(k->out, cont, sizeof(cont) - 1) == -1) {
		ctlconn_fail(k);
		return -1;
	}
	return ctlconn_flush(k);
}

/* PUT /v1/policy, from its head: everything that can be refused without
 * the body is refused before it is read; otherwise one buffer of exactly
 * Content-Length bytes receives it, starting with what came with the
 * head. */
void
ctlput_head(struct ctlconn *k, const struct http_req *req, size_t end)
{
	const struct http_header *te, *cl, *ex;
	size_t ncl, nex, have;
	long long len;
	char msg[128];

	if (k->path[0] == '\0')
		snprintf(k->path, sizeof(k->path), "/v1/policy");
	if (k->max == 0)
		k->max = CONTROL_MAX_BODY;
	if (http_find_header(req->headers, req->nheaders, "Transfer-Encoding", &te) > 0) {
		ctlconn_refuse(k, "PUT", k->path, 501, "not_implemented",
		    "Transfer-Encoding is not supported: send Content-Length");
		return;
	}
	ncl = http_find_header(req->headers, req->nheaders, "Content-Length", &cl);
	if (ncl == 0) {
		ctlconn_refuse(k, "PUT", k->path, 411, "length_required",
		    "a push needs Content-Length");
		return;
	}
	if (ncl > 1 || http_content_length(cl, &len) == -1) {
		ctlconn_refuse(k, "PUT", k->path, 400, "malformed", "malformed Content-Length");
		return;
	}
	nex = http_find_header(req->headers, req->nheaders, "Expect", &ex);
	if (nex > 1 || (nex == 1 && (ex->value_len != 12 ||
	    strncasecmp(ex->value, "100-continue", 12) != 0))) {
		ctlconn_refuse(k, "PUT", k->path, 417, "expectation_failed",
		    "only Expect: 100-continue is supported");
		return;
	}
	if (len == 0) {
		ctlconn_refuse(k, "PUT", k->path, 400, "malformed", "empty or oversized body");
		return;
	}
	if ((unsigned long long)len > k->max) {
		snprintf(msg, sizeof(msg), "a %s is at most %zu bytes",
		    k->spec ? "tenant spec" : "bundle", k->max);
		ctlconn_refuse(k, "PUT", k->path, 413, "content_too_large", msg);
		return;
	}
	/* The loop fills it: small pages (util/bigbuf.h), a slice a pass. */
	if ((k->body = bigbuf_malloc_small((size_t)len)) == NULL) {
		ctlconn_refuse(k, "PUT", k->path, 503, "unavailable",
		    "cannot receive the bundle: out of memory");
		return;
	}
	k->len = (size_t)len;
	have = k->headlen - end;
	k->got = have < k->len ? have : k->len;
	memcpy(k->body, k->head + end, k->got);
	k->state = CTLCONN_BODY;
	/* HTTP/1.0 has no 100 (RFC 9110 10.1.1); a body already here needs
	 * none. */
	if (nex == 1 && req->minor == 1 && k->got < k->len && send_continue(k) == -1)
		return;
	ctlput_read(k);
}

/* Straight into the body buffer, at most CONTROL_READ_SLICE bytes a
 * loop pass: the loop serves tunnels too (worker 0), and a 5.8 MB bundle
 * read in one go held it ~8 ms. The event is level-triggered: the rest
 * comes on the next pass. */
void
ctlput_read(struct ctlconn *k)
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
		if (n == 0)	/* a FIN: it may still read its answer */
			ctlconn_refuse(k, "PUT", k->path, 400, "incomplete",
			    "connection closed before the whole body");
		else
			ctlconn_close(k);
		return;
	}
	put_policy(k);
}

