/* Destination syntax (docs/design.md "Destination syntax"): every hostile form
 * has its own named test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy/dest.h"

/* err is a short fixed reason: printable ASCII only, never raw input. */
static void
check_err(const char *err)
{
	size_t i;

	assert_true(err[0] != '\0');
	for (i = 0; err[i] != '\0'; i++)
		assert_true(err[i] >= 0x20 && err[i] < 0x7f);
}

/* len-based so inputs can hold NUL bytes. */
static void
refuse_n(const char *s, size_t len, const char *why)
{
	struct dest d;
	char err[128];

	memset(err, 0, sizeof(err));
	if (dest_parse_authority(s, len, &d, err, sizeof(err)) != -1)
		fail_msg("accepted a bad authority (%zu bytes): host \"%s\"",
		    len, d.host);
	check_err(err);
	if (why != NULL && strstr(err, why) == NULL)
		fail_msg("reason \"%s\" does not contain \"%s\"", err, why);
	/* A refusal leaves nothing usable behind. */
	assert_int_equal(d.kind, 0);
	assert_int_equal(d.port, 0);
	assert_string_equal(d.host, "");
}

#define REFUSE(lit, why)	refuse_n((lit), sizeof(lit) - 1, (why))

static void
accept_as(const char *s, enum dest_kind kind, const char *host, uint16_t port)
{
	struct dest d;
	char err[128] = "";

	if (dest_parse_authority(s, strlen(s), &d, err, sizeof(err)) != 0)
		fail_msg("refused \"%s\": %s", s, err);
	assert_int_equal(d.kind, kind);
	assert_string_equal(d.host, host);
	assert_int_equal(d.port, port);
}

static void
host_refuse(const char *s, int brackets, const char *why)
{
	struct dest d;
	char err[128] = "";

	if (dest_parse_host(s, strlen(s), brackets, &d, err, sizeof(err)) != -1)
		fail_msg("accepted host \"%s\" (brackets=%d)", s, brackets);
	check_err(err);
	if (why != NULL && strstr(err, why) == NULL)
		fail_msg("reason \"%s\" does not contain \"%s\"", err, why);
}

static void
test_accepts_simple_name(void **state)
{
	(void)state;
	accept_as("example.com:443", DEST_NAME, "example.com", 443);
	accept_as("localhost:80", DEST_NAME, "localhost", 80);
}

static void
test_normalises_case_and_trailing_dot(void **state)
{
	(void)state;
	accept_as("API.Example.COM.:443", DEST_NAME, "api.example.com", 443);
	accept_as("Example.com:8080", DEST_NAME, "example.com", 8080);
}

static void
test_accepts_underscore_hyphen_and_digits(void **state)
{
	(void)state;
	accept_as("_dmarc.my-host.example:25", DEST_NAME,
	    "_dmarc.my-host.example", 25);
	accept_as("1.2.3.example:443", DEST_NAME, "1.2.3.example", 443);
	accept_as("123abc:443", DEST_NAME, "123abc", 443);
	accept_as("xn--bcher-kva.de:443", DEST_NAME, "xn--bcher-kva.de", 443);
}

static void
test_refuses_two_trailing_dots(void **state)
{
	(void)state;
	REFUSE("example.com..:443", "one trailing dot");
	REFUSE("..:443", NULL);
}

static void
test_refuses_lone_dot(void **state)
{
	(void)state;
	REFUSE(".:443", "empty host");
}

static void
test_refuses_empty_label(void **state)
{
	(void)state;
	REFUSE("a..b:443", "empty label");
	REFUSE(".example.com:443", "empty label");
}

static void
test_accepts_label_63_bytes(void **state)
{
	char in[160], host[128];

	(void)state;
	memset(host, 'a', 63);
	memcpy(host + 63, ".com", 5);
	snprintf(in, sizeof(in), "%s:443", host);
	accept_as(in, DEST_NAME, host, 443);
}

static void
test_refuses_label_64_bytes(void **state)
{
	char in[128];

	(void)state;
	memset(in, 'a', 64);
	memcpy(in + 64, ".com:443", 9);
	refuse_n(in, strlen(in), "label longer than 63");
}

/* A valid name of exactly len bytes: 49-byte labels joined by dots. */
static void
make_name(char *out, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		out[i] = (i % 50 == 49) ? '.' : 'a';
	if (out[len - 1] == '.')
		out[len - 1] = 'b';
	out[len] = '\0';
}

static void
test_accepts_total_253_bytes(void **state)
{
	char name[260], in[300];
	struct dest d;
	char err[128];

	(void)state;
	make_name(name, 253);
	snprintf(in, sizeof(in), "%s:443", name);
	accept_as(in, DEST_NAME, name, 443);
	/* With the one trailing dot it is 254 bytes on the wire, 253 after. */
	snprintf(in, sizeof(in), "%s.:443", name);
	assert_int_equal(dest_parse_authority(in, strlen(in), &d, err,
	    sizeof(err)), 0);
	assert_string_equal(d.host, name);
}

static void
test_refuses_total_254_bytes(void **state)
{
	char name[260], in[300];

	(void)state;
	make_name(name, 254);
	snprintf(in, sizeof(in), "%s:443", name);
	refuse_n(in, strlen(in), "longer than 253");
}

static void
test_accepts_ipv4_dotted_quad(void **state)
{
	static const unsigned char want[4] = { 93, 184, 216, 34 };
	struct dest d;
	char err[128];

	(void)state;
	assert_int_equal(dest_parse_authority("93.184.216.34:443", 17, &d,
	    err, sizeof(err)), 0);
	assert_int_equal(d.kind, DEST_IPV4);
	assert_string_equal(d.host, "93.184.216.34");
	assert_memory_equal(d.addr, want, 4);
	accept_as("0.0.0.0:1", DEST_IPV4, "0.0.0.0", 1);
	accept_as("255.255.255.255:65535", DEST_IPV4, "255.255.255.255", 65535);
	accept_as("10.0.0.10:80", DEST_IPV4, "10.0.0.10", 80);
}

static void
test_refuses_short_ipv4_127_1(void **state)
{
	(void)state;
	REFUSE("127.1:80", "strict dotted quad");
	REFUSE("127.0.1:80", "strict dotted quad");
}

static void
test_refuses_hex_ipv4_0x7f(void **state)
{
	(void)state;
	REFUSE("0x7f.0.0.1:80", "strict dotted quad");
	REFUSE("127.0.0.0x1:80", "strict dotted quad");
}

/* docs/design.md names all-digit last labels; a 0x-hex last label is read as a
 * number just the same (inet_aton, WHATWG URL), so it is refused too. */
static void
test_refuses_hex_integer_ipv4_0x7f000001(void **state)
{
	(void)state;
	REFUSE("0x7f000001:80", "strict dotted quad");
	REFUSE("0X7F000001:80", "strict dotted quad");
	REFUSE("example.0x1:80", "strict dotted quad");
	REFUSE("0x:80", "strict dotted quad");
	/* not a number: a name */
	accept_as("0xg:80", DEST_NAME, "0xg", 80);
	accept_as("0x7f.example:80", DEST_NAME, "0x7f.example", 80);
}

static void
test_refuses_octal_ipv4_0177(void **state)
{
	(void)state;
	REFUSE("0177.0.0.1:80", "strict dotted quad");
	REFUSE("127.0.0.01:80", "strict dotted quad");
	REFUSE("00.0.0.0:80", "strict dotted quad");
}

static void
test_refuses_integer_ipv4_2130706433(void **state)
{
	(void)state;
	REFUSE("2130706433:80", "strict dotted quad");
	REFUSE("0:80", "strict dotted quad");
}

static void
test_refuses_ipv4_octet_256(void **state)
{
	(void)state;
	REFUSE("256.0.0.1:80", "strict dotted quad");
	REFUSE("1.2.3.1000:80", "strict dotted quad");
}

static void
test_refuses_ipv4_five_octets(void **state)
{
	(void)state;
	REFUSE("1.2.3.4.5:80", "strict dotted quad");
}

static void
test_refuses_ipv4_trailing_dot(void **state)
{
	(void)state;
	REFUSE("1.2.3.4.:80", "strict dotted quad");
}

static void
test_refuses_all_digit_last_label(void **state)
{
	(void)state;
	REFUSE("example.123:443", "strict dotted quad");
}

static void
test_accepts_bracketed_ipv6_normalised(void **state)
{
	static const unsigned char want[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
	};
	struct dest d;
	char err[128];
	const char *in = "[2001:DB8:0:0:0:0:0:0001]:443";

	(void)state;
	assert_int_equal(dest_parse_authority(in, strlen(in), &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.kind, DEST_IPV6);
	assert_string_equal(d.host, "2001:db8::1");
	assert_memory_equal(d.addr, want, 16);
	assert_int_equal(d.port, 443);
	accept_as("[::1]:443", DEST_IPV6, "::1", 443);
	accept_as("[::]:443", DEST_IPV6, "::", 443);
	accept_as("[1::]:443", DEST_IPV6, "1::", 443);
}

static void
test_ipv6_normalised_rfc5952(void **state)
{
	(void)state;
	/* longest run compressed */
	accept_as("[1:0:0:2:0:0:0:3]:1", DEST_IPV6, "1:0:0:2::3", 1);
	/* tie: the first run */
	accept_as("[1:0:0:2:0:0:3:4]:1", DEST_IPV6, "1::2:0:0:3:4", 1);
	/* a single zero group is not compressed */
	accept_as("[1:0:2:3:4:5:6:7]:1", DEST_IPV6, "1:0:2:3:4:5:6:7", 1);
	accept_as("[FFFF:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:1", DEST_IPV6,
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1);
}

static void
test_normalises_mapped_ipv6_in_hex(void **state)
{
	(void)state;
	/* inet_ntop would print ::ffff:127.0.0.1, which does not parse
	 * again; the normalised form stays pure hex. */
	accept_as("[::ffff:7f00:1]:443", DEST_IPV6, "::ffff:7f00:1", 443);
	accept_as("[::7f00:1]:443", DEST_IPV6, "::7f00:1", 443);
}

static void
test_refuses_mapped_ipv6_with_dotted_quad(void **state)
{
	(void)state;
	REFUSE("[::ffff:127.0.0.1]:443", "dotted IPv4");
	REFUSE("[::127.0.0.1]:443", "dotted IPv4");
	REFUSE("[64:ff9b::10.0.0.1]:443", "dotted IPv4");
}

static void
test_refuses_zone_id(void **state)
{
	(void)state;
	REFUSE("[fe80::1%eth0]:443", "zone id");
	REFUSE("[fe80::1%25eth0]:443", "zone id");
}

static void
test_refuses_unbracketed_ipv6(void **state)
{
	(void)state;
	REFUSE("2001:db8::1:443", "must be in brackets");
	REFUSE("::1:443", "must be in brackets");
	REFUSE("::1", "must be in brackets");
}

static void
test_refuses_unterminated_bracket(void **state)
{
	(void)state;
	REFUSE("[::1:443", "unterminated");
}

static void
test_refuses_bad_ipv6(void **state)
{
	(void)state;
	REFUSE("[2001:db8::g]:443", "bad IPv6");
	REFUSE("[1:2:3:4:5:6:7:8:9]:443", "bad IPv6");
	REFUSE("[1::2::3]:443", "bad IPv6");
	REFUSE("[:::]:443", "bad IPv6");
	REFUSE("[example.com]:443", NULL);
	REFUSE("[00000::1]:443", "bad IPv6");
}

static void
test_refuses_empty_brackets(void **state)
{
	(void)state;
	REFUSE("[]:443", "empty IPv6");
}

static void
test_refuses_bytes_between_bracket_and_port(void **state)
{
	(void)state;
	REFUSE("[::1]443", "after the IPv6 literal");
	REFUSE("[::1]x:443", "after the IPv6 literal");
	REFUSE("[::1]]:443", "after the IPv6 literal");
}

static void
test_refuses_userinfo(void **state)
{
	(void)state;
	REFUSE("user@example.com:443", "userinfo is not allowed");
	REFUSE("user:pass@example.com:443", "userinfo is not allowed");
	REFUSE("example.com:443@evil.com:443", "userinfo is not allowed");
}

static void
test_refuses_percent_encoding(void **state)
{
	(void)state;
	REFUSE("ex%61mple.com:443", "percent-encoding is not allowed");
	REFUSE("example.com:%34%34%33", "percent-encoding is not allowed");
}

static void
test_refuses_whitespace(void **state)
{
	(void)state;
	REFUSE(" example.com:443", "whitespace");
	REFUSE("example.com :443", "whitespace");
	REFUSE("example.com: 443", "whitespace");
	REFUSE("example.com:443\t", "whitespace");
	REFUSE("example.com:443\r\n", "whitespace");
}

static void
test_refuses_control_bytes(void **state)
{
	(void)state;
	REFUSE("exam\x01ple.com:443", "control bytes");
	REFUSE("example.com:443\x7f", "control bytes");
	REFUSE("\x1b[31mexample.com:443", "control bytes");
}

static void
test_refuses_non_ascii(void **state)
{
	(void)state;
	REFUSE("b\xc3\xbc" "cher.de:443", "non-ASCII");
	REFUSE("example.com:443\xff", "non-ASCII");
	/* fullwidth dot U+FF0E */
	REFUSE("example\xef\xbc\x8e" "com:443", "non-ASCII");
}

static void
test_refuses_nul_byte(void **state)
{
	(void)state;
	REFUSE("example.com\0.evil:443", "NUL");
	REFUSE("example.com:443\0", "NUL");
	REFUSE("\0", "NUL");
}

static void
test_refuses_trailing_junk_after_port(void **state)
{
	(void)state;
	REFUSE("example.com:443/", "after the port");
	REFUSE("example.com:443/path", "after the port");
	REFUSE("example.com:443x", "after the port");
	REFUSE("example.com:443:80", "after the port");
	REFUSE("example.com:443?q", "after the port");
	REFUSE("[::1]:443:80", "after the port");
}

static void
test_refuses_leading_zero_port(void **state)
{
	(void)state;
	REFUSE("example.com:0443", "port must be 1-65535 without leading zeros");
	REFUSE("example.com:00", "port must be 1-65535");
	REFUSE("[::1]:08080", "port must be 1-65535");
}

static void
test_refuses_port_0_and_65536(void **state)
{
	(void)state;
	REFUSE("example.com:0", "port must be 1-65535");
	REFUSE("example.com:65536", "port must be 1-65535");
	REFUSE("example.com:99999999999999999999999", "port must be 1-65535");
}

static void
test_accepts_port_1_and_65535(void **state)
{
	(void)state;
	accept_as("example.com:1", DEST_NAME, "example.com", 1);
	accept_as("example.com:65535", DEST_NAME, "example.com", 65535);
}

static void
test_refuses_signed_port(void **state)
{
	(void)state;
	REFUSE("example.com:+443", "port must be 1-65535");
	REFUSE("example.com:-1", "port must be 1-65535");
}

static void
test_refuses_missing_port(void **state)
{
	(void)state;
	REFUSE("example.com", "missing port");
	REFUSE("example.com:", "missing port");
	REFUSE("[::1]", "missing port");
	REFUSE("[::1]:", "missing port");
}

static void
test_refuses_empty_host(void **state)
{
	struct dest d;
	char err[64];

	(void)state;
	REFUSE(":443", "empty host");
	assert_int_equal(dest_parse_authority("", 0, &d, err, sizeof(err)), -1);
	check_err(err);
}

static void
test_refuses_wildcard(void **state)
{
	(void)state;
	REFUSE("*.example.com:443", "wildcards are not allowed");
	REFUSE("*:443", "wildcards are not allowed");
}

static void
test_refuses_other_bytes_in_name(void **state)
{
	(void)state;
	REFUSE("exa/mple.com:443", "outside");
	REFUSE("exa!mple.com:443", "outside");
	REFUSE("exa\\mple.com:443", "outside");
	REFUSE("exa[mple.com:443", "outside");
	REFUSE("http://example.com:443", NULL);
}

static void
test_error_never_echoes_input(void **state)
{
	static const char *bad[] = {
		"EVILHOST.com:0", "EVILHOST@x:1", "EVILHOST%41:1",
		"EVILHOST.com:1/EVILPATH", "EVILHOST.127:1", "[EVILHOST]:1",
		"EVILHOST", "EVILHOST .com:1",
	};
	struct dest d;
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(dest_parse_authority(bad[i], strlen(bad[i]),
		    &d, err, sizeof(err)), -1);
		assert_null(strstr(err, "EVIL"));
		assert_null(strstr(err, "evil"));
	}
}

static void
test_reads_only_len_bytes(void **state)
{
	static const char buf[] = "example.com:443garbage";
	struct dest d;
	char err[64];

	(void)state;
	assert_int_equal(dest_parse_authority(buf, 15, &d, err, sizeof(err)), 0);
	assert_string_equal(d.host, "example.com");
	assert_int_equal(d.port, 443);
}

static void
test_refuses_null_arguments(void **state)
{
	struct dest d;
	char err[64];
	uint16_t port;

	(void)state;
	assert_int_equal(dest_parse_authority(NULL, 3, &d, err, sizeof(err)), -1);
	assert_int_equal(dest_parse_authority("a:1", 3, NULL, err, sizeof(err)), -1);
	assert_int_equal(dest_parse_host(NULL, 3, 1, &d, err, sizeof(err)), -1);
	assert_int_equal(dest_parse_port(NULL, 3, &port), -1);
	/* a NULL or empty error buffer is fine */
	assert_int_equal(dest_parse_authority("a", 1, &d, NULL, 0), -1);
	assert_int_equal(dest_format(NULL, err, sizeof(err)), -1);
}

static void
test_host_bare_ipv6_when_brackets_0(void **state)
{
	struct dest d;
	char err[128];

	(void)state;
	assert_int_equal(dest_parse_host("2001:DB8::1", 11, 0, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.kind, DEST_IPV6);
	assert_string_equal(d.host, "2001:db8::1");
	assert_int_equal(d.port, 0);
	host_refuse("[2001:db8::1]", 0, "must not be in brackets");
	host_refuse("fe80::1%eth0", 0, "zone id");
	host_refuse("::ffff:127.0.0.1", 0, "dotted IPv4");
}

static void
test_host_bracketed_ipv6_when_brackets_1(void **state)
{
	struct dest d;
	char err[128];

	(void)state;
	assert_int_equal(dest_parse_host("[2001:db8::1]", 13, 1, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.kind, DEST_IPV6);
	assert_string_equal(d.host, "2001:db8::1");
	host_refuse("2001:db8::1", 1, "must be in brackets");
	host_refuse("[2001:db8::1]x", 1, "after the IPv6 literal");
	host_refuse("[2001:db8::1", 1, "unterminated");
	host_refuse("[fe80::1%eth0]", 1, "zone id");
}

static void
test_host_names_and_ipv4(void **state)
{
	struct dest d;
	char err[128];

	(void)state;
	assert_int_equal(dest_parse_host("WWW.Example.org.", 16, 1, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.kind, DEST_NAME);
	assert_string_equal(d.host, "www.example.org");
	assert_int_equal(d.port, 0);
	assert_int_equal(dest_parse_host("192.0.2.1", 9, 0, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(d.kind, DEST_IPV4);
	host_refuse("127.1", 0, "strict dotted quad");
	/* A host field with a port names the port, not IPv6 (a policy entry
	 * {"host":"a.com:443"} was told "must not embed a dotted IPv4"). */
	host_refuse("example.com:443", 1, "must not include a port");
	host_refuse("example.com:443", 0, "must not include a port");
	host_refuse("1.2.3.4:443", 0, "must not include a port");
	host_refuse("::ffff:1.2.3.4", 0, "must not embed a dotted IPv4");
	host_refuse("*.example.com", 0, "wildcards");
	host_refuse("", 0, "empty host");
	host_refuse("a@b", 0, "userinfo");
}

static void
test_parse_port_strict(void **state)
{
	uint16_t port = 0;

	(void)state;
	assert_int_equal(dest_parse_port("443", 3, &port), 0);
	assert_int_equal(port, 443);
	assert_int_equal(dest_parse_port("65535", 5, &port), 0);
	assert_int_equal(port, 65535);
	assert_int_equal(dest_parse_port("0", 1, &port), -1);
	assert_int_equal(dest_parse_port("65536", 5, &port), -1);
	assert_int_equal(dest_parse_port("0443", 4, &port), -1);
	assert_int_equal(dest_parse_port("+443", 4, &port), -1);
	assert_int_equal(dest_parse_port(" 443", 4, &port), -1);
	assert_int_equal(dest_parse_port("443 ", 4, &port), -1);
	assert_int_equal(dest_parse_port("", 0, &port), -1);
	assert_int_equal(port, 65535);	/* untouched on failure */
}

static void
test_format_name_and_ipv4(void **state)
{
	struct dest d;
	char err[64], buf[300];

	(void)state;
	assert_int_equal(dest_parse_authority("Example.COM.:443", 16, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(dest_format(&d, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "example.com:443");
	assert_int_equal(dest_parse_authority("192.0.2.1:8080", 14, &d, err,
	    sizeof(err)), 0);
	assert_int_equal(dest_format(&d, buf, sizeof(buf)), 14);
	assert_string_equal(buf, "192.0.2.1:8080");
}

static void
test_format_bracketed_ipv6(void **state)
{
	struct dest d, again;
	char err[64], buf[64];
	int n;

	(void)state;
	assert_int_equal(dest_parse_authority("[::FFFF:7f00:1]:443", 19, &d,
	    err, sizeof(err)), 0);
	n = dest_format(&d, buf, sizeof(buf));
	assert_string_equal(buf, "[::ffff:7f00:1]:443");
	assert_int_equal(n, (int)strlen(buf));
	/* The formatted form parses back to the same destination. */
	assert_int_equal(dest_parse_authority(buf, (size_t)n, &again, err,
	    sizeof(err)), 0);
	assert_memory_equal(&again, &d, sizeof(d));
}

static void
test_format_refuses_small_buffer(void **state)
{
	struct dest d;
	char err[64], buf[16];

	(void)state;
	assert_int_equal(dest_parse_authority("example.com:443", 15, &d, err,
	    sizeof(err)), 0);
	/* 15 bytes and the NUL: 15 is one short, 16 fits. */
	assert_int_equal(dest_format(&d, buf, 15), -1);
	assert_int_equal(dest_format(&d, buf, 16), 15);
	assert_int_equal(dest_format(&d, buf, 0), -1);
}

/* The name grammar written the plain way, as docs/design.md states it: one
 * trailing dot may go, labels of 1-63 bytes of [A-Za-z0-9_-] between
 * single dots, at most 253 bytes, lower-cased; a last label that is a
 * number (all digits, or 0x and hex) makes the whole a strict dotted quad
 * or nothing. Returns the kind, 0 when refused. */
static int
model_host(const char *s, size_t len, char *out)
{
	size_t i, start = 0, lab = 0, nlab = 0;
	int digits = 1, v, oct = 0, olen = 0, quad = 1;

	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0 || len > 253 || s[len - 1] == '.')
		return 0;
	for (i = 0; i <= len; i++) {
		char c = i < len ? s[i] : '.';

		if (c == '.') {
			if (lab == 0 || lab > 63)
				return 0;
			nlab++;
			if (i < len) {
				out[i] = '.';
				start = i + 1;
			}
			lab = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
		lab++;
		out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	out[len] = '\0';
	for (i = start; i < len; i++)
		digits &= s[i] >= '0' && s[i] <= '9';
	if (!digits && !(len - start >= 2 && s[start] == '0' &&
	    (s[start + 1] == 'x' || s[start + 1] == 'X') &&
	    strspn(s + start + 2, "0123456789abcdefABCDEF") >= len - start - 2))
		return DEST_NAME;
	/* A dotted quad, given exactly, never with a trailing dot. */
	if (nlab != 4 || s[len] == '.')
		return 0;
	for (i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			quad &= olen > 0 && oct <= 255;
			oct = olen = 0;
			continue;
		}
		if (s[i] < '0' || s[i] > '9' || (olen > 0 && oct == 0))
			return 0;
		v = s[i] - '0';
		oct = oct * 10 + v;
		olen++;
	}
	return quad ? DEST_IPV4 : 0;
}

/* Every string of up to 6 bytes over an alphabet that reaches each rule
 * (a label byte of each class, the dot, a byte outside names, the 0x of
 * hex numbers): the parser and the model agree on each, and a host
 * counts as normal exactly when it is accepted and unchanged. Catches a
 * fast path that admits what the grammar refuses (a leading or doubled
 * dot, an upper-case byte in a normal host) or lower-cases wrongly. */
static void
test_names_agree_with_grammar_model_exhaustive(void **state)
{
	static const char alpha[] = "aZ09.-_x*";
	const size_t na = sizeof(alpha) - 1;
	char s[8], model[8], err[128];
	size_t len, i, idx[6], n = 0;
	struct dest d;

	(void)state;
	for (len = 0; len <= 6; len++) {
		memset(idx, 0, sizeof(idx));
		for (;;) {
			int kind, got;

			for (i = 0; i < len; i++)
				s[i] = alpha[idx[i]];
			s[len] = '\0';
			kind = model_host(s, len, model);
			got = dest_parse_host(s, len, 0, &d, err, sizeof(err)) == 0;
			if (got != (kind != 0))
				fail_msg("\"%s\": parser %s, model %s", s,
				    got ? "accepts" : "refuses", kind ? "accepts" : "refuses");
			if (got && ((int)d.kind != kind || strcmp(d.host, model) != 0))
				fail_msg("\"%s\": parser gives kind %d \"%s\", model %d \"%s\"",
				    s, (int)d.kind, d.host, kind, model);
			if (dest_host_is_normal(s, len) !=
			    (kind != 0 && strlen(model) == len && memcmp(model, s, len) == 0))
				fail_msg("\"%s\": dest_host_is_normal disagrees", s);
			n++;
			for (i = 0; i < len && ++idx[i] == na; i++)
				idx[i] = 0;
			if (i == len)
				break;
		}
	}
	assert_true(n > 500000);
}

/* Random short inputs over the interesting bytes: whatever is accepted
 * holds only grammar bytes, and formats to text that parses back to the
 * very same destination (normalisation is idempotent). */
static void
test_random_inputs_refuse_or_roundtrip(void **state)
{
	static const char alpha[] = "aZ09x.-_:[]%@*/ \0\x80\t255f";
	uint32_t seed = 0x9e3779b9u;
	struct dest d, again;
	char in[24], out[300], err[128];
	size_t i, len, accepted = 0;
	int round, n;

	(void)state;
	for (round = 0; round < 200000; round++) {
		seed = seed * 1664525u + 1013904223u;
		len = (seed >> 16) % sizeof(in);
		for (i = 0; i < len; i++) {
			seed = seed * 1664525u + 1013904223u;
			in[i] = alpha[(seed >> 16) % (sizeof(alpha) - 1)];
		}
		if (dest_parse_authority(in, len, &d, err, sizeof(err)) == -1) {
			check_err(err);
			continue;
		}
		accepted++;
		for (i = 0; d.host[i] != '\0'; i++)
			assert_non_null(strchr("abcdefghijklmnopqrstuvwxyz"
			    "0123456789.-_:", d.host[i]));
		n = dest_format(&d, out, sizeof(out));
		assert_true(n > 0);
		if (dest_parse_authority(out, (size_t)n, &again, err,
		    sizeof(err)) != 0)
			fail_msg("formatted form refused: %s", err);
		assert_memory_equal(&again, &d, sizeof(d));
	}
	assert_true(accepted > 0);
}

int main(void);

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_simple_name),
		cmocka_unit_test(test_normalises_case_and_trailing_dot),
		cmocka_unit_test(test_accepts_underscore_hyphen_and_digits),
		cmocka_unit_test(test_refuses_two_trailing_dots),
		cmocka_unit_test(test_refuses_lone_dot),
		cmocka_unit_test(test_refuses_empty_label),
		cmocka_unit_test(test_accepts_label_63_bytes),
		cmocka_unit_test(test_refuses_label_64_bytes),
		cmocka_unit_test(test_accepts_total_253_bytes),
		cmocka_unit_test(test_refuses_total_254_bytes),
		cmocka_unit_test(test_accepts_ipv4_dotted_quad),
		cmocka_unit_test(test_refuses_short_ipv4_127_1),
		cmocka_unit_test(test_refuses_hex_ipv4_0x7f),
		cmocka_unit_test(test_refuses_hex_integer_ipv4_0x7f000001),
		cmocka_unit_test(test_refuses_octal_ipv4_0177),
		cmocka_unit_test(test_refuses_integer_ipv4_2130706433),
		cmocka_unit_test(test_refuses_ipv4_octet_256),
		cmocka_unit_test(test_refuses_ipv4_five_octets),
		cmocka_unit_test(test_refuses_ipv4_trailing_dot),
		cmocka_unit_test(test_refuses_all_digit_last_label),
		cmocka_unit_test(test_accepts_bracketed_ipv6_normalised),
		cmocka_unit_test(test_ipv6_normalised_rfc5952),
		cmocka_unit_test(test_normalises_mapped_ipv6_in_hex),
		cmocka_unit_test(test_refuses_mapped_ipv6_with_dotted_quad),
		cmocka_unit_test(test_refuses_zone_id),
		cmocka_unit_test(test_refuses_unbracketed_ipv6),
		cmocka_unit_test(test_refuses_unterminated_bracket),
		cmocka_unit_test(test_refuses_bad_ipv6),
		cmocka_unit_test(test_refuses_empty_brackets),
		cmocka_unit_test(test_refuses_bytes_between_bracket_and_port),
		cmocka_unit_test(test_refuses_userinfo),
		cmocka_unit_test(test_refuses_percent_encoding),
		cmocka_unit_test(test_refuses_whitespace),
		cmocka_unit_test(test_refuses_control_bytes),
		cmocka_unit_test(test_refuses_non_ascii),
		cmocka_unit_test(test_refuses_nul_byte),
		cmocka_unit_test(test_refuses_trailing_junk_after_port),
		cmocka_unit_test(test_refuses_leading_zero_port),
		cmocka_unit_test(test_refuses_port_0_and_65536),
		cmocka_unit_test(test_accepts_port_1_and_65535),
		cmocka_unit_test(test_refuses_signed_port),
		cmocka_unit_test(test_refuses_missing_port),
		cmocka_unit_test(test_refuses_empty_host),
		cmocka_unit_test(test_refuses_wildcard),
		cmocka_unit_test(test_refuses_other_bytes_in_name),
		cmocka_unit_test(test_error_never_echoes_input),
		cmocka_unit_test(test_reads_only_len_bytes),
		cmocka_unit_test(test_refuses_null_arguments),
		cmocka_unit_test(test_host_bare_ipv6_when_brackets_0),
		cmocka_unit_test(test_host_bracketed_ipv6_when_brackets_1),
		cmocka_unit_test(test_host_names_and_ipv4),
		cmocka_unit_test(test_parse_port_strict),
		cmocka_unit_test(test_format_name_and_ipv4),
		cmocka_unit_test(test_format_bracketed_ipv6),
		cmocka_unit_test(test_format_refuses_small_buffer),
		cmocka_unit_test(test_random_inputs_refuse_or_roundtrip),
		cmocka_unit_test(test_names_agree_with_grammar_model_exhaustive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
