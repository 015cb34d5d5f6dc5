#include <sys/socket.h>
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

#define IFADDR_MAX 1024

struct ifaddr_watch {
	struct classify_cfg	*cfg;
	struct event		*ev;
	int			 fd;
};

int
ifaddr_refresh(struct classify_cfg *cfg)
{
	struct ifaddrs *list, *ifa;
	int *fam = NULL, rc = -1;
	unsigned char (*addr)[16] = NULL;
	size_t n = 0;

	if (getifaddrs(&list) == -1)
		return -1;
	fam = calloc(IFADDR_MAX, sizeof(*fam));
	addr = calloc(IFADDR_MAX, sizeof(*addr));
	if (fam == NULL || addr == NULL)
		goto out;
	for (ifa = list; ifa != NULL && n < IFADDR_MAX; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL)
			continue;
		memset(addr[n], 0, 16);
		if (ifa->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *s = (const void *)ifa->ifa_addr;
			memcpy(addr[n], &s->sin_addr, 4);
		} else if (ifa->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *s = (const void *)ifa->ifa_addr;
			memcpy(addr[n], &s->sin6_addr, 16);
		} else {
			continue;
		}
		fam[n++] = ifa->ifa_addr->sa_family;
	}
	if (classify_cfg_set_own(cfg, fam, (const unsigned char (*)[16])addr, n) == 0)
		rc = (int)n;
out:
	freeifaddrs(list);
	free(fam);
	free(addr);
	return rc;
}

static void
watch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ifaddr_watch *w = arg;
	char buf[8192];
	ssize_t r;
	int i;

	(void)what;
	/* The messages only say "something changed": drain, then re-read
	 * the whole set. Bounded so a flood cannot hold the loop. */
	for (i = 0; i < 64; i++) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r <= 0)
			break;
	}
	(void)ifaddr_refresh(w->cfg);
}

struct ifaddr_watch *
ifaddr_watch_new(struct event_base *base, struct classify_cfg *cfg,
    char *err, size_t errlen)
{
	struct ifaddr_watch *w;
	struct sockaddr_nl sa;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->cfg = cfg;
	w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    NETLINK_ROUTE);
	if (w->fd == -1) {
		snprintf(err, errlen, "rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	if (bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		snprintf(err, errlen, "rtnetlink bind: %s", strerror(errno));
		goto fail;
	}
	/* Subscribe first, then read: no change can fall in between. */
	if (ifaddr_refresh(cfg) == -1) {
		snprintf(err, errlen, "cannot read interface addresses");
		goto fail;
	}
	w->ev = event_new(base, w->fd, EV_READ | EV_PERSIST, watch_cb, w);
	if (w->ev == NULL || event_add(w->ev, NULL) == -1) {
		snprintf(err, errlen, "out of memory");
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
	if (w->fd != -1)
		close(w->fd);
	free(w);
}
