/* Absolute-form HTTP: request/response pumping, chunked and length
 * framing, upstream reuse. */
#ifndef EG_EXCHANGE_H
#define EG_EXCHANGE_H

#include "guard/decide.h"

struct proxy_conn;

/* The upstream (c->ex.ubev) is ready, new or reused: send the head, then
 * the body as it comes, and frame the response. */
void exchange_start(struct proxy_conn *c);

/* A failure after the request was admitted (its allow decision is
 * logged): answer with r if no response byte went out yet, log the close
 * (reason: why, or r's name), and close. c may be gone after this. */
void exchange_abort(struct proxy_conn *c, enum reason r, const char *why);

/* Ends an exchange before its end (a reset where a FIN would look like
 * a complete body). c may be gone after this. */
void exchange_cut(struct proxy_conn *c);

/* Returns 1 when the idle upstream from the previous exchange serves
 * this request (same host and port, an address classified in THIS
 * request, quiet since); else drops it and returns 0. */
int exchange_reuse(struct proxy_conn *c);

/* Closes a live exchange that policy no longer admits ("revoked"). */
void exchange_revoke(struct proxy_conn *c);

#endif
