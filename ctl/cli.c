#include <stdio.h>
#include <string.h>

#include "ctl/cli.h"

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
cli_print_all(const char *buf, size_t len)
{
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) == EOF ||
	    ferror(stdout)) {
		fprintf(stderr, "%s: cannot write to standard output\n", CLI_PROG);
		return -1;
	}
	return 0;
}
