#ifndef EG_APPLENV_H
#define EG_APPLENV_H

#include <stddef.h>

/* Pure parsers of the appliance entry's EG_* values (guard/appliance.c):
 * no environment read, no I/O, no exit. */

/* Most items one EG_ list may hold. */
#define APPLENV_LIST_MAX 64

/* Splits VAL on commas, spaces, tabs and newlines (no path may hold one)
 * into at most MAX non-empty items, which point into BUF, a copy of VAL
 * of BUFSZ bytes. Returns the count, or -1 when VAL does not fit BUF or
 * holds more than MAX items. */
int applenv_split(const char *val, char *buf, size_t bufsz, char **items, int max);

/* A uid or gid: decimal digits only (leading zeros read as decimal, as
 * the shell entry took them), 0 to 4294967294. 0 and *OUT, or -1. */
int applenv_id(const char *s, unsigned long *out);

/* UID:GID, both applenv_id. 0, or -1 leaving both untouched. */
int applenv_ids(const char *s, unsigned long *uid, unsigned long *gid);

/* A switch: exactly "0" or "1" (no yes/true: one spelling, so that a
 * typo is refused, never read as off). 0 and *OUT 0 or 1, or -1. */
int applenv_switch(const char *s, int *out);

#endif
