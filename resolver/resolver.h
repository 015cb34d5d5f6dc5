/* c-ares driven by the libevent loop: A and AAAA for one exact name, from
 * the guard's own resolvers only, never from /etc/hosts, search domains or
 * HOSTALIASES. No cache: every lookup asks the servers (c-ares 1.23+'s
 * query cache is turned off; a build whose headers lack that option
 * refuses to start on a library that has it). */
#ifndef EG_RESOLVER_H
#define EG_RESOLVER_H

#include <stddef.h>

struct event_base;

#define RESOLVER_MAX_ANSWERS	1024	/* more than this is refused */
/* Lookups one resolver (one worker) holds at once, cancelled ones
 * included: a cancelled lookup's queries run on in c-ares until it lets
 * go of them, and a client that disconnects and asks again must not add
 * queries without bound. Beyond it a lookup fails at once ("too many
 * lookups in flight") without a query. The default --max-conns. */
#define RESOLVER_MAX_LIVE	4096
#define RESOLVER_TRY_MIN_MS	100	/* floor of c-ares' per-try timeout */

struct resolver_addr {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	addr[16];
};

enum resolver_status {
	RESOLVER_OK = 0,	/* n >= 1 addresses, every answer of both types */
	RESOLVER_FAILURE,	/* NXDOMAIN, SERVFAIL, no A/AAAA, bad answer */
	RESOLVER_TIMEOUT	/* a resolver did not answer in time */
};

/* Called once, from the event loop, never from inside resolver_lookup.
 * addrs holds every A answer then every AAAA answer (all of them: the
 * caller classifies every one); it is valid only during the call. detail
 * names the failure ("NXDOMAIN", "SERVFAIL", …) or is "" on success. */
typedef void (*resolver_cb)(void *arg, enum resolver_status st,
    const struct resolver_addr *addrs, size_t n, const char *detail);

struct resolver;
struct resolver_query;

/* servers: "ip[:port],[ip6]:port,…" in c-ares CSV form, or NULL for
 * /etc/resolv.conf's nameservers (none there: refused, never c-ares'
 * 127.0.0.1 default). timeout_ms bounds a whole lookup. */
struct resolver *resolver_new(struct event_base *base, const char *servers,
    int timeout_ms, char *err, size_t errlen);
void resolver_free(struct resolver *r);

/* Starts A and AAAA queries for name (already normalised, no trailing
 * dot). Returns a handle, or NULL on allocation failure. */
struct resolver_query *resolver_lookup(struct resolver *r, const char *name,
    resolver_cb cb, void *arg);

/* The callback will not be called after this. Safe on NULL. */
void resolver_cancel(struct resolver_query *q);

/* As resolver_cancel, and done(arg) is called once the lookup is freed,
 * that is once c-ares has called back for both its queries (possibly
 * before this returns): a caller with a bound of its own keeps a
 * cancelled lookup counted until then. resolver_cancel(q) later drops
 * done too (the caller is going away). */
void resolver_cancel_notify(struct resolver_query *q, void (*done)(void *),
    void *arg);

/* Lookups held now, cancelled ones included (see RESOLVER_MAX_LIVE). */
size_t resolver_live(const struct resolver *r);

/* The per-try timeout given to c-ares for a lookup bounded by
 * timeout_ms with nservers servers. Pure. */
int resolver_try_ms(int timeout_ms, size_t nservers);

/* How many "nameserver" lines c-ares would take from resolv.conf text.
 * Pure; resolver_new refuses to start on 0 without servers. */
size_t resolver_conf_nameservers(const char *text, size_t len);

/* The servers in use, for status and `check` output. */
const char *resolver_servers(const struct resolver *r);

#endif
