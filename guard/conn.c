/* The connection type every path shares: records, answers, finish, free.
 * See guard/conn.h. */
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

#include "guard/config.h"
#include "guard/conn.h"
#include "guard/log.h"
#include "guard/metrics.h"
#include "guard/relay.h"
#include "proto/socks5.h"

void
conn_tunnel_release(struct tunnel *t)
{
	if (t->relay != NULL) {
		relay_free(t->relay);
		t->relay = NULL;
	}
}

void
conn_exchange_release(struct exchange *x)
{
	if (x == NULL)
		return;
	if (x->ubev != NULL) {
		bufferevent_free(x->ubev);
		x->ubev = NULL;
	}
	free(x->fwd);
	x->fwd = NULL;
}

void
conn_exchange_drop(struct proxy_conn *c)
{
	conn_exchange_release(c->ex);
	free(c->ex);
	c->ex = NULL;
}

const char *
conn_kind_proto(enum proxy_kind k)
{
	return k == KIND_HTTP ? "http" : k == KIND_SOCKS5 ? "socks5" : "connect";
}

const char *
conn_proto(const struct proxy_conn *c)
{
	return c->tp != NULL ? "transparent" : conn_kind_proto(c->kind);
}

void
conn_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
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

int
conn_accept_starved(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

int
conn_bind(const struct dest *d, int type)
{
	return conn_bind_dev(d, type, NULL);
}

int
conn_bind_dev(const struct dest *d, int type, const char *device)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1, e;

	memset(&ss, 0, sizeof(ss));
	if (d->kind == DEST_IPV4) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(d->port);
		memcpy(&s->sin_addr, d->addr, 4);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(d->port);
		memcpy(&s->sin6_addr, d->addr, 16);
		sl = sizeof(*s);
	}
	fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* A v6 socket serves exactly its address, never mapped v4. */
	if (ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
#ifdef EG_MUTANT_TENANT_BY_SOURCE
	/* Test-only mutant (make conformance-mutants): no link binding. */
	device = NULL;
#endif
	/* A tenant's listener takes only what arrived on its link: the
	 * kernel matches no packet from another link to it, whatever its
	 * destination address (docs/design.md "Tenants"). */
	if (device != NULL && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, device,
	    (socklen_t)strlen(device) + 1) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void
conn_addr_peer_str(const struct resolver_addr *a, uint16_t port, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	decide_addr_str(a, ip, sizeof(ip));
	snprintf(buf, len, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

long long
conn_usec_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - t0->tv_sec) * 1000000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000;
}

/* The one decision record; every request ends in exactly one (plus a
 * second, deny sni_mismatch, when a tunnel fails the SNI check). */
void
conn_log_decision(struct proxy_conn *c, enum reason r, const char *detail)
{
	struct log_rec rec;
	char abuf[DIAL_MAX_ADDRS][INET6_ADDRSTRLEN];
	const char *addrs[DIAL_MAX_ADDRS];
	size_t i;

	metrics_decision(c->env.metrics, conn_proto(c), r);
	log_rec_begin(&rec, c->env.log, "decision");
	log_rec_int(&rec, "id", (long long)c->id);
	if (c->env.tenant != NULL)
		log_rec_str(&rec, "tenant", c->env.tenant);
	log_rec_str(&rec, "client", c->client);
	log_rec_str(&rec, "proto", conn_proto(c));
	if (c->tp != NULL)	/* what the client dialled: never trusted */
		log_rec_str(&rec, "orig_dst", c->tp->orig_str);
	if (c->have_dest) {
		log_rec_str(&rec, "host", c->dest.host);
		log_rec_int(&rec, "port", c->dest.port);
	} else {
		log_rec_null(&rec, "host");
		log_rec_null(&rec, "port");
	}
	log_rec_str(&rec, "decision", reason_is_allow(r) ? "allow" : "deny");
	log_rec_str(&rec, "reason", reason_name(r));
	for (i = 0; i < c->naddrs; i++) {
		decide_addr_str(&c->addrs[i], abuf[i], sizeof(abuf[i]));
		addrs[i] = abuf[i];
	}
	log_rec_strv(&rec, "addrs", addrs, c->naddrs);
	if (reason_is_allow(r))
		log_rec_str(&rec, "peer", c->peer);
	if (detail != NULL && detail[0] != '\0')
		log_rec_str(&rec, "detail", detail);
	log_rec_policy(&rec, c->epoch, c->digest);
	log_emit(c->env.log, &rec);
}

/* The close record of an admitted tunnel or HTTP exchange. */
void
conn_log_close(struct proxy_conn *c, const char *reason, uint64_t up, uint64_t down)
{
	struct log_rec rec;

	metrics_bytes(c->env.metrics, up, down);
	log_rec_begin(&rec, c->env.log, "close");
	log_rec_int(&rec, "id", (long long)c->id);
	if (c->env.tenant != NULL)
		log_rec_str(&rec, "tenant", c->env.tenant);
	log_rec_str(&rec, "peer", c->peer);
	log_rec_str(&rec, "reason", reason);
	log_rec_int(&rec, "bytes_up", (long long)up);
	log_rec_int(&rec, "bytes_down", (long long)down);
	log_rec_int(&rec, "duration_ms", conn_usec_since(&c->opened) / 1000);
	log_emit(c->env.log, &rec);
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

/* A write timeout (the client took no byte of what is queued for it for
 * --idle-timeout) resets: a FIN would end the bytes it never got as if
 * they were all. */
static void
linger_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & BEV_EVENT_TIMEOUT)
		conn_reset(arg);
	else
		conn_free(arg);
}

/* Everything queued is the kernel's: end the sending side, and linger. */
static void
linger_write_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;
	struct timeval tv = { PROXY_LINGER_S, 0 };

	if (evbuffer_get_length(bufferevent_get_output(bev)) != 0)
		return;
	(void)shutdown(bufferevent_getfd(bev), SHUT_WR);
	bufferevent_setcb(bev, linger_read_cb, NULL, linger_event_cb, c);
	bufferevent_enable(bev, EV_READ);
	evtimer_add(c->timer, &tv);
}

/* Cancels c's lookup, if one is in flight, and uncounts it. */
static void
conn_lookup_cancel(struct proxy_conn *c)
{
	if (c->rq == NULL)
		return;
	resolver_cancel(c->rq);
	c->rq = NULL;
	(*c->env.lookups)--;
}

/* Flushes what is queued for the client, then closes. Stops everything
 * else the connection was doing. The linger starts once the last byte is
 * written: a client reading slowly gets every byte however long that
 * takes, as long as it takes some within every --idle-timeout (the
 * exchange's write timeout, kept). */
void
conn_finish(struct proxy_conn *c)
{
	struct timeval idle = { c->env.cfg->idle_timeout, 0 };

	conn_lookup_cancel(c);
	dial_cancel(c->dial);
	c->dial = NULL;
	conn_exchange_release(c->ex);
	c->state = ST_LINGER;
	evtimer_del(c->timer);
	evtimer_assign(c->timer, c->env.base, linger_cb, c);
	bufferevent_disable(c->cbev, EV_READ);
	bufferevent_set_timeouts(c->cbev, NULL, &idle);
	/* The write callback only for an empty buffer: it has nothing to do
	 * before. */
	bufferevent_setwatermark(c->cbev, EV_WRITE, 0, 0);
	bufferevent_setcb(c->cbev, NULL, linger_write_cb, linger_event_cb, c);
	/* Nothing queued: the write callback would never run, and arming
	 * EV_WRITE would cost an epoll change and a loop pass for nothing. */
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0)
		linger_write_cb(c->cbev, c);
	else
		bufferevent_enable(c->cbev, EV_WRITE);
}

/* A socket with room (nearly always, one request at a time) takes the
 * bytes at once: no loop pass waiting for EPOLLOUT, no epoll change to
 * arm and disarm it (issue 17). EV_WRITE on means bytes already wait for
 * room: these keep their turn behind them. */
void
conn_send_now(struct bufferevent *bev)
{
	struct evbuffer *out = bufferevent_get_output(bev);

	if (evbuffer_get_length(out) == 0 ||
	    (bufferevent_get_enabled(bev) & EV_WRITE) != 0)
		return;
	/* A socket bufferevent keeps its output's front frozen: only its own
	 * write may drain it. Thaw it for this one write, as that write does. */
	if (evbuffer_unfreeze(out, 1) == 0) {
		(void)evbuffer_write(out, bufferevent_getfd(bev));
		(void)evbuffer_freeze(out, 1);
	}
	if (evbuffer_get_length(out) > 0)
		bufferevent_enable(bev, EV_WRITE);
}

/* Called by the write callbacks: with nothing left, the next bytes go
 * out at once again (conn_send_now). */
void
conn_send_drained(struct bufferevent *bev)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		bufferevent_disable(bev, EV_WRITE);
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
void
conn_answer_http(struct proxy_conn *c, enum reason r)
{
	char body[DEST_HOST_MAX + 160], hp[DEST_HOST_MAX + 16];

	/* The body names only normalised, grammar-checked values, an IPv6
	 * host in brackets (a bare one would read as another address). */
	if (c->have_dest && dest_format(&c->dest, hp, sizeof(hp)) != -1)
		snprintf(body, sizeof(body), "egress-guard: %s: %s\n",
		    reason_name(r), hp);
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
void
conn_deny_with(struct proxy_conn *c, enum reason r, const char *detail, int socks_rep)
{
	int status = reason_status(r);

	conn_log_decision(c, r, detail);
	if (c->kind == KIND_SOCKS5) {
		unsigned char rep[SOCKS5_REPLY_LEN];
		size_t n = socks5_reply(rep, socks_rep >= 0 ?
		    (unsigned char)socks_rep : socks_code(r));
		/* Before the request was read there is no reply to give. */
		if (c->state == ST_RESOLVE || c->state == ST_DIAL ||
		    c->state == ST_SOCKS_REQ)
			evbuffer_add(bufferevent_get_output(c->cbev), rep, n);
		conn_finish(c);
		return;
	}
	/* A redirected client that did not speak HTTP expects no answer of
	 * ours: it is closed. */
	if (status != 0 && (c->ex == NULL || !c->ex->resp_started) &&
	    (c->tp == NULL || c->tp->kind == TRANSP_HTTP))
		conn_answer_http(c, r);
	conn_finish(c);
}

void
conn_deny(struct proxy_conn *c, enum reason r, const char *detail)
{
	conn_deny_with(c, r, detail, -1);
}

void
conn_reset(struct proxy_conn *c)
{
	static const struct linger reset = { 1, 0 };

	if (c->cbev != NULL)
		(void)setsockopt(bufferevent_getfd(c->cbev), SOL_SOCKET, SO_LINGER,
		    &reset, sizeof(reset));
	conn_free(c);
}

void
conn_free(struct proxy_conn *c)
{
	struct conn_env env;

	if (c == NULL)
		return;
	env = c->env;
	conn_lookup_cancel(c);
	dial_cancel(c->dial);
	conn_tunnel_release(&c->tun);
	if (c->cbev != NULL)
		bufferevent_free(c->cbev);
	conn_exchange_drop(c);
	if (c->timer != NULL)
		event_free(c->timer);
	env.detach(env.owner, c);
	free(c);
	env.closed(env.owner);
}
