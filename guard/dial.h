/* Non-blocking connect to the classified addresses, in order, each with
 * its own timeout. Never resolves anything: it only dials what it is
 * given. */
#ifndef EG_DIAL_H
#define EG_DIAL_H

#include <stddef.h>
#include <stdint.h>

#include "resolver/resolver.h"

struct event_base;
struct dial;

#define DIAL_MAX_ADDRS 16

/* Called once from the event loop. On success fd >= 0 is a connected,
 * non-blocking socket owned by the callee and idx says which address
 * answered. On failure fd is -1 and timed_out says whether every attempt
 * ended by timeout (upstream_timeout) or not (upstream_unreachable), and
 * local is NULL or says that the last attempt failed here, not at the
 * upstream ("no local port", "out of descriptors", …: for the record's
 * detail). The dial is already freed when this runs. */
typedef void (*dial_cb)(void *arg, int fd, size_t idx, int timed_out,
    const char *local);

struct dial *dial_start(struct event_base *base, const struct resolver_addr *addrs,
    size_t n, uint16_t port, int timeout_ms, dial_cb cb, void *arg);

/* Stops a dial in progress; the callback will not run. Safe on NULL. */
void dial_cancel(struct dial *d);

#endif
