/* The plane-facing control API: HTTP/1.1 over a Unix socket (mode 0600),
 * never on a TCP port. PUT/GET /v1/policy, GET /v1/status, /v1/health,
 * /metrics. A pushed bundle is checked off the event loop; pushes are
 * answered one at a time in arrival order. SIGHUP's reloads of --policy
 * share that queue. */
#ifndef EG_CONTROL_H
#define EG_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "plane/bundle.h"
#include "plane/plane.h"

struct event_base;
struct config;
struct log;
struct metrics;
struct plane;
struct policy;
struct resolver;
struct control;
struct evbuffer;

/* Tenant mode (docs/design.md "Tenants"): what the control socket calls
 * for /v1/tenants/…. A tenant is an opaque handle t. */
struct control_tenants {
	void	*arg;
	/* The tenant id (len bytes, not NUL-terminated) names, or NULL. */
	void	*(*find)(void *arg, const char *id, size_t len);
	struct plane *(*plane)(void *t);
	const struct policy *(*policy)(void *t);
	/* Installs p (ownership moves) and logs its "policy" line; returns
	 * how many were revoked. */
	size_t	(*set_policy)(void *t, struct policy *p);
	/* A push refers to t from its whole body to its answer (+1, then
	 * -1): t is not freed meanwhile, even when removed. */
	void	(*hold)(void *t, int delta);
	/* PUT /v1/tenants/ID with the spec's len bytes: the HTTP status;
	 * *error and msg when it is not 2xx. 201: the tenant *t is built and
	 * serving, and waits for the list to be stored (added); 200: the
	 * same spec is there, nothing to do. */
	int	(*add)(void *arg, const char *id, size_t idlen, const char *body,
		    size_t len, void **t, const char **error, char *msg,
		    size_t msglen);
	/* The end of an add: stored (1) it stays and is logged, else (0)
	 * it is taken out again. */
	void	(*added)(void *t, int stored);
	/* DELETE /v1/tenants/ID: the status; on 200 the tenant *t is closed
	 * (*closed its connections) and off the list, and waits for the
	 * list to be stored (held: freed at the last hold). */
	int	(*remove)(void *arg, const char *id, size_t idlen, void **t,
		    size_t *closed, const char **error, char *msg, size_t msglen);
	/* The list's canonical bytes as they are now (malloc'd; NULL on
	 * ENOMEM): what a queued add or remove stores. */
	char	*(*list_bytes)(void *arg, size_t *len);
	const char *(*name)(void *t);		/* its id */
	/* GET /v1/tenants and GET /v1/tenants/ID/status, each one line. */
	void	(*list)(void *arg, struct evbuffer *b);
	void	(*status)(void *t, struct evbuffer *b);
	size_t	(*count)(void *arg);		/* tenants served */
	/* Appended to /metrics: the per-tenant series. */
	void	(*metrics)(void *arg, struct evbuffer *b);
};

/* What the control socket needs from the daemon, handed over at creation:
 * control reads these and calls back through them, and never reaches
 * into the daemon's own context (no circle between the two). */
struct control_env {
	struct event_base	*base;
	struct log		*log;
	struct plane		*plane;
	const struct config	*cfg;		/* listeners and ranges, for status */
	struct resolver		*resolver;
	const struct metrics	*metrics;
	const char		*version;
	const char		*revision;
	/* SHA-256 (hex) of the executable, hashed at start from
	 * /proc/self/exe; NULL when it could not be read. */
	const char		*binary_sha256;
	time_t			 started;
	void			*arg;		/* passed to every call below */
	/* The active policy, NULL when none is loaded. */
	const struct policy	*(*policy)(void *arg);
	uint64_t		(*nconns)(void *arg);	/* proxy connections open */
	/* Each worker's connections into out (at most max); how many
	 * workers. */
	size_t			(*worker_conns)(void *arg, unsigned *out, size_t max);
	/* Installs p (ownership moves) and logs its "policy" line; returns
	 * how many were revoked. */
	size_t			(*set_policy)(void *arg, struct policy *p);
	/* The end of a reload (control_reload), after set_policy when v is
	 * PLANE_OK; err says why otherwise. */
	void			(*reloaded)(void *arg, enum plane_verdict v,
				    const char *err);
	/* NULL unless the guard runs --tenants. */
	const struct control_tenants *tenants;
};

#define CONTROL_MAX_BODY BUNDLE_MAX_BYTES	/* a body is one bundle */

/* Binds path (refusing to steal a live socket, and a folder that anyone
 * but root or owner could write) and serves it on env's loop (env is
 * copied). NULL with err on failure. */
struct control *control_new(const struct control_env *env, const char *path,
    uid_t owner, char *err, size_t errlen);
/* Finishes the push being checked, if any (waiting for its thread), then
 * answers the ones still waiting 503 and closes the socket. */
void control_free(struct control *c);

/* SIGHUP: --policy is read and checked off the loop, in the pushes'
 * queue (one check at a time, in arrival order, so a reload and a push
 * cannot race); its end is env->reloaded. 0 queued; 1 when a reload
 * already waits and has not read the file yet (this one is the same);
 * -1 with err when the queue is full. */
int control_reload(struct control *c, char *err, size_t errlen);

#endif
