/* Unit tests for proto/dnsmsg: the DNS listener's query parser and answer
 * builder. Hostile cases are named for the attack they stand for. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto/dnsmsg.h"

#define HDR(id, flags, qd, an, ns, ar) \
	(id) >> 8, (id) & 0xff, (flags) >> 8, (flags) & 0xff, 0, (qd), 0, (an), \
	0, (ns), 0, (ar)

/* "Ok.Test" A IN, RD set. */
static const unsigned char okq[] = {
	HDR(0xabcd, 0x0100, 1, 0, 0, 0),
	2, 'O', 'k', 4, 'T', 'e', 's', 't', 0, 0, 1, 0, 1
};

static enum dnsmsg_verdict
parse(const unsigned char *b, size_t len, struct dnsmsg_query *q, int *rcode)
{
	return dnsmsg_parse_query(b, len, q, rcode);
}

/* Builds a query for the labels in names (each a label, NULL ends) with
 * qtype into out; returns its length. */
static size_t
build_query(unsigned char *out, const char *const *labels, uint16_t qtype)
{
	static const unsigned char h[] = { HDR(7, 0x0100, 1, 0, 0, 0) };
	size_t n = sizeof(h), i;

	memcpy(out, h, n);
	for (i = 0; labels[i] != NULL; i++) {
		size_t l = strlen(labels[i]);
		out[n++] = (unsigned char)l;
		memcpy(out + n, labels[i], l);
		n += l;
	}
	out[n++] = 0;
	out[n++] = (unsigned char)(qtype >> 8);
	out[n++] = (unsigned char)qtype;
	out[n++] = 0;
	out[n++] = 1;
	return n;
}

static void
test_parses_query_keeping_case(void **state)
{
	struct dnsmsg_query q;
	int rc = -1;

	(void)state;
	assert_int_equal(parse(okq, sizeof(okq), &q, &rc), DNSMSG_QUERY);
	assert_int_equal(rc, DNSMSG_NOERROR);
	assert_int_equal(q.id, 0xabcd);
	assert_int_equal(q.qtype, DNSMSG_TYPE_A);
	assert_int_equal(q.qclass, DNSMSG_CLASS_IN);
	assert_string_equal(q.name, "Ok.Test");
	assert_int_equal(q.name_len, 7);
	assert_int_equal(q.name_plain, 1);
	assert_int_equal(q.qlen, sizeof(okq) - DNSMSG_HEADER_LEN);
	assert_memory_equal(q.question, okq + DNSMSG_HEADER_LEN, q.qlen);
}

static void
test_root_name_is_empty_text(void **state)
{
	static const unsigned char m[] = { HDR(1, 0, 1, 0, 0, 0), 0, 0, 2, 0, 1 };
	struct dnsmsg_query q;
	int rc;

	(void)state;
	assert_int_equal(parse(m, sizeof(m), &q, &rc), DNSMSG_QUERY);
	assert_string_equal(q.name, "");
	assert_int_equal(q.name_len, 0);
	assert_int_equal(q.qtype, 2);
}

static void
test_refuses_compression_loop(void **state)
{
	/* The name is a pointer to itself at offset 12. */
	static const unsigned char m[] = {
		HDR(1, 0x0100, 1, 0, 0, 0), 0xc0, 0x0c, 0, 1, 0, 1
	};
	struct dnsmsg_query q;
	int rc;

	(void)state;
	assert_int_equal(parse(m, sizeof(m), &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
	assert_int_equal(q.qlen, 0);
	assert_int_equal(q.id, 1);
}

static void
test_refuses_pointer_after_label(void **state)
{
	/* "ok" then a pointer back into the header: a pointer anywhere in
	 * the question is refused, not followed. */
	static const unsigned char m[] = {
		HDR(1, 0, 1, 0, 0, 0), 2, 'o', 'k', 0xc0, 0x00, 0, 1, 0, 1
	};
	struct dnsmsg_query q;
	int rc;

	(void)state;
	assert_int_equal(parse(m, sizeof(m), &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
}

static void
test_refuses_extended_label_types(void **state)
{
	unsigned char m[32];
	struct dnsmsg_query q;
	const unsigned char types[] = { 0x40, 0x80 };
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(types); i++) {
		memcpy(m, okq, sizeof(okq));
		m[12] = types[i] | 2;
		assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
		assert_int_equal(rc, DNSMSG_FORMERR);
	}
}

static void
test_refuses_every_truncation(void **state)
{
	struct dnsmsg_query q;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(okq); i++) {
		enum dnsmsg_verdict v = parse(okq, i, &q, &rc);

		if (i < DNSMSG_HEADER_LEN) {
			assert_int_equal(v, DNSMSG_DROP);
			continue;
		}
		assert_int_equal(v, DNSMSG_ERROR);
		assert_int_equal(rc, DNSMSG_FORMERR);
		assert_int_equal(q.qlen, 0);
	}
	assert_int_equal(parse(NULL, 0, &q, &rc), DNSMSG_DROP);
}

static void
test_refuses_qdcount_2_and_0(void **state)
{
	unsigned char m[64];
	struct dnsmsg_query q;
	int rc;

	(void)state;
	memcpy(m, okq, sizeof(okq));
	memcpy(m + sizeof(okq), okq + 12, sizeof(okq) - 12);
	m[5] = 2;
	assert_int_equal(parse(m, 2 * sizeof(okq) - 12, &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
	m[5] = 0;
	assert_int_equal(parse(m, 12, &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
	m[4] = 1;	/* QDCOUNT 257 */
	m[5] = 1;
	assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
}

static void
test_refuses_answer_authority_and_two_additional(void **state)
{
	unsigned char m[64];
	struct dnsmsg_query q;
	const size_t at[] = { 7, 9, 11 };
	const unsigned char val[] = { 1, 1, 2 };
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < 3; i++) {
		memcpy(m, okq, sizeof(okq));
		m[at[i]] = val[i];
		assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
		assert_int_equal(rc, DNSMSG_FORMERR);
	}
}

static void
test_refuses_trailing_bytes_without_additional(void **state)
{
	unsigned char m[64];
	struct dnsmsg_query q;
	int rc;

	(void)state;
	memcpy(m, okq, sizeof(okq));
	m[sizeof(okq)] = 0;
	assert_int_equal(parse(m, sizeof(okq) + 1, &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
}

static void
test_accepts_one_opt_record_only(void **state)
{
	/* dig's default: OPT, payload 1232, no options / one 4-byte option. */
	static const unsigned char opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };
	static const unsigned char opt4[] = {
		0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 4, 0, 10, 0, 0
	};
	unsigned char m[128];
	struct dnsmsg_query q;
	size_t n;
	int rc;

	(void)state;
	memcpy(m, okq, sizeof(okq));
	m[11] = 1;
	memcpy(m + sizeof(okq), opt, sizeof(opt));
	n = sizeof(okq) + sizeof(opt);
	assert_int_equal(parse(m, n, &q, &rc), DNSMSG_QUERY);
	assert_string_equal(q.name, "Ok.Test");
	memcpy(m + sizeof(okq), opt4, sizeof(opt4));
	assert_int_equal(parse(m, sizeof(okq) + sizeof(opt4), &q, &rc),
	    DNSMSG_QUERY);
	/* RDLENGTH that does not end the message, either way */
	assert_int_equal(parse(m, sizeof(okq) + sizeof(opt4) - 1, &q, &rc),
	    DNSMSG_ERROR);
	m[sizeof(okq) + sizeof(opt4)] = 0;
	assert_int_equal(parse(m, sizeof(okq) + sizeof(opt4) + 1, &q, &rc),
	    DNSMSG_ERROR);
	/* not an OPT: type A in the additional section */
	memcpy(m + sizeof(okq), opt, sizeof(opt));
	m[sizeof(okq) + 2] = 1;
	assert_int_equal(parse(m, n, &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
	/* an owner other than the root */
	m[sizeof(okq) + 2] = 41;
	m[sizeof(okq)] = 0xc0;
	assert_int_equal(parse(m, n, &q, &rc), DNSMSG_ERROR);
	/* ARCOUNT 1 with nothing after the question */
	assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
}

static void
test_name_of_255_bytes_parses_256_refused(void **state)
{
	char l63[64], l61[62], l62[63];
	const char *ok[] = { l63, l63, l63, l61, NULL };
	const char *big[] = { l63, l63, l63, l62, NULL };
	unsigned char m[512];
	struct dnsmsg_query q;
	size_t n;
	int rc;

	(void)state;
	memset(l63, 'a', 63);
	l63[63] = '\0';
	memset(l61, 'b', 61);
	l61[61] = '\0';
	memset(l62, 'c', 62);
	l62[62] = '\0';
	n = build_query(m, ok, DNSMSG_TYPE_A);
	assert_int_equal(parse(m, n, &q, &rc), DNSMSG_QUERY);
	assert_int_equal(q.name_len, DNSMSG_NAME_TEXT_MAX);
	assert_int_equal(strlen(q.name), DNSMSG_NAME_TEXT_MAX);
	n = build_query(m, big, DNSMSG_TYPE_A);
	assert_int_equal(parse(m, n, &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
}

static void
test_refuses_oversized_name_of_many_labels(void **state)
{
	/* 128 one-byte labels: 256 bytes of wire name. */
	unsigned char m[600];
	struct dnsmsg_query q;
	size_t n = 12, i;
	int rc;

	(void)state;
	memcpy(m, okq, 12);
	for (i = 0; i < 128; i++) {
		m[n++] = 1;
		m[n++] = 'x';
	}
	m[n++] = 0;
	memcpy(m + n, "\0\1\0\1", 4);
	n += 4;
	assert_int_equal(parse(m, n, &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_FORMERR);
}

static void
test_label_with_dot_or_control_byte_is_not_plain(void **state)
{
	const char *dot[] = { "a.b", "test", NULL };
	const char *nul[] = { "a\x01" "b", "test", NULL };
	const char *bs[] = { "a\\", "test", NULL };
	const char *hi[] = { "caf\xc3\xa9", NULL };
	const char *const *cases[] = { dot, nul, bs, hi };
	unsigned char m[128];
	struct dnsmsg_query q;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < 4; i++) {
		size_t n = build_query(m, cases[i], DNSMSG_TYPE_A);
		assert_int_equal(parse(m, n, &q, &rc), DNSMSG_QUERY);
		assert_int_equal(q.name_plain, 0);
	}
}

static void
test_drops_response_and_short_message(void **state)
{
	unsigned char m[64];
	struct dnsmsg_query q;
	int rc;

	(void)state;
	memcpy(m, okq, sizeof(okq));
	m[2] |= 0x80;	/* QR: a response, never answered (no loops) */
	assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_DROP);
	assert_int_equal(parse(okq, 11, &q, &rc), DNSMSG_DROP);
}

static void
test_notimp_for_other_opcodes(void **state)
{
	unsigned char m[64];
	struct dnsmsg_query q;
	unsigned op;
	int rc;

	(void)state;
	for (op = 1; op < 16; op++) {
		memcpy(m, okq, sizeof(okq));
		m[2] = (unsigned char)((m[2] & 0x87) | (op << 3));
		assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
		assert_int_equal(rc, DNSMSG_NOTIMP);
		assert_int_equal(q.qlen, 0);
	}
}

static void
test_refused_for_class_not_in_echoes_question(void **state)
{
	unsigned char m[64];
	struct dnsmsg_query q;
	int rc;

	(void)state;
	memcpy(m, okq, sizeof(okq));
	m[sizeof(okq) - 1] = 3;	/* CHAOS */
	assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_REFUSED);
	assert_int_equal(q.qlen, sizeof(okq) - 12);
	m[sizeof(okq) - 1] = 255;	/* ANY class */
	assert_int_equal(parse(m, sizeof(okq), &q, &rc), DNSMSG_ERROR);
	assert_int_equal(rc, DNSMSG_REFUSED);
}

/* ---- the builder ---- */

static void
test_builds_answer_with_records(void **state)
{
	static const unsigned char a[8] = { 198, 18, 1, 10, 198, 18, 1, 11 };
	unsigned char out[DNSMSG_UDP_MAX];
	struct dnsmsg_query q;
	size_t qend = sizeof(okq);
	long n;
	int rc;

	(void)state;
	assert_int_equal(parse(okq, sizeof(okq), &q, &rc), DNSMSG_QUERY);
	n = dnsmsg_build(&q, DNSMSG_NOERROR, DNSMSG_TYPE_A, a, 4, 2, 30, 1,
	    out, sizeof(out));
	assert_int_equal(n, (long)(qend + 2 * 16));
	assert_int_equal(out[0], 0xab);
	assert_int_equal(out[1], 0xcd);
	assert_int_equal(out[2], 0x81);	/* QR, RD copied, AA 0 */
	assert_int_equal(out[3], 0x80);	/* RA, NOERROR */
	assert_int_equal(out[5], 1);
	assert_int_equal(out[7], 2);
	assert_int_equal(out[9] | out[11], 0);
	/* the question exactly as asked: the name keeps its case */
	assert_memory_equal(out + 12, okq + 12, sizeof(okq) - 12);
	/* pointer owner, A, IN, TTL 30, RDLENGTH 4, the address */
	{
		static const unsigned char rr[] = {
			0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 198, 18, 1, 10
		};
		assert_memory_equal(out + qend, rr, sizeof(rr));
		assert_memory_equal(out + qend + 16 + 12, a + 4, 4);
	}
}

static void
test_sets_tc_when_udp_answer_over_512(void **state)
{
	unsigned char rd[40 * 16], out[DNSMSG_TCP_MAX];
	struct dnsmsg_query q;
	long n;
	int rc;

	(void)state;
	memset(rd, 0x20, sizeof(rd));
	assert_int_equal(parse(okq, sizeof(okq), &q, &rc), DNSMSG_QUERY);
	/* 40 AAAA: 40 * 28 bytes, over 512 */
	n = dnsmsg_build(&q, DNSMSG_NOERROR, DNSMSG_TYPE_AAAA, rd, 16, 40, 30, 1,
	    out, DNSMSG_UDP_MAX);
	assert_int_equal(n, (long)sizeof(okq));
	assert_true(out[2] & 0x02);	/* TC */
	assert_int_equal(out[7], 0);
	/* over TCP the same answer is whole */
	n = dnsmsg_build(&q, DNSMSG_NOERROR, DNSMSG_TYPE_AAAA, rd, 16, 40, 30, 0,
	    out, DNSMSG_TCP_MAX);
	assert_int_equal(n, (long)(sizeof(okq) + 40 * 28));
	assert_false(out[2] & 0x02);
	assert_int_equal(out[7], 40);
	/* exactly 512 fits without TC: (512 - 29) / 16 = 30 A records */
	n = dnsmsg_build(&q, DNSMSG_NOERROR, DNSMSG_TYPE_A, rd, 4, 30, 30, 1,
	    out, DNSMSG_UDP_MAX);
	assert_true(n <= DNSMSG_UDP_MAX);
	assert_int_equal(out[7], 30);
	n = dnsmsg_build(&q, DNSMSG_NOERROR, DNSMSG_TYPE_A, rd, 4, 31, 30, 1,
	    out, DNSMSG_UDP_MAX);
	assert_true(out[2] & 0x02);
}

static void
test_caps_records_that_do_not_fit_tcp(void **state)
{
	static unsigned char rd[1024 * 16];
	unsigned char out[DNSMSG_TCP_MAX];
	struct dnsmsg_query q;
	long n;
	int rc;

	(void)state;
	assert_int_equal(parse(okq, sizeof(okq), &q, &rc), DNSMSG_QUERY);
	n = dnsmsg_build(&q, DNSMSG_NOERROR, DNSMSG_TYPE_AAAA, rd, 16, 1024, 30,
	    0, out, sizeof(out));
	assert_true(n > 0 && n <= DNSMSG_TCP_MAX);
	assert_int_equal((out[6] << 8) | out[7], (DNSMSG_TCP_MAX - sizeof(okq)) / 28);
}

static void
test_error_without_question_has_qdcount_0(void **state)
{
	static const unsigned char m[] = {
		HDR(0x1234, 0x0100, 2, 0, 0, 0), 2, 'o', 'k', 0, 0, 1, 0, 1
	};
	unsigned char out[DNSMSG_UDP_MAX];
	struct dnsmsg_query q;
	long n;
	int rc;

	(void)state;
	assert_int_equal(parse(m, sizeof(m), &q, &rc), DNSMSG_ERROR);
	n = dnsmsg_build(&q, rc, 0, (const unsigned char *)"x", 1, 1, 30, 1, out,
	    sizeof(out));
	assert_int_equal(n, DNSMSG_HEADER_LEN);
	assert_int_equal(out[0], 0x12);
	assert_int_equal(out[3] & 0x0f, DNSMSG_FORMERR);
	assert_int_equal(out[5], 0);
	assert_int_equal(out[7], 0);	/* no records without a question */
}

static void
test_build_refuses_bad_arguments(void **state)
{
	unsigned char out[DNSMSG_UDP_MAX];
	struct dnsmsg_query q;
	int rc;

	(void)state;
	assert_int_equal(parse(okq, sizeof(okq), &q, &rc), DNSMSG_QUERY);
	assert_int_equal(dnsmsg_build(&q, 0, 1, NULL, 4, 0, 30, 1, out, 12), -1);
	assert_int_equal(dnsmsg_build(&q, 16, 1, NULL, 4, 0, 30, 1, out,
	    sizeof(out)), -1);
	assert_int_equal(dnsmsg_build(&q, 0, 1, NULL, 4, 1, 30, 1, out,
	    sizeof(out)), -1);
	assert_int_equal(dnsmsg_build(NULL, 0, 1, NULL, 4, 0, 30, 1, out,
	    sizeof(out)), -1);
}

static void
test_names_for_logs(void **state)
{
	char b[12];

	(void)state;
	assert_string_equal(dnsmsg_type_name(1, b), "A");
	assert_string_equal(dnsmsg_type_name(28, b), "AAAA");
	assert_string_equal(dnsmsg_type_name(65535, b), "TYPE65535");
	assert_string_equal(dnsmsg_rcode_name(3), "NXDOMAIN");
	assert_string_equal(dnsmsg_rcode_name(9), "RCODE?");
	assert_string_equal(dnsmsg_rcode_name(-1), "RCODE?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_query_keeping_case),
		cmocka_unit_test(test_root_name_is_empty_text),
		cmocka_unit_test(test_refuses_compression_loop),
		cmocka_unit_test(test_refuses_pointer_after_label),
		cmocka_unit_test(test_refuses_extended_label_types),
		cmocka_unit_test(test_refuses_every_truncation),
		cmocka_unit_test(test_refuses_qdcount_2_and_0),
		cmocka_unit_test(test_refuses_answer_authority_and_two_additional),
		cmocka_unit_test(test_refuses_trailing_bytes_without_additional),
		cmocka_unit_test(test_accepts_one_opt_record_only),
		cmocka_unit_test(test_name_of_255_bytes_parses_256_refused),
		cmocka_unit_test(test_refuses_oversized_name_of_many_labels),
		cmocka_unit_test(test_label_with_dot_or_control_byte_is_not_plain),
		cmocka_unit_test(test_drops_response_and_short_message),
		cmocka_unit_test(test_notimp_for_other_opcodes),
		cmocka_unit_test(test_refused_for_class_not_in_echoes_question),
		cmocka_unit_test(test_builds_answer_with_records),
		cmocka_unit_test(test_sets_tc_when_udp_answer_over_512),
		cmocka_unit_test(test_caps_records_that_do_not_fit_tcp),
		cmocka_unit_test(test_error_without_question_has_qdcount_0),
		cmocka_unit_test(test_build_refuses_bad_arguments),
		cmocka_unit_test(test_names_for_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
