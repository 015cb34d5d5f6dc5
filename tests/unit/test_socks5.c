/* Unit tests for proto/socks5: RFC 1928 greeting and request frames.
 * Hostile cases are named for the attack they stand for. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto/socks5.h"

/* Builds VER CMD RSV ATYP=3 LEN name PORT into out; returns its length. */
static size_t
domain_req(unsigned char *out, unsigned char cmd, const char *name,
    size_t nlen, uint16_t port)
{
	size_t n = 0;

	out[n++] = 5;
	out[n++] = cmd;
	out[n++] = 0;
	out[n++] = 3;
	out[n++] = (unsigned char)nlen;
	memcpy(out + n, name, nlen);
	n += nlen;
	out[n++] = (unsigned char)(port >> 8);
	out[n++] = (unsigned char)port;
	return n;
}

/* Feeds every proper prefix (all must ask for more, or all must already
 * give the final verdict), then the whole frame; returns the verdict. */
static long
request_all_prefixes(const unsigned char *b, size_t len,
    struct socks5_req *r, unsigned char *reply)
{
	long whole, rc;
	unsigned char rep_whole = 0xee, rep;
	size_t i;

	*reply = 0xee;
	whole = socks5_parse_request(b, len, r, &rep_whole);
	for (i = 0; i < len; i++) {
		struct socks5_req tmp;

		rep = 0xee;
		rc = socks5_parse_request(b, i, &tmp, &rep);
		if (rc == 0)
			continue;
		/* An early verdict must be the verdict on the whole frame. */
		assert_int_equal(rc, -1);
		assert_int_equal(whole, -1);
		assert_int_equal(rep, rep_whole);
	}
	*reply = rep_whole;
	return whole;
}

static void
expect_refused(const unsigned char *b, size_t len, unsigned char code)
{
	struct socks5_req r;
	unsigned char reply;

	assert_int_equal(request_all_prefixes(b, len, &r, &reply), -1);
	assert_int_equal(reply, code);
	/* A refusal leaves nothing usable behind. */
	assert_int_equal(r.cmd, 0);
	assert_int_equal(r.dest.kind, 0);
	assert_string_equal(r.dest.host, "");
	assert_int_equal(r.dest.port, 0);
}

static void
expect_domain_refused(const char *name, size_t nlen)
{
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n = domain_req(b, 1, name, nlen, 443);

	expect_refused(b, n, SOCKS5_REP_SYNTAX);
}

#define DOMAIN_REFUSED(lit)	expect_domain_refused((lit), sizeof(lit) - 1)

/* Greeting */

static void
test_greeting_noauth_offered(void **state)
{
	const unsigned char g[] = { 5, 2, 0x02, 0x00 };
	int noauth = -1;

	(void)state;
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), 4);
	assert_int_equal(noauth, 1);
}

static void
test_greeting_without_noauth_gets_no_acceptable_method(void **state)
{
	const unsigned char g[] = { 5, 2, 0x01, 0x02 };	/* GSSAPI, user/pass */
	int noauth = -1;

	(void)state;
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), 4);
	assert_int_equal(noauth, 0);
}

static void
test_greeting_split_byte_by_byte_waits_until_complete(void **state)
{
	const unsigned char g[] = { 5, 3, 0x01, 0x02, 0x00 };
	int noauth;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(g); i++)
		assert_int_equal(socks5_parse_greeting(g, i, &noauth), 0);
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), 5);
	assert_int_equal(noauth, 1);
}

static void
test_greeting_refuses_nmethods_zero(void **state)
{
	const unsigned char g[] = { 5, 0 };
	int noauth;

	(void)state;
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), -1);
}

static void
test_greeting_refuses_socks4_request(void **state)
{
	/* SOCKS4 CONNECT 127.0.0.1:80, user "" */
	const unsigned char g[] = { 4, 1, 0, 80, 127, 0, 0, 1, 0 };
	int noauth;

	(void)state;
	assert_int_equal(socks5_parse_greeting(g, 1, &noauth), -1);
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), -1);
}

static void
test_greeting_leaves_pipelined_request_unread(void **state)
{
	const unsigned char g[] = { 5, 1, 0, 5, 1, 0, 1, 1, 2, 3, 4, 0, 80 };
	int noauth;

	(void)state;
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), 3);
	assert_int_equal(noauth, 1);
}

static void
test_greeting_with_255_methods(void **state)
{
	unsigned char g[SOCKS5_GREETING_MAX];
	int noauth;

	(void)state;
	memset(g, 0x01, sizeof(g));
	g[0] = 5;
	g[1] = 255;
	g[sizeof(g) - 1] = 0x00;
	assert_int_equal(socks5_parse_greeting(g, sizeof(g) - 1, &noauth), 0);
	assert_int_equal(socks5_parse_greeting(g, sizeof(g), &noauth), 257);
	assert_int_equal(noauth, 1);
}

/* Request: each ATYP */

static void
test_request_ipv4(void **state)
{
	const unsigned char b[] = { 5, 1, 0, 1, 93, 184, 216, 34, 0x01, 0xbb };
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	assert_int_equal(request_all_prefixes(b, sizeof(b), &r, &reply), 10);
	assert_int_equal(r.cmd, SOCKS5_CMD_CONNECT);
	assert_int_equal(r.dest.kind, DEST_IPV4);
	assert_string_equal(r.dest.host, "93.184.216.34");
	assert_int_equal(r.dest.port, 443);
	assert_memory_equal(r.dest.addr, b + 4, 4);
}

static void
test_request_ipv4_zero_and_loopback_pass_syntax(void **state)
{
	/* Syntax only: classification refuses them later (reply 0x02). */
	const unsigned char z[] = { 5, 1, 0, 1, 0, 0, 0, 0, 0, 80 };
	const unsigned char l[] = { 5, 1, 0, 1, 127, 0, 0, 1, 0, 80 };
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	assert_int_equal(socks5_parse_request(z, sizeof(z), &r, &reply), 10);
	assert_string_equal(r.dest.host, "0.0.0.0");
	assert_int_equal(socks5_parse_request(l, sizeof(l), &r, &reply), 10);
	assert_string_equal(r.dest.host, "127.0.0.1");
}

static void
test_request_ipv6_normalised_rfc5952(void **state)
{
	const unsigned char b[] = { 5, 1, 0, 4,
	    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	    0x00, 0x50 };
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	assert_int_equal(request_all_prefixes(b, sizeof(b), &r, &reply), 22);
	assert_int_equal(r.dest.kind, DEST_IPV6);
	assert_string_equal(r.dest.host, "2001:db8::1");
	assert_int_equal(r.dest.port, 80);
	assert_memory_equal(r.dest.addr, b + 4, 16);
}

static void
test_request_ipv4_mapped_ipv6_in_hex_not_dotted(void **state)
{
	/* inet_ntop would print ::ffff:127.0.0.1, which dest refuses. */
	const unsigned char b[] = { 5, 1, 0, 4,
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1,
	    0x01, 0xbb };
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	assert_int_equal(socks5_parse_request(b, sizeof(b), &r, &reply), 22);
	assert_int_equal(r.dest.kind, DEST_IPV6);
	assert_string_equal(r.dest.host, "::ffff:7f00:1");
}

static void
test_request_ipv6_unspecified_and_loopback(void **state)
{
	unsigned char b[22] = { 5, 1, 0, 4 };
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	b[21] = 1;
	assert_int_equal(socks5_parse_request(b, sizeof(b), &r, &reply), 22);
	assert_string_equal(r.dest.host, "::");
	b[19] = 1;
	assert_int_equal(socks5_parse_request(b, sizeof(b), &r, &reply), 22);
	assert_string_equal(r.dest.host, "::1");
}

static void
test_request_domain_lower_cased_trailing_dot_removed(void **state)
{
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n = domain_req(b, 1, "Api.Example.COM.", 16, 8443);
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	assert_int_equal(request_all_prefixes(b, n, &r, &reply), (long)n);
	assert_int_equal(r.dest.kind, DEST_NAME);
	assert_string_equal(r.dest.host, "api.example.com");
	assert_int_equal(r.dest.port, 8443);
}

static void
test_request_domain_holding_dotted_quad_is_ipv4(void **state)
{
	/* Same as the CONNECT path: a strict dotted quad is a literal, then
	 * classified like any other. */
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n = domain_req(b, 1, "10.0.0.1", 8, 22);
	struct socks5_req r;
	unsigned char reply;

	(void)state;
	assert_int_equal(socks5_parse_request(b, n, &r, &reply), (long)n);
	assert_int_equal(r.dest.kind, DEST_IPV4);
	assert_string_equal(r.dest.host, "10.0.0.1");
}

static void
test_request_domain_of_255_bytes_is_too_long(void **state)
{
	char name[255];
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n, i;

	(void)state;
	for (i = 0; i < sizeof(name); i++)
		name[i] = (i % 50 == 49) ? '.' : 'a';
	n = domain_req(b, 1, name, sizeof(name), 443);
	assert_int_equal(n, SOCKS5_REQ_MAX);
	expect_refused(b, n, SOCKS5_REP_SYNTAX);
}

static void
test_request_domain_of_253_bytes_accepted(void **state)
{
	char name[253];
	unsigned char b[SOCKS5_REQ_MAX];
	struct socks5_req r;
	unsigned char reply;
	size_t n, i;

	(void)state;
	for (i = 0; i < sizeof(name); i++)
		name[i] = (i % 50 == 49) ? '.' : 'a';
	n = domain_req(b, 1, name, sizeof(name), 443);
	assert_int_equal(socks5_parse_request(b, n, &r, &reply), (long)n);
	assert_int_equal(strlen(r.dest.host), 253);
}

/* Request: hostile destinations */

static void
test_refuses_domain_length_zero(void **state)
{
	const unsigned char b[] = { 5, 1, 0, 3, 0, 0x01, 0xbb };

	(void)state;
	expect_refused(b, sizeof(b), SOCKS5_REP_SYNTAX);
	expect_refused(b, 5, SOCKS5_REP_SYNTAX);	/* known at the length byte */
}

static void
test_refuses_domain_with_nul(void **state)
{
	(void)state;
	DOMAIN_REFUSED("example.com\0.evil.test");
	DOMAIN_REFUSED("\0");
	DOMAIN_REFUSED("example.com\0");
}

static void
test_refuses_domain_short_ipv4_127_1(void **state)
{
	(void)state;
	DOMAIN_REFUSED("127.1");
	DOMAIN_REFUSED("2130706433");
	DOMAIN_REFUSED("0x7f.0.0.1");
	DOMAIN_REFUSED("0177.0.0.1");
	DOMAIN_REFUSED("0x7f000001");
	DOMAIN_REFUSED("127.0.0.1.");
}

static void
test_refuses_domain_with_userinfo(void **state)
{
	(void)state;
	DOMAIN_REFUSED("a.b@c");
	DOMAIN_REFUSED("user@example.com");
}

static void
test_refuses_domain_with_percent_encoding(void **state)
{
	(void)state;
	DOMAIN_REFUSED("example%2ecom");
	DOMAIN_REFUSED("%31%32%37.0.0.1");
}

static void
test_refuses_domain_holding_ipv6_literal(void **state)
{
	(void)state;
	DOMAIN_REFUSED("::1");
	DOMAIN_REFUSED("[::1]");
	DOMAIN_REFUSED("[2001:db8::1]");
	DOMAIN_REFUSED("fe80::1%eth0");
	DOMAIN_REFUSED("::ffff:127.0.0.1");
}

static void
test_refuses_domain_with_port_or_whitespace(void **state)
{
	(void)state;
	DOMAIN_REFUSED("example.com:443");
	DOMAIN_REFUSED("example.com ");
	DOMAIN_REFUSED(" example.com");
	DOMAIN_REFUSED("exa\r\nmple.com");
	DOMAIN_REFUSED("*.example.com");
	DOMAIN_REFUSED("ex\xc3\xa4mple.com");
	DOMAIN_REFUSED("a..b");
	DOMAIN_REFUSED(".");
}

static void
test_refuses_port_zero(void **state)
{
	const unsigned char v4[] = { 5, 1, 0, 1, 93, 184, 216, 34, 0, 0 };
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n = domain_req(b, 1, "example.com", 11, 0);

	(void)state;
	expect_refused(v4, sizeof(v4), SOCKS5_REP_SYNTAX);
	expect_refused(b, n, SOCKS5_REP_SYNTAX);
}

/* Request: frame */

static void
test_refuses_bind_command(void **state)
{
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n = domain_req(b, 0x02, "example.com", 11, 443);

	(void)state;
	expect_refused(b, n, SOCKS5_REP_CMD_UNSUPPORTED);
}

static void
test_refuses_udp_associate_command(void **state)
{
	const unsigned char b[] = { 5, 3, 0, 1, 0, 0, 0, 0, 0, 0 };

	(void)state;
	expect_refused(b, sizeof(b), SOCKS5_REP_CMD_UNSUPPORTED);
}

static void
test_refuses_unknown_commands(void **state)
{
	unsigned char b[] = { 5, 0, 0, 1, 1, 2, 3, 4, 0, 80 };
	unsigned int cmd;

	(void)state;
	for (cmd = 0; cmd < 256; cmd++) {
		if (cmd == SOCKS5_CMD_CONNECT)
			continue;
		b[1] = (unsigned char)cmd;
		expect_refused(b, sizeof(b), SOCKS5_REP_CMD_UNSUPPORTED);
	}
}

static void
test_refuses_unknown_atyp_0x05(void **state)
{
	const unsigned char b[] = { 5, 1, 0, 5, 1, 2, 3, 4, 0, 80 };
	unsigned char c[] = { 5, 1, 0, 0, 1, 2, 3, 4, 0, 80 };
	unsigned int a;

	(void)state;
	expect_refused(b, sizeof(b), SOCKS5_REP_ATYP_UNSUPPORTED);
	expect_refused(b, 4, SOCKS5_REP_ATYP_UNSUPPORTED);
	for (a = 0; a < 256; a++) {
		if (a == 1 || a == 3 || a == 4)
			continue;
		c[3] = (unsigned char)a;
		expect_refused(c, sizeof(c), SOCKS5_REP_ATYP_UNSUPPORTED);
	}
}

static void
test_refuses_rsv_nonzero(void **state)
{
	const unsigned char b[] = { 5, 1, 1, 1, 1, 2, 3, 4, 0, 80 };
	const unsigned char c[] = { 5, 1, 0xff, 1, 1, 2, 3, 4, 0, 80 };

	(void)state;
	expect_refused(b, sizeof(b), SOCKS5_REP_SYNTAX);
	expect_refused(c, sizeof(c), SOCKS5_REP_SYNTAX);
}

static void
test_refuses_request_version_4(void **state)
{
	const unsigned char b[] = { 4, 1, 0, 1, 1, 2, 3, 4, 0, 80 };

	(void)state;
	expect_refused(b, sizeof(b), SOCKS5_REP_SYNTAX);
}

static void
test_truncated_request_needs_more(void **state)
{
	unsigned char b[SOCKS5_REQ_MAX];
	size_t n = domain_req(b, 1, "example.com", 11, 443), i;
	struct socks5_req r;
	unsigned char reply = 0xee;

	(void)state;
	for (i = 0; i < n; i++) {
		assert_int_equal(socks5_parse_request(b, i, &r, &reply), 0);
		assert_int_equal(reply, 0xee);	/* untouched when asking for more */
	}
	assert_int_equal(socks5_parse_request(b, n, &r, &reply), (long)n);
}

static void
test_pipelined_bytes_after_request_not_consumed(void **state)
{
	unsigned char b[SOCKS5_REQ_MAX + 64];
	const char tls[] = "\x16\x03\x01\x00\x10GET / HTTP/1.1\r\n";
	size_t n = domain_req(b, 1, "example.com", 11, 443);
	struct socks5_req r;
	unsigned char reply;
	const unsigned char v4[] = { 5, 1, 0, 1, 1, 2, 3, 4, 0, 80, 5, 1, 0 };

	(void)state;
	memcpy(b + n, tls, sizeof(tls) - 1);
	assert_int_equal(socks5_parse_request(b, n + sizeof(tls) - 1, &r, &reply),
	    (long)n);
	assert_string_equal(r.dest.host, "example.com");
	assert_int_equal(socks5_parse_request(v4, sizeof(v4), &r, &reply), 10);
}

static void
test_refuses_null_arguments(void **state)
{
	const unsigned char b[] = { 5, 1, 0, 1, 1, 2, 3, 4, 0, 80 };
	struct socks5_req r;
	unsigned char reply;
	int noauth;

	(void)state;
	assert_int_equal(socks5_parse_request(b, sizeof(b), NULL, &reply), -1);
	assert_int_equal(socks5_parse_request(b, sizeof(b), &r, NULL), -1);
	assert_int_equal(socks5_parse_request(NULL, 5, &r, &reply), -1);
	assert_int_equal(socks5_parse_greeting(NULL, 3, &noauth), -1);
	assert_int_equal(socks5_parse_greeting(b, 3, NULL), -1);
}

static void
test_reply_frames(void **state)
{
	unsigned char out[SOCKS5_REPLY_LEN];
	const unsigned char ok[] = { 5, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	const unsigned char deny[] = { 5, 2, 0, 1, 0, 0, 0, 0, 0, 0 };

	(void)state;
	memset(out, 0xaa, sizeof(out));
	assert_int_equal(socks5_reply(out, SOCKS5_REP_SUCCEEDED), 10);
	assert_memory_equal(out, ok, 10);
	assert_int_equal(socks5_reply(out, SOCKS5_REP_DENIED), 10);
	assert_memory_equal(out, deny, 10);
	assert_int_equal(SOCKS5_REP_SYNTAX, 0x01);
	assert_int_equal(SOCKS5_REP_DNS_FAILURE, 0x04);
	assert_int_equal(SOCKS5_REP_REFUSED, 0x05);
	assert_int_equal(SOCKS5_REP_CMD_UNSUPPORTED, 0x07);
	assert_int_equal(SOCKS5_REP_ATYP_UNSUPPORTED, 0x08);
}

/* Deterministic pseudo-random frames: never a crash, every accepted
 * frame's length is in range and its destination re-parses to itself. */
static void
test_random_requests_refuse_or_normalise(void **state)
{
	unsigned char b[SOCKS5_REQ_MAX + 8];
	uint32_t x = 0x2545f491;
	struct socks5_req r;
	struct dest again;
	unsigned char reply;
	int i;
	size_t j, len;

	(void)state;
	for (i = 0; i < 200000; i++) {
		long rc;

		for (j = 0; j < sizeof(b); j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[j] = (unsigned char)x;
		}
		b[0] = 5;
		b[1] = 1;
		b[2] = 0;
		b[3] = (unsigned char)(1 + (x >> 8) % 4);
		if (b[3] == 3)
			b[4] = (unsigned char)(x >> 16) % 24;
		len = (x >> 3) % sizeof(b);
		rc = socks5_parse_request(b, len, &r, &reply);
		assert_true(rc >= -1 && rc <= (long)len);
		if (rc <= 0)
			continue;
		assert_true(r.dest.port != 0);
		assert_int_equal(dest_parse_host(r.dest.host, strlen(r.dest.host),
		    0, &again, NULL, 0), 0);
		assert_string_equal(again.host, r.dest.host);
		assert_int_equal(again.kind, r.dest.kind);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting_noauth_offered),
		cmocka_unit_test(test_greeting_without_noauth_gets_no_acceptable_method),
		cmocka_unit_test(test_greeting_split_byte_by_byte_waits_until_complete),
		cmocka_unit_test(test_greeting_refuses_nmethods_zero),
		cmocka_unit_test(test_greeting_refuses_socks4_request),
		cmocka_unit_test(test_greeting_leaves_pipelined_request_unread),
		cmocka_unit_test(test_greeting_with_255_methods),
		cmocka_unit_test(test_request_ipv4),
		cmocka_unit_test(test_request_ipv4_zero_and_loopback_pass_syntax),
		cmocka_unit_test(test_request_ipv6_normalised_rfc5952),
		cmocka_unit_test(test_request_ipv4_mapped_ipv6_in_hex_not_dotted),
		cmocka_unit_test(test_request_ipv6_unspecified_and_loopback),
		cmocka_unit_test(test_request_domain_lower_cased_trailing_dot_removed),
		cmocka_unit_test(test_request_domain_holding_dotted_quad_is_ipv4),
		cmocka_unit_test(test_request_domain_of_255_bytes_is_too_long),
		cmocka_unit_test(test_request_domain_of_253_bytes_accepted),
		cmocka_unit_test(test_refuses_domain_length_zero),
		cmocka_unit_test(test_refuses_domain_with_nul),
		cmocka_unit_test(test_refuses_domain_short_ipv4_127_1),
		cmocka_unit_test(test_refuses_domain_with_userinfo),
		cmocka_unit_test(test_refuses_domain_with_percent_encoding),
		cmocka_unit_test(test_refuses_domain_holding_ipv6_literal),
		cmocka_unit_test(test_refuses_domain_with_port_or_whitespace),
		cmocka_unit_test(test_refuses_port_zero),
		cmocka_unit_test(test_refuses_bind_command),
		cmocka_unit_test(test_refuses_udp_associate_command),
		cmocka_unit_test(test_refuses_unknown_commands),
		cmocka_unit_test(test_refuses_unknown_atyp_0x05),
		cmocka_unit_test(test_refuses_rsv_nonzero),
		cmocka_unit_test(test_refuses_request_version_4),
		cmocka_unit_test(test_truncated_request_needs_more),
		cmocka_unit_test(test_pipelined_bytes_after_request_not_consumed),
		cmocka_unit_test(test_refuses_null_arguments),
		cmocka_unit_test(test_reply_frames),
		cmocka_unit_test(test_random_requests_refuse_or_normalise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
