/* Unit tests for the resolver's bounds, against a loopback "server" that
 * never answers: how long c-ares is given per try, and how long a
 * cancelled lookup stays counted (its queries run on in c-ares). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/conn.h"
#include "resolver/resolver.h"

struct hole {
	struct event_base	*base;
	struct resolver		*r;
	int			 fd;	/* bound, never read from or answered */
	int			 done;	/* lookups let go of (on_done); may be
					   called from resolver_free */
};

struct seen {
	int			 calls;
	enum resolver_status	 st;
	char			 detail[64];
};

static void
on_answer(void *arg, enum resolver_status st, const struct resolver_addr *a,
    size_t n, const char *detail)
{
	struct seen *s = arg;

	(void)a;
	(void)n;
	s->calls++;
	s->st = st;
	snprintf(s->detail, sizeof(s->detail), "%s", detail);
}

static void
on_done(void *arg)
{
	(*(int *)arg)++;
}

/* A resolver whose only server is a bound UDP socket that drops
 * everything: every query times out in c-ares. */
static int
hole_setup(void **state)
{
	static struct hole h;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char csv[64], err[256];

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h.fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (h.fd == -1 || bind(h.fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    getsockname(h.fd, (struct sockaddr *)&sa, &sl) == -1)
		return -1;
	snprintf(csv, sizeof(csv), "127.0.0.1:%u", ntohs(sa.sin_port));
	h.done = 0;
	if ((h.base = event_base_new()) == NULL)
		return -1;
	/* 600 ms: both tries of the one server time out. */
	if ((h.r = resolver_new(h.base, csv, 600, err, sizeof(err))) == NULL) {
		fprintf(stderr, "resolver_new: %s\n", err);
		return -1;
	}
	*state = &h;
	return 0;
}

static int
hole_teardown(void **state)
{
	struct hole *h = *state;

	resolver_free(h->r);
	event_base_free(h->base);
	close(h->fd);
	return 0;
}

/* c-ares 1.18 gives try i of a query T << (i / nservers): 3 x n x T for
 * two tries over n servers. Every server gets both its tries within the
 * lookup's timeout, down to the floor. */
static void
test_try_timeout_gives_every_server_its_tries(void **state)
{
	static const int timeouts[] = { 1000, 3000, 5000, 30000, 300000 };
	size_t i, n;

	(void)state;
	assert_int_equal(resolver_try_ms(5000, 1), 1666);
	assert_int_equal(resolver_try_ms(3000, 3), 333);
	assert_int_equal(resolver_try_ms(1000, 8), RESOLVER_TRY_MIN_MS);
	assert_int_equal(resolver_try_ms(1000, 0), 333);	/* as one server */
	for (i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++)
		for (n = 1; n <= 8; n++) {
			int t = resolver_try_ms(timeouts[i], n);

			assert_true(t >= RESOLVER_TRY_MIN_MS);
			if (t > RESOLVER_TRY_MIN_MS)
				assert_true(3 * (long)n * t <= timeouts[i]);
		}
}

/* Hostile: a client that resets mid-lookup. Its lookup is cancelled but
 * stays counted until c-ares has given up on both queries, so a client
 * that reconnects and asks again cannot add queries past a bound. */
static void
test_client_reset_lookup_counted_until_cares_lets_go(void **state)
{
	struct hole *h = *state;
	struct seen s = { 0 };
	struct resolver_query *q;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	q = resolver_lookup(h->r, "slow.test", on_answer, &s);
	assert_non_null(q);
	assert_int_equal(resolver_live(h->r), 1);
	resolver_cancel_notify(q, on_done, &h->done);
	assert_int_equal(h->done, 0);
	assert_int_equal(resolver_live(h->r), 1);
	while (h->done == 0 && conn_usec_since(&t0) < 5000000)
		event_base_loop(h->base, EVLOOP_ONCE);
	assert_int_equal(h->done, 1);
	assert_int_equal(s.calls, 0);
	assert_int_equal(resolver_live(h->r), 0);
	/* Both tries ran: not let go of at the cancel. */
	assert_true(conn_usec_since(&t0) >= 500000);
}

/* Hostile: reset-and-ask-again churn. Past RESOLVER_MAX_LIVE held
 * lookups a new one fails at once, from the loop, without a query. */
static void
test_churn_beyond_live_bound_fails_without_query(void **state)
{
	struct hole *h = *state;
	struct seen s = { 0 };
	int i;

	for (i = 0; i < RESOLVER_MAX_LIVE; i++) {
		struct resolver_query *q = resolver_lookup(h->r, "slow.test",
		    on_answer, &s);

		assert_non_null(q);
		resolver_cancel_notify(q, on_done, &h->done);
	}
	assert_int_equal(resolver_live(h->r), RESOLVER_MAX_LIVE);
	assert_non_null(resolver_lookup(h->r, "slow.test", on_answer, &s));
	assert_int_equal(s.calls, 0);		/* never from inside */
	assert_int_equal(resolver_live(h->r), RESOLVER_MAX_LIVE);
	event_base_loop(h->base, EVLOOP_NONBLOCK);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.st, RESOLVER_FAILURE);
	assert_string_equal(s.detail, "too many lookups in flight");
	assert_int_equal(h->done, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_try_timeout_gives_every_server_its_tries),
		cmocka_unit_test_setup_teardown(
		    test_client_reset_lookup_counted_until_cares_lets_go,
		    hole_setup, hole_teardown),
		cmocka_unit_test_setup_teardown(
		    test_churn_beyond_live_bound_fails_without_query,
		    hole_setup, hole_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
