#include <sys/socket.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <ifaddrs.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/ifaddr.h"
#include "resolver/classify.h"
#include "util/errbuf.h"

#define IFADDR_MAX 1024
#define IFADDR_RETRY_SEC 1	/* after a failed refresh, while all is denied */

struct ifaddr_watch {
	struct classify_cfg	*cfg;
	struct event		*ev;
	struct event		*retry;
	int			 fd;
};

/* Appends sa (AF_INET/AF_INET6, else ignored). -1 when the set is full:
 * a truncated set would leave addresses past the cap dialable. */
static int
add_sockaddr(const struct sockaddr *sa, int *fam, unsigned char (*addr)[16],
    size_t *n)
{
	if (sa == NULL ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return 0;
	if (*n == IFADDR_MAX)
		return -1;
	memset(addr[*n], 0, 16);
	if (sa->sa_family == AF_INET)
		memcpy(addr[*n], &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	else
		memcpy(addr[*n], &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	fam[(*n)++] = sa->sa_family;
	return 0;
}

/* Every address of every interface, and the broadcast address of each
 * broadcast-capable IPv4 interface (the guard's own subnet broadcast is
 * not a destination either). On any failure the classifier is told the
 * set is unknown, which denies every address until a refresh succeeds:
 * a stale set could miss an address added since. */
int
ifaddr_refresh(struct classify_cfg *cfg)
{
	struct ifaddrs *list = NULL, *ifa;
	int *fam = NULL, rc = -1;
	unsigned char (*addr)[16] = NULL;
	size_t n = 0;

	if (getifaddrs(&list) == -1)
		goto out;
	fam = calloc(IFADDR_MAX, sizeof(*fam));
	addr = calloc(IFADDR_MAX, sizeof(*addr));
	if (fam == NULL || addr == NULL)
		goto out;
	for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
		if (add_sockaddr(ifa->ifa_addr, fam, addr, &n) == -1)
			goto out;
		if ((ifa->ifa_flags & IFF_BROADCAST) && ifa->ifa_addr != NULL &&
		    ifa->ifa_addr->sa_family == AF_INET &&
		    add_sockaddr(ifa->ifa_broadaddr, fam, addr, &n) == -1)
			goto out;
	}
	if (classify_cfg_set_own(cfg, fam, (const unsigned char (*)[16])addr, n) == 0)
		rc = (int)n;
out:
	if (rc == -1)
		classify_cfg_own_unknown(cfg);
	if (list != NULL)
		freeifaddrs(list);
	free(fam);
	free(addr);
	return rc;
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ifaddr_watch *w = arg;
	struct timeval tv = { IFADDR_RETRY_SEC, 0 };

	(void)fd;
	(void)what;
	if (ifaddr_refresh(w->cfg) == -1)
		evtimer_add(w->retry, &tv);
}

static void
watch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ifaddr_watch *w = arg;
	char buf[8192];
	ssize_t r;
	struct timeval tv = { IFADDR_RETRY_SEC, 0 };
	int i;

	(void)what;
	/* The messages only say "something changed": drain, then re-read
	 * the whole set. Bounded so a flood cannot hold the loop; an
	 * overrun socket (ENOBUFS) lost messages, and the full re-read
	 * covers them. A request classified in the same loop turn as the
	 * change, before this runs, still sees the old set: the window is
	 * one loop iteration (and an address added after classification
	 * but before connect is outside any check). */
	for (i = 0; i < 64; i++) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r <= 0)
			break;
	}
	if (ifaddr_refresh(w->cfg) == -1)
		evtimer_add(w->retry, &tv);
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
	w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    NETLINK_ROUTE);
	if (w->fd == -1) {
		errbuf_set(err, errlen, "rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	if (bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		errbuf_set(err, errlen, "rtnetlink bind: %s", strerror(errno));
		goto fail;
	}
	/* Subscribe first, then read: no change can fall in between. */
	if (ifaddr_refresh(cfg) == -1) {
		errbuf_set(err, errlen, "cannot read interface addresses");
		goto fail;
	}
	w->ev = event_new(base, w->fd, EV_READ | EV_PERSIST, watch_cb, w);
	w->retry = evtimer_new(base, retry_cb, w);
	if (w->ev == NULL || w->retry == NULL || event_add(w->ev, NULL) == -1) {
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
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->retry != NULL)
		event_free(w->retry);
	if (w->fd != -1)
		close(w->fd);
	free(w);
}
