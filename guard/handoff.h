/* Connections handed from one worker loop to another.
 *
 * With several workers each has its own listener (SO_REUSEPORT), and the
 * kernel picks one by a hash of the connection's addresses: even over
 * many connections, blind over a few long ones. Four downloads all land
 * on one worker one time in eight, and run on one CPU (measured: 1,154
 * MiB/s against 1,310-1,465 when they were spread). So a worker that
 * accepts a connection while it serves clearly more than the least
 * loaded worker hands the descriptor over, through that worker's box: a
 * short queue and an eventfd that wakes its loop.
 *
 * A worker's load is what it serves (set by its own thread) plus what
 * waits in its box (counted by the posting thread at once, so that a
 * burst is not all posted to the same worker). The counts are read
 * without a lock by other threads: a balancing hint, never a bound
 * (--max-conns is counted apart, when a connection is taken). */
#ifndef EG_HANDOFF_H
#define EG_HANDOFF_H

#include <sys/socket.h>

#include <stdatomic.h>

struct event_base;

/* One accepted connection on its way. */
struct handoff {
	int			 fd;
	int			 transparent;	/* from a --transparent listener */
	socklen_t		 sl;
	struct sockaddr_storage	 ss;		/* the client's address */
};

/* Connections that may wait in one box; a full box is not posted to. */
#define HANDOFF_QUEUE	64
/* Below this many on the least loaded worker, loads are kept exactly
 * even; above, only a worker serving twice as many hands on. */
#define HANDOFF_FEW	8

/* The worker that is to serve one more connection accepted by worker
 * self, from every worker's load (n of them): the least loaded one, m,
 * if loads[self] >= loads[m] + 1 and either m serves fewer than
 * HANDOFF_FEW or self serves at least twice as many; else self. Exactly
 * even while few are served (the 2nd of two downloads moves); among
 * many, the hash is left alone: 64 short tunnels over two workers differ
 * by a few all the time, and handing those over cost 11% more CPU per
 * tunnel (a quarter of them moved, each waking the other thread). Pure. */
unsigned handoff_pick(const unsigned *loads, unsigned n, unsigned self);

struct handoff_box;

/* A box watched by base's loop: take(arg, h) runs there for each
 * connection posted, and owns h->fd from then on. NULL with errno. */
struct handoff_box *handoff_box_new(struct event_base *base,
    void (*take)(void *arg, const struct handoff *h), void *arg);
/* From any thread: queues h for b's loop. 0, or -1 when b is full or
 * closed (the caller keeps h->fd). */
int handoff_post(struct handoff_box *b, const struct handoff *h);
/* The box's load (see above), from any thread. */
unsigned handoff_load(const struct handoff_box *b);
/* The owner's count of what it serves, from its own thread. */
void handoff_set_live(struct handoff_box *b, unsigned live);
/* On the owner's thread: posts are refused from now on, and what waits
 * is closed (a stopping worker takes no new connection). NULL-safe. */
void handoff_box_close(struct handoff_box *b);
/* Closes what still waits, then frees; NULL does nothing. */
void handoff_box_free(struct handoff_box *b);

#endif
