/* The daemon's context: one per process, passed explicitly to every
 * module that needs it (nothing global). */
#ifndef EG_GUARD_H
#define EG_GUARD_H

#include <sys/queue.h>
#include <stdint.h>
#include <time.h>

#include "guard/config.h"
#include "guard/decide.h"
#include "guard/metrics.h"

struct event_base;
struct event;
struct evconnlistener;
struct policy;
struct resolver;
struct classify_cfg;
struct ifaddr_watch;
struct log;
struct proxy;
struct dnsd;

#define EG_VERSION "0.1.0"
#ifndef EG_REVISION
#define EG_REVISION "unknown"
#endif

struct plane;
struct control;

struct guard {
	struct event_base	*base;
	const struct config	*cfg;
	struct log		*log;
	struct policy		*policy;	/* NULL: deny everything */
	struct plane		*plane;		/* who may replace it */
	struct control		*control;
	time_t			 started;
	struct classify_cfg	*classify;
	struct resolver		*resolver;
	struct ifaddr_watch	*ifwatch;
	struct evconnlistener	*listeners[2 * CONFIG_MAX_LISTEN];	/* --listen, --transparent */
	size_t			 nlisteners;
	struct event		*accept_resume;	/* re-enable after EMFILE */
	struct event		*sig_term, *sig_int, *sig_hup;
	struct event		*grace_timer;
	struct proxy		*proxy;		/* the client connections */
	struct dnsd		*dnsd;		/* --dns-listen; NULL without */
	uint64_t		 nconns;
	int			 stopping;
	struct metrics		 metrics;
};

/* `egress-guard run`. Returns the process exit code. */
int guard_run_main(int argc, char **argv);

/* A connection ended (proxy_env.closed), so a draining guard can exit. */
void guard_conn_closed(struct guard *g);

/* Installs a new policy (takes ownership; NULL allowed): new requests see
 * it at once; live connections it no longer admits are closed with
 * "revoked". Returns how many were closed. */
size_t guard_set_policy(struct guard *g, struct policy *p);

/* Logs the active policy's epoch, digest and mode as event. */
void guard_log_policy(struct guard *g, const char *event);

#endif
