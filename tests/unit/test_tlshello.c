/* Unit tests for proto/tlshello: ClientHello SNI extraction. Two real
 * ClientHellos captured from openssl s_client on loopback, and hostile
 * ones built here field by field. Every run goes through an exact-size
 * heap copy so valgrind and ASan see any read past len. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/tlshello.h"

/* `openssl s_client -servername api.example.test` (OpenSSL 3.0, TLS 1.3 offer), captured on 127.0.0.1: 322 bytes. */
static const unsigned char openssl_tls13_hello[] = {
	0x16, 0x03, 0x01, 0x01, 0x3d, 0x01, 0x00, 0x01, 0x39, 0x03, 0x03, 0x58,
	0x93, 0x17, 0x55, 0x46, 0x46, 0x68, 0xf1, 0x4d, 0xac, 0xfb, 0x89, 0x5d,
	0x23, 0xa4, 0x35, 0x08, 0x9b, 0x7a, 0xe8, 0x78, 0x38, 0x8a, 0x4b, 0xad,
	0x40, 0xf8, 0x5a, 0x56, 0x61, 0x6d, 0x3c, 0x20, 0xc5, 0x35, 0x59, 0x98,
	0x94, 0xd5, 0x1d, 0x3f, 0x2d, 0x30, 0xce, 0x8c, 0x3a, 0x5b, 0x11, 0x38,
	0x9d, 0xfa, 0xc8, 0xb4, 0xd2, 0x24, 0x0b, 0x6b, 0x61, 0x55, 0x5b, 0x7d,
	0x40, 0x10, 0xc0, 0x8d, 0x00, 0x3e, 0x13, 0x02, 0x13, 0x03, 0x13, 0x01,
	0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
	0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b,
	0xc0, 0x23, 0xc0, 0x27, 0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39,
	0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d,
	0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0xb2,
	0x00, 0x00, 0x00, 0x15, 0x00, 0x13, 0x00, 0x00, 0x10, 0x61, 0x70, 0x69,
	0x2e, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2e, 0x74, 0x65, 0x73,
	0x74, 0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00,
	0x16, 0x00, 0x14, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00,
	0x18, 0x01, 0x00, 0x01, 0x01, 0x01, 0x02, 0x01, 0x03, 0x01, 0x04, 0x00,
	0x23, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00,
	0x0d, 0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08,
	0x07, 0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08,
	0x05, 0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03,
	0x01, 0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06, 0x02, 0x00, 0x2b, 0x00,
	0x09, 0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00, 0x2d,
	0x00, 0x02, 0x01, 0x01, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d,
	0x00, 0x20, 0x57, 0xd6, 0x49, 0xff, 0x7b, 0x41, 0x18, 0x76, 0x93, 0x4e,
	0x90, 0xa9, 0x21, 0xee, 0xb9, 0x78, 0x7f, 0x94, 0x84, 0x47, 0x7b, 0xce,
	0xa7, 0xc9, 0xbb, 0x08, 0xca, 0xd0, 0x96, 0x21, 0xa4, 0x7e,
};

/* `openssl s_client -tls1_2 -servername Www.Example.TEST` (OpenSSL 3.0), captured on 127.0.0.1: 213 bytes. */
static const unsigned char openssl_tls12_hello[] = {
	0x16, 0x03, 0x01, 0x00, 0xd0, 0x01, 0x00, 0x00, 0xcc, 0x03, 0x03, 0x41,
	0xd3, 0xd3, 0x69, 0xc7, 0x09, 0xd1, 0xe3, 0x47, 0x96, 0x26, 0x63, 0x89,
	0x28, 0xe3, 0xbd, 0x5c, 0x5c, 0x65, 0x54, 0x55, 0x20, 0x4a, 0x9d, 0xed,
	0xe0, 0x68, 0x75, 0x5e, 0x60, 0xfa, 0x81, 0x00, 0x00, 0x38, 0xc0, 0x2c,
	0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa, 0xc0, 0x2b,
	0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b, 0xc0, 0x23,
	0xc0, 0x27, 0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09,
	0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d, 0x00, 0x3c,
	0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0x6b, 0x00, 0x00,
	0x00, 0x15, 0x00, 0x13, 0x00, 0x00, 0x10, 0x57, 0x77, 0x77, 0x2e, 0x45,
	0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2e, 0x54, 0x45, 0x53, 0x54, 0x00,
	0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x0c, 0x00,
	0x0a, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18, 0x00,
	0x23, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00,
	0x0d, 0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08,
	0x07, 0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08,
	0x05, 0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03,
	0x01, 0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06, 0x02,
};

/* `openssl s_client -noservername` (OpenSSL 3.0), captured on 127.0.0.1: 297 bytes. */
static const unsigned char openssl_nosni_hello[] = {
	0x16, 0x03, 0x01, 0x01, 0x24, 0x01, 0x00, 0x01, 0x20, 0x03, 0x03, 0xd3,
	0xbb, 0xf9, 0xcc, 0xb8, 0xfa, 0x01, 0x65, 0xdd, 0x3d, 0xf3, 0xc6, 0x00,
	0x79, 0xa4, 0xec, 0xc8, 0xb3, 0x00, 0xea, 0xc3, 0x49, 0x3a, 0x32, 0x62,
	0xb3, 0x33, 0xc8, 0x50, 0xd0, 0xaa, 0x09, 0x20, 0x62, 0xa8, 0xd1, 0x81,
	0xae, 0xe1, 0xa0, 0x7a, 0x1a, 0x2f, 0xd4, 0x15, 0xb3, 0x5c, 0x7c, 0xd8,
	0xbf, 0x5e, 0xfb, 0xdf, 0x7b, 0xb5, 0xe2, 0x33, 0xb0, 0x60, 0xa5, 0x5c,
	0x5e, 0x6d, 0xe7, 0xc7, 0x00, 0x3e, 0x13, 0x02, 0x13, 0x03, 0x13, 0x01,
	0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
	0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b,
	0xc0, 0x23, 0xc0, 0x27, 0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39,
	0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d, 0x00, 0x9c, 0x00, 0x3d,
	0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0x99,
	0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x16,
	0x00, 0x14, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18,
	0x01, 0x00, 0x01, 0x01, 0x01, 0x02, 0x01, 0x03, 0x01, 0x04, 0x00, 0x23,
	0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0x0d,
	0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08, 0x07,
	0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05,
	0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03, 0x01,
	0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06, 0x02, 0x00, 0x2b, 0x00, 0x09,
	0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00, 0x2d, 0x00,
	0x02, 0x01, 0x01, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00,
	0x20, 0x43, 0xd2, 0xaa, 0xad, 0xe3, 0x68, 0x29, 0xc5, 0xda, 0xdc, 0xa7,
	0x5c, 0x11, 0xc9, 0x2d, 0xfc, 0x42, 0xb9, 0x39, 0xc9, 0x8b, 0x14, 0xfd,
	0x1d, 0x41, 0xe6, 0xec, 0xe5, 0x00, 0xbb, 0x62, 0x45,
};

static int
sni_of(const unsigned char *b, size_t len, char *sni)
{
	unsigned char *copy = malloc(len > 0 ? len : 1);
	int rc;

	assert_non_null(copy);
	if (len > 0)
		memcpy(copy, b, len);
	rc = tlshello_sni(copy, len, sni, TLSHELLO_SNI_SIZE);
	free(copy);
	return rc;
}

/* The verdict on the whole input; every proper prefix must answer MORE or
 * that same verdict (the caller calls again as bytes arrive). */
static int
verdict(const unsigned char *b, size_t len, char *sni)
{
	char tmp[TLSHELLO_SNI_SIZE];
	int whole, rc;
	size_t i;

	whole = sni_of(b, len, sni);
	for (i = 0; i < len; i++) {
		rc = sni_of(b, i, tmp);
		if (rc != TLSHELLO_MORE && rc != whole)
			fail_msg("prefix of %zu/%zu bytes: %d, whole: %d", i, len,
			    rc, whole);
		if (rc != TLSHELLO_SNI)
			assert_string_equal(tmp, "");
	}
	if (whole != TLSHELLO_SNI)
		assert_string_equal(sni, "");
	return whole;
}

/* A ClientHello built field by field: msg holds the handshake message,
 * ext the extensions block being assembled, rec the record stream. */
static unsigned char msg[TLSHELLO_INPUT_MAX + 4096];
static unsigned char ext[TLSHELLO_INPUT_MAX + 4096];
static unsigned char rec[2 * TLSHELLO_INPUT_MAX + 8192];
static size_t msgn, extn;

static void e8(unsigned int v) { ext[extn++] = (unsigned char)v; }
static void e16(unsigned int v) { e8(v >> 8 & 0xff); e8(v & 0xff); }
static void
eraw(const void *p, size_t k)
{
	memcpy(ext + extn, p, k);
	extn += k;
}
static void m8(unsigned int v) { msg[msgn++] = (unsigned char)v; }
static void m16(unsigned int v) { m8(v >> 8 & 0xff); m8(v & 0xff); }

/* server_name extension holding one host_name. */
static void
ext_sni(const char *name, size_t nlen)
{
	e16(0x0000);
	e16((unsigned int)nlen + 5);
	e16((unsigned int)nlen + 3);
	e8(0);
	e16((unsigned int)nlen);
	eraw(name, nlen);
}

#define EXT_SNI(lit)	ext_sni((lit), sizeof(lit) - 1)

static void
ext_other(unsigned int type, size_t len)
{
	e16(type);
	e16((unsigned int)len);
	memset(ext + extn, 0x5a, len);
	extn += len;
}

/* The handshake message around ext[0..extn) (no extensions block at all
 * when with_ext is 0). */
static void
build_hello(int with_ext)
{
	size_t body;

	msgn = 0;
	m8(1);
	m8(0); m16(0);		/* length, filled below */
	m16(0x0303);
	memset(msg + msgn, 0xab, 32);
	msgn += 32;
	m8(32);
	memset(msg + msgn, 0xcd, 32);
	msgn += 32;
	m16(4); m16(0x1301); m16(0x1302);
	m8(1); m8(0);
	if (with_ext) {
		m16((unsigned int)extn);
		memcpy(msg + msgn, ext, extn);
		msgn += extn;
	}
	body = msgn - 4;
	msg[1] = (unsigned char)(body >> 16);
	msg[2] = (unsigned char)(body >> 8);
	msg[3] = (unsigned char)body;
}

/* Wraps m[0..n) in handshake records cut at the given message offsets;
 * returns the stream length. */
static size_t
wrap_cuts(const unsigned char *m, size_t n, const size_t *cuts, size_t ncuts)
{
	size_t out = 0, start = 0, i;

	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : n, k = end - start;

		rec[out++] = 0x16;
		rec[out++] = 0x03;
		rec[out++] = 0x01;
		rec[out++] = (unsigned char)(k >> 8);
		rec[out++] = (unsigned char)k;
		memcpy(rec + out, m + start, k);
		out += k;
		start = end;
	}
	return out;
}

/* Wraps m[0..n) in records of at most frag bytes. */
static size_t
wrap_frag(const unsigned char *m, size_t n, size_t frag)
{
	size_t out = 0, start, k;

	for (start = 0; start < n; start += k) {
		k = n - start < frag ? n - start : frag;
		rec[out++] = 0x16;
		rec[out++] = 0x03;
		rec[out++] = 0x03;
		rec[out++] = (unsigned char)(k >> 8);
		rec[out++] = (unsigned char)k;
		memcpy(rec + out, m + start, k);
		out += k;
	}
	return out;
}

static size_t
wrap(void)
{
	return wrap_frag(msg, msgn, TLSHELLO_RECORD_MAX);
}

static int
built_verdict(char *sni)
{
	size_t n = wrap();

	return verdict(rec, n, sni);
}

static void
expect_sni_name_refused(const char *name, size_t nlen)
{
	char sni[TLSHELLO_SNI_SIZE];

	extn = 0;
	ext_sni(name, nlen);
	ext_other(0x000a, 4);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

#define SNI_REFUSED(lit)	expect_sni_name_refused((lit), sizeof(lit) - 1)

static const unsigned char *
find(const unsigned char *hay, size_t n, const char *needle, size_t nlen)
{
	const unsigned char *p = memmem(hay, n, needle, nlen);

	assert_non_null(p);
	return p;
}

/* Real ClientHellos */

static void
test_real_openssl_hello_sni_extracted(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	assert_int_equal(verdict(openssl_tls13_hello,
	    sizeof(openssl_tls13_hello), sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_real_openssl_tls12_hello_uppercase_sni_lower_cased(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	assert_int_equal(verdict(openssl_tls12_hello,
	    sizeof(openssl_tls12_hello), sni), TLSHELLO_SNI);
	assert_string_equal(sni, "www.example.test");
}

static void
test_byte_by_byte_delivery_needs_more_until_complete(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(openssl_tls13_hello); i++)
		assert_int_equal(sni_of(openssl_tls13_hello, i, sni), TLSHELLO_MORE);
	assert_int_equal(sni_of(openssl_tls13_hello, i, sni), TLSHELLO_SNI);
}

static void
test_bytes_after_hello_not_read(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello) + 16];
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(openssl_tls13_hello));
	memset(b + sizeof(openssl_tls13_hello), 0xff, 16);	/* not a record */
	assert_int_equal(sni_of(b, sizeof(b), sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_hello_split_across_two_records(void **state)
{
	const unsigned char *m = openssl_tls13_hello + 5;
	size_t n = sizeof(openssl_tls13_hello) - 5, len, cut;
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	/* Every cut point, including ones inside the SNI and the header. */
	for (cut = 1; cut < n; cut++) {
		len = wrap_cuts(m, n, &cut, 1);
		assert_int_equal(sni_of(rec, len, sni), TLSHELLO_SNI);
		assert_string_equal(sni, "api.example.test");
	}
	cut = 150;
	len = wrap_cuts(m, n, &cut, 1);
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_hello_split_across_three_records(void **state)
{
	const unsigned char *m = openssl_tls13_hello + 5;
	size_t n = sizeof(openssl_tls13_hello) - 5, len;
	const size_t cuts[] = { 2, 160 };
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	len = wrap_cuts(m, n, cuts, 2);
	assert_int_equal(len, sizeof(openssl_tls13_hello) + 10);
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_hello_in_one_byte_records(void **state)
{
	const unsigned char *m = openssl_tls13_hello + 5;
	size_t n = sizeof(openssl_tls13_hello) - 5, len;
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	len = wrap_frag(m, n, 1);
	assert_int_equal(len, n * 6);
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_refuses_zero_length_record(void **state)
{
	const unsigned char *m = openssl_tls13_hello + 5;
	size_t n = sizeof(openssl_tls13_hello) - 5, len;
	const size_t cuts[] = { 100, 100 };
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	len = wrap_cuts(m, n, cuts, 2);
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_MALFORMED);
}

static void
test_refuses_non_handshake_record_inside_hello(void **state)
{
	const unsigned char *m = openssl_tls13_hello + 5;
	size_t n = sizeof(openssl_tls13_hello) - 5, len, cut = 100;
	const unsigned char types[] = { 0x14, 0x15, 0x17, 0x18, 0x00 };
	char sni[TLSHELLO_SNI_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types); i++) {
		len = wrap_cuts(m, n, &cut, 1);
		rec[5 + cut] = types[i];
		assert_int_equal(verdict(rec, len, sni), TLSHELLO_MALFORMED);
	}
	/* Second record with version major 2 or 4. */
	len = wrap_cuts(m, n, &cut, 1);
	rec[5 + cut + 1] = 0x02;
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_MALFORMED);
}

/* Not TLS */

static void
test_not_tls_plain_http(void **state)
{
	const char *get = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	assert_int_equal(sni_of((const unsigned char *)get, strlen(get), sni),
	    TLSHELLO_NOT_TLS);
	assert_int_equal(sni_of((const unsigned char *)get, 1, sni),
	    TLSHELLO_NOT_TLS);
	assert_string_equal(sni, "");
}

static void
test_not_tls_first_byte_outside_tls_shapes(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello)];
	char sni[TLSHELLO_SNI_SIZE];
	unsigned int v;

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(b));
	for (v = 0; v < 0x80; v++) {
		if (v >= 0x14 && v <= 0x18)
			continue;
		b[0] = (unsigned char)v;
		assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_NOT_TLS);
	}
	/* High bit set but no SSLv2 CLIENT-HELLO behind it. */
	b[0] = 0x80;
	b[2] = 0x02;
	assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_NOT_TLS);
	assert_int_equal(sni_of(b, 2, sni), TLSHELLO_MORE);
}

static void
test_refuses_sslv2_client_hello(void **state)
{
	/* An SSLv2-compatible CLIENT-HELLO as OpenSSL and GnuTLS take it:
	 * two-byte header with the high bit, msg_type 1, version 3.1. */
	const unsigned char v2[] = { 0x80, 0x2e, 0x01, 0x03, 0x01, 0x00, 0x15,
	    0x00, 0x00, 0x00, 0x10 };
	unsigned char b[sizeof(v2)];
	char sni[TLSHELLO_SNI_SIZE];
	unsigned int v;

	(void)state;
	assert_int_equal(verdict(v2, sizeof(v2), sni), TLSHELLO_MALFORMED);
	memcpy(b, v2, sizeof(b));
	for (v = 0x80; v < 0x100; v++) {
		b[0] = (unsigned char)v;
		assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_MALFORMED);
	}
}

static void
test_refuses_record_version_major_not_3(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello)];
	char sni[TLSHELLO_SNI_SIZE];
	const unsigned char odd[][2] = { { 0x00, 0x01 }, { 0x02, 0x00 },
	    { 0x04, 0x01 }, { 0x0f, 0xff }, { 0x03, 0x05 }, { 0x03, 0xff },
	    { 0xfe, 0xfd } };
	size_t i;

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(b));
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		b[1] = odd[i][0];
		b[2] = odd[i][1];
		assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_MALFORMED);
	}
	/* 3.0 .. 3.4 are the record versions a hello may carry. */
	for (i = 0; i <= 4; i++) {
		b[1] = 3;
		b[2] = (unsigned char)i;
		assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_SNI);
		assert_string_equal(sni, "api.example.test");
	}
}

/* Go's record layer skips a leading warning alert and then serves the
 * ClientHello behind it: every non-handshake record type in front of the
 * hello must close the tunnel, not pass as "not TLS". */
static void
test_refuses_alert_ccs_data_heartbeat_before_client_hello(void **state)
{
	const unsigned char lead[][7] = {
		{ 0x15, 0x03, 0x01, 0x00, 0x02, 0x01, 0x5a },	/* alert */
		{ 0x14, 0x03, 0x01, 0x00, 0x01, 0x01, 0x00 },	/* CCS */
		{ 0x17, 0x03, 0x03, 0x00, 0x01, 0x00, 0x00 },	/* data */
		{ 0x18, 0x03, 0x03, 0x00, 0x01, 0x01, 0x00 },	/* heartbeat */
	};
	const size_t llen[] = { 7, 6, 6, 6 };
	unsigned char b[sizeof(openssl_tls13_hello) + 7];
	char sni[TLSHELLO_SNI_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		memcpy(b, lead[i], llen[i]);
		memcpy(b + llen[i], openssl_tls13_hello, sizeof(openssl_tls13_hello));
		assert_int_equal(verdict(b, llen[i] + sizeof(openssl_tls13_hello),
		    sni), TLSHELLO_MALFORMED);
		/* Refused on the first byte, before waiting for more. */
		assert_int_equal(sni_of(b, 1, sni), TLSHELLO_MALFORMED);
	}
}

static void
test_refuses_continuation_record_with_odd_version(void **state)
{
	const unsigned char *m = openssl_tls13_hello + 5;
	size_t n = sizeof(openssl_tls13_hello) - 5, len, cut = 100;
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	len = wrap_cuts(m, n, &cut, 1);
	rec[5 + cut + 1] = 0x00;
	rec[5 + cut + 2] = 0x01;
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_MALFORMED);
	len = wrap_cuts(m, n, &cut, 1);
	rec[5 + cut + 2] = 0x07;
	assert_int_equal(verdict(rec, len, sni), TLSHELLO_MALFORMED);
}

/* Two ClientHellos in one record: the server may act on the second. */
static void
test_refuses_second_message_in_the_hello_record(void **state)
{
	unsigned char b[2 * sizeof(openssl_tls13_hello)];
	const size_t n = sizeof(openssl_tls13_hello) - 5;
	char sni[TLSHELLO_SNI_SIZE];
	size_t len;

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(openssl_tls13_hello));
	memcpy(b + sizeof(openssl_tls13_hello), openssl_tls13_hello + 5, n);
	len = sizeof(openssl_tls13_hello) + n;
	b[3] = (unsigned char)((2 * n) >> 8);
	b[4] = (unsigned char)(2 * n);
	assert_int_equal(verdict(b, len, sni), TLSHELLO_MALFORMED);
	/* Decided as soon as the first hello ends, before the second. */
	assert_int_equal(sni_of(b, sizeof(openssl_tls13_hello), sni),
	    TLSHELLO_MALFORMED);
	/* One trailing byte of anything is refused the same way. */
	memcpy(b, openssl_tls13_hello, sizeof(openssl_tls13_hello));
	b[4] = (unsigned char)(b[4] + 1);
	b[sizeof(openssl_tls13_hello)] = 0x00;
	assert_int_equal(verdict(b, sizeof(openssl_tls13_hello) + 1, sni),
	    TLSHELLO_MALFORMED);
}

static void
test_refuses_encrypted_client_hello_extension(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	/* A GREASE ECH looks exactly like this: outer name, then 0xfe0d. */
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0xfe0d, 40);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	extn = 0;
	ext_other(0xfe0d, 40);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	extn = 0;
	ext_other(0xffce, 40);	/* ESNI, the older draft */
	EXT_SNI("api.example.test");
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Control: the neighbouring code points are ordinary extensions. */
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0xfe0c, 40);
	ext_other(0xfe0e, 40);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
}

/* The parse is incremental: ten thousand one-byte records fed six bytes
 * at a time are looked at a small constant number of times each (the
 * stateless walk this replaced re-read the whole stream on every call:
 * about 300 million bytes here). */
static void
test_bytes_examined_linear_in_one_byte_records(void **state)
{
	struct tlshello t;
	size_t n, len, calls = 0;
	int rc = TLSHELLO_MORE;

	(void)state;
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0x0015, 10000 - 81 - 25 - 4);	/* to a 10,000-byte message */
	build_hello(1);
	assert_int_equal(msgn, 10000);
	n = wrap_frag(msg, msgn, 1);
	assert_int_equal(n, 60000);
	tlshello_init(&t);
	for (len = 6; len <= n && rc == TLSHELLO_MORE; len += 6) {
		rc = tlshello_feed(&t, rec, len);
		calls++;
		assert_true(t.examined <= 2 * len + 16);
	}
	assert_int_equal(rc, TLSHELLO_SNI);
	assert_string_equal(t.sni, "api.example.test");
	assert_int_equal(calls, 10000);
	assert_true(t.examined <= 2 * n);
	/* And the same for a stream cut at every byte. */
	tlshello_init(&t);
	for (len = 1; len <= n; len++)
		rc = tlshello_feed(&t, rec, len);
	assert_int_equal(rc, TLSHELLO_SNI);
	assert_true(t.examined <= 2 * n);
}

static void
test_feed_equals_one_shot_at_every_cut(void **state)
{
	struct tlshello t;
	char sni[TLSHELLO_SNI_SIZE];
	size_t len, step;
	int rc, whole;

	(void)state;
	whole = sni_of(openssl_tls13_hello, sizeof(openssl_tls13_hello), sni);
	for (step = 1; step < 40; step++) {
		tlshello_init(&t);
		rc = TLSHELLO_MORE;
		for (len = 0; rc == TLSHELLO_MORE; len += step) {
			if (len > sizeof(openssl_tls13_hello))
				len = sizeof(openssl_tls13_hello);
			rc = tlshello_feed(&t, openssl_tls13_hello, len);
		}
		assert_int_equal(rc, whole);
		assert_string_equal(t.sni, sni);
		/* A final verdict stays. */
		assert_int_equal(tlshello_feed(&t, openssl_tls13_hello, 5), whole);
	}
}

static void
test_empty_input_needs_more(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	assert_int_equal(sni_of(openssl_tls13_hello, 0, sni), TLSHELLO_MORE);
	assert_int_equal(tlshello_sni(NULL, 0, sni, sizeof(sni)), TLSHELLO_MORE);
}

/* No SNI */

static void
test_real_openssl_hello_without_sni(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	assert_int_equal(verdict(openssl_nosni_hello, sizeof(openssl_nosni_hello),
	    sni), TLSHELLO_NO_SNI);
}

static void
test_server_name_retyped_unknown_is_no_sni(void **state)
{
	/* The captured TLS 1.3 hello with server_name retyped as 0xfafa
	 * (an unknown extension, skipped like any other). */
	unsigned char b[sizeof(openssl_tls13_hello)];
	const unsigned char *p = find(openssl_tls13_hello, sizeof(b),
	    "\x00\x00\x00\x15\x00\x13", 6);
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(b));
	b[p - openssl_tls13_hello] = 0xfa;
	b[p - openssl_tls13_hello + 1] = 0xfa;
	assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_NO_SNI);
}

static void
test_no_sni_extension(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	ext_other(0x000a, 8);
	ext_other(0x002b, 3);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_NO_SNI);
	extn = 0;
	build_hello(1);		/* empty extensions block */
	assert_int_equal(built_verdict(sni), TLSHELLO_NO_SNI);
}

static void
test_hello_without_extensions_block(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	build_hello(0);
	assert_int_equal(built_verdict(sni), TLSHELLO_NO_SNI);
}

/* SNI normalisation */

static void
test_built_hello_sni_extracted_after_other_extensions(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	ext_other(0x000a, 8);
	EXT_SNI("api.example.test");
	ext_other(0x0029, 40);	/* pre_shared_key last, as TLS 1.3 wants */
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_sni_with_uppercase_lower_cased(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	EXT_SNI("API.Example.TEST");
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
}

static void
test_sni_trailing_dot_removed_once(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	EXT_SNI("api.example.test.");
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
	SNI_REFUSED("api.example.test..");
	SNI_REFUSED(".");
}

static void
test_sni_length_limits(void **state)
{
	char name[300], sni[TLSHELLO_SNI_SIZE];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(name); i++)
		name[i] = (i % 50 == 49) ? '.' : 'a';
	extn = 0;
	ext_sni(name, 253);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
	assert_int_equal(strlen(sni), 253);
	/* 253 plus the one trailing dot dest removes. */
	name[253] = '.';
	extn = 0;
	ext_sni(name, 254);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
	assert_int_equal(strlen(sni), 253);
	name[253] = 'a';
	expect_sni_name_refused(name, 254);
	expect_sni_name_refused(name, 255);
	expect_sni_name_refused(name, 300);
}

static void
test_sni_longer_than_253_refused(void **state)
{
	char name[1000];

	(void)state;
	memset(name, 'a', sizeof(name));
	name[60] = name[120] = name[180] = name[240] = '.';
	expect_sni_name_refused(name, 260);
	expect_sni_name_refused(name, sizeof(name));
}

static void
test_sni_with_nul_byte_refused(void **state)
{
	(void)state;
	SNI_REFUSED("api.example.test\0.evil.test");
	SNI_REFUSED("\0api.example.test");
	SNI_REFUSED("api.example.test\0");
}

static void
test_sni_outside_host_grammar_refused(void **state)
{
	(void)state;
	SNI_REFUSED("user@api.example.test");
	SNI_REFUSED("api%2eexample.test");
	SNI_REFUSED("api.example.test:443");
	SNI_REFUSED("api example.test");
	SNI_REFUSED("api.example.test\r\n");
	SNI_REFUSED("*.example.test");
	SNI_REFUSED("\xc3\xa4pi.example.test");
	SNI_REFUSED("a..b");
	SNI_REFUSED("127.1");
	SNI_REFUSED("0x7f000001");
}

static void
test_sni_ipv6_literal_refused(void **state)
{
	(void)state;
	SNI_REFUSED("::1");
	SNI_REFUSED("[::1]");
	SNI_REFUSED("2001:db8::1");
	SNI_REFUSED("fe80::1%eth0");
}

static void
test_sni_dotted_quad_returned_for_comparison(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	EXT_SNI("10.0.0.1");
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_SNI);
	assert_string_equal(sni, "10.0.0.1");
}

/* server_name structure */

static void
test_two_host_name_entries_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	e16(0x0000);
	e16(2 + 3 + 16 + 3 + 8);
	e16(3 + 16 + 3 + 8);
	e8(0); e16(16); eraw("api.example.test", 16);
	e8(0); e16(8); eraw("evil.com", 8);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_duplicate_server_name_extension_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0x000a, 4);
	EXT_SNI("evil.example");
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	extn = 0;
	EXT_SNI("api.example.test");
	EXT_SNI("api.example.test");
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_unknown_name_type_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	e16(0x0000); e16(5 + 16); e16(3 + 16);
	e8(1); e16(16); eraw("api.example.test", 16);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_empty_server_name_forms_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	/* Extension with no body (a ServerHello form). */
	extn = 0;
	e16(0x0000); e16(0);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Empty list. */
	extn = 0;
	e16(0x0000); e16(2); e16(0);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Zero-length host_name. */
	extn = 0;
	e16(0x0000); e16(5); e16(3); e8(0); e16(0);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* List shorter than one entry header. */
	extn = 0;
	e16(0x0000); e16(4); e16(2); e8(0); e8(0);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_server_name_list_length_mismatch_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	/* List length one short of the extension: a trailing byte the
	 * server might read as something else. */
	extn = 0;
	e16(0x0000); e16(5 + 16 + 1); e16(3 + 16);
	e8(0); e16(16); eraw("api.example.test", 16); e8(0);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Name length past the list. */
	extn = 0;
	e16(0x0000); e16(5 + 16); e16(3 + 16);
	e8(0); e16(17); eraw("api.example.test", 16);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* List length past the extension. */
	extn = 0;
	e16(0x0000); e16(5 + 16); e16(3 + 17);
	e8(0); e16(16); eraw("api.example.test", 16);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

/* Lengths and bounds */

static void
test_extension_length_overflow_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	extn = 0;
	ext_other(0x000a, 8);
	EXT_SNI("api.example.test");
	build_hello(1);
	ext[2] = 0xff;		/* first extension's length: 0xff08 */
	memcpy(msg + msgn - extn, ext, extn);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Last extension one byte longer than what is left. */
	extn = 0;
	ext_other(0x000a, 8);
	build_hello(1);
	msg[msgn - 8 - 1] = 9;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Extension header cut short (3 bytes left for a 4-byte header). */
	extn = 0;
	ext_other(0x000a, 8);
	e8(0); e8(0); e8(0);
	build_hello(1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_extensions_block_length_mismatch_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	size_t at;

	(void)state;
	extn = 0;
	EXT_SNI("api.example.test");
	build_hello(1);
	at = msgn - extn - 2;
	msg[at + 1] = (unsigned char)(msg[at + 1] - 1);	/* block shorter */
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	msg[at + 1] = (unsigned char)(msg[at + 1] + 2);	/* block longer */
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	msg[at] = 0xff;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* A lone byte where the block length should be. */
	extn = 0;
	build_hello(0);
	m8(0);
	msg[3] = (unsigned char)(msg[3] + 1);
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_truncated_lengths_pointing_past_end_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	const size_t sid = 4 + 2 + 32, cs = sid + 1 + 32, comp = cs + 2 + 4;

	(void)state;
	extn = 0;
	EXT_SNI("api.example.test");
	/* session_id over 32 */
	build_hello(1);
	msg[sid] = 33;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* cipher_suites past the end of the message */
	build_hello(1);
	msg[cs] = 0xff;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* compression_methods past the end */
	build_hello(1);
	msg[comp] = 0xff;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Handshake length shorter than its own fields. */
	build_hello(1);
	msg[1] = 0; msg[2] = 0; msg[3] = 20;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	/* Handshake length 0. */
	build_hello(1);
	msg[1] = 0; msg[2] = 0; msg[3] = 0;
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_truncated_stream_needs_more_and_never_reads_past_len(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	size_t n, i;

	(void)state;
	extn = 0;
	EXT_SNI("api.example.test");
	build_hello(1);
	n = wrap_frag(msg, msgn, 7);
	for (i = 0; i < n; i++)
		assert_int_equal(sni_of(rec, i, sni), TLSHELLO_MORE);
	assert_int_equal(sni_of(rec, n, sni), TLSHELLO_SNI);
}

static void
test_bad_cipher_suites_and_compression_refused(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	const size_t cs = 4 + 2 + 32 + 1 + 32, comp = cs + 2 + 4;

	(void)state;
	extn = 0;
	build_hello(1);
	msg[cs + 1] = 3;	/* odd */
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	build_hello(1);
	msg[cs + 1] = 0;	/* none */
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
	build_hello(1);
	msg[comp] = 0;		/* none */
	assert_int_equal(built_verdict(sni), TLSHELLO_MALFORMED);
}

static void
test_huge_record_length_refused(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello)];
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(b));
	b[3] = 0x40; b[4] = 0x01;	/* 16385 */
	assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_MALFORMED);
	b[3] = 0xff; b[4] = 0xff;
	assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_MALFORMED);
	assert_int_equal(sni_of(b, 5, sni), TLSHELLO_MALFORMED);
	b[3] = 0; b[4] = 0;		/* zero-length handshake record */
	assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_MALFORMED);
}

static void
test_huge_handshake_length_refused_at_once(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello)];
	char sni[TLSHELLO_SNI_SIZE];

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(b));
	b[6] = 0xff; b[7] = 0xff; b[8] = 0xff;
	assert_int_equal(sni_of(b, 9, sni), TLSHELLO_MALFORMED);
	b[6] = 0x01; b[7] = 0x00; b[8] = 0x00;	/* 65536: cannot fit */
	assert_int_equal(sni_of(b, 9, sni), TLSHELLO_MALFORMED);
}

static void
test_handshake_type_server_hello_refused(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello)];
	char sni[TLSHELLO_SNI_SIZE];
	unsigned int t;

	(void)state;
	memcpy(b, openssl_tls13_hello, sizeof(b));
	b[5] = 2;
	assert_int_equal(verdict(b, sizeof(b), sni), TLSHELLO_MALFORMED);
	assert_int_equal(sni_of(b, 6, sni), TLSHELLO_MALFORMED);
	for (t = 0; t < 256; t++) {
		if (t == 1)
			continue;
		b[5] = (unsigned char)t;
		assert_int_equal(sni_of(b, sizeof(b), sni), TLSHELLO_MALFORMED);
	}
}

static void
test_largest_hello_within_cap_accepted(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	size_t n, pad;

	(void)state;
	/* Fill the cap exactly: four records, padding extension last. */
	extn = 0;
	EXT_SNI("api.example.test");
	build_hello(1);
	pad = TLSHELLO_INPUT_MAX - 4 * 5 - msgn - 4;
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0x0015, pad);
	build_hello(1);
	n = wrap();
	assert_int_equal(n, TLSHELLO_INPUT_MAX);
	assert_int_equal(sni_of(rec, n, sni), TLSHELLO_SNI);
	assert_string_equal(sni, "api.example.test");
	assert_int_equal(sni_of(rec, n - 1, sni), TLSHELLO_MORE);
	/* One byte more cannot fit. */
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0x0015, pad + 1);
	build_hello(1);
	n = wrap();
	assert_int_equal(sni_of(rec, n, sni), TLSHELLO_MALFORMED);
	assert_int_equal(sni_of(rec, 9, sni), TLSHELLO_MALFORMED);
}

static void
test_never_more_once_input_cap_reached(void **state)
{
	char sni[TLSHELLO_SNI_SIZE];
	size_t n;

	(void)state;
	/* A legal-length hello in 1-byte records: 6 bytes per byte, so its
	 * records outgrow the cap and it must end MALFORMED, not MORE. */
	extn = 0;
	ext_other(0x0015, 20000);
	EXT_SNI("api.example.test");
	build_hello(1);
	n = wrap_frag(msg, msgn, 1);
	assert_true(n > TLSHELLO_INPUT_MAX);
	assert_int_equal(sni_of(rec, TLSHELLO_INPUT_MAX, sni), TLSHELLO_MALFORMED);
	assert_int_equal(sni_of(rec, 60000, sni), TLSHELLO_MORE);
	assert_int_equal(sni_of(rec, n, sni), TLSHELLO_MALFORMED);
}

static void
test_small_sni_buffer_refused(void **state)
{
	char small[16];

	(void)state;
	assert_int_equal(tlshello_sni(openssl_tls13_hello,
	    sizeof(openssl_tls13_hello), small, sizeof(small)), TLSHELLO_MALFORMED);
	assert_int_equal(tlshello_sni(openssl_tls13_hello,
	    sizeof(openssl_tls13_hello), NULL, 300), TLSHELLO_MALFORMED);
}

/* Deterministic mutations of the real hello: no crash, no read past len
 * (exact heap copies), and a returned name always re-parses as itself. */
static void
test_random_mutations_are_safe(void **state)
{
	unsigned char b[sizeof(openssl_tls13_hello) + 64];
	char sni[TLSHELLO_SNI_SIZE];
	uint32_t x = 0x9e3779b9;
	int i, k, rc;
	size_t len;

	(void)state;
	for (i = 0; i < 100000; i++) {
		memcpy(b, openssl_tls13_hello, sizeof(openssl_tls13_hello));
		memset(b + sizeof(openssl_tls13_hello), 0x16, 64);
		for (k = 0; k < 1 + i % 4; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[(x >> 8) % sizeof(b)] = (unsigned char)x;
		}
		len = (x >> 4) % sizeof(b);
		rc = sni_of(b, len, sni);
		assert_true(rc >= TLSHELLO_NOT_TLS && rc <= TLSHELLO_NO_SNI);
		if (rc == TLSHELLO_SNI) {
			struct dest d;

			assert_int_equal(dest_parse_host(sni, strlen(sni), 0, &d,
			    NULL, 0), 0);
			assert_string_equal(d.host, sni);
		} else {
			assert_string_equal(sni, "");
		}
	}
}

/* ---- the watch after the first hello ---- */

/* proxy.c's sni_gate, run here on one stream: the gate for CONNECT host
 * `host` (NULL: an IP-literal tunnel) on s[0 .. n) delivered `step` bytes
 * at a time, each call on an exact-size copy of the bytes not released
 * yet. Returns 'P' (passed for good), 'C' (closed) or 'M' (watching at
 * the end); *released: the bytes let go, which never include a byte of a
 * refused hello. gate_why says why it closed. */
static const char *gate_why;

static int
gate_judge(const char *host, int rc, const char *sni)
{
	if (rc == TLSHELLO_NO_SNI)
		return 1;
	return rc == TLSHELLO_SNI && host != NULL && strcmp(sni, host) == 0;
}

static int
gate_stream(const char *host, const unsigned char *s, size_t n, size_t step,
    size_t *released)
{
	static struct tlshello t;
	static struct tlshello_watch w;
	size_t have = 0, rel = 0, base, k;
	unsigned char *copy;
	int rc, out = 'M';

	tlshello_init(&t);
	tlshello_watch_init(&w);
	gate_why = NULL;
	while (out == 'M' && have < n) {
		have = have + step < n ? have + step : n;
		base = rel;
		copy = malloc(have - base > 0 ? have - base : 1);
		assert_non_null(copy);
		memcpy(copy, s + base, have - base);
		if (t.verdict == TLSHELLO_MORE) {
			rc = tlshello_feed(&t, copy, have - base);
			if (rc == TLSHELLO_NOT_TLS)
				out = 'P';
			else if (rc != TLSHELLO_MORE && !gate_judge(host, rc, t.sni))
				out = 'C', gate_why = t.why ? t.why : "name";
			else if (rc != TLSHELLO_MORE) {
				rel = t.pos;
				w.early = t.early_data;	/* as guard/tunnel.c */
			}
		}
		while (out == 'M' && t.verdict != TLSHELLO_MORE) {
			rc = tlshello_watch(&w, copy + (rel - base), have - rel, &k);
			assert_true(k <= have - rel);
			rel += k;
			if (rc == TLSHELLO_DONE)
				out = 'P';
			else if (rc == TLSHELLO_MALFORMED)
				out = 'C', gate_why = w.why;
			else if ((rc == TLSHELLO_SNI || rc == TLSHELLO_NO_SNI) &&
			    !gate_judge(host, rc, w.hello.sni))
				out = 'C', gate_why = "name", rel -= k;
			else if (rc == TLSHELLO_MORE && k == 0)
				break;
		}
		free(copy);
	}
	*released = out == 'P' ? n : rel;
	return out;
}

/* The same stream at every delivery step from 1 to n: one outcome, and
 * on a close, never a byte released past `safe`. */
static int
gate_every_step(const char *host, const unsigned char *s, size_t n, size_t safe)
{
	size_t step, rel;
	int first = gate_stream(host, s, n, n, &rel), o;

	for (step = 1; step < n; step += step < 64 ? 1 : 61) {
		o = gate_stream(host, s, n, step, &rel);
		if (o != first)
			fail_msg("step %zu: %c, whole: %c", step, o, first);
		if (o == 'C' && rel > safe)
			fail_msg("step %zu: %zu bytes released past %zu", step, rel, safe);
	}
	if (first == 'C')
		assert_non_null(gate_why);
	return first;
}

#define REC_HDR_LEN 5

static unsigned char flight[4 * TLSHELLO_INPUT_MAX];
static size_t flightn;

static void
fl_raw(const void *p, size_t k)
{
	assert_true(flightn + k <= sizeof(flight));
	memcpy(flight + flightn, p, k);
	flightn += k;
}

/* A ClientHello naming name (NULL: none), in records of at most frag. */
static void
fl_hello(const char *name, size_t frag)
{
	extn = 0;
	if (name != NULL)
		ext_sni(name, strlen(name));
	ext_other(0x000a, 4);
	ext_other(0x0033, 2);	/* key_share: an empty list, as for a retry */
	build_hello(1);
	fl_raw(rec, wrap_frag(msg, msgn, frag));
}

static const unsigned char ccs[] = { 0x14, 3, 3, 0, 1, 1 };
static const unsigned char appdata[] = { 0x17, 3, 3, 0, 4, 0xde, 0xad, 0xbe, 0xef };

static void
fl_first(void)
{
	flightn = 0;
	fl_raw(openssl_tls13_hello, sizeof(openssl_tls13_hello));
}

static void
test_refuses_second_hello_naming_another_host(void **state)
{
	(void)state;
	fl_first();
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
	/* fragmented, one byte a record */
	fl_first();
	fl_hello("evil.example.test", 1);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
}

static void
test_refuses_second_hello_naming_host_on_ip_literal_tunnel(void **state)
{
	size_t rel;

	(void)state;
	flightn = 0;
	fl_raw(openssl_nosni_hello, sizeof(openssl_nosni_hello));
	fl_hello(NULL, TLSHELLO_RECORD_MAX);
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step(NULL, flight, flightn, 0), 'P');
	flightn = 0;
	fl_raw(openssl_nosni_hello, sizeof(openssl_nosni_hello));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step(NULL, flight, flightn,
	    sizeof(openssl_nosni_hello)), 'C');
	assert_int_equal(gate_stream(NULL, flight, flightn, flightn, &rel), 'C');
	assert_int_equal(rel, sizeof(openssl_nosni_hello));
}

static void
test_identical_second_hello_after_hrr_passes(void **state)
{
	(void)state;
	/* compatibility mode: CCS, then the second hello, then the
	 * encrypted flight */
	fl_first();
	fl_raw(ccs, sizeof(ccs));
	fl_hello("api.example.test", TLSHELLO_RECORD_MAX);
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	/* without the CCS, and with a second hello that names none */
	fl_first();
	fl_hello("api.example.test", 100);
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	fl_first();
	fl_hello(NULL, TLSHELLO_RECORD_MAX);
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
}

static void
test_refuses_ccs_then_second_hello_naming_another_host(void **state)
{
	(void)state;
	fl_first();
	fl_raw(ccs, sizeof(ccs));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello) + sizeof(ccs)), 'C');
	assert_string_equal(gate_why, "name");
}

static void
test_refuses_many_ccs_records_before_second_hello(void **state)
{
	int i;

	(void)state;
	fl_first();
	for (i = 0; i < 20000; i++)
		fl_raw(ccs, sizeof(ccs));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello) + sizeof(ccs)), 'C');
	assert_string_equal(gate_why, "a second CCS");
	/* two CCS before a hello naming the host: no client sends that */
	fl_first();
	fl_raw(ccs, sizeof(ccs));
	fl_raw(ccs, sizeof(ccs));
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    flightn), 'C');
}

static void
test_refuses_alert_padding_and_heartbeat_in_watch(void **state)
{
	static const unsigned char alert[] = { 0x15, 3, 3, 0, 2, 1, 0x5a };
	static const unsigned char long_alert[] = { 0x15, 3, 3, 0, 3, 1, 0x5a, 0 };
	static const unsigned char hb[] = { 0x18, 3, 3, 0, 3, 1, 0, 0 };
	int i;

	(void)state;
	/* a client that gives up after the retry: one alert, passed */
	fl_first();
	fl_raw(alert, sizeof(alert));
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	fl_first();
	for (i = 0; i < 100; i++)
		fl_raw(alert, sizeof(alert));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello) + 2 * sizeof(alert)), 'C');
	assert_string_equal(gate_why, "too many alerts");
	fl_first();
	fl_raw(long_alert, sizeof(long_alert));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
	fl_first();
	fl_raw(hb, sizeof(hb));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
}

static void
test_refuses_third_hello_and_odd_records_in_watch(void **state)
{
	static const unsigned char type25[] = { 0x19, 3, 3, 0, 1, 0 };
	static const unsigned char v0001[] = { 0x16, 0, 1, 0, 4, 0x10, 0, 0, 0 };
	static const unsigned char empty[] = { 0x16, 3, 3, 0, 0 };

	(void)state;
	fl_first();
	fl_hello("api.example.test", TLSHELLO_RECORD_MAX);
	fl_hello("api.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    flightn - (wrap_frag(msg, msgn, TLSHELLO_RECORD_MAX))), 'C');
	assert_string_equal(gate_why, "a third ClientHello");
	fl_first();
	fl_raw(type25, sizeof(type25));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
	/* an odd version or an empty record could hide what follows */
	fl_first();
	fl_raw(v0001, sizeof(v0001));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
	fl_first();
	fl_raw(empty, sizeof(empty));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
	/* a second hello with a message behind it in its record */
	fl_first();
	fl_hello("api.example.test", TLSHELLO_RECORD_MAX);
	flight[flightn - msgn - 2] = (unsigned char)((msgn + 4) >> 8);
	flight[flightn - msgn - 1] = (unsigned char)(msgn + 4);
	fl_raw("\x01\x00\x00\x00", 4);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello)), 'C');
}

static void
test_tls12_client_key_exchange_ends_watch(void **state)
{
	/* ClientKeyExchange (16), then CCS and an encrypted Finished: the
	 * watch is over at the first, and what follows is not read. */
	static const unsigned char cke[] = { 0x16, 3, 3, 0, 8, 0x10, 0, 0, 4,
	    3, 0xaa, 0xbb, 0xcc };
	static const unsigned char fin[] = { 0x16, 3, 3, 0, 4, 0x01, 0, 0, 0 };

	(void)state;
	fl_first();
	fl_raw(cke, sizeof(cke));
	fl_raw(ccs, sizeof(ccs));
	fl_raw(fin, sizeof(fin));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
}

static void
test_application_data_ends_watch(void **state)
{
	(void)state;
	/* TLS 1.3: CCS, then the encrypted flight; and without the CCS */
	fl_first();
	fl_raw(ccs, sizeof(ccs));
	fl_raw(appdata, sizeof(appdata));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);	/* encrypted now */
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	fl_first();
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	/* nothing after the hello yet: still watching, the hello let go */
	{
		size_t rel;

		fl_first();
		assert_int_equal(gate_stream("api.example.test", flight, flightn,
		    flightn, &rel), 'M');
		assert_int_equal(rel, sizeof(openssl_tls13_hello));
	}
}

/* A first hello naming api.example.test that offers 0-RTT (early_data)
 * and whose key_share forces a HelloRetryRequest. */
static void
fl_first_early(int early)
{
	flightn = 0;
	extn = 0;
	EXT_SNI("api.example.test");
	ext_other(0x0033, 2);
	if (early)
		ext_other(0x002a, 0);
	build_hello(1);
	fl_raw(rec, wrap_frag(msg, msgn, TLSHELLO_RECORD_MAX));
}

static void
test_refuses_second_hello_behind_early_data_records(void **state)
{
	static unsigned char big[REC_HDR_LEN + TLSHELLO_RECORD_MAX] = {
	    0x17, 3, 3, TLSHELLO_RECORD_MAX >> 8, 0 };
	size_t first, rel;
	int i;

	(void)state;
	/* A server that asks again skips 0-RTT records (RFC 8446 4.2.10) and
	 * acts on the next hello (OpenSSL 3.0 switches to its name): after an
	 * early_data offer, application data does not end the watch. */
	fl_first_early(1);
	first = flightn;
	fl_raw(appdata, sizeof(appdata));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    first + sizeof(appdata)), 'C');
	assert_string_equal(gate_why, "name");
	fl_first_early(1);
	fl_raw(ccs, sizeof(ccs));
	fl_raw(appdata, sizeof(appdata));
	fl_raw(appdata, sizeof(appdata));
	fl_hello("evil.example.test", 7);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    first + sizeof(ccs) + 2 * sizeof(appdata)), 'C');
	/* The same name again, then the encrypted flight: a retry that
	 * passes; and 0-RTT the server took (no second hello) passes. */
	fl_first_early(1);
	fl_raw(appdata, sizeof(appdata));
	fl_hello("api.example.test", TLSHELLO_RECORD_MAX);
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	fl_first_early(1);
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(gate_stream("api.example.test", flight, flightn, flightn,
	    &rel), 'M');
	assert_int_equal(rel, flightn);		/* each whole record goes */
	/* Past TLSHELLO_WATCH_EARLY_MAX the watch ends (documented). */
	fl_first_early(1);
	for (i = 0; i < 5; i++)
		fl_raw(big, sizeof(big));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_stream("api.example.test", flight, flightn, 4096,
	    &rel), 'P');
	/* Control: without the offer, the first data record ends it. */
	fl_first_early(0);
	fl_raw(appdata, sizeof(appdata));
	fl_hello("evil.example.test", TLSHELLO_RECORD_MAX);
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
}

static void
test_encrypted_finished_after_ccs_ends_or_closes_by_first_byte(void **state)
{
	/* TLS 1.2 resumption: CCS, then the encrypted Finished in a
	 * handshake record. AES-GCM's explicit nonce (OpenSSL: the sequence
	 * number, 0) starts with 0: the watch ends. A first byte of 1 (1 in
	 * 256 for ChaCha20 or CBC) does not parse as a hello: closed. */
	unsigned char fin[5 + 40];

	(void)state;
	memset(fin, 0x77, sizeof(fin));
	fin[0] = 0x16, fin[1] = 3, fin[2] = 3, fin[3] = 0, fin[4] = 40;
	fin[5] = 0;
	fl_first();
	fl_raw(ccs, sizeof(ccs));
	fl_raw(fin, sizeof(fin));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn, 0), 'P');
	fin[5] = 1;
	fl_first();
	fl_raw(ccs, sizeof(ccs));
	fl_raw(fin, sizeof(fin));
	assert_int_equal(gate_every_step("api.example.test", flight, flightn,
	    sizeof(openssl_tls13_hello) + sizeof(ccs)), 'C');
}

static void
test_watch_examines_second_hello_once_in_one_byte_records(void **state)
{
	struct tlshello_watch w;
	size_t len, k, start;
	int rc = TLSHELLO_MORE;

	(void)state;
	flightn = 0;
	extn = 0;
	ext_other(0x0015, 8000);	/* padding */
	EXT_SNI("api.example.test");
	build_hello(1);
	fl_raw(rec, wrap_frag(msg, msgn, 1));
	tlshello_watch_init(&w);
	for (len = 0; len < flightn && rc == TLSHELLO_MORE;) {
		len = len + 3 < flightn ? len + 3 : flightn;
		rc = tlshello_watch(&w, flight, len, &k);
		if (rc == TLSHELLO_MORE)
			assert_int_equal(k, 0);
	}
	assert_int_equal(rc, TLSHELLO_SNI);
	assert_int_equal(k, flightn);
	assert_string_equal(w.hello.sni, "api.example.test");
	assert_true(w.hello.examined <= 2 * flightn);
	start = flightn;
	fl_raw(appdata, sizeof(appdata));
	assert_int_equal(tlshello_watch(&w, flight + start, flightn - start, &k),
	    TLSHELLO_DONE);
	/* DONE stays */
	assert_int_equal(tlshello_watch(&w, flight, 1, &k), TLSHELLO_DONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_openssl_hello_sni_extracted),
		cmocka_unit_test(test_real_openssl_tls12_hello_uppercase_sni_lower_cased),
		cmocka_unit_test(test_byte_by_byte_delivery_needs_more_until_complete),
		cmocka_unit_test(test_bytes_after_hello_not_read),
		cmocka_unit_test(test_hello_split_across_two_records),
		cmocka_unit_test(test_hello_split_across_three_records),
		cmocka_unit_test(test_hello_in_one_byte_records),
		cmocka_unit_test(test_refuses_zero_length_record),
		cmocka_unit_test(test_refuses_non_handshake_record_inside_hello),
		cmocka_unit_test(test_not_tls_plain_http),
		cmocka_unit_test(test_not_tls_first_byte_outside_tls_shapes),
		cmocka_unit_test(test_refuses_sslv2_client_hello),
		cmocka_unit_test(test_refuses_record_version_major_not_3),
		cmocka_unit_test(test_refuses_alert_ccs_data_heartbeat_before_client_hello),
		cmocka_unit_test(test_refuses_continuation_record_with_odd_version),
		cmocka_unit_test(test_refuses_second_message_in_the_hello_record),
		cmocka_unit_test(test_refuses_encrypted_client_hello_extension),
		cmocka_unit_test(test_bytes_examined_linear_in_one_byte_records),
		cmocka_unit_test(test_feed_equals_one_shot_at_every_cut),
		cmocka_unit_test(test_empty_input_needs_more),
		cmocka_unit_test(test_real_openssl_hello_without_sni),
		cmocka_unit_test(test_server_name_retyped_unknown_is_no_sni),
		cmocka_unit_test(test_no_sni_extension),
		cmocka_unit_test(test_hello_without_extensions_block),
		cmocka_unit_test(test_built_hello_sni_extracted_after_other_extensions),
		cmocka_unit_test(test_sni_with_uppercase_lower_cased),
		cmocka_unit_test(test_sni_trailing_dot_removed_once),
		cmocka_unit_test(test_sni_length_limits),
		cmocka_unit_test(test_sni_longer_than_253_refused),
		cmocka_unit_test(test_sni_with_nul_byte_refused),
		cmocka_unit_test(test_sni_outside_host_grammar_refused),
		cmocka_unit_test(test_sni_ipv6_literal_refused),
		cmocka_unit_test(test_sni_dotted_quad_returned_for_comparison),
		cmocka_unit_test(test_two_host_name_entries_refused),
		cmocka_unit_test(test_duplicate_server_name_extension_refused),
		cmocka_unit_test(test_unknown_name_type_refused),
		cmocka_unit_test(test_empty_server_name_forms_refused),
		cmocka_unit_test(test_server_name_list_length_mismatch_refused),
		cmocka_unit_test(test_extension_length_overflow_refused),
		cmocka_unit_test(test_extensions_block_length_mismatch_refused),
		cmocka_unit_test(test_truncated_lengths_pointing_past_end_refused),
		cmocka_unit_test(test_truncated_stream_needs_more_and_never_reads_past_len),
		cmocka_unit_test(test_bad_cipher_suites_and_compression_refused),
		cmocka_unit_test(test_huge_record_length_refused),
		cmocka_unit_test(test_huge_handshake_length_refused_at_once),
		cmocka_unit_test(test_handshake_type_server_hello_refused),
		cmocka_unit_test(test_largest_hello_within_cap_accepted),
		cmocka_unit_test(test_never_more_once_input_cap_reached),
		cmocka_unit_test(test_small_sni_buffer_refused),
		cmocka_unit_test(test_random_mutations_are_safe),
		cmocka_unit_test(test_refuses_second_hello_naming_another_host),
		cmocka_unit_test(test_refuses_second_hello_naming_host_on_ip_literal_tunnel),
		cmocka_unit_test(test_identical_second_hello_after_hrr_passes),
		cmocka_unit_test(test_refuses_ccs_then_second_hello_naming_another_host),
		cmocka_unit_test(test_refuses_many_ccs_records_before_second_hello),
		cmocka_unit_test(test_refuses_alert_padding_and_heartbeat_in_watch),
		cmocka_unit_test(test_refuses_third_hello_and_odd_records_in_watch),
		cmocka_unit_test(test_tls12_client_key_exchange_ends_watch),
		cmocka_unit_test(test_application_data_ends_watch),
		cmocka_unit_test(test_refuses_second_hello_behind_early_data_records),
		cmocka_unit_test(test_encrypted_finished_after_ccs_ends_or_closes_by_first_byte),
		cmocka_unit_test(test_watch_examines_second_hello_once_in_one_byte_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
