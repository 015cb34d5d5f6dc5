/* bench/floor: the least a CONNECT relay can do, as a yardstick. It
 * checks nothing (no policy, no DNS, no SNI, no logging, no bounds beyond
 * the bench's own): reads the CONNECT head, connects to the loopback
 * address it names, answers 200, relays, closes. Two modes:
 *
 *   floor --listen 127.0.0.1:PORT
 *	splice: the throughput sections' yardstick. One thread per direction
 *	blocking in splice(2) through a 1 MiB pipe. Whatever it costs per
 *	GiB is the TCP work of the second connection plus two splices: a
 *	cost every user-space relay pays. No SPLICE_F_MORE: with it (until
 *	session 7) one stream ran 6-22% slower here, a floor below what a
 *	plain splice relay reaches.
 *
 *   floor --rate [--workers N] --listen 127.0.0.1:PORT
 *	rate: the CONNECT-rate yardstick (issue 17). N threads (default: the
 *	CPUs this process may run on), each with its own SO_REUSEPORT
 *	listener and an epoll loop; non-blocking sockets, each registered
 *	once, edge-triggered, with EPOLLOUT only while a write waits; plain
 *	read/write through a buffer per direction; the FIN passed on with
 *	shutdown(2) unless the other direction already ended (then close
 *	does it). Per CONNECT tunnel that is accept4, one setsockopt
 *	(TCP_NODELAY upstream, as the guard; the client's is inherited from
 *	the listener), 3 epoll_ctl, socket, connect, the head read, the
 *	200, the reads and writes of the payload, one shutdown and 2 close
 *	(bench/syscalls.sh counts them): what any proxy must
 *	pay per tunnel on this kernel, so its CPU per tunnel and its
 *	tunnels/s bound what a proxy can reach here.
 *
 *   floor [--rate] --transparent-to 127.0.0.1:PORT --listen ...
 *	either mode as the transparent section's yardstick: no CONNECT head
 *	and no 200; on accept, the original destination is read from the
 *	kernel (SO_ORIGINAL_DST, the connection must have been redirected:
 *	what a transparent relay must do), then the fixed address PORT is
 *	dialled (the original one would be redirected again) and the bytes
 *	relayed unread: a transparent relay with no peek, no name, no check.
 *
 * Loopback only (bench_parse_loopback) for both its listener and the
 * addresses it connects to. Never run it anywhere else: it is an open
 * relay to 127.0.0.0/8. */
#include <arpa/inet.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>

#include "bench/common.h"

#define HEAD_MAX	4096
#define PIPE_SIZE	(1 << 20)	/* as the guard's relay (RELAY_PIPE_SIZE) */

/* --transparent-to: the address dialled for every redirected client */
static struct sockaddr_in tp_up;
static int transparent;

/* The kernel's original destination of a redirected connection: 0, or -1
 * when it has none (not redirected). Read, not used: its cost is the
 * least a transparent proxy pays. */
static int
original_dst(int fd)
{
	struct sockaddr_in od;
	socklen_t ol = sizeof(od);

	return getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &od, &ol);
}

struct half {
	int	from, to;
};

struct tunnel {
	int		client, up;
	struct half	down;		/* up -> client, on its own thread */
};

/* One direction until EOF or error, then the FIN on. */
static void
pump(const struct half *h)
{
	int p[2];
	ssize_t n, m;

	if (pipe2(p, O_CLOEXEC) == -1)
		goto out;
	(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
	for (;;) {
		n = splice(h->from, NULL, p[1], NULL, PIPE_SIZE, SPLICE_F_MOVE);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		while (n > 0) {
			m = splice(p[0], NULL, h->to, NULL, (size_t)n,
			    SPLICE_F_MOVE);
			if (m == -1 && errno == EINTR)
				continue;
			if (m <= 0)
				goto done;
			n -= m;
		}
	}
done:
	close(p[0]);
	close(p[1]);
out:
	(void)shutdown(h->to, SHUT_WR);
}

static void *
down_thread(void *arg)
{
	pump(&((struct tunnel *)arg)->down);
	return NULL;
}

/* The head up to its blank line; 0 when it came whole. Bytes after it
 * (a client that does not wait for the 200) would be lost: the bench's
 * load generator waits. */
static int
read_head(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len < cap - 1) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			return 0;
	}
	return -1;
}

/* "CONNECT 127.x.y.z:PORT HTTP/1.x" and nothing else on the first line:
 * the target into out (NUL-terminated). */
static int
connect_target(const char *head, char *out, size_t outlen)
{
	static const char verb[] = "CONNECT ", proto[] = " HTTP/1.";
	const char *t = head + sizeof(verb) - 1, *sp;

	if (strncmp(head, verb, sizeof(verb) - 1) != 0 ||
	    (sp = strchr(t, ' ')) == NULL || (size_t)(sp - t) >= outlen ||
	    strncmp(sp, proto, sizeof(proto) - 1) != 0)
		return -1;
	memcpy(out, t, (size_t)(sp - t));
	out[sp - t] = '\0';
	return 0;
}

static int
dial(const char *head)
{
	struct sockaddr_in sin;
	char target[64];
	int fd, one = 1;

	if (connect_target(head, target, sizeof(target)) == -1 ||
	    bench_parse_loopback(target, &sin) == -1)
		return -1;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static void *
client_thread(void *arg)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct tunnel *t = arg;
	struct half upward;
	pthread_t down;
	char head[HEAD_MAX];
	int one = 1;

	(void)setsockopt(t->client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (transparent) {
		if (original_dst(t->client) == -1 ||
		    (t->up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			goto out;
		(void)setsockopt(t->up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(t->up, (struct sockaddr *)&tp_up, sizeof(tp_up)) == -1)
			goto out;
	} else if (read_head(t->client, head, sizeof(head)) == -1 ||
	    (t->up = dial(head)) == -1 ||
	    write(t->client, ok, sizeof(ok) - 1) != (ssize_t)(sizeof(ok) - 1))
		goto out;
	t->down.from = t->up;
	t->down.to = t->client;
	upward.from = t->client;
	upward.to = t->up;
	if (pthread_create(&down, NULL, down_thread, t) != 0)
		goto out;
	pump(&upward);
	(void)pthread_join(down, NULL);
out:
	if (t->up != -1)
		close(t->up);
	close(t->client);
	free(t);
	return NULL;
}

static int
listen_on(const struct sockaddr_in *sin, int reuseport, int nonblock)
{
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
	    (nonblock ? SOCK_NONBLOCK : 0), 0)) == -1)
		return -1;
	/* rate mode: TCP_NODELAY on the listener, which every accepted
	 * socket inherits (Linux), rather than a setsockopt per client */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    (reuseport &&
	    (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)) ||
	    bind(fd, (const struct sockaddr *)sin, sizeof(*sin)) == -1 ||
	    listen(fd, 1024) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
splice_main(const struct sockaddr_in *sin)
{
	pthread_attr_t attr;
	int lfd;

	if ((lfd = listen_on(sin, 0, 0)) == -1) {
		perror("floor: listen");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	for (;;) {
		struct tunnel *t;
		pthread_t th;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				usleep(10000);	/* until a tunnel ends */
				continue;
			}
			perror("floor: accept");
			return 1;
		}
		if ((t = calloc(1, sizeof(*t))) == NULL) {
			close(fd);
			continue;
		}
		t->client = fd;
		t->up = -1;
		if (pthread_create(&th, &attr, client_thread, t) != 0) {
			close(fd);
			free(t);
		}
	}
}

/* ---- rate mode */

#define RATE_BUF	16384
#define RATE_EVENTS	64
#define RATE_WORKERS	256

enum rstate { R_HEAD, R_CONNECTING, R_RELAY };

struct rconn;

/* One socket of a tunnel; the epoll data. Readiness is remembered
 * (edge-triggered) and cleared by EAGAIN or a short read or write. */
struct rend {
	struct rconn	*c;
	int		 fd;
	int		 can_read, can_write, rdhup;
	int		 out;		/* EPOLLOUT in its epoll mask */
};

/* One direction: bytes read from one end, not yet written to the other. */
struct rdir {
	size_t	off, len;
	int	eof, done;	/* read met EOF; FIN passed on */
	char	buf[RATE_BUF];
};

struct rconn {
	struct rend	 cl, up;
	enum rstate	 st;
	int		 dead;
	struct rconn	*next_dead;
	struct rdir	 c2u, u2c;	/* c2u holds the head first */
};

struct worker {
	int		 ep, lfd;
	struct rconn	*dead;		/* freed after the current batch */
};

/* Registered once, edge-triggered. EPOLLOUT only while a write waits (a
 * connect, a full send buffer): otherwise every ACK would wake the loop. */
static int
ep_set(int ep, struct rend *e, int op, int out)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (out ? EPOLLOUT : 0),
		.data.ptr = e,
	};

	e->out = out;
	return epoll_ctl(ep, op, e->fd, &ev);
}

static void
rconn_kill(struct worker *w, struct rconn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	close(c->cl.fd);
	if (c->up.fd != -1)
		close(c->up.fd);
	c->next_dead = w->dead;
	w->dead = c;
}

/* One direction as far as it goes now: 0, or -1 when the tunnel must end. */
static int
rdir_move(struct rdir *d, struct rend *from, struct rend *to,
    const struct rdir *other)
{
	ssize_t n;

	for (;;) {
		if (d->off == d->len) {
			d->off = d->len = 0;
			if (d->eof) {
				/* The other way ended too: close sends
				 * this FIN, no shutdown needed. */
				if (!d->done && !(other->eof && other->off == other->len))
					(void)shutdown(to->fd, SHUT_WR);
				d->done = 1;
				return 0;
			}
			if (!from->can_read)
				return 0;
			n = read(from->fd, d->buf, sizeof(d->buf));
			if (n > 0) {
				d->len = (size_t)n;
				/* Short: drained. When the FIN had come
				 * before this read, nothing follows it: no
				 * read is spent on the 0 (as the guard). */
				if ((size_t)n < sizeof(d->buf)) {
					if (from->rdhup)
						d->eof = 1;
					else
						from->can_read = 0;
				}
			} else if (n == 0) {
				d->eof = 1;
			} else if (errno == EAGAIN) {
				from->can_read = 0;
				return 0;
			} else if (errno != EINTR) {
				return -1;
			}
			continue;
		}
		if (!to->can_write)
			return 0;
		/* The last bytes leave with the FIN (as the guard). */
		n = send(to->fd, d->buf + d->off, d->len - d->off,
		    MSG_NOSIGNAL | (d->eof ? MSG_MORE : 0));
		if (n > 0) {
			d->off += (size_t)n;
			if (d->off < d->len)
				to->can_write = 0;
		} else if (n == -1 && errno == EAGAIN) {
			to->can_write = 0;
		} else if (n == -1 && errno != EINTR) {
			return -1;
		}
	}
}

/* Both directions; EPOLLOUT asked for exactly where bytes wait. */
static int
rconn_relay(struct worker *w, struct rconn *c)
{
	int cl_out, up_out;

	if (rdir_move(&c->c2u, &c->cl, &c->up, &c->u2c) == -1 ||
	    rdir_move(&c->u2c, &c->up, &c->cl, &c->c2u) == -1)
		return -1;
	if (c->c2u.done && c->u2c.done)
		return 1;
	cl_out = c->u2c.off < c->u2c.len;
	up_out = c->c2u.off < c->c2u.len;
	if ((cl_out != c->cl.out && ep_set(w->ep, &c->cl, EPOLL_CTL_MOD, cl_out) == -1) ||
	    (up_out != c->up.out && ep_set(w->ep, &c->up, EPOLL_CTL_MOD, up_out) == -1))
		return -1;
	return 0;
}

/* The head in c2u: when whole, dial the target it names. */
static int
rconn_head(struct worker *w, struct rconn *c)
{
	struct rdir *d = &c->c2u;
	struct sockaddr_in sin;
	char target[64], *end;
	size_t want = HEAD_MAX - 1 - c->c2u.len;
	ssize_t n;
	int one = 1;

	for (;;) {
		n = read(c->cl.fd, d->buf + d->len, want);
		if (n > 0)
			break;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			c->cl.can_read = 0;
			return 0;
		}
		return -1;
	}
	d->len += (size_t)n;
	d->buf[d->len] = '\0';
	/* A short read drained the socket: the next bytes bring an edge. */
	c->cl.can_read = (size_t)n == want || c->cl.rdhup;
	if ((end = strstr(d->buf, "\r\n\r\n")) == NULL)
		return d->len == HEAD_MAX - 1 ? -1 : 0;
	/* bytes after the head go up once the tunnel stands */
	d->off = (size_t)(end + 4 - d->buf);
	if (connect_target(d->buf, target, sizeof(target)) == -1 ||
	    bench_parse_loopback(target, &sin) == -1 ||
	    (c->up.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	(void)setsockopt(c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((connect(c->up.fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 &&
	    errno != EINPROGRESS) || ep_set(w->ep, &c->up, EPOLL_CTL_ADD, 1) == -1)
		return -1;
	c->st = R_CONNECTING;
	return 0;
}

static void
rconn_event(struct worker *w, struct rend *e, uint32_t ev)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct rconn *c = e->c;
	int r = 0;

	if (c->dead)
		return;
	if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		e->can_read = 1;
	if (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		e->rdhup = 1;
	if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		e->can_write = 1;
	switch (c->st) {
	case R_HEAD:
		if (e == &c->cl && e->can_read)
			r = rconn_head(w, c);
		break;
	case R_CONNECTING:
		if (e != &c->up)
			break;		/* the client waits for the 200 */
		if (ev & (EPOLLERR | EPOLLHUP)) {
			r = -1;
			break;
		}
		if (!(ev & EPOLLOUT))
			break;
		if (!transparent &&
		    send(c->cl.fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(ok) - 1)) {
			r = -1;
			break;
		}
		c->st = R_RELAY;
		r = rconn_relay(w, c);
		break;
	case R_RELAY:
		r = rconn_relay(w, c);
		break;
	}
	if (r != 0)
		rconn_kill(w, c);
}

/* One accept per event: the listener is level-triggered, so a backlog
 * brings the next pass, and no accept4 is spent on EAGAIN. */
static void
rate_accept(struct worker *w)
{
	struct rconn *c;
	int fd;

	fd = accept4(w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno == EMFILE || errno == ENFILE)
			usleep(1000);	/* until a tunnel ends */
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->cl.c = c->up.c = c;
	c->cl.fd = fd;
	c->up.fd = -1;
	c->cl.can_read = c->cl.can_write = 1;
	if (transparent) {	/* no head: dial at once, relay from the start */
		int one = 1;

		if (original_dst(fd) == -1 ||
		    (c->up.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1) {
			rconn_kill(w, c);
			return;
		}
		(void)setsockopt(c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if ((connect(c->up.fd, (struct sockaddr *)&tp_up, sizeof(tp_up)) == -1 &&
		    errno != EINPROGRESS) || ep_set(w->ep, &c->up, EPOLL_CTL_ADD, 1) == -1 ||
		    ep_set(w->ep, &c->cl, EPOLL_CTL_ADD, 0) == -1)
			rconn_kill(w, c);
		else
			c->st = R_CONNECTING;
		return;
	}
	/* The head has usually come with the handshake: read it before
	 * registering (a registration would report it as an event too). */
	if (rconn_head(w, c) == -1 || ep_set(w->ep, &c->cl, EPOLL_CTL_ADD, 0) == -1)
		rconn_kill(w, c);
}

static void *
rate_worker(void *arg)
{
	struct worker *w = arg;
	struct epoll_event evs[RATE_EVENTS];
	struct rconn *c;
	int i, n;

	for (;;) {
		n = epoll_wait(w->ep, evs, RATE_EVENTS, -1);
		if (n == -1 && errno != EINTR) {
			perror("floor: epoll_wait");
			exit(1);
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				rate_accept(w);
			else
				rconn_event(w, evs[i].data.ptr, evs[i].events);
		}
		while ((c = w->dead) != NULL) {
			w->dead = c->next_dead;
			free(c);
		}
	}
	return NULL;
}

static int
rate_main(const struct sockaddr_in *sin, unsigned long long nw)
{
	static struct worker ws[RATE_WORKERS];
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t th;
	cpu_set_t set;
	unsigned long long i;

	if (nw == 0) {
		nw = 1;
		if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
			nw = (unsigned long long)CPU_COUNT(&set);
		if (nw > RATE_WORKERS)
			nw = RATE_WORKERS;
	}
	/* Every listener first: a port taken fails the start, not a thread. */
	for (i = 0; i < nw; i++) {
		if ((ws[i].lfd = listen_on(sin, 1, 1)) == -1 ||
		    (ws[i].ep = epoll_create1(EPOLL_CLOEXEC)) == -1 ||
		    epoll_ctl(ws[i].ep, EPOLL_CTL_ADD, ws[i].lfd, &ev) == -1) {
			perror("floor: listen");
			return 1;
		}
	}
	for (i = 1; i < nw; i++) {
		if (pthread_create(&th, NULL, rate_worker, &ws[i]) != 0) {
			fprintf(stderr, "floor: pthread_create failed\n");
			return 1;
		}
	}
	rate_worker(&ws[0]);
	return 1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sin;
	unsigned long long nw = 0;
	const char *listen_at = NULL;
	int i, rate = 0, bad = 0;

	for (i = 1; i < argc && !bad; i++) {
		if (strcmp(argv[i], "--rate") == 0)
			rate = 1;
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc &&
		    bench_parse_num(argv[i + 1], 1, RATE_WORKERS, &nw) == 0)
			i++;
		else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			listen_at = argv[++i];
		else if (strcmp(argv[i], "--transparent-to") == 0 && i + 1 < argc &&
		    bench_parse_loopback(argv[i + 1], &tp_up) == 0) {
			transparent = 1;
			i++;
		}
		else
			bad = 1;
	}
	if (bad || listen_at == NULL || bench_parse_loopback(listen_at, &sin) == -1 ||
	    (nw != 0 && !rate)) {
		fprintf(stderr, "usage: floor [--rate [--workers N]] [--transparent-to 127.x.y.z:PORT]\n"
		    "             --listen 127.x.y.z:PORT\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	return rate ? rate_main(&sin, nw) : splice_main(&sin);
}
