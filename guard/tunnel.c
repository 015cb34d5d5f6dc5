/* CONNECT and SOCKS5 tunnels: the SNI gate on the client's first bytes
 * and the hand-off of both sockets to guard/relay.c. See guard/tunnel.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "guard/config.h"
#include "guard/conn.h"
#include "guard/relay.h"
#include "proto/socks5.h"
#include "proto/tlshello.h"
#include "guard/tunnel.h"
#include "util/mutant.h"

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
	if (c->tun.hello.verdict == TLSHELLO_MORE) {
		rc = tlshello_feed(&c->tun.hello, b, len);
		if (rc == TLSHELLO_MORE)
			return RELAY_GATE_MORE;
		if (rc == TLSHELLO_NOT_TLS)
			return RELAY_GATE_PASS;
		if ((c->tun.sni_refused = sni_judge(c, rc, c->tun.hello.why,
		    c->tun.hello.sni)) != NULL)
			return RELAY_GATE_CLOSE;
		off = c->tun.hello.pos;
		tlshello_watch_init(&c->tun.watch);
		c->tun.watch.early = c->tun.hello.early_data;
	}
	/* The bytes behind a hello that passed, as far as they are in:
	 * bounded by the watch's counts, each byte looked at once but the
	 * few of a record header the next call may look at again. */
	for (;;) {
		rc = tlshello_watch(&c->tun.watch, b + off, len - off, &n);
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
			if ((c->tun.sni_refused = sni_judge(c, rc, NULL,
			    c->tun.watch.hello.sni)) != NULL)
				return RELAY_GATE_CLOSE;
			continue;
		default:
			c->tun.sni_refused = c->tun.watch.why != NULL ?
			    c->tun.watch.why : "TLS record after the hello";
			return RELAY_GATE_CLOSE;
		}
	}
}

static void
relay_done(void *arg, const char *reason)
{
	struct proxy_conn *c = arg;
	uint64_t up, down;

	relay_stats(c->tun.relay, &up, &down);
	if (c->tun.sni_refused != NULL) {
		reason = "sni_mismatch";
		conn_log_decision(c, REASON_SNI_MISMATCH, c->tun.sni_refused);
	}
	conn_log_close(c, reason, up, down);
	conn_free(c);
}

/* The relay takes both sockets: the client's leaves its bufferevent, with
 * the bytes the client sent after its request (at most a head's worth with
 * the head: a new connection's read watermark, checked by the router on a
 * kept-alive one) handed over as the relay's first. */
void
tunnel_open(struct proxy_conn *c, int ufd)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	unsigned char rep[SOCKS5_REPLY_LEN];
	struct evbuffer *in = bufferevent_get_input(c->cbev);
	size_t elen = evbuffer_get_length(in), glen;
	const void *greet = ok, *early = NULL;
	relay_gate_cb gate = NULL;

	if (c->tp != NULL) {
		glen = 0;	/* redirected: the client expects nothing of ours */
	} else if (c->kind == KIND_SOCKS5) {
		glen = socks5_reply(rep, SOCKS5_REP_SUCCEEDED);
		greet = rep;
	} else {
		glen = sizeof(ok) - 1;
	}
	if (elen > 0 && (early = evbuffer_pullup(in, (ssize_t)elen)) == NULL)
		elen = 0;	/* pullup failed: no memory, refused below */
	/* Every tunnel, literal ones included: a name in their ClientHello
	 * can only be another host's. */
	/* A redirected connection's name is its SNI: always gated. */
	if (c->env.cfg->sni_check || c->tp != NULL) {
		tlshello_init(&c->tun.hello);
		gate = sni_gate;
	}
#ifdef EG_MUTANT_LENIENT_SNI
	if (c->dest.kind != DEST_NAME)
		gate = NULL;
#endif
	if (evbuffer_get_length(in) != elen ||
	    (c->tun.relay = relay_new(c->env.base, bufferevent_getfd(c->cbev), ufd,
	    greet, glen, early, elen, (int)c->env.cfg->idle_timeout, gate,
	    relay_done, c)) == NULL) {
		close(ufd);
		conn_deny(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	/* The socket is the relay's now: free the bufferevent, not the fd. */
	bufferevent_setfd(c->cbev, -1);
	bufferevent_free(c->cbev);
	c->cbev = NULL;
	c->state = ST_RELAY;
	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	conn_log_decision(c, c->allow_reason, NULL);
}

void
tunnel_end(struct proxy_conn *c, const char *reason)
{
	relay_done(c, reason);
}
