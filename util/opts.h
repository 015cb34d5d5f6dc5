/* Long options spelled out in full, each given once unless repeatable.
 *
 * getopt_long accepts any unambiguous prefix ("--allow" for
 * "--allow-range", "--no" for "--no-state"): a flag misread by an
 * operator, or shortened in a unit file, would still be taken, and would
 * change meaning the day a second flag shares the prefix. And it lets a
 * flag given twice silently take the last value: a default followed by an
 * operator's own "--policy", or a line pasted twice into a unit file,
 * would run with whichever came last. The guard's flags decide what is
 * public and whom it trusts, so they are taken only as written, and a
 * flag that holds one value is refused the second time. */
#ifndef EG_OPTS_H
#define EG_OPTS_H

#include <getopt.h>
#include <stddef.h>

/* The most entries an option table for opts_exact may have. */
#define OPTS_MAX	32

/* The once-only rule, shared by every command line of both programs:
 * stores val in *slot, or, when *slot already holds a value, returns -1
 * with "FLAG given twice" in err. Returns 0 otherwise. Pure. */
int opts_take(const char **slot, const char *val, const char *flag, char *err,
    size_t errlen);

/* Checks argv[1..argc-1] before getopt_long sees it: every "--name" or
 * "--name=value" up to a lone "--" must name an option of opts exactly
 * (the value after a required-argument option given without '=' is
 * skipped, whatever it looks like), and at most once unless its name is
 * in repeatable (NULL-terminated, names without "--"). A short option
 * ("-x", "-xy"; none is defined) is refused whole: getopt would stop
 * inside the cluster. Returns 0, or -1 with err naming the first argument
 * that does not pass ("--allow: options are not abbreviated:
 * --allow-range", "unknown or incomplete option: --bogus", "--policy
 * given twice"). Pure. */
int opts_exact(int argc, char *const argv[], const struct option *opts,
    const char *const *repeatable, char *err, size_t errlen);

#endif
