/* The DNS listener; see guard/dnsd.h and docs/design.md "DNS listener".
 *
 * Every query takes the proxy's steps in the proxy's order: the message
 * checked (proto/dnsmsg.c), the name through the destination grammar,
 * the policy (on any port) before any lookup, the guard's own resolver,
 * every answer classified, and only then the answer. A name the policy
 * does not admit never reaches the resolver. */
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "guard/conn.h"
#include "guard/decide.h"
#include "guard/dnsd.h"
#include "guard/dnslog.h"
#include "util/fdres.h"
#include "guard/log.h"
#include "guard/logevery.h"
#include "guard/metrics.h"
#include "policy/dest.h"
#include "policy/policy.h"
#include "proto/dnsmsg.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"
#include "util/errbuf.h"

#if defined(EG_MUTANT_DNS_FORWARD) && !defined(EG_TEST_MUTANT_BUILD)
#error "EG_MUTANT_* is for test mutant builds only"
#endif

#define DNSD_LOG_ADDRS	16	/* addresses named in one decision line */

struct dnsd_tcp;

/* One query, from its datagram or frame to its answer. */
struct dnsd_q {
	struct dnsd		*d;
	TAILQ_ENTRY(dnsd_q)	 link;		/* d->lookups while resolving */
	struct dnsd_tcp		*tc;		/* NULL: UDP */
	int			 ufd;		/* the UDP socket it came on */
	struct sockaddr_storage	 peer;
	socklen_t		 peerlen;
	char			 client[INET6_ADDRSTRLEN + 8];
	uint64_t		 id;
	struct dnsmsg_query	 q;
	struct dest		 dest;		/* the normalised name */
	int			 have_host;
	enum reason		 allow;		/* allowlisted or unrestricted */
	long long		 epoch;		/* -1: no policy */
	char			 digest[POLICY_DIGEST_LEN + 1];
	struct resolver_query	*rq;
	struct timespec		 t0;
	char			 addrs[DNSD_LOG_ADDRS][INET6_ADDRSTRLEN];
	size_t			 naddrs;
};

struct dnsd_tcp {
	struct dnsd		*d;
	TAILQ_ENTRY(dnsd_tcp)	 link;
	struct bufferevent	*bev;
	struct event		*deadline;	/* DNSD_TCP_IDLE_S per frame */
	struct sockaddr_storage	 peer;
	socklen_t		 peerlen;
	unsigned		 inflight;
	int			 eof;		/* the client has sent its last byte */
};

struct dnsd_udp {
	struct dnsd	*d;
	int		 fd;
	struct event	*ev;
};

struct dnsd {
	struct dnsd_env		 env;
	struct dnsd_udp		 udp[DNSD_MAX_LISTEN];
	size_t			 nudp;
	struct event		*tcp[DNSD_MAX_LISTEN];	/* listening, EV_PERSIST */
	size_t			 ntcp;
	struct event		*resume;	/* accept again after a pause */
	struct log_every	 paused;	/* "accept paused" lines */
	TAILQ_HEAD(, dnsd_q)	 lookups;
	size_t			 ninflight;
	TAILQ_HEAD(, dnsd_tcp)	 conns;
	size_t			 nconns;
	uint64_t		 next_id;
	struct dnslog		*lines;		/* per-client bound on the lines */
};

static void tcp_read_cb(struct bufferevent *bev, void *arg);

/* ---- answers ---- */

static void
log_answer(struct dnsd_q *x, enum reason r, int rcode, const char *detail)
{
	struct log_rec rec;
	const char *addrs[DNSD_LOG_ADDRS];
	char tbuf[12];
	size_t i;

	metrics_decision(x->d->env.metrics, "dns", r);
	metrics_dns_answer(x->d->env.metrics, rcode);
	if (!dnslog_admit(x->d->lines, (const struct sockaddr *)&x->peer))
		return;		/* counted in the client's aggregate line */
	log_rec_begin(&rec, x->d->env.log, "decision");
	log_rec_int(&rec, "id", (long long)x->id);
	if (x->d->env.tenant != NULL)
		log_rec_str(&rec, "tenant", x->d->env.tenant);
	log_rec_str(&rec, "client", x->client);
	log_rec_str(&rec, "proto", "dns");
	log_rec_str(&rec, "transport", x->tc != NULL ? "tcp" : "udp");
	if (x->have_host)
		log_rec_str(&rec, "host", x->dest.host);
	else
		log_rec_null(&rec, "host");
	if (x->q.qlen > 0)
		log_rec_str(&rec, "qtype", dnsmsg_type_name(x->q.qtype, tbuf));
	else
		log_rec_null(&rec, "qtype");
	log_rec_str(&rec, "decision", reason_is_allow(r) ? "allow" : "deny");
	log_rec_str(&rec, "reason", reason_name(r));
	log_rec_str(&rec, "rcode", dnsmsg_rcode_name(rcode));
	for (i = 0; i < x->naddrs; i++)
		addrs[i] = x->addrs[i];
	log_rec_strv(&rec, "addrs", addrs, x->naddrs);
	if (detail != NULL && detail[0] != '\0')
		log_rec_str(&rec, "detail", detail);
	log_rec_policy(&rec, x->epoch, x->digest);
	log_emit(x->d->env.log, &rec);
}

/* Sends the answer back to the one who asked, on the socket or connection
 * it came on: never anywhere else. */
static void
send_answer(struct dnsd_q *x, const unsigned char *msg, size_t len)
{
	if (x->tc == NULL) {
		/* A full socket buffer drops the answer; the client retries. */
		(void)sendto(x->ufd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL,
		    (const struct sockaddr *)&x->peer, x->peerlen);
		return;
	}
	{
		unsigned char hdr[2] = { (unsigned char)(len >> 8),
		    (unsigned char)len };
		struct evbuffer *out = bufferevent_get_output(x->tc->bev);

		if (evbuffer_add(out, hdr, 2) == -1 ||
		    evbuffer_add(out, msg, len) == -1)
			return;	/* out of memory: the client times out */
	}
}

/* Answers x with rcode and, for NOERROR, the rdata records; logs the
 * decision. Does not free x. */
static void
answer(struct dnsd_q *x, enum reason r, int rcode, const unsigned char *rdata,
    size_t rdlen, size_t n, const char *detail)
{
	unsigned char out[DNSMSG_TCP_MAX];
	size_t max = x->tc != NULL ? DNSMSG_TCP_MAX : DNSMSG_UDP_MAX;
	long len;

	log_answer(x, r, rcode, detail);
	len = dnsmsg_build(&x->q, rcode, x->q.qtype, rdata, rdlen, n, DNSD_TTL_S,
	    x->tc == NULL, out, max);
	if (len > 0)
		send_answer(x, out, (size_t)len);
}

/* ---- the steps ---- */

/* The policy that decides x, for its line. */
static void
stamp(struct dnsd_q *x, const struct policy *p)
{
	x->epoch = p != NULL ? policy_epoch(p) : -1;
	snprintf(x->digest, sizeof(x->digest), "%s", p != NULL ?
	    policy_digest(p) : "");
}

static void tcp_query_done(struct dnsd_tcp *tc);

static void
resolved(void *arg, enum resolver_status st, const struct resolver_addr *a,
    size_t n, const char *detail)
{
	struct dnsd_q *x = arg;
	struct dnsd *d = x->d;
	struct dnsd_tcp *tc;
	const struct policy *p = d->env.policy(d->env.arg);
	unsigned char rdata[DNSMSG_TCP_MAX];
	char why[160];
	size_t i, k = 0, rdlen;
	int fam;

	x->rq = NULL;
	TAILQ_REMOVE(&d->lookups, x, link);
	d->ninflight--;
	metrics_dns(d->env.metrics, (double)conn_usec_since(&x->t0) / 1e6);
	/* A policy installed during the lookup decides again: the line
	 * names it (a line below its `policy` line never names an older
	 * one), and if it no longer admits the name, it wins, as for the
	 * proxy's requests (reason revoked). */
	stamp(x, p);
	if (!policy_admits_name(p, x->dest.host)) {
		answer(x, p == NULL ? REASON_NO_POLICY : REASON_REVOKED,
		    p == NULL ? DNSMSG_REFUSED : DNSMSG_NXDOMAIN, NULL, 0, 0,
		    "policy changed");
		goto out;
	}
	if (st != RESOLVER_OK) {
		answer(x, st == RESOLVER_TIMEOUT ? REASON_DNS_TIMEOUT :
		    REASON_DNS_FAILURE, DNSMSG_SERVFAIL, NULL, 0, 0, detail);
		goto out;
	}
	for (i = 0; i < n && i < DNSD_LOG_ADDRS; i++)
		decide_addr_str(&a[i], x->addrs[i], sizeof(x->addrs[i]));
	x->naddrs = i;
	/* Every answer of both types is classified, exactly as a proxy
	 * request to this name would be: one non-public address refuses the
	 * name, whichever type was asked. */
	if (!decide_addrs_why(d->env.classify, a, n, why, sizeof(why))) {
		answer(x, REASON_NON_PUBLIC_ADDRESS, DNSMSG_REFUSED, NULL, 0, 0,
		    why);
		goto out;
	}
	fam = x->q.qtype == DNSMSG_TYPE_A ? AF_INET : AF_INET6;
	rdlen = fam == AF_INET ? 4 : 16;
	for (i = 0; i < n && (k + 1) * rdlen <= sizeof(rdata); i++) {
		if (a[i].family != fam)
			continue;
		memcpy(rdata + k * rdlen, a[i].addr, rdlen);
		k++;
	}
	answer(x, x->allow, DNSMSG_NOERROR, rdata, rdlen, k,
	    k == 0 ? "no address of the type asked" : NULL);
out:
	/* Called from the loop, never from inside resolver_lookup, so the
	 * connection may read on (or close) here. */
	tc = x->tc;
	free(x);
	if (tc != NULL)
		tcp_query_done(tc);
}

/* Decides one parsed query. x is on the caller's stack; a lookup takes a
 * heap copy. */
static void
decide(struct dnsd *d, struct dnsd_q *x)
{
	const struct policy *p = d->env.policy(d->env.arg);
	struct dnsd_q *h;
	char why[128];

	stamp(x, p);
	/* The name through the one destination grammar: what the policy
	 * holds is normalised by it, and a name outside it (or an IP
	 * literal, which is not a name) names nothing the policy admits. */
	if (!x->q.name_plain || dest_parse_host(x->q.name, x->q.name_len, 0,
	    &x->dest, why, sizeof(why)) == -1) {
		answer(x, REASON_BAD_REQUEST, DNSMSG_NXDOMAIN, NULL, 0, 0,
		    "not a host name");
		return;
	}
	if (x->dest.kind != DEST_NAME) {
		answer(x, REASON_BAD_REQUEST, DNSMSG_NXDOMAIN, NULL, 0, 0,
		    "an IP literal is not a name");
		return;
	}
	x->have_host = 1;
	if (p == NULL) {
		answer(x, REASON_NO_POLICY, DNSMSG_REFUSED, NULL, 0, 0, NULL);
		return;
	}
#ifndef EG_MUTANT_DNS_FORWARD
	if (!policy_admits_name(p, x->dest.host)) {
		answer(x, REASON_NOT_ALLOWLISTED, DNSMSG_NXDOMAIN, NULL, 0, 0, NULL);
		return;
	}
#endif
	x->allow = policy_mode(p) == POLICY_UNRESTRICTED ? REASON_UNRESTRICTED :
	    REASON_ALLOWLISTED;
	if (x->q.qtype != DNSMSG_TYPE_A && x->q.qtype != DNSMSG_TYPE_AAAA) {
		answer(x, x->allow, DNSMSG_NOERROR, NULL, 0, 0,
		    "only A and AAAA are answered");
		return;
	}
	/* The resolver's own bound, shared with the proxy's lookups: beyond
	 * it the lookup would fail anyway, so say overloaded, as for ours. */
	if (d->ninflight >= (d->env.max_inflight > 0 ? d->env.max_inflight :
	    DNSD_MAX_INFLIGHT) ||
	    resolver_live(d->env.resolver) >= RESOLVER_MAX_LIVE) {
		answer(x, REASON_OVERLOADED, DNSMSG_REFUSED, NULL, 0, 0, NULL);
		return;
	}
	if ((h = malloc(sizeof(*h))) == NULL) {
		answer(x, REASON_DNS_FAILURE, DNSMSG_SERVFAIL, NULL, 0, 0,
		    "out of memory");
		return;
	}
	*h = *x;
	clock_gettime(CLOCK_MONOTONIC, &h->t0);
	TAILQ_INSERT_TAIL(&d->lookups, h, link);
	d->ninflight++;
	if (h->tc != NULL)
		h->tc->inflight++;
	h->rq = resolver_lookup(d->env.resolver, h->dest.host, resolved, h);
	if (h->rq == NULL) {
		TAILQ_REMOVE(&d->lookups, h, link);
		d->ninflight--;
		if (h->tc != NULL)
			h->tc->inflight--;
		answer(h, REASON_DNS_FAILURE, DNSMSG_SERVFAIL, NULL, 0, 0,
		    "out of memory");
		free(h);
	}
}

/* One message from a client, UDP or TCP. */
static void
handle(struct dnsd *d, struct dnsd_tcp *tc, int ufd,
    const struct sockaddr *sa, socklen_t salen, const unsigned char *msg,
    size_t len)
{
	struct dnsd_q x;
	enum dnsmsg_verdict v;
	int rcode;

	memset(&x, 0, sizeof(x));
	x.d = d;
	x.tc = tc;
	x.ufd = ufd;
	x.epoch = -1;
	if (salen > sizeof(x.peer))
		salen = sizeof(x.peer);
	memcpy(&x.peer, sa, salen);
	x.peerlen = salen;
	conn_sockaddr_str(sa, x.client, sizeof(x.client));
	v = dnsmsg_parse_query(msg, len, &x.q, &rcode);
	if (v == DNSMSG_DROP) {
		metrics_dns_answer(d->env.metrics, -1);
		return;
	}
	x.id = ++d->next_id;
	if (v == DNSMSG_ERROR) {
		answer(&x, REASON_BAD_REQUEST, rcode, NULL, 0, 0,
		    rcode == DNSMSG_NOTIMP ? "opcode not QUERY" :
		    rcode == DNSMSG_REFUSED ? "class not IN" : "malformed query");
		return;
	}
	decide(d, &x);
}

/* ---- UDP ---- */

static void
udp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dnsd_udp *u = arg;
	unsigned char buf[DNSMSG_TCP_MAX];
	int i;

	(void)what;
	for (i = 0; i < DNSD_UDP_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		ssize_t r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
		    (struct sockaddr *)&ss, &sl);

		if (r < 0)
			return;	/* EAGAIN, or an error for the next wake-up */
		if ((size_t)r > sizeof(buf)) {
			/* Longer than any query a client needs to send. */
			metrics_dns_answer(u->d->env.metrics, -1);
			continue;
		}
		handle(u->d, NULL, fd, (struct sockaddr *)&ss, sl, buf, (size_t)r);
	}
}

/* ---- TCP (RFC 7766: two-byte length, several queries a connection) ---- */

/* A closed connection's lookup, let go of by c-ares at last. */
static void
orphan_released(void *arg)
{
	struct dnsd_q *x = arg;

	TAILQ_REMOVE(&x->d->lookups, x, link);
	x->d->ninflight--;
	free(x);
}

static void
tcp_close(struct dnsd_tcp *tc)
{
	struct dnsd *d = tc->d;
	struct dnsd_q *x, *nx;

	/* Its lookups end unanswered: there is no one to answer. They stay
	 * counted in flight until c-ares has let go of their queries, which
	 * run on after the cancel: otherwise a client that resets and
	 * reconnects adds queries upstream (and memory) without bound. */
	for (x = TAILQ_FIRST(&d->lookups); x != NULL; x = nx) {
		nx = TAILQ_NEXT(x, link);
		if (x->tc != tc)
			continue;
		x->tc = NULL;
		resolver_cancel_notify(x->rq, orphan_released, x);
	}
	TAILQ_REMOVE(&d->conns, tc, link);
	d->nconns--;
	event_free(tc->deadline);
	bufferevent_free(tc->bev);
	free(tc);
}

/* The next whole frame is due DNSD_TCP_IDLE_S from now. Restarted only by
 * the guard's own progress (the accept, a frame taken, an answer queued),
 * never by a byte read: a read timeout restarts on every byte, and a
 * client that trickles one byte a second would hold its slot for ever. */
static void
tcp_deadline(struct dnsd_tcp *tc)
{
	struct timeval tv = { DNSD_TCP_IDLE_S, 0 };

	(void)evtimer_add(tc->deadline, &tv);
}

static void
tcp_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dnsd_tcp *tc = arg;

	(void)fd;
	(void)what;
	/* Waiting on the resolver is not the client's delay: the answer
	 * restarts the deadline (tcp_query_done). */
	if (tc->inflight > 0)
		return;
	tcp_close(tc);
}

/* A client that half-closed gets its answers, then the close. Returns 1
 * when tc was closed. */
static int
tcp_close_if_done(struct dnsd_tcp *tc)
{
	if (!tc->eof || tc->inflight > 0 ||
	    evbuffer_get_length(bufferevent_get_output(tc->bev)) > 0)
		return 0;
	tcp_close(tc);
	return 1;
}

static void
tcp_query_done(struct dnsd_tcp *tc)
{
	tc->inflight--;
	if (evbuffer_get_length(bufferevent_get_output(tc->bev)) > DNSD_TCP_OUT_MAX) {
		tcp_close(tc);
		return;
	}
	tcp_deadline(tc);
	/* Frames held back by the pipeline bound can go on now. */
	tcp_read_cb(tc->bev, tc);
}

static void
tcp_write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	(void)tcp_close_if_done(arg);
}

static void
tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct dnsd_tcp *tc = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char msg[DNSMSG_TCP_MAX];
	unsigned char hdr[2];
	size_t len;

	while (tc->inflight < DNSD_TCP_PIPELINE &&
	    evbuffer_get_length(in) >= 2) {
		if (evbuffer_copyout(in, hdr, 2) != 2)
			return;
		len = ((size_t)hdr[0] << 8) | hdr[1];
		if (len == 0 || len > DNSMSG_TCP_MAX) {
			/* A frame the guard will not read: without it the
			 * stream has no next boundary. */
			metrics_dns_answer(tc->d->env.metrics, -1);
			tcp_close(tc);
			return;
		}
		if (evbuffer_get_length(in) < 2 + len)
			return;
		(void)evbuffer_drain(in, 2);
		(void)evbuffer_remove(in, msg, len);
		/* handle() never closes tc: only the loop's callbacks do. */
		handle(tc->d, tc, -1, (struct sockaddr *)&tc->peer, tc->peerlen,
		    msg, len);
		tcp_deadline(tc);
		if (evbuffer_get_length(bufferevent_get_output(bev)) >
		    DNSD_TCP_OUT_MAX) {
			tcp_close(tc);
			return;
		}
	}
}

static void
tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct dnsd_tcp *tc = arg;

	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
		/* Frames already read are decided and answered first. */
		tc->eof = 1;
		bufferevent_disable(bev, EV_READ);
		(void)tcp_close_if_done(tc);
		return;
	}
	tcp_close(tc);
}

static void
tcp_accepted(struct dnsd *d, evutil_socket_t fd, struct sockaddr *sa,
    socklen_t salen)
{
	struct dnsd_tcp *tc = NULL;

	if (d->nconns >= DNSD_MAX_TCP || (size_t)salen > sizeof(tc->peer) ||
	    (tc = calloc(1, sizeof(*tc))) == NULL)
		goto refuse;
	tc->d = d;
	memcpy(&tc->peer, sa, (size_t)salen);
	tc->peerlen = (socklen_t)salen;
	if ((tc->deadline = evtimer_new(d->env.base, tcp_deadline_cb, tc)) == NULL)
		goto refuse;
	tc->bev = bufferevent_socket_new(d->env.base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (tc->bev == NULL)
		goto refuse;
	/* At most one whole frame buffered beyond what is being decided. */
	bufferevent_setwatermark(tc->bev, EV_READ, 0, 2 + DNSMSG_TCP_MAX);
	bufferevent_setcb(tc->bev, tcp_read_cb, tcp_write_cb, tcp_event_cb, tc);
	if (bufferevent_enable(tc->bev, EV_READ) == -1) {
		bufferevent_free(tc->bev);	/* closes fd */
		event_free(tc->deadline);
		free(tc);
		return;
	}
	tcp_deadline(tc);
	TAILQ_INSERT_TAIL(&d->conns, tc, link);
	d->nconns++;
	return;
refuse:
	if (tc != NULL && tc->deadline != NULL)
		event_free(tc->deadline);
	free(tc);
	evutil_closesocket(fd);
}

static void
tcp_set_accepting(struct dnsd *d, int on)
{
	size_t i;

	for (i = 0; i < d->ntcp; i++)
		(void)(on ? event_add(d->tcp[i], NULL) : event_del(d->tcp[i]));
}

static void
tcp_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	tcp_set_accepting(arg, 1);
}

/* Out of descriptors (none left below the reserve, or accept failed for
 * want of them): the level-triggered listener would be ready again at
 * once and spin. Paused, as the proxy's and control's listeners are;
 * connections wait in the kernel backlog meanwhile. */
static void
tcp_starved(struct dnsd *d)
{
	struct timeval tv = { 0, DNSD_PAUSE_USEC };

	if (evtimer_pending(d->resume, NULL))
		return;
	tcp_set_accepting(d, 0);
	(void)evtimer_add(d->resume, &tv);
	log_every(d->env.log, &d->paused,
	    "dns: accept paused: out of file descriptors");
}

/* One accept per readiness. The workload's connections never take a
 * descriptor of the control socket's reserve (util/fdres.h): with none
 * free below it, the connection is left in the backlog, not accepted and
 * dropped. */
static void
tcp_listen_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct dnsd *d = arg;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd;

	(void)what;
	if (!fdres_room(lfd)) {
		tcp_starved(d);
		return;
	}
	fd = fdres_workload(accept4(lfd, (struct sockaddr *)&ss, &sl,
	    SOCK_NONBLOCK | SOCK_CLOEXEC));
	if (fd == -1) {
		if (conn_accept_starved(errno))
			tcp_starved(d);
		return;
	}
	tcp_accepted(d, fd, (struct sockaddr *)&ss, sl);
}

/* ---- setup ---- */

static int
bind_one(const struct dnsd *d, const struct dest *a, int type, char *err,
    size_t errlen)
{
	int fd = conn_bind_dev(a, type, d->env.device);

	if (fd == -1)
		errbuf_set(err, errlen, "--dns-listen %s%s%s:%u (%s): %s",
		    a->kind == DEST_IPV6 ? "[" : "", a->host,
		    a->kind == DEST_IPV6 ? "]" : "", a->port,
		    type == SOCK_DGRAM ? "udp" : "tcp", strerror(errno));
	return fd;
}

struct dnsd *
dnsd_new(const struct dnsd_env *env, const struct dest *at, size_t n,
    char *err, size_t errlen)
{
	struct dnsd *d;
	size_t i;
	int fd;

	if (n > DNSD_MAX_LISTEN) {
		errbuf_set(err, errlen, "--dns-listen: at most %d", DNSD_MAX_LISTEN);
		return NULL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	d->env = *env;
	TAILQ_INIT(&d->lookups);
	TAILQ_INIT(&d->conns);
	if ((d->resume = evtimer_new(env->base, tcp_resume_cb, d)) == NULL ||
	    (d->lines = dnslog_new(env->log, env->metrics)) == NULL) {
		errbuf_set(err, errlen, "--dns-listen: out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		struct dnsd_udp *u = &d->udp[d->nudp];

		if ((fd = bind_one(d, &at[i], SOCK_DGRAM, err, errlen)) == -1)
			goto fail;
		u->d = d;
		u->fd = fd;
		u->ev = event_new(env->base, fd, EV_READ | EV_PERSIST, udp_cb, u);
		if (u->ev == NULL || event_add(u->ev, NULL) == -1) {
			if (u->ev != NULL)
				event_free(u->ev);
			close(fd);
			errbuf_set(err, errlen, "--dns-listen: out of memory");
			goto fail;
		}
		d->nudp++;
		if ((fd = bind_one(d, &at[i], SOCK_STREAM, err, errlen)) == -1)
			goto fail;
		if (listen(fd, DNSD_BACKLOG) == -1 ||
		    (d->tcp[d->ntcp] = event_new(env->base, fd, EV_READ |
		    EV_PERSIST, tcp_listen_cb, d)) == NULL ||
		    event_add(d->tcp[d->ntcp], NULL) == -1) {
			errbuf_set(err, errlen, "--dns-listen: cannot listen: %s",
			    strerror(errno));
			if (d->tcp[d->ntcp] != NULL)
				event_free(d->tcp[d->ntcp]);
			d->tcp[d->ntcp] = NULL;
			close(fd);
			goto fail;
		}
		d->ntcp++;
	}
	return d;
fail:
	dnsd_free(d);
	return NULL;
}

void
dnsd_free(struct dnsd *d)
{
	struct dnsd_q *x;
	size_t i;

	if (d == NULL)
		return;
	while (!TAILQ_EMPTY(&d->conns))
		tcp_close(TAILQ_FIRST(&d->conns));
	while ((x = TAILQ_FIRST(&d->lookups)) != NULL) {
		TAILQ_REMOVE(&d->lookups, x, link);
		if (x->rq != NULL)
			resolver_cancel(x->rq);
		free(x);
	}
	for (i = 0; i < d->nudp; i++) {
		event_free(d->udp[i].ev);
		close(d->udp[i].fd);
	}
	for (i = 0; i < d->ntcp; i++) {
		int lfd = event_get_fd(d->tcp[i]);

		event_free(d->tcp[i]);
		close(lfd);
	}
	if (d->resume != NULL)
		event_free(d->resume);
	log_every_free(&d->paused);
	dnslog_free(d->lines);
	free(d);
}

size_t
dnsd_inflight(const struct dnsd *d)
{
	return d->ninflight;
}
