#include <sys/eventfd.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/handoff.h"

struct handoff_box {
	pthread_mutex_t		 mu;
	struct handoff		 q[HANDOFF_QUEUE];	/* a ring, under mu */
	unsigned		 head, len;		/* under mu */
	int			 closed;		/* under mu */
	atomic_uint		 live;		/* the owner's, see handoff.h */
	atomic_uint		 queued;	/* len, readable without mu */
	int			 efd;		/* eventfd: something was posted */
	struct event		*ev;
	void			(*take)(void *, const struct handoff *);
	void			*arg;
};

unsigned
handoff_pick(const unsigned *loads, unsigned n, unsigned self)
{
	unsigned i, m = self;

	for (i = 0; i < n; i++)
		if (loads[i] < loads[m])
			m = i;
	if (m == self || loads[self] < loads[m] + 1)
		return self;
	if (loads[m] < HANDOFF_FEW || loads[self] >= 2 * loads[m])
		return m;
	return self;
}

/* Takes one connection off the ring, or returns 0 when it is empty. */
static int
box_pop(struct handoff_box *b, struct handoff *h)
{
	int got = 0;

	pthread_mutex_lock(&b->mu);
	if (b->len > 0) {
		*h = b->q[b->head];
		b->head = (b->head + 1) % HANDOFF_QUEUE;
		b->len--;
		atomic_fetch_sub(&b->queued, 1);
		got = 1;
	}
	pthread_mutex_unlock(&b->mu);
	return got;
}

static void
box_cb(evutil_socket_t fd, short what, void *arg)
{
	struct handoff_box *b = arg;
	struct handoff h;
	uint64_t n;

	(void)what;
	while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR)
		;
	/* What the posters put in before their eventfd write is all there
	 * by now; a later post writes the eventfd again. */
	while (box_pop(b, &h))
		b->take(b->arg, &h);
}

struct handoff_box *
handoff_box_new(struct event_base *base,
    void (*take)(void *arg, const struct handoff *h), void *arg)
{
	struct handoff_box *b;
	int e;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	b->efd = -1;
	if ((e = pthread_mutex_init(&b->mu, NULL)) != 0) {
		free(b);
		errno = e;
		return NULL;
	}
	atomic_init(&b->live, 0);
	atomic_init(&b->queued, 0);
	b->take = take;
	b->arg = arg;
	if ((b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (b->ev = event_new(base, b->efd, EV_READ | EV_PERSIST, box_cb, b)) == NULL ||
	    event_add(b->ev, NULL) == -1) {
		e = errno != 0 ? errno : ENOMEM;
		handoff_box_free(b);
		errno = e;
		return NULL;
	}
	return b;
}

int
handoff_post(struct handoff_box *b, const struct handoff *h)
{
	uint64_t one = 1;
	int rc = -1;

	pthread_mutex_lock(&b->mu);
	if (!b->closed && b->len < HANDOFF_QUEUE) {
		b->q[(b->head + b->len) % HANDOFF_QUEUE] = *h;
		b->len++;
		atomic_fetch_add(&b->queued, 1);
		rc = 0;
	}
	pthread_mutex_unlock(&b->mu);
	if (rc == 0 && write(b->efd, &one, sizeof(one)) == -1) {
		/* An eventfd counter does not overflow at these counts. */
	}
	return rc;
}

unsigned
handoff_load(const struct handoff_box *b)
{
	return atomic_load_explicit(&b->live, memory_order_relaxed) +
	    atomic_load_explicit(&b->queued, memory_order_relaxed);
}

void
handoff_set_live(struct handoff_box *b, unsigned live)
{
	atomic_store_explicit(&b->live, live, memory_order_relaxed);
}

void
handoff_box_close(struct handoff_box *b)
{
	struct handoff h;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->closed = 1;
	pthread_mutex_unlock(&b->mu);
	while (box_pop(b, &h))
		close(h.fd);
}

void
handoff_box_free(struct handoff_box *b)
{
	if (b == NULL)
		return;
	handoff_box_close(b);
	if (b->ev != NULL)
		event_free(b->ev);
	if (b->efd != -1)
		close(b->efd);
	pthread_mutex_destroy(&b->mu);
	free(b);
}
