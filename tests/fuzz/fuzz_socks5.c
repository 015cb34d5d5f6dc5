/* proto/socks5: socks5_parse_greeting and socks5_parse_request, on the
 * input alone and as a greeting followed by a request (as a client
 * sends them).
 *
 * Beyond "no crash": the verdict on every prefix is "need more" or the
 * verdict on the whole (socks5.h: fields are checked in wire order); a
 * frame taken whole is not longer than the input and bytes after it are
 * not read; a refusal carries one of the documented reply codes and a
 * zeroed request; an accepted destination is in dest's normal form. */
#include <string.h>

#include "proto/socks5.h"
#include "tests/fuzz/fuzz.h"

#define PREFIX_MAX	300	/* past SOCKS5_REQ_MAX: every prefix checked */

static void
check_greeting(const unsigned char *b, size_t len)
{
	int noauth = -1, na = -1;
	long r = socks5_parse_greeting(b, len, &noauth), p;
	size_t k;

	FUZZ_CHECK(r >= -1 && r <= (long)len && r <= SOCKS5_GREETING_MAX);
	FUZZ_CHECK(r != 0 || noauth == 0);
	if (r > 0) {
		FUZZ_CHECK(r == 2 + b[1] && b[0] == SOCKS5_VERSION);
		FUZZ_CHECK(noauth == (memchr(b + 2, SOCKS5_METHOD_NOAUTH,
		    (size_t)r - 2) != NULL));
	}
	for (k = 0; k < len && k < PREFIX_MAX; k++) {
		p = socks5_parse_greeting(b, k, &na);
		FUZZ_CHECK(p == 0 || p == r);
		if (p > 0)
			FUZZ_CHECK(na == noauth);
	}
}

static long
check_request(const unsigned char *b, size_t len)
{
	static const struct socks5_req zero;
	struct socks5_req req, rq;
	unsigned char reply = 0xee, rp;
	char buf[DEST_HOST_MAX + 16], err[128];
	struct dest d;
	long r = socks5_parse_request(b, len, &req, &reply), p;
	size_t k;
	int n;

	FUZZ_CHECK(r >= -1 && r <= (long)len && r <= SOCKS5_REQ_MAX);
	if (r == -1) {
		FUZZ_CHECK(reply == SOCKS5_REP_SYNTAX ||
		    reply == SOCKS5_REP_CMD_UNSUPPORTED ||
		    reply == SOCKS5_REP_ATYP_UNSUPPORTED);
		FUZZ_CHECK(memcmp(&req, &zero, sizeof(req)) == 0);
	} else if (r == 0) {
		FUZZ_CHECK(memcmp(&req, &zero, sizeof(req)) == 0);
	} else {
		FUZZ_CHECK(req.cmd == SOCKS5_CMD_CONNECT && req.dest.port != 0);
		FUZZ_CHECK(r >= 8);	/* a one-byte domain */
		n = dest_format(&req.dest, buf, sizeof(buf));
		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(dest_parse_authority(buf, (size_t)n, &d, err,
		    sizeof(err)) == 0);
		FUZZ_CHECK(memcmp(&d, &req.dest, sizeof(d)) == 0);
		/* A domain ATYP never yields an IPv6 literal. */
		FUZZ_CHECK(b[3] != 0x03 || req.dest.kind != DEST_IPV6);
	}
	for (k = 0; k < len && k < PREFIX_MAX; k++) {
		/* An exact-size prefix: ASan sees a read past it. */
		unsigned char *c = (unsigned char *)fuzz_dup(b, k);

		rp = 0xee;
		p = socks5_parse_request(c, k, &rq, &rp);
		free(c);
		FUZZ_CHECK(p == 0 || p == r);
		if (p == -1)
			FUZZ_CHECK(rp == reply);
		if (p > 0)
			FUZZ_CHECK(memcmp(&rq, &req, sizeof(rq)) == 0);
	}
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *b = (unsigned char *)fuzz_dup(data, size);
	int noauth;
	long g;

	check_greeting(b, size);
	check_request(b, size);
	/* Greeting then request in one buffer. */
	g = socks5_parse_greeting(b, size, &noauth);
	if (g > 0)
		check_request(b + g, size - (size_t)g);
	free(b);
	return 0;
}
