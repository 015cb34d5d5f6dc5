/* The control socket's insides, shared by its three files and nothing
 * else: the server (control.c), one caller's connection and its answer
 * (here, ctlconn.c) and the push path (ctlput.c). */
#ifndef EG_CTLCONN_H
#define EG_CTLCONN_H

#include <sys/queue.h>
#include <sys/un.h>

#include <stddef.h>
#include <time.h>

#include "guard/log.h"
#include "guard/logevery.h"
#include "plane/control.h"
#include "proto/http.h"

struct evbuffer;
struct event;
struct ctlpush;

/* A whole request must arrive within this, and later the whole answer
 * must be taken: a stalled caller cannot hold a connection. */
#define CONTROL_TIMEOUT_S	10

/* Where a connection is. One request per connection, then it closes. */
enum ctlconn_state {
	CTLCONN_HEAD,	/* reading the request head */
	CTLCONN_BODY,	/* reading a push's body */
	CTLCONN_WAIT,	/* its push waits or is being checked */
	CTLCONN_REPLY	/* writing the answer; closed once it is written */
};

/* One caller, from accept until its answer is written. */
struct ctlconn {
	LIST_ENTRY(ctlconn) entry;
	struct control	*c;
	int		 fd;
	long		 uid;		/* SO_PEERCRED at accept; -1 if unknown */
	enum ctlconn_state state;
	struct event	*rev;
	struct event	*wev;
	struct event	*timer;
	struct evbuffer	*out;		/* what is still to be written */
	char		*body;		/* a push's body, exactly len bytes */
	size_t		 max;		/* its bound: a bundle, or a tenant spec */
	/* What the body is for (the path, for the log lines) and, in tenant
	 * mode, whose: a tenant's bundle (tenant set) or a tenant's spec
	 * (spec set, tenant NULL). */
	char		 path[64];
	void		*tenant;
	int		 spec;
	char		 tid[40];
	size_t		 tidlen;
	size_t		 len;
	size_t		 got;
	size_t		 headlen;
	char		 head[HTTP_HEAD_MAX];
};

/* The server: accepts callers, reads one request each, answers it.
 * Pushes go through the queue (plane/ctlpush.h). */
struct control {
	struct control_env env;
	char		 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int		 listen_fd;	/* -1 until path is bound: then ours to unlink */
	struct event	*listen_ev;
	struct event	*resume_ev;	/* accepting again after EMFILE */
	struct log_every paused;	/* "accept paused" lines */
	LIST_HEAD(ctlconn_list, ctlconn) conns;
	size_t		 nconns;
	struct ctlpush	*pushes;
	/* Connections refused over CONTROL_MAX_CONNS: logged at most once
	 * a second, with how many since the last line. */
	struct log_every refused;
	long		 refused_uid;	/* the newest one's peer */
};

/* One "control" log line; uid, not the connection: a caller may be
 * gone by the time its push is answered. */
void ctlconn_log(struct control *c, long uid, const char *method,
    const char *path, int status, const char *result);
/* Frees everything k holds. A push it was waiting for goes on without
 * it. */
void ctlconn_close(struct ctlconn *k);
/* Writes what the socket takes now and waits for EV_WRITE for the rest;
 * closes k once its answer is out, or when the caller is gone. Returns
 * -1 when k was freed. */
int ctlconn_flush(struct ctlconn *k);
/* No memory to build an answer: a fixed 500, best effort, then close. */
void ctlconn_fail(struct ctlconn *k);
/* The answer (body moved out, not copied), then the connection closes.
 * This and the next two are NULL-safe: a caller that hung up gets
 * nothing. ctlconn_refuse is not (it logs k's uid). */
void ctlconn_reply(struct ctlconn *k, int status, const char *type,
    struct evbuffer *body);
/* {"error":…} when error is set, else a push's 200 for p. */
void ctlconn_reply_json(struct ctlconn *k, int status, const char *error,
    const char *msg, const struct policy *p, size_t revoked);
void ctlconn_error(struct ctlconn *k, int status, const char *error,
    const char *msg);
/* A request refused from its head alone: logged, answered, closed. */
void ctlconn_refuse(struct ctlconn *k, const char *method, const char *path,
    int status, const char *error, const char *msg);

#endif
