/* The package-manager catalog (docs/design.md "Catalog"): which exact
 * host:port entries each ecosystem's public registries are, at a version
 * and a digest. A profile's allow_package_managers is expanded from it at
 * compile time, and the compiled policy records the catalog's version and
 * digest, so a new catalog is a new policy, never a silent widening.
 * Library code: pure parser, errors into a buffer. */
#ifndef EG_CATALOG_H
#define EG_CATALOG_H

#include <stddef.h>

#include "policy/dest.h"

#define CATALOG_SCHEMA		"egress-guard.catalog.v1"
#define CATALOG_MAX_BYTES	(1u << 20)
#define CATALOG_MAX_HOSTS	256	/* entries an ecosystem lists at most */
#define CATALOG_VERSION_MAX	64	/* [A-Za-z0-9._-], no escaping needed */

/* The closed list of ecosystems, sorted by name. An entry a catalog
 * granted carries index + 1 as its provenance (0 is "profile"), so the
 * order is part of no byte format: only the names are. */
#define CATALOG_NECOSYSTEMS	8

/* The name of ecosystem i, NULL beyond the list. */
const char *catalog_ecosystem_name(unsigned i);
/* The index of the len bytes at s in the list, or -1. */
int catalog_ecosystem_index(const char *s, size_t len);
/* "apt, cargo, …": the list for a message. */
const char *catalog_ecosystem_list(void);

/* 1 when the len bytes at s are a version as a catalog and a compiled
 * policy spell it: 1-CATALOG_VERSION_MAX bytes of [A-Za-z0-9._-]. */
int catalog_version_ok(const char *s, size_t len);

struct catalog;

/* Parses a catalog (JSON bytes): {"ecosystems":{NAME:["host:port",…],…},
 * "schema":CATALOG_SCHEMA,"version":V}. Strict: unknown or duplicate keys,
 * an ecosystem not in the closed list, an empty one, a wildcard or bad
 * entry, an entry listed twice (in one ecosystem or two) are refused with
 * the entry named. NULL with err. */
struct catalog *catalog_parse(const char *buf, size_t len, char *err,
    size_t errlen);
/* The same from a file (at most CATALOG_MAX_BYTES); err starts with the
 * path. */
struct catalog *catalog_load_file(const char *path, char *err, size_t errlen);
void catalog_free(struct catalog *c);

const char *catalog_version(const struct catalog *c);
/* "sha256:" and the hex SHA-256 of the canonical bytes: keys sorted, no
 * whitespace, each ecosystem's entries normalised ("host:port", IPv6 in
 * brackets) and sorted as a policy sorts them. */
const char *catalog_digest(const struct catalog *c);
const char *catalog_canonical(const struct catalog *c, size_t *len);

/* The entries of ecosystem eco (normalised), *out pointing into c; 0 when
 * the catalog does not list it. */
size_t catalog_hosts(const struct catalog *c, unsigned eco,
    const struct dest **out);

#endif
