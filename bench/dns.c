/*
 * dns: the benchmark's DNS server, UDP only, one thread, fast enough that the
 * name run measures the proxies and not the resolver they ask.
 * (tests/integration/dnsd.py, in Python, tops out near 3,000 queries/s on
 * two cores: below the rate of the proxies under test.)
 *
 *   dns --listen 127.x.y.z:PORT --name NAME=IPv4 [--name ...]
 *       [--count-file FILE] [--ready FILE]
 *
 * A question for a listed NAME (case-insensitive, no trailing dot) of type A
 * is answered with its address, TTL 0; any other type for a listed name gets
 * an empty NOERROR answer (NODATA); an unlisted name gets NXDOMAIN. Queries
 * that do not parse are dropped. The number of queries received is written
 * to --count-file (atomically, at most every 50 ms while it changes).
 * Loopback only. Ends on SIGTERM/SIGINT.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES	80
#define NAME_MAX_LEN	253

struct entry {
	char		name[NAME_MAX_LEN + 1];
	struct in_addr	addr;
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: dns --listen 127.x.y.z:PORT --name NAME=IPv4 [--name ...]\n"
	    "           [--count-file FILE] [--ready FILE]\n");
	exit(2);
}

static int
write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL)
		return -1;
	if (fputs(text, f) == EOF) {
		fclose(f);
		return -1;
	}
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

/* Reads the question name at q[0..len) into out (dotted, lower-case).
 * Returns the bytes the name took, or -1. No compression in questions. */
static int
read_qname(const unsigned char *q, size_t len, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	while (i < len) {
		size_t l = q[i++];

		if (l == 0) {
			if (o == 0 && outlen > 0)
				out[0] = '\0';
			else
				out[o - 1] = '\0';	/* drop the last dot */
			return (int)i;
		}
		if (l > 63 || i + l > len || o + l + 1 > outlen)
			return -1;
		for (size_t k = 0; k < l; k++) {
			unsigned char c = q[i + k];

			out[o++] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
		}
		out[o++] = '.';
		i += l;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen",	required_argument, NULL, 'l' },
		{ "name",	required_argument, NULL, 'n' },
		{ "count-file",	required_argument, NULL, 'c' },
		{ "ready",	required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	struct entry names[MAX_NAMES];
	struct sockaddr_in sin;
	const char *listen_at = NULL, *count_file = NULL, *ready = NULL;
	unsigned long long queries = 0, written = ~0ull;
	struct timespec last = { 0, 0 };
	int nnames = 0, ch, fd;

	memset(&sin, 0, sizeof(sin));
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen_at = optarg;
			break;
		case 'n': {
			const char *eq = strchr(optarg, '=');

			if (nnames == MAX_NAMES || eq == NULL || eq == optarg ||
			    (size_t)(eq - optarg) > NAME_MAX_LEN ||
			    inet_pton(AF_INET, eq + 1, &names[nnames].addr) != 1)
				usage();
			memcpy(names[nnames].name, optarg, (size_t)(eq - optarg));
			names[nnames].name[eq - optarg] = '\0';
			nnames++;
			break;
		}
		case 'c':
			count_file = optarg;
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			usage();
		}
	}
	if (listen_at == NULL || optind != argc)
		usage();
	{
		char host[64];
		const char *colon = strrchr(listen_at, ':');
		char *end;
		long port;

		if (colon == NULL || (size_t)(colon - listen_at) >= sizeof(host))
			usage();
		memcpy(host, listen_at, (size_t)(colon - listen_at));
		host[colon - listen_at] = '\0';
		port = strtol(colon + 1, &end, 10);
		sin.sin_family = AF_INET;
		if (*end != '\0' || port < 1 || port > 65535 ||
		    inet_pton(AF_INET, host, &sin.sin_addr) != 1 ||
		    (ntohl(sin.sin_addr.s_addr) >> 24) != 127)
			usage();
		sin.sin_port = htons((uint16_t)port);
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		perror("dns: bind");
		return 1;
	}
	{
		int sz = 4 << 20;

		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	if (ready != NULL && write_atomic(ready, "ready\n") == -1) {
		perror("dns: --ready");
		return 1;
	}
	while (!stop) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		unsigned char q[512], a[600];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		char qname[NAME_MAX_LEN + 2];
		struct timespec now;
		ssize_t n;
		int nl, i, hit = -1;
		uint16_t qtype;
		size_t alen;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (count_file != NULL && queries != written &&
		    (now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >= 50) {
			char text[32];

			snprintf(text, sizeof(text), "%llu\n", queries);
			if (write_atomic(count_file, text) == 0)
				written = queries;
			last = now;
		}
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recvfrom(fd, q, sizeof(q), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0)
			continue;
		queries++;
		/* header: QR=0, one question */
		if (n < 12 + 5 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1)
			continue;
		nl = read_qname(q + 12, (size_t)n - 12, qname, sizeof(qname));
		if (nl < 0 || 12 + (size_t)nl + 4 > (size_t)n)
			continue;
		qtype = (uint16_t)(q[12 + nl] << 8 | q[12 + nl + 1]);
		for (i = 0; i < nnames; i++)
			if (strcasecmp(qname, names[i].name) == 0)
				hit = i;
		alen = 12 + (size_t)nl + 4;
		memcpy(a, q, alen);
		a[2] = (unsigned char)(0x84 | (q[2] & 0x01));	/* QR, AA, RD copied */
		a[3] = hit < 0 ? 3 : 0;				/* NXDOMAIN or NOERROR */
		a[6] = a[7] = a[8] = a[9] = a[10] = a[11] = 0;
		if (hit >= 0 && qtype == 1) {
			static const unsigned char rr[] = {
				0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4
			};

			a[7] = 1;
			memcpy(a + alen, rr, sizeof(rr));
			alen += sizeof(rr);
			memcpy(a + alen, &names[hit].addr, 4);
			alen += 4;
		}
		(void)sendto(fd, a, alen, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
	}
	if (count_file != NULL) {
		char text[32];

		snprintf(text, sizeof(text), "%llu\n", queries);
		(void)write_atomic(count_file, text);
	}
	return 0;
}
