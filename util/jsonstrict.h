/* Strict JSON objects: every key must be one the caller expects. */
#ifndef EG_JSONSTRICT_H
#define EG_JSONSTRICT_H

#include <jansson.h>

/* Returns the first key of obj that is not in allowed (NULL-terminated),
 * or NULL when there is none. */
const char *jsonstrict_unknown_key(json_t *obj, const char *const *allowed);

#endif
