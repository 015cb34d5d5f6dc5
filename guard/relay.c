/* The tunnel relay on raw sockets, one direction ("half") at a time.
 *
 * Copy mode: a readable source is read into one scratch buffer and written
 * straight on to the destination in the same callback, so a small request
 * and reply cost one read and one write each, with no event changes. Only
 * the bytes the destination would not take are kept (in a buffer of the
 * half, at most RELAY_HIGH_WATER), and the source is not read again until
 * they have left: a slow reader slows the writer.
 *
 * Splice mode: once a half has moved RELAY_SPLICE_AFTER bytes (and the
 * gate has passed) it moves bytes with splice(2) through its own pipe, so
 * bulk payload never crosses into user space. The pipe is enlarged where
 * the kernel allows it; the source is read while the pipe has room and the
 * destination written while the pipe holds bytes, both at once, so the
 * three parties of a bulk transfer run in parallel instead of in turn. A
 * pair of sockets that cannot splice stays in copy mode.
 *
 * EOF is passed on with shutdown(2) once everything before it has left;
 * when both directions have ended the relay ends ("eof"). */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/relay.h"
#include "util/fdres.h"

/* Splice pays a pipe and more system calls per chunk: worth it for bulk
 * only. A half moves to splice once this many bytes have crossed it; a
 * small request and reply never leaves copy mode. */
#define RELAY_SPLICE_AFTER	(64 * 1024)
/* Splices from the source per readable event, at most. A non-blocking
 * splice from a TCP socket takes one pass over the receive queue; what
 * arrived meanwhile (the sender runs on another CPU) waits for the next
 * pass. Going straight back for it, instead of through epoll, is what a
 * blocking splice does inside the kernel: one stream wakes the guard
 * 2.7-2.9 times per MiB instead of 4.8-10.5 (bench/RESULTS.md). */
#define RELAY_SPLICE_PASSES	8
/* The pipe size asked for: fewer, larger splices. The kernel caps it
 * (fs.pipe-max-size, and a user's total in fs.pipe-user-pages-soft), so
 * the size actually granted is read back; a refusal keeps the default. */

struct half {
	struct relay	*r;
	struct half	*peer;		/* the opposite direction */
	int		 sfd, dfd;	/* read from sfd, write to dfd */
	uint64_t	 bytes;
	int		 src_eof;
	int		 shut;		/* EOF passed on to dfd */

	struct event	*rev;		/* sfd readable */
	struct event	*wev;		/* dfd writable */
	int		 rev_on, wev_on;
	struct event	*hup;		/* sfd reset while not read, see hup_cb */

	/* Copy mode: bytes read but not yet written (or, in the up half
	 * while the gate decides, the bytes it has seen). */
	unsigned char	*buf;		/* RELAY_HIGH_WATER bytes, while needed */
	size_t		 off, len;	/* unsent: buf[off .. off + len) */
	size_t		 held;		/* the last of them, not released by the gate */

	/* Splice mode. */
	int		 pipe[2];	/* -1 until the half moves to splice */
	size_t		 size;		/* the pipe's size */
	size_t		 cap;		/* what may be in it: size, less when out of slots */
	size_t		 inpipe;	/* spliced in, not yet out */
	int		 nosplice;	/* these sockets cannot splice */
};

struct relay {
	struct half	 up;		/* client → upstream */
	struct half	 down;		/* upstream → client */
	struct event	*idle;
	struct timeval	 idle_tv;
	struct timeval	 last;
	struct event_base *base;
	relay_gate_cb	 gate;		/* NULL once passed, or never set */
	relay_done_cb	 cb;
	void		*arg;
	int		 done;
};

/* The copy mode's read buffer. One per worker thread, shared by its
 * relays: a callback leaves nothing in it (what could not be written is
 * copied into the half's own buffer before the callback returns), so idle
 * tunnels own no buffer at all. Thread-local: two workers reading into one
 * buffer would hand one tunnel's bytes to another (found by TSan). */
static _Thread_local unsigned char relay_scratch[RELAY_HIGH_WATER];

static void half_arm(struct half *h);

static void
relay_end(struct relay *r, const char *reason)
{
	if (r->done)
		return;
	r->done = 1;
	half_arm(&r->up);
	half_arm(&r->down);
	r->cb(r->arg, reason);	/* may free r: touch nothing after */
}

static const char *
errno_reason(int e)
{
	return (e == ECONNRESET || e == EPIPE) ? "reset" : "error";
}

static void
touch(struct relay *r)
{
	event_base_gettimeofday_cached(r->base, &r->last);
}

static size_t
half_pending(const struct half *h)
{
	return h->pipe[0] != -1 ? h->inpipe : h->len;
}

/* Whether the source may be read now: not at its end, the gate buffer not
 * full, and (copy mode) nothing unsent or (splice mode) room in the pipe. */
static int
half_wants_read(const struct half *h)
{
	if (h->r->done || h->src_eof)
		return 0;
	if (h == &h->r->up && h->r->gate != NULL)
		return h->len < RELAY_HIGH_WATER;
	if (h->pipe[0] != -1)
		return h->inpipe < h->cap;
	return h->len == 0;
}

/* Asks for (on) or stops waiting for dfd to become writable. */
static void
half_want_write(struct half *h, int on)
{
	if (on && !h->wev_on) {
		event_add(h->wev, NULL);
		h->wev_on = 1;
	} else if (!on && h->wev_on) {
		event_del(h->wev);
		h->wev_on = 0;
	}
}

/* Brings the events of h in line with its state; epoll is told only about
 * changes. A source left unread because its destination is full is looked
 * at for resets meanwhile (hup_cb). */
static void
half_arm(struct half *h)
{
	struct timeval tv = { RELAY_HUP_CHECK_S, 0 };
	int rd = half_wants_read(h);

	if (rd != h->rev_on) {
		if (rd)
			event_add(h->rev, NULL);
		else
			event_del(h->rev);
		h->rev_on = rd;
	}
	if (h->r->done)		/* otherwise the writers set it */
		half_want_write(h, 0);
	if (!rd && !h->src_eof && !h->r->done) {
		if (!evtimer_pending(h->hup, NULL))
			evtimer_add(h->hup, &tv);
	} else if (evtimer_pending(h->hup, NULL)) {
		evtimer_del(h->hup);
	}
}

const char *
relay_pending_error(int fd)
{
	int e = 0;
	socklen_t sl = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 && e != 0)
		return errno_reason(e);
	return NULL;
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
	const char *why;

	(void)fd;
	(void)what;
	if ((why = relay_pending_error(h->sfd)) != NULL)
		relay_end(h->r, why);
	else if (!h->r->done)
		half_arm(h);	/* still paused: look again later */
}

/* Everything before the EOF has left: pass the EOF on. When the other
 * direction has already ended, the relay ends instead, and closing the
 * sockets sends the FIN (both receive queues are empty by then, so the
 * close cannot turn into a reset). Returns -1 if the relay ended. */
static int
half_maybe_shut(struct half *h)
{
	if (!h->src_eof || h->shut || half_pending(h) != 0)
		return 0;
	h->shut = 1;
	if (h->peer->shut) {
		relay_end(h->r, "eof");
		return -1;
	}
	(void)shutdown(h->dfd, SHUT_WR);
	return 0;
}

/* Writes what is pending in copy mode, but the bytes the gate holds.
 * Returns 0 (all sent, or dfd full and the write event armed) or -1 if
 * the relay ended. */
static int
copy_flush(struct half *h)
{
	while (h->len > h->held) {
		ssize_t n = send(h->dfd, h->buf + h->off, h->len - h->held,
		    MSG_NOSIGNAL);
		if (n > 0) {
			h->off += (size_t)n;
			h->len -= (size_t)n;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			half_want_write(h, 1);
			return 0;
		}
		relay_end(h->r, errno_reason(errno));
		return -1;
	}
	half_want_write(h, 0);
	if (h->len > 0)		/* the gate holds them */
		return 0;
	free(h->buf);
	h->buf = NULL;
	h->off = 0;
	return 0;
}

/* Sends b[0 .. n) to dfd, nothing being pending (copy mode reads only
 * then): what dfd does not take now is kept in the half's buffer, which a
 * read of at most RELAY_HIGH_WATER always fits. last: these are the
 * source's last bytes, and the FIN follows at once (half_maybe_shut), so
 * they wait for it (MSG_MORE) and leave in the same segment: one packet
 * and one wake-up of the reader fewer per stream. Returns 0, or -1 if
 * the relay ended. */
static int
copy_out(struct half *h, const unsigned char *b, size_t n, int last)
{
	ssize_t w = send(h->dfd, b, n, MSG_NOSIGNAL | (last ? MSG_MORE : 0));

	if (w == -1 && errno != EAGAIN && errno != EINTR) {
		relay_end(h->r, errno_reason(errno));
		return -1;
	}
	if (w == -1)
		w = 0;
	if ((size_t)w == n)
		return 0;
	if (h->buf == NULL && (h->buf = malloc(RELAY_HIGH_WATER)) == NULL) {
		relay_end(h->r, "error");
		return -1;
	}
	memcpy(h->buf, b + w, n - (size_t)w);
	h->off = 0;
	h->len = n - (size_t)w;
	half_want_write(h, 1);
	return 0;
}

/* The gate sees the client's bytes it holds (h is the up half): the
 * last h->held of the unsent ones. Returns 0 while it watches or once it
 * has passed (released bytes then go out), -1 if the relay ended. */
static int
gate_run(struct half *h)
{
	struct relay *r = h->r;
	enum relay_gate v = RELAY_GATE_MORE;
	size_t release = 0;

	if (h->held > 0)
		v = r->gate(r->arg, h->buf + h->off + h->len - h->held, h->held,
		    &release);
	else if (h->src_eof && h->bytes == 0)
		v = RELAY_GATE_CLOSE;	/* EOF before a byte: nothing to pass */
	if (v == RELAY_GATE_PASS)
		release = h->held;
	if (v == RELAY_GATE_CLOSE || release > h->held) {
		relay_end(r, "gate_closed");
		return -1;
	}
	h->held -= release;
	h->bytes += release;
	/* Undecided at the buffer bound or at EOF: fail closed. Done at an
	 * EOF with nothing held: the EOF is passed on. */
	if (h->held > 0 && (h->src_eof || h->held >= RELAY_HIGH_WATER)) {
		relay_end(r, "gate_closed");
		return -1;
	}
	if (v == RELAY_GATE_PASS || h->src_eof)
		r->gate = NULL;
	return copy_flush(h);
}

/* Moves h to splice mode: a pipe, as large as the kernel grants. Returns
 * 0, or -1 when no pipe can be had (h stays in copy mode for good). */
static int
splice_start(struct half *h)
{
	int sz;

	int ok = pipe2(h->pipe, O_NONBLOCK | O_CLOEXEC) == 0;

	/* A pipe end from the reserve (util/fdres.h) is given back. */
	if (ok && (fdres_reserved(h->pipe[0]) || fdres_reserved(h->pipe[1]))) {
		(void)close(h->pipe[0]);
		(void)close(h->pipe[1]);
		ok = 0;
	}
	if (!ok) {
		h->pipe[0] = h->pipe[1] = -1;
		h->nosplice = 1;
		return -1;
	}
	(void)fcntl(h->pipe[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE);
	sz = fcntl(h->pipe[1], F_GETPIPE_SZ);
	h->size = h->cap = sz > 0 ? (size_t)sz : 65536;
	h->inpipe = 0;
	return 0;
}

static void
splice_stop(struct half *h)
{
	close(h->pipe[0]);
	close(h->pipe[1]);
	h->pipe[0] = h->pipe[1] = -1;
	h->nosplice = 1;
}

/* pipe → dfd until the pipe is empty or dfd is full. Returns 0, or -1 if
 * the relay ended. */
static int
splice_flush(struct half *h)
{
	while (h->inpipe > 0) {
		ssize_t n = splice(h->pipe[0], NULL, h->dfd, NULL, h->inpipe,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			h->inpipe -= (size_t)n;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			half_want_write(h, 1);
			return 0;
		}
		relay_end(h->r, n == 0 ? "error" : errno_reason(errno));
		return -1;
	}
	half_want_write(h, 0);
	h->cap = h->size;	/* every slot free again */
	return 0;
}

/* sfd → pipe. Returns bytes moved, 0 at EOF, -1 with errno (EAGAIN: the
 * socket has nothing, or the pipe has no free slot: a pipe holds a number
 * of buffers, not of bytes). */
static ssize_t
splice_in(struct half *h)
{
	return splice(h->sfd, NULL, h->pipe[1], NULL, h->cap - h->inpipe,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}

/* One readable event on sfd; closed: epoll saw the peer's FIN (EV_CLOSED,
 * EPOLLRDHUP) before this read. Returns -1 if the relay ended. */
static int
half_read(struct half *h, int closed)
{
	struct relay *r = h->r;
	ssize_t n;

	if (h == &r->up && r->gate != NULL) {
		if (h->buf == NULL && (h->buf = malloc(RELAY_HIGH_WATER)) == NULL) {
			relay_end(r, "error");
			return -1;
		}
		/* Released bytes the upstream has not taken yet may sit in
		 * front of the held ones: make room behind them (only under
		 * backpressure, and at most once per release). */
		if (h->off > 0 && h->off + h->len == RELAY_HIGH_WATER) {
			memmove(h->buf, h->buf + h->off, h->len);
			h->off = 0;
		}
		if (h->off + h->len < RELAY_HIGH_WATER)
			n = read(h->sfd, h->buf + h->off + h->len,
			    RELAY_HIGH_WATER - h->off - h->len);
		else
			n = -1, errno = EAGAIN;	/* full: the gate decides now */
		if (n > 0) {
			h->len += (size_t)n;
			h->held += (size_t)n;
		}
	} else if (h->pipe[0] != -1 || (!h->nosplice &&
	    h->bytes >= RELAY_SPLICE_AFTER && h->len == 0 && splice_start(h) == 0)) {
		n = splice_in(h);
		if (n == -1 && errno == EINVAL && h->inpipe == 0) {
			splice_stop(h);		/* these sockets cannot splice */
			return 0;		/* read again in copy mode */
		}
		if (n > 0) {
			int passes = 1, err;

			do {
				h->inpipe += (size_t)n;
				h->bytes += (uint64_t)n;
			} while (passes++ < RELAY_SPLICE_PASSES &&
			    h->inpipe < h->cap && (n = splice_in(h)) > 0);
			err = errno;
			touch(r);
			if (splice_flush(h) == -1)
				return -1;
			/* More to come, or the last pass ended at EOF or an
			 * error: those are handled below, after the flush. */
			if (n > 0 || (n == -1 && (err == EAGAIN || err == EINTR)))
				return 0;
			errno = err;
		}
		if (n == -1 && errno == EAGAIN && h->inpipe > 0) {
			/* Out of pipe slots: read again once some have left. */
			h->cap = h->inpipe;
			return 0;
		}
	} else {
		n = read(h->sfd, relay_scratch, sizeof(relay_scratch));
		if (n > 0) {
			/* The FIN was in before this read, and the read did not
			 * fill the buffer: it took the rest of the stream, so
			 * the EOF is here too, without one more read. (Nothing
			 * can follow a FIN; data before it is queued in order
			 * before epoll reports it. A reset is reported as
			 * EV_READ|EV_WRITE, never EV_CLOSED.) */
			int last = closed && (size_t)n < sizeof(relay_scratch);

			h->bytes += (uint64_t)n;
			touch(r);
			if (copy_out(h, relay_scratch, (size_t)n, last) == -1)
				return -1;
			if (!last)
				return 0;
			n = 0;
		}
	}
	if (n == 0) {
		h->src_eof = 1;
	} else if (n == -1 && errno != EAGAIN && errno != EINTR) {
		relay_end(r, errno_reason(errno));
		return -1;
	}
	if (h == &r->up && r->gate != NULL) {
		touch(r);
		if (gate_run(h) == -1)
			return -1;
	}
	return half_maybe_shut(h);
}

static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct half *h = arg;

	(void)fd;
	if (half_read(h, (what & EV_CLOSED) != 0) == 0)
		half_arm(h);
}

static void
write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct half *h = arg;
	int rc;

	(void)fd;
	(void)what;
	if (h->pipe[0] != -1) {
		rc = splice_flush(h);
	} else {
		rc = copy_flush(h);
	}
	if (rc == 0 && half_maybe_shut(h) == 0)
		half_arm(h);
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

static int
half_init(struct relay *r, struct half *h, int sfd, int dfd, struct half *peer)
{
	h->r = r;
	h->peer = peer;
	h->sfd = sfd;
	h->dfd = dfd;
	h->pipe[0] = h->pipe[1] = -1;
	h->rev = event_new(r->base, sfd, EV_READ | EV_CLOSED | EV_PERSIST, read_cb, h);
	h->wev = event_new(r->base, dfd, EV_WRITE | EV_PERSIST, write_cb, h);
	h->hup = evtimer_new(r->base, hup_cb, h);
	return h->rev != NULL && h->wev != NULL && h->hup != NULL ? 0 : -1;
}

static void
half_free(struct half *h)
{
	if (h->rev != NULL)
		event_free(h->rev);
	if (h->wev != NULL)
		event_free(h->wev);
	if (h->hup != NULL)
		event_free(h->hup);
	if (h->pipe[0] != -1) {
		close(h->pipe[0]);
		close(h->pipe[1]);
	}
	free(h->buf);
}

/* Queues b[0 .. n) as h's first bytes out (copy mode, before any read). */
static int
half_preload(struct half *h, const void *b, size_t n)
{
	if (n == 0)
		return 0;
	if (n > RELAY_HIGH_WATER || (h->buf = malloc(RELAY_HIGH_WATER)) == NULL)
		return -1;
	memcpy(h->buf, b, n);
	h->len = n;
	if (h == &h->r->up && h->r->gate != NULL)
		h->held = n;
	return 0;
}

struct relay *
relay_new(struct event_base *base, int cfd, int ufd, const void *greeting,
    size_t greeting_len, const void *early, size_t early_len,
    int idle_timeout_s, relay_gate_cb gate, relay_done_cb cb, void *arg)
{
	struct relay *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->up.pipe[0] = r->up.pipe[1] = r->down.pipe[0] = r->down.pipe[1] = -1;
	r->base = base;
	r->gate = gate;
	r->cb = cb;
	r->arg = arg;
	r->idle_tv.tv_sec = idle_timeout_s;
	if ((r->idle = evtimer_new(base, idle_cb, r)) == NULL ||
	    half_init(r, &r->up, cfd, ufd, &r->down) == -1 ||
	    half_init(r, &r->down, ufd, cfd, &r->up) == -1 ||
	    half_preload(&r->down, greeting, greeting_len) == -1 ||
	    half_preload(&r->up, early, early_len) == -1) {
		r->up.sfd = r->down.sfd = -1;	/* the caller keeps the sockets */
		relay_free(r);
		return NULL;
	}
	touch(r);
	evtimer_add(r->idle, &r->idle_tv);
	/* The greeting goes out now: the socket is fresh, so it fits. Bytes
	 * the client sent after its request, and anything that did not fit,
	 * are handled from the loop (the gate, or an error, may end the
	 * relay, which must not happen before the caller holds the pointer). */
	if (r->down.len > 0) {
		ssize_t n = send(cfd, r->down.buf, r->down.len, MSG_NOSIGNAL);
		if (n > 0) {
			r->down.off = (size_t)n;
			r->down.len -= (size_t)n;
		}
		if (r->down.len > 0)
			half_want_write(&r->down, 1);
		else {
			free(r->down.buf);
			r->down.buf = NULL;
			r->down.off = 0;
		}
	}
	if (r->up.len > 0 && gate == NULL) {
		r->up.bytes = r->up.len;
		half_want_write(&r->up, 1);
	}
	half_arm(&r->up);
	half_arm(&r->down);
	/* Only after half_arm: libevent does not register an event with
	 * epoll when it is added while already active, so activating first
	 * would leave the client unread for good. */
	if (r->up.len > 0 && gate != NULL)
		event_active(r->up.rev, EV_READ, 0);
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
	if (r->idle != NULL)
		event_free(r->idle);
	half_free(&r->up);
	half_free(&r->down);
	if (r->up.sfd != -1)
		close(r->up.sfd);
	if (r->down.sfd != -1)
		close(r->down.sfd);
	free(r);
}
