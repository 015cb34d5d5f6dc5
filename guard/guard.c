#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "plane/control.h"
#include "guard/conn.h"
#include "guard/dnsd.h"
#include "guard/guard.h"
#include "util/fdres.h"
#include "guard/ifaddr.h"
#include "guard/log.h"
#include "guard/logevery.h"
#include "plane/plane.h"
#include "guard/proxy.h"
#include "guard/tenant.h"
#include "guard/worker.h"
#include "policy/policy.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"
#include "util/bigbuf.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/mutant.h"
#include "util/ncpu.h"

void
guard_log_policy(struct guard *g, const char *event)
{
	struct log_rec r;

	log_rec_begin(&r, g->log, event);
	log_rec_policy_state(&r, g->policy);
	log_emit(g->log, &r);
}

/* Installs p in every worker, then writes the "policy" line: after the
 * closes of the tunnels p revokes (each worker writes them before it
 * acks) and before any decision under p (each worker holds those until
 * log_release). The line means p is in force on every worker. */
size_t
guard_set_policy(struct guard *g, struct policy *p)
{
	struct policy *old = g->policy;
	uint64_t seq = ++g->policy_seq;
	long long others = 0;
	size_t revoked;
	unsigned i;

	g->policy = p;
	for (i = 1; i < g->nworkers; i++)
		worker_post_policy(g->workers[i], p, seq);
	revoked = g->nworkers > 0 ? worker_set_policy_here(g->workers[0], p) : 0;
#ifdef EG_MUTANT_NO_POLICY_ACK
	/* Test-only mutant: answer before the other workers took the policy
	 * (the old one is kept: they may still read it). */
	old = NULL;
#else
	/* The caller answers once this returns: only then may no worker
	 * admit under the old policy. */
	if ((others = worker_wait_policy(g, seq)) == -1) {
		log_msg(g->log, "error", "a worker did not take the new policy in time: "
		    "stopping (fail closed)");
		log_detach(g->log);
		fprintf(stderr, "egress-guard: a worker did not take the new policy "
		    "within %d s\n", WORKER_ACK_TIMEOUT_S);
		_exit(1);
	}
#endif
	guard_log_policy(g, "policy");
	log_flush(g->log);
	log_release(g->log, seq);
	for (i = 1; i < g->nworkers; i++)
		worker_wake(g->workers[i]);
	policy_free(old);
	return revoked + (size_t)others;
}

/* What the control socket calls back into (control_env). */
static const struct policy *
ctl_policy(void *arg)
{
	return ((struct guard *)arg)->policy;
}

static uint64_t
ctl_nconns(void *arg)
{
	return atomic_load(&((struct guard *)arg)->nconns);
}

static size_t
ctl_worker_conns(void *arg, unsigned *out, size_t max)
{
	struct guard *g = arg;
	size_t i;

	for (i = 0; i < g->nworkers && i < max; i++)
		out[i] = worker_conns(g->workers[i]);
	return i;
}

static size_t
ctl_set_policy(void *arg, struct policy *p)
{
	return guard_set_policy(arg, p);
}

/* The --user to become, looked up before anything starts: the state
 * folder may belong to it. */
struct user {
	uid_t	 uid;
	gid_t	 gid;
	char	 name[256];
};

/* Most groups a user is looked up in; more is refused, not truncated. */
#define GUARD_MAX_GROUPS	1024

/* A user with uid 0 or group 0 (primary, or supplementary as initgroups
 * would set them) is refused: group 0 owns or can write files root
 * trusts, and a dropped guard must hold neither. */
static int
lookup_user(const char *name, struct user *u, char *err, size_t errlen)
{
	static gid_t groups[GUARD_MAX_GROUPS];
	struct passwd *pw;
	int n = GUARD_MAX_GROUPS, i;

	if ((pw = getpwnam(name)) == NULL) {
		errbuf_set(err, errlen, "--user %s: no such user", name);
		return -1;
	}
	if (pw->pw_uid == 0) {
		errbuf_set(err, errlen, "--user %s: refusing to run as uid 0", name);
		return -1;
	}
	if (pw->pw_gid == 0) {
		errbuf_set(err, errlen, "--user %s: refusing a user whose primary group "
		    "is 0", name);
		return -1;
	}
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) == -1) {
		errbuf_set(err, errlen, "--user %s: more than %d groups", name,
		    GUARD_MAX_GROUPS);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (groups[i] == 0) {
			errbuf_set(err, errlen, "--user %s: refusing a user in group 0 "
			    "(a supplementary group)", name);
			return -1;
		}
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	return 0;
}

/* After binding: become u, with no supplementary groups, no
 * capabilities (a setuid away from root clears them) and no way back.
 * Every step is checked: a guard that cannot drop does not run. Before
 * it, as root, the state folder is handed to u (plane_hand_over). */
static int
drop_privileges(const struct user *u, struct plane *pl, char *err, size_t errlen)
{
	if (geteuid() == 0 && plane_hand_over(pl, u->uid, u->gid, u->name, err,
	    errlen) == -1)
		return -1;
	if (setgroups(0, NULL) == -1 || setresgid(u->gid, u->gid, u->gid) == -1 ||
	    setresuid(u->uid, u->uid, u->uid) == -1) {
		errbuf_set(err, errlen, "--user %s: %s", u->name, strerror(errno));
		return -1;
	}
	if (setuid(0) != -1) {
		errbuf_set(err, errlen, "--user %s: could regain root", u->name);
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		errbuf_set(err, errlen, "--user %s: no_new_privs: %s", u->name,
		    strerror(errno));
		return -1;
	}
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

/* The main loop ends once worker 0 has drained and every other worker's
 * thread has ended. */
static void
maybe_exit(struct guard *g)
{
	unsigned i, left = 0;

	if (!g->stopping)
		return;
	if (g->nworkers > 0 && !worker_drained(g->workers[0]))
		return;
	if (g->tenants != NULL && tenants_live(g->tenants) > 0)
		return;
	pthread_mutex_lock(&g->wmu);
	for (i = 1; i < g->nworkers; i++)
		if (!worker_exited(g->workers[i]))
			left++;
	pthread_mutex_unlock(&g->wmu);
	if (left == 0)
		event_base_loopexit(g->base, NULL);
}

static void
stop_workers(struct guard *g, int now)
{
	unsigned i;

	for (i = 0; i < g->nworkers; i++)
		worker_post_stop(g->workers[i], now);
	if (g->tenants != NULL && now)
		tenants_close_all(g->tenants);
}

/* A tenant's connection ended: a draining guard may be done. */
static void
tenant_closed(void *arg)
{
	maybe_exit(arg);
}

/* A worker's thread ended, or worker 0 drained. One that ends while the
 * guard is not stopping failed: the guard stops (exit 1) rather than run
 * with listeners nobody serves. */
static void
wexit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;
	uint64_t n;
	unsigned i;

	(void)what;
	while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR)
		;
	if (!g->stopping) {
		pthread_mutex_lock(&g->wmu);
		for (i = 1; i < g->nworkers; i++)
			if (worker_exited(g->workers[i]))
				break;
		pthread_mutex_unlock(&g->wmu);
		if (i < g->nworkers) {
			log_msg(g->log, "error", "a worker loop stopped: stopping");
			g->stopping = 1;
			g->failed = 1;
			stop_workers(g, 1);
			event_base_loopexit(g->base, NULL);
			return;
		}
	}
	maybe_exit(g);
}

static void
grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;

	(void)fd;
	(void)what;
	log_msg(g->log, "shutdown", "grace period over: closing live connections");
	stop_workers(g, 1);
	event_base_loopexit(g->base, NULL);
}

/* SIGUSR1, and SIGHUP before its reload: --log-file again (logrotate
 * renamed or removed it). A reopen refused keeps the old file, and says
 * why in it. */
static void
reopen_log(struct guard *g, const char *sig)
{
	char err[1024], msg[1200];

	if (log_reopen(g->log, err, sizeof(err)) == -1) {
		snprintf(msg, sizeof(msg), "%s: log file not reopened, still writing "
		    "the one open: %s", sig, err);
		log_msg(g->log, "warning", msg);
	}
}

static void
log_reload_refused(struct guard *g, const char *result, const char *msg)
{
	struct log_rec r;

	log_rec_begin(&r, g->log, "reload_refused");
	log_rec_str(&r, "result", result);
	log_rec_str(&r, "msg", msg);
	log_emit(g->log, &r);
}

/* The end of a SIGHUP reload (control_env.reloaded). An accepted policy
 * is installed already, with its "policy" line. */
static void
ctl_reloaded(void *arg, enum plane_verdict v, const char *err)
{
	struct guard *g = arg;

	if (v == PLANE_SAME)
		log_msg(g->log, "reload", "SIGHUP: policy unchanged");
	else if (v != PLANE_OK)
		log_reload_refused(g, plane_verdict_name(v), err);
}

/* SIGHUP: --policy again, with the same checks as a push, read and
 * checked off the loop in the pushes' queue: tunnels, the DNS listener
 * and the control socket share this loop, and a policy near its bounds
 * (64 MiB) held them for the whole parse. Its verdict is logged when
 * the check ends. */
static void
reload_policy(struct guard *g)
{
	char err[256];

	/* Stopping: the queue went with the control socket. */
	if (g->control == NULL) {
		log_reload_refused(g, plane_verdict_name(PLANE_UNAVAILABLE),
		    "the guard is stopping: --policy not reloaded");
		return;
	}
	switch (control_reload(g->control, err, sizeof(err))) {
	case 1:
		log_msg(g->log, "reload", "SIGHUP: a reload already waits its turn; "
		    "it reads --policy then");
		break;
	case -1:
		log_reload_refused(g, plane_verdict_name(PLANE_BUSY), err);
		break;
	}
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct guard *g = arg;
	struct timeval tv;

	(void)what;
	if (sig == SIGUSR1) {
		reopen_log(g, "SIGUSR1");
		return;
	}
	if (sig == SIGHUP) {
		reopen_log(g, "SIGHUP");
		reload_policy(g);
		return;
	}
	if (g->stopping) {
		stop_workers(g, 1);			/* second signal: now */
		event_base_loopexit(g->base, NULL);
		return;
	}
	g->stopping = 1;
	control_free(g->control);
	g->control = NULL;
	/* The DNS listener is a listener too: no answer, and no upstream
	 * lookup, after "stopped accepting". Its queries in flight are
	 * dropped unanswered (the client retries elsewhere or gives up). */
	dnsd_free(g->dnsd);
	g->dnsd = NULL;
	if (g->tenants != NULL)
		tenants_stop(g->tenants);
	log_msg(g->log, "shutdown", "stopped accepting; draining live tunnels");
	stop_workers(g, 0);
	/* Armed even when nothing is live now: the other workers close
	 * their listeners only when they read the stop, and a connection
	 * one accepts before that must still end within the grace. */
	tv.tv_sec = g->cfg->grace;
	tv.tv_usec = 0;
	evtimer_add(g->grace_timer, &tv);
	maybe_exit(g);
}

/* The descriptors the guard may need at its bounds (docs/design.md,
 * "Bounds and timeouts"): the soft limit is raised to that, as far as the
 * hard limit lets, as Squid raises its own; what stays short is said in
 * note, since below it listeners pause and admitted requests are denied
 * once descriptors run out. */
static void
nofile_raise(const struct guard *g, char *note, size_t notelen)
{
	struct rlimit rl;
	rlim_t need;

	note[0] = '\0';
	need = (rlim_t)(6 * g->cfg->max_conns + 80 * (long long)g->nwant + 160);
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		errbuf_set(note, notelen, "descriptor limit unreadable: %s",
		    strerror(errno));
		return;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ?
	    rl.rlim_max : need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1 && getrlimit(RLIMIT_NOFILE,
	    &rl) == -1)
		rl.rlim_cur = 0;
	if (rl.rlim_cur < need)
		errbuf_set(note, notelen, "descriptor limit %llu is below the %llu "
		    "that --max-conns %lld and %u workers need (6 x max-conns + 80 "
		    "x workers + 160): at the limit the listeners pause and "
		    "admitted requests are denied (upstream_unreachable)",
		    (unsigned long long)rl.rlim_cur, (unsigned long long)need,
		    g->cfg->max_conns, g->nwant);
}

static void
log_start(struct guard *g)
{
	struct log_rec r;
	const char *v[CONFIG_MAX_RANGES > CONFIG_MAX_LISTEN ? CONFIG_MAX_RANGES :
	    CONFIG_MAX_LISTEN];
	char bufs[CONFIG_MAX_RANGES][64];
	size_t i;

	log_rec_begin(&r, g->log, "start");
	log_rec_str(&r, "version", EG_VERSION);
	for (i = 0; i < g->cfg->nlisten; i++) {
		(void)dest_format(&g->cfg->listen[i], bufs[i], sizeof(bufs[i]));
		v[i] = bufs[i];
	}
	log_rec_strv(&r, "listen", v, g->cfg->nlisten);
	for (i = 0; i < g->cfg->ndns_listen; i++) {
		(void)dest_format(&g->cfg->dns_listen[i], bufs[i], sizeof(bufs[i]));
		v[i] = bufs[i];
	}
	if (g->cfg->ndns_listen > 0)
		log_rec_strv(&r, "dns_listen", v, g->cfg->ndns_listen);
	log_rec_str(&r, "dns", resolver_servers(g->resolver));
	log_emit(g->log, &r);
	/* A range opens only blocks it lies inside (resolver/classify.h):
	 * one that opens nothing is said to, not passed over in silence. */
	for (i = 0; i < g->cfg->nallow; i++) {
		char msg[256];
		(void)cidr_format(&g->cfg->allow[i], bufs[0], sizeof(bufs[0]));
		if (classify_range_opens(&g->cfg->allow[i]))
			snprintf(msg, sizeof(msg), "--allow-range %s: addresses in it "
			    "count as public", bufs[0]);
		else
			snprintf(msg, sizeof(msg), "--allow-range %s opens nothing: it "
			    "lies inside no non-public block a range can open (a "
			    "range wider than a block never opens it)", bufs[0]);
		log_msg(g->log, "warning", msg);
	}
}

static void
guard_free(struct guard *g)
{
	unsigned i;

	dnsd_free(g->dnsd);
	g->dnsd = NULL;
	control_free(g->control);
	/* After the control socket (a push it finishes installs into a
	 * tenant), before worker 0 (whose resolver the tenants use). */
	tenants_free(g->tenants);
	g->tenants = NULL;
	/* Threads first (each closes what it still holds), then worker 0. */
	for (i = g->nworkers; i-- > 1;)
		worker_join(g->workers[i]);
	for (i = g->nworkers; i-- > 1;)
		worker_free(g->workers[i]);
	if (g->nworkers > 0)
		worker_free(g->workers[0]);
	g->nworkers = 0;
	plane_free(g->plane);
	if (g->wexit_ev != NULL)
		event_free(g->wexit_ev);
	if (g->wexit_fd != -1)
		close(g->wexit_fd);
	if (g->grace_timer != NULL)
		event_free(g->grace_timer);
	if (g->sig_term != NULL)
		event_free(g->sig_term);
	if (g->sig_int != NULL)
		event_free(g->sig_int);
	if (g->sig_hup != NULL)
		event_free(g->sig_hup);
	if (g->sig_usr1 != NULL)
		event_free(g->sig_usr1);
	policy_free(g->policy);
	log_detach(g->log);
	if (g->base != NULL)
		event_base_free(g->base);
	log_libevent_stop();
	log_close(g->log);
	if (g->wsync) {
		pthread_cond_destroy(&g->wcv);
		pthread_mutex_destroy(&g->wmu);
	}
}

/* The mailboxes' lock, and the condition the main thread waits on for
 * acks (on the monotonic clock: a wall-clock step must not stretch the
 * bound). */
static int
wsync_init(struct guard *g)
{
	pthread_condattr_t ca;

	if (pthread_condattr_init(&ca) != 0)
		return -1;
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_mutex_init(&g->wmu, NULL) != 0) {
		pthread_condattr_destroy(&ca);
		return -1;
	}
	if (pthread_cond_init(&g->wcv, &ca) != 0) {
		pthread_mutex_destroy(&g->wmu);
		pthread_condattr_destroy(&ca);
		return -1;
	}
	pthread_condattr_destroy(&ca);
	g->wsync = 1;
	return 0;
}

/* Builds every worker and their listeners (on the main thread, before
 * the privilege drop: the listeners may need root). Metrics are chained
 * from worker 0's, so that reading them sums every worker. */
static int
workers_new(struct guard *g, char *err, size_t errlen)
{
	unsigned i;

	for (i = 0; i < g->nwant; i++) {
		struct worker *w = worker_new(g, i, i == 0 ? g->base : NULL, err, errlen);
		if (w == NULL)
			return -1;
		g->workers[g->nworkers++] = w;
		if (i > 0)
			worker_metrics(g->workers[i - 1])->next = worker_metrics(w);
	}
	g->classify = worker_classify(g->workers[0]);
	g->resolver = worker_resolver(g->workers[0]);
	return 0;
}

/* Tenant mode: the registry on worker 0's loop, and the tenants' folder
 * in the state folder, made while the guard may still be root. A policy
 * the state folder kept from a run without --tenants serves nobody. */
static int
tenants_begin(struct guard *g, char *err, size_t errlen)
{
	if (g->policy != NULL) {
		log_msg(g->log, "warning", "--tenants: the state folder's bundle.json "
		    "is for no tenant and is not run");
		policy_free(g->policy);
		g->policy = NULL;
	}
	if (plane_tenants_prepare(g->plane, err, errlen) == -1)
		return -1;
	g->tenants = tenants_new(&(struct tenants_env){
		.base = g->base, .cfg = g->cfg, .log = g->log,
		.classify = g->classify, .resolver = g->resolver, .plane = g->plane,
		.worker = g->workers[0], .metrics = worker_metrics(g->workers[0]),
		.nconns = &g->nconns, .next_id = &g->next_id, .arg = g,
		.closed = tenant_closed,
	});
	if (g->tenants == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* The running executable, hashed at start: far above the guard's size. */
#define GUARD_EXE_MAX	(64u * 1024 * 1024)

int
guard_run_main(int argc, char **argv)
{
	static struct config cfg;	/* large; lives for the whole run */
	static struct guard g;		/* its mutex outlives any early return */
	struct control_env ctl_env;
	struct user user;
	static char exe_sha256[FILE_SHA256_HEX + 1];
	char err[1024], warn[1024], nofile[320];
	unsigned i;
	int rc = 2;

	bigbuf_keep();	/* before any thread: util/bigbuf.h */
	memset(&g, 0, sizeof(g));
	g.wexit_fd = -1;
	if (config_parse_run(argc, argv, &cfg, err, sizeof(err)) == -1) {
		if (strcmp(err, "help") == 0) {
			config_run_help(stdout);
			return fflush(stdout) == EOF ? 1 : 0;
		}
		fprintf(stderr, "egress-guard run: %s\n", err);
		config_usage(stderr, "egress-guard");
		return 2;
	}
	g.cfg = &cfg;
	g.nwant = cfg.workers > 0 ? (unsigned)cfg.workers :
	    (unsigned)ncpu_auto(CONFIG_MAX_WORKERS);
	if ((g.log = log_open(cfg.log_file, cfg.log_format, err, sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		return 2;
	}
	/* Before any loop exists: libevent writes its own warnings (a failed
	 * accept, each time) raw to stderr, the decision log by default. */
	if (log_libevent_start(g.log) == -1)
		fprintf(stderr, "egress-guard: out of memory: libevent's warnings "
		    "dropped\n");
	signal(SIGPIPE, SIG_IGN);
	g.started = time(NULL);
	/* What /v1/status reports as the bytes running: the image mapped,
	 * through /proc/self/exe, so a file replaced on disk since the exec
	 * is not what is reported. Unreadable: reported as null, and admit
	 * against this guard refuses (docs/receipts.md). */
	if (file_sha256("/proc/self/exe", GUARD_EXE_MAX, exe_sha256, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: warning: cannot hash the running "
		    "binary: %s\n", err);
		exe_sha256[0] = '\0';
	}
	nofile_raise(&g, nofile, sizeof(nofile));
	(void)fdres_init();	/* the control socket's reserve, at that limit */
	if (wsync_init(&g) == -1) {
		fprintf(stderr, "egress-guard: cannot set up the workers' lock\n");
		goto out;
	}
	if (cfg.user != NULL && lookup_user(cfg.user, &user, err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	if ((g.plane = plane_new(&cfg, cfg.user != NULL ? user.uid : geteuid(), err,
	    sizeof(err))) == NULL ||
	    plane_start(g.plane, &g.policy, warn, sizeof(warn), err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	if ((g.base = worker_loop_new()) == NULL) {
		fprintf(stderr, "egress-guard: cannot create event loop\n");
		goto out;
	}
	if (log_attach(g.log, g.base) == -1)
		fprintf(stderr, "egress-guard: out of memory: log lines not batched\n");
	if ((g.wexit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1 ||
	    (g.wexit_ev = event_new(g.base, g.wexit_fd, EV_READ | EV_PERSIST, wexit_cb,
	    &g)) == NULL || event_add(g.wexit_ev, NULL) == -1) {
		fprintf(stderr, "egress-guard: cannot watch the workers: %s\n",
		    strerror(errno));
		goto out;
	}
	if (workers_new(&g, err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	if (cfg.tenants && tenants_begin(&g, err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	/* The DNS listener runs on worker 0's loop (the main thread), with
	 * its resolver and classifier. */
	if (cfg.ndns_listen > 0 && (g.dnsd = dnsd_new(&(struct dnsd_env){
	    .base = g.base, .log = g.log, .metrics = worker_metrics(g.workers[0]),
	    .classify = g.classify, .resolver = g.resolver, .arg = &g,
	    .policy = ctl_policy }, cfg.dns_listen, cfg.ndns_listen, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	/* The control socket is bound before the privilege drop, so it stays
	 * root's: the dropped guard cannot be reached through it by anyone
	 * but the plane. */
	ctl_env = (struct control_env){
		.base = g.base, .log = g.log, .plane = g.plane, .cfg = g.cfg,
		.resolver = g.resolver, .metrics = worker_metrics(g.workers[0]),
		.version = EG_VERSION, .revision = EG_REVISION,
		.binary_sha256 = exe_sha256[0] != '\0' ? exe_sha256 : NULL,
		.started = g.started, .arg = &g, .policy = ctl_policy,
		.nconns = ctl_nconns, .worker_conns = ctl_worker_conns,
		.set_policy = ctl_set_policy, .reloaded = ctl_reloaded,
		.tenants = g.tenants != NULL ? tenants_control(g.tenants) : NULL,
	};
	if ((g.control = control_new(&ctl_env, cfg.control_path, cfg.user != NULL ?
	    user.uid : geteuid(), err, sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	g.grace_timer = evtimer_new(g.base, grace_cb, &g);
	g.sig_term = evsignal_new(g.base, SIGTERM, signal_cb, &g);
	g.sig_int = evsignal_new(g.base, SIGINT, signal_cb, &g);
	g.sig_hup = evsignal_new(g.base, SIGHUP, signal_cb, &g);
	g.sig_usr1 = evsignal_new(g.base, SIGUSR1, signal_cb, &g);
	if (g.grace_timer == NULL || g.sig_term == NULL || g.sig_int == NULL ||
	    g.sig_hup == NULL || g.sig_usr1 == NULL || evsignal_add(g.sig_term, NULL) ||
	    evsignal_add(g.sig_int, NULL) || evsignal_add(g.sig_hup, NULL) ||
	    evsignal_add(g.sig_usr1, NULL)) {
		fprintf(stderr, "egress-guard: cannot set up signals\n");
		goto out;
	}
	if (cfg.user != NULL &&
	    drop_privileges(&user, g.plane, err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	/* Checked as the user the guard now is: a push it cannot store would
	 * fail only later, in front of the plane. */
	if (plane_state_writable(g.plane, err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	/* As the user the guard now is: each tenant's folder is then its
	 * own, as those of tenants added later are. */
	if (g.tenants != NULL && tenants_restore(g.tenants, err, sizeof(err)) == -1) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	/* After the drop: no_new_privs is per thread, and a thread inherits
	 * it from the one that creates it. */
	for (i = 1; i < g.nworkers; i++) {
		if (worker_start(g.workers[i], err, sizeof(err)) == -1) {
			fprintf(stderr, "egress-guard: %s\n", err);
			goto out;
		}
	}
	log_start(&g);
	if (geteuid() == 0)
		log_msg(g.log, "warning", "running as root: use --user");
	if (warn[0] != '\0')
		log_msg(g.log, "warning", warn);
	if (nofile[0] != '\0')
		log_msg(g.log, "warning", nofile);
	if (cfg.state_dir == NULL)
		log_msg(g.log, "warning", "--no-state: no epoch floor is kept; a restart "
		    "accepts any epoch again (rollback)");
	if (plane_floor_note(g.plane)[0] != '\0')
		log_msg(g.log, "warning", plane_floor_note(g.plane));
	/* Tenant mode has no policy outside the tenants: each tenant's own
	 * policy line (tenants_restore, and every push) names it. */
	if (g.tenants != NULL)
		log_msg(g.log, "tenants", "tenant mode: every listener and policy is "
		    "a tenant's; each tenant's policy line names it");
	else
		guard_log_policy(&g, "policy");
	if (event_base_dispatch(g.base) == -1) {
		log_msg(g.log, "error", "event loop failed");
		rc = 1;
		goto out;
	}
	rc = g.failed ? 1 : 0;
	for (i = 1; i < g.nworkers; i++)
		if (worker_failed(g.workers[i]))
			rc = 1;
out:
	guard_free(&g);
	return rc;
}
