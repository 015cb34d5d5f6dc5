#include <stdio.h>
#include <string.h>

#include "util/errbuf.h"
#include "util/opts.h"

/* The option named by the first len bytes of name, exactly; NULL if none. */
static const struct option *
exact(const struct option *opts, const char *name, size_t len)
{
	for (; opts->name != NULL; opts++)
		if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

/* The first option that name (len bytes) abbreviates; NULL if none. */
static const struct option *
prefix_of(const struct option *opts, const char *name, size_t len)
{
	for (; opts->name != NULL; opts++)
		if (len > 0 && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

static int
listed(const char *const *names, const char *name)
{
	for (; names != NULL && *names != NULL; names++)
		if (strcmp(*names, name) == 0)
			return 1;
	return 0;
}

int
opts_take(const char **slot, const char *val, const char *flag, char *err,
    size_t errlen)
{
	if (*slot != NULL)
		return errbuf_fail(err, errlen, "%s given twice", flag);
	*slot = val;
	return 0;
}

int
opts_exact(int argc, char *const argv[], const struct option *opts,
    const char *const *repeatable, char *err, size_t errlen)
{
	const char *given[OPTS_MAX] = { NULL };
	const struct option *o;
	const char *name;
	char flag[64], shown[ERRBUF_SHOW_BUF];
	size_t len, k;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (argv[i][0] != '-' || argv[i][1] == '\0')
			continue;	/* an operand, "-" included */
		/* No short option is defined: "-xy" is refused whole, as
		 * given (getopt would stop inside the cluster). */
		name = argv[i] + 2;
		len = argv[i][1] == '-' ? strcspn(name, "=") : 0;
		if (len == 0 || (o = exact(opts, name, len)) == NULL) {
			if (len > 0 && (o = prefix_of(opts, name, len)) != NULL)
				return errbuf_fail(err, errlen, "--%.*s: options are "
				    "not abbreviated: --%s", (int)len, name, o->name);
			return errbuf_fail(err, errlen, "unknown or incomplete "
			    "option: %s", errbuf_show(argv[i], strlen(argv[i]),
			    shown));
		}
		if ((k = (size_t)(o - opts)) >= OPTS_MAX)
			return errbuf_fail(err, errlen, "--%s: more than %d options "
			    "in one table", o->name, OPTS_MAX);
		snprintf(flag, sizeof(flag), "--%s", o->name);
		if (!listed(repeatable, o->name) &&
		    opts_take(&given[k], argv[i], flag, err, errlen) == -1)
			return -1;
		if (o->has_arg == required_argument && name[len] != '=')
			i++;	/* its value, whatever it looks like */
	}
	return 0;
}
