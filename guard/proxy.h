/* The router: accept a client connection, read and validate its head,
 * decide, resolve, classify, dial, then hand it to a tunnel
 * (guard/tunnel.c) or an exchange (guard/exchange.c). */
#ifndef EG_PROXY_H
#define EG_PROXY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct classify_cfg;
struct config;
struct event_base;
struct log;
struct metrics;
struct policy;
struct proxy;
struct resolver;
struct sockaddr;

/* What the router needs from the daemon, handed in at proxy_new: the
 * router never includes guard/guard.h nor calls into guard/guard.c. */
struct proxy_env {
	struct event_base	*base;
	const struct config	*cfg;
	struct log		*log;
	struct metrics		*metrics;
	struct classify_cfg	*classify;
	struct resolver		*resolver;
	const int		*stopping;	/* the daemon is draining */
	/* Live connections of every worker: one bound (--max-conns) for
	 * all, counted here. */
	_Atomic uint64_t	*nconns;
	_Atomic uint64_t	*next_id;	/* the last request id, all workers */
	void			*arg;
	/* The active policy (NULL: deny everything), read per request. */
	const struct policy	*(*policy)(void *arg);
	/* A connection ended (a draining daemon may exit). */
	void			 (*closed)(void *arg);
	/* Tenant mode (docs/design.md "Tenants"): the tenant every line of
	 * this router names (NULL: none), and its own bounds, beside
	 * --max-conns: connections (0: none) and lookups in flight (0:
	 * none but the resolver's). */
	const char		*tenant;
	unsigned		 max_live;
	unsigned		 max_lookups;
};

/* NULL on allocation failure. */
struct proxy *proxy_new(const struct proxy_env *env);
/* Frees every connection, then px; NULL does nothing. */
void proxy_free(struct proxy *px);

/* Takes ownership of fd (accepted, non-blocking). At --max-conns (all
 * workers together) it is answered 503 overloaded and closed instead. */
void proxy_accept(struct proxy *px, int fd, const struct sockaddr *sa, int salen);

/* This router's live connections, and its lookups in flight. */
uint64_t proxy_live(const struct proxy *px);
unsigned proxy_lookups(const struct proxy *px);

/* Closes the live connections that p no longer admits, with reason
 * "revoked"; returns how many. */
size_t proxy_revoke(struct proxy *px, const struct policy *p);

/* The same, for a connection from a --transparent listener
 * (guard/transp.c): refused without its original destination. */
void proxy_accept_transparent(struct proxy *px, int fd, const struct sockaddr *sa,
    int salen);

/* Answers 503 overloaded on a connection that is not admitted as a
 * proxy_conn at all (at --max-conns), then closes it; a transparent one
 * (from a --transparent listener) is closed without an answer. */
void proxy_reject_overloaded(struct proxy *px, int fd, const struct sockaddr *sa,
    int salen, int transparent);

/* Frees every connection; an admitted one gets its close line with
 * reason (shutdown, tenant_removed). */
void proxy_close_all(struct proxy *px, const char *reason);

#endif
