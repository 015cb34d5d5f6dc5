/* The control socket's tenant endpoints (docs/design.md "Tenants"):
 * GET /v1/tenants, PUT and DELETE /v1/tenants/ID, PUT and GET
 * /v1/tenants/ID/policy, GET /v1/tenants/ID/status. */
#ifndef EG_CTLTENANT_H
#define EG_CTLTENANT_H

#include <stddef.h>

struct ctlconn;
struct http_req;

/* A spec's body is small: a tenant spec is about 200 bytes. */
#define CTLTENANT_SPEC_MAX	4096

/* Routes a complete head (end bytes at k->head) whose target is under
 * /v1/tenants, or /v1/policy in tenant mode. Returns 1 when it answered
 * or took the request, 0 when the request is not one of these. */
int ctltenant_route(struct ctlconn *k, const struct http_req *req, size_t end);

#endif
