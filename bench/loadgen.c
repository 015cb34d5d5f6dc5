/*
 * loadgen: a load generator for HTTP proxies (libevent, one thread).
 *
 *   loadgen rate       [--mode connect|get] --concurrency C --duration S
 *   loadgen throughput [--streams N] [--bytes N] --duration S
 *   loadgen idle       --conns N [--pid PID]... [--pid-tree] [--hold S]
 *   loadgen echo       [--interval-ms MS] --duration S [--series FILE]
 *   loadgen dns        --proxy DNS-IP:PORT --target NAME [--expect noerror|nxdomain]
 *
 * common: --proxy IP:PORT|none  --target HOST:PORT  [--connect IP:PORT]
 *         [--timeout S] [--warmup S] [--label NAME] [--max-error-pct P]
 *         [--cpu-pid PID]...
 *
 * CPU per unit of work: at the start of the measured window (after
 * --warmup) and at its end, rate, throughput and echo read their own CPU
 * time and that of each --cpu-pid (utime + stime of the whole process, all
 * its threads; not its children); the JSON then has "window_cpu_s":
 * {"self": s, "PID": s or null, ...} and "window_cpu_wall_s", the time
 * between the two readings. The units of that window are "ok" (rate, echo)
 * and "body_bytes" (throughput), both counted inside the window only.
 *
 * --proxy none is the baseline: the same requests straight to the target
 * (--connect gives the address when --target is a name). Through a proxy:
 *   rate connect  CONNECT, "GET /" and its tiny reply through the tunnel,
 *                 close; one tunnel per iteration.
 *   rate get      one absolute-form "GET http://target/" with
 *                 Connection: close; one connection per iteration.
 *   throughput    CONNECT, "GET /bytes/N", read the body; again while the
 *                 duration lasts; --streams at once. MiB/s of body bytes.
 *   --mode tls    (rate, throughput) a TLS ClientHello record naming the
 *                 target's host (SNI) in place of the GET: what a TLS
 *                 client sends first, through the tunnel or, with --proxy
 *                 none, to --connect (the transparent section: a redirect
 *                 takes it to the guard). No real TLS follows: bench/target
 *                 answers the hello like a GET (body size in the hello's
 *                 session id), the guard relays both directions unread.
 *   dns           a UDP query for the A record of --target (a name) to the
 *                 DNS server --proxy, --concurrency at once (a socket
 *                 each), the next as soon as one is answered; answers/s
 *                 and latency. An answer whose rcode is not --expect's
 *                 (noerror by default) counts as an error ("refused").
 *                 --names N: the names d0.TARGET … dN-1.TARGET in turn,
 *                 so that no two queries in flight ask the same (a
 *                 forwarder such as dnsmasq sends identical questions in
 *                 flight upstream once, cache or not).
 *   idle          opens --conns tunnels (at most --concurrency opening at
 *                 once), holds them, waits --warmup seconds, and reads VmRSS
 *                 (and Threads) of --pid (with --pid-tree, of its
 *                 descendants too) before and after: the proxy's RSS per
 *                 tunnel; then holds them --hold seconds more.
 *   echo          one tunnel to the target's /echo, a 16-byte message
 *                 every --interval-ms; round trip of each and the longest
 *                 gap between answers: stalls of the proxy's event loop.
 *                 --series FILE: every answer in the window as a line
 *                 "SENT_US RTT_US", SENT_US the send time in microseconds
 *                 since the Unix epoch (CLOCK_REALTIME, as a shell's
 *                 EPOCHREALTIME), so that answers can be matched with an
 *                 interval another process timed (bench/stall.py).
 *
 * Output: one JSON object on one line, then one human line starting "# ".
 * Everything is bounded: --duration (and the open phase of idle by
 * --timeout), --timeout per connection (per iteration; for throughput, the
 * longest silence of a download), at most 50,000 connections at once.
 * Exit 0; 1 when errors pass --max-error-pct of attempts (default 1) or
 * nothing succeeded; 2 on a usage error.
 *
 * Loopback benchmark tool: the proxy and every connect address must be in
 * 127.0.0.0/8; the proxy may also be in 10.0.0.0/8, a listener in a network
 * namespace the bench made (bench/tenants: a tenant's listener is bound to
 * its link).
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "bench/common.h"

#define MAX_CONC	50000
#define MAX_PIDS	8
#define SLOT_BUF	4096
#define SCRATCH		(1u << 20)
#define MAX_SAMPLES	(20u * 1000 * 1000)
#define ECHO_MSG	16

enum test { T_RATE, T_THROUGHPUT, T_IDLE, T_ECHO, T_DNS };
enum sstate {
	S_FREE,		/* no connection */
	S_CONNECTING,	/* waiting for connect() */
	S_PROXY_HEAD,	/* reading the CONNECT answer */
	S_WRITE,	/* sending the request */
	S_REPLY,	/* reading the reply head and body */
	S_HELD,		/* idle: tunnel open, held */
	S_ECHO,		/* echo: exchanging messages */
	S_DNS,		/* dns: query sent, waiting for its answer */
	S_RETRY		/* waiting to start again after an immediate failure */
};
enum err {
	E_CONNECT, E_TIMEOUT, E_REFUSED, E_BADREPLY, E_RESET, E_EOF, E_NKINDS
};
static const char *err_names[E_NKINDS] = {
	"connect", "timeout", "refused", "bad_reply", "reset", "eof"
};

struct lg;

struct slot {
	struct lg	*lg;
	struct event	*ev;
	int		 fd;
	enum sstate	 st;
	uint64_t	 t_start;	/* ns, this iteration */
	const char	*wbuf;		/* request being written */
	size_t		 wlen, woff;
	size_t		 len;		/* bytes in buf */
	int		 head_done;
	int		 chunked;
	int		 to_eof;
	uint16_t	 dns_id;	/* dns: the query's id */
	uint64_t	 body_left;
	char		 buf[SLOT_BUF];
};

struct samples {
	uint32_t	*v;		/* microseconds */
	size_t		 n, cap;
	uint64_t	 dropped;
};

/* echo --series: when each answered message was sent, and its round trip */
struct answer {
	uint64_t	 sent_us;	/* CLOCK_REALTIME, microseconds */
	uint32_t	 rtt_us;
};

struct series {
	struct answer	*v;
	size_t		 n, cap;
	uint64_t	 dropped;
	int64_t		 rt_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
};

struct lg {
	struct event_base	*base;
	enum test		 test;
	int			 mode_get;
	int			 mode_tls;
	int			 dns_rcode;	/* dns: the rcode expected */
	unsigned char		 (*dns_q)[300];	/* dns: the queries, one per name */
	size_t			 *dns_qlen;
	unsigned		 dns_names;	/* how many (--names, else 1) */
	uint16_t		 dns_seq;
	int			 direct;
	struct sockaddr_in	 proxy;
	struct sockaddr_in	 connect_to;	/* target address for direct */
	char			 target[300];
	const char		*label;
	int			 concurrency;
	double			 duration, warmup, timeout, hold, max_err_pct;
	double			 interval_ms;
	uint64_t		 bytes_per_req;
	int			 streams;
	long			 conns;
	pid_t			 pids[MAX_PIDS];
	int			 npids;
	int			 pid_tree;
	pid_t			 cpu_pids[MAX_PIDS];
	int			 ncpu_pids;
	long			 clk_tck;

	char			*req_connect;	/* CONNECT head */
	char			*req_inner;	/* request inside the tunnel / direct */
	size_t			 req_connect_len, req_inner_len;

	struct slot		*slots;
	int			 nslots;
	struct event		*tick;
	uint64_t		 t0, t_warm, t_end;
	int			 stopping;

	uint64_t		 ok, errors, errs[E_NKINDS], attempts;
	uint64_t		 completed;	/* successes, warm-up included */
	uint64_t		 body_bytes;	/* in the window */
	uint64_t		 downloads;
	struct samples		 lat;

	/* idle */
	long			 opened, started, held_dropped, open_errors;
	uint64_t		 t_all_open;
	int			 open_phase_over;

	/* echo */
	uint64_t		 echo_seq, echo_recv, echo_last_recv, echo_max_gap;
	uint64_t		 echo_first_recv;
	struct event		*echo_timer;
	const char		*series_path;	/* NULL: no series */
	struct series		 series;

	/* CPU readings at t_warm ([0]) and t_end ([1]); -1: unreadable */
	struct event		*cpu_timer;
	int			 cpu_n;		/* readings taken */
	uint64_t		 cpu_at[2];
	double			 cpu_self[2];
	double			 cpu_pid[MAX_PIDS][2];
};

static char scratch[SCRATCH];

static void slot_cb(evutil_socket_t, short, void *);
static void slot_start(struct slot *);
static void idle_next(struct lg *);
static void cpu_sample(struct lg *);
static void cpu_due(struct lg *, uint64_t);

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME minus CLOCK_MONOTONIC, now: what turns a send time into
 * one another process can compare with its own (echo --series). */
static int64_t
realtime_offset_ns(void)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	return (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - (int64_t)now_ns();
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: loadgen rate|throughput|idle|echo|dns --proxy IP:PORT|none --target HOST:PORT\n"
	    "         [--connect IP:PORT] [--label NAME] [--timeout S] [--warmup S]\n"
	    "         [--max-error-pct P]\n"
	    "  rate:       [--mode connect|get|tls] [--concurrency C] [--duration S]\n"
	    "  throughput: [--mode tls] [--streams N] [--bytes N] [--duration S]\n"
	    "  dns:        --target NAME [--names N] [--expect noerror|nxdomain] [--concurrency C]\n"
	    "              [--duration S]\n"
	    "  idle:       --conns N [--concurrency C] [--pid PID]... [--pid-tree] [--hold S]\n"
	    "  echo:       [--interval-ms MS] [--duration S] [--series FILE]\n"
	    "  rate, throughput, echo: [--cpu-pid PID]... (CPU time in the window)\n");
	exit(2);
}

static int
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

static void
samples_add(struct samples *s, uint64_t ns)
{
	uint64_t us = ns / 1000;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 65536;
		uint32_t *nv;

		if (ncap > MAX_SAMPLES || (nv = realloc(s->v, ncap * sizeof(*nv))) == NULL) {
			s->dropped++;
			return;
		}
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* One answered echo: sent (CLOCK_MONOTONIC ns) and its round trip. A full
 * series drops the rest and counts them; the run then fails (see
 * series_write): a series with holes could hide a stall. */
static void
series_add(struct series *s, uint64_t sent_ns, uint64_t rtt_ns)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 8192;
		struct answer *nv;

		if (ncap > MAX_SAMPLES ||
		    (nv = realloc(s->v, ncap * sizeof(*nv))) == NULL) {
			s->dropped++;
			return;
		}
		s->v = nv;
		s->cap = ncap;
	}
	rtt_ns /= 1000;
	s->v[s->n].sent_us = (uint64_t)((int64_t)sent_ns + s->rt_off_ns) / 1000;
	s->v[s->n++].rtt_us = rtt_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt_ns;
}

/* 0, or -1 (with a message) when the file cannot be written whole or the
 * series dropped answers. */
static int
series_write(const struct series *s, const char *path)
{
	FILE *f;
	size_t i;
	int bad;

	if (s->dropped > 0) {
		fprintf(stderr, "loadgen: --series: %llu answers not recorded\n",
		    (unsigned long long)s->dropped);
		return -1;
	}
	if ((f = fopen(path, "w")) == NULL) {
		fprintf(stderr, "loadgen: --series %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < s->n; i++)
		fprintf(f, "%llu %u\n", (unsigned long long)s->v[i].sent_us, s->v[i].rtt_us);
	bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		fprintf(stderr, "loadgen: --series %s: write failed\n", path);
		return -1;
	}
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile, in milliseconds; the samples must be sorted. */
static double
pct_ms(const struct samples *s, double p)
{
	size_t i;

	if (s->n == 0)
		return 0;
	i = (size_t)ceil(p / 100.0 * (double)s->n);
	if (i > 0)
		i--;
	if (i >= s->n)
		i = s->n - 1;
	return s->v[i] / 1000.0;
}

static void
raise_nofile(void)
{
	struct rlimit rl;
	struct rlimit want = { 200000, 200000 };

	if (setrlimit(RLIMIT_NOFILE, &want) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- per-connection machinery */

static void
slot_wait(struct slot *s, short what)
{
	event_del(s->ev);
	event_assign(s->ev, s->lg->base, s->fd, what, slot_cb, s);
	event_add(s->ev, NULL);
}

static void
slot_close(struct slot *s)
{
	event_del(s->ev);
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	s->st = S_FREE;
}

static int
in_window(const struct lg *lg, uint64_t t)
{
	return t >= lg->t_warm && t <= lg->t_end;
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct slot *s = arg;

	(void)fd; (void)what;
	s->st = S_FREE;
	if (!s->lg->stopping)
		slot_start(s);
}

/* An iteration failed: count it, close, and start again (after 10 ms, so
 * that an immediate failure cannot spin). */
static void
slot_fail(struct slot *s, enum err e)
{
	struct lg *lg = s->lg;
	struct timeval tv = { 0, 10000 };

	lg->errors++;
	lg->errs[e]++;
	if (lg->test == T_IDLE) {
		int opening = s->st != S_HELD;

		if (opening)
			lg->open_errors++;
		else
			lg->held_dropped++;
		slot_close(s);
		if (opening)
			idle_next(lg);
		return;
	}
	slot_close(s);
	if (lg->test == T_ECHO) {
		event_base_loopbreak(lg->base);
		return;
	}
	s->st = S_RETRY;
	event_assign(s->ev, lg->base, -1, 0, retry_cb, s);
	event_add(s->ev, &tv);
}

static void
slot_done(struct slot *s)
{
	struct lg *lg = s->lg;
	uint64_t t = now_ns();

	slot_close(s);
	lg->completed++;
	if (in_window(lg, t)) {
		lg->ok++;
		if (lg->test == T_RATE)
			samples_add(&lg->lat, t - s->t_start);
	}
	if (lg->test == T_THROUGHPUT)
		lg->downloads++;
	if (!lg->stopping)
		slot_start(s);
}

static void
slot_send(struct slot *s, const char *buf, size_t len)
{
	ssize_t n;

	s->wbuf = buf;
	s->wlen = len;
	s->woff = 0;
	s->st = S_WRITE;
	while (s->woff < s->wlen) {
		n = send(s->fd, s->wbuf + s->woff, s->wlen - s->woff, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				slot_wait(s, EV_WRITE | EV_PERSIST);
				return;
			}
			slot_fail(s, E_RESET);
			return;
		}
		s->woff += (size_t)n;
	}
	s->len = 0;
	s->head_done = s->chunked = s->to_eof = 0;
	s->body_left = 0;
	s->st = S_REPLY;
	slot_wait(s, EV_READ | EV_PERSIST);
}

/* dns: the next query on the slot's socket (opened on first use, kept
 * until a failure closes it: a late answer to a timed-out query then
 * cannot be taken for the next one's). */
static void
dns_send(struct slot *s)
{
	struct lg *lg = s->lg;
	unsigned char q[sizeof(lg->dns_q[0])];
	size_t qlen;

	if (s->fd == -1) {
		s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s->fd == -1 || connect(s->fd, (const struct sockaddr *)&lg->proxy,
		    sizeof(lg->proxy)) == -1) {
			slot_fail(s, E_CONNECT);
			return;
		}
		s->st = S_DNS;
		slot_wait(s, EV_READ | EV_PERSIST);
	}
	s->dns_id = ++lg->dns_seq;
	qlen = lg->dns_qlen[lg->attempts % lg->dns_names];
	memcpy(q, lg->dns_q[lg->attempts % lg->dns_names], qlen);
	q[0] = (unsigned char)(s->dns_id >> 8);
	q[1] = (unsigned char)s->dns_id;
	s->t_start = now_ns();
	lg->attempts++;
	if (send(s->fd, q, qlen, 0) != (ssize_t)qlen)
		slot_fail(s, E_RESET);
}

/* dns: an answer; one not for the query in flight is ignored. */
static void
on_dns(struct slot *s)
{
	struct lg *lg = s->lg;
	unsigned char a[1500];
	ssize_t n;
	uint64_t t;

	n = recv(s->fd, a, sizeof(a), 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		slot_fail(s, E_RESET);	/* ECONNREFUSED: nothing listens */
		return;
	}
	if (n < 12 || (a[0] << 8 | a[1]) != s->dns_id || !(a[2] & 0x80))
		return;
	if ((a[3] & 0x0f) != lg->dns_rcode) {
		slot_fail(s, E_REFUSED);
		return;
	}
	t = now_ns();
	lg->completed++;
	if (in_window(lg, t)) {
		lg->ok++;
		samples_add(&lg->lat, t - s->t_start);
	}
	if (!lg->stopping)
		dns_send(s);
}

static void
slot_start(struct slot *s)
{
	struct lg *lg = s->lg;
	const struct sockaddr_in *to = lg->direct ? &lg->connect_to : &lg->proxy;
	struct timeval tv = { 0, 10000 };
	int one = 1;

	if (lg->test == T_DNS) {
		dns_send(s);
		return;
	}
	s->t_start = now_ns();
	s->len = 0;
	lg->attempts++;
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd == -1)
		goto fail;
	(void)setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(s->fd, (const struct sockaddr *)to, sizeof(*to)) == -1 &&
	    errno != EINPROGRESS)
		goto fail;
	s->st = S_CONNECTING;
	slot_wait(s, EV_WRITE);
	return;
fail:
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	lg->errors++;
	lg->errs[E_CONNECT]++;
	if (lg->test == T_IDLE) {
		lg->open_errors++;
		s->st = S_FREE;
		return;		/* idle_next() goes on from its loop */
	}
	s->st = S_RETRY;
	event_assign(s->ev, lg->base, -1, 0, retry_cb, s);
	event_add(s->ev, &tv);
}

/* Case-insensitive search for a header line "\r\nName:" within the head. */
static const char *
find_header(const char *head, size_t len, const char *name)
{
	size_t nl = strlen(name), i;

	for (i = 0; i + 2 + nl < len; i++) {
		if (head[i] == '\r' && head[i + 1] == '\n' &&
		    strncasecmp(head + i + 2, name, nl) == 0)
			return head + i + 2 + nl;
	}
	return NULL;
}

/* Parses a complete response head in buf[0..hlen): status; Content-Length
 * or chunked or read-to-EOF. Returns the status or -1. */
static int
parse_head(struct slot *s, size_t hlen)
{
	const char *v;
	int status;

	if (hlen < 12 || strncmp(s->buf, "HTTP/1.", 7) != 0 ||
	    !isdigit((unsigned char)s->buf[9]) || !isdigit((unsigned char)s->buf[10]) ||
	    !isdigit((unsigned char)s->buf[11]))
		return -1;
	status = (s->buf[9] - '0') * 100 + (s->buf[10] - '0') * 10 + (s->buf[11] - '0');
	s->chunked = s->to_eof = 0;
	s->body_left = 0;
	if ((v = find_header(s->buf, hlen, "content-length:")) != NULL) {
		while (*v == ' ' || *v == '\t')
			v++;
		s->body_left = strtoull(v, NULL, 10);
	} else if ((v = find_header(s->buf, hlen, "transfer-encoding:")) != NULL &&
	    strstr(v, "chunked") != NULL)
		s->chunked = 1;
	else
		s->to_eof = 1;
	return status;
}

/* The CONNECT answer: a complete head with status 200, and nothing after. */
static void
on_proxy_head(struct slot *s)
{
	struct lg *lg = s->lg;
	ssize_t n;
	char *end;

	n = recv(s->fd, s->buf + s->len, SLOT_BUF - 1 - s->len, 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		slot_fail(s, E_RESET);
		return;
	}
	if (n == 0) {
		slot_fail(s, E_EOF);
		return;
	}
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	if ((end = strstr(s->buf, "\r\n\r\n")) == NULL) {
		if (s->len >= SLOT_BUF - 1)
			slot_fail(s, E_BADREPLY);
		return;
	}
	if (strncmp(s->buf, "HTTP/1.", 7) != 0 || strncmp(s->buf + 8, " 200", 4) != 0) {
		slot_fail(s, E_REFUSED);
		return;
	}
	if (lg->test == T_IDLE) {
		s->st = S_HELD;
		lg->opened++;
		slot_wait(s, EV_READ);	/* only to notice a close */
		idle_next(lg);
		return;
	}
	slot_send(s, lg->req_inner, lg->req_inner_len);
}

/* The reply: head, then the body by Content-Length, chunks or EOF. */
static void
on_reply(struct slot *s)
{
	struct lg *lg = s->lg;
	ssize_t n;
	int reads = 0;

	for (;;) {
		char *dst = s->head_done ? scratch : s->buf + s->len;
		size_t room = s->head_done ? SCRATCH : SLOT_BUF - 1 - s->len;

		if (s->head_done && s->chunked) {
			/* keep the tail: the last chunk marker may straddle reads */
			dst = s->buf + s->len;
			room = SLOT_BUF - 1 - s->len;
		}
		n = recv(s->fd, dst, room, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			slot_fail(s, E_RESET);
			return;
		}
		if (n == 0) {
			if (s->head_done && s->to_eof) {
				slot_done(s);
				return;
			}
			slot_fail(s, E_EOF);
			return;
		}
		if (!s->head_done) {
			char *end;
			size_t hlen, extra;
			int status;

			s->len += (size_t)n;
			s->buf[s->len] = '\0';
			if ((end = strstr(s->buf, "\r\n\r\n")) == NULL) {
				if (s->len >= SLOT_BUF - 1)
					slot_fail(s, E_BADREPLY);
				else
					continue;
				return;
			}
			hlen = (size_t)(end + 4 - s->buf);
			status = parse_head(s, hlen);
			if (status != 200) {
				slot_fail(s, status == -1 ? E_BADREPLY : E_REFUSED);
				return;
			}
			s->head_done = 1;
			extra = s->len - hlen;
			if (s->chunked) {
				memmove(s->buf, s->buf + hlen, extra);
				s->len = extra;
				n = 0;
			} else {
				n = (ssize_t)extra;
				s->len = 0;
			}
		}
		if (s->head_done && s->chunked) {
			if (n > 0)
				s->len += (size_t)n;
			s->buf[s->len] = '\0';
			if (s->len >= 5 && (memcmp(s->buf, "0\r\n\r\n", 5) == 0 ||
			    strstr(s->buf, "\r\n0\r\n\r\n") != NULL)) {
				slot_done(s);
				return;
			}
			if (s->len > SLOT_BUF / 2) {	/* keep the last bytes only */
				memmove(s->buf, s->buf + s->len - 16, 16);
				s->len = 16;
			}
			continue;
		}
		if (n > 0 && lg->test == T_THROUGHPUT) {
			uint64_t t = now_ns();

			if (in_window(lg, t))
				lg->body_bytes += (uint64_t)n;
			s->t_start = t;	/* a download times out when it stalls */
			cpu_due(lg, t);
		}
		if (!s->to_eof) {
			if ((uint64_t)n > s->body_left) {
				slot_fail(s, E_BADREPLY);
				return;
			}
			s->body_left -= (uint64_t)n;
			if (s->body_left == 0) {
				slot_done(s);
				return;
			}
		}
		/* Give the other connections a turn now and then. */
		if (++reads >= 16)
			return;
	}
}

static void
on_echo(struct slot *s)
{
	struct lg *lg = s->lg;
	ssize_t n;
	size_t off;
	uint64_t t;

	n = recv(s->fd, s->buf + s->len, SLOT_BUF - s->len, 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		slot_fail(s, E_RESET);
		return;
	}
	if (n == 0) {
		slot_fail(s, E_EOF);
		return;
	}
	s->len += (size_t)n;
	t = now_ns();
	for (off = 0; off + ECHO_MSG <= s->len; off += ECHO_MSG) {
		uint64_t sent;

		memcpy(&sent, s->buf + off + 8, sizeof(sent));
		if (sent > t) {
			slot_fail(s, E_BADREPLY);
			return;
		}
		if (in_window(lg, t)) {
			samples_add(&lg->lat, t - sent);
			if (lg->series_path != NULL)
				series_add(&lg->series, sent, t - sent);
			if (lg->echo_last_recv != 0 && t - lg->echo_last_recv > lg->echo_max_gap)
				lg->echo_max_gap = t - lg->echo_last_recv;
			if (lg->echo_first_recv == 0)
				lg->echo_first_recv = t;
		}
		lg->echo_recv++;
		lg->echo_last_recv = t;
	}
	memmove(s->buf, s->buf + off, s->len - off);
	s->len -= off;
}

static void
echo_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct slot *s = arg;
	char msg[ECHO_MSG];
	uint64_t t = now_ns();

	(void)fd; (void)what;
	if (s->st != S_ECHO || s->fd == -1)
		return;
	memcpy(msg, &s->lg->echo_seq, 8);
	memcpy(msg + 8, &t, 8);
	/* 16 bytes into an almost empty socket: a short write is an error. */
	if (send(s->fd, msg, sizeof(msg), MSG_NOSIGNAL) != (ssize_t)sizeof(msg)) {
		slot_fail(s, E_RESET);
		return;
	}
	s->lg->echo_seq++;
}

static void
echo_begin(struct slot *s)
{
	struct lg *lg = s->lg;
	struct timeval tv;
	double us = lg->interval_ms * 1000.0;
	char *end;
	size_t hlen;

	/* The echo head answered; any bytes after it are echo data. */
	end = strstr(s->buf, "\r\n\r\n");
	hlen = (size_t)(end + 4 - s->buf);
	memmove(s->buf, s->buf + hlen, s->len - hlen);
	s->len -= hlen;
	s->st = S_ECHO;
	tv.tv_sec = (time_t)(us / 1e6);
	tv.tv_usec = (suseconds_t)fmod(us, 1e6);
	lg->echo_timer = event_new(lg->base, -1, EV_PERSIST, echo_timer_cb, s);
	event_add(lg->echo_timer, &tv);
	slot_wait(s, EV_READ | EV_PERSIST);
}

static void
slot_cb(evutil_socket_t fd, short what, void *arg)
{
	struct slot *s = arg;
	struct lg *lg = s->lg;
	int err = 0;
	socklen_t el = sizeof(err);

	(void)fd; (void)what;
	switch (s->st) {
	case S_CONNECTING:
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) == -1 || err != 0) {
			slot_fail(s, E_CONNECT);
			return;
		}
		if (!lg->direct && !lg->mode_get) {
			s->st = S_PROXY_HEAD;
			s->len = 0;
			/* the CONNECT head is small: it goes out at once */
			if (send(s->fd, lg->req_connect, lg->req_connect_len, MSG_NOSIGNAL) !=
			    (ssize_t)lg->req_connect_len) {
				slot_fail(s, E_RESET);
				return;
			}
			slot_wait(s, EV_READ | EV_PERSIST);
			return;
		}
		if (lg->test == T_IDLE) {	/* direct: the connection is the tunnel */
			s->st = S_HELD;
			lg->opened++;
			slot_wait(s, EV_READ);
			idle_next(lg);
			return;
		}
		slot_send(s, lg->req_inner, lg->req_inner_len);
		return;
	case S_PROXY_HEAD:
		on_proxy_head(s);
		return;
	case S_WRITE:
		slot_send(s, s->wbuf + s->woff, s->wlen - s->woff);
		return;
	case S_REPLY:
		if (lg->test == T_ECHO) {
			ssize_t n = recv(s->fd, s->buf + s->len, SLOT_BUF - 1 - s->len, 0);

			if (n <= 0) {
				if (n < 0 && (errno == EAGAIN || errno == EINTR))
					return;
				slot_fail(s, n == 0 ? E_EOF : E_RESET);
				return;
			}
			s->len += (size_t)n;
			s->buf[s->len] = '\0';
			if (strstr(s->buf, "\r\n\r\n") == NULL) {
				if (s->len >= SLOT_BUF - 1)
					slot_fail(s, E_BADREPLY);
				return;
			}
			if (strncmp(s->buf, "HTTP/1.", 7) != 0 || strncmp(s->buf + 8, " 200", 4) != 0) {
				slot_fail(s, E_REFUSED);
				return;
			}
			echo_begin(s);
			return;
		}
		on_reply(s);
		return;
	case S_HELD:
		/* the proxy (or target) closed a held tunnel */
		slot_fail(s, E_EOF);
		return;
	case S_ECHO:
		on_echo(s);
		return;
	case S_DNS:
		on_dns(s);
		return;
	default:
		return;
	}
}

/* ---- RSS of the measured processes */

struct memstat {
	long	rss_kib;
	long	threads;
	long	procs;
};

static int
read_status(pid_t pid, long *rss, long *threads)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	*rss = 0;
	*threads = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			*rss = strtol(line + 6, NULL, 10);
		else if (strncmp(line, "Threads:", 8) == 0)
			*threads = strtol(line + 8, NULL, 10);
	}
	fclose(f);
	return 0;
}

/* The fields of /proc/PID/stat from the third (the state) on, in buf;
 * NULL when the process is gone or the line is malformed. "pid (comm) S
 * …": comm may hold spaces and ')', so they start after the last ')'. */
static const char *
proc_stat(pid_t pid, char *buf, size_t size)
{
	char path[64], *p;
	FILE *f;
	int got;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	got = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!got || (p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return NULL;
	return p + 2;
}

/* Field FIELD (numbered as in proc(5), >= 3) of the fields F3 that
 * proc_stat() returned, as a decimal within [0, max]; -1 otherwise. */
static int
stat_field(const char *f3, int field, unsigned long long max, unsigned long long *out)
{
	char num[24];
	size_t len;
	int i;

	for (i = 3; i < field; i++) {
		if ((f3 = strchr(f3, ' ')) == NULL)
			return -1;
		f3++;
	}
	len = strcspn(f3, " \n");
	if (len == 0 || len >= sizeof(num))
		return -1;
	memcpy(num, f3, len);
	num[len] = '\0';
	return bench_parse_num(num, 0, max, out);
}

static pid_t
read_ppid(pid_t pid)
{
	char buf[1024];
	const char *f3 = proc_stat(pid, buf, sizeof(buf));
	unsigned long long ppid;

	if (f3 == NULL || stat_field(f3, 4, INT_MAX, &ppid) == -1)
		return -1;
	return (pid_t)ppid;
}

/* Sums VmRSS and Threads over the pids (and, with --pid-tree, over all
 * their descendants). */
static void
mem_read(const struct lg *lg, struct memstat *m)
{
	pid_t set[4096];
	int n = 0, i, grew = 1, rounds = 0;
	long rss, thr;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < lg->npids; i++)
		set[n++] = lg->pids[i];
	while (lg->pid_tree && grew && rounds++ < 8) {
		DIR *d = opendir("/proc");
		struct dirent *de;

		grew = 0;
		if (d == NULL)
			break;
		while ((de = readdir(d)) != NULL && n < (int)(sizeof(set) / sizeof(set[0]))) {
			char *end;
			long p = strtol(de->d_name, &end, 10);
			pid_t pp;
			int j, known = 0;

			if (*end != '\0' || p <= 0)
				continue;
			for (j = 0; j < n; j++)
				if (set[j] == (pid_t)p)
					known = 1;
			if (known)
				continue;
			pp = read_ppid((pid_t)p);
			for (j = 0; j < n; j++)
				if (set[j] == pp) {
					set[n++] = (pid_t)p;
					grew = 1;
					break;
				}
		}
		closedir(d);
	}
	for (i = 0; i < n; i++) {
		if (read_status(set[i], &rss, &thr) == 0) {
			m->rss_kib += rss;
			m->threads += thr;
			m->procs++;
		}
	}
}

/* ---- CPU time of the measured processes */

/* utime + stime of the whole process (every thread, live or ended; not
 * its children), in seconds; -1 when it cannot be read. */
static double
proc_cpu_s(pid_t pid, long clk_tck)
{
	char buf[1024];
	const char *f3 = proc_stat(pid, buf, sizeof(buf));
	unsigned long long ut, st;

	if (f3 == NULL || stat_field(f3, 14, UINT64_MAX / 4, &ut) == -1 ||
	    stat_field(f3, 15, UINT64_MAX / 4, &st) == -1)
		return -1;
	return (double)(ut + st) / (double)clk_tck;
}

/* This process's user + system time, in seconds; -1 on failure. */
static double
self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		return -1;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* Arms the one-shot EV to fire at monotonic time AT (ns), or at once. */
static void
timer_at(struct event *ev, uint64_t at)
{
	uint64_t t = now_ns(), d = at > t ? at - t : 0;
	struct timeval tv;

	tv.tv_sec = (time_t)(d / 1000000000ull);
	tv.tv_usec = (suseconds_t)(d % 1000000000ull / 1000);
	event_add(ev, &tv);
}

static void
cpu_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd; (void)what;
	cpu_sample(arg);
}

/* Takes the next reading: the first at t_warm, the second at t_end (by
 * the timer, or by tick_cb when it ends the run first). */
static void
cpu_sample(struct lg *lg)
{
	int k = lg->cpu_n, i;

	if (k >= 2)
		return;
	lg->cpu_at[k] = now_ns();
	lg->cpu_self[k] = self_cpu_s();
	for (i = 0; i < lg->ncpu_pids; i++)
		lg->cpu_pid[i][k] = proc_cpu_s(lg->cpu_pids[i], lg->clk_tck);
	lg->cpu_n++;
	if (k == 0)
		timer_at(lg->cpu_timer, lg->t_end);
}

/* Takes a reading that is due at T: a download's reads of up to 16 MiB
 * in one callback would otherwise make the timer late by milliseconds. */
static void
cpu_due(struct lg *lg, uint64_t t)
{
	if (lg->cpu_n < 2 && t >= (lg->cpu_n == 0 ? lg->t_warm : lg->t_end)) {
		event_del(lg->cpu_timer);
		cpu_sample(lg);
	}
}

/* CPU seconds between the two readings; -1 when either failed. */
static double
cpu_delta(const double r[2])
{
	return r[0] < 0 || r[1] < 0 ? -1 : r[1] - r[0];
}

static void
print_cpu_value(const char *key, double v)
{
	if (v < 0)
		printf("\"%s\":null", key);
	else
		printf("\"%s\":%.3f", key, v);
}

/* ,"window_cpu_wall_s":…,"window_cpu_s":{"self":…,"PID":…} once both
 * readings were taken. */
static void
print_window_cpu(const struct lg *lg)
{
	char key[24];
	int i;

	if (lg->cpu_n < 2)
		return;
	printf(",\"window_cpu_wall_s\":%.4f,\"window_cpu_s\":{",
	    (double)(lg->cpu_at[1] - lg->cpu_at[0]) / 1e9);
	print_cpu_value("self", cpu_delta(lg->cpu_self));
	for (i = 0; i < lg->ncpu_pids; i++) {
		snprintf(key, sizeof(key), "%d", (int)lg->cpu_pids[i]);
		putchar(',');
		print_cpu_value(key, cpu_delta(lg->cpu_pid[i]));
	}
	putchar('}');
}

/* ---- the tests */

static void
finish(struct lg *lg)
{
	int i;

	lg->stopping = 1;
	for (i = 0; i < lg->nslots; i++)
		slot_close(&lg->slots[i]);
	event_base_loopbreak(lg->base);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lg *lg = arg;
	uint64_t t = now_ns(), lim = (uint64_t)(lg->timeout * 1e9);
	int i;

	(void)fd; (void)what;
	if (lg->test != T_IDLE && t >= lg->t_end) {
		if (lg->cpu_n == 1)
			cpu_sample(lg);
		finish(lg);
		return;
	}
	for (i = 0; i < lg->nslots; i++) {
		struct slot *s = &lg->slots[i];

		if (s->st == S_FREE || s->st == S_RETRY || s->st == S_HELD ||
		    s->st == S_ECHO)
			continue;
		if (t - s->t_start > lim)
			slot_fail(s, E_TIMEOUT);
	}
	if (lg->test == T_IDLE && !lg->open_phase_over && t >= lg->t_end) {
		lg->open_phase_over = 1;	/* out of time: measure what is open */
		lg->t_all_open = t;
		event_base_loopbreak(lg->base);
	}
}

/* Idle: keeps at most --concurrency tunnels opening at once; ends the open
 * phase once every tunnel is held or has failed. */
static void
idle_next(struct lg *lg)
{
	static int busy_loop;
	long opening;

	if (busy_loop || lg->open_phase_over)
		return;
	busy_loop = 1;
	for (;;) {
		opening = lg->started - lg->opened - lg->open_errors;
		if (opening >= lg->concurrency || lg->started >= lg->conns)
			break;
		slot_start(&lg->slots[lg->started]);
		lg->started++;
	}
	busy_loop = 0;
	if (lg->opened + lg->open_errors >= lg->conns) {
		lg->open_phase_over = 1;
		lg->t_all_open = now_ns();
		event_base_loopbreak(lg->base);
	}
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
print_common(const struct lg *lg, const char *test)
{
	char proxy[64];
	int i;

	if (lg->direct)
		snprintf(proxy, sizeof(proxy), "none");
	else
		snprintf(proxy, sizeof(proxy), "%s:%u", inet_ntoa(lg->proxy.sin_addr),
		    ntohs(lg->proxy.sin_port));
	printf("{\"tool\":\"loadgen\",\"test\":\"%s\",\"label\":", test);
	json_str(stdout, lg->label);
	printf(",\"proxy\":\"%s\",\"target\":", proxy);
	json_str(stdout, lg->target);
	printf(",\"ok\":%llu,\"completed\":%llu,\"attempts\":%llu,\"errors\":%llu,"
	    "\"error_kinds\":{", (unsigned long long)lg->ok, (unsigned long long)lg->completed,
	    (unsigned long long)lg->attempts, (unsigned long long)lg->errors);
	for (i = 0; i < E_NKINDS; i++)
		printf("%s\"%s\":%llu", i ? "," : "", err_names[i],
		    (unsigned long long)lg->errs[i]);
	printf("},\"cpu_s\":%.3f", fmax(self_cpu_s(), 0));
	print_window_cpu(lg);
}

static int
verdict(const struct lg *lg)
{
	double attempts = (double)(lg->ok + lg->errors);

	if (lg->ok == 0)
		return 1;
	if (attempts > 0 && (double)lg->errors * 100.0 > lg->max_err_pct * attempts)
		return 1;
	return 0;
}

static const char *
mode_name(const struct lg *lg)
{
	if (lg->test == T_DNS)
		return lg->dns_rcode == 3 ? "nxdomain" : "noerror";
	return lg->mode_get ? "get" : lg->mode_tls ? "tls" : "connect";
}

static int
run_rate(struct lg *lg)
{
	double window = lg->duration;
	double rate;
	int i;

	for (i = 0; i < lg->nslots; i++)
		slot_start(&lg->slots[i]);
	event_base_dispatch(lg->base);
	qsort(lg->lat.v, lg->lat.n, sizeof(uint32_t), cmp_u32);
	rate = (double)lg->ok / window;
	print_common(lg, lg->test == T_DNS ? "dns" : "rate");
	printf(",\"mode\":\"%s\",\"concurrency\":%d,\"duration_s\":%.3f,\"rate\":%.1f,"
	    "\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f}\n",
	    mode_name(lg),
	    lg->concurrency, window, rate, pct_ms(&lg->lat, 50), pct_ms(&lg->lat, 90),
	    pct_ms(&lg->lat, 99), pct_ms(&lg->lat, 100));
	printf("# %s %s %s: %.0f/s, p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, "
	    "%llu ok, %llu errors (c=%d, %.1f s)\n",
	    lg->test == T_DNS ? "dns" : "rate", mode_name(lg), lg->label, rate, pct_ms(&lg->lat, 50),
	    pct_ms(&lg->lat, 90), pct_ms(&lg->lat, 99), (unsigned long long)lg->ok,
	    (unsigned long long)lg->errors, lg->concurrency, window);
	return verdict(lg);
}

static int
run_throughput(struct lg *lg)
{
	double mib;
	int i;

	for (i = 0; i < lg->nslots; i++)
		slot_start(&lg->slots[i]);
	event_base_dispatch(lg->base);
	mib = (double)lg->body_bytes / (1024.0 * 1024.0) / lg->duration;
	/* a download cut by the end of the window is not an error */
	print_common(lg, "throughput");
	printf(",\"streams\":%d,\"bytes_per_request\":%llu,\"duration_s\":%.3f,"
	    "\"body_bytes\":%llu,\"downloads\":%llu,\"mib_s\":%.1f}\n",
	    lg->streams, (unsigned long long)lg->bytes_per_req, lg->duration,
	    (unsigned long long)lg->body_bytes, (unsigned long long)lg->downloads, mib);
	printf("# throughput %s: %.1f MiB/s with %d stream(s), %llu downloads, %llu errors\n",
	    lg->label, mib, lg->streams, (unsigned long long)lg->downloads,
	    (unsigned long long)lg->errors);
	if (lg->body_bytes == 0)
		return 1;
	if ((double)lg->errors * 100.0 > lg->max_err_pct * (double)(lg->downloads + lg->errors))
		return 1;
	return 0;
}

static void
sleep_loop(struct lg *lg, double secs)
{
	struct timeval tv;

	if (secs <= 0)
		return;
	tv.tv_sec = (time_t)secs;
	tv.tv_usec = (suseconds_t)((secs - (double)tv.tv_sec) * 1e6);
	event_base_loopexit(lg->base, &tv);
	event_base_dispatch(lg->base);
}

static int
run_idle(struct lg *lg)
{
	struct memstat before, after;
	double per = 0, open_s;
	long dropped_before_measure;
	int rc;

	mem_read(lg, &before);
	lg->t_end = lg->t0 + (uint64_t)(lg->timeout * 1e9) +
	    (uint64_t)lg->conns * 1000000ull;	/* open phase bound: timeout + 1 ms/tunnel */
	idle_next(lg);
	if (!lg->open_phase_over)
		event_base_dispatch(lg->base);	/* until every tunnel opened or failed */
	open_s = (double)(lg->t_all_open - lg->t0) / 1e9;
	sleep_loop(lg, lg->warmup);		/* settle */
	mem_read(lg, &after);
	dropped_before_measure = lg->held_dropped;
	if (lg->opened > 0)
		per = (double)(after.rss_kib - before.rss_kib) / (double)lg->opened;
	sleep_loop(lg, lg->hold);
	lg->ok = (uint64_t)(lg->opened - lg->held_dropped);
	print_common(lg, "idle");
	printf(",\"conns\":%ld,\"opened\":%ld,\"open_s\":%.3f,\"dropped\":%ld,"
	    "\"dropped_before_measure\":%ld,\"pids\":%d,\"procs\":%ld,"
	    "\"rss_before_kib\":%ld,\"rss_after_kib\":%ld,\"rss_per_tunnel_kib\":%.2f,"
	    "\"threads_before\":%ld,\"threads_after\":%ld}\n",
	    lg->conns, lg->opened, open_s, lg->held_dropped, dropped_before_measure,
	    lg->npids, after.procs, before.rss_kib, after.rss_kib, per,
	    before.threads, after.threads);
	printf("# idle %s: %ld/%ld tunnels held (opened in %.1f s); RSS %ld -> %ld KiB, "
	    "%.2f KiB per tunnel; threads %ld -> %ld; %ld process(es)\n",
	    lg->label, lg->opened, lg->conns, open_s, before.rss_kib, after.rss_kib, per,
	    before.threads, after.threads, after.procs);
	rc = lg->opened < lg->conns ||
	    (double)lg->held_dropped * 100.0 > lg->max_err_pct * (double)lg->conns;
	finish(lg);
	return rc;
}

static int
run_echo(struct lg *lg)
{
	struct slot *s = &lg->slots[0];
	double rate_expected;
	uint64_t lost;

	slot_start(s);
	event_base_dispatch(lg->base);
	qsort(lg->lat.v, lg->lat.n, sizeof(uint32_t), cmp_u32);
	lg->ok = lg->lat.n;
	lost = lg->echo_seq > lg->echo_recv ? lg->echo_seq - lg->echo_recv : 0;
	rate_expected = lg->duration * 1000.0 / lg->interval_ms;
	print_common(lg, "echo");
	printf(",\"interval_ms\":%.3f,\"duration_s\":%.3f,\"sent\":%llu,\"received\":%llu,"
	    "\"unanswered\":%llu,\"rtt_p50_ms\":%.3f,\"rtt_p99_ms\":%.3f,\"rtt_max_ms\":%.3f,"
	    "\"max_gap_ms\":%.3f}\n",
	    lg->interval_ms, lg->duration, (unsigned long long)lg->echo_seq,
	    (unsigned long long)lg->echo_recv, (unsigned long long)lost,
	    pct_ms(&lg->lat, 50), pct_ms(&lg->lat, 99), pct_ms(&lg->lat, 100),
	    (double)lg->echo_max_gap / 1e6);
	printf("# echo %s: %llu messages (every %.1f ms, ~%.0f expected), rtt p50 %.3f ms, "
	    "p99 %.3f ms, max %.3f ms; longest gap between answers %.3f ms\n",
	    lg->label, (unsigned long long)lg->lat.n, lg->interval_ms, rate_expected,
	    pct_ms(&lg->lat, 50), pct_ms(&lg->lat, 99), pct_ms(&lg->lat, 100),
	    (double)lg->echo_max_gap / 1e6);
	if (lg->lat.n == 0 || lg->errors > 0)
		return 1;
	if (lg->series_path != NULL && series_write(&lg->series, lg->series_path) == -1)
		return 1;
	return 0;
}

/* Appends the pid S to pids[MAX_PIDS]; -1 when it is not one or no room. */
static int
add_pid(pid_t *pids, int *n, const char *s)
{
	unsigned long long v;

	if (*n == MAX_PIDS || bench_parse_num(s, 1, 4194304, &v) == -1)
		return -1;
	pids[(*n)++] = (pid_t)v;
	return 0;
}

/* -1 (with a message) unless every pid has a readable /proc/PID/stat. */
static int
pids_exist(const char *opt, const pid_t *pids, int n)
{
	char buf[1024];
	int i;

	for (i = 0; i < n; i++) {
		if (proc_stat(pids[i], buf, sizeof(buf)) == NULL) {
			fprintf(stderr, "loadgen: --%s %d: no such process\n", opt, (int)pids[i]);
			return -1;
		}
	}
	return 0;
}

static char *xasprintf(size_t *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static char *
xasprintf(size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (p = malloc((size_t)n + 1)) == NULL) {
		perror("loadgen");
		exit(1);
	}
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len = (size_t)n;
	return p;
}

/* A TLS 1.3-shaped ClientHello record naming HOST (SNI) and carrying
 * BODY (the reply size bench/target reads from the session id) into
 * out[cap]; its length, or 0 when the name does not fit. */
static size_t
client_hello(const char *host, uint64_t body, unsigned char *out, size_t cap)
{
	size_t hl = strlen(host), n = 0, ext, hs, i;

	if (hl == 0 || hl > 253)
		return 0;
	ext = 4 + 2 + 3 + hl + 4 + 3;	/* server_name; supported_versions */
	hs = 2 + 32 + 1 + 32 + 2 + 2 + 2 + 2 + ext;
	if (5 + 4 + hs > cap)
		return 0;
#define PUT(b)	(out[n++] = (unsigned char)(b))
	PUT(0x16); PUT(3); PUT(1); PUT((4 + hs) >> 8); PUT(4 + hs);
	PUT(1); PUT(0); PUT(hs >> 8); PUT(hs);
	PUT(3); PUT(3);				/* legacy_version */
	for (i = 0; i < 32; i++)		/* random */
		PUT(0x5a ^ i);
	PUT(32);				/* legacy_session_id */
	for (i = 0; i < 8; i++)
		PUT(body >> (56 - 8 * i));
	for (i = 8; i < 32; i++)
		PUT(0);
	PUT(0); PUT(2); PUT(0x13); PUT(0x01);	/* TLS_AES_128_GCM_SHA256 */
	PUT(1); PUT(0);				/* compression: null */
	PUT(ext >> 8); PUT(ext);
	PUT(0); PUT(0); PUT((hl + 5) >> 8); PUT(hl + 5);	/* server_name */
	PUT((hl + 3) >> 8); PUT(hl + 3); PUT(0); PUT(hl >> 8); PUT(hl);
	memcpy(out + n, host, hl);
	n += hl;
	PUT(0); PUT(0x2b); PUT(0); PUT(3); PUT(2); PUT(3); PUT(4);	/* TLS 1.3 */
#undef PUT
	return n;
}

/* A query for the A record of NAME, id 0 (set per query), RD; its
 * length, or 0 when NAME is no host name. */
static size_t
dns_query(const char *name, unsigned char *q, size_t cap)
{
	static const unsigned char hdr[12] = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t n = sizeof(hdr), nl = strlen(name);
	const char *p = name, *dot;

	if (nl == 0 || nl > 253 || n + nl + 2 + 4 > cap)
		return 0;
	memcpy(q, hdr, sizeof(hdr));
	while (*p != '\0') {
		size_t ll;

		dot = strchr(p, '.');
		ll = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (ll == 0 || ll > 63)
			return 0;
		q[n++] = (unsigned char)ll;
		memcpy(q + n, p, ll);
		n += ll;
		p += ll + (dot != NULL);
	}
	q[n++] = 0;
	q[n++] = 0; q[n++] = 1;		/* A */
	q[n++] = 0; q[n++] = 1;		/* IN */
	return n;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "proxy",		required_argument, NULL, 'p' },
		{ "target",		required_argument, NULL, 't' },
		{ "connect",		required_argument, NULL, 'C' },
		{ "mode",		required_argument, NULL, 'm' },
		{ "concurrency",	required_argument, NULL, 'c' },
		{ "duration",		required_argument, NULL, 'd' },
		{ "warmup",		required_argument, NULL, 'w' },
		{ "timeout",		required_argument, NULL, 'T' },
		{ "label",		required_argument, NULL, 'L' },
		{ "max-error-pct",	required_argument, NULL, 'E' },
		{ "streams",		required_argument, NULL, 's' },
		{ "bytes",		required_argument, NULL, 'b' },
		{ "conns",		required_argument, NULL, 'n' },
		{ "pid",		required_argument, NULL, 'P' },
		{ "pid-tree",		no_argument,	   NULL, 'R' },
		{ "cpu-pid",		required_argument, NULL, 'U' },
		{ "hold",		required_argument, NULL, 'H' },
		{ "interval-ms",	required_argument, NULL, 'i' },
		{ "series",		required_argument, NULL, 'S' },
		{ "expect",		required_argument, NULL, 'X' },
		{ "names",		required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 }
	};
	struct lg lg;
	struct event_config *cfg;
	struct timeval tick = { 0, 100000 };
	const char *proxy = NULL, *target = NULL, *conn = NULL, *cmd;
	unsigned long long v;
	int ch, i, rc;

	if (argc < 2)
		usage();
	cmd = argv[1];
	memset(&lg, 0, sizeof(lg));
	if (strcmp(cmd, "rate") == 0)
		lg.test = T_RATE;
	else if (strcmp(cmd, "throughput") == 0)
		lg.test = T_THROUGHPUT;
	else if (strcmp(cmd, "idle") == 0)
		lg.test = T_IDLE;
	else if (strcmp(cmd, "echo") == 0)
		lg.test = T_ECHO;
	else if (strcmp(cmd, "dns") == 0)
		lg.test = T_DNS;
	else
		usage();
	lg.label = "-";
	lg.concurrency = lg.test == T_IDLE ? 256 : 32;
	lg.duration = 5;
	lg.warmup = lg.test == T_RATE ? 1 : (lg.test == T_IDLE ? 1 : 0.5);
	lg.timeout = 10;
	lg.max_err_pct = 1;
	lg.streams = 1;
	lg.bytes_per_req = 1ull << 30;
	lg.conns = 1000;
	lg.interval_ms = 1;
	optind = 2;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': proxy = optarg; break;
		case 't': target = optarg; break;
		case 'C': conn = optarg; break;
		case 'L': lg.label = optarg; break;
		case 'm':
			if (strcmp(optarg, "get") == 0)
				lg.mode_get = 1;
			else if (strcmp(optarg, "tls") == 0)
				lg.mode_tls = 1;
			else if (strcmp(optarg, "connect") != 0)
				usage();
			break;
		case 'c':
			if (bench_parse_num(optarg, 1, MAX_CONC, &v) == -1)
				usage();
			lg.concurrency = (int)v;
			break;
		case 'd':
			if (parse_double(optarg, 0.05, 3600, &lg.duration) == -1)
				usage();
			break;
		case 'w':
			if (parse_double(optarg, 0, 600, &lg.warmup) == -1)
				usage();
			break;
		case 'T':
			if (parse_double(optarg, 0.05, 600, &lg.timeout) == -1)
				usage();
			break;
		case 'E':
			if (parse_double(optarg, 0, 100, &lg.max_err_pct) == -1)
				usage();
			break;
		case 's':
			if (bench_parse_num(optarg, 1, 1024, &v) == -1)
				usage();
			lg.streams = (int)v;
			break;
		case 'b':
			if (bench_parse_num(optarg, 1, 1ull << 40, &v) == -1)
				usage();
			lg.bytes_per_req = v;
			break;
		case 'n':
			if (bench_parse_num(optarg, 1, MAX_CONC, &v) == -1)
				usage();
			lg.conns = (long)v;
			break;
		case 'P':
			if (add_pid(lg.pids, &lg.npids, optarg) == -1)
				usage();
			break;
		case 'U':
			if (add_pid(lg.cpu_pids, &lg.ncpu_pids, optarg) == -1)
				usage();
			break;
		case 'R': lg.pid_tree = 1; break;
		case 'H':
			if (parse_double(optarg, 0, 3600, &lg.hold) == -1)
				usage();
			break;
		case 'i':
			if (parse_double(optarg, 0.1, 1000, &lg.interval_ms) == -1)
				usage();
			break;
		case 'S': lg.series_path = optarg; break;
		case 'N':
			if (bench_parse_num(optarg, 1, 256, &v) == -1)
				usage();
			lg.dns_names = (unsigned)v;
			break;
		case 'X':
			if (strcmp(optarg, "nxdomain") == 0)
				lg.dns_rcode = 3;
			else if (strcmp(optarg, "noerror") != 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc || proxy == NULL || target == NULL ||
	    strlen(target) >= sizeof(lg.target) ||
	    (strchr(target, ':') == NULL) != (lg.test == T_DNS))
		usage();
	snprintf(lg.target, sizeof(lg.target), "%s", target);
	if (lg.test == T_DNS) {
		unsigned k, n = lg.dns_names ? lg.dns_names : 1;
		char name[300];

		lg.dns_q = calloc(n, sizeof(*lg.dns_q));
		lg.dns_qlen = calloc(n, sizeof(*lg.dns_qlen));
		if (lg.dns_q == NULL || lg.dns_qlen == NULL)
			return 1;
		for (k = 0; k < n; k++) {
			if (lg.dns_names)
				snprintf(name, sizeof(name), "d%u.%s", k, target);
			else
				snprintf(name, sizeof(name), "%s", target);
			if ((lg.dns_qlen[k] = dns_query(name, lg.dns_q[k], sizeof(lg.dns_q[k]))) == 0)
				break;
		}
		if (k < n || bench_parse_loopback(proxy, &lg.proxy) == -1 || lg.mode_get ||
		    lg.mode_tls) {
			fprintf(stderr, "loadgen: dns needs --proxy 127.x.y.z:PORT and a name\n");
			return 2;
		}
		lg.dns_names = n;
	} else if (strcmp(proxy, "none") == 0) {
		lg.direct = 1;
		if (bench_parse_loopback(conn != NULL ? conn : target, &lg.connect_to) == -1) {
			fprintf(stderr, "loadgen: with --proxy none, --target (or --connect) "
			    "must be 127.x.y.z:PORT\n");
			return 2;
		}
	} else if (bench_parse_local(proxy, &lg.proxy) == -1) {
		fprintf(stderr, "loadgen: --proxy must be 127.x.y.z:PORT, 10.x.y.z:PORT or none\n");
		return 2;
	}
	if (((lg.test == T_ECHO || lg.test == T_IDLE) && (lg.mode_get || lg.mode_tls)) ||
	    (lg.test != T_ECHO && lg.series_path != NULL) || (lg.mode_tls && lg.mode_get) ||
	    ((lg.dns_rcode != 0 || lg.dns_names != 0) && lg.test != T_DNS))
		usage();

	lg.req_connect = xasprintf(&lg.req_connect_len,
	    "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (lg.mode_tls) {
		char host[256];
		const char *colon = strrchr(target, ':');
		uint64_t body = lg.test == T_THROUGHPUT ? lg.bytes_per_req : 0;

		snprintf(host, sizeof(host), "%.*s", (int)(colon - target), target);
		if ((lg.req_inner = malloc(512)) == NULL)
			return 1;
		if ((lg.req_inner_len = client_hello(host, body, (unsigned char *)lg.req_inner,
		    512)) == 0)
			usage();
	} else if (lg.test == T_DNS) {
		lg.req_inner = NULL;
	} else if (lg.test == T_THROUGHPUT) {
		char path_b[64];

		snprintf(path_b, sizeof(path_b), "/bytes/%llu", (unsigned long long)lg.bytes_per_req);
		lg.req_inner = xasprintf(&lg.req_inner_len,
		    "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path_b, target);
		if (lg.mode_get)
			usage();
	} else if (lg.test == T_ECHO) {
		lg.req_inner = xasprintf(&lg.req_inner_len,
		    "GET /echo HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target);
	} else if (lg.mode_get && !lg.direct) {
		lg.req_inner = xasprintf(&lg.req_inner_len,
		    "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		    target, target);
	} else {
		lg.req_inner = xasprintf(&lg.req_inner_len,
		    "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target);
	}

	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if ((cfg = event_config_new()) == NULL)
		return 1;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	lg.base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (lg.base == NULL)
		return 1;

	switch (lg.test) {
	case T_RATE: lg.nslots = lg.concurrency; break;
	case T_THROUGHPUT: lg.nslots = lg.streams; break;
	case T_IDLE: lg.nslots = (int)lg.conns; break;
	case T_ECHO: lg.nslots = 1; break;
	case T_DNS: lg.nslots = lg.concurrency; break;
	}
	if ((lg.slots = calloc((size_t)lg.nslots, sizeof(*lg.slots))) == NULL) {
		perror("loadgen");
		return 1;
	}
	for (i = 0; i < lg.nslots; i++) {
		lg.slots[i].lg = &lg;
		lg.slots[i].fd = -1;
		lg.slots[i].ev = event_new(lg.base, -1, 0, slot_cb, &lg.slots[i]);
		if (lg.slots[i].ev == NULL)
			return 1;
	}
	lg.t0 = now_ns();
	lg.series.rt_off_ns = realtime_offset_ns();
	lg.t_warm = lg.t0 + (uint64_t)(lg.warmup * 1e9);
	lg.t_end = lg.t_warm + (uint64_t)(lg.duration * 1e9);
	lg.tick = event_new(lg.base, -1, EV_PERSIST, tick_cb, &lg);
	event_add(lg.tick, &tick);
	if (pids_exist("pid", lg.pids, lg.npids) == -1 ||
	    pids_exist("cpu-pid", lg.cpu_pids, lg.ncpu_pids) == -1)
		return 2;
	if ((lg.clk_tck = sysconf(_SC_CLK_TCK)) <= 0) {
		perror("loadgen: sysconf(_SC_CLK_TCK)");
		return 1;
	}
	if (lg.test != T_IDLE) {	/* idle has no measured window */
		if ((lg.cpu_timer = event_new(lg.base, -1, 0, cpu_timer_cb, &lg)) == NULL)
			return 1;
		timer_at(lg.cpu_timer, lg.t_warm);
	}

	switch (lg.test) {
	case T_RATE: case T_DNS: rc = run_rate(&lg); break;
	case T_THROUGHPUT: rc = run_throughput(&lg); break;
	case T_IDLE: rc = run_idle(&lg); break;
	default: rc = run_echo(&lg); break;
	}
	fflush(stdout);
	for (i = 0; i < lg.nslots; i++)
		event_free(lg.slots[i].ev);
	if (lg.echo_timer != NULL)
		event_free(lg.echo_timer);
	if (lg.cpu_timer != NULL)
		event_free(lg.cpu_timer);
	event_free(lg.tick);
	event_base_free(lg.base);
	free(lg.slots);
	free(lg.lat.v);
	free(lg.series.v);
	free(lg.req_connect);
	free(lg.req_inner);
	free(lg.dns_q);
	free(lg.dns_qlen);
	return rc;
}
