/* One client connection: the type every path shares (head, tunnel,
 * exchange), its decision and close records, the deny answers, finish
 * and free. The bottom layer: it calls up only through struct conn_env,
 * handed in by guard/proxy.c when the connection is made. */
#ifndef EG_CONN_H
#define EG_CONN_H

#include <sys/queue.h>
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/util.h>

#include "proto/chunked.h"
#include "guard/decide.h"
#include "guard/dial.h"
#include "proto/http.h"
#include "proto/tlshello.h"
#include "policy/policy.h"
#include "resolver/resolver.h"

#define PROXY_LINGER_S		2	/* after the last byte: drain the client, then close */

struct bufferevent;
struct event;
struct event_base;
struct config;
struct log;
struct metrics;
struct relay;
struct proxy;
struct proxy_conn;

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

/* A connection from a --transparent listener (guard/transp.c): what its
 * first bytes turned out to be. */
enum transp_kind { TRANSP_FIRST = 1, TRANSP_TLS, TRANSP_HTTP };

/* What the lower layers need from the daemon, and the calls back up to
 * the router (guard/proxy.c), handed in when the connection is made:
 * no file below the router reads struct guard or calls into it. */
struct conn_env {
	struct event_base	*base;
	const struct config	*cfg;
	struct log		*log;
	struct metrics		*metrics;
	const int		*stopping;	/* the guard is draining */
	void			*owner;		/* the router's context */
	const char		*tenant;	/* named in every line; NULL: none */
	unsigned		*lookups;	/* the router's, while c->rq is set */
	/* Unlinks c from the owner's list, just before it is freed. */
	void	(*detach)(void *owner, struct proxy_conn *c);
	/* After a connection was freed (a draining guard may exit). */
	void	(*closed)(void *owner);
	/* Reading a head: the client's callbacks and its timer. */
	void	(*head_read)(struct bufferevent *bev, void *arg);
	void	(*head_event)(struct bufferevent *bev, short what, void *arg);
	void	(*header_timeout)(evutil_socket_t fd, short what, void *arg);
	/* A dial (or a re-dial of a pooled upstream) ended. */
	dial_cb	 dial_done;
	/* A fresh request id (a further request on a kept-alive connection). */
	uint64_t (*new_id)(void *owner);
};

/* Transparent mode: the original destination (from the kernel, logged,
 * never dialled for a name) and the Host a kept-alive HTTP connection is
 * pinned to. */
struct transp_conn {
	enum transp_kind	 kind;
	struct resolver_addr	 orig;
	uint16_t		 orig_port;
	char			 orig_str[INET6_ADDRSTRLEN + 8];
	int			 pinned;
	struct dest		 pin;
};

/* A CONNECT or SOCKS5 tunnel (guard/tunnel.c). */
struct tunnel {
	struct relay		*relay;
	const char		*sni_refused;	/* why the SNI gate closed */
	struct tlshello		 hello;		/* the SNI gate's walk */
	struct tlshello_watch	 watch;		/* and its watch after the hello */
};

/* Absolute-form HTTP (guard/exchange.c): the upstream outlives one
 * exchange only when the next request is for the same (host, port,
 * address). */
struct exchange {
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
	int			 keep_client;	/* the client outlives this exchange */
	int			 resp_started;	/* bytes of a response reached the client */
	uint64_t		 up, down;
	unsigned		 served;	/* exchanges completed on this connection */
	int			 reused;	/* this exchange rides a pooled upstream */
	int			 retrying;	/* second try on a fresh upstream */
	int			 decided;	/* this request's allow line is written */
};

struct proxy_conn {
	struct proxy		*px;		/* the router's; opaque below */
	struct conn_env		 env;
	TAILQ_ENTRY(proxy_conn)	 link;
	uint64_t		 id;		/* of the current request */
	enum proxy_state	 state;
	enum proxy_kind		 kind;
	struct bufferevent	*cbev;		/* client; NULL once a relay owns it */
	struct event		*timer;		/* header timeout, then linger */
	struct resolver_query	*rq;
	struct dial		*dial;
	char			 client[INET6_ADDRSTRLEN + 8];
	char			 peer[INET6_ADDRSTRLEN + 8];
	int			 have_dest;
	struct dest		 dest;
	enum reason		 allow_reason;
	long long		 epoch;		/* policy at decision time */
	char			 digest[POLICY_DIGEST_LEN + 1];
	struct resolver_addr	 addrs[DIAL_MAX_ADDRS];
	size_t			 naddrs;
	struct timespec		 opened;	/* tunnel or exchange start */
	struct timespec		 dns_start;
	struct tunnel		 tun;
	struct exchange		*ex;		/* NULL until an absolute-form request */
	/* Only a --transparent listener's connection has one, allocated
	 * with it (struct proxy_conn_tp): NULL marks every other. */
	struct transp_conn	*tp;
};

/* A transparent connection and its transparent state, one allocation:
 * the state costs nothing to the connections of other listeners (an
 * idle tunnel's memory is mostly its proxy_conn). */
struct proxy_conn_tp {
	struct proxy_conn	 c;
	struct transp_conn	 tp;
};

/* Frees what the tunnel / the exchange holds; safe on a cleared or
 * already released one. */
void conn_tunnel_release(struct tunnel *t);
void conn_exchange_release(struct exchange *x);
/* Releases and frees c's exchange state (NULL after). */
void conn_exchange_drop(struct proxy_conn *c);

const char *conn_kind_proto(enum proxy_kind k);
/* The log's proto of c: "transparent" or its kind's. */
const char *conn_proto(const struct proxy_conn *c);
void conn_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len);
/* A non-blocking, close-on-exec socket of type bound to d (an IP literal
 * and port; IPv6 only for v6). Returns the fd, or -1 with errno. */
int conn_bind(const struct dest *d, int type);
/* The same, the socket bound to the interface device first
 * (SO_BINDTODEVICE; NULL: none): a tenant's listener. */
int conn_bind_dev(const struct dest *d, int type, const char *device);
/* 1 when an accept failed with errno e for want of this host's
 * descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): accepting again
 * at once would spin, so the listener pauses. */
int conn_accept_starved(int e);
void conn_addr_peer_str(const struct resolver_addr *a, uint16_t port, char *buf,
    size_t len);
long long conn_usec_since(const struct timespec *t0);

/* The one decision record; every request ends in exactly one (plus a
 * second, deny sni_mismatch, when a tunnel fails the SNI check). */
void conn_log_decision(struct proxy_conn *c, enum reason r, const char *detail);
/* The close record of an admitted tunnel or HTTP exchange. */
void conn_log_close(struct proxy_conn *c, const char *reason, uint64_t up,
    uint64_t down);

/* Flushes what is queued for the client, then closes: a FIN once the
 * last byte is written, then PROXY_LINGER_S of discarding what the client
 * sends; a reset if the client takes no byte for --idle-timeout. */
void conn_finish(struct proxy_conn *c);
/* Writes what bev has queued now instead of after its next writable
 * event, unless its EV_WRITE is on (bytes already wait for room); what
 * the socket does not take (and any error) is left to the bufferevent,
 * whose EV_WRITE this turns on. Users keep EV_WRITE off while nothing
 * waits: off before queueing, conn_send_drained in the write callback. */
void conn_send_now(struct bufferevent *bev);
void conn_send_drained(struct bufferevent *bev);
/* Queues the HTTP answer for reason r. */
void conn_answer_http(struct proxy_conn *c, enum reason r);
/* Ends a request that was not admitted: log, answer in the client's
 * protocol, close. socks_rep overrides the SOCKS5 reply code (-1: from r). */
void conn_deny_with(struct proxy_conn *c, enum reason r, const char *detail,
    int socks_rep);
void conn_deny(struct proxy_conn *c, enum reason r, const char *detail);

/* Frees c and everything it holds; NULL does nothing. */
void conn_free(struct proxy_conn *c);
/* conn_free, the client's connection ending in a reset (SO_LINGER 0),
 * what it was sent and not yet acknowledged dropped: for an end that a
 * FIN would make look like a whole answer. */
void conn_reset(struct proxy_conn *c);

#endif
