/* CONNECT and SOCKS5 tunnels: SNI gate, relay hand-off. */
#ifndef EG_TUNNEL_H
#define EG_TUNNEL_H

struct proxy_conn;

/* The upstream ufd is connected and c admitted: answer the client, hand
 * both sockets to a relay (behind the SNI gate when configured) and log
 * the allow decision. Takes ufd; on failure denies c. */
void tunnel_open(struct proxy_conn *c, int ufd);

/* Closes a live tunnel from outside its relay: policy no longer admits
 * it ("revoked"), or the guard is stopping ("shutdown"). Logs its close
 * line and frees c. */
void tunnel_end(struct proxy_conn *c, const char *reason);

#endif
