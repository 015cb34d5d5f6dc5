#include <sys/socket.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ares.h>
#include <event2/event.h>

#include "resolver/resolver.h"
#include "util/fdres.h"
#include "util/errbuf.h"
#include "util/file.h"

#define RESOLVER_MAX_SOCKS 64
/* A header c-ares calls a success but we do not: an rcode it does not map
 * (6-15: YXDOMAIN and the rest stay ARES_SUCCESS in 1.18), or no QR bit.
 * Outside c-ares' status range. */
#define RESOLVER_ST_HEADER	(-1000)
#define RESOLVER_CONF		"/etc/resolv.conf"	/* c-ares' own */
#define RESOLVER_CONF_MAX	(64 * 1024)	/* bytes of it read */
/* The first c-ares with a query cache (on by default): 1.23.0. */
#define RESOLVER_ARES_CACHE_VERSION 0x011700

struct rsock {
	ares_socket_t	 fd;
	struct event	*ev;
};

struct resolver {
	struct event_base *base;
	ares_channel	 channel;
	struct event	*timer;		/* c-ares' own retransmit timer */
	struct rsock	 socks[RESOLVER_MAX_SOCKS];
	int		 timeout_ms;
	char		 servers[512];
	int		 dying;
	size_t		 live;		/* lookups c-ares holds, see RESOLVER_MAX_LIVE */
};

/* One lookup = two c-ares queries (A, AAAA). The struct lives until both
 * have called back, even if the caller cancelled or the deadline passed:
 * c-ares still holds a pointer to it, and until then it counts in
 * r->live. */
struct resolver_query {
	struct resolver	*r;
	resolver_cb	 cb;		/* NULL once delivered or cancelled */
	void		*arg;
	void		(*done)(void *);	/* resolver_cancel_notify's */
	void		*done_arg;
	int		 pending;	/* c-ares callbacks still to come */
	int		 asked;		/* counted in r->live */
	int		 status[2];	/* ares status per type: 0 = A, 1 = AAAA */
	struct resolver_addr *addrs;	/* the A answers, then the AAAA: sized
					   to them, NULL before any */
	size_t		 n;
	size_t		 na;		/* of which A */
	int		 overflow;
	const char	*fail;		/* failed before any answer: the detail */
	struct event	*deadline;
	struct event	*deliver;	/* deferred delivery, see resolver_cb */
	int		 timed_out;
};

static void resolver_reschedule(struct resolver *r);

#ifndef ARES_OPT_QUERY_CACHE
static int
ares_run_version(void)
{
	int v = 0;

	(void)ares_version(&v);
	return v;
}
#endif

static void
sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver *r = arg;

	ares_process_fd(r->channel,
	    (what & EV_READ) ? (ares_socket_t)fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? (ares_socket_t)fd : ARES_SOCKET_BAD);
	resolver_reschedule(r);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver *r = arg;

	(void)fd;
	(void)what;
	ares_process_fd(r->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	resolver_reschedule(r);
}

static void
resolver_reschedule(struct resolver *r)
{
	struct timeval maxtv = { 1, 0 }, tv, *tvp;

	if (r->dying)
		return;
	tvp = ares_timeout(r->channel, &maxtv, &tv);
	evtimer_add(r->timer, tvp);
}

/* Every lookup is a workload's (a proxy request or a DNS listener query):
 * a socket from the descriptor reserve (util/fdres.h) is refused, and
 * c-ares closes it and fails the query as a refused connection. */
static int
sock_create_cb(ares_socket_t fd, int type, void *data)
{
	(void)type;
	(void)data;
	return fdres_reserved((int)fd) ? -1 : 0;
}

/* c-ares tells us which sockets it wants watched. */
static void
sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct resolver *r = data;
	struct rsock *slot = NULL, *free_slot = NULL;
	short what;
	int i;

	for (i = 0; i < RESOLVER_MAX_SOCKS; i++) {
		if (r->socks[i].ev != NULL && r->socks[i].fd == fd)
			slot = &r->socks[i];
		else if (r->socks[i].ev == NULL && free_slot == NULL)
			free_slot = &r->socks[i];
	}
	if (slot != NULL) {
		event_free(slot->ev);
		slot->ev = NULL;
	}
	if (!readable && !writable)
		return;
	if (slot == NULL)
		slot = free_slot;
	if (slot == NULL)
		return;		/* table full: that query will time out, fail closed */
	what = EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);
	slot->fd = fd;
	slot->ev = event_new(r->base, fd, what, sock_cb, r);
	if (slot->ev != NULL)
		event_add(slot->ev, NULL);
}

const char *
resolver_servers(const struct resolver *r)
{
	return r->servers;
}

/* The "nameserver ADDR" lines, as c-ares reads them: leading blanks,
 * the word, blanks, a value. */
size_t
resolver_conf_nameservers(const char *text, size_t len)
{
	static const char word[] = "nameserver";
	const size_t wlen = sizeof(word) - 1;
	size_t i = 0, n = 0;

	while (i < len) {
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		if (len - i > wlen + 1 && memcmp(text + i, word, wlen) == 0 &&
		    (text[i + wlen] == ' ' || text[i + wlen] == '\t')) {
			i += wlen;
			while (i < len && (text[i] == ' ' || text[i] == '\t'))
				i++;
			if (i < len && text[i] != '\n' && text[i] != '#' &&
			    text[i] != ';')
				n++;
		}
		while (i < len && text[i] != '\n')
			i++;
		i++;
	}
	return n;
}

/* Without --dns the servers come from /etc/resolv.conf; with none there,
 * c-ares asks 127.0.0.1:53, and in a shared namespace whoever binds that
 * port answers for every admitted name. Refuse instead. */
static int
conf_has_nameserver(char *err, size_t errlen)
{
	char ferr[256], *text;
	size_t len = 0, n;

	if ((text = file_read(RESOLVER_CONF, RESOLVER_CONF_MAX, 0, &len, ferr,
	    sizeof(ferr))) == NULL) {
		errbuf_set(err, errlen, "no --dns, and %s: give --dns", ferr);
		return 0;
	}
	n = resolver_conf_nameservers(text, len);
	free(text);
	if (n == 0)
		errbuf_set(err, errlen, "no --dns, and no nameserver in %s (c-ares "
		    "would ask 127.0.0.1:53): give --dns", RESOLVER_CONF);
	return n > 0;
}

/* c-ares 1.18 (ares__send_query, next_server) asks the servers in turn,
 * giving try i (0-based, over every server and round) T << (i / nservers):
 * with 2 tries a lookup takes nservers x T in the first round and
 * nservers x 2T in the second, 3 x nservers x T in all, and server k is
 * first asked at k x T. T = timeout / (3 x nservers) therefore gives
 * every server both its tries inside --dns-timeout; timeout/2 let the
 * first server's two tries take all of it, so a third was asked only at
 * the deadline. The floor keeps a try longer than a round trip; below
 * it (many servers, a short timeout) the last ones may miss the deadline. */
int
resolver_try_ms(int timeout_ms, size_t nservers)
{
	long t;

	if (nservers == 0)
		nservers = 1;
	t = (long)timeout_ms / (3L * (long)nservers);
	return t > RESOLVER_TRY_MIN_MS ? (int)t : RESOLVER_TRY_MIN_MS;
}

/* Opens r->channel with try_ms per try and the servers (NULL: c-ares'
 * own resolv.conf reading). Returns how many servers it has, or -1. */
static int
channel_open(struct resolver *r, const char *servers, int try_ms, char *err,
    size_t errlen)
{
	struct ares_options opts;
	struct ares_addr_port_node *list = NULL, *n;
	int optmask, rc, count = 0;

	memset(&opts, 0, sizeof(opts));
	/* Exact names only: no search list, no HOSTALIASES. Two tries per
	 * server inside the overall deadline enforced by resolver_lookup.
	 * NOCHECKRESP: c-ares would otherwise turn a SERVFAIL or REFUSED
	 * answer into ECONNREFUSED, indistinguishable from a dead server. */
	opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_EDNS |
	    ARES_FLAG_NOCHECKRESP;
	opts.timeout = try_ms;
	opts.tries = 2;
	opts.sock_state_cb = sock_state_cb;
	opts.sock_state_cb_data = r;
	opts.ednspsz = 1232;
	optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	    ARES_OPT_SOCK_STATE_CB | ARES_OPT_EDNSPSZ;
	/* No cache: every request is classified against a fresh answer (a
	 * rebinding name must be asked again). c-ares 1.23 and later cache
	 * answers by default; a max TTL of 0 turns that off. Debian 12's
	 * 1.18 has no cache and no such option. */
#ifdef ARES_OPT_QUERY_CACHE
	opts.qcache_max_ttl = 0;
	optmask |= ARES_OPT_QUERY_CACHE;
#endif
	if ((rc = ares_init_options(&r->channel, &opts, optmask)) != ARES_SUCCESS) {
		r->channel = NULL;
		return errbuf_fail(err, errlen, "c-ares: %s", ares_strerror(rc));
	}
	ares_set_socket_callback(r->channel, sock_create_cb, NULL);
	if (servers != NULL &&
	    (rc = ares_set_servers_ports_csv(r->channel, servers)) != ARES_SUCCESS)
		return errbuf_fail(err, errlen, "bad --dns list: %s",
		    ares_strerror(rc));
	if (ares_get_servers_ports(r->channel, &list) == ARES_SUCCESS) {
		for (n = list; n != NULL; n = n->next)
			count++;
		ares_free_data(list);
	}
	return count;
}

/* Records the servers in use, for status and check output. */
static void
record_servers(struct resolver *r)
{
	struct ares_addr_port_node *list = NULL, *n;
	size_t off = 0;

	if (ares_get_servers_ports(r->channel, &list) != ARES_SUCCESS)
		return;
	for (n = list; n != NULL && off < sizeof(r->servers) - 64; n = n->next) {
		char ip[INET6_ADDRSTRLEN];
		int port = n->udp_port ? n->udp_port : 53;
		inet_ntop(n->family, &n->addr, ip, sizeof(ip));
		off += (size_t)snprintf(r->servers + off, sizeof(r->servers) - off,
		    n->family == AF_INET6 ? "%s[%s]:%d" : "%s%s:%d",
		    off ? "," : "", ip, port);
	}
	ares_free_data(list);
}

/* Built against headers without ARES_OPT_QUERY_CACHE but run against a
 * library that has it (same soname): the cache would be on and could not
 * be turned off. Refuse to start rather than cache. */
static int
cache_check(char *err, size_t errlen)
{
#ifndef ARES_OPT_QUERY_CACHE
	if (ares_run_version() >= RESOLVER_ARES_CACHE_VERSION)
		return errbuf_fail(err, errlen, "c-ares %s caches answers and this "
		    "build cannot turn that off (built against c-ares %s): "
		    "rebuild against the installed headers", ares_version(NULL),
		    ARES_VERSION_STR);
#else
	(void)err;
	(void)errlen;
#endif
	return 0;
}

struct resolver *
resolver_new(struct event_base *base, const char *servers, int timeout_ms,
    char *err, size_t errlen)
{
	struct resolver *r;
	int rc, n;

	if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		errbuf_set(err, errlen, "c-ares init: %s", ares_strerror(rc));
		return NULL;
	}
	if (servers == NULL && !conf_has_nameserver(err, errlen))
		return NULL;
	if (cache_check(err, errlen) == -1)
		return NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	r->base = base;
	r->timeout_ms = timeout_ms;
	/* The per-try timeout depends on how many servers c-ares took, which
	 * is known only once it has them, and 1.18 cannot change it on an
	 * open channel: open it again with the right one. */
	if ((n = channel_open(r, servers, resolver_try_ms(timeout_ms, 1), err,
	    errlen)) == -1)
		goto fail;
	if (resolver_try_ms(timeout_ms, (size_t)n) != resolver_try_ms(timeout_ms, 1)) {
		ares_destroy(r->channel);
		r->channel = NULL;
		if (channel_open(r, servers, resolver_try_ms(timeout_ms, (size_t)n),
		    err, errlen) == -1)
			goto fail;
	}
	if ((r->timer = evtimer_new(base, timer_cb, r)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	record_servers(r);
	if (r->servers[0] == '\0') {
		errbuf_set(err, errlen, "no DNS servers configured");
		goto fail;
	}
	return r;
fail:
	resolver_free(r);
	return NULL;
}

static void query_release(struct resolver_query *q);

void
resolver_free(struct resolver *r)
{
	int i;

	if (r == NULL)
		return;
	r->dying = 1;
	/* Calls every pending callback with ARES_EDESTRUCTION. */
	if (r->channel != NULL)
		ares_destroy(r->channel);
	for (i = 0; i < RESOLVER_MAX_SOCKS; i++)
		if (r->socks[i].ev != NULL)
			event_free(r->socks[i].ev);
	if (r->timer != NULL)
		event_free(r->timer);
	free(r);
}

static void
query_release(struct resolver_query *q)
{
	if (q->pending > 0 || q->cb != NULL)
		return;
	if (q->asked)
		q->r->live--;
	if (q->done != NULL)
		q->done(q->done_arg);
	if (q->deadline != NULL)
		event_free(q->deadline);
	if (q->deliver != NULL)
		event_free(q->deliver);
	free(q->addrs);
	free(q);
}

static const char *
status_detail(int st)
{
	switch (st) {
	case ARES_SUCCESS:	return "";
	case ARES_ENODATA:	return "no address records";
	case ARES_ENOTFOUND:	return "NXDOMAIN";
	case ARES_ESERVFAIL:	return "SERVFAIL";
	case ARES_EREFUSED:	return "REFUSED";
	case ARES_ETIMEOUT:	return "timeout";
	case ARES_ECONNREFUSED:	return "connection refused";
	case ARES_EBADRESP:	return "malformed answer";
	case ARES_EFORMERR:	return "FORMERR";
	case RESOLVER_ST_HEADER: return "error rcode or not an answer";
	default:		return "resolver error";
	}
}

/* Fail closed: a lookup succeeds only when both types answered cleanly
 * (an empty answer for one type is fine) and at least one address came
 * back. A timeout or an error on either type denies, since an answer we
 * could not see is an answer we could not classify. */
static void
deliver_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_query *q = arg;
	resolver_cb cb = q->cb;
	enum resolver_status st = RESOLVER_OK;
	const char *detail = "";
	int i, any_timeout = 0, bad = 0;

	(void)fd;
	(void)what;
	if (cb == NULL) {
		query_release(q);
		return;
	}
	if (q->fail != NULL) {
		q->cb = NULL;
		cb(q->arg, RESOLVER_FAILURE, NULL, 0, q->fail);
		query_release(q);
		return;
	}
	for (i = 0; i < 2; i++) {
		int s = q->status[i];
		if (s == ARES_SUCCESS || s == ARES_ENODATA || s == ARES_ENOTFOUND)
			continue;
		if (s == ARES_ETIMEOUT || s == ARES_ECONNREFUSED)
			any_timeout = 1;
		bad = 1;
		detail = status_detail(s);
	}
	if (q->timed_out || any_timeout) {
		st = RESOLVER_TIMEOUT;
		detail = q->timed_out ? "timeout" : detail;
	} else if (q->overflow) {
		st = RESOLVER_FAILURE;
		detail = q->overflow > 1 ? "out of memory" : "too many answers";
	} else if (bad) {
		st = RESOLVER_FAILURE;
	} else if (q->n == 0) {
		st = RESOLVER_FAILURE;
		detail = (q->status[0] == ARES_ENOTFOUND ||
		    q->status[1] == ARES_ENOTFOUND) ? "NXDOMAIN" : "no address records";
	}
	q->cb = NULL;
	cb(q->arg, st, st == RESOLVER_OK ? q->addrs : NULL,
	    st == RESOLVER_OK ? q->n : 0, detail);
	query_release(q);
}

static void
schedule_delivery(struct resolver_query *q)
{
	if (q->deadline != NULL)
		event_del(q->deadline);
	event_active(q->deliver, EV_TIMEOUT, 0);
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct resolver_query *q = arg;

	(void)fd;
	(void)what;
	q->timed_out = 1;
	schedule_delivery(q);
}

/* The answers go in the resolver's order, A then AAAA, whichever type
 * answered first: A answers are inserted before any AAAA already there,
 * so the server's timing does not pick the family dialled first. The
 * array grows to the answers (a lookup that never answers costs none of
 * it). Returns -1 over RESOLVER_MAX_ANSWERS, -2 out of memory. */
static int
add_addrs(struct resolver_query *q, int family, const struct hostent *he)
{
	struct resolver_addr *grown;
	char **p;
	size_t alen = family == AF_INET ? 4 : 16, k = 0, at, i;

	for (p = he->h_addr_list; p != NULL && *p != NULL; p++)
		k++;
	if (k > RESOLVER_MAX_ANSWERS - q->n)
		return -1;
	if (k == 0)
		return 0;
	if ((grown = realloc(q->addrs, (q->n + k) * sizeof(*q->addrs))) == NULL)
		return -2;
	q->addrs = grown;
	at = family == AF_INET ? q->na : q->n;
	memmove(q->addrs + at + k, q->addrs + at,
	    (q->n - at) * sizeof(*q->addrs));
	for (i = 0; i < k; i++) {
		q->addrs[at + i].family = family;
		memset(q->addrs[at + i].addr, 0, 16);
		memcpy(q->addrs[at + i].addr, he->h_addr_list[i], alen);
	}
	q->n += k;
	if (family == AF_INET)
		q->na += k;
	return 0;
}

/* c-ares maps only rcodes 1-5 to errors and does not check QR: an answer
 * with rcode 6-15 or without QR would be taken as clean. */
static int
header_clean(const unsigned char *abuf, int alen)
{
	return alen >= HFIXEDSZ && (abuf[2] & 0x80) != 0 &&
	    (abuf[3] & 0x0f) == 0;
}

static void
answer_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen,
    int idx)
{
	struct resolver_query *q = arg;
	struct hostent *he = NULL;
	int family = idx == 0 ? AF_INET : AF_INET6, added;

	(void)timeouts;
	if (status == ARES_SUCCESS && !header_clean(abuf, alen))
		status = RESOLVER_ST_HEADER;
	if (status == ARES_SUCCESS) {
		status = idx == 0 ? ares_parse_a_reply(abuf, alen, &he, NULL, NULL) :
		    ares_parse_aaaa_reply(abuf, alen, &he, NULL, NULL);
		if (status == ARES_SUCCESS && q->cb != NULL && !q->overflow &&
		    (added = add_addrs(q, family, he)) < 0)
			q->overflow = -added;	/* 1: too many, 2: no memory */
		if (he != NULL)
			ares_free_hostent(he);
	}
	q->status[idx] = status;
	q->pending--;
	if (q->pending == 0 && q->cb != NULL && !q->r->dying)
		schedule_delivery(q);
	else if (q->pending == 0 && (q->cb == NULL || q->r->dying)) {
		q->cb = NULL;
		query_release(q);
	}
}

static void
answer_a(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	answer_cb(arg, status, timeouts, abuf, alen, 0);
}

static void
answer_aaaa(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	answer_cb(arg, status, timeouts, abuf, alen, 1);
}

struct resolver_query *
resolver_lookup(struct resolver *r, const char *name, resolver_cb cb, void *arg)
{
	struct resolver_query *q;
	struct timeval tv;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->r = r;
	q->cb = cb;
	q->arg = arg;
	q->deadline = evtimer_new(r->base, deadline_cb, q);
	q->deliver = event_new(r->base, -1, 0, deliver_cb, q);
	if (q->deadline == NULL || q->deliver == NULL) {
		q->cb = NULL;
		query_release(q);
		return NULL;
	}
	if (r->live >= RESOLVER_MAX_LIVE) {
		/* Failed without a query, delivered from the loop all the
		 * same: the caller never re-enters. */
		q->fail = "too many lookups in flight";
		event_active(q->deliver, EV_TIMEOUT, 0);
		return q;
	}
	tv.tv_sec = r->timeout_ms / 1000;
	tv.tv_usec = (r->timeout_ms % 1000) * 1000;
	evtimer_add(q->deadline, &tv);
	/* c-ares may call back synchronously (e.g. no servers): delivery is
	 * always deferred to the loop, so the caller never re-enters. */
	q->pending = 2;
	q->asked = 1;
	r->live++;
	ares_query(r->channel, name, C_IN, T_A, answer_a, q);
	ares_query(r->channel, name, C_IN, T_AAAA, answer_aaaa, q);
	resolver_reschedule(r);
	return q;
}

size_t
resolver_live(const struct resolver *r)
{
	return r->live;
}

void
resolver_cancel_notify(struct resolver_query *q, void (*done)(void *),
    void *arg)
{
	q->done = done;
	q->done_arg = arg;
	q->cb = NULL;
	if (q->deadline != NULL)
		event_del(q->deadline);
	if (q->deliver != NULL)
		event_del(q->deliver);
	query_release(q);
}

void
resolver_cancel(struct resolver_query *q)
{
	if (q != NULL)
		resolver_cancel_notify(q, NULL, NULL);
}
