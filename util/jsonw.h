/* The one JSON string escaping of the guard's own output (the decision
 * log, the control answers): '"' and '\\' get a backslash, every byte
 * outside printable ASCII (below 0x20, 0x7f and above) becomes \u00xx
 * with lower-case hex, so a peer's bytes stay inert whatever they are.
 * Receipts have their own canonical form (conform/canon.c, see
 * docs/receipts.md), which spells escapes differently on purpose. */
#ifndef EG_JSONW_H
#define EG_JSONW_H

#include <stddef.h>

#define JSONW_ESC_MAX	6	/* the longest form: \u00xx */

/* Writes the escaped form of byte c to out (not NUL-terminated);
 * returns its length, 1 to JSONW_ESC_MAX. */
size_t jsonw_escape_byte(unsigned char c, char out[JSONW_ESC_MAX]);

#endif
