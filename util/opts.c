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

int
opts_exact(int argc, char *const argv[], const struct option *opts, char *err,
    size_t errlen)
{
	const struct option *o;
	const char *name;
	size_t len;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "--", 2) != 0)
			continue;
		name = argv[i] + 2;
		len = strcspn(name, "=");
		if ((o = exact(opts, name, len)) != NULL) {
			if (o->has_arg == required_argument && name[len] != '=')
				i++;	/* its value, whatever it looks like */
			continue;
		}
		if ((o = prefix_of(opts, name, len)) != NULL)
			errbuf_set(err, errlen, "--%.*s: options are not abbreviated: --%s",
			    (int)len, name, o->name);
		else
			errbuf_set(err, errlen, "unknown or incomplete option: %s", argv[i]);
		return -1;
	}
	return 0;
}
