/* One client connection: read and validate the head, decide, resolve,
 * classify, dial, relay. */
#ifndef EG_PROXY_H
#define EG_PROXY_H

#include <stddef.h>

struct guard;
struct sockaddr;
struct policy;

/* Takes ownership of fd (accepted, non-blocking). */
void proxy_accept(struct guard *g, int fd, const struct sockaddr *sa, int salen);

/* Closes the live connections that p no longer admits, with reason
 * "revoked"; returns how many. */
size_t proxy_revoke(struct guard *g, const struct policy *p);

/* Answers 503 overloaded on a connection that is not admitted as a
 * proxy_conn at all (at --max-conns), then closes it. */
void proxy_reject_overloaded(struct guard *g, int fd, const struct sockaddr *sa,
    int salen);

/* Frees every connection (shutdown). */
void proxy_close_all(struct guard *g);

#endif
