/* The canonical JSON writer of receipts (docs/receipts.md): the bytes a
 * receipt signature covers. Pure: a jansson value in, bytes out. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conform/canon.h"
#include "conform/rparse.h"

/*
 * Written here rather than by json_dumps so that the bytes do not depend
 * on a jansson version and are exactly those of Python's
 * json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
 * for the values a receipt holds (objects, arrays, strings, booleans): keys
 * sorted bytewise, no whitespace, '"' and '\\' escaped, \b \f \n \r \t
 * short, every other byte below 0x20, DEL and every non-ASCII character
 * as \u with four lowercase hex digits (a surrogate pair above U+FFFF),
 * '/' as is. Numbers and null are refused: a receipt has none. */

struct sbuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	int	 bad;	/* out of memory, too large or not representable */
};

static void
sb_put(struct sbuf *b, const char *s, size_t n)
{
	size_t cap;
	char *np;

	if (b->bad)
		return;
	if (n > RPARSE_MAX_BYTES - b->len) {
		b->bad = 1;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 4096 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->bad = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_u16(struct sbuf *b, unsigned int u)
{
	static const char hex[] = "0123456789abcdef";
	char e[6] = { '\\', 'u', hex[(u >> 12) & 0xf], hex[(u >> 8) & 0xf],
	    hex[(u >> 4) & 0xf], hex[u & 0xf] };

	sb_put(b, e, sizeof(e));
}

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length, or
 * 0 when it is not well-formed (jansson only hands out valid UTF-8, but
 * this does not rely on it). */
static size_t
utf8_next(const unsigned char *s, size_t n, unsigned int *cp)
{
	size_t len, i;
	unsigned int c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return len;
}

/* Not util/jsonw: the canonical form (docs/receipts.md) spells \b \f \n
 * \r \t short and keeps valid UTF-8 as is, where jsonw writes \u00xx
 * for every byte outside printable ASCII. The digest is over these
 * exact bytes, so the two escapings must stay different. */
static void
sb_string(struct sbuf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int cp;
	size_t i = 0, k, run;

	sb_put(b, "\"", 1);
	while (i < n && !b->bad) {
		/* Runs of bytes that need no escape go out in one piece. */
		for (run = i; run < n && s[run] >= 0x20 && s[run] < 0x7f &&
		    s[run] != '"' && s[run] != '\\'; run++)
			;
		sb_put(b, str + i, run - i);
		if ((i = run) >= n)
			break;
		switch (s[i]) {
		case '"':  sb_put(b, "\\\"", 2); i++; continue;
		case '\\': sb_put(b, "\\\\", 2); i++; continue;
		case '\b': sb_put(b, "\\b", 2); i++; continue;
		case '\f': sb_put(b, "\\f", 2); i++; continue;
		case '\n': sb_put(b, "\\n", 2); i++; continue;
		case '\r': sb_put(b, "\\r", 2); i++; continue;
		case '\t': sb_put(b, "\\t", 2); i++; continue;
		default: break;
		}
		if ((k = utf8_next(s + i, n - i, &cp)) == 0) {
			b->bad = 1;
			break;
		}
		if (cp >= 0x10000) {
			cp -= 0x10000;
			sb_u16(b, 0xd800 | (cp >> 10));
			sb_u16(b, 0xdc00 | (cp & 0x3ff));
		} else {
			sb_u16(b, cp);
		}
		i += k;
	}
	sb_put(b, "\"", 1);
}

static int
cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
sb_value(struct sbuf *b, json_t *v, int depth)
{
	const char **keys = NULL, *key;
	json_t *x;
	size_t i, n;

	if (b->bad)
		return;
	if (depth > 8) {
		b->bad = 1;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		n = json_object_size(v);
		if (n > 0 && (keys = calloc(n, sizeof(*keys))) == NULL) {
			b->bad = 1;
			return;
		}
		i = 0;
		json_object_foreach(v, key, x)
			if (i < n)
				keys[i++] = key;
		if (i > 1)
			qsort(keys, i, sizeof(*keys), cmp_keys);
		sb_put(b, "{", 1);
		for (n = i, i = 0; i < n; i++) {
			if (i > 0)
				sb_put(b, ",", 1);
			sb_string(b, keys[i], strlen(keys[i]));
			sb_put(b, ":", 1);
			sb_value(b, json_object_get(v, keys[i]), depth + 1);
		}
		sb_put(b, "}", 1);
		free(keys);
		return;
	case JSON_ARRAY:
		sb_put(b, "[", 1);
		json_array_foreach(v, i, x) {
			if (i > 0)
				sb_put(b, ",", 1);
			sb_value(b, x, depth + 1);
		}
		sb_put(b, "]", 1);
		return;
	case JSON_STRING:
		sb_string(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_TRUE:
		sb_put(b, "true", 4);
		return;
	case JSON_FALSE:
		sb_put(b, "false", 5);
		return;
	default:
		b->bad = 1;
		return;
	}
}

char *
canon_dump(json_t *obj, size_t *len)
{
	struct sbuf b = { NULL, 0, 0, 0 };

	sb_value(&b, obj, 0);
	if (b.bad || b.p == NULL) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
