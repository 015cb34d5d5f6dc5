#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/dial.h"
#include "util/fdres.h"

struct dial {
	struct event_base *base;
	struct resolver_addr addrs[DIAL_MAX_ADDRS];
	size_t		 n;
	size_t		 next;
	uint16_t	 port;
	struct timeval	 timeout;
	int		 fd;
	int		 timeouts;	/* attempts that ended by timeout */
	const char	*local;		/* the last attempt failed here: why */
	struct event	*ev;
	dial_cb		 cb;
	void		*arg;
};

static void dial_step(evutil_socket_t fd, short what, void *arg);

static void
dial_finish(struct dial *d, int fd, size_t idx)
{
	dial_cb cb = d->cb;
	void *arg = d->arg;
	int timed_out = d->timeouts > 0 && (size_t)d->timeouts == d->n;
	const char *local = d->local;

	event_free(d->ev);
	free(d);
	cb(arg, fd, idx, timed_out, local);
}

/* An errno of socket() or connect() that names this host's shortage, not
 * the upstream's refusal: the record says so instead of blaming it. */
static const char *
local_failure(int e)
{
	switch (e) {
	case EADDRNOTAVAIL:
		return "no local port or address for the connection";
	case EMFILE:
	case ENFILE:
		return "out of descriptors";
	case ENOBUFS:
	case ENOMEM:
		return "out of kernel memory";
	default:
		return NULL;
	}
}

static int
sockaddr_of(const struct resolver_addr *a, uint16_t port,
    struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->addr, 4);
		*len = sizeof(*sin);
		return 0;
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->addr, 16);
		*len = sizeof(*sin6);
		return 0;
	}
	return -1;
}

/* Starts the attempt at d->next; returns 0 when it is pending or done,
 * having called dial_finish on success. */
static void
dial_attempt(struct dial *d)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	while (d->next < d->n) {
		size_t i = d->next++;
		int fd, one = 1;

		if (sockaddr_of(&d->addrs[i], d->port, &ss, &sl) == -1)
			continue;
		fd = fdres_workload(socket(ss.ss_family, SOCK_STREAM |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
		if (fd == -1) {
			d->local = local_failure(errno);
			continue;
		}
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, (struct sockaddr *)&ss, sl) == 0) {
			dial_finish(d, fd, i);
			return;
		}
		if (errno != EINPROGRESS) {
			d->local = local_failure(errno);
			close(fd);
			continue;
		}
		d->local = NULL;
		d->fd = fd;
		/* EV_READ too, only to tell the outcome without a system call:
		 * libevent reports EPOLLERR and EPOLLHUP as EV_READ|EV_WRITE, a
		 * connect that completed cleanly as EV_WRITE alone (issue 17). */
		event_assign(d->ev, d->base, fd, EV_READ | EV_WRITE, dial_step, d);
		event_add(d->ev, &d->timeout);
		return;
	}
	dial_finish(d, -1, 0);
}

static void
dial_step(evutil_socket_t fd, short what, void *arg)
{
	struct dial *d = arg;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd == -1) {			/* the deferred first attempt */
		dial_attempt(d);
		return;
	}
	if (what & EV_TIMEOUT) {
		d->timeouts++;
	} else if (what == EV_WRITE ||
	    /* Error, hang-up, or bytes that came with the handshake: only
	     * SO_ERROR tells those apart. */
	    (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)) {
		d->fd = -1;
		dial_finish(d, fd, d->next - 1);
		return;
	}
	close(fd);
	d->fd = -1;
	dial_attempt(d);
}

struct dial *
dial_start(struct event_base *base, const struct resolver_addr *addrs, size_t n,
    uint16_t port, int timeout_ms, dial_cb cb, void *arg)
{
	struct dial *d;

	if (n == 0 || (d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->base = base;
	d->n = n > DIAL_MAX_ADDRS ? DIAL_MAX_ADDRS : n;
	memcpy(d->addrs, addrs, d->n * sizeof(*addrs));
	d->port = port;
	d->timeout.tv_sec = timeout_ms / 1000;
	d->timeout.tv_usec = (timeout_ms % 1000) * 1000;
	d->fd = -1;
	d->cb = cb;
	d->arg = arg;
	/* The first attempt runs from the loop, so the callback can never
	 * fire before dial_start has returned. */
	if ((d->ev = event_new(base, -1, 0, dial_step, d)) == NULL) {
		free(d);
		return NULL;
	}
	event_active(d->ev, EV_TIMEOUT, 0);
	return d;
}

void
dial_cancel(struct dial *d)
{
	if (d == NULL)
		return;
	if (d->fd != -1)
		close(d->fd);
	event_free(d->ev);
	free(d);
}
