/* Unit tests for guard/handoff: the pure choice of the worker that is to
 * serve a new connection, and the box it is handed through, on a real
 * event loop with real descriptors posted from another thread. Pinned:
 * two downloads on one worker move the second; gaps among many
 * connections stay unless twice; the posted descriptor arrives intact with the
 * client's address and the transparent flag; a full box and a closed box
 * refuse, and closing a box closes what waited in it. */
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "guard/handoff.h"

static void
test_pick_stays_when_even(void **state)
{
	unsigned l[4] = { 3, 3, 3, 3 };

	(void)state;
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(handoff_pick(l, 4, i), i);
}

/* The hash put the second of two downloads on the worker that has the
 * first: it moves to the idle one. */
static void
test_pick_moves_second_download_to_idle_worker(void **state)
{
	unsigned l[2] = { 1, 0 };

	(void)state;
	assert_int_equal(handoff_pick(l, 2, 0), 1);
	l[0] = 0;
	assert_int_equal(handoff_pick(l, 2, 0), 0);	/* nothing served: stays */
}

/* Exactly even while few are served: 16 accepted one by one, each on the
 * worker the hash picks (here always worker 2), end 4, 4, 4, 4. */
static void
test_pick_sixteen_one_by_one_end_even(void **state)
{
	unsigned l[4] = { 0, 0, 0, 0 };

	(void)state;
	for (int k = 0; k < 16; k++)
		l[handoff_pick(l, 4, 2)]++;
	for (int i = 0; i < 4; i++)
		assert_int_equal(l[i], 4);
}

/* Among many, the hash is left alone (no churn for short tunnels: 64 of
 * them over two workers differ by several all the time); only a worker
 * serving twice the least loaded one's hands on. */
static void
test_pick_gap_among_many_stays_twice_moves(void **state)
{
	unsigned l[2] = { 40, 24 };

	(void)state;
	assert_int_equal(handoff_pick(l, 2, 0), 0);
	l[0] = 48;
	assert_int_equal(handoff_pick(l, 2, 0), 1);
	l[0] = 8, l[1] = HANDOFF_FEW - 1;	/* few: kept even */
	assert_int_equal(handoff_pick(l, 2, 0), 1);
	l[1] = HANDOFF_FEW;
	assert_int_equal(handoff_pick(l, 2, 0), 0);
	/* The least loaded: the lowest of several. */
	unsigned m[4] = { 9, 5, 2, 7 };
	assert_int_equal(handoff_pick(m, 4, 0), 2);
	/* One worker: nowhere to go. */
	assert_int_equal(handoff_pick(m, 1, 0), 0);
}

struct taken {
	int		 n;
	struct handoff	 h[HANDOFF_QUEUE + 1];
	struct event_base *base;
	int		 want;
};

static void
take(void *arg, const struct handoff *h)
{
	struct taken *t = arg;

	t->h[t->n++] = *h;
	if (t->n == t->want)
		event_base_loopbreak(t->base);
}

struct poster {
	struct handoff_box	*box;
	struct handoff		 h;
	int			 rc;
};

static void *
post_thread(void *arg)
{
	struct poster *p = arg;

	p->rc = handoff_post(p->box, &p->h);
	return NULL;
}

static int
fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* A descriptor posted from another thread reaches take() on the box's
 * loop, with its address and flag, and counts in the load until then. */
static void
test_box_post_from_thread_taken_on_loop(void **state)
{
	struct event_base *base = event_base_new();
	struct taken t = { .base = base, .want = 1 };
	struct handoff_box *b = handoff_box_new(base, take, &t);
	struct poster p = { .box = b };
	struct sockaddr_in *sin = (struct sockaddr_in *)&p.h.ss;
	struct timeval tv = { 5, 0 };
	pthread_t th;
	int sv[2];

	(void)state;
	assert_non_null(b);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p.h.fd = sv[0];
	p.h.transparent = 1;
	p.h.sl = sizeof(*sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(4242);
	handoff_set_live(b, 3);
	assert_int_equal(pthread_create(&th, NULL, post_thread, &p), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(p.rc, 0);
	assert_int_equal(handoff_load(b), 4);	/* 3 served + 1 on its way */
	event_base_loopexit(base, &tv);		/* bounded */
	event_base_dispatch(base);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.h[0].fd, sv[0]);
	assert_int_equal(t.h[0].transparent, 1);
	assert_int_equal(t.h[0].sl, sizeof(*sin));
	assert_int_equal(ntohs(((struct sockaddr_in *)&t.h[0].ss)->sin_port), 4242);
	assert_int_equal(handoff_load(b), 3);
	handoff_box_free(b);
	assert_true(fd_open(sv[0]));		/* take() owns it now */
	close(sv[0]);
	close(sv[1]);
	event_base_free(base);
}

/* A full box refuses (the caller serves the connection itself); closing
 * it closes every descriptor that waited and refuses from then on. */
static void
test_box_full_refuses_closed_refuses_and_closes_waiting(void **state)
{
	struct event_base *base = event_base_new();
	struct taken t = { .base = base, .want = -1 };
	struct handoff_box *b = handoff_box_new(base, take, &t);
	struct handoff h = { .sl = 0 };
	int fds[HANDOFF_QUEUE], extra;

	(void)state;
	assert_non_null(b);
	for (int i = 0; i < HANDOFF_QUEUE; i++) {
		fds[i] = h.fd = dup(0);
		assert_true(h.fd >= 0);
		assert_int_equal(handoff_post(b, &h), 0);
	}
	h.fd = extra = dup(0);
	assert_int_equal(handoff_post(b, &h), -1);
	assert_int_equal(handoff_load(b), HANDOFF_QUEUE);
	handoff_box_close(b);
	for (int i = 0; i < HANDOFF_QUEUE; i++)
		assert_false(fd_open(fds[i]));
	assert_int_equal(handoff_post(b, &h), -1);
	assert_true(fd_open(extra));		/* refused: still the caller's */
	assert_int_equal(handoff_load(b), 0);
	assert_int_equal(t.n, 0);
	close(extra);
	handoff_box_free(b);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_stays_when_even),
		cmocka_unit_test(test_pick_moves_second_download_to_idle_worker),
		cmocka_unit_test(test_pick_sixteen_one_by_one_end_even),
		cmocka_unit_test(test_pick_gap_among_many_stays_twice_moves),
		cmocka_unit_test(test_box_post_from_thread_taken_on_loop),
		cmocka_unit_test(test_box_full_refuses_closed_refuses_and_closes_waiting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
