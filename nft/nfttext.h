/* The tenants' table in plain form, below its netlink side
 * (nft/nfttenant.h): which sets and maps it has, their elements built from
 * a tenant list (policy/tspec.h) as the kernel keeps them, and the whole
 * table as `nft -f` reads it (what `nft tenants --dry-run` prints). Pure:
 * no libnftnl objects, no sockets. */
#ifndef EG_NFTTEXT_H
#define EG_NFTTEXT_H

#include <stddef.h>
#include <stdint.h>

#define NFTTEXT_TABLE	"egress_guard_tenants"
#define NFTTEXT_NSETS	10
#define NFTTEXT_IFN	16	/* ifname: IFNAMSIZ bytes, NUL padded */

struct tspec;

/* The sets, in the table's order (nfttext_sets[]). */
enum { NFTTEXT_LINKS, NFTTEXT_LINKS6, NFTTEXT_PEERS4, NFTTEXT_PEERS6,
	NFTTEXT_LISTEN4, NFTTEXT_LISTEN6, NFTTEXT_OWN4, NFTTEXT_OWN6,
	NFTTEXT_TPROXY4, NFTTEXT_TPROXY6 };

/* A set, or a map when data_len is not 0. Key layouts are nft's own, so
 * `nft list` reads them back: ifname 16 bytes, ipv4_addr 4, ipv6_addr 16,
 * inet_proto 1 and inet_service 2 (network order), each field padded to
 * 4 bytes. Types are nft's (NFTX_T_*, nft/nftx.h). */
struct nfttext_setdef {
	const char	*name;
	const char	*type;		/* as nft writes it */
	uint32_t	 key_type;
	uint32_t	 key_len;
	uint32_t	 data_type;
	uint32_t	 data_len;
};

extern const struct nfttext_setdef nfttext_sets[NFTTEXT_NSETS];

/* The elements of every set, one after another, key_len + data_len bytes
 * each: the key, then a map's data. */
struct nfttext_keys {
	unsigned char	*k[NFTTEXT_NSETS];
	size_t		 n[NFTTEXT_NSETS];
};

/* The elements of the n tenants of v (at most TSPEC_MAX). 0, or -1 with
 * err (nothing to free). */
int nfttext_keys_build(const struct tspec *v, size_t n,
    struct nfttext_keys *k, char *err, size_t errlen);
void nfttext_keys_free(struct nfttext_keys *k);
/* Element i of set s. */
const unsigned char *nfttext_key(const struct nfttext_keys *k, int s,
    size_t i);

/* The table as `nft -f` reads it: malloc'd, NUL-terminated; NULL on
 * ENOMEM or a list over TSPEC_MAX. */
char *nfttext_table(const struct tspec *v, size_t n);

#endif
