/* PUT /v1/policy on the control socket: the head is judged, the body
 * read into one buffer and handed to the push queue (plane/ctlpush.h),
 * whose verdict becomes the policy in force and the caller's answer. */
#ifndef EG_CTLPUT_H
#define EG_CTLPUT_H

#include <stddef.h>

#include "plane/plane.h"

struct ctlconn;
struct ctlpush_item;
struct http_req;
struct policy;

/* From a complete head of end bytes at k->head: refuses what can be
 * refused without the body, or starts reading it. */
void ctlput_head(struct ctlconn *k, const struct http_req *req, size_t end);
/* Reads more of the body (a slice a loop pass); queues it once whole. */
void ctlput_read(struct ctlconn *k);
/* Queues the store of the tenant list after tenant t was added
 * (CTLPUSH_LIST_ADD) or removed (…_REMOVE, closed connections with it):
 * k is answered once it is stored. The caller checked ctlpush_room. */
void ctlput_list(struct ctlconn *k, int list, void *t, size_t closed);
/* The push queue's answer function; arg is the struct control. */
void ctlput_answer(void *arg, const struct ctlpush_item *p,
    enum plane_verdict v, struct policy *pol, const char *err);

#endif
