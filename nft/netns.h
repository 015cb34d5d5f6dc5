/* Entering a workload's network namespace and coming back. Library-like:
 * returns -1 with a message in err; never prints. */
#ifndef EG_NETNS_H
#define EG_NETNS_H

#include <stddef.h>

/* spec is a PID (all digits: /proc/PID/ns/net), a path (contains '/'), or
 * a name made by `ip netns add` (/run/netns/NAME). Moves the calling thread
 * into that namespace and returns a descriptor of the one it left, for
 * netns_return; -1 if it did not move. Needs CAP_SYS_ADMIN, unless the
 * thread is already in that namespace (then nothing moves). */
int netns_enter(const char *spec, char *err, size_t errlen);

/* Moves the calling thread back to saved and closes it. -1 means the
 * thread is still in the other namespace: the caller must not go on. */
int netns_return(int saved, char *err, size_t errlen);

/* Whether the calling thread's namespace forwards IPv4 and IPv6
 * (net.ipv4.ip_forward, net.ipv6.conf.all.forwarding): 1 on, 0 off, -1
 * unreadable. /proc/sys/net answers for the namespace of the thread that
 * opens it, so call it between netns_enter and netns_return. */
void netns_forwarding(int *v4, int *v6);

#endif
