/* Unit tests for proto/chunked: chunked framing and Transfer-Encoding
 * values. Hostile cases are named for the attack they stand for; every
 * body is also fed byte by byte and in random splits, which must give the
 * same verdict and the same count as one feed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/chunked.h"

/* Feeds b in pieces of at most step bytes (0: one piece), each from an
 * exact-size heap copy. Returns the total the parser counted, or -1; sets
 * *done. Stops at the first call that finishes or fails. */
static long
feed_split(const char *b, size_t len, size_t step, int *done)
{
	struct chunked c;
	size_t off = 0;
	long total = 0;

	chunked_init(&c);
	*done = 0;
	if (step == 0)
		step = len > 0 ? len : 1;
	do {
		size_t k = len - off < step ? len - off : step;
		char *copy = malloc(k > 0 ? k : 1);
		long rc;

		assert_non_null(copy);
		memcpy(copy, b + off, k);
		rc = chunked_feed(&c, copy, k, done);
		free(copy);
		if (rc == -1) {
			/* The failure sticks. */
			assert_int_equal(chunked_feed(&c, "0\r\n\r\n", 5, done), -1);
			return -1;
		}
		assert_true(rc >= 0 && (size_t)rc <= k);
		total += rc;
		if (*done) {
			/* Nothing more is taken once the message is over. */
			int again;

			assert_int_equal(chunked_feed(&c, "0\r\n\r\n", 5, &again), 0);
			assert_int_equal(again, 1);
			return total;
		}
		assert_int_equal((size_t)rc, k);	/* not done: took it all */
		off += k;
	} while (off < len);
	return total;
}

/* One feed, byte by byte, and a few other splits: all must agree. */
static long
feed_all_ways(const char *b, size_t len, int *done)
{
	static const size_t steps[] = { 1, 2, 3, 5, 7, 64 };
	long whole, rc;
	int d;
	size_t i;

	whole = feed_split(b, len, 0, done);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		rc = feed_split(b, len, steps[i], &d);
		if (rc != whole || (rc != -1 && d != *done))
			fail_msg("split %zu: %ld done %d, whole: %ld done %d",
			    steps[i], rc, d, whole, *done);
	}
	return whole;
}

static void
expect_body(const char *b, size_t len, long want)
{
	int done;

	assert_int_equal(feed_all_ways(b, len, &done), want);
	assert_int_equal(done, 1);
}

#define BODY(lit)	expect_body((lit), sizeof(lit) - 1, (long)(sizeof(lit) - 1))

static void
expect_refused_n(const char *b, size_t len)
{
	int done;

	assert_int_equal(feed_all_ways(b, len, &done), -1);
	assert_int_equal(done, 0);
}

#define REFUSED(lit)	expect_refused_n((lit), sizeof(lit) - 1)

/* Well-formed bodies */

static void
test_simple_body(void **state)
{
	(void)state;
	BODY("5\r\nhello\r\n0\r\n\r\n");
	BODY("0\r\n\r\n");
}

static void
test_several_chunks_hex_sizes(void **state)
{
	(void)state;
	BODY("5\r\nhello\r\n1\r\n \r\na\r\n0123456789\r\nA\r\nabcdefghij\r\n"
	    "0\r\n\r\n");
	BODY("0000000000000003\r\nabc\r\n000\r\n\r\n");
}

static void
test_chunk_data_may_hold_crlf_and_nul(void **state)
{
	/* Data is counted, never scanned. */
	BODY("6\r\n\r\n\0\r\n0\r\n0\r\n\r\n");
	(void)state;
}

static void
test_extensions(void **state)
{
	(void)state;
	BODY("5;name\r\nhello\r\n0\r\n\r\n");
	BODY("5;name=value;other=\"quoted \\\" value\\\\\"\r\nhello\r\n"
	    "0;last=1\r\n\r\n");
	BODY("5;a=b;c;d=\"\"\r\nhello\r\n0\r\n\r\n");
}

static void
test_trailers(void **state)
{
	(void)state;
	BODY("5\r\nhello\r\n0\r\nExpires: never\r\nX-Sum:abc\r\n"
	    "X-Empty:\r\nX-Ows: \t v a l \t \r\n\r\n");
}

static void
test_byte_by_byte_matches_one_feed(void **state)
{
	const char b[] = "3;x=\"y\"\r\nabc\r\n10\r\n0123456789abcdef\r\n"
	    "0\r\nT: v\r\n\r\n";
	struct chunked c;
	size_t i;
	int done = 0;
	long rc;

	(void)state;
	chunked_init(&c);
	for (i = 0; i < sizeof(b) - 1; i++) {
		assert_int_equal(done, 0);
		rc = chunked_feed(&c, b + i, 1, &done);
		assert_int_equal(rc, 1);
	}
	assert_int_equal(done, 1);
}

static void
test_empty_feed_is_harmless(void **state)
{
	struct chunked c;
	int done;

	(void)state;
	chunked_init(&c);
	assert_int_equal(chunked_feed(&c, "", 0, &done), 0);
	assert_int_equal(done, 0);
	assert_int_equal(chunked_feed(&c, NULL, 0, &done), 0);
	assert_int_equal(chunked_feed(&c, "0\r\n\r\n", 5, &done), 5);
	assert_int_equal(done, 1);
}

static void
test_large_chunk_size_counts_without_copy(void **state)
{
	struct chunked c;
	static char data[1 << 16];
	int done, i;

	(void)state;
	chunked_init(&c);
	memset(data, 'x', sizeof(data));
	assert_int_equal(chunked_feed(&c, "7fffffffffffffff\r\n", 18, &done), 18);
	for (i = 0; i < 16; i++) {
		assert_int_equal(chunked_feed(&c, data, sizeof(data), &done),
		    (long)sizeof(data));
		assert_int_equal(done, 0);
	}
}

/* Smuggling: what follows the body is the next message */

static void
test_bytes_after_end_not_consumed(void **state)
{
	const char b[] = "0\r\n\r\nGET /admin HTTP/1.1\r\nHost: internal\r\n\r\n";
	struct chunked c;
	int done;

	(void)state;
	chunked_init(&c);
	assert_int_equal(chunked_feed(&c, b, sizeof(b) - 1, &done), 5);
	assert_int_equal(done, 1);
	expect_body(b, sizeof(b) - 1, 5);
}

static void
test_bytes_after_end_not_consumed_with_data_and_trailer(void **state)
{
	const char b[] = "5\r\nhello\r\n0\r\nT: x\r\n\r\nPOST /x HTTP/1.1\r\n";

	(void)state;
	expect_body(b, sizeof(b) - 1, (long)strlen("5\r\nhello\r\n0\r\nT: x\r\n\r\n"));
}

static void
test_incomplete_body_takes_all_and_waits(void **state)
{
	const char b[] = "5\r\nhello\r\n0\r\n";
	int done;

	(void)state;
	assert_int_equal(feed_all_ways(b, sizeof(b) - 1, &done), (long)sizeof(b) - 1);
	assert_int_equal(done, 0);
}

/* Malformed chunk-size lines */

static void
test_refuses_bare_lf_after_size(void **state)
{
	(void)state;
	REFUSED("5\nhello\r\n0\r\n\r\n");
	REFUSED("0\n\r\n");
	REFUSED("0\r\n\n");
	REFUSED("5;a=b\nhello\r\n0\r\n\r\n");
}

static void
test_refuses_cr_without_lf(void **state)
{
	(void)state;
	REFUSED("5\rhello\r\n0\r\n\r\n");
	REFUSED("0\r\r\n\r\n");
	REFUSED("0\r\n\rX");
}

static void
test_refuses_size_with_0x_prefix(void **state)
{
	(void)state;
	/* "0x5" would be read as 0 with junk by a lenient parser. */
	REFUSED("0x5\r\nhello\r\n0\r\n\r\n");
	REFUSED("0X5\r\nhello\r\n0\r\n\r\n");
}

static void
test_refuses_negative_and_signed_size(void **state)
{
	(void)state;
	REFUSED("-1\r\nx\r\n0\r\n\r\n");
	REFUSED("+5\r\nhello\r\n0\r\n\r\n");
}

static void
test_refuses_space_before_or_after_size(void **state)
{
	(void)state;
	REFUSED(" 5\r\nhello\r\n0\r\n\r\n");
	REFUSED("\t5\r\nhello\r\n0\r\n\r\n");
	REFUSED("5 \r\nhello\r\n0\r\n\r\n");
	REFUSED("5 ;a\r\nhello\r\n0\r\n\r\n");
	REFUSED("0 \r\n\r\n");
}

static void
test_refuses_empty_size(void **state)
{
	(void)state;
	REFUSED("\r\nhello\r\n0\r\n\r\n");
	REFUSED(";a\r\n\r\n");
}

static void
test_refuses_non_hex_size(void **state)
{
	(void)state;
	REFUSED("5g\r\nhello\r\n0\r\n\r\n");
	REFUSED("g\r\n");
	REFUSED("1.5\r\n");
}

static void
test_refuses_size_over_16_hex_digits(void **state)
{
	(void)state;
	REFUSED("00000000000000005\r\nhello\r\n0\r\n\r\n");
	REFUSED("10000000000000000\r\n");
}

static void
test_refuses_size_overflowing_2_63(void **state)
{
	struct chunked c;
	int done;

	(void)state;
	REFUSED("8000000000000000\r\n");
	REFUSED("ffffffffffffffff\r\n");
	chunked_init(&c);
	assert_int_equal(chunked_feed(&c, "7fffffffffffffff\r\n", 18, &done), 18);
}

static void
test_refuses_data_longer_than_size(void **state)
{
	(void)state;
	/* Missing CRLF after data: the extra bytes would be data to one
	 * parser and a new chunk-size to another. */
	REFUSED("5\r\nhelloX\r\n0\r\n\r\n");
	REFUSED("5\r\nhello0\r\n\r\n");
	REFUSED("5\r\nhello\n0\r\n\r\n");
	REFUSED("5\r\nhello\r0\r\n\r\n");
}

static void
test_refuses_data_shorter_than_size(void **state)
{
	int done;

	(void)state;
	/* The CRLF is taken as data; what follows is not a CRLF. */
	REFUSED("6\r\nhello\r\n0\r\n\r\n");
	/* And a body that only appears to end is still waiting. */
	assert_int_equal(feed_all_ways("7\r\nhello\r\n", 10, &done), 10);
	assert_int_equal(done, 0);
}

static void
test_refuses_overlong_size_line(void **state)
{
	static char b[CHUNKED_LINE_MAX + 64];
	size_t n;
	int done;

	(void)state;
	/* Exactly at the limit: "1;" + name + CRLF = CHUNKED_LINE_MAX. */
	b[0] = '1';
	b[1] = ';';
	memset(b + 2, 'a', CHUNKED_LINE_MAX - 4);
	n = CHUNKED_LINE_MAX - 2;
	memcpy(b + n, "\r\nx\r\n0\r\n\r\n", 10);
	assert_int_equal(feed_split(b, n + 10, 0, &done), (long)n + 10);
	assert_int_equal(done, 1);
	/* One byte more. */
	memset(b + 2, 'a', CHUNKED_LINE_MAX - 3);
	n = CHUNKED_LINE_MAX - 1;
	memcpy(b + n, "\r\nx\r\n0\r\n\r\n", 10);
	expect_refused_n(b, n + 10);
	/* The limit holds without a CRLF in sight. */
	memset(b + 2, 'a', sizeof(b) - 2);
	expect_refused_n(b, sizeof(b));
}

/* Malformed chunk extensions */

static void
test_refuses_nul_in_extension(void **state)
{
	(void)state;
	REFUSED("5;a\0b\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\0\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\"\0\"\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\"\\\0\"\r\nhello\r\n0\r\n\r\n");
}

static void
test_refuses_control_and_non_ascii_in_extension(void **state)
{
	(void)state;
	REFUSED("5;a=\x01\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\"\x7f\"\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\"\xc3\xa4\"\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;\xc3\xa4\r\nhello\r\n0\r\n\r\n");
}

static void
test_refuses_bare_lf_inside_quoted_extension(void **state)
{
	(void)state;
	/* A lenient parser ends the line at the LF; the quoted-string
	 * grammar does not, so the two disagree on where data starts. */
	REFUSED("5;a=\"x\ny\"\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\"x\r\nhello\r\n0\r\n\r\n");
}

static void
test_refuses_malformed_extension_syntax(void **state)
{
	(void)state;
	REFUSED("5;\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;=v\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a==b\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=\"b\"c\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a=b\"c\"\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;;a\r\nhello\r\n0\r\n\r\n");
	REFUSED("5; a\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a =b\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a= b\r\nhello\r\n0\r\n\r\n");
	REFUSED("5;a(b)\r\nhello\r\n0\r\n\r\n");
}

/* Malformed trailers */

static void
test_refuses_trailer_obs_fold(void **state)
{
	(void)state;
	REFUSED("0\r\nX-A: 1\r\n continued\r\n\r\n");
	REFUSED("0\r\nX-A: 1\r\n\tcontinued\r\n\r\n");
	REFUSED("0\r\n x: 1\r\n\r\n");
}

static void
test_refuses_trailer_without_colon(void **state)
{
	(void)state;
	REFUSED("0\r\nX-A 1\r\n\r\n");
	REFUSED("0\r\nX-A\r\n\r\n");
	REFUSED("0\r\n:v\r\n\r\n");
	REFUSED("0\r\nX-A : 1\r\n\r\n");
}

static void
test_refuses_bad_bytes_in_trailer(void **state)
{
	(void)state;
	REFUSED("0\r\nX-A: a\0b\r\n\r\n");
	REFUSED("0\r\nX-A: a\nb\r\n\r\n");
	REFUSED("0\r\nX-A: a\rb\r\n\r\n");
	REFUSED("0\r\nX-A: \xff\r\n\r\n");
	REFUSED("0\r\nX-A: \x1b[31m\r\n\r\n");
	REFUSED("0\r\nX-A: 1\n\r\n");
	REFUSED("0\r\nX-A: 1\r\n\n");
}

/* A trailer is forwarded verbatim: one named for framing, routing or a
 * hop (Proxy-Authorization above all) would reach the upstream, and one
 * that merges trailers into the header section would act on it. */
static void
test_refuses_hop_by_hop_and_framing_trailer_fields(void **state)
{
	(void)state;
	REFUSED("5\r\nhello\r\n0\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n");
	REFUSED("0\r\nX-A: 1\r\nproxy-connection: keep-alive\r\n\r\n");
	REFUSED("0\r\nPROXY-A-field-name-longer-than-the-kept-prefix: v\r\n\r\n");
	REFUSED("0\r\nContent-Length: 5\r\n\r\n");
	REFUSED("0\r\nTransfer-Encoding: chunked\r\n\r\n");
	REFUSED("0\r\nHost: evil.test\r\n\r\n");
	REFUSED("0\r\nConnection: close\r\n\r\n");
	REFUSED("0\r\nKeep-Alive: 1\r\n\r\n");
	REFUSED("0\r\nTE: trailers\r\n\r\n");
	REFUSED("0\r\nTrailer: x\r\n\r\n");
	REFUSED("0\r\nUpgrade: h2c\r\n\r\n");
	/* Controls: names that only begin or end like one pass. */
	BODY("0\r\nHostname: x\r\nTe-X: 1\r\nX-Proxy-A: 1\r\nProxy: 1\r\n"
	    "Content-Length-X: 1\r\nContent-Lengt: 1\r\n\r\n");
}

static void
test_refuses_more_than_100_trailer_fields(void **state)
{
	static char b[4096];
	size_t n = 0;
	int i;

	(void)state;
	n += (size_t)sprintf(b + n, "0\r\n");
	for (i = 0; i < CHUNKED_MAX_TRAILERS; i++)
		n += (size_t)sprintf(b + n, "T%d: v\r\n", i);
	expect_body(b, n + (size_t)sprintf(b + n, "\r\n"), (long)n + 2);
	n += (size_t)sprintf(b + n, "T: v\r\n\r\n");
	expect_refused_n(b, n);
}

static void
test_refuses_trailer_section_over_16k(void **state)
{
	static char b[CHUNKED_TRAILER_MAX + 64];
	size_t n;

	(void)state;
	/* Exactly at the limit: "X: " value CRLF CRLF. */
	memcpy(b, "0\r\nX: ", 6);
	n = 3 + CHUNKED_TRAILER_MAX - 4;
	memset(b + 6, 'v', n - 6);
	memcpy(b + n, "\r\n\r\n", 4);
	expect_body(b, n + 4, (long)n + 4);
	b[n] = 'v';
	memcpy(b + n + 1, "\r\n\r\n", 4);
	expect_refused_n(b, n + 5);
}

/* Transfer-Encoding values */

static int
te(const char *s)
{
	return chunked_te_is_final_chunked(s, strlen(s));
}

static void
test_te_plain_chunked(void **state)
{
	(void)state;
	assert_int_equal(te("chunked"), 1);
	assert_int_equal(te("gzip, chunked"), 1);
	assert_int_equal(te("gzip,chunked"), 1);
	assert_int_equal(te("gzip ,\tchunked"), 1);
}

static void
test_te_obfuscation_whitespace_and_case(void **state)
{
	(void)state;
	/* OWS and case are allowed by the grammar: all mean chunked, and the
	 * forwarded head says so to the peer too. */
	assert_int_equal(te("chunked "), 1);
	assert_int_equal(te(" chunked"), 1);
	assert_int_equal(te("Chunked"), 1);
	assert_int_equal(te("CHUNKED"), 1);
	assert_int_equal(te("chunked\t"), 1);
}

static void
test_te_obfuscation_lookalike_codings(void **state)
{
	(void)state;
	assert_int_equal(te("x-chunked"), 0);
	assert_int_equal(te("xchunked"), 0);
	assert_int_equal(te("chunkedx"), 0);
	assert_int_equal(te("chunk"), 0);
	assert_int_equal(te("identity"), 0);
	assert_int_equal(te("gzip"), 0);
}

static void
test_te_chunked_not_last(void **state)
{
	(void)state;
	assert_int_equal(te("chunked, identity"), 0);
	assert_int_equal(te("chunked, gzip"), 0);
	assert_int_equal(te("identity, chunked"), 1);
}

static void
test_te_empty_list_elements_tolerated(void **state)
{
	(void)state;
	assert_int_equal(te(", chunked"), 1);
	assert_int_equal(te("chunked,"), 1);
	assert_int_equal(te("gzip, , chunked ,"), 1);
	assert_int_equal(te(",,chunked,,"), 1);
}

static void
test_te_refuses_malformed(void **state)
{
	(void)state;
	assert_int_equal(te("chunked, chunked"), -1);
	assert_int_equal(te("chunked;q=1"), -1);
	assert_int_equal(te("chunked ;q=1"), -1);
	assert_int_equal(te("chunk ed"), -1);
	assert_int_equal(te("\"chunked\""), -1);
	assert_int_equal(te("chunked\r\n"), -1);
	assert_int_equal(te("\vchunked"), -1);
	assert_int_equal(te("chunked\xc2\xa0"), -1);
	assert_int_equal(te("gzip chunked"), -1);
	assert_int_equal(te(""), -1);
	assert_int_equal(te(" "), -1);
	assert_int_equal(te(",,"), -1);
	assert_int_equal(chunked_te_is_final_chunked("chunked\0", 8), -1);
	assert_int_equal(chunked_te_is_final_chunked(NULL, 0), -1);
}

static void
test_te_reads_only_len_bytes(void **state)
{
	(void)state;
	assert_int_equal(chunked_te_is_final_chunked("chunked, gzip", 7), 1);
	assert_int_equal(chunked_te_is_final_chunked("gzip, chunked;x", 13), 1);
}

static void
test_refuses_null_arguments(void **state)
{
	struct chunked c;
	int done;

	(void)state;
	chunked_init(&c);
	assert_int_equal(chunked_feed(NULL, "0\r\n\r\n", 5, &done), -1);
	assert_int_equal(chunked_feed(&c, "0\r\n\r\n", 5, NULL), -1);
	assert_int_equal(chunked_feed(&c, NULL, 5, &done), -1);
}

/* Deterministic random bodies: a valid body is counted exactly in every
 * split; random bytes never crash and never count past the input. */
static void
test_random_bodies_split_anywhere(void **state)
{
	static const char alphabet[] = "0123456789abcdef;=\"\\\r\n :xT";
	static char b[8192];
	uint32_t x = 0x1234567;
	int i, done;

	(void)state;
	for (i = 0; i < 2000; i++) {
		size_t n = 0, k, j;
		long rc;
		int chunks, ch;

		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		chunks = (int)(x % 5);
		for (ch = 0; ch < chunks; ch++) {
			x ^= x << 13; x ^= x >> 17; x ^= x << 5;
			k = 1 + x % 300;
			n += (size_t)sprintf(b + n, "%zx%s\r\n", k,
			    (x & 0x100) ? ";e=\"v\"" : "");
			for (j = 0; j < k; j++)
				b[n + j] = (char)(x >> (j % 24));
			n += k;
			memcpy(b + n, "\r\n", 2);
			n += 2;
		}
		n += (size_t)sprintf(b + n, "0\r\n%s\r\n",
		    (x & 0x200) ? "T: v\r\n" : "");
		k = n;
		memcpy(b + n, "GET / HTTP/1.1\r\n", 16);
		n += 16;
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		rc = feed_split(b, n, 1 + x % 97, &done);
		assert_int_equal(rc, (long)k);
		assert_int_equal(done, 1);
	}
	for (i = 0; i < 20000; i++) {
		size_t n = 1 + (x >> 3) % 64, j;
		long rc;

		for (j = 0; j < n; j++) {
			x ^= x << 13; x ^= x >> 17; x ^= x << 5;
			/* Mostly grammar bytes, some anything. */
			b[j] = alphabet[x % (sizeof(alphabet) - 1)];
			if ((x & 0xf00) == 0)
				b[j] = (char)(x >> 16);
		}
		rc = feed_split(b, n, 0, &done);
		assert_true(rc >= -1 && rc <= (long)n);
		assert_int_equal(feed_split(b, n, 1, &done), rc);
	}
}

/* chunked_decode: the data of a body fed in pieces of at most step bytes
 * (0: one piece), each piece decoded run by run. Returns the bytes the
 * parser took (framing and data), or -1; the data goes to out. */
static long
decode_split(const char *b, size_t len, size_t step, char *out, size_t *outlen,
    int *done)
{
	struct chunked c;
	size_t off = 0;
	long total = 0;

	chunked_init(&c);
	*done = 0;
	*outlen = 0;
	if (step == 0)
		step = len > 0 ? len : 1;
	while (off < len && !*done) {
		size_t k = len - off < step ? len - off : step, used = 0;

		while (used < k && !*done) {
			size_t doff, dlen;
			long rc = chunked_decode(&c, b + off + used, k - used, done,
			    &doff, &dlen);

			if (rc == -1)
				return -1;
			assert_true(rc > 0 || *done);
			/* The data, if any, ends the run. */
			assert_true(dlen == 0 || doff + dlen == (size_t)rc);
			memcpy(out + *outlen, b + off + used + doff, dlen);
			*outlen += dlen;
			used += (size_t)rc;
			total += rc;
		}
		off += k;
	}
	return total;
}

static void
test_decode_gives_the_data_in_any_split(void **state)
{
	static const char b[] = "5\r\nhello\r\n7;x=\"1\"\r\n, world\r\n"
	    "10\r\n0123456789abcdef\r\n0\r\nX-T: t\r\n\r\nGET / HTTP/1.1\r\n";
	static const size_t steps[] = { 0, 1, 2, 3, 5, 7, 64 };
	char out[sizeof(b)];
	size_t i, n;
	int done;

	(void)state;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		assert_int_equal(decode_split(b, sizeof(b) - 1, steps[i], out, &n, &done),
		    (long)(strstr(b, "GET") - b));
		assert_int_equal(done, 1);
		assert_int_equal(n, 28);
		assert_memory_equal(out, "hello, world0123456789abcdef", 28);
	}
}

/* The decoder judges by the same grammar: what chunked_feed refuses, it
 * refuses, in any split (a body smuggled to an HTTP/1.0 client). */
static void
test_decode_refuses_what_feed_refuses(void **state)
{
	static const char *const bad[] = {
		"5\r\nhelloX\r\n0\r\n\r\n",		/* data longer than its size */
		"5\nhello\r\n0\r\n\r\n",		/* bare LF */
		"5 \r\nhello\r\n0\r\n\r\n",		/* BWS */
		"-5\r\nhello\r\n0\r\n\r\n",
		"5\r\nhello\r\n0\r\n Folded: x\r\n\r\n",
		"8000000000000000\r\n",
	};
	char out[64];
	size_t i, n;
	int done;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(decode_split(bad[i], strlen(bad[i]), 0, out, &n, &done), -1);
		assert_int_equal(decode_split(bad[i], strlen(bad[i]), 1, out, &n, &done), -1);
	}
}

static void
test_decode_random_bodies_match_their_data(void **state)
{
	static char b[8192], want[4096], out[8192];
	uint32_t x = 0x7654321;
	int i, done;

	(void)state;
	for (i = 0; i < 2000; i++) {
		size_t n = 0, w = 0, k, j, got;
		int chunks, ch;
		long rc, fed;

		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		chunks = (int)(x % 6);
		for (ch = 0; ch < chunks; ch++) {
			x ^= x << 13; x ^= x >> 17; x ^= x << 5;
			k = 1 + x % 600;
			n += (size_t)sprintf(b + n, "%zX%s\r\n", k, (x & 0x100) ? ";e" : "");
			for (j = 0; j < k; j++)
				want[w++] = b[n + j] = (char)(x >> (j % 24));
			n += k;
			memcpy(b + n, "\r\n", 2);
			n += 2;
		}
		n += (size_t)sprintf(b + n, "0\r\n\r\nNEXT");
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		rc = decode_split(b, n, 1 + x % 131, out, &got, &done);
		fed = feed_split(b, n, 0, &done);
		assert_int_equal(rc, fed);
		assert_int_equal(rc, (long)(n - 4));
		assert_int_equal(got, w);
		assert_memory_equal(out, want, w);
	}
}

/* chunked_pending: what a chunk-size announced counts before the data
 * arrives, so a caller with a body bound (ctl/client.c) can refuse a
 * huge chunk at once; it falls as data comes and is 0 after an error. */
static void
test_pending_counts_an_announced_chunk_before_its_data(void **state)
{
	struct chunked c;
	size_t off, len;
	int done;

	(void)state;
	chunked_init(&c);
	assert_int_equal(chunked_pending(&c), 0);
	assert_int_equal(chunked_feed(&c, "7fffffff", 8, &done), 8);
	assert_true(chunked_pending(&c) == 0x7fffffffu);
	chunked_init(&c);
	assert_int_equal(chunked_decode(&c, "5\r\nhel", 6, &done, &off, &len),
	    6);
	assert_int_equal(len, 3);
	assert_true(chunked_pending(&c) == 2);
	assert_int_equal(chunked_feed(&c, "lo\r\n", 4, &done), 4);
	assert_true(chunked_pending(&c) == 0);
	assert_int_equal(chunked_feed(&c, "1x", 2, &done), -1);
	assert_true(chunked_pending(&c) == 0);
	assert_true(chunked_pending(NULL) == 0);
}

static void
test_decode_refuses_null_arguments(void **state)
{
	struct chunked c;
	size_t off, len;
	int done = 7;

	(void)state;
	chunked_init(&c);
	assert_int_equal(chunked_decode(&c, "0\r\n\r\n", 5, &done, NULL, &len), -1);
	assert_int_equal(done, 0);
	assert_int_equal(chunked_decode(&c, "0\r\n\r\n", 5, &done, &off, NULL), -1);
	assert_int_equal(chunked_decode(&c, "0\r\n\r\n", 5, &done, &off, &len), 5);
	assert_int_equal(done, 1);
	assert_int_equal(len, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_body),
		cmocka_unit_test(test_several_chunks_hex_sizes),
		cmocka_unit_test(test_chunk_data_may_hold_crlf_and_nul),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_trailers),
		cmocka_unit_test(test_byte_by_byte_matches_one_feed),
		cmocka_unit_test(test_empty_feed_is_harmless),
		cmocka_unit_test(test_large_chunk_size_counts_without_copy),
		cmocka_unit_test(test_bytes_after_end_not_consumed),
		cmocka_unit_test(test_bytes_after_end_not_consumed_with_data_and_trailer),
		cmocka_unit_test(test_incomplete_body_takes_all_and_waits),
		cmocka_unit_test(test_refuses_bare_lf_after_size),
		cmocka_unit_test(test_refuses_cr_without_lf),
		cmocka_unit_test(test_refuses_size_with_0x_prefix),
		cmocka_unit_test(test_refuses_negative_and_signed_size),
		cmocka_unit_test(test_refuses_space_before_or_after_size),
		cmocka_unit_test(test_refuses_empty_size),
		cmocka_unit_test(test_refuses_non_hex_size),
		cmocka_unit_test(test_refuses_size_over_16_hex_digits),
		cmocka_unit_test(test_refuses_size_overflowing_2_63),
		cmocka_unit_test(test_refuses_data_longer_than_size),
		cmocka_unit_test(test_refuses_data_shorter_than_size),
		cmocka_unit_test(test_refuses_overlong_size_line),
		cmocka_unit_test(test_refuses_nul_in_extension),
		cmocka_unit_test(test_refuses_control_and_non_ascii_in_extension),
		cmocka_unit_test(test_refuses_bare_lf_inside_quoted_extension),
		cmocka_unit_test(test_refuses_malformed_extension_syntax),
		cmocka_unit_test(test_refuses_trailer_obs_fold),
		cmocka_unit_test(test_refuses_trailer_without_colon),
		cmocka_unit_test(test_refuses_bad_bytes_in_trailer),
		cmocka_unit_test(test_refuses_hop_by_hop_and_framing_trailer_fields),
		cmocka_unit_test(test_refuses_more_than_100_trailer_fields),
		cmocka_unit_test(test_refuses_trailer_section_over_16k),
		cmocka_unit_test(test_te_plain_chunked),
		cmocka_unit_test(test_te_obfuscation_whitespace_and_case),
		cmocka_unit_test(test_te_obfuscation_lookalike_codings),
		cmocka_unit_test(test_te_chunked_not_last),
		cmocka_unit_test(test_te_empty_list_elements_tolerated),
		cmocka_unit_test(test_te_refuses_malformed),
		cmocka_unit_test(test_te_reads_only_len_bytes),
		cmocka_unit_test(test_refuses_null_arguments),
		cmocka_unit_test(test_random_bodies_split_anywhere),
		cmocka_unit_test(test_decode_gives_the_data_in_any_split),
		cmocka_unit_test(test_decode_refuses_what_feed_refuses),
		cmocka_unit_test(test_decode_random_bodies_match_their_data),
		cmocka_unit_test(test_decode_refuses_null_arguments),
		cmocka_unit_test(test_pending_counts_an_announced_chunk_before_its_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
