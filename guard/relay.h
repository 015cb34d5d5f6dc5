/* The byte relay between a client and an upstream, with backpressure: at
 * most RELAY_HIGH_WATER bytes (RELAY_PIPE_SIZE once spliced) wait per
 * direction, a slow reader slows the writer. Half-close is carried both
 * ways; an idle timer ends it. */
#ifndef EG_RELAY_H
#define EG_RELAY_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct relay;

#define RELAY_HIGH_WATER (64 * 1024)
/* Past RELAY_SPLICE_AFTER bytes a direction is spliced through a pipe of
 * (at most) this size, asked for with F_SETPIPE_SZ: a pipe's worth is what
 * that direction then holds for a slow reader. It is kernel pipe memory,
 * charged to the guard's user and capped in total by
 * fs.pipe-user-pages-soft (past it the kernel grants small pipes), and it
 * buys fewer, larger splices. The caller must ignore SIGPIPE: splice(2)
 * into a reset socket has no MSG_NOSIGNAL. */
#define RELAY_PIPE_SIZE (1024 * 1024)

/* A source left unread while its destination drains (backpressure) is
 * looked at this often for a reset: the relay here, and the absolute-form
 * exchange's client (guard/exchange.c). */
#define RELAY_HUP_CHECK_S	1
/* The peer of socket fd has reset it (a pending SO_ERROR; reading it
 * clears it): "reset" or "error", else NULL. A plain FIN is not an error. */
const char *relay_pending_error(int fd);

/* Called once when the relay ends: reason is "eof", "reset", "error",
 * "idle_timeout" or "gate_closed". The callee must call relay_free (it may
 * do so inside the callback). */
typedef void (*relay_done_cb)(void *arg, const char *reason);

/* A gate sees the client's bytes before they reach the upstream (the TLS
 * SNI check): b[0 .. len) are those after the ones it released before
 * (the first call: the stream's start). MORE to wait for more bytes, with
 * *release (at most len, 0 unless set) bytes let go meanwhile; PASS to
 * open the client-to-upstream direction for good; CLOSE to end the relay
 * with "gate_closed" (nothing held is sent). Upstream-to-client bytes
 * flow meanwhile, so protocols where the server speaks first still work.
 * At the client's EOF, bytes held are dropped and the relay closes; with
 * none held and some released, the gate is done and the EOF passes on. */
enum relay_gate { RELAY_GATE_MORE = 0, RELAY_GATE_PASS, RELAY_GATE_CLOSE };
typedef enum relay_gate (*relay_gate_cb)(void *arg, const unsigned char *b,
    size_t len, size_t *release);

/* Takes ownership of both sockets (non-blocking; closed by relay_free)
 * unless it fails (NULL: the caller still owns them). greeting (at most
 * RELAY_HIGH_WATER bytes: the 200 of a CONNECT, a SOCKS5 reply) is sent to
 * the client first; early (at most RELAY_HIGH_WATER) are bytes the client
 * sent after its request, forwarded first, through the gate when one is
 * given (gate may be NULL). */
struct relay *relay_new(struct event_base *base, int cfd, int ufd,
    const void *greeting, size_t greeting_len, const void *early,
    size_t early_len, int idle_timeout_s, relay_gate_cb gate,
    relay_done_cb cb, void *arg);

void relay_stats(const struct relay *r, uint64_t *up, uint64_t *down);
void relay_free(struct relay *r);

#endif
