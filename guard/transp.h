/* Transparent mode: connections that nft redirected to a --transparent
 * listener. The original destination comes from the kernel and is only
 * logged (and, for a ClientHello without a name, decided as an IP
 * literal); the name comes from the first bytes: the TLS SNI or the HTTP
 * Host. The decision is then the router's, like every other path's. */
#ifndef EG_TRANSP_H
#define EG_TRANSP_H

struct evbuffer;
struct proxy_conn;

#define TRANSP_REFUSED	(-1)	/* c was denied (it lingers or is gone) */
#define TRANSP_MORE	0	/* wait for more bytes */
#define TRANSP_ROUTE	1	/* c->dest is set: route it */

/* Right after accept: reads the original destination of fd (c's client
 * socket) and refuses a connection without one, or one whose original
 * destination is one of the guard's own listeners (a loop). Returns 0 or
 * TRANSP_REFUSED. */
int transp_begin(struct proxy_conn *c, int fd);
/* A redirected connection's state before its first bytes and its
 * original destination are known (also the overloaded line's). */
void transp_conn_init(struct transp_conn *t);

/* The client's bytes so far (in): identity from the first bytes, or the
 * next request on a kept-alive HTTP connection, pinned to the first
 * one's Host. A ClientHello stays in `in` (the tunnel's SNI gate walks
 * it again and sends it first); an HTTP head is taken off it. */
int transp_read(struct proxy_conn *c, struct evbuffer *in);

#endif
