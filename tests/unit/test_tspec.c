/* Unit tests for policy/tspec: the tenant spec and its list, strict in
 * (every refused field names its key) and canonical out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/tspec.h"

#define SPEC_A "{\"address\":\"10.81.1.1\",\"dns_port\":5353,\"id\":\"a\"," \
	"\"link\":\"eg-a\",\"max_conns\":256,\"max_dns\":64,\"peer\":\"10.81.1.2\"," \
	"\"port\":3128,\"transparent_port\":0}"
#define SPEC_B6 "{\"address\":\"2001:db8::1\",\"dns_port\":0,\"id\":\"b-2\"," \
	"\"link\":\"eg.b_2\",\"max_conns\":1,\"max_dns\":256,\"peer\":\"2001:db8::2\"," \
	"\"port\":8080,\"transparent_port\":3129}"
#define LIST_HEAD "{\"schema\":\"egress-guard.tenants.v1\",\"tenants\":["

static int
parse(const char *s, struct tspec *t, char *err, size_t errlen)
{
	return tspec_parse(s, strlen(s), t, err, errlen);
}

static void
test_accepts_the_spec_example(void **state)
{
	char err[512];
	struct tspec t;
	unsigned char a[4];

	(void)state;
	assert_int_equal(parse(SPEC_A, &t, err, sizeof(err)), 0);
	assert_string_equal(t.id, "a");
	assert_string_equal(t.link, "eg-a");
	assert_int_equal(t.family, AF_INET);
	inet_pton(AF_INET, "10.81.1.1", a);
	assert_memory_equal(t.addr, a, 4);
	inet_pton(AF_INET, "10.81.1.2", a);
	assert_memory_equal(t.peer, a, 4);
	assert_string_equal(t.address, "10.81.1.1");
	assert_string_equal(t.peer_text, "10.81.1.2");
	assert_int_equal(t.port, 3128);
	assert_int_equal(t.dns_port, 5353);
	assert_int_equal(t.transparent_port, 0);
	assert_int_equal(t.max_conns, 256);
	assert_int_equal(t.max_dns, 64);
}

static void
test_accepts_ipv6_and_bounds(void **state)
{
	char err[512];
	struct tspec t;

	(void)state;
	assert_int_equal(parse(SPEC_B6, &t, err, sizeof(err)), 0);
	assert_int_equal(t.family, AF_INET6);
	assert_string_equal(t.address, "2001:db8::1");
	assert_int_equal(t.max_conns, 1);
	assert_int_equal(t.max_dns, 256);
	assert_int_equal(t.transparent_port, 3129);
	/* 32-byte id, 15-byte link, the largest bounds. */
	assert_int_equal(parse("{\"id\":\"0123456789abcdef0123456789abcdef\","
	    "\"link\":\"abcdefghijklmno\",\"address\":\"10.0.0.1\","
	    "\"peer\":\"10.0.0.2\",\"port\":65535,\"max_conns\":65536}",
	    &t, err, sizeof(err)), 0);
	assert_int_equal(t.max_conns, 65536);
}

static void
test_defaults(void **state)
{
	char err[512];
	struct tspec t;

	(void)state;
	assert_int_equal(parse("{\"id\":\"x\",\"link\":\"l\",\"address\":\"10.0.0.1\","
	    "\"peer\":\"10.0.0.2\",\"port\":1}", &t, err, sizeof(err)), 0);
	assert_int_equal(t.dns_port, 0);
	assert_int_equal(t.transparent_port, 0);
	assert_int_equal(t.max_conns, 256);
	assert_int_equal(t.max_dns, 64);
}

struct refusal {
	const char *json;
	const char *key;	/* must appear in err */
};

#define BASE_TAIL "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":3128"
#define BASE_HEAD "\"id\":\"a\",\"link\":\"eg-a\","

static void
test_refuses_every_bad_field_naming_it(void **state)
{
	static const struct refusal cases[] = {
		/* missing required keys */
		{ "{\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"a\"," BASE_TAIL "}", "\"link\"" },
		{ "{" BASE_HEAD "\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\"}", "\"port\"" },
		/* unknown key, wrong types */
		{ "{" BASE_HEAD BASE_TAIL ",\"hostile_extra\":1}", "hostile_extra" },
		{ "{\"id\":1,\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"a\",\"link\":[]," BASE_TAIL "}", "\"link\"" },
		{ "{" BASE_HEAD "\"address\":167772161,\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":null,\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":\"3128\"}", "\"port\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":3128.0}", "\"port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"dns_port\":true}", "\"dns_port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"max_conns\":\"1\"}", "\"max_conns\"" },
		/* grammar of id and link */
		{ "{\"id\":\"\",\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"-a\",\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"A\",\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"a_b\",\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"a\\u0000\",\"link\":\"eg-a\"," BASE_TAIL "}", "" },
		{ "{\"id\":\"0123456789abcdef0123456789abcdefg\",\"link\":\"eg-a\"," BASE_TAIL "}", "\"id\"" },
		{ "{\"id\":\"a\",\"link\":\"\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"abcdefghijklmnop\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"eg/a\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"eg:a\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"eg%d\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"eg a\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"..\"," BASE_TAIL "}", "\"link\"" },
		{ "{\"id\":\"a\",\"link\":\"lo\"," BASE_TAIL "}", "\"link\"" },
		/* addresses */
		{ "{" BASE_HEAD "\"address\":\"10.0.0.256\",\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"010.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1 \",\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"host\",\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"0.0.0.0\",\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"224.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"255.255.255.255\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"::\",\"peer\":\"2001:db8::2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"2001:db8::1\",\"peer\":\"ff02::1\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"2001:DB8::1\",\"peer\":\"2001:db8::2\",\"port\":1}", "\"address\"" },
		{ "{" BASE_HEAD "\"address\":\"2001:db8::1\",\"peer\":\"2001:db8:0:0:0:0:0:2\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"2001:db8::1\",\"peer\":\"2001:0db8::2\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"::ffff:10.0.0.1\",\"peer\":\"::ffff:10.0.0.2\",\"port\":1}", "\"address\"" },
		/* family mismatch, address == peer */
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"2001:db8::2\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"2001:db8::1\",\"peer\":\"10.0.0.2\",\"port\":1}", "\"peer\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.1\",\"port\":1}", "\"peer\"" },
		/* ranges */
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":0}", "\"port\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":65536}", "\"port\"" },
		{ "{" BASE_HEAD "\"address\":\"10.0.0.1\",\"peer\":\"10.0.0.2\",\"port\":-1}", "\"port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"dns_port\":65536}", "\"dns_port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"transparent_port\":-1}", "\"transparent_port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"max_conns\":0}", "\"max_conns\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"max_conns\":65537}", "\"max_conns\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"max_dns\":0}", "\"max_dns\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"max_dns\":257}", "\"max_dns\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"max_dns\":99999999999999999999999}", "" },
		/* ports pairwise distinct */
		{ "{" BASE_HEAD BASE_TAIL ",\"dns_port\":3128}", "\"dns_port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"transparent_port\":3128}", "\"transparent_port\"" },
		{ "{" BASE_HEAD BASE_TAIL ",\"dns_port\":53,\"transparent_port\":53}", "\"transparent_port\"" },
		/* not an object, duplicate key */
		{ "[]", "object" },
		{ "\"a\"", "" },
		{ "{" BASE_HEAD BASE_TAIL ",\"port\":3129}", "port" },
		{ "{" BASE_HEAD BASE_TAIL "} trailing", "" },
	};
	char err[512];
	struct tspec t;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (parse(cases[i].json, &t, err, sizeof(err)) != -1)
			fail_msg("case %zu accepted: %s", i, cases[i].json);
		if (err[0] == '\0' || strstr(err, cases[i].key) == NULL)
			fail_msg("case %zu: err \"%s\" does not name %s", i, err,
			    cases[i].key);
	}
}

static void
test_hostile_oversized_and_null_input_refused(void **state)
{
	char err[512], *big;
	struct tspec t;

	(void)state;
	assert_int_equal(tspec_parse(NULL, 0, &t, err, sizeof(err)), -1);
	big = malloc(TSPEC_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, ' ', TSPEC_MAX_BYTES + 1);
	memcpy(big, SPEC_A, strlen(SPEC_A));
	assert_int_equal(tspec_parse(big, TSPEC_MAX_BYTES + 1, &t, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "larger"));
	free(big);
}

static void
test_id_and_link_grammar(void **state)
{
	(void)state;
	assert_true(tspec_id_ok("a", 1));
	assert_true(tspec_id_ok("0-a", 3));
	assert_false(tspec_id_ok("", 0));
	assert_false(tspec_id_ok("-", 1));
	assert_false(tspec_id_ok("a.b", 3));
	assert_false(tspec_id_ok("a\0", 2));
	assert_true(tspec_link_ok("eth0.1_x-Y", 10));
	assert_false(tspec_link_ok(".", 1));
	assert_false(tspec_link_ok("..", 2));
	assert_true(tspec_link_ok("...", 3));
	assert_false(tspec_link_ok("lo", 2));
	assert_true(tspec_link_ok("lo0", 3));
}

static void
test_canonical_round_trip(void **state)
{
	const char *spaced = "{ \"port\" : 3128, \"peer\":\"10.81.1.2\", "
	    "\"link\":\"eg-a\", \"id\":\"a\", \"dns_port\":5353,\n"
	    "\"address\":\"10.81.1.1\" }";
	char err[512], *c, *c2;
	struct tspec t, u;
	size_t len;

	(void)state;
	assert_int_equal(parse(spaced, &t, err, sizeof(err)), 0);
	c = tspec_canonical(&t, &len);
	assert_non_null(c);
	assert_string_equal(c, SPEC_A);
	assert_int_equal(len, strlen(SPEC_A));
	assert_int_equal(tspec_parse(c, len, &u, err, sizeof(err)), 0);
	assert_true(tspec_equal(&t, &u));
	c2 = tspec_canonical(&u, NULL);
	assert_string_equal(c, c2);
	free(c);
	free(c2);
	assert_int_equal(parse(SPEC_B6, &t, err, sizeof(err)), 0);
	c = tspec_canonical(&t, NULL);
	assert_string_equal(c, SPEC_B6);
	free(c);
	/* tspec_equal sees every field. */
	assert_int_equal(parse(SPEC_A, &t, err, sizeof(err)), 0);
	u = t;
	u.max_dns = 63;
	assert_false(tspec_equal(&t, &u));
	u = t;
	u.peer[3] ^= 1;
	assert_false(tspec_equal(&t, &u));
}

static void
test_list_sorted_and_canonical(void **state)
{
	const char *doc = LIST_HEAD SPEC_B6 "," SPEC_A "]}";
	const char *want = LIST_HEAD SPEC_A "," SPEC_B6 "]}";
	char err[512], *c;
	struct tspec *v, *w;
	size_t n, m, len;

	(void)state;
	assert_int_equal(tspec_list_parse(doc, strlen(doc), &v, &n, err,
	    sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].id, "a");
	assert_string_equal(v[1].id, "b-2");
	c = tspec_list_canonical(v, n, &len);
	assert_non_null(c);
	assert_string_equal(c, want);
	assert_int_equal(len, strlen(want));
	/* the canonical writer sorts without reordering its input */
	{
		struct tspec r[2] = { v[1], v[0] };
		char *c2 = tspec_list_canonical(r, 2, NULL);

		assert_string_equal(c2, want);
		assert_string_equal(r[0].id, "b-2");
		free(c2);
	}
	assert_int_equal(tspec_list_parse(c, len, &w, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 2);
	assert_true(tspec_equal(&v[0], &w[0]) && tspec_equal(&v[1], &w[1]));
	free(c);
	free(w);
	free(v);
}

static void
test_list_empty(void **state)
{
	const char *doc = LIST_HEAD "]}";
	char err[512], *c;
	struct tspec *v;
	size_t n;

	(void)state;
	assert_int_equal(tspec_list_parse(doc, strlen(doc), &v, &n, err,
	    sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	c = tspec_list_canonical(v, n, NULL);
	assert_string_equal(c, doc);
	free(c);
}

static void
test_list_refusals(void **state)
{
	static const struct refusal cases[] = {
		{ LIST_HEAD SPEC_A "," SPEC_A "]}", "id \"a\"" },
		/* another id, the same link */
		{ LIST_HEAD SPEC_A ",{\"address\":\"10.9.0.1\",\"id\":\"z\","
		  "\"link\":\"eg-a\",\"peer\":\"10.9.0.2\",\"port\":1}]}", "link \"eg-a\"" },
		{ LIST_HEAD SPEC_A ",{\"id\":\"z\"}]}", "tenants[1]" },
		{ LIST_HEAD "1]}", "tenants[0]" },
		{ "{\"schema\":\"egress-guard.tenants.v2\",\"tenants\":[]}", "\"schema\"" },
		{ "{\"tenants\":[]}", "\"schema\"" },
		{ "{\"schema\":\"egress-guard.tenants.v1\"}", "\"tenants\"" },
		{ "{\"schema\":\"egress-guard.tenants.v1\",\"tenants\":{}}", "\"tenants\"" },
		{ "{\"schema\":\"egress-guard.tenants.v1\",\"tenants\":[],\"x\":1}", "\"x\"" },
		{ "{\"schema\":\"egress-guard.tenants.v1\",\"tenants\":[],\"tenants\":[]}", "tenants" },
		{ "[]", "object" },
	};
	char err[512];
	struct tspec *v;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (tspec_list_parse(cases[i].json, strlen(cases[i].json), &v, &n,
		    err, sizeof(err)) != -1)
			fail_msg("case %zu accepted", i);
		assert_null(v);
		if (strstr(err, cases[i].key) == NULL)
			fail_msg("case %zu: err \"%s\" does not name %s", i, err,
			    cases[i].key);
	}
}

/* TSPEC_MAX entries are fine, one more is refused. */
static void
test_list_limit(void **state)
{
	size_t cap = (TSPEC_MAX + 1) * 200 + 64, at, i, n;
	char *doc = malloc(cap), err[512];
	struct tspec *v;

	(void)state;
	assert_non_null(doc);
	for (int extra = 0; extra <= 1; extra++) {
		at = (size_t)snprintf(doc, cap, "%s", LIST_HEAD);
		for (i = 0; i < (size_t)TSPEC_MAX + (size_t)extra; i++)
			at += (size_t)snprintf(doc + at, cap - at,
			    "%s{\"id\":\"t%zu\",\"link\":\"l%zu\",\"address\":\"10.%zu.%zu.1\","
			    "\"peer\":\"10.%zu.%zu.2\",\"port\":3128}", i ? "," : "",
			    i, i, i / 256, i % 256, i / 256, i % 256);
		at += (size_t)snprintf(doc + at, cap - at, "]}");
		if (extra == 0) {
			assert_int_equal(tspec_list_parse(doc, at, &v, &n, err,
			    sizeof(err)), 0);
			assert_int_equal(n, TSPEC_MAX);
			for (i = 1; i < n; i++)
				assert_true(strcmp(v[i - 1].id, v[i].id) < 0);
			free(v);
		} else {
			assert_int_equal(tspec_list_parse(doc, at, &v, &n, err,
			    sizeof(err)), -1);
			assert_non_null(strstr(err, "4096"));
		}
	}
	free(doc);
}

static void
test_list_check_new(void **state)
{
	char err[512];
	struct tspec v[2], b;

	(void)state;
	assert_int_equal(parse(SPEC_A, &v[0], err, sizeof(err)), 0);
	assert_int_equal(parse(SPEC_B6, &v[1], err, sizeof(err)), 0);
	b = v[0];
	assert_int_equal(tspec_list_check_new(v, 2, &b, err, sizeof(err)), -1);
	assert_int_equal(strncmp(err, "id \"a\"", 6), 0);
	strcpy(b.id, "c");
	assert_int_equal(tspec_list_check_new(v, 2, &b, err, sizeof(err)), -1);
	assert_int_equal(strncmp(err, "link \"eg-a\"", 11), 0);
	assert_non_null(strstr(err, "\"a\""));
	strcpy(b.link, "eg-c");
	assert_int_equal(tspec_list_check_new(v, 2, &b, err, sizeof(err)), 0);
	assert_int_equal(tspec_list_check_new(v, 0, &b, err, sizeof(err)), 0);
	assert_int_equal(tspec_list_find_id(v, 2, "b-2"), 1);
	assert_int_equal(tspec_list_find_link(v, 2, "eg.b_2"), 1);
	assert_int_equal(tspec_list_find_link(v, 2, "eg-c"), -1);
}

static void
test_list_load_errors_start_with_path(void **state)
{
	char path[] = "/tmp/test_tspec.XXXXXX", err[512];
	const char *bad = LIST_HEAD "{}]}";
	struct tspec *v;
	size_t n;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);
	assert_int_equal(tspec_list_load(path, &v, &n, err, sizeof(err)), -1);
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	assert_non_null(strstr(err, "tenants[0]"));
	unlink(path);
	assert_int_equal(tspec_list_load(path, &v, &n, err, sizeof(err)), -1);
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_the_spec_example),
		cmocka_unit_test(test_accepts_ipv6_and_bounds),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_refuses_every_bad_field_naming_it),
		cmocka_unit_test(test_hostile_oversized_and_null_input_refused),
		cmocka_unit_test(test_id_and_link_grammar),
		cmocka_unit_test(test_canonical_round_trip),
		cmocka_unit_test(test_list_sorted_and_canonical),
		cmocka_unit_test(test_list_empty),
		cmocka_unit_test(test_list_refusals),
		cmocka_unit_test(test_list_limit),
		cmocka_unit_test(test_list_check_new),
		cmocka_unit_test(test_list_load_errors_start_with_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
