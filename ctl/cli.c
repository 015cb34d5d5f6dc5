#include <stdio.h>
#include <string.h>

#include "ctl/cli.h"
#include "util/errbuf.h"
#include "util/opts.h"

int
cli_usage_error(const char *cmd, const char *usage, const char *msg,
    const char *arg)
{
	if (arg != NULL)
		fprintf(stderr, "%s: %s: \"%s\"\n", CLI_PROG, msg, arg);
	else
		fprintf(stderr, "%s: %s\n", CLI_PROG, msg);
	fprintf(stderr, "usage: %s %s %s\n", CLI_PROG, cmd, usage);
	return CLI_EXIT_USAGE;
}

int
cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
	} else if (a[n] == '\0') {
		if (*i + 1 >= argc)
			return -1;
		*val = argv[++*i];
	} else {
		return 0;
	}
	return (*val)[0] == '\0' ? -1 : 1;
}

int
cli_parse_opts(int argc, char **argv, int first, struct cli_opts *o)
{
	const char *val;
	char msg[128];
	int i, j, r, opts = 1;

	for (i = first; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0) {
			opts = 0;
			continue;
		}
		r = 0;
		for (j = 0; opts && o->names[j] != NULL; j++) {
			if ((r = cli_opt_value(argc, argv, &i, o->names[j],
			    &val)) == 0)
				continue;
			if (r == -1) {
				errbuf_set(msg, sizeof(msg), "%s needs a value",
				    o->names[j]);
				return cli_usage_error(o->cmd, o->usage, msg, NULL);
			}
			if (opts_take(&o->vals[j], val, o->names[j], msg,
			    sizeof(msg)) == -1)
				return cli_usage_error(o->cmd, o->usage, msg, NULL);
			break;
		}
		if (r == 1)
			continue;
		if (opts && argv[i][0] == '-' && argv[i][1] != '\0')
			return cli_usage_error(o->cmd, o->usage, "unknown option",
			    argv[i]);
		if (!o->want_operand || o->operand != NULL)
			return cli_usage_error(o->cmd, o->usage,
			    "unexpected argument", argv[i]);
		o->operand = argv[i];
	}
	return 0;
}

int
cli_print_all(const char *buf, size_t len)
{
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) == EOF ||
	    ferror(stdout)) {
		fprintf(stderr, "%s: cannot write to standard output\n", CLI_PROG);
		return -1;
	}
	return 0;
}
