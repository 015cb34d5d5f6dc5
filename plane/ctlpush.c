#include <sys/eventfd.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "plane/ctlpush.h"
#include "util/errbuf.h"

struct ctlpush {
	struct plane	*plane;
	ctlpush_answer_fn *answer;
	void		*arg;
	int		 done_fd;	/* eventfd the check's thread writes */
	struct event	*done_ev;
	struct plane_check *check;	/* in flight, or NULL */
	struct ctlpush_item current;	/* what the check in flight answers */
	struct ctlpush_item waiting[CTLPUSH_MAX_WAITING];	/* a ring, oldest first */
	size_t		 first;
	size_t		 nwaiting;
};

/* Hands an item to a check thread. A push's body moves (no copy): the
 * check owns it from here, whether it starts or not. */
static void
start_check(struct ctlpush *q, struct ctlpush_item *p)
{
	enum plane_verdict v;
	char err[512] = "cannot check the bundle";

	if (p->reload) {
		v = plane_reload_start(q->plane, q->done_fd, &q->check, err,
		    sizeof(err));
	} else if (p->list) {
		size_t len = 0;
		char *body = p->snapshot(p->snap_arg, &len);

		if (body == NULL) {
			snprintf(err, sizeof(err), "out of memory");
			v = PLANE_UNAVAILABLE;
		} else {
			v = plane_tenants_start(q->plane, body, len, q->done_fd,
			    &q->check, err, sizeof(err));
		}
	} else
		v = plane_check_start(p->plane != NULL ? p->plane : q->plane,
		    p->body, p->len, q->done_fd,
		    &q->check, err, sizeof(err));
	p->body = NULL;
	if (v != PLANE_OK) {
		q->answer(q->arg, p, v, NULL, err);
		return;
	}
	q->current = *p;
}

/* Takes the oldest waiting push into *p; 0 when none waits. */
static int
next_waiting(struct ctlpush *q, struct ctlpush_item *p)
{
	if (q->nwaiting == 0)
		return 0;
	*p = q->waiting[q->first];
	q->first = (q->first + 1) % CTLPUSH_MAX_WAITING;
	q->nwaiting--;
	return 1;
}

static void
next_check(struct ctlpush *q)
{
	struct ctlpush_item p;

	while (q->check == NULL && next_waiting(q, &p))
		start_check(q, &p);
}

/* Collects the check in flight, waiting for its thread if it is not
 * done yet, and answers its push. */
static void
finish_check(struct ctlpush *q)
{
	struct ctlpush_item p = q->current;
	struct policy *pol = NULL;
	enum plane_verdict v;
	char err[512];

	v = plane_check_finish(p.plane != NULL ? p.plane : q->plane, q->check,
	    &pol, err, sizeof(err));
	q->check = NULL;
	memset(&q->current, 0, sizeof(q->current));
	q->answer(q->arg, &p, v, pol, err);
}

static void
check_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctlpush *q = arg;
	uint64_t n;

	(void)what;
	while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR)
		;
	if (q->check != NULL && plane_check_done(q->check))
		finish_check(q);
	next_check(q);
}

int
ctlpush_room(const struct ctlpush *q)
{
	return q->nwaiting < CTLPUSH_MAX_WAITING;
}

int
ctlpush_add(struct ctlpush *q, const struct ctlpush_item *p)
{
	if (q->nwaiting == CTLPUSH_MAX_WAITING)
		return -1;
	q->waiting[(q->first + q->nwaiting) % CTLPUSH_MAX_WAITING] = *p;
	q->nwaiting++;
	next_check(q);
	return 0;
}

int
ctlpush_reload(struct ctlpush *q)
{
	struct ctlpush_item p = { .uid = -1, .reload = 1 };
	size_t i;

	for (i = 0; i < q->nwaiting; i++)
		if (q->waiting[(q->first + i) % CTLPUSH_MAX_WAITING].reload)
			return 1;
	return ctlpush_add(q, &p);
}

void
ctlpush_forget(struct ctlpush *q, const void *who)
{
	size_t i;

	if (q == NULL)
		return;
	if (q->current.who == who)
		q->current.who = NULL;
	for (i = 0; i < q->nwaiting; i++) {
		struct ctlpush_item *p =
		    &q->waiting[(q->first + i) % CTLPUSH_MAX_WAITING];
		if (p->who == who)
			p->who = NULL;
	}
}

struct ctlpush *
ctlpush_new(struct event_base *base, struct plane *plane,
    ctlpush_answer_fn *answer, void *arg, char *err, size_t errlen)
{
	struct ctlpush *q;

	if ((q = calloc(1, sizeof(*q))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	q->plane = plane;
	q->answer = answer;
	q->arg = arg;
	if ((q->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (q->done_ev = event_new(base, q->done_fd, EV_READ | EV_PERSIST,
	    check_done_cb, q)) == NULL || event_add(q->done_ev, NULL) == -1) {
		errbuf_set(err, errlen, "cannot watch policy checks: %s",
		    strerror(errno));
		ctlpush_free(q);
		return NULL;
	}
	return q;
}

void
ctlpush_free(struct ctlpush *q)
{
	struct ctlpush_item p;

	if (q == NULL)
		return;
	/* The check in flight completes (its bundle may be stored already);
	 * the waiting ones were never looked at and may simply be pushed
	 * again. */
	if (q->check != NULL)
		finish_check(q);
	while (next_waiting(q, &p)) {
		free(p.body);
		q->answer(q->arg, &p, PLANE_UNAVAILABLE, NULL, "the guard is stopping");
	}
	if (q->done_ev != NULL)
		event_free(q->done_ev);
	if (q->done_fd != -1)
		close(q->done_fd);
	free(q);
}
