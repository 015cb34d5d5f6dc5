/* Long options spelled out in full. getopt_long accepts any unambiguous
 * prefix ("--allow" for "--allow-range", "--no" for "--no-state"): a
 * flag misread by an operator, or shortened in a unit file, would still
 * be taken, and would change meaning the day a second flag shares the
 * prefix. The guard's flags decide what is public and whom it trusts, so
 * they are taken only as written. */
#ifndef EG_OPTS_H
#define EG_OPTS_H

#include <getopt.h>
#include <stddef.h>

/* Checks argv[1..argc-1] before getopt_long sees it: every "--name" or
 * "--name=value" up to a lone "--" must name an option of opts exactly
 * (the value after a required-argument option given without '=' is
 * skipped, whatever it looks like). Returns 0, or -1 with err naming the
 * first argument that does not ("--allow: options are not abbreviated:
 * --allow-range", "unknown or incomplete option: --bogus"). Pure. */
int opts_exact(int argc, char *const argv[], const struct option *opts, char *err,
    size_t errlen);

#endif
