#include <sys/socket.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "guard/check.h"
#include "guard/config.h"
#include "guard/decide.h"
#include "guard/ifaddr.h"
#include "plane/bundle.h"
#include "policy/policy.h"
#include "resolver/classify.h"
#include "resolver/resolver.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/num.h"
#include "util/opts.h"

struct check_state {
	enum resolver_status	 st;
	struct resolver_addr	*addrs;
	size_t			 n;
	char			 detail[64];
	int			 done;
};

static void
check_resolved(void *arg, enum resolver_status st, const struct resolver_addr *a,
    size_t n, const char *detail)
{
	struct check_state *cs = arg;

	cs->st = st;
	cs->done = 1;
	snprintf(cs->detail, sizeof(cs->detail), "%s", detail);
	if (n > 0 && (cs->addrs = calloc(n, sizeof(*a))) != NULL) {
		memcpy(cs->addrs, a, n * sizeof(*a));
		cs->n = n;
	}
}

static int
verdict(enum reason r)
{
	printf("verdict: %s %s\n", reason_is_allow(r) ? "allow" : "deny",
	    reason_name(r));
	return reason_is_allow(r) ? 0 : 1;
}

static const struct option check_opts[] = {
	{ "policy",		required_argument, NULL, 'p' },
	{ "dns",		required_argument, NULL, 'd' },
	{ "allow-range",	required_argument, NULL, 'a' },
	{ "deny-range",		required_argument, NULL, 'D' },
	{ "dns-timeout",	required_argument, NULL, 't' },
	{ "trust-key",		required_argument, NULL, 'k' },
	{ "help",		no_argument,       NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const char *const check_repeatable[] = {
	"dns", "allow-range", "deny-range", "trust-key", NULL
};

static const char check_usage[] = "usage: egress-guard check " CHECK_ARGS "\n";

static const char check_help[] =
    "Explains one decision without connecting: the policy match, every DNS\n"
    "answer with its class and the range that decided it, and the verdict.\n"
    "\n"
    "  HOST:PORT              the destination, as a CONNECT request names it\n"
    "  --policy FILE          compiled policy, or a signed bundle checked\n"
    "                         against --trust-key as run checks it (required)\n"
    "  --trust-key PUB.pem    a key bundles may be signed by; repeatable\n"
    "  --dns IP[:PORT]        resolver to ask; repeatable (default: /etc/resolv.conf)\n"
    "  --allow-range CIDR     count a range as public; repeatable\n"
    "  --deny-range CIDR      count a range as non-public; repeatable\n"
    "  --dns-timeout S        resolver timeout, 1-300 seconds (default 5)\n"
    "  --help                 this text\n"
    "\n"
    "Exit status: 0 allow, 1 deny, 2 error.\n";

/* The policy --policy names, taken as run takes it: a signed bundle must
 * verify under one of the trust keys (id is then its signer's key id), a
 * compiled policy is read as it is (id empty). NULL with err. */
static struct policy *
load_policy(const struct config *cfg, char *id, char *err, size_t errlen)
{
	struct bundle_keyring *kr = NULL;
	struct policy *p = NULL;
	enum bundle_error why;
	char *buf = NULL, msg[512];
	size_t i, len;

	id[0] = '\0';
	/* Every key is read, whatever --policy holds: run refuses to start
	 * on a key it cannot take, so check does too. */
	if ((kr = bundle_keyring_new()) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	for (i = 0; i < cfg->ntrust_keys; i++)
		if (bundle_keyring_add_file(kr, cfg->trust_keys[i], err,
		    errlen) == -1)
			goto out;
	if ((buf = file_read(cfg->policy_path, POLICY_MAX_BYTES, 0, &len, err,
	    errlen)) == NULL)
		goto out;
	if (!bundle_is_envelope(buf, len)) {
		/* The bytes in hand, with the message policy_load_file gives. */
		if ((p = policy_parse(buf, len, msg, sizeof(msg))) == NULL)
			errbuf_set(err, errlen, "%s: %s", cfg->policy_path, msg);
		goto out;
	}
	if (cfg->ntrust_keys == 0) {
		errbuf_set(err, errlen, "--policy %s is a signed bundle: give the "
		    "--trust-key it is checked against", cfg->policy_path);
		goto out;
	}
	if ((p = bundle_verify(kr, buf, len, id, &why, msg, sizeof(msg))) == NULL)
		errbuf_set(err, errlen, "--policy %s: bundle refused (%s): %s",
		    cfg->policy_path, bundle_error_name(why), msg);
out:
	bundle_keyring_free(kr);
	free(buf);
	return p;
}

/* A usage error: the message, then the usage, on stderr; returns 2. */
static int
usage_error(const char *msg)
{
	fprintf(stderr, "egress-guard check: %s\n%s", msg, check_usage);
	return 2;
}

int
check_main(int argc, char **argv)
{
	static struct config cfg;
	struct policy *p = NULL;
	struct classify_cfg *cc = NULL;
	struct event_base *base = NULL;
	struct resolver *res = NULL;
	struct classify_result *cr = NULL;
	struct check_state cs;
	struct dest d;
	char err[1024], why[256], shown[ERRBUF_SHOW_BUF], addr[64], hp[DEST_HOST_MAX + 16];
	char signer[BUNDLE_KEY_ID_LEN + 1];
	const char *target = NULL;
	long long dns_timeout = 5;
	enum reason r;
	size_t i;
	int ch, rc = 2, via;

	memset(&cfg, 0, sizeof(cfg));
	memset(&cs, 0, sizeof(cs));
	if (opts_exact(argc, argv, check_opts, check_repeatable, err,
	    sizeof(err)) == -1)
		return usage_error(err);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", check_opts, NULL)) != -1) {
		int bad = 0;
		switch (ch) {
		case 'p': cfg.policy_path = optarg; break;
		case 'k': bad = config_add_trust_key(&cfg, optarg, err, sizeof(err)); break;
		case 'd': bad = config_add_dns(&cfg, optarg, err, sizeof(err)); break;
		case 'a': bad = config_add_range(cfg.allow, &cfg.nallow, optarg,
			      "--allow-range", err, sizeof(err)); break;
		case 'D': bad = config_add_range(cfg.deny, &cfg.ndeny, optarg,
			      "--deny-range", err, sizeof(err)); break;
		case 't':
			if (num_parse(optarg, 1, 300, &dns_timeout) == -1) {
				errbuf_set(err, sizeof(err), "--dns-timeout: expected 1-300");
				bad = -1;
			}
			break;
		case 'h':
			fputs(check_usage, stdout);
			fputs(check_help, stdout);
			return fflush(stdout) == EOF ? 2 : 0;
		default:
			/* opts_exact let through only a missing value or a
			 * value given to --help: both end at argv[optind - 1]. */
			errbuf_set(err, sizeof(err), "unknown or incomplete option: %s",
			    argv[optind - 1]);
			bad = -1;
		}
		if (bad)
			return usage_error(err);
	}
	if (optind < argc - 1) {
		errbuf_set(err, sizeof(err), "unexpected argument: %s",
		    errbuf_show(argv[optind + 1], strlen(argv[optind + 1]), shown));
		return usage_error(err);
	}
	if (optind == argc - 1)
		target = argv[optind];
	if (target == NULL)
		return usage_error("missing HOST:PORT");
	if (cfg.policy_path == NULL)
		return usage_error("missing --policy");
	/* The proxy would deny this one bad_request; for check it is a
	 * target mistyped, not a decision to explain. */
	if (dest_parse_authority(target, strlen(target), &d, why, sizeof(why)) == -1) {
		errbuf_set(err, sizeof(err), "%s: not a HOST:PORT destination: %s",
		    errbuf_show(target, strlen(target), shown), why);
		return usage_error(err);
	}
	if ((p = load_policy(&cfg, signer, err, sizeof(err))) == NULL) {
		fprintf(stderr, "egress-guard check: %s\n", err);
		return 2;
	}
	printf("policy: %s epoch %lld mode %s (%zu entries)\n", policy_digest(p),
	    policy_epoch(p), policy_mode_name(policy_mode(p)), policy_entries(p));
	if (policy_catalog_version(p) != NULL)
		printf("catalog: %s %s\n", policy_catalog_version(p),
		    policy_catalog_digest(p));
	if (signer[0] != '\0')
		printf("signature: verified, key %s\n", signer);
	(void)dest_format(&d, hp, sizeof(hp));
	printf("destination: %s (%s)\n", hp,
	    d.kind == DEST_NAME ? "name" : "IP literal");
	r = decide_policy(p, &d);
	via = policy_admits_via(p, d.host, d.port);
	/* Which part of the profile granted the entry: the flag and
	 * ecosystem, or the profile's own allowed_hosts. */
	printf("policy match: %s (%s)%s%s\n", reason_is_allow(r) ? "admitted" :
	    "not admitted", reason_name(r), via >= 0 ? " via " : "",
	    via >= 0 ? policy_via_name((unsigned)via) : "");
	if (!reason_is_allow(r)) {
		printf("resolution: skipped (a name the policy does not admit is never looked up)\n");
		rc = verdict(r);
		goto out;
	}
	if ((cc = config_classifier(&cfg)) == NULL)
		goto out;
	errno = 0;
	if (ifaddr_refresh(cc) == -1) {
		fprintf(stderr, "egress-guard check: cannot read interface "
		    "addresses%s%s\n", errno != 0 ? ": " : "",
		    errno != 0 ? strerror(errno) : "");
		goto out;
	}
	if (d.kind != DEST_NAME) {
		cs.addrs = calloc(1, sizeof(*cs.addrs));
		if (cs.addrs == NULL)
			goto out;
		cs.addrs[0].family = d.kind == DEST_IPV4 ? AF_INET : AF_INET6;
		memcpy(cs.addrs[0].addr, d.addr, 16);
		cs.n = 1;
		printf("resolution: not needed (IP literal)\n");
	} else {
		if ((base = event_base_new()) == NULL)
			goto out;
		res = resolver_new(base, cfg.dns_csv[0] ? cfg.dns_csv : NULL,
		    (int)dns_timeout * 1000, err, sizeof(err));
		if (res == NULL) {
			fprintf(stderr, "egress-guard check: %s\n", err);
			goto out;
		}
		printf("resolvers: %s\n", resolver_servers(res));
		if (resolver_lookup(res, d.host, check_resolved, &cs) == NULL)
			goto out;
		while (!cs.done && event_base_loop(base, EVLOOP_ONCE) == 0)
			;
		if (cs.st != RESOLVER_OK) {
			printf("resolution: %s\n", cs.detail);
			rc = verdict(cs.st == RESOLVER_TIMEOUT ? REASON_DNS_TIMEOUT :
			    REASON_DNS_FAILURE);
			goto out;
		}
		printf("resolution: %zu answer(s), every one classified\n", cs.n);
	}
	if ((cr = calloc(cs.n, sizeof(*cr))) == NULL)
		goto out;
	r = decide_addrs(cc, cs.addrs, cs.n, cr) ? r : REASON_NON_PUBLIC_ADDRESS;
	for (i = 0; i < cs.n; i++) {
		decide_addr_str(&cs.addrs[i], addr, sizeof(addr));
		printf("  %-40s %-10s %s\n", addr, cr[i].public ? "public" : "NON-PUBLIC",
		    cr[i].range);
	}
	rc = verdict(r);
out:
	/* A verdict that never reached the reader is no verdict. */
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "egress-guard check: cannot write to standard output\n");
		rc = 2;
	}
	free(cr);
	free(cs.addrs);
	resolver_free(res);
	if (base != NULL)
		event_base_free(base);
	classify_cfg_free(cc);
	policy_free(p);
	return rc;
}
