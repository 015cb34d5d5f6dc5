/*
 * target: the upstream server of the benchmark (libevent, one thread).
 *
 *   target --listen IP:PORT [--listen IP:PORT]... [--ready FILE]
 *          [--idle-timeout S] [--max-conns N] [--send sendfile|write]
 *
 * Reads one request head per connection (origin-form or absolute-form) and:
 *   GET /bytes/N   answers N bytes (N <= 1 TiB) from a shared in-memory file,
 *                  then closes;
 *   GET /echo      answers a head without length, then echoes every byte it
 *                  receives until the peer closes;
 *   anything else  answers "ok" (Content-Length: 2), then closes.
 * A first byte 0x16 is a TLS ClientHello record instead (loadgen --mode
 * tls): answered "ok", or with N bytes when its session id says so
 * (tls_reply).
 * No keep-alive: one request, one reply, close. A connection that sends no
 * complete head within --idle-timeout (600 s), or stays silent that long in
 * echo mode, is closed. An idle connection costs one 4 KiB struct and one
 * event each, so 10,000+ held connections are cheap.
 *
 * Loopback benchmark tool: it refuses to listen on anything but 127.0.0.0/8.
 * Exits 0 on SIGTERM/SIGINT, printing its counters on stderr.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bench/common.h"
#include <event2/listener.h>

#define MAX_LISTEN	8
#define HEAD_MAX	4096		/* request head bound; beyond: 431 */
#define ECHO_BUF	4096
#define FILL_SIZE	(4u << 20)	/* the in-memory file behind /bytes/N */
#define BYTES_MAX	(1ull << 40)

enum cstate { C_HEAD, C_REPLY, C_ECHO_READ, C_ECHO_WRITE };

struct target;

struct conn {
	struct target	*t;
	struct event	*ev;
	int		 fd;
	enum cstate	 st;
	const char	*hdr;		/* head (and tiny body) still to write */
	size_t		 hdr_len;
	char		 hdr_buf[128];
	uint64_t	 body_left;	/* /bytes/N bytes still to send */
	off_t		 file_off;
	size_t		 len;		/* bytes in buf */
	size_t		 woff;		/* echo: written so far */
	char		 buf[];		/* HEAD_MAX, allocated on first read */
};

struct target {
	struct event_base	*base;
	struct evconnlistener	*lst[MAX_LISTEN];
	int			 nlst;
	struct event		*resume;
	struct timeval		 idle_tv;
	int			 memfd;
	int			 use_sendfile;
	char			*fill;		/* write mode: FILL_SIZE bytes */
	long			 max_conns;
	long			 nconns;
	uint64_t		 accepted, replies, bytes, refused;
};

static const char REPLY_OK[] =
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
static const char REPLY_ECHO[] =
    "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
static const char REPLY_431[] =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
    "Connection: close\r\n\r\n";
static const char REPLY_400[] =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

static void conn_cb(evutil_socket_t, short, void *);

static void
usage(void)
{
	fprintf(stderr,
	    "usage: target --listen IP:PORT [--listen IP:PORT]... [--ready FILE]\n"
	    "              [--idle-timeout S] [--max-conns N] [--send sendfile|write]\n");
	exit(2);
}

static void
conn_free(struct conn *c)
{
	struct target *t = c->t;

	event_free(c->ev);
	close(c->fd);
	free(c);
	t->nconns--;
}

static void
conn_wait(struct conn *c, short what)
{
	event_del(c->ev);
	event_assign(c->ev, c->t->base, c->fd, what, conn_cb, c);
	event_add(c->ev, &c->t->idle_tv);
}

/* Writes what is pending of the reply. Returns 1 when all is sent, 0 when
 * the socket is full (caller waits for EV_WRITE), -1 on error. */
static int
send_reply(struct conn *c)
{
	struct target *t = c->t;
	ssize_t n;

	while (c->hdr_len > 0) {
		n = send(c->fd, c->hdr, c->hdr_len, MSG_NOSIGNAL);
		if (n < 0)
			return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
		c->hdr += n;
		c->hdr_len -= (size_t)n;
	}
	while (c->body_left > 0) {
		size_t want = FILL_SIZE - (size_t)c->file_off;

		if (want > c->body_left)
			want = (size_t)c->body_left;
		if (t->use_sendfile)
			n = sendfile(c->fd, t->memfd, &c->file_off, want);
		else {
			n = send(c->fd, t->fill + c->file_off, want, MSG_NOSIGNAL);
			if (n > 0)
				c->file_off += n;
		}
		if (n < 0)
			return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
		if (n == 0)
			return -1;
		c->body_left -= (uint64_t)n;
		t->bytes += (uint64_t)n;
		if (c->file_off >= (off_t)FILL_SIZE)
			c->file_off = 0;
	}
	return 1;
}

/* Chooses the reply from the request line of a complete head. */
static void
choose_reply(struct conn *c)
{
	char *sp1, *sp2, *path, *eol;
	unsigned long long n;

	c->buf[c->len] = '\0';
	eol = strstr(c->buf, "\r\n");
	if (eol != NULL)
		*eol = '\0';
	if ((sp1 = strchr(c->buf, ' ')) == NULL ||
	    (sp2 = strchr(sp1 + 1, ' ')) == NULL) {
		c->hdr = REPLY_400;
		c->hdr_len = sizeof(REPLY_400) - 1;
		return;
	}
	*sp2 = '\0';
	path = sp1 + 1;
	if (strncmp(path, "http://", 7) == 0) {
		path = strchr(path + 7, '/');
		if (path == NULL)
			path = sp2;	/* "" */
	}
	if (strcmp(path, "/echo") == 0) {
		c->hdr = REPLY_ECHO;
		c->hdr_len = sizeof(REPLY_ECHO) - 1;
		c->st = C_ECHO_READ;
		return;
	}
	if (strncmp(path, "/bytes/", 7) == 0) {
		if (bench_parse_num(path + 7, 0, BYTES_MAX, &n) == -1) {
			c->hdr = REPLY_400;
			c->hdr_len = sizeof(REPLY_400) - 1;
			return;
		}
		c->hdr_len = (size_t)snprintf(c->hdr_buf, sizeof(c->hdr_buf),
		    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
		    "Content-Length: %llu\r\nConnection: close\r\n\r\n", n);
		c->hdr = c->hdr_buf;
		c->body_left = n;
		return;
	}
	c->hdr = REPLY_OK;
	c->hdr_len = sizeof(REPLY_OK) - 1;
}

/* The transparent section's TLS load (loadgen --mode tls): the client's
 * first bytes are one ClientHello record, no real TLS follows. It is
 * answered as a request: its legacy_session_id (32 bytes at offset 44:
 * record 5, handshake 4, version 2, random 32, length 1) carries the body
 * size N, big-endian in its first 8 bytes; N = 0: the "ok" reply, else
 * N bytes as /bytes/N. The guard relays both directions unread, so any
 * bytes do as the reply. Returns 1 with the reply chosen, 0 while the
 * record is incomplete, -1 when it does not have that shape. */
static int
tls_reply(struct conn *c)
{
	const unsigned char *b = (const unsigned char *)c->buf;
	unsigned long long n = 0;
	size_t rec, i;

	if (c->len < 5)
		return 0;
	rec = (size_t)b[3] << 8 | b[4];
	if (rec + 5 > HEAD_MAX - 1 || rec < 40 + 32)
		return -1;
	if (c->len < rec + 5)
		return 0;
	if (b[43] != 32)
		return -1;
	for (i = 0; i < 8; i++)
		n = n << 8 | b[44 + i];
	if (n > BYTES_MAX)
		return -1;
	if (n == 0) {
		c->hdr = REPLY_OK;
		c->hdr_len = sizeof(REPLY_OK) - 1;
		return 1;
	}
	c->hdr_len = (size_t)snprintf(c->hdr_buf, sizeof(c->hdr_buf),
	    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
	    "Content-Length: %llu\r\nConnection: close\r\n\r\n", n);
	c->hdr = c->hdr_buf;
	c->body_left = n;
	return 1;
}

static void
on_head(struct conn *c)
{
	ssize_t n;
	char *end;

	n = recv(c->fd, c->buf + c->len, HEAD_MAX - 1 - c->len, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_free(c);
		return;
	}
	if (n < 0)
		return;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if ((unsigned char)c->buf[0] == 0x16) {	/* a ClientHello (loadgen --mode tls) */
		int got = tls_reply(c);

		if (got == 0)
			return;
		c->t->replies++;
		c->len = 0;
		c->st = C_REPLY;
		if (got == -1) {
			c->hdr = REPLY_400;
			c->hdr_len = sizeof(REPLY_400) - 1;
		}
	} else if ((end = strstr(c->buf, "\r\n\r\n")) == NULL) {
		if (c->len < HEAD_MAX - 1)
			return;
		c->hdr = REPLY_431;
		c->hdr_len = sizeof(REPLY_431) - 1;
		c->st = C_REPLY;
	} else {
		size_t head = (size_t)(end + 4 - c->buf);
		size_t rest = c->len - head;
		char saved[ECHO_BUF];

		/* Bytes after the head: echo data in echo mode. */
		if (rest > sizeof(saved))
			rest = sizeof(saved);
		memcpy(saved, c->buf + head, rest);
		c->len = head;
		c->st = C_REPLY;
		choose_reply(c);
		c->t->replies++;
		if (c->st == C_ECHO_READ) {
			memcpy(c->buf, saved, rest);
			c->len = rest;
			c->woff = 0;
		} else
			c->len = 0;
	}
	if (c->st == C_ECHO_READ) {
		/* The echo head is tiny: a full socket here is a broken peer. */
		if (send_reply(c) != 1) {
			conn_free(c);
			return;
		}
		if (c->len > 0) {
			c->st = C_ECHO_WRITE;
			conn_wait(c, EV_WRITE);
		} else
			conn_wait(c, EV_READ | EV_PERSIST);
		return;
	}
	switch (send_reply(c)) {
	case 1:
		conn_free(c);
		return;
	case 0:
		conn_wait(c, EV_WRITE | EV_PERSIST);
		return;
	default:
		conn_free(c);
		return;
	}
}

static void
on_echo(struct conn *c, short what)
{
	ssize_t n;

	(void)what;
	if (c->st == C_ECHO_READ) {
		n = recv(c->fd, c->buf, ECHO_BUF, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			conn_free(c);
			return;
		}
		if (n < 0)
			return;
		c->len = (size_t)n;
		c->woff = 0;
	}
	while (c->woff < c->len) {
		n = send(c->fd, c->buf + c->woff, c->len - c->woff, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				c->st = C_ECHO_WRITE;
				conn_wait(c, EV_WRITE);
				return;
			}
			conn_free(c);
			return;
		}
		c->woff += (size_t)n;
	}
	c->len = c->woff = 0;
	if (c->st == C_ECHO_WRITE) {
		c->st = C_ECHO_READ;
		conn_wait(c, EV_READ | EV_PERSIST);
	}
}

static void
conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		conn_free(c);
		return;
	}
	switch (c->st) {
	case C_HEAD:
		on_head(c);
		return;
	case C_REPLY:
		switch (send_reply(c)) {
		case 0:
			return;
		default:
			conn_free(c);
			return;
		}
	case C_ECHO_READ:
	case C_ECHO_WRITE:
		on_echo(c, what);
		return;
	}
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct target *t = arg;
	struct conn *c;
	int one = 1;

	(void)l; (void)sa; (void)salen;
	t->accepted++;
	if (t->nconns >= t->max_conns ||
	    (c = calloc(1, sizeof(*c) + HEAD_MAX)) == NULL) {
		t->refused++;
		close(fd);
		return;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->t = t;
	c->fd = fd;
	c->st = C_HEAD;
	if ((c->ev = event_new(t->base, fd, EV_READ | EV_PERSIST, conn_cb, c)) == NULL) {
		close(fd);
		free(c);
		t->refused++;
		return;
	}
	t->nconns++;
	event_add(c->ev, &t->idle_tv);
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct target *t = arg;
	int i;

	(void)fd; (void)what;
	for (i = 0; i < t->nlst; i++)
		evconnlistener_enable(t->lst[i]);
}

/* accept() failing (EMFILE, ENFILE, ENOBUFS) would spin the listener: pause
 * accepting for 100 ms instead. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct target *t = arg;
	struct timeval tv = { 0, 100000 };
	int i;

	(void)l;
	for (i = 0; i < t->nlst; i++)
		evconnlistener_disable(t->lst[i]);
	event_add(t->resume, &tv);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig; (void)what;
	event_base_loopbreak(arg);
}

static int
make_fill(struct target *t)
{
	static char chunk[65536];
	size_t off;

	memset(chunk, 'x', sizeof(chunk));
	if ((t->fill = malloc(FILL_SIZE)) == NULL)
		return -1;
	memset(t->fill, 'x', FILL_SIZE);
	t->memfd = memfd_create("target-fill", MFD_CLOEXEC);
	if (t->memfd == -1)
		return -1;
	for (off = 0; off < FILL_SIZE; off += sizeof(chunk))
		if (write(t->memfd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
			return -1;
	return 0;
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_max < 65536) {
		struct rlimit want = { 65536, 65536 };

		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen",		required_argument, NULL, 'l' },
		{ "ready",		required_argument, NULL, 'r' },
		{ "idle-timeout",	required_argument, NULL, 'i' },
		{ "max-conns",		required_argument, NULL, 'm' },
		{ "send",		required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	struct target t;
	struct sockaddr_in addrs[MAX_LISTEN];
	struct event *sigs[2];
	const char *ready = NULL;
	unsigned long long v;
	int naddr = 0, ch, i;

	memset(&t, 0, sizeof(t));
	t.idle_tv.tv_sec = 600;
	t.max_conns = 50000;
	t.use_sendfile = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (naddr == MAX_LISTEN || bench_parse_loopback(optarg, &addrs[naddr]) == -1) {
				fprintf(stderr, "target: --listen %s: expected 127.x.y.z:PORT\n", optarg);
				return 2;
			}
			naddr++;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'i':
			if (bench_parse_num(optarg, 1, 86400, &v) == -1)
				usage();
			t.idle_tv.tv_sec = (time_t)v;
			break;
		case 'm':
			if (bench_parse_num(optarg, 1, 1000000, &v) == -1)
				usage();
			t.max_conns = (long)v;
			break;
		case 's':
			if (strcmp(optarg, "sendfile") == 0)
				t.use_sendfile = 1;
			else if (strcmp(optarg, "write") == 0)
				t.use_sendfile = 0;
			else
				usage();
			break;
		default:
			usage();
		}
	}
	if (naddr == 0 || optind != argc)
		usage();
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (make_fill(&t) == -1) {
		perror("target: fill");
		return 1;
	}
	if ((t.base = event_base_new()) == NULL)
		return 1;
	t.resume = evtimer_new(t.base, resume_cb, &t);
	for (i = 0; i < naddr; i++) {
		t.lst[i] = evconnlistener_new_bind(t.base, accept_cb, &t,
		    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
		    4096, (struct sockaddr *)&addrs[i], sizeof(addrs[i]));
		if (t.lst[i] == NULL) {
			fprintf(stderr, "target: cannot listen on %s:%u: %s\n",
			    inet_ntoa(addrs[i].sin_addr), ntohs(addrs[i].sin_port),
			    strerror(errno));
			return 1;
		}
		evconnlistener_set_error_cb(t.lst[i], accept_error_cb);
		t.nlst++;
	}
	sigs[0] = evsignal_new(t.base, SIGTERM, signal_cb, t.base);
	sigs[1] = evsignal_new(t.base, SIGINT, signal_cb, t.base);
	event_add(sigs[0], NULL);
	event_add(sigs[1], NULL);
	if (ready != NULL) {
		char tmp[PATH_MAX];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		if ((f = fopen(tmp, "w")) == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 ||
		    fclose(f) != 0 || rename(tmp, ready) == -1) {
			perror("target: --ready");
			return 1;
		}
	}
	event_base_dispatch(t.base);
	fprintf(stderr, "target: accepted %llu replies %llu body_bytes %llu refused %llu open %ld\n",
	    (unsigned long long)t.accepted, (unsigned long long)t.replies,
	    (unsigned long long)t.bytes, (unsigned long long)t.refused, t.nconns);
	/* Everything freed, so a leak checker sees only real leaks. */
	for (i = 0; i < t.nlst; i++)
		evconnlistener_free(t.lst[i]);
	event_free(sigs[0]);
	event_free(sigs[1]);
	event_free(t.resume);
	event_base_free(t.base);
	free(t.fill);
	close(t.memfd);
	return 0;
}
