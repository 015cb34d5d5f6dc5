/* Unit tests for guard/http: the request-head parser. Hostile cases are
 * named for the attack they stand for. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "guard/http.h"

static struct http_req req;

static int
parse(const char *s, int *status)
{
	char err[128];
	long end = http_head_end(s, strlen(s));

	*status = 0;
	if (end <= 0)
		return (int)end - 10;	/* -10: incomplete, -11: invalid early */
	return http_parse_head(s, (size_t)end, &req, status, err, sizeof(err));
}

static void
assert_refused(const char *s, int want_status)
{
	int status;
	int rc = parse(s, &status);

	if (rc == -11)
		return;		/* refused while scanning for the end */
	assert_int_equal(rc, -1);
	assert_int_equal(status, want_status);
}

static void
test_parses_connect_with_headers(void **state)
{
	int status;

	(void)state;
	assert_int_equal(parse("CONNECT api.example.com:443 HTTP/1.1\r\n"
	    "Host: api.example.com:443\r\nUser-Agent:  curl/7.88  \r\n\r\n", &status), 0);
	assert_string_equal(req.method, "CONNECT");
	assert_int_equal(req.target_len, strlen("api.example.com:443"));
	assert_memory_equal(req.target, "api.example.com:443", req.target_len);
	assert_int_equal(req.minor, 1);
	assert_int_equal(req.nheaders, 2);
	assert_int_equal(req.headers[1].value_len, strlen("curl/7.88"));
	assert_memory_equal(req.headers[1].value, "curl/7.88", 9);
}

static void
test_head_end_waits_for_blank_line(void **state)
{
	const char *s = "CONNECT a:1 HTTP/1.1\r\nHost: a\r\n";

	(void)state;
	assert_int_equal(http_head_end(s, strlen(s)), 0);
	assert_int_equal(http_head_end("CONNECT a:1 HTTP/1.1\r", 21), 0);
}

static void
test_head_end_stops_at_first_blank_line(void **state)
{
	const char *s = "CONNECT a:1 HTTP/1.1\r\n\r\n\x16\x03\x01";

	(void)state;
	assert_int_equal(http_head_end(s, strlen(s)), 24);
}

static void
test_refuses_bare_lf_line_ending(void **state)
{
	(void)state;
	assert_refused("CONNECT a:1 HTTP/1.1\nHost: a\r\n\r\n", 400);
	assert_refused("CONNECT a:1 HTTP/1.1\r\nHost: a\n\r\n", 400);
}

static void
test_refuses_bare_cr(void **state)
{
	(void)state;
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX: a\rb\r\n\r\n", 400);
}

static void
test_refuses_nul_byte(void **state)
{
	const char s[] = "CONNECT a:1 HTTP/1.1\r\nX: a\0b\r\n\r\n";

	(void)state;
	assert_int_equal(http_head_end(s, sizeof(s) - 1), -1);
}

static void
test_refuses_obs_fold(void **state)
{
	(void)state;
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", 400);
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX-A: b\r\n\tc\r\n\r\n", 400);
}

static void
test_refuses_space_before_colon(void **state)
{
	(void)state;
	/* "Transfer-Encoding : chunked" is the classic TE.TE obfuscation. */
	assert_refused("CONNECT a:1 HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n", 400);
}

static void
test_refuses_control_byte_in_value(void **state)
{
	(void)state;
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400);
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX: a\x7f" "b\r\n\r\n", 400);
}

static void
test_refuses_obs_text_in_value(void **state)
{
	(void)state;
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n", 400);
}

static void
test_refuses_non_token_header_name(void **state)
{
	(void)state;
	assert_refused("CONNECT a:1 HTTP/1.1\r\nX(y): z\r\n\r\n", 400);
	assert_refused("CONNECT a:1 HTTP/1.1\r\n: z\r\n\r\n", 400);
}

static void
test_refuses_bad_request_line(void **state)
{
	(void)state;
	assert_refused("CONNECT  a:1 HTTP/1.1\r\n\r\n", 400);	/* double space */
	assert_refused("CONNECT a:1 HTTP/2.0\r\n\r\n", 400);
	assert_refused("CONNECT a:1 HTTP/1.1 \r\n\r\n", 400);
	assert_refused("CONNECT a:1\r\n\r\n", 400);
	assert_refused("CON\x01NECT a:1 HTTP/1.1\r\n\r\n", 400);
	assert_refused("CONNECT a\x80:1 HTTP/1.1\r\n\r\n", 400);
	assert_refused("\r\n\r\n", 400);
}

static void
test_refuses_too_many_headers_with_431(void **state)
{
	char buf[HTTP_HEAD_MAX];
	size_t off = 0;
	int i, status;

	(void)state;
	off += (size_t)snprintf(buf + off, sizeof(buf) - off, "CONNECT a:1 HTTP/1.1\r\n");
	for (i = 0; i < HTTP_MAX_HEADERS + 1; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "X%d: y\r\n", i);
	snprintf(buf + off, sizeof(buf) - off, "\r\n");
	assert_int_equal(parse(buf, &status), -1);
	assert_int_equal(status, 431);
}

static void
test_refuses_head_over_16k_with_431(void **state)
{
	static char buf[HTTP_HEAD_MAX + 64];
	char err[64];
	int status;

	(void)state;
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "CONNECT a:1 HTTP/1.1\r\nX: ", 25);
	memcpy(buf + sizeof(buf) - 4, "\r\n\r\n", 4);
	assert_int_equal(http_parse_head(buf, sizeof(buf), &req, &status, err,
	    sizeof(err)), -1);
	assert_int_equal(status, 431);
}

static void
test_find_header_counts_duplicates_case_insensitively(void **state)
{
	const struct http_header *h;
	int status;

	(void)state;
	assert_int_equal(parse("GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "content-length: 2\r\n\r\n", &status), 0);
	assert_int_equal(http_find_header(req.headers, req.nheaders, "Content-Length", &h), 2);
	assert_memory_equal(h->value, "1", 1);
	assert_int_equal(http_find_header(req.headers, req.nheaders, "Host", &h), 0);
	assert_null(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_connect_with_headers),
		cmocka_unit_test(test_head_end_waits_for_blank_line),
		cmocka_unit_test(test_head_end_stops_at_first_blank_line),
		cmocka_unit_test(test_refuses_bare_lf_line_ending),
		cmocka_unit_test(test_refuses_bare_cr),
		cmocka_unit_test(test_refuses_nul_byte),
		cmocka_unit_test(test_refuses_obs_fold),
		cmocka_unit_test(test_refuses_space_before_colon),
		cmocka_unit_test(test_refuses_control_byte_in_value),
		cmocka_unit_test(test_refuses_obs_text_in_value),
		cmocka_unit_test(test_refuses_non_token_header_name),
		cmocka_unit_test(test_refuses_bad_request_line),
		cmocka_unit_test(test_refuses_too_many_headers_with_431),
		cmocka_unit_test(test_refuses_head_over_16k_with_431),
		cmocka_unit_test(test_find_header_counts_duplicates_case_insensitively),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
