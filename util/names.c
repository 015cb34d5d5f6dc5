/* util/names.h: one lookup for the name tables of the parsers, which
 * each had the same loop. A table entry is a C string; the name looked
 * up is a byte range out of a JSON string or a split field, so the
 * length is compared first and no NUL is read past it. */
#include <string.h>

#include "util/names.h"

int
names_index(const char *const *tab, size_t n, const char *s, size_t len)
{
	size_t i;

	if (s == NULL)
		return -1;
	for (i = 0; i < n && tab[i] != NULL; i++)
		if (strlen(tab[i]) == len && memcmp(tab[i], s, len) == 0)
			return (int)i;
	return -1;
}
