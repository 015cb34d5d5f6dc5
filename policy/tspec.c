/* Tenant specs and their list (docs/design.md "Tenant spec"). Strict:
 * jansson with duplicate keys refused, every key checked, the key named in
 * every error; the canonical form is written with snprintf because no
 * field can need escaping (ids and links by grammar, addresses are
 * inet_ntop's). Pure but for tspec_list_load. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "policy/policyint.h"
#include "policy/policy.h"
#include "policy/tspec.h"
#include "util/ascii.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/jsonstrict.h"

/* The longest canonical spec: the keys and punctuation (~130 bytes), an
 * id, a link, two IPv6 texts and seven numbers, rounded up. */
#define TSPEC_CANON_MAX	384

static const char *const spec_keys[] = {
	"address", "dns_port", "id", "link", "max_conns", "max_dns", "peer",
	"port", "transparent_port", NULL
};

/* One grammar for a tenant's id, the policy's (policy/policy.h): the
 * id a bundle is signed for must be one a spec can name. */
int
tspec_id_ok(const char *s, size_t len)
{
	return policy_tenant_id_ok(s, len);
}

/* The kernel refuses "." and ".." as names (dev_valid_name); the grammar
 * leaves out '/', ':' and whitespace, which it refuses too, and '%'
 * templates ("eth%d"), which it would expand. "lo" is no tenant's link:
 * the guard-side table would judge the guard's own loopback traffic as a
 * tenant's (nft --transparent-in refuses it likewise). */
int
tspec_link_ok(const char *s, size_t len)
{
	size_t i;

	if (s == NULL || len < 1 || len > TSPEC_LINK_MAX)
		return 0;
	if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.') ||
	    (len == 2 && s[0] == 'l' && s[1] == 'o'))
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(ascii_is_alpha(c) || ascii_is_digit(c) || c == '_' ||
		    c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* Neither end of a tenant link may be an address no single host owns. */
static const char *
addr_unfit(int family, const unsigned char *a)
{
	static const unsigned char zero[16];

	if (family == AF_INET) {
		if (memcmp(a, zero, 4) == 0)
			return "unspecified";
		if ((a[0] & 0xf0) == 0xe0)
			return "multicast";
		if (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255)
			return "broadcast";
		return NULL;
	}
	if (memcmp(a, zero, 16) == 0)
		return "unspecified";
	if (a[0] == 0xff)
		return "multicast";
	/* One host, one spelling: an IPv4 address is written as one. */
	if (memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff)
		return "IPv4-mapped (write the IPv4 address)";
	return NULL;
}

/* An address in the one spelling inet_ntop writes (RFC 5952 for IPv6,
 * dotted quad for IPv4): any other spelling of the same address is
 * refused, so that a spec has one canonical form and two specs never
 * differ by spelling alone. */
static int
parse_addr(json_t *obj, const char *key, int *family, unsigned char *bin,
    char *text, char *err, size_t errlen)
{
	char back[TSPEC_ADDR_TEXT];
	const char *s, *why;
	size_t len;
	int af;

	if ((s = jsonstrict_str(obj, key, &len)) == NULL)
		return errbuf_fail(err, errlen, "\"%s\" must be a string", key);
	if (len == 0 || len >= TSPEC_ADDR_TEXT || strlen(s) != len)
		return errbuf_fail(err, errlen, "\"%s\" is not an IP address", key);
	af = memchr(s, ':', len) != NULL ? AF_INET6 : AF_INET;
	memset(bin, 0, 16);
	if (inet_pton(af, s, bin) != 1 ||
	    inet_ntop(af, bin, back, sizeof(back)) == NULL)
		return errbuf_fail(err, errlen, "\"%s\" is not an IP address", key);
	if (strcmp(back, s) != 0)
		return errbuf_fail(err, errlen, "\"%s\" must be written %s "
		    "(canonical form)", key, back);
	if ((why = addr_unfit(af, bin)) != NULL)
		return errbuf_fail(err, errlen, "\"%s\" must not be %s", key, why);
	*family = af;
	memcpy(text, back, strlen(back) + 1);
	return 0;
}

/* An integer key in [min, max]; absent means def, or an error when def
 * is negative (required). */
static int
parse_uint(json_t *obj, const char *key, long long min, long long max,
    long long def, long long *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	json_int_t x;

	if (v == NULL) {
		if (def < 0)
			return errbuf_fail(err, errlen, "missing key \"%s\"", key);
		*out = def;
		return 0;
	}
	if (!json_is_integer(v))
		return errbuf_fail(err, errlen, "\"%s\" must be an integer", key);
	x = json_integer_value(v);
	if (x < min || x > max)
		return errbuf_fail(err, errlen, "\"%s\" must be %lld-%lld", key,
		    min, max);
	*out = (long long)x;
	return 0;
}

static int
parse_name(json_t *obj, const char *key, int (*ok)(const char *, size_t),
    const char *grammar, char *out, char *err, size_t errlen)
{
	const char *s;
	size_t len;

	if (json_object_get(obj, key) == NULL)
		return errbuf_fail(err, errlen, "missing key \"%s\"", key);
	if ((s = jsonstrict_str(obj, key, &len)) == NULL)
		return errbuf_fail(err, errlen, "\"%s\" must be a string", key);
	if (strlen(s) != len || !ok(s, len))
		return errbuf_fail(err, errlen, "\"%s\" must be %s", key, grammar);
	memcpy(out, s, len + 1);
	return 0;
}

static int
spec_from_json(json_t *obj, struct tspec *t, char *err, size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	const char *extra;
	long long port, dns, tport, conns, ndns;
	int pf;

	memset(t, 0, sizeof(*t));
	if (!json_is_object(obj))
		return errbuf_fail(err, errlen, "a tenant spec must be a JSON object");
	if ((extra = jsonstrict_unknown_key(obj, spec_keys)) != NULL)
		return errbuf_fail(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
	if (parse_name(obj, "id", tspec_id_ok,
	    "1-32 bytes of a-z, 0-9, '-', not starting with '-'", t->id,
	    err, errlen) == -1 ||
	    parse_name(obj, "link", tspec_link_ok,
	    "an interface name: 1-15 bytes of A-Z, a-z, 0-9, '_', '.', '-', "
	    "not \"lo\"",
	    t->link, err, errlen) == -1)
		return -1;
	if (json_object_get(obj, "address") == NULL)
		return errbuf_fail(err, errlen, "missing key \"address\"");
	if (json_object_get(obj, "peer") == NULL)
		return errbuf_fail(err, errlen, "missing key \"peer\"");
	if (parse_addr(obj, "address", &t->family, t->addr, t->address, err,
	    errlen) == -1 ||
	    parse_addr(obj, "peer", &pf, t->peer, t->peer_text, err,
	    errlen) == -1)
		return -1;
	if (pf != t->family)
		return errbuf_fail(err, errlen, "\"peer\" must be of the family "
		    "of \"address\" (IPv%d)", t->family == AF_INET ? 4 : 6);
	if (memcmp(t->addr, t->peer, 16) == 0)
		return errbuf_fail(err, errlen, "\"peer\" must differ from "
		    "\"address\"");
	if (parse_uint(obj, "port", 1, 65535, -1, &port, err, errlen) == -1 ||
	    parse_uint(obj, "dns_port", 0, 65535, 0, &dns, err, errlen) == -1 ||
	    parse_uint(obj, "transparent_port", 0, 65535, 0, &tport, err,
	    errlen) == -1 ||
	    parse_uint(obj, "max_conns", 1, 65536, 256, &conns, err,
	    errlen) == -1 ||
	    parse_uint(obj, "max_dns", 1, 256, 64, &ndns, err, errlen) == -1)
		return -1;
	if (dns != 0 && dns == port)
		return errbuf_fail(err, errlen, "\"dns_port\" must differ from "
		    "\"port\"");
	if (tport != 0 && (tport == port || tport == dns))
		return errbuf_fail(err, errlen, "\"transparent_port\" must differ "
		    "from \"%s\"", tport == port ? "port" : "dns_port");
	t->port = (uint16_t)port;
	t->dns_port = (uint16_t)dns;
	t->transparent_port = (uint16_t)tport;
	t->max_conns = (unsigned)conns;
	t->max_dns = (unsigned)ndns;
	return 0;
}

/* jansson's tree of an object (policy_load_json: no duplicate key),
 * within this module's own bound. NULL with err. */
static json_t *
load_json(const char *buf, size_t len, size_t max, char *err, size_t errlen)
{
	if (len > max) {
		errbuf_set(err, errlen, "larger than %zu bytes", max);
		return NULL;
	}
	return policy_load_json(buf, len, err, errlen);
}

int
tspec_parse(const char *buf, size_t len, struct tspec *out, char *err,
    size_t errlen)
{
	json_t *root;
	int rc;

	if ((root = load_json(buf, len, TSPEC_MAX_BYTES, err, errlen)) == NULL)
		return -1;
	rc = spec_from_json(root, out, err, errlen);
	json_decref(root);
	return rc;
}

/* Appends one canonical spec at out (room for TSPEC_CANON_MAX bytes);
 * returns its length. */
static size_t
write_spec(const struct tspec *t, char *out)
{
	int n = snprintf(out, TSPEC_CANON_MAX,
	    "{\"address\":\"%s\",\"dns_port\":%u,\"id\":\"%s\",\"link\":\"%s\","
	    "\"max_conns\":%u,\"max_dns\":%u,\"peer\":\"%s\",\"port\":%u,"
	    "\"transparent_port\":%u}",
	    t->address, (unsigned)t->dns_port, t->id, t->link, t->max_conns,
	    t->max_dns, t->peer_text, (unsigned)t->port,
	    (unsigned)t->transparent_port);

	/* Cannot happen with fields that passed the parser. */
	if (n < 0 || n >= TSPEC_CANON_MAX)
		return 0;
	return (size_t)n;
}

char *
tspec_canonical(const struct tspec *t, size_t *len)
{
	char *out = malloc(TSPEC_CANON_MAX);
	size_t n;

	if (out == NULL)
		return NULL;
	n = write_spec(t, out);
	out[n] = '\0';
	if (len != NULL)
		*len = n;
	return out;
}

static int
cmp_id(const void *a, const void *b)
{
	const struct tspec *const *x = a, *const *y = b;

	return strcmp((*x)->id, (*y)->id);
}

static int
cmp_link(const void *a, const void *b)
{
	const struct tspec *const *x = a, *const *y = b;

	return strcmp((*x)->link, (*y)->link);
}

static int
cmp_spec_id(const void *a, const void *b)
{
	return strcmp(((const struct tspec *)a)->id,
	    ((const struct tspec *)b)->id);
}

/* v[0..n) as pointers, sorted by cmp; NULL on ENOMEM (n 0: a 1-slot
 * block so NULL stays the one error). */
static const struct tspec **
sorted_view(const struct tspec *v, size_t n,
    int (*cmp)(const void *, const void *))
{
	const struct tspec **p = calloc(n > 0 ? n : 1, sizeof(*p));
	size_t i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		p[i] = &v[i];
	qsort(p, n, sizeof(*p), cmp);
	return p;
}

char *
tspec_list_canonical(const struct tspec *v, size_t n, size_t *len)
{
	static const char head[] = "{\"schema\":\"" TSPEC_SCHEMA "\",\"tenants\":[";
	const struct tspec **p;
	char *out;
	size_t i, at;

	if (n > TSPEC_MAX || (p = sorted_view(v, n, cmp_id)) == NULL)
		return NULL;
	if ((out = malloc(sizeof(head) + n * (TSPEC_CANON_MAX + 1) + 3)) == NULL) {
		free(p);
		return NULL;
	}
	memcpy(out, head, sizeof(head) - 1);
	at = sizeof(head) - 1;
	for (i = 0; i < n; i++) {
		if (i > 0)
			out[at++] = ',';
		at += write_spec(p[i], out + at);
	}
	memcpy(out + at, "]}", 3);
	at += 2;
	free(p);
	if (len != NULL)
		*len = at;
	return out;
}

/* The list's uniqueness: ids (v sorted by id), then links. */
static int
check_unique(const struct tspec *v, size_t n, char *err, size_t errlen)
{
	const struct tspec **p;
	size_t i;
	int rc = 0;

	for (i = 1; i < n; i++)
		if (strcmp(v[i - 1].id, v[i].id) == 0)
			return errbuf_fail(err, errlen, "tenants: id \"%s\" appears "
			    "twice", v[i].id);
	if ((p = sorted_view(v, n, cmp_link)) == NULL)
		return errbuf_fail(err, errlen, "out of memory");
	for (i = 1; i < n && rc == 0; i++)
		if (strcmp(p[i - 1]->link, p[i]->link) == 0)
			rc = errbuf_fail(err, errlen, "tenants: link \"%s\" appears "
			    "twice (tenants \"%s\" and \"%s\")", p[i]->link,
			    p[i - 1]->id, p[i]->id);
	free(p);
	return rc;
}

int
tspec_list_parse(const char *buf, size_t len, struct tspec **out, size_t *n,
    char *err, size_t errlen)
{
	static const char *const keys[] = { "schema", "tenants", NULL };
	char shown[ERRBUF_SHOW_BUF], why[512];
	struct tspec *v = NULL;
	const char *extra, *s;
	json_t *root, *arr, *item;
	size_t i, cnt, slen;

	*out = NULL;
	*n = 0;
	if ((root = load_json(buf, len, TSPEC_LIST_MAX_BYTES, err, errlen)) == NULL)
		return -1;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
		goto bad;
	}
	for (i = 0; keys[i] != NULL; i++) {
		if (json_object_get(root, keys[i]) == NULL) {
			errbuf_set(err, errlen, "missing key \"%s\"", keys[i]);
			goto bad;
		}
	}
	s = jsonstrict_str(root, "schema", &slen);
	if (s == NULL || slen != strlen(TSPEC_SCHEMA) ||
	    memcmp(s, TSPEC_SCHEMA, slen) != 0) {
		errbuf_set(err, errlen, "\"schema\" must be \"%s\"", TSPEC_SCHEMA);
		goto bad;
	}
	arr = json_object_get(root, "tenants");
	if (!json_is_array(arr)) {
		errbuf_set(err, errlen, "\"tenants\" must be an array");
		goto bad;
	}
	if ((cnt = json_array_size(arr)) > TSPEC_MAX) {
		errbuf_set(err, errlen, "\"tenants\" has more than %d entries",
		    TSPEC_MAX);
		goto bad;
	}
	if (cnt > 0 && (v = calloc(cnt, sizeof(*v))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto bad;
	}
	json_array_foreach(arr, i, item) {
		if (spec_from_json(item, &v[i], why, sizeof(why)) == -1) {
			errbuf_set(err, errlen, "tenants[%zu]: %s", i, why);
			goto bad;
		}
	}
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), cmp_spec_id);
	if (check_unique(v, cnt, err, errlen) == -1)
		goto bad;
	json_decref(root);
	*out = v;
	*n = cnt;
	return 0;
bad:
	free(v);
	json_decref(root);
	return -1;
}

int
tspec_list_load(const char *path, struct tspec **out, size_t *n, char *err,
    size_t errlen)
{
	char why[512];
	size_t len;
	char *buf;
	int rc;

	*out = NULL;
	*n = 0;
	if ((buf = file_read(path, TSPEC_LIST_MAX_BYTES, 0, &len, err,
	    errlen)) == NULL)
		return -1;
	rc = tspec_list_parse(buf, len, out, n, why, sizeof(why));
	if (rc == -1)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return rc;
}

int
tspec_equal(const struct tspec *a, const struct tspec *b)
{
	return strcmp(a->id, b->id) == 0 && strcmp(a->link, b->link) == 0 &&
	    a->family == b->family && memcmp(a->addr, b->addr, 16) == 0 &&
	    memcmp(a->peer, b->peer, 16) == 0 && a->port == b->port &&
	    a->dns_port == b->dns_port &&
	    a->transparent_port == b->transparent_port &&
	    a->max_conns == b->max_conns && a->max_dns == b->max_dns;
}

long
tspec_list_find_id(const struct tspec *v, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].id, id) == 0)
			return (long)i;
	return -1;
}

long
tspec_list_find_link(const struct tspec *v, size_t n, const char *link)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].link, link) == 0)
			return (long)i;
	return -1;
}

int
tspec_list_check_new(const struct tspec *v, size_t n, const struct tspec *b,
    char *err, size_t errlen)
{
	long i;

	if (tspec_list_find_id(v, n, b->id) >= 0)
		return errbuf_fail(err, errlen, "id \"%s\" is already a tenant",
		    b->id);
	if ((i = tspec_list_find_link(v, n, b->link)) >= 0)
		return errbuf_fail(err, errlen, "link \"%s\" is in use by tenant "
		    "\"%s\"", b->link, v[i].id);
	return 0;
}
