/* The guard's own interface addresses, fed to the classifier so that they
 * are never a destination. Read at start and again whenever the kernel
 * announces an address change (rtnetlink). */
#ifndef EG_IFADDR_H
#define EG_IFADDR_H

#include <stddef.h>

struct event_base;
struct classify_cfg;
struct cidr;
struct ifaddr_watch;

/* Reads the current addresses (and IPv4 broadcast addresses) into cfg.
 * Returns the number of addresses found, or -1: then (getifaddrs failed,
 * out of memory, more than 32,768 blocks) cfg denies every address
 * until a refresh succeeds; the watch retries every second. */
int ifaddr_refresh(struct classify_cfg *cfg);

/* The blocks that the rtnetlink notifications in buf (one datagram) add
 * to the guard's own: each RTM_NEWADDR's local, peer and broadcast
 * address, each RTM_NEWROUTE of type local's prefix. Removals add
 * nothing. Appended to add[*n..max), *n updated. 0, or -1 on a malformed
 * message, an error or overrun message, or more than max. Pure: buf is
 * only read (not const: rtnetlink's macros cast const away). */
int ifaddr_announced(void *buf, size_t len, struct cidr *add,
    size_t max, size_t *n);

/* Refreshes now and on every change: what a change adds is refused at
 * once, the whole set read again on a thread of its own. NULL with err
 * on failure. */
struct ifaddr_watch *ifaddr_watch_new(struct event_base *base,
    struct classify_cfg *cfg, char *err, size_t errlen);
void ifaddr_watch_free(struct ifaddr_watch *w);

#endif
