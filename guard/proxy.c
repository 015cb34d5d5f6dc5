/* One client connection, whatever it speaks: an HTTP CONNECT tunnel, a
 * chain of absolute-form HTTP requests, or a SOCKS5 tunnel. Every request
 * takes the same path: whole head validated → destination syntax → policy
 * → resolution → classification → connect (or reuse, for HTTP). */
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

#include "proto/chunked.h"
#include "guard/decide.h"
#include "guard/dial.h"
#include "guard/guard.h"
#include "proto/http.h"
#include "guard/log.h"
#include "guard/proxy.h"
#include "guard/relay.h"
#include "proto/socks5.h"
#include "proto/tlshello.h"
#include "policy/policy.h"
#include "util/mutant.h"

#define PROXY_LINGER_S		2	/* after a deny: drain the client, then close */
#define PROXY_LOG_ADDRS		16	/* addresses named in one log line */
#define PROXY_HIGH_WATER	RELAY_HIGH_WATER

enum proxy_state {
	ST_HEAD = 1,	/* reading a request head or a SOCKS5 greeting */
	ST_SOCKS_REQ,	/* greeting answered, reading the SOCKS5 request */
	ST_RESOLVE,	/* admitted by policy, resolving */
	ST_DIAL,	/* classified public, connecting */
	ST_RELAY,	/* CONNECT or SOCKS5 tunnel */
	ST_HTTP,	/* one absolute-form exchange in flight */
	ST_LINGER	/* answer sent, draining before close */
};

enum proxy_kind { KIND_CONNECT = 1, KIND_HTTP, KIND_SOCKS5 };

enum resp_state { RESP_HEAD = 1, RESP_BODY, RESP_DONE };

struct proxy_conn {
	struct guard		*g;
	TAILQ_ENTRY(proxy_conn)	 link;
	uint64_t		 id;		/* of the current request */
	enum proxy_state	 state;
	enum proxy_kind		 kind;
	struct bufferevent	*cbev;		/* client; NULL once a relay owns it */
	struct event		*timer;		/* header timeout, then linger */
	struct resolver_query	*rq;
	struct dial		*dial;
	struct relay		*relay;
	char			 client[INET6_ADDRSTRLEN + 8];
	char			 peer[INET6_ADDRSTRLEN + 8];
	int			 have_dest;
	struct dest		 dest;
	enum reason		 allow_reason;
	long long		 epoch;		/* policy at decision time */
	char			 digest[POLICY_DIGEST_LEN + 1];
	struct resolver_addr	 addrs[DIAL_MAX_ADDRS];
	size_t			 naddrs;
	char			 logaddrs[PROXY_LOG_ADDRS][INET6_ADDRSTRLEN];
	size_t			 nlogaddrs;
	struct timespec		 opened;	/* tunnel or exchange start */
	struct timespec		 dns_start;
	const char		*sni_refused;	/* why the SNI gate closed */
	struct tlshello		 hello;		/* the SNI gate's walk */
	struct tlshello_watch	 watch;		/* and its watch after the hello */

	/* Absolute-form HTTP: the upstream outlives one exchange only when
	 * the next request is for the same (host, port, address). */
	struct bufferevent	*ubev;
	struct dest		 udest;
	struct resolver_addr	 uaddr;
	char			*fwd;		/* head to send upstream */
	size_t			 fwd_len;
	struct http_framing	 reqf;
	long long		 req_left;
	struct chunked		 req_ch;
	int			 req_done;
	int			 head_req;
	int			 client10;	/* HTTP/1.0: no 1xx, no chunked */
	enum resp_state		 resp;
	enum http_body		 resp_kind;
	long long		 resp_left;
	struct chunked		 resp_ch;
	int			 resp_close;	/* the upstream ends with this response */
	int			 client_close;	/* so does the client's connection */
	int			 resp_started;	/* bytes of a response reached the client */
	uint64_t		 up, down;
	unsigned		 served;	/* exchanges completed on this connection */
	int			 reused;	/* this exchange rides a pooled upstream */
	int			 retrying;	/* second try on a fresh upstream */
};

static void conn_free(struct proxy_conn *c);
static void head_read_cb(struct bufferevent *bev, void *arg);
static void head_event_cb(struct bufferevent *bev, short what, void *arg);
static void http_pump_resp(struct proxy_conn *c);
static void header_timeout_cb(evutil_socket_t fd, short what, void *arg);
static void dial_done(void *arg, int fd, size_t idx, int timed_out);

static const char *
kind_proto(enum proxy_kind k)
{
	return k == KIND_HTTP ? "http" : k == KIND_SOCKS5 ? "socks5" : "connect";
}

static void
sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;
		inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(s->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;
		inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(s->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}

static void
addr_peer_str(const struct resolver_addr *a, uint16_t port, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	decide_addr_str(a, ip, sizeof(ip));
	snprintf(buf, len, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

static long long
usec_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - t0->tv_sec) * 1000000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000;
}

/* The one decision record; every request ends in exactly one (plus a
 * second, deny sni_mismatch, when a tunnel fails the SNI check). */
static void
log_decision(struct proxy_conn *c, enum reason r, const char *detail)
{
	struct guard *g = c->g;
	struct log_rec rec;
	const char *addrs[PROXY_LOG_ADDRS];
	size_t i;

	metrics_decision(&g->metrics, kind_proto(c->kind), r);
	log_rec_begin(&rec, g->log, "decision");
	log_rec_int(&rec, "id", (long long)c->id);
	log_rec_str(&rec, "client", c->client);
	log_rec_str(&rec, "proto", kind_proto(c->kind));
	if (c->have_dest) {
		log_rec_str(&rec, "host", c->dest.host);
		log_rec_int(&rec, "port", c->dest.port);
	} else {
		log_rec_null(&rec, "host");
		log_rec_null(&rec, "port");
	}
	log_rec_str(&rec, "decision", reason_is_allow(r) ? "allow" : "deny");
	log_rec_str(&rec, "reason", reason_name(r));
	for (i = 0; i < c->nlogaddrs; i++)
		addrs[i] = c->logaddrs[i];
	log_rec_strv(&rec, "addrs", addrs, c->nlogaddrs);
	if (reason_is_allow(r))
		log_rec_str(&rec, "peer", c->peer);
	if (detail != NULL && detail[0] != '\0')
		log_rec_str(&rec, "detail", detail);
	if (c->epoch >= 0) {
		log_rec_int(&rec, "policy_epoch", c->epoch);
		log_rec_str(&rec, "policy_digest", c->digest);
	} else {
		log_rec_null(&rec, "policy_epoch");
		log_rec_null(&rec, "policy_digest");
	}
	log_emit(g->log, &rec);
}

/* The close record of an admitted tunnel or HTTP exchange. */
static void
log_exchange_close(struct proxy_conn *c, const char *reason, uint64_t up, uint64_t down)
{
	struct log_rec rec;

	c->g->metrics.bytes_up += up;
	c->g->metrics.bytes_down += down;
	log_rec_begin(&rec, c->g->log, "close");
	log_rec_int(&rec, "id", (long long)c->id);
	log_rec_str(&rec, "peer", c->peer);
	log_rec_str(&rec, "reason", reason);
	log_rec_int(&rec, "bytes_up", (long long)up);
	log_rec_int(&rec, "bytes_down", (long long)down);
	log_rec_int(&rec, "duration_ms", usec_since(&c->opened) / 1000);
	log_emit(c->g->log, &rec);
}

static void
linger_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_free(arg);
}

/* After the last answer: discard what the client still sends until it
 * closes or the linger timer fires. Closing with unread input would send
 * a RST that can destroy the answer before the client reads it. */
static void
linger_read_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	evbuffer_drain(bufferevent_get_input(bev),
	    evbuffer_get_length(bufferevent_get_input(bev)));
}

static void
linger_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	conn_free(arg);
}

static void
linger_write_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) != 0)
		return;
	(void)shutdown(bufferevent_getfd(bev), SHUT_WR);
	bufferevent_setcb(bev, linger_read_cb, NULL, linger_event_cb, c);
	bufferevent_enable(bev, EV_READ);
}

/* Flushes what is queued for the client, then closes. Stops everything
 * else the connection was doing. */
static void
finish(struct proxy_conn *c)
{
	struct timeval tv = { PROXY_LINGER_S, 0 };

	resolver_cancel(c->rq);
	c->rq = NULL;
	dial_cancel(c->dial);
	c->dial = NULL;
	if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	free(c->fwd);
	c->fwd = NULL;
	c->state = ST_LINGER;
	evtimer_del(c->timer);
	evtimer_assign(c->timer, c->g->base, linger_cb, c);
	bufferevent_disable(c->cbev, EV_READ);
	bufferevent_set_timeouts(c->cbev, NULL, NULL);
	bufferevent_setcb(c->cbev, NULL, linger_write_cb, linger_event_cb, c);
	bufferevent_enable(c->cbev, EV_WRITE);
	evtimer_add(c->timer, &tv);
	/* Nothing queued: the write callback would never run. */
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
		linger_write_cb(c->cbev, c);
}

static unsigned char
socks_code(enum reason r)
{
	switch (r) {
	case REASON_DNS_FAILURE:
	case REASON_DNS_TIMEOUT:		return SOCKS5_REP_DNS_FAILURE;
	case REASON_UPSTREAM_UNREACHABLE:
	case REASON_UPSTREAM_TIMEOUT:		return SOCKS5_REP_REFUSED;
	case REASON_NO_POLICY:
	case REASON_NOT_ALLOWLISTED:
	case REASON_NON_PUBLIC_ADDRESS:
	case REASON_REVOKED:			return SOCKS5_REP_DENIED;
	default:				return SOCKS5_REP_SYNTAX;
	}
}

/* Queues the HTTP answer for reason r: status, X-Egress-Guard-Reason, a
 * one-line body, Connection: close. */
static void
answer_http(struct proxy_conn *c, enum reason r)
{
	char body[DEST_HOST_MAX + 160];

	/* The body names only normalised, grammar-checked values. */
	if (c->have_dest)
		snprintf(body, sizeof(body), "egress-guard: %s: %s:%u\n",
		    reason_name(r), c->dest.host, c->dest.port);
	else
		snprintf(body, sizeof(body), "egress-guard: %s\n", reason_name(r));
	evbuffer_add_printf(bufferevent_get_output(c->cbev),
	    "HTTP/1.1 %d %s\r\n"
	    "X-Egress-Guard-Reason: %s\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: %zu\r\n"
	    "Connection: close\r\n"
	    "\r\n%s", reason_status(r), reason_status_text(r), reason_name(r),
	    strlen(body), body);
}

/* Ends a request that was not admitted: log, answer in the client's
 * protocol, close. socks_rep overrides the SOCKS5 reply code (-1: from r). */
static void
deny_with(struct proxy_conn *c, enum reason r, const char *detail, int socks_rep)
{
	int status = reason_status(r);

	log_decision(c, r, detail);
	if (c->kind == KIND_SOCKS5) {
		unsigned char rep[SOCKS5_REPLY_LEN];
		size_t n = socks5_reply(rep, socks_rep >= 0 ?
		    (unsigned char)socks_rep : socks_code(r));
		/* Before the request was read there is no reply to give. */
		if (c->state == ST_RESOLVE || c->state == ST_DIAL ||
		    c->state == ST_SOCKS_REQ)
			evbuffer_add(bufferevent_get_output(c->cbev), rep, n);
		finish(c);
		return;
	}
	if (status != 0 && !c->resp_started)
		answer_http(c, r);
	finish(c);
}

static void
proxy_deny(struct proxy_conn *c, enum reason r, const char *detail)
{
	deny_with(c, r, detail, -1);
}

/* ---- tunnels (CONNECT, SOCKS5) ---- */

/* The SNI rule for a ClientHello the walk took (rc, name): on a name
 * tunnel the CONNECT host or no name; on a literal tunnel (RFC 6066
 * allows no address in SNI) no name. NULL if it passes, else why not. */
static const char *
sni_judge(const struct proxy_conn *c, int rc, const char *why, const char *sni)
{
	if (rc == TLSHELLO_NO_SNI)
		return NULL;
	if (rc != TLSHELLO_SNI)
		return why != NULL ? why : "not a TLS ClientHello";
	if (c->dest.kind != DEST_NAME)
		return "TLS server name on an IP-literal tunnel";
	if (strcmp(sni, c->dest.host) != 0)
		return "TLS server name differs from the destination";
	return NULL;
}

/* The TLS SNI check on the client's first bytes: a TLS-shaped stream
 * must open with one well-formed ClientHello that passes sni_judge, and
 * every further ClientHello before the client's cleartext handshake ends
 * (tlshello_watch) must pass it too. Plain bytes pass. */
static enum relay_gate
sni_gate(void *arg, const unsigned char *b, size_t len, size_t *release)
{
	struct proxy_conn *c = arg;
	size_t off = 0, n;
	int rc;

	*release = 0;
	if (c->hello.verdict == TLSHELLO_MORE) {
		rc = tlshello_feed(&c->hello, b, len);
		if (rc == TLSHELLO_MORE)
			return RELAY_GATE_MORE;
		if (rc == TLSHELLO_NOT_TLS)
			return RELAY_GATE_PASS;
		if ((c->sni_refused = sni_judge(c, rc, c->hello.why,
		    c->hello.sni)) != NULL)
			return RELAY_GATE_CLOSE;
		off = c->hello.pos;
		tlshello_watch_init(&c->watch);
	}
	/* The bytes behind a hello that passed, as far as they are in:
	 * bounded by the watch's counts, each byte looked at once but the
	 * few of a record header the next call may look at again. */
	for (;;) {
		rc = tlshello_watch(&c->watch, b + off, len - off, &n);
		off += n;
		switch (rc) {
		case TLSHELLO_MORE:
			if (n > 0)
				continue;
			*release = off;
			return RELAY_GATE_MORE;
		case TLSHELLO_DONE:
			return RELAY_GATE_PASS;
		case TLSHELLO_SNI:
		case TLSHELLO_NO_SNI:
			if ((c->sni_refused = sni_judge(c, rc, NULL,
			    c->watch.hello.sni)) != NULL)
				return RELAY_GATE_CLOSE;
			continue;
		default:
			c->sni_refused = c->watch.why != NULL ?
			    c->watch.why : "TLS record after the hello";
			return RELAY_GATE_CLOSE;
		}
	}
}

static void
relay_done(void *arg, const char *reason)
{
	struct proxy_conn *c = arg;
	uint64_t up, down;

	relay_stats(c->relay, &up, &down);
	if (c->sni_refused != NULL) {
		reason = "sni_mismatch";
		log_decision(c, REASON_SNI_MISMATCH, c->sni_refused);
	}
	log_exchange_close(c, reason, up, down);
	conn_free(c);
}

/* The relay takes both sockets: the client's leaves its bufferevent, with
 * the bytes the client sent after its request (at most a head's worth: the
 * bufferevent's read watermark) handed over as the relay's first. */
static void
tunnel_open(struct proxy_conn *c, int ufd)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	unsigned char rep[SOCKS5_REPLY_LEN];
	struct evbuffer *in = bufferevent_get_input(c->cbev);
	size_t elen = evbuffer_get_length(in), glen;
	const void *greet = ok, *early = NULL;
	relay_gate_cb gate = NULL;

	if (c->kind == KIND_SOCKS5) {
		glen = socks5_reply(rep, SOCKS5_REP_SUCCEEDED);
		greet = rep;
	} else {
		glen = sizeof(ok) - 1;
	}
	if (elen > 0 && (early = evbuffer_pullup(in, (ssize_t)elen)) == NULL)
		elen = 0;	/* pullup failed: no memory, refused below */
	/* Every tunnel, literal ones included: a name in their ClientHello
	 * can only be another host's. */
	if (c->g->cfg->sni_check) {
		tlshello_init(&c->hello);
		gate = sni_gate;
	}
#ifdef EG_MUTANT_LENIENT_SNI
	if (c->dest.kind != DEST_NAME)
		gate = NULL;
#endif
	if (evbuffer_get_length(in) != elen ||
	    (c->relay = relay_new(c->g->base, bufferevent_getfd(c->cbev), ufd,
	    greet, glen, early, elen, (int)c->g->cfg->idle_timeout, gate,
	    relay_done, c)) == NULL) {
		close(ufd);
		proxy_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	/* The socket is the relay's now: free the bufferevent, not the fd. */
	bufferevent_setfd(c->cbev, -1);
	bufferevent_free(c->cbev);
	c->cbev = NULL;
	c->state = ST_RELAY;
	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	log_decision(c, c->allow_reason, NULL);
}

/* ---- absolute-form HTTP ---- */

static void http_exchange_start(struct proxy_conn *c);

static void
up_idle_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)what;
	/* A pooled upstream closed or spoke out of turn: drop it. */
	if (bev == c->ubev) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
}

static void
up_idle_read_cb(struct bufferevent *bev, void *arg)
{
	up_idle_cb(bev, 0, arg);
}

/* The exchange ended. Keep the client (and perhaps the upstream) for the
 * next request, or close. */
static void
http_exchange_done(struct proxy_conn *c, const char *reason)
{
	struct timeval tv;
	int keep_up, keep_client;

	log_exchange_close(c, reason, c->up, c->down);
	keep_client = c->req_done && !c->client_close && c->resp == RESP_DONE;
	keep_up = keep_client && !c->resp_close && c->ubev != NULL &&
	    evbuffer_get_length(bufferevent_get_input(c->ubev)) == 0;
	if (!keep_client) {
		finish(c);
		return;
	}
	if (keep_up) {
		bufferevent_set_timeouts(c->ubev, NULL, NULL);
		bufferevent_setcb(c->ubev, up_idle_read_cb, NULL, up_idle_cb, c);
		bufferevent_enable(c->ubev, EV_READ);
	} else if (c->ubev != NULL) {
		bufferevent_free(c->ubev);
		c->ubev = NULL;
	}
	/* Back to reading a head: the next request is checked from scratch. */
	c->state = ST_HEAD;
	c->have_dest = 0;
	c->nlogaddrs = 0;
	c->resp_started = 0;
	bufferevent_set_timeouts(c->cbev, NULL, NULL);
	bufferevent_setcb(c->cbev, head_read_cb, NULL, head_event_cb, c);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, HTTP_HEAD_MAX);
	bufferevent_enable(c->cbev, EV_READ);
	c->served++;
	evtimer_del(c->timer);
	evtimer_assign(c->timer, c->g->base, header_timeout_cb, c);
	tv.tv_sec = c->g->cfg->header_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->timer, &tv);
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		bufferevent_trigger(c->cbev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
}

/* A failure after the request was admitted (its allow decision is
 * logged): answer with r if no response byte went out yet, log the close
 * (reason: why, or r's name), and close. */
/* Ends an exchange before its end. A body the client reads until the
 * close (close-delimited, or de-chunked for HTTP/1.0) would look complete
 * after a FIN: cut short, it ends with a reset. c may be gone after this. */
static void
http_cut(struct proxy_conn *c)
{
	static const struct linger reset = { 1, 0 };

	if (c->resp == RESP_BODY && (c->resp_kind == HTTP_BODY_CLOSE ||
	    (c->client10 && c->resp_kind == HTTP_BODY_CHUNKED))) {
		(void)setsockopt(bufferevent_getfd(c->cbev), SOL_SOCKET, SO_LINGER,
		    &reset, sizeof(reset));
		conn_free(c);
		return;
	}
	finish(c);
}

static void
http_abort(struct proxy_conn *c, enum reason r, const char *why)
{
	if (!c->resp_started)
		answer_http(c, r);
	log_exchange_close(c, why != NULL ? why : reason_name(r), c->up, c->down);
	http_cut(c);
}

/* Client → upstream: the request body, framed exactly. Bytes after it
 * stay in the client's buffer as the next request. */
static int
http_pump_body(struct proxy_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cbev);
	struct evbuffer *out = bufferevent_get_output(c->ubev);
	size_t n = evbuffer_get_length(in), m = 0;

	if (c->req_done || n == 0)
		return 0;
	if (c->reqf.chunked) {
		const char *b = (const char *)evbuffer_pullup(in, (ssize_t)n);
		int done = 0;
		long k = b != NULL ? chunked_feed(&c->req_ch, b, n, &done) : -1;
		if (k < 0)
			return -1;
		m = (size_t)k;
		c->req_done = done;
	} else {
		m = (long long)n < c->req_left ? n : (size_t)c->req_left;
		c->req_left -= (long long)m;
		c->req_done = c->req_left == 0;
	}
	if (m > 0 && evbuffer_remove_buffer(in, out, m) != (int)m)
		return -1;
	c->up += m;
	if (c->req_done || evbuffer_get_length(out) >= PROXY_HIGH_WATER)
		bufferevent_disable(c->cbev, EV_READ);
	return 0;
}

static void
cl_read_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if (http_pump_body(c) == -1)
		http_abort(c, REASON_BAD_REQUEST, "malformed request body");
}

/* The client drained: resume the response. */
static void
cl_write_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if (c->ubev != NULL && c->resp != RESP_DONE)
		bufferevent_enable(c->ubev, EV_READ);
}

static void
cl_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_TIMEOUT) {
		http_abort(c, REASON_HEADER_TIMEOUT, "idle_timeout");
		return;
	}
	/* The client left mid-exchange: nothing to answer. */
	log_exchange_close(c, (what & BEV_EVENT_EOF) ? "eof" : "reset", c->up, c->down);
	conn_free(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	http_pump_resp(arg);
}

/* The upstream drained: resume the request body. */
static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if (!c->req_done)
		bufferevent_enable(c->cbev, EV_READ);
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if ((what & BEV_EVENT_EOF) && c->resp == RESP_BODY &&
	    c->resp_kind == HTTP_BODY_CLOSE) {
		http_pump_resp(c);	/* anything read with the EOF */
		if (c->state != ST_HTTP)
			return;
		c->resp = RESP_DONE;
		bufferevent_free(c->ubev);
		c->ubev = NULL;
		http_exchange_done(c, "complete");
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		http_abort(c, REASON_UPSTREAM_TIMEOUT, "idle_timeout");
		return;
	}
	if (c->fwd != NULL && c->resp == RESP_HEAD && c->down == 0 &&
	    evbuffer_get_length(bufferevent_get_input(c->ubev)) == 0) {
		/* The pooled upstream was gone: same addresses, fresh dial. */
		bufferevent_free(c->ubev);
		c->ubev = NULL;
		c->reused = 0;
		c->retrying = 1;
		bufferevent_disable(c->cbev, EV_READ);
		c->state = ST_DIAL;
		c->dial = dial_start(c->g->base, c->addrs, c->naddrs, c->dest.port,
		    (int)c->g->cfg->connect_timeout * 1000, dial_done, c);
		if (c->dial == NULL)
			http_abort(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	http_abort(c, REASON_UPSTREAM_UNREACHABLE, "upstream closed mid-response");
}

/* Takes one response head off the upstream's input: parsed, checked,
 * rewritten for the client. Returns 1 when a head was taken, 0 when more
 * bytes are needed, -1 when the exchange was aborted. */
static int
http_take_resp_head(struct proxy_conn *c, struct evbuffer *in, struct evbuffer *out)
{
	size_t n = evbuffer_get_length(in);
	size_t scan = n < HTTP_RESP_HEAD_MAX ? n : HTTP_RESP_HEAD_MAX;
	const char *b;
	struct http_resp *r = NULL;
	char *head = NULL, why[128] = "out of memory";
	size_t headlen;
	long end, hl;
	int rc = -1;

	if (n == 0)
		return 0;
	b = (const char *)evbuffer_pullup(in, (ssize_t)scan);
	end = b != NULL ? http_head_end(b, scan) : -1;
	if (end == 0 && scan < HTTP_RESP_HEAD_MAX)
		return 0;
	if (end <= 0) {
		snprintf(why, sizeof(why), "malformed response head");
		goto out;
	}
	if ((r = malloc(sizeof(*r))) == NULL)
		goto out;
	if (http_parse_response_head(b, (size_t)end, r, why, sizeof(why)) == -1 ||
	    http_response_framing(r, c->head_req, &c->resp_kind, &c->resp_left,
	    &c->resp_close, why, sizeof(why)) == -1 ||
	    (c->client10 && http_response_check_http10(r, c->resp_kind, why,
	    sizeof(why)) == -1))
		goto out;
	/* An HTTP/1.0 client gets no 1xx (RFC 9110 15.2). */
	if (r->status >= 200 || !c->client10) {
		/* The rewrite adds at most ": " per field and one
		 * Connection line. */
		headlen = (size_t)end + 2 * r->nheaders + 64;
		if ((head = malloc(headlen)) == NULL)
			goto out;
		/* Connection is hop-by-hop: the upstream closing does not
		 * end the client's connection, unless the body is delimited
		 * by that close; an HTTP/1.0 client's always ends, and a
		 * chunked body reaches it de-chunked, delimited by the close. */
		c->client_close = c->reqf.close || c->client10 || c->g->stopping ||
		    c->resp_kind == HTTP_BODY_CLOSE;
		hl = http_forward_response_head(r, (c->client_close ? HTTP_FWD_CLOSE : 0) |
		    (c->client10 ? HTTP_FWD_HTTP10 : 0), head, headlen);
		if (hl <= 0) {
			snprintf(why, sizeof(why), "response head too large");
			goto out;
		}
		evbuffer_add(out, head, (size_t)hl);
		c->resp_started = 1;
	}
	c->down += (uint64_t)end;
	evbuffer_drain(in, (size_t)end);
	free(c->fwd);		/* answered: no retry any more */
	c->fwd = NULL;
	if (r->status >= 200) {		/* else a 1xx: the real answer follows */
		chunked_init(&c->resp_ch);
		c->resp = c->resp_kind == HTTP_BODY_NONE ? RESP_DONE : RESP_BODY;
	}
	rc = 1;
out:
	free(head);
	free(r);
	if (rc == -1)
		http_abort(c, REASON_UPSTREAM_UNREACHABLE, why);
	return rc;
}

/* Upstream → client: one response (after any 1xx), framed exactly. */
static void
http_pump_resp(struct proxy_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->ubev);
	struct evbuffer *out = bufferevent_get_output(c->cbev);

	while (c->resp != RESP_DONE) {
		size_t n = evbuffer_get_length(in), m = 0, skip = 0, off;

		if (c->resp == RESP_HEAD) {
			if (http_take_resp_head(c, in, out) <= 0)
				return;
			continue;
		}
		if (n == 0)
			break;
		switch (c->resp_kind) {
		case HTTP_BODY_LENGTH:
			m = (long long)n < c->resp_left ? n : (size_t)c->resp_left;
			c->resp_left -= (long long)m;
			if (c->resp_left == 0)
				c->resp = RESP_DONE;
			break;
		case HTTP_BODY_CHUNKED: {
			const char *b = (const char *)evbuffer_pullup(in, (ssize_t)n);
			int done = 0;
			long k = b == NULL ? -1 : c->client10 ?
			    chunked_decode(&c->resp_ch, b, n, &done, &off, &m) :
			    chunked_feed(&c->resp_ch, b, n, &done);

			if (k < 0) {
				http_abort(c, REASON_UPSTREAM_UNREACHABLE, "malformed chunked response");
				return;
			}
			/* De-chunking: the data ends the run, the framing
			 * before it is dropped. */
			if (!c->client10)
				m = (size_t)k;
			skip = (size_t)k - m;
			if (done)
				c->resp = RESP_DONE;
			break;
		}
		default:
			m = n;
			break;
		}
		evbuffer_drain(in, skip);
		if (m > 0 && evbuffer_remove_buffer(in, out, m) != (int)m) {
			http_abort(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
			return;
		}
		c->down += skip + m;
		if (evbuffer_get_length(out) >= PROXY_HIGH_WATER) {
			bufferevent_disable(c->ubev, EV_READ);
			break;
		}
		if (skip + m == 0)
			break;
	}
	if (c->resp == RESP_DONE)
		http_exchange_done(c, "complete");
}

/* The upstream is ready (new or reused): send the head, then the body as
 * it comes, and frame the response. */
static void
http_exchange_start(struct proxy_conn *c)
{
	struct timeval idle = { c->g->cfg->idle_timeout, 0 };

	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	c->state = ST_HTTP;
	c->up = c->fwd_len;
	c->down = 0;
	c->resp = RESP_HEAD;
	c->resp_close = 0;
	c->client_close = 0;
	c->resp_started = 0;
	c->req_left = c->reqf.chunked ? 0 : c->reqf.length;
	c->req_done = !c->reqf.chunked && c->reqf.length == 0;
	chunked_init(&c->req_ch);
	evbuffer_add(bufferevent_get_output(c->ubev), c->fwd, c->fwd_len);
	/* A pooled upstream may have closed just before this request: keep
	 * the head for one retry on a fresh connection (bodiless requests
	 * only, like every proxy and browser). */
	if (!c->reused || !c->req_done) {
		free(c->fwd);
		c->fwd = NULL;
	}
	if (!c->retrying)
		log_decision(c, c->allow_reason, NULL);
	bufferevent_setwatermark(c->ubev, EV_WRITE, PROXY_HIGH_WATER / 2, 0);
	bufferevent_setwatermark(c->cbev, EV_WRITE, PROXY_HIGH_WATER / 2, 0);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, PROXY_HIGH_WATER);
	bufferevent_setwatermark(c->ubev, EV_READ, 0, PROXY_HIGH_WATER);
	bufferevent_set_timeouts(c->ubev, &idle, NULL);
	bufferevent_set_timeouts(c->cbev, &idle, NULL);
	bufferevent_setcb(c->ubev, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_setcb(c->cbev, cl_read_cb, cl_write_cb, cl_event_cb, c);
	bufferevent_enable(c->ubev, EV_READ | EV_WRITE);
	bufferevent_enable(c->cbev, EV_WRITE);
	if (!c->req_done) {
		bufferevent_enable(c->cbev, EV_READ);
		if (http_pump_body(c) == -1)
			http_abort(c, REASON_BAD_REQUEST, "malformed request body");
	}
}

/* ---- the shared path: policy → resolve → classify → dial ---- */

static void
dial_done(void *arg, int fd, size_t idx, int timed_out)
{
	struct proxy_conn *c = arg;
	struct bufferevent *ubev;

	c->dial = NULL;
	if (fd == -1) {
		enum reason r = timed_out ? REASON_UPSTREAM_TIMEOUT :
		    REASON_UPSTREAM_UNREACHABLE;
		if (c->retrying)	/* admitted already: a close, not a decision */
			http_abort(c, r, NULL);
		else
			proxy_deny(c, r, NULL);
		return;
	}
	addr_peer_str(&c->addrs[idx], c->dest.port, c->peer, sizeof(c->peer));
	if (c->kind != KIND_HTTP) {
		tunnel_open(c, fd);
		return;
	}
	ubev = bufferevent_socket_new(c->g->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (ubev == NULL) {
		close(fd);
		proxy_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	c->ubev = ubev;
	c->udest = c->dest;
	c->uaddr = c->addrs[idx];
	http_exchange_start(c);
}

/* A pooled upstream that sent anything since its last response (bytes
 * or its close), even if the loop has not seen it yet, is not reused:
 * those bytes would be taken as the answer to the next request. */
static int
up_quiet(struct bufferevent *ubev)
{
	char b;
	ssize_t n;

	if (evbuffer_get_length(bufferevent_get_input(ubev)) != 0)
		return 0;
	n = recv(bufferevent_getfd(ubev), &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* An idle upstream from the previous exchange serves this request only
 * for the same (host, port) and an address classified in THIS request. */
static int
reuse_upstream(struct proxy_conn *c)
{
	size_t i;

	if (c->ubev == NULL)
		return 0;
	if (strcmp(c->udest.host, c->dest.host) == 0 && c->udest.port == c->dest.port &&
	    up_quiet(c->ubev)) {
		for (i = 0; i < c->naddrs; i++) {
			if (c->addrs[i].family == c->uaddr.family &&
			    memcmp(c->addrs[i].addr, c->uaddr.addr, 16) == 0) {
				addr_peer_str(&c->uaddr, c->dest.port, c->peer,
				    sizeof(c->peer));
				return 1;
			}
		}
	}
	bufferevent_free(c->ubev);
	c->ubev = NULL;
	return 0;
}

/* Classifies every address, then dials (or reuses) in the resolver's
 * order. */
static void
classify_and_dial(struct proxy_conn *c, const struct resolver_addr *a, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < PROXY_LOG_ADDRS; i++)
		decide_addr_str(&a[i], c->logaddrs[i], sizeof(c->logaddrs[i]));
	c->nlogaddrs = i;
	if (!decide_addrs(c->g->classify, a, n, NULL)) {
		proxy_deny(c, REASON_NON_PUBLIC_ADDRESS, NULL);
		return;
	}
	c->naddrs = n < DIAL_MAX_ADDRS ? n : DIAL_MAX_ADDRS;
	memcpy(c->addrs, a, c->naddrs * sizeof(*a));
	c->retrying = 0;
	c->reused = 0;
	if (c->kind == KIND_HTTP && reuse_upstream(c)) {
		c->reused = 1;
		http_exchange_start(c);
		return;
	}
	c->state = ST_DIAL;
	c->dial = dial_start(c->g->base, c->addrs, c->naddrs, c->dest.port,
	    (int)c->g->cfg->connect_timeout * 1000, dial_done, c);
	if (c->dial == NULL)
		proxy_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
}

static void
resolved(void *arg, enum resolver_status st, const struct resolver_addr *a,
    size_t n, const char *detail)
{
	struct proxy_conn *c = arg;

	c->rq = NULL;
	metrics_dns(&c->g->metrics, (double)usec_since(&c->dns_start) / 1e6);
	if (st == RESOLVER_TIMEOUT) {
		proxy_deny(c, REASON_DNS_TIMEOUT, detail);
		return;
	}
	if (st != RESOLVER_OK) {
		proxy_deny(c, REASON_DNS_FAILURE, detail);
		return;
	}
	classify_and_dial(c, a, n);
}

/* c->dest is set and syntactically valid: policy, then the address. */
static void
route(struct proxy_conn *c)
{
	const struct policy *p = c->g->policy;
	struct resolver_addr lit;
	enum reason r;

	c->have_dest = 1;
#ifdef EG_MUTANT_NO_RECHECK
	/* Test-only mutant (make conformance-mutants): a kept-alive client
	 * connection keeps its first decision and upstream. */
	if (c->kind == KIND_HTTP && c->served > 0 && c->ubev != NULL) {
		c->allow_reason = REASON_ALLOWLISTED;
		http_exchange_start(c);
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
		proxy_deny(c, r, NULL);
		return;
	}
	c->allow_reason = r;
	if (c->dest.kind != DEST_NAME) {
		/* IP literals are classified exactly like DNS answers. */
		memset(&lit, 0, sizeof(lit));
		lit.family = c->dest.kind == DEST_IPV4 ? AF_INET : AF_INET6;
		memcpy(lit.addr, c->dest.addr, sizeof(lit.addr));
		classify_and_dial(c, &lit, 1);
		return;
	}
	c->state = ST_RESOLVE;
	clock_gettime(CLOCK_MONOTONIC, &c->dns_start);
	c->rq = resolver_lookup(c->g->resolver, c->dest.host, resolved, c);
	if (c->rq == NULL)
		proxy_deny(c, REASON_DNS_FAILURE, "out of memory");
}

/* ---- reading heads ---- */

/* Returns 1 when the request is ready to route, 0 when it was refused. */
static int
handle_http(struct proxy_conn *c, const struct http_req *req)
{
	const char *path;
	size_t path_len;
	int https;
	char why[128];
	long n;

	c->kind = KIND_HTTP;
	if (http_parse_absolute(req->target, req->target_len, &c->dest, &path,
	    &path_len, &https, why, sizeof(why)) == -1) {
		proxy_deny(c, https ? REASON_METHOD_NOT_ALLOWED : REASON_BAD_REQUEST, why);
		return 0;
	}
	if (http_request_framing(req, &c->dest, &c->reqf, why, sizeof(why)) == -1) {
		proxy_deny(c, REASON_BAD_REQUEST, why);
		return 0;
	}
	c->head_req = strcmp(req->method, "HEAD") == 0;
	c->client10 = req->minor == 0;
	free(c->fwd);
	if ((c->fwd = malloc(HTTP_HEAD_MAX + 256)) == NULL) {
		proxy_deny(c, REASON_BAD_REQUEST, "out of memory");
		return 0;
	}
	n = http_forward_head(req, &c->dest, path, path_len, c->fwd, HTTP_HEAD_MAX + 256);
	if (n < 0) {
		proxy_deny(c, REASON_HEADER_TOO_LARGE, NULL);
		return 0;
	}
	c->fwd_len = (size_t)n;
	return 1;
}

/* Parses and checks one head, which lies in buf and nowhere else: the
 * caller consumes it before routing. Returns 1 when the request is ready
 * to route, 0 when it was refused (answered). */
static int
handle_head(struct proxy_conn *c, const char *buf, size_t len)
{
	struct http_req *req;
	char why[128];
	int status = 400, ok = 0;

	if ((req = malloc(sizeof(*req))) == NULL) {
		proxy_deny(c, REASON_BAD_REQUEST, "out of memory");
		return 0;
	}
	if (http_parse_head(buf, len, req, &status, why, sizeof(why)) == -1) {
		proxy_deny(c, status == 431 ? REASON_HEADER_TOO_LARGE :
		    REASON_BAD_REQUEST, why);
	} else if (strcmp(req->method, "CONNECT") == 0) {
		c->kind = KIND_CONNECT;
		/* A tunnel never reuses: an upstream pooled by an earlier
		 * absolute-form request on this connection goes now. */
		if (c->ubev != NULL) {
			bufferevent_free(c->ubev);
			c->ubev = NULL;
		}
		if (dest_parse_authority(req->target, req->target_len, &c->dest, why,
		    sizeof(why)) == -1)
			proxy_deny(c, REASON_BAD_REQUEST, why);
		else
			ok = 1;
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
		proxy_deny(c, REASON_BAD_REQUEST, "out of memory");
		return;
	}
	if (c->state == ST_HEAD) {
		k = socks5_parse_greeting(b, n, &noauth);
		if (k == 0)
			return;
		if (k < 0 || !noauth) {
			ans[1] = SOCKS5_METHOD_NONE;
			evbuffer_add(bufferevent_get_output(c->cbev), ans, 2);
			proxy_deny(c, REASON_BAD_REQUEST, k < 0 ?
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
		deny_with(c, REASON_BAD_REQUEST, reply == SOCKS5_REP_CMD_UNSUPPORTED ?
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
	if (c->state == ST_SOCKS_REQ || (c->kind != KIND_HTTP &&
	    *(const unsigned char *)evbuffer_pullup(in, 1) == SOCKS5_VERSION)) {
		c->kind = KIND_SOCKS5;
		handle_socks(c, in);
		return;
	}
	scan = avail < HTTP_HEAD_MAX ? avail : HTTP_HEAD_MAX;
	buf = (const char *)evbuffer_pullup(in, (ssize_t)scan);
	if (buf == NULL) {
		proxy_deny(c, REASON_BAD_REQUEST, "out of memory");
		return;
	}
	end = http_head_end(buf, scan);
	if (end == -1) {
		proxy_deny(c, REASON_BAD_REQUEST, "bare CR, bare LF or NUL in head");
		return;
	}
	if (end == 0) {
		if (avail >= HTTP_HEAD_MAX)
			proxy_deny(c, REASON_HEADER_TOO_LARGE, NULL);
		return;
	}
	/* Stop reading: bytes after the head wait in the kernel or in the
	 * buffer until this request is done. */
	bufferevent_disable(bev, EV_READ);
	evtimer_del(c->timer);
	if (c->kind == KIND_HTTP)	/* a further request on a kept-alive connection */
		c->id = ++c->g->next_id;
	/* The head is consumed before routing: a reused upstream (or any
	 * answer that comes back at once) starts forwarding the body from
	 * the client's buffer within route(), and only the body may be
	 * there. c is alive after handle_head: a refusal lingers. */
#ifdef EG_MUTANT_EARLY_BODY
	/* Test-only mutant (make conformance-mutants): route first, so a
	 * reused upstream takes the head's bytes as the body. */
	go = handle_head(c, buf, (size_t)end);
	if (go)
		route(c);
	evbuffer_drain(in, (size_t)end);
#else
	go = handle_head(c, buf, (size_t)end);
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

	(void)bev;
	(void)what;
	/* Client went away between requests: nothing to decide. */
	conn_free(c);
}

static void
header_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)fd;
	(void)what;
	/* An idle kept-alive connection that never started another request
	 * just closes; a head that stalled gets its 408. */
	if (c->served > 0 && c->state == ST_HEAD &&
	    evbuffer_get_length(bufferevent_get_input(c->cbev)) == 0) {
		conn_free(c);
		return;
	}
	proxy_deny(c, REASON_HEADER_TIMEOUT, NULL);
}

static void
conn_free(struct proxy_conn *c)
{
	struct guard *g = c->g;

	resolver_cancel(c->rq);
	dial_cancel(c->dial);
	if (c->relay != NULL)
		relay_free(c->relay);
	if (c->cbev != NULL)
		bufferevent_free(c->cbev);
	if (c->ubev != NULL)
		bufferevent_free(c->ubev);
	if (c->timer != NULL)
		event_free(c->timer);
	free(c->fwd);
	TAILQ_REMOVE(&g->conns, c, link);
	g->nconns--;
	free(c);
	guard_conn_closed(g);
}

void
proxy_accept(struct guard *g, int fd, const struct sockaddr *sa, int salen)
{
	struct proxy_conn *c;
	struct timeval tv;

	(void)salen;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->g = g;
	c->id = ++g->next_id;
	c->state = ST_HEAD;
	c->kind = KIND_CONNECT;
	c->epoch = -1;
	sockaddr_str(sa, c->client, sizeof(c->client));
	c->cbev = bufferevent_socket_new(g->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(g->base, header_timeout_cb, c);
	TAILQ_INSERT_TAIL(&g->conns, c, link);
	g->nconns++;
	if (c->cbev == NULL || c->timer == NULL) {
		if (c->cbev == NULL)
			close(fd);
		conn_free(c);
		return;
	}
	/* Never buffer more than one head's worth before deciding. */
	bufferevent_setwatermark(c->cbev, EV_READ, 0, HTTP_HEAD_MAX);
	bufferevent_setcb(c->cbev, head_read_cb, NULL, head_event_cb, c);
	bufferevent_enable(c->cbev, EV_READ);
	tv.tv_sec = g->cfg->header_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->timer, &tv);
	head_read_now(c, fd);
}

void
proxy_reject_overloaded(struct guard *g, int fd, const struct sockaddr *sa,
    int salen)
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

	(void)salen;
	/* Best effort, never blocks: a fresh socket's send buffer is empty. */
	(void)send(fd, resp, sizeof(resp) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
	memset(&tmp, 0, sizeof(tmp));
	tmp.g = g;
	tmp.id = ++g->next_id;
	tmp.kind = KIND_CONNECT;
	tmp.epoch = -1;
	sockaddr_str(sa, tmp.client, sizeof(tmp.client));
	log_decision(&tmp, REASON_OVERLOADED, NULL);
}

size_t
proxy_revoke(struct guard *g, const struct policy *p)
{
	struct proxy_conn *c, *next;
	size_t n = 0;

	for (c = TAILQ_FIRST(&g->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		if (c->state == ST_HEAD && c->ubev != NULL &&
		    !reason_is_allow(decide_policy(p, &c->udest))) {
			bufferevent_free(c->ubev);	/* pooled, now out of policy */
			c->ubev = NULL;
			continue;
		}
		if (c->state != ST_RESOLVE && c->state != ST_DIAL &&
		    c->state != ST_RELAY && c->state != ST_HTTP)
			continue;
		if (reason_is_allow(decide_policy(p, &c->dest)))
			continue;
		n++;
		if (c->state == ST_RELAY) {
			relay_done(c, "revoked");
		} else if (c->state == ST_HTTP) {
			log_exchange_close(c, "revoked", c->up, c->down);
			http_cut(c);
		} else {
			proxy_deny(c, REASON_REVOKED, "policy changed");
		}
	}
	return n;
}

void
proxy_close_all(struct guard *g)
{
	struct proxy_conn *c;

	while ((c = TAILQ_FIRST(&g->conns)) != NULL)
		conn_free(c);
}
