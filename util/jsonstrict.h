/* Strict JSON objects: every key must be one the caller expects. */
#ifndef EG_JSONSTRICT_H
#define EG_JSONSTRICT_H

#include <jansson.h>

/* Returns the first key of obj that is not in allowed (NULL-terminated),
 * or NULL when there is none. */
const char *jsonstrict_unknown_key(json_t *obj, const char *const *allowed);

/* The string value of key in obj and its length in *len, or NULL when the
 * key is absent or not a string. */
const char *jsonstrict_str(json_t *obj, const char *key, size_t *len);

#endif
