/* The DNS listener (`run --dns-listen`): answers the workload's A and AAAA
 * queries for names the policy admits, with the guard's own resolution
 * and classification, and NXDOMAIN for every other name without any
 * upstream query (docs/design.md "DNS listener"). UDP and TCP on the event
 * loop it is given; it takes everything it runs on as parameters, so each
 * worker loop can run its own. */
#ifndef EG_DNSD_H
#define EG_DNSD_H

#include <stddef.h>

struct event_base;
struct log;
struct metrics;
struct classify_cfg;
struct resolver;
struct policy;
struct dest;

#define DNSD_MAX_LISTEN		4	/* --dns-listen addresses */
#define DNSD_MAX_INFLIGHT	256	/* lookups at once; beyond: REFUSED */
#define DNSD_MAX_TCP		64	/* TCP connections; beyond: closed */
#define DNSD_TCP_PIPELINE	16	/* lookups at once per TCP connection */
#define DNSD_TCP_IDLE_S		10	/* a whole frame within: else closed */
#define DNSD_TCP_OUT_MAX	(64 * 1024)	/* unread answers: closed */
#define DNSD_UDP_BATCH		64	/* datagrams read per wake-up */
#define DNSD_PAUSE_USEC		100000	/* out of descriptors: accept again after */
#define DNSD_BACKLOG		64	/* TCP listen backlog */
#define DNSD_TTL_S		30	/* TTL of every answer record */

struct dnsd_env {
	struct event_base	*base;
	struct log		*log;
	struct metrics		*metrics;
	const struct classify_cfg *classify;
	struct resolver		*resolver;
	void			*arg;
	/* The policy in force now (NULL: none, every query REFUSED). */
	const struct policy	*(*policy)(void *arg);
	/* Tenant mode: the listeners bound to this interface (NULL: none),
	 * the tenant every line names (NULL: none), and its bound on
	 * lookups in flight (0: DNSD_MAX_INFLIGHT). */
	const char		*device;
	const char		*tenant;
	unsigned		 max_inflight;
};

struct dnsd;

/* Binds UDP and TCP on each of the n addresses (IP literals with a port)
 * and starts serving on env->base. Returns NULL with err on failure. */
struct dnsd *dnsd_new(const struct dnsd_env *env, const struct dest *listen,
    size_t n, char *err, size_t errlen);

/* Lookups in flight. */
size_t dnsd_inflight(const struct dnsd *d);
/* Closes every socket and cancels every lookup. Safe on NULL. Must run
 * before the resolver and the base are freed. */
void dnsd_free(struct dnsd *d);

#endif
