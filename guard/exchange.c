/* Absolute-form HTTP: one exchange at a time on a client connection,
 * the request body and the response pumped with exact framing, an idle
 * upstream kept for the next request to the same place. See
 * guard/exchange.h. */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proto/chunked.h"
#include "guard/config.h"
#include "guard/conn.h"
#include "guard/dial.h"
#include "guard/exchange.h"
#include "proto/http.h"
#include "guard/relay.h"

#define PROXY_HIGH_WATER	RELAY_HIGH_WATER

static void http_pump_resp(struct proxy_conn *c);

/* While the client is not read (its body waits for the upstream to
 * drain, or the whole request is sent and the answer awaited), a client
 * that aborts (RST) would go unseen until the upstream answers, takes
 * every queued byte or times out: the guard would hold the upstream, a
 * --max-conns slot and the queued bytes for a client that is gone. So,
 * as the relay does for a paused source, the client's socket is looked
 * at every RELAY_HUP_CHECK_S for a pending reset. c->timer is free
 * during an exchange (the header timeout is off; it is set again when
 * the exchange ends). */
static void
cl_hup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_conn *c = arg;
	struct timeval tv = { RELAY_HUP_CHECK_S, 0 };
	const char *why;

	(void)fd;
	(void)what;
	if (c->state != ST_HTTP || c->ex == NULL || c->cbev == NULL ||
	    (bufferevent_get_enabled(c->cbev) & EV_READ))
		return;		/* no longer paused: reads see it */
	if ((why = relay_pending_error(bufferevent_getfd(c->cbev))) != NULL) {
		exchange_log_close(c, why);
		conn_free(c);
		return;
	}
	evtimer_add(c->timer, &tv);
}

/* Stops reading the client for now, and looks at it for a reset. */
static void
cl_pause(struct proxy_conn *c)
{
	struct timeval tv = { RELAY_HUP_CHECK_S, 0 };

	bufferevent_disable(c->cbev, EV_READ);
	if (!evtimer_pending(c->timer, NULL)) {
		evtimer_assign(c->timer, c->env.base, cl_hup_cb, c);
		evtimer_add(c->timer, &tv);
	}
}

static void
up_idle_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)what;
	/* A pooled upstream closed or spoke out of turn: drop it. */
	if (bev == c->ex->ubev) {
		bufferevent_free(c->ex->ubev);
		c->ex->ubev = NULL;
	}
}

static void
up_idle_read_cb(struct bufferevent *bev, void *arg)
{
	up_idle_cb(bev, 0, arg);
}

/* The client has taken every byte of the response: log the exchange
 * whole, then keep the client for the next request, or close. */
static void
http_exchange_end(struct proxy_conn *c)
{
	struct timeval tv;

	exchange_log_close(c, "complete");
	if (!c->ex->keep_client) {
		conn_finish(c);
		return;
	}
	/* Back to reading a head: the next request is checked from scratch,
	 * and is another request from its first byte: its own id, no
	 * policy yet, even if it is refused before its head is whole (431,
	 * a bare LF, the header timeout). */
	c->state = ST_HEAD;
	c->id = c->env.new_id(c->env.owner);
	c->epoch = -1;
	c->digest[0] = '\0';
	c->have_dest = 0;
	c->naddrs = 0;
	c->ex->resp_started = 0;
	c->ex->retrying = 0;
	c->ex->decided = 0;
	bufferevent_set_timeouts(c->cbev, NULL, NULL);
	bufferevent_setcb(c->cbev, c->env.head_read, NULL, c->env.head_event, c);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, HTTP_HEAD_MAX);
	bufferevent_enable(c->cbev, EV_READ);
	c->ex->served++;
	evtimer_del(c->timer);
	evtimer_assign(c->timer, c->env.base, c->env.header_timeout, c);
	tv.tv_sec = c->env.cfg->header_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->timer, &tv);
	if (evbuffer_get_length(bufferevent_get_input(c->cbev)) > 0)
		bufferevent_trigger(c->cbev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS |
		    BEV_TRIG_DEFER_CALLBACKS);
}

/* The whole response is read and queued for the client: the upstream is
 * kept for the next request or closed now; the exchange ends when the
 * client has taken its last byte (cl_write_cb), within the write timeout
 * (--idle-timeout, cl_event_cb), never before: a close then would drop
 * what is still queued, and a FIN would make the rest look whole. The
 * next request waits in the kernel meanwhile. */
static void
http_exchange_done(struct proxy_conn *c)
{
	int keep_up;

	c->ex->keep_client = c->ex->req_done && !c->ex->client_close &&
	    c->ex->resp == RESP_DONE;
	keep_up = c->ex->keep_client && !c->ex->resp_close && c->ex->ubev != NULL &&
	    evbuffer_get_length(bufferevent_get_input(c->ex->ubev)) == 0;
	if (keep_up) {
		bufferevent_set_timeouts(c->ex->ubev, NULL, NULL);
		bufferevent_setcb(c->ex->ubev, up_idle_read_cb, NULL, up_idle_cb, c);
		bufferevent_enable(c->ex->ubev, EV_READ);
	} else if (c->ex->ubev != NULL) {
		bufferevent_free(c->ex->ubev);
		c->ex->ubev = NULL;
	}
	if (evbuffer_get_length(bufferevent_get_output(c->cbev)) == 0) {
		http_exchange_end(c);
		return;
	}
	cl_pause(c);	/* a request body not yet sent is not sent any more */
	bufferevent_setwatermark(c->cbev, EV_WRITE, 0, 0);
}

/* Ends an exchange before its end. A body the client reads until the
 * close (close-delimited, or de-chunked for HTTP/1.0) would look complete
 * after a FIN: cut short, it ends with a reset. c may be gone after this. */
void
exchange_cut(struct proxy_conn *c)
{
	if (c->ex->resp == RESP_BODY && (c->ex->resp_kind == HTTP_BODY_CLOSE ||
	    (c->ex->client10 && c->ex->resp_kind == HTTP_BODY_CHUNKED))) {
		conn_reset(c);
		return;
	}
	conn_finish(c);
}

void
exchange_decide(struct proxy_conn *c)
{
	if (c->ex->decided)
		return;
	c->ex->decided = 1;
	conn_log_decision(c, c->allow_reason, NULL);
}

void
exchange_log_close(struct proxy_conn *c, const char *why)
{
	exchange_decide(c);
	conn_log_close(c, why, c->ex->up, c->ex->down);
}

/* A failure after the request was admitted (its allow decision is
 * logged): answer with r if no response byte went out yet, log the close
 * (reason: why, or r's name), and close. */
void
exchange_abort(struct proxy_conn *c, enum reason r, const char *why)
{
	if (!c->ex->resp_started)
		conn_answer_http(c, r);
	exchange_log_close(c, why != NULL ? why : reason_name(r));
	exchange_cut(c);
}

/* Client → upstream: the request body, framed exactly. Bytes after it
 * stay in the client's buffer as the next request. */
static int
http_pump_body(struct proxy_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->cbev);
	struct evbuffer *out = bufferevent_get_output(c->ex->ubev);
	size_t n = evbuffer_get_length(in), m = 0;

	if (c->ex->req_done || n == 0)
		return 0;
	if (c->ex->reqf.chunked) {
		const char *b = (const char *)evbuffer_pullup(in, (ssize_t)n);
		int done = 0;
		long k = b != NULL ? chunked_feed(&c->ex->req_ch, b, n, &done) : -1;
		if (k < 0)
			return -1;
		m = (size_t)k;
		c->ex->req_done = done;
	} else {
		m = (long long)n < c->ex->req_left ? n : (size_t)c->ex->req_left;
		c->ex->req_left -= (long long)m;
		c->ex->req_done = c->ex->req_left == 0;
	}
	if (m > 0 && evbuffer_remove_buffer(in, out, m) != (int)m)
		return -1;
	c->ex->up += m;
	conn_send_now(c->ex->ubev);
	if (c->ex->req_done || evbuffer_get_length(out) >= PROXY_HIGH_WATER)
		cl_pause(c);
	return 0;
}

static void
cl_read_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if (http_pump_body(c) == -1)
		exchange_abort(c, REASON_BAD_REQUEST, "malformed request body");
}

/* The client drained: resume the response, or end the exchange once
 * the last byte of a whole one is out (http_exchange_done). */
static void
cl_write_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	conn_send_drained(bev);
	if (c->ex->resp == RESP_DONE) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			http_exchange_end(c);
		return;
	}
	if (c->ex->ubev != NULL) {
		bufferevent_enable(c->ex->ubev, EV_READ);
		/* A pause between two 1xx heads leaves bytes already read
		 * (perhaps the whole rest of the response), which the socket
		 * will not announce again. */
		if (evbuffer_get_length(bufferevent_get_input(c->ex->ubev)) > 0)
			http_pump_resp(c);
	}
}

static void
cl_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if ((what & (BEV_EVENT_TIMEOUT | BEV_EVENT_WRITING)) ==
	    (BEV_EVENT_TIMEOUT | BEV_EVENT_WRITING)) {
		/* The client took no byte of what is queued for it: no answer
		 * would reach it either, and a FIN would make what it got
		 * look whole. */
		exchange_log_close(c, "idle_timeout");
		conn_reset(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		exchange_abort(c, REASON_HEADER_TIMEOUT, "idle_timeout");
		return;
	}
	/* The client left mid-exchange: nothing to answer. */
	exchange_log_close(c, (what & BEV_EVENT_EOF) ? "eof" : "reset");
	conn_free(c);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	exchange_decide(arg);
	http_pump_resp(arg);
}

/* The upstream drained: resume the request body. */
static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_conn *c = arg;

	conn_send_drained(bev);
	if (!c->ex->req_done)
		bufferevent_enable(c->cbev, EV_READ);
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct proxy_conn *c = arg;

	(void)bev;
	if ((what & BEV_EVENT_EOF) && c->ex->resp == RESP_BODY &&
	    c->ex->resp_kind == HTTP_BODY_CLOSE) {
		http_pump_resp(c);	/* anything read with the EOF */
		if (c->state != ST_HTTP)
			return;
		c->ex->resp = RESP_DONE;
		bufferevent_free(c->ex->ubev);
		c->ex->ubev = NULL;
		http_exchange_done(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		exchange_abort(c, REASON_UPSTREAM_TIMEOUT, "idle_timeout");
		return;
	}
	if (c->ex->fwd != NULL && c->ex->resp == RESP_HEAD && c->ex->down == 0 &&
	    evbuffer_get_length(bufferevent_get_input(c->ex->ubev)) == 0) {
		/* The pooled upstream was gone: same addresses, fresh dial. */
		bufferevent_free(c->ex->ubev);
		c->ex->ubev = NULL;
		c->ex->reused = 0;
		c->ex->retrying = 1;
		bufferevent_disable(c->cbev, EV_READ);
		c->state = ST_DIAL;
		c->dial = dial_start(c->env.base, c->addrs, c->naddrs, c->dest.port,
		    (int)c->env.cfg->connect_timeout * 1000, c->env.dial_done, c);
		if (c->dial == NULL)
			exchange_abort(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
		return;
	}
	exchange_abort(c, REASON_UPSTREAM_UNREACHABLE, "upstream closed mid-response");
}

/* Takes one response head off the upstream's input: parsed, checked,
 * rewritten for the client. Returns 1 when a head was taken, 0 when more
 * bytes are needed, -1 when the exchange was aborted. */
static int
http_take_resp_head(struct proxy_conn *c, struct evbuffer *in, struct evbuffer *out)
{
	size_t n = evbuffer_get_length(in);
	size_t scan = n < HTTP_RESP_HEAD_MAX ? n : HTTP_RESP_HEAD_MAX;
	const char *b;
	struct http_resp *r = NULL;
	char *head = NULL, why[128] = "out of memory";
	size_t headlen;
	long end, hl;
	int rc = -1;

	if (n == 0)
		return 0;
	b = (const char *)evbuffer_pullup(in, (ssize_t)scan);
	end = b != NULL ? http_head_end(b, scan) : -1;
	if (end == 0 && scan < HTTP_RESP_HEAD_MAX)
		return 0;
	if (end <= 0) {
		snprintf(why, sizeof(why), end == 0 ? "response head too large" :
		    "malformed response head");
		goto out;
	}
	if ((r = malloc(sizeof(*r))) == NULL)
		goto out;
	if (http_parse_response_head(b, (size_t)end, r, why, sizeof(why)) == -1 ||
	    http_response_framing(r, c->ex->head_req, &c->ex->resp_kind, &c->ex->resp_left,
	    &c->ex->resp_close, why, sizeof(why)) == -1 ||
	    (c->ex->client10 && http_response_check_http10(r, c->ex->resp_kind, why,
	    sizeof(why)) == -1))
		goto out;
	/* An upstream that refuses a request often answers before reading
	 * its body, and may not read it at all: the body would then be parsed
	 * as the next request on the connection. Not pooled. */
	if (r->status >= 400 && (c->ex->reqf.chunked || c->ex->reqf.length > 0))
		c->ex->resp_close = 1;
	/* An HTTP/1.0 client gets no 1xx (RFC 9110 15.2). */
	if (r->status >= 200 || !c->ex->client10) {
		/* The rewrite adds at most ": " per field and one
		 * Connection line. */
		headlen = (size_t)end + 2 * r->nheaders + 64;
		if ((head = malloc(headlen)) == NULL)
			goto out;
		/* Connection is hop-by-hop: the upstream closing does not
		 * end the client's connection, unless the body is delimited
		 * by that close; an HTTP/1.0 client's always ends, and a
		 * chunked body reaches it de-chunked, delimited by the close. */
		c->ex->client_close = c->ex->reqf.close || c->ex->client10 || *c->env.stopping ||
		    c->ex->resp_kind == HTTP_BODY_CLOSE;
		hl = http_forward_response_head(r, (c->ex->client_close ? HTTP_FWD_CLOSE : 0) |
		    (c->ex->client10 ? HTTP_FWD_HTTP10 : 0), head, headlen);
		if (hl <= 0) {
			snprintf(why, sizeof(why), "response head too large");
			goto out;
		}
		evbuffer_add(out, head, (size_t)hl);
		c->ex->resp_started = 1;
	}
	c->ex->down += (uint64_t)end;
	evbuffer_drain(in, (size_t)end);
	free(c->ex->fwd);		/* answered: no retry any more */
	c->ex->fwd = NULL;
	if (r->status >= 200) {		/* else a 1xx: the real answer follows */
		chunked_init(&c->ex->resp_ch);
		c->ex->resp = c->ex->resp_kind == HTTP_BODY_NONE ? RESP_DONE : RESP_BODY;
	}
	rc = 1;
out:
	free(head);
	free(r);
	if (rc == -1)
		exchange_abort(c, REASON_UPSTREAM_UNREACHABLE, why);
	return rc;
}

/* At 64 KiB queued for the client: sends what out holds, and when the
 * client leaves 64 KiB of it unsent, stops reading the upstream
 * (cl_write_cb resumes) and returns 1. Below, the bytes wait for the
 * pump's one send at its end: a write per run of chunk data de-chunked
 * (or per 1xx head) would be one per upstream byte for a body of
 * one-byte chunks. */
static int
resp_paused(struct proxy_conn *c, struct evbuffer *out)
{
	if (evbuffer_get_length(out) < PROXY_HIGH_WATER)
		return 0;
	conn_send_now(c->cbev);
	if (evbuffer_get_length(out) < PROXY_HIGH_WATER)
		return 0;
	bufferevent_disable(c->ex->ubev, EV_READ);
	return 1;
}

/* Upstream → client: one response (after any 1xx), framed exactly. */
static void
http_pump_resp(struct proxy_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->ex->ubev);
	struct evbuffer *out = bufferevent_get_output(c->cbev);

	while (c->ex->resp != RESP_DONE) {
		size_t n = evbuffer_get_length(in), m = 0, skip = 0, off;

		if (c->ex->resp == RESP_HEAD) {
			int k = http_take_resp_head(c, in, out);

			if (k == -1)
				return;		/* aborted: c may be gone */
			if (k == 0)
				break;		/* a 1xx forwarded may wait below */
			/* A 1xx head (resp still RESP_HEAD) is bytes for the
			 * client like a body's: the same 64 KiB bound, or an
			 * upstream sending them without end to a client that
			 * does not read would grow the buffer without limit.
			 * The final head goes out with the body's first bytes. */
			if (c->ex->resp == RESP_HEAD && resp_paused(c, out))
				break;
			continue;
		}
		if (n == 0)
			break;
		switch (c->ex->resp_kind) {
		case HTTP_BODY_LENGTH:
			m = (long long)n < c->ex->resp_left ? n : (size_t)c->ex->resp_left;
			c->ex->resp_left -= (long long)m;
			if (c->ex->resp_left == 0)
				c->ex->resp = RESP_DONE;
			break;
		case HTTP_BODY_CHUNKED: {
			const char *b = (const char *)evbuffer_pullup(in, (ssize_t)n);
			int done = 0;
			long k = b == NULL ? -1 : c->ex->client10 ?
			    chunked_decode(&c->ex->resp_ch, b, n, &done, &off, &m) :
			    chunked_feed(&c->ex->resp_ch, b, n, &done);

			if (k < 0) {
				exchange_abort(c, REASON_UPSTREAM_UNREACHABLE, "malformed chunked response");
				return;
			}
			/* De-chunking: the data ends the run, the framing
			 * before it is dropped. */
			if (!c->ex->client10)
				m = (size_t)k;
			skip = (size_t)k - m;
			if (done)
				c->ex->resp = RESP_DONE;
			break;
		}
		default:
			m = n;
			break;
		}
		evbuffer_drain(in, skip);
		if (m > 0 && evbuffer_remove_buffer(in, out, m) != (int)m) {
			exchange_abort(c, REASON_UPSTREAM_UNREACHABLE, "out of memory");
			return;
		}
		c->ex->down += skip + m;
		if (resp_paused(c, out))
			break;
		if (skip + m == 0)
			break;
	}
	conn_send_now(c->cbev);		/* what this pump queued: one write */
	if (c->ex->resp == RESP_DONE)
		http_exchange_done(c);
}

int
exchange_prepare(struct proxy_conn *c, const struct http_req *req,
    const char *path, size_t path_len)
{
	char why[128];
	long n;

	/* Only absolute-form (and transparent HTTP) connections carry the
	 * exchange's state: a tunnel's memory is mostly its proxy_conn. */
	if (c->ex == NULL && (c->ex = calloc(1, sizeof(*c->ex))) == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return 0;
	}
	if (http_request_framing(req, &c->dest, &c->ex->reqf, why, sizeof(why)) == -1) {
		conn_deny(c, REASON_BAD_REQUEST, why);
		return 0;
	}
	c->ex->head_req = strcmp(req->method, "HEAD") == 0;
	c->ex->client10 = req->minor == 0;
	free(c->ex->fwd);
	if ((c->ex->fwd = malloc(HTTP_HEAD_MAX + 256)) == NULL) {
		conn_deny(c, REASON_BAD_REQUEST, "out of memory");
		return 0;
	}
	n = http_forward_head(req, &c->dest, path, path_len, c->ex->fwd, HTTP_HEAD_MAX + 256);
	if (n < 0) {
		conn_deny(c, REASON_HEADER_TOO_LARGE, NULL);
		return 0;
	}
	c->ex->fwd_len = (size_t)n;
	return 1;
}

/* The upstream is ready (new or reused): send the head, then the body as
 * it comes, and frame the response. */
void
exchange_start(struct proxy_conn *c)
{
	struct timeval idle = { c->env.cfg->idle_timeout, 0 };

	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	c->state = ST_HTTP;
	c->ex->up = c->ex->fwd_len;
	c->ex->down = 0;
	c->ex->resp = RESP_HEAD;
	c->ex->resp_close = 0;
	c->ex->client_close = 0;
	c->ex->resp_started = 0;
	c->ex->req_left = c->ex->reqf.chunked ? 0 : c->ex->reqf.length;
	c->ex->req_done = !c->ex->reqf.chunked && c->ex->reqf.length == 0;
	chunked_init(&c->ex->req_ch);
	/* A socket bufferevent starts with EV_WRITE on, which would arm
	 * EPOLLOUT for every byte queued: off while nothing waits. */
	conn_send_drained(c->ex->ubev);
	conn_send_drained(c->cbev);
	evbuffer_add(bufferevent_get_output(c->ex->ubev), c->ex->fwd, c->ex->fwd_len);
	/* A pooled upstream may have closed just before this request: keep
	 * the head for one retry on a fresh connection (bodiless requests
	 * only, like every proxy and browser). */
	if (!c->ex->reused || !c->ex->req_done) {
		free(c->ex->fwd);
		c->ex->fwd = NULL;
	}
	/* A request on a pooled upstream may yet be retried on a fresh one
	 * (up_event_cb): its allow line waits for the upstream's first byte,
	 * the retry, or the end, so that its peer is the one that served. */
	if (c->ex->fwd == NULL)
		exchange_decide(c);
	bufferevent_setwatermark(c->ex->ubev, EV_WRITE, PROXY_HIGH_WATER / 2, 0);
	bufferevent_setwatermark(c->cbev, EV_WRITE, PROXY_HIGH_WATER / 2, 0);
	bufferevent_setwatermark(c->cbev, EV_READ, 0, PROXY_HIGH_WATER);
	bufferevent_setwatermark(c->ex->ubev, EV_READ, 0, PROXY_HIGH_WATER);
	/* Write timeouts too: a peer that takes nothing of what is queued
	 * for it pauses the other side's reads (backpressure), and a
	 * disabled read runs no timer, so only the stalled write can tell
	 * that nothing moves (the relay's idle timer sees the same). */
	bufferevent_set_timeouts(c->ex->ubev, &idle, &idle);
	bufferevent_set_timeouts(c->cbev, &idle, &idle);
	bufferevent_setcb(c->ex->ubev, up_read_cb, up_write_cb, up_event_cb, c);
	bufferevent_setcb(c->cbev, cl_read_cb, cl_write_cb, cl_event_cb, c);
	/* Writes go out at once (conn_send_now): EV_WRITE is armed only
	 * for what a socket did not take. */
	bufferevent_enable(c->ex->ubev, EV_READ);
	conn_send_now(c->ex->ubev);
	if (!c->ex->req_done) {
		bufferevent_enable(c->cbev, EV_READ);
		if (http_pump_body(c) == -1)
			exchange_abort(c, REASON_BAD_REQUEST, "malformed request body");
	} else {
		cl_pause(c);	/* only the answer is awaited */
	}
}

/* A pooled upstream that sent anything since its last response (bytes
 * or its close), even if the loop has not seen it yet, is not reused:
 * those bytes would be taken as the answer to the next request. */
static int
up_quiet(struct bufferevent *ubev)
{
	char b;
	ssize_t n;

	if (evbuffer_get_length(bufferevent_get_input(ubev)) != 0)
		return 0;
	n = recv(bufferevent_getfd(ubev), &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* An idle upstream from the previous exchange serves this request only
 * for the same (host, port) and an address classified in THIS request. */
int
exchange_reuse(struct proxy_conn *c)
{
	size_t i;

	if (c->ex->ubev == NULL)
		return 0;
	if (strcmp(c->ex->udest.host, c->dest.host) == 0 && c->ex->udest.port == c->dest.port &&
	    up_quiet(c->ex->ubev)) {
		for (i = 0; i < c->naddrs; i++) {
			if (c->addrs[i].family == c->ex->uaddr.family &&
			    memcmp(c->addrs[i].addr, c->ex->uaddr.addr, 16) == 0) {
				conn_addr_peer_str(&c->ex->uaddr, c->dest.port, c->peer,
				    sizeof(c->peer));
				return 1;
			}
		}
	}
	bufferevent_free(c->ex->ubev);
	c->ex->ubev = NULL;
	return 0;
}

void
exchange_revoke(struct proxy_conn *c)
{
	exchange_log_close(c, "revoked");
	exchange_cut(c);
}
