/* Short const tables of names (fact names, evidence kinds, ecosystems,
 * verdicts): the index of a name in one. */
#ifndef EG_NAMES_H
#define EG_NAMES_H

#include <stddef.h>

/* The index of the len bytes at s (not NUL-terminated, compared byte for
 * byte: "Go" is not "go") in tab[0..n), or -1: not there, or s NULL. A
 * NULL entry ends the table, so a NULL-terminated table may pass its
 * size with the NULL. n is at most INT_MAX. Pure. */
int names_index(const char *const *tab, size_t n, const char *s, size_t len);

/* The number of entries of an array table, its terminating NULL if any
 * included: names_index(tab, NAMES_N(tab), s, len). */
#define NAMES_N(tab)	(sizeof(tab) / sizeof((tab)[0]))

#endif
