#include <string.h>

#include "util/jsonstrict.h"

const char *
jsonstrict_unknown_key(json_t *obj, const char *const *allowed)
{
	const char *key;
	json_t *v;
	int i;

	json_object_foreach(obj, key, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (allowed[i] == NULL)
			return key;
	}
	return NULL;
}

const char *
jsonstrict_str(json_t *obj, const char *key, size_t *len)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_string(v))
		return NULL;
	*len = json_string_length(v);
	return json_string_value(v);
}
