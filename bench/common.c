#include <arpa/inet.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/common.h"

int
bench_parse_num(const char *s, unsigned long long min, unsigned long long max,
    unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int
parse_in(const char *s, struct sockaddr_in *sin, int ten_ok)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	unsigned long long port;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1 ||
	    bench_parse_num(colon + 1, 1, 65535, &port) == -1 ||
	    ((ntohl(sin->sin_addr.s_addr) >> 24) != 127 &&
	    (!ten_ok || (ntohl(sin->sin_addr.s_addr) >> 24) != 10)))
		return -1;
	sin->sin_port = htons((uint16_t)port);
	return 0;
}

int
bench_parse_loopback(const char *s, struct sockaddr_in *sin)
{
	return parse_in(s, sin, 0);
}

int
bench_parse_local(const char *s, struct sockaddr_in *sin)
{
	return parse_in(s, sin, 1);
}
