/* egress-guardctl: the plane-side tool (docs/design.md). Each subcommand is one
 * entry in the table below; keygen, sign, verify, push, status, receipt and
 * admit are added there. Exit status: 0 done, 1 an operating failure (e.g.
 * writing the output), 2 bad usage or bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/keys.h"
#include "ctl/receiptcmd.h"
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

static const struct command commands[] = {
	{ "compile", "PROFILE [--epoch N]", cmd_compile },
	{ "keygen", CTLKEYS_KEYGEN_USAGE, ctlkeys_cmd_keygen },
	{ "sign", CTLKEYS_SIGN_USAGE, ctlkeys_cmd_sign },
	{ "verify", CTLKEYS_VERIFY_USAGE, ctlkeys_cmd_verify },
	{ "push", CTLCLIENT_PUSH_USAGE, ctlclient_cmd_push },
	{ "status", CTLCLIENT_STATUS_USAGE, ctlclient_cmd_status },
	{ "receipt", RECEIPTCMD_RECEIPT_USAGE, receiptcmd_cmd_receipt },
	{ "admit", RECEIPTCMD_ADMIT_USAGE, receiptcmd_cmd_admit },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s --version\n", CLI_PROG);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "       %s %s %s\n", CLI_PROG, commands[i].name,
		    commands[i].usage);
}

/* msg, then ": \"arg\"" when arg is not NULL. */
static int
usage_error_arg(const struct command *c, const char *msg, const char *arg)
{
	if (msg != NULL && arg != NULL)
		fprintf(stderr, "%s: %s: \"%s\"\n", CLI_PROG, msg, arg);
	else if (msg != NULL)
		fprintf(stderr, "%s: %s\n", CLI_PROG, msg);
	if (c != NULL)
		fprintf(stderr, "usage: %s %s %s\n", CLI_PROG, c->name, c->usage);
	else
		usage(stderr);
	return CLI_EXIT_USAGE;
}

static int
usage_error(const struct command *c, const char *msg)
{
	return usage_error_arg(c, msg, NULL);
}

static int
write_all(const char *buf, size_t len)
{
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) == EOF ||
	    ferror(stdout)) {
		fprintf(stderr, "%s: cannot write to standard output\n", CLI_PROG);
		return -1;
	}
	return 0;
}

/* compile PROFILE [--epoch N]: canonical compiled policy bytes and a
 * newline on stdout. */
static int
cmd_compile(int argc, char **argv)
{
	const struct command *c = &commands[0];
	const char *profile = NULL, *epoch_arg = NULL;
	long long epoch = 1;
	char err[1024], *canon;
	size_t len;
	int i, opts = 1, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts && strcmp(a, "--") == 0) {
			opts = 0;
		} else if (opts && strcmp(a, "--epoch") == 0) {
			if (i + 1 >= argc)
				return usage_error(c, "--epoch needs a value");
			epoch_arg = argv[++i];
		} else if (opts && strncmp(a, "--epoch=", 8) == 0) {
			epoch_arg = a + 8;
		} else if (opts && a[0] == '-' && a[1] != '\0') {
			return usage_error_arg(c, "unknown option", a);
		} else if (profile == NULL) {
			profile = a;
		} else {
			return usage_error(c, "one PROFILE only");
		}
	}
	if (profile == NULL)
		return usage_error(c, "missing PROFILE");
	if (epoch_arg != NULL &&
	    num_parse(epoch_arg, 0, POLICY_EPOCH_MAX, &epoch) == -1)
		return usage_error(c, "--epoch must be an integer 0-9007199254740991");

	canon = policy_profile_canonical(profile, epoch, &len, err, sizeof(err));
	if (canon == NULL) {
		/* err starts with the path. */
		fprintf(stderr, "%s: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	/* The NUL after the bytes makes room for the newline: one write. */
	canon[len] = '\n';
	rc = write_all(canon, len + 1) == -1 ? CLI_EXIT_FAIL : 0;
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
		return usage_error(NULL, NULL);
	if (strcmp(argv[1], "--version") == 0) {
		if (argc != 2)
			return usage_error(NULL, NULL);
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
	return usage_error_arg(NULL, "unknown command", argv[1]);
}
