#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "guard/decide.h"
#include "guard/dial.h"
#include "guard/guard.h"
#include "guard/http.h"
#include "guard/log.h"
#include "guard/proxy.h"
#include "guard/relay.h"
#include "policy/policy.h"

#define PROXY_LINGER_S		2	/* after a deny: drain the client, then close */
#define PROXY_LOG_ADDRS		16	/* addresses named in one log line */

enum proxy_state {
	ST_HEAD = 1,	/* reading and validating the request head */
	ST_RESOLVE,	/* admitted by policy, resolving */
	ST_DIAL,	/* classified public, connecting */
	ST_RELAY,	/* tunnel open */
	ST_LINGER	/* deny sent, draining before close */
};

struct proxy_conn {
	struct guard		*g;
	TAILQ_ENTRY(proxy_conn)	 link;
	uint64_t		 id;
	enum proxy_state	 state;
	struct bufferevent	*cbev;
	struct event		*timer;		/* header timeout, then linger */
	struct resolver_query	*rq;
	struct dial		*dial;
	struct relay		*relay;
	const char		*proto;
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
	struct timespec		 opened;	/* tunnel established */
};

static void conn_free(struct proxy_conn *c);

static void
sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;
		inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
		port = ntohs(s->sin_port);
		snprintf(buf, len, "%s:%u", ip, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;
		inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
		port = ntohs(s->sin6_port);
		snprintf(buf, len, "[%s]:%u", ip, port);
	} else {
		snprintf(buf, len, "?");
	}
}

static long long
ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - t0->tv_sec) * 1000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The one decision record; every request ends in exactly one. */
static void
log_decision(struct proxy_conn *c, enum reason r, const char *detail)
{
	struct guard *g = c->g;
	struct log_rec rec;
	const char *addrs[PROXY_LOG_ADDRS];
	size_t i;

	g->decisions[r]++;
	log_rec_begin(&rec, g->log, "decision");
	log_rec_int(&rec, "id", (long long)c->id);
	log_rec_str(&rec, "client", c->client);
	log_rec_str(&rec, "proto", c->proto);
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

static void
linger_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_free(arg);
}

/* After the deny response: discard what the client still sends until it
 * closes or the linger timer fires. Closing with unread input would send
 * a RST that can destroy the response before the client reads it. */
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

/* Ends a request that was not admitted: log, answer, close. */
static void
proxy_deny(struct proxy_conn *c, enum reason r, const char *detail)
{
	struct evbuffer *out;
	struct timeval tv = { PROXY_LINGER_S, 0 };
	char body[DEST_HOST_MAX + 160];
	int status = reason_status(r);

	log_decision(c, r, detail);
	resolver_cancel(c->rq);
	c->rq = NULL;
	dial_cancel(c->dial);
	c->dial = NULL;
	c->state = ST_LINGER;
	evtimer_del(c->timer);
	evtimer_assign(c->timer, c->g->base, linger_cb, c);
	if (status == 0 || strcmp(c->proto, "socks5") == 0) {
		/* No HTTP answer to give: close from the loop, so callers
		 * never see c freed under them. */
		tv.tv_sec = 0;
		bufferevent_disable(c->cbev, EV_READ | EV_WRITE);
		evtimer_add(c->timer, &tv);
		return;
	}
	/* The body names only normalised, grammar-checked values. */
	if (c->have_dest)
		snprintf(body, sizeof(body), "egress-guard: %s: %s:%u\n",
		    reason_name(r), c->dest.host, c->dest.port);
	else
		snprintf(body, sizeof(body), "egress-guard: %s\n", reason_name(r));
	out = bufferevent_get_output(c->cbev);
	evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\n"
	    "X-Egress-Guard-Reason: %s\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: %zu\r\n"
	    "Connection: close\r\n"
	    "\r\n%s", status, reason_status_text(r), reason_name(r),
	    strlen(body), body);
	bufferevent_disable(c->cbev, EV_READ);
	bufferevent_setcb(c->cbev, NULL, linger_write_cb, linger_event_cb, c);
	bufferevent_enable(c->cbev, EV_WRITE);
	evtimer_add(c->timer, &tv);
}

static void
relay_done(void *arg, const char *reason)
{
	struct proxy_conn *c = arg;
	struct log_rec rec;
	uint64_t up, down;

	relay_stats(c->relay, &up, &down);
	c->g->bytes_up += up;
	c->g->bytes_down += down;
	log_rec_begin(&rec, c->g->log, "close");
	log_rec_int(&rec, "id", (long long)c->id);
	log_rec_str(&rec, "peer", c->peer);
	log_rec_str(&rec, "reason", reason);
	log_rec_int(&rec, "bytes_up", (long long)up);
	log_rec_int(&rec, "bytes_down", (long long)down);
	log_rec_int(&rec, "duration_ms", ms_since(&c->opened));
	log_emit(c->g->log, &rec);
	conn_free(c);
}

static void
dial_done(void *arg, int fd, size_t idx, int timed_out)
{
	struct proxy_conn *c = arg;
	struct bufferevent *ubev;
	struct sockaddr_storage ss;

	c->dial = NULL;
	if (fd == -1) {
		proxy_deny(c, timed_out ? REASON_UPSTREAM_TIMEOUT :
		    REASON_UPSTREAM_UNREACHABLE, NULL);
		return;
	}
	memset(&ss, 0, sizeof(ss));
	if (c->addrs[idx].family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(c->dest.port);
		memcpy(&s->sin_addr, c->addrs[idx].addr, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(c->dest.port);
		memcpy(&s->sin6_addr, c->addrs[idx].addr, 16);
	}
	sockaddr_str((struct sockaddr *)&ss, c->peer, sizeof(c->peer));
	ubev = bufferevent_socket_new(c->g->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (ubev == NULL) {
		close(fd);
		proxy_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	evbuffer_add_printf(bufferevent_get_output(c->cbev),
	    "HTTP/1.1 200 Connection established\r\n\r\n");
	c->relay = relay_new(c->g->base, c->cbev, ubev, (int)c->g->cfg->idle_timeout,
	    relay_done, c);
	if (c->relay == NULL) {
		bufferevent_free(ubev);
		evbuffer_drain(bufferevent_get_output(c->cbev),
		    evbuffer_get_length(bufferevent_get_output(c->cbev)));
		proxy_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	c->cbev = NULL;		/* owned by the relay now */
	c->state = ST_RELAY;
	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	log_decision(c, c->allow_reason, NULL);
}

/* Classification of every address, then dial the first DIAL_MAX_ADDRS in
 * the order the resolver gave them. */
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

/* Order of checks, always: head → destination syntax → policy →
 * resolution → classification → connect. */
static void
handle_connect(struct proxy_conn *c, const struct http_req *req)
{
	const struct policy *p = c->g->policy;
	struct resolver_addr lit;
	char why[128];
	enum reason r;

	if (dest_parse_authority(req->target, req->target_len, &c->dest, why,
	    sizeof(why)) == -1) {
		proxy_deny(c, REASON_BAD_REQUEST, why);
		return;
	}
	c->have_dest = 1;
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
		lit.family = c->dest.kind == DEST_IPV4 ? AF_INET : AF_INET6;
		memcpy(lit.addr, c->dest.addr, sizeof(lit.addr));
		classify_and_dial(c, &lit, 1);
		return;
	}
	c->state = ST_RESOLVE;
	c->rq = resolver_lookup(c->g->resolver, c->dest.host, resolved, c);
	if (c->rq == NULL)
		proxy_deny(c, REASON_DNS_FAILURE, "out of memory");
}

static void
handle_head(struct proxy_conn *c, const char *buf, size_t len)
{
	struct http_req *req;
	char why[128];
	int status = 400;

	if ((req = malloc(sizeof(*req))) == NULL) {
		proxy_deny(c, REASON_BAD_REQUEST, "out of memory");
		return;
	}
	if (http_parse_head(buf, len, req, &status, why, sizeof(why)) == -1) {
		proxy_deny(c, status == 431 ? REASON_HEADER_TOO_LARGE :
		    REASON_BAD_REQUEST, why);
		goto out;
	}
	if (strcmp(req->method, "CONNECT") == 0) {
		c->proto = "connect";
		handle_connect(c, req);
	} else if (req->target_len >= 8 &&
	    strncasecmp(req->target, "https://", 8) == 0) {
		c->proto = "http";
		proxy_deny(c, REASON_METHOD_NOT_ALLOWED, "https:// absolute-form: use CONNECT");
	} else {
		c->proto = "http";
		proxy_deny(c, REASON_METHOD_NOT_ALLOWED, "only CONNECT is supported");
	}
out:
	free(req);
}

static void
head_read_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t avail = evbuffer_get_length(in), scan;
	const char *buf;
	long end;

	if (c->state != ST_HEAD)
		return;
	scan = avail < HTTP_HEAD_MAX ? avail : HTTP_HEAD_MAX;
	buf = (const char *)evbuffer_pullup(in, (ssize_t)scan);
	if (buf == NULL) {
		proxy_deny(c, REASON_BAD_REQUEST, "out of memory");
		return;
	}
	if (buf[0] == 0x05) {
		/* SOCKS5 greeting: not served yet; close without an HTTP answer. */
		c->proto = "socks5";
		proxy_deny(c, REASON_BAD_REQUEST, "SOCKS5 is not enabled yet");
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
	 * buffer until the tunnel opens. */
	bufferevent_disable(bev, EV_READ);
	evtimer_del(c->timer);
	handle_head(c, buf, (size_t)end);
	/* c is still alive here: every path out of handle_head either waits
	 * on the loop or lingers. */
	evbuffer_drain(in, (size_t)end);
}

static void
head_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	(void)what;
	/* Client went away before its head was complete: nothing decided. */
	conn_free(c);
}

static void
header_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)fd;
	(void)what;
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
	if (c->timer != NULL)
		event_free(c->timer);
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
	c->proto = "connect";
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
	tmp.proto = "connect";
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
		if (c->state != ST_RESOLVE && c->state != ST_DIAL &&
		    c->state != ST_RELAY)
			continue;
		if (reason_is_allow(decide_policy(p, &c->dest)))
			continue;
		n++;
		if (c->state == ST_RELAY) {
			/* relay_done logs the close with reason "revoked". */
			relay_done(c, "revoked");
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
