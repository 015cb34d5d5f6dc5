/* The control socket's push queue: pushed bundles, and SIGHUP's re-reads
 * of --policy, are checked one at a time, in arrival order, each on a
 * thread of its own (plane_check_*, plane_reload_start). The loop only
 * hands a body over, and collects the result when the thread says it is
 * done through an eventfd. Answering is the caller's: every item ends in
 * exactly one call of the answer function. */
#ifndef EG_CTLPUSH_H
#define EG_CTLPUSH_H

#include <stddef.h>

#include "plane/plane.h"

struct event_base;
struct policy;
struct ctlpush;

/* Items that may wait behind the one being checked. Each push holds its
 * whole body (up to CONTROL_MAX_BODY), so this also bounds their memory;
 * a reload holds none (its thread reads the file). */
#define CTLPUSH_MAX_WAITING	8

/* One push from its whole body until it is answered. It does not depend
 * on its caller: who: NULL (ctlpush_forget) means the caller hung up;
 * the push goes on (it may be stored already), its answer dropped. */
struct ctlpush_item {
	void		*who;		/* the caller's connection, or NULL */
	long		 uid;
	char		*body;		/* until the check takes it */
	size_t		 len;
	int		 reload;	/* SIGHUP: no caller, no body */
	/* Tenant mode: the tenant pushed to (control_tenants.hold keeps it)
	 * and its plane, which checks the bundle; NULL: the guard's. */
	void		*tenant;
	struct plane	*plane;
	/* A tenant added (CTLPUSH_LIST_ADD) or removed (…_REMOVE): the
	 * tenant list to store, taken from snapshot(snap_arg) when its turn
	 * comes (so a change rolled back before it is not in it); closed
	 * counts a removed tenant's connections, for the answer. */
	int		 list;
	char		*(*snapshot)(void *snap_arg, size_t *len);
	void		*snap_arg;
	size_t		 closed;
};

#define CTLPUSH_LIST_ADD	1
#define CTLPUSH_LIST_REMOVE	2

/* The end of a push: on PLANE_OK pol is the checked policy (the answer
 * function owns it), else err says why. */
typedef void ctlpush_answer_fn(void *arg, const struct ctlpush_item *p,
    enum plane_verdict v, struct policy *pol, const char *err);

/* NULL with err on failure. */
struct ctlpush *ctlpush_new(struct event_base *base, struct plane *plane,
    ctlpush_answer_fn *answer, void *arg, char *err, size_t errlen);
/* Finishes the push being checked, if any (waiting for its thread), then
 * answers the ones still waiting PLANE_UNAVAILABLE. NULL-safe. */
void ctlpush_free(struct ctlpush *q);

/* 1 when one more item may wait. */
int ctlpush_room(const struct ctlpush *q);
/* Queues p (its body moves to the queue) behind the check in flight; -1
 * when CTLPUSH_MAX_WAITING already wait (p is left to the caller). */
int ctlpush_add(struct ctlpush *q, const struct ctlpush_item *p);
/* The caller who is gone: its pushes go on unanswered. NULL-safe. */
void ctlpush_forget(struct ctlpush *q, const void *who);
/* Queues a reload of --policy behind the checks in flight and waiting:
 * 0. 1 when a reload already waits: it has not read the file yet, so it
 * reads what this one would (the two are one). -1 when
 * CTLPUSH_MAX_WAITING already wait. */
int ctlpush_reload(struct ctlpush *q);

#endif
