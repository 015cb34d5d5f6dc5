/* Transparent mode: the original destination, the guard's own listeners
 * (a loop), and identity from the first bytes. See guard/transp.h and
 * docs/design.md "Transparent mode". */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "guard/config.h"
#include "guard/conn.h"
#include "guard/exchange.h"
#include "guard/transp.h"
#include "proto/http.h"
#include "proto/tlshello.h"

/* <linux/netfilter_ipv4.h> and <linux/netfilter_ipv6/ip6_tables.h> name
 * these; both headers clash with <netinet/in.h>, and the values are ABI. */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST		80
#endif
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST	80
#endif

/* The address and port of a sockaddr (AF_INET or AF_INET6); -1 else. */
static int
sa_addr(const struct sockaddr_storage *ss, struct resolver_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;
		a->family = AF_INET;
		memcpy(a->addr, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;
		a->family = AF_INET6;
		memcpy(a->addr, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		return 0;
	}
	return -1;
}

static int
addr_eq(const struct resolver_addr *a, uint16_t aport, int family,
    const unsigned char *addr, uint16_t port)
{
	return a->family == family && aport == port &&
	    memcmp(a->addr, addr, family == AF_INET ? 4 : 16) == 0;
}

/* The original destination is one of the guard's own listeners: serving
 * it would connect the guard to itself. */
static int
is_loop(const struct proxy_conn *c, const struct resolver_addr *local,
    uint16_t lport)
{
	const struct config *cfg = c->env.cfg;
	const struct dest *d;
	size_t i;

	if (addr_eq(&c->tp->orig, c->tp->orig_port, local->family, local->addr, lport))
		return 1;
	for (i = 0; i < cfg->nlisten + cfg->ntransparent; i++) {
		d = i < cfg->nlisten ? &cfg->listen[i] : &cfg->transparent[i - cfg->nlisten];
		if (addr_eq(&c->tp->orig, c->tp->orig_port,
		    d->kind == DEST_IPV4 ? AF_INET : AF_INET6, d->addr, d->port))
			return 1;
	}
	return 0;
}

void
transp_conn_init(struct transp_conn *t)
{
	memset(t, 0, sizeof(*t));
	t->kind = TRANSP_FIRST;
	snprintf(t->orig_str, sizeof(t->orig_str), "-");
}

int
transp_begin(struct proxy_conn *c, int fd)
{
	struct sockaddr_storage ss, ls;
	socklen_t sl = sizeof(ss), ll = sizeof(ls);
	struct resolver_addr local;
	uint16_t lport;
	int rc;

	transp_conn_init(c->tp);
	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ls, &ll) == -1 ||
	    sa_addr(&ls, &local, &lport) == -1) {
		conn_deny(c, REASON_NO_ORIGINAL_DST, "no local address");
		return TRANSP_REFUSED;
	}
	/* Conntrack's answer: the destination before nft's redirect. */
	if (ls.ss_family == AF_INET)
		rc = getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &ss, &sl);
	else
		rc = getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &ss, &sl);
	if (rc == -1 || ss.ss_family != ls.ss_family ||
	    sa_addr(&ss, &c->tp->orig, &c->tp->orig_port) == -1) {
		conn_deny(c, REASON_NO_ORIGINAL_DST, "the kernel knows no original "
		    "destination (not redirected, or no conntrack entry)");
		return TRANSP_REFUSED;
	}
	conn_sockaddr_str((const struct sockaddr *)&ss, c->tp->orig_str,
	    sizeof(c->tp->orig_str));
	if (is_loop(c, &local, lport)) {
		conn_deny(c, REASON_TRANSPARENT_LOOP, "the original destination is "
		    "the guard's own listener");
		return TRANSP_REFUSED;
	}
	return 0;
}

/* Stops reading: the decision runs on the bytes in, nothing more. */
static void
stop_reading(struct proxy_conn *c)
{
	bufferevent_disable(c->cbev, EV_READ);
	evtimer_del(c->timer);
}

/* A ClientHello with no server name: decided as the IP literal of the
 * original destination, which the policy must name. */
static int
dest_from_orig(struct proxy_conn *c)
{
	char ip[INET6_ADDRSTRLEN], why[128];

	decide_addr_str(&c->tp->orig, ip, sizeof(ip));
	if (dest_parse_host(ip, strlen(ip), 0, &c->dest, why, sizeof(why)) == -1) {
		conn_deny(c, REASON_UNIDENTIFIED, why);
		return TRANSP_REFUSED;
	}
	c->dest.port = c->tp->orig_port;
	return TRANSP_ROUTE;
}

/* The first bytes are TLS-shaped (or, not TLS, still undecided): the
 * ClientHello's walk, kept across calls in c->tun.hello. */
static int
read_tls(struct proxy_conn *c, const unsigned char *b, size_t n)
{
	char why[128];
	int rc;

	rc = tlshello_feed(&c->tun.hello, b, n);
	switch (rc) {
	case TLSHELLO_MORE:
		return TRANSP_MORE;
	case TLSHELLO_NOT_TLS:
		/* An HTTP method is a token; every method in use is upper
		 * case letters. */
		if (b[0] >= 'A' && b[0] <= 'Z') {
			c->tp->kind = TRANSP_HTTP;
			return TRANSP_MORE;	/* the caller reads a head */
		}
		conn_deny(c, REASON_UNIDENTIFIED, "neither a TLS ClientHello nor an "
		    "HTTP request");
		return TRANSP_REFUSED;
	case TLSHELLO_SNI:
		if (dest_parse_host(c->tun.hello.sni, strlen(c->tun.hello.sni), 0,
		    &c->dest, why, sizeof(why)) == -1 || c->dest.kind != DEST_NAME) {
			conn_deny(c, REASON_SNI_MISMATCH, "TLS server name is not a "
			    "host name");
			return TRANSP_REFUSED;
		}
		c->dest.port = c->tp->orig_port;
		c->tp->kind = TRANSP_TLS;
		c->kind = KIND_CONNECT;
		stop_reading(c);
		return TRANSP_ROUTE;
	case TLSHELLO_NO_SNI:
		c->tp->kind = TRANSP_TLS;
		c->kind = KIND_CONNECT;
		stop_reading(c);
		return dest_from_orig(c);
	default:
		/* The SNI gate's strictness: ECH, two names, an alert or a
		 * record that is not a whole ClientHello. */
		conn_deny(c, REASON_SNI_MISMATCH, c->tun.hello.why != NULL ?
		    c->tun.hello.why : "not a TLS ClientHello");
		return TRANSP_REFUSED;
	}
}

/* One origin-form request head, parsed and checked whole; its Host is
 * the destination, and on a kept-alive connection it must be the first
 * request's. */
static int
take_http_head(struct proxy_conn *c, struct evbuffer *in, const char *buf,
    size_t len)
{
	struct http_req *req;
	const char *path;
	size_t path_len;
	char why[128];
	int status = 400, rc = TRANSP_REFUSED;

	if ((req = malloc(sizeof(*req))) == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return TRANSP_REFUSED;
	}
	c->kind = KIND_HTTP;
	if (http_parse_head(buf, len, req, &status, why, sizeof(why)) == -1) {
		conn_deny(c, status == 431 ? REASON_HEADER_TOO_LARGE :
		    REASON_BAD_REQUEST, why);
		goto out;
	}
	if (strcmp(req->method, "CONNECT") == 0) {
		conn_deny(c, REASON_BAD_REQUEST, "CONNECT on a transparent listener");
		goto out;
	}
	if (http_parse_origin(req, c->tp->orig_port, &c->dest, &path, &path_len,
	    why, sizeof(why)) == -1) {
		conn_deny(c, REASON_BAD_REQUEST, why);
		goto out;
	}
	if (c->tp->pinned && (c->dest.port != c->tp->pin.port ||
	    strcmp(c->dest.host, c->tp->pin.host) != 0)) {
		c->have_dest = 1;	/* the log names the Host refused */
		conn_deny(c, REASON_HOST_CHANGED, "Host differs from the first "
		    "request's on this connection");
		goto out;
	}
	if (!exchange_prepare(c, req, path, path_len))
		goto out;
	c->tp->pin = c->dest;
	c->tp->pinned = 1;
	evbuffer_drain(in, len);
	rc = TRANSP_ROUTE;
out:
	free(req);
	return rc;
}

int
transp_read(struct proxy_conn *c, struct evbuffer *in)
{
	size_t avail = evbuffer_get_length(in), scan;
	const unsigned char *b;
	long end;
	int rc;

	if (avail == 0)
		return TRANSP_MORE;
	if (c->tp->kind == TRANSP_FIRST) {
		scan = avail < TLSHELLO_INPUT_MAX ? avail : TLSHELLO_INPUT_MAX;
		if ((b = evbuffer_pullup(in, (ssize_t)scan)) == NULL) {
			conn_deny(c, REASON_BAD_REQUEST, "out of memory");
			return TRANSP_REFUSED;
		}
		rc = read_tls(c, b, scan);
		if (c->tp->kind != TRANSP_HTTP || rc != TRANSP_MORE)
			return rc;
	}
	if (c->tp->kind != TRANSP_HTTP)	/* a tunnel reads no further heads */
		return TRANSP_MORE;
	scan = avail < HTTP_HEAD_MAX ? avail : HTTP_HEAD_MAX;
	if ((b = evbuffer_pullup(in, (ssize_t)scan)) == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return TRANSP_REFUSED;
	}
	end = http_head_end((const char *)b, scan);
	if (end == -1) {
		conn_deny(c, REASON_BAD_REQUEST, "bare CR, bare LF or NUL in head");
		return TRANSP_REFUSED;
	}
	if (end == 0) {
		if (avail >= HTTP_HEAD_MAX) {
			conn_deny(c, REASON_HEADER_TOO_LARGE, NULL);
			return TRANSP_REFUSED;
		}
		return TRANSP_MORE;
	}
	stop_reading(c);
	return take_http_head(c, in, (const char *)b, (size_t)end);
}
