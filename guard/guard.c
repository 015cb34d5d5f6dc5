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
#include "guard/ifaddr.h"
#include "guard/log.h"
#include "plane/plane.h"
#include "guard/proxy.h"
#include "policy/policy.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"

void
guard_log_policy(struct guard *g, const char *event)
{
	struct log_rec r;

	log_rec_begin(&r, g->log, event);
	if (g->policy == NULL) {
		log_rec_null(&r, "policy_epoch");
		log_rec_null(&r, "policy_digest");
		log_rec_str(&r, "mode", "none");
		log_rec_str(&r, "msg", "no policy loaded: every request is denied (no_policy)");
	} else {
		log_rec_int(&r, "policy_epoch", policy_epoch(g->policy));
		log_rec_str(&r, "policy_digest", policy_digest(g->policy));
		log_rec_str(&r, "mode", policy_mode_name(policy_mode(g->policy)));
		log_rec_int(&r, "entries", (long long)policy_entries(g->policy));
	}
	log_emit(g->log, &r);
}

size_t
guard_set_policy(struct guard *g, struct policy *p)
{
	struct policy *old = g->policy;
	size_t revoked;

	g->policy = p;
	revoked = proxy_revoke(g->proxy, p);
	policy_free(old);
	return revoked;
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
	return ((struct guard *)arg)->nconns;
}

static size_t
ctl_set_policy(void *arg, struct policy *p)
{
	return guard_set_policy(arg, p);
}

static void
ctl_log_policy(void *arg, const char *event)
{
	guard_log_policy(arg, event);
}

void
guard_conn_closed(struct guard *g)
{
	if (g->stopping && g->nconns == 0)
		event_base_loopexit(g->base, NULL);
}

/* What the router calls back into (proxy_env). */
static const struct policy *
px_policy(void *arg)
{
	return ((struct guard *)arg)->policy;
}

static void
px_closed(void *arg)
{
	guard_conn_closed(arg);
}

/* Both kinds of listener: at --max-conns an explicit client reads a 503;
 * a redirected one (transparent) is closed. */
static void
accept_any(struct guard *g, evutil_socket_t fd, struct sockaddr *sa, int salen,
    int transparent)
{
	if (g->nconns >= (uint64_t)g->cfg->max_conns) {
		proxy_reject_overloaded(g->proxy, fd, sa, salen, transparent);
		return;
	}
	if (transparent)
		proxy_accept_transparent(g->proxy, fd, sa, salen);
	else
		proxy_accept(g->proxy, fd, sa, salen);
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	(void)l;
	accept_any(arg, fd, sa, salen, 0);
}

static void
accept_transp_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	(void)l;
	accept_any(arg, fd, sa, salen, 1);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;
	size_t i;

	(void)fd;
	(void)what;
	if (g->stopping)
		return;
	for (i = 0; i < g->nlisteners; i++)
		evconnlistener_enable(g->listeners[i]);
}

/* Out of descriptors: accepting again at once would spin. Pause every
 * listener briefly; connections wait in the kernel backlog. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct guard *g = arg;
	struct timeval tv = { 0, 100000 };
	int e = EVUTIL_SOCKET_ERROR();
	size_t i;

	(void)l;
	if (e != EMFILE && e != ENFILE && e != ENOBUFS && e != ENOMEM)
		return;
	if (evtimer_pending(g->accept_resume, NULL))
		return;
	for (i = 0; i < g->nlisteners; i++)
		evconnlistener_disable(g->listeners[i]);
	log_msg(g->log, "warning", "accept paused: out of file descriptors");
	evtimer_add(g->accept_resume, &tv);
}

static int
open_listener(struct guard *g, const struct dest *d, evconnlistener_cb cb,
    char *err, size_t errlen)
{
	struct evconnlistener *l;
	int fd;

	if ((fd = conn_bind(d, SOCK_STREAM)) == -1)
		goto fail;
	l = evconnlistener_new(g->base, cb, g,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 1024, fd);
	if (l == NULL)
		goto fail;
	evconnlistener_set_error_cb(l, accept_error_cb);
	g->listeners[g->nlisteners++] = l;
	return 0;
fail:
	snprintf(err, errlen, "%s %s%s%s:%u: %s",
	    cb == accept_cb ? "--listen" : "--transparent",
	    d->kind == DEST_IPV6 ? "[" : "", d->host,
	    d->kind == DEST_IPV6 ? "]" : "", d->port, strerror(errno));
	if (fd != -1)
		close(fd);
	return -1;
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
		snprintf(err, errlen, "--user %s: no such user", name);
		return -1;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, errlen, "--user %s: refusing to run as uid 0", name);
		return -1;
	}
	if (pw->pw_gid == 0) {
		snprintf(err, errlen, "--user %s: refusing a user whose primary group "
		    "is 0", name);
		return -1;
	}
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) == -1) {
		snprintf(err, errlen, "--user %s: more than %d groups", name,
		    GUARD_MAX_GROUPS);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (groups[i] == 0) {
			snprintf(err, errlen, "--user %s: refusing a user in group 0 "
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
		snprintf(err, errlen, "--user %s: %s", u->name, strerror(errno));
		return -1;
	}
	if (setuid(0) != -1) {
		snprintf(err, errlen, "--user %s: could regain root", u->name);
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "--user %s: no_new_privs: %s", u->name,
		    strerror(errno));
		return -1;
	}
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

static void
stop_accepting(struct guard *g)
{
	size_t i;

	for (i = 0; i < g->nlisteners; i++)
		evconnlistener_free(g->listeners[i]);
	g->nlisteners = 0;
}

static void
grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;

	(void)fd;
	(void)what;
	log_msg(g->log, "shutdown", "grace period over: closing live connections");
	event_base_loopexit(g->base, NULL);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct guard *g = arg;
	struct timeval tv;

	(void)what;
	if (sig == SIGHUP) {
		char err[1024];
		struct policy *p;
		enum plane_verdict v;

		/* Same checks as a push: signature (for bundles), epoch rule;
		 * after the push being checked, if any, so they cannot race. */
		control_settle(g->control);
		v = plane_reload(g->plane, &p, err, sizeof(err));
		if (v == PLANE_SAME) {
			log_msg(g->log, "reload", "SIGHUP: policy unchanged");
		} else if (v != PLANE_OK) {
			struct log_rec r;
			log_rec_begin(&r, g->log, "reload_refused");
			log_rec_str(&r, "result", plane_verdict_name(v));
			log_rec_str(&r, "msg", err);
			log_emit(g->log, &r);
		} else {
			plane_installed(g->plane, p);
			guard_set_policy(g, p);
			guard_log_policy(g, "policy");
		}
		return;
	}
	if (g->stopping) {
		event_base_loopexit(g->base, NULL);	/* second signal: now */
		return;
	}
	g->stopping = 1;
	stop_accepting(g);
	control_free(g->control);
	g->control = NULL;
	log_msg(g->log, "shutdown", "stopped accepting; draining live tunnels");
	if (g->nconns == 0) {
		event_base_loopexit(g->base, NULL);
		return;
	}
	tv.tv_sec = g->cfg->grace;
	tv.tv_usec = 0;
	evtimer_add(g->grace_timer, &tv);
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
	for (i = 0; i < g->cfg->nallow; i++) {
		char msg[128];
		(void)classify_format_cidr(&g->cfg->allow[i], bufs[0], sizeof(bufs[0]));
		snprintf(msg, sizeof(msg), "--allow-range %s: addresses in it count as public",
		    bufs[0]);
		log_msg(g->log, "warning", msg);
	}
}

/* The epoll backend with a change list: libevent folds the many
 * enable/disable calls a connection makes within one loop pass (head read,
 * dial, reply, relay) into at most one epoll_ctl per fd per pass, where
 * plain event_base_new issues one per call (measured: 16 epoll_ctl per
 * CONNECT tunnel). The known catch, fds shared through dup(2), does not
 * arise here: every fd the loop watches is owned by one event. */
static struct event_base *
loop_new(void)
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

static void
guard_free(struct guard *g)
{
	proxy_free(g->proxy);
	g->proxy = NULL;
	dnsd_free(g->dnsd);
	g->dnsd = NULL;
	stop_accepting(g);
	control_free(g->control);
	plane_free(g->plane);
	if (g->accept_resume != NULL)
		event_free(g->accept_resume);
	if (g->grace_timer != NULL)
		event_free(g->grace_timer);
	if (g->sig_term != NULL)
		event_free(g->sig_term);
	if (g->sig_int != NULL)
		event_free(g->sig_int);
	if (g->sig_hup != NULL)
		event_free(g->sig_hup);
	ifaddr_watch_free(g->ifwatch);
	resolver_free(g->resolver);
	classify_cfg_free(g->classify);
	policy_free(g->policy);
	log_detach(g->log);
	if (g->base != NULL)
		event_base_free(g->base);
	log_close(g->log);
}

int
guard_run_main(int argc, char **argv)
{
	static struct config cfg;	/* large; lives for the whole run */
	struct guard g;
	struct proxy_env px_env;
	struct control_env ctl_env;
	struct user user;
	char err[1024], warn[1024];
	size_t i;
	int rc = 2;

	memset(&g, 0, sizeof(g));
	if (config_parse_run(argc, argv, &cfg, err, sizeof(err)) == -1) {
		if (strcmp(err, "help") == 0) {
			config_run_help(stdout);
			return fflush(stdout) == EOF ? 1 : 0;
		}
		fprintf(stderr, "egress-guard run: %s\n", err);
		config_usage("egress-guard");
		return 2;
	}
	g.cfg = &cfg;
	if ((g.log = log_open(cfg.log_file, cfg.log_format, err, sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	g.started = time(NULL);
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
	if ((g.base = loop_new()) == NULL) {
		fprintf(stderr, "egress-guard: cannot create event loop\n");
		goto out;
	}
	if (log_attach(g.log, g.base) == -1)
		fprintf(stderr, "egress-guard: out of memory: log lines not batched\n");
	if ((g.classify = config_classifier(&cfg)) == NULL) {
		fprintf(stderr, "egress-guard: out of memory\n");
		goto out;
	}
	if ((g.ifwatch = ifaddr_watch_new(g.base, g.classify, err, sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	g.resolver = resolver_new(g.base, cfg.dns_csv[0] ? cfg.dns_csv : NULL,
	    (int)cfg.dns_timeout * 1000, err, sizeof(err));
	if (g.resolver == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	px_env = (struct proxy_env){
		.base = g.base, .cfg = g.cfg, .log = g.log, .metrics = &g.metrics,
		.classify = g.classify, .resolver = g.resolver,
		.stopping = &g.stopping, .nconns = &g.nconns, .arg = &g,
		.policy = px_policy, .closed = px_closed,
	};
	if ((g.proxy = proxy_new(&px_env)) == NULL) {
		fprintf(stderr, "egress-guard: out of memory\n");
		goto out;
	}
	for (i = 0; i < cfg.nlisten; i++) {
		if (open_listener(&g, &cfg.listen[i], accept_cb, err, sizeof(err)) == -1) {
			fprintf(stderr, "egress-guard: %s\n", err);
			goto out;
		}
	}
	for (i = 0; i < cfg.ntransparent; i++) {
		if (open_listener(&g, &cfg.transparent[i], accept_transp_cb, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "egress-guard: %s\n", err);
			goto out;
		}
	}
	if (cfg.ndns_listen > 0 && (g.dnsd = dnsd_new(&(struct dnsd_env){
	    .base = g.base, .log = g.log, .metrics = &g.metrics,
	    .classify = g.classify, .resolver = g.resolver, .arg = &g,
	    .policy = px_policy }, cfg.dns_listen, cfg.ndns_listen, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	/* The control socket is bound before the privilege drop, so it stays
	 * root's: the dropped guard cannot be reached through it by anyone
	 * but the plane. */
	ctl_env = (struct control_env){
		.base = g.base, .log = g.log, .plane = g.plane, .cfg = g.cfg,
		.resolver = g.resolver, .metrics = &g.metrics,
		.version = EG_VERSION, .revision = EG_REVISION,
		.started = g.started, .arg = &g, .policy = ctl_policy,
		.nconns = ctl_nconns, .set_policy = ctl_set_policy,
		.log_policy = ctl_log_policy,
	};
	if ((g.control = control_new(&ctl_env, cfg.control_path, cfg.user != NULL ?
	    user.uid : geteuid(), err, sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard: %s\n", err);
		goto out;
	}
	g.accept_resume = evtimer_new(g.base, accept_resume_cb, &g);
	g.grace_timer = evtimer_new(g.base, grace_cb, &g);
	g.sig_term = evsignal_new(g.base, SIGTERM, signal_cb, &g);
	g.sig_int = evsignal_new(g.base, SIGINT, signal_cb, &g);
	g.sig_hup = evsignal_new(g.base, SIGHUP, signal_cb, &g);
	if (g.accept_resume == NULL || g.grace_timer == NULL || g.sig_term == NULL ||
	    g.sig_int == NULL || g.sig_hup == NULL || evsignal_add(g.sig_term, NULL) ||
	    evsignal_add(g.sig_int, NULL) || evsignal_add(g.sig_hup, NULL)) {
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
	log_start(&g);
	if (geteuid() == 0)
		log_msg(g.log, "warning", "running as root: use --user");
	if (warn[0] != '\0')
		log_msg(g.log, "warning", warn);
	if (cfg.state_dir == NULL)
		log_msg(g.log, "warning", "--no-state: no epoch floor is kept; a restart "
		    "accepts any epoch again (rollback)");
	if (plane_floor_note(g.plane)[0] != '\0')
		log_msg(g.log, "warning", plane_floor_note(g.plane));
	guard_log_policy(&g, "policy");
	if (event_base_dispatch(g.base) == -1) {
		log_msg(g.log, "error", "event loop failed");
		rc = 1;
		goto out;
	}
	rc = 0;
out:
	guard_free(&g);
	return rc;
}
