/* Unit tests for guard/dial on a real event loop and real loopback TCP.
 *
 * Pinned here: how the dial tells a connect's outcome. It asks SO_ERROR
 * only when the readiness is ambiguous (issue 17: one system call less per
 * tunnel), so a refused connect must still be reported as a failure (and
 * the next address tried), and a connect whose peer spoke at once (bytes
 * and writability seen together) must still be reported as connected,
 * with the bytes left unread for the caller. Every loop is bounded. */
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "guard/dial.h"

struct result {
	int	done;
	int	fd;
	size_t	idx;
	int	timed_out;
	const char *local;
};

static void
on_dial(void *arg, int fd, size_t idx, int timed_out, const char *local)
{
	struct result *r = arg;

	r->done++;
	r->fd = fd;
	r->idx = idx;
	r->timed_out = timed_out;
	r->local = local;
}

static void
addr4(struct resolver_addr *a, const char *ip)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ip, a->addr), 1);
}

/* A socket bound on ip with a port from the kernel; listening or not (a
 * bound socket that does not listen answers a SYN with a reset). */
static int
bound_socket(const char *ip, int listening, uint16_t *port)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(*port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (listening)
		assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* Runs the loop until the dial reported, 5 s at most. */
static void
run_until_done(struct event_base *base, struct result *r)
{
	struct timeval tick = { 0, 10000 };
	int i;

	for (i = 0; i < 500 && r->done == 0; i++) {
		event_base_loopexit(base, &tick);
		event_base_dispatch(base);
	}
	assert_int_equal(r->done, 1);
}

static void
test_refused_connect_is_a_failure_not_a_tunnel(void **state)
{
	struct event_base *base = event_base_new();
	struct resolver_addr a;
	struct result r = { 0, -2, 0, -1, NULL };
	uint16_t port = 0;
	int closed = bound_socket("127.0.0.1", 0, &port);

	(void)state;
	addr4(&a, "127.0.0.1");
	assert_non_null(dial_start(base, &a, 1, port, 2000, on_dial, &r));
	run_until_done(base, &r);
	assert_int_equal(r.fd, -1);
	assert_int_equal(r.timed_out, 0);
	assert_null(r.local);		/* the upstream refused: not ours */
	close(closed);
	event_base_free(base);
}

/* Out of descriptors here is said so, not blamed on the upstream: the
 * record's detail tells an operator to look at the guard's limits. */
static void
test_hostile_local_shortage_named_not_blamed_on_upstream(void **state)
{
	struct event_base *base = event_base_new();
	struct resolver_addr a;
	struct result r = { 0, -2, 0, -1, NULL };
	struct rlimit old, low;
	uint16_t port = 0;
	int lst = bound_socket("127.0.0.1", 1, &port), fds[256], n = 0, i;

	(void)state;
	addr4(&a, "127.0.0.1");
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (n < 256 && (fds[n] = dup(0)) != -1)
		n++;
	assert_true(n < 256);		/* the limit was reached */
	assert_non_null(dial_start(base, &a, 1, port, 2000, on_dial, &r));
	run_until_done(base, &r);
	for (i = 0; i < n; i++)
		close(fds[i]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(r.fd, -1);
	assert_non_null(r.local);
	assert_string_equal(r.local, "out of descriptors");
	close(lst);
	event_base_free(base);
}

static void
test_refused_first_address_falls_through_to_the_next(void **state)
{
	struct event_base *base = event_base_new();
	struct resolver_addr a[3];
	struct result r = { 0, -2, 0, -1, NULL };
	struct sockaddr_in peer;
	socklen_t sl = sizeof(peer);
	uint16_t port = 0;
	int lfd = bound_socket("127.0.0.1", 1, &port);
	/* The same port on two other loopback addresses: bound, not
	 * listening, so both refuse. */
	int c1 = bound_socket("127.0.0.2", 0, &port);
	int c2 = bound_socket("127.0.0.3", 0, &port);
	int afd;

	(void)state;
	addr4(&a[0], "127.0.0.2");
	addr4(&a[1], "127.0.0.3");
	addr4(&a[2], "127.0.0.1");
	assert_non_null(dial_start(base, a, 3, port, 2000, on_dial, &r));
	run_until_done(base, &r);
	assert_true(r.fd >= 0);
	assert_int_equal(r.idx, 2);
	assert_int_equal(getpeername(r.fd, (struct sockaddr *)&peer, &sl), 0);
	assert_int_equal(ntohs(peer.sin_port), port);
	assert_int_equal(peer.sin_addr.s_addr, htonl(0x7f000001));
	afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	close(afd);
	close(r.fd);
	close(lfd);
	close(c1);
	close(c2);
	event_base_free(base);
}

/* The peer's first bytes arrive before the loop looks at the socket: the
 * readiness is EV_READ|EV_WRITE, as for an error, and only SO_ERROR can
 * tell it is a tunnel. */
static void
test_peer_that_speaks_first_is_connected_with_its_bytes_unread(void **state)
{
	struct event_base *base = event_base_new();
	struct resolver_addr a;
	struct result r = { 0, -2, 0, -1, NULL };
	struct pollfd p;
	uint16_t port = 0;
	int lfd = bound_socket("127.0.0.1", 1, &port);
	int afd;
	char b[16];

	(void)state;
	addr4(&a, "127.0.0.1");
	assert_non_null(dial_start(base, &a, 1, port, 2000, on_dial, &r));
	/* One pass: the first attempt runs, its connect is in progress. */
	assert_int_equal(event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK), 0);
	assert_int_equal(r.done, 0);
	p.fd = lfd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 2000), 1);
	afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	assert_int_equal(send(afd, "220 hi\r\n", 8, 0), 8);
	/* Let the bytes reach the dialled socket before the loop looks. */
	p.fd = afd;
	p.events = POLLOUT;
	(void)poll(&p, 1, 50);
	usleep(20000);
	run_until_done(base, &r);
	assert_true(r.fd >= 0);
	assert_int_equal(r.idx, 0);
	assert_int_equal(recv(r.fd, b, sizeof(b), MSG_DONTWAIT), 8);
	assert_memory_equal(b, "220 hi\r\n", 8);
	close(afd);
	close(r.fd);
	close(lfd);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_connect_is_a_failure_not_a_tunnel),
		cmocka_unit_test(test_hostile_local_shortage_named_not_blamed_on_upstream),
		cmocka_unit_test(test_refused_first_address_falls_through_to_the_next),
		cmocka_unit_test(test_peer_that_speaks_first_is_connected_with_its_bytes_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
