/* The nft subcommands: argument parsing, the namespace dance and what the
 * operator reads (printed through nft/nftcli.h). Input is checked
 * completely before any namespace is entered, so bad input changes
 * nothing. */
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include <libnftnl/chain.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "nft/netns.h"
#include "nft/nftcg.h"
#include "nft/nftcli.h"
#include "nft/nftcmd.h"
#include "nft/nftcmp.h"
#include "nft/nftrules.h"
#include "nft/nftsock.h"
#include "nft/nfttenant.h"
#include "nft/nfttransp.h"
#include "policy/tspec.h"

#define EXIT_OK		0
#define EXIT_DIFFERS	1
#define EXIT_ERROR	2
#define ERR_MAX		NFTCLI_ERR_MAX
#define DIFF_MAX	16384

static const char usage_text[] =
    "usage: egress-guard nft apply  --netns NAME|PATH|PID --guard IP:PORT"
    " [--guard IP:PORT]...\n"
    "                              [--exempt-cgroup PATH | --exempt-cgroup-of PID]"
    " [--exempt-uid UID]\n"
    "                              [--transparent IP:PORT]... [--dns-listen IP:PORT]...\n"
    "                              [--transparent-via IP|IFNAME]... [--transparent-dns]\n"
    "       egress-guard nft apply  --netns GUARD_NS --transparent-in IFNAME"
    " --transparent IP:PORT...\n"
    "                              [--dns-listen IP:PORT]... [--guard IP:PORT]...\n"
    "       egress-guard nft verify (the same options as apply)\n"
    "       egress-guard nft show   --netns NAME|PATH|PID\n"
    "       egress-guard nft remove --netns NAME|PATH|PID\n"
    "       egress-guard nft tenants --tenants FILE [--netns NAME|PATH|PID]"
    " [--dry-run]\n"
    "       egress-guard nft tenants-verify --tenants FILE [--netns ...]\n"
    "       egress-guard nft tenants-remove [--netns ...]\n"
    "  --netns   a name from `ip netns add` (/run/netns/NAME), a path to a\n"
    "            namespace file, or a process id (/proc/PID/ns/net)\n"
    "  --guard   the guard's listener, IPv4:PORT or [IPv6]:PORT (repeatable,\n"
    "            at most 64): the only TCP destination the workload keeps\n"
    "  --exempt-cgroup PATH  cgroup v2 folder whose sockets may go anywhere\n"
    "            (the guard's, when it shares the workload's namespace)\n"
    "  --exempt-cgroup-of PID  the cgroup v2 folder process PID is in\n"
    "  --exempt-uid  uid whose sockets may go anywhere; with a cgroup option,\n"
    "            the fallback when cgroup v2 is unavailable. A uid exemption\n"
    "            " UID_PRECONDITION "\n"
    "  --transparent IP:PORT  transparent mode: TCP of every other socket goes\n"
    "            to this listener (one per family; shared layout: 127.0.0.1 or\n"
    "            [::1], needs the exemption; guard side: with --transparent-in)\n"
    "  --dns-listen IP:PORT  UDP/TCP to port 53 goes to this DNS listener\n"
    "  --transparent-via IP|IFNAME  separate layout, workload side: TCP leaves\n"
    "            only via this next hop (the guard) or interface\n"
    "  --transparent-dns  with --transparent-via: UDP to port 53 too\n"
    "  --transparent-in IFNAME  separate layout, guard side: redirect what\n"
    "            arrives on IFNAME to the listeners; forward nothing\n"
    "  --tenants FILE  tenant-mode guard side: the tenant list (the guard's\n"
    "            tenants.json); table inet " NFTTENANT_TABLE " in the GUARD's\n"
    "            namespace (default: this one) drops any source but each\n"
    "            link's peer, lets a link reach only its tenant's own address\n"
    "            and listener ports, and forwards nothing from or to a link\n"
    "  --dry-run the tenants table as `nft -f` reads it; nothing is changed\n"
    "  --help    this text\n"
    "Installs table inet egress_guard in one atomic batch. Needs CAP_NET_ADMIN\n"
    "in the namespace, and CAP_SYS_ADMIN only to enter another namespace (none\n"
    "when --netns names this one). Exit status: 0 ok, 1 verify found a\n"
    "difference, 2 error.\n";

struct opts {
	const char		*verb;
	const char		*netns;
	struct nftcfg	 cfg;
	int			 guards;	/* --guard seen */
	int			 uid;		/* --exempt-uid seen */
	const char		*cg_path;	/* --exempt-cgroup */
	const char		*cg_pid;	/* --exempt-cgroup-of */
	char			 cg[NFTCG_PATH_MAX];	/* resolved folder */
	char			 cg_why[ERR_MAX];	/* why no cgroup */
	int			 fwd4, fwd6;	/* guard side: forwarding */
	int			 in_missing;	/* --transparent-in not there */
	const char		*table;		/* the table the verb is about */
	int			 tenants_verb;	/* tenants, tenants-verify, -remove */
	const char		*tenants;	/* --tenants FILE */
	int			 dry_run;
	const struct tspec	*tv;		/* the list, sorted by id */
	struct tspec		*tv_owned;	/* tv when loaded here */
	size_t			 tn;
	FILE			*out;		/* what is in place: stdout */
};

/* The cgroup exemption replaces the uid where cgroup v2 can carry it; else
 * the uid, if given, is the fallback (said on stderr with its
 * precondition), and without one the command fails. */
static int
exempt_cgroup(struct opts *o)
{
	char err[ERR_MAX], sh[96];
	uint64_t id;
	uint32_t level;

	if (o->cg_pid != NULL) {
		if (nftcg_path_of_pid(o->cg_pid, o->cg, sizeof(o->cg), err,
		    sizeof(err)) == -1)
			goto unavailable;
	} else {
		snprintf(o->cg, sizeof(o->cg), "%s", o->cg_path);
	}
	if (nftcg_resolve_path(o->cg, &id, &level, err, sizeof(err)) == -1 ||
	    nftcfg_set_exempt_cgroup(&o->cfg, id, level, err,
	    sizeof(err)) == -1)
		goto unavailable;
	o->cfg.has_exempt_uid = 0;
	return 0;
unavailable:
	snprintf(o->cg_why, sizeof(o->cg_why), "%s", err);
	if (!o->uid) {
		nftcli_say(stderr, o->verb, "cgroup exemption %s unavailable: "
		    "%s (give --exempt-uid for the uid fallback)",
		    nftcli_shown(o->cg_pid != NULL ? o->cg_pid : o->cg_path, sh,
		    sizeof(sh)), err);
		return -1;
	}
	nftcli_say(stderr, o->verb, "warning: cgroup exemption unavailable "
	    "(%s); falling back to uid %u, which " UID_PRECONDITION, err,
	    (unsigned int)o->cfg.exempt_uid);
	return 0;
}

/* An option given at most once: *slot = v, or -1 (message printed). */
static int
once(const struct opts *o, const char **slot, const char *v, const char *name)
{
	if (*slot != NULL) {
		nftcli_say(stderr, o->verb, "%s given twice", name);
		return -1;
	}
	*slot = v;
	return 0;
}

static int
cg_once(const struct opts *o)
{
	if (o->cg_path == NULL && o->cg_pid == NULL)
		return 0;
	nftcli_say(stderr, o->verb, "give one --exempt-cgroup or "
	    "--exempt-cgroup-of");
	return -1;
}

/* The tenants verbs, after their options: --tenants FILE loaded, and the
 * guard's own namespace by default (the command usually runs there). 0,
 * or -1 (message printed). */
static int
parse_tenants(struct opts *o, int list)
{
	char err[ERR_MAX];

	if (list && o->tenants == NULL) {
		nftcli_say(stderr, o->verb, "--tenants FILE is required");
		return -1;
	}
	if (o->netns == NULL)
		o->netns = "/proc/self/ns/net";
	if (o->tenants != NULL && tspec_list_load(o->tenants, &o->tv_owned,
	    &o->tn, err, sizeof(err)) == -1) {
		nftcli_say(stderr, o->verb, "%s", err);
		return -1;
	}
	o->tv = o->tv_owned;
	return 0;
}

/* Every verb's options in one loop: an option of another verb is
 * misplaced. Returns -1 on bad usage (message printed), 1 for --help, 0
 * to go on. */
static int
parse(int argc, char **argv, struct opts *o)
{
	char err[ERR_MAX], sh[96];
	const char *v;
	int i, bad, ruleset, dns, list, dry;

	ruleset = strcmp(o->verb, "apply") == 0 || strcmp(o->verb, "verify") == 0;
	list = o->tenants_verb && strcmp(o->verb, "tenants-remove") != 0;
	dry = strcmp(o->verb, "tenants") == 0;
	for (i = 2; i < argc; i++) {
		bad = 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
		if ((v = nftcli_optval(argc, argv, &i, "--netns",
		    &bad)) != NULL) {
			if (once(o, &o->netns, v, "--netns") == -1)
				return -1;
		} else if (ruleset && (v = nftcli_optval(argc, argv, &i,
		    "--guard", &bad)) != NULL) {
			o->guards++;
			if (nftcfg_add_guard(&o->cfg, v, err, sizeof(err)) == -1) {
				nftcli_say(stderr, o->verb, "--guard %s: %s",
				    nftcli_shown(v, sh, sizeof(sh)), err);
				return -1;
			}
		} else if (ruleset && (v = nftcli_optval(argc, argv, &i,
		    "--exempt-uid", &bad)) != NULL) {
			if (o->uid++) {
				nftcli_say(stderr, o->verb,
				    "--exempt-uid given twice");
				return -1;
			}
			if (nftcfg_set_exempt_uid(&o->cfg, v, err,
			    sizeof(err)) == -1) {
				nftcli_say(stderr, o->verb, "--exempt-uid %s: "
				    "%s", nftcli_shown(v, sh, sizeof(sh)), err);
				return -1;
			}
		} else if (ruleset && ((dns = 0, v = nftcli_optval(argc, argv,
		    &i, "--transparent", &bad)) != NULL || (dns = 1,
		    v = nftcli_optval(argc, argv, &i, "--dns-listen",
		    &bad)) != NULL)) {
			if (nfttransp_add_listener(&o->cfg, dns, v, err,
			    sizeof(err)) == -1) {
				nftcli_say(stderr, o->verb, "%s %s: %s", dns ?
				    "--dns-listen" : "--transparent",
				    nftcli_shown(v, sh, sizeof(sh)), err);
				return -1;
			}
		} else if (ruleset && (v = nftcli_optval(argc, argv, &i,
		    "--transparent-via", &bad)) != NULL) {
			if (nfttransp_set_via(&o->cfg, v, err, sizeof(err)) == -1) {
				nftcli_say(stderr, o->verb, "%s", err);
				return -1;
			}
		} else if (ruleset && (v = nftcli_optval(argc, argv, &i,
		    "--transparent-in", &bad)) != NULL) {
			if (nfttransp_set_in(&o->cfg, v, err, sizeof(err)) == -1) {
				nftcli_say(stderr, o->verb, "%s", err);
				return -1;
			}
		} else if (ruleset && strcmp(argv[i], "--transparent-dns") == 0) {
			o->cfg.via_dns = 1;
		} else if (ruleset && (v = nftcli_optval(argc, argv, &i,
		    "--exempt-cgroup", &bad)) != NULL) {
			if (cg_once(o) == -1)
				return -1;
			o->cg_path = v;
		} else if (ruleset && (v = nftcli_optval(argc, argv, &i,
		    "--exempt-cgroup-of", &bad)) != NULL) {
			if (cg_once(o) == -1)
				return -1;
			o->cg_pid = v;
		} else if (list && (v = nftcli_optval(argc, argv, &i,
		    "--tenants", &bad)) != NULL) {
			if (once(o, &o->tenants, v, "--tenants") == -1)
				return -1;
		} else if (dry && strcmp(argv[i], "--dry-run") == 0) {
			o->dry_run = 1;
		} else {
			nftcli_say(stderr, o->verb, bad ? "%s needs a value" :
			    "unknown or misplaced argument %s",
			    nftcli_shown(argv[i], sh, sizeof(sh)));
			return -1;
		}
	}
	if (o->tenants_verb)
		return parse_tenants(o, list);
	if (o->netns == NULL) {
		nftcli_say(stderr, o->verb, "--netns is required");
		return -1;
	}
	if (ruleset && o->guards == 0 && o->cfg.in_ifname[0] == '\0') {
		nftcli_say(stderr, o->verb, "at least one --guard is required");
		return -1;
	}
	if (ruleset && (o->cg_path != NULL || o->cg_pid != NULL) &&
	    exempt_cgroup(o) == -1)
		return -1;
	if (ruleset && nfttransp_check(&o->cfg, err, sizeof(err)) == -1) {
		nftcli_say(stderr, o->verb, "%s", err);
		return -1;
	}
	return 0;
}

/* The socket is created inside the workload's namespace; the thread comes
 * straight back. A failed return is fatal: the process would otherwise go
 * on in the wrong namespace. */
static struct nftsock *
open_in(struct opts *o)
{
	char err[ERR_MAX], err2[ERR_MAX];
	struct nftsock *s;
	int saved;

	if ((saved = netns_enter(o->netns, err, sizeof(err))) == -1) {
		nftcli_say(stderr, o->verb, "%s", err);
		return NULL;
	}
	s = nftsock_open(err, sizeof(err));
	netns_forwarding(&o->fwd4, &o->fwd6);
	/* if_nametoindex's socket is made in the thread's namespace. */
	o->in_missing = o->cfg.in_ifname[0] != '\0' &&
	    if_nametoindex(o->cfg.in_ifname) == 0;
	if (netns_return(saved, err2, sizeof(err2)) == -1) {
		nftcli_say(stderr, o->verb, "%s", err2);
		nftsock_close(s);
		exit(EXIT_ERROR);
	}
	if (s == NULL)
		nftcli_say(stderr, o->verb, "%s", err);
	return s;
}

/* 0 with *table (NULL: absent) and *chains, or -1 (message printed). */
static int
read_table(const struct opts *o, struct nftsock *s, struct nftnl_table **t,
    struct nftnl_chain_list **c)
{
	char err[ERR_MAX];
	int kerr;

	if (nftsock_read_table(s, o->table, t, c, &kerr, err,
	    sizeof(err)) == -1) {
		nftcli_say(stderr, o->verb, "cannot read the ruleset in %s: "
		    "%s%s", o->netns, err, nftcli_hint(kerr));
		return -1;
	}
	return 0;
}

/* The tenants' table has sets: read them too, and compare both with what
 * `nft tenants` sends. 0 same, 1 differs (diff filled), -1 error. */
static int
check_tenants(const struct opts *o, struct nftsock *s,
    const struct nftnl_table *t, const struct nftnl_chain_list *c,
    char *diff, char *err, size_t errlen)
{
	struct nftnl_set_list *have = NULL, *ws = NULL;
	struct nftnl_chain_list *wc = NULL;
	int kerr, rc = -1;

	if (nftsock_read_sets(s, o->table, &have, &kerr, err, errlen) == -1) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, "%s", nftcli_hint(kerr));
		return -1;
	}
	if (nfttenant_expected(o->tv, o->tn, &ws, &wc, err, errlen) == 0)
		rc = nftcmp_compare_table("table inet " NFTTENANT_TABLE, wc, ws,
		    t, c, have, diff, DIFF_MAX, err, errlen);
	if (have != NULL)
		nftnl_set_list_free(have);
	if (ws != NULL)
		nftnl_set_list_free(ws);
	if (wc != NULL)
		nftnl_chain_list_free(wc);
	return rc;
}

/* Prints the differences to stderr, one per line as nftcmp_compare wrote
 * them. Returns 0 same, 1 differs, -1 error. */
static int
check(const struct opts *o, struct nftsock *s)
{
	struct nftnl_table *t = NULL;
	struct nftnl_chain_list *c = NULL;
	char err[ERR_MAX];
	char *diff;
	int rc;

	if ((diff = malloc(DIFF_MAX)) == NULL) {
		nftcli_say(stderr, o->verb, "out of memory");
		return -1;
	}
	if (read_table(o, s, &t, &c) == -1) {
		free(diff);
		return -1;
	}
	if (o->tenants_verb)
		rc = check_tenants(o, s, t, c, diff, err, sizeof(err));
	else
		rc = nftcmp_compare(&o->cfg, t, c, diff, DIFF_MAX, err,
		    sizeof(err));
	if (rc == -1)
		nftcli_say(stderr, o->verb, "%s", err);
	else if (rc == 1)
		fputs(diff, stderr);
	if (t != NULL)
		nftnl_table_free(t);
	if (c != NULL)
		nftnl_chain_list_free(c);
	free(diff);
	return rc;
}

static void
describe(const struct opts *o, char *buf, size_t len)
{
	size_t i, off = 0;
	int n;

	buf[0] = '\0';
	if (o->tenants_verb) {
		for (i = 0; i < o->tn; i++)
			off += o->tv[i].family == AF_INET6;
		snprintf(buf, len, "%zu tenant%s (%zu IPv4, %zu IPv6)", o->tn,
		    o->tn == 1 ? "" : "s", o->tn - off, off);
		return;
	}
	for (i = 0; i < o->cfg.nguards && off + 64 < len; i++) {
		if (off > 0)
			buf[off++] = ' ';
		n = nftcfg_format_addr(&o->cfg.guards[i], buf + off,
		    len - off);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0 && len > 8)
		off = (size_t)snprintf(buf, len, "(none)");
	if (o->cfg.has_exempt_cgroup && off + 32 < len)
		snprintf(buf + off, len - off, "; exempt: cgroup %s (level %u, "
		    "id %llu)", o->cg, (unsigned int)o->cfg.exempt_cgroup_level,
		    (unsigned long long)o->cfg.exempt_cgroup_id);
	else if (o->cfg.has_exempt_uid && off + 32 < len)
		snprintf(buf + off, len - off, "; exempt: uid %u, which "
		    UID_PRECONDITION, (unsigned int)o->cfg.exempt_uid);
	off = strlen(buf);
	if (off + 1 < len)
		nfttransp_describe(&o->cfg, buf + off, len - off);
}

/* The guard side's forward chain drops what is not redirected whatever
 * the sysctls say; forwarding on is still a mistake worth naming. */
static void
warn_forwarding(const struct opts *o)
{
	if (o->cfg.in_ifname[0] == '\0')
		return;
	/* The rules match the name, so a link added later is covered; but a
	 * typo leaves the real link unfiltered while the table says "in
	 * place". Not refused: the link may come up after the table. */
	if (o->in_missing)
		nftcli_say(stderr, o->verb, "warning: no interface %s in %s "
		    "(yet): the rules for --transparent-in match that name "
		    "only, and no packet from any other link is judged by them",
		    o->cfg.in_ifname, o->netns);
	if (o->fwd4 == 1 || o->fwd6 == 1)
		nftcli_say(stderr, o->verb, "warning: forwarding is on in %s "
		    "(%s%s%s): the table's forward chain drops every forwarded "
		    "packet, but nothing here needs forwarding; turn it off",
		    o->netns,
		    o->fwd4 == 1 ? "net.ipv4.ip_forward=1" : "",
		    o->fwd4 == 1 && o->fwd6 == 1 ? ", " : "",
		    o->fwd6 == 1 ? "net.ipv6.conf.all.forwarding=1" : "");
}

/* After a batch went through: read back what the kernel holds now (the
 * same check verify makes) and say what is in place. */
static int
applied(struct opts *o, struct nftsock *s)
{
	char what[1024];
	int d;

	if ((d = check(o, s)) != 0) {
		if (d == 1)
			nftcli_say(stderr, o->verb, "applied, but the table "
			    "read back differs (see above)");
		return EXIT_ERROR;
	}
	describe(o, what, sizeof(what));
	nftcli_say(o->out, o->verb, "table inet %s in place in %s: %s%s",
	    o->table, o->netns, o->tenants_verb ? "" : "guard ", what);
	nftcli_other_chains(o->out, o->verb, o->table, s);
	warn_forwarding(o);
	return EXIT_OK;
}

static int
cmd_apply(struct opts *o)
{
	struct nftrules_batch *b = NULL;
	struct nftsock_error e;
	struct nftsock *s = NULL;
	char err[ERR_MAX];
	void *buf = NULL;
	int rc = EXIT_ERROR;

	if ((buf = malloc(NFTRULES_BATCH_MAX)) == NULL ||
	    (b = malloc(sizeof(*b))) == NULL) {
		nftcli_say(stderr, o->verb, "out of memory");
		goto out;
	}
	if ((s = open_in(o)) == NULL)
		goto out;
	if (nftrules_build_apply(&o->cfg, nftsock_seq(s, NFTRULES_MAX_MSGS + 2),
	    buf, NFTRULES_BATCH_MAX, b, err, sizeof(err)) == -1) {
		nftcli_say(stderr, o->verb, "%s", err);
		goto out;
	}
	if (nftsock_send_batch(s, buf, b->len, b->seq_first, b->seq_last, &e,
	    err, sizeof(err)) == -1) {
		nftcli_refused(o->verb, nftrules_batch_what(b, e.seq), &e, err);
		goto out;
	}
	rc = applied(o, s);
out:
	nftsock_close(s);
	free(b);
	free(buf);
	return rc;
}

static int
cmd_verify(struct opts *o)
{
	struct nftsock *s;
	char what[1024];
	int d;

	if ((s = open_in(o)) == NULL)
		return EXIT_ERROR;
	d = check(o, s);
	if (d != -1) {
		nftcli_other_chains(o->out, o->verb, o->table, s);
		warn_forwarding(o);
	}
	nftsock_close(s);
	if (d == -1)
		return EXIT_ERROR;
	if (d == 1) {
		nftcli_say(stderr, o->verb, "the ruleset in %s is not what %s "
		    "installs", o->netns, o->tenants_verb ? "`nft tenants`" :
		    "apply");
		return EXIT_DIFFERS;
	}
	describe(o, what, sizeof(what));
	nftcli_say(stdout, o->verb, "ok: table inet %s in %s is exactly what "
	    "%s installs: %s%s", o->table, o->netns, o->tenants_verb ?
	    "`nft tenants`" : "apply", o->tenants_verb ? "" : "guard ", what);
	return EXIT_OK;
}

static int
cmd_show(struct opts *o)
{
	struct nftnl_table *t = NULL;
	struct nftnl_chain_list *cl = NULL;
	struct nftnl_chain_list_iter *it;
	const struct nftnl_chain *c;
	struct nftsock *s;
	uint32_t flags;

	if ((s = open_in(o)) == NULL)
		return EXIT_ERROR;
	if (read_table(o, s, &t, &cl) == -1) {
		nftsock_close(s);
		return EXIT_ERROR;
	}
	nftsock_close(s);
	if (t == NULL) {
		printf("table inet %s: absent in %s (no default-deny in "
		    "place)\n", NFTCFG_TABLE, o->netns);
		nftnl_chain_list_free(cl);
		return EXIT_OK;
	}
	flags = nftnl_table_get_u32(t, NFTNL_TABLE_FLAGS);
	printf("table inet %s {", NFTCFG_TABLE);
	if (flags != 0)
		printf("  # flags 0x%x%s", flags, (flags & 1) ?
		    " (dormant: enforces nothing)" : "");
	printf("\n");
	if ((it = nftnl_chain_list_iter_create(cl)) != NULL) {
		while ((c = nftnl_chain_list_iter_next(it)) != NULL)
			nftcli_show_chain(c);
		nftnl_chain_list_iter_destroy(it);
	}
	printf("}\n");
	nftnl_table_free(t);
	nftnl_chain_list_free(cl);
	return EXIT_OK;
}

static int
cmd_remove(struct opts *o)
{
	struct nftrules_batch *b;
	struct nftsock_error e;
	struct nftsock *s = NULL;
	uint32_t buf[4 * NFTRULES_MSG_MAX / 4];
	char err[ERR_MAX];
	int rc = EXIT_ERROR;

	if ((b = malloc(sizeof(*b))) == NULL) {
		nftcli_say(stderr, o->verb, "out of memory");
		return EXIT_ERROR;
	}
	if ((s = open_in(o)) == NULL)
		goto out;
	if (nftrules_build_remove_table(o->table, nftsock_seq(s, 3), buf,
	    sizeof(buf), b, err, sizeof(err)) == -1) {
		nftcli_say(stderr, o->verb, "%s", err);
		goto out;
	}
	if (nftsock_send_batch(s, buf, b->len, b->seq_first, b->seq_last, &e,
	    err, sizeof(err)) == 0) {
		nftcli_say(stdout, o->verb, "table inet %s deleted from %s",
		    o->table, o->netns);
		rc = EXIT_OK;
	} else if (e.kernel && e.errnum == ENOENT) {
		nftcli_say(stdout, o->verb, "table inet %s is not present in "
		    "%s; nothing to remove", o->table, o->netns);
		rc = EXIT_OK;
	} else if (e.kernel) {
		nftcli_say(stderr, o->verb, "the kernel refused %s: %s (errno "
		    "%d)%s", nftrules_batch_what(b, e.seq), strerror(e.errnum),
		    e.errnum, nftcli_hint(e.errnum));
	} else {
		nftcli_say(stderr, o->verb, "%s; whether the table is still "
		    "there is unknown: run show", err);
	}
out:
	nftsock_close(s);
	free(b);
	return rc;
}

static int
cmd_tenants(struct opts *o)
{
	struct nfttenant_batch b;
	struct nftsock_error e;
	struct nftsock *s;
	char err[ERR_MAX], *text;
	int rc = EXIT_ERROR;

	if (o->dry_run) {
		if ((text = nfttenant_text(o->tv, o->tn)) == NULL) {
			nftcli_say(stderr, o->verb, "out of memory");
			return EXIT_ERROR;
		}
		fputs(text, stdout);
		free(text);
		return EXIT_OK;
	}
	memset(&b, 0, sizeof(b));
	if ((s = open_in(o)) == NULL)
		return EXIT_ERROR;
	if (nfttenant_build_apply(o->tv, o->tn, nftsock_seq(s,
	    NFTTENANT_MAX_MSGS + 2), &b, err, sizeof(err)) == -1 ||
	    nftsock_fit_batch(s, b.len, b.nmsgs, err, sizeof(err)) == -1) {
		nftcli_say(stderr, o->verb, "%s", err);
		goto out;
	}
	if (nftsock_send_batch(s, b.buf, b.len, b.seq_first, b.seq_last, &e,
	    err, sizeof(err)) == -1) {
		nftcli_refused(o->verb, nfttenant_batch_what(&b, e.seq), &e,
		    err);
		goto out;
	}
	rc = applied(o, s);
out:
	nftsock_close(s);
	nfttenant_batch_free(&b);
	return rc;
}

int
nftcmd_main(int argc, char **argv)
{
	struct opts *o;
	int rc, p;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_ERROR : EXIT_OK;
	}
	if (strcmp(argv[1], "apply") != 0 && strcmp(argv[1], "verify") != 0 &&
	    strcmp(argv[1], "show") != 0 && strcmp(argv[1], "remove") != 0 &&
	    strcmp(argv[1], "tenants") != 0 &&
	    strcmp(argv[1], "tenants-verify") != 0 &&
	    strcmp(argv[1], "tenants-remove") != 0) {
		fprintf(stderr, "egress-guard nft: unknown command\n%s",
		    usage_text);
		return EXIT_ERROR;
	}
	/* The config holds 64 guards: not a stack object. */
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		fprintf(stderr, "egress-guard nft: out of memory\n");
		return EXIT_ERROR;
	}
	nftcfg_init(&o->cfg);
	o->out = stdout;
	o->verb = argv[1];
	o->table = NFTCFG_TABLE;
	o->tenants_verb = strncmp(o->verb, "tenants", 7) == 0;
	if (o->tenants_verb)
		o->table = NFTTENANT_TABLE;
	p = parse(argc, argv, o);
	if (p == 1) {
		fputs(usage_text, stdout);
		rc = EXIT_OK;
	} else if (p == -1) {
		fprintf(stderr, "(egress-guard nft --help for usage)\n");
		rc = EXIT_ERROR;
	} else if (strcmp(o->verb, "apply") == 0) {
		rc = cmd_apply(o);
	} else if (strcmp(o->verb, "tenants") == 0) {
		rc = cmd_tenants(o);
	} else if (strcmp(o->verb, "verify") == 0 ||
	    strcmp(o->verb, "tenants-verify") == 0) {
		rc = cmd_verify(o);
	} else if (strcmp(o->verb, "show") == 0) {
		rc = cmd_show(o);
	} else {
		rc = cmd_remove(o);
	}
	free(o->tv_owned);
	free(o);
	return rc;
}

int
nftcmd_tenants_apply(const char *verb, const char *netns,
    const struct tspec *v, size_t n)
{
	struct opts *o;
	int rc;

	if ((o = calloc(1, sizeof(*o))) == NULL) {
		nftcli_say(stderr, verb, "out of memory");
		return EXIT_ERROR;
	}
	nftcfg_init(&o->cfg);
	o->out = stderr;
	o->verb = verb;
	o->netns = netns;
	o->table = NFTTENANT_TABLE;
	o->tenants_verb = 1;
	o->tv = v;
	o->tn = n;
	rc = cmd_tenants(o);
	free(o);
	return rc;
}
