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

/* The TLS SNI check on the client's first bytes: a TLS-shaped stream
 * must open with one well-formed ClientHello naming the CONNECT host, or
 * (a literal tunnel: RFC 6066 allows no address in SNI) naming nothing.
 * Plain bytes pass. */
static enum relay_gate
sni_gate(void *arg, const unsigned char *b, size_t len)
{
	struct proxy_conn *c = arg;

	switch (tlshello_feed(&c->tun.hello, b, len)) {
	case TLSHELLO_MORE:
		return RELAY_GATE_MORE;
	case TLSHELLO_NOT_TLS:
	case TLSHELLO_NO_SNI:
		return RELAY_GATE_PASS;
	case TLSHELLO_SNI:
		if (c->dest.kind == DEST_NAME &&
		    strcmp(c->tun.hello.sni, c->dest.host) == 0)
			return RELAY_GATE_PASS;
		break;
	default:
		break;
	}
	c->tun.sni_failed = 1;
	return RELAY_GATE_CLOSE;
}

/* Why the gate closed the tunnel, for the decision's detail. */
static const char *
sni_detail(const struct proxy_conn *c)
{
	if (c->tun.hello.verdict != TLSHELLO_SNI)
		return c->tun.hello.why != NULL ? c->tun.hello.why : "not a TLS ClientHello";
	if (c->dest.kind != DEST_NAME)
		return "TLS server name on an IP-literal tunnel";
	return "TLS server name differs from the destination";
}

static void
relay_done(void *arg, const char *reason)
{
	struct proxy_conn *c = arg;
	uint64_t up, down;

	relay_stats(c->tun.relay, &up, &down);
	if (c->tun.sni_failed) {
		reason = "sni_mismatch";
		conn_log_decision(c, REASON_SNI_MISMATCH, sni_detail(c));
	}
	conn_log_close(c, reason, up, down);
	conn_free(c);
}

/* The relay takes both sockets: the client's leaves its bufferevent, with
 * the bytes the client sent after its request (at most a head's worth: the
 * bufferevent's read watermark) handed over as the relay's first. */
void
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
	if (c->env.cfg->sni_check) {
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
tunnel_revoke(struct proxy_conn *c)
{
	relay_done(c, "revoked");
}
