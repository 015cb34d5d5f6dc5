/* A reserve of descriptors the workload cannot take: the top FDRES_RESERVE
 * of the descriptor limit are left to the control socket (its
 * connections, /v1/health, a push's files) and the log. Every descriptor
 * a workload's action makes (a proxy or DNS listener accept, an upstream
 * socket, a splice pipe, a resolver socket) passes fdres_workload, which
 * gives it back when its number lies in the reserve: Linux hands out the
 * lowest free number, so such a descriptor means every one below the
 * reserve is taken. */
#ifndef EG_FDRES_H
#define EG_FDRES_H

/* CONTROL_MAX_CONNS control connections and a few for a push's state
 * files and a log reopen. */
#define FDRES_RESERVE	72

/* Sets the reserve from the soft descriptor limit in force (after the
 * guard raised it); called once, before any worker starts. Under
 * 4 x FDRES_RESERVE the reserve is a quarter of the limit. Returns the
 * first reserved descriptor number. */
long fdres_init(void);

/* fd, or -1 with errno EMFILE (fd closed) when fd lies in the reserve.
 * fd -1 passes through (errno kept). */
int fdres_workload(int fd);

/* 1 when fd lies in the reserve (the caller closes it). */
int fdres_reserved(int fd);

/* 1 when the lowest free descriptor lies below the reserve, found by
 * duplicating fd (any open descriptor) and closing the copy: a listener
 * asks before it accepts, so that at the limit the connection waits in
 * the backlog instead of being accepted into the reserve and dropped. */
int fdres_room(int fd);

/* 1 when fd lies within FDRES_NEAR of the reserve: a listener whose last
 * accept returned such a number asks fdres_room before the next one (far
 * from the limit the two extra calls are not worth making). */
#define FDRES_NEAR	256
int fdres_near(int fd);

#endif
