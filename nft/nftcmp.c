/* verify's comparison (nft/nftcmp.h): chains by type, hook, priority and
 * policy, rules expression by expression, attribute by attribute. The
 * reference is nftrules_expected(), the same objects apply sends. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "nft/nftcmp.h"
#include "nft/nftfmt.h"
#include "nft/nftrules.h"
#include "nft/nftx.h"
#include "util/errbuf.h"


/* Attribute-by-attribute: every attribute one side has set, the other must
 * have with the same bytes. Counter values are state, not ruleset. */
static int
expr_equal(const struct nftnl_expr *a, const struct nftnl_expr *b)
{
	const char *na = nftnl_expr_get_str(a, NFTNL_EXPR_NAME);
	const char *nb = nftnl_expr_get_str(b, NFTNL_EXPR_NAME);
	const void *da, *db;
	uint32_t la, lb;
	uint16_t t;
	int counter;

	if (na == NULL || nb == NULL || strcmp(na, nb) != 0)
		return 0;
	counter = strcmp(na, "counter") == 0;
	/* libnftnl keeps attribute presence in a 32-bit mask. */
	for (t = NFTNL_EXPR_BASE; t < 32; t++) {
		if (counter && (t == NFTNL_EXPR_CTR_PACKETS ||
		    t == NFTNL_EXPR_CTR_BYTES))
			continue;
		if (nftnl_expr_is_set(a, t) != nftnl_expr_is_set(b, t))
			return 0;
		if (!nftnl_expr_is_set(a, t))
			continue;
		la = lb = 0;
		da = nftnl_expr_get(a, t, &la);
		db = nftnl_expr_get(b, t, &lb);
		if ((da == NULL) != (db == NULL) || la != lb ||
		    (da != NULL && la > 0 && memcmp(da, db, la) != 0))
			return 0;
	}
	return 1;
}

static int
rule_equal(const struct nftnl_rule *a, const struct nftnl_rule *b)
{
	struct nftnl_expr_iter *ia, *ib;
	const struct nftnl_expr *ea, *eb;
	int eq = 0;

	ia = nftnl_expr_iter_create(a);
	ib = nftnl_expr_iter_create(b);
	if (ia == NULL || ib == NULL)
		goto out;
	for (;;) {
		ea = nftnl_expr_iter_next(ia);
		eb = nftnl_expr_iter_next(ib);
		if (ea == NULL || eb == NULL) {
			eq = ea == NULL && eb == NULL;
			break;
		}
		if (!expr_equal(ea, eb))
			break;
	}
out:
	if (ia != NULL)
		nftnl_expr_iter_destroy(ia);
	if (ib != NULL)
		nftnl_expr_iter_destroy(ib);
	return eq;
}

/* The differences found, one per line; past the buffer's end only a
 * "..." line says more were found. */
struct dw {
	char		*buf;
	size_t		 len;
	size_t		 off;
	unsigned int	 n;
};

static void dw_line(struct dw *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
dw_line(struct dw *d, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	d->n++;
	if (d->buf == NULL || d->len == 0 || d->off == SIZE_MAX)
		return;
	n = strlen(line);
	if (d->off + n + 2 > d->len) {
		if (d->off + 5 <= d->len)
			memcpy(d->buf + d->off, "...\n", 5);
		d->off = SIZE_MAX;	/* truncated: nothing more */
		return;
	}
	memcpy(d->buf + d->off, line, n);
	d->buf[d->off + n] = '\n';
	d->buf[d->off + n + 1] = '\0';
	d->off += n + 1;
}

/* The rules of a chain as an array, kernel order. -1 on allocation failure. */
static int
rule_array(const struct nftnl_chain *c, const struct nftnl_rule ***out,
    size_t *n)
{
	struct nftnl_rule_iter *it;
	const struct nftnl_rule **a = NULL, **na;
	const struct nftnl_rule *r;
	size_t cap = 0;

	*n = 0;
	*out = NULL;
	if ((it = nftnl_rule_iter_create(c)) == NULL)
		return -1;
	while ((r = nftnl_rule_iter_next(it)) != NULL) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((na = realloc(a, cap * sizeof(*a))) == NULL) {
				free(a);
				nftnl_rule_iter_destroy(it);
				return -1;
			}
			a = na;
		}
		a[(*n)++] = r;
	}
	nftnl_rule_iter_destroy(it);
	*out = a;
	return 0;
}

static int
find_rule(const struct nftnl_rule **v, size_t from, size_t n,
    const struct nftnl_rule *r, size_t *at)
{
	size_t i;

	for (i = from; i < n; i++) {
		if (rule_equal(v[i], r)) {
			*at = i;
			return 1;
		}
	}
	return 0;
}

/* Walks both rule lists; a rule is "unexpected" when the wanted one appears
 * further on, "missing" when the present one is wanted further on, and
 * "differs" otherwise. Positions are the kernel's, 1-based. */
static int
compare_rules(struct dw *d, const char *chain, const struct nftnl_chain *want,
    const struct nftnl_chain *have)
{
	const struct nftnl_rule **w = NULL, **h = NULL;
	size_t nw, nh, i = 0, j = 0, k;
	char ta[384], tb[384];
	int rc = -1;

	if (rule_array(want, &w, &nw) == -1 || rule_array(have, &h, &nh) == -1)
		goto out;
	while (i < nw || j < nh) {
		if (i < nw && j < nh && rule_equal(w[i], h[j])) {
			i++;
			j++;
		} else if (i == nw || (j < nh &&
		    find_rule(h, j + 1, nh, w[i], &k))) {
			for (k = i == nw ? nh : k; j < k; j++) {
				nftfmt_rule(h[j], ta, sizeof(ta));
				dw_line(d, "%s: unexpected rule #%zu (%s)",
				    chain, j + 1, ta);
			}
		} else if (j == nh || find_rule(w, i + 1, nw, h[j], &k)) {
			nftfmt_rule(w[i], tb, sizeof(tb));
			dw_line(d, "%s: missing rule (%s) at #%zu", chain, tb,
			    j + 1);
			i++;
		} else {
			nftfmt_rule(h[j], ta, sizeof(ta));
			nftfmt_rule(w[i], tb, sizeof(tb));
			dw_line(d, "%s: rule #%zu is (%s), expected (%s)",
			    chain, j + 1, ta, tb);
			i++;
			j++;
		}
	}
	rc = 0;
out:
	free(w);
	free(h);
	return rc;
}

static int
compare_chain(struct dw *d, const struct nftnl_chain *want,
    const struct nftnl_chain *have)
{
	const char *name = nftnl_chain_get_str(want, NFTNL_CHAIN_NAME);
	const char *wt = nftnl_chain_get_str(want, NFTNL_CHAIN_TYPE);
	const char *ht = nftnl_chain_get_str(have, NFTNL_CHAIN_TYPE);
	uint32_t wh, hh, wp, hp;
	int32_t wprio, hprio;
	char safe[80];

	if (!nftnl_chain_is_set(have, NFTNL_CHAIN_HOOKNUM)) {
		dw_line(d, "%s: not a base chain, expected type %s hook %s",
		    name, wt, nftfmt_hook(nftnl_chain_get_u32(want,
		    NFTNL_CHAIN_HOOKNUM)));
	} else {
		if (ht == NULL || strcmp(wt, ht) != 0) {
			nftfmt_safe(ht != NULL ? ht : "none", safe, sizeof(safe));
			dw_line(d, "%s: type %s, expected %s", name, safe, wt);
		}
		wh = nftnl_chain_get_u32(want, NFTNL_CHAIN_HOOKNUM);
		hh = nftnl_chain_get_u32(have, NFTNL_CHAIN_HOOKNUM);
		if (wh != hh)
			dw_line(d, "%s: hook %s, expected %s", name,
			    nftfmt_hook(hh), nftfmt_hook(wh));
		wprio = nftnl_chain_get_s32(want, NFTNL_CHAIN_PRIO);
		hprio = nftnl_chain_get_s32(have, NFTNL_CHAIN_PRIO);
		if (wprio != hprio)
			dw_line(d, "%s: priority %d, expected %d", name,
			    (int)hprio, (int)wprio);
		wp = nftnl_chain_get_u32(want, NFTNL_CHAIN_POLICY);
		hp = nftnl_chain_is_set(have, NFTNL_CHAIN_POLICY) ?
		    nftnl_chain_get_u32(have, NFTNL_CHAIN_POLICY) : NF_ACCEPT;
		if (wp != hp)
			dw_line(d, "%s: policy %s, expected %s", name,
			    nftfmt_policy(hp), nftfmt_policy(wp));
	}
	return compare_rules(d, name, want, have);
}

static const struct nftnl_chain *
find_chain(const struct nftnl_chain_list *l, const char *name)
{
	struct nftnl_chain_list_iter *it;
	const struct nftnl_chain *c;
	const char *n;

	if (l == NULL || (it = nftnl_chain_list_iter_create(l)) == NULL)
		return NULL;
	while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
		n = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if (n != NULL && strcmp(n, name) == 0)
			break;
	}
	nftnl_chain_list_iter_destroy(it);
	return c;
}

/* An element key as nft writes it, by the set's key type: ifname,
 * ipv4_addr, ipv6_addr, inet_proto and inet_service fields (each padded
 * to 4 bytes), joined by " . "; anything else in hex. */
static void
elem_text(uint32_t type, const unsigned char *k, uint32_t len, char *buf,
    size_t blen)
{
	uint32_t f[4], nf = 0, off = 0, i, fl;
	char a[64];
	size_t o = 0;

	buf[0] = '\0';
	while (type != 0 && nf < 4) {
		f[nf++] = type & ((1u << NFTX_T_BITS) - 1);
		type >>= NFTX_T_BITS;
	}
	for (i = 0; i < nf; i++) {
		uint32_t t = f[nf - 1 - i];

		fl = t == NFTX_T_IFNAME || t == NFTX_T_IP6ADDR ? 16 :
		    t == NFTX_T_IPADDR || t == NFTX_T_INET_PROTO ||
		    t == NFTX_T_INET_SERVICE ? 4 : 0;
		if (fl == 0 || off + fl > len)
			goto hex;
		if (t == NFTX_T_IFNAME)
			nftfmt_safe(strndupa((const char *)k + off, 16), a, sizeof(a));
		else if (t == NFTX_T_IPADDR || t == NFTX_T_IP6ADDR)
			inet_ntop(t == NFTX_T_IPADDR ? AF_INET : AF_INET6, k + off,
			    a, sizeof(a));
		else if (t == NFTX_T_INET_PROTO)
			snprintf(a, sizeof(a), "%s", k[off] == IPPROTO_TCP ? "tcp" :
			    k[off] == IPPROTO_UDP ? "udp" : "?");
		else
			snprintf(a, sizeof(a), "%u", (unsigned int)(k[off] << 8 |
			    k[off + 1]));
		o += (size_t)snprintf(buf + o, o < blen ? blen - o : 0, "%s%s%s",
		    i > 0 ? " . " : "", t == NFTX_T_IFNAME ? "\"" : "", a);
		if (t == NFTX_T_IFNAME && o + 1 < blen)
			buf[o++] = '"', buf[o] = '\0';
		off += fl;
		if (o >= blen)
			return;
	}
	if (off == len && nf > 0)
		return;
hex:
	for (o = 0, i = 0; i < len && o + 3 < blen; i++)
		o += (size_t)snprintf(buf + o, blen - o, "%02x", k[i]);
}

/* An element: its key and, in a map, its data. */
struct key {
	const unsigned char	*p, *d;
	uint32_t		 len, dlen;
};

static int
bytes_cmp(const unsigned char *a, uint32_t la, const unsigned char *b,
    uint32_t lb)
{
	if (la != lb)
		return la < lb ? -1 : 1;
	return la == 0 ? 0 : memcmp(a, b, la);
}

static int
key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = bytes_cmp(x->p, x->len, y->p, y->len);

	return c != 0 ? c : bytes_cmp(x->d, x->dlen, y->d, y->dlen);
}

/* An element as nft writes it: the key, and " : data" in a map. */
static void
elem_full(uint32_t type, uint32_t dtype, const struct key *k, char *buf,
    size_t blen)
{
	size_t o;

	elem_text(type, k->p, k->len, buf, blen);
	o = strlen(buf);
	if (k->d != NULL && k->dlen > 0 && o + 4 < blen) {
		memcpy(buf + o, " : ", 4);
		elem_text(dtype, k->d, k->dlen, buf + o + 3, blen - o - 3);
	}
}

/* The set's element keys, sorted. -1 on allocation failure. */
static int
key_array(const struct nftnl_set *st, struct key **out, size_t *n)
{
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;
	struct key *a = NULL, *na;
	size_t cap = 0;

	*n = 0;
	*out = NULL;
	if ((it = nftnl_set_elems_iter_create(st)) == NULL)
		return -1;
	while ((e = nftnl_set_elems_iter_next(it)) != NULL) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((na = realloc(a, cap * sizeof(*a))) == NULL) {
				free(a);
				nftnl_set_elems_iter_destroy(it);
				return -1;
			}
			a = na;
		}
		a[*n].len = a[*n].dlen = 0;
		a[*n].p = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &a[*n].len);
		if (a[*n].p == NULL)
			a[*n].len = 0;
		a[*n].d = NULL;
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_DATA))
			a[*n].d = nftnl_set_elem_get(e, NFTNL_SET_ELEM_DATA,
			    &a[*n].dlen);
		if (a[*n].d == NULL)
			a[*n].dlen = 0;
		(*n)++;
	}
	nftnl_set_elems_iter_destroy(it);
	if (*n > 0)
		qsort(a, *n, sizeof(*a), key_cmp);
	*out = a;
	return 0;
}

static uint32_t
set_u32(const struct nftnl_set *st, uint16_t attr)
{
	return nftnl_set_is_set(st, attr) ? nftnl_set_get_u32(st, attr) : 0;
}

/* A set's key type, length and flags, and its elements as sets of keys:
 * one line per missing and per unexpected element. */
static int
compare_set(struct dw *d, const struct nftnl_set *want,
    const struct nftnl_set *have)
{
	const char *name = nftnl_set_get_str(want, NFTNL_SET_NAME);
	struct key *w = NULL, *h = NULL;
	size_t nw, nh, i = 0, j = 0;
	uint32_t type = set_u32(want, NFTNL_SET_KEY_TYPE);
	uint32_t dtype = set_u32(want, NFTNL_SET_DATA_TYPE);
	char text[160];
	int c, rc = -1;

	if (set_u32(have, NFTNL_SET_KEY_TYPE) != type ||
	    set_u32(have, NFTNL_SET_KEY_LEN) != set_u32(want, NFTNL_SET_KEY_LEN))
		dw_line(d, "set %s: key type 0x%x length %u, expected 0x%x "
		    "length %u", name, set_u32(have, NFTNL_SET_KEY_TYPE),
		    set_u32(have, NFTNL_SET_KEY_LEN), type,
		    set_u32(want, NFTNL_SET_KEY_LEN));
	if (set_u32(have, NFTNL_SET_DATA_TYPE) != dtype ||
	    set_u32(have, NFTNL_SET_DATA_LEN) != set_u32(want, NFTNL_SET_DATA_LEN))
		dw_line(d, "set %s: data type 0x%x length %u, expected 0x%x "
		    "length %u", name, set_u32(have, NFTNL_SET_DATA_TYPE),
		    set_u32(have, NFTNL_SET_DATA_LEN), dtype,
		    set_u32(want, NFTNL_SET_DATA_LEN));
	if (set_u32(have, NFTNL_SET_FLAGS) != set_u32(want, NFTNL_SET_FLAGS))
		dw_line(d, "set %s: flags 0x%x, expected 0x%x", name,
		    set_u32(have, NFTNL_SET_FLAGS), set_u32(want, NFTNL_SET_FLAGS));
	if (key_array(want, &w, &nw) == -1 || key_array(have, &h, &nh) == -1)
		goto out;
	while (i < nw || j < nh) {
		c = i == nw ? 1 : j == nh ? -1 : key_cmp(&w[i], &h[j]);
		if (c == 0) {
			i++;
			j++;
		} else if (c < 0) {
			elem_full(type, dtype, &w[i], text, sizeof(text));
			dw_line(d, "set %s: missing element %s", name, text);
			i++;
		} else {
			elem_full(type, dtype, &h[j], text, sizeof(text));
			dw_line(d, "set %s: unexpected element %s", name, text);
			j++;
		}
	}
	rc = 0;
out:
	free(w);
	free(h);
	return rc;
}

static const struct nftnl_set *
find_set(const struct nftnl_set_list *l, const char *name)
{
	struct nftnl_set_list_iter *it;
	const struct nftnl_set *st;
	const char *n;

	if (l == NULL || (it = nftnl_set_list_iter_create(l)) == NULL)
		return NULL;
	while ((st = nftnl_set_list_iter_next(it)) != NULL) {
		n = nftnl_set_get_str(st, NFTNL_SET_NAME);
		if (n != NULL && strcmp(n, name) == 0)
			break;
	}
	nftnl_set_list_iter_destroy(it);
	return st;
}

/* Wanted sets against present ones; *nhave counts the present. */
static int
compare_sets(struct dw *d, const struct nftnl_set_list *want,
    const struct nftnl_set_list *have, uint32_t *nhave)
{
	struct nftnl_set_list_iter *it;
	const struct nftnl_set *st, *h;
	const char *name;
	char safe[80];
	int rc = 0;

	*nhave = 0;
	if (want != NULL) {
		if ((it = nftnl_set_list_iter_create(want)) == NULL)
			return -1;
		while (rc == 0 && (st = nftnl_set_list_iter_next(it)) != NULL) {
			name = nftnl_set_get_str(st, NFTNL_SET_NAME);
			if ((h = find_set(have, name)) == NULL)
				dw_line(d, "set %s: missing", name);
			else
				rc = compare_set(d, st, h);
		}
		nftnl_set_list_iter_destroy(it);
	}
	if (rc == 0 && have != NULL) {
		if ((it = nftnl_set_list_iter_create(have)) == NULL)
			return -1;
		while ((st = nftnl_set_list_iter_next(it)) != NULL) {
			(*nhave)++;
			name = nftnl_set_get_str(st, NFTNL_SET_NAME);
			if (name == NULL || find_set(want, name) == NULL) {
				nftfmt_safe(name != NULL ? name : "?", safe,
				    sizeof(safe));
				dw_line(d, "unexpected set %s", safe);
			}
		}
		nftnl_set_list_iter_destroy(it);
	}
	return rc;
}

int
nftcmp_compare_table(const char *label,
    const struct nftnl_chain_list *want, const struct nftnl_set_list *wsets,
    const struct nftnl_table *table, const struct nftnl_chain_list *chains,
    const struct nftnl_set_list *sets, char *diff, size_t difflen,
    char *err, size_t errlen)
{
	struct dw d = { diff, difflen, 0, 0 };
	struct nftnl_chain_list_iter *it = NULL;
	const struct nftnl_chain *c, *h;
	const char *name;
	char text[256];
	uint32_t flags, use, nhave = 0, nsets = 0;
	int rc = -1;

	if (diff != NULL && difflen > 0)
		diff[0] = '\0';
	if (table == NULL) {
		dw_line(&d, "%s: missing", label);
		return 1;
	}
	flags = nftnl_table_is_set(table, NFTNL_TABLE_FLAGS) ?
	    nftnl_table_get_u32(table, NFTNL_TABLE_FLAGS) : 0;
	if (flags != 0)
		dw_line(&d, "%s: flags 0x%x%s, expected none", label, flags,
		    (flags & NFT_TABLE_F_DORMANT) ?
		    " (dormant: its chains see no packets)" : "");
	if ((it = nftnl_chain_list_iter_create(want)) == NULL)
		goto out;
	while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
		name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
		if ((h = find_chain(chains, name)) == NULL)
			dw_line(&d, "%s: chain missing", name);
		else if (compare_chain(&d, c, h) == -1)
			goto out;
	}
	nftnl_chain_list_iter_destroy(it);
	it = NULL;
	if (chains != NULL) {
		if ((it = nftnl_chain_list_iter_create(chains)) == NULL)
			goto out;
		while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
			nhave++;
			name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
			if (name == NULL || find_chain(want, name) == NULL) {
				nftfmt_chain(c, text, sizeof(text));
				dw_line(&d, "unexpected chain %s", text);
			}
		}
	}
	if ((wsets != NULL || sets != NULL) &&
	    compare_sets(&d, wsets, sets, &nsets) == -1)
		goto out;
	/* The kernel counts every object of the table in its use: chains,
	 * sets and maps (anonymous ones too), stateful objects, flowtables.
	 * Anything beside what apply makes is a difference, whatever it
	 * holds and whether or not a rule refers to it. */
	use = nftnl_table_is_set(table, NFTNL_TABLE_USE) ?
	    nftnl_table_get_u32(table, NFTNL_TABLE_USE) : nhave + nsets;
	if (use > nhave + nsets && wsets == NULL)
		dw_line(&d, "%s: %u objects beside its %u chains (sets, maps, "
		    "stateful objects or flowtables), expected none", label,
		    use - nhave, nhave);
	else if (use > nhave + nsets)
		dw_line(&d, "%s: %u objects beside its %u chains and %u sets "
		    "(anonymous sets, maps, stateful objects or flowtables), "
		    "expected none", label, use - nhave - nsets, nhave, nsets);
	rc = d.n > 0 ? 1 : 0;
out:
	if (rc == -1)
		errbuf_fail(err, errlen, "out of memory comparing the ruleset");
	if (it != NULL)
		nftnl_chain_list_iter_destroy(it);
	return rc;
}

int
nftcmp_compare(const struct nftcfg *cfg,
    const struct nftnl_table *table, const struct nftnl_chain_list *chains,
    char *diff, size_t difflen, char *err, size_t errlen)
{
	struct nftnl_chain_list *want;
	int rc;

	if ((want = nftrules_expected(cfg, err, errlen)) == NULL)
		return -1;
	rc = nftcmp_compare_table("table inet " NFTCFG_TABLE, want, NULL, table,
	    chains, NULL, diff, difflen, err, errlen);
	nftnl_chain_list_free(want);
	return rc;
}
