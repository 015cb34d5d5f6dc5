#include <string.h>

#include "util/ascii.h"
#include "util/num.h"

int
num_parse_n(const char *s, unsigned long len, long long min, long long max,
    long long *out)
{
	unsigned long long v = 0;
	unsigned long i;

	if (s == NULL || len == 0 || len > 19 || min < 0 || max < min)
		return -1;
	if (len > 1 && s[0] == '0')
		return -1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!ascii_is_digit(c))
			return -1;
		v = v * 10 + (unsigned long long)(c - '0');
	}
	if (v < (unsigned long long)min || v > (unsigned long long)max)
		return -1;
	*out = (long long)v;
	return 0;
}

int
num_parse(const char *s, long long min, long long max, long long *out)
{
	if (s == NULL)
		return -1;
	return num_parse_n(s, strlen(s), min, max, out);
}
