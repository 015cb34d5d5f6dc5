#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "guard/check.h"
#include "guard/config.h"
#include "util/errbuf.h"
#include "util/num.h"
#include "util/opts.h"

enum {
	OPT_LISTEN = 256, OPT_CONTROL, OPT_POLICY, OPT_TRUST_KEY, OPT_STATE_DIR,
	OPT_DNS, OPT_ALLOW, OPT_DENY, OPT_SNI, OPT_USER, OPT_LOG_FORMAT,
	OPT_LOG_FILE, OPT_MAX_CONNS, OPT_HDR_TO, OPT_IDLE_TO, OPT_CONN_TO,
	OPT_DNS_TO, OPT_GRACE, OPT_NO_STATE, OPT_TRANSPARENT, OPT_DNS_LISTEN,
	OPT_WORKERS, OPT_TENANTS, OPT_HELP
};

static const struct option run_opts[] = {
	{ "listen",		required_argument, NULL, OPT_LISTEN },
	{ "transparent",	required_argument, NULL, OPT_TRANSPARENT },
	{ "control",		required_argument, NULL, OPT_CONTROL },
	{ "policy",		required_argument, NULL, OPT_POLICY },
	{ "trust-key",		required_argument, NULL, OPT_TRUST_KEY },
	{ "state-dir",		required_argument, NULL, OPT_STATE_DIR },
	{ "no-state",		no_argument,       NULL, OPT_NO_STATE },
	{ "dns",		required_argument, NULL, OPT_DNS },
	{ "dns-listen",		required_argument, NULL, OPT_DNS_LISTEN },
	{ "allow-range",	required_argument, NULL, OPT_ALLOW },
	{ "deny-range",		required_argument, NULL, OPT_DENY },
	{ "sni-check",		required_argument, NULL, OPT_SNI },
	{ "user",		required_argument, NULL, OPT_USER },
	{ "log-format",		required_argument, NULL, OPT_LOG_FORMAT },
	{ "log-file",		required_argument, NULL, OPT_LOG_FILE },
	{ "max-conns",		required_argument, NULL, OPT_MAX_CONNS },
	{ "header-timeout",	required_argument, NULL, OPT_HDR_TO },
	{ "idle-timeout",	required_argument, NULL, OPT_IDLE_TO },
	{ "connect-timeout",	required_argument, NULL, OPT_CONN_TO },
	{ "dns-timeout",	required_argument, NULL, OPT_DNS_TO },
	{ "grace",		required_argument, NULL, OPT_GRACE },
	{ "workers",		required_argument, NULL, OPT_WORKERS },
	{ "tenants",		no_argument,       NULL, OPT_TENANTS },
	{ "help",		no_argument,       NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 }
};

/* Every other flag holds one value and is refused when given twice. */
static const char *const run_repeatable[] = {
	"listen", "transparent", "trust-key", "dns", "dns-listen",
	"allow-range", "deny-range", NULL
};

void
config_usage(FILE *f, const char *prog)
{
	fprintf(f,
	    "usage: %s run [--listen ADDR:PORT]... [--transparent ADDR:PORT]...\n"
	    "       [--control PATH] [--policy FILE]\n"
	    "       [--trust-key PUBKEY.pem]... [--state-dir DIR | --no-state]\n"
	    "       [--dns IP[:PORT]]... [--dns-listen ADDR:PORT]...\n"
	    "       [--allow-range CIDR]... [--deny-range CIDR]...\n"
	    "       [--sni-check enforce|off] [--user NAME] [--log-format json|text]\n"
	    "       [--log-file FILE] [--max-conns N] [--workers N]\n"
	    "       [--header-timeout S] [--idle-timeout S] [--connect-timeout S]\n"
	    "       [--dns-timeout S] [--grace S]\n"
	    "   or: %s run --tenants --control PATH --state-dir DIR --trust-key K ...\n"
	    "   or: %s check " CHECK_ARGS "\n"
	    "   or: %s nft apply|show|verify|remove --netns NAME|PATH|PID ...\n"
	    "   or: %s appliance [run|init|hold|pause|fenced|health|COMMAND...]\n"
	    "   or: %s version\n", prog, prog, prog, prog, prog, prog);
}

/* `egress-guard run --help`: every flag, with its default. */
void
config_run_help(FILE *f)
{
	fputs(
	    "usage: egress-guard run [flags]\n"
	    "The egress proxy daemon: one listener speaks HTTP proxy (CONNECT and\n"
	    "absolute-form) and SOCKS5; the plane talks to the control socket.\n"
	    "\n"
	    "  --listen ADDR:PORT     listener, IPv4:PORT or [IPv6]:PORT; repeatable,\n"
	    "                         at most 16 (default 127.0.0.1:3128)\n"
	    "  --transparent ADDR:PORT  listener for TCP that nft redirected to it\n"
	    "                         (egress-guard nft apply --transparent): the name\n"
	    "                         comes from the TLS SNI or the HTTP Host, never from\n"
	    "                         the address dialled; repeatable, at most 16\n"
	    "  --control PATH         control socket, mode 0600, created before any\n"
	    "                         privilege drop (default /run/egress-guard/control.sock);\n"
	    "                         its folder and those above must be writable by no one\n"
	    "                         but root or the guard's user\n"
	    "  --policy FILE          signed bundle (checked against --trust-key) or an\n"
	    "                         operator's unsigned compiled policy; SIGHUP reloads it\n"
	    "                         (default: none, every request denied until a push)\n"
	    "  --trust-key PUB.pem    Ed25519 public key accepted for bundles and pushes;\n"
	    "                         repeatable, at most 16\n"
	    "  --state-dir DIR        keeps the last accepted bundle and resumes from it,\n"
	    "                         never below its epoch (default /var/lib/egress-guard,\n"
	    "                         created 0700 when absent). DIR, bundle.json and every\n"
	    "                         folder above must be owned by root or the guard's\n"
	    "                         user and writable by no one else (a folder above may\n"
	    "                         be if sticky); a link is refused. With --user, a\n"
	    "                         root-owned DIR is handed to that user, 0700, if it\n"
	    "                         holds nothing but the guard's own bundle.json\n"
	    "  --no-state             keep no state: a restart forgets the epoch floor\n"
	    "                         (warned at start, shown in /v1/status)\n"
	    "  --dns IP[:PORT]        the guard's own resolver; repeatable, at most 8\n"
	    "                         (default: the nameservers of /etc/resolv.conf)\n"
	    "  --dns-listen ADDR:PORT answer the workload's DNS (UDP and TCP), IPv4:PORT\n"
	    "                         or [IPv6]:PORT; repeatable, at most 4: A and AAAA\n"
	    "                         of names the policy admits on some port, resolved\n"
	    "                         and classified by the guard; NXDOMAIN for any other\n"
	    "                         name, with no upstream query (default: none)\n"
	    "  --allow-range CIDR     count a range as public (lab networks); repeatable\n"
	    "  --deny-range CIDR      count a range as non-public; repeatable\n"
	    "  --sni-check enforce|off  close tunnels whose first bytes look like TLS but\n"
	    "                         are not one ClientHello naming the requested host\n"
	    "                         (or, to an IP literal, no host) (default enforce)\n"
	    "  --user NAME            after binding, become NAME: no supplementary groups,\n"
	    "                         no capabilities, no_new_privs (root only; running as\n"
	    "                         root without it logs a warning); a NAME with uid 0,\n"
	    "                         or with group 0 as its primary or a supplementary\n"
	    "                         group, is refused\n"
	    "  --log-format json|text decision log format (default json)\n"
	    "  --log-file FILE        log there instead of stderr (a new file is 0600;\n"
	    "                         no \"..\", no link but /dev/stdout, /dev/stderr,\n"
	    "                         /dev/fd/N, /proc/self/fd/N)\n"
	    "  --max-conns N          concurrent client connections; beyond, 503\n"
	    "                         overloaded (default 4096; one bound for all workers)\n"
	    "  --workers N            event loops, one thread each, 1..64 (default: the\n"
	    "                         CPUs this process may use, cgroup quota respected)\n"
	    "  --header-timeout S     request head must be complete in S seconds (10)\n"
	    "  --idle-timeout S       close a tunnel idle for S seconds (300)\n"
	    "  --connect-timeout S    upstream connect timeout (10)\n"
	    "  --dns-timeout S        resolver timeout (5)\n"
	    "  --grace S              SIGTERM: let live tunnels finish for S seconds (10)\n"
	    "  --tenants              serve many sandboxes: each tenant's listeners,\n"
	    "                         policy and bounds are added over --control\n"
	    "                         (PUT /v1/tenants/ID); one worker loop\n"
	    "  --help                 this text\n"
	    "\n"
	    "Signals: SIGTERM drains and exits 0, SIGHUP reloads --policy. Exit status:\n"
	    "0 clean stop, 1 event loop failure, 2 bad flags or a failed start.\n", f);
}

/* "IPv4:PORT" or "[IPv6]:PORT" appended to list (at most
 * CONFIG_MAX_LISTEN). */
static int
add_listen(struct dest *list, size_t *n, const char *arg, const char *flag,
    char *err, size_t errlen)
{
	char why[128];

	if (*n == CONFIG_MAX_LISTEN) {
		errbuf_set(err, errlen, "%s: at most %d", flag, CONFIG_MAX_LISTEN);
		return -1;
	}
	if (dest_parse_authority(arg, strlen(arg), &list[*n], why, sizeof(why)) == -1 ||
	    list[*n].kind == DEST_NAME) {
		errbuf_set(err, errlen, "%s: expected IPv4:PORT or [IPv6]:PORT", flag);
		return -1;
	}
	(*n)++;
	return 0;
}

int
config_add_trust_key(struct config *c, const char *path, char *err,
    size_t errlen)
{
	if (c->ntrust_keys == CONFIG_MAX_KEYS) {
		errbuf_set(err, errlen, "--trust-key: at most %d", CONFIG_MAX_KEYS);
		return -1;
	}
	c->trust_keys[c->ntrust_keys++] = path;
	return 0;
}

int
config_add_dns(struct config *c, const char *arg, char *err, size_t errlen)
{
	struct dest d;
	char with_port[DEST_HOST_MAX + 16], entry[64];
	size_t len = strlen(arg), used = strlen(c->dns_csv), n = used > 0, i;
	int rc;

	/* The bound is a count of servers: the buffer alone would take
	 * dozens of short IPv4 entries. */
	for (i = 0; i < used; i++)
		n += c->dns_csv[i] == ',';
	if (n >= CONFIG_MAX_DNS) {
		errbuf_set(err, errlen, "--dns: too many servers (at most %d)", CONFIG_MAX_DNS);
		return -1;
	}
	/* Accept IP, IP:PORT, [IP6], [IP6]:PORT; the port defaults to 53. */
	if (len > 0 && arg[len - 1] == ']')
		rc = snprintf(with_port, sizeof(with_port), "%s:53", arg);
	else if (strchr(arg, ':') == NULL)
		rc = snprintf(with_port, sizeof(with_port), "%s:53", arg);
	else
		rc = snprintf(with_port, sizeof(with_port), "%s", arg);
	if (rc < 0 || (size_t)rc >= sizeof(with_port) ||
	    dest_parse_authority(with_port, (size_t)rc, &d, err, errlen) == -1 ||
	    d.kind == DEST_NAME) {
		errbuf_set(err, errlen, "--dns: expected IP[:PORT] or [IPv6][:PORT]");
		return -1;
	}
	if (d.kind == DEST_IPV6)
		rc = snprintf(entry, sizeof(entry), "[%s]:%u", d.host, d.port);
	else
		rc = snprintf(entry, sizeof(entry), "%s:%u", d.host, d.port);
	if (rc < 0 || used + (size_t)rc + 2 > sizeof(c->dns_csv)) {
		errbuf_set(err, errlen, "--dns: too many servers (at most %d)", CONFIG_MAX_DNS);
		return -1;
	}
	snprintf(c->dns_csv + used, sizeof(c->dns_csv) - used, "%s%s",
	    used ? "," : "", entry);
	return 0;
}

int
config_add_range(struct cidr *list, size_t *n, const char *arg,
    const char *flag, char *err, size_t errlen)
{
	char why[128];

	if (*n == CONFIG_MAX_RANGES) {
		errbuf_set(err, errlen, "%s: too many ranges (at most %d)", flag,
		    CONFIG_MAX_RANGES);
		return -1;
	}
	if (cidr_parse(arg, &list[*n], why, sizeof(why)) == -1) {
		errbuf_set(err, errlen, "%s: %s", flag, why);
		return -1;
	}
	(*n)++;
	return 0;
}

static int
seconds(const char *arg, const char *flag, long long min, long long max,
    long long *out, char *err, size_t errlen)
{
	if (num_parse(arg, min, max, out) == -1) {
		errbuf_set(err, errlen, "%s: expected a whole number %lld-%lld", flag,
		    min, max);
		return -1;
	}
	return 0;
}

/* Tenant mode (docs/design.md "Tenants"): every listener is a tenant's,
 * added over the control socket, so a flag that would open one, or load
 * a policy for no tenant, is refused rather than ignored. */
static int
tenant_flags(int argc, char **argv, struct config *c, char *err,
    size_t errlen)
{
	static const char *const refused[] = {
		"--listen", "--transparent", "--dns-listen", "--policy", "--no-state",
		NULL
	};
	size_t n;
	int i, k;

	for (i = 1; i < argc; i++)
		for (k = 0; refused[k] != NULL; k++) {
			n = strlen(refused[k]);
			if (strncmp(argv[i], refused[k], n) == 0 &&
			    (argv[i][n] == '\0' || argv[i][n] == '=')) {
				errbuf_set(err, errlen, "%s: not with --tenants (each tenant's "
				    "listeners and policy come over the control socket)",
				    refused[k]);
				return -1;
			}
		}
	if (c->workers > 1) {
		errbuf_set(err, errlen, "--workers %lld: --tenants runs one event loop "
		    "in this version", c->workers);
		return -1;
	}
	c->workers = 1;
	return 0;
}

int
config_parse_run(int argc, char **argv, struct config *c, char *err,
    size_t errlen)
{
	char why[128];
	int ch;

	memset(c, 0, sizeof(*c));
	c->control_path = "/run/egress-guard/control.sock";
	c->state_dir = CONFIG_STATE_DIR;
	c->state_default = 1;
	c->sni_check = 1;
	c->log_format = LOG_JSON;
	c->max_conns = 4096;
	c->header_timeout = 10;
	c->idle_timeout = 300;
	c->connect_timeout = 10;
	c->dns_timeout = 5;
	c->grace = 10;

	if (opts_exact(argc, argv, run_opts, run_repeatable, err, errlen) == -1)
		return -1;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", run_opts, NULL)) != -1) {
		int rc = 0;

		switch (ch) {
		case OPT_LISTEN:
			rc = add_listen(c->listen, &c->nlisten, optarg, "--listen",
			    err, errlen);
			break;
		case OPT_TRANSPARENT:
			rc = add_listen(c->transparent, &c->ntransparent, optarg,
			    "--transparent", err, errlen);
			break;
		case OPT_DNS_LISTEN:
			if (c->ndns_listen == CONFIG_MAX_DNS_LISTEN) {
				errbuf_set(err, errlen, "--dns-listen: at most %d",
				    CONFIG_MAX_DNS_LISTEN);
				return -1;
			}
			if (dest_parse_authority(optarg, strlen(optarg),
			    &c->dns_listen[c->ndns_listen], why, sizeof(why)) == -1 ||
			    c->dns_listen[c->ndns_listen].kind == DEST_NAME) {
				errbuf_set(err, errlen, "--dns-listen: expected IPv4:PORT or "
				    "[IPv6]:PORT");
				return -1;
			}
			c->ndns_listen++;
			break;
		case OPT_CONTROL:
			/* An empty path binds an abstract socket: no file, no
			 * mode, any uid of the namespace (the workload's
			 * too) may connect. */
			if (optarg[0] == '\0') {
				errbuf_set(err, errlen, "--control: expected a socket "
				    "path, not an empty one");
				return -1;
			}
			c->control_path = optarg;
			break;
		case OPT_POLICY:	c->policy_path = optarg; break;
		case OPT_STATE_DIR:
			if (c->state_dir == NULL || optarg[0] == '\0') {
				errbuf_set(err, errlen, "--state-dir: expected a folder (or "
				    "--no-state, not both)");
				return -1;
			}
			c->state_dir = optarg;
			c->state_default = 0;
			break;
		case OPT_NO_STATE:
			if (!c->state_default) {
				errbuf_set(err, errlen, "--no-state and --state-dir: choose one");
				return -1;
			}
			c->state_dir = NULL;
			c->state_default = 0;
			break;
		case OPT_USER:		c->user = optarg; break;
		case OPT_LOG_FILE:	c->log_file = optarg; break;
		case OPT_TRUST_KEY:
			rc = config_add_trust_key(c, optarg, err, errlen);
			break;
		case OPT_DNS:
			rc = config_add_dns(c, optarg, err, errlen);
			break;
		case OPT_ALLOW:
			rc = config_add_range(c->allow, &c->nallow, optarg,
			    "--allow-range", err, errlen);
			break;
		case OPT_DENY:
			rc = config_add_range(c->deny, &c->ndeny, optarg,
			    "--deny-range", err, errlen);
			break;
		case OPT_SNI:
			if (strcmp(optarg, "enforce") == 0)
				c->sni_check = 1;
			else if (strcmp(optarg, "off") == 0)
				c->sni_check = 0;
			else {
				errbuf_set(err, errlen, "--sni-check: expected enforce or off");
				return -1;
			}
			break;
		case OPT_LOG_FORMAT:
			if (strcmp(optarg, "json") == 0)
				c->log_format = LOG_JSON;
			else if (strcmp(optarg, "text") == 0)
				c->log_format = LOG_TEXT;
			else {
				errbuf_set(err, errlen, "--log-format: expected json or text");
				return -1;
			}
			break;
		case OPT_MAX_CONNS:
			rc = seconds(optarg, "--max-conns", 1, 1000000, &c->max_conns,
			    err, errlen);
			break;
		case OPT_HDR_TO:
			rc = seconds(optarg, "--header-timeout", 1, 3600,
			    &c->header_timeout, err, errlen);
			break;
		case OPT_IDLE_TO:
			rc = seconds(optarg, "--idle-timeout", 1, 604800,
			    &c->idle_timeout, err, errlen);
			break;
		case OPT_CONN_TO:
			rc = seconds(optarg, "--connect-timeout", 1, 3600,
			    &c->connect_timeout, err, errlen);
			break;
		case OPT_DNS_TO:
			rc = seconds(optarg, "--dns-timeout", 1, 300, &c->dns_timeout,
			    err, errlen);
			break;
		case OPT_GRACE:
			rc = seconds(optarg, "--grace", 0, 3600, &c->grace, err, errlen);
			break;
		case OPT_WORKERS:
			rc = seconds(optarg, "--workers", 1, CONFIG_MAX_WORKERS,
			    &c->workers, err, errlen);
			break;
		case OPT_TENANTS:	c->tenants = 1; break;
		case OPT_HELP:
			errbuf_set(err, errlen, "help");
			return -1;
		default:
			/* opts_exact let through only a missing value or a
			 * value given to --help: both end at argv[optind - 1]. */
			errbuf_set(err, errlen, "unknown or incomplete option: %s",
			    argv[optind - 1]);
			return -1;
		}
		if (rc == -1)
			return -1;
	}
	if (optind != argc) {
		errbuf_set(err, errlen, "unexpected argument: %s", argv[optind]);
		return -1;
	}
	if (c->tenants)
		return tenant_flags(argc, argv, c, err, errlen);
	if (c->nlisten == 0) {
		const char def[] = "127.0.0.1:3128";
		(void)dest_parse_authority(def, sizeof(def) - 1, &c->listen[0], why,
		    sizeof(why));
		c->nlisten = 1;
	}
	return 0;
}

struct classify_cfg *
config_classifier(const struct config *c)
{
	struct classify_cfg *cc;
	size_t i;

	if ((cc = classify_cfg_new()) == NULL)
		return NULL;
	for (i = 0; i < c->nallow; i++)
		if (classify_cfg_allow(cc, &c->allow[i]) == -1)
			goto fail;
	for (i = 0; i < c->ndeny; i++)
		if (classify_cfg_deny(cc, &c->deny[i]) == -1)
			goto fail;
	return cc;
fail:
	classify_cfg_free(cc);
	return NULL;
}
