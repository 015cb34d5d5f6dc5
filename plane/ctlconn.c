#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "plane/ctlconn.h"
#include "plane/ctljson.h"
#include "plane/ctlpush.h"

/* uid, not the connection: a caller may be gone by the time its push is
 * answered. */
void
ctlconn_log(struct control *c, long uid, const char *method, const char *path,
    int status, const char *result)
{
	struct log_rec r;

	log_rec_begin(&r, c->env.log, "control");
	log_rec_int(&r, "peer_uid", uid);
	log_rec_str(&r, "method", method);
	log_rec_str(&r, "path", path);
	log_rec_int(&r, "status", status);
	if (result != NULL)
		log_rec_str(&r, "result", result);
	log_emit(c->env.log, &r);
}

static const char *
reason_phrase(int status)
{
	switch (status) {
	case 200:	return "OK";
	case 400:	return "Bad Request";
	case 403:	return "Forbidden";
	case 404:	return "Not Found";
	case 405:	return "Method Not Allowed";
	case 408:	return "Request Timeout";
	case 409:	return "Conflict";
	case 411:	return "Length Required";
	case 413:	return "Content Too Large";
	case 417:	return "Expectation Failed";
	case 431:	return "Request Header Fields Too Large";
	case 500:	return "Internal Server Error";
	case 501:	return "Not Implemented";
	case 503:	return "Service Unavailable";
	}
	return "Error";
}

/* Frees everything the connection holds. A push it was waiting for goes
 * on without it. */
void
ctlconn_close(struct ctlconn *k)
{
	struct control *c = k->c;

	if (k->state == CTLCONN_WAIT)
		ctlpush_forget(c->pushes, k);
	LIST_REMOVE(k, entry);
	c->nconns--;
	if (k->rev != NULL)
		event_free(k->rev);
	if (k->wev != NULL)
		event_free(k->wev);
	if (k->timer != NULL)
		event_free(k->timer);
	if (k->out != NULL)
		evbuffer_free(k->out);
	free(k->body);
	/* A tenant's push that never reached the queue lets its tenant go. */
	if (k->tenant != NULL)
		c->env.tenants->hold(k->tenant, -1);
	close(k->fd);
	free(k);
}

/* Writes what the socket takes now and waits for EV_WRITE for the rest;
 * closes the connection once its answer is out, or when the caller is
 * gone. Returns -1 when k was freed. */
int
ctlconn_flush(struct ctlconn *k)
{
	while (evbuffer_get_length(k->out) > 0) {
		int n = evbuffer_write(k->out, k->fd);

		if (n > 0 || (n == -1 && errno == EINTR))
			continue;
		if (n == -1 && errno == EAGAIN && event_add(k->wev, NULL) == 0)
			return 0;
		ctlconn_close(k);
		return -1;
	}
	event_del(k->wev);
	if (k->state != CTLCONN_REPLY)
		return 0;
	ctlconn_close(k);
	return -1;
}

/* No memory to build an answer: a fixed one, best effort, then close. */
void
ctlconn_fail(struct ctlconn *k)
{
	static const char resp[] = "HTTP/1.1 500 Internal Server Error\r\n"
	    "Content-Type: application/json\r\nContent-Length: 53\r\n"
	    "Connection: close\r\n\r\n"
	    "{\"error\":\"internal_error\",\"message\":\"out of memory\"}\n";

	(void)send(k->fd, resp, sizeof(resp) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	ctlconn_close(k);
}

/* The answer, then the connection closes: reading stops, and the caller
 * has CONTROL_TIMEOUT_S to take it. NULL-safe: a caller that hung up
 * gets nothing. The body is moved out of body, not copied. */
void
ctlconn_reply(struct ctlconn *k, int status, const char *type, struct evbuffer *body)
{
	struct timeval tv = { CONTROL_TIMEOUT_S, 0 };

	if (k == NULL)
		return;
	k->state = CTLCONN_REPLY;
	event_del(k->rev);
	if (evbuffer_add_printf(k->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n", status,
	    reason_phrase(status), type, evbuffer_get_length(body),
	    status == 503 ? "Retry-After: 1\r\n" : "") < 0 ||
	    evbuffer_add_buffer(k->out, body) == -1) {
		ctlconn_fail(k);
		return;
	}
	if (evtimer_add(k->timer, &tv) == -1) {
		ctlconn_close(k);
		return;
	}
	(void)ctlconn_flush(k);
}

/* A JSON answer: {"error":…} when error is set, else a push's 200 for
 * p. NULL-safe like reply. */
void
ctlconn_reply_json(struct ctlconn *k, int status, const char *error, const char *msg,
    const struct policy *p, size_t revoked)
{
	struct evbuffer *b;

	if (k == NULL)
		return;
	if ((b = evbuffer_new()) == NULL) {
		ctlconn_fail(k);
		return;
	}
	if (error != NULL)
		ctljson_error(b, error, msg);
	else
		ctljson_accepted(b, p, revoked);
	ctlconn_reply(k, status, "application/json", b);
	evbuffer_free(b);
}

void
ctlconn_error(struct ctlconn *k, int status, const char *error, const char *msg)
{
	ctlconn_reply_json(k, status, error, msg, NULL, 0);
}

/* A request refused from its head alone: logged, answered, closed. */
void
ctlconn_refuse(struct ctlconn *k, const char *method, const char *path, int status,
    const char *error, const char *msg)
{
	ctlconn_log(k->c, k->uid, method, path, status, error);
	ctlconn_error(k, status, error, msg);
}

