/* The daemon's context: one per process, passed explicitly to every
 * module that needs it (nothing global). */
#ifndef EG_GUARD_H
#define EG_GUARD_H

#include <sys/queue.h>
#include <stdint.h>

#include "guard/config.h"
#include "guard/decide.h"

struct event_base;
struct event;
struct evconnlistener;
struct policy;
struct resolver;
struct classify_cfg;
struct ifaddr_watch;
struct log;
struct proxy_conn;

TAILQ_HEAD(proxy_list, proxy_conn);

struct guard {
	struct event_base	*base;
	const struct config	*cfg;
	struct log		*log;
	struct policy		*policy;	/* NULL: deny everything */
	struct classify_cfg	*classify;
	struct resolver		*resolver;
	struct ifaddr_watch	*ifwatch;
	struct evconnlistener	*listeners[CONFIG_MAX_LISTEN];
	size_t			 nlisteners;
	struct event		*accept_resume;	/* re-enable after EMFILE */
	struct event		*sig_term, *sig_int, *sig_hup;
	struct event		*grace_timer;
	struct proxy_list	 conns;
	uint64_t		 nconns;
	uint64_t		 next_id;
	int			 stopping;
	uint64_t		 decisions[REASON__COUNT];
	uint64_t		 bytes_up, bytes_down;
};

/* `egress-guard run`. Returns the process exit code. */
int guard_run_main(int argc, char **argv);

/* Called by proxy when a connection ends, so a draining guard can exit. */
void guard_conn_closed(struct guard *g);

/* Installs a new policy (takes ownership; NULL allowed): new requests see
 * it at once; live connections it no longer admits are closed with
 * "revoked". Returns how many were closed. */
size_t guard_set_policy(struct guard *g, struct policy *p);

#endif
