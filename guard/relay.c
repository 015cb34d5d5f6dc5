/* Two phases. While a gate is set, or bytes are queued in a bufferevent,
 * the relay runs on bufferevents. Once the gate has passed and every
 * buffer is empty, it drops the bufferevents and moves bytes with
 * splice(2) through one pipe per direction, so tunnel payload never
 * crosses into user space (plain read/write through a small buffer where
 * a pipe cannot be had). In both phases a direction holds at most one
 * chunk (RELAY_HIGH_WATER) and reads again only once that chunk has left:
 * a slow reader slows the writer. */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "guard/relay.h"

/* One direction: bytes read from src are written to dst. */
struct half {
	struct relay		*r;
	struct bufferevent	*src;
	struct bufferevent	*dst;
	struct half		*peer;	/* the opposite direction */
	uint64_t		 bytes;
	int			 src_eof;
	int			 paused;	/* src reading disabled by backpressure */
	int			 shut;		/* shutdown(dst, SHUT_WR) done */

	/* Spliced phase. */
	int			 sfd, dfd;
	int			 pipe[2];	/* made when bytes first flow */
	char			*buf;		/* copy fallback when no pipe */
	size_t			 off;		/* start of the unsent bytes in buf */
	size_t			 pending;	/* read from src, not yet on dst */
	struct event		*rev;		/* src readable */
	struct event		*wev;		/* dst writable */

	struct event		*hup;		/* src reset while not read, see hup_cb */
	int			 hupfd;		/* src's socket, in both phases */
};

struct relay {
	struct event_base	*base;
	struct half		 up;	/* client → upstream */
	struct half		 down;	/* upstream → client */
	struct event		*idle;
	struct timeval		 idle_tv;
	struct timeval		 last;
	relay_gate_cb		 gate;
	relay_done_cb		 cb;
	void			*arg;
	int			 done;
	int			 spliced;
	int			 draining;	/* reads stopped until buffers empty, then splice */
	int			 nosplice;	/* splice setup failed once: stay buffered */
};

#define RELAY_COPY_BUF	16384	/* the fallback's buffer per direction */
/* Splice pays a pipe pair and more system calls per chunk: worth it for
 * bulk transfers only. A tunnel moves to splice once this many bytes have
 * crossed it; a small request and reply never leaves the bufferevents. */
#define RELAY_SPLICE_AFTER (64 * 1024)
#define RELAY_HUP_CHECK_S 1	/* how often a paused source is looked at */

static void hup_watch(struct half *h, int on);

static void
relay_end(struct relay *r, const char *reason)
{
	if (r->done)
		return;
	r->done = 1;
	hup_watch(&r->up, 0);
	hup_watch(&r->down, 0);
	if (r->spliced) {
		event_del(r->up.rev);
		event_del(r->up.wev);
		event_del(r->down.rev);
		event_del(r->down.wev);
	} else {
		bufferevent_disable(r->up.src, EV_READ | EV_WRITE);
		bufferevent_disable(r->down.src, EV_READ | EV_WRITE);
	}
	r->cb(r->arg, reason);	/* may free r: touch nothing after */
}

static const char *
errno_reason(int e)
{
	return (e == ECONNRESET || e == EPIPE) ? "reset" : "error";
}

/* While a direction waits for its destination to drain, its source is not
 * read, so a peer that aborts (RST) would go unseen until the far end has
 * taken every queued byte or the idle timeout fires: the guard would hold
 * the other connection, a --max-conns slot and the queued bytes for a
 * client that is gone. So a paused source is looked at every
 * RELAY_HUP_CHECK_S: a pending socket error (ECONNRESET, or EPIPE after a
 * FIN) ends the relay; a plain FIN is left for the read that resumes, so
 * what was queued before a half-close is still delivered. (A timer, not
 * EV_CLOSED: libevent's epoll backend reports a reset as EV_READ|EV_WRITE
 * only, so an EV_CLOSED watch would never fire and epoll would spin.) */
static void
hup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct half *h = arg;
	int e = 0;
	socklen_t sl = sizeof(e);

	(void)fd;
	(void)what;
	if (getsockopt(h->hupfd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 && e != 0)
		relay_end(h->r, errno_reason(e));
}

/* Arms (on) or disarms the periodic look at h's paused source. */
static void
hup_watch(struct half *h, int on)
{
	struct timeval tv = { RELAY_HUP_CHECK_S, 0 };

	if (on && !evtimer_pending(h->hup, NULL))
		evtimer_add(h->hup, &tv);
	else if (!on)
		evtimer_del(h->hup);
}

static void
touch(struct relay *r)
{
	event_base_gettimeofday_cached(r->base, &r->last);
}

/* Once src has ended and everything has reached dst, pass the EOF on. */
static void
half_maybe_shut(struct half *h)
{
	struct relay *r = h->r;

	if (!h->src_eof || h->shut ||
	    evbuffer_get_length(bufferevent_get_output(h->dst)) != 0)
		return;
	h->shut = 1;
	(void)shutdown(bufferevent_getfd(h->dst), SHUT_WR);
	if (h->peer->shut)
		relay_end(r, "eof");
}

/* Runs the gate over what the client has sent so far. Returns 0 while the
 * up direction stays shut or once it opened, -1 if the relay ended. */
static int
gate_check(struct relay *r, int at_eof)
{
	struct evbuffer *in = bufferevent_get_input(r->up.src);
	size_t n = evbuffer_get_length(in);
	const unsigned char *b;
	enum relay_gate v;

	if (n == 0)
		return 0;
	if ((b = evbuffer_pullup(in, (ssize_t)n)) == NULL) {
		relay_end(r, "error");
		return -1;
	}
	v = r->gate(r->arg, b, n);
	/* Undecided at the buffer bound or at EOF: fail closed. */
	if (v == RELAY_GATE_CLOSE || (v == RELAY_GATE_MORE &&
	    (at_eof || n >= RELAY_HIGH_WATER))) {
		relay_end(r, "gate_closed");
		return -1;
	}
	if (v == RELAY_GATE_PASS)
		r->gate = NULL;
	return 0;
}

/* Moves what src has read to dst. Returns -1 if the relay ended. */
static int
half_pump(struct half *h, int at_eof)
{
	struct evbuffer *in = bufferevent_get_input(h->src);
	struct evbuffer *out = bufferevent_get_output(h->dst);
	size_t n;

	if (h == &h->r->up && h->r->gate != NULL) {
		if (gate_check(h->r, at_eof) == -1)
			return -1;
		if (h->r->gate != NULL)
			return 0;
	}
	n = evbuffer_get_length(in);
	if (n > 0) {
		h->bytes += n;
		evbuffer_add_buffer(out, in);
		touch(h->r);
	}
	if (evbuffer_get_length(out) >= RELAY_HIGH_WATER && !h->paused) {
		h->paused = 1;
		bufferevent_disable(h->src, EV_READ);
		hup_watch(h, 1);
	}
	/* Bulk from here on: stop reading, let the buffers drain, then
	 * splice_switch takes over the sockets. */
	if (!h->r->spliced && !h->r->draining && !h->r->nosplice &&
	    h->r->gate == NULL &&
	    h->r->up.bytes + h->r->down.bytes >= RELAY_SPLICE_AFTER) {
		h->r->draining = 1;
		bufferevent_disable(h->r->up.src, EV_READ);
		bufferevent_disable(h->r->down.src, EV_READ);
		/* Unread sources: watch them for a reset meanwhile. */
		hup_watch(&h->r->up, 1);
		hup_watch(&h->r->down, 1);
	}
	return 0;
}

static struct half *
half_of_src(struct relay *r, struct bufferevent *bev)
{
	return bev == r->up.src ? &r->up : &r->down;
}

static void splice_switch(struct relay *r);

static void
read_cb(struct bufferevent *bev, void *arg)
{
	if (half_pump(half_of_src(arg, bev), 0) == 0)
		splice_switch(arg);
}

/* dst drained below the low-water mark: resume its source, and pass on an
 * EOF that was waiting for the drain. */
static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct relay *r = arg;
	struct half *h = bev == r->up.dst ? &r->up : &r->down;

	if (h->paused &&
	    evbuffer_get_length(bufferevent_get_output(bev)) < RELAY_HIGH_WATER) {
		h->paused = 0;
		if (!r->draining)
			hup_watch(h, 0);
		if (!h->src_eof && !r->draining)
			bufferevent_enable(h->src, EV_READ);
	}
	if (h->src_eof) {
		half_maybe_shut(h);	/* may end the relay */
		return;
	}
	splice_switch(r);
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct relay *r = arg;
	struct half *h = half_of_src(r, bev);

	if (what & BEV_EVENT_EOF) {
		if (half_pump(h, 1) == -1)
			return;
		h->src_eof = 1;
		bufferevent_disable(bev, EV_READ);
		half_maybe_shut(h);
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		int e = EVUTIL_SOCKET_ERROR();
		relay_end(r, (e == ECONNRESET || e == EPIPE) ? "reset" : "error");
	}
}

static void
idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct relay *r = arg;
	struct timeval now, left;
	long long idle_us, since_us;

	(void)fd;
	(void)what;
	/* The timer fires once per idle period; traffic in between only moves
	 * r->last, so the hot path never touches the timer. */
	event_base_gettimeofday_cached(r->base, &now);
	since_us = (long long)(now.tv_sec - r->last.tv_sec) * 1000000 +
	    (now.tv_usec - r->last.tv_usec);
	idle_us = (long long)r->idle_tv.tv_sec * 1000000;
	if (since_us >= idle_us) {
		relay_end(r, "idle_timeout");
		return;
	}
	left.tv_sec = (time_t)((idle_us - since_us) / 1000000);
	left.tv_usec = (suseconds_t)((idle_us - since_us) % 1000000);
	evtimer_add(r->idle, &left);
}

/* ---- spliced phase ---- */

static void
spl_maybe_shut(struct half *h)
{
	if (!h->src_eof || h->shut || h->pending != 0)
		return;
	h->shut = 1;
	(void)shutdown(h->dfd, SHUT_WR);
	if (h->peer->shut)
		relay_end(h->r, "eof");
}

/* src → pipe (or buffer). Returns bytes read, 0 at EOF, -1 with errno. */
static ssize_t
spl_in(struct half *h)
{
	ssize_t n;

	if (h->pipe[0] == -1 && h->buf == NULL &&
	    pipe2(h->pipe, O_NONBLOCK | O_CLOEXEC) == -1) {
		h->pipe[0] = h->pipe[1] = -1;
		if ((h->buf = malloc(RELAY_COPY_BUF)) == NULL)
			return -1;
	}
	if (h->pipe[0] != -1) {
		n = splice(h->sfd, NULL, h->pipe[1], NULL, RELAY_HIGH_WATER,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n != -1 || errno != EINVAL)
			return n;
		/* This pair of sockets cannot splice: copy instead. */
		close(h->pipe[0]);
		close(h->pipe[1]);
		h->pipe[0] = h->pipe[1] = -1;
		if ((h->buf = malloc(RELAY_COPY_BUF)) == NULL)
			return -1;
	}
	h->off = 0;
	return read(h->sfd, h->buf, RELAY_COPY_BUF);
}

/* pipe (or buffer) → dst. Returns bytes written or -1 with errno. */
static ssize_t
spl_out(struct half *h)
{
	ssize_t n;

	if (h->pipe[0] != -1)
		return splice(h->pipe[0], NULL, h->dfd, NULL, h->pending,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	n = send(h->dfd, h->buf + h->off, h->pending, MSG_NOSIGNAL);
	if (n > 0)
		h->off += (size_t)n;
	return n;
}

/* Sends what is pending. Returns 0 when all of it left or dst is full (the
 * write event then resumes it), -1 if the relay ended. */
static int
spl_flush(struct half *h)
{
	while (h->pending > 0) {
		ssize_t n = spl_out(h);
		if (n > 0) {
			h->pending -= (size_t)n;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			event_del(h->rev);
			event_add(h->wev, NULL);
			if (!h->src_eof)
				hup_watch(h, 1);
			return 0;
		}
		relay_end(h->r, errno_reason(errno));
		return -1;
	}
	hup_watch(h, 0);
	if (!h->src_eof)
		event_add(h->rev, NULL);
	spl_maybe_shut(h);
	return 0;
}

static void
spl_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct half *h = arg;
	ssize_t n;

	(void)fd;
	(void)what;
	if (h->pending > 0) {		/* the last chunk has not left yet */
		event_del(h->rev);
		return;
	}
	n = spl_in(h);
	if (n == 0) {
		h->src_eof = 1;
		event_del(h->rev);
		spl_maybe_shut(h);
		return;
	}
	if (n == -1) {
		if (errno != EAGAIN && errno != EINTR)
			relay_end(h->r, errno_reason(errno));
		return;
	}
	h->bytes += (uint64_t)n;
	h->pending = (size_t)n;
	touch(h->r);
	(void)spl_flush(h);
}

static void
spl_write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)spl_flush(arg);
}

static int
spl_half_init(struct relay *r, struct half *h, int sfd, int dfd)
{
	h->sfd = sfd;
	h->dfd = dfd;
	h->pipe[0] = h->pipe[1] = -1;
	h->rev = event_new(r->base, sfd, EV_READ | EV_PERSIST, spl_read_cb, h);
	h->wev = event_new(r->base, dfd, EV_WRITE, spl_write_cb, h);
	return h->rev != NULL && h->wev != NULL ? 0 : -1;
}

/* Leaves the bufferevents once the tunnel is bulk (draining), nothing is
 * queued in them and the gate has passed; their sockets carry on with
 * splice. */
static void
splice_switch(struct relay *r)
{
	struct bufferevent *c = r->up.src, *u = r->down.src;
	int cfd, ufd;

	if (!r->draining || r->spliced || r->done || r->gate != NULL || r->up.src_eof ||
	    r->down.src_eof || r->up.paused || r->down.paused ||
	    evbuffer_get_length(bufferevent_get_input(c)) != 0 ||
	    evbuffer_get_length(bufferevent_get_output(c)) != 0 ||
	    evbuffer_get_length(bufferevent_get_input(u)) != 0 ||
	    evbuffer_get_length(bufferevent_get_output(u)) != 0)
		return;
	cfd = bufferevent_getfd(c);
	ufd = bufferevent_getfd(u);
	if (spl_half_init(r, &r->up, cfd, ufd) == -1 ||
	    spl_half_init(r, &r->down, ufd, cfd) == -1) {
		/* No memory for events: stay on bufferevents, reading again. */
		if (r->up.rev) event_free(r->up.rev);
		if (r->up.wev) event_free(r->up.wev);
		if (r->down.rev) event_free(r->down.rev);
		if (r->down.wev) event_free(r->down.wev);
		r->up.rev = r->up.wev = r->down.rev = r->down.wev = NULL;
		r->draining = 0;
		r->nosplice = 1;
		hup_watch(&r->up, 0);
		hup_watch(&r->down, 0);
		bufferevent_enable(c, EV_READ);
		bufferevent_enable(u, EV_READ);
		return;
	}
	/* Detach the sockets so freeing the bufferevents keeps them open. */
	bufferevent_setfd(c, -1);
	bufferevent_setfd(u, -1);
	bufferevent_free(c);
	bufferevent_free(u);
	r->up.src = r->up.dst = r->down.src = r->down.dst = NULL;
	r->spliced = 1;
	hup_watch(&r->up, 0);
	hup_watch(&r->down, 0);
	event_add(r->up.rev, NULL);
	event_add(r->down.rev, NULL);
}

static void
spl_half_free(struct half *h)
{
	if (h->rev != NULL)
		event_free(h->rev);
	if (h->wev != NULL)
		event_free(h->wev);
	if (h->pipe[0] != -1) {
		close(h->pipe[0]);
		close(h->pipe[1]);
	}
	free(h->buf);
}

static void
half_init(struct relay *r, struct half *h, struct bufferevent *src,
    struct bufferevent *dst, struct half *peer)
{
	h->r = r;
	h->src = src;
	h->dst = dst;
	h->peer = peer;
	h->pipe[0] = h->pipe[1] = -1;
	/* Never hold more than the high-water mark unread either. */
	bufferevent_setwatermark(src, EV_READ, 0, RELAY_HIGH_WATER);
	bufferevent_setwatermark(dst, EV_WRITE, RELAY_HIGH_WATER / 2, 0);
}

struct relay *
relay_new(struct event_base *base, struct bufferevent *client,
    struct bufferevent *upstream, int idle_timeout_s, relay_gate_cb gate,
    relay_done_cb cb, void *arg)
{
	struct relay *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->base = base;
	r->gate = gate;
	r->cb = cb;
	r->arg = arg;
	r->idle_tv.tv_sec = idle_timeout_s;
	if ((r->idle = evtimer_new(base, idle_cb, r)) == NULL) {
		free(r);
		return NULL;
	}
	/* The fds stay the same in both phases (see splice_switch). */
	r->up.hupfd = bufferevent_getfd(client);
	r->down.hupfd = bufferevent_getfd(upstream);
	r->up.hup = event_new(base, -1, EV_PERSIST, hup_cb, &r->up);
	r->down.hup = event_new(base, -1, EV_PERSIST, hup_cb, &r->down);
	if (r->up.hup == NULL || r->down.hup == NULL) {
		if (r->up.hup != NULL)
			event_free(r->up.hup);
		if (r->down.hup != NULL)
			event_free(r->down.hup);
		event_free(r->idle);
		free(r);
		return NULL;
	}
	half_init(r, &r->up, client, upstream, &r->down);
	half_init(r, &r->down, upstream, client, &r->up);
	bufferevent_setcb(client, read_cb, write_cb, event_cb, r);
	bufferevent_setcb(upstream, read_cb, write_cb, event_cb, r);
	touch(r);
	evtimer_add(r->idle, &r->idle_tv);
	bufferevent_enable(client, EV_READ | EV_WRITE);
	bufferevent_enable(upstream, EV_READ | EV_WRITE);
	/* Bytes the client sent right after its head are handled from the
	 * loop (the gate may end the relay, which must not happen before the
	 * caller holds the pointer). */
	if (evbuffer_get_length(bufferevent_get_input(client)) > 0)
		bufferevent_trigger(client, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
	return r;
}

void
relay_stats(const struct relay *r, uint64_t *up, uint64_t *down)
{
	*up = r->up.bytes;
	*down = r->down.bytes;
}

void
relay_free(struct relay *r)
{
	if (r == NULL)
		return;
	event_free(r->idle);
	event_free(r->up.hup);
	event_free(r->down.hup);
	if (r->spliced) {
		spl_half_free(&r->up);
		spl_half_free(&r->down);
		close(r->up.sfd);
		close(r->down.sfd);
	} else {
		bufferevent_free(r->up.src);
		bufferevent_free(r->down.src);
	}
	free(r);
}
