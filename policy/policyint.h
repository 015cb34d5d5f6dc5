/* What the three files of the policy module share (policy/policy.c the
 * model, builder and matcher; policy/parse.c compiled policies;
 * policy/profile.c profiles). Internal to policy/: callers use
 * policy/policy.h. */
#ifndef EG_POLICYINT_H
#define EG_POLICYINT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/catalog.h"
#include "policy/dest.h"
#include "policy/policy.h"

/* 8 bytes: a million of them stay small and cache-friendly. A host is
 * at most DEST_HOST_MAX (253) bytes, so its length fits a byte and the
 * entry's provenance takes the other. */
struct policy_entry {
	uint32_t	 off;		/* the host: hlen bytes at names + off */
	uint8_t		 hlen;
	uint8_t		 via;		/* POLICY_VIA_PROFILE, or ecosystem + 1 */
	uint16_t	 port;
};
_Static_assert(DEST_HOST_MAX <= UINT8_MAX, "a host's length fits hlen");
_Static_assert(CATALOG_NECOSYSTEMS < UINT8_MAX, "a provenance fits via");
_Static_assert(sizeof(struct policy_entry) == 8, "an entry is 8 bytes");

/* What a builder makes: the whole policy, or only its canonical bytes for
 * the plane's compile and sign, which write them out and never match:
 * the digest and the matcher (a hash set as large as the policy) would be
 * thrown away. A canonical-only policy never leaves the policy module. */
enum policy_build {
	POLICY_BUILD_ALL,
	POLICY_BUILD_CANONICAL
};

/* A JSON string's bytes, wherever they live; s is NULL for a value that
 * is not a string. */
struct policy_span {
	const char	*s;
	size_t		 len;
};

struct policy_slot {
	uint32_t	 tag;		/* high half of the hash */
	uint32_t	 idx;		/* entry index + 1; 0 is an empty slot */
};

struct policy {
	enum policy_build	 build;
	enum policy_mode	 mode;
	long long		 epoch;
	const char		*grade;		/* static string or NULL */
	/* The catalog the package managers were expanded from; version
	 * "" when none was. Part of the canonical bytes. */
	char			 cat_version[CATALOG_VERSION_MAX + 1];
	char			 cat_digest[POLICY_DIGEST_LEN + 1];
	/* The tenant it is for; "" when none. Part of the canonical
	 * bytes. */
	char			 tenant[POLICY_TENANT_MAX + 1];

	char			*arena;
	size_t			 arena_len;
	size_t			 arena_cap;
	const char		*names;		/* the arena or canon, once final */
	struct policy_entry	*ent;
	size_t			 n;
	size_t			 cap;

	struct policy_slot	*slots;
	size_t			 mask;
	uint64_t		 k0, k1;

	char			*canon;
	size_t			 canon_len;
	char			*canon_mem;	/* the block canon is in: freed with p */
	char			 digest[POLICY_DIGEST_LEN + 1];
};

/* ---- the builder (policy/policy.c) ---- */

/* Room for cap entries; the arena for their names comes with the first.
 * NULL when out of memory. */
struct policy *policy_new(enum policy_mode mode, long long epoch, size_t cap,
    enum policy_build b);
/* Appends a normalised destination (cap was sized by the caller) with
 * its provenance: 0, or -1 when full or out of memory. */
int policy_add_entry(struct policy *p, const struct dest *d, unsigned via);
/* Records the catalog (version checked by catalog.c or the caller, digest
 * "sha256:" and 64 hex). */
void policy_set_catalog(struct policy *p, const char *version, size_t vlen,
    const char *digest);
/* Records the tenant v (a JSON string's bytes); 0, or -1 with err when
 * v is no string or no tenant id (policy_tenant_id_ok). p NULL: v is
 * only checked. */
int policy_set_tenant(struct policy *p, struct policy_span v, char *err,
    size_t errlen);
/* A provenance as written in a compiled policy's "via": "profile" or
 * "package_managers:ECOSYSTEM". Its code, or -1. */
int policy_via_parse(struct policy_span v);
/* 0, or -1 with err: an entry a catalog granted in a policy that records
 * no catalog. */
int policy_check_vias(const struct policy *p, char *err, size_t errlen);
/* By host bytes (unsigned, a prefix first, as strcmp orders them), then
 * port: <0, 0, >0. */
int policy_entry_order(const char *names, const struct policy_entry *x,
    const struct policy_entry *y);
/* The digest of the canonical bytes, and the matcher. After this the
 * policy is immutable. 0, or -1 with err. */
int policy_seal(struct policy *p, char *err, size_t errlen);
/* Sorts, deduplicates, writes the canonical bytes, then seals. 0, or -1
 * with err. */
int policy_finish(struct policy *p, char *err, size_t errlen);
/* p's canonical bytes after reserve free bytes, in the block they are in
 * when it has that room before them (no copy), and p freed. NULL with err
 * when out of memory. */
char *policy_hand_canonical(struct policy *p, size_t reserve, size_t *len,
    char *err, size_t errlen);

/* ---- JSON pieces both parsers use (policy/parse.c) ---- */

struct policy_span policy_json_span(const json_t *v);
/* 1 when sp holds exactly lit. */
int policy_span_is(struct policy_span sp, const char *lit);
/* The index of v in the NULL-terminated names, or -1. */
int policy_one_of(struct policy_span v, const char *const *names);
/* "none", "allowlist", "unrestricted": 0 with *m, or -1. */
int policy_parse_mode(struct policy_span v, enum policy_mode *m);
/* A JSON object of at most POLICY_MAX_BYTES, no duplicate key: a new
 * reference, or NULL with err. */
json_t *policy_load_json(const char *buf, size_t len, char *err,
    size_t errlen);

#endif
