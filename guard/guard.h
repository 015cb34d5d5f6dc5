/* The daemon's context: one per process, passed explicitly to every
 * module that needs it (nothing global). */
#ifndef EG_GUARD_H
#define EG_GUARD_H

#include <sys/queue.h>
#include <pthread.h>
#include <stdatomic.h>
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

struct worker;

struct guard {
	struct event_base	*base;		/* the main loop: control, signals, worker 0 */
	const struct config	*cfg;
	struct log		*log;
	struct policy		*policy;	/* NULL: deny everything */
	struct plane		*plane;		/* who may replace it */
	struct control		*control;
	time_t			 started;
	struct classify_cfg	*classify;	/* worker 0's */
	struct resolver		*resolver;	/* worker 0's */
	struct event		*sig_term, *sig_int, *sig_hup, *sig_usr1;
	struct event		*grace_timer;
	struct dnsd		*dnsd;		/* --dns-listen, on worker 0's loop; NULL without */
	struct tenants		*tenants;	/* --tenants (guard/tenant.h); NULL without */
	int			 stopping;
	int			 failed;	/* a worker loop stopped on its own */
	/* The worker loops (guard/worker.h); worker 0 runs on base. */
	struct worker		*workers[CONFIG_MAX_WORKERS];
	unsigned		 nworkers;	/* built so far */
	unsigned		 nwant;		/* --workers, resolved */
	_Atomic uint64_t	 nconns;	/* live client connections, all workers */
	_Atomic uint64_t	 next_id;	/* the last request id, all workers */
	uint64_t		 policy_seq;	/* numbers each policy change */
	pthread_mutex_t		 wmu;		/* the workers' mailboxes */
	pthread_cond_t		 wcv;		/* a worker acked or exited */
	int			 wsync;		/* wmu and wcv are initialised */
	int			 wexit_fd;	/* eventfd: a worker ended or drained */
	struct event		*wexit_ev;
};

/* `egress-guard run`. Returns the process exit code. */
int guard_run_main(int argc, char **argv);

/* Installs a new policy (takes ownership; NULL allowed) in every worker,
 * and returns only once each has it in force: new requests see it from
 * then on; live connections it no longer admits are closed with
 * "revoked". Returns how many were closed. A worker that does not take it
 * within WORKER_ACK_TIMEOUT_S ends the guard (exit 1): fail closed. */
size_t guard_set_policy(struct guard *g, struct policy *p);

/* Logs the active policy's epoch, digest and mode as event. */
void guard_log_policy(struct guard *g, const char *event);

#endif
