/* Worker loops (`run --workers N`): each worker is an event loop owning
 * its listeners (SO_REUSEPORT, one per --listen address), its resolver,
 * its copy of the classifier and its connections. Worker 0 runs on the
 * main thread's loop beside the control socket and the signals; workers
 * 1..N-1 each on a thread of their own. Nothing they hold is shared but
 * the log's writer, the global connection count (atomic), the policy,
 * which the main thread hands each worker and waits for its ack, and the
 * handoff box through which a busier worker passes a new connection to
 * a less busy one (guard/handoff.h). */
#ifndef EG_WORKER_H
#define EG_WORKER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct guard;
struct policy;
struct worker;

/* How long the main thread waits for every worker to take a new policy
 * before it gives up on the guard (exit 1): a worker that cannot take the
 * policy cannot be trusted to enforce it. */
#define WORKER_ACK_TIMEOUT_S	10


/* An event loop as every worker runs it; NULL on failure. */
struct event_base *worker_loop_new(void);

/* Builds worker idx of g on base (worker 0: the main loop), or on a loop
 * of its own (base NULL). Opens its listeners. NULL with err. */
struct worker *worker_new(struct guard *g, unsigned idx, struct event_base *base,
    char *err, size_t errlen);
/* Starts its thread (idx >= 1; worker 0 runs on the main loop). -1 with
 * err. */
int worker_start(struct worker *w, char *err, size_t errlen);
/* Stops the thread now, if it runs, and joins it; NULL does nothing.
 * Every worker is joined before any is freed: a running worker may hand
 * a connection to any other's box. */
void worker_join(struct worker *w);
/* Joins the thread if it runs, then frees everything; NULL does nothing. */
void worker_free(struct worker *w);

/* From the main thread: worker w is to take p (seq numbers the change);
 * worker_wait_policy waits until every started worker of g took seq.
 * Returns the connections they revoked, or -1 on timeout. */
void worker_post_policy(struct worker *w, const struct policy *p, uint64_t seq);
long long worker_wait_policy(struct guard *g, uint64_t seq);
/* Wakes worker w to write the log lines it held (log_hold) after
 * log_release. */
void worker_wake(struct worker *w);
/* Worker 0's own change, on the main thread: returns how many it revoked. */
size_t worker_set_policy_here(struct worker *w, const struct policy *p);

/* Stop accepting and exit once the own connections are gone (now: at
 * once). From the main thread; worker 0 does it in place. */
void worker_post_stop(struct worker *w, int now);

/* Worker w (0) has no live connection left and is stopping. */
int worker_drained(const struct worker *w);

/* The connections worker w serves (and those handed to it, about to be),
 * from the main thread. */
unsigned worker_conns(const struct worker *w);

/* Accepts one connection from listener lfd as the worker's own do
 * (descriptor reserve, a pause when out of descriptors), and serves it on
 * the router route(arg, its peer address) names: a tenant's listener
 * (guard/tenant.h). */
struct proxy;
struct sockaddr;
void worker_accept(struct worker *w, int lfd, int transparent,
    struct proxy *(*route)(void *arg, const struct sockaddr *sa), void *arg);
/* fn(arg, on) is called whenever the worker pauses (0) or resumes (1) its
 * listeners: others' listeners (tenants') pause with them. */
void worker_on_pause(struct worker *w, void (*fn)(void *arg, int on), void *arg);

/* The worker's resolver (for the control socket's status) and metrics. */
struct resolver *worker_resolver(const struct worker *w);
struct metrics *worker_metrics(struct worker *w);
struct classify_cfg *worker_classify(const struct worker *w);
/* Its thread ended (call with g->wmu held). */
int worker_exited(const struct worker *w);
/* A worker's loop failed (event_base_dispatch returned -1). */
int worker_failed(const struct worker *w);

#endif
