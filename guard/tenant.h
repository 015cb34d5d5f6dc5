/* Tenant mode (`run --tenants`, docs/design.md "Tenants"): one guard
 * serving many sandboxes, each exactly as if it had a guard of its own.
 * A tenant is a workload namespace attached by its own link; its
 * listeners are bound to that link, so a connection belongs to the tenant
 * whose listener accepted it, never to a header, a credential or a source
 * address. Each tenant has its own signed policy (its own plane and epoch
 * floor), router, DNS listener, bounds and metrics; all of them run on
 * worker 0's loop (the main thread). Tenants come and go over the control
 * socket and are kept in the state folder across restarts. */
#ifndef EG_TENANT_H
#define EG_TENANT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct classify_cfg;
struct config;
struct control_tenants;
struct event_base;
struct evbuffer;
struct log;
struct metrics;
struct plane;
struct resolver;
struct tenants;
struct worker;

/* Per-tenant series on the metrics page: at most this many tenants, in id
 * order; the rest are counted in egress_guard_tenants_unlisted. */
#define TENANT_METRICS_MAX	256

/* What the registry needs from the daemon (nothing else of it is read). */
struct tenants_env {
	struct event_base	*base;		/* worker 0's loop */
	const struct config	*cfg;
	struct log		*log;
	struct classify_cfg	*classify;	/* worker 0's */
	struct resolver		*resolver;	/* worker 0's, shared; bounded per tenant */
	struct plane		*plane;		/* the guard's: keys, state folder */
	struct worker		*worker;	/* accepts (descriptor reserve, pauses) */
	struct metrics		*metrics;	/* worker 0's: tenants' chain after it */
	_Atomic uint64_t	*nconns;	/* --max-conns, all tenants */
	_Atomic uint64_t	*next_id;
	void			*arg;
	/* A tenant's connection ended (a draining guard may exit). */
	void			(*closed)(void *arg);
};

/* NULL on allocation failure. */
struct tenants *tenants_new(const struct tenants_env *env);
/* Closes every tenant (listeners, connections) and frees it all. */
void tenants_free(struct tenants *ts);

/* At start, after any privilege drop (a tenant's folder must be the
 * guard's own): every tenant in the state folder's tenants.json, each
 * with its stored policy. 0, or -1 with err (exit 2): a tenant that
 * cannot listen (its link gone) stops the start rather than leave its
 * sandbox with no guard and no word. */
int tenants_restore(struct tenants *ts, char *err, size_t errlen);

/* The control socket's view (plane/control.h). */
const struct control_tenants *tenants_control(struct tenants *ts);

/* SIGTERM: every tenant stops accepting (its DNS listener too); live
 * connections go on. tenants_close_all ends them (the grace is over). */
void tenants_stop(struct tenants *ts);
void tenants_close_all(struct tenants *ts);
/* Live connections of every tenant. */
uint64_t tenants_live(const struct tenants *ts);

#endif
