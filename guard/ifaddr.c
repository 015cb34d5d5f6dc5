#include <sys/eventfd.h>
#include <sys/socket.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <ifaddrs.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/ifaddr.h"
#include "resolver/classify.h"
#include "util/errbuf.h"

#define IFADDR_MAX 32768	/* CLASSIFY_MAX_OWN: thousands of tenant links */
#define IFADDR_DUMP_BUF 32768	/* one recv of a route dump */
#define IFADDR_DUMP_MSGS 100000	/* routes read at most, of any type */
#define IFADDR_RETRY_SEC 1	/* after a failed refresh, while all is denied */
#define IFADDR_ANNOUNCED_MAX 1024	/* blocks one wake-up's changes may add */

/* Blocks being collected: v holds max. */
struct ownset {
	struct cidr	*v;
	size_t		 n, max;
};

/* A re-read is a netlink dump of every address and every local route,
 * with blocking reads (glibc's getifaddrs restarts while addresses keep
 * changing): seconds for a host that adds thousands at once. It runs on
 * a thread of the watch's own, started on the first change (by then the
 * loop thread that starts it has dropped its privileges, and the new
 * thread inherits that), and the loop only installs the result.
 *
 * While a re-read is pending, the set in force is the last one read plus
 * every address and local route the changes since announced (the
 * notification carries them): an address added a moment ago is refused
 * at once, and nobody else's requests are (a tenant's link coming or
 * going used to refuse every tenant's requests until the read was done).
 * An address removed stays refused until the read: the set only errs on
 * the side of refusing. A notification that cannot be read whole (lost
 * to an overrun, truncated, malformed, or more additions than
 * IFADDR_ANNOUNCED_MAX) makes the set unknown instead, and every address
 * is refused until the read. */
struct ifaddr_watch {
	struct classify_cfg	*cfg;
	struct event		*ev;
	struct event		*retry;
	struct event		*done_ev;
	int			 fd;
	int			 efd;		/* the thread's "a result is ready" */
	int			 started;	/* the thread runs (loop only) */
	pthread_t		 thread;
	pthread_mutex_t		 mu;		/* guards what follows */
	pthread_cond_t		 cv;
	int			 want;		/* a re-read asked and not begun */
	int			 stop;
	int			 have;		/* a result waits for the loop */
	struct cidr		*own;		/* the result, IFADDR_MAX entries */
	int			 nown;		/* its count, -1: not read whole */
	struct cidr		*add;		/* announced: IFADDR_ANNOUNCED_MAX */
};

/* The next free entry of set, zeroed, for a block of family/prefix; NULL
 * when the set is full: a truncated set would leave addresses past the
 * cap dialable, so the caller fails the whole set. */
static struct cidr *
own_next(struct ownset *set, int family, unsigned int prefix)
{
	struct cidr *c;

	if (set->n == set->max)
		return NULL;
	c = &set->v[set->n++];
	memset(c, 0, sizeof(*c));
	c->family = family;
	c->prefix = prefix;
	return c;
}

/* Appends sa (AF_INET/AF_INET6, else ignored) as a /32 or /128. -1 when
 * the set is full. */
static int
add_sockaddr(const struct sockaddr *sa, struct ownset *set)
{
	struct cidr *c;

	if (sa == NULL ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return 0;
	if ((c = own_next(set, sa->sa_family,
	    sa->sa_family == AF_INET ? 32 : 128)) == NULL)
		return -1;
	if (sa->sa_family == AF_INET)
		memcpy(c->addr, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	else
		memcpy(c->addr, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	return 0;
}

/* Appends one RTN_LOCAL route of a dump. 0 for a message that is not one
 * (the kernel may ignore the dump filter), -1 when the set is full or the
 * message is malformed. */
static int
add_local_route(struct nlmsghdr *nh, struct ownset *set)
{
	struct rtmsg *rt = NLMSG_DATA(nh);
	struct rtattr *a;
	int len = (int)RTM_PAYLOAD(nh);
	size_t alen;
	struct cidr *c;
	unsigned char last[16];

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return -1;
	if (rt->rtm_type != RTN_LOCAL ||
	    (rt->rtm_family != AF_INET && rt->rtm_family != AF_INET6))
		return 0;
	alen = rt->rtm_family == AF_INET ? 4 : 16;
	if (rt->rtm_dst_len > alen * 8)
		return -1;
	if ((c = own_next(set, rt->rtm_family, rt->rtm_dst_len)) == NULL)
		return -1;
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type != RTA_DST)
			continue;
		if (RTA_PAYLOAD(a) != alen)
			return -1;
		/* The network, host bits cleared: the kernel keeps them
		 * zero, and one that was not would fail the whole set. */
		cidr_ends(RTA_DATA(a), c->prefix, alen, c->addr, last);
		return 0;
	}
	/* No RTA_DST: "local default", every address is this host's. The
	 * block stays 0/0 and refuses everything, as it should. */
	return c->prefix == 0 ? 0 : -1;
}

/* Every route of type local, in every table: the kernel delivers these
 * to the host itself. An address on an interface has one of its own, but
 * a prefix on lo ("ip addr add 198.51.100.1/24 dev lo", or AnyIP's "ip
 * route add local 198.51.100.0/24 dev lo") makes every address inside it
 * the guard's host, and getifaddrs names only the one. Strict checking
 * lets the kernel filter by type; the type is checked here again. Returns
 * 0, or -1 on any failure (the caller denies everything). */
static int
add_local_routes(struct ownset *set)
{
	struct {
		struct nlmsghdr	nh;
		struct rtmsg	rt;
	} req;
	struct timeval tv = { 1, 0 };
	struct sockaddr_nl sa;
	char *buf = NULL;
	int fd, one = 1, rc = -1, done = 0, msgs = 0;
	ssize_t r;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd == -1)
		return -1;
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one,
	    sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    (buf = malloc(IFADDR_DUMP_BUF)) == NULL)
		goto out;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.rt.rtm_family = AF_UNSPEC;
	req.rt.rtm_type = RTN_LOCAL;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa,
	    sizeof(sa)) != (ssize_t)sizeof(req))
		goto out;
	/* Bounded: a dump ends with NLMSG_DONE; a kernel that ignores the
	 * type filter sends every route, and a table past IFADDR_DUMP_MSGS
	 * messages is refused rather than read for ever. */
	while (!done) {
		struct nlmsghdr *nh;
		size_t off, total;

		r = recv(fd, buf, IFADDR_DUMP_BUF, 0);
		if (r <= 0)
			goto out;
		/* By hand, not NLMSG_OK/NEXT: their int/unsigned mix does
		 * not pass -Wsign-compare under clang. */
		total = (size_t)r;
		for (off = 0; off < total && total - off >= sizeof(*nh);
		    off += NLMSG_ALIGN(nh->nlmsg_len)) {
			nh = (struct nlmsghdr *)(void *)(buf + off);
			if (nh->nlmsg_len < sizeof(*nh) ||
			    nh->nlmsg_len > total - off)
				goto out;
			if (++msgs > IFADDR_DUMP_MSGS || nh->nlmsg_seq != 1)
				goto out;
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR ||
			    (nh->nlmsg_type == RTM_NEWROUTE &&
			    add_local_route(nh, set) == -1))
				goto out;
		}
	}
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

/* Appends the address attribute a (family's length, else malformed). */
static int
add_rta(struct rtattr *a, int family, size_t alen, struct ownset *set)
{
	struct cidr *c;

	if (RTA_PAYLOAD(a) != alen)
		return -1;
	if ((c = own_next(set, family, (unsigned int)alen * 8)) == NULL)
		return -1;
	memcpy(c->addr, RTA_DATA(a), alen);
	return 0;
}

/* The addresses one RTM_NEWADDR adds: its local address, its address
 * (the peer on a point-to-point link: refused until the re-read too,
 * which errs on the safe side) and its broadcast address. */
static int
add_announced_addr(struct nlmsghdr *nh, struct ownset *set)
{
	struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	struct rtattr *a;
	int len;
	size_t alen;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return -1;
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return 0;
	alen = ifa->ifa_family == AF_INET ? 4 : 16;
	len = (int)IFA_PAYLOAD(nh);
	for (a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if ((a->rta_type == IFA_LOCAL || a->rta_type == IFA_ADDRESS ||
		    a->rta_type == IFA_BROADCAST) &&
		    add_rta(a, ifa->ifa_family, alen, set) == -1)
			return -1;
	return 0;
}

int
ifaddr_announced(void *buf, size_t len, struct cidr *add, size_t max,
    size_t *n)
{
	struct ownset set = { add, *n, max };
	struct nlmsghdr *nh;
	size_t off;
	int rc = 0;

	for (off = 0; off < len && rc == 0; off += NLMSG_ALIGN(nh->nlmsg_len)) {
		nh = (struct nlmsghdr *)(void *)((char *)buf + off);
		if (len - off < sizeof(*nh) || nh->nlmsg_len < sizeof(*nh) ||
		    nh->nlmsg_len > len - off)
			return -1;
		switch (nh->nlmsg_type) {
		case RTM_NEWADDR:
			rc = add_announced_addr(nh, &set);
			break;
		case RTM_NEWROUTE:
			rc = add_local_route(nh, &set);
			break;
		case NLMSG_ERROR:
		case NLMSG_OVERRUN:
			rc = -1;
			break;
		default:	/* a removal: the set in force errs safe */
			break;
		}
	}
	*n = set.n;
	return rc;
}

/* Every address of every interface, the broadcast address of each
 * broadcast-capable IPv4 interface (the guard's own subnet broadcast is
 * not a destination either), and every prefix routed locally (see
 * add_local_routes), into own (IFADDR_MAX entries). Pure of any loop or
 * classifier: it runs on the watch's thread. Returns the count, or -1. */
static int
own_read(struct cidr *own)
{
	struct ownset set = { own, 0, IFADDR_MAX };
	struct ifaddrs *list = NULL, *ifa;
	int rc = -1;

	if (getifaddrs(&list) == -1)
		return -1;
	for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
		if (add_sockaddr(ifa->ifa_addr, &set) == -1)
			goto out;
		if ((ifa->ifa_flags & IFF_BROADCAST) && ifa->ifa_addr != NULL &&
		    ifa->ifa_addr->sa_family == AF_INET &&
		    add_sockaddr(ifa->ifa_broadaddr, &set) == -1)
			goto out;
	}
	if (add_local_routes(&set) == -1)
		goto out;
	rc = (int)set.n;
out:
	freeifaddrs(list);
	return rc;
}

/* Installs the n entries of own (n -1: the read failed) in cfg. On any
 * failure the classifier is told the set is unknown, which denies every
 * address until a refresh succeeds: a stale set could miss an address
 * added since. Returns n, or -1. */
static int
own_install(struct classify_cfg *cfg, const struct cidr *own, int n)
{
	if (n == -1 || classify_cfg_set_own(cfg, own, (size_t)n) == -1) {
		classify_cfg_own_unknown(cfg);
		return -1;
	}
	return n;
}

int
ifaddr_refresh(struct classify_cfg *cfg)
{
	struct cidr *own = calloc(IFADDR_MAX, sizeof(*own));
	int n;

	n = own_install(cfg, own, own != NULL ? own_read(own) : -1);
	free(own);
	return n;
}

/* The watch's thread: one re-read per request, changes that come during
 * one folded into the next. */
static void *
reread_main(void *arg)
{
	struct ifaddr_watch *w = arg;
	int n;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->want && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		w->want = 0;
		pthread_mutex_unlock(&w->mu);
		memset(w->own, 0, IFADDR_MAX * sizeof(*w->own));
		n = own_read(w->own);
		pthread_mutex_lock(&w->mu);
		w->nown = n;
		w->have = 1;
		/* The loop reads the result under the mutex, after this
		 * wakes it; a counter that cannot take more is readable
		 * already. */
		(void)eventfd_write(w->efd, 1);
		while (w->have && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* A change was announced (or a failed read is retried): the thread
 * reads the whole set again. A thread that cannot be started leaves the
 * read to the loop, as before there was one. */
static void
reread(struct ifaddr_watch *w)
{
	struct timeval tv = { IFADDR_RETRY_SEC, 0 };

	if (!w->started) {
		sigset_t all, old;
		int rc;

		if (w->own == NULL &&
		    (w->own = calloc(IFADDR_MAX, sizeof(*w->own))) == NULL)
			goto inline_read;
		/* Signals stay with the main thread's loop: the new thread
		 * starts with every one blocked. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&w->thread, NULL, reread_main, w);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0)
			goto inline_read;
		/* Named, so a count of the guard's threads can tell the
		 * workers' loops from these helpers. */
		(void)pthread_setname_np(w->thread, "eg-ifaddr");
		w->started = 1;
	}
	pthread_mutex_lock(&w->mu);
	w->want = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return;
inline_read:
	if (ifaddr_refresh(w->cfg) == -1)
		evtimer_add(w->retry, &tv);
}

/* The thread's result: installed unless a newer change already asked for
 * another read, which this one may have missed (the set in force, with
 * what the changes added, stays until that one). */
static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ifaddr_watch *w = arg;
	struct timeval tv = { IFADDR_RETRY_SEC, 0 };
	eventfd_t v;
	int failed = 0;

	(void)what;
	(void)eventfd_read(fd, &v);
	pthread_mutex_lock(&w->mu);
	if (w->have && !w->want)
		failed = own_install(w->cfg, w->own, w->nown) == -1;
	w->have = 0;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (failed)
		evtimer_add(w->retry, &tv);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	reread(arg);
}

static void
watch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ifaddr_watch *w = arg;
	char buf[8192];
	ssize_t r;
	size_t n = 0;
	int i, lost = 0;

	(void)what;
	/* What the messages add joins the set at once; then the whole set
	 * is read again. Bounded so a flood cannot hold the loop (what is
	 * left wakes it again). A message lost (an overrun socket:
	 * ENOBUFS), cut (MSG_TRUNC) or unreadable could have added anything:
	 * the set is unknown until the re-read. A request classified in the
	 * same loop turn as the change, before this runs, still sees the
	 * old set: the window is one loop iteration (and an address added
	 * after classification but before connect is outside any check). */
	for (i = 0; i < 64; i++) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (r == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				lost = 1;
			break;
		}
		if (r == 0)
			break;
		if ((size_t)r > sizeof(buf) || w->add == NULL ||
		    ifaddr_announced(buf, (size_t)r, w->add,
		    IFADDR_ANNOUNCED_MAX, &n) == -1)
			lost = 1;
	}
	if (lost || classify_cfg_add_own(w->cfg, w->add, n) == -1)
		classify_cfg_own_unknown(w->cfg);
	reread(w);
}

struct ifaddr_watch *
ifaddr_watch_new(struct event_base *base, struct classify_cfg *cfg,
    char *err, size_t errlen)
{
	struct ifaddr_watch *w;
	struct sockaddr_nl sa;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	w->cfg = cfg;
	w->efd = -1;
	/* Without it every change refuses everything until the re-read. */
	w->add = calloc(IFADDR_ANNOUNCED_MAX, sizeof(*w->add));
	if (pthread_mutex_init(&w->mu, NULL) != 0) {
		free(w);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	if (pthread_cond_init(&w->cv, NULL) != 0) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	if ((w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1) {
		errbuf_set(err, errlen, "eventfd: %s", strerror(errno));
		w->fd = -1;
		goto fail;
	}
	w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    NETLINK_ROUTE);
	if (w->fd == -1) {
		errbuf_set(err, errlen, "rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	/* Routes too: a local route added without an address changes the
	 * own set (add_local_routes). */
	sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
	    RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
	if (bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		errbuf_set(err, errlen, "rtnetlink bind: %s", strerror(errno));
		goto fail;
	}
	/* Subscribe first, then read: no change can fall in between. */
	errno = 0;
	if (ifaddr_refresh(cfg) == -1) {
		errbuf_set(err, errlen, "cannot read interface addresses%s%s",
		    errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "");
		goto fail;
	}
	w->ev = event_new(base, w->fd, EV_READ | EV_PERSIST, watch_cb, w);
	w->retry = evtimer_new(base, retry_cb, w);
	w->done_ev = event_new(base, w->efd, EV_READ | EV_PERSIST, done_cb, w);
	if (w->ev == NULL || w->retry == NULL || w->done_ev == NULL ||
	    event_add(w->ev, NULL) == -1 || event_add(w->done_ev, NULL) == -1) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	return w;
fail:
	ifaddr_watch_free(w);
	return NULL;
}

void
ifaddr_watch_free(struct ifaddr_watch *w)
{
	if (w == NULL)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->retry != NULL)
		event_free(w->retry);
	if (w->done_ev != NULL)
		event_free(w->done_ev);
	if (w->fd != -1)
		close(w->fd);
	if (w->efd != -1)
		close(w->efd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->own);
	free(w->add);
	free(w);
}
