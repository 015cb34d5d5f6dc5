/* What every egress-guardctl subcommand shares: option matching, usage
 * errors, writing results to standard output. */
#ifndef EG_CLI_H
#define EG_CLI_H

#include <stddef.h>

#define CLI_PROG	"egress-guardctl"

/* egress-guardctl's exit codes, the one definition for every subcommand
 * (0-2 for all, ctl/main.c; 3-8 are admit's typed refusals, and 4-8 also
 * receipt verify's, 4 sign's: docs/receipts.md; 9 diff's and push
 * --no-widen's). */
#define CLI_EXIT_OK		0
#define CLI_EXIT_FAIL		1	/* operating failure: output, memory, the guard */
#define CLI_EXIT_USAGE		2	/* usage, unreadable or malformed input */
#define CLI_EXIT_NOT_MET	3	/* grade below the requirement */
#define CLI_EXIT_REVISION	4	/* not the binary tested / in hand */
#define CLI_EXIT_UNTRUSTED	5	/* signer not among the attesters */
#define CLI_EXIT_BAD_SIGNATURE	6	/* signature does not verify */
#define CLI_EXIT_STALE		7	/* ran_at older than --max-age, or ahead */
#define CLI_EXIT_GUARD		8	/* the running guard's hash cannot be had */
#define CLI_EXIT_WIDENS		9	/* NEW admits a destination OLD does not */

/* The usage message of a --tenant or ID that is no tenant id
 * (policy_tenant_id_ok). */
#define CLI_TENANT_ID_RULE	"a tenant ID is 1-32 characters of [a-z0-9-], " \
	"the first [a-z0-9]"

/* Prints "egress-guardctl: MSG[: "ARG"]" and the usage line of CMD on
 * stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *usage, const char *msg,
    const char *arg);

/* Matches "--name VALUE" or "--name=VALUE" at argv[*i]. Returns 1 and sets
 * *val (advancing *i past a separate value), 0 when argv[*i] is another
 * argument, -1 when the value is missing or empty. */
int cli_opt_value(int argc, char **argv, int *i, const char *name,
    const char **val);

/* A subcommand's options: each of names takes one value and may be given
 * once (util/opts.h); at most one operand. */
#define CLI_MAX_OPTS	10
struct cli_opts {
	const char	*cmd;		/* for messages: "receipt sign", "admit" */
	const char	*usage;
	const char	*const *names;	/* "--name", NULL-terminated, at most CLI_MAX_OPTS */
	const char	*vals[CLI_MAX_OPTS];	/* by index in names; NULL: not given */
	const char	*operand;	/* the one positional argument */
	int		 want_operand;
};

/* Parses argv[first..] into o ("--" ends the options). Returns 0, or
 * CLI_EXIT_USAGE with the message and usage printed: an unknown option, a
 * missing or empty value, an option given twice, a stray argument. */
int cli_parse_opts(int argc, char **argv, int first, struct cli_opts *o);

/* Writes buf to stdout and flushes; -1 (with a message) on failure. */
int cli_print_all(const char *buf, size_t len);

#endif
