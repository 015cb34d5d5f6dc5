/* `egress-guard run` flags, parsed and range-checked before anything
 * starts. Errors go to a buffer; the caller exits 2. */
#ifndef EG_CONFIG_H
#define EG_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "guard/log.h"
#include "policy/dest.h"
#include "resolver/classify.h"

#define CONFIG_MAX_LISTEN	16
#define CONFIG_MAX_DNS		8
#define CONFIG_MAX_DNS_LISTEN	4	/* = DNSD_MAX_LISTEN */
#define CONFIG_MAX_RANGES	256
#define CONFIG_MAX_KEYS		16
#define CONFIG_MAX_WORKERS	64
/* Where the epoch floor lives unless --state-dir names another folder or
 * --no-state opts out; created 0700 when absent. */
#define CONFIG_STATE_DIR	"/var/lib/egress-guard"

struct config {
	struct dest	 listen[CONFIG_MAX_LISTEN];
	size_t		 nlisten;
	struct dest	 transparent[CONFIG_MAX_LISTEN];	/* redirected TCP */
	size_t		 ntransparent;
	struct dest	 dns_listen[CONFIG_MAX_DNS_LISTEN];	/* guard/dnsd.c */
	size_t		 ndns_listen;
	const char	*policy_path;
	const char	*control_path;
	const char	*state_dir;	/* NULL only with --no-state */
	int		 state_default;	/* state_dir is CONFIG_STATE_DIR, not a flag's */
	const char	*trust_keys[CONFIG_MAX_KEYS];
	size_t		 ntrust_keys;
	char		 dns_csv[CONFIG_MAX_DNS * 56];	/* c-ares "ip:port,…"; "" = resolv.conf */
	struct cidr allow[CONFIG_MAX_RANGES];
	size_t		 nallow;
	struct cidr deny[CONFIG_MAX_RANGES];
	size_t		 ndeny;
	int		 sni_check;	/* 1 enforce, 0 off */
	const char	*user;
	enum log_format	 log_format;
	const char	*log_file;
	long long	 max_conns;
	long long	 header_timeout;	/* seconds */
	long long	 idle_timeout;
	long long	 connect_timeout;
	long long	 dns_timeout;
	long long	 grace;			/* SIGTERM drain, seconds */
	long long	 workers;		/* event loops; 0: one per usable CPU */
	int		 tenants;		/* --tenants: listeners are tenants' */
};

/* Parses argv (argv[0] is the subcommand name). Returns 0, or -1 with a
 * one-line message in err. */
int config_parse_run(int argc, char **argv, struct config *c, char *err,
    size_t errlen);

/* Shared by run and check: "--dns IP[:PORT]" appended to c->dns_csv. */
int config_add_dns(struct config *c, const char *arg, char *err, size_t errlen);
/* A --trust-key path (kept, not read here); -1 past CONFIG_MAX_KEYS. */
int config_add_trust_key(struct config *c, const char *path, char *err,
    size_t errlen);
int config_add_range(struct cidr *list, size_t *n, const char *arg,
    const char *flag, char *err, size_t errlen);

/* A classifier holding the --allow-range and --deny-range lists; NULL on
 * allocation failure (the caller must not run without them). */
struct classify_cfg *config_classifier(const struct config *c);

/* The usage of every command, on f: stdout when asked for, stderr after
 * an error. */
void config_usage(FILE *f, const char *prog);

/* `run --help`: every flag of run with its default. */
void config_run_help(FILE *f);

#endif
