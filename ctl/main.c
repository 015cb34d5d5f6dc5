/* egress-guardctl: the plane-side tool (docs/design.md). Each subcommand
 * is one entry in the table below; keygen, sign, verify, diff, push,
 * status, tenant, receipt and admit are added there. Exit status: 0 done, 1 an
 * operating failure (e.g. writing the output), 2 bad usage or bad input;
 * typed refusals above (ctl/cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/cli.h"
#include "ctl/diff.h"
#include "ctl/keys.h"
#include "ctl/push.h"
#include "ctl/receiptcmd.h"
#include "ctl/receiptshow.h"
#include "ctl/tenant.h"
#include "policy/catalog.h"
#include "policy/policy.h"
#include "util/num.h"

#ifndef EG_VERSION
#define EG_VERSION "0.1.0"
#endif


struct command {
	const char	*name;
	const char	*usage;		/* arguments after the name */
	int		(*run)(int argc, char **argv);	/* argv[0] is the name */
};

static int cmd_compile(int argc, char **argv);
static int cmd_receipt(int argc, char **argv);

static const struct command commands[] = {
	{ "compile", "PROFILE [--epoch N] [--catalog FILE] [--tenant ID]",
	    cmd_compile },
	{ "keygen", CTLKEYS_KEYGEN_USAGE, ctlkeys_cmd_keygen },
	{ "sign", CTLKEYS_SIGN_USAGE, ctlkeys_cmd_sign },
	{ "verify", CTLKEYS_VERIFY_USAGE, ctlkeys_cmd_verify },
	{ "diff", CTLDIFF_USAGE, ctldiff_cmd_diff },
	{ "push", CTLPUSH_PUSH_USAGE, ctlpush_cmd_push },
	{ "status", CTLPUSH_STATUS_USAGE, ctlpush_cmd_status },
	{ "tenant", CTLTENANT_USAGE, ctltenant_cmd },
	{ "receipt", RECEIPTCMD_RECEIPT_USAGE, cmd_receipt },
	{ "admit", RECEIPTCMD_ADMIT_USAGE, receiptcmd_cmd_admit },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

/* receipt show explains (ctl/receiptshow.c); sign and verify decide
 * (ctl/receiptcmd.c). */
static int
cmd_receipt(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return receiptshow_cmd(argc - 1, argv + 1);
	return receiptcmd_cmd_receipt(argc, argv);
}

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s --version\n", CLI_PROG);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "       %s %s %s\n", CLI_PROG, commands[i].name,
		    commands[i].usage);
}

/* The program's usage on stderr, after "unknown command: \"arg\"" when
 * arg is not NULL. */
static int
usage_error(const char *arg)
{
	if (arg != NULL)
		fprintf(stderr, "%s: unknown command: \"%s\"\n", CLI_PROG, arg);
	usage(stderr);
	return CLI_EXIT_USAGE;
}

/* compile PROFILE [--epoch N] [--catalog FILE] [--tenant ID]: canonical
 * compiled policy bytes and a newline on stdout. --tenant names the
 * tenant of a multi-tenant guard the policy is for, inside its signed
 * bytes. */
static int
cmd_compile(int argc, char **argv)
{
	static const char *const names[] = {
		"--epoch", "--catalog", "--tenant", NULL
	};
	struct cli_opts o = { "compile", commands[0].usage, names, { NULL },
	    NULL, 1 };
	struct catalog *cat = NULL;
	long long epoch = 1;
	char err[1024], *canon;
	size_t len;
	int rc;

	if ((rc = cli_parse_opts(argc, argv, 1, &o)) != 0)
		return rc;
	if (o.operand == NULL)
		return cli_usage_error(o.cmd, o.usage, "missing PROFILE", NULL);
	if (o.vals[0] != NULL &&
	    num_parse(o.vals[0], 0, POLICY_EPOCH_MAX, &epoch) == -1)
		return cli_usage_error(o.cmd, o.usage,
		    "--epoch must be an integer 0-9007199254740991", NULL);
	if (o.vals[2] != NULL && !policy_tenant_id_ok(o.vals[2], strlen(o.vals[2])))
		return cli_usage_error(o.cmd, o.usage, CLI_TENANT_ID_RULE,
		    o.vals[2]);
	if (o.vals[1] != NULL &&
	    (cat = catalog_load_file(o.vals[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: catalog %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}

	canon = policy_profile_canonical_cat(o.operand, epoch, cat, o.vals[2],
	    &len, err, sizeof(err));
	if (canon == NULL) {
		/* err starts with the path. */
		fprintf(stderr, "%s: %s\n", CLI_PROG, err);
		catalog_free(cat);
		return CLI_EXIT_USAGE;
	}
	/* A catalog the profile never read is not recorded: say so rather
	 * than let its reader believe the policy is pinned to it. */
	if (cat != NULL && strstr(canon, "\"catalog\":{") == NULL)
		fprintf(stderr, "%s: note: %s declares no package managers: "
		    "catalog %s not recorded\n", CLI_PROG, o.operand,
		    catalog_version(cat));
	catalog_free(cat);
	/* The NUL after the bytes makes room for the newline: one write. */
	canon[len] = '\n';
	rc = cli_print_all(canon, len + 1) == -1 ? CLI_EXIT_FAIL : 0;
	free(canon);
	return rc;
}

/* "CMD ... --help" (or -h) before any "--": the command's usage, which
 * names every flag it takes, on stdout. */
static int
wants_help(int argc, char **argv)
{
	int i;

	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv);

int
main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage_error(NULL);
	if (strcmp(argv[1], "--version") == 0) {
		if (argc != 2)
			return usage_error(NULL);
		printf("%s %s\n", CLI_PROG, EG_VERSION);
		return fflush(stdout) == EOF ? CLI_EXIT_FAIL : 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return fflush(stdout) == EOF ? CLI_EXIT_FAIL : 0;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			if (wants_help(argc, argv)) {
				printf("usage: %s %s %s\n", CLI_PROG, commands[i].name,
				    commands[i].usage);
				return fflush(stdout) == EOF ? CLI_EXIT_FAIL : 0;
			}
			return commands[i].run(argc - 1, argv + 1);
		}
	return usage_error(argv[1]);
}
