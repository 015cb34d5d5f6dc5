/* policy/tspec: tspec_parse (one tenant spec, as PUT /v1/tenants/ID
 * takes it) and tspec_list_parse (tenants.json, read back at start).
 *
 * Beyond "no crash": an accepted spec's canonical bytes parse again to
 * the same spec and the same bytes (the canonical form is a fixed
 * point); its id and link pass their grammars, its ports are within
 * bounds and distinct, its two addresses differ; an accepted list is
 * sorted by id with no id or link twice, and its canonical bytes parse
 * back to it; a refusal gives a printable one-line reason. */
#include <string.h>
#include <sys/socket.h>

#include "policy/tspec.h"
#include "tests/fuzz/fuzz.h"

static void
check_spec(const struct tspec *t)
{
	struct tspec u;
	char err[256], *c, *d;
	size_t len, dlen;

	FUZZ_CHECK(tspec_id_ok(t->id, strlen(t->id)));
	FUZZ_CHECK(tspec_link_ok(t->link, strlen(t->link)));
	FUZZ_CHECK(t->family == AF_INET || t->family == AF_INET6);
	FUZZ_CHECK(memcmp(t->addr, t->peer, t->family == AF_INET ? 4 : 16) != 0);
	FUZZ_CHECK(t->port > 0);
	FUZZ_CHECK(t->dns_port == 0 || (t->dns_port != t->port &&
	    t->dns_port != t->transparent_port));
	FUZZ_CHECK(t->transparent_port == 0 || t->transparent_port != t->port);
	FUZZ_CHECK(t->max_conns >= 1 && t->max_conns <= 65536);
	FUZZ_CHECK(t->max_dns >= 1 && t->max_dns <= 256);
	c = tspec_canonical(t, &len);
	FUZZ_CHECK(c != NULL);
	FUZZ_CHECK(tspec_parse(c, len, &u, err, sizeof(err)) == 0);
	FUZZ_CHECK(tspec_equal(t, &u));
	d = tspec_canonical(&u, &dlen);
	FUZZ_CHECK(d != NULL && dlen == len && memcmp(c, d, len) == 0);
	free(c);
	free(d);
}

static void
check_list(const struct tspec *v, size_t n)
{
	struct tspec *w = NULL;
	char err[256], *c;
	size_t i, len, m = 0;

	FUZZ_CHECK(n <= TSPEC_MAX);
	for (i = 0; i < n; i++) {
		check_spec(&v[i]);
		FUZZ_CHECK(i == 0 || strcmp(v[i - 1].id, v[i].id) < 0);
		FUZZ_CHECK(tspec_list_find_link(v, n, v[i].link) == (long)i);
	}
	c = tspec_list_canonical(v, n, &len);
	FUZZ_CHECK(c != NULL);
	FUZZ_CHECK(tspec_list_parse(c, len, &w, &m, err, sizeof(err)) == 0);
	FUZZ_CHECK(m == n);
	for (i = 0; i < n; i++)
		FUZZ_CHECK(tspec_equal(&v[i], &w[i]));
	free(w);
	free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tspec t, *v = NULL;
	char err[512], *buf = fuzz_dup(data, size);
	size_t n = 0;

	err[0] = '\0';
	if (tspec_parse(buf, size, &t, err, sizeof(err)) == 0)
		check_spec(&t);
	else
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	err[0] = '\0';
	if (tspec_list_parse(buf, size, &v, &n, err, sizeof(err)) == 0)
		check_list(v, n);
	else
		FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
	free(v);
	free(buf);
	return 0;
}
