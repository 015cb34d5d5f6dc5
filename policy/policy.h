/* The policy model: strict parsing of profiles and compiled policies,
 * canonical bytes and digest (docs/design.md "Policy"), and the exact matcher.
 * Library code: errors go to a caller-supplied buffer, nothing is logged. */
#ifndef EG_POLICY_H
#define EG_POLICY_H

#include <stddef.h>
#include <stdint.h>

#define POLICY_SCHEMA		"egress-guard.policy.v1"
#define POLICY_MAX_BYTES	(64u * 1024 * 1024)	/* file / bytes bound */
#define POLICY_MAX_ENTRIES	1000000u
#define POLICY_EPOCH_MAX	9007199254740991LL	/* 2^53 - 1, exact in JSON */
#define POLICY_DIGEST_LEN	71	/* "sha256:" + 64 hex, without NUL */
#define POLICY_TENANT_MAX	32	/* a tenant id's bytes (TSPEC_ID_MAX) */

enum policy_mode {
	POLICY_NONE = 1,	/* deny every destination */
	POLICY_ALLOWLIST,	/* exact (host, port) pairs */
	POLICY_UNRESTRICTED	/* any destination that classifies public */
};

struct policy;	/* immutable once built; shared read-only by connections */

/* Parses a compiled policy (JSON bytes). Strict: unknown or duplicate keys,
 * a wrong schema, wildcards and bad entries are refused with the entry
 * named in err. Entries are normalised, sorted and deduplicated. */
struct policy *policy_parse(const char *buf, size_t len, char *err, size_t errlen);

/* policy_parse of the len bytes at buf + off. When they are exactly the
 * canonical bytes, the policy takes buf (malloc'd, with a byte to spare
 * after them) as its own instead of a copy, and *taken is 1: a signed
 * policy of megabytes is then held once. Otherwise buf stays the
 * caller's. */
struct policy *policy_parse_take(char *buf, size_t off, size_t len, int *taken,
    char *err, size_t errlen);

struct catalog;

/* Parses a profile ({"network_policy":…,"allowed_hosts":[…],…}) and
 * compiles it into a policy with the given epoch. allow_package_managers
 * is expanded from cat (policy/catalog.h), whose version and digest the
 * policy then records; without a catalog (NULL) a profile that asks for
 * package managers is refused. */
struct policy *policy_compile_profile(const char *buf, size_t len,
    long long epoch, char *err, size_t errlen);
struct policy *policy_compile_profile_cat(const char *buf, size_t len,
    long long epoch, const struct catalog *cat, char *err, size_t errlen);

/* Reads a whole file (bounded by POLICY_MAX_BYTES) and parses it with
 * policy_parse. */
struct policy *policy_load_file(const char *path, char *err, size_t errlen);

/* Reads a profile file the same bounded way and compiles it. Like
 * policy_load_file, every error message starts with the path. */
struct policy *policy_compile_profile_file(const char *path, long long epoch,
    char *err, size_t errlen);
/* The same with a catalog for the abbreviations (NULL: none). */
struct policy *policy_compile_profile_file_cat(const char *path,
    long long epoch, const struct catalog *cat, char *err, size_t errlen);

/* For the plane's tools, which write canonical bytes and never match: the
 * canonical bytes of a compiled policy file (what `sign` signs) or of a
 * profile compiled with epoch (what `compile` writes), with the same
 * checks and messages as policy_load_file and policy_compile_profile_file
 * but no digest or matcher built. Returns a malloc'd buffer holding
 * reserve free bytes (room for a prefix), then the *len canonical bytes
 * and a NUL; NULL with err. */
char *policy_file_canonical(const char *path, size_t reserve, size_t *len,
    char *err, size_t errlen);
char *policy_profile_canonical(const char *path, long long epoch, size_t *len,
    char *err, size_t errlen);
/* tenant (NULL: none) is written into the policy as its "tenant": a
 * compile input like the epoch, never a profile key. */
char *policy_profile_canonical_cat(const char *path, long long epoch,
    const struct catalog *cat, const char *tenant, size_t *len, char *err,
    size_t errlen);

void policy_free(struct policy *p);

/* Canonical bytes: keys sorted, no whitespace, allow sorted by (host, port)
 * and deduplicated. Owned by the policy, NUL-terminated. */
const char *policy_canonical(const struct policy *p, size_t *len);

/* "sha256:" + hex SHA-256 of the canonical bytes, NUL-terminated. */
const char *policy_digest(const struct policy *p);
/* The digest policy_digest gives for the policy whose canonical bytes
 * these are, without parsing them: "sha256:" and 64 hex digits into out
 * (POLICY_DIGEST_LEN + 1 bytes). -1 if hashing fails. */
int policy_digest_bytes(const void *canon, size_t len, char *out);

enum policy_mode policy_mode(const struct policy *p);
const char *policy_mode_name(enum policy_mode m);
long long policy_epoch(const struct policy *p);
size_t policy_entries(const struct policy *p);

/* The profile's required_egress_certification ("advisory_filter" or
 * "security_boundary"; the parser refuses "unsupported"), or NULL when the
 * profile had none or the policy was parsed from compiled bytes. Used by
 * `admit`; not part of the canonical bytes. */
const char *policy_required_grade(const struct policy *p);

/* The tenant the policy names ("tenant": the sandbox of a multi-tenant
 * guard it is for), NUL-terminated, or NULL when it names none. Part of
 * the canonical bytes, so of the digest and the signature. */
const char *policy_tenant(const struct policy *p);

/* 1 when the len bytes at s are a tenant id: 1-POLICY_TENANT_MAX bytes
 * of [a-z0-9-], the first [a-z0-9]; 0 otherwise. The one grammar check
 * (policy/tspec.c's tspec_id_ok calls it). Locale-free. */
int policy_tenant_id_ok(const char *s, size_t len);

/* Returns 1 when (host, port) is admitted, 0 otherwise. host must already
 * be normalised by dest_parse_*. Constant expected cost: a hash-set lookup
 * whose cost does not grow with the number of entries. Mode none admits
 * nothing; mode unrestricted admits everything (classification still
 * applies). */
int policy_admits(const struct policy *p, const char *host, uint16_t port);

/* Provenance: which part of the profile granted an entry. 0 is the
 * profile's own allowed_hosts; 1 + i the package managers of ecosystem i
 * (policy/catalog.h). */
#define POLICY_VIA_PROFILE	0

/* "profile" or "package_managers:ECOSYSTEM" ("invalid" beyond). */
const char *policy_via_name(unsigned via);

/* The provenance of (host, port) when an allowlist lists it, else -1:
 * for `check`, never for a decision (policy_admits decides). */
int policy_admits_via(const struct policy *p, const char *host, uint16_t port);

/* Entry i (< policy_entries) in canonical order: its host (hlen bytes,
 * not NUL-terminated), port and provenance. */
void policy_entry_get(const struct policy *p, size_t i, const char **host,
    size_t *hlen, uint16_t *port, unsigned *via);

/* Entry i of a against entry j of b in canonical order (host bytes, a
 * prefix first, then port): <0, 0, >0. For a merge walk over two
 * policies (egress-guardctl diff). */
int policy_entry_compare(const struct policy *a, size_t i,
    const struct policy *b, size_t j);

/* The catalog a policy's package managers came from: its version and
 * digest, or NULL for both when the policy records none. */
const char *policy_catalog_version(const struct policy *p);
const char *policy_catalog_digest(const struct policy *p);

/* Returns 1 when the policy admits host (normalised, a name) on any port,
 * 0 otherwise: what the DNS listener (guard/dnsd.c) answers for. Mode none
 * admits nothing, unrestricted everything. O(log entries). */
int policy_admits_name(const struct policy *p, const char *host);

#endif
