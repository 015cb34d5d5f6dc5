/* The guard's own interface addresses, fed to the classifier so that they
 * are never a destination. Read at start and again whenever the kernel
 * announces an address change (rtnetlink). */
#ifndef EG_IFADDR_H
#define EG_IFADDR_H

#include <stddef.h>

struct event_base;
struct classify_cfg;
struct ifaddr_watch;

/* Reads the current addresses (and IPv4 broadcast addresses) into cfg.
 * Returns the number of addresses found, or -1: then (getifaddrs failed,
 * out of memory, more than 1024 addresses) cfg denies every address until
 * a refresh succeeds; the watch retries every second. */
int ifaddr_refresh(struct classify_cfg *cfg);

/* Refreshes now and on every change. NULL with err on failure. */
struct ifaddr_watch *ifaddr_watch_new(struct event_base *base,
    struct classify_cfg *cfg, char *err, size_t errlen);
void ifaddr_watch_free(struct ifaddr_watch *w);

#endif
