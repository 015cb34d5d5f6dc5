/* What the nft subcommands say to the operator (nft/nftcli.h): the one
 * line format, arguments echoed safely, the kernel's errors explained,
 * and the reports that need no options: the other base chains, a chain
 * with its rules. With nftcmd.c, the only part of nft/ that prints. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>

#include <libnftnl/chain.h>
#include <libnftnl/rule.h>

#include "nft/nftcli.h"
#include "nft/nftfmt.h"
#include "nft/nftsock.h"

#define OTHER_CHAINS_MAX	256

void
nftcli_say(FILE *f, const char *verb, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "egress-guard nft %s: ", verb);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

/* An operator's argument echoed back, printable ASCII only and bounded. */
const char *
nftcli_shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 4 < len; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (s[i] != '\0') {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

const char *
nftcli_hint(int e)
{
	if (e == EPERM || e == EACCES)
		return " (needs CAP_NET_ADMIN in the namespace)";
	if (e == EOPNOTSUPP || e == EAFNOSUPPORT || e == EPROTONOSUPPORT)
		return " (kernel lacks nf_tables support for this)";
	return "";
}

/* Value of "--name VALUE" or "--name=VALUE" at argv[*i]; NULL otherwise. */
const char *
nftcli_optval(int argc, char **argv, int *i, const char *name, int *bad)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*bad = 1;
		return NULL;
	}
	return argv[++*i];
}

/* Every other base chain in the namespace, of any family and on any hook,
 * sees packets this table judges, before or after it: an accept there does
 * not undo our drop, but a queue verdict (NF_STOP from userspace), a nat
 * rewrite or a netdev egress/ingress rewrite can, and their owner can
 * delete this table anyway. Reported as warnings: Docker's own nat chains
 * are normal. */
void
nftcli_other_chains(FILE *out, const char *verb, const char *table,
    struct nftsock *s)
{
	struct nftnl_chain_list *cl = NULL;
	struct nftnl_chain_list_iter *it;
	const struct nftnl_chain *c;
	char err[NFTCLI_ERR_MAX], text[512], tab[128];
	const char *t;
	uint32_t f;
	int more, kerr, n = 0;

	if (nftsock_read_base_chains(s, OTHER_CHAINS_MAX, &cl, &more, &kerr,
	    err, sizeof(err)) == -1) {
		nftcli_say(stderr, verb, "warning: cannot list the other base "
		    "chains: %s%s", err, nftcli_hint(kerr));
		return;
	}
	if ((it = nftnl_chain_list_iter_create(cl)) == NULL) {
		nftnl_chain_list_free(cl);
		nftcli_say(stderr, verb, "warning: out of memory listing "
		    "chains");
		return;
	}
	while ((c = nftnl_chain_list_iter_next(it)) != NULL) {
		f = nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
		t = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE);
		if (t == NULL || !nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM) ||
		    (f == NFPROTO_INET && strcmp(t, table) == 0))
			continue;
		nftfmt_safe(t, tab, sizeof(tab));
		nftfmt_chain(c, text, sizeof(text));
		nftcli_say(stderr, verb, "warning: another base chain on the "
		    "%s hook: table %s %s chain %s: it sees the same packets "
		    "and can let through (queue verdicts) or rewrite what this "
		    "table drops", nftfmt_hook_in(f,
		    nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM)),
		    nftfmt_family(f), tab, text);
		n++;
	}
	nftnl_chain_list_iter_destroy(it);
	if (more)
		nftcli_say(stderr, verb, "warning: more than %d base chains; "
		    "only the first were checked", OTHER_CHAINS_MAX);
	if (n == 0)
		nftcli_say(out, verb, "no other base chain in the "
		    "namespace");
	nftnl_chain_list_free(cl);
}

/* The batch did not go through: what the kernel refused, or that the
 * outcome is unknown. */
void
nftcli_refused(const char *verb, const char *what,
    const struct nftsock_error *e, const char *err)
{
	if (e->kernel)
		nftcli_say(stderr, verb, "the kernel refused %s: %s (errno "
		    "%d)%s%s; the transaction was rolled back, nothing "
		    "changed", what, strerror(e->errnum), e->errnum, nftcli_hint(e->errnum),
		    e->nerrors > 1 ? " (and more errors after it)" : "");
	else
		nftcli_say(stderr, verb, "%s; whether the table was replaced "
		    "is unknown: run verify", err);
}

void
nftcli_show_chain(const struct nftnl_chain *c)
{
	struct nftnl_rule_iter *it;
	const struct nftnl_rule *r;
	char line[1024];
	unsigned int n = 1;

	nftfmt_chain(c, line, sizeof(line));
	printf("\tchain %s\n", line);
	if ((it = nftnl_rule_iter_create(c)) == NULL)
		return;
	while ((r = nftnl_rule_iter_next(it)) != NULL) {
		nftfmt_rule(r, line, sizeof(line));
		printf("\t\t#%-3u %s  # handle %llu\n", n++, line,
		    (unsigned long long)nftnl_rule_get_u64(r,
		    NFTNL_RULE_HANDLE));
		if (strstr(line, "meta skuid ") == line)
			printf("\t\t     # uid exemption: " UID_PRECONDITION
			    "\n");
		else if (strstr(line, "socket cgroupv2 ") == line)
			printf("\t\t     # cgroup exemption: no uid change "
			    "leaves it; holds while the workload cannot write "
			    "the cgroup file system\n");
	}
	nftnl_rule_iter_destroy(it);
}
