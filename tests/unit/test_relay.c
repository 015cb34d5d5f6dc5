/* Unit tests for guard/relay on a real event loop and real loopback TCP
 * connections: a client that aborts (RST) while its direction is held
 * back by a destination that does not read ends the relay at once, as
 * "reset"; a client that closes gracefully (FIN) in the same state keeps
 * the relay until every queued byte has reached the destination, then
 * the EOF is passed on. Small socket buffers make the backpressure reach
 * the client within a few hundred KiB. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "guard/relay.h"

#define SMALL_BUF 16384

struct ctx {
	struct relay	*r;
	const char	*reason;	/* NULL while the relay runs */
};

static void
done_cb(void *arg, const char *reason)
{
	struct ctx *c = arg;

	c->reason = reason;
	relay_free(c->r);
	c->r = NULL;
}

static void
small_buffers(int fd)
{
	int n = SMALL_BUF;

	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &n, sizeof(n)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &n, sizeof(n)), 0);
}

/* A connected loopback pair: *peer is the test's end, *mine the relay's. */
static void
tcp_pair(int *peer, int *mine)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int l;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((l = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	small_buffers(l);	/* inherited by the accepted socket */
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &sl), 0);
	assert_true((*peer = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	small_buffers(*peer);
	assert_int_equal(connect(*peer, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_true((*mine = accept(l, NULL, NULL)) != -1);
	assert_int_equal(evutil_make_socket_nonblocking(*mine), 0);
	close(l);
}

static void
spin(struct event_base *base, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

struct rig {
	struct event_base	*base;
	struct ctx		 c;
	int			 client;	/* the workload's end */
	int			 upstream;	/* the far end; never read until asked */
	size_t			 sent;
};

/* Starts a relay and writes from the client until nothing more is taken:
 * the destination's refusal to read has reached the client. */
static void
rig_fill(struct rig *g)
{
	static char buf[65536];
	int cfd, ufd, stalled = 0, i;

	memset(g, 0, sizeof(*g));
	memset(buf, 'x', sizeof(buf));
	assert_non_null(g->base = event_base_new());
	tcp_pair(&g->client, &cfd);
	tcp_pair(&g->upstream, &ufd);
	assert_non_null(g->c.r = relay_new(g->base, cfd, ufd, NULL, 0, NULL, 0, 60,
	    NULL, done_cb, &g->c));
	for (i = 0; i < 400 && stalled < 20; i++) {
		ssize_t n = send(g->client, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			g->sent += (size_t)n;
			stalled = 0;
		} else {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			stalled++;
		}
		spin(g->base, 5);
	}
	assert_int_equal(stalled, 20);		/* backpressure reached the client */
	assert_true(g->sent >= RELAY_HIGH_WATER);
	assert_null(g->c.reason);		/* and the relay is still up */
}

static void
rig_free(struct rig *g)
{
	if (g->c.r != NULL)
		relay_free(g->c.r);
	if (g->client != -1)
		close(g->client);
	if (g->upstream != -1)
		close(g->upstream);
	event_base_free(g->base);
}

static void
test_client_reset_while_backpressured_ends_relay_at_once(void **state)
{
	struct rig g;
	struct linger lg = { 1, 0 };
	int i;

	(void)state;
	rig_fill(&g);
	assert_int_equal(setsockopt(g.client, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(g.client);	/* RST: unread bytes are queued on our side */
	g.client = -1;
	for (i = 0; i < 20 && g.c.reason == NULL; i++)
		spin(g.base, 50);
	/* Without a watch on the paused source this stays NULL until the
	 * upstream drains or the 60 s idle timeout. */
	assert_non_null(g.c.reason);
	assert_string_equal(g.c.reason, "reset");
	rig_free(&g);
}

/* The control: a FIN in the same state must not end the relay early;
 * every byte the client sent arrives, then the EOF. */
static void
test_client_fin_while_backpressured_delivers_everything_first(void **state)
{
	struct rig g;
	static char buf[65536];
	size_t got = 0;
	int i, eof = 0;

	(void)state;
	rig_fill(&g);
	assert_int_equal(shutdown(g.client, SHUT_WR), 0);
	spin(g.base, 300);
	assert_null(g.c.reason);
	assert_int_equal(evutil_make_socket_nonblocking(g.upstream), 0);
	for (i = 0; i < 2000 && !eof; i++) {
		ssize_t n = recv(g.upstream, buf, sizeof(buf), 0);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0)
			eof = 1;
		else
			spin(g.base, 2);
	}
	assert_true(eof);
	assert_int_equal(got, g.sent);
	/* The upstream closes too: the relay ends as eof. */
	close(g.upstream);
	g.upstream = -1;
	for (i = 0; i < 20 && g.c.reason == NULL; i++)
		spin(g.base, 50);
	assert_non_null(g.c.reason);
	assert_string_equal(g.c.reason, "eof");
	rig_free(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_reset_while_backpressured_ends_relay_at_once),
		cmocka_unit_test(test_client_fin_while_backpressured_delivers_everything_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
