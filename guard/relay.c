#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
};

static void
relay_end(struct relay *r, const char *reason)
{
	if (r->done)
		return;
	r->done = 1;
	bufferevent_disable(r->up.src, EV_READ | EV_WRITE);
	bufferevent_disable(r->down.src, EV_READ | EV_WRITE);
	r->cb(r->arg, reason);	/* may free r: touch nothing after */
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
	}
	return 0;
}

static struct half *
half_of_src(struct relay *r, struct bufferevent *bev)
{
	return bev == r->up.src ? &r->up : &r->down;
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	(void)half_pump(half_of_src(arg, bev), 0);
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
		if (!h->src_eof)
			bufferevent_enable(h->src, EV_READ);
	}
	half_maybe_shut(h);
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

static void
half_init(struct relay *r, struct half *h, struct bufferevent *src,
    struct bufferevent *dst, struct half *peer)
{
	h->r = r;
	h->src = src;
	h->dst = dst;
	h->peer = peer;
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
	bufferevent_free(r->up.src);
	bufferevent_free(r->down.src);
	free(r);
}
