/* Profiles (docs/design.md "Policy"): network_policy, allowed_hosts,
 * required_egress_certification and the abbreviations
 * (allow_package_managers with package_managers, expanded from a catalog;
 * allow_mcp_servers, which grants nothing) compiled into a policy at an
 * epoch. A hand-written fast path for the common spelling, jansson for
 * the rest; both end in profile_compile, so they accept the same
 * profiles and name the same problem first. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/catalog.h"
#include "policy/dest.h"
#include "policy/policy.h"
#include "policy/policyint.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/jsonstrict.h"

/* What a profile may require. "unsupported" is a grade (a provider with
 * no selector at all) but never a requirement: requiring it would admit
 * anything, which is what leaving the key out already means for none and
 * unrestricted, and is refused for allowlist. */
static const char *const grades[] = {
	"advisory_filter", "security_boundary", NULL
};

/* package_managers entries read: one more than the closed list, so that
 * a longer list still shows an entry unknown or given twice. */
#define PROFILE_MAX_PMS	(CATALOG_NECOSYSTEMS + 1)

/* What a profile says, whichever parser read it. */
struct profile {
	int		 has_mode, has_hosts, has_cert;
	int		 hosts_array;	/* allowed_hosts is an array */
	struct policy_span	 mode, cert;
	struct policy_span	*hosts;		/* NULL beyond POLICY_MAX_ENTRIES */
	size_t		 nhosts;
	/* The abbreviations: each flag 1 true, 0 false, -1 not a boolean. */
	int		 has_pm, has_mcp, has_pms, pms_array;
	int		 pm, mcp;
	struct policy_span	 pms[PROFILE_MAX_PMS];	/* the first ones */
	size_t		 npms;		/* the array's whole length */
};

/* The declared ecosystems: each known, once, and in the catalog. 0 with
 * eco[] (npms entries), or -1 with err. */
static int
profile_ecosystems(const struct profile *pf, const struct catalog *cat,
    int *eco, char *err, size_t errlen)
{
	char shown[ERRBUF_SHOW_BUF];
	const struct dest *d;
	size_t i, j, n = pf->npms < PROFILE_MAX_PMS ? pf->npms : PROFILE_MAX_PMS;

	for (i = 0; i < n; i++) {
		const struct policy_span *e = &pf->pms[i];

		if (e->s == NULL)
			return errbuf_fail(err, errlen, "package_managers[%zu]: "
			    "must be a string", i);
		if ((eco[i] = catalog_ecosystem_index(e->s, e->len)) < 0)
			return errbuf_fail(err, errlen, "package_managers[%zu] "
			    "\"%s\": unknown ecosystem (known: %s)", i,
			    errbuf_show(e->s, e->len, shown),
			    catalog_ecosystem_list());
		for (j = 0; j < i; j++)
			if (eco[j] == eco[i])
				return errbuf_fail(err, errlen, "package_managers"
				    "[%zu] \"%s\": listed twice", i,
				    catalog_ecosystem_name((unsigned)eco[i]));
	}
	if (cat == NULL)
		return errbuf_fail(err, errlen, "allow_package_managers needs a "
		    "catalog (egress-guardctl compile --catalog FILE)");
	for (i = 0; i < n; i++)
		if (catalog_hosts(cat, (unsigned)eco[i], &d) == 0)
			return errbuf_fail(err, errlen, "package_managers[%zu] "
			    "\"%s\": not in catalog %s", i,
			    catalog_ecosystem_name((unsigned)eco[i]),
			    catalog_version(cat));
	return 0;
}

/* The abbreviations' rules, before anything is built. *neco is how many
 * ecosystems to expand (0 without package managers). */
static int
profile_flags(const struct profile *pf, enum policy_mode mode,
    const struct catalog *cat, int *eco, size_t *neco, char *err,
    size_t errlen)
{
	*neco = 0;
	if (pf->has_pm && pf->pm == -1)
		return errbuf_fail(err, errlen, "allow_package_managers must be "
		    "true or false");
	if (pf->has_mcp && pf->mcp == -1)
		return errbuf_fail(err, errlen, "allow_mcp_servers must be true "
		    "or false");
	if (pf->has_pms && !pf->pms_array)
		return errbuf_fail(err, errlen, "package_managers must be an "
		    "array of ecosystem names");
	if (pf->pm == 1 && mode != POLICY_ALLOWLIST)
		return errbuf_fail(err, errlen, "allow_package_managers is only "
		    "allowed with network_policy \"allowlist\"");
	if (pf->mcp == 1 && mode != POLICY_ALLOWLIST)
		return errbuf_fail(err, errlen, "allow_mcp_servers is only "
		    "allowed with network_policy \"allowlist\"");
	/* A list that no flag reads would be a trap for its reader. */
	if (pf->has_pms && pf->pm != 1)
		return errbuf_fail(err, errlen, "package_managers is only read "
		    "with allow_package_managers true");
	if (pf->pm == 1 && pf->npms == 0)
		return errbuf_fail(err, errlen, "allow_package_managers needs "
		    "package_managers, the ecosystems to allow");
	/* MCP calls go through the plane, never from the workload: the
	 * flag grants no host, and alone it leaves an allowlist that
	 * reaches nothing. */
	if (pf->mcp == 1 && pf->nhosts == 0 && pf->pm != 1)
		return errbuf_fail(err, errlen, "allow_mcp_servers grants no "
		    "workload host: with no allowed_hosts and no package managers "
		    "the allowlist reaches nothing");
	if (pf->pm == 1) {
		if (profile_ecosystems(pf, cat, eco, err, errlen) == -1)
			return -1;
		*neco = pf->npms;
	}
	return 0;
}

/* The checks and the build, the same for both parsers, so that they
 * accept the same profiles and name the same problem first. */
static struct policy *
profile_compile(const struct profile *pf, long long epoch,
    const struct catalog *cat, struct policy_span tenant, enum policy_build b,
    char *err, size_t errlen)
{
	char why[128], shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	enum policy_mode mode;
	const struct dest *cd;
	struct dest d;
	size_t i, k, m, neco, total, n = pf->nhosts;
	int g = -1, eco[PROFILE_MAX_PMS];

	if (!pf->has_mode) {
		errbuf_set(err, errlen, "missing key \"network_policy\"");
		return NULL;
	}
	if (policy_parse_mode(pf->mode, &mode) == -1) {
		errbuf_set(err, errlen, "network_policy must be one of none, "
		    "allowlist, unrestricted");
		return NULL;
	}
	if (profile_flags(pf, mode, cat, eco, &neco, err, errlen) == -1)
		return NULL;
	if (!pf->has_hosts && mode == POLICY_ALLOWLIST && neco == 0) {
		errbuf_set(err, errlen, "missing key \"allowed_hosts\" "
		    "(required with network_policy \"allowlist\")");
		return NULL;
	}
	if (pf->has_hosts && !pf->hosts_array) {
		errbuf_set(err, errlen, "allowed_hosts must be an array");
		return NULL;
	}
	if (n > 0 && mode != POLICY_ALLOWLIST) {
		errbuf_set(err, errlen, "allowed_hosts must be absent or empty "
		    "with network_policy \"%s\"", policy_mode_name(mode));
		return NULL;
	}
	if (n > POLICY_MAX_ENTRIES) {
		errbuf_set(err, errlen, "allowed_hosts has more than %u entries",
		    POLICY_MAX_ENTRIES);
		return NULL;
	}
	if (pf->has_cert) {
		if (mode != POLICY_ALLOWLIST) {
			errbuf_set(err, errlen, "required_egress_certification is "
			    "only allowed with network_policy \"allowlist\"");
			return NULL;
		}
		if ((g = policy_one_of(pf->cert, grades)) < 0) {
			errbuf_set(err, errlen, "required_egress_certification must "
			    "be one of advisory_filter, security_boundary");
			return NULL;
		}
	}
	total = n;
	for (k = 0; k < neco; k++)
		total += catalog_hosts(cat, (unsigned)eco[k], &cd);
	if (total > POLICY_MAX_ENTRIES) {
		errbuf_set(err, errlen, "allowed_hosts and package_managers have "
		    "more than %u entries", POLICY_MAX_ENTRIES);
		return NULL;
	}
	if ((p = policy_new(mode, epoch, total, b)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	p->grade = g >= 0 ? grades[g] : NULL;
	if (tenant.len > 0 && policy_set_tenant(p, tenant, err, errlen) == -1)
		goto bad;
	if (neco > 0)
		policy_set_catalog(p, catalog_version(cat),
		    strlen(catalog_version(cat)), catalog_digest(cat));
	/* Every host a flag grants is an entry of its own, named by the
	 * flag and ecosystem: the guard sees exact hosts only. */
	for (k = 0; k < neco; k++) {
		m = catalog_hosts(cat, (unsigned)eco[k], &cd);
		for (i = 0; i < m; i++)
			if (policy_add_entry(p, &cd[i], (unsigned)eco[k] + 1) == -1) {
				errbuf_set(err, errlen, "out of memory");
				goto bad;
			}
	}
	for (i = 0; i < n; i++) {
		const struct policy_span *h = &pf->hosts[i];

		if (h->s == NULL) {
			errbuf_set(err, errlen, "allowed_hosts[%zu]: must be a "
			    "\"host:port\" string", i);
			goto bad;
		}
		if (dest_parse_authority(h->s, h->len, &d, why, sizeof(why)) == -1) {
			errbuf_set(err, errlen, "allowed_hosts[%zu] \"%s\": %s", i,
			    errbuf_show(h->s, h->len, shown), why);
			goto bad;
		}
		if (policy_add_entry(p, &d, POLICY_VIA_PROFILE) == -1) {
			errbuf_set(err, errlen, "out of memory");
			goto bad;
		}
	}
	if (policy_finish(p, err, errlen) == 0)
		return p;
bad:
	policy_free(p);
	return NULL;
}

/* ---- the profile fast path ----
 * A profile as people and tools write one: a single object of the three
 * known keys, each at most once, whose values are strings (an array of
 * strings for allowed_hosts) without escapes, with any JSON whitespace
 * around. Read by hand, because building a jansson tree of 100,000
 * strings is most of the cost of compiling a large profile. Anything
 * else, and any profile profile_compile refuses from here, takes the
 * jansson path, which is as strict and names the problem; both end in
 * profile_compile. */

static const char *
skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return s;
}

/* A string at *s (after whitespace) into out, and past it. Its bytes are
 * not checked here: what profile_compile accepts is printable ASCII, and
 * whatever it refuses the jansson path then names. */
static int
scan_str(const char **s, const char *end, struct policy_span *out)
{
	const char *b, *q;

	*s = skip_ws(*s, end);
	if (*s == end || **s != '"')
		return -1;
	b = *s + 1;
	if ((q = memchr(b, '"', (size_t)(end - b))) == NULL ||
	    memchr(b, '\\', (size_t)(q - b)) != NULL)
		return -1;
	out->s = b;
	out->len = (size_t)(q - b);
	*s = q + 1;
	return 0;
}

/* The next non-whitespace byte is c: step past it. */
static int
scan_byte(const char **s, const char *end, char c)
{
	*s = skip_ws(*s, end);
	if (*s == end || **s != c)
		return -1;
	(*s)++;
	return 0;
}

static int
scan_hosts(const char **s, const char *end, struct profile *pf)
{
	size_t cap = 0;

	if (scan_byte(s, end, '[') == -1)
		return -1;
	if (scan_byte(s, end, ']') == 0)
		return 0;
	do {
		if (pf->nhosts == cap) {
			struct policy_span *nh;

			if (cap == POLICY_MAX_ENTRIES)
				return -1;
			cap = cap == 0 ? 1024 : cap * 2;
			if (cap > POLICY_MAX_ENTRIES)
				cap = POLICY_MAX_ENTRIES;
			if ((nh = realloc(pf->hosts, cap * sizeof(*nh))) == NULL)
				return -1;
			pf->hosts = nh;
		}
		if (scan_str(s, end, &pf->hosts[pf->nhosts]) == -1)
			return -1;
		pf->nhosts++;
	} while (scan_byte(s, end, ',') == 0);
	return scan_byte(s, end, ']');
}

/* true or false at *s: 1 or 0 into *out. */
static int
scan_bool(const char **s, const char *end, int *out)
{
	*s = skip_ws(*s, end);
	if ((size_t)(end - *s) >= 4 && memcmp(*s, "true", 4) == 0) {
		*s += 4;
		*out = 1;
		return 0;
	}
	if ((size_t)(end - *s) >= 5 && memcmp(*s, "false", 5) == 0) {
		*s += 5;
		*out = 0;
		return 0;
	}
	return -1;
}

static int
scan_pms(const char **s, const char *end, struct profile *pf)
{
	if (scan_byte(s, end, '[') == -1)
		return -1;
	if (scan_byte(s, end, ']') == 0)
		return 0;
	do {
		if (pf->npms == PROFILE_MAX_PMS ||
		    scan_str(s, end, &pf->pms[pf->npms]) == -1)
			return -1;
		pf->npms++;
	} while (scan_byte(s, end, ',') == 0);
	return scan_byte(s, end, ']');
}

/* One "key": value of the profile, a key not seen before. */
static int
scan_member(const char **s, const char *end, struct profile *pf)
{
	struct policy_span key;

	if (scan_str(s, end, &key) == -1 || scan_byte(s, end, ':') == -1)
		return -1;
	if (policy_span_is(key, "network_policy") && !pf->has_mode) {
		pf->has_mode = 1;
		return scan_str(s, end, &pf->mode);
	}
	if (policy_span_is(key, "required_egress_certification") && !pf->has_cert) {
		pf->has_cert = 1;
		return scan_str(s, end, &pf->cert);
	}
	if (policy_span_is(key, "allowed_hosts") && !pf->has_hosts) {
		pf->has_hosts = pf->hosts_array = 1;
		return scan_hosts(s, end, pf);
	}
	if (policy_span_is(key, "allow_package_managers") && !pf->has_pm) {
		pf->has_pm = 1;
		return scan_bool(s, end, &pf->pm);
	}
	if (policy_span_is(key, "allow_mcp_servers") && !pf->has_mcp) {
		pf->has_mcp = 1;
		return scan_bool(s, end, &pf->mcp);
	}
	if (policy_span_is(key, "package_managers") && !pf->has_pms) {
		pf->has_pms = pf->pms_array = 1;
		return scan_pms(s, end, pf);
	}
	return -1;
}

/* 0 with pf filled (its strings point into buf, pf->hosts is malloc'd),
 * or -1 with nothing to free: take the jansson path. */
static int
profile_scan(const char *buf, size_t len, struct profile *pf)
{
	const char *s = buf, *end = buf + len;

	memset(pf, 0, sizeof(*pf));
	if (scan_byte(&s, end, '{') == -1)
		return -1;
	if (scan_byte(&s, end, '}') == -1) {
		do {
			if (scan_member(&s, end, pf) == -1)
				goto bad;
		} while (scan_byte(&s, end, ',') == 0);
		if (scan_byte(&s, end, '}') == -1)
			goto bad;
	}
	if (skip_ws(s, end) == end)
		return 0;
bad:
	free(pf->hosts);
	pf->hosts = NULL;
	return -1;
}

/* The same from jansson's tree; the strings point into it. */
static int
profile_from_json(json_t *root, struct profile *pf)
{
	json_t *mode = json_object_get(root, "network_policy");
	json_t *hosts = json_object_get(root, "allowed_hosts");
	json_t *cert = json_object_get(root, "required_egress_certification");
	json_t *pm = json_object_get(root, "allow_package_managers");
	json_t *mcp = json_object_get(root, "allow_mcp_servers");
	json_t *pms = json_object_get(root, "package_managers");
	size_t i;

	memset(pf, 0, sizeof(*pf));
	pf->has_pm = pm != NULL;
	pf->pm = json_is_boolean(pm) ? json_is_true(pm) : -1;
	pf->has_mcp = mcp != NULL;
	pf->mcp = json_is_boolean(mcp) ? json_is_true(mcp) : -1;
	pf->has_pms = pms != NULL;
	pf->pms_array = json_is_array(pms);
	pf->npms = json_array_size(pms);	/* 0 for NULL */
	for (i = 0; i < pf->npms && i < PROFILE_MAX_PMS; i++)
		pf->pms[i] = policy_json_span(json_array_get(pms, i));
	pf->has_mode = mode != NULL;
	pf->mode = policy_json_span(mode);
	pf->has_cert = cert != NULL;
	pf->cert = policy_json_span(cert);
	pf->has_hosts = hosts != NULL;
	pf->hosts_array = json_is_array(hosts);
	pf->nhosts = json_array_size(hosts);	/* 0 for NULL */
	if (pf->nhosts == 0 || pf->nhosts > POLICY_MAX_ENTRIES)
		return 0;
	if ((pf->hosts = calloc(pf->nhosts, sizeof(*pf->hosts))) == NULL)
		return -1;
	for (i = 0; i < pf->nhosts; i++)
		pf->hosts[i] = policy_json_span(json_array_get(hosts, i));
	return 0;
}

/* tenant NULL: the policy names none. */
static struct policy *
compile_profile(const char *buf, size_t len, long long epoch,
    const struct catalog *cat, const char *tenant, enum policy_build b,
    char *err, size_t errlen)
{
	static const char *const keys[] = {
		"network_policy", "allowed_hosts",
		"required_egress_certification", "allow_package_managers",
		"package_managers", "allow_mcp_servers", NULL
	};
	char shown[ERRBUF_SHOW_BUF];
	struct policy *p = NULL;
	struct profile pf;
	struct policy_span t = { NULL, 0 };
	const char *extra;
	json_t *root;

	if (epoch < 0 || epoch > POLICY_EPOCH_MAX) {
		errbuf_set(err, errlen, "epoch must be 0-%lld", POLICY_EPOCH_MAX);
		return NULL;
	}
	/* Checked before the profile is read: it is no part of it. */
	if (tenant != NULL) {
		t.s = tenant;
		t.len = strnlen(tenant, POLICY_TENANT_MAX + 1);
		if (policy_set_tenant(NULL, t, err, errlen) == -1)
			return NULL;
	}
	/* buf NULL is refused by policy_load_json: NULL + 0 is undefined in C. */
	if (buf != NULL && len <= POLICY_MAX_BYTES && profile_scan(buf, len, &pf) == 0) {
		p = profile_compile(&pf, epoch, cat, t, b, err, errlen);
		free(pf.hosts);
		if (p != NULL)
			return p;
	}
	if ((root = policy_load_json(buf, len, err, errlen)) == NULL)
		return NULL;
	if ((extra = jsonstrict_unknown_key(root, keys)) != NULL) {
		errbuf_set(err, errlen, "unknown key \"%s\"",
		    errbuf_show(extra, strlen(extra), shown));
	} else if (profile_from_json(root, &pf) == -1) {
		errbuf_set(err, errlen, "out of memory");
	} else {
		p = profile_compile(&pf, epoch, cat, t, b, err, errlen);
		free(pf.hosts);
	}
	json_decref(root);
	return p;
}

struct policy *
policy_compile_profile(const char *buf, size_t len, long long epoch,
    char *err, size_t errlen)
{
	return compile_profile(buf, len, epoch, NULL, NULL, POLICY_BUILD_ALL, err,
	    errlen);
}

struct policy *
policy_compile_profile_cat(const char *buf, size_t len, long long epoch,
    const struct catalog *cat, char *err, size_t errlen)
{
	return compile_profile(buf, len, epoch, cat, NULL, POLICY_BUILD_ALL, err,
	    errlen);
}

static struct policy *
compile_file(const char *path, long long epoch, const struct catalog *cat,
    const char *tenant, enum policy_build b, char *err, size_t errlen)
{
	struct policy *p;
	char why[512];
	size_t len;
	char *buf;

	if ((buf = file_read(path, POLICY_MAX_BYTES, 0, &len, err, errlen)) == NULL)
		return NULL;
	if ((p = compile_profile(buf, len, epoch, cat, tenant, b, why,
	    sizeof(why))) == NULL)
		errbuf_set(err, errlen, "%s: %s", path, why);
	free(buf);
	return p;
}

struct policy *
policy_compile_profile_file(const char *path, long long epoch, char *err,
    size_t errlen)
{
	return compile_file(path, epoch, NULL, NULL, POLICY_BUILD_ALL, err, errlen);
}

struct policy *
policy_compile_profile_file_cat(const char *path, long long epoch,
    const struct catalog *cat, char *err, size_t errlen)
{
	return compile_file(path, epoch, cat, NULL, POLICY_BUILD_ALL, err, errlen);
}

char *
policy_profile_canonical(const char *path, long long epoch, size_t *len,
    char *err, size_t errlen)
{
	return policy_profile_canonical_cat(path, epoch, NULL, NULL, len, err,
	    errlen);
}

char *
policy_profile_canonical_cat(const char *path, long long epoch,
    const struct catalog *cat, const char *tenant, size_t *len, char *err,
    size_t errlen)
{
	struct policy *p = compile_file(path, epoch, cat, tenant,
	    POLICY_BUILD_CANONICAL, err, errlen);

	return p != NULL ? policy_hand_canonical(p, 0, len, err, errlen) : NULL;
}
