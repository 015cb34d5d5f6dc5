/* The plane-facing control API: HTTP/1.1 over a Unix socket (mode 0600),
 * never on a TCP port. PUT/GET /v1/policy, GET /v1/status, /v1/health,
 * /metrics. */
#ifndef EG_CONTROL_H
#define EG_CONTROL_H

#include <stddef.h>

#include "policy/bundle.h"

struct guard;
struct control;

#define CONTROL_MAX_BODY BUNDLE_MAX_BYTES	/* a body is one bundle */

/* Binds path (refusing to steal a live socket) and serves it on g's loop.
 * NULL with err on failure. */
struct control *control_new(struct guard *g, const char *path, char *err,
    size_t errlen);
void control_free(struct control *c);

#endif
