/* The appliance entry's values, parsed apart from what it does with them
 * so that every spelling it accepts is tested (tests/unit/test_applenv.c). */
#include <string.h>

#include "guard/applenv.h"
#include "util/num.h"

int
applenv_split(const char *val, char *buf, size_t bufsz, char **items, int max)
{
	size_t len = strlen(val);
	char *p;
	int n = 0;

	if (len >= bufsz)
		return -1;
	memcpy(buf, val, len + 1);
	for (p = buf; *p != '\0';) {
		if (strchr(", \t\n", *p) != NULL) {
			*p++ = '\0';
			continue;
		}
		if (n >= max)
			return -1;
		items[n++] = p;
		p += strcspn(p, ", \t\n");
	}
	return n;
}

int
applenv_id(const char *s, unsigned long *out)
{
	long long v;

	if (s[0] == '\0' || s[strspn(s, "0123456789")] != '\0')
		return -1;
	while (s[0] == '0' && s[1] != '\0')
		s++;
	if (num_parse(s, 0, 4294967294LL, &v) == -1)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

int
applenv_ids(const char *s, unsigned long *uid, unsigned long *gid)
{
	const char *colon = strchr(s, ':');
	char us[16];
	unsigned long u, g;
	size_t ul;

	if (colon == NULL || (ul = (size_t)(colon - s)) >= sizeof(us))
		return -1;
	memcpy(us, s, ul);
	us[ul] = '\0';
	if (applenv_id(us, &u) == -1 || applenv_id(colon + 1, &g) == -1)
		return -1;
	*uid = u;
	*gid = g;
	return 0;
}

int
applenv_switch(const char *s, int *out)
{
	if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
		return -1;
	*out = s[0] == '1';
	return 0;
}
