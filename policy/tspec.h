/* The tenant spec (docs/design.md "Tenant spec"): one sandbox served by a
 * tenant-mode guard, named by its id, identified by its link. Strict JSON
 * in (unknown, duplicate, missing or mistyped keys refused, the key named),
 * one canonical form out. Pure but for tspec_list_load. */
#ifndef EG_TSPEC_H
#define EG_TSPEC_H

#include <stddef.h>
#include <stdint.h>

#define TSPEC_SCHEMA	"egress-guard.tenants.v1"
#define TSPEC_ID_MAX	32
#define TSPEC_LINK_MAX	15		/* IFNAMSIZ - 1 */
#define TSPEC_MAX	4096
#define TSPEC_ADDR_TEXT	46		/* INET6_ADDRSTRLEN */
/* One spec in any spelling; a list file. The canonical spec is under 250
 * bytes, so 4096 of them are ~1 MiB: 8 MiB leaves room for whitespace. */
#define TSPEC_MAX_BYTES		4096
#define TSPEC_LIST_MAX_BYTES	(8u << 20)

struct tspec {
	char	 id[TSPEC_ID_MAX + 1];
	char	 link[TSPEC_LINK_MAX + 1];
	int	 family;			/* AF_INET or AF_INET6 */
	unsigned char addr[16], peer[16];	/* network order; 4 bytes for AF_INET */
	char	 address[TSPEC_ADDR_TEXT], peer_text[TSPEC_ADDR_TEXT]; /* canonical */
	uint16_t port, dns_port, transparent_port;
	unsigned max_conns, max_dns;
};

/* Whether s[0..len) is a tenant id: 1..32 bytes of [a-z0-9-], the first
 * not '-'. 1 ok, 0 not. */
int tspec_id_ok(const char *s, size_t len);

/* Whether s[0..len) is a link name: 1..15 bytes of [A-Za-z0-9_.-], not
 * ".", ".." nor "lo". 1 ok, 0 not. */
int tspec_link_ok(const char *s, size_t len);

/* One spec (a JSON object). 0, or -1 with err naming the key. */
int tspec_parse(const char *buf, size_t len, struct tspec *out, char *err,
    size_t errlen);

/* Canonical bytes of one spec / of a list (sorted by id inside, v is not
 * reordered): malloc'd, NUL-terminated, *len without the NUL (len may be
 * NULL). NULL on ENOMEM. */
char *tspec_canonical(const struct tspec *t, size_t *len);
char *tspec_list_canonical(const struct tspec *v, size_t n, size_t *len);

/* A whole list document, strict; its entries in any order. *out is a
 * malloc'd array (free(); NULL when *n is 0) sorted by id. 0 or -1. */
int tspec_list_parse(const char *buf, size_t len, struct tspec **out,
    size_t *n, char *err, size_t errlen);

/* tspec_list_parse of the file at path, read bounded by
 * TSPEC_LIST_MAX_BYTES; errors start with the path. Blocking: start-up
 * and the CLI only. */
int tspec_list_load(const char *path, struct tspec **out, size_t *n,
    char *err, size_t errlen);

/* 1 when a and b are the same spec, else 0. */
int tspec_equal(const struct tspec *a, const struct tspec *b);

/* The index in v[0..n) of the spec with this id / on this link, or -1. */
long tspec_list_find_id(const struct tspec *v, size_t n, const char *id);
long tspec_list_find_link(const struct tspec *v, size_t n, const char *link);

/* Whether b may join v[0..n): 0, or -1 with err naming the clash (an id
 * already there: the message starts "id "; a link in use: "link "). The
 * TSPEC_MAX limit is the caller's. */
int tspec_list_check_new(const struct tspec *v, size_t n,
    const struct tspec *b, char *err, size_t errlen);

#endif
