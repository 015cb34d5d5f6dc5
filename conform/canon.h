/* The canonical JSON bytes of a receipt (conform/canon.c; the form is in
 * docs/receipts.md). Internal to conform/. */
#ifndef EG_CANON_H
#define EG_CANON_H

#include <stddef.h>

#include <jansson.h>

/* The canonical bytes of obj, malloc'd and NUL-terminated, or NULL (out
 * of memory, larger than RPARSE_MAX_BYTES, or a number or null). */
char *canon_dump(json_t *obj, size_t *len);

#endif
