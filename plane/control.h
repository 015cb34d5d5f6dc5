/* The plane-facing control API: HTTP/1.1 over a Unix socket (mode 0600),
 * never on a TCP port. PUT/GET /v1/policy, GET /v1/status, /v1/health,
 * /metrics. A pushed bundle is checked off the event loop; pushes are
 * answered one at a time in arrival order. */
#ifndef EG_CONTROL_H
#define EG_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "plane/bundle.h"

struct guard;
struct control;

#define CONTROL_MAX_BODY BUNDLE_MAX_BYTES	/* a body is one bundle */

/* Binds path (refusing to steal a live socket, and a folder that anyone
 * but root or owner could write) and serves it on g's loop. NULL with err
 * on failure. */
struct control *control_new(struct guard *g, const char *path, uid_t owner,
    char *err, size_t errlen);
/* Finishes the push being checked, if any (waiting for its thread), then
 * answers the ones still waiting 503 and closes the socket. */
void control_free(struct control *c);

/* Before the loop changes the policy by itself (SIGHUP): finishes and
 * answers the push being checked, waiting for its thread if needed, so
 * the two cannot race; waiting pushes resume on the next loop pass.
 * NULL-safe. */
void control_settle(struct control *c);

#endif
