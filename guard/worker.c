#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/conn.h"
#include "guard/guard.h"
#include "guard/handoff.h"
#include "guard/ifaddr.h"
#include "guard/log.h"
#include "guard/logevery.h"
#include "guard/proxy.h"
#include "guard/worker.h"
#include "util/fdres.h"
#include "util/errbuf.h"
#include "util/num.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"
#include "util/mutant.h"

#define WORKER_BACKLOG		1024
#define WORKER_PAUSE_USEC	100000	/* out of descriptors: accept again after */

struct worker {
	struct guard		*g;
	unsigned		 idx;
	struct event_base	*base;
	int			 own_base;
	struct log		*log;		/* g->log (worker 0) or a clone */
	struct classify_cfg	*classify;	/* own copy: its ifaddr watch writes it */
	struct ifaddr_watch	*ifwatch;
	struct resolver		*resolver;
	struct proxy		*proxy;
	struct metrics		 metrics;
	const struct policy	*policy;	/* in force here; read on this thread only */
	int			 stopping;
	int			 failed;
	struct event		*listeners[2 * CONFIG_MAX_LISTEN];	/* --listen, --transparent */
	int			 lfds[2 * CONFIG_MAX_LISTEN];
	size_t			 nlisteners;
	struct event		*accept_resume;
	/* Listeners of others (tenants) paused and resumed with these. */
	void			(*pause_hook)(void *arg, int on);
	void			*pause_arg;
	struct log_every	 paused;	/* "accept paused" lines */
	int			 near;		/* the last accept neared the reserve */
	struct handoff_box	*box;		/* connections other workers hand here */
	int			 cmd_fd;	/* eventfd: the main thread posted */
	struct event		*cmd_ev;
	pthread_t		 thread;
	int			 started;
	/* The mailbox, under g->wmu. */
	const struct policy	*pending;
	uint64_t		 posted;	/* seq of pending */
	uint64_t		 acked;		/* seq in force here */
	size_t			 revoked;	/* by the change acked last */
	int			 stop_req;	/* 1 drain, 2 now */
	int			 exited;
};

/* ---- the proxy's calls back (proxy_env) ---- */

static const struct policy *
px_policy(void *arg)
{
	return ((struct worker *)arg)->policy;
}

/* Tells the main thread this worker is done with (its thread ends, or
 * worker 0 drained). */
static void
notify_main(struct worker *w)
{
	uint64_t one = 1;

	if (write(w->g->wexit_fd, &one, sizeof(one)) == -1) {
		/* the eventfd cannot overflow at these counts */
	}
}

static void
px_closed(void *arg)
{
	struct worker *w = arg;

	if (w->box != NULL)
		handoff_set_live(w->box, (unsigned)proxy_live(w->proxy));
	if (!worker_drained(w))
		return;
	if (w->idx == 0)
		notify_main(w);
	else
		event_base_loopexit(w->base, NULL);
}

int
worker_drained(const struct worker *w)
{
	return w->stopping && proxy_live(w->proxy) == 0;
}

/* ---- accepting ---- */

static void
set_accepting(struct worker *w, int on)
{
	size_t i;

	for (i = 0; i < w->nlisteners; i++) {
		if (on)
			event_add(w->listeners[i], NULL);
		else
			event_del(w->listeners[i]);
	}
	if (w->pause_hook != NULL)
		w->pause_hook(w->pause_arg, on);
}

void
worker_on_pause(struct worker *w, void (*fn)(void *arg, int on), void *arg)
{
	w->pause_hook = fn;
	w->pause_arg = arg;
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)what;
	if (!w->stopping)
		set_accepting(w, 1);
}

/* Serves an accepted connection on worker arg: one it accepted, or one
 * another worker handed it (the box's take, guard/handoff.h). */
static void
serve_on(struct proxy *px, const struct handoff *h)
{
	if (h->transparent)
		proxy_accept_transparent(px, h->fd, (const struct sockaddr *)&h->ss,
		    (int)h->sl);
	else
		proxy_accept(px, h->fd, (const struct sockaddr *)&h->ss, (int)h->sl);
}

static void
serve(void *arg, const struct handoff *h)
{
	struct worker *w = arg;

	serve_on(w->proxy, h);
	if (w->box != NULL)
		handoff_set_live(w->box, (unsigned)proxy_live(w->proxy));
}

/* Hands h to a worker that serves clearly fewer, if there is one and it
 * takes it. Returns 1 if h went there. */
static int
hand_over(struct worker *w, const struct handoff *h)
{
	struct guard *g = w->g;
	unsigned loads[CONFIG_MAX_WORKERS], i, to;

#ifdef EG_MUTANT_NO_HANDOFF
	/* Test-only mutant: every connection stays where the kernel put it. */
	return 0;
#endif
	for (i = 0; i < g->nworkers; i++)
		loads[i] = handoff_load(g->workers[i]->box);
	to = handoff_pick(loads, g->nworkers, w->idx);
	if (to == w->idx || handoff_post(g->workers[to]->box, h) == -1)
		return 0;
	metrics_handoff(&w->metrics);
	return 1;
}

/* One accept per readiness: the listener is level-triggered, so a
 * backlog that holds more makes it ready again on the next pass, and no
 * accept4 is spent learning that the backlog is empty (EAGAIN). route,
 * when set, names the router of the connection (a tenant's listener):
 * then it is served here, never handed to another worker. */
void
worker_accept(struct worker *w, int lfd, int transparent,
    struct proxy *(*route)(void *arg, const struct sockaddr *sa), void *arg)
{
	struct handoff h;
	struct timeval tv = { 0, WORKER_PAUSE_USEC };
	int e;

	h.sl = sizeof(h.ss);
	h.transparent = transparent;
	/* The workload never takes a descriptor of the control socket's
	 * reserve (util/fdres.h): near it, the connection is left in the
	 * backlog while none is free below it; one accepted into it anyway
	 * (another worker took the last one meanwhile) is given back. Both
	 * read as EMFILE. */
	if (w->near && !fdres_room(lfd)) {
		h.fd = -1;
		errno = EMFILE;
	} else {
		h.fd = fdres_workload(accept4(lfd, (struct sockaddr *)&h.ss,
		    &h.sl, SOCK_NONBLOCK | SOCK_CLOEXEC));
	}
	if (h.fd != -1) {
		w->near = fdres_near(h.fd);
		if (route != NULL)
			serve_on(route(arg, (const struct sockaddr *)&h.ss), &h);
		else if (w->box == NULL || !hand_over(w, &h))
			serve(w, &h);
		return;
	}
	e = errno;
	/* Out of descriptors: accepting again at once would spin. Pause
	 * this worker's listeners briefly; connections wait in the kernel
	 * backlog (or go to another worker). */
	if (!conn_accept_starved(e))
		return;
	w->near = 1;	/* ask fdres_room again before the next accept */
	if (evtimer_pending(w->accept_resume, NULL))
		return;
	set_accepting(w, 0);
	evtimer_add(w->accept_resume, &tv);
	/* A client holding every descriptor pauses the listeners ten times
	 * a second: the log says so once, then once per LOG_EVERY_S. */
	log_every(w->log, &w->paused, "accept paused: out of file descriptors");
}

static void
listen_cb(evutil_socket_t lfd, short what, void *arg)
{
	(void)what;
	worker_accept(arg, lfd, 0, NULL, NULL);
}

/* A --transparent listener: redirected connections (guard/proxy.c). */
static void
listen_transp_cb(evutil_socket_t lfd, short what, void *arg)
{
	(void)what;
	worker_accept(arg, lfd, 1, NULL, NULL);
}

static socklen_t
dest_sockaddr(const struct dest *d, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (d->kind == DEST_IPV4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(d->port);
		memcpy(&s->sin_addr, d->addr, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(d->port);
	memcpy(&s6->sin6_addr, d->addr, 16);
	return sizeof(*s6);
}

/* One listening socket for d. With several workers each has its own
 * (SO_REUSEPORT: the kernel spreads new connections over them). Worker 0
 * first binds without it, as with one worker: an address another process
 * listens on is refused (EADDRINUSE) instead of shared with it. */
static int
open_listener(struct worker *w, const struct dest *d, int transparent, char *err,
    size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = dest_sockaddr(d, &ss);
	int fd = -1, probe = -1, one = 1, multi = w->g->nwant > 1;

	if (multi && w->idx == 0) {
		probe = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe == -1)
			goto fail;
		(void)setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ss.ss_family == AF_INET6)
			(void)setsockopt(probe, IPPROTO_IPV6, IPV6_V6ONLY, &one,
			    sizeof(one));
		if (bind(probe, (struct sockaddr *)&ss, sl) == -1)
			goto fail;
		close(probe);
		probe = -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		goto fail;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (multi && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == -1)
		goto fail;
	/* A v6 listener serves exactly its address, never mapped v4. */
	if (ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) == -1 || listen(fd, WORKER_BACKLOG) == -1)
		goto fail;
	w->listeners[w->nlisteners] = event_new(w->base, fd, EV_READ | EV_PERSIST,
	    transparent ? listen_transp_cb : listen_cb, w);
	if (w->listeners[w->nlisteners] == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	w->lfds[w->nlisteners++] = fd;
	return 0;
fail:
	errbuf_set(err, errlen, "%s %s%s%s:%u: %s",
	    transparent ? "--transparent" : "--listen", d->kind == DEST_IPV6 ? "[" : "", d->host,
	    d->kind == DEST_IPV6 ? "]" : "", d->port, strerror(errno));
	if (fd != -1)
		close(fd);
	if (probe != -1)
		close(probe);
	return -1;
}

static void
close_listeners(struct worker *w)
{
	size_t i;

	for (i = 0; i < w->nlisteners; i++) {
		event_free(w->listeners[i]);
		close(w->lfds[i]);
	}
	w->nlisteners = 0;
	if (w->accept_resume != NULL)
		evtimer_del(w->accept_resume);
}

/* ---- what the main thread posts ---- */

static size_t
take_policy(struct worker *w, const struct policy *p)
{
	w->policy = p;
	return proxy_revoke(w->proxy, p);
}

size_t
worker_set_policy_here(struct worker *w, const struct policy *p)
{
	return take_policy(w, p);
}

static void
stop_here(struct worker *w, int now)
{
	if (!w->stopping) {
		w->stopping = 1;
		close_listeners(w);
		/* Like the listeners' backlogs: what waits is not served. */
		handoff_box_close(w->box);
	}
	if (w->idx == 0) {
		if (worker_drained(w))
			notify_main(w);
		return;
	}
	if (now || worker_drained(w))
		event_base_loopexit(w->base, NULL);
}

/* Takes what the main thread posted: a policy (then acks it), a stop. */
static void
take_mail(struct worker *w)
{
	struct guard *g = w->g;
	const struct policy *p = NULL;
	uint64_t seq = 0;
	size_t revoked;
	int stop;

	pthread_mutex_lock(&g->wmu);
	if (w->posted > w->acked) {
		p = w->pending;
		seq = w->posted;
	}
	stop = w->stop_req;
	pthread_mutex_unlock(&g->wmu);
	if (seq != 0) {
		revoked = take_policy(w, p);
		log_flush(w->log);	/* the revocations before the "policy" line */
		log_hold(w->log, seq);	/* the decisions under p after it */
		pthread_mutex_lock(&g->wmu);
		w->acked = seq;
		w->revoked = revoked;
		pthread_cond_broadcast(&g->wcv);
		pthread_mutex_unlock(&g->wmu);
	} else {
		log_flush(w->log);	/* woken by log_release: what was held */
	}
	if (stop)
		stop_here(w, stop == 2);
}

#ifdef EG_TEST_MUTANT_BUILD
/* Test builds only: EG_TEST_WORKER_DELAY_MS makes workers 1..N-1 slow to
 * read their mailbox while they go on serving under the policy they
 * have, so that the push-ordering test can tell an answer that waits for
 * their acks from one that does not. */
static void
delayed_mail_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	take_mail(arg);
}

static int
test_delay(struct worker *w)
{
	const char *s = getenv("EG_TEST_WORKER_DELAY_MS");
	long long ms;
	struct timeval tv;

	if (s == NULL || num_parse(s, 1, 5000, &ms) == -1)
		return 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return event_base_once(w->base, -1, EV_TIMEOUT, delayed_mail_cb, w, &tv) == 0;
}
#endif

static void
cmd_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	uint64_t n;

	(void)what;
	while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR)
		;
#ifdef EG_TEST_MUTANT_BUILD
	if (test_delay(w))
		return;
#endif
	take_mail(w);
}

static void
post(struct worker *w)
{
	uint64_t one = 1;

	if (write(w->cmd_fd, &one, sizeof(one)) == -1) {
		/* an eventfd counter does not overflow at these counts */
	}
}

void
worker_post_policy(struct worker *w, const struct policy *p, uint64_t seq)
{
	pthread_mutex_lock(&w->g->wmu);
	w->pending = p;
	w->posted = seq;
	pthread_mutex_unlock(&w->g->wmu);
	post(w);
}

long long
worker_wait_policy(struct guard *g, uint64_t seq)
{
	struct timespec dl;
	long long revoked = 0;
	unsigned i;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += WORKER_ACK_TIMEOUT_S;
	pthread_mutex_lock(&g->wmu);
	for (i = 1; i < g->nworkers && rc == 0; i++) {
		struct worker *w = g->workers[i];
		/* A worker whose thread ended has no connection left to admit. */
		while (w->started && !w->exited && w->acked < seq && rc == 0)
			rc = pthread_cond_timedwait(&g->wcv, &g->wmu, &dl);
		if (rc == 0 && w->acked >= seq)
			revoked += (long long)w->revoked;
	}
	pthread_mutex_unlock(&g->wmu);
	return rc == 0 ? revoked : -1;
}

void
worker_wake(struct worker *w)
{
	post(w);
}

void
worker_post_stop(struct worker *w, int now)
{
	if (w->idx == 0) {
		stop_here(w, now);
		return;
	}
	pthread_mutex_lock(&w->g->wmu);
	if (w->stop_req < (now ? 2 : 1))
		w->stop_req = now ? 2 : 1;
	pthread_mutex_unlock(&w->g->wmu);
	post(w);
}

/* ---- the thread ---- */

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct guard *g = w->g;

	if (event_base_dispatch(w->base) == -1)
		w->failed = 1;
	handoff_box_close(w->box);	/* nothing is taken here any more */
	/* Whatever is still open goes with the loop (a stop "now", or the
	 * grace period over): closed here, on the thread that owns it. */
	proxy_close_all(w->proxy, "shutdown");
	log_detach(w->log);
	pthread_mutex_lock(&g->wmu);
	w->exited = 1;
	pthread_cond_broadcast(&g->wcv);
	pthread_mutex_unlock(&g->wmu);
	notify_main(w);
	return NULL;
}

int
worker_start(struct worker *w, char *err, size_t errlen)
{
	sigset_t all, old;
	int rc;

	if (w->idx == 0)
		return 0;
	/* Signals are the main thread's: its loop handles them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errbuf_set(err, errlen, "worker %u: cannot start its thread: %s", w->idx,
		    strerror(rc));
		return -1;
	}
	w->started = 1;
	return 0;
}

/* The epoll backend with a change list: libevent folds the many
 * enable/disable calls a connection makes within one loop pass (head read,
 * dial, reply, relay) into at most one epoll_ctl per fd per pass, where
 * plain event_base_new issues one per call (measured: 16 epoll_ctl per
 * CONNECT tunnel). The known catch, fds shared through dup(2), does not
 * arise here: every fd the loop watches is owned by one event. */
struct event_base *
worker_loop_new(void)
{
	struct event_config *ec;
	struct event_base *base;

	if ((ec = event_config_new()) == NULL)
		return NULL;
	(void)event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}

struct worker *
worker_new(struct guard *g, unsigned idx, struct event_base *base, char *err,
    size_t errlen)
{
	const struct config *cfg = g->cfg;
	struct proxy_env px_env;
	struct worker *w;
	size_t i;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	w->g = g;
	w->idx = idx;
	w->cmd_fd = -1;
	w->policy = g->policy;
	if (base == NULL) {
		w->own_base = 1;
		base = worker_loop_new();
	}
	if ((w->base = base) == NULL) {
		errbuf_set(err, errlen, "worker %u: cannot create event loop", idx);
		goto fail;
	}
	if (idx == 0) {
		w->log = g->log;
	} else if ((w->log = log_clone(g->log)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	} else if (log_attach(w->log, base) == -1) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	if ((w->classify = config_classifier(cfg)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	if ((w->ifwatch = ifaddr_watch_new(base, w->classify, err, errlen)) == NULL)
		goto fail;
	w->resolver = resolver_new(base, cfg->dns_csv[0] ? cfg->dns_csv : NULL,
	    (int)cfg->dns_timeout * 1000, err, errlen);
	if (w->resolver == NULL)
		goto fail;
	px_env = (struct proxy_env){
		.base = base, .cfg = cfg, .log = w->log, .metrics = &w->metrics,
		.classify = w->classify, .resolver = w->resolver,
		.stopping = &w->stopping, .nconns = &g->nconns,
		.next_id = &g->next_id, .arg = w,
		.policy = px_policy, .closed = px_closed,
	};
	if ((w->proxy = proxy_new(&px_env)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	w->accept_resume = evtimer_new(base, accept_resume_cb, w);
	if (w->accept_resume == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	if (idx > 0 && ((w->cmd_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (w->cmd_ev = event_new(base, w->cmd_fd, EV_READ | EV_PERSIST, cmd_cb,
	    w)) == NULL || event_add(w->cmd_ev, NULL) == -1)) {
		errbuf_set(err, errlen, "worker %u: cannot watch its mailbox: %s", idx,
		    strerror(errno));
		goto fail;
	}
	if (g->nwant > 1 && (w->box = handoff_box_new(base, serve, w)) == NULL) {
		errbuf_set(err, errlen, "worker %u: cannot make its handoff box: %s", idx,
		    strerror(errno));
		goto fail;
	}
	for (i = 0; i < cfg->nlisten; i++)
		if (open_listener(w, &cfg->listen[i], 0, err, errlen) == -1)
			goto fail;
	for (i = 0; i < cfg->ntransparent; i++)
		if (open_listener(w, &cfg->transparent[i], 1, err, errlen) == -1)
			goto fail;
	set_accepting(w, 1);
	return w;
fail:
	worker_free(w);
	return NULL;
}

void
worker_join(struct worker *w)
{
	if (w != NULL && w->started) {
		worker_post_stop(w, 1);
		pthread_join(w->thread, NULL);
		w->started = 0;
	}
}

void
worker_free(struct worker *w)
{
	if (w == NULL)
		return;
	worker_join(w);
	/* Connections first: each one closed tells the box the worker's new
	 * count (px_closed), so the box outlives them. */
	proxy_free(w->proxy);
	handoff_box_free(w->box);
	w->box = NULL;
	close_listeners(w);
	if (w->accept_resume != NULL)
		event_free(w->accept_resume);
	if (w->cmd_ev != NULL)
		event_free(w->cmd_ev);
	if (w->cmd_fd != -1)
		close(w->cmd_fd);
	ifaddr_watch_free(w->ifwatch);
	resolver_free(w->resolver);
	classify_cfg_free(w->classify);
	log_every_free(&w->paused);
	if (w->idx != 0)
		log_close(w->log);
	if (w->own_base && w->base != NULL)
		event_base_free(w->base);
	free(w);
}

unsigned
worker_conns(const struct worker *w)
{
	/* One worker runs on the main thread: its own count. Several: each
	 * keeps its box's count, which other threads may read. */
	return w->box != NULL ? handoff_load(w->box) : (unsigned)proxy_live(w->proxy);
}

struct resolver *
worker_resolver(const struct worker *w)
{
	return w->resolver;
}

struct metrics *
worker_metrics(struct worker *w)
{
	return &w->metrics;
}

int
worker_failed(const struct worker *w)
{
	return w->failed;
}

struct classify_cfg *
worker_classify(const struct worker *w)
{
	return w->classify;
}

int
worker_exited(const struct worker *w)
{
	return w->exited;
}
