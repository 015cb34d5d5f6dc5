/* Absolute-form HTTP: request/response pumping, chunked and length
 * framing, upstream reuse. */
#ifndef EG_EXCHANGE_H
#define EG_EXCHANGE_H

#include <stddef.h>

#include "guard/decide.h"

struct http_req;
struct proxy_conn;

/* c->dest is the request's destination: checks req's framing and writes
 * the origin-form head to send upstream (path, length path_len, is the
 * target's path). Returns 1 when the request is ready to route, 0 when it
 * was refused (c denied). */
int exchange_prepare(struct proxy_conn *c, const struct http_req *req,
    const char *path, size_t path_len);

/* The upstream (c->ex->ubev) is ready, new or reused: send the head, then
 * the body as it comes, and frame the response. */
void exchange_start(struct proxy_conn *c);

/* A failure after the request was admitted (its allow decision is
 * logged): answer with r if no response byte went out yet, log the close
 * (reason: why, or r's name), and close. c may be gone after this. */
void exchange_abort(struct proxy_conn *c, enum reason r, const char *why);

/* The request's allow line, once (deferred on a pooled upstream until it
 * answers, is retried or ends: see exchange_start). */
void exchange_decide(struct proxy_conn *c);

/* The allow line if still due, then the close line (reason why). */
void exchange_log_close(struct proxy_conn *c, const char *why);

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
