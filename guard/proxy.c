/* One client connection, whatever it speaks: an HTTP CONNECT tunnel, a
 * chain of absolute-form HTTP requests, or a SOCKS5 tunnel. Every request
 * takes the same path: whole head validated → destination syntax → policy
 * → resolution → classification → connect (or reuse, for HTTP).
 * This file is the router: accept, read the head, route, revoke. The
 * connection type is guard/conn.c; a tunnel is served by guard/tunnel.c,
 * an absolute-form exchange by guard/exchange.c. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "guard/config.h"
#include "guard/conn.h"
#include "guard/decide.h"
#include "guard/dial.h"
#include "guard/exchange.h"
#include "proto/http.h"
#include "guard/metrics.h"
#include "guard/proxy.h"
#include "proto/socks5.h"
#include "guard/transp.h"
#include "guard/tunnel.h"
#include "policy/policy.h"
#include "util/mutant.h"

/* The router's context: what the daemon handed in, and the live
 * connections. */
struct proxy {
	struct proxy_env	 env;
	TAILQ_HEAD(, proxy_conn) conns;
	uint64_t		 live;		/* in conns */
	unsigned		 lookups;	/* its conns in ST_RESOLVE */
};

static void head_read_cb(struct bufferevent *bev, void *arg);
static void head_event_cb(struct bufferevent *bev, short what, void *arg);
static void header_timeout_cb(evutil_socket_t fd, short what, void *arg);
static void dial_done(void *arg, int fd, size_t idx, int timed_out,
    const char *local);

/* Request ids are the guard's, not the worker's: a decision and its
 * close line stay paired in one log whatever worker wrote them. */
static uint64_t
proxy_next_id(struct proxy *px)
{
	return atomic_fetch_add(px->env.next_id, 1) + 1;
}

/* ---- the connection's calls back up (struct conn_env) ---- */

static void
proxy_detach(void *owner, struct proxy_conn *c)
{
	struct proxy *px = owner;

	TAILQ_REMOVE(&px->conns, c, link);
	px->live--;
	atomic_fetch_sub(px->env.nconns, 1);
}

static void
proxy_closed(void *owner)
{
	struct proxy *px = owner;

	px->env.closed(px->env.arg);
}

static uint64_t
proxy_new_id(void *owner)
{
	return proxy_next_id(owner);
}

static void
proxy_conn_env(struct proxy *px, struct conn_env *env)
{
	env->base = px->env.base;
	env->cfg = px->env.cfg;
	env->log = px->env.log;
	env->metrics = px->env.metrics;
	env->stopping = px->env.stopping;
	env->owner = px;
	env->detach = proxy_detach;
	env->closed = proxy_closed;
	env->head_read = head_read_cb;
	env->head_event = head_event_cb;
	env->header_timeout = header_timeout_cb;
	env->dial_done = dial_done;
	env->new_id = proxy_new_id;
	env->tenant = px->env.tenant;
	env->lookups = &px->lookups;
}

/* ---- the shared path: policy → resolve → classify → dial ---- */

/* 1 when c is an absolute-form exchange already admitted (its allow line
 * written): forwarding, or dialling the one retry on a fresh upstream.
 * Its end is a close line, never a second decision. */
static int
exchange_admitted(const struct proxy_conn *c)
{
	return c->ex != NULL && (c->state == ST_HTTP ||
	    (c->state == ST_DIAL && c->ex->retrying));
}

static void
dial_done(void *arg, int fd, size_t idx, int timed_out, const char *local)
{
	struct proxy_conn *c = arg;
	struct bufferevent *ubev;

	c->dial = NULL;
	if (fd == -1) {
		enum reason r = timed_out ? REASON_UPSTREAM_TIMEOUT :
		    REASON_UPSTREAM_UNREACHABLE;
		if (exchange_admitted(c))	/* close reason: r's name */
			exchange_abort(c, r, NULL);
		else
			conn_deny(c, r, local);
		return;
	}
	conn_addr_peer_str(&c->addrs[idx], c->dest.port, c->peer, sizeof(c->peer));
	if (c->kind != KIND_HTTP) {
		tunnel_open(c, fd);
		return;
	}
	ubev = bufferevent_socket_new(c->px->env.base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (ubev == NULL) {
		close(fd);
		conn_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	c->ex->ubev = ubev;
	c->ex->udest = c->dest;
	c->ex->uaddr = c->addrs[idx];
	exchange_start(c);
}


/* Classifies every address, then dials (or reuses) in the resolver's
 * order. */
static void
classify_and_dial(struct proxy_conn *c, const struct resolver_addr *a, size_t n)
{
	char why[160];

	/* The first 16 are logged (whatever the verdict) and dialled. */
	c->naddrs = n < DIAL_MAX_ADDRS ? n : DIAL_MAX_ADDRS;
	memcpy(c->addrs, a, c->naddrs * sizeof(*a));
#ifdef EG_MUTANT_SOCKS_NO_CLASSIFY
	/* Test-only mutant (make conformance-mutants-more): the SOCKS5 path
	 * dials whatever its name resolved to; ctpa-30/31 must go red. */
	if (c->kind != KIND_SOCKS5 &&
	    !decide_addrs_why(c->px->env.classify, a, n, why, sizeof(why))) {
#else
	if (!decide_addrs_why(c->px->env.classify, a, n, why, sizeof(why))) {
#endif
		conn_deny(c, REASON_NON_PUBLIC_ADDRESS, why);
		return;
	}
	if (c->ex != NULL)
		c->ex->retrying = c->ex->reused = 0;
	if (c->kind == KIND_HTTP && exchange_reuse(c)) {
		c->ex->reused = 1;
		exchange_start(c);
		return;
	}
	c->state = ST_DIAL;
	c->dial = dial_start(c->px->env.base, c->addrs, c->naddrs, c->dest.port,
	    (int)c->px->env.cfg->connect_timeout * 1000, dial_done, c);
	if (c->dial == NULL)
		conn_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
}

static void
resolved(void *arg, enum resolver_status st, const struct resolver_addr *a,
    size_t n, const char *detail)
{
	struct proxy_conn *c = arg;

	c->rq = NULL;
	c->px->lookups--;
	metrics_dns(c->px->env.metrics, (double)conn_usec_since(&c->dns_start) / 1e6);
	if (st == RESOLVER_TIMEOUT) {
		conn_deny(c, REASON_DNS_TIMEOUT, detail);
		return;
	}
	if (st != RESOLVER_OK) {
		conn_deny(c, REASON_DNS_FAILURE, detail);
		return;
	}
	classify_and_dial(c, a, n);
}

/* c->dest is set and syntactically valid: policy, then the address. */
static void
route(struct proxy_conn *c)
{
	const struct policy *p = c->px->env.policy(c->px->env.arg);
	struct resolver_addr lit;
	enum reason r;

	c->have_dest = 1;
#ifdef EG_MUTANT_NO_RECHECK
	/* Test-only mutant (make conformance-mutants): a kept-alive client
	 * connection keeps its first decision and upstream. */
	if (c->kind == KIND_HTTP && c->ex != NULL && c->ex->served > 0 && c->ex->ubev != NULL) {
		c->allow_reason = REASON_ALLOWLISTED;
		exchange_start(c);
		return;
	}
#endif
	c->epoch = -1;
	if (p != NULL) {
		c->epoch = policy_epoch(p);
		snprintf(c->digest, sizeof(c->digest), "%s", policy_digest(p));
	}
	r = decide_policy(p, &c->dest);
	if (!reason_is_allow(r)) {
		conn_deny(c, r, NULL);
		return;
	}
	c->allow_reason = r;
#ifdef EG_MUTANT_TRUST_DIALLED
	/* Test-only mutant (make conformance-mutants): a redirected
	 * connection goes where the client dialled, the name only checked. */
	if (c->tp != NULL && c->dest.kind == DEST_NAME) {
		classify_and_dial(c, &c->tp->orig, 1);
		return;
	}
#endif
	if (c->dest.kind != DEST_NAME) {
		/* IP literals are classified exactly like DNS answers. */
		memset(&lit, 0, sizeof(lit));
		lit.family = c->dest.kind == DEST_IPV4 ? AF_INET : AF_INET6;
		memcpy(lit.addr, c->dest.addr, sizeof(lit.addr));
		classify_and_dial(c, &lit, 1);
		return;
	}
	/* A tenant at its bound waits for none of its own lookups to end:
	 * it is refused, and the resolver stays free for the others. */
	if (c->px->env.max_lookups > 0 && c->px->lookups >= c->px->env.max_lookups) {
		conn_deny(c, REASON_DNS_FAILURE, "this tenant's lookups in flight are "
		    "at its max_dns");
		return;
	}
	c->state = ST_RESOLVE;
	clock_gettime(CLOCK_MONOTONIC, &c->dns_start);
	c->rq = resolver_lookup(c->px->env.resolver, c->dest.host, resolved, c);
	if (c->rq == NULL)
		conn_deny(c, REASON_DNS_FAILURE, "out of memory");
	else
		c->px->lookups++;
}

/* ---- reading heads ---- */

/* The protocol a head refused before it was parsed spoke, for its
 * decision line, from its first n bytes at b: CONNECT by its method,
 * anything else absolute-form HTTP (SOCKS5 is told apart by its first
 * byte before any head is read). No byte yet, or only a prefix of
 * "CONNECT ", is connect: the protocol is not known (docs/design.md,
 * decision fields). Every head is judged on its own: on a kept-alive
 * connection the kind is still the request before's. */
#define HEAD_KIND_METHOD	"CONNECT "
#define HEAD_KIND_PEEK		(sizeof(HEAD_KIND_METHOD) - 1)

static void
head_kind(struct proxy_conn *c, const char *b, size_t n)
{
	if (c->kind == KIND_SOCKS5)
		return;
	c->kind = b == NULL || n == 0 || memcmp(b, HEAD_KIND_METHOD,
	    n < HEAD_KIND_PEEK ? n : HEAD_KIND_PEEK) == 0 ? KIND_CONNECT : KIND_HTTP;
}

/* head_kind for what the client has sent so far. */
static void
head_kind_of(struct proxy_conn *c, struct evbuffer *in)
{
	size_t n = evbuffer_get_length(in);

	if (n > HEAD_KIND_PEEK)
		n = HEAD_KIND_PEEK;
	head_kind(c, (const char *)evbuffer_pullup(in, (ssize_t)n), n);
}

/* Returns 1 when the request is ready to route, 0 when it was refused. */
static int
handle_http(struct proxy_conn *c, const struct http_req *req)
{
	const char *path;
	size_t path_len;
	int https;
	char why[128];

	c->kind = KIND_HTTP;
	if (http_parse_absolute(req->target, req->target_len, &c->dest, &path,
	    &path_len, &https, why, sizeof(why)) == -1) {
		conn_deny(c, https ? REASON_METHOD_NOT_ALLOWED : REASON_BAD_REQUEST, why);
		return 0;
	}
	/* Parsed: a framing refusal from here on names it (log, answer). */
	c->have_dest = 1;
	return exchange_prepare(c, req, path, path_len);
}

/* Parses and checks one head, which lies in buf and nowhere else: the
 * caller consumes it before routing; after is how many bytes the client
 * sent behind it are buffered. Returns 1 when the request is ready to
 * route, 0 when it was refused (answered). */
static int
handle_head(struct proxy_conn *c, const char *buf, size_t len, size_t after)
{
	struct http_req *req;
	char why[128];
	int status = 400, ok = 0;

	if ((req = malloc(sizeof(*req))) == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return 0;
	}
	if (http_parse_head(buf, len, req, &status, why, sizeof(why)) == -1) {
		head_kind(c, buf, len);
		conn_deny(c, status == 431 ? REASON_HEADER_TOO_LARGE :
		    REASON_BAD_REQUEST, why);
	} else if (strcmp(req->method, "CONNECT") == 0) {
		c->kind = KIND_CONNECT;
		/* A tunnel never reuses: an upstream pooled by an earlier
		 * absolute-form request on this connection goes now, with
		 * the rest of the exchange's state. */
		conn_exchange_drop(c);
		if (dest_parse_authority(req->target, req->target_len, &c->dest, why,
		    sizeof(why)) == -1) {
			conn_deny(c, REASON_BAD_REQUEST, why);
		} else if (len + after > HTTP_HEAD_MAX) {
			/* The bytes behind the head go to the tunnel first: a
			 * head's worth with it at most, as a new connection's
			 * read bound keeps them. On a kept-alive connection the
			 * bound was the exchange's, 64 KiB: what it read past
			 * the body hangs on libevent's read size, so the bound
			 * is checked here, not assumed. */
			c->have_dest = 1;
			conn_deny(c, REASON_BAD_REQUEST,
			    "CONNECT head and the bytes after it over 16 KiB");
		} else {
			ok = 1;
		}
	} else {
		ok = handle_http(c, req);
	}
	free(req);
	return ok;
}

/* SOCKS5: greeting, then request; both bounded and parsed whole. */
static void
handle_socks(struct proxy_conn *c, struct evbuffer *in)
{
	size_t n = evbuffer_get_length(in);
	const unsigned char *b = evbuffer_pullup(in, (ssize_t)n);
	struct socks5_req req;
	unsigned char reply = SOCKS5_REP_SYNTAX, ans[2] = { SOCKS5_VERSION, 0 };
	long k;
	int noauth = 0;

	if (b == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return;
	}
	if (c->state == ST_HEAD) {
		k = socks5_parse_greeting(b, n, &noauth);
		if (k == 0)
			return;
		if (k < 0 || !noauth) {
			ans[1] = SOCKS5_METHOD_NONE;
			evbuffer_add(bufferevent_get_output(c->cbev), ans, 2);
			conn_deny(c, REASON_BAD_REQUEST, k < 0 ?
			    "malformed SOCKS5 greeting" : "SOCKS5 without method 0x00");
			return;
		}
		evbuffer_drain(in, (size_t)k);
		ans[1] = SOCKS5_METHOD_NOAUTH;
		evbuffer_add(bufferevent_get_output(c->cbev), ans, 2);
		c->state = ST_SOCKS_REQ;
		n -= (size_t)k;
		b += k;
	}
	k = socks5_parse_request(b, n, &req, &reply);
	if (k == 0)
		return;
	if (k < 0) {
		conn_deny_with(c, REASON_BAD_REQUEST, reply == SOCKS5_REP_CMD_UNSUPPORTED ?
		    "SOCKS5 command not supported" : reply == SOCKS5_REP_ATYP_UNSUPPORTED ?
		    "SOCKS5 address type not supported" : "SOCKS5 request refused", reply);
		return;
	}
	evbuffer_drain(in, (size_t)k);
	bufferevent_disable(c->cbev, EV_READ);
	evtimer_del(c->timer);
	c->dest = req.dest;
	route(c);
}

static void
head_read_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t avail = evbuffer_get_length(in), scan;
	const char *buf;
	long end;
	int go;

	if (c->state != ST_HEAD && c->state != ST_SOCKS_REQ)
		return;
	if (avail == 0)
		return;
	if (c->tp != NULL) {	/* a redirected connection */
		if (transp_read(c, in) == TRANSP_ROUTE)
			route(c);
		return;
	}
	if (c->state == ST_SOCKS_REQ || (c->kind != KIND_HTTP &&
	    *(const unsigned char *)evbuffer_pullup(in, 1) == SOCKS5_VERSION)) {
		c->kind = KIND_SOCKS5;
		handle_socks(c, in);
		return;
	}
	scan = avail < HTTP_HEAD_MAX ? avail : HTTP_HEAD_MAX;
	buf = (const char *)evbuffer_pullup(in, (ssize_t)scan);
	if (buf == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return;
	}
	end = http_head_end(buf, scan);
	if (end == -1) {
		head_kind(c, buf, scan);
		conn_deny(c, REASON_BAD_REQUEST, "bare CR, bare LF or NUL in head");
		return;
	}
	if (end == 0) {
		if (avail >= HTTP_HEAD_MAX) {
			head_kind(c, buf, scan);
			conn_deny(c, REASON_HEADER_TOO_LARGE, NULL);
		}
		return;
	}
	/* Stop reading: bytes after the head wait in the kernel or in the
	 * buffer until this request is done. */
	bufferevent_disable(bev, EV_READ);
	evtimer_del(c->timer);
	/* The head is consumed before routing: a reused upstream (or any
	 * answer that comes back at once) starts forwarding the body from
	 * the client's buffer within route(), and only the body may be
	 * there. c is alive after handle_head: a refusal lingers. */
#ifdef EG_MUTANT_EARLY_BODY
	/* Test-only mutant (make conformance-mutants): route first, so a
	 * reused upstream takes the head's bytes as the body. */
	go = handle_head(c, buf, (size_t)end, avail - (size_t)end);
	if (go)
		route(c);
	evbuffer_drain(in, (size_t)end);
#else
	go = handle_head(c, buf, (size_t)end, avail - (size_t)end);
	evbuffer_drain(in, (size_t)end);
	if (go)
		route(c);
#endif
}

/* Clients speak first, and under load their request is usually in by the
 * time the connection is accepted: reading it now saves the loop a pass
 * (and epoll a registration that the head's end would undo). Nothing
 * there yet, or an error: the bufferevent's read event takes over. */
static void
head_read_now(struct proxy_conn *c, int fd)
{
	struct evbuffer *in = bufferevent_get_input(c->cbev);
	struct evbuffer_iovec v;
	ssize_t n = -1;
	int ok = 0;

	/* A socket bufferevent keeps its input's end frozen: only its own
	 * read may add there. Thaw it for this one read, as that read does. */
	if (evbuffer_unfreeze(in, 0) == -1)
		return;
	if (evbuffer_reserve_space(in, HTTP_HEAD_MAX, &v, 1) == 1) {
		n = read(fd, v.iov_base, v.iov_len < HTTP_HEAD_MAX ? v.iov_len :
		    HTTP_HEAD_MAX);
		if (n > 0) {
			v.iov_len = (size_t)n;
			ok = evbuffer_commit_space(in, &v, 1) == 0;
		}
	}
	(void)evbuffer_freeze(in, 0);
	if (ok)
		head_read_cb(c->cbev, c);
}

static void
head_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);

	/* Half a head (or a SOCKS5 greeting answered and no request) and
	 * then the client's FIN is a request refused, as a head that stalls
	 * is: a client that sends bytes and hangs up leaves its line, and
	 * may still read the answer; after a reset it gets only the line.
	 * Nothing sent (a port check), or a kept-alive connection closed
	 * between requests: nothing to decide. */
	if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) &&
	    (n > 0 || c->state == ST_SOCKS_REQ)) {
		head_kind_of(c, in);
		if (what & BEV_EVENT_EOF) {
			conn_deny(c, REASON_BAD_REQUEST,
			    "client closed before the head was whole");
			return;
		}
		conn_log_decision(c, REASON_BAD_REQUEST,
		    "client reset the connection before the head was whole");
	}
	conn_free(c);
}

static void
header_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)fd;
	(void)what;
	/* An idle kept-alive connection that never started another request
	 * just closes (after what is still queued for it, if anything: a
	 * free would drop it); a head that stalled gets its 408. */
	if (c->ex != NULL && c->ex->served > 0 && c->state == ST_HEAD &&
	    evbuffer_get_length(bufferevent_get_input(c->cbev)) == 0) {
		if (evbuffer_get_length(bufferevent_get_output(c->cbev)) != 0)
			conn_finish(c);
		else
			conn_free(c);
		return;
	}
	head_kind_of(c, bufferevent_get_input(c->cbev));
	conn_deny(c, REASON_HEADER_TIMEOUT, NULL);
}


/* One allocation; a transparent connection's state follows it (c is the
 * first member, so conn_free's free(c) frees both). */
static struct proxy_conn *
conn_alloc(int transparent)
{
	struct proxy_conn_tp *ct;

	if (!transparent)
		return calloc(1, sizeof(struct proxy_conn));
	if ((ct = calloc(1, sizeof(*ct))) == NULL)
		return NULL;
	ct->c.tp = &ct->tp;
	return &ct->c;
}

/* transparent: from a --transparent listener. */
static void
accept_conn(struct proxy *px, int fd, const struct sockaddr *sa, int transparent)
{
	struct proxy_conn *c;
	struct timeval tv;

	/* Counted before it exists: two workers accepting at once cannot
	 * both take the last place. */
	if (atomic_fetch_add(px->env.nconns, 1) >= (uint64_t)px->env.cfg->max_conns) {
		atomic_fetch_sub(px->env.nconns, 1);
		proxy_reject_overloaded(px, fd, sa, 0, transparent);
		return;
	}
	/* A tenant at its own bound is refused before it can take the
	 * others' share of --max-conns. */
	if (px->env.max_live > 0 && px->live >= px->env.max_live) {
		atomic_fetch_sub(px->env.nconns, 1);
		proxy_reject_overloaded(px, fd, sa, 0, transparent);
		return;
	}
	if ((c = conn_alloc(transparent)) == NULL) {
		atomic_fetch_sub(px->env.nconns, 1);
		close(fd);
		return;
	}
	c->px = px;
	proxy_conn_env(px, &c->env);
	c->id = proxy_next_id(px);
	c->state = ST_HEAD;
	c->kind = KIND_CONNECT;
	c->epoch = -1;
	conn_sockaddr_str(sa, c->client, sizeof(c->client));
	c->cbev = bufferevent_socket_new(px->env.base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(px->env.base, header_timeout_cb, c);
	TAILQ_INSERT_TAIL(&px->conns, c, link);
	px->live++;
	if (c->cbev == NULL || c->timer == NULL) {
		if (c->cbev == NULL)
			close(fd);
		conn_free(c);
		return;
	}
	/* Never buffer more than one head's worth before deciding (a
	 * ClientHello's, on a redirected connection). */
	bufferevent_setwatermark(c->cbev, EV_READ, 0, HTTP_HEAD_MAX);
	if (transparent) {
		if (transp_begin(c, fd) == TRANSP_REFUSED)
			return;
		bufferevent_setwatermark(c->cbev, EV_READ, 0, TLSHELLO_INPUT_MAX);
	}
	bufferevent_setcb(c->cbev, head_read_cb, NULL, head_event_cb, c);
	bufferevent_enable(c->cbev, EV_READ);
	tv.tv_sec = px->env.cfg->header_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->timer, &tv);
	head_read_now(c, fd);
}

void
proxy_accept(struct proxy *px, int fd, const struct sockaddr *sa, int salen)
{
	(void)salen;
	accept_conn(px, fd, sa, 0);
}

void
proxy_accept_transparent(struct proxy *px, int fd, const struct sockaddr *sa,
    int salen)
{
	(void)salen;
	accept_conn(px, fd, sa, 1);
}

void
proxy_reject_overloaded(struct proxy *px, int fd, const struct sockaddr *sa,
    int salen, int transparent)
{
	static const char resp[] =
	    "HTTP/1.1 503 Service Unavailable\r\n"
	    "X-Egress-Guard-Reason: overloaded\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: 25\r\n"
	    "Connection: close\r\n"
	    "\r\n"
	    "egress-guard: overloaded\n";
	struct proxy_conn tmp;
	struct transp_conn tmptp;

	(void)salen;
	/* Best effort, never blocks: a fresh socket's send buffer is empty.
	 * A redirected client would read no 503 of ours. */
	if (!transparent)
		(void)send(fd, resp, sizeof(resp) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
	memset(&tmp, 0, sizeof(tmp));
	tmp.px = px;
	proxy_conn_env(px, &tmp.env);
	tmp.id = proxy_next_id(px);
	tmp.kind = KIND_CONNECT;
	tmp.epoch = -1;
	if (transparent) {
		transp_conn_init(&tmptp);
		tmp.tp = &tmptp;
	}
	conn_sockaddr_str(sa, tmp.client, sizeof(tmp.client));
	conn_log_decision(&tmp, REASON_OVERLOADED, NULL);
}

size_t
proxy_revoke(struct proxy *px, const struct policy *p)
{
	struct proxy_conn *c, *next;
	size_t n = 0;

	if (px == NULL)
		return 0;
	for (c = TAILQ_FIRST(&px->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		/* A pooled upstream the policy no longer admits is closed now,
		 * whatever the connection's next request is doing (reading
		 * its head, resolving): in ST_HTTP it is the exchange's own. */
		if (c->state != ST_HTTP && c->ex != NULL && c->ex->ubev != NULL &&
		    !reason_is_allow(decide_policy(p, &c->ex->udest))) {
			bufferevent_free(c->ex->ubev);
			c->ex->ubev = NULL;
		}
		if (c->state != ST_RESOLVE && c->state != ST_DIAL &&
		    c->state != ST_RELAY && c->state != ST_HTTP)
			continue;
		if (reason_is_allow(decide_policy(p, &c->dest))) {
			/* Still admitted, now under p: a request whose allow
			 * line is still to come (resolving, dialling, or on a
			 * pooled upstream that has not answered yet) is logged
			 * with p's epoch, so no line below p's `policy` line
			 * names an older one. */
			if (c->state == ST_RESOLVE || c->state == ST_DIAL ||
			    (c->state == ST_HTTP && !c->ex->decided)) {
				c->epoch = policy_epoch(p);
				snprintf(c->digest, sizeof(c->digest), "%s",
				    policy_digest(p));
			}
			continue;
		}
		n++;
		if (c->state == ST_RELAY) {
			tunnel_end(c, "revoked");
		} else if (exchange_admitted(c)) {
			exchange_revoke(c);
		} else {
			conn_deny(c, REASON_REVOKED, "policy changed");
		}
	}
	return n;
}

uint64_t
proxy_live(const struct proxy *px)
{
	return px != NULL ? px->live : 0;
}

unsigned
proxy_lookups(const struct proxy *px)
{
	return px->lookups;
}

void
proxy_close_all(struct proxy *px, const char *reason)
{
	struct proxy_conn *c;

	if (px == NULL)
		return;
	/* An admitted tunnel or exchange still open gets its close line
	 * (reason shutdown) and its bytes counted, as at any other end; the
	 * rest (heads, lookups, dials, lingering answers) had no allow. */
	while ((c = TAILQ_FIRST(&px->conns)) != NULL) {
		if (c->state == ST_RELAY) {
			tunnel_end(c, reason);
			continue;
		}
		if (exchange_admitted(c))
			exchange_log_close(c, reason);
		conn_free(c);
	}
}

struct proxy *
proxy_new(const struct proxy_env *env)
{
	struct proxy *px;

	if ((px = calloc(1, sizeof(*px))) == NULL)
		return NULL;
	px->env = *env;
	TAILQ_INIT(&px->conns);
	return px;
}

void
proxy_free(struct proxy *px)
{
	if (px == NULL)
		return;
	proxy_close_all(px, "shutdown");
	free(px);
}
