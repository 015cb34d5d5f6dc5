/* The control socket's JSON answers: each a function of the data it
 * shows into an evbuffer, no socket and no state. */
#ifndef EG_CTLJSON_H
#define EG_CTLJSON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct config;
struct evbuffer;
struct plane;
struct policy;
struct resolver;

/* What GET /v1/status shows, gathered by the caller (plane/control.c):
 * the answer depends on no control type. */
struct ctljson_status {
	const char		*version;
	const char		*revision;
	const char		*binary_sha256;	/* NULL: not known */
	const struct config	*cfg;		/* listeners and ranges */
	const struct resolver	*resolver;
	const struct plane	*plane;
	uint64_t		 nconns;	/* proxy connections open */
	time_t			 started;
	const struct policy	*policy;	/* NULL: none active */
	const unsigned		*worker_conns;	/* each worker's connections */
	size_t			 nworkers;
	long long		 tenants;	/* tenants served; -1: not --tenants */
};

/* s, quoted and escaped (util/jsonw.h). */
void ctljson_str(struct evbuffer *b, const char *s);
/* {"error":…,"message":…} */
void ctljson_error(struct evbuffer *b, const char *error, const char *msg);
/* The active policy, or "mode":"none" for NULL: epoch, digest, mode,
 * entries, loaded, catalog. full (GET /v1/policy) adds how many entries
 * each provenance granted and the canonical bytes ("policy"), and ends
 * the line; without (inside GET /v1/status) it is the summary. */
void ctljson_policy(struct evbuffer *b, const struct policy *p, int full);
/* A push's 200: the policy now active and how many were revoked. */
void ctljson_accepted(struct evbuffer *b, const struct policy *p,
    size_t revoked);
/* GET /v1/status. */
void ctljson_status(struct evbuffer *b, const struct ctljson_status *st);

#endif
