#ifndef EG_NUM_H
#define EG_NUM_H

/* Parses a whole decimal string into [min, max], like OpenBSD's strtonum:
 * no sign, no leading zero (except "0" itself), no whitespace, no trailing
 * junk. Returns 0 and sets *out, or -1. */
int num_parse(const char *s, long long min, long long max, long long *out);

/* Same over a byte range that need not be NUL-terminated. */
int num_parse_n(const char *s, unsigned long len, long long min, long long max,
    long long *out);

#endif
