/* The control socket's JSON answers: each a function of the data it
 * shows into an evbuffer, no socket and no state. */
#ifndef EG_CTLJSON_H
#define EG_CTLJSON_H

#include <stddef.h>

struct evbuffer;
struct policy;
struct control_env;

/* s, quoted and escaped (util/jsonw.h). */
void ctljson_str(struct evbuffer *b, const char *s);
/* {"error":…,"message":…} */
void ctljson_error(struct evbuffer *b, const char *error, const char *msg);
/* GET /v1/policy: the active policy, or "mode":"none" for NULL. */
void ctljson_policy(struct evbuffer *b, const struct policy *p);
/* A push's 200: the policy now active and how many were revoked. */
void ctljson_accepted(struct evbuffer *b, const struct policy *p,
    size_t revoked);
/* GET /v1/status. */
void ctljson_status(struct evbuffer *b, const struct control_env *env);

#endif
