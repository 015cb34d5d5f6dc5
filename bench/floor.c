/* bench/floor: the least a CONNECT relay can do, as a yardstick for the
 * throughput sections. It checks nothing (no policy, no DNS, no SNI, no
 * logging, no bounds beyond the bench's own), reads the CONNECT head,
 * connects to the loopback address it names, answers 200 and then moves
 * the bytes with splice(2) through a pipe in each direction, one thread
 * per direction blocking in the kernel. Whatever it costs is the TCP work
 * of the second connection plus two splices: a cost every user-space
 * relay pays, so its MiB/s bounds what any proxy can reach here.
 *
 *   floor --listen 127.0.0.1:PORT
 *
 * Loopback only (bench_parse_loopback) for both its listener and the
 * addresses it connects to. Never run it anywhere else: it is an open
 * relay to 127.0.0.0/8. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/common.h"

#define HEAD_MAX	4096
#define PIPE_SIZE	(1 << 20)	/* as the guard's relay (RELAY_PIPE_SIZE) */

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
		n = splice(h->from, NULL, p[1], NULL, PIPE_SIZE, SPLICE_F_MOVE | SPLICE_F_MORE);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		while (n > 0) {
			m = splice(p[0], NULL, h->to, NULL, (size_t)n,
			    SPLICE_F_MOVE | SPLICE_F_MORE);
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
	if (read_head(t->client, head, sizeof(head)) == -1 ||
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

int
main(int argc, char **argv)
{
	struct sockaddr_in sin;
	pthread_attr_t attr;
	int lfd, one = 1;

	if (argc != 3 || strcmp(argv[1], "--listen") != 0 ||
	    bench_parse_loopback(argv[2], &sin) == -1) {
		fprintf(stderr, "usage: floor --listen 127.x.y.z:PORT\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 1024) == -1) {
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
