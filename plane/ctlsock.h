/* The control socket's path before it is bound (plane/ctlsock.c). */
#ifndef EG_CTLSOCK_H
#define EG_CTLSOCK_H

#include <stddef.h>
#include <sys/types.h>

/* Refuses to take over a socket a live guard still serves (-1, err set);
 * removes a stale one. Returns 0, or -1 (errno set when err is not). */
int ctlsock_claim(const char *path, char *err, size_t errlen);

/* Creates path's folder (mode 0700) if missing, then checks it and every
 * folder above it with safepath_open_dir for owner. Returns 0, or -1 with
 * err. */
int ctlsock_make_parent(const char *path, uid_t owner, char *err,
    size_t errlen);

#endif
