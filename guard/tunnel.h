/* CONNECT and SOCKS5 tunnels: SNI gate, relay hand-off. */
#ifndef EG_TUNNEL_H
#define EG_TUNNEL_H

struct proxy_conn;

/* The upstream ufd is connected and c admitted: answer the client, hand
 * both sockets to a relay (behind the SNI gate when configured) and log
 * the allow decision. Takes ufd; on failure denies c. */
void tunnel_open(struct proxy_conn *c, int ufd);

/* Closes a live tunnel that policy no longer admits ("revoked"); frees c. */
void tunnel_revoke(struct proxy_conn *c);

#endif
