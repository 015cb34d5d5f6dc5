#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "guard/config.h"
#include "guard/conn.h"
#include "guard/dnsd.h"
#include "guard/log.h"
#include "guard/metrics.h"
#include "guard/proxy.h"
#include "guard/tenant.h"
#include "guard/worker.h"
#include "plane/control.h"
#include "plane/ctljson.h"
#include "plane/plane.h"
#include "policy/dest.h"
#include "policy/policy.h"
#include "policy/tspec.h"
#include "util/errbuf.h"
#include "util/mutant.h"

#define TENANT_BACKLOG	1024

enum { L_PROXY = 0, L_TRANSPARENT, L_COUNT };

struct tenant {
	struct tspec	 spec;
	struct tenants	*ts;
	struct plane	*plane;		/* its floor: STATE/tenants/ID */
	struct policy	*policy;	/* NULL: none, every request no_policy */
	struct proxy	*proxy;
	struct dnsd	*dnsd;		/* dns_port > 0 */
	struct metrics	 metrics;	/* on the guard's chain while listed */
	int		 lfd[L_COUNT];	/* -1: none */
	struct event	*lev[L_COUNT];
	int		 stopping;	/* the proxy's: no new keep-alive */
	int		 holds;		/* pushes referring to it */
	int		 removed;	/* off the list; freed at the last hold */
};

struct tenants {
	struct tenants_env	 env;
	struct tenant		**v;	/* sorted by id */
	size_t			 n;
	size_t			 cap;
	struct control_tenants	 ctl;
};

/* ---- one tenant ---- */

static const struct policy *
px_policy(void *arg)
{
	return ((struct tenant *)arg)->policy;
}

static void
px_closed(void *arg)
{
	struct tenant *t = arg;

	t->ts->env.closed(t->ts->env.arg);
}

/* Who a connection from a tenant's listener belongs to: that tenant,
 * whatever its source address says. */
static struct proxy *
route(void *arg, const struct sockaddr *sa)
{
	struct tenant *t = arg;

#ifdef EG_MUTANT_TENANT_BY_SOURCE
	/* Test-only mutant (make conformance-mutants): the tenant whose peer
	 * is the source address, as a node proxy keyed by address does. */
	struct tenants *ts = t->ts;
	const unsigned char *a = sa->sa_family == AF_INET ?
	    (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr :
	    (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	size_t i;

	for (i = 0; i < ts->n; i++)
		if (ts->v[i]->spec.family == sa->sa_family &&
		    memcmp(ts->v[i]->spec.peer, a, sa->sa_family == AF_INET ? 4 :
		    16) == 0)
			return ts->v[i]->proxy;
#else
	(void)sa;
#endif
	return t->proxy;
}

static void
accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct tenant *t = arg;

	(void)what;
	worker_accept(t->ts->env.worker, (int)lfd, lfd == t->lfd[L_TRANSPARENT], route,
	    t);
}

/* spec's address and port as a listener's dest. */
static int
spec_dest(const struct tspec *sp, uint16_t port, struct dest *d)
{
	char buf[TSPEC_ADDR_TEXT + 16], why[128];
	int n;

	n = snprintf(buf, sizeof(buf), sp->family == AF_INET6 ? "[%s]:%u" : "%s:%u",
	    sp->address, (unsigned)port);
	return dest_parse_authority(buf, (size_t)n, d, why, sizeof(why));
}

/* A listener on the tenant's link only. */
static int
open_listener(struct tenant *t, int which, uint16_t port, char *err, size_t errlen)
{
	struct dest d;
	int fd;

	if (spec_dest(&t->spec, port, &d) == -1) {
		errbuf_set(err, errlen, "%s:%u: not an address", t->spec.address, port);
		return -1;
	}
	if ((fd = conn_bind_dev(&d, SOCK_STREAM, t->spec.link)) == -1 ||
	    listen(fd, TENANT_BACKLOG) == -1) {
		errbuf_set(err, errlen, "tenant %s: %s:%u on %s: %s", t->spec.id,
		    t->spec.address, (unsigned)port, t->spec.link, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	t->lfd[which] = fd;
	if ((t->lev[which] = event_new(t->ts->env.base, fd, EV_READ | EV_PERSIST,
	    accept_cb, t)) == NULL || event_add(t->lev[which], NULL) == -1) {
		errbuf_set(err, errlen, "tenant %s: out of memory", t->spec.id);
		return -1;
	}
	return 0;
}

static void
close_listeners(struct tenant *t)
{
	int i;

	for (i = 0; i < L_COUNT; i++) {
		if (t->lev[i] != NULL)
			event_free(t->lev[i]);
		if (t->lfd[i] != -1)
			close(t->lfd[i]);
		t->lev[i] = NULL;
		t->lfd[i] = -1;
	}
	dnsd_free(t->dnsd);
	t->dnsd = NULL;
}

static void
tenant_free(struct tenant *t)
{
	if (t == NULL)
		return;
	close_listeners(t);
	proxy_free(t->proxy);
	policy_free(t->policy);
	plane_free(t->plane);
	free(t);
}

static void
log_tenant(struct tenant *t, const char *event, long long closed)
{
	struct log_rec r;

	log_rec_begin(&r, t->ts->env.log, event);
	log_rec_str(&r, "tenant", t->spec.id);
	log_rec_str(&r, "link", t->spec.link);
	log_rec_str(&r, "address", t->spec.address);
	log_rec_str(&r, "peer", t->spec.peer_text);
	log_rec_int(&r, "port", t->spec.port);
	if (closed >= 0)
		log_rec_int(&r, "closed", closed);
	log_emit(t->ts->env.log, &r);
}

static void
log_policy(struct tenant *t)
{
	struct log_rec r;

	log_rec_begin(&r, t->ts->env.log, "policy");
	log_rec_str(&r, "tenant", t->spec.id);
	log_rec_policy_state(&r, t->policy);
	log_emit(t->ts->env.log, &r);
}

/* Everything a tenant runs on, its stored policy loaded, its listeners
 * open. NULL with err; *why is the control API's error name. */
static struct tenant *
tenant_build(struct tenants *ts, const struct tspec *sp, const char **why,
    char *err, size_t errlen)
{
	const struct tenants_env *env = &ts->env;
	struct dest dl;
	struct tenant *t;
	int i;

	*why = "unavailable";
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	t->spec = *sp;
	t->ts = ts;
	for (i = 0; i < L_COUNT; i++)
		t->lfd[i] = -1;
	*why = "state_failed";
	if ((t->plane = plane_tenant_new(env->plane, sp->id, err, errlen)) == NULL ||
	    plane_tenant_start(t->plane, &t->policy, err, errlen) == -1)
		goto fail;
	*why = "unavailable";
	t->proxy = proxy_new(&(struct proxy_env){
		.base = env->base, .cfg = env->cfg, .log = env->log,
		.metrics = &t->metrics, .classify = env->classify,
		.resolver = env->resolver, .stopping = &t->stopping,
		.nconns = env->nconns, .next_id = env->next_id, .arg = t,
		.policy = px_policy, .closed = px_closed, .tenant = t->spec.id,
		.max_live = sp->max_conns, .max_lookups = sp->max_dns,
	});
	if (t->proxy == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	*why = "listen_failed";
	if (open_listener(t, L_PROXY, sp->port, err, errlen) == -1 ||
	    (sp->transparent_port > 0 && open_listener(t, L_TRANSPARENT,
	    sp->transparent_port, err, errlen) == -1))
		goto fail;
	if (sp->dns_port > 0) {
		if (spec_dest(sp, sp->dns_port, &dl) == -1 ||
		    (t->dnsd = dnsd_new(&(struct dnsd_env){
		    .base = env->base, .log = env->log, .metrics = &t->metrics,
		    .classify = env->classify, .resolver = env->resolver, .arg = t,
		    .policy = px_policy, .device = sp->link, .tenant = t->spec.id,
		    .max_inflight = sp->max_dns }, &dl, 1, err, errlen)) == NULL)
			goto fail;
	}
	return t;
fail:
	tenant_free(t);
	return NULL;
}

/* ---- the registry ---- */

/* The index where id is, or would go (*found says which). */
static size_t
slot(const struct tenants *ts, const char *id, size_t len, int *found)
{
	size_t lo = 0, hi = ts->n, mid;
	int c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strncmp(ts->v[mid]->spec.id, id, len);
		if (c == 0 && ts->v[mid]->spec.id[len] != '\0')
			c = 1;
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct tenant *
find(const struct tenants *ts, const char *id, size_t len)
{
	int found;
	size_t i;

	if (!tspec_id_ok(id, len))
		return NULL;
	i = slot(ts, id, len, &found);
	return found ? ts->v[i] : NULL;
}

/* The list as the state folder keeps it (and GET /v1/tenants shows it).
 * NULL on ENOMEM. */
static char *
list_bytes(const struct tenants *ts, size_t *len)
{
	struct tspec *v;
	char *out;
	size_t i;

	if ((v = calloc(ts->n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < ts->n; i++)
		v[i] = ts->v[i]->spec;
	out = tspec_list_canonical(v, ts->n, len);
	free(v);
	return out;
}

/* The tenants' metrics follow the guard's on its chain, so the page's
 * totals count them. */
static void
chain_link(struct tenants *ts, struct tenant *t)
{
	t->metrics.next = ts->env.metrics->next;
	ts->env.metrics->next = &t->metrics;
}

static void
chain_unlink(struct tenants *ts, struct tenant *t)
{
	struct metrics *m;

	for (m = ts->env.metrics; m != NULL; m = m->next)
		if (m->next == &t->metrics) {
			m->next = t->metrics.next;
			break;
		}
	t->metrics.next = NULL;
}

static int
insert(struct tenants *ts, struct tenant *t)
{
	struct tenant **nv;
	size_t i;
	int found;

	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 16;
		if ((nv = realloc(ts->v, cap * sizeof(*nv))) == NULL)
			return -1;
		ts->v = nv;
		ts->cap = cap;
	}
	i = slot(ts, t->spec.id, strlen(t->spec.id), &found);
	memmove(&ts->v[i + 1], &ts->v[i], (ts->n - i) * sizeof(*ts->v));
	ts->v[i] = t;
	ts->n++;
	chain_link(ts, t);
	return 0;
}

static void
unlist(struct tenants *ts, struct tenant *t)
{
	int found;
	size_t i = slot(ts, t->spec.id, strlen(t->spec.id), &found);

	if (!found)
		return;
	memmove(&ts->v[i], &ts->v[i + 1], (ts->n - i - 1) * sizeof(*ts->v));
	ts->n--;
	chain_unlink(ts, t);
}

/* Whether sp may join: the error name and message when not. */
static int
admissible(const struct tenants *ts, const struct tspec *sp, const char **why,
    char *err, size_t errlen)
{
	size_t i;

	if (ts->n >= TSPEC_MAX) {
		*why = "tenant_limit";
		errbuf_set(err, errlen, "at most %d tenants", TSPEC_MAX);
		return 503;
	}
	for (i = 0; i < ts->n; i++)
		if (strcmp(ts->v[i]->spec.link, sp->link) == 0) {
			*why = "link_in_use";
			errbuf_set(err, errlen, "link %s is tenant %s's: a link is one "
			    "tenant's identity", sp->link, ts->v[i]->spec.id);
			return 409;
		}
	return 0;
}

/* ---- the control socket's calls (plane/control.h) ---- */

static void *
ctl_find(void *arg, const char *id, size_t len)
{
	struct tenant *t = find(arg, id, len);

	return t != NULL && !t->removed ? t : NULL;
}

static struct plane *
ctl_plane(void *t)
{
	return ((struct tenant *)t)->plane;
}

static const struct policy *
ctl_policy(void *t)
{
	return ((struct tenant *)t)->policy;
}

/* Installs p for this tenant alone: its connections the new policy no
 * longer admits are revoked; no other tenant's is touched. */
static size_t
ctl_set_policy(void *arg, struct policy *p)
{
	struct tenant *t = arg;
	struct policy *old = t->policy;
	size_t revoked;

	if (t->removed) {
		policy_free(p);
		return 0;
	}
	t->policy = p;
	revoked = proxy_revoke(t->proxy, p);
	log_policy(t);
	policy_free(old);
	return revoked;
}

static void
ctl_hold(void *arg, int delta)
{
	struct tenant *t = arg;

	t->holds += delta;
	if (t->holds == 0 && t->removed)
		tenant_free(t);
}

static int
ctl_add(void *arg, const char *id, size_t idlen, const char *body, size_t len,
    void **out, const char **why, char *msg, size_t msglen)
{
	struct tenants *ts = arg;
	struct tenant *t;
	struct tspec sp;
	int status;

	if (tspec_parse(body, len, &sp, msg, msglen) == -1) {
		*why = "malformed";
		return 400;
	}
	if (strlen(sp.id) != idlen || memcmp(sp.id, id, idlen) != 0) {
		*why = "malformed";
		errbuf_set(msg, msglen, "the spec's id %s is not the path's", sp.id);
		return 400;
	}
	if ((t = find(ts, sp.id, idlen)) != NULL) {
		if (tspec_equal(&t->spec, &sp)) {
			snprintf(msg, msglen, "unchanged");
			return 200;
		}
		*why = "tenant_exists";
		errbuf_set(msg, msglen, "tenant %s exists with another spec: remove it "
		    "first", sp.id);
		return 409;
	}
	if ((status = admissible(ts, &sp, why, msg, msglen)) != 0)
		return status;
	if ((t = tenant_build(ts, &sp, why, msg, msglen)) == NULL)
		return 500;
	if (insert(ts, t) == -1) {
		tenant_free(t);
		*why = "unavailable";
		errbuf_set(msg, msglen, "out of memory");
		return 503;
	}
	*out = t;
	return 201;
}

/* Takes t off the list and closes all it has; freed at its last hold. */
static size_t
tenant_close(struct tenant *t)
{
	size_t closed;

	close_listeners(t);
	closed = (size_t)proxy_live(t->proxy);
	proxy_close_all(t->proxy, "tenant_removed");
	unlist(t->ts, t);
	t->removed = 1;
	return closed;
}

/* The list with t is stored: t stays (and is logged). Not stored: a
 * tenant the guard would forget on a restart is not added. */
static void
ctl_added(void *arg, int stored)
{
	struct tenant *t = arg;

	if (t->removed)
		return;
	if (stored) {
		log_tenant(t, "tenant_added", -1);
		log_policy(t);
	} else {
		(void)tenant_close(t);
	}
}

static int
ctl_remove(void *arg, const char *id, size_t idlen, void **out, size_t *closed,
    const char **why, char *msg, size_t msglen)
{
	struct tenant *t = find(arg, id, idlen);

	if (t == NULL || t->removed) {
		*why = "no_such_tenant";
		errbuf_set(msg, msglen, "no tenant of that id");
		return 404;
	}
	*closed = tenant_close(t);
	log_tenant(t, "tenant_removed", (long long)*closed);
	*out = t;
	return 200;
}

static char *
ctl_list_bytes(void *arg, size_t *len)
{
	return list_bytes(arg, len);
}

static const char *
ctl_name(void *t)
{
	return ((struct tenant *)t)->spec.id;
}

static void
ctl_list(void *arg, struct evbuffer *b)
{
	char *buf;
	size_t len;

	if ((buf = list_bytes(arg, &len)) == NULL) {
		ctljson_error(b, "unavailable", "out of memory");
		return;
	}
	evbuffer_add(b, buf, len);
	evbuffer_add(b, "\n", 1);
	free(buf);
}

static void
ctl_status(void *arg, struct evbuffer *b)
{
	struct tenant *t = arg;
	char *spec;
	size_t len;

	evbuffer_add_printf(b, "{\"tenant\":\"%s\",\"spec\":", t->spec.id);
	if ((spec = tspec_canonical(&t->spec, &len)) != NULL)
		evbuffer_add(b, spec, len);
	else
		evbuffer_add_printf(b, "null");
	free(spec);
	evbuffer_add_printf(b, ",\"connections\":%llu,\"lookups_inflight\":%u,"
	    "\"dns_inflight\":%zu,\"epoch_floor\":",
	    (unsigned long long)proxy_live(t->proxy), proxy_lookups(t->proxy),
	    t->dnsd != NULL ? dnsd_inflight(t->dnsd) : 0);
	if (plane_floor_epoch(t->plane) >= 0)
		evbuffer_add_printf(b, "%lld", plane_floor_epoch(t->plane));
	else
		evbuffer_add_printf(b, "null");
	if (plane_floor_note(t->plane)[0] != '\0') {
		evbuffer_add_printf(b, ",\"floor_note\":");
		ctljson_str(b, plane_floor_note(t->plane));
	}
	evbuffer_add_printf(b, ",\"policy\":");
	ctljson_policy(b, t->policy, 0);
	evbuffer_add_printf(b, "}\n");
}

/* Per-tenant series for the first TENANT_METRICS_MAX tenants: a label
 * per tenant, so the page grows with the tenants and is bounded here. */
static void
ctl_metrics(void *arg, struct evbuffer *b)
{
	struct tenants *ts = arg;
	size_t i, n = ts->n < TENANT_METRICS_MAX ? ts->n : TENANT_METRICS_MAX;
	unsigned p, r;

	evbuffer_add_printf(b, "# HELP egress_guard_tenants Tenants served.\n"
	    "# TYPE egress_guard_tenants gauge\negress_guard_tenants %zu\n"
	    "# HELP egress_guard_tenants_unlisted Tenants beyond the %d with "
	    "series of their own.\n# TYPE egress_guard_tenants_unlisted gauge\n"
	    "egress_guard_tenants_unlisted %zu\n"
	    "# HELP egress_guard_tenant_requests_total Decisions per tenant.\n"
	    "# TYPE egress_guard_tenant_requests_total counter\n", ts->n,
	    TENANT_METRICS_MAX, ts->n - n);
	for (i = 0; i < n; i++) {
		const struct metrics *m = &ts->v[i]->metrics;
		uint64_t allow = 0, deny = 0;

		for (p = 0; p < METRICS_NPROTO; p++)
			for (r = 0; r < REASON__COUNT; r++) {
				if (reason_is_allow((enum reason)r))
					allow += m->decisions[p][r];
				else
					deny += m->decisions[p][r];
			}
		evbuffer_add_printf(b, "egress_guard_tenant_requests_total{tenant=\"%s\","
		    "decision=\"allow\"} %llu\negress_guard_tenant_requests_total{"
		    "tenant=\"%s\",decision=\"deny\"} %llu\n", ts->v[i]->spec.id,
		    (unsigned long long)allow, ts->v[i]->spec.id,
		    (unsigned long long)deny);
	}
	evbuffer_add_printf(b, "# HELP egress_guard_tenant_connections Open client "
	    "connections per tenant.\n# TYPE egress_guard_tenant_connections gauge\n");
	for (i = 0; i < n; i++)
		evbuffer_add_printf(b, "egress_guard_tenant_connections{tenant=\"%s\"} "
		    "%llu\n", ts->v[i]->spec.id,
		    (unsigned long long)proxy_live(ts->v[i]->proxy));
}

static size_t
ctl_count(void *arg)
{
	return ((struct tenants *)arg)->n;
}

/* ---- the daemon's calls ---- */

static void
pause_cb(void *arg, int on)
{
	struct tenants *ts = arg;
	size_t i;
	int k;

	for (i = 0; i < ts->n; i++)
		for (k = 0; k < L_COUNT; k++) {
			if (ts->v[i]->lev[k] == NULL)
				continue;
			if (on)
				event_add(ts->v[i]->lev[k], NULL);
			else
				event_del(ts->v[i]->lev[k]);
		}
}

struct tenants *
tenants_new(const struct tenants_env *env)
{
	struct tenants *ts;

	if ((ts = calloc(1, sizeof(*ts))) == NULL)
		return NULL;
	ts->env = *env;
	ts->ctl = (struct control_tenants){
		.arg = ts, .find = ctl_find, .plane = ctl_plane, .policy = ctl_policy,
		.set_policy = ctl_set_policy, .hold = ctl_hold, .add = ctl_add,
		.remove = ctl_remove, .list = ctl_list, .status = ctl_status,
		.metrics = ctl_metrics, .count = ctl_count, .added = ctl_added,
		.list_bytes = ctl_list_bytes, .name = ctl_name,
	};
	worker_on_pause(env->worker, pause_cb, ts);
	return ts;
}

void
tenants_free(struct tenants *ts)
{
	size_t i;

	if (ts == NULL)
		return;
	worker_on_pause(ts->env.worker, NULL, NULL);
	for (i = 0; i < ts->n; i++) {
		chain_unlink(ts, ts->v[i]);
		tenant_free(ts->v[i]);
	}
	free(ts->v);
	free(ts);
}

int
tenants_restore(struct tenants *ts, char *err, size_t errlen)
{
	struct tspec *v = NULL;
	struct tenant *t;
	const char *why;
	char *buf, msg[512];
	size_t len, n = 0, i;
	int rc = -1;

	if ((buf = plane_tenants_load(ts->env.plane, &len, err, errlen)) == NULL)
		return err[0] == '\0' ? 0 : -1;
	if (tspec_list_parse(buf, len, &v, &n, msg, sizeof(msg)) == -1) {
		errbuf_set(err, errlen, "%s/tenants.json: %s",
		    plane_state_dir(ts->env.plane), msg);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((t = tenant_build(ts, &v[i], &why, msg, sizeof(msg))) == NULL) {
			errbuf_set(err, errlen, "tenant %s (from the state folder): %s",
			    v[i].id, msg);
			goto out;
		}
		if (insert(ts, t) == -1) {
			tenant_free(t);
			errbuf_set(err, errlen, "out of memory");
			goto out;
		}
		log_tenant(t, "tenant_added", -1);
		log_policy(t);
		if (plane_floor_note(t->plane)[0] != '\0')
			log_msg(ts->env.log, "warning", plane_floor_note(t->plane));
	}
	rc = 0;
out:
	free(v);
	free(buf);
	return rc;
}

const struct control_tenants *
tenants_control(struct tenants *ts)
{
	return &ts->ctl;
}

void
tenants_stop(struct tenants *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++) {
		close_listeners(ts->v[i]);
		ts->v[i]->stopping = 1;
	}
}

void
tenants_close_all(struct tenants *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		proxy_close_all(ts->v[i]->proxy, "shutdown");
}

uint64_t
tenants_live(const struct tenants *ts)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < ts->n; i++)
		n += proxy_live(ts->v[i]->proxy);
	return n;
}
